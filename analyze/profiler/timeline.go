package profiler

import (
	"slices"

	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse/kineto"
)

// A memory timeline (export_memory_timeline) gives, over time, the bytes
// of each category of tensor: parameters, optimizer state, inputs,
// temporaries, activations, gradients. Within a step activations and
// gradients rise and fall; what a leak leaves is a floor that rises: the
// least a category holds between steps. The timeline is cut into windows
// of equal numbers of points (idle time between steps neither stretches
// nor squeezes them) and each category's floor (its minimum) in every
// window is compared.

// CategoryGrowth is how one category of a memory timeline moved.
type CategoryGrowth struct {
	Category string
	// EndBytes and PeakBytes are the category's bytes at the last point
	// and its most.
	EndBytes, PeakBytes int64
	// Windows counts the windows compared; GrewIn those whose floor rose
	// above the previous window's; FromBytes and ToBytes are the first and
	// last windows' floors.
	Windows, GrewIn    int
	FromBytes, ToBytes int64
	// Grows is the verdict: the floor rose in at least 3 windows, ends
	// above where it started by at least half of all its rises, the
	// second half's highest floor is above the first half's, and the
	// timeline shows at least snapshot.MinIterations steps (Steps).
	Grows bool
	// BytesPerSecond is (ToBytes-FromBytes) over the time from the first
	// window's floor to the last's; 0 when that time is 0.
	BytesPerSecond float64
	// SpanUs is the time the timeline covers, µs.
	SpanUs int64
	// Steps is TimelineSteps of the timeline: growth is judged (Grows)
	// only across snapshot.MinIterations steps or more.
	Steps int
}

// TimelineStepCount is how many steps a memory timeline shows and the
// evidence for them.
type TimelineStepCount struct {
	// Steps is the count: the larger of Falls and Backward.
	Steps int
	// Falls counts the times the memory a step holds fell back at its
	// end (see TimelineSteps).
	Falls int
	// Backward counts the backward passes: the times the gradient bytes
	// rose from the lowest quarter of their range (least to most over the
	// timeline) to the highest. 0 when the timeline holds no gradient.
	Backward int
}

// TimelineSteps is CountTimelineSteps(tl).Steps.
func TimelineSteps(tl *kineto.Timeline) int {
	return CountTimelineSteps(tl).Steps
}

// CountTimelineSteps counts the steps a memory timeline shows, from two
// kinds of evidence, and takes the larger count.
//
// Falls: the times the memory a step holds (every category's bytes but
// parameters', optimizer state's and temporaries') fell back, at the
// end of a step, by at least half of the largest fall the timeline shows
// (the most it ever dropped below an earlier point) and by at least a
// quarter of the step's own rise (from the low where the previous such
// fall ended, or the first point, to the step's high). Each fall is
// counted once, until the memory rose by half of the largest fall again.
// A training or inference step frees, as it ends, what it allocated for
// itself; what it keeps (a leak) lifts the next step but neither the
// step's own rise nor its fall. The falls in the middle of a step
// (activations freed during backward) stay under half of the step's own;
// temporaries, which rise and fall inside every op (an attention's
// scores, a layer's workspace), are left out, so that one forward pass
// of layers with large temporaries shows no step and a loop's steps are
// not hidden behind its ops' temporaries. Parameters and optimizer state
// are the model's, made once (weights loaded, Adam's state at the first
// optimizer step), not a step's: left in, a first step that loads the
// weights rises by them and its fall is under a quarter of its rise
// (weights the profiler could not class, "unknown" in a region without
// a backward pass or the Python tracer, still count so). The
// quarter keeps one forward pass whose layers each keep a saved tensor
// and free a smaller intermediate from counting its layers as steps; it
// also hides the steps of a loop that keeps more than three quarters of
// what each step allocates, which the memory's shape alone cannot tell
// from such a pass.
//
// Backward: PyTorch's memory profiler classes a tensor as a gradient
// only from a backward pass (AccumulateGrad; torch/profiler/
// _memory_profiler.py), and a training step makes its gradients in
// backward and frees them at zero_grad(set_to_none=True), PyTorch 2's
// default, so the gradient bytes rise from (about) none to all of them
// once a step, whatever the step keeps. Each rise from the lowest
// quarter of their range to the highest is a backward pass; one forward
// pass has none. With gradient accumulation it counts optimizer steps,
// not micro-batches (Falls counts those). Limits: gradients kept between
// steps (zero_grad(set_to_none=False)) rise once, so a loop that keeps
// most of each step is counted from Falls alone; so is a forward-only
// loop (no gradient), whose steps a heavy leak hides; a loop whose
// backward frees gradients layer by layer (FSDP's reduce-scatter) could
// show more rises than steps.
func CountTimelineSteps(tl *kineto.Timeline) TimelineStepCount {
	c := TimelineStepCount{Falls: timelineFalls(tl), Backward: gradientRises(tl)}
	c.Steps = max(c.Falls, c.Backward)
	return c
}

// timelineFalls is CountTimelineSteps' Falls.
func timelineFalls(tl *kineto.Timeline) int {
	if len(tl.Bytes) == 0 {
		return 0
	}
	tot := make([]int64, len(tl.Bytes))
	var top, fall int64
	for i, row := range tl.Bytes {
		for c, b := range row {
			if c != timelineTemporary && c != timelineParameter && c != timelineOptimizerState {
				tot[i] += b
			}
		}
		top = max(top, tot[i])
		fall = max(fall, top-tot[i])
	}
	h := fall / 2
	if h <= 0 {
		return 0
	}
	steps := 0
	// base: the low the step rose from; hi: its high so far; lo: the low
	// the total fell to since it fell by h from hi.
	base, hi, lo, falling := tot[0], tot[0], tot[0], false
	end := func() {
		if 4*(hi-lo) >= hi-base {
			steps++
		}
		base, falling = lo, false
	}
	for _, v := range tot {
		if !falling {
			hi = max(hi, v)
			if v <= hi-h {
				falling, lo = true, v
			}
			continue
		}
		lo = min(lo, v)
		if v >= lo+h {
			end()
			hi = v
		}
	}
	if falling {
		end()
	}
	return steps
}

// gradientRises is CountTimelineSteps' Backward: the rises of the
// gradient bytes from at most a quarter of their range above their least
// to at least three quarters.
func gradientRises(tl *kineto.Timeline) int {
	if len(tl.Bytes) == 0 {
		return 0
	}
	lo, hi := tl.Bytes[0][timelineGradient], tl.Bytes[0][timelineGradient]
	for _, row := range tl.Bytes {
		lo, hi = min(lo, row[timelineGradient]), max(hi, row[timelineGradient])
	}
	if hi <= lo {
		return 0
	}
	rises, low := 0, false
	for _, row := range tl.Bytes {
		switch g := row[timelineGradient]; {
		case 4*(g-lo) <= hi-lo:
			low = true
		case low && 4*(g-lo) >= 3*(hi-lo):
			rises++
			low = false
		}
	}
	return rises
}

// The indexes of categories in kineto.Categories.
var (
	timelineTemporary      = slices.Index(kineto.Categories, "temporary")
	timelineParameter      = slices.Index(kineto.Categories, "parameter")
	timelineOptimizerState = slices.Index(kineto.Categories, "optimizer_state")
	timelineGradient       = slices.Index(kineto.Categories, "gradient")
)

// maxTimelineWindows is the most windows a timeline is cut into; each
// holds at least minWindowPoints points.
const (
	maxTimelineWindows = 10
	minWindowPoints    = 4
)

// AnalyzeTimeline judges each category of tl that ever held memory, in
// kineto.Categories order.
func AnalyzeTimeline(tl *kineto.Timeline) []CategoryGrowth {
	n := len(tl.TimesUs)
	if n == 0 {
		return nil
	}
	w := min(maxTimelineWindows, n/minWindowPoints)
	steps := TimelineSteps(tl)
	var out []CategoryGrowth
	for c, name := range kineto.Categories {
		g := CategoryGrowth{Category: name, EndBytes: tl.Bytes[n-1][c], SpanUs: tl.TimesUs[n-1] - tl.TimesUs[0], Steps: steps}
		for _, row := range tl.Bytes {
			g.PeakBytes = max(g.PeakBytes, row[c])
		}
		if g.PeakBytes <= 0 {
			continue
		}
		if w >= 4 {
			floors := make([]int64, w)
			at := make([]int64, w) // time of each floor
			for k := 0; k < w; k++ {
				lo, hi := k*n/w, (k+1)*n/w
				floors[k] = tl.Bytes[lo][c]
				at[k] = tl.TimesUs[lo]
				for i := lo; i < hi; i++ {
					if tl.Bytes[i][c] < floors[k] {
						floors[k], at[k] = tl.Bytes[i][c], tl.TimesUs[i]
					}
				}
			}
			var rises int64
			var firstMax, secondMax int64 = floors[0], floors[w/2]
			for k := 1; k < w; k++ {
				if d := floors[k] - floors[k-1]; d > 0 {
					g.GrewIn++
					rises += d
				}
				if k < w/2 {
					firstMax = max(firstMax, floors[k])
				} else {
					secondMax = max(secondMax, floors[k])
				}
			}
			g.Windows = w
			g.FromBytes, g.ToBytes = floors[0], floors[w-1]
			net := g.ToBytes - g.FromBytes
			g.Grows = g.GrewIn >= snapshot.MinRises && net > 0 && 2*net >= rises && secondMax > firstMax && steps >= snapshot.MinIterations
			if dt := at[w-1] - at[0]; dt > 0 {
				g.BytesPerSecond = float64(net) / (float64(dt) / 1e6)
			}
		}
		out = append(out, g)
	}
	return out
}
