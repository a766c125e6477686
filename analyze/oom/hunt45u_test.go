package oom

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Session 45, helper u (testdata/README.md, "Repeated messages,
// interleaved ranks (session 45u)"). The logs are synthetic.

// The tracebacks are a caught OOM's (traceback.print_exc() in the loop,
// outermost frame train_step): one that reached <module> ended its
// process, and progress after it proves nothing (TestF45bFatalCopy).
// The same message printed twice in one log, 49 lines apart: with a
// step line of its process between the two copies the run went on after
// the first (a caught OOM, a retry), so they are two OOMs, each with a
// note saying why; with none (a launcher's summary, a logger and stderr)
// one OOM reported twice, with a note that says so and that the text
// cannot tell it from a failure repeated at once; a step line of another
// rank is not this process's progress. The old code counted one OOM in
// each case, without a word.
func TestHunt45uSameMessageTwice(t *testing.T) {
	tb := func(pfx string) []string {
		return []string{pfx + "Traceback (most recent call last):", pfx + `  File "train.py", line 10, in train_step`, pfx + "    loss = model(x)", pfx + capacityMsg}
	}
	log := func(pfx, between string) string {
		var ls []string
		ls = append(ls, tb(pfx)...)
		for i := 0; i < 45; i++ {
			ls = append(ls, fmt.Sprintf(between, i))
		}
		ls = append(ls, tb(pfx)...)
		return strings.Join(ls, "\n") + "\n"
	}
	// Lines 4 and 53: 45 lines between the two tracebacks.
	pm := NewPostmortem([]Input{textInput(t, "steps.log", log("", "step %d loss 0.1"))}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("steps: %d OOMs, want 2 (the run went on between)", len(pm.OOMs))
	}
	if a, b := pm.OOMs[0], pm.OOMs[1]; a.Occurrences != 1 || b.Occurrences != 1 || a.Sources[0].Line != 4 || b.Sources[0].Line != 53 ||
		!strings.Contains(strings.Join(a.Notes, "|"), "after line 49 counted the run's progress") ||
		!strings.Contains(strings.Join(b.Notes, "|"), "a second OOM with the same figures") {
		t.Errorf("steps: %.200q / %.200q", fmt.Sprint(a.Sources, a.Notes), fmt.Sprint(b.Sources, b.Notes))
	}
	for name, text := range map[string]string{
		"no progress":  log("", "loading shard %d"),
		"other rank's": log("[rank0]: ", "[rank1]: step %d loss 0.1"),
	} {
		pm := NewPostmortem([]Input{textInput(t, "one.log", text)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%s: %d OOMs, want 1", name, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		if r.Occurrences != 2 || !strings.Contains(strings.Join(r.Notes, "|"), "one.log:53 prints this message again with no line between that counts the run's progress") ||
			!strings.Contains(strings.Join(r.Notes, "|"), "cannot tell") {
			t.Errorf("%s: %d occurrences, notes %.200q", name, r.Occurrences, fmt.Sprint(r.Notes))
		}
	}
	// A third copy right after the second (a launcher's summary of the
	// second failure) is the second's, not a third OOM.
	three := log("", "step %d loss 0.1") + "ChildFailedError: " + capacityMsg + "\n"
	pm = NewPostmortem([]Input{textInput(t, "three.log", three)}, PostmortemOptions{})
	if len(pm.OOMs) != 2 || pm.OOMs[1].Occurrences != 2 || pm.OOMs[0].Occurrences != 1 {
		t.Errorf("three copies: %d OOMs, want 2, the second printed twice", len(pm.OOMs))
	}
}

// Ray prints the first line of a kind on its own and folds the later
// ones into the last ("[repeated Nx across cluster]"), so the folded line
// is never the first one again, even when its worker label and figures
// are the first's: the tester's vllm-project/vllm issue 15598 line, with
// that line unfolded before it (the same pid, GPU and sizes), is 2 OOMs
// and 6 not shown, at least 8 (the old code merged the two lines: 1 OOM
// and 6, 7 in all). Ray's label of a worker without a name, "(pid=N,
// ip=A)", names a process as a named one does, and its node's address
// with it: one pid on two nodes, or two pids, are two processes (the old
// code read no process from it, nor the address from any label: one
// OOM).
func TestHunt45uRayFirstLineAndAddress(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/s44c_ray_repeated_vllm15598.txt")
	if err != nil {
		t.Fatal(err)
	}
	folded := strings.TrimRight(string(b), "\n")
	first := strings.Replace(folded, " [repeated 7x across cluster]", "", 1)
	pm := NewPostmortem([]Input{textInput(t, "ray.txt", first+"\n"+folded+"\n")}, PostmortemOptions{})
	if len(pm.OOMs) != 2 || pm.OOMs[0].FoldedOOMs != 0 || pm.OOMs[1].FoldedOOMs != 6 {
		t.Fatalf("%d OOMs, want 2 with 6 folded", len(pm.OOMs))
	}
	for _, r := range pm.OOMs {
		if strings.Contains(strings.Join(r.Notes, "|"), "worker processes printed") {
			t.Errorf("one worker's lines called several workers': %.200q", strings.Join(r.Notes, "|"))
		}
	}
	for name, labels := range map[string][2]string{
		"unnamed pids":      {"(pid=45601) ", "(pid=45602) "},
		"unnamed, two ips":  {"(pid=45601, ip=10.0.0.2) ", "(pid=45601, ip=10.0.0.3) "},
		"wrapper, two ips":  {"(RayWorkerWrapper pid=38, ip=10.0.0.2) ", "(RayWorkerWrapper pid=38, ip=10.0.0.3) "},
		"one worker, twice": {"(pid=45601, ip=10.0.0.2) ", "(pid=45601, ip=10.0.0.2) "},
	} {
		pm := NewPostmortem([]Input{textInput(t, "w.log", labels[0]+capacityMsg+"\n"+labels[1]+capacityMsg+"\n")}, PostmortemOptions{})
		want := 2
		if labels[0] == labels[1] {
			want = 1
		}
		if len(pm.OOMs) != want {
			t.Errorf("%s: %d OOMs, want %d", name, len(pm.OOMs), want)
		}
	}
}
