package trend

import (
	"math"
	"slices"
	"sort"
)

// Constants of the trend classification. Sizes are bytes.
const (
	trendMaxPoints  = 512     // longer series are binned to this many points
	trendMaxChanges = 256     // change points searched per series
	mib             = 1 << 20 // nvidia-smi's resolution
	trendNoiseFloor = mib / 2 // the least noise assumed: values are whole MiB
	trendFlatAbs    = 16 * mib
	trendFlatRel    = 0.02 // a range within 2% of the level is flat
	trendRiseAbs    = 8 * mib
	trendRiseRel    = 0.005
	trendTail       = 0.4 // the last 40% of a series decides whether it still grows
	trendConfidence = 0.95
)

// fit is the analysis of one series.
type fit struct {
	class Class
	// The trend is fitted to the samples in [winStartUs, winEndUs]
	// (winSamples of them), or with floor to the lowest point of each
	// cycle of a sawtooth (winSamples cycles).
	floor                bool
	winStartUs, winEndUs int64
	winSamples           int
	ts                   theilSen
	olsSlope, r2         float64
	sigma                float64
	changes              []ChangePoint
	endLevel             float64 // the level to measure headroom from: the fitted level at the end, or a sawtooth's recent peak
	// warmUpEndUs, for a growing series: when the gradual warm-up before
	// its growth (warmUpEnd) ended, the window starting there, and the
	// level it had reached (warmUpToBytes); 0 when none was seen.
	warmUpEndUs, warmUpToBytes int64
	// stepAtEnd: a step whose last change reaches the last points (fewer
	// than stepMinAfter after it): nothing shows it stopped.
	stepAtEnd bool
	// endJump, for a growing series: its trend is fitted before a jump
	// at its end (endJump), the last of changes.
	endJump bool
}

// stepMinAfter is the fewest points after a step's last change that can
// show the level it reached (one point is also a spike; two, the start of
// a ramp).
const stepMinAfter = 3

// level is a run of points at one level: [a, b) in reduced points.
type level struct {
	a, b  int
	value float64
}

// burst is consecutive level shifts of one sign with at most two points
// between them: a ramp over a few samples is one change.
type burst struct {
	first, last int // indices into levels of the first and last new level
	from, to    float64
}

func (b burst) delta() float64 { return b.to - b.from }

// fitSeries classifies a series of used bytes y at times t (µs, sorted)
// and fits its trend.
func fitSeries(t []int64, y []float64) fit {
	return fitSeriesJumps(t, y, true)
}

// fitSeriesJumps is fitSeries; with jumps false it does not look for a
// jump at the end (endJump) that growth before it would be fitted
// without: the fit of the samples before such a jump is made with false.
func fitSeriesJumps(t []int64, y []float64, jumps bool) fit {
	// x (and rx, which may be x) is used here alone: its buffer is recycled.
	xbuf := slopeBufs.Get().(*[]float64)
	defer slopeBufs.Put(xbuf)
	x := slices.Grow((*xbuf)[:0], len(t))[:len(t)]
	*xbuf = x
	for i := range t {
		x[i] = float64(t[i]-t[0]) / 1e6
	}
	rx, ry := reduce(x, y, trendMaxPoints)
	n := len(rx)
	at := func(i int) int64 { return t[0] + int64(math.Round(rx[i]*1e6)) }
	f := fit{sigma: math.Max(noise(ry), trendNoiseFloor)}
	f.winStartUs, f.winEndUs, f.winSamples = t[0], t[len(t)-1], len(t)

	// Levels between change points.
	var cps []int
	if n >= 3 {
		penalty := 3 * f.sigma * f.sigma * math.Log(float64(n))
		cps = changePoints(ry, penalty, math.Max(3*f.sigma, mib), trendMaxChanges)
	}
	bounds := append(append([]int{0}, cps...), n)
	levels := make([]level, 0, len(bounds)-1)
	for i := 0; i+1 < len(bounds); i++ {
		levels = append(levels, level{bounds[i], bounds[i+1], medianOf(ry[bounds[i]:bounds[i+1]])})
	}
	lo, hi, peak := levels[0].value, levels[0].value, 0.0
	for _, l := range levels {
		lo, hi = min(lo, l.value), max(hi, l.value)
		peak = max(peak, math.Abs(l.value))
	}
	rng := hi - lo
	flatBand := math.Max(math.Max(trendFlatAbs, 4*f.sigma), trendFlatRel*peak)
	significantRise := math.Max(math.Max(trendRiseAbs, 4*f.sigma), trendRiseRel*peak)

	// Bursts: shifts of one sign separated by at most two points.
	var bursts []burst
	for k := 1; k < len(levels); k++ {
		up := levels[k].value > levels[k-1].value
		if m := len(bursts); m > 0 {
			b := &bursts[m-1]
			if (b.delta() > 0) == up && levels[k-1].b-levels[k-1].a <= 2 {
				b.last, b.to = k, levels[k].value
				continue
			}
		}
		bursts = append(bursts, burst{first: k, last: k, from: levels[k-1].value, to: levels[k].value})
	}
	// A shift between levels is a step only where the samples jump there
	// (see sharpShift); the piecewise-constant levels of a noisy ramp
	// shift too, but the samples either side of such a shift differ by
	// the noise and a few samples' rise, not by the shift.
	// The jump is read on the samples with transient spikes taken out
	// (despiked): a spike of a few samples where a noisy ramp's levels
	// meet would make the shift between them look like a jump.
	dry := despiked(ry)
	sharp := make([]bool, len(levels))
	for k := 1; k < len(levels); k++ {
		sharp[k] = sharpShift(dry, levels[k-1], levels[k], levels[k].value-levels[k-1].value, f.sigma)
	}
	sharpBurst := func(b burst) bool {
		return sharpShift(dry, levels[b.first-1], levels[b.last], b.delta(), f.sigma)
	}
	lastChange := -1 // the point where the last significant change ends
	gradual := false // the last change is the pieces of a gradual one
	change := func(b burst) ChangePoint {
		return ChangePoint{
			StartUs: at(levels[b.first].a - 1), EndUs: at(levels[b.last].a),
			FromBytes: int64(math.Round(b.from)), ToBytes: int64(math.Round(b.to)),
		}
	}
	for i := 0; i < len(bursts); i++ {
		b := bursts[i]
		if math.Abs(b.delta()) < significantRise {
			continue
		}
		if i+1 < len(bursts) && spikePair(levels, b, bursts[i+1], significantRise) {
			// A spike (or a dip): two changes, each Transient; neither
			// the last change nor a piece of a gradual one.
			up, down := change(b), change(bursts[i+1])
			up.Transient, down.Transient = true, true
			f.changes = append(f.changes, up, down)
			i++
			continue
		}
		lastChange = levels[b.last].a
		c := change(b)
		isSharp := sharpBurst(b)
		if m := len(f.changes); !isSharp && gradual && m > 0 && (f.changes[m-1].ToBytes > f.changes[m-1].FromBytes) == (b.delta() > 0) {
			// One gradual change, not steps: its pieces are one change
			// over the time they span.
			f.changes[m-1].EndUs, f.changes[m-1].ToBytes = c.EndUs, c.ToBytes
			continue
		}
		gradual = !isSharp
		f.changes = append(f.changes, c)
	}

	xEnd := x[len(x)-1] // a binned series' last point is a bin's median: the trend ends at the last sample
	whole := func() {
		f.ts = fitTheilSen(rx, ry, trendConfidence)
		f.olsSlope, f.r2 = ols(rx, ry)
		f.endLevel = f.ts.Intercept + f.ts.Slope*xEnd
	}
	if len(t) < 2 || t[0] == t[len(t)-1] {
		f.class = Undetermined
		whole()
		return f
	}
	if n < 3 {
		f.class = Flat
		if rng >= flatBand || math.Abs(ry[n-1]-ry[0]) >= flatBand {
			// Two points (a "before" and an "after" nvidia-smi): the
			// change is between them and nothing comes after it, so
			// nothing says whether memory stays there.
			f.class, f.stepAtEnd = Step, true
			f.changes = append(f.changes, ChangePoint{StartUs: at(0), EndUs: at(n - 1),
				FromBytes: int64(math.Round(ry[0])), ToBytes: int64(math.Round(ry[n-1]))})
		}
		whole()
		return f
	}

	// Sawtooth: memory that rises is given back.
	var rises, falls float64
	var drops []burst
	for _, b := range bursts {
		d := b.delta()
		switch {
		case d > 0:
			rises += d
		case -d >= math.Max(significantRise, 0.25*rng):
			drops = append(drops, b)
			falls -= d
		}
	}
	if len(drops) > 0 && falls >= 0.5*rises && rises >= math.Max(significantRise, 0.25*rng) && rng >= flatBand {
		// The floor of each cycle (the lowest point between drops): rising
		// under the churn, it is a leak.
		var tx, ty []float64
		from := 0
		for i := 0; i <= len(drops); i++ {
			to := n
			if i < len(drops) {
				to = levels[drops[i].last].a
			}
			if to > from {
				m := from
				for j := from; j < to; j++ {
					if ry[j] < ry[m] {
						m = j
					}
				}
				tx, ty = append(tx, rx[m]), append(ty, ry[m])
			}
			from = to
		}
		// A warm-up (a model loaded, caches filled before the first
		// cycle) is no leak: the first cycle's floor is where the log
		// began, not a level memory was given back to, and where it lies
		// below the line of the later floors by more than a significant
		// rise the trend starts at the second cycle. A leak's first floor
		// lies on that line; a warm-up's far below it, however flat the
		// floors that follow.
		winStart := 0
		if len(ty) >= 3 && warmUp(tx, ty, significantRise) {
			tx, ty, winStart = tx[1:], ty[1:], levels[drops[0].last].a
		}
		if len(ty) >= 3 {
			ts := fitTheilSen(tx, ty, trendConfidence)
			ups := 0
			for i := 1; i < len(ty); i++ {
				if ty[i] > ty[i-1] {
					ups++
				}
			}
			// The floor's rise must stand out from the spikes (a tenth of
			// the range), unless it rises cycle after cycle and by more
			// than the noise: then it is a leak whatever the spike's
			// height. Cycle after cycle: in each of 4 to 6 cycles, or in
			// 80% of 7 or more. Floors drawn at random (iid) would do so
			// in fewer than 1% of logs (the Eulerian numbers count the
			// orders with k rises: 1 of 5! for 4 rises of 4; 248 of 8!
			// for 6 or more of 7; less for more cycles).
			rise, m := ty[len(ty)-1]-ty[0], float64(len(ty)-1)
			everyCycle := (m >= 4 && float64(ups) == m || m >= 7 && float64(ups) >= 0.8*m) &&
				rise >= math.Max(steadyRiseAbs, 4*f.sigma)
			if ts.Low > 0 && float64(ups) >= 0.6*m && (rise >= math.Max(significantRise, 0.1*rng) || everyCycle) {
				f.class, f.floor, f.ts = Growing, true, ts
				f.olsSlope, f.r2 = ols(tx, ty)
				f.winSamples = len(ty)
				if winStart > 0 {
					f.winStartUs = at(winStart)
				}
				last := levels[drops[len(drops)-1].last].a
				f.endLevel = maxOf(ry[last:])
				f.endLevel = math.Max(f.endLevel, cyclePeak(ry, levels, drops))
				return f
			}
		}
		f.class = Sawtooth
		whole()
		return f
	}

	// A jump at the end, too near it for a trend after it: growth before
	// it is fitted without it (endJumpFit) where the series is otherwise
	// judged a step, or growing only after the jump.
	js, je, jump := 0, 0, false
	if jumps {
		js, je, jump = endJump(rx, ry, f.sigma, significantRise)
	}

	// Growing: still rising through the last part of the series, in more
	// than one step, with a growth rate whose interval excludes zero (and
	// a rise of at least significantRise, which scales with the level);
	// or rising steadily from the growth's onset to the last sample
	// (steadyRise), however small against the level.
	penalty := 3 * f.sigma * f.sigma * math.Log(float64(n))
	w := trendWindow(rx, levels, bursts, rng, sharpBurst)
	warm := warmUpEnd(rx, dry, math.Max(3*f.sigma, trendRiseAbs))
	if warm > 0 && warm >= w {
		// A gradual warm-up leaves no abrupt step for trendWindow (a
		// steep one may, ending where it does): the trend starts where
		// it ends.
		w = warm
	} else {
		warm = 0
	}
	w = onset(rx, ry, w, penalty)
	grows := false
	if a := tailStart(rx, trendTail); n-a >= 4 {
		ts := fitTheilSen(rx[a:], ry[a:], trendConfidence)
		rise := ts.Slope * (rx[n-1] - rx[a])
		grows = ts.Low > 0 && rise >= significantRise && manySteps(levels, sharp, a, significantRise)
	}
	growing := grows || steadyRise(rx, ry, dry, levels, sharp, w, f.sigma)
	var ts theilSen
	if growing {
		ts = fitTheilSen(rx[w:], ry[w:], trendConfidence)
		// The growth's window, from its onset on, must rise with an
		// interval that excludes zero: where it does not, what rose was
		// a step before it (a late step in noise), not growth.
		growing = w == 0 || !ts.ok || ts.Low > 0
	}
	if jump && (!growing || w > js) {
		if g, ok := endJumpFit(t, y, x, rx, ry, js, je, significantRise); ok {
			return g
		}
	}
	if growing {
		f.class = Growing
		f.ts = ts
		f.olsSlope, f.r2 = ols(rx[w:], ry[w:])
		f.endLevel = f.ts.Intercept + f.ts.Slope*xEnd
		if w > 0 {
			// The window starts at the first sample of the reduced point w.
			from := rx[w-1] + (rx[w]-rx[w-1])/2
			if n == len(t) {
				from = rx[w]
			}
			k := 0
			for k < len(x) && x[k] < from {
				k++
			}
			f.winStartUs, f.winSamples = t[k], len(t)-k
		}
		if warm > 0 {
			// Where the window starts at the warm-up's end, it ends
			// where the window starts.
			f.warmUpEndUs, f.warmUpToBytes = at(warm), int64(math.Round(dry[warm]))
			if w == warm {
				f.warmUpEndUs = f.winStartUs
			}
		}
		return f
	}
	whole()
	// A rise (or fall) over the window whose slope interval excludes zero
	// and that is larger than the noise band is a change, however the
	// noise hid it from the change points: not flat.
	trendBand := max(trendFlatAbs, trendFlatRel*peak, steadyNoiseRise*f.sigma)
	trended := f.ts.ok && (f.ts.Low > 0 || f.ts.High < 0) && math.Abs(f.ts.Slope)*(rx[n-1]-rx[0]) >= trendBand
	switch net := levels[len(levels)-1].value - levels[0].value; {
	case rng < flatBand && !trended:
		f.class = Flat
	case math.Abs(net) >= 0.5*rng || len(drops) == 0:
		f.class = Step
		f.stepAtEnd = lastChange >= 0 && n-lastChange < stepMinAfter
	default:
		f.class = Sawtooth
	}
	return f
}

// endJump is a jump at the end of a series of points y at times x (s):
// the largest rise within a few points (at most 3, the points either
// side of its largest rise from one point to the next that rise by a
// quarter of that or more) after which too little follows for a trend
// of its own (fewer than 8 points, or less than a fifth of the series'
// time: what trendWindow asks of a window after a step), of at least
// significant bytes and sharp in the points (the median of the 3 after
// it less that of the 3 before is at least half the rise and 3σ:
// sharpShift), that
// memory does not fall back from (no later point below its middle: a
// spike is no jump). s is its last point before, e its first after; ok
// is false when there is none.
//
// A ramp that ends in such a jump (a large allocation in the last
// samples: a checkpoint's buffers, the batch that ran the GPU out of
// memory) is growth, then a jump: the jump is neither a step that the
// log shows stopped, nor the start of the growth (endJumpFit).
func endJump(x, y []float64, sigma, significant float64) (s, e int, ok bool) {
	n := len(x)
	top := 0
	for i := n - 1; i >= 1; i-- {
		if trendAfter(x, i) {
			break
		}
		if top == 0 || y[i]-y[i-1] > y[top]-y[top-1] {
			top = i
		}
	}
	if top == 0 {
		return 0, 0, false
	}
	d := y[top] - y[top-1]
	s, e = top-1, top
	for e-s < stepMinAfter && e+1 < n && y[e+1]-y[e] >= d/4 {
		e++
	}
	for e-s < stepMinAfter && s >= 1 && y[s]-y[s-1] >= d/4 {
		s--
	}
	rise := y[e] - y[s]
	if rise < significant || minOf(y[e:]) < y[s]+rise/2 {
		return 0, 0, false
	}
	return s, e, sharpShift(y, level{a: 0, b: s + 1}, level{a: e, b: n}, rise, sigma)
}

// endJumpMinSamples is the fewest samples before an end jump that its
// growth is fitted on.
const endJumpMinSamples = 2 * steadyMinPoints

// endJumpFit is the fit of a series (samples t, y; x the samples' times
// in s from the first; rx, ry its points, reduced where it was binned)
// that ends in a jump from point s to point e (endJump), when
// the samples before the jump grow on their own (their fit,
// fitSeriesJumps without end jumps, is growing and not a rising floor)
// and the jump stands out from that growth (what the rise over the
// jump's points leaves beyond the growth's 95% upper rate is at least
// significant bytes and half the rise: a steep ramp's last points are no
// jump). The points after the jump must be too few for a trend (fewer
// than 8) or still rise (their Sen interval above zero): a level held
// for 8 points or more after it shows the growth stopped there, which
// the ordinary classification judges. The fit is then the samples'
// before the jump, the jump added to its changes (fit.endJump: from the
// last sample before it to the first past its middle, or the top of a
// jump over a few samples), and its
// level at the end carried along its line to the series' end and raised
// by the jump's height in the samples (the median of the 3 from that
// first one less that of the 3 before the jump). ok is false otherwise.
func endJumpFit(t []int64, y, x, rx, ry []float64, s, e int, significant float64) (fit, bool) {
	n := len(rx)
	if n-e >= 8 {
		if ts := fitTheilSen(rx[e:], ry[e:], trendConfidence); !ts.ok || ts.Low <= 0 {
			return fit{}, false
		}
	}
	// The samples before the jump: from its last point before (a bin's
	// median where the series was binned: a bin holds samples either side
	// of its median) up to the first that is past the jump's middle.
	rise := ry[e] - ry[s]
	k := sort.SearchFloat64s(x, rx[s])
	for k > 0 && y[k-1] >= ry[s]+rise/2 {
		k--
	}
	for k < len(x) && y[k] < ry[s]+rise/2 {
		k++
	}
	if k < endJumpMinSamples || k >= len(x) {
		return fit{}, false
	}
	g := fitSeriesJumps(t[:k], y[:k], false)
	if g.class != Growing || g.floor {
		return fit{}, false
	}
	if excess := rise - g.ts.High*(rx[e]-rx[s]); excess < significant || excess < 0.5*rise {
		return fit{}, false
	}
	// The jump in the samples: from the last before it (k-1) to the first
	// past its middle (k), or on to a later one up to its point e while
	// the samples still rise by a quarter of the jump each (a jump over
	// a few samples).
	post := k
	for post+1 < len(x) && x[post] < rx[e] && y[post+1]-y[post] >= rise/4 {
		post++
	}
	m := min(sharpShiftPoints, k, len(x)-post)
	height := medianOf(y[post:post+m]) - medianOf(y[k-m:k])
	g.endLevel += g.ts.Slope*(x[len(x)-1]-x[k-1]) + height
	g.changes = append(g.changes, ChangePoint{StartUs: t[k-1], EndUs: t[post],
		FromBytes: int64(math.Round(y[k-1])), ToBytes: int64(math.Round(y[post]))})
	g.endJump = true
	return g, true
}

// warmUp reports whether the first of the floors ty (at times tx, three
// or more) lies below the line of the others by more than band bytes: the
// Theil–Sen line of the later floors (through both where there are two)
// at the first floor's time.
func warmUp(tx, ty []float64, band float64) bool {
	lx, ly := tx[1:], ty[1:]
	var slope, intercept float64
	if len(ly) >= 3 {
		ts := fitTheilSen(lx, ly, trendConfidence)
		slope, intercept = ts.Slope, ts.Intercept
	} else {
		if lx[1] > lx[0] {
			slope = (ly[1] - ly[0]) / (lx[1] - lx[0])
		}
		intercept = ly[0] - slope*lx[0]
	}
	return ty[0] < intercept+slope*tx[0]-band
}

// Constants of warmUpEnd.
const (
	warmUpMaxFrac   = 1.0 / 3 // a warm-up ends within the first third of the series' time
	warmUpMinPoints = 16      // points in the series
	warmUpSpeedup   = 4       // a warm-up rises at least 4 times as fast as the trend after it
)

// warmUpEnd is where a gradual warm-up at the start of a series ends (a
// point index), or 0 when there is none. A warm-up (caches filling,
// cuDNN's autotuner trying algorithms, an allocator's pool reaching its
// working size) is a rise over the first part of a log that slows to the
// series' own trend: the samples start below the line of the later ones
// and climb to it. It is read against the Theil–Sen line L of the
// second half of the series (time, x in s) through y (despiked used
// bytes): the warm-up ends after the last point of the first half more
// than band bytes below L. It is a warm-up only when that point lies in
// the first third of the series' time, the warm-up starts at its lowest
// point (within band: a rise, not a dip and its recovery), and it rises
// at least 4 times as fast on average as L does: memory whose growth only
// slows (a leak that decelerates) is no warm-up.
//
// trendWindow finds an abrupt step up (a model loaded); a warm-up over
// many samples leaves no such step, and a line through it and the slow
// leak after it fits neither, so the leak is missed or its rate
// overstated.
func warmUpEnd(x, y []float64, band float64) int {
	n := len(x)
	if n < warmUpMinPoints || x[n-1] <= x[0] {
		return 0
	}
	span := x[n-1] - x[0]
	h := tailStart(x, 0.5)
	if n-h < warmUpMinPoints/2 {
		return 0
	}
	l := fitTheilSen(x[h:], y[h:], trendConfidence)
	if !l.ok {
		return 0
	}
	line := func(i int) float64 { return l.Intercept + l.Slope*x[i] }
	e := 0
	for i := h - 1; i >= 0; i-- {
		if y[i] < line(i)-band {
			e = i + 1
			break
		}
	}
	if e == 0 || e >= n || x[e]-x[0] > warmUpMaxFrac*span || minOf(y[:e]) < y[0]-band {
		return 0
	}
	rise := line(e) - y[0]
	if rise <= band || x[e] <= x[0] {
		return 0
	}
	if l.Slope > 0 && rise/(x[e]-x[0]) < warmUpSpeedup*l.Slope {
		return 0
	}
	return e
}

// spikePair reports whether the significant burst b and the burst next
// after it are a transient (ChangePoint.Transient): of opposite signs,
// the levels between them (the spike's top, or the dip's bottom) at most
// stepMinAfter points long, and next landing within band bytes of where
// b started.
func spikePair(levels []level, b, next burst, band float64) bool {
	return (b.delta() > 0) != (next.delta() > 0) &&
		levels[next.first-1].b-levels[b.last].a <= stepMinAfter &&
		math.Abs(next.to-b.from) < band
}

// tailStart is the first point in the last frac of the series' time.
func tailStart(x []float64, frac float64) int {
	from := x[len(x)-1] - frac*(x[len(x)-1]-x[0])
	for i, v := range x {
		if v >= from {
			return i
		}
	}
	return len(x) - 1
}

// trendWindow is where a growing series' trend is fitted: after its last
// abrupt large step up (a model loaded, a cache filled), when enough of
// the series follows it, else the whole series.
func trendWindow(x []float64, levels []level, bursts []burst, rng float64, sharp func(burst) bool) int {
	n := len(x)
	span := x[n-1] - x[0]
	for i := len(bursts) - 1; i >= 0; i-- {
		b := bursts[i]
		start, end := levels[b.first].a-1, levels[b.last].a
		abrupt := (end-start <= 3 || x[end]-x[start] <= 0.1*span) && sharp(b)
		if b.delta() >= 0.3*rng && abrupt {
			if trendAfter(x, end) {
				return end
			}
			return 0
		}
	}
	return 0
}

// trendAfter reports whether enough of the series at times x follows
// point i for a trend of its own: 8 points or more, over a fifth of the
// series' time or more.
func trendAfter(x []float64, i int) bool {
	n := len(x)
	return n-i >= 8 && x[n-1]-x[i] >= 0.2*(x[n-1]-x[0])
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x) // the builtin, inlined: math.Max is not
	}
	return m
}

// sharpShiftPoints is how many samples either side of a shift its jump is
// measured over (fewer where a level is shorter).
const sharpShiftPoints = 3

// sharpShift reports whether the samples jump at the shift of delta bytes
// from level prev to level next: the median of next's first samples less
// the median of prev's last ones is at least half the shift and 3σ. A step
// does; the levels that change points cut a noisy ramp into do not (the
// samples either side differ by the noise and a few samples' rise, while
// the levels' medians differ by the rise over their lengths).
func sharpShift(ry []float64, prev, next level, delta, sigma float64) bool {
	m := min(sharpShiftPoints, prev.b-prev.a, next.b-next.a)
	if m <= 0 {
		return true
	}
	j := medianOf(ry[next.a:next.a+m]) - medianOf(ry[prev.b-m:prev.b])
	return j*delta > 0 && math.Abs(j) >= math.Max(0.5*math.Abs(delta), 3*sigma)
}

// manySteps reports whether the level shifts of a series after point a
// make a rise in more than one step (no one shift that is a step in the
// samples, sharp[k], is more than 60% of their sum; a smooth rise, with
// no shift at all or none sharp, counts) and no fall of fall bytes or
// more: growth, not a one-time step.
//
// A transient is neither a step nor a fall: a burst up (shifts of one
// sign with at most two points between them, as fitSeries groups them)
// that the burst down right after it gives back, landing no lower than
// where the burst up started (a spike on top of the trend: an eval
// batch, a checkpoint's staging buffer); what the fall gives back is
// taken off that burst's rise, and only a fall beyond it counts. A fall
// before any rise of the window (the log began in a spike) is a
// transient when memory ends above where it fell from (the last level
// longer than two points: not itself a spike). Memory that falls below where the rise before it started (a
// bump, growth given back) is a fall, as is one the series never
// regains.
func manySteps(levels []level, sharp []bool, a int, fall float64) bool {
	type rise struct {
		d     float64
		sharp bool
	}
	var upSum, upMax float64
	var burst []rise // the last burst up, not yet counted
	count := func() {
		for _, r := range burst {
			upSum += r.d
			if r.sharp {
				upMax = max(upMax, r.d)
			}
		}
		burst = burst[:0]
	}
	rose := false
	for k := 1; k < len(levels); k++ {
		if levels[k].a <= a {
			continue
		}
		d := levels[k].value - levels[k-1].value
		if d > 0 {
			// A rise after a long level starts a new burst.
			if levels[k-1].b-levels[k-1].a > 2 {
				count()
			}
			burst = append(burst, rise{d, sharp[k]})
			rose = true
			continue
		}
		// The burst down: this shift and the falls that follow it with at
		// most two points between.
		from, j := levels[k-1].value, k
		for j+1 < len(levels) && levels[j+1].value < levels[j].value && levels[j].b-levels[j].a <= 2 {
			j++
		}
		down := from - levels[j].value
		if !rose && down >= fall && settled(levels) <= from && levels[k-1].b-levels[k-1].a > stepMinAfter {
			return false // a fall at the start that memory does not regain
		}
		// Give back the burst up from its top.
		for len(burst) > 0 && down > 0 {
			r := &burst[len(burst)-1]
			g := min(r.d, down)
			r.d -= g
			down -= g
			if r.d <= 0 {
				burst = burst[:len(burst)-1]
			}
		}
		if rose && down >= fall {
			return false
		}
		count()
		k = j
	}
	count()
	return upMax <= 0.6*upSum // (upSum >= 0: no sharp rise at all passes)
}

// settled is the value of the last level longer than two points (one
// that is no spike), or of the last level when none is.
func settled(levels []level) float64 {
	for i := len(levels) - 1; i >= 0; i-- {
		if levels[i].b-levels[i].a > 2 {
			return levels[i].value
		}
	}
	return levels[len(levels)-1].value
}

// Constants of steadyRise.
const (
	steadyMinPoints = 4 // points in the window
	steadyRiseAbs   = 16 * mib
	steadyMinR2     = 0.8 // of the least-squares line over the window
)

// steadyRise reports whether the points [w, n) of a series of used bytes
// ry at times rx (s) rise steadily up to the last one: at least 4 points;
// a Theil–Sen slope whose 95% interval excludes zero; a rise over the
// window of at least 16 MiB and 3σ; a straight line explaining at least
// 80% of the variance (R² ≥ 0.8), or all of it but the noise
// (lineWithinNoise); in more than one step (sharp[k]: the shifts that are
// steps in the samples) and with no fall of 16 MiB (or 3σ); and still
// rising over the window's last 40% (at least its last 3 points: Sen's
// interval there excludes zero).
//
// No threshold scales with the level: a leak of 2 MiB/min is a leak on a
// 70 GiB job as on a 2 GiB one. Noise is kept out by what a straight line
// through noise lacks: a slope interval clear of zero, a good fit, and a
// rise that lasts to the end; a one-off bump fails the fit (or, left
// standing at the end, the many-steps rule), jitter fails the slope.
func steadyRise(rx, ry, dry []float64, levels []level, sharp []bool, w int, sigma float64) bool {
	n := len(rx)
	if n-w < steadyMinPoints {
		return false
	}
	x, y := rx[w:], ry[w:]
	floor := math.Max(steadyRiseAbs, steadyNoiseRise*sigma)
	if maxOf(y)-minOf(y) < floor {
		return false // a range under the rise asked for: the fits need not be made
	}
	ts := fitTheilSen(x, y, trendConfidence)
	if !ts.ok || ts.Low <= 0 || ts.Slope*(x[len(x)-1]-x[0]) < floor {
		return false
	}
	// The line is judged on the samples with transient spikes taken out
	// (despiked): a spike of a few samples on top of a leak (an eval
	// batch, a checkpoint's staging buffer) leaves residuals of its
	// height, far above the noise, and would hide the leak under it.
	d := dry[w:]
	if _, r2 := ols(x, d); r2 < steadyMinR2 && !lineWithinNoise(d, r2, sigma) {
		return false
	}
	if !manySteps(levels, sharp, w, floor) {
		return false
	}
	a := min(tailStart(x, trendTail), len(x)-3)
	end := fitTheilSen(x[a:], y[a:], trendConfidence)
	return end.ok && end.Low > 0
}

// despikeHalf is how many points either side of a point the running
// median of despiked spans: a median of 7 points removes a spike of up to
// 3 (stepMinAfter), and keeps a step or a ramp where it is.
const despikeHalf = stepMinAfter

// despiked is y through a running median of 2·despikeHalf+1 points
// (fewer at the ends): a transient of despikeHalf points or fewer, up or
// down, is replaced by the level around it.
//
// At the series' end the window narrows evenly about its point, down to
// the last point alone: a transient is a shift memory came back from, and
// nothing after the last samples shows that they came back. A jump in
// the last 1 to 3 points (a checkpoint's buffers, the allocation before
// an out-of-memory crash) is kept where it is, a step at the end
// (fit.stepAtEnd), not a spike taken out of a ramp whose levels it
// would then join as a gradual rise. At the start the window is cut
// short, not narrowed: a jump there is followed by the samples that show
// whether memory came back.
func despiked(y []float64) []float64 {
	out := make([]float64, len(y))
	var win []float64
	for i := range y {
		h := min(despikeHalf, len(y)-1-i)
		win = append(win[:0], y[max(0, i-h):i+h+1]...)
		out[i] = medianSelect(win)
	}
	return out
}

// onset is where the growth of a series that was flat before it begins:
// the k in (from, n-4] at which a level over [from, k) followed by a
// straight line over [k, n) fits the points (x in s, y in bytes) best,
// when that fit's squared error is less than half a single line's over
// [from, n) and less by more than penalty (the change-point search's);
// else from. A gradual onset (a kink) leaves no abrupt step for the
// change points to find, and a line through the flat part before it would
// understate the rate.
func onset(x, y []float64, from int, penalty float64) int {
	n := len(x) - from
	if n < 2*steadyMinPoints {
		return from
	}
	x, y = x[from:], y[from:]
	// Sums from the first point, centred on it for precision: prefix sums
	// of y and y² for the level, suffix sums for the line.
	x0, y0 := x[0], y[0]
	s1 := make([]float64, n+1)
	s2 := make([]float64, n+1)
	for i := range n {
		v := y[i] - y0
		s1[i+1], s2[i+1] = s1[i]+v, s2[i]+v*v
	}
	var sx, sy, sxx, sxy, syy float64
	lineSSE := make([]float64, n) // of [k, n)
	for k := n - 1; k >= 0; k-- {
		u, v := x[k]-x0, y[k]-y0
		sx, sy, sxx, sxy, syy = sx+u, sy+v, sxx+u*u, sxy+u*v, syy+v*v
		m := float64(n - k)
		vyy := syy - sy*sy/m
		vxx := sxx - sx*sx/m
		vxy := sxy - sx*sy/m
		e := vyy
		if vxx > 0 {
			e -= vxy * vxy / vxx
		}
		lineSSE[k] = max(e, 0)
	}
	best, bestK := lineSSE[0], 0
	for k := 1; k <= n-steadyMinPoints; k++ {
		if e := segSSE(s1, s2, 0, k) + lineSSE[k]; e < best {
			best, bestK = e, k
		}
	}
	if bestK == 0 || lineSSE[0]-best <= penalty || best >= 0.5*lineSSE[0] {
		return from
	}
	return from + bestK
}

// steadyNoiseRise is how many times the noise (σ) a fitted rise must
// reach. The slope interval already says the rise is no chance of the
// noise (the fitted rise of white noise over n samples spreads by
// 3.5σ/√n); this asks that it be more than the jitter of single samples
// too. A line with R² ≥ 0.8 through white noise rises 7σ anyway.
const steadyNoiseRise = 3

// steadyNoiseRMS is how far (times σ) a line's residuals may spread and
// still be the samples' noise alone.
const steadyNoiseRMS = 1.5

// lineWithinNoise reports whether the residuals of the least-squares line
// through y (whose R² is r2) are the noise alone: their RMS within 1.5σ,
// σ the sample-to-sample noise. Under heavy jitter a straight rise
// explains less of the variance than 80% (R² falls with the noise), but
// what it leaves is the jitter; a bump or a step leaves more than the
// jitter, which sample-to-sample differences do not see.
func lineWithinNoise(y []float64, r2, sigma float64) bool {
	if len(y) < 2 || math.IsNaN(r2) {
		return false
	}
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var ss float64
	for _, v := range y {
		ss += (v - mean) * (v - mean)
	}
	rms := math.Sqrt(max(1-r2, 0) * ss / float64(len(y)))
	return rms <= steadyNoiseRMS*sigma
}

// cyclePeak is the highest of the points ry from the start of the cycle
// before the last drop (of levels, a rising floor's cycles) to the end:
// the level the peaks of a sawtooth whose floor rises have reached, which
// run the GPU out of memory before the floor does (a training phase
// above an eval phase that gives memory back). The cycle before the last
// is taken too, so that a series that ends in its low phase is measured
// from the peak before it, not from the floor.
func cyclePeak(ry []float64, levels []level, drops []burst) float64 {
	from := 0
	if len(drops) >= 2 {
		from = levels[drops[len(drops)-2].last].a
	}
	return maxOf(ry[from:])
}
