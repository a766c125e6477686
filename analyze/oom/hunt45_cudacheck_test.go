package oom

import (
	"strings"
	"testing"
)

// TensorRT-LLM's failed cudaMallocAsync is one OOM with no cause (no
// sizes) whose note names TensorRT-LLM, the call (an allocation) and its
// settings, rather than numba or CuPy.
func TestHunt45CUDARuntimeCheckNote(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/trtllm_cuda_runtime_check_oom_trtllm1556.txt")
	notes := strings.Join(r.Notes, "\n")
	if len(r.Causes) != 0 || !strings.Contains(notes, "TensorRT-LLM's cudaMallocAsync (an allocation)") || strings.Contains(notes, "numba") {
		t.Errorf("causes %v, notes %.300q; want none, TensorRT-LLM's allocation", causeNames(r), notes)
	}
}
