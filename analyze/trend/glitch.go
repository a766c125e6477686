package trend

import "math"

// Constants of the one-sample glitches set aside before a series is
// fitted (setAsideGlitches). A glitch is a sample at least glitchNoise
// times the series' noise (σ, noise) and trendFlatAbs from both of its
// neighbours, on the same side of both, while the neighbours differ from
// each other by at most 1/glitchGap of that excursion: the series is
// where it was before and after, and one reading is not. Where more than
// 1 sample in glitchMaxShare is such a reading, they are the series'
// own pattern (or two devices' samples merged), and none is set aside.
const (
	glitchNoise    = 8
	glitchGap      = 4
	glitchMaxShare = 10
	// glitchTimesKept caps SeriesTrend.SetAsideUs.
	glitchTimesKept = 8
)

// setAsideGlitches finds the isolated one-sample excursions of y (see
// glitchNoise): a reading of 0 MiB between two of 30 GiB, an
// empty_cache() caught by one sample of a leak, a spike of one sample
// (an eval batch, a staging buffer) that was gone by the next. Such a
// sample can neither show growth nor hide it, nor make a step or a
// release: each is replaced in y by the mean of its neighbours, and
// their indices are returned in order (nil when none). The first and last
// samples are never set aside: a last sample far below the one before is
// a release or an exit as much as a glitch, and one neighbour cannot
// tell. A sample next to another excursion is not isolated and stays:
// two low readings in a row, or the drop of a sawtooth that lasts
// several samples, are memory that was given back.
func setAsideGlitches(y []float64) []int {
	set, _ := setAsideGlitchesBut(y, nil)
	return set
}

// setAsideGlitchesBut is setAsideGlitches keeping the samples full says
// are the GPU full (nil: none): a reading within a tenth of the capacity
// (oomPeakShare, as a run that ended full, Run.OOMExit) is what a process
// leaves in the samples when it fills the GPU and dies of out-of-memory
// before the next one, as when a job's last allocation fails, and the
// samples either side of it, the GPU before and after that process,
// agree. Set aside, the log would read "flat: no growth" around the one
// sample that says why the job crashed. The indices of those kept are
// returned second, in order (nil when none), for the finding to name
// them: one reading cannot tell such a crash from a misreading at the
// capacity. Where more than 1 sample in glitchMaxShare is kept so, they
// are the series' own pattern, which its runs describe, and none is
// returned.
func setAsideGlitchesBut(y []float64, full func(i int) bool) (set, kept []int) {
	n := len(y)
	if n < 5 {
		return nil, nil
	}
	sigma := math.Max(noise(y), trendNoiseFloor)
	least := math.Max(glitchNoise*sigma, trendFlatAbs)
	out := func(i int) bool {
		if i <= 0 || i >= n-1 {
			return false
		}
		dl, dr := y[i]-y[i-1], y[i]-y[i+1]
		if (dl > 0) != (dr > 0) {
			return false
		}
		e := math.Min(math.Abs(dl), math.Abs(dr))
		return e >= least && math.Abs(y[i+1]-y[i-1]) <= e/glitchGap
	}
	for i := 1; i < n-1; i++ {
		if !out(i) || out(i-1) || out(i+1) {
			continue
		}
		if full != nil && full(i) {
			kept = append(kept, i)
		} else {
			set = append(set, i)
		}
	}
	if len(kept)*glitchMaxShare > n {
		kept = nil
	}
	if len(set)*glitchMaxShare > n {
		return nil, kept
	}
	for _, i := range set {
		// Neighbours of a glitch are not glitches (isolated), so each
		// mean is of two samples as read.
		y[i] = (y[i-1] + y[i+1]) / 2
	}
	return set, kept
}

// Sample is one sample of a series: its time (µs since the Unix epoch)
// and its used memory (bytes).
type Sample struct {
	Us    int64
	Bytes int64
}
