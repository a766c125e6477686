package sanitizer

import (
	"bytes"
	"os"
	"testing"
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
