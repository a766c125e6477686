package cmd

import (
	"strings"
	"testing"
)

// TestH46cTrainingLoopKeepingMostIsALeak: a training loop that holds 1 GiB
// a step and frees 200 MiB of it (synthetic,
// testdata/gen/h46c_heavy_leak_timelines.py: 824 MiB of outputs kept with
// their graph, 10 steps). Its memory's fall at a step's end (200 MiB) is
// under a quarter of the step's rise (1 GiB), so the falls show no step;
// its gradients (88 MiB) are made in every backward and freed by zero_grad,
// 10 rises from none to all: 10 steps, and the activations' floor rises
// 824 MiB a step, in every window: a leak, --fail-on leak trips (exit 1),
// the evidence named. Before: "the timeline shows no step", unjudged
// (exit 2).
func TestH46cTrainingLoopKeepingMostIsALeak(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--fail-on", "leak", td+"kineto/h46c_synthetic_train_keeps_80pct_memory_timeline.json")
	if code != 1 || !strings.Contains(out, "activation memory keeps growing") {
		t.Errorf("exit %d, stdout %.300q, stderr %.300q; want 1, activations growing", code, out, errOut)
	}
	if !strings.Contains(out, "the timeline shows 10 steps: gradients were made 10 times") || !strings.Contains(out, "never fell back by a quarter") {
		t.Errorf("the evidence for the steps is not named: %.2000q", out)
	}
}

// TestH46cForwardLoopKeepingMostIsUnjudged: the same model run forward
// only, 10 batches each keeping 824 MiB of 1 GiB (synthetic, the same
// generator): no gradient, and no fall of a quarter of a step's rise, the
// shape of one forward pass whose layers keep what they save. Growth is
// not judged (exit 2), and the reason names both kinds of evidence it
// lacked and the trace that marks steps; it does not ask for more steps,
// which would show the same.
func TestH46cForwardLoopKeepingMostIsUnjudged(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--fail-on", "leak", td+"kineto/h46c_synthetic_forward_keeps_80pct_memory_timeline.json")
	if code != 2 || strings.Contains(out, "keeps growing") {
		t.Errorf("exit %d, stdout %.300q; want 2, nothing judged", code, out)
	}
	for _, want := range []string{"no gradient was made (no backward pass)", "ProfilerStep#N"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %.1000q lacks %q", errOut, want)
		}
	}
	if strings.Contains(errOut, "profile more steps") {
		t.Errorf("stderr asks for more steps: %.1000q", errOut)
	}
}
