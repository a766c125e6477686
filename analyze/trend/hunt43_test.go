package trend

import (
	"fmt"
	"testing"
)

// The session-43 tester's logs (testdata/README.md): used memory rises 2
// MiB a minute for 2 h (8 MiB every 5 min in the stair), every step up,
// with a spike of 20 to 100 MiB (30 s, or one sample in the stair) on top
// every 5 min (every 100 s in the stair). The floor rises 240 MiB (184 in
// the stair), far more than 16 MiB and 3σ, and never falls: growing at
// 240 MiB / 7190 s = 2.0 MiB/min (184 MiB / 7190 s = 1.5 MiB/min; the
// stair's Theil–Sen slope is that of its 8 MiB steps every 300 s, 1.6
// MiB/min). Before session 43 the spikes' falls were taken for memory
// given back and every one but the 1 GiB spikes' (a rising-floor
// sawtooth) and the spike-free log was "flat: no growth".
func TestHunt43SpikesOnSteadyLeak(t *testing.T) {
	for _, c := range []struct {
		file string
		rate float64 // MiB/min
	}{
		{"s43_n02_slow_leak.csv", 2},
		{"s43_n02b_spike100.csv", 2},
		{"s43_n11_leak_with_20MiB_transients.csv", 2},
		{"s43_n08_stair_leak_with_transients.csv", 1.6},
		{"s43_n02a_nospike.csv", 2},
		{"s43_n02c_spike1g.csv", 2},
	} {
		got := trends(t, c.file)
		if len(got) != 1 {
			t.Fatalf("%s: %d series", c.file, len(got))
		}
		s := got[0]
		if s.Class != Growing || s.SlopeLow <= 0 || !within(s.Slope*60/mib, c.rate, 0.05) {
			t.Errorf("%s: %s at %.2f MiB/min (95%% from %.2f); want growing at %.1f",
				c.file, s.Class, s.Slope*60/mib, s.SlopeLow*60/mib, c.rate)
		}
	}
}

// spiky is 720 samples 10 s apart (2 h) of level(i) MiB plus a spike of
// h MiB for 3 samples in every 30 (5 min), starting at sample phase, with
// ±2 MiB of uniform jitter from seed.
func spiky(h float64, phase int, seed uint64, level func(i int) float64) synth {
	return jittered(720, 2, seed, func(i int) float64 {
		v := level(i)
		if (i+30-phase)%30 < 3 {
			v += h
		}
		return v
	})
}

// Spikes on a steady leak of 2 MiB/min are growing whatever their height
// below the sawtooth's (a drop of a quarter of the range), their phase
// and the jitter; the same spikes on a level that does not move, or on a
// ramp of 400 MiB that stops at 60% of the log, are not.
func TestHunt43SpikesSeeded(t *testing.T) {
	for _, h := range []float64{20, 50, 100} {
		for seed := uint64(1); seed <= 10; seed++ {
			phase := int(seed*7) % 30
			name := fmt.Sprintf("%gMiB/seed%d", h, seed)
			got := analyzeOne(t, spiky(h, phase, seed, func(i int) float64 { return 20480 + float64(i)/3 }), Options{})
			if got.Class != Growing || !within(got.Slope*60/mib, 2, 0.1) {
				t.Errorf("leak %s: %s at %.2f MiB/min, want growing at 2", name, got.Class, got.Slope*60/mib)
			}
			got = analyzeOne(t, spiky(h, phase, seed, func(int) float64 { return 20480 }), Options{})
			if got.Class == Growing {
				t.Errorf("flat %s: growing at %.2f MiB/min", name, got.Slope*60/mib)
			}
			got = analyzeOne(t, spiky(h, phase, seed, func(i int) float64 { return 20480 + 400*float64(min(i, 432))/432 }), Options{})
			if got.Class == Growing {
				t.Errorf("stopped %s: growing at %.2f MiB/min", name, got.Slope*60/mib)
			}
		}
	}
}
