package oom

import (
	"strings"
	"testing"
)

// Pastes of several ranks' OOMs (branch hK's hunt; testdata/README.md says
// where each came from).
func TestRankPastes(t *testing.T) {
	// evo2 notes: two runs, two ranks each, one OOM per rank and GPU. Each
	// asks 75.13 GiB with 75.13 GiB allocated, more than the GPU (139.81
	// and 79.25 GiB): capacity; the process lines are this process.
	pm := NewPostmortem([]Input{oomInput(t, "pastes/pt2.x_ranks_details_evo2_notes.txt")}, PostmortemOptions{})
	var got []string
	for _, r := range pm.OOMs {
		got = append(got, strings.Join(causeNames(r), "+"))
		if r.RequestedBytes != gib(7513) || len(r.OtherProcesses) != 0 {
			t.Errorf("evo2: %+v", r)
		}
	}
	if len(pm.OOMs) != 4 || pm.OOMs[0].Device != 0 || pm.OOMs[1].Device != 1 || pm.OOMs[2].Device != 3 || pm.OOMs[3].Device != 1 || strings.Join(got, ",") != "capacity,capacity,capacity,capacity" {
		t.Errorf("evo2: %d OOMs, causes %v", len(pm.OOMs), got)
	}

	// A benchmark report's list: twelve messages, each cut at a fixed
	// width (inside "this process has 0 b", "136.", ...): twelve OOMs, each
	// with its request, GPU, total and free memory, none with a cause.
	pm = NewPostmortem([]Input{oomInput(t, "pastes/pt2.x_cut_list_items_benchmark_report.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 12 {
		t.Fatalf("benchmark report: %d OOMs", len(pm.OOMs))
	}
	for _, r := range pm.OOMs {
		if r.Generation != "cut" || r.RequestedBytes <= 0 || r.Device < 0 || r.DeviceTotalBytes <= 0 || r.DeviceFreeBytes < 0 || len(r.Causes) != 0 {
			t.Errorf("benchmark report: %+v", r)
		}
	}
	if r := pm.OOMs[7]; r.Device != 5 || r.RequestedBytes != gib(925) || r.DeviceFreeBytes != gib(286) {
		t.Errorf("benchmark report OOM 8: %+v", r)
	}

	// A chat about a torchrun log: the [rank1] message (Python 3.13's
	// "...<5 lines>...", PyTorch 2.9's PYTORCH_ALLOC_CONF hint), then the
	// assistant quoting it abridged with a placeholder ("GPU X ... only a
	// few hundred MiB free"): one OOM from two lines, not a second that does
	// not parse. 18.84 GiB + 35.58 GiB allocated > 39.38 GiB: capacity.
	pm = NewPostmortem([]Input{oomInput(t, "pastes/pt2.9_rank1_py313_childfailed_chat_zh.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("chat: %d OOMs", len(pm.OOMs))
	}
	if r := pm.OOMs[0]; len(r.Sources) != 2 || r.Device != 1 || r.RequestedBytes != gib(1884) || len(r.Causes) == 0 || r.Causes[0].Name != CauseCapacity {
		t.Errorf("chat: %d sources, device %d, causes %v", len(r.Sources), r.Device, causeNames(r))
	}
	// The same abridgment with another request is another OOM (cut).
	text := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 18.84 GiB. GPU 1 has a total capacity of 39.38 GiB of which 464.56 MiB is free. Including non-PyTorch memory, this process has 38.80 GiB memory in use. Of the allocated memory 35.58 GiB is allocated by PyTorch, and 2.13 GiB is reserved by PyTorch but unallocated.\n" +
		"- `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.42 GiB. GPU X ... free`\n"
	pm = NewPostmortem([]Input{textInput(t, "two.log", text)}, PostmortemOptions{})
	if len(pm.OOMs) != 2 || pm.OOMs[1].Generation != "cut" || pm.OOMs[1].RequestedBytes != gib(942) {
		t.Errorf("another request: %d OOMs", len(pm.OOMs))
	}
}
