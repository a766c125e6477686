package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A flat series whose samples swing beyond the flat band (16 MiB, 2% of
// the level) under noise as large: 24 samples between 7 and 478 MiB, as
// the fb of cnnotes_dmon_TD_blank_line_fb_churn.txt (testdata/README.md)
// repeated. The old message gave the last sample as the level ("flat:
// GPU 0: 7.0 MiB for 23 s"), which the samples never held.
func TestF48n1FlatGivesItsRange(t *testing.T) {
	start := time.Date(2024, 1, 4, 13, 54, 35, 0, time.UTC).UnixMicro()
	s := trend.SeriesTrend{Class: trend.Flat, HasGPU: true, Samples: 24,
		StartUs: start, EndUs: start + 23e6, WindowStartUs: start, WindowEndUs: start + 23e6,
		FirstBytes: 239 << 20, LastBytes: 7 << 20, MinBytes: 7 << 20, PeakBytes: 478 << 20, Noise: 103 << 20}
	f := trendFinding(s, logClock{clock: "absolute"})
	for _, want := range []string{"flat: GPU 0: between 7.0 MiB and 478 MiB for 23 s (24 samples), 7.0 MiB at the end", "noise 103 MiB"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %q", want, f.Message)
		}
	}
	// Within the band: one figure.
	s.MinBytes, s.PeakBytes, s.LastBytes = 1000<<20, 1010<<20, 1005<<20
	if f := trendFinding(s, logClock{clock: "absolute"}); !strings.HasPrefix(f.Message, "flat: GPU 0: 1005 MiB for 23 s") {
		t.Errorf("message %q; want one figure", f.Message)
	}
}

// A step finding whose steps go both ways names each: minimax's GPU 0
// (999, 100, 200 MiB; testdata/README.md) read "a release from 999 MiB
// to 200 MiB in 2 steps", hiding the rise of 100 MiB after the fall.
func TestF48n1StepsBothWaysNamed(t *testing.T) {
	start := time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC).UnixMicro()
	s := trend.SeriesTrend{Class: trend.Step, StepAtEnd: true, HasGPU: true, Samples: 3, HeldToEnd: true,
		StartUs: start, EndUs: start + 2e6, WindowStartUs: start, WindowEndUs: start + 2e6,
		FirstBytes: 999 << 20, LastBytes: 200 << 20, MinBytes: 100 << 20, PeakBytes: 999 << 20,
		ChangePoints: []trend.ChangePoint{
			{StartUs: start, EndUs: start + 1e6, FromBytes: 999 << 20, ToBytes: 100 << 20},
			{StartUs: start + 1e6, EndUs: start + 2e6, FromBytes: 100 << 20, ToBytes: 200 << 20},
		}}
	f := trendFinding(s, logClock{clock: "absolute"})
	// Each step is placed where the samples first hold its level: 100
	// MiB at 00:00:02, 200 MiB at 00:00:03 (at 00:00:01 the GPU held 999
	// MiB; r48b).
	if want := "a release from 999 MiB to 200 MiB in 2 steps (down to 100 MiB by 00:00:02 UTC, then up to 200 MiB by 00:00:03 UTC)"; !strings.Contains(f.Message, want) {
		t.Errorf("message %q; want %q", f.Message, want)
	}
}
