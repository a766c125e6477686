package trend

import "testing"

// Found by session 45's regression tester (x45b), synthetic: a flat 30000
// MiB under ±300 MiB of uniform noise with one step of +1500 MiB at
// sample 850 of 1000 (10 s apart) was "growing" in 10 of 15 seeds, its
// rate measured from the step on and its 95% interval including zero
// ("grows -1.5 MiB/min (95% -6.3 to 3.4)"): the tail test saw the step
// rise, and the window after the onset, where the rate is given, does not
// rise at all. A growing series' window must show a rise whose interval
// excludes zero; else it is the step it is. (The odd seed whose noise
// after the step does rise at 95% may stay growing: 95% intervals over
// 150 samples of noise exclude zero about one time in twenty, so at most
// 3 of 20 are allowed, and none with an interval that includes zero.)
func TestX45bLateStepInNoiseIsNoGrowth(t *testing.T) {
	growing := 0
	for seed := uint64(1); seed <= 20; seed++ {
		s := analyzeOne(t, jittered(1000, 300, seed, func(i int) float64 {
			if i >= 850 {
				return 31500
			}
			return 30000
		}), Options{})
		if s.Class == Growing {
			growing++
			if s.SlopeLow <= 0 {
				t.Errorf("seed %d: growing at %.1f MiB/min with a 95%% interval from %.1f: includes zero", seed, s.Slope*60/mib, s.SlopeLow*60/mib)
			}
		}
	}
	if growing > 3 {
		t.Errorf("%d of 20 late steps in noise are growing, want at most 3", growing)
	}
}
