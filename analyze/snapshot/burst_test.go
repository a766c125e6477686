package snapshot

import "testing"

// TestHeldSinceOneRise: a size is a one-time burst held to the end only
// when its live bytes at the iteration starts rose once, or were made
// before the first start, and never fell, the end included; a buffer replaced by a bigger one falls, and memory
// made after the last start (the unfinished iteration) is not a burst.
func TestHeldSinceOneRise(t *testing.T) {
	for _, c := range []struct {
		v    []int64
		want bool
	}{
		{[]int64{0, 32, 32, 32, 32}, true},   // a workspace made in the first iteration
		{[]int64{0, 0, 0, 32, 32, 32}, true}, // made once, later
		{[]int64{0, 32, 0, 0, 0}, false},     // a cache size replaced by a bigger one
		{[]int64{0, 0, 0, 0, 32}, false},     // made in the last, unfinished, iteration
		{[]int64{0, 32, 64, 96, 96}, false},  // grows
		{[]int64{0, 0, 0, 0}, false},         // never held
		{[]int64{0, 32, 32, 16}, false},      // partly freed at the end
		{[]int64{32, 32, 32, 32}, true},      // made before the first iteration, held
		{[]int64{32, 32, 32, 16}, false},     // the same, partly freed at the end
	} {
		if got := heldSinceOneRise(c.v); got != c.want {
			t.Errorf("heldSinceOneRise(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestLateOnset: a growth measured from the end of a flat start spanning
// at least a quarter of the measured intervals; the first iteration may
// set the level. A leak growing from the start, a periodic one, or a
// curve flat to its end have no onset.
func TestLateOnset(t *testing.T) {
	for _, c := range []struct {
		v    []int64
		want int
	}{
		{[]int64{0, 0, 0, 0, 0, 1, 2, 3, 4}, 4},       // flat for 4 of 8 intervals
		{[]int64{0, 5, 5, 5, 5, 6, 7, 8, 9}, 4},       // the first iteration set the level
		{[]int64{0, 0, 1, 2, 3, 4, 5, 6, 7}, 0},       // flat for 1 of 8: from the start
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8}, 0},       // grows from the start
		{[]int64{0, 0, 0, 0, 0, 0, 0, 0, 0}, 0},       // never grows
		{[]int64{0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2}, 0}, // every 6: flat for 1 of 10
		{[]int64{0, 0}, 0},
		{[]int64{0, 2, 4, 6, 8}, 0}, // the first rise is no flat start
		{[]int64{0, 2, 2, 4, 6}, 2}, // flat for 1 of 4 after the first
	} {
		if got := lateOnset(c.v); got != c.want {
			t.Errorf("lateOnset(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}

// TestSettledInFirst: a key the first iteration settled holds at every
// iteration start from the second on what it held at the second, and at
// the end no more; changes are recorded where a key was touched, so a
// recorded value may repeat the one before.
func TestSettledInFirst(t *testing.T) {
	const n = 5 // boundaries 0..4, the end is 5
	for _, c := range []struct {
		name string
		ch   []change
		want bool
	}{
		{"a workspace made in the first iteration", []change{{1, 32}}, true},
		{"a step's variable replaced every step, freed at the end", []change{{1, 8}, {2, 8}, {3, 8}, {4, 8}, {5, 0}}, true},
		{"made before the first start, held", []change{{0, 8}}, true},
		{"never held at a start", nil, true},
		{"made in a later iteration", []change{{3, 32}}, false},
		{"a list growing every step", []change{{1, 8}, {2, 16}, {3, 24}, {4, 32}}, false},
		{"freed in the first iteration", []change{{0, 8}, {1, 0}}, false},
		{"made after the last start (a buffer's newest)", []change{{5, 40}}, false},
		{"replaced by a bigger one after the last start", []change{{1, 8}, {5, 16}}, false},
	} {
		if got := settledInFirst(c.ch, n); got != c.want {
			t.Errorf("%s: settledInFirst(%v) = %v, want %v", c.name, c.ch, got, c.want)
		}
	}
}

// TestRiseSpan: the second and the last boundary at which the curve rose,
// after from.
func TestRiseSpan(t *testing.T) {
	for _, c := range []struct {
		v            []int64
		from         int
		second, last int
	}{
		{[]int64{0, 9, 10, 11, 12}, 0, 2, 4},                         // every iteration; the first rise carried 8 more
		{[]int64{0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12}, 0, 7, 11}, // every 4th
		{[]int64{0, 1, 1, 1, 2, 3, 4}, 3, 5, 6},                      // from a late onset
		{[]int64{0, 5, 5, 5}, 0, 0, 0},                               // one rise
		{[]int64{3, 2, 1}, 0, 0, 0},                                  // none
	} {
		if s, l := riseSpan(c.v, c.from); s != c.second || l != c.last {
			t.Errorf("riseSpan(%v, %d) = %d, %d, want %d, %d", c.v, c.from, s, l, c.second, c.last)
		}
	}
}
