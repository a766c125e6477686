package oom

import (
	"strings"
	"testing"
)

// llama.cpp's failures, counted as the log shows them:
//
//   - ggml-org/llama.cpp#11476 (docker compose's log of a server that kept
//     running): three identical failure chains, each closed by its
//     caller's line ("llama_kv_cache_update_impl: failed to allocate
//     compute buffers", lines 3 and 6 before the second and third
//     failures). llama.cpp logs each failure once, so each chain is
//     another call that failed: three OOMs (lines 1, 4, 7), each after
//     the first with a note naming the line that showed llama.cpp went
//     on. Before, one OOM from the three lines.
//   - the same failure line twice with nothing between (synthetic): no
//     evidence of a second call, so one OOM, with a note that the text
//     cannot tell.
//   - a retry without pipeline parallelism that succeeded (PR #26297's
//     log): no OOM at all; that it failed too (synthetic): two OOMs, the
//     first reservation's and the retry's.
func TestLlamaFailuresCounted(t *testing.T) {
	for _, c := range []struct {
		file  string
		lines []int64 // each OOM's first source line
		note  string  // in the last OOM's notes
	}{
		{"pastes/llamacpp_kvupdate_three_llamacpp11476.txt", []int64{1, 4, 7}, "again after line 6 showed llama.cpp went on"},
		{"pastes/synthetic_llamacpp_same_line_twice.txt", []int64{1}, "read as this OOM printed twice"},
		{"pastes/llamacpp_retry_recovered_llamacpp26297.txt", nil, ""},
		{"pastes/synthetic_llamacpp_retry_failed.txt", []int64{3, 7}, ""},
	} {
		pm := NewPostmortem([]Input{oomInput(t, c.file)}, PostmortemOptions{})
		if len(pm.OOMs) != len(c.lines) {
			t.Errorf("%s: %d OOMs, want %d", c.file, len(pm.OOMs), len(c.lines))
			continue
		}
		for i, r := range pm.OOMs {
			if r.Sources[0].Line != c.lines[i] {
				t.Errorf("%s: OOM %d from line %d, want %d", c.file, i+1, r.Sources[0].Line, c.lines[i])
			}
		}
		if c.note != "" && !strings.Contains(strings.Join(pm.OOMs[len(pm.OOMs)-1].Notes, "\n"), c.note) {
			t.Errorf("%s: no note %q: %q", c.file, c.note, pm.OOMs[len(pm.OOMs)-1].Notes)
		}
	}
}
