package sanitizer

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/bench/benchgen"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
)

// analyzeSan reads a report (testdata/sanitizer/NAME, or a path with a
// slash) and analyses it, checking that no Arrow memory is left allocated.
func analyzeSan(t *testing.T, name string, opt Options) *Result {
	t.Helper()
	path := name
	if !strings.Contains(name, "/") {
		path = filepath.Join("..", "..", "testdata", "sanitizer", name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return analyzeBytes(t, name, data, opt)
}

func analyzeBytes(t *testing.T, name string, data []byte, opt Options) *Result {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	var r *sanitizer.Reader
	if strings.HasSuffix(name, ".xml") {
		r = sanitizer.NewXMLReader(bytes.NewReader(data), name, sanitizer.WithAllocator(mem))
	} else {
		r = sanitizer.NewReader(bytes.NewReader(data), name, sanitizer.WithAllocator(mem))
	}
	defer r.Release()
	a := NewAnalyzer(opt)
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return a.Finalize()
}

// siteLine renders a site as "kind alloc bytes count name file:line".
func siteLine(s Site) string {
	return strings.Join([]string{s.Kind.String(), s.Allocator, itoa(s.Bytes), itoa(int64(s.Count)),
		s.Frame.Name, filepath.Base(s.Frame.Filename) + ":" + itoa(s.Frame.Line)}, " ")
}

func itoa(n int64) string { return count(n, "", "")[:len(count(n, "", ""))-1] }

func sanitizerSites(res *Result) []string {
	var out []string
	for _, s := range res.Sites {
		out = append(out, siteLine(s))
	}
	return out
}

func checkSites(t *testing.T, res *Result, want ...string) {
	t.Helper()
	got := sanitizerSites(res)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sites:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The expected values below are those of ../shared/fixtures/README.md
// (section sanitizer/); leaky.cu leaks 4 MiB in make_workspace (line 14),
// 256 KiB per step (line 20), 123,456 bytes from cudaMallocAsync (line 33)
// and 1 MiB of pinned host memory (line 41).

func TestSanitizerLeakFull(t *testing.T) {
	res := analyzeSan(t, "leak_full.txt", Options{})
	if res.Leaks != 8 || res.LeakBytes != 6677056 {
		t.Errorf("%d leaks, %d bytes; want 8, 6,677,056", res.Leaks, res.LeakBytes)
	}
	checkSites(t, res,
		"leak device 4,194,304 1 make_workspace leaky.cu:14",
		"leak device 1,310,720 5 step leaky.cu:20",
		"leak pinned 1,048,576 1 main leaky.cu:41",
		"leak async 123,456 1 main leaky.cu:33")
	if len(res.Runs) != 1 || !res.Runs[0].Agrees || res.Runs[0].SummaryBytes != 6677056 || res.Runs[0].SummaryAllocations != 8 {
		t.Errorf("runs %+v", res.Runs)
	}
	if len(res.Warnings) != 0 || len(res.Errors) != 0 {
		t.Errorf("warnings %q, errors %v", res.Warnings, res.Errors)
	}
	// Runtime frames (cudaMalloc, the cuda_runtime.h template) are hidden.
	if st := res.Sites[1].Stack; len(st) != 2 || st[0].Name != "step" || st[1].Name != "main" || st[1].Line != 31 {
		t.Errorf("step stack %v", st)
	}
}

// The same run ("leaky 2") in four layouts gives the same sites.
func TestSanitizerSameRunEveryLayout(t *testing.T) {
	want := []string{
		"leak device 4,194,304 1 make_workspace leaky.cu:14",
		"leak pinned 1,048,576 1 main leaky.cu:41",
		"leak device 524,288 2 step leaky.cu:20",
		"leak async 123,456 1 main leaky.cu:33",
	}
	for _, f := range []string{"leak_save.xml", "leak_long_backtrace.txt", "san_prefix.txt", "san_nodemangle.txt", "san_logfile.txt"} {
		t.Run(f, func(t *testing.T) {
			res := analyzeSan(t, f, Options{})
			if res.Leaks != 5 || res.LeakBytes != 5890624 {
				t.Errorf("%d leaks, %d bytes; want 5, 5,890,624", res.Leaks, res.LeakBytes)
			}
			checkSites(t, res, want...)
			if len(res.Warnings) != 0 {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

func TestSanitizerNoBacktrace(t *testing.T) {
	res := analyzeSan(t, "leak_nobacktrace.txt", Options{})
	if res.Leaks != 5 || res.LeakBytes != 5890624 {
		t.Errorf("%d leaks, %d bytes", res.Leaks, res.LeakBytes)
	}
	// Grouped by size: no site, no allocator.
	checkSites(t, res,
		"leak  4,194,304 1  .:0",
		"leak  1,048,576 1  .:0",
		"leak  524,288 2  .:0",
		"leak  123,456 1  .:0")
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "without a host backtrace") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestSanitizerWithOOB(t *testing.T) {
	for _, f := range []string{"leak_with_oob.txt", "san_oob.xml", "san_oob_xml_stdout.txt"} {
		t.Run(f, func(t *testing.T) {
			res := analyzeSan(t, f, Options{})
			if res.Leaks != 5 || res.LeakBytes != 5104192 {
				t.Errorf("%d leaks, %d bytes; want 5, 5,104,192", res.Leaks, res.LeakBytes)
			}
			checkSites(t, res,
				"leak device 4,194,304 1 make_workspace leaky.cu:14",
				"leak device 786,432 3 step leaky.cu:20",
				"leak async 123,456 1 main leaky.cu:33")
			if len(res.Errors) != 4 {
				t.Fatalf("%d errors, want 4: %+v", len(res.Errors), res.Errors)
			}
			e := res.Errors[0]
			if e.Kind != sanitizer.KindMemoryAccess || e.Kernel != "fill" || e.Frame.Name != "fill" || e.Frame.Line != 9 ||
				filepath.Base(e.Frame.Filename) != "leaky.cu" || e.Launch.Name != "main" || e.Launch.Line != 37 || e.Count != 1 {
				t.Errorf("invalid write %+v", e)
			}
			apis := []string{}
			for _, e := range res.Errors[1:] {
				if e.Kind != sanitizer.KindAPI || e.Error != "cudaErrorLaunchFailure" || e.Result != 719 {
					t.Errorf("api error %+v", e)
				}
				apis = append(apis, e.API)
			}
			if strings.Join(apis, " ") != "cudaFree cudaMallocHost cudaDeviceSynchronize" {
				t.Errorf("API errors %v", apis)
			}
			if strings.HasSuffix(f, ".txt") && (len(res.Runs) != 1 || !res.Runs[0].Agrees || res.Runs[0].SummaryErrors != 9) {
				t.Errorf("ERROR SUMMARY 9 not matched: %+v", res.Runs)
			}
		})
	}
}

func TestSanitizerCuPy(t *testing.T) {
	res := analyzeSan(t, "leak_cupy.txt", Options{})
	if res.Leaks != 6 || res.LeakBytes != 3154944 {
		t.Errorf("%d leaks, %d bytes", res.Leaks, res.LeakBytes)
	}
	// The program's leak is load_batch; the pool's blocks (8,192 + 512 +
	// 512 = 9,216 bytes, allocated at lines 9 and 10) are retained.
	checkSites(t, res,
		"leak device 3,145,728 3 load_batch cupy_leak.py:5",
		"retained device 8,192 1 main cupy_leak.py:9",
		"retained device 1,024 2 main cupy_leak.py:10")
	var retained int64
	for _, s := range res.Sites {
		if s.Kind == callsite.Retained {
			retained += s.Bytes
			if !strings.Contains(s.Pool, "SingleDeviceMemoryPool") || s.Hint == "" {
				t.Errorf("pool %q hint %q", s.Pool, s.Hint)
			}
		}
	}
	if retained != 9216 {
		t.Errorf("retained %d bytes, want 9,216", retained)
	}
	// Interpreter, Cython and libc frames are hidden; the trailing Python
	// frames remain.
	if st := res.Sites[0].Stack; len(st) != 2 || st[1].Name != "main" || st[1].Line != 8 {
		t.Errorf("load_batch stack %v", st)
	}
}

func TestSanitizerTorch(t *testing.T) {
	res := analyzeSan(t, "san_torch.txt", Options{})
	// Both blocks were held by PyTorch's caching allocators at exit: the
	// 2 MiB segment of torch.ones(1000) and the 4-byte pinned block of
	// float(y.sum()); the program's only frame is "<module> in <string>:1".
	checkSites(t, res,
		"retained device 2,097,152 1 <module> <string>:1",
		"retained pinned 4 1 <module> <string>:1")
	if !strings.Contains(res.Sites[0].Pool, "CUDACachingAllocator") || !strings.Contains(res.Sites[1].Pool, "CachingHostAllocator") {
		t.Errorf("pools %q, %q", res.Sites[0].Pool, res.Sites[1].Pool)
	}
}

func TestSanitizerPrintLimit(t *testing.T) {
	res := analyzeSan(t, "san_print_limit.txt", Options{})
	checkSites(t, res,
		"leak device 4,194,304 1 make_workspace leaky.cu:14",
		"leak device 524,288 2 step leaky.cu:20",
		// LEAK SUMMARY: 6,677,056 bytes in 8 allocations; the 3 printed
		// records hold 4,718,592: the other 1,958,464 bytes in 5 are a
		// finding of unknown site.
		"leak  1,958,464 5  .:0")
	if u := res.Sites[2].Unknown; !strings.Contains(u, "LEAK SUMMARY") || !strings.Contains(u, "--print-limit") {
		t.Errorf("unknown site: %q", u)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "6,677,056 bytes in 8 allocations") ||
		!strings.Contains(res.Warnings[0], "5 errors were not printed") || res.Runs[0].Agrees {
		t.Errorf("warnings %q, runs %+v", res.Warnings, res.Runs)
	}
}

func TestSanitizerTwoProcesses(t *testing.T) {
	res := analyzeSan(t, "san_two_processes.txt", Options{})
	checkSites(t, res,
		"leak device 8,388,608 2 make_workspace leaky.cu:14",
		"leak pinned 2,097,152 2 main leaky.cu:41",
		"leak device 786,432 3 step leaky.cu:20",
		"leak async 246,912 2 main leaky.cu:33")
	if res.Sites[0].Processes != 2 || !res.Runs[0].Agrees || res.Runs[0].Processes != 2 {
		t.Errorf("site %+v runs %+v", res.Sites[0], res.Runs)
	}
}

func TestSanitizerLegacy(t *testing.T) {
	res := analyzeSan(t, "../../parse/sanitizer/testdata/legacy_memcheck.txt", Options{})
	// The mangled _Z11make_bufferm is demangled and named without its
	// parameters; with no source file the module stands in, and the return
	// address keeps call sites in one function apart.
	checkSites(t, res, "leak device 1,024 1 make_buffer@0x1111 app:0")
	if !res.Sites[0].NoLineInfo {
		t.Errorf("site %+v: no line info not noted", res.Sites[0])
	}
	if len(res.Errors) != 3 || res.Errors[0].Frame.Name != "cleanup@0x1234" || res.Errors[1].API != "cudaMemcpy" || res.Errors[2].Kernel != "scale" {
		t.Errorf("errors %+v", res.Errors)
	}
	if !res.Runs[0].Agrees {
		t.Errorf("runs %+v, warnings %q", res.Runs, res.Warnings)
	}
}

func TestSanitizerSeveralRuns(t *testing.T) {
	a, _ := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
	b, _ := os.ReadFile("../../testdata/sanitizer/san_print_limit.txt")
	res := analyzeBytes(t, "two", append(a, b...), Options{})
	if len(res.Runs) != 2 || !res.Runs[0].Agrees || res.Runs[1].Agrees {
		t.Errorf("runs %+v", res.Runs)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "run 2 (line 57): ") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if res.Sites[0].Count != 2 || res.Sites[0].Processes != 2 {
		t.Errorf("first site %+v", res.Sites[0])
	}
}

func TestSanitizerCutLog(t *testing.T) {
	data, _ := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
	i := bytes.Index(data, []byte("done 0x"))
	res := analyzeBytes(t, "cut", data[:i], Options{})
	if res.Leaks != 8 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no ERROR SUMMARY") {
		t.Errorf("%d leaks, warnings %q", res.Leaks, res.Warnings)
	}
}

func TestSanitizerFilterFlags(t *testing.T) {
	// --keep-frames brings back a runtime frame; --hide-frames hides a
	// user frame so that the caller names the site.
	f, err := callsite.NewFrameFilter([]string{`^step$`}, []string{`cuda_runtime\.h`})
	if err != nil {
		t.Fatal(err)
	}
	res := analyzeSan(t, "leak_full.txt", Options{Filter: f})
	s := res.Sites[1]
	if s.Frame.Name != "cudaMalloc<float>" || len(s.Stack) != 2 || s.Stack[1].Name != "main" {
		t.Errorf("site %v stack %v", s.Frame, s.Stack)
	}
}

func TestSuppressions(t *testing.T) {
	rules, err := ParseSuppressions("supp.txt", []byte(`# leaks we accept
kind=leak function=^make_workspace name=workspace

allocator=pinned
kind=api message="on CUDA API call to cudaMallocHost\.$"
kind=retained
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 4 || rules[0].Name != "workspace" || rules[1].Name != "supp.txt:4" || rules[2].Message.String() != `on CUDA API call to cudaMallocHost\.$` {
		t.Fatalf("rules %+v", rules)
	}
	res := analyzeSan(t, "leak_full.txt", Options{Suppressions: rules})
	checkSites(t, res,
		"leak device 1,310,720 5 step leaky.cu:20",
		"leak async 123,456 1 main leaky.cu:33")
	if len(res.Suppressed) != 2 || res.Suppressed[0] != (SuppressedCount{"workspace", 1, 4194304}) || res.Suppressed[1] != (SuppressedCount{"supp.txt:4", 1, 1048576}) {
		t.Errorf("suppressed %+v", res.Suppressed)
	}
	// Totals still count what was suppressed, so LEAK SUMMARY agrees.
	if res.Leaks != 8 || !res.Runs[0].Agrees {
		t.Errorf("leaks %d runs %+v", res.Leaks, res.Runs)
	}
	res = analyzeSan(t, "leak_with_oob.txt", Options{Suppressions: rules})
	if len(res.Errors) != 3 || res.Errors[1].API != "cudaFree" || res.Errors[2].API != "cudaDeviceSynchronize" {
		t.Errorf("errors %+v", res.Errors)
	}
	res = analyzeSan(t, "leak_cupy.txt", Options{Suppressions: rules})
	if len(res.Sites) != 1 || res.Suppressed[0].Rule != "supp.txt:6" || res.Suppressed[0].Records != 3 {
		t.Errorf("sites %v suppressed %+v", sanitizerSites(res), res.Suppressed)
	}

	for _, bad := range []string{"kind", "function=(", "colour=red", "allocator=heap", `message="open`, "name=x"} {
		if _, err := ParseSuppressions("s", []byte("\n"+bad+"\n")); err == nil || !strings.HasPrefix(err.Error(), "s:2: ") {
			t.Errorf("ParseSuppressions(%q) error %v", bad, err)
		}
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"make_workspace(unsigned long)":                                             "make_workspace",
		"cudaError cudaMalloc<float>(float**, unsigned long)":                       "cudaMalloc<float>",
		"cudaError cudaMalloc<float>":                                               "cudaMalloc<float>",
		"double at::Tensor::item<double>() const":                                   "at::Tensor::item<double>",
		"at::empty(c10::ArrayRef<long>) [clone .constprop.0]":                       "at::empty",
		"at::(anonymous namespace)::wrapper_CUDA_empty(c10::ArrayRef<c10::SymInt>)": "at::{anonymous}::wrapper_CUDA_empty",
		"Foo::operator()(int) const":                                                "Foo::operator()",
		"operator new(unsigned long)":                                               "operator new",
		"main":                                                                      "main",
		"":                                                                          "",
	} {
		if got := callsite.ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Recorded on an H200 (testdata/README.md): a program that calls
// cublasCreate and never cublasDestroy leaks the handle's three buffers
// (67108864 + 1024 + 131072 bytes; LEAK SUMMARY 67240960 in 3), all from
// cublasCreate_v2 called at main cublas_leak.cu:17.
func TestSanitizerCublasNoDestroy(t *testing.T) {
	res := analyzeSan(t, "san_cublas_no_destroy.txt", Options{})
	checkSites(t, res, "leak device 67,240,960 3 main cublas_leak.cu:17")
	if !res.Runs[0].Agrees || len(res.Warnings) != 0 {
		t.Errorf("runs %+v warnings %q", res.Runs, res.Warnings)
	}
}

// PyTorch multiplying matrices (recorded on an H200): 7 allocations,
// 123864068 bytes at exit, none a leak of the program: its caching
// allocator's segments (20971520 + 2097152 bytes at :6; the cuBLAS
// workspace of 33554432 bytes, cudaMalloc'd through the caching allocator
// for setWorkspaceForHandle, at :8), the cuBLAS handle PyTorch keeps in
// its pool (cublasCreate_v2 under at::cuda::getCurrentCUDABlasHandle:
// 67108864 + 1024 + 131072 bytes at :8) and 4 bytes of pinned memory (:9).
func TestSanitizerTorchMatmul(t *testing.T) {
	res := analyzeSan(t, "san_torch_matmul.txt", Options{})
	// The handle's backtraces start inside libcublas (no cuMemAlloc frame
	// is printed), so the allocator class is unknown.
	checkSites(t, res,
		"retained  67,240,960 3 <module> torch_matmul.py:8",
		"retained device 33,554,432 1 <module> torch_matmul.py:8",
		"retained device 23,068,672 2 <module> torch_matmul.py:6",
		"retained pinned 4 1 <module> torch_matmul.py:9")
	if res.Sites[0].Pool != HandlePool {
		t.Errorf("cuBLAS handle pool: %q", res.Sites[0].Pool)
	}
	if res.Leaks != 7 || res.LeakBytes != 123864068 || !res.Runs[0].Agrees {
		t.Errorf("%d leaks, %d bytes; runs %+v", res.Leaks, res.LeakBytes, res.Runs)
	}
}

// Public pastes (testdata/README.md gives their sources).

// xmrig/xmrig-nvidia#199: only the summary lines were pasted. The LEAK
// SUMMARY's 1,006,959,488 bytes in 10 allocations are a leak whose site
// is unknown, not a clean run.
func TestSanitizerSummaryOnly(t *testing.T) {
	res := analyzeSan(t, "pub_xmrig_summary_only.txt", Options{})
	checkSites(t, res, "leak  1,006,959,488 10  .:0")
	if u := res.Sites[0].Unknown; !strings.Contains(u, "LEAK SUMMARY") || !strings.Contains(u, "no record") {
		t.Errorf("unknown: %q", u)
	}
}

// NVIDIA/cccl#1897: the paste is cut after the statically linked runtime's
// frames (libcudart_static_<hash> in the test binary): the site is unknown
// because the log was cut, and the module is named; the runtime frame is
// not a site.
func TestSanitizerStaticRuntimeCut(t *testing.T) {
	res := analyzeSan(t, "pub_cccl_static_cut.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Kind != callsite.Leak || s.Bytes != 512 || s.Count != 1 || s.Frame != (callsite.Frame{}) || len(s.Stack) != 0 {
		t.Errorf("site %+v", s)
	}
	if !strings.Contains(s.Unknown, "cut") || !strings.Contains(s.Unknown, "cub.cpp17.test.block_radix_rank") {
		t.Errorf("unknown: %q", s.Unknown)
	}
	// The same record completed by hand down to the program's start: not
	// cut, but allocated by the runtime on its own.
	data, err := os.ReadFile("../../testdata/sanitizer/pub_cccl_static_cut.txt")
	if err != nil {
		t.Fatal(err)
	}
	whole := string(data[:strings.LastIndexByte(string(data), '\n')+1]) +
		"  =========     Host Frame:__libc_start_main [0x29d90]\n  =========                in /lib/x86_64-linux-gnu/libc.so.6\n" +
		"  =========     Host Frame:_start [0x6a75]\n  =========                in /home/coder/cccl/build/cuda12.4-gcc13/cub-cpp17/bin/cub.cpp17.test.block_radix_rank\n"
	res = analyzeBytes(t, "whole", []byte(whole), Options{})
	if len(res.Sites) != 1 || strings.Contains(res.Sites[0].Unknown, "cut") || !strings.Contains(res.Sites[0].Unknown, "on its own") {
		t.Errorf("whole backtrace: %+v", res.Sites)
	}
}

// NVIDIA/TensorRT-RTX#14: a Windows excerpt (nvcuda64.dll's
// cuMemHostAlloc under TensorRT's DLL), quoted without the banner and
// without the summaries, its last frame cut to "Hos". The leak is 4 bytes
// of pinned host memory; the driver frame is hidden, so the site is the
// innermost TensorRT frame, by return address (no line information). Only
// a part of a log: a warning says so rather than present it as the run.
func TestSanitizerWindowsExcerpt(t *testing.T) {
	res := analyzeSan(t, "pub_trtrtx14_windows_excerpt.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Kind != callsite.Leak || s.Bytes != 4 || s.Count != 1 || s.Allocator != AllocPinned ||
		s.Frame.Name != "getBuilderPluginRegistry@0x7fff4b3f6035" || s.Frame.Filename != "tensorrt_rtx_1_1.dll" {
		t.Errorf("site %+v", s)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "excerpt") {
		t.Errorf("warnings %q: want the excerpt named", res.Warnings)
	}
	// With the banner and summaries around it, the log is whole.
	data, err := os.ReadFile("../../testdata/sanitizer/pub_trtrtx14_windows_excerpt.txt")
	if err != nil {
		t.Fatal(err)
	}
	whole := "========= COMPUTE-SANITIZER\n" + string(data) +
		"=========\n========= LEAK SUMMARY: 4 bytes leaked in 1 allocations\n========= ERROR SUMMARY: 1 error\n"
	res = analyzeBytes(t, "whole", []byte(whole), Options{})
	if len(res.Warnings) != 0 {
		t.Errorf("whole log: warnings %q", res.Warnings)
	}
}

// NVIDIA/cccl#1896: frames without source lines (no -lineinfo): the site
// keeps its return address, so other call sites in the same function stay
// apart, and says so.
func TestSanitizerNoLineInfo(t *testing.T) {
	res := analyzeSan(t, "pub_cccl_nvrtc_nolineinfo.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Bytes != 4 || s.Frame.Name != "C_A_T_C_H_T_E_S_T_0@0x87f1a" || !s.NoLineInfo {
		t.Errorf("site %+v", s)
	}
	// The same log with the record repeated at another return address in
	// the same function: two sites, not one.
	data, err := os.ReadFile("../../testdata/sanitizer/pub_cccl_nvrtc_nolineinfo.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	rec := strings.Join(lines[2:10], "")
	other := strings.Replace(strings.Replace(rec, "0x87f1a", "0x87f80", 1), "0x7f769fe00a00", "0x7f769fe00b00", 1)
	res = analyzeBytes(t, "two", []byte(strings.Join(lines[:10], "")+other), Options{})
	if len(res.Sites) != 2 {
		t.Errorf("two return addresses: %d sites", len(res.Sites))
	}
}

// LaurentMazare/tch-rs#429: cuda-memcheck failed to start ("Internal
// Memcheck Error: Initialization failed", line 5 of the paste) and checked
// nothing: a tool failure, not a clean run.
func TestSanitizerToolFailure(t *testing.T) {
	res := analyzeSan(t, "pub_tch_internal_error.txt", Options{})
	if res.ToolFailure != "Internal Memcheck Error: Initialization failed" || res.ToolFailureLine != 5 || res.Leaks != 0 {
		t.Errorf("tool failure %q at line %d, %d leaks", res.ToolFailure, res.ToolFailureLine, res.Leaks)
	}
	// A program's own API errors are not tool failures.
	if res := analyzeSan(t, "leak_with_oob.txt", Options{}); res.ToolFailure != "" {
		t.Errorf("leak_with_oob.txt: tool failure %q", res.ToolFailure)
	}
}

// JuliaGPU/CUDA.jl#1415: frames in the layout "file:line:function"
// (/home/drew/julia_v1.7/src/interpreter.c:127:do_call) are split into
// their parts; the API error's site is do_call at interpreter.c:127.
func TestSanitizerFileLineFunctionFrames(t *testing.T) {
	res := analyzeSan(t, "pub_cudajl1415_file_line_function.txt", Options{})
	if len(res.Errors) != 1 {
		t.Fatalf("errors %+v", res.Errors)
	}
	e := res.Errors[0]
	want := callsite.Frame{Filename: "/home/drew/julia_v1.7/src/interpreter.c", Line: 127, Name: "do_call"}
	if e.API != "cuPointerGetAttribute" || e.Frame != want {
		t.Errorf("error %s at %+v, want cuPointerGetAttribute at %+v", e.API, e.Frame, want)
	}
	if len(e.Stack) < 3 || e.Stack[2].Name != "eval_body" || e.Stack[2].Line != 583 {
		t.Errorf("stack %+v", e.Stack)
	}
}

// A log cut inside a record's first line ("Leaked 262,144 bytes at "):
// the parser warns about the cut line once; no 0-byte leak without a
// stack comes of it.
func TestSanitizerCutInRecord(t *testing.T) {
	data, err := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
	if err != nil {
		t.Fatal(err)
	}
	cut := string(data)
	cut = cut[:strings.Index(cut, "Leaked 262,144 bytes at ")+len("Leaked 262,144 bytes at ")]
	res := analyzeBytes(t, "cut", []byte(cut), Options{})
	for _, s := range res.Sites {
		if s.Bytes == 0 || len(s.Stack) == 0 {
			t.Errorf("site from the cut line: %+v", s)
		}
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "without a host backtrace") {
			t.Errorf("warning %q", w)
		}
	}
}

// cuDNN's handle comes from the same kind of pool (written from PyTorch's
// function names; the layout is the recorded one): retained. The same
// cudnnCreate called by the program itself stays a leak.
func TestSanitizerCudnnHandlePool(t *testing.T) {
	rec := func(caller string) string {
		return "========= COMPUTE-SANITIZER\n" +
			"========= Leaked 1,048,576 bytes at 0x7f43cc000000\n" +
			"=========     Saved host backtrace up to driver entry point at allocation time\n" +
			"=========         Host Frame: cuMemAlloc_v2 [0x32b91f] in libcuda.so.1\n" +
			"=========         Host Frame: cudnnCreate [0x169f9c] in libcudnn.so.9\n" +
			caller +
			"=========         Host Frame: <module> in conv.py:7\n" +
			"========= \n" +
			"========= LEAK SUMMARY: 1048576 bytes leaked in 1 allocations\n" +
			"========= ERROR SUMMARY: 1 error\n"
	}
	res := analyzeBytes(t, "pool", []byte(rec("=========         Host Frame: at::native::getCudnnHandle() [0x3a4bd28] in libtorch_cuda.so\n")), Options{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Retained || res.Sites[0].Pool != HandlePool {
		t.Errorf("PyTorch's cuDNN handle: %+v", res.Sites)
	}
	res = analyzeBytes(t, "own", []byte(rec("=========         Host Frame: make_handle in conv.cu:12 [0x8cb4] in conv\n")), Options{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Leak {
		t.Errorf("the program's own cudnnCreate: %+v", res.Sites)
	}
}

// cupy/cupy#8904: statically linked runtime frames inside CuPy's Cython
// module, cudaHostAlloc, and a Cython wrapper in file:line:function
// layout, then the paste is cut: pinned memory of unknown site, with the
// module named; no runtime or wrapper frame is taken for the site.
func TestSanitizerCupyStaticCut(t *testing.T) {
	res := analyzeSan(t, "pub_cupy8904_static_cut.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Kind != callsite.Leak || s.Bytes != 1048576 || s.Allocator != AllocPinned || s.Frame != (callsite.Frame{}) ||
		!strings.Contains(s.Unknown, "cupy_backends/cuda/api/runtime.cpython-311") {
		t.Errorf("site %+v", s)
	}
}

// TestAnalyzerStateFlat checks that the analysis keeps nothing per
// record: a log of 4N records from the same real records (benchgen: every
// record of the repository's logs in turn, each leak at its own address
// and with one of 7 sizes) leaves the analyzer with as many sites, error
// groups, frame facts and interned strings as a log of N, and with at
// most one records batch and its frames waiting. Before the records were
// folded as they came, every record, its frames and its message (unique:
// it holds the address) stayed until Finalize.
func TestAnalyzerStateFlat(t *testing.T) {
	type state struct {
		sites, errs, facts, names, kernels, runs, records int
		heap                                              int64 // bytes in use with the analyzer alive, the log dropped
	}
	measure := func(size int) state {
		log, n := benchgen.SanitizerLeakLog([]string{"../../testdata/sanitizer"}, size)
		if n == 0 {
			t.Skip("no compute-sanitizer logs in ../../testdata/sanitizer")
		}
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(t, 0)
		// Small batches: many of them, so that what is kept per batch
		// would show.
		r := sanitizer.NewReader(bytes.NewReader(log), "gen.txt", sanitizer.WithAllocator(mem), sanitizer.WithBatchSize(512))
		a := NewAnalyzer(Options{})
		for r.Next() {
			if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
				r.Release()
				t.Fatal(err)
			}
			if a.pending != nil && a.pending.NumRows() > 512 {
				t.Fatalf("%d records wait for their frames, more than one batch (512)", a.pending.NumRows())
			}
			// A frames batch ends after the record that fills it: 512
			// rows and at most one record's frames more.
			if len(a.frames) > 2*512 {
				t.Fatalf("%d frames wait for their records' fold, more than one batch (512, and one record's)", len(a.frames))
			}
		}
		r.Release()
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r, log = nil, nil // the log is not the analyzer's
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := state{len(a.sites), len(a.errs), len(a.facts), len(a.names), len(a.kernels), len(a.runs), n, int64(ms.HeapAlloc)}
		res := a.Finalize()
		if res.Records != n {
			t.Fatalf("%d records analysed, the log has %d", res.Records, n)
		}
		return s
	}
	small, large := measure(1<<20), measure(4<<20)
	if large.records < 3*small.records {
		t.Fatalf("the logs have %d and %d records: want about 4 times as many", small.records, large.records)
	}
	// The heap may differ by what the runtime and the last batch hold,
	// not by 3N records: 64 bytes a record allows a map entry per record
	// to pass, not the records themselves (their message alone is ~60
	// bytes); before the fold it grew by ~500 bytes a record.
	if grow, extra := large.heap-small.heap, int64(large.records-small.records); grow > 64*extra {
		t.Errorf("heap in use grows by %d bytes for %d more records (%d bytes a record)", grow, extra, grow/extra)
	}
	small.records, large.records, small.heap, large.heap = 0, 0, 0, 0
	if small != large {
		t.Errorf("analyzer state grows with the records: %+v for the small log, %+v for the 4x one", small, large)
	}
	if small.sites == 0 || small.errs == 0 {
		t.Errorf("state %+v: want some sites and error groups (the logs have leaks and errors)", small)
	}
}

// hexRe is what appendHexElided does by hand: every "0x" number cut to
// "0x".
var hexRe = regexp.MustCompile(`0x[0-9a-fA-F]+`)

func TestAppendHexElided(t *testing.T) {
	for _, s := range []string{
		"", "0x", "0x0x1", "x0x1", "00x1f", "Access to 0x7f4646cc0400 is out of bounds", "0xg", "a0xAbCdEfz0x",
		"Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API call to cudaMemcpy.",
		"Invalid __global__ write of size 4 bytes at 0x70 in fill(float *, int)", "0x0x0x", "0X12 0x12",
	} {
		if got, want := string(appendHexElided([]byte("k"), s)), "k"+hexRe.ReplaceAllString(s, "0x"); got != want {
			t.Errorf("appendHexElided(%q) = %q, the regexp gives %q", s, got, want)
		}
	}
}

func FuzzAppendHexElided(f *testing.F) {
	f.Add("Access to 0x7f4646cc0400 is out of bounds")
	f.Add("0x0xg0x")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendHexElided(nil, s)), hexRe.ReplaceAllString(s, "0x"); got != want {
			t.Errorf("appendHexElided(%q) = %q, the regexp gives %q", s, got, want)
		}
	})
}

// TestAnalyzerRecycledBatches checks that the analysis keeps no view into
// a batch it has let go: read in batches of 64 rows with the recycling
// allocator (which zeroes and hands out again the buffers of released
// batches, as the pipeline reads), every report in testdata/sanitizer
// gives the result it gives read in one batch of a fresh allocator's.
func TestAnalyzerRecycledBatches(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "sanitizer", "*.*"))
	field, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "sanitizer", "field", "*"))
	paths = append(paths, field...)
	gen, _ := benchgen.SanitizerLeakLog([]string{"../../testdata/sanitizer"}, 256<<10)
	for _, p := range append(paths, "gen") {
		data := gen
		if p != "gen" {
			var err error
			if data, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		run := func(mem memory.Allocator, batch int) *Result {
			var r *sanitizer.Reader
			if strings.HasSuffix(p, ".xml") {
				r = sanitizer.NewXMLReader(bytes.NewReader(data), p, sanitizer.WithAllocator(mem), sanitizer.WithBatchSize(batch))
			} else {
				r = sanitizer.NewReader(bytes.NewReader(data), p, sanitizer.WithAllocator(mem), sanitizer.WithBatchSize(batch))
			}
			defer r.Release()
			a := NewAnalyzer(Options{})
			for r.Next() {
				if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Err(); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			return a.Finalize()
		}
		whole := run(memory.NewGoAllocator(), 1<<20)
		recycled := run(parse.NewRecyclingAllocator(1<<20), 64)
		if !reflect.DeepEqual(whole, recycled) {
			t.Errorf("%s: read in recycled batches of 64 rows:\n%+v\nin one batch:\n%+v", p, recycled, whole)
		}
	}
}

// TestSanitizerRacesField reads racecheck reports pasted in bug reports
// (testdata/README.md names them). Racecheck prints each race once, its
// hazards counted in it, and names it by the code offsets of its two
// accesses: hecbench133's two races in compress(), at +0x260 and +0x270,
// are two errors, not one seen twice. kokkos6217's run ends in a
// RACECHECK SUMMARY, racecheck's only summary: the run is whole (no
// warning that the log was cut), and racecheck checked no leaks.
func TestSanitizerRacesField(t *testing.T) {
	data, _ := os.ReadFile("../../testdata/sanitizer/field/hecbench133_racecheck_max_hazards.txt")
	res := analyzeBytes(t, "hecbench133", data, Options{})
	if len(res.Errors) != 2 || res.Errors[0].Count != 1 || res.Errors[1].Count != 1 ||
		!strings.HasSuffix(res.Errors[0].Message, "+0x260") || !strings.HasSuffix(res.Errors[1].Message, "+0x270") {
		for _, e := range res.Errors {
			t.Logf("%d x %s", e.Count, e.Message)
		}
		t.Errorf("%d error groups: want the two races apart", len(res.Errors))
	}
	data, _ = os.ReadFile("../../testdata/sanitizer/field/kokkos6217_racecheck_summary.txt")
	res = analyzeBytes(t, "kokkos6217", data, Options{})
	w := strings.Join(res.Warnings, "\n")
	if len(res.Errors) != 1 || strings.Contains(w, "no ERROR SUMMARY") || strings.Contains(w, "says") || !strings.Contains(w, "leaks were not checked") {
		t.Errorf("%d errors, warnings %q", len(res.Errors), res.Warnings)
	}
}

// pytorch/pytorch#52253: cuda-memcheck's 2 MiB "leak" whose backtrace is
// cut after an unsymbolised frame of torch/lib/libc10_cuda.so calling
// cudaMalloc. That library's device memory is its caching allocator's
// (2 MiB is its small-pool segment): memory held at exit by the pool, as
// CuPy's is, not the program's leak. The caller stays unknown (cut).
// A program's own frame in a library named alike (libc10_cuda_ext.so) is
// no such frame.
func TestSanitizerC10CUDAFrameIsCachingAllocator(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/pytorch52253_cudamemcheck_python_cut.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Kind != callsite.Retained || s.Bytes != 2097152 || !strings.Contains(s.Pool, "CUDACachingAllocator") || !strings.Contains(s.Unknown, "cut") {
		t.Errorf("site %+v", s)
	}
	if !c10CUDAModule.MatchString(`C:\Python311\Lib\site-packages\torch\lib\c10_cuda.dll`) || c10CUDAModule.MatchString("/opt/x/libc10_cuda_ext.so") {
		t.Error("c10CUDAModule: c10_cuda.dll not matched, or libc10_cuda_ext.so matched")
	}
}

// harp-lab/GPUJoin: cuda-memcheck 11.x prints "This tool is deprecated
// ..." and "Please use the compute-sanitizer tool ..." under its banner in
// every run. They are the tool's notices, not records: the run's own
// ERROR SUMMARY says 0 errors, and 0 records must be read so that it
// agrees (no mismatch warning, nothing for --fail-on sanitizer-errors>0).
func TestSanitizerDeprecationNotice(t *testing.T) {
	res := analyzeSan(t, "pub_gpujoin_memcheck11_deprecated.txt", Options{})
	if res.Records != 0 || len(res.Errors) != 0 || len(res.Sites) != 0 || res.ToolFailure != "" {
		t.Errorf("records %d, errors %+v, sites %d, tool failure %q", res.Records, res.Errors, len(res.Sites), res.ToolFailure)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
	if len(res.Runs) != 1 || !res.Runs[0].Agrees {
		t.Errorf("runs %+v", res.Runs)
	}
}

// A public compute-sanitizer paste (a multigrid solver's README): "Error:
// process didn't terminate successfully" (line 2) with the tool's reason
// on the line under it, then "ERROR SUMMARY: 0 errors". The tool does not
// count its notice: 0 records, the summary agrees, and a warning says the
// process did not end normally, quoting the reason.
func TestSanitizerNotTerminated(t *testing.T) {
	res := analyzeSan(t, "pub_multigrid_not_terminated.txt", Options{})
	if res.Records != 0 || len(res.Errors) != 0 {
		t.Errorf("records %d, errors %+v", res.Records, res.Errors)
	}
	if len(res.Runs) != 1 {
		t.Fatalf("runs %+v", res.Runs)
	}
	r := res.Runs[0]
	if r.Terminated != "Error: process didn't terminate successfully" || r.TerminatedLine != 2 ||
		!strings.HasPrefix(r.TerminatedWhy, "The application may have hit an error when dereferencing Unified Memory") {
		t.Errorf("terminated %q at line %d, why %q", r.Terminated, r.TerminatedLine, r.TerminatedWhy)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "did not end normally (line 2") || strings.Contains(w, "ERROR SUMMARY says") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// Kitware/CMake's cuda-memcheck test log: the leak's backtrace is
// libcuda's cuMemAlloc_v2, five frames of ./leak with return addresses only
// (no symbols: linked without -rdynamic), and __libc_start_main between the
// last two. The ./leak frames are the program's (not the runtime's), so
// the site is the innermost of them, 0x2bab3 in ./leak, flagged NoSymbols;
// its stack is the five ./leak frames, innermost first.
func TestSanitizerUnsymbolizedProgramFrames(t *testing.T) {
	res := analyzeSan(t, "pub_cmake_memcheck_unsymbolized.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Kind != callsite.Leak || s.Bytes != 10 || s.Count != 1 || s.Unknown != "" || !s.NoSymbols ||
		s.Frame != (callsite.Frame{Name: "0x2bab3", Filename: "./leak"}) {
		t.Errorf("site %+v", s)
	}
	var names []string
	for _, f := range s.Stack {
		names = append(names, f.Name+"@"+f.Filename)
	}
	if got, want := strings.Join(names, " "), "0x2bab3@./leak 0x708b@./leak 0x3c72f@./leak 0x3113@./leak 0x3174@./leak"; got != want {
		t.Errorf("stack %s, want %s", got, want)
	}
	// The same record twice, but called from 0x3201 (4096 bytes) and
	// 0x3113 (10 bytes): two sites, not one. Their innermost three frames
	// are shared (the allocation path both go through), so each is named
	// by the first frame where the stacks part.
	res = analyzeSan(t, "memcheck_unsymbolized_two_sites.txt", Options{})
	checkSites(t, res, "leak device 4,096 1 0x3201 leak:0", "leak device 10 1 0x3113 leak:0")
}

// A program without symbols calling a library that has them
// (llama.cpp#5576's cublasCreate_v2 record, its ./bin/server frames left
// as return addresses): cublasCreate_v2 is cuBLAS's, a library frame,
// and the unnamed server frames under it are the program's. The two
// records are called from different return addresses (0x199ee2 and
// 0x1a7310), so they are two sites of 8,388,608 bytes each, named by the
// program's innermost frame and flagged NoSymbols. The allocator class is
// unknown: the backtraces start in libcuda without a cuMemAlloc name. The
// stack keeps the library's call above the program's frames: the
// unsymbolized libcuda and libcublas frames and __libc_start_main are not
// the program's.
func TestSanitizerUnsymbolizedProgramUnderLibrary(t *testing.T) {
	res := analyzeSan(t, "mixed_cublas_unsym_two_sites.txt", Options{})
	checkSites(t, res, "leak  8,388,608 1 0x199ee2 server:0", "leak  8,388,608 1 0x1a7310 server:0")
	for i, pc := range []string{"0x199ee2", "0x1a7310"} {
		if i >= len(res.Sites) {
			break
		}
		s := res.Sites[i]
		if !s.NoSymbols {
			t.Errorf("site %d: NoSymbols not set", i)
		}
		var names []string
		for _, f := range s.Stack {
			names = append(names, f.Name+"@"+filepath.Base(f.Filename))
		}
		if got, want := strings.Join(names, " "), "cublasCreate_v2@libcublas.so.12 "+pc+"@server 0x159070@server"; got != want {
			t.Errorf("site %d stack %s, want %s", i, got, want)
		}
	}
}

// harp-lab/GPUJoin's cuda-memcheck run that ran out of memory: two API
// records (cudaMalloc and cudaGetLastError, cudaErrorMemoryAllocation),
// the program's bad_alloc, then "Error: process didn't terminate
// successfully" (line 41) and "No CUDA-MEMCHECK results found" (line 42).
// The two records are read and kept; the notices are not records. The
// failure is known, and the run's warning says the summary is missing
// because the process ended early.
func TestSanitizerOOMNoResults(t *testing.T) {
	res := analyzeSan(t, "pub_gpujoin_oom_noresults.txt", Options{})
	if res.Records != 2 || len(res.Errors) != 2 || res.Errors[0].API != "cudaMalloc" || res.Errors[1].API != "cudaGetLastError" ||
		res.Errors[0].Error != "cudaErrorMemoryAllocation" {
		t.Fatalf("records %d, errors %+v", res.Records, res.Errors)
	}
	// The launch site is the program's first frame (no symbols): 0x5dbdb.
	if res.Errors[0].Frame != (callsite.Frame{Name: "0x5dbdb", Filename: "./tc_cuda.out"}) {
		t.Errorf("site %+v", res.Errors[0].Frame)
	}
	if res.ToolFailure != "No CUDA-MEMCHECK results found" || res.ToolFailureLine != 42 {
		t.Errorf("tool failure %q at %d", res.ToolFailure, res.ToolFailureLine)
	}
	if len(res.Runs) != 1 || res.Runs[0].TerminatedLine != 41 || res.Runs[0].FailureLine != 42 {
		t.Fatalf("runs %+v", res.Runs)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "no ERROR SUMMARY: the process ended early (line 41") || !strings.Contains(w, "leaks were not checked") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// PYTORCH_NO_CUDA_MEMORY_CACHING=1: NativeCachingAllocator::allocate calls
// cudaMalloc itself, without the pool's DeviceCachingAllocator frames,
// and frees with cudaFree. Three 4,000,000-byte tensors from step
// (train.py:9) left at exit are a leak of 12,000,000 bytes, not memory
// retained by the pool.
func TestSanitizerUncachedTorchLeak(t *testing.T) {
	res := analyzeSan(t, "san_torch_uncached_leak.txt", Options{})
	checkSites(t, res, "leak device 12,000,000 3 step train.py:9")
	// The program frees a tensor by dropping it, not with cudaFree: the
	// site carries what to do (NativeCachingAllocator::allocate, outside
	// the pool's path, is on every stack).
	if h := res.Sites[0].Hint; h != uncachedTorchHint {
		t.Errorf("hint %q", h)
	}
	// The cached path (san_torch.txt: DeviceCachingAllocator::malloc and
	// alloc_block on the stack) stays retained.
	for _, s := range analyzeSan(t, "san_torch.txt", Options{}).Sites {
		if s.Kind != callsite.Retained {
			t.Errorf("san_torch.txt: %+v", s)
		}
	}
}

// COM4521's Windows paste (compute-sanitizer of CUDA 11.1): above the
// driver's frames are compute-sanitizer's own DLLs (GlobalInitializer in
// sanitizer-collection.dll, sanitizerUnsubscribe in sanitizer-public.dll).
// They are the tool's, hidden like the driver: the kernel was launched
// from main (exercise01_sln.cu:78).
func TestSanitizerOwnModulesHidden(t *testing.T) {
	res := analyzeSan(t, "pub_com4521_windows_sanitizer_dlls.txt", Options{})
	if len(res.Errors) == 0 {
		t.Fatal("no errors")
	}
	e := res.Errors[0]
	if e.Launch.Name != "main" || e.Launch.Line != 78 || !strings.HasSuffix(e.Launch.Filename, "exercise01_sln.cu") {
		t.Errorf("launch %+v", e.Launch)
	}
	for _, f := range e.Stack {
		if strings.Contains(f.Filename, "sanitizer-") || f.Name == "GlobalInitializer" || f.Name == "sanitizerUnsubscribe" {
			t.Errorf("tool frame in stack: %+v", f)
		}
	}
	// Below main are the MSVC C runtime's start-up frames (invoke_main,
	// __scrt_common_main_seh, __scrt_common_main in exe_common.inl), as
	// _start and __libc_start_main are glibc's: hidden, so the stack ends
	// at main and a site's key does not hold the CRT's.
	if n := len(e.Stack); n == 0 || e.Stack[n-1].Name != "main" {
		t.Errorf("stack %+v: want it to end at main", e.Stack)
	}
}

// The MSVC C runtime starts a program through one of its CRTStartup
// functions (mainCRTStartup, wmainCRTStartup, WinMainCRTStartup,
// wWinMainCRTStartup; __tmainCRTStartup before Visual Studio 2015) and
// __scrt_common_main(_seh) and invoke_main: none is the program's, so a
// leak's stack on Windows ends at main (or WinMain), as on Linux.
func TestSanitizerMSVCStartupHidden(t *testing.T) {
	for _, start := range []string{"mainCRTStartup", "wmainCRTStartup", "WinMainCRTStartup", "wWinMainCRTStartup", "__tmainCRTStartup"} {
		log := `========= COMPUTE-SANITIZER
========= Leaked 1048576 bytes at 0x702a00000
=========     Saved host backtrace up to driver entry point at allocation time
=========     Host Frame:cudaMalloc [0x7ff8d6bad1c4]
=========                in U:\proj\x64\Debug\cudart64_110.dll
=========     Host Frame:U:\proj\leaky.cu:14:make_workspace [0x7ff769fe1992]
=========                in U:\proj\x64\Debug\leaky.exe
=========     Host Frame:U:\proj\leaky.cu:27:main [0x7ff769fe1af0]
=========                in U:\proj\x64\Debug\leaky.exe
=========     Host Frame:D:\a\_work\1\s\src\vctools\crt\vcstartup\src\startup\exe_common.inl:79:invoke_main [0x7ff769fe4879]
=========                in U:\proj\x64\Debug\leaky.exe
=========     Host Frame:D:\a\_work\1\s\src\vctools\crt\vcstartup\src\startup\exe_common.inl:288:__scrt_common_main_seh [0x7ff769fe475e]
=========                in U:\proj\x64\Debug\leaky.exe
=========     Host Frame:D:\a\_work\1\s\src\vctools\crt\vcstartup\src\startup\exe_common.inl:331:__scrt_common_main [0x7ff769fe461e]
=========                in U:\proj\x64\Debug\leaky.exe
=========     Host Frame:D:\a\_work\1\s\src\vctools\crt\vcstartup\src\startup\exe_main.cpp:17:` + start + ` [0x7ff769fe490e]
=========                in U:\proj\x64\Debug\leaky.exe
=========     Host Frame:BaseThreadInitThunk [0x7ff8f6cd7034]
=========                in C:\Windows\System32\KERNEL32.DLL
=========     Host Frame:RtlUserThreadStart [0x7ff8f7e62651]
=========                in C:\Windows\SYSTEM32\ntdll.dll
========= 
========= LEAK SUMMARY: 1048576 bytes leaked in 1 allocations
========= ERROR SUMMARY: 1 error
`
		res := analyzeBytes(t, "win_leak.txt", []byte(log), Options{})
		if len(res.Sites) != 1 {
			t.Fatalf("%s: %d sites", start, len(res.Sites))
		}
		var names []string
		for _, f := range res.Sites[0].Stack {
			names = append(names, f.Name)
		}
		if strings.Join(names, " < ") != "make_workspace < main" {
			t.Errorf("%s: stack %s; want make_workspace < main", start, strings.Join(names, " < "))
		}
	}
}

// CudaSteps (capter4): cuda-memcheck on Windows pads the API's name
// ("on CUDA API call to     cudaLaunchKernel."); the API and the error
// are read all the same.
func TestSanitizerAPINamePadded(t *testing.T) {
	res := analyzeSan(t, "pub_cudasteps_windows_api_spaces.txt", Options{})
	if len(res.Errors) != 2 || res.Errors[0].API != "cudaLaunchKernel" || res.Errors[1].API != "cudaGetLastError" ||
		res.Errors[0].Error != "cudaErrorInvalidConfiguration" || res.Errors[0].Result != 9 {
		t.Errorf("errors %+v", res.Errors)
	}
}

// One gtest process that calls cudaDeviceReset between its cases prints a
// leak report at each reset, with its output between them and the same
// address leaked twice (0x7f1c8a000000): two leak reports. The text names
// no process, so the warning must not claim two processes: it says two
// leak reports, which a reset or another process may have made.
func TestSanitizerDeviceResetTwice(t *testing.T) {
	res := analyzeSan(t, "san_device_reset_twice.txt", Options{})
	checkSites(t, res, "leak device 2,048 1 Alloc_Second_Test::TestBody alloc_test.cu:22", "leak device 1,024 1 Alloc_First_Test::TestBody alloc_test.cu:12")
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "2 leak reports") || !strings.Contains(w, "cudaDeviceReset") || strings.Contains(w, "reports of 2 processes") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A log cut right after a leak record's "Saved host backtrace" line
// (leak_full_cut_after_saved_line.txt, leak_full.txt's first 10 lines):
// backtraces were on, the frames were lost to the cut. The record's site
// is unknown because of the cut; it used to be blamed on
// --show-backtrace no, with a warning to rerun with backtraces.
func TestSanitizerCutAfterSavedLine(t *testing.T) {
	res := analyzeSan(t, "leak_full_cut_after_saved_line.txt", Options{})
	if len(res.Sites) != 2 {
		t.Fatalf("sites %+v", res.Sites)
	}
	var cut *Site
	for i := range res.Sites {
		if len(res.Sites[i].Stack) == 0 {
			cut = &res.Sites[i]
		}
	}
	if cut == nil || cut.Bytes != 262144 || !strings.Contains(cut.Unknown, "cut before") {
		t.Errorf("sites %+v", res.Sites)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "show-backtrace no") {
			t.Errorf("warning %q", w)
		}
	}
}
