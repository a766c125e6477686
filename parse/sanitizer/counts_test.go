package sanitizer

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// One leak record under another prefix than the banner's: the warning
// counts one line in the singular (it said "1 lines ... read like").
func TestUnmatchedOneLine(t *testing.T) {
	log, err := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
	if err != nil {
		t.Fatal(err)
	}
	// The second record's first line (line 9), and only it.
	log = bytes.Replace(log, []byte("========= Leaked 262,144 bytes at 0x7fb262c00000"), []byte("######### Leaked 262,144 bytes at 0x7fb262c00000"), 1)
	r := NewReader(bytes.NewReader(log), "one.txt")
	defer r.Release()
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	ws := strings.Join(r.Metadata().Warnings.Strings(), "\n")
	if !strings.Contains(ws, "1 line (line 9) reads like a compute-sanitizer record but does not start with the prefix") || !strings.Contains(ws, ": it was not read") {
		t.Errorf("warnings %q", ws)
	}
}
