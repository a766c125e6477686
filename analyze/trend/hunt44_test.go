package trend

import (
	"fmt"
	"testing"
)

// warmSpiky is 700 samples 10 s apart (1.9 h) with ±150 MiB of uniform
// jitter from seed (σ 87 MiB, as in the session-43 tester's
// warmup80_flat_spikes_growing.csv): a warm-up that climbs from 300 MiB
// to 18500 MiB over its first warm samples, then 18500 MiB rising leak
// MiB a sample, with a spike of h MiB for 3 samples in every 40 after the
// warm-up (none when h is 0).
func warmSpiky(warm int, h, leak float64, seed uint64) synth {
	return jittered(700, 150, seed, func(i int) float64 {
		if i < warm {
			return 300 + 18200*float64(i)/float64(warm)
		}
		v := 18500 + leak*float64(i-warm)
		if k := i - warm; k > 0 && k%40 < 3 {
			v += h
		}
		return v
	})
}

// The session-43 tester's log (testdata/README.md, h44_warmup_flat_spikes.csv):
// used memory climbs from 329 to 18568 MiB over the first 81 samples,
// then holds 18485-18802 MiB to the end (1.7 h) but for 15 spikes of
// about 10 GiB, 3 samples each. The lowest sample between spikes never
// leaves 18485-18560 MiB: the only rise of the floor is the warm-up's,
// before anything was given back. Before session 44 the first cycle's
// floor (329 MiB, the log's first sample) pulled the floors' Theil–Sen
// slope above zero: "growing: a floor that rises 20 MiB/h".
func TestHunt44WarmUpPlateauSpikes(t *testing.T) {
	got := trends(t, "h44_warmup_flat_spikes.csv")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	if s := got[0]; s.Class == Growing {
		t.Errorf("%s (rising floor %v) at %.1f MiB/h, want not growing", s.Class, s.RisingFloor, s.Slope*3600/mib)
	}
}

// A warm-up (20, 80 or 200 samples) then a plateau under spikes of 1, 4
// or 10 GiB is not growing, whatever the seed; the same with a leak of 2
// MiB a sample (12 MiB/min, 1240 MiB after the warm-up: growing with no
// spikes, as the first check asserts) is growing at 12 MiB/min or at the
// rate fitted without the spikes, within 10% (the floor's slope, or the
// samples' with the spikes given back). (A warm-up of 200 samples, 28% of
// the log, is not cut off the samples' fit: its end raises their rate to
// about 14 MiB/min, spikes or not; the floor's fit starts after it.) Before session 44
// the 10 GiB spikes made a plateau "growing" in 3 of these 30 logs (the
// warm-up's floor), and the 1 and 4 GiB spikes hid the leak in 16 of 60
// (their residuals failed the line's fit; a spike where the ramp's levels
// meet made a shift look like a step).
func TestHunt44WarmUpSpikesSeeded(t *testing.T) {
	for _, warm := range []int{20, 80, 200} {
		for seed := uint64(1); seed <= 10; seed++ {
			clean := analyzeOne(t, warmSpiky(warm, 0, 2, seed), Options{})
			if clean.Class != Growing {
				t.Fatalf("warm-up %d, seed %d, no spikes: leak %s, want growing", warm, seed, clean.Class)
			}
			for _, h := range []float64{1024, 4096, 10240} {
				name := fmt.Sprintf("warm-up %d, spikes %g MiB, seed %d", warm, h, seed)
				if got := analyzeOne(t, warmSpiky(warm, h, 0, seed), Options{}); got.Class == Growing {
					t.Errorf("%s: plateau growing at %.1f MiB/h (rising floor %v)", name, got.Slope*3600/mib, got.RisingFloor)
				}
				got := analyzeOne(t, warmSpiky(warm, h, 2, seed), Options{})
				if got.Class != Growing || !within(got.Slope, 0.2*mib, 0.1) && !within(got.Slope, clean.Slope, 0.1) {
					t.Errorf("%s: leak %s at %.1f MiB/min, want growing at %.1f (no spikes)", name, got.Class, got.Slope*60/mib, clean.Slope*60/mib)
				}
			}
		}
	}
}

// stepSpiky is 600 samples 10 s apart (100 min) at 20480 MiB, 4096 MiB
// higher from sample 300 on, with a spike of h MiB for samples 30-32 of
// every 60 (10 spikes) and ±4 MiB of uniform jitter from seed.
func stepSpiky(h float64, seed uint64) synth {
	return jittered(600, 4, seed, func(i int) float64 {
		v := 20480.0
		if i >= 300 {
			v += 4096
		}
		if i%60 >= 30 && i%60 < 33 {
			v += h
		}
		return v
	})
}

// A step of 4 GiB under 10 spikes of 256 or 1024 MiB (3 samples each,
// memory back where it was after each) is one step, at sample 300: each
// spike is two changes, both transient, 20 in all. Before session 44
// every spike's rise and fall counted as steps: "from 20 GiB to 24 GiB in
// 21 steps between 09:04:50 and 10:35:30", the span of the spikes.
func TestHunt44SpikesAreNoSteps(t *testing.T) {
	for _, h := range []float64{256, 1024} {
		for seed := uint64(1); seed <= 10; seed++ {
			got := analyzeOne(t, stepSpiky(h, seed), Options{})
			steps := Steps(got.ChangePoints)
			if got.Class != Step || len(steps) != 1 || len(got.ChangePoints)-len(steps) != 20 {
				t.Errorf("spikes %g MiB, seed %d: %s, %d changes, %d steps; want a step, 21 changes, 1 step",
					h, seed, got.Class, len(got.ChangePoints), len(steps))
				continue
			}
			if c := steps[0]; c.EndUs != t0+300*10e6 || c.FromBytes/mib < 20480-4 || c.ToBytes/mib < 24576-4 {
				t.Errorf("spikes %g MiB, seed %d: step %+v, want 20480 to 24576 MiB at sample 300", h, seed, c)
			}
			if got.StepAtEnd || got.TailSlope != 0 {
				t.Errorf("spikes %g MiB, seed %d: at end %v, tail slope %g; want flat after the step", h, seed, got.StepAtEnd, got.TailSlope)
			}
		}
	}
}
