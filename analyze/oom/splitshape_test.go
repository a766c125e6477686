package oom

import (
	"testing"

	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// splitShape calls split memory pinned when one block holds at least half
// of it, scattered below; stats (no largest block, -1) are pinned only
// when they count one split block.
func TestSplitShape(t *testing.T) {
	for _, c := range []struct {
		split, largest int64
		blocks         int
		want           string
	}{
		{3 << 30, 3 << 30, 1, ShapePinned},
		{2 << 30, 1 << 30, 3, ShapePinned},         // exactly half
		{2 << 30, 1<<30 - 1, 3, ShapeScattered},    // just under half
		{1567 << 20, 8 << 20, 567, ShapeScattered}, // fragmentation_oom's shape
		{1 << 30, -1, 1, ShapePinned},              // stats: one split block
		{1 << 30, -1, 2, ShapeUnknown},             // stats: sizes unknown
		{1 << 30, -1, 0, ShapeUnknown},             // stats without the count
	} {
		s := snapshot.PoolState{InactiveSplitBytes: c.split, LargestSplitBytes: c.largest, InactiveSplitBlocks: c.blocks}
		if got := splitShape(s); got != c.want {
			t.Errorf("split %d, largest %d, %d blocks: %s, want %s", c.split, c.largest, c.blocks, got, c.want)
		}
	}
}
