package snapshot

import "testing"

// A leak's growth stopped when the iterations without a rise at the end of
// its curve are at least minStopped and more than any run without a rise
// between two of its rises: a leak every k-th iteration has not stopped
// between two of its own rises.
func TestStoppedRising(t *testing.T) {
	for _, c := range []struct {
		v           []int64
		last, since int
		flat        bool
	}{
		{[]int64{0, 1, 2, 3, 4, 5, 5, 5, 5, 5}, 5, 4, true},  // s32's plateau10
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, 0, false}, // still rising
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 8}, 0, 0, false}, // one flat: fewer than minStopped
		{[]int64{0, 0, 1, 1, 1, 2, 2, 2, 3, 3}, 0, 0, false}, // every 3rd: a gap of 2 before, 1 after
		{[]int64{0, 1, 1, 1, 2, 2, 2, 3, 3, 3}, 0, 0, false}, // every 3rd: 2 after, as between
		{[]int64{0, 1, 1, 2, 2, 3, 3, 3, 3, 3}, 5, 4, true},  // every 2nd, then 4 without
		{[]int64{0, 1, 2, 3, 4, 5, 4, 5, 4, 4}, 7, 2, false}, // no rise since, but not flat
	} {
		last, since, flat := stoppedRising(c.v)
		if last != c.last || since != c.since || flat != c.flat {
			t.Errorf("%v: %d %d %v; want %d %d %v", c.v, last, since, flat, c.last, c.since, c.flat)
		}
	}
}
