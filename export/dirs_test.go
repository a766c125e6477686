package export

import (
	"os"
	"path/filepath"
	"testing"
)

// Dirs removes what it made and is empty, deepest first; a directory that
// existed before, or one that holds a file, stays.
func TestDirsRemoveOnlyWhatTheyMadeEmpty(t *testing.T) {
	base := t.TempDir()
	pre := filepath.Join(base, "pre")
	if err := os.Mkdir(pre, 0o755); err != nil {
		t.Fatal(err)
	}
	var d Dirs
	// pre exists; a, a/b, a/b/c and a/b/kept are made.
	for _, p := range []string{filepath.Join(pre, "a", "b", "c"), filepath.Join(pre, "a", "b", "kept"), pre} {
		if err := d.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pre, "a", "b", "kept", "part.parquet"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.RemoveEmpty()
	// c was empty: gone. kept holds a file: it stays, and so do b and a
	// above it. pre was there before.
	if _, err := os.Stat(filepath.Join(pre, "a", "b", "c")); !os.IsNotExist(err) {
		t.Errorf("empty a/b/c made by Dirs: %v, want it removed", err)
	}
	if _, err := os.Stat(filepath.Join(pre, "a", "b", "kept", "part.parquet")); err != nil {
		t.Errorf("a part was removed: %v", err)
	}
	// Once the file is gone, a second set of made directories empties
	// pre, which stays all the same.
	os.RemoveAll(filepath.Join(pre, "a"))
	var d2 Dirs
	if err := d2.MkdirAll(filepath.Join(pre, "x", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	d2.RemoveEmpty()
	ents, err := os.ReadDir(pre)
	if err != nil || len(ents) != 0 {
		t.Errorf("pre: %v %v, want it there and empty", ents, err)
	}
	// A file in the way is an error, as for os.MkdirAll.
	if err := os.WriteFile(filepath.Join(base, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d2.MkdirAll(filepath.Join(base, "file", "sub"), 0o755); err == nil {
		t.Error("a directory under a file: no error")
	}
	if err := d2.MkdirAll(filepath.Join(base, "file"), 0o755); err == nil {
		t.Error("a file where the directory goes: no error")
	}
}
