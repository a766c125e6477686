package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// analyzeSanitizerJSON runs analyze --format json on a compute-sanitizer
// input of testdata/sanitizer and returns its findings and errors.
func analyzeSanitizerJSON(t *testing.T, file string) (findings []map[string]any, errs []map[string]any) {
	t.Helper()
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", "../testdata/sanitizer/"+file)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("%s: exit %d: %s", file, code, errOut)
	}
	var r struct {
		Findings []map[string]any `json:"findings"`
		Errors   []map[string]any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, out)
	}
	return r.Findings, r.Errors
}

// cudaErrorCudartUnloading ("driver shutting down") is what a CUDA call
// returns once the runtime has begun to unload at process exit: BVLC/caffe#4026's
// cudaFree, from curandDestroyGenerator in caffe::Caffe's destructor, run
// by boost's thread-specific storage cleanup after main returned. Its
// arguments are not the fault, so "check the call's arguments" is wrong
// advice; the README's suppression example lists the error as shutdown
// noise. The driver API's name for it is CUDA_ERROR_DEINITIALIZED.
func TestF47sShutdownErrorIsShutdownOrder(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_caffe4026_cudart_unloading.txt")
	if len(errs) != 1 {
		t.Fatalf("%d errors", len(errs))
	}
	msg, _ := errs[0]["message"].(string)
	if strings.Contains(msg, "check the call's arguments") || !strings.Contains(msg, "shutting down") ||
		!strings.Contains(msg, "destructor") || !strings.Contains(msg, `kind=api message="cudaErrorCudartUnloading"`) {
		t.Errorf("message %q", msg)
	}
}

// racecheck writes a race over several lines, each "and ... access at"
// line going on with the first: "Race reported between Read access at
// compress(...)+0x260" / "and Write access at ...+0x200 [294291 hazards]"
// (ORNL/HeCBench#133). Joined, they are one sentence: no colon between
// the first line and its "and".
func TestF47sRaceLinesJoinAsOneSentence(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_hecbench133_race.txt")
	if len(errs) != 2 {
		t.Fatalf("%d errors", len(errs))
	}
	msg, _ := errs[0]["message"].(string)
	want := "Warning: Race reported between Read access at compress(const unsigned int *, const unsigned int *, uint2 *, int)+0x260 and Write access at compress(const unsigned int *, const unsigned int *, uint2 *, int)+0x200 [294291 hazards] and Write access at"
	if !strings.HasPrefix(msg, want) {
		t.Errorf("message %q", msg)
	}
}

// pytorch/pytorch#52253's cuda-memcheck leak record, pasted, ends in
// "Host Frame:/home/alexander/git/Quansight/py": a path cut mid-name, no
// function, no address, where every other host frame of the record ends
// in [0x...]. The tool showed the fragment as the site ("allocated at
// /home/alexander/git/Quansight/py"). The whole frames end in
// libc10_cuda.so, PyTorch's caching allocator: the program's own caller is
// not in the paste, so the finding is the pool's memory with its site
// unknown, and the fragment is named nowhere.
//
// BVLC/caffe#4026's paste ends the same way ("Host Frame:/lib/x86_64-linux-gnu/li"):
// the error's stack must not show the fragment either.
func TestF47sCutHostFrameIsNotTheSite(t *testing.T) {
	fs, _ := analyzeSanitizerJSON(t, "pub_pytorch52253_cut_frame.txt")
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	f := fs[0]
	b, _ := json.Marshal(f)
	if strings.Contains(string(b), "Quansight/py\"") || strings.Contains(string(b), "allocated at /home") {
		t.Errorf("the cut frame is shown: %s", b)
	}
	if f["kind"] != "retained" || f["bytes"] != float64(2097152) || f["site_unknown"] == nil {
		t.Errorf("finding %s", b)
	}
	_, errs := analyzeSanitizerJSON(t, "pub_caffe4026_cudart_unloading.txt")
	if b, _ := json.Marshal(errs); len(errs) != 1 || strings.Contains(string(b), "x86_64-linux-gnu/li\"") {
		t.Errorf("caffe#4026's cut frame is shown: %s", b)
	}
}

// Two programs whose logs hold only a LEAK SUMMARY (xmrig/xmrig-nvidia#199:
// 10 allocations, 1,006,959,488 bytes; proteneer/timemachine#569: 14
// allocations, 7,536 bytes) in two jobs, and cupy/cupy#8904's leak whose
// backtrace was cut before the program's frames in a third: nothing shows
// any two share a site, so the report keeps three sites, each in one job,
// none "from 2 findings in 2 jobs".
func TestF47sReportKeepsNoSiteLeaksApart(t *testing.T) {
	dir := t.TempDir()
	for job, file := range map[string]string{"jobA": "pub_xmrig_summary_only.txt", "jobB": "pub_timemachine569_summary_only.txt", "jobC": "pub_cupy8904_static_cut.txt"} {
		b, err := os.ReadFile("../testdata/sanitizer/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, job), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, job, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runIO(t, "", false, "report", dir, "--format", "json", "-o", "-")
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d struct {
		Summary struct {
			Leaks     int `json:"leaks"`
			LeakSites int `json:"leak_sites"`
		} `json:"summary"`
		LeakSites []struct {
			Findings int      `json:"findings"`
			Jobs     []string `json:"jobs"`
			Bytes    int64    `json:"bytes"`
		} `json:"leak_sites"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Summary.Leaks != 3 || d.Summary.LeakSites != 3 || len(d.LeakSites) != 3 {
		t.Fatalf("summary %+v, sites %+v", d.Summary, d.LeakSites)
	}
	for _, s := range d.LeakSites {
		if s.Findings != 1 || len(s.Jobs) != 1 {
			t.Errorf("site folded across jobs: %+v", s)
		}
	}
}

// A memcheck record names the function of the faulting instruction on its
// "at" line, then (the device backtrace) the functions that called it,
// each a "Device Frame:", the last the __global__ function launched: the
// kernel. llnl/Quicksilver#48 (cuda-memcheck): the fault is at 0x2e8 in
// CycleTrackingGuts, and the one device frame after it is
// CycleTrackingKernel, so the kernel is CycleTrackingKernel and
// CycleTrackingGuts the device function it called. The tool said "in
// kernel CycleTrackingGuts".
func TestF47sKernelIsOutermostDeviceFrame(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_quicksilver48_device_frame.txt")
	if len(errs) != 1 {
		t.Fatalf("%d errors: %v", len(errs), errs)
	}
	e := errs[0]
	msg, _ := e["message"].(string)
	if e["kernel"] != "CycleTrackingKernel" || e["function"] != "CycleTrackingGuts" {
		t.Errorf("kernel %v, function %v; want CycleTrackingKernel, CycleTrackingGuts", e["kernel"], e["function"])
	}
	if strings.Contains(msg, "in kernel CycleTrackingGuts") || !strings.Contains(msg, "in device function CycleTrackingGuts") ||
		!strings.Contains(msg, "called from kernel CycleTrackingKernel") {
		t.Errorf("message %q", msg)
	}
}

// NVIDIA/cccl#1891's initcheck record, as pasted, ends after its Address
// line: the log stops before the device backtrace and the host backtrace
// would have come, so nothing says whether the "at" function (cub's
// ThreadLoad, a device function by its name, but the tool cannot know
// names) is the kernel or a device function called from it. The tool said
// "in kernel cub::...::ThreadLoad<...>"; it must not call it the kernel.
func TestF47sCutRecordNamesNoKernel(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_cccl1891_initcheck_cut.txt")
	if len(errs) != 1 {
		t.Fatalf("%d errors: %v", len(errs), errs)
	}
	e := errs[0]
	msg, _ := e["message"].(string)
	if _, ok := e["kernel"]; ok {
		t.Errorf("kernel %v named from a record cut before its backtrace", e["kernel"])
	}
	if fn, _ := e["function"].(string); !strings.Contains(fn, "ThreadLoad") {
		t.Errorf("function %q", fn)
	}
	if strings.Contains(msg, "in kernel") || !strings.Contains(msg, "ThreadLoad") || !strings.Contains(msg, "kernel not named") {
		t.Errorf("message %q", msg)
	}
}

// A record whose only device frame is its "at" line, followed by its host
// backtrace (the compute-sanitizer tutorial's scaleArray,
// testdata/sanitizer/leak_with_oob.txt's fill): compute-sanitizer lists a
// device function's callers after it, so the one function is the kernel,
// as before.
func TestF47sOneDeviceFrameIsTheKernel(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "leak_with_oob.txt")
	var found bool
	for _, e := range errs {
		if e["kind"] == "memory-access" {
			found = true
			msg, _ := e["message"].(string)
			if e["kernel"] != "fill" || e["function"] != "fill" || !strings.Contains(msg, "in kernel fill (leaky.cu:9)") {
				t.Errorf("%v", e)
			}
		}
	}
	if !found {
		t.Fatal("no memory-access error")
	}
}

// The outermost device frame is the kernel only if it can be one: a
// __global__ function cannot be a class's member function. The ray
// tracer's cuda-memcheck record (testdata/sanitizer/pub_raytracer_glued_frames.txt)
// faults in __cuda_syscall_mc_dyn_globallock_check, and its one Device
// Frame is _ZNK6camera7get_ray... ("camera::get_ray(...) const", a const
// member function): the device backtrace stops before the kernel, which is
// not named. Before, the kernel was said to be the syscall; with the
// outermost-frame rule alone it would have been camera::get_ray.
func TestF47sMemberFunctionIsNoKernel(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_raytracer_glued_frames.txt")
	if len(errs) == 0 {
		t.Fatal("no errors")
	}
	e := errs[0]
	msg, _ := e["message"].(string)
	if _, ok := e["kernel"]; ok || e["function"] != "__cuda_syscall_mc_dyn_globallock_check" {
		t.Errorf("kernel %v, function %v", e["kernel"], e["function"])
	}
	if strings.Contains(msg, "in kernel") || !strings.Contains(msg, "camera::get_ray, is a member function") {
		t.Errorf("message %q", msg)
	}
}

// Records alike but for a cut: concrete-core#332's three invalid reads at
// 0x3b0 in device_bootstrap_amortized, the third cut inside its "at" line
// (testdata/sanitizer/field/concretecore332_invalid_read_elided_cut.txt).
// The first two show their host backtrace, so the one device function is
// the kernel; the third shows none. They are one error counted 3 times
// (as before), with the kernel the first two name.
func TestF47sCutRecordJoinsItsGroup(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "field/concretecore332_invalid_read_elided_cut.txt")
	if len(errs) != 1 {
		t.Fatalf("%d errors: %v", len(errs), errs)
	}
	if errs[0]["count"] != float64(3) || errs[0]["kernel"] != "device_bootstrap_amortized<unsigned long,Degree<int=2048>,sharedMemDegree=1>" {
		t.Errorf("%v", errs[0])
	}
}

// gpuleak diff keys a device-side error by the function of its faulting
// instruction: a report written before "function" existed held it as
// "kernel" (Quicksilver#48's CycleTrackingGuts), and a record cut before
// its backtraces names no kernel. Diffing such an old report against the
// same log analysed now finds the error the same, not one new and one
// fixed.
func TestF47sDiffKeysErrorsByFunction(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", "../testdata/sanitizer/pub_quicksilver48_device_frame.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	errs := doc["errors"].([]any)
	e := errs[0].(map[string]any)
	// The old shape: "kernel" the faulting function, no "function".
	e["kernel"] = e["function"]
	delete(e, "function")
	old, _ := json.Marshal(doc)
	p := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runIO(t, "", false, "diff", p, "../testdata/sanitizer/pub_quicksilver48_device_frame.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "new    sanitizer-error") || strings.Contains(out, "fixed  sanitizer-error") || !strings.Contains(out, "0 new") {
		t.Errorf("diff:\n%s", out)
	}
}

// NVIDIA/cccl#8288's record, as pasted (testdata/sanitizer/field/cccl8288_indented_elided_summary.txt):
// "at cp_async_bulk_cp_mask in cp_async_bulk.h:236", its host backtrace
// line, then "=========   ..." where the paster left lines out; the issue
// says the kernel is DeviceScanKernel, which the record no longer shows.
// With lines left out, one device frame does not show that the function
// is the kernel: none is named (before: "in kernel cp_async_bulk_cp_mask").
func TestF47sElidedRecordNamesNoKernel(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "field/cccl8288_indented_elided_summary.txt")
	if len(errs) != 1 {
		t.Fatalf("%d errors", len(errs))
	}
	msg, _ := errs[0]["message"].(string)
	if _, ok := errs[0]["kernel"]; ok || errs[0]["function"] != "cp_async_bulk_cp_mask" || strings.Contains(msg, "in kernel") || !strings.Contains(msg, "left out of the paste") {
		t.Errorf("%v", errs[0])
	}
}
