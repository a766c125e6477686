package oom

import (
	"strings"
	"testing"
)

// The s33 recording (testdata/README.md, "Fragmentation under expandable
// segments"): 20 live 6 MiB blocks, each 20 MiB page of the large pool's
// expandable segment shared with one, a 100 MiB request refused by the
// 450 MiB cap. The three views agree: the OOM's postmortem, the snapshot's
// end and the allocator statistics (which cannot tell alone, and say so).
func TestExpandableFragmentationViews(t *testing.T) {
	// The OOM: fragmentation with the expandable advice.
	pm := postmortem(t, "s33/esf_oom.pickle")
	if len(pm.OOMs) != 1 || hasCause(pm.OOMs[0], CauseFragmentation) == nil ||
		hasCause(pm.OOMs[0], CauseFragmentation).Advice != expandableFragmentationAdvice {
		t.Fatalf("OOM causes %v", causeNames(pm.OOMs[0]))
	}

	// The end: every free byte shares a page with a live block (the OOM's
	// release unmapped the one whole free page): 232 MiB in the large
	// pool, 2 MiB less 8 KiB in the small pool's page.
	in := oomInput(t, "s33/esf.pickle")
	end := in.Snapshot.Fragment.End[0]
	const split = 232*MiB + 2*MiB - 8<<10
	if end.Total.InactiveSplitBytes != split || end.Total.FreeBytes != split || end.Total.WholeFreeBlocks != 0 ||
		end.Total.LargestSplitBytes != 12*MiB {
		t.Errorf("end %+v", end.Total)
	}
	pm = NewPostmortem([]Input{in}, PostmortemOptions{})
	if len(pm.Fragmentation) != 1 {
		t.Fatalf("%d fragmentation reports", len(pm.Fragmentation))
	}
	fr := pm.Fragmentation[0]
	if fr.At != "end" || !fr.Expandable || fr.State.InactiveSplitBytes != split || fr.Advice != expandableFragmentationAdvice || len(fr.Pools) != 2 {
		t.Errorf("end report %+v", fr)
	}

	// The statistics at the OOM, alone: no segment counted for 362 MiB
	// reserved (expandable segments), so the 0 non-releasable says
	// nothing, and the set cannot tell.
	for _, name := range []string{"s33/esf.sum", "s33/esf.json"} {
		st := oomInput(t, name).Text.Stats[0]
		if st.ExpandableReserved() != 362*MiB || !st.SplitUnmeasured() {
			t.Errorf("%s: expandable %d, unmeasured %v", name, st.ExpandableReserved(), st.SplitUnmeasured())
		}
		if v := st.Verdict(); !strings.HasPrefix(v, "cannot tell:") || !strings.Contains(v, "expandable segments") {
			t.Errorf("%s: verdict %q", name, v)
		}
		// PyTorch counts no segment for expandable ones: the set matches
		// the snapshot's end by its fixed segments (none).
		if !statsMatchState(&st, end) {
			t.Errorf("%s does not match the end of esf.pickle", name)
		}
		pm := postmortem(t, name)
		if len(pm.Fragmentation) != 0 {
			t.Errorf("%s: fragmentation from a set that cannot tell: %+v", name, pm.Fragmentation)
		}
	}

	// Folded into the OOM it was taken at (the same allocated and
	// reserved memory), by the snapshot or by the message.
	pm = postmortem(t, "s33/esf_oom.pickle", "s33/esf.msg", "s33/esf.sum", "s33/esf.json")
	if len(pm.OOMs) != 1 || pm.OOMs[0].Stats == nil || len(pm.StatsAtOOM) != 2 {
		t.Errorf("%d OOMs, stats at OOM %+v", len(pm.OOMs), pm.StatsAtOOM)
	}
	// The message with the summary: fragmentation, and no advice to turn
	// on expandable segments (the summary shows them on).
	pm = postmortem(t, "s33/esf.msg", "s33/esf.sum")
	c := hasCause(pm.OOMs[0], CauseFragmentation)
	if c == nil || c.Advice != expandableFragmentationAdvice || !strings.HasPrefix(c.Evidence, "expandable segments were already on") {
		t.Errorf("message and summary: %+v", pm.OOMs[0].Causes)
	}
	if c := hasCause(postmortem(t, "s33/esf.msg").OOMs[0], CauseFragmentation); c == nil || c.Advice != fragmentationAdvice {
		t.Errorf("message alone: %+v", c)
	}

	// The fill-and-free run's end (dumped after its OOM): 1.39 GiB in 3
	// MiB holes, a fragmentation finding.
	pm = postmortem(t, "h200/oom_fragmentation_expandable.pickle")
	if len(pm.Fragmentation) != 1 || !pm.Fragmentation[0].Expandable || pm.Fragmentation[0].State.InactiveSplitBytes != 1424*MiB {
		t.Errorf("fill-and-free end %+v", pm.Fragmentation)
	}
}

// Expandable segments' free memory in whole pages is what empty_cache()
// unmaps, not fragmentation: the hv recording keeps a 4 MiB activation
// each of 40 steps; at its end the large pool has 80 MiB free, 60 MiB of it
// in whole pages, and the small pool 6 of its 7.94 MiB free.
func TestExpandableWholePages(t *testing.T) {
	end := oomInput(t, "hv/expandable_leak.pickle").Snapshot.Fragment.End[0]
	if len(end.Pools) != 2 {
		t.Fatalf("pools %+v", end.Pools)
	}
	large, small := end.Pools[0], end.Pools[1]
	if large.Small || !large.Expandable || large.FreeBytes != 80*MiB || large.InactiveSplitBytes != 20*MiB || large.WholeFreeBlocks == 0 {
		t.Errorf("large %+v", large)
	}
	if !small.Small || small.FreeBytes-small.InactiveSplitBytes != 6*MiB {
		t.Errorf("small %+v", small)
	}
	if pm := NewPostmortem([]Input{oomInput(t, "hv/expandable_leak.pickle")}, PostmortemOptions{}); len(pm.Fragmentation) != 0 {
		t.Errorf("fragmentation %+v", pm.Fragmentation)
	}
}

// memory_stats() figures under expandable segments, written from the
// allocator's rules: a set whose few live blocks cannot share much of the
// reserved memory is no fragmentation (the rest is whole free pages); a
// cudaMallocAsync set (all-pool figures only) is not taken for expandable
// segments.
func TestExpandableStatsBound(t *testing.T) {
	// 10 GiB reserved in the large pool's expandable segment, no segment
	// counted; 2 live blocks of 1 GiB: at most 2 x 2 x 20 MiB can share
	// their pages, below the 2 GiB allocated.
	few := `{"allocated_bytes.all.current": 2147483648, "reserved_bytes.all.current": 10737418240,
		"active_bytes.all.current": 2147483648, "inactive_split_bytes.all.current": 0,
		"allocated_bytes.large_pool.current": 2147483648, "reserved_bytes.large_pool.current": 10737418240,
		"active_bytes.large_pool.current": 2147483648, "active.large_pool.current": 2,
		"segment.all.current": 0, "segment.large_pool.current": 0,
		"reserved_bytes.small_pool.current": 0, "segment.small_pool.current": 0,
		"num_ooms": 1, "num_alloc_retries": 1}`
	st := textInput(t, "few.json", few).Text.Stats[0]
	if !st.SplitUnmeasured() || st.Verdict() != "" {
		t.Errorf("few live blocks: unmeasured %v, verdict %q", st.SplitUnmeasured(), st.Verdict())
	}
	// The same with 200 live blocks: up to 7.81 GiB (200 x 40 MiB) could share pages.
	many := strings.Replace(few, `"active.large_pool.current": 2`, `"active.large_pool.current": 200`, 1)
	st = textInput(t, "many.json", many).Text.Stats[0]
	if v := st.Verdict(); !strings.HasPrefix(v, "cannot tell:") || !strings.Contains(v, "at most 7.81 GiB of it can share pages with the 200 live blocks") {
		t.Errorf("many live blocks: %q", v)
	}
	// cudaMallocAsync fills in only the all-pool figures: not expandable
	// segments, but its non-releasable memory is not measured either
	// (session 48, f48m: its 0 was shown as measured).
	async := `{"allocated_bytes.all.current": 1073741824, "reserved_bytes.all.current": 4294967296,
		"active_bytes.all.current": 1073741824, "reserved_bytes.large_pool.current": 0, "segment.large_pool.current": 0,
		"reserved_bytes.small_pool.current": 0, "segment.small_pool.current": 0, "segment.all.current": 0,
		"inactive_split_bytes.all.current": 0, "num_ooms": 0, "num_alloc_retries": 0}`
	st = textInput(t, "async.json", async).Text.Stats[0]
	if st.ExpandableReserved() != 0 || !st.AsyncBackend() || !st.SplitUnmeasured() {
		t.Errorf("cudaMallocAsync: expandable %d, async %v, split unmeasured %v", st.ExpandableReserved(), st.AsyncBackend(), st.SplitUnmeasured())
	}
}
