package trend

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// nth and medianSelect must give the very values a sort gives: the
// verdicts rest on them (slopes, intervals, medians).
func checkSelect(t *testing.T, v []float64) {
	t.Helper()
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	if got, want := medianSelect(slices.Clone(v)), median(sorted); got != want && !(got == 0 && want == 0) {
		t.Fatalf("medianSelect(%v) = %v, want %v", v, got, want)
	}
	for _, k := range []int{0, len(v) / 3, len(v) / 2, len(v) - 1} {
		if k < 0 || k >= len(v) {
			continue
		}
		a := slices.Clone(v)
		if got := nth(a, k); got != sorted[k] {
			t.Fatalf("nth(%v, %d) = %v, want %v", v, k, got, sorted[k])
		}
		for i := range a {
			if i < k && a[i] > a[k] || i > k && a[i] < a[k] {
				t.Fatalf("nth(%v, %d) left %v not partitioned at %d", v, k, a, i)
			}
		}
		mid := len(a) / 2
		b := slices.Clone(v)
		nth(b, mid)
		if got := orderStat(b, mid, k); got != sorted[k] {
			t.Fatalf("orderStat(%v, %d) = %v, want %v", v, k, got, sorted[k])
		}
	}
}

func TestNthAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 16, 17, 100, 1000, 130816} {
		for _, gen := range []func(int) float64{
			func(int) float64 { return rng.NormFloat64() },
			func(int) float64 { return float64(rng.IntN(3)) }, // many equal values: a flat series' slopes
			func(i int) float64 { return float64(i) },         // sorted
			func(i int) float64 { return float64(-i) },        // reversed
			func(i int) float64 { return float64(i % 7) },     // organ pipes
		} {
			v := make([]float64, n)
			for i := range v {
				v[i] = gen(i)
			}
			checkSelect(t, v)
		}
	}
}

// FuzzNth: any finite values, as 8-byte floats.
func FuzzNth(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(make([]byte, 8*40))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v []float64
		for ; len(b) >= 8; b = b[8:] {
			x := math.Float64frombits(binary.LittleEndian.Uint64(b))
			if math.IsNaN(x) {
				continue
			}
			v = append(v, x)
		}
		if len(v) == 0 {
			return
		}
		checkSelect(t, v)
	})
}

// slopesBanded must give slopesAll's very values wherever it answers,
// and answer on the series fits meet (long, straight or not).
func TestBandedSlopesAgainstAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := 1.959963984540054 * math.Sqrt(512*511*1029/18.0)
	for name, gen := range map[string]func(i int) (float64, float64){
		"line":       func(i int) (float64, float64) { return float64(i) * 0.25, float64(i) * mib },
		"noisy line": func(i int) (float64, float64) { return float64(i), float64(i)*mib + rng.NormFloat64()*8*mib },
		"noise":      func(i int) (float64, float64) { return float64(i), rng.NormFloat64() * mib },
		"flat":       func(i int) (float64, float64) { return float64(i), 5 * mib },
		"steps":      func(i int) (float64, float64) { return float64(i), float64(i/100) * 64 * mib },
		"sawtooth":   func(i int) (float64, float64) { return float64(i), float64(i%37) * mib },
		"equal x":    func(i int) (float64, float64) { return float64(i / 3), float64(i%5) * mib },
		"one x":      func(i int) (float64, float64) { return 7, float64(i) },
		// A whole-MiB ramp with a few spikes: most slopes equal one value,
		// which both brackets of the band then are.
		"ramp, spikes": func(i int) (float64, float64) {
			if i%97 == 0 {
				return float64(i) * 0.25, float64(i+4000) * mib
			}
			return float64(i) * 0.25, float64(i) * mib
		},
		"ramp, one repeated time": func(i int) (float64, float64) { return float64(max(i, 1)) * 0.25, float64(i) * mib },
	} {
		for _, n := range []int{100, 200, 511, 512} {
			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i], y[i] = gen(i)
			}
			cn := c * math.Sqrt(float64(n)*float64(n-1)*float64(2*n+5)/(512*511*1029))
			all := slopesAll(x, y, cn)
			got, ok := slopesBanded(x, y, cn)
			if !ok {
				if n == 512 && name != "one x" && name != "equal x" {
					t.Errorf("%s, %d points: the banded selection gave up", name, n)
				}
				continue
			}
			if got != all {
				t.Errorf("%s, %d points: banded %+v, all %+v", name, n, got, all)
			}
		}
	}
}

// FuzzBandedSlopes: series of 182 to 600 points (182 is the fewest the
// banded selection takes), of values drawn from few or many levels, at
// times that may repeat.
func FuzzBandedSlopes(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(512))
	f.Add(uint64(2), uint8(3), uint16(200))
	f.Add(uint64(3), uint8(7), uint16(600))
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8, n uint16) {
		if n < 182 || n > 600 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(kind)))
		x, y := make([]float64, n), make([]float64, n)
		levels := 1 + int(kind&7)*int(kind&7)*8
		t0 := 0.0
		for i := range x {
			switch {
			case kind&8 == 0:
				t0 += float64(1 + rng.IntN(4)) // strictly increasing: bandStrict
			case rng.IntN(3) == 0:
				t0 += float64(rng.IntN(4))
			}
			x[i] = t0
			y[i] = float64(rng.IntN(levels))*mib + float64(i)*float64(kind>>4)*mib
		}
		c := 1.959963984540054 * math.Sqrt(float64(n)*float64(n-1)*float64(2*int(n)+5)/18)
		if got, ok := slopesBanded(x, y, c); ok {
			if all := slopesAll(x, y, c); got != all {
				t.Fatalf("banded %+v, all %+v", got, all)
			}
		}
	})
}

// FuzzBandStrict holds bandStrict (four slopes at a time) to bandAny
// (one at a time, the plain loop) on strictly increasing times, where
// both take every pair: the same counts and the same band, in the same
// order. The brackets are drawn among the slopes, so that slopes equal
// to them, below, between and above all occur.
func FuzzBandStrict(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(37), uint16(3), uint16(9))
	f.Add(uint64(2), uint8(0x13), uint16(64), uint16(0), uint16(0))
	f.Add(uint64(3), uint8(0x27), uint16(5), uint16(1), uint16(2))
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8, n, lo, hi uint16) {
		if n < 2 || n > 300 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(kind)))
		x, y := make([]float64, n), make([]float64, n)
		levels := 1 + int(kind&7)*int(kind&7)
		t0 := 0.0
		for i := range x {
			t0 += float64(1 + rng.IntN(3))
			x[i] = t0
			y[i] = float64(rng.IntN(levels))*mib + float64(i)*float64(kind>>4)*mib
		}
		var slopes []float64
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
		lower, upper := slopes[int(lo)%len(slopes)], slopes[int(hi)%len(slopes)]
		if kind&8 != 0 {
			upper = math.Inf(1)
		}
		got := bandStrict(x, y, lower, upper, nil)
		want := bandAny(x, y, lower, upper, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("bandStrict %+v\nbandAny %+v", got, want)
		}
	})
}

// reduceSelect is reduce as it was before binMedian: every bin's medians
// selected. FuzzReduce holds reduce to it.
func reduceSelect(x, y []float64, maxPoints int) ([]float64, []float64) {
	n := len(x)
	if n <= maxPoints {
		return x, y
	}
	span := x[n-1] - x[0]
	var rx, ry, bx, by []float64
	bin := -1
	flush := func() {
		if len(bx) > 0 {
			rx = append(rx, medianSelect(bx))
			ry = append(ry, medianSelect(by))
		}
		bx, by = bx[:0], by[:0]
	}
	for i := range x {
		b := min(int(float64(maxPoints)*(x[i]-x[0])/span), maxPoints-1)
		if b != bin {
			flush()
			bin = b
		}
		bx = append(bx, x[i])
		by = append(by, y[i])
	}
	flush()
	return rx, ry
}

// FuzzReduce: reduce, which reads the median of a bin whose values ascend
// rather than select it, gives reduceSelect's points to the bit, on
// series of ramps, steps and noise, with ties, signed zeros and times
// that stand still or go back.
func FuzzReduce(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(4000), uint8(64))
	f.Add(uint64(2), uint8(3), uint16(1500), uint8(7))
	f.Add(uint64(3), uint8(0x97), uint16(900), uint8(200))
	f.Add(uint64(4), uint8(0xf2), uint16(5000), uint8(16))
	f.Add(uint64(5), uint8(0x0c), uint16(3000), uint8(100)) // signed zeros
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8, n uint16, points uint8) {
		if n > 20000 || points == 0 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(kind)))
		x, y := make([]float64, n), make([]float64, n)
		t0 := 0.0
		for i := range x {
			switch kind & 3 {
			case 0:
				t0 += 0.25 // nvidia-smi -lms 250
			case 1:
				t0 += float64(rng.IntN(3)) // times that stand still
			case 2:
				t0 += float64(rng.IntN(5)) - 1 // and go back
			default:
				t0 += rng.Float64()
			}
			x[i] = t0
			switch kind >> 2 & 3 {
			case 0:
				y[i] = float64(i%4096) * mib // a sawtooth of ramps
			case 1:
				y[i] = float64(rng.IntN(4)) * mib // steps with ties
			case 2:
				y[i] = rng.NormFloat64()
			default:
				y[i] = math.Copysign(0, float64(rng.IntN(2))-0.5) // signed zeros
			}
		}
		gx, gy := reduce(x, y, int(points))
		wx, wy := reduceSelect(slices.Clone(x), slices.Clone(y), int(points))
		if len(gx) != len(wx) || len(gy) != len(wy) {
			t.Fatalf("%d and %d points, want %d and %d", len(gx), len(gy), len(wx), len(wy))
		}
		for i := range gx {
			if math.Float64bits(gx[i]) != math.Float64bits(wx[i]) || math.Float64bits(gy[i]) != math.Float64bits(wy[i]) {
				t.Fatalf("point %d: (%v, %v), want (%v, %v)", i, gx[i], gy[i], wx[i], wy[i])
			}
		}
	})
}
