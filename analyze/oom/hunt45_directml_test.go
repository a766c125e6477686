package oom

import (
	"strings"
	"testing"
)

// A torch-directml OOM (no figures but the request) is one OOM with no
// cause, whose note names DirectML and says that PyTorch's CUDA allocator
// settings do not apply; it was "No out-of-memory error in the inputs".
func TestHunt45DirectMLNote(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/directml_traceback_hunyuanwrapper211.txt")
	notes := strings.Join(r.Notes, "\n")
	if r.RequestedBytes != 530841600 || len(r.Causes) != 0 || !strings.Contains(notes, "DirectML") || !strings.Contains(notes, "do not apply") {
		t.Errorf("requested %d, causes %v, notes %.200q; want 530841600, none, DirectML's note", r.RequestedBytes, causeNames(r), notes)
	}
}
