package pipeline

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSmallRun: only regular, uncompressed files of smallRunBytes or less
// in all keep start-up's GC percentage.
func TestSmallRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if size > 0 {
			if err := os.Truncate(p, size); err != nil { // sparse: no disk used
				t.Fatal(err)
			}
		}
		return p
	}
	small := write("small.pickle", []byte{0x80, 0x04}, 0)
	half := write("half.pickle", []byte{0x80, 0x04}, smallRunBytes/2+1)
	big := write("big.pickle", []byte{0x80, 0x04}, smallRunBytes+1)
	gz := write("small.pickle.gz", []byte{0x1f, 0x8b, 0x08}, 0)
	empty := write("empty.log", nil, 0)
	for _, c := range []struct {
		name  string
		paths []string
		want  bool
	}{
		{"one small file", []string{small}, true},
		{"an empty file", []string{empty}, true},
		{"two halves over the limit in all", []string{half, half}, false},
		{"one half", []string{half, small}, true},
		{"a large file", []string{big}, false},
		{"gzip: its unpacked size is not known", []string{gz}, false},
		{"standard input", []string{"-"}, false},
		{"a directory", []string{dir}, false},
		{"a missing file", []string{filepath.Join(dir, "none")}, false},
		{"no path", nil, false},
	} {
		if got := smallRun(c.paths); got != c.want {
			t.Errorf("%s: smallRun = %v, want %v", c.name, got, c.want)
		}
	}
}
