package profiler

import (
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// The hm_* traces were recorded on an H200 with PyTorch 2.11 by
// testdata/gen/hm/record.py (testdata/README.md): a Linear(1024,2048),
// ReLU, Linear(2048,1024) model at batch 256, so an input and an output
// are 1 MiB (256x1024 fp32) and the hidden 2 MiB; schedule(wait=1,
// warmup=1, active=8) records ProfilerStep#2..#9, active=3 #2..#4.

// TestKinetoValidationGraphWithStack: each step trains, then runs a
// validation forward without no_grad and keeps its loss (no .item(), no
// backward): the graph keeps the input x (1 MiB, aten::randn), the ReLU's
// output (2 MiB, aten::relu), the output (1 MiB, the 2nd Linear's
// aten::linear) and the loss (512 B, aten::mean), 4 MiB + 512 B a step
// (the run's memory_allocated rose by 4,194,816 B a step). The step's
// training batch and the validation batch are both torch.randn in
// train_case, whose Python frame the trace names by its first line: one
// stack, twice a step. The 8 ProfilerStep#N spans are the iterations, not
// the 16 a loop found from that stack would count: each site grew in 7 of
// 7 measured iterations, by its own size a step.
func TestKinetoValidationGraphWithStack(t *testing.T) {
	res := kinetoResult(t, "../../testdata/kineto/hm_train_s8_valloss_stack.trace.json.gz")
	want := map[string]int64{
		"aten::relu":   2 << 20,
		"aten::randn":  1 << 20,
		"aten::linear": 1 << 20,
		"aten::mean":   512,
	}
	ls := kinetoLeaks(res)
	if len(ls) != len(want) {
		t.Fatalf("%d leaks, want %d: %+v", len(ls), len(want), ls)
	}
	for _, l := range ls {
		per, ok := want[l.Frame.Name]
		g := l.Growth
		switch {
		case !ok:
			t.Errorf("leak at %v; want one of %v", l.Frame, want)
		case l.Count != 8 || l.Bytes != 8*per:
			t.Errorf("%s: %d blocks, %d B; want 8, %d B", l.Frame.Name, l.Count, l.Bytes, 8*per)
		case g == nil || g.Iterations != 8 || g.Measured != 7 || g.GrewIn != 7 || g.PerIteration != float64(per) || g.Marker != stepLabel:
			t.Errorf("%s: growth %+v; want 8 iterations (ProfilerStep#N spans), grown in 7 of 7, %d B each", l.Frame.Name, g, per)
		}
	}
	if d := res.Leak.Devices[0]; d.Iterations != 8 || d.IterationMarker != stepLabel || d.IterationSite != (callsite.Frame{}) {
		t.Errorf("device: %d iterations marked by %q at %v; want 8 ProfilerStep#N spans", d.Iterations, d.IterationMarker, d.IterationSite)
	}
	if !hasWarning(res.Leak.Warnings, "these steps are the iterations") {
		t.Errorf("warnings %q: want the steps named as the iterations", res.Leak.Warnings)
	}
}
