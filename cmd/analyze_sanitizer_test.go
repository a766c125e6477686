package cmd_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/cmd"
	"github.com/gpuleak/gpuleak/report"
)

// run runs gpuleak with args against buffers and returns the exit code,
// standard output and standard error.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &cmd.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code := cmd.Main(args, ios, "test")
	return code, out.String(), errOut.String()
}

func san(name string) string { return filepath.Join("..", "testdata", "sanitizer", name) }

func decode(t *testing.T, s string) report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, s)
	}
	return r
}

func TestAnalyzeSanitizerJSON(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", "--format", "json", "--top", "0", san("leak_full.txt"))
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	r := decode(t, out)
	if len(r.Inputs) != 1 || r.Inputs[0].Format != "compute-sanitizer" || len(r.Inputs[0].Warnings) != 0 {
		t.Errorf("inputs %+v", r.Inputs)
	}
	// Acceptance (issue 4): 8 leaks, 6,677,056 bytes; make_workspace
	// first, then step with 5 leaks; pinned and async marked.
	var total int64
	var count int
	var got []string
	for _, f := range r.Findings {
		total += f.Bytes
		count += f.Count
		got = append(got, strings.Join([]string{string(f.Kind), f.Allocator, f.Site.String(), itoa(f.Bytes), itoa(int64(f.Count))}, " "))
		if f.Device != nil || f.Source != "compute-sanitizer" || f.Message == "" || strings.Contains(f.Message, "\n") {
			t.Errorf("finding %+v", f)
		}
	}
	want := []string{
		"leak device make_workspace (leaky.cu:14) 4194304 1",
		"leak device step (leaky.cu:20) 1310720 5",
		"leak pinned main (leaky.cu:41) 1048576 1",
		"leak async main (leaky.cu:33) 123456 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if total != 6677056 || count != 8 || r.FindingsTotal != 4 {
		t.Errorf("%d bytes in %d allocations, %d findings", total, count, r.FindingsTotal)
	}
	if !strings.Contains(r.Findings[2].Message, "pinned host memory") || !strings.Contains(r.Findings[2].Message, "cudaFreeHost") ||
		!strings.Contains(r.Findings[3].Message, "stream-ordered") {
		t.Errorf("messages %q / %q", r.Findings[2].Message, r.Findings[3].Message)
	}
	if len(r.Errors) != 0 || strings.Contains(out, `"errors"`) {
		t.Errorf("errors %+v", r.Errors)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestAnalyzeSanitizerErrorsSection(t *testing.T) {
	code, out, _ := run(t, "", "analyze", "--format", "json", san("leak_with_oob.txt"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	r := decode(t, out)
	if len(r.Findings) != 3 || r.Findings[0].Bytes+r.Findings[1].Bytes+r.Findings[2].Bytes != 5104192 {
		t.Errorf("findings %+v", r.Findings)
	}
	if len(r.Errors) != 4 {
		t.Fatalf("errors %+v", r.Errors)
	}
	e := r.Errors[0]
	if e.Kind != "memory-access" || e.Kernel != "fill" || e.Site.String() != "fill (leaky.cu:9)" || e.Launch == nil || e.Launch.String() != "main (leaky.cu:37)" || e.Count != 1 {
		t.Errorf("invalid write %+v", e)
	}
	for _, e := range r.Errors[1:] {
		if e.Kind != "api" || e.Error != "cudaErrorLaunchFailure" || !strings.Contains(e.Message, "earlier kernel fault") {
			t.Errorf("api error %+v", e)
		}
	}

	// The table lists the errors in their own section.
	code, out, _ = run(t, "", "analyze", san("leak_with_oob.txt"))
	if code != 0 || !strings.Contains(out, "Errors reported by the tool (not leaks):\n1. [memory-access] Invalid __global__ write of size 4 bytes in kernel fill (leaky.cu:9)") ||
		!strings.Contains(out, "4. [api] cudaDeviceSynchronize failed") || !strings.Contains(out, "at exit") {
		t.Errorf("table:\n%s", out)
	}
}

func TestAnalyzeSanitizerInputs(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		findings     int
		warn         string
	}{
		{"leak_save.xml", "compute-sanitizer-xml", 4, ""},
		{"leak_long_backtrace.txt", "compute-sanitizer", 4, ""},
		{"leak_nobacktrace.txt", "compute-sanitizer", 4, "without a host backtrace"},
		{"leak_cupy.txt", "compute-sanitizer", 3, ""},
		{"san_print_limit.txt", "compute-sanitizer", 3, "5 errors were not printed"},
		// Two processes (--target-processes all), but the text names no
		// process, and a cudaDeviceReset makes the same log: 2 leak reports.
		{"san_two_processes.txt", "compute-sanitizer", 4, "2 leak reports"},
		{"san_torch.txt", "compute-sanitizer", 2, ""},
		{"san_oob.xml", "compute-sanitizer-xml", 3, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errOut := run(t, "", "analyze", "--format", "json", san(tc.file))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			r := decode(t, out)
			if r.Inputs[0].Format != tc.format || len(r.Findings) != tc.findings {
				t.Errorf("format %s, %d findings", r.Inputs[0].Format, len(r.Findings))
			}
			w := strings.Join(r.Inputs[0].Warnings, "\n")
			if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

func TestAnalyzeSanitizerCuPyRetained(t *testing.T) {
	code, out, _ := run(t, "", "analyze", "--format", "json", san("leak_cupy.txt"))
	if code != 0 {
		t.Fatal(code)
	}
	r := decode(t, out)
	f := r.Findings[0]
	if f.Kind != report.KindLeak || f.Site.String() != "load_batch (cupy_leak.py:5)" || f.Count != 3 || f.Bytes != 3*1048576 {
		t.Errorf("leak %+v", f)
	}
	var retained int64
	for _, f := range r.Findings[1:] {
		if f.Kind != report.KindRetained || !strings.Contains(f.Message, "SingleDeviceMemoryPool") {
			t.Errorf("pool finding %+v", f)
		}
		retained += f.Bytes
	}
	if retained != 9216 {
		t.Errorf("retained %d bytes, want 9,216", retained)
	}
	// --fail-on leak fails on the program's leak, not on the pool.
	if code, _, _ := run(t, "", "analyze", "--fail-on", "leak", san("leak_cupy.txt")); code != cmd.ExitFindings {
		t.Errorf("--fail-on leak: exit %d", code)
	}
	if code, _, _ := run(t, "", "analyze", "--fail-on", "leak", san("san_torch.txt")); code != cmd.ExitOK {
		t.Errorf("--fail-on leak on caching-allocator blocks only: exit %d", code)
	}
}

func TestAnalyzeSanitizerStdinAndGzip(t *testing.T) {
	data, err := os.ReadFile(san("leak_save.xml"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, string(data), "analyze", "--format", "json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if r := decode(t, out); r.Inputs[0].Format != "compute-sanitizer-xml" || len(r.Findings) != 4 {
		t.Errorf("report %+v", r)
	}
	// A gzip-compressed CI log, named without .gz.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	text, _ := os.ReadFile(san("leak_full.txt"))
	zw.Write(text)
	zw.Close()
	p := filepath.Join(t.TempDir(), "ci.log")
	os.WriteFile(p, gz.Bytes(), 0o644)
	code, out, errOut = run(t, "", "analyze", "--format", "json", p)
	if r := decode(t, out); code != 0 || r.Inputs[0].Format != "compute-sanitizer" || len(r.Findings) != 4 {
		t.Errorf("gzip: exit %d %s, report %+v", code, errOut, r)
	}
}

func TestAnalyzeSuppressions(t *testing.T) {
	dir := t.TempDir()
	supp := filepath.Join(dir, "supp.txt")
	if err := os.WriteFile(supp, []byte("# known\nkind=leak function=^step$ name=per-step\nkind=api\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "", "analyze", "--format", "json", "--suppressions", supp, san("leak_with_oob.txt"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := decode(t, out)
	if len(r.Findings) != 2 || len(r.Errors) != 1 {
		t.Errorf("%d findings, %d errors", len(r.Findings), len(r.Errors))
	}
	w := strings.Join(r.Inputs[0].Warnings, "\n")
	if !strings.Contains(w, "suppressed by per-step: 3 records (768 KiB leaked)") || !strings.Contains(w, "suppressed by "+supp+":3: 3 records") {
		t.Errorf("warnings %q", w)
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("function=(\n"), 0o644)
	code, _, errOut = run(t, "", "analyze", "--suppressions", bad, san("leak_full.txt"))
	if code != cmd.ExitInput || !strings.Contains(errOut, "bad.txt:1: bad function pattern") {
		t.Errorf("bad suppressions: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, "", "analyze", "--suppressions", filepath.Join(dir, "missing"), san("leak_full.txt"))
	if code != cmd.ExitInput || !strings.Contains(errOut, "--suppressions") {
		t.Errorf("missing suppressions: exit %d, %q", code, errOut)
	}
}

func TestAnalyzeSanitizerBroken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cut.xml")
	data, _ := os.ReadFile(san("leak_save.xml"))
	// Cut after whole records: read in part (see TestXMLCutAfterRecords);
	// cut before the first: nothing could be read, exit 2.
	os.WriteFile(p, data[:len(data)/2], 0o644)
	code, out, errOut := run(t, "", "analyze", p)
	if code != cmd.ExitOK || !strings.Contains(out, "cut.xml: read in part: byte offset") || !strings.Contains(out, "truncated XML") {
		t.Errorf("XML cut after records: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	os.WriteFile(p, data[:300], 0o644)
	code, _, errOut = run(t, "", "analyze", p)
	if code != cmd.ExitInput || !strings.Contains(errOut, "cut.xml: byte offset") || !strings.Contains(errOut, "truncated XML") {
		t.Errorf("XML cut before any record: exit %d, %q", code, errOut)
	}
	p = filepath.Join(dir, "big.txt")
	os.WriteFile(p, []byte("========= COMPUTE-SANITIZER\n========= Leaked 99999999999999999999 bytes at 0x1\n"), 0o644)
	code, _, errOut = run(t, "", "analyze", p)
	if code != cmd.ExitInput || !strings.Contains(errOut, "big.txt:2: bad number") {
		t.Errorf("overflow: exit %d, %q", code, errOut)
	}
}

func TestAnalyzeSanitizerClean(t *testing.T) {
	// A run without leaks, as compute-sanitizer prints it.
	p := filepath.Join(t.TempDir(), "clean.txt")
	os.WriteFile(p, []byte("========= COMPUTE-SANITIZER\nok\n========= LEAK SUMMARY: 0 bytes leaked in 0 allocations\n========= ERROR SUMMARY: 0 errors\n"), 0o644)
	code, out, errOut := run(t, "", "analyze", "--fail-on", "leak", p)
	if code != 0 || !strings.Contains(out, "No findings.") || strings.Contains(out, "Warnings") || errOut != "" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// A log holding only the summaries (xmrig/xmrig-nvidia#199) is not clean:
// --fail-on leak fails on the LEAK SUMMARY's bytes, whose site is unknown.
func TestAnalyzeSanitizerSummaryOnly(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", "--fail-on", "leak", "--format", "json", san("pub_xmrig_summary_only.txt"))
	if code != cmd.ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, cmd.ExitFindings, errOut)
	}
	var r struct {
		Findings []struct {
			Kind        string `json:"kind"`
			Bytes       int64  `json:"bytes"`
			Count       int    `json:"count"`
			SiteUnknown string `json:"site_unknown"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Kind != "leak" || r.Findings[0].Bytes != 1006959488 || r.Findings[0].Count != 10 ||
		!strings.Contains(r.Findings[0].SiteUnknown, "LEAK SUMMARY") {
		t.Errorf("findings %+v", r.Findings)
	}
}

// A tool failure with no results is an input error (exit 2) naming the
// line, never "No findings".
func TestAnalyzeSanitizerToolFailure(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", san("pub_tch_internal_error.txt"))
	if code != cmd.ExitInput || strings.Contains(out, "No findings") ||
		!strings.Contains(errOut, "pub_tch_internal_error.txt: line 5: the tool failed") || !strings.Contains(errOut, "not a clean run") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// JuliaGPU/CUDA.jl#2204: the program crashed before its first CUDA call
// ("Error: Target application terminated before first instrumented API
// call", line 20): nothing was checked.
func TestAnalyzeSanitizerTerminatedBeforeCUDA(t *testing.T) {
	code, _, errOut := run(t, "", "analyze", san("pub_cudajl2204_terminated.txt"))
	if code != cmd.ExitInput || !strings.Contains(errOut, "line 20: the tool failed") || !strings.Contains(errOut, "Target application terminated") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// cuda-memcheck 11's deprecation notice is not an error record: a clean
// run (ERROR SUMMARY: 0 errors) passes --fail-on sanitizer-errors>0.
func TestAnalyzeSanitizerDeprecationNoticeClean(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", "--fail-on", "sanitizer-errors>0", san("pub_gpujoin_memcheck11_deprecated.txt"))
	if code != 0 || !strings.Contains(out, "No findings") || strings.Contains(out, "This tool is deprecated") || strings.Contains(out, "Warnings") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// A PyTorch OOM printed amid compute-sanitizer's lines (line 15 of the
// log: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate
// 20.00 MiB. GPU 0 ...") is an oom finding of analyze, as in a log without
// the tool's lines, at the traceback's frame (train.py:12); --fail-on oom
// trips on it.
func TestAnalyzeSanitizerProgramOOM(t *testing.T) {
	r, ooms := analyzeOOMFailOn(t, san("san_torch_oom_in_log.txt"))
	if len(ooms) != 1 || ooms[0].Site.Line != 12 || !strings.HasSuffix(ooms[0].Site.File, "train.py") ||
		!strings.HasPrefix(ooms[0].Message, "oom: 20.00 MiB requested on GPU 0") {
		t.Errorf("oom findings %+v", ooms)
	}
	// The tool's own record of the failed cudaMalloc is still an error.
	if len(r.Errors) != 1 || r.Errors[0].API != "cudaMalloc" {
		t.Errorf("errors %+v", r.Errors)
	}
}

// harp-lab/GPUJoin: a cuda-memcheck run that crashed on an OOM printed two
// API records before "No CUDA-MEMCHECK results found": they are reported
// (exit 0, not 2), with a warning that the summary is missing; the
// program's own "cudaErrorMemoryAllocation: out of memory" makes an oom
// finding, so --fail-on oom trips.
func TestAnalyzeSanitizerOOMNoResults(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", san("pub_gpujoin_oom_noresults.txt"))
	if code != 0 || !strings.Contains(out, "cudaMalloc failed with cudaErrorMemoryAllocation") ||
		!strings.Contains(out, "no ERROR SUMMARY: the process ended early") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, _, errOut := run(t, "", "analyze", "--fail-on", "oom", san("pub_gpujoin_oom_noresults.txt")); code != cmd.ExitFindings {
		t.Errorf("--fail-on oom: exit %d: %s", code, errOut)
	}
}

// The same tool failure ("No CUDA-MEMCHECK results found", line 7) with no
// record, but the program's output holds a libtorch OOM (line 5: "CUDA out
// of memory. Tried to allocate 20.00 MiB (GPU 0; ...)"): the OOM is
// reported, not dropped with an exit 2, and --fail-on oom trips on it; a
// warning says the sanitizer itself checked nothing.
func TestAnalyzeSanitizerOOMNoResultsNoRecords(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", "--format", "json", "--fail-on", "oom", san("memcheck_libtorch_oom_noresults_norecords.txt"))
	if code != cmd.ExitFindings {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	r := decode(t, out)
	if len(r.Findings) != 1 || r.Findings[0].Kind != report.KindOOM || !strings.HasPrefix(r.Findings[0].Message, "oom: 20.00 MiB requested on GPU 0") {
		t.Errorf("findings %+v", r.Findings)
	}
	if len(r.Errors) != 0 {
		t.Errorf("errors %+v", r.Errors)
	}
	var w []string
	for _, in := range r.Inputs {
		w = append(w, in.Warnings...)
	}
	if ws := strings.Join(w, "\n"); !strings.Contains(ws, `"No CUDA-MEMCHECK results found" at line 7`) || !strings.Contains(ws, "the sanitizer checked nothing") {
		t.Errorf("warnings %q", w)
	}
}

// PYTORCH_NO_CUDA_MEMORY_CACHING=1: tensors left at exit are leaks, and
// --fail-on leak trips.
func TestAnalyzeSanitizerUncachedTorchLeak(t *testing.T) {
	if code, out, errOut := run(t, "", "analyze", "--fail-on", "leak", san("san_torch_uncached_leak.txt")); code != cmd.ExitFindings || strings.Contains(out, "retained") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// TensorFlow's INFO-level "failed to allocate 7.81G (8387559424 bytes)
// from device: CUDA_ERROR_OUT_OF_MEMORY" (tensorflow/tensorflow#52123: its
// start-up probe, retried smaller; the log goes on) is no OOM, in a plain
// log or amid compute-sanitizer's lines: --fail-on oom passes (exit 0),
// and both say why in a warning, naming the line (2 in the sanitizer log,
// after its banner).
func TestAnalyzeLoggedOOMNotAFinding(t *testing.T) {
	for _, f := range []string{san("san_tf_info_cuda_driver_oom.txt"), filepath.Join("..", "testdata", "pytorch", "pastes", "tf52123_info_cuda_driver_oom.log")} {
		code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", f)
		if code != 0 || !strings.Contains(out, "No findings") {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", f, code, out, errOut)
		}
		line := "line 1: "
		if !strings.HasSuffix(f, ".log") {
			line = "line 2: "
		}
		if !strings.Contains(out, line+"a log record at INFO level reports an allocation of 8387559424 bytes") {
			t.Errorf("%s: no warning of the INFO record at %s\n%s", f, line, out)
		}
	}
}

// CuPy's OutOfMemoryError (cupy/cupy#2537: "Out of memory allocating
// 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).") printed by a
// program under compute-sanitizer is an oom finding of 25600000 bytes
// (24.41 MiB), with CuPy's note and no PyTorch advice; --fail-on oom trips.
// The traceback alone is read as OOM text by analyze and oom.
func TestAnalyzeSanitizerCuPyOOM(t *testing.T) {
	_, ooms := analyzeOOMFailOn(t, san("san_cupy_oom.txt"))
	// The site is the program's frame, not CuPy's innermost (Cython
	// frames name their .pyx relative to the package).
	if len(ooms) != 1 || !strings.HasPrefix(ooms[0].Message, "oom: 24.41 MiB requested at load_batch (cupy_oom.py:5)") || !strings.Contains(ooms[0].Message, "CuPy's memory pool") ||
		strings.Contains(ooms[0].Message, "PYTORCH_CUDA_ALLOC_CONF") {
		t.Errorf("oom findings %+v", ooms)
	}
	tb := filepath.Join("..", "testdata", "pytorch", "pastes", "cupy2537_oom_traceback.log")
	if code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", tb); code != cmd.ExitFindings || !strings.Contains(out, "24.41 MiB requested") {
		t.Errorf("analyze traceback: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "", "oom", tb); code != 0 || !strings.Contains(out, "OOM 1 of 1, 24.41 MiB requested") || strings.Contains(out, "PyTorch:") {
		t.Errorf("oom traceback: exit %d\n%s\n%s", code, out, errOut)
	}
	jax := filepath.Join("..", "testdata", "pytorch", "pastes", "jax_afprofile8_resource_exhausted.log")
	// 4770354232 bytes is 4.44 GiB (4770354232 / 2^30 = 4.4427).
	if code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", jax); code != cmd.ExitFindings || !strings.Contains(out, "4.44 GiB requested") || !strings.Contains(out, "XLA") {
		t.Errorf("analyze jax: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestAnalyzeStreamExecutorErrorRecord: TensorFlow's cuda_driver.cc line
// at ERROR level (the same line at INFO is a probe, tensorflow#52123) is an
// OOM of the 8387559424 bytes it names (7.81 GiB), said to be
// StreamExecutor's, not an allocation "outside PyTorch's caching
// allocator" with "no sizes".
func TestAnalyzeStreamExecutorErrorRecord(t *testing.T) {
	log := filepath.Join(t.TempDir(), "tf.log")
	line := "2021-09-24 16:22:13.020179: E tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
	if err := os.WriteFile(log, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ooms := analyzeOOMFailOn(t, log)
	if len(ooms) != 1 || !strings.HasPrefix(ooms[0].Message, "oom: 7.81 GiB requested: StreamExecutor") ||
		strings.Contains(ooms[0].Message, "PyTorch") || strings.Contains(ooms[0].Message, "no sizes") {
		t.Errorf("oom findings %+v", ooms)
	}
	if code, out, errOut := run(t, "", "oom", log); code != 0 || !strings.Contains(out, "StreamExecutor (the GPU layer of TensorFlow and XLA/JAX) could not allocate 7.81 GiB") || strings.Contains(out, "PyTorch held") {
		t.Errorf("oom: exit %d\n%s\n%s", code, out, errOut)
	}
}

// analyzeOOMFailOn runs "analyze --format json --fail-on oom" on path,
// which must exit with findings, and returns the report and its oom
// findings.
func analyzeOOMFailOn(t *testing.T, path string) (report.Report, []report.Finding) {
	t.Helper()
	code, out, errOut := run(t, "", "analyze", "--format", "json", "--fail-on", "oom", path)
	if code != cmd.ExitFindings {
		t.Fatalf("exit %d\nstderr %s", code, errOut)
	}
	r := decode(t, out)
	var ooms []report.Finding
	for _, f := range r.Findings {
		if f.Kind == report.KindOOM {
			ooms = append(ooms, f)
		}
	}
	return r, ooms
}

// HAMi-core's refusals (testdata/pytorch/pastes/hami_greedy_kubectl_logs.txt,
// a HAMi tutorial's `kubectl logs greedy`: "Device 0 OOM 4401922048 /
// 4294967296" twice, the program having caught PyTorch's error) are one
// OOM on GPU 0 whose cause is the pod's memory limit: 4401922048 bytes is
// 4.10 GiB (4401922048 / 2^30 = 4.0997), the limit 4294967296 bytes 4.00
// GiB. Was: `oom` said "No out-of-memory error in the inputs" (exit 0) and
// `analyze` "unrecognised input format" (exit 2).
func TestAnalyzeHAMiCoreOOM(t *testing.T) {
	log := filepath.Join("..", "testdata", "pytorch", "pastes", "hami_greedy_kubectl_logs.txt")
	code, out, errOut := run(t, "", "oom", log)
	if code != 0 || !strings.Contains(out, "OOM 1 of 1: GPU 0") || !strings.Contains(out, "memory-limit: HAMi-core refused the allocation on device 0") ||
		!strings.Contains(out, "would have been 4.10 GiB, over the pod's limit of 4.00 GiB") || strings.Contains(out, "PYTORCH_CUDA_ALLOC_CONF") {
		t.Errorf("oom: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", log); code != cmd.ExitFindings || !strings.Contains(out, "cause: memory-limit") {
		t.Errorf("analyze: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A log that holds the tool's banner and the program's output but no
// record and no summary (the job was killed, the upload stopped, before
// the process exited): the leak check runs at exit and printed nothing,
// so nothing the tool checked is in it. That is not a clean run: an error
// naming the file (exit 2), never "No findings" nor a passed leak gate.
// An OOM in the program's output is still reported, with a warning that
// the tool's checks are not in the log.
func TestSanitizerLogEndedBeforeSummary(t *testing.T) {
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.txt")
	if err := os.WriteFile(cut, []byte("========= COMPUTE-SANITIZER\nepoch 1 loss 0.31\nepoch 2 loss 0.27\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"analyze", cut}, {"analyze", "--fail-on", "leak", "--format", "markdown", cut}} {
		code, out, errOut := run(t, "", args...)
		if code != cmd.ExitInput || !strings.Contains(errOut, cut+": ") || !strings.Contains(errOut, "ERROR SUMMARY") ||
			strings.Contains(out, "No findings") || strings.Contains(out, "passed") {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", args, code, errOut, out)
		}
	}
	oom := filepath.Join(dir, "oom.txt")
	log := "========= COMPUTE-SANITIZER\n" +
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 135.01 GiB is free. Including non-PyTorch memory, this process has 4.78 GiB memory in use. Of the allocated memory 4.19 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n"
	if err := os.WriteFile(oom, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "", "analyze", oom)
	if code != cmd.ExitOK || !strings.Contains(out, " oom ") || !strings.Contains(out, "ERROR SUMMARY") {
		t.Errorf("with an OOM: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	// An XML report has no summary: one without a record is a clean run.
	clean := filepath.Join(dir, "clean.xml")
	if err := os.WriteFile(clean, []byte("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput>\n</ComputeSanitizerOutput>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "", "analyze", clean); code != cmd.ExitOK || !strings.Contains(out, "No findings") {
		t.Errorf("clean XML: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}
