package oom

import (
	"strings"
	"testing"
)

// Metal's out-of-memory status is one OOM (llama.cpp's three identical
// lines are one failure printed again), with no cause (no sizes) and a
// note in Apple's terms (unified memory, the GPU's working-set limit),
// not CUDA's or PyTorch's allocator's.
func TestHunt45MetalNote(t *testing.T) {
	for _, p := range []string{"pytorch/pastes/metal_mlx_insufficient_memory_mlx479.txt", "pytorch/pastes/metal_ggml_repeated_ollama6257.txt"} {
		r := hunt44eOOM(t, p)
		notes := strings.Join(r.Notes, "\n")
		if len(r.Causes) != 0 || !strings.Contains(notes, "unified memory") || strings.Contains(notes, "nvidia-smi") || strings.Contains(notes, "cudaMalloc") {
			t.Errorf("%s: causes %v, notes %.200q; want none, Metal's note", p, causeNames(r), notes)
		}
	}
}
