package oom

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// Recorded with PyTorch 2.11 on an H200 by a tester, s33
// (testdata/pytorch/s33/, testdata/README.md).

// TestSameOOMInTwoSnapshots: the OOM observer's snapshot (eso_oom) and
// the one dumped after the except block (eso) hold the same "oom" trace
// entry, entry 2239 (s33 finding 4): one OOM, whichever comes first, with
// both as its sources. Main made two.
func TestSameOOMInTwoSnapshots(t *testing.T) {
	for _, names := range [][]string{{"s33/eso_oom.pickle.gz", "s33/eso.pickle.gz"}, {"s33/eso.pickle.gz", "s33/eso_oom.pickle.gz"}} {
		pm := postmortem(t, names...)
		if len(pm.OOMs) != 1 {
			t.Fatalf("%v: %d OOMs, want 1", names, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		if len(r.Sources) != 2 || r.Sources[0].Path != names[0] || r.Sources[1].Path != names[1] ||
			r.Sources[0].Seq != 2239 || r.Sources[1].Seq != 2239 {
			t.Errorf("%v: sources %+v", names, r.Sources)
		}
		if r.RequestedBytes != 64<<20 || hasCause(r, CauseAccumulation) == nil || hasCause(r, CauseMemoryLimit) == nil {
			t.Errorf("%v: requested %d, causes %v", names, r.RequestedBytes, causeNames(r))
		}
	}
	// With the message and the summary: still one, all four its sources.
	pm := postmortem(t, "s33/eso_oom.pickle.gz", "s33/eso.pickle.gz", "s33/eso_error.txt", "s33/eso_memory_summary.txt")
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Sources) != 4 || pm.OOMs[0].Occurrences != 1 {
		t.Errorf("%d OOMs: %+v", len(pm.OOMs), pm.OOMs)
	}
	// Without timestamps (PyTorch before 2.1) two OOMs of one request
	// cannot be told from one seen twice: both are kept.
	untimed := func(name string) Input {
		in := oomInput(t, name)
		res := *in.Snapshot
		res.OOMs = append([]snapshot.OOM(nil), res.OOMs...)
		for i := range res.OOMs {
			res.OOMs[i].TimeUs = 0
		}
		in.Snapshot = &res
		return in
	}
	pm = NewPostmortem([]Input{untimed("s33/eso_oom.pickle.gz"), untimed("s33/eso.pickle.gz")}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Errorf("untimed: %d OOMs, want 2", len(pm.OOMs))
	}
}

// TestHugeRequestNoTotal: 300 GiB asked for on a 139.80 GiB GPU with
// 131.77 GiB free, the snapshot alone (s33 finding 7). The snapshot does
// not record the GPU's total: whether the GPU is too small or other
// processes held the rest cannot be told, so no cause (main said
// outside-process, advising a smaller batch); the message's total makes
// it capacity, the request alone.
func TestHugeRequestNoTotal(t *testing.T) {
	r := postmortem(t, "s33/hg_oom.pickle.gz").OOMs[0]
	if len(r.Causes) != 0 || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "does not record the GPU's total memory") ||
		!strings.Contains(r.Notes[0], "cannot be told") || strings.Contains(allText(r), "smaller batch") {
		t.Errorf("causes %v notes %q", causeNames(r), r.Notes)
	}
	r = postmortem(t, "s33/hg_oom.pickle.gz", "s33/hg_error.txt").OOMs[0]
	if names := causeNames(r); len(names) != 1 || names[0] != CauseCapacity || !strings.Contains(r.Causes[0].Evidence, "request alone") {
		t.Errorf("with the message: causes %v", names)
	}
}

// TestOutsideProcessFromAnotherOOM: where the snapshot's trace shows the
// GPU with room for the request beside what this process held (another
// OOM's free and reserved memory), the memory missing at this OOM was
// held outside the process: outside-process. The numbers are the s33
// hg_oom entry's, edited: an 80 GiB GPU whose first OOM (caught) saw
// 70 GiB free and 2 GiB reserved; at the second, 40 GiB asked for with
// 10 GiB free and 2 GiB reserved.
func TestOutsideProcessFromAnotherOOM(t *testing.T) {
	in := oomInput(t, "s33/hg_oom.pickle.gz")
	res := *in.Snapshot
	so := res.OOMs[0]
	first, second := so, so
	first.Seq, first.TimeUs, first.Requested, first.DeviceFree = 3, so.TimeUs-1000, 72*GiB, 70*GiB
	first.Memory.Total.ReservedBytes = 2 * GiB
	second.Requested, second.DeviceFree = 40*GiB, 10*GiB
	second.Memory.Total.ReservedBytes = 2 * GiB
	res.OOMs = []snapshot.OOM{first, second}
	in.Snapshot = &res
	pm := NewPostmortem([]Input{in}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	c := hasCause(pm.OOMs[1], CauseOutsideProcess)
	if c == nil || c.Numbers["device_at_least_bytes"] != 72*GiB || c.Numbers["outside_bytes"] != 60*GiB ||
		!strings.Contains(c.Evidence, "trace entry 3") || strings.Contains(c.Advice, "smaller batch") {
		t.Errorf("second OOM: causes %v %+v notes %q", causeNames(pm.OOMs[1]), pm.OOMs[1].Causes, pm.OOMs[1].Notes)
	}
	// The first OOM (72 GiB asked for, 70 GiB free): the GPU was short
	// of room, and the snapshot shows neither its total nor more room
	// elsewhere: no cause.
	if r := pm.OOMs[0]; hasCause(r, CauseOutsideProcess) != nil || len(r.Causes) != 0 {
		t.Errorf("first OOM: causes %v", causeNames(r))
	}
}
