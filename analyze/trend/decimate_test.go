package trend

import (
	"math"
	"testing"
)

// A series of a million samples keeps at most maxSeriesPoints points (and
// no more memory than that), each the mean of equally many samples:
// for a straight line of equally spaced samples the means lie on the same
// line, so the least-squares slope through the points is the samples'.
func TestDecimatedIsBounded(t *testing.T) {
	const n = 1_000_000
	const slope = 3.5 // bytes per µs
	var d decimated
	for i := 0; i < n; i++ {
		tt := int64(i) * 250_000
		d.add(tt, 1e9+slope*float64(tt))
	}
	// grow doubles up to the bound, and no further: a series holds 16
	// bytes a point, 2 MiB at most, however long it runs.
	if len(d.t) > maxSeriesPoints || cap(d.t) > maxSeriesPoints || cap(d.v) > maxSeriesPoints {
		t.Fatalf("%d points (capacity %d, %d), want at most %d", len(d.t), cap(d.t), cap(d.v), maxSeriesPoints)
	}
	d.flush()
	// 1,000,000 samples: halved at 131,072, 262,144 and 524,288 samples,
	// so 8 samples a point; 1,000,000/8 = 125,000 points exactly.
	if d.stride != 8 || len(d.t) != n/8 {
		t.Fatalf("stride %d, %d points; want 8 and %d", d.stride, len(d.t), n/8)
	}
	var sx, sy, sxx, sxy float64
	for i := range d.t {
		x, y := float64(d.t[i]), d.v[i]
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	m := float64(len(d.t))
	got := (m*sxy - sx*sy) / (m*sxx - sx*sx)
	if math.Abs(got-slope) > 1e-6*slope {
		t.Errorf("slope through the points %v, want %v", got, slope)
	}
	// Every point is the mean of its 8 samples: point k at sample 8k+3.5.
	for _, k := range []int{0, 1, len(d.t) / 2, len(d.t) - 1} {
		if want := int64(8*k)*250_000 + 3*250_000 + 125_000; d.t[k] != want {
			t.Errorf("point %d at %d µs, want %d", k, d.t[k], want)
		}
	}
}
