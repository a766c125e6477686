package oom

import (
	"strings"
	"testing"
)

// A message quoted again from its GPU on (github.com/CompVis/stable-diffusion
// issue 702: the whole message, then a comment quoting its figures in a
// code span) is the same OOM: one report with both lines as its sources,
// the request and the cause the whole message's.
func TestBodyQuotedAgainIsOneOOM(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/pt1.x_body_quoted_again_compvis702.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if len(r.Sources) != 2 || r.Sources[0].Line != 1 || r.Sources[1].Line != 5 || r.RequestedBytes != 192<<20 {
		t.Errorf("sources %+v, requested %d", r.Sources, r.RequestedBytes)
	}
}

// A 2.3+ message read from its GPU on (github.com/Tianhao-Qi/Mask2DiT
// issue 4's, its first sentence cut off by this test): no request, so no
// cause, but its process line is read as in a whole message: process 76883
// (53.16 GiB) with PyTorch's 11.97 + 40.69 = 52.66 GiB reserved would be
// more than the 79.33 - 26.16 = 53.17 GiB in use, so it is this process,
// not another.
func TestBodyOnlyReadsItsProcesses(t *testing.T) {
	const text = "GPU 0 has a total capacity of 79.33 GiB of which 26.16 GiB is free. Process 76883 has 53.16 GiB memory in use. Of the allocated memory 11.97 GiB is allocated by PyTorch, and 40.69 GiB is reserved by PyTorch but unallocated.\n"
	pm := NewPostmortem([]Input{textInput(t, "mask2dit4_cut.txt", text)}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.RequestedBytes >= 0 || len(r.Causes) != 0 || len(r.OtherProcesses) != 0 || !near(r.ProcessInUseBytes, gib(5316)) {
		t.Errorf("requested %d, causes %v, other processes %+v, this process %d", r.RequestedBytes, causeNames(r), r.OtherProcesses, r.ProcessInUseBytes)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "no size for the request") {
		t.Errorf("notes %q", r.Notes)
	}
}

// A message cut after the memory PyTorch had allocated says what it gives:
// the 2.x paste cut inside "unallocated", after its whole last figure
// (56.49 MiB reserved but unallocated, too little for the 270 MiB asked;
// process 2109's 344 MiB would have made room: other processes, with a
// note that the cut came after the figures; it was no cause, "PyTorch's
// reserved memory was cut"); the 1.x one whose parentheses close after
// "already allocated" (2 + 7.21 GiB > 8 GiB: capacity).
func TestCutAfterAllocated(t *testing.T) {
	r := NewPostmortem([]Input{oomInput(t, "pastes/pt2.x_cut_unallocated_zh_log.txt")}, PostmortemOptions{}).OOMs[0]
	notes := strings.Join(r.Notes, "\n")
	if names := causeNames(r); len(names) != 1 || names[0] != CauseOtherProcesses || !strings.Contains(notes, "cut short") || !strings.Contains(notes, "after its figures") {
		t.Errorf("causes %v, notes %q", causeNames(r), r.Notes)
	}
	r = NewPostmortem([]Input{oomInput(t, "pastes/pt1.x_abridged_paren_llmconfigurator.txt")}, PostmortemOptions{}).OOMs[0]
	if c := hasCause(r, CauseCapacity); c == nil || !strings.Contains(c.Evidence, "cut after its allocated memory") {
		t.Errorf("causes %+v", r.Causes)
	}
}

// A message read from its GPU on and cut (a report quoting part of it) that
// a whole message already read holds is that message: one OOM. (The
// figures are a public report's, search tool find_string id 58505588767;
// the whole message before the quote is written for this test.)
func TestBodyCutQuotedAgainIsOneOOM(t *testing.T) {
	const text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 191.69 GiB of which 0 bytes is free. 50.00 GiB allowed; Of the allocated memory 9.58 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n" +
		"quote: GPU 0 has a total capacity of 191.69 GiB of which 0 bytes is free. 50.00 GiB allowed; Of the allocated memory 9.58 GiB is allocated by PyTorch\n"
	pm := NewPostmortem([]Input{textInput(t, "quoted.txt", text)}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Sources) != 2 || pm.OOMs[0].RequestedBytes != 20<<20 {
		t.Fatalf("%d OOMs: %+v", len(pm.OOMs), pm.OOMs)
	}
}
