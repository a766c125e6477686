package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A process whose time to OOM was taken at its GPU's logged rate (3
// MiB/s) with no other logged process classed growing (Growers 1): the
// GPU outgrows it, by memory no logged process is seen to gain. The
// message says so, with the process's own 2.0 MiB/s beside the GPU's
// 3.0 MiB/s; before, it read "this process and others grow on it", a
// claim the processes' log did not make.
func TestReview45bGPURateWordsOneGrower(t *testing.T) {
	const mib = 1 << 20
	s := trend.SeriesTrend{Class: trend.Growing, HasGPU: true, HasPID: true, PID: 41, HeldToEnd: true,
		Slope: 2 * mib, SlopeLow: 2 * mib, SlopeHigh: 2 * mib, R2: 1,
		StartUs: 1, EndUs: 600e6, WindowStartUs: 1, WindowEndUs: 600e6, LastBytes: 4 << 30,
		TimeToOOM: &trend.OOMEstimate{Seconds: 750, LowSeconds: 740, HighSeconds: 760, GPUSlope: 3 * mib, GPULogged: true, Growers: 1}}
	msg := trendMessage(s, logClock{clock: "absolute"})
	if strings.Contains(msg, "others grow") || !strings.Contains(msg, "faster than this process's own 2.0 MiB/s") {
		t.Errorf("one grower, the GPU's rate: %.300q", msg)
	}
	s.TimeToOOM.Growers = 2
	if msg = trendMessage(s, logClock{clock: "absolute"}); !strings.Contains(msg, "2 logged processes grow on it") {
		t.Errorf("two growers: %.300q", msg)
	}
}

// A finding whose fit set samples aside as one-sample glitches says so
// in its JSON as in its message (the h44g_leak_periodic_dips.csv case:
// 12 of 1440 samples, the first at 10:05:00): set_aside_samples and
// set_aside_us. Before, only the message said it, and a CI job reading
// the JSON saw a verdict on every sample read.
func TestReview45bSetAsideInJSON(t *testing.T) {
	s := trend.SeriesTrend{Class: trend.Growing, HasGPU: true, Samples: 1440, SetAside: 12,
		SetAsideUs: []int64{1_796_119_500_000_000}, StartUs: 1_796_119_200_000_000, EndUs: 1_796_126_395_000_000}
	b, err := json.Marshal(trendFinding(s, logClock{clock: "absolute"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"set_aside_samples":12,"set_aside_us":[1796119500000000]`) {
		t.Errorf("JSON %.300q: want set_aside_samples 12 and its first time", b)
	}
}
