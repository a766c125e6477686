package pytorchtext

import (
	"fmt"
	"strings"
	"testing"
)

// CUDA's out-of-memory status in libraries' own words: tensorview's
// (spconv 2, cumm) "cuda failed with error 2 out of memory" and spconv 1's
// "cuda execution failed with error 2" (2 is cudaErrorMemoryAllocation),
// each on the line after the exception's first ("RuntimeError: FILE LINE").
// Before: no message ("no CUDA out-of-memory message in it"; analyze said
// "unrecognised input format"). Now: a cuda-error message of the CUDA
// runtime, with the frames of the traceback that the exception's line
// ended (spconv 1's paste: get_indice_pairs innermost). Other codes are
// other errors (98 invalid device function, 222, 500, 700): no message.
func TestLibraryStatusLines(t *testing.T) {
	rs := readFile(t, "pastes/spconv2_tensorview_error2_cmt15.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenCUDAError) || rs.msgs[0].line != 2 || Library(rs.msgs[0].text) != "the CUDA runtime" {
		t.Errorf("tensorview: %+v", rs.msgs)
	}
	rs = readFile(t, "pastes/spconv1_exec_error2_mmdet3d80.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenCUDAError) || rs.msgs[0].line != 13 {
		t.Fatalf("spconv 1: %+v", rs.msgs)
	}
	if f := rs.frames[rs.msgs[0].id]; len(f) != 4 || f[0] != (tbFrame{"/work/mmdet3d/ops/spconv/ops.py", 94, "get_indice_pairs"}) {
		t.Errorf("spconv 1 frames %+v", f)
	}
	rs = readFile(t, "pastes/spconv_other_errors_not_oom.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("other CUDA errors read as OOMs: %+v", rs.msgs)
	}
	// The frames go only to an OOM that starts the very next line: not
	// to one a line later, nor to another program's line after a blank.
	text := "Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n    g()\nRuntimeError: /io/include/tensorview/tensor.h 168\n\ncuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.\n"
	rs, err := readText(t, "gap", text, false)
	if err != nil || len(rs.msgs) != 1 || len(rs.frames[rs.msgs[0].id]) != 0 {
		t.Errorf("a line apart: %+v %v, %v", rs.msgs, rs.frames, err)
	}
}

// The same statuses with the exception's two lines joined (an issue
// title or a sentence: "RuntimeError indice_cuda.cu 124 cuda execution
// failed with error 2") and quoted in a markdown code span (futr3d issue
// 24, Det3D issue 155, verbatim) are the error, as on lines of their own:
// the file and line the check names lead into them. Before: no message.
// A status token alone in a code span ("the `CUDNN_STATUS_ALLOC_FAILED`
// section") and a table row's cell stay prose (library_ooms_prose.txt),
// and another code after the file and line stays another error.
func TestLibraryStatusJoinedOrQuoted(t *testing.T) {
	for _, c := range []struct {
		file  string
		lines []int
	}{
		{"pastes/spconv1_backtick_oneline_futr3d24.txt", []int{2}},
		{"pastes/spconv1_backtick_path_det3d155.txt", []int{2, 14}},
		{"pastes/spconv1_bold_twolines_bevfusion41.txt", []int{4}},
		{"pastes/library_ooms_prose.txt", nil},
		{"pastes/spconv_other_errors_not_oom.txt", nil},
	} {
		rs := readFile(t, c.file, false)
		var lines []int
		for _, m := range rs.msgs {
			if m.gen != string(GenCUDAError) || Library(m.text) != "the CUDA runtime" {
				t.Errorf("%s: %+v", c.file, m)
			}
			lines = append(lines, int(m.line))
		}
		if fmt.Sprint(lines) != fmt.Sprint(c.lines) {
			t.Errorf("%s: messages on lines %v, want %v", c.file, lines, c.lines)
		}
	}
	for text, want := range map[string]bool{
		"RuntimeError: /home/user/spconv/src/spconv/indice_cuda.cu 124 cuda execution failed with error 2\n":        true,
		"`RuntimeError: /io/include/tensorview/tensor.h 168 cuda failed with error 2 out of memory`\n":              true,
		"Error: `RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)`\n":         true,
		"Error: `CUDA error: out of memory` after 3 epochs\n":                                                       true,
		"the program's `std::bad_alloc: cudaErrorMemoryAllocation: out of memory`, then\n":                          false,
		"| `CUDA error: out of memory` | after a traceback |\n":                                                     false,
		"`cudaErrorMemoryAllocation: out of memory` of a library) is an oom finding\n":                              false,
		"`CudaException: CUDA_ERROR_OUT_OF_MEMORY` JCuda's driver call\n":                                           false,
		"I get `cuda execution failed with error 2` when training\n":                                                false,
		"RuntimeError: /spconv/src/spconv/indice.cu 125 cuda execution failed with error 222\n":                     false,
		"the manual says indice_cuda.cu lines cuda execution failed with error 2 may be\n":                          false,
		"| `RuntimeError: /io/include/tensorview/tensor.h 168 cuda failed with error 2 out of memory` | quoted |\n": false,
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || (len(rs.msgs) == 1) != want || len(rs.msgs) > 1 {
			t.Errorf("%q: %+v %v, want a message %v", text, rs.msgs, err, want)
		}
	}
}

// StreamExecutor's "failed to alloc N bytes on host:
// CUDA_ERROR_OUT_OF_MEMORY" (cuda_driver.cc: cuMemHostAlloc, pinned host
// memory; here XLA's in JAX, craiyon-low-vram-easy issue 1) is the
// machine's memory: no GPU OOM (it was one, "the GPU had no room for it"),
// a warning per line naming the bytes, counted among NotOOMs.
func TestPinnedHostMemory(t *testing.T) {
	rs := readFile(t, "pastes/tf_pinned_host_craiyon1.txt", false)
	if len(rs.msgs) != 0 {
		t.Fatalf("%+v", rs.msgs)
	}
	w := rs.meta.NotOOMs.Strings()
	if len(w) != 2 || !strings.Contains(w[0], "line 2: ") || !strings.Contains(w[0], "could not allocate 1073741824 bytes (1024.00 MiB) of page-locked (pinned) host memory") {
		t.Errorf("%q", w)
	}
	// From a device it stays the GPU's.
	line := "2021-09-24 16:22:13.020179: E tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
	rs, err := readText(t, "device", line, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].sizes["requested"] != 8387559424 {
		t.Errorf("%+v %v", rs.msgs, err)
	}
}

// Other programs' cudaMalloc failures (session 41; each was "unrecognised
// input format"): llama.cpp's ggml CUDA backend ("allocating 9866.00 MiB
// on device 1: cudaMalloc failed: out of memory", behind docker compose's
// prefix, twice; 144817.04 MiB on device 0 while loading a model: the size
// printed in MiB to two decimals and the device are read), TensorRT 10's
// trtexec ("Error Code 1: Cuda Runtime (out of memory)") and TensorRT 7's
// logger ("safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of
// memory)", twice), MXNet's "cudaMalloc failed: out of memory" in a code
// span. Prose naming the words is no message.
func TestOtherProgramsCudaMalloc(t *testing.T) {
	for _, c := range []struct {
		file   string
		lib    string
		lines  []int64
		device int32
		req    int64
	}{
		{"pastes/llamacpp_cudamalloc_docker_llamacpp11476.txt", "llama.cpp (ggml)", []int64{1, 4}, 1, 986600 << 20 / 100},
		{"pastes/llamacpp_cudamalloc_load_llamacpp20431.txt", "llama.cpp (ggml)", []int64{4}, 0, (14481704<<20 + 50) / 100},
		// The allocator's WARNING right after its status (line 4) gives
		// the request: "Requested amount of GPU memory (15485030400
		// bytes)".
		{"pastes/trt_default_allocator_trtexec_tensorrt4258.txt", "TensorRT", []int64{3}, -1, 15485030400},
		{"pastes/trt7_safe_runtime_tensorrtinference155.txt", "TensorRT", []int64{2, 3}, -1, -1},
		// TensorRT 7's Windows builds name the allocator as MSVC's
		// __FUNCTION__ does: "Cuda Error in
		// nvinfer1::internal::DefaultAllocator::allocate: 2 (out of
		// memory)" (NVIDIA/TensorRT#477).
		{"pastes/trt7_windows_allocator_tensorrt477.txt", "TensorRT", []int64{1}, -1, -1},
		// MXNet's pooled storage manager prints the same cudaMalloc words
		// without llama.cpp's before them: the CUDA runtime's, not
		// llama.cpp's, and no size.
		{"pastes/mxnet_cudamalloc_backtick_mxnet675.txt", "the CUDA runtime", []int64{2}, -1, -1},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != len(c.lines) {
			t.Fatalf("%s: %+v", c.file, rs.msgs)
		}
		for i, m := range rs.msgs {
			req, ok := m.sizes["requested"]
			if !ok {
				req = -1
			}
			if m.gen != string(GenCUDAError) || m.line != c.lines[i] || Library(m.text) != c.lib || m.device != c.device || req != c.req {
				t.Errorf("%s: %+v (requested %d)", c.file, m, req)
			}
		}
	}
	for text, want := range map[string]bool{
		"E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc failed: out of memory\n": true,
		"[E] [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)\n":                                 true,
		"I keep getting cudaMalloc failed: out of memory with llama.cpp\n":                                                      false,
		"the builder reports Cuda Runtime (out of memory) when the workspace is large\n":                                        false,
		// NVIDIA/TensorRT#948's title: the Windows form, whole.
		`[E] [TRT] C:\source\rtSafe\safeRuntime.cpp (25) - Cuda Error in nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)` + "\n": true,
		// Another function's CUDA error is no allocator's.
		"../rtSafe/safeRuntime.cpp (25) - Cuda Error in deallocate: 2 (out of memory)\n":               false,
		"../rtSafe/safeRuntime.cpp (25) - Cuda Error in nvinfer1::rt::reallocate: 2 (out of memory)\n": false,
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || (len(rs.msgs) == 1) != want || len(rs.msgs) > 1 {
			t.Errorf("%q: %+v %v, want a message %v", text, rs.msgs, err, want)
		}
	}
}
