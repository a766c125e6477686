package profiler

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gpuleak/gpuleak/parse/kineto"
)

// heavyLoop is one synthetic timeline of the h46c family: a loop of
// steps (training: forward, backward, optimizer step; or forward-only)
// that keeps a fraction of what each step allocates.
type heavyLoop struct {
	train, temps bool
	keep         float64 // fraction of a step's own rise it keeps
	steps        int
}

// categoryIndex is the column of a category in kineto.Categories.
func categoryIndex(name string) int {
	for i, c := range kineto.Categories {
		if c == name {
			return i
		}
	}
	panic(name)
}

// build writes the loop as export_memory_timeline's rows would hold it
// (one point a millisecond). The shapes follow what PyTorch's memory
// profiler can tell (torch/profiler/_memory_profiler.py): it classes
// inputs, activations and gradients only from a training step's data
// flow (_set_inputs: "predicated on using at least one training step"),
// so a forward-only loop's memory is "unknown" but its parameters (found
// through the Python tracer) and its temporaries (freed inside the op
// that made them); a training loop's is parameters, an input, saved
// activations (freed layer by layer in backward), gradients (made by
// AccumulateGrad in backward, freed by zero_grad(set_to_none=True)) and
// Adam's optimizer state (made at the first optimizer step).
//
// The weights (12 layers of 20-40 MiB) are loaded in the profiled region
// before the first step, so the first step rises from below them. A
// step reads a batch (16 MiB in training, 128 MiB forward-only); each
// layer allocates its output (8-24 MiB: saved for backward in training,
// freed by the next layer forward-only) and, with temps, a temporary of
// 1-3x the layer's weight that its op frees. What the step keeps (a list
// of outputs, made after the last layer) is keep of all the step
// allocates: K = keep/(1-keep) x what it frees.
func (h heavyLoop) build(rng *rand.Rand) *kineto.Timeline {
	const mib = 1 << 20
	param, opt, input := categoryIndex("parameter"), categoryIndex("optimizer_state"), categoryIndex("input")
	tmp, act, grad, unk := categoryIndex("temporary"), categoryIndex("activation"), categoryIndex("gradient"), categoryIndex("unknown")
	tl := &kineto.Timeline{}
	cur := make([]int64, len(kineto.Categories))
	add := func(cat int, b int64) {
		cur[cat] += b
		tl.TimesUs = append(tl.TimesUs, 1_796_000_000_000_000+int64(len(tl.TimesUs))*1000)
		tl.Bytes = append(tl.Bytes, append([]int64(nil), cur...))
	}
	temp := func(b int64) {
		if h.temps {
			add(tmp, b)
			add(tmp, -b)
		}
	}
	weights := make([]int64, 12)
	var all int64
	for i := range weights {
		weights[i] = int64(20+rng.Intn(21)) * mib
		all += weights[i]
		add(param, weights[i])
	}
	kept := func(freed int64) int64 { return int64(h.keep / (1 - h.keep) * float64(freed)) }
	for s := 0; s < h.steps; s++ {
		outs := make([]int64, len(weights))
		var sum int64
		if !h.train {
			add(unk, 128*mib)
			for l := range weights {
				outs[l] = int64(8+rng.Intn(17)) * mib
				sum += outs[l]
				temp(weights[l] * int64(1+rng.Intn(3)))
				add(unk, outs[l])
				if l > 0 {
					add(unk, -outs[l-1]) // the next layer frees its input
				}
			}
			add(unk, kept(128*mib+sum))
			add(unk, -128*mib)
			add(unk, -outs[len(outs)-1])
			continue
		}
		add(input, 16*mib)
		for l := range weights {
			outs[l] = int64(8+rng.Intn(17)) * mib
			sum += outs[l]
			temp(weights[l] * int64(1+rng.Intn(3)))
			add(act, outs[l])
		}
		add(act, kept(16*mib+sum+all))
		for l := len(weights) - 1; l >= 0; l-- {
			temp(weights[l])
			add(grad, weights[l])
			add(act, -outs[l])
		}
		add(input, -16*mib)
		if s == 0 {
			add(opt, 2*all)
		}
		temp(all)       // the optimizer step's foreach temporaries
		add(grad, -all) // zero_grad(set_to_none=True)
	}
	return tl
}

// TestTimelineHeavyLeakFamily: the h46c family of seeded synthetic loops,
// every kept fraction the brief names (0, 10%, 50%, 80%, 95% of what a
// step allocates), training and forward-only, with and without
// temporaries, 8 to 20 steps, 5 seeds each (100 timelines), and each
// loop's single step (one pass).
//
// Expected, by hand (sizes in MiB; weights W = 240-480 in all):
//   - Training: every step makes its gradients (W) in backward and frees
//     them at its end, so the gradient bytes rise from 0 to W once a
//     step: every step is counted (Backward), whatever it keeps, and the
//     kept activations grow when it keeps anything: the activations'
//     floor rises by a step's K in every window. Before, 80% and 95%
//     showed no step, so the leak went unjudged: the fall at a step's
//     end (16 + W) is under a quarter of its rise (K = 4 or 19 times
//     16 + outputs + W, above 3 times the fall), and 0-50% missed the
//     first step, whose rise held the weights being loaded and the
//     optimizer state Adam makes at the first step.
//   - Forward-only: no gradient, so only Falls counts. A step rises to
//     128 + out_11 + K above where it began (128 + two outputs, 176 at
//     most, before K is made) and ends falling 128 + out_11 (136-152)
//     back to where it began plus K. A layer frees out_(l-1): the most
//     the memory drops below the step's high before its end is 40 (a
//     pair of 24s, then a single 8), under half (68 or more) of the
//     largest fall, which is at least one step's end's 136: no layer ends
//     a step. A step's end's fall is a quarter or more of its rise when
//     K <= 3 x (128 + out_11). K = keep/(1-keep) x (128 + outputs), the
//     outputs 96-288 of which out_11 is one: keeping nothing, 10% (K 46
//     at most) or 50% (K = 128 + outputs <= 128 + 264 + out_11 <=
//     3 x (128 + out_11), as 2 x out_11 >= 16) every step is counted, the
//     first too now that the weights are outside the sum (before, one
//     fewer), and the "unknown" memory grows iff K > 0. Keeping 80% or
//     95% (K = 4 or 19 times 128 + outputs, 896 or more, above 3 x 152)
//     no step: growth unjudged, the limit CountTimelineSteps states: a
//     forward pass whose layers keep saved tensors has that shape.
//   - One pass (1 step) of either kind shows at most one step: never a
//     leak.
func TestTimelineHeavyLeakFamily(t *testing.T) {
	rng := rand.New(rand.NewSource(46))
	for _, train := range []bool{true, false} {
		for _, temps := range []bool{false, true} {
			for _, keep := range []float64{0, 0.10, 0.50, 0.80, 0.95} {
				for seed := 0; seed < 5; seed++ {
					h := heavyLoop{train: train, temps: temps, keep: keep, steps: 8 + rng.Intn(13)}
					name := fmt.Sprintf("train=%v temps=%v keep=%.0f%% steps=%d seed=%d", train, temps, 100*keep, h.steps, seed)
					tl := h.build(rng)
					n := TimelineSteps(tl)
					counted := train || keep <= 0.50
					t.Logf("%s: %d steps", name, n)
					switch {
					case counted && n != h.steps:
						t.Errorf("%s: %d steps, want %d", name, n, h.steps)
					case !counted && n != 0:
						t.Errorf("%s: %d steps, want none (a forward-only loop keeping most of each step is a forward pass's shape)", name, n)
					}
					grows := map[string]bool{}
					for _, g := range AnalyzeTimeline(tl) {
						if g.Grows {
							grows[g.Category] = true
						}
					}
					want := map[string]bool{}
					if counted && keep > 0 {
						if train {
							want["activation"] = true
						} else {
							want["unknown"] = true
						}
					}
					if fmt.Sprint(grows) != fmt.Sprint(want) {
						t.Errorf("%s: growing %v, want %v", name, grows, want)
					}
					one := heavyLoop{train: train, temps: temps, keep: keep, steps: 1}.build(rng)
					if n := TimelineSteps(one); n > 1 || anyGrows(one) {
						t.Errorf("%s, one step: %d steps, grows %v", name, n, anyGrows(one))
					}
				}
			}
		}
	}
}
