package cmd

import (
	"strings"
	"testing"
)

// TestTimelineTooFewSteps: a memory timeline of three steps (the first
// three of profile_keep_outputs', each keeping a 2 MiB output) cannot show
// growth across steps, as a profiler trace of three steps cannot: no
// category is called growing or not growing, and --fail-on leak is not
// judged (exit 2, the reason on stderr). The whole run's timeline, ten
// steps, is judged, its activations a leak (exit 1).
func TestTimelineTooFewSteps(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--fail-on", "leak", td+"kineto/t45c_keep_outputs_3steps_memory_timeline.json")
	if code != 2 || !strings.Contains(errOut, "the timeline shows 3 steps") {
		t.Errorf("3 steps: exit %d, stderr %.200q; want 2, the steps counted", code, errOut)
	}
	if strings.Contains(out, "keep growing") || !strings.Contains(out, "activation memory: growth across steps cannot be judged") {
		t.Errorf("3 steps: %.200q", out)
	}
	code, _, errOut = run(t, nil, "analyze", "--fail-on", "leak", td+"kineto/profile_keep_outputs_memory_timeline.json")
	if code != 1 {
		t.Errorf("10 steps: exit %d (%.200q), want 1: the activations leak", code, errOut)
	}
}

// TestTimelineLeakStepsCounted: a loop that keeps an eighth of each step's
// 2 GiB over 50 steps (synthetic) is a leak, --fail-on leak trips (exit
// 1): each step falls back 1.75 GiB, though the total grows by 12 GiB in
// all. Before, its falls were measured against that growth: no step, the
// leak unjudged (exit 2).
func TestTimelineLeakStepsCounted(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--fail-on", "leak", td+"kineto/f45a_synthetic_leak_eighth_50steps_memory_timeline.json")
	if code != 1 || !strings.Contains(out, "activation memory keeps growing") || !strings.Contains(out, "the timeline shows 50 steps") {
		t.Errorf("exit %d, stdout %.200q, stderr %.200q; want 1, activations growing over 50 steps", code, out, errOut)
	}
}
