package sanitizer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// BenchmarkReadText reads the largest real log (18 KiB, 187 lines).
func BenchmarkReadText(b *testing.B) {
	data, _ := os.ReadFile("../../testdata/sanitizer/leak_cupy.txt")
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "b")
		for r.Next() {
		}
		r.Release()
	}
}

// ciLog generates about size bytes of a CI job's log that holds no
// compute-sanitizer output: timestamped build, test and training lines of
// the kinds CI systems print (punctuation, brackets, "=====" rulers,
// "ERROR"/"Leaked" words in prose), so that the prefix learner sees every
// near miss on every line.
func ciLog(size int) []byte {
	lines := []string{
		"2026-11-30T01:02:03.4567890Z ##[group]Run make test",
		"2026-11-30T01:02:03.4567890Z ============================= test session starts ==============================",
		"2026-11-30T01:02:03.4567890Z tests/test_model.py::test_forward[bf16-cuda:0] PASSED                   [ 42%%]",
		"2026-11-30T01:02:03.4567890Z [rank0]: Epoch 3 step %d | loss 0.4312 | lr 3.0e-04 | 812.5 samples/s",
		"2026-11-30T01:02:03.4567890Z   File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1751, in _call_impl",
		"2026-11-30T01:02:03.4567890Z WARNING: Leaked semaphore objects to clean up at shutdown (%d)",
		"2026-11-30T01:02:03.4567890Z --- ERROR SUMMARY of the linter: 0 problems ---",
		"2026-11-30T01:02:03.4567890Z gcc -O2 -Wall -c -o build/obj/kernel_%d.o src/kernel.cu && echo ok",
	}
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, lines[i%len(lines)]+"\n", i)
	}
	return b.Bytes()
}

// BenchmarkScanUnrecognisedText reads a 16 MiB CI log that holds no
// compute-sanitizer output, as "gpuleak analyze" does with a long log no
// format claims by its first bytes; MB/s is of the log's size.
func BenchmarkScanUnrecognisedText(b *testing.B) {
	data := ciLog(16 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "ci.log")
		for r.Next() {
		}
		if err := r.Err(); !errors.Is(err, parse.ErrNotMine) {
			b.Fatalf("want not-mine, got %v", err)
		}
		r.Release()
	}
}
