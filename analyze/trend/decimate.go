package trend

import "fmt"

// maxSeriesPoints bounds the points one NVML series keeps: 131,072 points
// (16 bytes each, 2 MiB a series with its capacity). A week of 1 Hz
// samples is 604,800; nvidia-smi -lms 250 for a day is 345,600.
const maxSeriesPoints = 1 << 17

// decimated holds a series of (time, value) samples in at most
// maxSeriesPoints points. Past that, consecutive points are averaged in
// pairs and later samples in groups of as many, so that every point is the
// mean time and mean value of stride consecutive samples. A mean keeps a
// linear trend's slope and level (a least-squares line through the means
// of equal groups is the line through the samples, for a straight series);
// what averaging hides (peaks, first and last values, the sample count)
// series keeps exactly beside it.
type decimated struct {
	t      []int64
	v      []float64
	stride int // samples per point, a power of two; 0 means 1
	n      int // samples in the pending group
	t0, dt int64
	sv     float64
}

func (d *decimated) add(t int64, v float64) {
	if d.stride <= 1 {
		d.push(t, v)
		return
	}
	if d.n == 0 {
		d.t0, d.dt, d.sv = t, 0, 0
	}
	d.dt += t - d.t0
	d.sv += v
	d.n++
	if d.n == d.stride {
		d.push(d.t0+d.dt/int64(d.n), d.sv/float64(d.n))
		d.n = 0
	}
}

func (d *decimated) push(t int64, v float64) {
	if len(d.t) == cap(d.t) {
		d.grow()
	}
	d.t = append(d.t, t)
	d.v = append(d.v, v)
	if len(d.t) < maxSeriesPoints {
		return
	}
	// Halve: each pair of points becomes its mean (len is even here).
	h := len(d.t) / 2
	for i := 0; i < h; i++ {
		a, b := d.t[2*i], d.t[2*i+1]
		d.t[i] = a + (b-a)/2
		d.v[i] = (d.v[2*i] + d.v[2*i+1]) / 2
	}
	d.t, d.v = d.t[:h], d.v[:h]
	d.stride = max(d.stride, 1) * 2
}

// grow doubles the capacity of t and v, up to maxSeriesPoints: append
// grows a large slice by a quarter at a time, copying a series about five
// times over on its way to the bound; doubling copies it about once, and
// a series that reaches the bound holds exactly maxSeriesPoints.
func (d *decimated) grow() {
	n := min(max(2*cap(d.t), 8), maxSeriesPoints)
	if n <= len(d.t) { // only flush appends past the bound
		n = len(d.t) + 1
	}
	d.t = append(make([]int64, 0, n), d.t...)
	d.v = append(make([]float64, 0, n), d.v...)
}

// flush ends the pending group: its mean becomes the last point.
func (d *decimated) flush() {
	if d.n > 0 {
		d.t = append(d.t, d.t0+d.dt/int64(d.n))
		d.v = append(d.v, d.sv/float64(d.n))
		d.n = 0
	}
}

// decimationWarning says, for a series that was decimated, what of its
// analysis rests on means; "" otherwise.
func decimationWarning(s *series) string {
	if s.used.stride <= 1 {
		return ""
	}
	return fmt.Sprintf("%s: %d samples of one series (%s) were kept as %d means of %d consecutive samples each, to bound memory: "+
		"the sample count, first, last, lowest and peak values are exact; the trend fit, its window, change points and profile use the means",
		s.key.input, s.raw, seriesName(s), len(s.t), s.used.stride)
}

func seriesName(s *series) string {
	switch {
	case s.key.hasPID:
		return fmt.Sprintf("pid %d", s.key.pid)
	case s.key.uuid != "":
		return "GPU " + s.key.uuid
	case s.key.hasGPU:
		return fmt.Sprintf("GPU %d", s.key.gpu)
	}
	return "GPU"
}
