package report

import (
	"bytes"
	"strings"
	"testing"
)

// pytorch/pytorch#35901's memory_summary() alone ("CUDA OOMs: 1" on its
// line 3, no message anywhere): the gate trips on the allocator's count,
// so the postmortem's headline must not say there was no out-of-memory
// error. It says there was no message, and that the statistics count 1
// OOM, where; with no count, the plain headline stays.
func TestHeadlineCountsUndescribedOOMs(t *testing.T) {
	one := int64(1)
	for _, c := range []struct {
		undescribed int64
		want, not   string
	}{
		{1, "No out-of-memory message in the inputs, but the allocator's statistics count 1 OOM before they were taken (num_ooms, summary.txt:3): the program caught it", "No out-of-memory error in the inputs."},
		{3, "count 3 OOMs before they were taken (num_ooms, summary.txt:3): the program caught them, or their message", "No out-of-memory error in the inputs."},
		{0, "No out-of-memory error in the inputs.", "allocator's statistics count"},
	} {
		r := &Report{Inputs: []Input{{Path: "summary.txt", Format: "pytorch-memory-summary", Warnings: []string{},
			AllocatorStats: []AllocatorStats{{Source: "memory_summary", Line: 3, NumOOMs: &one, UndescribedOOMs: c.undescribed}}}}}
		var b bytes.Buffer
		if err := Write(&b, Document{Kind: DocPostmortem, Report: r}, FormatTable, Options{}); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
			t.Errorf("undescribed %d: want %q, not %q:\n%s", c.undescribed, c.want, c.not, out)
		}
	}
}

// The analysis table of the same input says "No findings." (no leak, no
// OOM message), then that the statistics count the OOM the gate trips on.
func TestNoFindingsCountsUndescribedOOMs(t *testing.T) {
	one := int64(1)
	r := &Report{Inputs: []Input{{Path: "summary.txt", Format: "pytorch-memory-summary", Warnings: []string{},
		AllocatorStats: []AllocatorStats{{Source: "memory_summary", Line: 3, NumOOMs: &one, UndescribedOOMs: 1}}}}}
	var b bytes.Buffer
	if err := Write(&b, Document{Kind: DocAnalysis, Report: r}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "No findings.\nThe allocator's statistics count 1 OOM that no out-of-memory message in the inputs describes (num_ooms, summary.txt:3); --fail-on oom counts it.") {
		t.Errorf("%s", out)
	}
}

// A torch.cuda.memory_stats() JSON alone (a kind that cannot show an OOM
// message, only count OOMs) whose num_ooms is 2: the headline says no OOM
// can be told from the input, and must then say the statistics count 2,
// which --fail-on oom trips on; before, that case printed only the first
// part, so the headline contradicted the exit code.
func TestBlindHeadlineCountsUndescribedOOMs(t *testing.T) {
	two := int64(2)
	r := &Report{Inputs: []Input{{Path: "stats.json", Format: "pytorch-memory-stats",
		Warnings:       []string{OOMBlind("pytorch-memory-stats")},
		AllocatorStats: []AllocatorStats{{Source: "memory_stats", NumOOMs: &two, UndescribedOOMs: 2}}}}}
	var b bytes.Buffer
	if err := Write(&b, Document{Kind: DocPostmortem, Report: r}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"No out-of-memory error can be told from these inputs", "the allocator's statistics count 2 OOMs before they were taken (num_ooms, stats.json)"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q:\n%s", want, out)
		}
	}
}
