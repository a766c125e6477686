package trend

import (
	"testing"
	"time"
)

// The H200 recording of issue 12 (testdata/README.md, gen/sample_leak_then_exit.sh):
// leak_then_exit.py (pid 878) adds 128 MiB every 0.5 s for 30 s, so its
// memory grows +256 MiB/s, then exits at 02:01:16.8 UTC; nvidia-smi's
// memory.used is 0 MiB before and after, 8301 MiB at the peak (nvidia-smi
// --query-gpu); the first sample back at 0 MiB is 02:01:17.333. A correct
// verdict: a run that grew until it ended (a leak suspect with its rate),
// not "sawtooth ... churn", and no time to OOM, since the memory was
// released.
var (
	leakExitReleased = time.Date(2026, 12, 1, 2, 1, 17, 333_000_000, time.UTC).UnixMicro()
	leakExitRate     = float64(128*mib) / 0.5
)

func TestLeakThenExitGPU(t *testing.T) {
	for _, c := range []struct {
		file     string
		peak     int64
		released int64 // 0: only check it is within 1.5 s of the exit
	}{
		{"leak_exit_query_gpu.csv", 8301 * mib, leakExitReleased},
		// dmon's fb column, once a second (the header says MB; the values are MiB).
		{"leak_exit_dmon_mu_TD.txt", 8301 * mib, 0},
		// pynvml's used less its reserved (644939776 B): 8704032768 B at the peak.
		{"leak_exit_pynvml.jsonl", 8704032768, time.UnixMicro(1796090477_363_000).UnixMicro()},
	} {
		var gpu *SeriesTrend
		all := trends(t, c.file)
		for i := range all {
			if !all[i].HasPID {
				gpu = &all[i]
			}
		}
		if gpu == nil {
			t.Fatalf("%s: no GPU series", c.file)
		}
		if gpu.Class != Growing || gpu.ReleasedUs == 0 || gpu.TimeToOOM != nil {
			t.Errorf("%s: class %s, released at %d, time to OOM %+v (%s); want growing, released, none",
				c.file, gpu.Class, gpu.ReleasedUs, gpu.TimeToOOM, gpu.NoOOMReason)
		}
		if gpu.RunPeakBytes != c.peak || gpu.BaselineBytes != 0 {
			t.Errorf("%s: run peak %d, baseline %d; want %d, 0", c.file, gpu.RunPeakBytes, gpu.BaselineBytes, c.peak)
		}
		if !within(gpu.Slope, leakExitRate, 0.03) {
			t.Errorf("%s: slope %.0f MiB/s, want 256", c.file, gpu.Slope/mib)
		}
		if c.released != 0 && gpu.ReleasedUs != c.released {
			t.Errorf("%s: released at %s, want %s", c.file, time.UnixMicro(gpu.ReleasedUs).UTC(), time.UnixMicro(c.released).UTC())
		}
		exit := time.Date(2026, 12, 1, 2, 1, 16, 787_000_000, time.UTC).UnixMicro()
		if d := gpu.ReleasedUs - exit; d < 0 || d > 1_500_000 {
			t.Errorf("%s: released %.2f s after the exit", c.file, float64(d)/1e6)
		}
		if len(gpu.Runs) != 1 || gpu.Runs[0].Class != Growing {
			t.Errorf("%s: runs %+v", c.file, gpu.Runs)
		}
	}
}

// The same process in the per-process logs: pmon -o TD prints "-" rows
// after the exit, pynvml an empty process list, so the log outlives the
// process: it exited; it grew +256 MiB/s to 8292 MiB (pmon) while alive.
func TestLeakThenExitProcess(t *testing.T) {
	for _, c := range []struct {
		file string
		last int64
	}{
		{"leak_exit_pmon_m_TD.txt", 8292 * mib},
		{"leak_exit_pynvml.jsonl", 8694792192},
	} {
		p, ok := byPID(trends(t, c.file), c.file)[878]
		if !ok {
			t.Fatalf("%s: no pid 878", c.file)
		}
		if p.Class != Growing || p.HeldToEnd || p.TimeToOOM != nil || p.LastBytes != c.last {
			t.Errorf("%s: %s, held to end %v, time to OOM %+v, last %d; want growing, exited, none, %d",
				c.file, p.Class, p.HeldToEnd, p.TimeToOOM, p.LastBytes, c.last)
		}
		if !within(p.Slope, leakExitRate, 0.03) {
			t.Errorf("%s: slope %.0f MiB/s, want 256", c.file, p.Slope/mib)
		}
	}
	// Alone, the --query-compute-apps log ends with pid 878's last row: it
	// cannot tell an exit from the end of logging, and says so.
	p, ok := byPID(trends(t, "leak_exit_query_apps.csv"), "leak_exit_query_apps.csv")[878]
	if !ok || p.Class != Growing || !p.HeldToEnd || !p.EndUnknown {
		t.Errorf("apps alone: %+v", p)
	}
	// With the GPU log beside it, the --query-compute-apps log (which
	// prints nothing once no process runs) is known to end before the GPU's.
	all := trends(t, "leak_exit_query_gpu.csv", "leak_exit_query_apps.csv")
	p = byPID(all, "leak_exit_query_apps.csv")[878]
	if p.Class != Growing || p.HeldToEnd || p.EndUnknown || p.TimeToOOM != nil || p.LastBytes != 8292*mib {
		t.Errorf("apps with GPU log: %+v", p)
	}
}

// Runs that repeat are the series' rhythm: three jobs that each grow and
// free all are churn, not three leaks; one job among idle stretches that
// grows and frees is a leak suspect.
func TestRunsRepeatOrNot(t *testing.T) {
	cycle := func(x float64) float64 {
		if p := x - 20*float64(int(x/20)); p < 15 {
			return 500*mib + 40*mib*p
		}
		return 0
	}
	got := analyzeOne(t, synth{seconds: 119, step: 0.5, used: cycle}, Options{})
	if got.Class == Growing || len(got.Runs) != 6 {
		t.Errorf("six repeated cycles: %s, %d runs", got.Class, len(got.Runs))
	}
	once := func(x float64) float64 {
		if x >= 10 && x < 40 {
			return 500*mib + 40*mib*(x-10)
		}
		return 0
	}
	got = analyzeOne(t, synth{seconds: 60, step: 0.5, used: once}, Options{})
	if got.Class != Growing || got.ReleasedUs != t0+40_000_000 || !within(got.Slope, 40*mib, 0.02) {
		t.Errorf("one run: %s released %d slope %.1f MiB/s", got.Class, got.ReleasedUs-t0, got.Slope/mib)
	}
	// A step up then flat, then exit: one run, a step, not growth.
	step := func(x float64) float64 {
		if x >= 10 && x < 40 {
			return 4 << 30
		}
		return 0
	}
	if got = analyzeOne(t, synth{seconds: 60, step: 0.5, used: step}, Options{}); got.Class == Growing {
		t.Errorf("a step then exit: %s", got.Class)
	}
}

// One sample says nothing about a trend.
func TestOneSample(t *testing.T) {
	got := analyzeOne(t, synth{seconds: 0, step: 1, used: func(float64) float64 { return 3 << 30 }}, Options{})
	if got.Class != Undetermined || got.Samples != 1 || got.NoOOMReason == "" {
		t.Errorf("one sample: %s (%d samples, %q)", got.Class, got.Samples, got.NoOOMReason)
	}
}

// Change points report sampled values, never a level's median that no
// sample had: the old level alternates 100 and 101 MiB (median 100.5).
func TestChangePointsSampled(t *testing.T) {
	used := func(x float64) float64 {
		if x < 30 {
			return float64(100+int(x)%2) * mib
		}
		return 2 << 30
	}
	got := analyzeOne(t, synth{seconds: 60, step: 1, used: used}, Options{})
	if got.Class != Step || len(got.ChangePoints) != 1 {
		t.Fatalf("%s %+v", got.Class, got.ChangePoints)
	}
	c := got.ChangePoints[0]
	if (c.FromBytes != 100*mib && c.FromBytes != 101*mib) || c.ToBytes != 2<<30 {
		t.Errorf("change %d -> %d bytes: not sampled values", c.FromBytes, c.ToBytes)
	}
	if got.TailSlope != 0 {
		t.Errorf("flat after the step, tail slope %.0f", got.TailSlope)
	}
}

// A step followed by a slow rise is not "then flat": 2 GiB at 10 s, then
// +0.1 MiB/s for 110 s (11 MiB; the last 40% of the series rises 4.8 MiB,
// under the 10 MiB (0.5% of the level) that would make it growing).
func TestStepThenStillRising(t *testing.T) {
	used := func(x float64) float64 {
		if x < 10 {
			return 200 * mib
		}
		return 2<<30 + 0.1*mib*(x-10)
	}
	got := analyzeOne(t, synth{seconds: 120, step: 1, used: used}, Options{})
	if got.Class != Step || !within(got.TailSlope, 0.1*mib, 0.2) {
		t.Errorf("step then rising: %s, tail slope %.3f MiB/s; want step, 0.1", got.Class, got.TailSlope/mib)
	}
}
