package trend

import (
	"math/bits"
	"slices"
)

// nth rearranges a so that a[k] is the value sort.Float64s would put at
// index k, every value before it no greater and every value after it no
// smaller, and returns a[k]. It is an introselect: a quickselect with a
// three-way partition (the many equal slopes of a piecewise-flat series
// cost one pass) that sorts what is left when a bad run of pivots has
// used up its budget of passes, so it is O(len(a)) on average and
// O(len(a) log len(a)) at worst, whatever the input. The values must not
// be NaN (slopes and residuals of finite samples are not).
func nth(a []float64, k int) float64 {
	lo, hi := 0, len(a)
	budget := 2 * bits.Len(uint(len(a)))
	for hi-lo > 16 {
		if budget == 0 {
			slices.Sort(a[lo:hi])
			return a[k]
		}
		budget--
		p := median3(a[lo], a[lo+(hi-lo)/2], a[hi-1])
		// [lo, lt) < p, [lt, i) == p, [gt, hi) > p.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := a[i]; {
			case v < p:
				a[lt], a[i] = v, a[lt]
				lt++
				i++
			case v > p:
				gt--
				a[gt], a[i] = v, a[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return p
		}
	}
	slices.Sort(a[lo:hi])
	return a[k]
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		return a
	}
	return b
}

// medianSelect is the median of v (as median of the sorted values),
// rearranging v.
func medianSelect(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	m := nth(v, n/2)
	if n%2 == 1 {
		return m
	}
	// The other middle value is the greatest of those before n/2.
	lower := v[0]
	for _, x := range v[1 : n/2] {
		lower = max(lower, x)
	}
	return (lower + m) / 2
}
