package oom

import (
	"fmt"
	"strings"
	"testing"
)

// Session 45, helper u (testdata/README.md, "Repeated messages,
// interleaved ranks (session 45u)"). The logs are synthetic.

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
		return []string{pfx + "Traceback (most recent call last):", pfx + `  File "train.py", line 10, in <module>`, pfx + "    loss = model(x)", pfx + capacityMsg}
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
