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

// TimelineSteps counts the steps a memory timeline shows: the times the
// memory it holds (every category's bytes but temporaries', which an op
// frees before it returns) fell back, at the end of a step, by at least
// half of the largest fall the timeline shows (the most it ever dropped
// below an earlier point) and by at least a quarter of the step's own
// rise (from the low where the previous such fall ended, or the first
// point, to the step's high). Each fall is counted once, until the memory
// rose by half of the largest fall again. A training or inference step
// frees, as it ends, what it allocated for itself; what it keeps (a
// leak) lifts the next step but neither the step's own rise nor its
// fall, so the count does not depend on how much a loop leaks or for how
// many steps. The falls in the middle of a step (activations freed
// during backward) stay under half of the step's own; temporaries, which
// rise and fall inside every op (an attention's scores, a layer's
// workspace), are left out, so that one forward pass of layers with
// large temporaries shows no step and a loop's steps are not hidden
// behind its ops' temporaries. One forward pass that only rises shows no
// step; nor does a loop whose steps free less than a quarter of what
// they allocate. Limit: a first step that rises from before the weights
// were loaded may not be counted.
func TimelineSteps(tl *kineto.Timeline) int {
	if len(tl.Bytes) == 0 {
		return 0
	}
	tot := make([]int64, len(tl.Bytes))
	var top, fall int64
	for i, row := range tl.Bytes {
		for c, b := range row {
			if c != timelineTemporary {
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

// timelineTemporary is the index of "temporary" in kineto.Categories.
var timelineTemporary = slices.Index(kineto.Categories, "temporary")

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
