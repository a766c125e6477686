package pytorchtext

import (
	"strings"
	"testing"
)

// tensorflow/tensorflow#13591: TF 1.3's "ResourceExhaustedError: OOM when
// allocating tensor with shape[]" names no device; the op's node on the
// line after it does, `_device="/job:localhost/replica:0/task:0/gpu:1"`:
// the message's device is GPU 1 (it was -1), on its own line (12). A line
// that is no node gives no device (synthetic). A node on the CPU is no
// GPU OOM at all (host memory, session 47: see TestU47aTFNodeOnCPU).
func TestH46dTFNodeDevice(t *testing.T) {
	rs := readFile(t, "pastes/tf1_node_device_gpu1_tensorflow13591.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].device != 1 || rs.msgs[0].line != 12 {
		t.Fatalf("messages %+v; want one on line 12, device 1", rs.msgs)
	}
	for _, c := range []struct {
		next string
		msgs int
		dev  int32
	}{
		{"\t [[Node: a = Add[T=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/device:GPU:3\"](x, y)]]", 1, 3},
		{"\t [[Node: a = Add[T=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/cpu:0\"](x, y)]]", 0, -1},
		{"Traceback (most recent call last):", 1, -1},
	} {
		text := "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024]\n" + c.next + "\n"
		rs, err := readText(t, "tf.txt", text, false)
		if err != nil || len(rs.msgs) != c.msgs || c.msgs == 1 && rs.msgs[0].device != c.dev {
			t.Errorf("%.40q: %v %+v; want %d message(s), device %d", strings.TrimSpace(c.next), err, rs.msgs, c.msgs, c.dev)
		}
	}
}

// TF 1.x's FATAL "EigenAllocator for GPU ran out of memory when
// allocating 0. See error logs ..." (CharlesShang/FastMaskRCNN#129, and
// #15 with each log line in a code span) aborts the process: it was no
// message. It is one TensorFlow message whose request, 0, is read, on
// the FATAL record's line (3 and 5). The title alone, without the
// period that ends the form's figure, is not read.
func TestH46dTFEigenAllocator(t *testing.T) {
	for _, c := range []struct {
		file string
		line int64
	}{
		{"tf1_eigen_allocator_zero_fastmaskrcnn129.txt", 3},
		{"tf1_eigen_allocator_codespans_fastmaskrcnn15.txt", 5},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1", c.file, len(rs.msgs))
		}
		m := rs.msgs[0]
		if m.gen != string(GenTF) || m.line != c.line || m.text != "EigenAllocator for GPU ran out of memory when allocating 0." {
			t.Errorf("%s: %+v; want tensorflow, line %d, the form's text", c.file, m, c.line)
		}
		if req, ok := m.sizes["requested"]; !ok || req != 0 {
			t.Errorf("%s: requested %v (%v), want 0", c.file, req, ok)
		}
	}
	if rs, _ := readText(t, "title.txt", "EigenAllocator for GPU ran out of memory when allocating 0\n", false); len(rs.msgs) != 0 {
		t.Errorf("title alone: %+v, want no message", rs.msgs)
	}
}
