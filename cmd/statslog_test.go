package cmd_test

import (
	"strings"
	"testing"
)

// memory_stats() and memory_summary() in logs through analyze (the
// session-43 tester's inputs; testdata/README.md). Expected, from the
// files: two ranks' interleaved tables give device 1's "CUDA OOMs: 1" and
// trip --fail-on oom (exit 1); a dump pretty-printed between log lines
// with num_ooms 3 and no OOM message trips it too, and a dump on one line
// after "step 0: " with num_ooms 0 passes (exit 0) with its set read;
// a dump taken at the one OOM a log shows, counting 3, says 3 were counted
// and 1 is described. Before: exit 0 with rank 0's row read as device 1's,
// exit 2 "unrecognised input format" for both logs, and no stats for the
// last.
func TestStatsAndSummariesInLogs(t *testing.T) {
	dir := "../testdata/pytorch/synthetic/"
	for _, c := range []struct {
		file string
		code int
		want string
	}{
		{"summary_interleaved_ranks.txt", 1, "device 1: 8.8 GiB allocated, 10 GiB reserved, 1 OOM"},
		{"memory_stats_json_in_log.log", 1, "6.0 GiB allocated, 10 GiB reserved, 3 OOMs"},
		{"memory_stats_step_line.log", 0, "2.0 GiB allocated, 8.0 GiB reserved, 0 OOMs"},
		{"oom_then_memory_stats_json.log", 1, "the allocator counted 3 out-of-memory errors (num_ooms, line 5, taken at the OOM it is shown with); the inputs describe 1"},
	} {
		code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", dir+c.file)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d and %q in:\n%.300s\nstderr %.200q", c.file, code, c.code, c.want, out, errOut)
		}
	}
}
