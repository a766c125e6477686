package sanitizer

import (
	"fmt"
	"strings"
	"testing"
)

// kotekan#1234: an API error whose innermost program frame is a class's
// constructor named as the runtime's API is ("cudaInputData::cudaInputData"
// in cudaInputData.cpp:23). It was dropped as a CUDA runtime frame (its
// base name matched cuda[A-Z]...), and the error placed in the
// std::_Function_handler frame that called it.
func TestHunt41APIErrorAtClassNamedCuda(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/kotekan1234_api_error_wrapped_frames_cut.txt", Options{})
	if len(res.Errors) != 1 {
		t.Fatalf("errors %+v, want 1", res.Errors)
	}
	e := res.Errors[0]
	if e.API != "cudaHostGetFlags" || e.Frame.Name != "cudaInputData::cudaInputData" ||
		!strings.HasSuffix(e.Frame.Filename, "cudaInputData.cpp") || e.Frame.Line != 23 {
		t.Errorf("error %+v: want cudaHostGetFlags at cudaInputData::cudaInputData (cudaInputData.cpp:23)", e)
	}
}

// runtimeBase: the API's templates and the static runtime's namespace are
// the runtime's; a member of the program's class or namespace is not.
func TestHunt41RuntimeBase(t *testing.T) {
	for short, want := range map[string]bool{
		"cudaMalloc<float>":               true,
		"cudart::cudaApiMalloc":           true,
		"cudaInputData::cudaInputData":    false,
		"myapp::cudaHelpers::cudaCheck":   false,
		"Buffer<cudaStream_t>::cudaAlloc": false,
		"cudaMalloc<std::vector<int>>":    true,
		// nvcc puts a kernel's stub in the kernel's namespace: still the
		// runtime's (the review of session 42: the launch site of
		// ns::kernel became its stub).
		"ns::__device_stub__ZN2ns6kernelEPi": true,
		"ns::__cudaLaunch":                   true,
	} {
		if got := runtimeBase(short, baseName(short)); got != want {
			t.Errorf("runtimeBase(%q) = %v, want %v", short, got, want)
		}
	}
}

// cuda-memcheck's layout names the faulting device function twice, on
// the "at" line and as the first Device Frame ("at 0x000000e0 in k" then
// "Device Frame:k (k : 0xe0)"; celerity/ndzip#2, CUDAnative.jl#61): one
// frame, shown once, not k called by k. compute-sanitizer's inlined
// callers (mujoco_warp#664: wp::load < plane_convex_0 < the kernel) are
// different frames and stay.
func TestHunt41LegacyDeviceFrameOnce(t *testing.T) {
	for file, want := range map[string][]string{
		"ndzip2_initcheck_old_layout_cut.txt":                 {"ndzip::detail::gpu_cuda::hierarchical_inclusive_scan_reduce<unsigned int, ndzip::detail::gpu_cuda::plus<unsigned int>>"},
		"cudanative61_synccheck_cut.txt":                      {"ptxcall_computeBetasAndGradKernel_3"},
		"mujocowarp664_invalid_read_device_frames_nested.txt": {"wp::load<wp::vec_t<(unsigned int)3, float>>", "plane_convex_0", "_primitive_narrowphase_builder__locals___primitive_narrowphase_a5ae0264_cuda_kernel_forward"},
	} {
		res := analyzeSan(t, "../../testdata/sanitizer/field/"+file, Options{})
		if len(res.Errors) != 1 {
			t.Fatalf("%s: errors %+v", file, res.Errors)
		}
		var got []string
		for _, f := range res.Errors[0].Stack {
			if len(got) < len(want)+1 {
				got = append(got, f.Name)
			}
		}
		if len(got) < len(want) || strings.Join(got[:len(want)], " < ") != strings.Join(want, " < ") ||
			len(got) > len(want) && got[len(want)] == want[len(want)-1] {
			t.Errorf("%s: stack %q, want the device frames %q once each", file, got, want)
		}
	}
}

// A recursion's device frames are equal one after another
// (walk+0x90 calling itself): only cuda-memcheck's repeat of the "at"
// line's frame is one frame printed twice; the rest stay (the review of
// session 42: three walk frames became one).
func TestRecursionFramesStay(t *testing.T) {
	in := "========= COMPUTE-SANITIZER\n" +
		"========= Invalid __global__ read of size 4 bytes\n" +
		"=========     at walk(Node *, int)+0x40 in tree.cu:12\n" +
		"=========     by thread (0,0,0) in block (0,0,0)\n" +
		"=========     Address 0x7f0000000400 is out of bounds\n" +
		"=========         Device Frame: walk(Node *, int)+0x90 in tree.cu:14\n" +
		"=========         Device Frame: walk(Node *, int)+0x90 in tree.cu:14\n" +
		"=========         Device Frame: walk(Node *, int)+0x90 in tree.cu:14\n" +
		"=========         Device Frame: kernel(Node *)+0x20 in tree.cu:30\n" +
		"=========\n" +
		"========= ERROR SUMMARY: 1 error\n"
	res := analyzeBytes(t, "rec.txt", []byte(in), Options{})
	if len(res.Errors) != 1 {
		t.Fatalf("errors %+v", res.Errors)
	}
	var lines []string
	for _, f := range res.Errors[0].Stack {
		if f.Filename == "tree.cu" {
			lines = append(lines, fmt.Sprint(f.Line))
		}
	}
	if got := strings.Join(lines, " "); got != "12 14 14 14 30" {
		t.Errorf("tree.cu frames at lines %q, want 12 14 14 14 30", got)
	}
}
