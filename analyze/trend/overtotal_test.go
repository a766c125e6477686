package trend

import (
	"strings"
	"testing"
)

// Used memory above the GPU's total is no reading of a real GPU (a
// damaged row, or a MIG instance's figures against its whole GPU's). The
// s37 tester's log of used 10,000,000,000 MiB and up on a 143771 MiB GPU
// got "runs out of memory in about 0 s" and no warning; then (s37) the
// series kept such samples, with a warning and no time to OOM, so that
// 12 damaged rows still made a "growing" trend of 954 TiB/s. A GPU's
// sample above its total (its row's, or --gpu-memory) is now left out
// of the series and counted (Result.AboveTotal, SeriesTrend.AboveTotal),
// with a warning naming its input's sample (number, 1-based, and time);
// a series left with no sample is no series; the rest of a series is
// judged as if the bad samples were not there. A process above its
// GPU's total (known only from another log) keeps its samples, with the
// warning and no time to OOM. A series of good samples gets neither.
func TestUsedAboveTotal(t *testing.T) {
	const total = 1<<30 + 616*mib // synth's total: capacity + 616 MiB reserved
	cases := []struct {
		name string
		feed func(a *Analyzer)
		opt  Options
		// the series (input, pid) and what its warning must say
		input string
		pid   int64
		want  []string
		// left: the samples left out; samples: those of the series left
		// (0: no series); oom: whether the series has a time to OOM.
		left, samples int
		oom           bool
	}{{
		// Every sample above the total: used 2 GiB + 10 MiB/s over
		// 0..60 s (61 samples) against a 1 GiB + 616 MiB total.
		name: "all samples",
		feed: func(a *Analyzer) {
			synth{seconds: 60, step: 1, capacity: 1 << 30, used: func(x float64) float64 { return 2<<30 + 10*mib*x }}.add(t, a, "gpu.csv", 1)
		},
		input: "gpu.csv",
		want: []string{"GPU 0: sample 1 (2026-11-30 08:06:12 UTC) has used memory 2.0 GiB, more than the GPU's total memory in its row (1.6 GiB), and so do 60 more samples",
			"left out: no sample of the series is left, and it is not judged"},
		left: 61,
	}, {
		// One bad sample, at 30 s (sample 31), in a leak of 20 MiB/s on
		// a 40 GiB GPU that would otherwise give a time to OOM.
		name: "one sample",
		feed: func(a *Analyzer) {
			synth{seconds: 120, step: 1, capacity: 40 << 30, used: func(x float64) float64 {
				if x == 30 {
					return 900 << 30
				}
				return 4<<30 + 20*mib*x
			}}.add(t, a, "gpu.csv", 1)
		},
		input: "gpu.csv",
		// 121 samples (0..120 s) less the bad one: 120, still growing
		// 20 MiB/s, so a time to OOM is given.
		want: []string{"GPU 0: sample 31 (2026-11-30 08:06:42 UTC) has used memory 900 GiB, more than the GPU's total memory in its row (41 GiB):",
			"left out of the series, which is judged on its other 120"},
		left: 1, samples: 120, oom: true,
	}, {
		// A process whose rows have no total, above its GPU's total in
		// the GPU log of the same time: its peak, 50 GiB at 100 s, is
		// its sample 101.
		name: "process",
		feed: func(a *Analyzer) {
			synth{seconds: 300, step: 1, capacity: 40 << 30, used: func(x float64) float64 { return 4<<30 + 20*mib*x }}.add(t, a, "gpu.csv", 1)
			synth{seconds: 300, step: 1, pid: 42, used: func(x float64) float64 {
				if x == 100 {
					return 50 << 30
				}
				return 3<<30 + 20*mib*x
			}}.add(t, a, "apps.csv", 2)
		},
		input: "apps.csv", pid: 42,
		want: []string{"pid 42: sample 101 (2026-11-30 08:07:52 UTC) has used memory 50 GiB, more than its GPU's total memory in gpu.csv (41 GiB):",
			"the series' class and peak count it; no time to OOM is given"},
		samples: 301,
	}, {
		// A log without totals, its GPU's memory given: 9 GiB and up
		// against 8 GiB.
		name: "gpu-memory",
		feed: func(a *Analyzer) {
			synth{seconds: 60, step: 1, used: func(x float64) float64 { return 9<<30 + 10*mib*x }}.add(t, a, "dmon.txt", 1)
		},
		opt:   Options{GPUMemoryBytes: 8 << 30},
		input: "dmon.txt",
		want:  []string{"GPU 0: sample 1 ", "more than the GPU memory given (--gpu-memory) (8.0 GiB), and so do 60 more samples", "left out: no sample"},
		left:  61,
	}}
	for _, c := range cases {
		a := NewAnalyzer(c.opt)
		c.feed(a)
		res := a.Finalize()
		ws := res.InputWarnings[c.input]
		if len(ws) != 1 {
			t.Errorf("%s: warnings %q: want one for %s", c.name, res.InputWarnings, c.input)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(ws[0], w) {
				t.Errorf("%s: warning %q, want %q in it", c.name, ws[0], w)
			}
		}
		if got := res.AboveTotal[c.input]; got != c.left {
			t.Errorf("%s: %d samples left out, want %d", c.name, got, c.left)
		}
		var found *SeriesTrend
		for i, s := range res.Series {
			if s.Input == c.input && s.PID == c.pid {
				found = &res.Series[i]
			}
		}
		switch {
		case c.samples == 0 && found != nil:
			t.Errorf("%s: a series of %d samples, want none (every sample left out)", c.name, found.Samples)
		case c.samples == 0:
		case found == nil:
			t.Errorf("%s: no series, want one of %d samples", c.name, c.samples)
		case found.Samples != c.samples || found.AboveTotal != c.left:
			t.Errorf("%s: %d samples, %d left out; want %d and %d", c.name, found.Samples, found.AboveTotal, c.samples, c.left)
		case c.oom && found.TimeToOOM == nil:
			t.Errorf("%s: no time to OOM (%q), want one from the samples left", c.name, found.NoOOMReason)
		case !c.oom && (found.TimeToOOM != nil || !strings.Contains(found.NoOOMReason, "above the GPU's total")):
			t.Errorf("%s: time to OOM %+v, reason %q: want none, for the samples above the total", c.name, found.TimeToOOM, found.NoOOMReason)
		case c.left > 0 && found.PeakBytes > 41<<30:
			t.Errorf("%s: peak %d bytes, more than the GPU holds", c.name, found.PeakBytes)
		}
	}
	// Good samples: no warning, and the time to OOM stands
	// (TestProcessTimeToOOM checks its value).
	a := NewAnalyzer(Options{})
	synth{seconds: 300, step: 1, capacity: 40 << 30, used: func(x float64) float64 { return 4<<30 + 20*mib*x }}.add(t, a, "gpu.csv", 1)
	res := a.Finalize()
	if len(res.InputWarnings) != 0 || res.Series[0].TimeToOOM == nil {
		t.Errorf("good samples: warnings %q, time to OOM %+v (%s)", res.InputWarnings, res.Series[0].TimeToOOM, res.Series[0].NoOOMReason)
	}
}
