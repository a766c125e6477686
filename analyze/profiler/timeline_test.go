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
