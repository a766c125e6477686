package trend

import "math"

// Run is one stretch of a series between returns to its baseline: the
// memory of a process from its start until it exits (the GPU's used
// memory falls back to what it was before), or of a job that frees what
// it built up. Sizes are bytes, times µs since the Unix epoch, rates bytes
// per second.
type Run struct {
	// StartUs and EndUs are the run's first and last samples above the
	// baseline (Samples of them).
	StartUs, EndUs                   int64
	Samples                          int
	FirstBytes, PeakBytes, LastBytes int64
	// Class is the run's own trend; the fit fields are as in SeriesTrend.
	Class                      Class
	WindowStartUs, WindowEndUs int64
	Slope, SlopeLow, SlopeHigh float64
	OLSSlope, R2               float64
	// ReleasedUs is the first sample back at the baseline after the run;
	// 0 when the run lasts to the end of the series.
	ReleasedUs int64
	// OOMExit: the run grew (Class growing) until its peak came within
	// 10% of the GPU's capacity (CapacityBytes of its series, at the
	// peak), and then memory fell to the baseline, itself near nothing (at
	// most 5% of the capacity): the GPU full, then its process gone, as
	// when a process dies of out-of-memory. The samples cannot tell that
	// from a process that freed all it held at that point. It is the run's
	// own shape, set whether or not the series counts it: SeriesTrend.
	// OOMExits counts such runs only where they make a crash loop (two or
	// more, two thirds of the runs that ended), and is 0 otherwise, with
	// runs here still marked (the report's message then names them).
	OOMExit bool
}

// Constants of the split into runs. A run must rise this far above the
// baseline; "at the baseline" is within runBand of it.
const (
	runMinRise   = 64 * mib
	runMinShare  = 0.2 // of the series' range
	runBandAbs   = trendFlatAbs
	runBandShare = 0.05 // of the series' range
	runMinPoints = 4    // fewer samples in a run: not classified on its own
)

// Constants of a run that ended full (Run.OOMExit): its peak is at least
// oomPeakShare of the GPU's capacity, and the baseline it fell to at most
// oomFloorShare of it. An OOM comes before the GPU is full to the byte:
// the allocation that fails is refused whole (PyTorch's "Tried to
// allocate 2.00 GiB ... of which 1.2 GiB is free"), and samples seconds
// apart miss the last of the rise; a GPU with no process holds its
// driver's and a display's memory, a few hundred MiB.
// A run of fewer than oomExitMinPoints samples is not one: a load that
// fills the GPU in a few samples and creeps for two more (a model too
// large for it) shows no growth of its own.
const (
	oomPeakShare     = 0.9
	oomFloorShare    = 0.05
	oomExitMinPoints = 2 * runMinPoints
)

// runFallNoise is how many times the samples' noise (noise: σ from
// sample-to-sample changes) a run's end must fall to be a release.
const runFallNoise = 4

// releaseFall is how far a run [a, j) falls at its end: the median of its
// last samples (up to 3) less the median of the (up to 3) samples from j.
func releaseFall(y []float64, a, j int) float64 {
	return medianOf(y[max(a, j-3):j]) - medianOf(y[j:min(len(y), j+3)])
}

// runSpan is a run's samples [a, b) and whether the series came back to
// its baseline after it.
type runSpan struct {
	a, b     int
	released bool
}

// splitRuns finds the runs of a series of used bytes y: maximal stretches
// of samples above the baseline (the series' least value, give or take a
// band of 5% of the range, at least 16 MiB) that rise at least 64 MiB and
// a fifth of the range above it, and that end where memory falls into the
// band by more than 4σ (the noise): samples of a noisy series that dip
// into the band and out again are jitter, not memory given back. It returns nothing unless at least one
// run ends by coming back to the baseline: a series that never gives its
// memory back is one run, the whole series.
func splitRuns(y []float64) (base float64, runs []runSpan) {
	n := len(y)
	if n < runMinPoints {
		return 0, nil
	}
	base, peak := y[0], y[0]
	for _, v := range y {
		base, peak = min(base, v), max(peak, v) // the builtins (inlined), as math.Min and math.Max
	}
	rng := peak - base
	if rng < runMinRise {
		return 0, nil
	}
	// The band holds the baseline's jitter too (4σ: the least value is
	// itself the jitter's low end), and a release falls by more than it.
	fall := runFallNoise * noise(y)
	band := max(runBandAbs, runBandShare*rng, fall)
	rise := math.Max(runMinRise, runMinShare*rng)
	released := false
	for i := 0; i < n; {
		if y[i] <= base+band {
			i++
			continue
		}
		j, top := i, y[i]
		for {
			for j < n && y[j] > base+band {
				top = max(top, y[j])
				j++
			}
			// Back in the band: a release where memory falls there by
			// more than the noise, else jitter about the band's edge
			// (a noisy ramp, a level near it): the run goes on.
			if j == n || releaseFall(y, i, j) >= fall {
				break
			}
			for j < n && y[j] <= base+band {
				j++
			}
		}
		if top-base >= rise {
			runs = append(runs, runSpan{a: i, b: j, released: j < n})
			released = released || j < n
		}
		i = j
	}
	if !released {
		return 0, nil
	}
	return base, runs
}

// risesWithin reports whether the samples y of a run rise: the median of
// their last third above that of their first third by runRiseNoise σ, σ
// the whole series' noise. A short run under heavy jitter (a cycle of 10 samples
// under σ 235 MiB) is seldom classed growing on its own, its own noise
// estimate and slope interval drawn from a handful of samples; its rise
// still shows against the series' noise. A run that holds one level does
// not rise, whatever σ: with no noise at all (σ 0: nvidia-smi's whole
// MiB of a process that allocated once), a rise must still be above 0.
func risesWithin(y []float64, sigma float64) bool {
	k := max(1, len(y)/3)
	rise := medianOf(y[len(y)-k:]) - medianOf(y[:k])
	return rise > 0 && rise >= runRiseNoise*sigma
}

// runRiseNoise is how many times the series' noise (σ) a run must rise
// by, start to end, to count as one of the series' rising runs. The
// medians of a run's thirds differ by chance by about σ where a third
// holds 2 samples, less where it holds more: a run that holds one level
// rises 2σ in about 1 of 40 (a third or more of three or more of them
// hardly ever), a cycle's ramp of 7 samples 8σ high in nearly all.
const runRiseNoise = 2

// fitRuns splits s into runs and fits each. When a run grew until it
// ended, or the last run is still growing, the series takes that run's
// fit (the most recent such run): a leak suspect with its own window and
// rate, released at the run's end when memory came back to the baseline.
// A run is a leak suspect only where it also rises start to end against
// the series' noise (risesWithin). Runs that repeat (three or more that
// rose, growing or risesWithin, and came back to the baseline, a third
// or more of those that came back) are the series' own rhythm: churn,
// judged on the whole, and a sawtooth where the whole was judged flat or
// a step; unless most of those that came back ended full (Run.OOMExit, two
// at least): a crash loop, growing, with OOMExits set;
// so is a sawtooth whose floor rises over the whole series (its last run
// still growing is the floor's rise, seen over fewer cycles). y is s's
// used memory as fitted (s.y, lone full samples set aside: fitAll).
func (a *Analyzer) fitRuns(s *series, y []float64) {
	base, spans := splitRuns(y)
	if len(spans) == 0 {
		return
	}
	o := s.out
	o.BaselineBytes = int64(base)
	key, releasedRuns, rising := -1, 0, 0
	fits := make([]fit, len(spans))
	for i, sp := range spans {
		r := Run{StartUs: s.t[sp.a], EndUs: s.t[sp.b-1], Samples: sp.b - sp.a,
			FirstBytes: int64(y[sp.a]), LastBytes: int64(y[sp.b-1]), Class: Flat}
		r.PeakBytes = int64(maxOf(y[sp.a:sp.b]))
		if sp.released {
			r.ReleasedUs = s.t[sp.b]
			releasedRuns++
		}
		if r.Samples >= runMinPoints {
			f := fitSeries(s.t[sp.a:sp.b], y[sp.a:sp.b])
			fits[i] = f
			r.Class, r.WindowStartUs, r.WindowEndUs = f.class, f.winStartUs, f.winEndUs
			r.Slope, r.SlopeLow, r.SlopeHigh = finite(f.ts.Slope), finite(f.ts.Low), finite(f.ts.High)
			r.OLSSlope, r.R2 = finite(f.olsSlope), finite(f.r2)
			rises := risesWithin(y[sp.a:sp.b], s.fit.sigma)
			if f.class == Growing && rises {
				key = i
			}
			if sp.released && (rises || f.class == Growing) {
				rising++
			}
		} else {
			r.Class = Undetermined
		}
		o.Runs = append(o.Runs, r)
	}
	// Runs that each grew until the GPU was full and then fell to near
	// nothing, most of those that ended, are a leak that runs the GPU
	// out of memory and is restarted (a crash loop): not the series'
	// rhythm, however often it repeats.
	oomExits := 0
	for i, sp := range spans {
		r := &o.Runs[i]
		if !sp.released || r.Class != Growing || r.Samples < oomExitMinPoints {
			continue
		}
		if c, ok := s.capacityAt(s.t[sp.a+argMax(y[sp.a:sp.b])]); ok && c > 0 &&
			float64(r.PeakBytes) >= oomPeakShare*c && base <= oomFloorShare*c {
			r.OOMExit = true
			oomExits++
		}
	}
	crashLoop := oomExits >= 2 && 3*oomExits >= 2*releasedRuns
	if !crashLoop && rising >= 3 && 3*rising >= releasedRuns {
		// The series' rhythm: memory rises and is given back, again and
		// again. Judged on the whole: a rising floor is growth; levels
		// that change points could not cut (binary segmentation sees no
		// gain in a first split of a short, noisy cycle: two halves of
		// one mean) are not flat, nor one step.
		if o.Class == Flat || o.Class == Step {
			s.fit.class, o.Class, o.StepAtEnd, o.TailSlope = Sawtooth, Sawtooth, false, 0
		}
		return
	}
	if key < 0 {
		return
	}
	if s.fit.class == Growing && s.fit.floor && !spans[key].released {
		// A sawtooth whose floor rises over the whole series splits into
		// spikes back to the baseline, then one run from where the floor
		// left the baseline's band: that run's fit sees only the last
		// cycles of what the whole series' floor shows.
		return
	}
	if s.fit.class == Growing && !spans[key].released && transientsBefore(spans[:key]) {
		// A leak under spikes: while the leak is still within the
		// baseline's band, a spike that leaves it and comes back is a
		// "run" of a few samples, too short to classify; the last run
		// starts where the leak itself left the band. The whole series'
		// fit sees the growth from its onset.
		return
	}
	f := fits[key]
	s.fit = f
	r := o.Runs[key]
	o.Class, o.RisingFloor, o.TailSlope, o.StepAtEnd = Growing, f.floor, 0, false
	o.WindowStartUs, o.WindowEndUs, o.WindowSamples = f.winStartUs, f.winEndUs, f.winSamples
	o.EndJump, o.EndJumpSamples = s.endJumpOf(f)
	o.Slope, o.SlopeLow, o.SlopeHigh, o.OLSSlope, o.R2 = r.Slope, r.SlopeLow, r.SlopeHigh, r.OLSSlope, r.R2
	o.Noise = finite(f.sigma)
	o.ReleasedUs = r.ReleasedUs
	o.RunPeakBytes = r.PeakBytes
	if crashLoop {
		o.OOMExits = oomExits
	}
}

// transientsBefore reports whether every run before the growing one is
// released and too short to classify (fewer than runMinPoints samples):
// spikes, not processes that started and exited.
func transientsBefore(spans []runSpan) bool {
	for _, sp := range spans {
		if !sp.released || sp.b-sp.a >= runMinPoints {
			return false
		}
	}
	return true
}

// argMax is the index of v's largest value (the first of equals).
func argMax(v []float64) int {
	m := 0
	for i, x := range v {
		if x > v[m] {
			m = i
		}
	}
	return m
}
