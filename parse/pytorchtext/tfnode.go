package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// TensorFlow 1.x's op error ends its message with the op's node on the
// next line, which names the device the op ran on: "ResourceExhaustedError:
// OOM when allocating tensor with shape[]" then "\t [[Node: Sum_1 =
// Sum[T=DT_FLOAT, ..., _device=\"/job:localhost/replica:0/task:0/gpu:1\"]
// (ones_1, ...)]]" (TF 1.4 and later: "/device:GPU:1"). A message whose own
// words name no device (TF 1.0 to 1.3 stop after the shape) is held for
// that line (Reader.tfNode), and takes the GPU's index from it. A node on
// the CPU ("_device=\"/job:localhost/replica:0/task:0/cpu:0\"": an op
// placed there, as the CIFAR-10 tutorial's moving averages are,
// tensorflow/models#1993) ran out of host memory: no GPU OOM, as a
// message that names /device:CPU:0 itself is none.

// tfNodeRe matches the node line's device: its _device attribute's job
// path ending in the device (not recv_device's nor send_device's, which a
// _Recv node names first), its closing quote or the line's end (a paste
// cut there).
var tfNodeRe = lazyre.New(`\[\[Node: [^\n]*?[^\w]_device="[^"]*?/(?:device:)?(GPU|gpu|CPU|cpu):(\d+)(?:"|\s*$)`)

// maxTFNodeLines is how many non-empty lines after the message are read
// for its node (the node comes on the line right after it; a blank line
// may come between in a paste).
const maxTFNodeLines = 1

// tfNodeHeld reports whether m, a message just read, is TensorFlow's op
// error naming no device, whose node line may follow.
func tfNodeHeld(m Message) bool {
	return m.Generation == GenTF && m.Device < 0 && !m.Host && strings.HasPrefix(m.Text, "OOM when allocating tensor")
}

// tfNodeLine reads line for the TensorFlow message held (Reader.tfNode):
// a node line that names a GPU gives the message its device. The
// message is added at the first non-empty line; tfNodeLine reports
// whether line was taken (a node line is, so that it is not read again).
func (r *Reader) tfNodeLine(line string) bool {
	if strings.TrimSpace(line) == "" {
		return false
	}
	h := r.tfNode
	r.tfNode = nil
	x := tfNodeRe.FindStringSubmatch(line)
	if x != nil && strings.EqualFold(x[1], "cpu") {
		// On the CPU: host memory. The op's WARNING record held before
		// it (holdTFOp) is this failure, so it goes too.
		h.msg.Host, h.msg.Backend = true, ""
		h.msg.hostNode = "/" + strings.ToLower(x[1]) + ":" + x[2]
		r.tfOp, r.tfOpMore = nil, 0
		r.noteHost(h.msg, line, h.line)
		return true
	}
	if x != nil {
		if n, err := strconv.Atoi(x[2]); err == nil {
			h.msg.Device, h.msg.Backend = n, "CUDA"
		}
	}
	r.addMessage(h.msg, h.frames, h.line)
	return x != nil
}
