package profiler

import (
	"testing"

	"github.com/gpuleak/gpuleak/parse/kineto"
)

// teardownLoop is a synthetic training loop of 6 steps over 64 MiB of
// parameters: each step's activations rise 100 MiB above what the earlier
// steps kept, backward frees 60 MiB of them and makes 64 MiB of gradients,
// zero_grad frees the gradients: 40 MiB kept a step. Then after(tl, act)
// adds what follows the loop.
func teardownLoop(after func(tl *kineto.Timeline, act int64)) *kineto.Timeline {
	tl := &kineto.Timeline{}
	var act, grad int64
	add := func(param int64) {
		addTimelineRow(tl, param, 0, act)
		tl.Bytes[len(tl.Bytes)-1][timelineGradient] = grad
	}
	add(64 << 20)
	for s := 0; s < 6; s++ {
		base := act
		for k := 1; k <= 5; k++ {
			act = base + int64(k)*20<<20
			add(64 << 20)
		}
		act = base + 40<<20 // backward freed what it no longer needs
		grad = 64 << 20
		add(64 << 20)
		add(64 << 20)
		grad = 0 // zero_grad(set_to_none=True)
		add(64 << 20)
		add(64 << 20)
	}
	after(tl, act)
	return tl
}

// TestTimelineLoopBeforeTeardown: the loop's kept activations (40 MiB a
// step, 240 MiB after 6) are freed at its end with the model, as when a
// function that keeps them returns inside the profiled region. Before, the
// windows took in the teardown, whose floor (0 B) ended the activations
// below where they started: no growth. Judged over the steps (up to the
// last zero_grad, the 6th step's end), the activations grow: a leak of
// 240 MiB at the loop's end, (240-40)/5 = 40 MiB a step, and the teardown
// freed 64 MiB of parameters and 240 MiB of activations.
func TestTimelineLoopBeforeTeardown(t *testing.T) {
	tl := teardownLoop(func(tl *kineto.Timeline, act int64) {
		for act > 0 {
			act -= 40 << 20
			addTimelineRow(tl, 64<<20, 0, act)
		}
		addTimelineRow(tl, 0, 0, 0)
	})
	if sc := CountTimelineSteps(tl); sc.Steps != 6 || len(sc.Ends) != 6 {
		t.Fatalf("steps %+v, want 6 with 6 ends", sc)
	}
	var act *CategoryGrowth
	for _, g := range AnalyzeTimeline(tl) {
		if g.Category == "activation" {
			act = &g
		} else if g.Grows {
			t.Errorf("%s grows: %+v", g.Category, g)
		}
	}
	if act == nil || !act.Grows || !act.Teardown {
		t.Fatalf("activation %+v, want growing before a teardown", act)
	}
	if act.LoopEndBytes != 240<<20 || act.PerStepBytes != 40<<20 || act.TeardownFreedBytes != (64+240)<<20 || act.EndBytes != 0 {
		t.Errorf("activation %+v: want 240 MiB at the loop's end, 40 MiB a step, 304 MiB freed by the teardown, 0 B at the end", act)
	}
}

// TestTimelineWorkAfterLoopIsNoTeardown: the same loop followed by an
// evaluation that allocates 500 MiB above the loop's end and frees it and
// the kept activations: the stretch after the last step holds more than
// the loop's end, so it is other work, not a teardown, and the timeline
// is judged whole as before (its last window's floor is 0 B: no growth
// found, the limit of windows over a whole timeline, kept as it was).
func TestTimelineWorkAfterLoopIsNoTeardown(t *testing.T) {
	tl := teardownLoop(func(tl *kineto.Timeline, act int64) {
		addTimelineRow(tl, 64<<20, 0, act+500<<20)
		for act > 0 {
			act -= 40 << 20
			addTimelineRow(tl, 64<<20, 0, act)
		}
	})
	if _, _, ok := TimelineTeardown(tl, CountTimelineSteps(tl).Ends); ok {
		t.Errorf("a stretch that allocated 500 MiB after the loop was taken for a teardown")
	}
	for _, g := range AnalyzeTimeline(tl) {
		if g.Teardown {
			t.Errorf("%s judged before a teardown: %+v", g.Category, g)
		}
	}
}
