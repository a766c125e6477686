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
	// HighFloorBytes is the highest window's floor: what the category
	// held throughout its fullest window, which ToBytes does not show
	// when the last window's memory was freed (a teardown judged with
	// the timeline).
	HighFloorBytes int64
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
	// Teardown is set when the timeline ends with a teardown after its
	// last step (see TimelineTeardown): the windows, floors and rate are
	// then those of the steps, up to the last step's end, so that what
	// the teardown freed (a list of kept tensors, the model) does not
	// hide what the steps kept. TeardownFreedBytes is what it freed, all
	// categories together.
	Teardown           bool
	TeardownFreedBytes int64
	// LoopEndBytes is the category's bytes at the last step's end (the
	// last point when no step end is known).
	LoopEndBytes int64
	// PerStepBytes is what the category held more at the last step's end
	// than at the first's, over the steps between them; 0 when fewer than
	// two step ends are known.
	PerStepBytes int64
	// FirstEndBytes and LastEndBytes are the category's bytes at the
	// first and the last step's end (TimelineStepCount Ends); both 0 when
	// fewer than two step ends are known.
	FirstEndBytes, LastEndBytes int64
}

// TimelineStepCount is how many steps a memory timeline shows and the
// evidence for them.
type TimelineStepCount struct {
	// Steps is the count: the larger of Falls and Backward.
	Steps int
	// Falls counts the times the memory a step holds fell back at its
	// end (see TimelineSteps).
	Falls int
	// Backward counts the backward passes: the larger of GradientRises
	// and AutogradPasses. 0 when the timeline holds neither a gradient
	// nor an autograd detail.
	Backward int
	// GradientRises counts the times the gradient bytes rose from the
	// lowest quarter of their range (least to most over the timeline) to
	// the highest: once a step when zero_grad frees the gradients, once in
	// all when they are kept between steps.
	GradientRises int
	// AutogradPasses counts the stretches in which the autograd detail
	// bytes (the gradients of intermediate results, which backward makes
	// and frees within the pass) were above their least: one a backward
	// pass, whether or not the gradients are kept between steps.
	AutogradPasses int
	// Ends are the indexes of the points at which the steps counted
	// ended, in order: for backward passes (when Backward >= Falls), the
	// first point after each gradient rise at which the gradient bytes
	// are back at their least after zero_grad (the lowest quarter of
	// their range when they never get back to it), or, when the autograd
	// passes outnumber the gradient rises (gradients kept between steps),
	// the first point at which each pass's autograd detail bytes are back
	// at their least (the backward's end); for falls, the first point at
	// which each fall reached its low. A teardown that frees memory
	// outside parameters right after a last fall is part of that fall.
	Ends []int
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
// pass has none. With gradient accumulation the gradients' rises count
// optimizer steps, and the autograd passes below (and Falls) count
// micro-batches, which Backward then counts. Gradients kept between steps
// (zero_grad(set_to_none=False), PyTorch < 2.0's default) rise once, at
// the first backward; every backward pass still makes and frees the
// gradients of its intermediate results, which the memory profiler
// classes as autograd detail (torch/profiler/_memory_profiler.py,
// _set_autograd_detail: what an op under a backward function's scope
// makes that is not otherwise classed), so the stretches in which those bytes are above their
// least count the backward passes too (AutogradPasses), and Backward is
// the larger count. Real H200 recordings (PyTorch 2.11) show one such
// stretch a training step, with gradients freed or kept. Limits: a
// forward-only loop (no gradient, no autograd detail) is counted from
// Falls alone, and a heavy leak hides its steps; so does a teardown at
// its end, whose fall (everything the loop kept, and the step's own)
// sets the scale. That scale is kept: without the teardown, Falls counts
// one forward pass's layers (h46g_single_pass_layer_masks: 7), an eval
// loop's layer outputs (h46g_eval_clean: 95) and a kept-gradients loop's
// autograd detail (f47t_keepgrad_keepall: 40) as steps, and a training
// loop's steps, and the teardown after them, are found from its backward
// passes instead (see TimelineTeardown). A loop whose backward
// frees gradients layer by layer (FSDP's reduce-scatter) could show more
// rises than steps; a step with several backward passes (a GAN's two, a
// gradient penalty's) shows as many autograd passes.
func CountTimelineSteps(tl *kineto.Timeline) TimelineStepCount {
	falls, fallEnds := timelineFalls(tl)
	rises, riseEnds := gradientRises(tl)
	passes, passEnds := autogradPasses(tl)
	c := TimelineStepCount{Falls: falls, Backward: max(rises, passes), GradientRises: rises, AutogradPasses: passes, Ends: fallEnds}
	backEnds := riseEnds
	if passes > rises {
		backEnds = passEnds
	}
	if c.Backward > 0 && c.Backward >= falls {
		c.Ends = backEnds
	}
	c.Steps = max(c.Falls, c.Backward)
	return c
}

// autogradPasses is CountTimelineSteps' AutogradPasses: the stretches in
// which the autograd detail bytes are above their least over the
// timeline, and for each the index of the first point after it at which
// they are back at their least (none for a stretch the timeline ends in).
// A stretch that begins before the activation bytes rose above what they
// held when the last one ended continues that one: between two backward
// passes a forward pass saves its activations, while within one backward
// they are only freed, so a backward whose autograd detail touches its
// least between layers is still one pass.
func autogradPasses(tl *kineto.Timeline) (int, []int) {
	if len(tl.Bytes) == 0 {
		return 0, nil
	}
	lo := tl.Bytes[0][timelineAutogradDetail]
	for _, row := range tl.Bytes {
		lo = min(lo, row[timelineAutogradDetail])
	}
	var ends []int
	passes, in := 0, false
	// actEnd: the activation bytes when the last pass ended; forward: the
	// activations rose above them since.
	var actEnd int64
	forward := false
	for i, row := range tl.Bytes {
		a, act := row[timelineAutogradDetail], row[timelineActivation]
		switch {
		case !in && a > lo:
			in = true
			if passes == 0 || forward {
				passes++
			} else {
				ends = ends[:len(ends)-1] // the last pass goes on
			}
		case in && a == lo:
			in, forward, actEnd = false, false, act
			ends = append(ends, i)
		case !in && act > actEnd:
			forward = true
		}
	}
	return passes, ends
}

// timelineFalls is CountTimelineSteps' Falls, and the index of the
// first point of each counted fall's low.
func timelineFalls(tl *kineto.Timeline) (int, []int) {
	if len(tl.Bytes) == 0 {
		return 0, nil
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
		return 0, nil
	}
	var ends []int
	// base: the low the step rose from; hi: its high so far; lo: the low
	// the total fell to since it fell by h from hi, first reached at loAt.
	base, hi, lo, loAt, falling := tot[0], tot[0], tot[0], 0, false
	end := func() {
		if 4*(hi-lo) >= hi-base {
			ends = append(ends, loAt)
		}
		base, falling = lo, false
	}
	for i, v := range tot {
		if !falling {
			hi = max(hi, v)
			if v <= hi-h {
				falling, lo, loAt = true, v, i
			}
			continue
		}
		if v < lo {
			lo, loAt = v, i
		}
		if v >= lo+h {
			end()
			hi = v
		}
	}
	if falling {
		end()
	}
	return len(ends), ends
}

// gradientRises is CountTimelineSteps' Backward: the rises of the
// gradient bytes from at most a quarter of their range above their least
// to at least three quarters; and, for each, the index of the first point
// after it at which the gradient bytes are at their least again before
// the next rise (the first in the lowest quarter when they never are).
func gradientRises(tl *kineto.Timeline) (int, []int) {
	if len(tl.Bytes) == 0 {
		return 0, nil
	}
	lo, hi := tl.Bytes[0][timelineGradient], tl.Bytes[0][timelineGradient]
	for _, row := range tl.Bytes {
		lo, hi = min(lo, row[timelineGradient]), max(hi, row[timelineGradient])
	}
	if hi <= lo {
		return 0, nil
	}
	var ends []int
	rises, low := 0, false
	// back: the first point in the lowest quarter since the last rise
	// (-1 before it); least: the first at the least since then (-1).
	back, least := -1, -1
	closeStep := func() {
		switch {
		case least >= 0:
			ends = append(ends, least)
		case back >= 0:
			ends = append(ends, back)
		}
		back, least = -1, -1
	}
	for i, row := range tl.Bytes {
		switch g := row[timelineGradient]; {
		case 4*(g-lo) <= hi-lo:
			low = true
			if rises > 0 && back < 0 {
				back = i
			}
			if rises > 0 && g == lo && least < 0 {
				least = i
			}
		case low && 4*(g-lo) >= 3*(hi-lo):
			if rises > 0 {
				closeStep()
			}
			rises++
			low = false
		}
	}
	closeStep()
	return rises, ends
}

// The indexes of categories in kineto.Categories.
var (
	timelineTemporary      = slices.Index(kineto.Categories, "temporary")
	timelineParameter      = slices.Index(kineto.Categories, "parameter")
	timelineOptimizerState = slices.Index(kineto.Categories, "optimizer_state")
	timelineGradient       = slices.Index(kineto.Categories, "gradient")
	timelineActivation     = slices.Index(kineto.Categories, "activation")
	timelineAutogradDetail = slices.Index(kineto.Categories, "autograd_detail")
)

// maxTimelineWindows is the most windows a timeline is cut into; each
// holds at least minWindowPoints points.
const (
	maxTimelineWindows = 10
	minWindowPoints    = 4
)

// TimelineTeardown finds a teardown after the last step of a loop: given
// the indexes of the points at which its steps ended (TimelineStepCount
// Ends), it returns the last one, e, and the bytes the stretch after it
// freed (all categories together), when that stretch, which the timeline
// ends with, never holds more than at e and ends below the least held at
// any step's end: it allocated nothing it kept, and freed what the loop
// held throughout (a list of kept outputs, the model and optimizer of a
// function that returns inside the profiled region). ok is false when
// there is no step end, nothing after it, the stretch after it holds more
// at some point (other work after the loop: an evaluation, a second
// loop), or it frees only part of what the last step held more than the
// first (the last step's input and loss, which the next iteration would
// have replaced); the timeline is then judged whole, as before. Limit: a
// loop whose input at each step's end outweighs what all its steps kept
// is taken to end with a teardown when the last input is freed, which
// only moves the judged points' end to the last step's.
func TimelineTeardown(tl *kineto.Timeline, ends []int) (e int, freed int64, ok bool) {
	n := len(tl.Bytes)
	if len(ends) == 0 || ends[len(ends)-1] >= n-1 {
		return 0, 0, false
	}
	e = ends[len(ends)-1]
	total := func(i int) (t int64) {
		for _, b := range tl.Bytes[i] {
			t += b
		}
		return t
	}
	at := total(e)
	for i := e + 1; i < n; i++ {
		if total(i) > at {
			return 0, 0, false
		}
	}
	// It must free what every step's end held (the model, or what the
	// steps kept), not only the last step's own leftovers (its input, its
	// loss, freed when the next iteration would have replaced them).
	least := at
	for _, i := range ends {
		least = min(least, total(i))
	}
	if total(n-1) >= least {
		return 0, 0, false
	}
	return e, at - total(n-1), true
}

// AnalyzeTimeline judges each category of tl that ever held memory, in
// kineto.Categories order. When the timeline ends with a teardown after
// its last step (TimelineTeardown), the categories are judged over the
// points up to the last step's end (each category's EndBytes and
// PeakBytes are still the whole timeline's).
func AnalyzeTimeline(tl *kineto.Timeline) []CategoryGrowth {
	n := len(tl.TimesUs)
	if n == 0 {
		return nil
	}
	sc := CountTimelineSteps(tl)
	steps := sc.Steps
	loopEnd := n - 1
	e, freed, teardown := TimelineTeardown(tl, sc.Ends)
	if teardown && steps >= snapshot.MinIterations {
		loopEnd = e
	} else {
		teardown, freed = false, 0
	}
	m := loopEnd + 1 // the points judged
	w := min(maxTimelineWindows, m/minWindowPoints)
	var out []CategoryGrowth
	for c, name := range kineto.Categories {
		g := CategoryGrowth{Category: name, EndBytes: tl.Bytes[n-1][c], SpanUs: tl.TimesUs[n-1] - tl.TimesUs[0], Steps: steps,
			Teardown: teardown, TeardownFreedBytes: freed, LoopEndBytes: tl.Bytes[loopEnd][c]}
		for _, row := range tl.Bytes {
			g.PeakBytes = max(g.PeakBytes, row[c])
		}
		if g.PeakBytes <= 0 {
			continue
		}
		if k := len(sc.Ends); k >= 2 {
			g.FirstEndBytes, g.LastEndBytes = tl.Bytes[sc.Ends[0]][c], tl.Bytes[sc.Ends[k-1]][c]
			g.PerStepBytes = (g.LastEndBytes - g.FirstEndBytes) / int64(k-1)
		}
		if w >= 4 {
			floors := make([]int64, w)
			at := make([]int64, w) // time of each floor
			for k := 0; k < w; k++ {
				lo, hi := k*m/w, (k+1)*m/w
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
			g.HighFloorBytes = slices.Max(floors)
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
