package pytorchtext

import (
	"strings"
	"testing"
)

// Session 47, u47a (testdata/README.md, "OOM text logs: host statuses,
// Level Zero, llama.cpp's Vulkan backend, check macros (session 47,
// u47a)").

// tensorflow/models#1993 (TF 1.2, Windows): op_kernel.cc's WARNING record
// (line 2) and the ResourceExhaustedError (line 12) name no device; the
// op's node on line 13 was placed on "/job:localhost/replica:0/task:0/cpu:0"
// (the paste is cut right after it). The op ran on the CPU, so host memory
// ran out: no GPU OOM row (it was one, device unknown), the record held on
// line 2 is the same failure (no row either), and one warning on line 12
// names the node's device. A _Recv node whose recv_device is the CPU and
// whose own _device is a GPU is the GPU's (tensorflow/tensorflow#4735's
// second node line names the CPU in recv_device before its GPU op's).
func TestU47aTFNodeOnCPU(t *testing.T) {
	rs := readFile(t, "pastes/tf1_node_device_cpu_tfmodels1993.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("%d OOM rows, want none: %+v", len(rs.msgs), rs.msgs)
	}
	w := rs.meta.NotOOMs.Strings()
	if len(w) != 1 || !strings.Contains(w[0], "line 12:") || !strings.Contains(w[0], "placed on /cpu:0") || !strings.Contains(w[0], "host memory") {
		t.Errorf("not-OOM warnings %q, want one on line 12 naming /cpu:0", w)
	}
	text := "ResourceExhaustedError: OOM when allocating tensor with shape[8,8]\n" +
		"\t [[Node: r/_99 = _Recv[client_terminated=false, recv_device=\"/job:localhost/replica:0/task:0/cpu:0\", send_device=\"/job:localhost/replica:0/task:0/gpu:0\", _device=\"/job:localhost/replica:0/task:0/gpu:1\"]()]]\n"
	rs, err := readText(t, "recv.txt", text, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].device != 1 {
		t.Errorf("%v %+v; want one message on GPU 1 (the node's own _device)", err, rs.msgs)
	}
}
