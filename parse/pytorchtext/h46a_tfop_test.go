package pytorchtext

import (
	"strings"
	"testing"
)

// Session 46, helper h46a (testdata/README.md, "Session 46, h46a").

// TensorFlow's op_kernel.cc logs an op's OOM at WARNING level
// (CtxFailureWithWarning: "OP_REQUIRES failed at F:L : " and the status,
// then SetStatus) and returns the status to the caller, which raises it.
// Alone in a text (brightics/studio#815: the program caught the error and
// printed its own "[Job Failed] ... Local Engine : OOM when ...", which no
// status word leads into), it was no OOM, and --fail-on oom passed on a
// failed job. It is now one OOM, at the record's line, on GPU 0 (its
// "/device:GPU:0"), with a warning that no exception followed it.
func TestH46aTFOpFailureAloneIsAnOOM(t *testing.T) {
	rs := readFile(t, "pastes/h46a_tf_op_kernel_caught_brightics815.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages, want 1; warnings %.300q", len(rs.msgs), rs.meta.Warnings.Strings())
	}
	m := rs.msgs[0]
	if m.gen != string(GenTF) || m.line != 2 || m.device != 0 {
		t.Errorf("%+v, want tensorflow at line 2 on device 0", m)
	}
	w := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "line 2: a TensorFlow op's failure") || !strings.Contains(w, "no TensorFlow exception after it") {
		t.Errorf("warnings %.300q, want line 2's op failure explained", w)
	}
}

// The BFC allocator's failure, op_kernel.cc's record of the op that met
// it, and the exception TensorFlow raised are one failure: one OOM, at the
// exception's line (11), whose request is the BFC record's rounded bytes
// (18874368: TensorFlow's own words give a shape, not bytes), and no
// warning that an exception is missing. Cut after the op's record (line
// 7), the record is the OOM, with the same bytes; before session 46 the cut
// text counted the BFC record alone, the op's record uncounted.
func TestH46aTFBFCOpExceptionIsOne(t *testing.T) {
	for _, c := range []struct {
		file string
		line int64
		warn bool
	}{
		{"synthetic/h46a_tf_bfc_op_exception.txt", 11, false},
		{"synthetic/h46a_tf_bfc_op_cut.txt", 7, true},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Errorf("%s: %d messages %+v, want 1", c.file, len(rs.msgs), rs.msgs)
			continue
		}
		m := rs.msgs[0]
		if m.line != c.line || m.sizes["requested"] != 18874368 || m.device != 0 || BFCFailure(m.text) {
			t.Errorf("%s: %+v, want TensorFlow's words at line %d, 18874368 requested on device 0", c.file, m, c.line)
		}
		w := strings.Join(rs.meta.Warnings.Strings(), "\n")
		if got := strings.Contains(w, "no TensorFlow exception after it"); got != c.warn {
			t.Errorf("%s: warnings %.300q, want the missing-exception warning: %v", c.file, w, c.warn)
		}
	}
}

// Records of ops failing together (parallel ops of one step) before one
// exception are one OOM; with no exception, one OOM whose warning counts
// the others.
func TestH46aTFOpRecordsOfOneStep(t *testing.T) {
	const rec = "2020-02-28 19:43:16.58: W tensorflow/core/framework/op_kernel.cc:1655] OP_REQUIRES failed at conv_ops.cc:%s : Resource exhausted: OOM when allocating tensor with shape[8,64,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
	two := strings.Replace(rec, "%s", "446", 1) + strings.Replace(rec, "%s", "501", 1)
	exc := "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8,64,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
	rs, err := readText(t, "two+exc", two+exc, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].line != 3 {
		t.Errorf("two records and the exception: %+v %v, want one message at line 3", rs.msgs, err)
	}
	rs, err = readText(t, "two", two, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].line != 1 {
		t.Fatalf("two records: %+v %v, want one message at line 1", rs.msgs, err)
	}
	if w := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(w, "1 more ops' failures") {
		t.Errorf("warnings %.300q, want the second record counted in the first's", w)
	}
}

// Messages are written in the order of their lines: a TensorRT
// allocator failure waits for a line that tells what became of it
// (trtbuild.go), and a message on a later line (here PyTorch's "CUDA
// error: out of memory", written at once) came first; and at the end of
// the text, held TensorRT failures came after the other messages still
// held (XLA's, waiting for its BufferAssignment stats, on line 2).
func TestH46aHeldMessagesFollowTheLog(t *testing.T) {
	const trt = "[03/10/2024-10:00:00] [TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)\n"
	for _, c := range []struct{ name, text string }{
		{"trt then cuda", trt + "RuntimeError: CUDA error: out of memory\n"},
		{"trt then xla", trt + "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes.\n"},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil || len(rs.msgs) != 2 {
			t.Errorf("%s: %+v %v, want 2 messages", c.name, rs.msgs, err)
			continue
		}
		if rs.msgs[0].line != 1 || rs.msgs[1].line != 2 || rs.msgs[0].id != 0 {
			t.Errorf("%s: lines %d, %d (ids %d, %d), want 1 then 2", c.name, rs.msgs[0].line, rs.msgs[1].line, rs.msgs[0].id, rs.msgs[1].id)
		}
	}
}

// An op's record in XLA's words (TF's XLA ops) is held as TensorFlow's is,
// and the exception after it is the one OOM, though XLA's exception is
// itself held to the end for its BufferAssignment stats; an op's record of
// a failure on /device:CPU:0 is host memory: no OOM, a warning that says
// so.
func TestH46aTFOpXLAAndHost(t *testing.T) {
	xla := "W0000 00:00:1711234567.123456   12345 op_kernel.cc:1827] OP_REQUIRES failed at xla_ops.cc:574 : RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.\n" +
		"Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    f()\n" +
		"tensorflow.python.framework.errors_impl.ResourceExhaustedError: Out of memory while trying to allocate 17179869184 bytes. [Op:__inference_f_12]\n"
	rs, err := readText(t, "xla", xla, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].line != 5 || rs.msgs[0].gen != string(GenXLA) {
		t.Errorf("xla: %+v %v, want one xla message at line 5", rs.msgs, err)
	}
	host := "2021-03-15 17:16:57.320402: W tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed at cwise_ops_common.cc:82 : Resource exhausted: OOM when allocating tensor with shape[1024,4608] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n"
	rs, err = readText(t, "host", host, false)
	w := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if err != nil || len(rs.msgs) != 0 || !strings.Contains(w, "host memory") {
		t.Errorf("host: %+v %v, warnings %.200q; want no message, a host-memory warning", rs.msgs, err, w)
	}
}

// Messages wait behind a held TensorRT failure up to maxBehind of them:
// past that they are written, so a failure no line settles does not hold
// the rest of a long log in memory. All are read.
func TestH46aBehindTRTIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("[03/10/2024-10:00:00] [TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)\n")
	for i := 0; i < maxBehind+10; i++ {
		b.WriteString("RuntimeError: CUDA error: out of memory\n")
	}
	rs, err := readText(t, "many", b.String(), false)
	if err != nil || len(rs.msgs) != maxBehind+11 {
		t.Fatalf("%d messages %v, want %d", len(rs.msgs), err, maxBehind+11)
	}
	// Past the bound the waiting messages (lines 2 to maxBehind+1) are
	// written ahead of the failure, still unsettled; it is counted at the
	// end of the text, ahead of the messages that waited then.
	if rs.msgs[0].line != 2 || rs.msgs[maxBehind].line != 1 {
		t.Errorf("message 0 at line %d, message %d at line %d; want 2 (written ahead) and TensorRT's 1", rs.msgs[0].line, maxBehind, rs.msgs[maxBehind].line)
	}
}
