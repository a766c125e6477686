package report

import (
	"strings"
	"testing"
)

// A log read for out-of-memory messages that holds none is labelled by
// what it holds, not "pytorch-oom-message" (the JSON format stays):
// cortexlabs/cortex PR #853's TensorFlow log (two allocation failures
// TensorFlow logged at INFO level and retried: no OOM, no printer) and
// ROCm/pytorch#703's printed torch.cuda.memory_stats() dict (a stats set,
// no message). A log with PyTorch's message keeps its format as label.
func TestNoOOMLogLabel(t *testing.T) {
	for _, c := range []struct {
		in        Input
		want, not string
	}{
		{Input{Path: "cortex_pr853.txt", Format: "pytorch-oom-message"}, "log without an out-of-memory message", "pytorch-oom-message"},
		{Input{Path: "rocm_pytorch_703.txt", Format: "pytorch-oom-message", AllocatorStats: []AllocatorStats{{Source: "memory_stats", Line: 2}}},
			"log without an out-of-memory message, with a torch.cuda.memory_stats() dict", "pytorch-oom-message"},
		{Input{Path: "oom.txt", Format: "pytorch-oom-message", OOMPrinters: []string{"PyTorch"}}, "pytorch-oom-message", "without"},
	} {
		if got := describeInput(c.in); !strings.HasPrefix(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%s: %q, want it to start %q, without %q", c.in.Path, got, c.want, c.not)
		}
	}
}
