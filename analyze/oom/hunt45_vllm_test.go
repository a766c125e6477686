package oom

import (
	"strings"
	"testing"
)

// vLLM's start-up refusal is one OOM on GPU 1 with the GPU's figures and
// no cause (the 22.05 - 19.77 = 2.28 GiB in use may be other processes or
// this process's own context: the message does not split them); the note
// gives that figure and the largest gpu_memory_utilization that fits,
// floor(19.77 / 22.05, 2) = 0.89. It was "No out-of-memory error".
func TestHunt45VLLMStartupFreeNote(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/vllm_startup_free_less_than_util_pytorch175666.txt")
	notes := strings.Join(r.Notes, "\n")
	if r.Device != 1 || r.DeviceTotalBytes <= r.DeviceFreeBytes || r.DeviceFreeBytes <= 0 || len(r.Causes) != 0 {
		t.Errorf("device %d total %d free %d causes %v; want GPU 1, its figures, no cause", r.Device, r.DeviceTotalBytes, r.DeviceFreeBytes, causeNames(r))
	}
	if !strings.Contains(notes, "2.28 GiB of the GPU was in use") || !strings.Contains(notes, "at most 0.89") {
		t.Errorf("notes %.300q, want 2.28 GiB in use and at most 0.89", notes)
	}
}
