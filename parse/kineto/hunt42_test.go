package kineto

import (
	"os"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// Session 42: export_memory_timeline's .json of a region with one
// allocation holds one time and one sizes row, [[t], [[0, ...]]], which
// the sniffer (wanting "[[t, t,") refused; of a region with none on the
// device, [[], []]. Both are timelines now; a .raw.json of two events
// and other arrays of arrays are not taken for them.
func TestHunt42ShortTimelines(t *testing.T) {
	for _, c := range []struct {
		head string
		want parse.Format
	}{
		{`[[1796363357167032], [[0, 0, 0, 0, 0, 0, 0, 0, 4194304]]]`, FormatMemoryTimeline},
		{`[[1796363357167032, 1796363357167040], [[0, 0, 0, 0, 0, 0, 0, 0, 4194304], [0, 0`, FormatMemoryTimeline},
		{`[[], []]`, FormatMemoryTimeline},
		{"[\n [\n  17\n ],\n [\n  [\n   0", FormatMemoryTimeline},
		{`[[1796363357167032253, 2, 4194304, 7]]`, FormatMemoryTimelineRaw},
		{`[[1796363357167032253, 2, 4194304, 7], [1796363357167032999, 4, -4194304, 7]]`, FormatMemoryTimelineRaw},
		{`[[1, 2], [3, 4]]`, parse.FormatUnknown},
		{`[[1], ["a"]]`, parse.FormatUnknown},
		// export_memory_timeline_raw json.dumps its list of events, empty
		// when none was of the device: h43b reads it (it holds nothing
		// to judge, and says so) where s42 refused it.
		{`[]`, FormatMemoryTimelineRaw},
		{" [ \n ] \n", FormatMemoryTimelineRaw},
		{`[] x`, parse.FormatUnknown},
		{`[]]`, parse.FormatUnknown},
	} {
		if got := SniffTimeline([]byte(c.head)); got != c.want {
			t.Errorf("%q: %q, want %q", c.head, got, c.want)
		}
	}
	// The H200's one-point timeline (testdata/README.md): 4194304 B in
	// the last column, "unknown", at 1796363357167032 µs.
	f, err := os.Open("../../testdata/kineto/timeline_one_point.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tl, err := ReadTimeline(f, f.Name(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.TimesUs) != 1 || tl.TimesUs[0] != 1796363357167032 || tl.Bytes[0][len(Categories)-1] != 4194304 {
		t.Errorf("%+v", tl)
	}
}
