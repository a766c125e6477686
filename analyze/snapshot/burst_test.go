package snapshot

import "testing"

// TestHeldSinceOneRise: a size is a one-time burst held to the end only
// when its live bytes at the iteration starts rose once and never fell,
// the end included; a buffer replaced by a bigger one falls, and memory
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
	} {
		if got := heldSinceOneRise(c.v); got != c.want {
			t.Errorf("heldSinceOneRise(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
