package profiler

import (
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
		grows := false
		for _, g := range AnalyzeTimeline(tl) {
			grows = grows || g.Grows
		}
		if grows != c.grows {
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
		row := make([]int64, len(kineto.Categories))
		row[0] = 32 << 20      // parameter
		row[4] = (i + 1) << 21 // activation
		tl.TimesUs = append(tl.TimesUs, 1_796_000_000_000_000+i*1000)
		tl.Bytes = append(tl.Bytes, row)
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
