package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestU48bNoFindingsSaysLeaksUnjudged: a memory timeline of one forward
// pass whose activations are all freed by its end (12 points, 1 step:
// u48b_forward_freed_12points_memory_timeline.json) and a real profiler
// trace of 3 steps (hm_train_s3_clean.trace.json.gz) hold nothing at
// their end, and neither can judge growth across steps. Before, the
// table and the Markdown headed them "No findings." / "no findings"
// above a warning that growth could not be judged; the headline now says
// the findings cover what could be judged and names each input whose
// leaks were not, with why. JSON says it per input (leaks_unjudged).
func TestU48bNoFindingsSaysLeaksUnjudged(t *testing.T) {
	tl, tr := td+"kineto/u48b_forward_freed_12points_memory_timeline.json", td+"kineto/hm_train_s3_clean.trace.json.gz"
	code, out, errOut := run(t, nil, "analyze", tl, tr)
	if code != 0 || strings.Contains(out, "No findings.") ||
		!strings.Contains(out, "No findings in what could be judged; leaks were not judged on 2 of 2 inputs, so none is ruled out there:\n  "+tl+": the timeline has 12 points, too few to judge growth\n  "+tr+": its trace covers 3 steps (ProfilerStep#N spans), fewer than the 4 needed\n") {
		t.Errorf("table: exit %d, stdout %.1500q, stderr %.300q", code, out, errOut)
	}
	code, out, _ = run(t, nil, "analyze", "-f", "markdown", tl)
	if code != 0 || !strings.Contains(out, "### gpuleak: no findings in what could be judged, **leaks not judged on 1 of 1 input**; in 1 input") ||
		!strings.Contains(out, "  - leaks not judged: the timeline has 12 points, too few to judge growth") {
		t.Errorf("markdown: exit %d, stdout %.1500q", code, out)
	}
	code, out, _ = run(t, nil, "analyze", "-f", "json", tl)
	var r struct {
		Findings []any
		Inputs   []struct {
			LeaksUnjudged string `json:"leaks_unjudged"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Findings) != 0 || len(r.Inputs) != 1 || r.Inputs[0].LeaksUnjudged == "" {
		t.Errorf("json: exit %d, err %v, %.1500q", code, err, out)
	}
	// An input that judged its leaks keeps the plain headline.
	code, out, _ = run(t, nil, "analyze", td+"kineto/h46g_train_clean_8_memory_timeline.json.gz")
	if code != 0 || !strings.Contains(out, "\nNo findings.\n") {
		t.Errorf("judged clean timeline: exit %d, stdout %.1500q", code, out)
	}
}
