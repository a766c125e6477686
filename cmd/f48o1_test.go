package cmd

import (
	"strings"
	"testing"
)

// Session 48, f48o1: torchrun's rank labels ("[rank3]: " before each
// line) were nowhere in gpuleak's text or JSON, and analyze numbered a
// log's OOMs by size and device while oom numbered them by line, so "OOM
// 2 of 7" and analyze's "2." were different OOMs (bionemo's notes: seven
// OOMs of four ranks in two runs). Both now list them in the order they
// were printed, and each names its rank.
func TestF48o1RanksAndOrder(t *testing.T) {
	path := pt + "pastes/f48o1_bionemo_evo2_notes_torchrun_4rank_oom.md"
	_, out, _ := run(t, nil, "oom", "--format", "json", path)
	_, fs := findings(t, out)
	ooms := ofKind(fs, "oom")
	want := []string{"rank0", "rank1", "rank2", "rank3", "rank1", "rank2", "rank0"}
	if len(ooms) != len(want) {
		t.Fatalf("%d OOMs, want %d", len(ooms), len(want))
	}
	for i, o := range ooms {
		if o["process"] != want[i] {
			t.Errorf("OOM %d: process %v, want %s", i+1, o["process"], want[i])
		}
	}
	_, text, _ := run(t, nil, "oom", path)
	if !strings.Contains(text, "f48o1_bionemo_evo2_notes_torchrun_4rank_oom.md:23 (torch.OutOfMemoryError, printed by rank3)") {
		t.Errorf("oom's text does not name line 23's rank:\n%s", text)
	}
	_, an, _ := run(t, nil, "analyze", path)
	var lines []string
	for _, l := range strings.Split(an, "\n") {
		if strings.Contains(l, ". oom (rank") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 7 || !strings.HasPrefix(lines[3], "4. oom (rank3): 75.13 GiB requested on GPU 3") || !strings.HasPrefix(lines[6], "7. oom (rank0): 75.13 GiB requested on GPU 0") {
		t.Errorf("analyze's OOMs, want oom's order with their ranks:\n%s", strings.Join(lines, "\n"))
	}
	_, out, _ = run(t, nil, "oom", "--format", "json", pt+"pastes/f48o1_k8s_deepspeed_llama3_rank3_gpu0_oom.md")
	_, fs = findings(t, out)
	if ooms = ofKind(fs, "oom"); len(ooms) != 1 || ooms[0]["process"] != "rank3" {
		t.Errorf("k8s: %v, want one OOM of rank3", ooms)
	}
}
