package profiler

import (
	"math/rand"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
)

// readTimeline reads a .json memory timeline of testdata.
func readTimeline(t *testing.T, path string) *kineto.Timeline {
	t.Helper()
	in, err := parse.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	tl, err := kineto.ReadTimeline(in.Reader(), path, false)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestTimelineKeptGradients: three real H200 recordings (PyTorch
// 2.11.0+cu130, testdata/gen/dev47_rec.py) of 8 training steps of a
// 6-layer 4096-wide MLP on a 2048x4096 fp32 batch with SGD and
// zero_grad(set_to_none=False), then a teardown (the function returns
// inside the profiled region). The gradients (384 MiB) are made by the
// first backward and kept: they rise once, so Backward counted 1 step
// from them, and the teardown (the largest fall: it frees the gradients,
// the input and all that was kept) hid every step's fall: 1 step, growth
// unjudged, the two leaks missed. Every backward makes and frees the
// gradients of its intermediate results (autograd detail): 8 passes, one
// a step, each after a forward that saved activations.
//
// Expected, from the hooks' tensors (each kept output is 2048 x 4096 x
// 4 B = 32 MiB): keep1of6 keeps the first Linear's output, 1 a step, so
// the activations at the end of backward k are k x 32 MiB: 256 MiB after
// step 8, (256-32)/7 = 32 MiB a step; keepall keeps all 12 modules'
// outputs, 384 MiB a step: 3 GiB after step 8, (3072-384)/7 = 384 MiB a
// step. Both end with a teardown that frees them. The clean loop keeps
// nothing: no category grows.
func TestTimelineKeptGradients(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name    string
		perStep int64 // activation bytes kept a step; 0: nothing grows
	}{
		{"clean", 0},
		{"keep1of6", 32 * mib},
		{"keepall", 384 * mib},
	} {
		tl := readTimeline(t, "../../testdata/kineto/f47t_keepgrad_"+c.name+"_memory_timeline.json")
		sc := CountTimelineSteps(tl)
		if sc.Steps != 8 || sc.AutogradPasses != 8 || sc.GradientRises != 1 || len(sc.Ends) != 8 {
			t.Errorf("%s: %+v, want 8 steps from 8 autograd passes (the gradients rise once), 8 ends", c.name, sc)
		}
		for _, g := range AnalyzeTimeline(tl) {
			want := c.perStep > 0 && g.Category == "activation"
			if g.Grows != want {
				t.Errorf("%s: %s grows %v, want %v: %+v", c.name, g.Category, g.Grows, want, g)
			}
			if !want {
				continue
			}
			if !g.Teardown || g.PerStepBytes != c.perStep || g.LoopEndBytes/mib != 8*c.perStep/mib || g.EndBytes != 0 {
				t.Errorf("%s: activation %+v: want %d MiB a step, %d MiB at the last step's end, before a teardown that leaves 0 B",
					c.name, g, c.perStep/mib, 8*c.perStep/mib)
			}
		}
	}
}

// TestTimelineAutogradPassDipIsOnePass: one forward and backward
// (synthetic: 12 layers of 32 MiB activations, freed one by one in
// backward, each layer's backward making a 32 MiB autograd detail and
// freeing it before the next makes its own, so the autograd detail
// bytes touch 0 between layers) is one backward pass, not 12: no
// forward ran between the stretches (the activations only fell). Before
// the forward guard, 12 passes made 12 "steps" of one backward, across
// which the gradients' floor rose. A second forward and backward is a
// second pass.
func TestTimelineAutogradPassDipIsOnePass(t *testing.T) {
	const mib = 1 << 20
	act, grad, ad := categoryIndex("activation"), categoryIndex("gradient"), categoryIndex("autograd_detail")
	tl := &kineto.Timeline{}
	cur := make([]int64, len(kineto.Categories))
	add := func(cat int, d int64) {
		cur[cat] += d
		tl.TimesUs = append(tl.TimesUs, 1_796_000_000_000_000+int64(len(tl.TimesUs))*1000)
		tl.Bytes = append(tl.Bytes, append([]int64(nil), cur...))
	}
	step := func() {
		for l := 0; l < 12; l++ {
			add(act, 32*mib)
		}
		for l := 0; l < 12; l++ {
			add(ad, 32*mib)
			if cur[grad] < 12*16*mib {
				add(grad, 16*mib) // kept between steps
			}
			add(act, -32*mib)
			add(ad, -32*mib)
		}
	}
	add(act, 0)
	step()
	if sc := CountTimelineSteps(tl); sc.AutogradPasses != 1 || sc.Steps > 1 {
		t.Errorf("one backward: %+v, want 1 autograd pass", sc)
	}
	step()
	if sc := CountTimelineSteps(tl); sc.AutogradPasses != 2 || len(sc.Ends) != 2 {
		t.Errorf("two steps: %+v, want 2 autograd passes", sc)
	}
}

// TestTimelineForwardLoopBeforeTeardownLimit records a limit, no
// verdict that the loop is clean: a forward-only loop of the h46c family
// (heavyLoop: no gradient, no autograd detail) that keeps a tenth of
// each step, 10 steps, shows its 10 steps from its falls (each step ends
// falling 128 MiB + its last output, more than half of any fall); the
// same loop followed by a teardown that frees the model and all that was
// kept falls by all of it at the end, which sets the scale (half of it
// is above every step's fall): 1 step, growth unjudged, no leak claimed.
// Leaving the teardown out of the scale would count one forward pass's
// layers as steps (see CountTimelineSteps), so the scale is kept.
func TestTimelineForwardLoopBeforeTeardownLimit(t *testing.T) {
	rng := rand.New(rand.NewSource(47))
	tl := heavyLoop{keep: 0.10, steps: 10}.build(rng)
	if n := TimelineSteps(tl); n != 10 {
		t.Fatalf("without a teardown: %d steps, want 10", n)
	}
	last := append([]int64(nil), tl.Bytes[len(tl.Bytes)-1]...)
	for _, c := range []int{categoryIndex("parameter"), categoryIndex("unknown")} {
		last[c] = 0
		tl.TimesUs = append(tl.TimesUs, tl.TimesUs[len(tl.TimesUs)-1]+1000)
		tl.Bytes = append(tl.Bytes, append([]int64(nil), last...))
	}
	if sc := CountTimelineSteps(tl); sc.Steps >= snapshot.MinIterations || sc.Backward != 0 {
		t.Errorf("with a teardown: %+v, want fewer than %d steps (the limit)", sc, snapshot.MinIterations)
	}
	if anyGrows(tl) {
		t.Error("a forward loop whose steps are not seen was judged growing")
	}
}
