package oom

import (
	"strings"
	"testing"
)

// W1 (session 47, tester t47a): a PyTorch 2.1 message ("total capacty")
// cannot print a per-process limit, so none is shown. Fooocus#1902: 10 MiB
// asked with 1.57 GiB free and 154.45 MiB reserved but unallocated. With
// room on the GPU the allocator reserves a new segment when no free block
// fits; the split blocks stop it only where a limit refused that segment,
// which the paste does not show. Was: fragmentation, "so a per-process
// limit ... kept PyTorch from reserving a new 10.00 MiB segment". Right:
// no cause, and the notes say a limit may have refused it, as the same
// message form with nothing unallocated gets (OOTDiffusion#167).
func TestF47oUnprintedLimitIsNoCause(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/f47o_frag_unprinted_limit_fooocus1902.txt")
	notes := strings.Join(r.Notes, " ")
	if len(r.Causes) != 0 {
		t.Errorf("causes %v (%+v), want none: the paste shows no limit", causeNames(r), r.Causes)
	}
	if !strings.Contains(notes, "only if a per-process limit") || !strings.Contains(notes, "PyTorch 2.1's message does not print") || !strings.Contains(notes, "may have refused it") {
		t.Errorf("notes %q; want the split blocks' note and the unprinted limit's", r.Notes)
	}
}

// W2 (session 47, tester t47a): memory no listed process holds is not
// shown to be other processes'. mmdetection#12285: 1.45 GiB (1484.8 MiB)
// asked of a 5.78 GiB (5918.72 MiB) GPU with 606.62 MiB free, this process
// 4.30 GiB (4403.2 MiB), no other process listed:
//
//	unattributed = 5918.72 - 606.62 - 4403.2 = 908.90 MiB
//	shortfall    = 1484.8 - 606.62          = 878.18 MiB
//	with the 128 MiB gpuleak allows cudaMalloc: 878.18 + 128 = 1006.18 MiB
//	(less about 5 MiB for the request's rounding to 0.01 GiB)
//
// 908.90 < about 1001 MiB: even all of that memory freed would not have
// made room by the tool's own margin rule, and this process with the
// request (4.30 + 1.45 = 5.75 GiB) all but fills the 5.78 GiB alone. Was:
// other-processes, "free the GPU from the other processes". Right:
// capacity, the unattributed memory named as such.
func TestF47oUnlistedMemoryShortOfMarginIsCapacity(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/f47o_unlisted_short_of_margin_mmdet12285.txt")
	if hasCause(r, CauseOtherProcesses) != nil || len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity {
		t.Fatalf("causes %v, want capacity alone", causeNames(r))
	}
	c := r.Causes[0]
	if !strings.Contains(c.Evidence, "908.90 MiB not attributed to a process the message lists") || strings.Contains(c.Evidence, "other processes 908.90 MiB") ||
		strings.Contains(c.Advice, "free the GPU from the other processes") {
		t.Errorf("capacity %+v; want the 908.90 MiB named as unattributed, no advice to free other processes", c)
	}
}
