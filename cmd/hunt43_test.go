package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Session 43 (testdata/README.md, "Found by the session-43 tester").

// An allocator that counted OOMs the inputs do not describe trips
// --fail-on oom: the memory_summary() pasted in pytorch/pytorch#35901
// reads "CUDA OOMs: 1" and holds no OOM message, so the process had one
// out-of-memory error (caught, or its message not pasted). It passed
// (exit 0) before, though the report warned of it. The same for a
// memory_stats() dump whose num_ooms is 2 (made from the recorded
// memory_stats.json with num_ooms set to 2). A size threshold cannot be
// judged on an OOM of no known size, so oom>1GiB does not trip on them;
// and a dump whose num_ooms is 0 passes.
func TestHunt43AllocatorCountedOOMsTripTheGate(t *testing.T) {
	for _, c := range []struct {
		path string
		n    string
	}{
		{td + "pytorch/pastes/summary_cuda_ooms1_pt35901_cut.txt", "1 out-of-memory error more"},
		{td + "pytorch/synthetic/memory_stats_num_ooms2.json", "2 out-of-memory errors more"},
	} {
		code, out, errOut := run(t, nil, "analyze", "-q", "--fail-on", "oom", c.path)
		if code != 1 || !strings.Contains(out+errOut, c.n) {
			t.Errorf("%s --fail-on oom: exit %d, output %.200q; want 1 and %q", c.path, code, out+errOut, c.n)
		}
		code, out, _ = run(t, nil, "analyze", "--format", "json", "--fail-on", "oom>1GiB", c.path)
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if code != 0 || len(r.Gates) != 1 || r.Gates[0].Tripped || !strings.Contains(r.Gates[0].Why, "of no known size") {
			t.Errorf("%s --fail-on oom>1GiB: exit %d, gates %+v; want 0, not tripped, no known size", c.path, code, r.Gates)
		}
	}
	if code, _, errOut := run(t, nil, "analyze", "-q", "--fail-on", "oom", td+"pytorch/memory_stats.json"); code != 0 {
		t.Errorf("memory_stats.json (num_ooms 0) --fail-on oom: exit %d, stderr %.200q; want 0", code, errOut)
	}
}

// The sanitizer-errors gate counts the errors compute-sanitizer's ERROR
// SUMMARY gives beyond the records read (--print-limit left them
// unprinted): ERROR SUMMARY less the leaks (LEAK SUMMARY's allocations).
// One printed out-of-bounds write of 5 errors, no leaks: 5 > 2 trips (it
// passed, counting the 1 record). None printed of 5: 5 > 0 trips. The
// recorded leak_with_oob.txt (5 leaks, ERROR SUMMARY 9) has 4, all
// printed: > 3 trips and > 4 does not; san_print_limit.txt's 8 errors are
// its 8 leaks, so it has none.
func TestHunt43SanitizerErrorsBySummary(t *testing.T) {
	for _, c := range []struct {
		path, gate string
		code       int
	}{
		{td + "sanitizer/s43_oob_four_not_printed.txt", "sanitizer-errors>2", 1},
		{td + "sanitizer/s43_oob_four_not_printed.txt", "sanitizer-errors>5", 0},
		{td + "sanitizer/s43_errors_none_printed.txt", "sanitizer-errors", 1},
		{td + "sanitizer/leak_with_oob.txt", "sanitizer-errors>3", 1},
		{td + "sanitizer/leak_with_oob.txt", "sanitizer-errors>4", 0},
		{td + "sanitizer/san_print_limit.txt", "sanitizer-errors", 0},
	} {
		code, out, errOut := run(t, nil, "analyze", "-q", "--fail-on", c.gate, c.path)
		if code != c.code {
			t.Errorf("%s --fail-on %s: exit %d, want %d: %.200q", c.path, c.gate, code, c.code, out+errOut)
		}
	}
}

// The session-43 tester's logs through the command line: a leak that ran
// the GPU out of memory and restarted 4 times (4 runs of 10240 to 40000
// MiB of 40960 at 24 MiB/s, each falling to 0 MiB: restarted 3 times in
// the log), and a leak of 2 MiB/min under 20 MiB spikes, both let through
// `--fail-on growing` before session 43 (exit 0: "sawtooth ... allocation
// churn, not a leak", "flat ... no growth"). Now both trip the gate
// (ExitFindings), the crash loop saying its evidence: the runs, their
// rate, the peak against the total, and that memory fell to 0 B.
func TestHunt43GateTrips(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"s43_n09_leak_oom_restart_cycles.csv", []string{"growing, restarted 3 times", "4 runs rose steadily (24 MiB/s)",
			"of 40 GiB, 98%", "fell to 0 B", "crash loop", "not allocation churn", "the samples cannot tell an OOM"}},
		{"s43_n11_leak_with_20MiB_transients.csv", []string{"growing: ", "grows 2.0 MiB/min"}},
	} {
		code, out, errOut := runIO(t, "", false, "analyze", "--fail-on", "growing", nvmlData+c.file)
		if code != ExitFindings {
			t.Errorf("%s: exit %d, want %d (the gate): %.200q", c.file, code, ExitFindings, out+errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q: %.200q", c.file, w, out)
			}
		}
	}
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", nvmlData+"s43_n09_leak_oom_restart_cycles.csv")
	if code != ExitOK {
		t.Fatalf("exit %d: %.200q", code, errOut)
	}
	var r struct {
		Findings []struct {
			Classification string `json:"classification"`
			OOMExits       int    `json:"oom_exits"`
			Runs           []struct {
				OOMExit bool `json:"oom_exit"`
			} `json:"runs"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 {
		t.Fatalf("%v, %d findings", err, len(r.Findings))
	}
	f := r.Findings[0]
	if f.Classification != "growing" || f.OOMExits != 4 || len(f.Runs) != 4 || !f.Runs[0].OOMExit {
		t.Errorf("%s, %d OOM exits, %d runs; want growing, 4 of 4", f.Classification, f.OOMExits, len(f.Runs))
	}
}

// growing>SIZE weighs a series' growth given back before the log ended
// (the process exited: released_us) at that run's peak, as README's gate
// table says: a ramp of 1000 to 3900 MiB, then 1000 MiB for its last 30
// samples, trips growing>2GiB (3900 MiB is 3.8 GiB) and not growing>4GiB.
func TestHunt43GrowingGateWeighsAReleasedRunAtItsPeak(t *testing.T) {
	path := td + "nvml/s43_grow_then_release.csv"
	for _, c := range []struct {
		gate string
		code int
	}{{"growing>2GiB", 1}, {"growing>4GiB", 0}} {
		if code, out, errOut := run(t, nil, "analyze", "-q", "--fail-on", c.gate, path); code != c.code {
			t.Errorf("--fail-on %s: exit %d, want %d: %.200q", c.gate, code, c.code, out+errOut)
		}
	}
}

// A leak's advice names the free call of the API that allocated it: the
// driver API's cuMemAlloc_v2 is freed by cuMemFree, cuMemAllocHost_v2 by
// cuMemFreeHost, cudaMallocArray by cudaFreeArray (each was told
// cudaFree or cudaFreeHost, and named cudaMalloc or cudaMallocHost).
func TestHunt43LeakAdviceNamesTheAPIsFree(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", td+"sanitizer/s43_allocation_apis.txt")
	if code != 0 {
		t.Fatalf("exit %d: %.200q", code, errOut)
	}
	for _, want := range []string{
		"device memory (cuMemAlloc_v2) at alloc_drv (drv.cu:10) was never freed; release it with cuMemFree ",
		"pinned host memory (cuMemAllocHost_v2) at pin (drv.cu:50) was never freed; release it with cuMemFreeHost ",
		"device memory (cudaMallocArray) at make_tex (tex.cu:22) was never freed; release it with cudaFreeArray ",
		"managed memory (cudaMallocManaged) at make_um (um.cu:5) was never freed; release it with cudaFree ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the report", want)
		}
	}
}

// Memory that only falls (20000 to 17050 MiB, 50 MiB a minute, never
// rising) is no sawtooth, which is memory that rises and is given back:
// it is a release (step). It was "sawtooth ... held above 17 GiB in 1 run".
func TestHunt43SteadyDeclineIsNoSawtooth(t *testing.T) {
	code, out, errOut := run(t, nil, "trend", "--format", "json", td+"nvml/s43_steady_decline.csv")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || len(r.Findings) != 1 {
		t.Fatalf("exit %d, %v: %.200q", code, err, errOut)
	}
	if f := r.Findings[0]; f.Classification != "step" || !strings.Contains(f.Message, "a release from 20 GiB to 17 GiB in 59 min") {
		t.Errorf("%s: %.200q; want step, a release", f.Classification, f.Message)
	}
}

// A real backtrace is saved up to the driver's entry point: its innermost
// allocation frame is libcuda's cuMemAlloc_v2, under the runtime's
// cudaMalloc the program called. The advice names the program's call
// (cudaFree), as it did before the API was kept; where the frame above
// the driver's has no symbol (a static cudart), the API the program
// called is not known, and the class's words stand.
func TestHunt43LeakAdviceOfARealBacktrace(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{td + "sanitizer/leak_long_backtrace.txt", "device memory (cudaMalloc) at make_workspace (leaky.cu:14) was never freed; release it with cudaFree "},
		{td + "sanitizer/memcheck_unsymbolized_two_sites.txt", "of device memory (cudaMalloc) at 0x3201 (leak)"},
	} {
		_, out, _ := run(t, nil, "analyze", c.path)
		if !strings.Contains(out, c.want) || strings.Contains(out, "cuMemFree") {
			t.Errorf("%s: no %q (or cuMemFree named) in %.300q", c.path, c.want, out)
		}
	}
}

// Two pods sharing a GPU whose lines come in another order each scrape
// (the session-43 reviewer's input) are one holder all along: the GPU's
// pod is "podA,podB" in every sample, not a new span of holders each
// scrape ("podA,podB", "podB,podA", ...: 8 spans in 8 scrapes).
func TestHunt43DCGMSharedPodsInAnyOrder(t *testing.T) {
	_, out, _ := run(t, nil, "trend", "--format", "json", td+"nvml/s43_dcgm_shared_pods_order.txt")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 {
		t.Fatalf("%v, %d findings", err, len(r.Findings))
	}
	if f := r.Findings[0]; f.Pod != "podA,podB" || len(f.Pods) != 0 {
		t.Errorf("pod %q, %d spans of holders; want podA,podB throughout", f.Pod, len(f.Pods))
	}
}

// A crash loop is told from runs long enough to show growth of their own:
// runs that load to 77 GiB of 80 in 3 samples and creep 150 MiB over 2
// more before falling to nothing (a model too large for the GPU) are no
// leak that filled it (they were "growing, restarted 39 times"); shards
// loaded steadily over 24 samples to 75 GiB, then a fall to nothing, are
// a crash loop, which the message says may be a load larger than the GPU
// as well as a leak (the session-43 regression tester's logs).
func TestHunt43CrashLoopNeedsRunsThatShowGrowth(t *testing.T) {
	for _, c := range []struct {
		path     string
		growing  bool
		contains string
	}{
		{td + "nvml/s43_capacity_crashloop_short_runs.csv", false, ""},
		{td + "nvml/s43_shardload_crashloop.csv", true, "or a load (a model, its shards) larger than the GPU"},
	} {
		_, out, _ := run(t, nil, "trend", "--format", "json", c.path)
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 {
			t.Fatalf("%s: %v", c.path, err)
		}
		f := r.Findings[0]
		if (f.Classification == "growing") != c.growing || !strings.Contains(f.Message, c.contains) {
			t.Errorf("%s: %s: %.200q", c.path, f.Classification, f.Message)
		}
	}
}

// A GPU held in turn by eight pods, each flat, each 8 GiB above the one
// before (DCGM exporter's labels), grew only where the pod changed: a
// step at each change, with no time to OOM, not "growing ... runs out of
// memory in about 14 min" (the session-43 regression tester's find, after
// series were keyed by GPU rather than pod). The message says the next
// job's own memory and memory left behind cannot be told apart.
func TestHunt43DCGMPodsInTurnStepAtEachChange(t *testing.T) {
	_, out, _ := run(t, nil, "trend", "--format", "json", td+"nvml/s43_dcgm_eight_jobs_staircase.txt")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 {
		t.Fatalf("%v: %.200q", err, out)
	}
	f := r.Findings[0]
	if f.Classification != "step" || f.TimeToOOMS != nil || !strings.Contains(f.Message, "in 7 steps") || !strings.Contains(f.Message, "each where a new pod took the GPU") {
		t.Errorf("%s: %.300q", f.Classification, f.Message)
	}
}

// --fail-on oom is not judged on inputs that cannot show an OOM: over an
// NVML log or a memory timeline alone it exits 2 (it passed, exit 0, as
// if the run had been searched); beside a log it is judged on the log and
// names the NVML log; a memory_stats() dump answers it by its counter.
func TestHunt43OOMGateNotJudgedOnBlindInputs(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{td + "nvml/query_gpu.csv"}, ExitInput},
		{[]string{td + "kineto/profile_keep_outputs_memory_timeline.json"}, ExitInput},
		{[]string{td + "nvml/query_gpu.csv", td + "pytorch/oom_error.txt"}, ExitFindings},
		{[]string{td + "nvml/query_gpu.csv", td + "logs/train_no_oom.log"}, ExitOK},
		{[]string{td + "pytorch/memory_stats.json"}, ExitOK},
	} {
		code, out, errOut := run(t, nil, append([]string{"analyze", "-q", "--fail-on", "oom"}, c.args...)...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %.200q", c.args, code, c.code, out+errOut)
		}
	}
}
