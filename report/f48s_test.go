package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/sanitizer"
)

// Records alike but for their addresses, offsets and threads are one error
// counted N times (rapidsai/cudf#8873's two initcheck reads, at 0x150 by
// thread (0,0,0) and at 0x290 by thread (1,0,0)): the thread and details
// shown are the first record's, and the line says so. Before, "(2 times)"
// after thread (0,0,0) read as the same thread twice.
func TestF48sMergedErrorSaysFirstShown(t *testing.T) {
	e := sanitizer.Error{Kind: "uninitialized", Message: "Uninitialized __global__ memory read of size 1 bytes",
		Function: "count_set_bits_kernel", Kernel: "count_set_bits_kernel", Thread: "(0,0,0)", Block: "(0,0,0)",
		Details: []string{"Address 0x7fc406200400"}, Count: 2}
	if m := toolErrorMessage(e); !strings.Contains(m, "(2 times; the first's thread and details shown)") {
		t.Errorf("message %q", m)
	}
	e.Thread, e.Details = "", nil
	if m := toolErrorMessage(e); !strings.HasSuffix(m, "(2 times)") {
		t.Errorf("message %q: nothing of one record shown, nothing to say", m)
	}
}
