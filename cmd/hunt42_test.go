package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Session 42 (testdata/README.md, "NVML pastes hunted in session 42").

// A memory timeline of one point (export_memory_timeline of a profiled
// region that allocates one 4 MiB tensor on an H200, .json and .raw.json.gz)
// is read: one retained finding of 4194304 B in "unknown" (the tensor
// belongs to no autograd graph), no leak, and the input says one point
// cannot show growth (so --fail-on leak cannot be judged: exit 2). The .json was
// "unrecognised input format" (exit 2) before: its sniffer wanted two
// times. The timeline of a region that allocated nothing on the GPU,
// [[], []], is read as empty (it was unrecognised too).
func TestHunt42TimelineOnePoint(t *testing.T) {
	for _, path := range []string{td + "kineto/timeline_one_point.json", td + "kineto/timeline_one_point.raw.json.gz"} {
		// --fail-on leak cannot be judged on it: exit 2, saying why.
		if code, _, errOut := run(t, nil, "analyze", "--fail-on", "leak", path); code != 2 || !strings.Contains(errOut, "one point cannot show growth") {
			t.Errorf("%s --fail-on leak: exit %d, stderr %q; want 2 and why", path, code, errOut)
		}
		code, out, errOut := run(t, nil, "analyze", "--format", "json", path)
		if code != 0 {
			t.Fatalf("%s: exit %d, want 0: %s", path, code, errOut)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Findings) != 1 || r.Findings[0].Kind != report.KindRetained || r.Findings[0].Bytes != 4194304 || r.Findings[0].Site.Function != "unknown" {
			t.Errorf("%s: findings %+v", path, r.Findings)
		}
		if !strings.Contains(r.Inputs[0].LeaksUnjudged, "one point cannot show growth") || !strings.Contains(r.Findings[0].Message, "one point cannot show growth") {
			t.Errorf("%s: leaks unjudged %q, message %q", path, r.Inputs[0].LeaksUnjudged, r.Findings[0].Message)
		}
		if w := strings.Join(r.Inputs[0].Warnings, "\n"); strings.Contains(w, "1 points") {
			t.Errorf("%s: warnings %q", path, w)
		}
	}
	code, out, errOut := run(t, nil, "analyze", "--format", "json", td+"kineto/timeline_no_gpu_alloc.json")
	if code != 0 {
		t.Fatalf("empty timeline: exit %d: %s", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Inputs[0].Format != "pytorch-memory-timeline" || len(r.Findings) != 0 || r.Inputs[0].LeaksUnjudged != "the memory timeline is empty" {
		t.Errorf("empty timeline: %+v %+v", r.Inputs[0], r.Findings)
	}
}

// A pasted nvidia-smi table cut in its Processes box (numba#5392) is
// marked read in part in every report: JSON's cut, the table's READ IN
// PART, a warning on stderr; and GPU 0's 619 MiB the two whole process
// rows do not cover is not called memory no listed process holds.
func TestHunt42CutTableReadInPart(t *testing.T) {
	path := td + "nvml/field/numba5392_table_418_procs_row_cut.txt"
	code, out, errOut := run(t, nil, "analyze", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Inputs[0].Cut, "the nvidia-smi table's Processes box (from line 14) stops at line 19") {
		t.Errorf("cut %q", r.Inputs[0].Cut)
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "used by no listed process") || f.UnattributedBytes != nil {
			t.Errorf("finding %q: unattributed memory judged on a cut process list", f.Message)
		}
	}
	_, table, errOut := run(t, nil, "analyze", path)
	if !strings.Contains(table, "; READ IN PART: the nvidia-smi table's Processes box (from line 14)") || !strings.Contains(errOut, "read in part") {
		t.Errorf("table %q, stderr %q", table, errOut)
	}
}
