package pytorchtext

import (
	"strings"
	"testing"
)

// TensorFlow's op_kernel.cc logs an op's failure at WARNING
// (OpKernelContext::CtxFailureWithWarning) and returns the status to the
// caller, which raises it. The record stays uncounted (the exception is
// the OOM), but its warning said "TensorFlow probes how much GPU memory it
// can take and retries smaller", which is cuda_driver.cc's start-up
// probe, not an op's failure: YOLOv3_TensorFlow#153 pasted only this
// record. The warning now names op_kernel.cc and says where the OOM is.
func TestHunt45OpKernelWarningSaysWhatItIs(t *testing.T) {
	rs := readFile(t, "pastes/tf_op_kernel_warning_only_yolov3tf153.txt", false)
	w := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if len(rs.msgs) != 0 || !strings.Contains(w, "op_kernel.cc") || !strings.Contains(w, "returns it to the caller") || strings.Contains(w, "probes") {
		t.Errorf("%d messages, warnings %.300q; want none, op_kernel.cc's failure explained", len(rs.msgs), w)
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
