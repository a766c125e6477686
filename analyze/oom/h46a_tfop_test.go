package oom

import (
	"strings"
	"testing"
)

// Session 46, helper h46a (testdata/README.md, "Session 46, h46a").

// op_kernel.cc's WARNING record of an op's OOM with no exception after
// it (brightics/studio#815: the program caught it) is one OOM on GPU 0
// whose note says it is the op's record and that the exception is not in
// the inputs; its request is the tensor the message names, shape
// [64,64,3,3] of float: 64*64*3*3 = 36864 elements * 4 bytes = 147456
// bytes (session 47: before, no size was read from a shape); with the BFC allocator's failure before it and the exception
// after it, one OOM whose request is the BFC record's 18874368 bytes
// (18.00 MiB), said to be the allocator's, not TensorFlow's words.
func TestH46aTFOpNotes(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/h46a_tf_op_kernel_caught_brightics815.txt")
	notes := strings.Join(r.Notes, "\n")
	if r.Device != 0 || !strings.Contains(notes, "op_kernel.cc's WARNING record") || !strings.Contains(notes, "caught the error") || r.RequestedBytes != 147456 {
		t.Errorf("device %d requested %d notes %.300q; want GPU 0, 147456 bytes, the op's record explained", r.Device, r.RequestedBytes, notes)
	}
	for _, p := range []string{"pytorch/synthetic/h46a_tf_bfc_op_exception.txt", "pytorch/synthetic/h46a_tf_bfc_op_cut.txt"} {
		r := hunt44eOOM(t, p)
		notes := strings.Join(r.Notes, "\n")
		if r.RequestedBytes != 18874368 || !strings.Contains(notes, "18.00 MiB requested are the BFC allocator's record") {
			t.Errorf("%s: requested %d notes %.300q; want 18874368, said to be the BFC record's", p, r.RequestedBytes, notes)
		}
		if op := strings.Contains(notes, "op_kernel.cc's WARNING record"); op != strings.HasSuffix(p, "_cut.txt") {
			t.Errorf("%s: notes %.300q; the op's record named: %v, want it only for the cut text", p, notes, op)
		}
	}
}
