package pytorchtext

import (
	"strings"
	"testing"
)

// A framework's form that a line's end cuts before its figure (a paste
// wrapped at a width: tensorflow/tensorflow#9790 shows a traceback wrapped
// at 80 columns mid-word) was no message at all: the form, asked whole of
// the first line, failed, and the words were read as another program's.
// Now the next line is joined when it completes the form. The texts are
// synthetic: real messages (PaddlePaddle/Paddle#26892's, the TF 1.x one of
// Kyubyong/transformer#77, XLA's device_memory_allocator.cc form) wrapped
// by hand where no real paste was found wrapped. Expected sizes: 1.531250GB
// = 1.53125 * 2^30 = 1644167168 bytes, 416.625000MB = 416.625 * 2^20 =
// 436862976 bytes; the others are printed in bytes.
func TestWrappedBeforeFigure(t *testing.T) {
	const paddle = "Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only 416.625000MB."
	for _, c := range []struct {
		name, text      string
		requested, free int64 // -1: none; requested -1 and no message expected when msgs is 0
		device          int32
		msgs            int
		warn            string
	}{
		{"paddle before the request", strings.Replace(paddle, "allocate ", "allocate\n", 1), 1644167168, 436862976, 0, 1, ""},
		{"paddle before the device", strings.Replace(paddle, "GPU 0. ", "GPU\n0. ", 1), 1644167168, 436862976, 0, 1, ""},
		{"paddle inside the form after the size", strings.Replace(paddle, "memory on GPU 0,", "memory on\nGPU 0,", 1), 1644167168, 436862976, 0, 1, ""},
		{"tf1 before the bytes", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Ran out of GPU memory when allocating\n 1294336000 bytes for \n\t [[{{node softmax_cross_entropy_with_logits}}]]\n", 1294336000, -1, -1, 1, ""},
		{"xla before the size", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for\n32.00MiB (33554432B) on device ordinal 0\n", 33554432, -1, 0, 1, ""},
		// gRPC's status in the same words: the next line does not
		// complete XLA's form, so no message; a warning says what was
		// seen.
		{"grpc's words", "RESOURCE_EXHAUSTED: Failed to allocate request for\nstream 7\n", -1, -1, -1, 0, "ends inside the form of XLA's"},
		{"paddle cut at the end", "Out of memory error on GPU 0. Cannot allocate\n", -1, -1, -1, 0, "no next line completes it"},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != c.msgs {
			t.Errorf("%s: %d messages, want %d: %+v", c.name, len(rs.msgs), c.msgs, rs.msgs)
			continue
		}
		if c.warn != "" && !strings.Contains(strings.Join(rs.meta.Warnings.Strings(), "\n"), c.warn) {
			t.Errorf("%s: no warning %q: %.200q", c.name, c.warn, rs.meta.Warnings.Strings())
		}
		if c.msgs == 0 {
			continue
		}
		m := rs.msgs[0]
		get := func(k string) int64 {
			if v, ok := m.sizes[k]; ok {
				return v
			}
			return -1
		}
		if get("requested") != c.requested || get("free") != c.free || m.device != c.device || m.reason != "" {
			t.Errorf("%s: requested %d free %d device %d reason %.200q", c.name, get("requested"), get("free"), m.device, m.reason)
		}
	}
}
