package profiler

import (
	"math/rand"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
)

// TestTimelineGrowth: both recordings keep one step's output (2 MiB, which
// PyTorch's memory profiler classes as an activation) per step, 8 in the
// shared fixture and 10 on the H200; parameters (32 MiB: two 1024x4096
// fp32 weights and biases), the input and the cuBLAS workspace
// ("unknown") are held flat. Exactly one category grows: activation. The
// .json and .raw.json.gz of the H200 run must agree.
func TestTimelineGrowth(t *testing.T) {
	for _, c := range []struct {
		path  string
		raw   bool
		steps int64
	}{
		{"../../testdata/pytorch/memory_timeline.json", false, 8},
		{"../../testdata/kineto/profile_keep_outputs_memory_timeline.json", false, 10},
		{"../../testdata/kineto/profile_keep_outputs_memory_timeline.raw.json.gz", true, 10},
	} {
		in, err := parse.Open(c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := kineto.ReadTimeline(in.Reader(), c.path, c.raw)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		var grows []CategoryGrowth
		for _, g := range AnalyzeTimeline(tl) {
			if g.Grows {
				grows = append(grows, g)
			}
			if g.Category == "parameter" && (g.Grows || g.EndBytes != 33574912) {
				t.Errorf("%s: parameters %+v, want 33574912 bytes held flat", c.path, g)
			}
		}
		if len(grows) != 1 || grows[0].Category != "activation" {
			t.Fatalf("%s: growing categories %+v, want activation alone", c.path, grows)
		}
		// The kept outputs are all live at the end: at least steps x 2 MiB.
		if g := grows[0]; g.EndBytes < c.steps<<21 || g.ToBytes <= g.FromBytes {
			t.Errorf("%s: activation %+v, want at least %d bytes at the end", c.path, g, c.steps<<21)
		}
	}
}

// TestTimelineSteps: the steps a timeline shows are the falls of its total
// memory. The recordings hold 8 (the shared fixture), 10 (the H200 run)
// and 6 (hm_timeline_*) steps, each ending with its activations and
// gradients freed; the first three steps of the H200 run (its first 118
// points, cut where the third step's memory fell back) hold 3, too few to
// judge growth across steps: its kept outputs (2 MiB a step) are no leak
// there, whatever the windows' floors do.
func TestTimelineSteps(t *testing.T) {
	for _, c := range []struct {
		path  string
		raw   bool
		steps int
		grows bool
	}{
		{"../../testdata/pytorch/memory_timeline.json", false, 8, true},
		{"../../testdata/kineto/profile_keep_outputs_memory_timeline.json", false, 10, true},
		{"../../testdata/kineto/profile_keep_outputs_memory_timeline.raw.json.gz", true, 10, true},
		{"../../testdata/kineto/hm_timeline_keep.timeline.json.gz", false, 6, true},
		{"../../testdata/kineto/hm_timeline_clean.timeline.json.gz", false, 6, false},
		{"../../testdata/kineto/t45c_keep_outputs_3steps_memory_timeline.json", false, 3, false},
		{"../../testdata/kineto/f45a_synthetic_leak_1GiB_per_step_10steps_memory_timeline.json", false, 10, true},
		{"../../testdata/kineto/f45a_synthetic_leak_eighth_50steps_memory_timeline.json", false, 50, true},
		// Large temporaries inside each op (testdata/gen/x45b_timelines.py):
		// 20 forward-only batches whose ops free a 1000 MiB temporary and
		// keep 20 MiB of output a batch (unknown), and 10 training steps
		// whose ops free 6000 MiB temporaries and keep 50 MiB a step. The
		// temporaries' falls are no step ends; the held memory's are.
		// 20: the first batch rises from the first point, before the
		// 960 MiB of parameters were loaded; they are the model's, not the
		// step's, and left out of the sum, so its 244 MiB fall is measured
		// against its own rise (264 MiB), not that plus the weights
		// (session 45 counted 19).
		{"../../testdata/kineto/x45b_synthetic_forward_only_large_temporaries_leak_memory_timeline.json", false, 20, true},
		{"../../testdata/kineto/x45b_synthetic_train_large_temporaries_leak_memory_timeline.json", false, 10, true},
	} {
		in, err := parse.Open(c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := kineto.ReadTimeline(in.Reader(), c.path, c.raw)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := TimelineSteps(tl); n != c.steps {
			t.Errorf("%s: %d steps, want %d", c.path, n, c.steps)
		}
		if grows := anyGrows(tl); grows != c.grows {
			t.Errorf("%s: a category grows: %v, want %v", c.path, grows, c.grows)
		}
	}
}

// TestTimelineOnePass: a timeline of one forward pass (synthetic: 40
// layers each saving a 2 MiB activation for backward, 32 MiB of
// parameters flat) rises throughout and never falls back: no step, so no
// growth across steps, though every window's floor is above the last.
func TestTimelineOnePass(t *testing.T) {
	tl := &kineto.Timeline{}
	for i := int64(0); i < 40; i++ {
		addTimelineRow(tl, 32<<20, 0, (i+1)<<21)
	}
	if n := TimelineSteps(tl); n != 0 {
		t.Errorf("%d steps in one forward pass", n)
	}
	for _, g := range AnalyzeTimeline(tl) {
		if g.Grows {
			t.Errorf("%s grows in one forward pass: %+v", g.Category, g)
		}
	}
}

// TestTimelineStepsLeakSweep: a loop that keeps part of what each step
// allocates (synthetic, seeded: 200 timelines, 5 to 60 steps, one kept
// fraction each between 5% and 60%, every tenth keeping nothing) shows
// every step however much it keeps and for however many steps, and only
// its activations grow (none when it keeps nothing). Parameters are flat
// at 64 MiB; in each step activations rise by R, 96-128 MiB, in 4-12
// points, with a temporary under R/10 on the way, and fall in 1-3 points
// to what the step keeps. By hand: each step's lows are the last's or
// higher, so the largest fall is one step's, (1-kept)*128 MiB at most, and
// every step falls by (1-kept)*96 MiB or more, above half of it; a fall is
// 40% or more of its step's rise (R), above a quarter; the temporary (under
// 12.8 MiB) stays under half of the largest fall (19.2 MiB or more).
// Before, the falls were measured against the whole timeline's swing,
// which what the steps keep widens: 60 steps keeping 60% showed none.
func TestTimelineStepsLeakSweep(t *testing.T) {
	rng := rand.New(rand.NewSource(45))
	for i := 0; i < 200; i++ {
		keep := 0.05 + 0.55*rng.Float64()
		if i%10 == 0 {
			keep = 0
		}
		steps := 5 + rng.Intn(56)
		tl := &kineto.Timeline{}
		var act int64
		add := func(temp int64) { addTimelineRow(tl, 64<<20, temp, act) }
		add(0)
		for s := 0; s < steps; s++ {
			rise := int64(96<<20) + rng.Int63n(32<<20)
			n := 4 + rng.Intn(9)
			base := act
			for k := 1; k <= n; k++ {
				act = base + rise*int64(k)/int64(n)
				if k == n/2 {
					add(rng.Int63n(rise / 10))
				}
				add(0)
			}
			end := base + int64(keep*float64(rise))
			for m := 1 + rng.Intn(3); m > 0; m-- {
				act = end + (act-end)*int64(m-1)/int64(m)
				add(0)
			}
		}
		if n := TimelineSteps(tl); n != steps {
			t.Errorf("case %d: keeping %.0f%% of each step: %d steps, want %d", i, 100*keep, n, steps)
			continue
		}
		grows := false
		for _, g := range AnalyzeTimeline(tl) {
			if g.Grows && g.Category != "activation" {
				t.Errorf("case %d: %s grows", i, g.Category)
			}
			grows = grows || g.Grows
		}
		if grows != (keep > 0) {
			t.Errorf("case %d: keeping %.0f%% of each step over %d steps: grows %v", i, 100*keep, steps, grows)
		}
	}
}

// TestTimelineOnePassWithTemporaries: one forward pass whose layers each
// save 100 MiB of activations and free a 60 MiB temporary (synthetic: 12
// layers) shows no step. By hand: every fall is the temporary's 60 MiB,
// the largest fall, and 60 is more than a quarter of a layer's 160 MiB
// rise, so the totals alone counted 12 steps, and its activations,
// rising 100 MiB a "step", were a leak (the limit f45a's commit named).
// What a step ends by freeing is held memory (activations, gradients,
// inputs); a layer frees only its temporary, so no layer ends a step. A
// loop that frees its activations at each step's end still shows its
// steps (TestTimelineStepsLeakSweep).
func TestTimelineOnePassWithTemporaries(t *testing.T) {
	tl := &kineto.Timeline{}
	var act int64
	add := func(tmp int64) { addTimelineRow(tl, 256<<20, tmp, act) }
	add(0)
	for layer := 0; layer < 12; layer++ {
		act += 100 << 20
		add(60 << 20)
		add(0)
	}
	if n := TimelineSteps(tl); n != 0 {
		t.Errorf("%d steps in one forward pass with temporaries", n)
	}
	for _, g := range AnalyzeTimeline(tl) {
		if g.Grows {
			t.Errorf("%s grows in one forward pass: %+v", g.Category, g)
		}
	}
}

// addTimelineRow appends a point 1 ms after tl's last (the first at a
// fixed 2026 time) holding param, temp and act bytes of parameters,
// temporaries and activations.
func addTimelineRow(tl *kineto.Timeline, param, temp, act int64) {
	row := make([]int64, len(kineto.Categories))
	row[0] = param
	row[timelineTemporary] = temp
	row[4] = act
	tl.TimesUs = append(tl.TimesUs, 1_796_000_000_000_000+int64(len(tl.TimesUs))*1000)
	tl.Bytes = append(tl.Bytes, row)
}

// anyGrows reports whether AnalyzeTimeline finds a category of tl growing.
func anyGrows(tl *kineto.Timeline) bool {
	for _, g := range AnalyzeTimeline(tl) {
		if g.Grows {
			return true
		}
	}
	return false
}

// TestTimelineForwardPassSavedTensors: one forward pass (synthetic: 24
// layers, grad enabled, no backward) whose layers each keep a 96 MiB
// tensor saved for backward and free a 30 MiB intermediate the next op
// consumed (not a temporary: two ops held it), all "unknown" as the memory
// profiler leaves a pass without backward. By hand: every fall is 30 MiB,
// the largest, and each layer rises 126 MiB from the last layer's low, so
// a fall is under a quarter of its rise (31.5): no step, no growth judged,
// though the saved tensors rise in every window. It holds no gradient, so
// no backward pass is counted either.
func TestTimelineForwardPassSavedTensors(t *testing.T) {
	tl := &kineto.Timeline{}
	unk := categoryIndex("unknown")
	cur := make([]int64, len(kineto.Categories))
	cur[0] = 512 << 20
	add := func(d int64) {
		cur[unk] += d
		tl.TimesUs = append(tl.TimesUs, 1_796_000_000_000_000+int64(len(tl.TimesUs))*1000)
		tl.Bytes = append(tl.Bytes, append([]int64(nil), cur...))
	}
	add(0)
	for l := 0; l < 24; l++ {
		add(96<<20 + 30<<20)
		add(-30 << 20)
	}
	if c := CountTimelineSteps(tl); c.Steps != 0 || c.Backward != 0 {
		t.Errorf("one forward pass: %+v, want no step", c)
	}
	if anyGrows(tl) {
		t.Error("one forward pass grows")
	}
}

// TestTimelineBackwardRisesSharded: a training loop whose backward frees
// each layer's full gradient once it is reduce-scattered, keeping an
// eighth (FSDP-like; synthetic: 4 steps, 12 layers of 30 MiB), then frees
// the shards at zero_grad. By hand: the gradient bytes peak at the last
// layer, 41.25 MiB of shards (11 kept, 3.75 each) + 30 = 71.25 MiB; the
// lowest quarter is 17.8 MiB or less, the highest 53.4 or more. Within a
// backward the shards only grow: the bytes reach 53.4 MiB first at the
// 8th layer (26.25 + 30) and then never fall below its 30 MiB of shards
// before zero_grad, so one rise a step: 4, not 48.
func TestTimelineBackwardRisesSharded(t *testing.T) {
	tl := &kineto.Timeline{}
	grad := categoryIndex("gradient")
	cur := make([]int64, len(kineto.Categories))
	add := func(d int64) {
		cur[grad] += d
		tl.TimesUs = append(tl.TimesUs, 1_796_000_000_000_000+int64(len(tl.TimesUs))*1000)
		tl.Bytes = append(tl.Bytes, append([]int64(nil), cur...))
	}
	add(0)
	const mib = 1 << 20
	for s := 0; s < 4; s++ {
		for l := 0; l < 12; l++ {
			add(30 * mib)
			add(-30*mib + 30*mib/8)
		}
		add(-cur[grad])
	}
	if c := CountTimelineSteps(tl); c.Backward != 4 {
		t.Errorf("%+v, want 4 backward passes", c)
	}
}
