package report

import (
	"bytes"
	"strings"
	"testing"
)

// Session 48, f48o1: a log whose only out-of-memory error is not a GPU's
// (a host OOM kill that Slurm reported, nnU-Net's job on node gpu006)
// said "No out-of-memory error in the inputs." above the warning that
// names it. The headline says there is no GPU OOM and that the warnings
// name the other kind.
func TestF48o1HeadlineNotCounted(t *testing.T) {
	note := "line 6: the host's OOM killer ended a task (slurmstepd: error: Detected 1 oom_kill event ...)"
	r := &Report{Inputs: []Input{{Path: "slurm.out", Format: "pytorch-oom-message", Warnings: []string{note}, NotOOMs: []string{note}}}}
	var b bytes.Buffer
	if err := Write(&b, Document{Kind: DocPostmortem, Report: r}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "No GPU out-of-memory error in the inputs; the warnings name 1 out-of-memory error not counted as one") || strings.Contains(out, "No out-of-memory error in the inputs.") {
		t.Errorf("%s", out)
	}
}
