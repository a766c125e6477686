package oom

import (
	"strings"
	"testing"
)

// Session 45, tester t45a (testdata/README.md, "Session 45, tester t45a").

// StreamExecutor's ROCm records (TensorFlow on ROCm) were "No
// out-of-memory error in the inputs". The backpedal of one failure (each
// record asks 90% of the one before: BFCAllocator::Extend) is one OOM
// whose request is the first record's bytes; the note is StreamExecutor's,
// in ROCm's words (rocm-smi, not nvidia-smi). 7889485824 bytes with no
// total or free memory gives no cause; 140729850295296 bytes (128 TiB,
// the size a wrong memory report on the reporter's node made TensorFlow
// ask for) is more than any GPU: capacity.
func TestHunt45ROCmStreamExecutorOOM(t *testing.T) {
	for _, c := range []struct {
		path   string
		bytes  int64
		causes string
	}{
		{"pytorch/pastes/rocm_tf_hiperror1002_tfupstream82.txt", 7889485824, ""},
		{"pytorch/pastes/rocm_tf_hip_error_oom_keras13889.txt", 140729850295296, "capacity"},
	} {
		r := hunt44eOOM(t, c.path)
		if r.RequestedBytes != c.bytes || strings.Join(causeNames(r), ",") != c.causes {
			t.Errorf("%s: requested %d causes %v, want %d %q", c.path, r.RequestedBytes, causeNames(r), c.bytes, c.causes)
		}
		notes := strings.Join(r.Notes, "\n")
		if !strings.Contains(notes, "StreamExecutor") || !strings.Contains(notes, "the HIP runtime") || !strings.Contains(notes, "rocm-smi") || strings.Contains(notes, "nvidia-smi") {
			t.Errorf("%s: notes %.200q, want StreamExecutor's, the HIP runtime, rocm-smi", c.path, notes)
		}
	}
}
