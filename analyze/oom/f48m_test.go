package oom

import (
	"strings"
	"testing"
)

// TestCapacityBesideSlightFragmentation: R-Drop#9's fairseq OOM (68 MiB
// asked of a 15.90 GiB GPU with 55.75 MiB free; 14.88 GiB reserved, 14.76
// GiB allocated) has 122.88 MiB reserved but unallocated: contiguous, it
// would have held the request (fragmentation), but it is 0.8% of the
// reserve, all that defragmenting could gain: the job fills the GPU, and
// capacity stands beside fragmentation, saying how little is to gain.
func TestCapacityBesideSlightFragmentation(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/rdrop9_fairseq_warning_prefix_glued_summary_cut.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if got := strings.Join(causeNames(r), ","); got != CauseFragmentation+","+CauseCapacity {
		t.Fatalf("causes %s, want fragmentation, capacity", got)
	}
	c := hasCause(r, CauseCapacity)
	if !strings.Contains(c.Evidence, "the 122.88 MiB reserved but unallocated is 0.8% of the 14.88 GiB reserved") ||
		c.Numbers["reserved_unallocated_bytes"] != r.ReservedUnallocatedBytes || strings.Contains(c.Advice, "no cause above explains it alone") {
		t.Errorf("capacity %+v", c)
	}
}
