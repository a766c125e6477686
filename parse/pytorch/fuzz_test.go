package pytorch

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pickle"
)

// FuzzReader decodes arbitrary bytes as a snapshot: the result is either a
// complete set of tables or a *parse.Error, never a panic, and Arrow memory
// is always released.
func FuzzReader(f *testing.F) {
	// Small real seeds: the fuzzer minimizes each new input by re-running
	// it, which takes minutes on tens of kilobytes.
	for _, name := range []string{"oom_other_process.pickle"} {
		if b, err := os.ReadFile(dir + name); err == nil {
			f.Add(b)
		}
	}
	frame := dict("filename", str("a.py"), "line", i64(1), "name", str("f"))
	f.Add(pickleBytes(dict("segments", list(dict("device", i64(0), "address", i64(1), "total_size", i64(2),
		"blocks", list(dict("size", i64(2), "state", str("active_allocated"), "frames", list(frame))))),
		"device_traces", list(list(dict("action", str("alloc"), "addr", i64(1), "size", i64(2), "frames", list(frame)))))))
	f.Add(pickleBytes(list(dict("device", i64(1), "address", i64(8), "total_size", i64(2), "blocks",
		list(dict("size", i64(2), "state", str("inactive"), "history", list(dict("real_size", i64(1), "frames", list(frame)))))))))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		defer mem.AssertSize(t, 0)
		lim := pickle.Limits{MaxStack: 1 << 12, MaxItems: 1 << 14, MaxString: 1 << 16}
		s, err := ReadAll(bytes.NewReader(data), "fuzz", WithAllocator(mem), WithBatchSize(64), WithLimits(lim))
		if err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *parse.Error: %v", err)
			}
			return
		}
		s.Release()
	})
}
