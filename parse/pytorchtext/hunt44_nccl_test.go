package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// Session 44: NCCL's "Cuda failure 'out of memory'" WARN was read with no
// size, though alloc.h WARNs "Failed to CUDA calloc N bytes" from the same
// thread right after (NVIDIA/nccl#1235: 6291456 bytes, two lines on). The
// size is now the request. A calloc line of another thread (synthetic:
// the same lines with the second's tid changed) is not this failure's
// (since session 45u it is that thread's own OOM, its failure line not
// in the text: see TestHunt45uNCCLCallocAlone); nor is one that does not
// come on the next non-blank line (the reader holds the message for that
// line alone; the line is the same thread's failure, no second OOM). The
// message keeps its line.
func TestHunt44NCCLCallocSize(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/nccl_warn_cuda_oom_nccl1235.txt")
	if err != nil {
		t.Fatal(err)
	}
	const calloc = "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes"
	if !strings.Contains(string(b), calloc) {
		t.Fatal("the paste lacks its calloc line")
	}
	other := strings.Replace(string(b), calloc, strings.Replace(calloc, ":3066152 ", ":3066153 ", 1), 1)
	late := strings.Replace(string(b), calloc, "a\nb\nc\n"+calloc, 1)
	for _, c := range []struct {
		name, text string
		requested  int64
		msgs       int
	}{
		{"nccl#1235", string(b), 6291456, 1},
		{"another thread's calloc", other, -1, 2},
		{"calloc three lines later", late, -1, 1},
	} {
		rs, err := readText(t, "x.log", c.text, false)
		if err != nil || len(rs.msgs) != c.msgs {
			t.Fatalf("%s: %d messages, %v", c.name, len(rs.msgs), err)
		}
		m := rs.msgs[0]
		got, ok := m.sizes["requested"]
		if !ok {
			got = -1
		}
		if got != c.requested || m.line != 5 || m.gen != "cuda-error" {
			t.Errorf("%s: %+v; want requested %d at line 5", c.name, m, c.requested)
		}
	}
}
