package trend

import (
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Robust statistics of a memory series: x in seconds, y in bytes.

// theilSen is the Theil–Sen estimate of the slope of y on x (the median
// of the slopes between every pair of points) with Sen's confidence
// interval at level conf, and the intercept median(y - slope*x). Pairs
// with equal x are left out. ok is false with fewer than two distinct x.
type theilSen struct {
	Slope, Low, High, Intercept float64
	ok                          bool
}

func fitTheilSen(x, y []float64, conf float64) theilSen {
	n := len(x)
	// Sen (1968): the ranks bounding the interval come from the variance
	// of Kendall's S under no trend, n(n-1)(2n+5)/18.
	z := distuv.UnitNormal.Quantile(1 - (1-conf)/2)
	c := z * math.Sqrt(float64(n)*float64(n-1)*float64(2*n+5)/18)
	ts, ok := slopesBanded(x, y, c)
	if !ok {
		ts = slopesAll(x, y, c)
	}
	if !ts.ok {
		return ts
	}
	res := make([]float64, n)
	for i := range x {
		res[i] = y[i] - ts.Slope*x[i]
	}
	ts.Intercept = medianSelect(res)
	return ts
}

// senRanks are the 0-based ranks, among N slopes, of the bounds of Sen's
// interval for c (see fitTheilSen).
func senRanks(N int, c float64) (lo, hi int) {
	l := int(math.Floor((float64(N) - c) / 2))
	h := int(math.Ceil((float64(N) + c) / 2))
	return clampInt(l-1, 0, N-1), clampInt(h-1, 0, N-1)
}

// slopesAll is Theil–Sen's slope and interval from every slope, kept.
func slopesAll(x, y []float64, c float64) theilSen {
	n := len(x)
	buf := slopeBufs.Get().(*[]float64)
	defer slopeBufs.Put(buf)
	slopes := (*buf)[:0]
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	*buf = slopes
	if len(slopes) == 0 {
		return theilSen{}
	}
	// Order statistics by selection, not a sort: the same values, in
	// linear time.
	mid := len(slopes) / 2
	ts := theilSen{Slope: medianSelect(slopes), ok: true}
	lo, hi := senRanks(len(slopes), c)
	ts.Low = orderStat(slopes, mid, lo)
	ts.High = orderStat(slopes, mid, hi)
	return ts
}

// bandSample is about how many slopes slopesBanded samples.
const bandSample = 4096

// slopesBanded is slopesAll's result without keeping every slope: the
// ranks it needs (the median and Sen's bounds) lie in a narrow band
// around the middle (±3,800 of 130,816 slopes for 512 points). A sample
// of the slopes brackets that band by two values with a wide margin;
// one pass over all slopes then counts those below the band and those
// equal to either bracket, and keeps those strictly between, where the
// ranks are selected (see bandPass). The values are exactly
// slopesAll's (order statistics do not depend on how they are found);
// ok is false, and slopesAll must be used, when the series is short or
// the sample's bracket missed a rank.
func slopesBanded(x, y []float64, c float64) (theilSen, bool) {
	n := len(x)
	pairs := n * (n - 1) / 2
	if pairs < 4*bandSample {
		return theilSen{}, false
	}
	// Every step-th pair (i < j), in the order i then j: stepping
	// straight from pair to pair, not through the ones between.
	sbuf := sampleBufs.Get().(*[]float64)
	defer sampleBufs.Put(sbuf)
	sample := (*sbuf)[:0]
	step := pairs / bandSample
	for i, j := 0, 1; i < n-1; {
		if dx := x[j] - x[i]; dx != 0 {
			sample = append(sample, (y[j]-y[i])/dx)
		}
		for j += step; j >= n && i < n-1; {
			i++
			j -= n - i - 1 // row i holds the pairs (i, i+1) .. (i, n-1)
		}
	}
	*sbuf = sample
	m := len(sample)
	if m < bandSample/4 {
		return theilSen{}, false
	}
	// The band's ranks as fractions (pairs of equal x left out make them
	// move a little: the margin covers that and the sample's error, whose
	// standard deviation is at most √m/2 ranks: the margin is 4.5 of
	// those).
	half := c / (2 * float64(pairs))
	margin := 2*int(math.Sqrt(float64(m))) + 16
	l, h := int(float64(m)*(0.5-half))-margin, int(float64(m)*(0.5+half))+margin
	lower, upper := math.Inf(-1), math.Inf(1)
	mid := m / 2
	nth(sample, mid)
	if l > 0 {
		lower = orderStat(sample, mid, l)
	}
	if h < m {
		upper = orderStat(sample, mid, h)
	}
	buf := slopeBufs.Get().(*[]float64)
	defer slopeBufs.Put(buf)
	var p bandPass
	if increasing(x) {
		p = bandStrict(x, y, lower, upper, (*buf)[:0])
	} else {
		p = bandAny(x, y, lower, upper, (*buf)[:0])
	}
	*buf = p.band
	N := p.n
	lo, hi := senRanks(N, c)
	med := N / 2
	first := med
	if N%2 == 0 {
		first = med - 1
	}
	if min(lo, first) < p.below || max(hi, med) >= p.below+p.atLower+len(p.band)+p.atUpper {
		return theilSen{}, false
	}
	ts := theilSen{ok: true, Slope: p.rank(med)}
	if N%2 == 0 {
		// As median: the mean of the two middle values.
		ts.Slope = (p.rankBefore(med) + ts.Slope) / 2
	}
	ts.Low = p.rank(lo)
	ts.High = p.rank(hi)
	return ts, true
}

// bandPass is slopesBanded's pass over every slope: n slopes (pairs of
// distinct x), below of them less than lower, atLower equal to lower and
// atUpper equal to upper (when upper > lower), and band, the slopes
// strictly between. Slopes equal to a bound are counted, not kept: the
// many equal slopes of a straight or flat stretch of whole-MiB samples
// would otherwise fill the band and be selected among.
type bandPass struct {
	lower, upper               float64
	n, below, atLower, atUpper int
	band                       []float64
	// sel is the band's rank nth last partitioned at, -1 before.
	sel int
}

// bandStrict is the pass for strictly increasing x: every pair counts
// (x[j] - x[i] > 0 for j > i). The counts are kept in locals, not in p:
// the loop then holds them in registers.
func bandStrict(x, y []float64, lower, upper float64, band []float64) bandPass {
	n := len(x)
	y = y[:n]
	below, atLower, atUpper := 0, 0, 0
	for i := 0; i < n-1; i++ {
		xi, yi := x[i], y[i]
		xs := x[i+1:]
		ys := y[i+1:]
		ys = ys[:len(xs)] // no bounds check on ys[j] below
		// Four slopes at a time, counted at once when all four equal
		// lower, as most do in a straight run (97% of the fours on the
		// 1M-row benchmark log's runs: equalFours, a loop of its own whose
		// few values stay in registers); any other four are classified one
		// by one, in order, as the loop below does (FuzzBandStrict holds it
		// to bandAny's plain loop).
		j := 0
		for j < len(xs)-3 {
			k := equalFours(xs[j:], ys[j:], xi, yi, lower)
			atLower += k
			if j += k; j >= len(xs)-3 {
				break
			}
			s0 := (ys[j] - yi) / (xs[j] - xi)
			s1 := (ys[j+1] - yi) / (xs[j+1] - xi)
			s2 := (ys[j+2] - yi) / (xs[j+2] - xi)
			s3 := (ys[j+3] - yi) / (xs[j+3] - xi)
			j += 4
			for _, s := range [4]float64{s0, s1, s2, s3} {
				switch {
				case s == lower:
					atLower++
				case s < lower:
					below++
				case !(s <= upper):
				case s == upper:
					atUpper++
				default:
					band = append(band, s)
				}
			}
		}
		xs, ys = xs[j:], ys[j:]
		for j, xj := range xs {
			// Equal to lower first: the common slope of a straight run of
			// whole-MiB samples, which brackets the band from both sides.
			switch s := (ys[j] - yi) / (xj - xi); {
			case s == lower:
				atLower++
			case s < lower:
				below++
			case !(s <= upper): // above the band (or NaN, which no rank holds)
			case s == upper:
				atUpper++
			default:
				band = append(band, s)
			}
		}
	}
	return bandPass{lower: lower, upper: upper, n: n * (n - 1) / 2, below: below, atLower: atLower, atUpper: atUpper, band: band, sel: -1}
}

// equalFours is how many of the slopes (ys[j] - yi) / (xs[j] - xi) from
// j = 0 equal lower, taken four at a time up to the first four that do not
// all equal it (or fewer than four left): a multiple of 4.
func equalFours(xs, ys []float64, xi, yi, lower float64) int {
	ys = ys[:len(xs)]
	j := 0
	for ; j < len(xs)-3; j += 4 {
		s0 := (ys[j] - yi) / (xs[j] - xi)
		s1 := (ys[j+1] - yi) / (xs[j+1] - xi)
		s2 := (ys[j+2] - yi) / (xs[j+2] - xi)
		s3 := (ys[j+3] - yi) / (xs[j+3] - xi)
		if !(s0 == lower && s1 == lower && s2 == lower && s3 == lower) {
			break
		}
	}
	return j
}

// bandAny is bandStrict for any x: pairs of equal x are left out.
func bandAny(x, y []float64, lower, upper float64, band []float64) bandPass {
	n := len(x)
	y = y[:n]
	N, below, atLower, atUpper := 0, 0, 0, 0
	for i := 0; i < n-1; i++ {
		xi, yi := x[i], y[i]
		xs := x[i+1:]
		ys := y[i+1:]
		ys = ys[:len(xs)]
		for j, xj := range xs {
			dx := xj - xi
			if dx == 0 {
				continue
			}
			N++
			switch s := (ys[j] - yi) / dx; {
			case s == lower:
				atLower++
			case s < lower:
				below++
			case !(s <= upper):
			case s == upper:
				atUpper++
			default:
				band = append(band, s)
			}
		}
	}
	return bandPass{lower: lower, upper: upper, n: N, below: below, atLower: atLower, atUpper: atUpper, band: band, sel: -1}
}

// increasing reports whether x is strictly increasing.
func increasing(x []float64) bool {
	for i := 1; i < len(x); i++ {
		if !(x[i] > x[i-1]) {
			return false
		}
	}
	return true
}

// rank is the value sort.Float64s would put at index r among all the
// pass's slopes; r must fall among those counted at or inside the
// bounds.
func (p *bandPass) rank(r int) float64 {
	r -= p.below
	if r < p.atLower {
		return p.lower
	}
	r -= p.atLower
	if r >= len(p.band) {
		return p.upper
	}
	if p.sel < 0 {
		p.sel = r
		return nth(p.band, r)
	}
	return orderStat(p.band, p.sel, r)
}

// rankBefore is rank(r-1) right after rank(r) was the first rank
// asked: when r fell inside the band, the greatest of the values nth put
// before it.
func (p *bandPass) rankBefore(r int) float64 {
	k := r - p.below - p.atLower
	if k < 1 || k != p.sel {
		return p.rank(r - 1)
	}
	prev := p.band[0]
	for _, v := range p.band[1:k] {
		prev = max(prev, v)
	}
	return prev
}

// slopeBufs recycles fitTheilSen's slopes (1 MiB for 512 points): a
// series split into runs is fitted many times.
var slopeBufs = sync.Pool{New: func() any { return new([]float64) }}

// sampleBufs recycles slopesBanded's samples of slopes (32 KiB each).
var sampleBufs = sync.Pool{New: func() any { b := make([]float64, 0, bandSample+1); return &b }}

// orderStat is the value sort.Float64s would put at index k of a, which
// nth has partitioned at index s (a[:s] <= a[s] <= a[s+1:]).
func orderStat(a []float64, s, k int) float64 {
	switch {
	case k < s:
		return nth(a[:s], k)
	case k > s:
		return nth(a[s+1:], k-s-1)
	}
	return a[s]
}

// ols is the ordinary least-squares line and its coefficient of
// determination (1 = every point on the line). A series without variance
// has no R² (nothing to explain): 0.
func ols(x, y []float64) (slope, r2 float64) {
	if len(x) < 2 {
		return 0, 0
	}
	alpha, beta := stat.LinearRegression(x, y, nil, false)
	r2 = stat.RSquared(x, y, nil, alpha, beta)
	if math.IsNaN(r2) || math.IsInf(r2, 0) {
		r2 = 0
	}
	if math.IsNaN(beta) || math.IsInf(beta, 0) {
		beta = 0
	}
	return beta, r2
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// medianOf is the median of v, which it leaves as it is.
func medianOf(v []float64) float64 {
	return medianSelect(append([]float64(nil), v...))
}

// noiseMinValues is the fewest values noise estimates the noise of.
const noiseMinValues = 8

// noise is a robust estimate of the standard deviation of sample noise:
// the median absolute deviation of first differences, scaled for a normal
// distribution and for differencing (a difference has twice the variance).
// Steps and drops are a few differences among many and do not move it.
// It is 0 (unknown) for fewer than noiseMinValues values: a step moves
// one difference and a one-sample spike two, and among fewer than 5
// differences those are half or more of them, so the change would read
// as noise as large as itself (100, 5000, 5000 MiB: σ 2.5 GiB) and the
// series as flat; among 5 or 6, memory held and given back twice (fb
// 239, 74, 7, 478, 67, 7 MiB: σ 103 MiB) reads as noise as well. 8 is
// also the fewest samples a trend gives a time to OOM from (MinSamples).
func noise(y []float64) float64 {
	if len(y) < noiseMinValues {
		return 0
	}
	d := make([]float64, len(y)-1)
	for i := range d {
		d[i] = y[i+1] - y[i]
	}
	m := medianSelect(d)
	for i := range d {
		d[i] = math.Abs(d[i] - m)
	}
	return 1.4826 * medianSelect(d) / math.Sqrt2
}

// reduce bins a long series into at most maxPoints points of equal time
// width: the median x and median y of each non-empty bin. A robust
// summary keeps Theil–Sen and the change-point search fast on a day of
// samples without letting single spikes through.
func reduce(x, y []float64, maxPoints int) ([]float64, []float64) {
	n := len(x)
	if n <= maxPoints {
		return x, y
	}
	span := x[n-1] - x[0]
	var rx, ry []float64
	// A bin is [from, i) of x and y; its medians are read, not selected,
	// where its values ascend (its times always do, its used memory in a
	// ramp): xUp and yUp. Selection works on bx and by, copies.
	var bx, by []float64
	xUp, yUp := true, true
	bin, from := 0, 0
	for i := 0; i <= n; i++ {
		b := maxPoints // past the last sample: the last bin ends
		if i < n {
			b = min(int(float64(maxPoints)*(x[i]-x[0])/span), maxPoints-1)
		}
		if i > from && b == bin {
			xUp = xUp && ascends(x[i-1], x[i])
			yUp = yUp && ascends(y[i-1], y[i])
			continue
		}
		if i > from {
			if xUp {
				rx = append(rx, medianSorted(x[from:i]))
			} else {
				bx = append(bx[:0], x[from:i]...)
				rx = append(rx, medianSelect(bx))
			}
			if yUp {
				ry = append(ry, medianSorted(y[from:i]))
			} else {
				by = append(by[:0], y[from:i]...)
				ry = append(ry, medianSelect(by))
			}
		}
		bin, from, xUp, yUp = b, i, true, true
	}
	return rx, ry
}

// ascends reports whether b may follow a in a sorted run whose median
// medianSorted reads as medianSelect selects it: b is greater, or equal
// to the bit (a -0 beside a 0 could be ordered either way).
func ascends(a, b float64) bool {
	return b > a || b == a && math.Float64bits(a) == math.Float64bits(b)
}

// medianSorted is medianSelect(v) for v in ascending order, equal values
// equal to the bit: the middle value, or the mean of the two middle
// values, computed as medianSelect computes it.
func medianSorted(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// changePoints finds where the level of y shifts: binary segmentation of
// a piecewise-constant mean, splitting greedily where the squared error
// falls most, while the fall exceeds penalty and the shift is at least
// minJump, up to maxChanges. It returns the indices where new segments
// begin, ascending.
func changePoints(y []float64, penalty, minJump float64, maxChanges int) []int {
	n := len(y)
	s1 := make([]float64, n+1)
	s2 := make([]float64, n+1)
	for i, v := range y {
		s1[i+1] = s1[i] + v
		s2[i+1] = s2[i] + v*v
	}
	// sse and mean are top-level functions of the prefix sums, inlined
	// into best's loop: as closures they were calls, each reading s1 and
	// s2 through the closure (168 M of the 1M-row benchmark log's 4.57 G
	// instructions).
	sse := func(a, b int) float64 { return segSSE(s1, s2, a, b) }
	type seg struct {
		a, b  int
		split int
		gain  float64
	}
	best := func(a, b int) seg {
		sg := seg{a: a, b: b, split: -1}
		total := sse(a, b)
		for k := a + 1; k < b; k++ {
			if math.Abs(segMean(s1, k, b)-segMean(s1, a, k)) < minJump {
				continue
			}
			if g := total - segSSE(s1, s2, a, k) - segSSE(s1, s2, k, b); g > sg.gain {
				sg.gain, sg.split = g, k
			}
		}
		return sg
	}
	// The segment to split next is the one of greatest gain, the first in
	// segs among equal gains: found in a heap of the candidates (gain
	// above the penalty), not by a scan of every segment per split.
	segs := []seg{best(0, n)}
	var q splitQueue
	push := func(i int) {
		if s := segs[i]; s.split >= 0 && s.gain > penalty {
			q.push(i, s.gain)
		}
	}
	push(0)
	var cps []int
	for len(cps) < maxChanges && len(q) > 0 {
		bi := q.pop()
		s := segs[bi]
		cps = append(cps, s.split)
		segs[bi] = best(s.a, s.split)
		segs = append(segs, best(s.split, s.b))
		push(bi)
		push(len(segs) - 1)
	}
	sort.Ints(cps)
	return cps
}

// segSSE is the squared error about their mean of the values [a, b)
// whose prefix sums are s1 and, of their squares, s2.
func segSSE(s1, s2 []float64, a, b int) float64 {
	m := float64(b - a)
	s := s1[b] - s1[a]
	return max(0, s2[b]-s2[a]-s*s/m) // the builtin: math.Max is not inlined
}

// segMean is the mean of the values [a, b) whose prefix sums are s1.
func segMean(s1 []float64, a, b int) float64 { return (s1[b] - s1[a]) / float64(b-a) }

// splitQueue is a binary heap of segments (their index in changePoints'
// segs and their gain), greatest gain first, then lowest index.
type splitQueue []splitCand

type splitCand struct {
	i    int
	gain float64
}

func (c splitCand) before(d splitCand) bool {
	return c.gain > d.gain || c.gain == d.gain && c.i < d.i
}

func (q *splitQueue) push(i int, gain float64) {
	h := append(*q, splitCand{i, gain})
	for k := len(h) - 1; k > 0; {
		p := (k - 1) / 2
		if !h[k].before(h[p]) {
			break
		}
		h[k], h[p] = h[p], h[k]
		k = p
	}
	*q = h
}

func (q *splitQueue) pop() int {
	h := *q
	top := h[0].i
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for k := 0; ; {
		c := 2*k + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(h[k]) {
			break
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
	*q = h
	return top
}

func clampInt(v, lo, hi int) int {
	return max(lo, min(v, hi))
}
