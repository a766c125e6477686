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
