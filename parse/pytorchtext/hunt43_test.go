package pytorchtext

import (
	"testing"
)

// Session 43 (testdata/README.md, "Found by the session-43 tester").

// A message whose phrase is wrapped inside its words is joined: jax-ml/jax
// #788's "Resource exhausted: Out" then "of memory while trying to
// allocate 5520758552 bytes." was no message (gpuleak oom: "No
// out-of-memory error"), and a CUDA message cut inside "memory" the same;
// the message takes its first line's number. A line that ends in a
// phrase's first word, followed by other words, stays no message.
func TestHunt43PhraseWrappedInsideItsWords(t *testing.T) {
	rs := readFile(t, "pastes/xla_phrase_wrapped_jax788.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 1 || rs.msgs[0].sizes["requested"] != 5520758552 {
		t.Fatalf("jax788: %+v, want one message at line 1 of 5520758552 bytes", rs.msgs)
	}
	for _, c := range []struct {
		name, text string
		msgs       int
		requested  int64
	}{
		{"inside a word", "RuntimeError: CUDA out of mem\nory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 10.56 MiB free; 6.60 GiB reserved in total by PyTorch)\n", 1, 20 * MiB},
		{"at a space", "torch.OutOfMemoryError: CUDA\nout of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 10.56 MiB free; 6.60 GiB reserved in total by PyTorch)\n", 1, 20 * MiB},
		{"other words", "built with CUDA\nout of the box, it runs\n", 0, 0},
		{"a first word alone", "we Tried\nagain later\n", 0, 0},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rs.msgs) != c.msgs || c.msgs == 1 && (rs.msgs[0].line != 1 || !within(rs.msgs[0].sizes["requested"], c.requested)) {
			t.Errorf("%s: %+v, want %d message(s)", c.name, rs.msgs, c.msgs)
		}
	}
}

// A TensorRT allocator failure that no "Skipping tactic" line followed (a
// runtime's, then its execution context's OutOfMemory) stays an OOM when
// a later build completes: only the failures a skip line followed were
// tactics the builder skipped. The later build dismissed it (the
// session-43 reviewer's input, synthetic from real trtexec lines).
func TestHunt43TRTFailureNotSkippedStaysAnOOM(t *testing.T) {
	rs := readFile(t, "synthetic/trt_runtime_oom_then_build_done.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 2 {
		t.Errorf("%d messages %+v, want the one at line 2", len(rs.msgs), rs.msgs)
	}
}

// A wrap inside the phrase on a traceback's exception line keeps the
// traceback's frames: the message is read at the exception's line, with
// its site (the session-43 reviewer found it read at the next line,
// without frames).
func TestHunt43PhraseWrappedOnTheExceptionLine(t *testing.T) {
	text := "Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    y = model(x)\nRuntimeError: CUDA out of mem\nory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 10.56 MiB free; 6.60 GiB reserved in total by PyTorch)\n"
	rs, err := readText(t, "tb", text, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 || rs.msgs[0].line != 4 || len(rs.frames[rs.msgs[0].id]) != 1 {
		t.Errorf("%+v, want one message at line 4 with the traceback's frame", rs.msgs)
	}
}

// Failures the builder skipped ("Skipping tactic ... insufficient
// memory" after each) stay skipped when the run ends later for a reason
// of its own: an assertion on the model's score, Python's shutdown noise,
// Ctrl-C, a crash (the session-43 tester's logs, synthetic from real
// TensorRT 10 lines). Each was one OOM (--fail-on oom tripped). An
// exception that names the engine ("'NoneType' object has no attribute
// 'serialize'") still says the build failed (TestTRTTacticsSettle).
func TestHunt43TRTSkippedThenAnUnrelatedEnd(t *testing.T) {
	for _, f := range []string{"trt10.log", "trt_shutdown_noise.log", "trt_ctrlc.log", "trt_crash.log"} {
		rs := readFile(t, "synthetic/s43_tactics_skipped_"+f, false)
		if len(rs.msgs) != 0 {
			t.Errorf("%s: %d messages %+v, want none", f, len(rs.msgs), rs.msgs)
		}
	}
}
