package cmd

import (
	"strings"
	"testing"
)

// TestF47tKeptGradientsLeaksFound: real H200 recordings (PyTorch
// 2.11.0+cu130, testdata/gen/dev47_rec.py) of 8 training steps with
// zero_grad(set_to_none=False), then a teardown. A forward hook keeps the
// first Linear's output each step (2048 x 4096 x 4 B = 32 MiB) in
// keep1of6, every module's (12 x 32 = 384 MiB) in keepall. Before, both
// said "No findings" (1 step: the gradients rise once, and the teardown's
// fall hid the steps'); the 8 backward passes are now counted from the
// autograd detail, and the leaks are found with their size a step and
// what the last step's end held (8 x 32 MiB = 256 MiB; 8 x 384 MiB =
// 3 GiB): --fail-on leak trips (exit 1). The clean loop stays clean (exit
// 0), judged across its 8 steps.
func TestF47tKeptGradientsLeaksFound(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		want []string
	}{
		{"clean", 0, []string{"the timeline shows 8 steps: 8 backward passes"}},
		{"keep1of6", 1, []string{"activation memory keeps growing over the timeline's 8 steps", "about 32 MiB a step", "256 MiB at the end of the last step", "the timeline then ends with a teardown"}},
		{"keepall", 1, []string{"activation memory keeps growing over the timeline's 8 steps", "about 384 MiB a step", "3.0 GiB at the end of the last step", "the timeline then ends with a teardown"}},
	} {
		code, out, errOut := run(t, nil, "analyze", "--fail-on", "leak", td+"kineto/f47t_keepgrad_"+c.name+"_memory_timeline.json")
		if code != c.code {
			t.Errorf("%s: exit %d, stdout %.800q, stderr %.300q; want %d", c.name, code, out, errOut, c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks %q: %.2000q", c.name, w, out)
			}
		}
		if c.code == 0 && strings.Contains(out, "keeps growing") {
			t.Errorf("%s: a leak claimed: %.1000q", c.name, out)
		}
		// The steps are said to come from the autograd detail, with the
		// gradients' one rise, not from gradients made each step.
		if !strings.Contains(out, "the gradients rose only 1 time (kept between steps") || strings.Contains(out, "gradients were made 8 times") {
			t.Errorf("%s: the steps' evidence misnamed: %.2000q", c.name, out)
		}
	}
}
