package cmd_test

import (
	"strings"
	"testing"
)

// The s33 recording under expandable segments (testdata/README.md,
// "Fragmentation under expandable segments"), through the commands: the
// end of the snapshot has a fragmentation finding, the statistics alone
// say they cannot tell and why (not "0 bytes non-releasable"), and beside
// the OOM they were taken at they say what its postmortem finds.
func TestExpandableFragmentationCommands(t *testing.T) {
	dir := "../testdata/pytorch/s33/"

	code, out, _ := run(t, "", "analyze", "--format", "json", "--top", "0", dir+"esf.pickle")
	r := decode(t, out)
	var frag bool
	for _, f := range r.Findings {
		if f.Kind == "fragmentation" {
			frag = true
			if f.Bytes != 232<<20+2<<20-8<<10 || !strings.Contains(f.Message, "in expandable segments") || !strings.Contains(f.Message, "expandable segments were already on") {
				t.Errorf("fragmentation %d bytes: %s", f.Bytes, f.Message)
			}
		}
	}
	if code != 0 || !frag {
		t.Errorf("exit %d, no fragmentation finding at the end of esf.pickle", code)
	}

	code, out, _ = run(t, "", "analyze", "--format", "json", dir+"esf.json")
	r = decode(t, out)
	st := r.Inputs[0].AllocatorStats[0]
	if code != 0 || st.InactiveSplitBytes != nil || !st.ExpandableSegments || !strings.HasPrefix(st.Verdict, "cannot tell:") {
		t.Errorf("exit %d, stats %+v", code, st)
	}
	_, out, _ = run(t, "", "analyze", dir+"esf.json")
	if !strings.Contains(out, "\nAllocator statistics:\n  "+dir+"esf.json (memory_stats): cannot tell: 1 OOM and 1 cudaMalloc retry with") ||
		!strings.Contains(out, "the allocator counted 1 out-of-memory error (num_ooms); the inputs describe 0") {
		t.Errorf("analyze table lacks the verdict:\n%s", out)
	}
	_, out, _ = run(t, "", "oom", dir+"esf.sum")
	if strings.Contains(out, "0 bytes free but split") || !strings.Contains(out, "non-releasable not measured (expandable segments") {
		t.Errorf("oom esf.sum:\n%s", out)
	}

	_, out, _ = run(t, "", "oom", dir+"esf_oom.pickle", dir+"esf.sum")
	if !strings.Contains(out, "same moment as the OOM at trace entry 165 of "+dir+"esf_oom.pickle") ||
		!strings.Contains(out, "whose snapshot shows the blocks: its postmortem finds fragmentation") {
		t.Errorf("oom esf_oom.pickle esf.sum:\n%s", out)
	}
}
