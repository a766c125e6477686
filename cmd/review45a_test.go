package cmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Session 45 review of session 44's OOM text (testdata/README.md,
// "Review of session 44's OOM text (session 45a)").

// A CUDA error's finding line said "the message has no sizes" (NCCL) or
// "the line gives no other sizes" (XLA's cudaMallocAsync allocator)
// while the reader had read the request from NCCL's calloc line
// (NVIDIA/nccl#1235: 6291456 bytes, the BYTES column's 6.0 MiB) and
// cuMemGetInfo's free and total from XLA's next line (NovaSky-AI/SkyRL#624:
// 22635544576 of 85095874560 bytes, 21.08 of 79.25 GiB): the line now
// names what was read beside the status. A status with nothing beside
// it (TensorRT-LLM#1670's NCCL lines) still says it has no sizes.
func TestReview45aCUDAErrorLineNamesSizesReadBesideIt(t *testing.T) {
	for _, c := range []struct{ file, want, not string }{
		{"pytorch/pastes/h44e_nccl_calloc_nccl1235.txt", "read beside it: 6.00 MiB requested", "the message has no sizes"},
		{"pytorch/pastes/h44e_xla_cumemallocasync_skyrl624.txt", "read beside it: 21.08 GiB free of the GPU's 79.25 GiB", "the line gives no other sizes"},
		{"pytorch/pastes/h44e_nccl_enqueue_trtllm1670.txt", "the message has no sizes", "read beside it"},
	} {
		_, out, _ := run(t, nil, "analyze", td+c.file)
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "1. oom: ") {
				line = l
				break
			}
		}
		if !strings.Contains(line, c.want) || strings.Contains(line, c.not) {
			t.Errorf("%s: finding line %.300q; want %q, not %q", c.file, line, c.want, c.not)
		}
	}
}

// A torch.OutOfMemoryError whose words do not parse (cut_inside_tried_to_allocate.txt:
// oom_traceback.txt cut at "CUDA out of memory. Tri") is PyTorch's: the
// exception names it. Session 44 labelled the log "oom-log (out-of-memory
// messages of unparsed)" (it was pytorch-oom-message before); a
// c10 "CUDA error" is PyTorch's the same way when a torch exception
// raised it.
func TestReview45aTorchExceptionUnparsedIsPyTorchs(t *testing.T) {
	code, out, errOut := run(t, nil, "oom", "--format", "json", td+"pytorch/pastes/cut_inside_tried_to_allocate.txt")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Inputs) != 1 {
		t.Fatalf("exit %d, stderr %.200q, err %v", code, errOut, err)
	}
	if in := r.Inputs[0]; in.Format != "pytorch-oom-message" || !slices.Equal(in.OOMPrinters, []string{"PyTorch"}) {
		t.Errorf("format %q, printers %q; want pytorch-oom-message, [PyTorch]", in.Format, in.OOMPrinters)
	}
}

// A log whose only message is not read (oom_first_sentence_only.log:
// "CUDA out of memory." alone, after a collector's line) was described
// as "oom-log (out-of-memory messages of unparsed)": "unparsed" is no
// printer. The line now says the messages are in a form not read.
func TestReview45aUnparsedIsNoPrinterInTheLabel(t *testing.T) {
	_, out, _ := run(t, nil, "analyze", td+"pytorch/oom_first_sentence_only.log")
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasSuffix(first, ": oom-log (out-of-memory messages in a form not read)") {
		t.Errorf("first line %.200q; want it to end \"oom-log (out-of-memory messages in a form not read)\"", first)
	}
}
