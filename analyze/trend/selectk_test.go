package trend

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
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
