package pytorchtext

import (
	"fmt"
	"testing"
)

// TensorFlow's OOM after the BFC allocator's failure is one OOM whether
// a line follows it or the text ends on it: at the text's end the
// messages still held (TensorFlow's, held for its node line) wait in
// behind with the BFC failure, and are paired all the same.
func TestR46aBFCFailureAndTFsOOMAtTheEnd(t *testing.T) {
	const (
		bfc = "2021-09-24 16:22:56.271936: W tensorflow/core/common_runtime/bfc_allocator.cc:243] Allocator (GPU_0_bfc) ran out of memory trying to allocate 18.00MiB (rounded to 18874368)requested by op Mul\n"
		tf  = "ResourceExhaustedError: OOM when allocating tensor with shape[1024,4608]"
	)
	for _, after := range []string{"", "\n", "\nnext line\n"} {
		rs, err := readText(t, "bfc", bfc+tf+after, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range rs.msgs {
			got = append(got, fmt.Sprint(m.line, " ", m.sizes["requested"]))
		}
		if fmt.Sprint(got) != "[2 18874368]" {
			t.Errorf("%q after TensorFlow's OOM: messages %v, want one on line 2 with the BFC failure's 18874368 bytes", after, got)
		}
	}
}
