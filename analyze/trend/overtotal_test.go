package trend

import (
	"strings"
	"testing"
)

// Used memory above the GPU's total is no reading of a real GPU (a
// damaged row, or a MIG instance's figures against its whole GPU's). The
// s37 tester's log of used 10,000,000,000 MiB and up on a 143771 MiB GPU
// got "runs out of memory in about 0 s" and no warning. Each such series
// now gets a warning naming its input's sample (number, 1-based, and
// time) and no time to OOM; a series of good samples gets neither.
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
	}{{
		// Every sample above the total: used 2 GiB + 10 MiB/s over
		// 0..60 s (61 samples) against a 1 GiB + 616 MiB total.
		name: "all samples",
		feed: func(a *Analyzer) {
			synth{seconds: 60, step: 1, capacity: 1 << 30, used: func(x float64) float64 { return 2<<30 + 10*mib*x }}.add(t, a, "gpu.csv", 1)
		},
		input: "gpu.csv",
		want:  []string{"GPU 0: sample 1 (2026-11-30 08:06:12 UTC) has used memory 2.0 GiB, more than the GPU's total memory in its row (1.6 GiB), and so do 60 more samples"},
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
		want:  []string{"GPU 0: sample 31 (2026-11-30 08:06:42 UTC) has used memory 900 GiB, more than the GPU's total memory in its row (41 GiB):"},
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
		want: []string{"pid 42: sample 101 (2026-11-30 08:07:52 UTC) has used memory 50 GiB, more than its GPU's total memory in gpu.csv (41 GiB):"},
	}, {
		// A log without totals, its GPU's memory given: 9 GiB and up
		// against 8 GiB.
		name: "gpu-memory",
		feed: func(a *Analyzer) {
			synth{seconds: 60, step: 1, used: func(x float64) float64 { return 9<<30 + 10*mib*x }}.add(t, a, "dmon.txt", 1)
		},
		opt:   Options{GPUMemoryBytes: 8 << 30},
		input: "dmon.txt",
		want:  []string{"GPU 0: sample 1 ", "more than the GPU memory given (--gpu-memory) (8.0 GiB), and so do 60 more samples"},
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
		for _, s := range res.Series {
			if s.Input != c.input || s.PID != c.pid {
				continue
			}
			if s.TimeToOOM != nil || !strings.Contains(s.NoOOMReason, "above the GPU's total") {
				t.Errorf("%s: time to OOM %+v, reason %q: want none, for the samples above the total", c.name, s.TimeToOOM, s.NoOOMReason)
			}
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
