package trend

import (
	"fmt"
	"math"
	"testing"
)

// warmLeak is 1000 samples 10 s apart (2.8 h) with ±25 MiB of uniform
// jitter from seed: 2000 MiB, then a warm-up of amp MiB over the first
// 100 samples (10% of the log: linear, or saturating as 1-e^(-i/25) when
// exp), then leak MiB a sample from sample 100 on.
func warmLeak(amp, leak float64, exp bool, seed uint64) synth {
	return jittered(1000, 25, seed, func(i int) float64 {
		w := amp * min(float64(i)/100, 1)
		if exp {
			w = amp * (1 - math.Exp(-float64(i)/25))
		}
		return 2000 + w + leak*float64(max(i-100, 0))
	})
}

// testdata/nvml/h45v_warmup_then_slow_leak.csv (synthetic, gen in
// testdata/README.md): 1000 samples 10 s apart, a warm-up that saturates
// from 2000 to 30000 MiB (28000·(1-e^(-i/25)), σ 8 MiB), then a leak of
// 0.1 MiB a sample from sample 100: 0.6 MiB/min, 90 MiB in all. Before,
// "step": no abrupt step for the window to start after, a line through
// the warm-up fits poorly, and the last 40% rises 36 MiB, under the
// 0.5% of the level (150 MiB) a rise of the tail must reach.
//
// The warm-up is within 24 MiB (3σ) of the leak's line once
// 28000·e^(-i/25) < 24, i > 25·ln(28000/24) = 177: the window starts
// there (within 30 samples either way), and the rate is the leak's,
// 0.1 MiB per 10 s, within 10%.
func TestWarmUpThenSlowLeak(t *testing.T) {
	got := trends(t, "h45v_warmup_then_slow_leak.csv")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	s := got[0]
	if s.Class != Growing || !within(s.Slope, 0.1*mib/10, 0.1) {
		t.Fatalf("%s at %.2f MiB/min, want growing at 0.60", s.Class, s.Slope*60/mib)
	}
	at := func(i int64) int64 { return s.StartUs + i*10e6 }
	if s.WarmUpEndUs < at(147) || s.WarmUpEndUs > at(207) || s.WindowStartUs != s.WarmUpEndUs {
		t.Errorf("warm-up ends at sample %d, window from %d, want both 147-207",
			(s.WarmUpEndUs-s.StartUs)/10e6, (s.WindowStartUs-s.StartUs)/10e6)
	}
	if s.WarmUpToBytes < 29900*mib || s.WarmUpToBytes > 30050*mib {
		t.Errorf("warm-up reached %d MiB, want about 30000", s.WarmUpToBytes/mib)
	}
}

// Over seeds, linear and saturating warm-ups of 4 and 28 GiB: a leak of
// 0.1 MiB a sample after them is growing at that rate (within 15%), the
// warm-up said; with no leak the series is not growing. A leak that only
// slows (a square root's shape, no faster start) is no warm-up.
func TestWarmUpSeeded(t *testing.T) {
	for _, amp := range []float64{4000, 28000} {
		for _, exp := range []bool{false, true} {
			for seed := uint64(1); seed <= 8; seed++ {
				name := fmt.Sprintf("warm-up %g MiB (exp %v), seed %d", amp, exp, seed)
				s := analyzeOne(t, warmLeak(amp, 0.1, exp, seed), Options{})
				if s.Class != Growing || !within(s.Slope, 0.1*mib/10, 0.15) || s.WarmUpEndUs == 0 {
					t.Errorf("%s: leak %s at %.2f MiB/min, warm-up end %d, want growing at 0.60 after a warm-up",
						name, s.Class, s.Slope*60/mib, s.WarmUpEndUs)
				}
				if s := analyzeOne(t, warmLeak(amp, 0, exp, seed), Options{}); s.Class == Growing {
					t.Errorf("%s: no leak, growing at %.2f MiB/min", name, s.Slope*60/mib)
				}
			}
		}
	}
	for seed := uint64(1); seed <= 4; seed++ {
		s := analyzeOne(t, jittered(1000, 25, seed, func(i int) float64 { return 2000 + 300*math.Sqrt(float64(i)) }), Options{})
		if s.Class != Growing || s.WarmUpEndUs != 0 {
			t.Errorf("seed %d: a slowing leak %s, warm-up end %d, want growing with no warm-up", seed, s.Class, s.WarmUpEndUs)
		}
	}
}
