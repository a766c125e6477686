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

// TestAsyncSummaryAfterOOM: a ComfyUI log (SkyReels-V3 in docker
// compose) whose cudaMallocAsync OOM printed no figures ("Allocation on
// device " cut by device 0's NUL byte) and whose except block printed a
// memory_summary() right after it: 3116 MiB allocated, 3424 MiB
// reserved, peaks 21865 and 22208 MiB, every other figure 0. The backend
// fills only allocated/active and reserved (CUDAMallocAsyncAllocator.cpp
// getDeviceStats): the set is told as its, its zeros are not measured,
// and the OOM's notes give the summary's peaks instead of asking for
// statistics the input holds; its "CUDA OOMs: 0" is no evidence.
func TestAsyncSummaryAfterOOM(t *testing.T) {
	in := oomInput(t, "pastes/skyreels_comfyui_compose_async_summary_after_oom.log")
	if len(in.Text.Stats) != 1 {
		t.Fatalf("%d sets", len(in.Text.Stats))
	}
	st := in.Text.Stats[0]
	if !st.AsyncBackend() || !st.SplitUnmeasured() || st.Verdict() != "" {
		t.Errorf("async %v, split unmeasured %v, verdict %q", st.AsyncBackend(), st.SplitUnmeasured(), st.Verdict())
	}
	pm := NewPostmortem([]Input{in}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	notes := strings.Join(pm.OOMs[0].Notes, "\n")
	if !strings.Contains(notes, "peaks since the run began or its statistics were reset, 21.35 GiB allocated and 21.69 GiB reserved") ||
		!strings.Contains(notes, "3.04 GiB allocated and 3.34 GiB reserved") || !strings.Contains(notes, "CUDA OOMs: 0") ||
		strings.Contains(notes, "would tell what held the GPU") {
		t.Errorf("notes %s", notes)
	}
	// The native allocator's summaries are not the backend's: expandable
	// segments count no segment either, but fill their pools.
	for _, f := range []string{"h200/oom_fragmentation_expandable_memory_summary.txt", "pastes/summary_after_oom_evofill.txt", "memory_summary.txt"} {
		if s := oomInput(t, f).Text.Stats[0]; s.AsyncBackend() {
			t.Errorf("%s: read as cudaMallocAsync's", f)
		}
	}
}
