package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// summaryReport is the part of the JSON report that holds the inputs'
// compute-sanitizer summaries.
type summaryReport struct {
	Inputs []struct {
		LeakSummary *struct {
			Bytes  *int64 `json:"leak_bytes"`
			Errors *int64 `json:"error_count"`
			Runs   *int   `json:"runs"`
			ByRun  []struct {
				Run    int    `json:"run"`
				Line   int64  `json:"line"`
				Bytes  *int64 `json:"leak_bytes"`
				Allocs *int64 `json:"leak_allocations"`
				Errors *int64 `json:"error_count"`
			} `json:"by_run"`
		} `json:"leak_summary"`
	} `json:"inputs"`
}

// TestSanitizerLeakSummaryByRun: xmrig/xmrig-nvidia#199 pasted two runs'
// summaries, "Before fix" (LEAK SUMMARY 1006959488 bytes in 10
// allocations, ERROR SUMMARY 10 errors, lines 3-4) and "After fix" (0
// bytes, 0 errors, lines 9-10). The input's leak_summary adds them up
// (README: "added over its runs"), which alone reads as one run that
// leaked 1006959488 bytes: it must say it is a total of 2 runs and give
// each run's own figures, the second's 0 bytes among them. A log of one
// run keeps its leak_summary as it was (no runs, no by_run).
func TestSanitizerLeakSummaryByRun(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", "../testdata/sanitizer/field/xmrig199_before_after_summaries_fenced.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r summaryReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	s := r.Inputs[0].LeakSummary
	if s == nil || s.Bytes == nil || *s.Bytes != 1006959488 {
		t.Fatalf("total changed: %s", out)
	}
	if s.Runs == nil || *s.Runs != 2 {
		t.Errorf("leak_summary does not say it adds 2 runs: %+v", s)
	}
	if len(s.ByRun) != 2 {
		t.Fatalf("by_run: want 2 runs, got %+v", s.ByRun)
	}
	first, second := s.ByRun[0], s.ByRun[1]
	if first.Run != 1 || first.Line != 3 || first.Bytes == nil || *first.Bytes != 1006959488 || *first.Allocs != 10 || *first.Errors != 10 {
		t.Errorf("run 1: %+v", first)
	}
	if second.Run != 2 || second.Line != 9 || second.Bytes == nil || *second.Bytes != 0 || *second.Errors != 0 {
		t.Errorf("run 2: %+v", second)
	}

	code, out, errOut = run(t, nil, "analyze", "--format", "json", "--top", "0", "../testdata/sanitizer/pub_xmrig_summary_only.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, `"runs"`) || strings.Contains(out, `"by_run"`) {
		t.Errorf("one run's summary got runs or by_run: %s", out)
	}

	// gpuleak diff names the total as one over 2 runs.
	code, out, errOut = run(t, nil, "diff", "../testdata/sanitizer/field/xmrig199_before_after_summaries_fenced.txt", "../testdata/sanitizer/pub_xmrig_summary_only.txt")
	if !strings.Contains(out+errOut, "leaked 960 MiB in 10 allocations (added over 2 runs) -> 960 MiB in 10 allocations") {
		t.Errorf("diff (exit %d) does not say its BASE summary adds 2 runs:\n%s\n%s", code, out, errOut)
	}
}

// TestU47bPeakReservedInJSON: a device's JSON gives what PyTorch had
// reserved at the trace's peak (peak_reserved_bytes), the figure the
// fragmentation message names. fragmentation_oom.pickle, by Python over
// the pickle: device 0's trace (1871 entries) reaches its most active
// bytes at entry 1001 (alloc +size, free_requested -size, sizes rounded up
// to 512); its segments hold 2,977,955,840 bytes at the end, and after the
// peak the trace reserved none (no segment_alloc) and released one 20 MiB
// segment (segment_free 20,971,520): 2,977,955,840 + 20,971,520 =
// 2,998,927,360 reserved at the peak, 2,699,034,624 of it active.
// wrapped_ring.pickle's trace records no segment entry, so the reserve
// then is not known: no field, though its peak is given.
func TestU47bPeakReservedInJSON(t *testing.T) {
	type dev struct {
		Device       int    `json:"device"`
		PeakActive   *int64 `json:"peak_active_bytes"`
		PeakReserved *int64 `json:"peak_reserved_bytes"`
	}
	read := func(path string) dev {
		t.Helper()
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", path)
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d: %s", path, code, errOut)
		}
		var r struct {
			Inputs []struct {
				Devices []dev `json:"devices"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Inputs) != 1 || len(r.Inputs[0].Devices) != 1 {
			t.Fatalf("%s: want one input of one device: %.500s", path, out)
		}
		return r.Inputs[0].Devices[0]
	}
	d := read(td + "pytorch/fragmentation_oom.pickle")
	if d.PeakActive == nil || *d.PeakActive != 2699034624 {
		t.Errorf("fragmentation_oom: peak_active_bytes %v, want 2699034624", d.PeakActive)
	}
	if d.PeakReserved == nil || *d.PeakReserved != 2998927360 {
		t.Errorf("fragmentation_oom: peak_reserved_bytes %v, want 2998927360", d.PeakReserved)
	}
	d = read(td + "pytorch/wrapped_ring.pickle")
	if d.PeakActive == nil || d.PeakReserved != nil {
		t.Errorf("wrapped_ring: peak_active_bytes %v (want one), peak_reserved_bytes %v (want none)", d.PeakActive, d.PeakReserved)
	}
}

// TestU47bTimelineGrowthSizesTold: a memory timeline
// (kineto/u47b_synthetic_20GiB_keeps_32MiB_per_step_memory_timeline.json,
// synthetic) whose activations sit at 20 GiB and keep 32 MiB of each of
// 10 steps: the least held between steps goes from 20 GiB + 32 MiB (20.03
// GiB, the first step's end) to 20 GiB + 320 MiB (20.31 GiB, the last's),
// which IBytes prints "20 GiB" both: the growth finding read "from 20 GiB
// to 20 GiB". One decimal tells them apart (20.0, 20.3), and the end, 20
// GiB + 320 MiB too, reads as the last did (20.3 GiB).
func TestU47bTimelineGrowthSizesTold(t *testing.T) {
	_, out, errOut := run(t, nil, "analyze", "--top", "0", td+"kineto/u47b_synthetic_20GiB_keeps_32MiB_per_step_memory_timeline.json")
	want := "from 20.0 GiB to 20.3 GiB (3.5 GiB/s, about 32 MiB a step from the first step's end to the last's), 20.3 GiB at the end"
	if !strings.Contains(out, want) {
		t.Errorf("want %q in:\n%s\n%s", want, out, errOut)
	}
}
