package oom

import (
	"os"
	"strings"
	"testing"
)

// Session 44, helper c (testdata/README.md, "Line prefixes, ranks, Ray's
// folded lines and cut figures (session 44c)").

// A 2.x message cut after its last figure is judged from it: the
// tester's kerrj/lerf issue 73 message cut at "... and 4.84 GiB is rese"
// showed reserved "?" and no cause. 4.84 GiB reserved but unallocated
// holds the 3.00 GiB asked, and the GPU had 1.66 GiB free: fragmentation,
// as the whole message gives (reserved 12.09 + 4.84 = 16.93 GiB), with a
// note that the message was cut. The same holds cut in the test right
// after the unit and inside "unallocated"; cut inside the unit ("4.84
// Gi") the figure is not whole, and there is no cause.
func TestHunt44cCutAfterLastFigure(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/pt2.1_nonpytorch_in_process_frag_lerf73.txt")
	if err != nil {
		t.Fatal(err)
	}
	whole := strings.TrimRight(string(b), "\n")
	cutAt := func(after string) string { return whole[:strings.Index(whole, after)+len(after)] + "\n" }
	tester, err := os.ReadFile("../../testdata/pytorch/pastes/s44c_cut_reserved_lerf73.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, text string
		frag       bool
	}{
		{"tester", string(tester), true},
		{"after the unit", cutAt("and 4.84 GiB"), true},
		{"inside unallocated", cutAt("and 4.84 GiB is reserved by PyTorch but u"), true},
		{"inside the unit", cutAt("and 4.84 Gi"), false},
	} {
		pm := NewPostmortem([]Input{textInput(t, c.name+".txt", c.text)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%s: %d OOMs", c.name, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		names := causeNames(r)
		notes := strings.Join(r.Notes, "\n")
		if !c.frag {
			if len(names) != 0 || r.ReservedBytes >= 0 {
				t.Errorf("%s: causes %v, reserved %d; want none, unknown", c.name, names, r.ReservedBytes)
			}
			continue
		}
		if r.Generation != "cut" || len(names) == 0 || names[0] != CauseFragmentation || !near(r.ReservedBytes, gib(1693)) ||
			!near(r.ReservedUnallocatedBytes, gib(484)) || !strings.Contains(notes, "cut short") {
			t.Errorf("%s: gen %s, causes %v, reserved %d, unallocated %d; notes %.200q", c.name, r.Generation, names, r.ReservedBytes, r.ReservedUnallocatedBytes, notes)
		}
	}
}

// Lines Ray's log deduplication folded into an OOM's line are counted:
// the tester's vllm-project/vllm issue 15598 line, "[repeated 7x across
// cluster]", with no first line of its kind in the input, stands for 7
// lines not shown (6 folded before it, and the first Ray printed on its
// own): at least 8 OOMs, said in a note; it was "OOM 1 of 1". With the
// first line in the input (another worker's, made in the test), that line
// is its own OOM and 6 are not shown: 2 + 6 = 8 again.
func TestHunt44cRayFoldsCounted(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/s44c_ray_repeated_vllm15598.txt")
	if err != nil {
		t.Fatal(err)
	}
	folded := strings.TrimRight(string(b), "\n")
	first := strings.NewReplacer("pid=206994", "pid=206993", "GPU 6", "GPU 2", " [repeated 7x across cluster]", "").Replace(folded)
	for _, c := range []struct {
		name, text   string
		ooms, unseen int
	}{
		{"tester", folded + "\n", 1, 7},
		{"first shown", first + "\n" + folded + "\n", 2, 6},
	} {
		pm := NewPostmortem([]Input{textInput(t, c.name+".txt", c.text)}, PostmortemOptions{})
		if len(pm.OOMs) != c.ooms {
			t.Fatalf("%s: %d OOMs, want %d", c.name, len(pm.OOMs), c.ooms)
		}
		r := pm.OOMs[c.ooms-1]
		if r.FoldedOOMs != c.unseen || !strings.Contains(strings.Join(r.Notes, "\n"), "at least 8 such out-of-memory lines") {
			t.Errorf("%s: folded %d, want %d; notes %.200q", c.name, r.FoldedOOMs, c.unseen, strings.Join(r.Notes, "\n"))
		}
	}
}
