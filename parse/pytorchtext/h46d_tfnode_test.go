package pytorchtext

import (
	"strings"
	"testing"
)

// tensorflow/tensorflow#13591: TF 1.3's "ResourceExhaustedError: OOM when
// allocating tensor with shape[]" names no device; the op's node on the
// line after it does, `_device="/job:localhost/replica:0/task:0/gpu:1"`:
// the message's device is GPU 1 (it was -1), on its own line (12). A node
// on the CPU, or a line that is no node, gives no device (synthetic).
func TestH46dTFNodeDevice(t *testing.T) {
	rs := readFile(t, "pastes/tf1_node_device_gpu1_tensorflow13591.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].device != 1 || rs.msgs[0].line != 12 {
		t.Fatalf("messages %+v; want one on line 12, device 1", rs.msgs)
	}
	for _, c := range []struct {
		next string
		dev  int32
	}{
		{"\t [[Node: a = Add[T=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/device:GPU:3\"](x, y)]]", 3},
		{"\t [[Node: a = Add[T=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/cpu:0\"](x, y)]]", -1},
		{"Traceback (most recent call last):", -1},
	} {
		text := "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024]\n" + c.next + "\n"
		rs, err := readText(t, "tf.txt", text, false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].device != c.dev {
			t.Errorf("%.40q: %v %+v; want one message, device %d", strings.TrimSpace(c.next), err, rs.msgs, c.dev)
		}
	}
}
