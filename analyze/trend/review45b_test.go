package trend

import (
	"fmt"
	"math"
	"testing"
)

// A leak's ramp whose last 1, 2 or 3 samples jump far above it (the
// allocation before an out-of-memory crash, a checkpoint's buffers):
// synthetic, n samples 10 s apart of 20000 MiB rising 10 MiB a sample
// (1 MiB/s, ±10 MiB of jitter), then k samples at top MiB: 80500 (the
// GPU full) or 20 GiB above the ramp's end. Nothing after the jump shows
// memory came back from it, so it is no transient. Session 44's running
// median (despiked) ran to the end of the series with a window cut short
// there, so that a jump in the last 3 points was taken out as a spike:
// the fit's window shrank to the last 5 samples, and the series was
// "growing 1.6 GiB/s" over 20 s (or growing at the ramp's 1 MiB/s with a
// time to OOM measured from the ramp's line, 10 GiB under the last
// samples). Session 45 made it a step (up to the last samples), which
// lost the ramp: 50 or 100 min of steady growth before the jump.
//
// Session 46 (h46b): growing, fitted to the ramp before the jump (its
// rate 1 MiB/s, within 5%; the window ends before the jump), with the
// jump named (EndJump: to the top, within the jitter, with k samples
// from it to the end), and a time to OOM, where given, measured from the
// level after the jump: its headroom is the capacity less top (± the
// jitter and a few samples' growth), not less the ramp's line.
func TestReview45bJumpAtEndIsNoSpike(t *testing.T) {
	for _, n := range []int{300, 600} {
		for _, k := range []int{1, 2, 3} {
			for _, top := range []float64{80500, 20000 + 10*float64(n) + 20480} {
				for seed := uint64(1); seed <= 3; seed++ {
					name := fmt.Sprintf("%d samples, last %d at %g MiB, seed %d", n, k, top, seed)
					s := jittered(n+k, 10, seed, func(i int) float64 {
						if i >= n {
							return top
						}
						return 20000 + 10*float64(i)
					})
					s.capacity = 81920 * mib
					got := analyzeOne(t, s, Options{})
					j := got.EndJump
					switch {
					case got.Class != Growing || j == nil:
						t.Errorf("%s: %s (end jump %v), want growing before a jump at the end", name, got.Class, j)
					case !within(got.Slope, mib, 0.05):
						t.Errorf("%s: slope %.3f MiB/s, want the ramp's 1 MiB/s", name, got.Slope/mib)
					case got.WindowEndUs >= j.EndUs || got.EndJumpSamples != k:
						t.Errorf("%s: window ends %d, jump %d to %d with %d samples after, want the window before the jump and %d after", name,
							got.WindowEndUs, j.StartUs, j.EndUs, got.EndJumpSamples, k)
					case math.Abs(float64(j.ToBytes)/mib-top) > 10:
						t.Errorf("%s: jump to %d MiB, want %g", name, j.ToBytes/mib, top)
					case got.TimeToOOM != nil && math.Abs(float64(got.TimeToOOM.HeadroomBytes)/mib-(81920-top)) > 60:
						t.Errorf("%s: headroom %d MiB, want the capacity less the level after the jump, %g", name, got.TimeToOOM.HeadroomBytes/mib, 81920-top)
					}
				}
			}
		}
	}
}

// One process growing 2 MiB/s for 600 s (±5 MiB of noise) on an 8 GiB
// GPU whose log holds it and 1 GiB more: the GPU grows at the process's
// rate, plus rest MiB/s (memory no logged process is seen to hold). With
// rest 0 its slope is the process's give or take the noise, above it in
// about half the logs: the process's time to OOM is at its own rate
// (GPUSlope 0), as the GPU's differs by noise alone. With rest 1 MiB/s
// the GPU grows 3 MiB/s, half again the process's, beyond both slopes'
// intervals: the time to OOM is at 3 MiB/s, with the process the only
// grower logged (Growers 1, not 0 as the field's doc said). Before this
// change any GPU slope above the process's, by a hair of noise, was
// taken, and the report said "this process and others grow on it" of a
// process alone.
func TestReview45bProcessOwnRateUnlessGPUOutgrowsIt(t *testing.T) {
	for _, rest := range []float64{0, 1} {
		for seed := uint64(1); seed <= 6; seed++ {
			a := NewAnalyzer(Options{})
			synth{seconds: 600, step: 1, noise: 5 * mib, capacity: 8 << 30,
				used: func(x float64) float64 { return 4<<30 + (2+rest)*mib*x }}.add(t, a, "gpu.csv", seed)
			synth{seconds: 600, step: 1, noise: 5 * mib, pid: 41,
				used: func(x float64) float64 { return 3<<30 + 2*mib*x }}.add(t, a, "apps.csv", seed+100)
			procs := 0
			for _, s := range a.Finalize().Series {
				if !s.HasPID {
					continue
				}
				procs++
				o := s.TimeToOOM
				switch {
				case s.Class != Growing || o == nil:
					t.Errorf("rest %g, seed %d: %s, no time to OOM (%s)", rest, seed, s.Class, s.NoOOMReason)
				case rest == 0 && o.GPUSlope != 0:
					t.Errorf("rest 0, seed %d: time to OOM at the GPU's %.3f MiB/s, want the process's own %.3f", seed, o.GPUSlope/mib, s.Slope/mib)
				case rest == 1 && (!within(o.GPUSlope, 3*mib, 0.02) || !o.GPULogged || o.Growers != 1):
					t.Errorf("rest 1, seed %d: %+v, want the GPU's logged 3 MiB/s, 1 grower", seed, *o)
				}
			}
			if procs != 1 {
				t.Errorf("rest %g, seed %d: %d process series, want 1", rest, seed, procs)
			}
		}
	}
}

// A GPU at 10 GiB (±10 MiB) for 300 samples, one sample at 80500 MiB
// (98% of its 80 GiB), then back at 10 GiB for the last one or for 150
// more (synthetic): a process that filled the GPU and died of
// out-of-memory before the next sample, the GPU before and after it
// agreeing, or a misreading. That reading is within a tenth of the
// capacity (oomPeakShare), the mark a crash leaves: it is not set aside as
// a glitch but kept and named (FullSamples, FullSampleAt) and in the
// series' peak. h44g's glitch rule set it aside unnamed, and the log read
// "flat: 10 GiB for 25 min: no growth" with nothing of it. A sample as far
// out below the capacity (40 GiB) is still set aside.
//
// Session 46 (h46b): the full sample no longer classes the series. Kept
// in the fit, it made a 302-sample log a "sawtooth ... in 1 run ... not a
// leak" and a 1500-sample one (binned: the sample lost in its bin's
// median) "flat": the class hung on the log's length. One reading is no
// churn and no step, and cannot tell a crash from a misreading: the class
// is the samples' around it (flat), and the finding names the sample.
func TestReview45bFullSampleIsNoGlitch(t *testing.T) {
	for _, after := range []int{1, 150} {
		for _, top := range []float64{80500, 40960} {
			s := jittered(300+1+after, 10, 1, func(i int) float64 {
				if i == 300 {
					return top
				}
				return 10240
			})
			s.capacity = 81920 * mib
			got := analyzeOne(t, s, Options{})
			full := top >= oomPeakShare*81920
			if full && (got.SetAside != 0 || got.Class != Flat || got.FullSamples != 1 ||
				got.FullSampleAt[0].Us != got.StartUs+300*10e6 || math.Abs(float64(got.PeakBytes)/mib-top) > 10) {
				t.Errorf("%d after, %g MiB: %s, %d set aside, %d full (%v), peak %d MiB; want flat, the full sample (300) named and the peak",
					after, top, got.Class, got.SetAside, got.FullSamples, got.FullSampleAt, got.PeakBytes/mib)
			}
			if !full && got.SetAside != 1 {
				t.Errorf("%d after, %g MiB: %d set aside, want 1", after, top, got.SetAside)
			}
		}
	}
}
