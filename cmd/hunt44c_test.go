package cmd

import (
	"strings"
	"testing"
)

// Session 44, helper c (testdata/README.md, "Line prefixes, ranks, Ray's
// folded lines and cut figures (session 44c)").

// The OOMs Ray's log deduplication folded into a line count in the oom
// command's numbering and in the oom gate, with where they came from:
// the tester's vllm-project/vllm issue 15598 line ("[repeated 7x across
// cluster]", the first of its kind not in the input) is OOM 1 of at least
// 8, and --fail-on oom says the 7 more and the line. It was "OOM 1 of 1".
func TestHunt44cRayFoldsInCountAndGate(t *testing.T) {
	path := td + "pytorch/pastes/s44c_ray_repeated_vllm15598.txt"
	code, out, errOut := run(t, nil, "oom", path)
	if code != 0 || !strings.Contains(out, "OOM 1 of at least 8") {
		t.Errorf("oom: exit %d, output %.200q; want 0 and OOM 1 of at least 8", code, out+errOut)
	}
	code, out, errOut = run(t, nil, "analyze", "-q", "--fail-on", "oom", path)
	if code != 1 || !strings.Contains(out+errOut, "at least 7 more OOM lines") || !strings.Contains(out+errOut, "s44c_ray_repeated_vllm15598.txt:1") {
		t.Errorf("--fail-on oom: exit %d, output %.200q; want 1, the 7 folded and their line", code, out+errOut)
	}
}
