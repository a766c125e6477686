package snapshot

import "testing"

// TestReplacedSinceRareMisses: a site of 1 MiB blocks whose live bytes
// rise at the first 7 of 12 iteration starts (so in the second half) and
// then stay at 7 MiB. Blocks it holds at the end made after the last rise
// (iteration 8's start, boundary 7) are what replacedSince weighs: a cache
// that rarely misses makes few of them, spread out, each in place of an
// older entry.
func TestReplacedSinceRareMisses(t *testing.T) {
	const mib = 1 << 20
	it := &iterations{}
	for b := 0; b < 12; b++ {
		it.pos = append(it.pos, 10*b)
		it.ord = append(it.ord, b)
	}
	flat := make([]int64, 13) // boundaries 0-11, then the end
	for b := range flat {
		flat[b] = int64(min(b, 7)) * mib
	}
	older := []int{5, 15, 25, 35, 45} // made while rising, still held
	kept := func(at ...int) []keptAlloc {
		var ks []keptAlloc
		for _, p := range append(append([]int{}, older...), at...) {
			ks = append(ks, keptAlloc{pos: p, size: mib, block: mib, inTrace: true})
		}
		return ks
	}
	for _, c := range []struct {
		name  string
		v     []int64
		at    []int // positions of the survivors made after the last rise
		iters int   // 0: no replacement
	}{
		// Iterations 8 and 10 of 12 each made a survivor, and iteration
		// 11 (complete) none: two replacements, the cache's.
		{"spread", flat, []int{75, 95}, 2},
		// Survivors of the two iterations before the last only: a window
		// of the last 2 results beside a leak that stopped leaves the same.
		{"window", flat, []int{95, 105}, 0},
		// One survivor: a step's variable replaced by its like.
		{"one", flat, []int{75}, 0},
		// The live bytes fell and did not come back: not each survivor in
		// place of an older block alone.
		{"not flat", append(append([]int64{}, flat[:10]...), 6*mib, 6*mib, 7*mib), []int{75, 95}, 0},
	} {
		curveOf := func(int64) []int64 { return c.v }
		r := it.replacedSince(c.v, kept(c.at...), 4, curveOf)
		if r.iters != c.iters || c.iters > 0 && (r.count != len(c.at) || r.since != 8) {
			t.Errorf("%s: %+v, want %d iterations (since 8, %d blocks)", c.name, r, c.iters, len(c.at))
		}
	}
}
