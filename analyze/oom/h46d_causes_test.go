package oom

import (
	"strings"
	"testing"
)

// ONNX Runtime's request of 4585490524328388608 bytes (over 2^60) was
// judged capacity twice (microsoft/onnxruntime#22702): by the rule of
// every message without PyTorch's figures (a request beyond any GPU) and
// by ORT's own (2^60 bytes and more). A cause is named once per OOM, with
// both rules' evidence and ORT's advice (the node's input shapes).
func TestH46dCauseOnce(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/ort_request_beyond_1eib_ort22702.txt")
	if len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity {
		t.Fatalf("causes %v, want one capacity", causeNames(r))
	}
	c := r.Causes[0]
	if !strings.Contains(c.Evidence, "more than any GPU holds") || !strings.Contains(c.Evidence, "at least 1 EiB") ||
		!strings.Contains(c.Advice, "node's input shapes") || c.Numbers["requested_bytes"] != 4585490524328388608 {
		t.Errorf("capacity %+v; want both evidences, ORT's advice, the request", c)
	}
}

// uniqueCauses keeps the first cause of a name in its place, adds a later
// one's new evidence and numbers, and leaves causes of other names alone.
func TestH46dUniqueCauses(t *testing.T) {
	r := &Report{Causes: []Cause{
		{Name: CauseCapacity, Evidence: "a", Numbers: map[string]int64{"x_bytes": 1}, Advice: "p"},
		{Name: CauseMemoryLimit, Evidence: "b"},
		{Name: CauseCapacity, Evidence: "c", Numbers: map[string]int64{"x_bytes": 2, "y_bytes": 3}, Advice: "q"},
		{Name: CauseCapacity, Evidence: "a"},
	}}
	r.uniqueCauses()
	if len(r.Causes) != 2 || r.Causes[0].Name != CauseCapacity || r.Causes[1].Name != CauseMemoryLimit {
		t.Fatalf("causes %+v; want capacity, memory-limit", r.Causes)
	}
	if c := r.Causes[0]; c.Evidence != "a; c" || c.Numbers["x_bytes"] != 1 || c.Numbers["y_bytes"] != 3 || c.Advice != "q" {
		t.Errorf("merged %+v; want evidence \"a; c\", x_bytes 1 (the first's), y_bytes 3, advice q", c)
	}
}
