package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A step with a spike before it (two transient changes) is told as one
// step, at its own time, and the JSON marks the spike's changes
// transient. Before session 44 the message said "in 3 steps between" the
// spike's rise and the step.
func TestHunt44TransientChangesNoSteps(t *testing.T) {
	const s0 int64 = 1_796_032_800_000_000
	s := trend.SeriesTrend{
		Input: "gpu.csv", Source: "nvidia-smi-query-gpu", GPU: 0, HasGPU: true, GPUName: "NVIDIA A100",
		Samples: 600, StartUs: s0, EndUs: s0 + 5990e6, FirstBytes: 20480 * mib, LastBytes: 24576 * mib, PeakBytes: 25600 * mib,
		Class: trend.Step,
		ChangePoints: []trend.ChangePoint{
			{StartUs: s0 + 290e6, EndUs: s0 + 300e6, FromBytes: 20480 * mib, ToBytes: 21504 * mib, Transient: true},
			{StartUs: s0 + 320e6, EndUs: s0 + 330e6, FromBytes: 21504 * mib, ToBytes: 20480 * mib, Transient: true},
			{StartUs: s0 + 2990e6, EndUs: s0 + 3000e6, FromBytes: 20480 * mib, ToBytes: 24576 * mib},
		},
	}
	_, fs := FromTrends([]TrendInput{{Path: "gpu.csv", Format: "nvidia-smi-query-gpu", Samples: 600, StartUs: s0, EndUs: s0 + 5990e6, Clock: "absolute"}},
		&trend.Result{Series: []trend.SeriesTrend{s}})
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	// 2990 s after 10:00:00 UTC (s0) is 10:49:50.
	if m := fs[0].Message; !strings.Contains(m, "from 20 GiB to 24 GiB in 10.0 s at 10:49:50") || strings.Contains(m, "steps") {
		t.Errorf("message %.200q, want one step at 10:49:50", m)
	}
	b, err := json.Marshal(fs[0].ChangePoints)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"transient":true`); n != 2 {
		t.Errorf("%d transient changes in %.200s, want 2", n, b)
	}
}

// Runs that ended full (trend.Run.OOMExit) but too few for a crash loop
// (SeriesTrend.OOMExits 0): the JSON marks them, and the message now says
// so; a crash loop's message tells its runs itself and gets no note. A sawtooth of 4 runs on a 40 GiB GPU, 2 to 39 GiB and back to 0
// (OOM exits), 2 to 24 GiB: "2 of the 4 runs that ended"; a single run
// that ended full: "one run ... one is no crash loop". Before session
// 44 neither message mentioned them while runs[].oom_exit was true.
func TestHunt44OOMExitRunsNamed(t *testing.T) {
	const s0 int64 = 1_796_032_800_000_000
	run := func(i int, peak int64, full bool) trend.Run {
		start := s0 + int64(i)*1000e6
		return trend.Run{StartUs: start, EndUs: start + 900e6, Samples: 90, PeakBytes: peak, Class: trend.Growing,
			Slope: 24 * mib, ReleasedUs: start + 910e6, OOMExit: full}
	}
	saw := trend.SeriesTrend{
		Input: "gpu.csv", Source: "nvidia-smi-query-gpu", GPU: 0, HasGPU: true, GPUName: "NVIDIA A100-PCIE-40GB",
		Samples: 400, StartUs: s0, EndUs: s0 + 4000e6, PeakBytes: 40000 * mib, CapacityBytes: 40960 * mib,
		Class: trend.Sawtooth, BaselineBytes: 0,
		Runs: []trend.Run{run(0, 40000*mib, true), run(1, 24576*mib, false), run(2, 40000*mib, true), run(3, 24576*mib, false)},
	}
	one := saw
	one.Runs = []trend.Run{run(0, 40000*mib, true)}
	crash := saw
	crash.Class, crash.OOMExits = trend.Growing, 3
	crash.Runs = []trend.Run{run(0, 40000*mib, true), run(1, 40000*mib, true), run(2, 40000*mib, true)}
	_, fs := FromTrends([]TrendInput{{Path: "gpu.csv", Format: "nvidia-smi-query-gpu", Samples: 400, StartUs: s0, EndUs: s0 + 4000e6, Clock: "absolute"}},
		&trend.Result{Series: []trend.SeriesTrend{saw, one, crash}})
	if len(fs) != 3 {
		t.Fatalf("%d findings", len(fs))
	}
	for i, want := range []string{"2 of the 4 runs that ended grew until the GPU was full", "one run grew until the GPU was full", ""} {
		m := fs[i].Message
		if want != "" && !strings.Contains(m, want) || want == "" && strings.Contains(m, "crash loop (") {
			t.Errorf("finding %d: message %.200q, want %q", i, m[max(0, len(m)-200):], want)
		}
	}
}
