package pickle

import (
	"bytes"
	"os"
	"testing"
)

// consumeAll consumes every element of the lists under the root's
// "device_traces" list, as a snapshot reader does, without converting them.
type consumeAll struct{}

func (consumeAll) Tag(c, parent *Container, key Value, index int64) {
	if parent != nil && parent.Tag == 1 && c.Kind == List {
		c.Tag = 2
	} else if k, _ := key.Str(); k == "device_traces" {
		c.Tag = 1
	}
}

func (consumeAll) Append(l *Container, index int64, item Value) (bool, error) {
	return l.Tag == 2, nil
}

// BenchmarkDecodeSnapshot1M decodes the million-entry benchmark snapshot
// (`make bench-data`) with the pickle VM alone; MB/s of the file's size.
func BenchmarkDecodeSnapshot1M(b *testing.B) {
	path := os.Getenv("GPULEAK_BENCH_SNAPSHOT")
	if path == "" {
		path = "../../.bench/snapshot_1m.pickle"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("%v: run `make bench-data` first", err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(bytes.NewReader(data), "bench", consumeAll{}, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
