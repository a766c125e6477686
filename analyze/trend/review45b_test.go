package trend

import (
	"fmt"
	"testing"
)

// A leak's ramp whose last 1, 2 or 3 samples jump far above it (the
// allocation before an out-of-memory crash, a checkpoint's buffers):
// synthetic, n samples 10 s apart of 20000 MiB rising 10 MiB a sample
// (1 MiB/s, ±10 MiB of jitter), then k samples at top MiB: 80500 (the
// GPU full) or 20 GiB above the ramp's end. Nothing after the jump shows
// memory came back from it, so it is no transient: a step, one (the
// ramp's rise, 3 or 6 GiB, is under 40% of the rise with the jump: no
// growth in many steps, manySteps), up to the last samples where they
// are 1 or 2 (StepAtEnd: too few after it to tell what memory does next;
// 3, stepMinAfter, show the level, but for a binned series, 600 samples,
// they may fill fewer points). Session 44's
// running median (despiked) ran to the end of the series with a window
// cut short there, so that a jump in the last 3 points was taken out as a
// spike: the jump no longer read as sharp, the fit's window shrank to the
// last 5 samples, and the series was "growing 1.6 GiB/s" over 20 s (or
// growing at the ramp's 1 MiB/s with a time to OOM measured from the
// ramp's line, 10 GiB under the last samples).
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
					if got.Class != Step || k < stepMinAfter && !got.StepAtEnd {
						t.Errorf("%s: %s (step at end %v, window %d samples), want a step (at the end: %v)", name, got.Class, got.StepAtEnd, got.WindowSamples, k < stepMinAfter)
					}
				}
			}
		}
	}
}
