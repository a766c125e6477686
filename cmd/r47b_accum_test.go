package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// accumLoopTimeline writes export_memory_timeline's .json of a synthetic
// training loop with gradient accumulation (sizes in MiB): 384 of
// parameters; optimizer steps of 2 micro-batches each, every micro-batch
// a forward that saves 6 x 64 of activations and a backward whose
// autograd detail rises to 64 and back to 0 while it frees all but a
// kept 32 of them; the 384 of gradients made by an optimizer step's
// first backward and freed by zero_grad (set_to_none=True, the default)
// after its last. It returns the file's path.
func accumLoopTimeline(t *testing.T, optSteps int) string {
	t.Helper()
	const mib = 1 << 20
	var times, rows []string
	var param, act, grad, ad int64 = 384 * mib, 0, 0, 0
	add := func() {
		times = append(times, fmt.Sprint(1_796_000_000_000_000+int64(len(times))*1000))
		rows = append(rows, fmt.Sprintf("[0,%d,0,0,0,%d,%d,%d,0]", param, act, grad, ad))
	}
	add()
	for s := 0; s < optSteps; s++ {
		for m := 0; m < 2; m++ {
			for l := 0; l < 6; l++ {
				act += 64 * mib
				add()
			}
			for l := 0; l < 6; l++ {
				ad += 64 * mib
				add()
				act -= 64 * mib
				if l == 5 {
					act += 32 * mib // the kept output
				}
				grad = 384 * mib
				add()
				ad -= 64 * mib
				add()
			}
		}
		grad = 0 // zero_grad(set_to_none=True)
		add()
	}
	doc := "[[" + strings.Join(times, ",") + "],[" + strings.Join(rows, ",") + "]]"
	p := filepath.Join(t.TempDir(), "accum_loop_memory_timeline.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAccumulatedGradientsNotCalledKept: 4 optimizer steps of 2
// micro-batches each. The gradients rise 4 times, once an optimizer
// step, and zero_grad frees them each time; the 8 backward passes are
// counted from the autograd detail. The message must not say the
// gradients were kept between steps by zero_grad(set_to_none=False),
// which this loop never calls.
func TestAccumulatedGradientsNotCalledKept(t *testing.T) {
	_, out, errOut := run(t, nil, "analyze", accumLoopTimeline(t, 4))
	if !strings.Contains(out, "8 backward passes made and freed the gradients of intermediate results") {
		t.Fatalf("stdout %.2000q, stderr %.300q", out, errOut)
	}
	if strings.Contains(out, "set_to_none=False") {
		t.Errorf("accumulated gradients called kept between steps: %.2000q", out)
	}
	if !strings.Contains(out, "the gradients rose only 4 times (once an optimizer step") {
		t.Errorf("the gradients' rises not told as optimizer steps: %.2000q", out)
	}
}
