package pytorchtext

import (
	"strings"
	"testing"
)

// TensorFlow's op_kernel.cc logs an op's failure at WARNING
// (OpKernelContext::CtxFailureWithWarning) and returns the status to the
// caller, which raises it. YOLOv3_TensorFlow#153 pasted only this record:
// its warning once said "TensorFlow probes how much GPU memory it can
// take and retries smaller", which is cuda_driver.cc's start-up probe,
// not an op's failure. Since session 46 (h46a) a record with no exception
// after it is counted as an OOM (the log was cut, or the program caught
// the error), and its warning names op_kernel.cc and says so.
func TestHunt45OpKernelWarningSaysWhatItIs(t *testing.T) {
	rs := readFile(t, "pastes/tf_op_kernel_warning_only_yolov3tf153.txt", false)
	w := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if len(rs.msgs) != 1 || !strings.Contains(w, "op_kernel.cc") || !strings.Contains(w, "returns the op's failed status to the caller") || strings.Contains(w, "probes") {
		t.Errorf("%d messages, warnings %.300q; want one, op_kernel.cc's failure explained", len(rs.msgs), w)
	}
	// cuda_driver.cc's INFO probe keeps its explanation.
	rs, err := readText(t, "probe", "2021-09-24 16:22:13.020179: I tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(w, "probes") {
		t.Errorf("probe: warnings %.300q, want the probe's explanation", w)
	}
}
