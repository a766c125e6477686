package pytorchtext

import "testing"

// Session 47, helper f47c (testdata/README.md, "OOM recognition and
// counting in text logs (session 47, f47c)").

// A tqdm bar drawn on a logged OOM's line (pytorch/pytorch#31252:
// "WARNING:root:CUDA out of memory. ... cached)   | 1/2538 [00:00<?,
// ?batch/s]") counts the run's progress for the messages after it. The
// bars read 1, 2, 2, 4, 5, 6 (of 2538) on lines 1-6; a line's progress
// line is the last line before it whose count differed from the count
// before: none for line 1, then 1, 2, 2 (line 3's 2 is no new count), 4,
// 5. So line 3, which repeats line 1's figures, comes after progress
// (line 2). (It was null for every line.)
func TestF47cBarOnMessageLine(t *testing.T) {
	rs := readFile(t, "pastes/f47c_caught_bar_counters_pytorch31252.txt", false)
	want := []int64{0, 1, 2, 2, 4, 5}
	if len(rs.msgs) != len(want) {
		t.Fatalf("%d messages, want %d", len(rs.msgs), len(want))
	}
	for i, m := range rs.msgs {
		if m.line != int64(i+1) || m.progress != want[i] {
			t.Errorf("message %d: line %d progress line %d; want line %d, progress line %d", i, m.line, m.progress, i+1, want[i])
		}
	}
}
