package callsite

import (
	"sort"
	"testing"
)

// TestStackKey checks the one stack key that replaced three: the leak
// analysis's (file, varint line, name), the sanitizer analysis's and the
// report's (file, name, decimal line, as text). The text layout was kept
// because the sanitizer's site ranking and the report's finding order
// sort by it, so keeping it keeps their order; the leak analysis only
// groups by its key and, for sites equal in kind, bytes and device,
// orders by it, and there the order moves from line-first to name-first
// (see TestStackKeyOrder).
func TestStackKey(t *testing.T) {
	st := []Frame{{Filename: "train.py", Line: 24, Name: "train"}, {Filename: "m.py", Line: -1, Name: "<module>"}}
	want := "train.py\x00train\x0024\x00m.py\x00<module>\x00-1\x00"
	if got := StackKey(st); got != want {
		t.Errorf("StackKey = %q, want %q (the layout the sanitizer and the report used)", got, want)
	}
	var b []byte
	for _, f := range st {
		b = AppendFrameKey(b, f.Filename, f.Name, f.Line)
	}
	if string(b) != want {
		t.Errorf("AppendFrameKey gives %q, StackKey %q: the report's key must equal the analyses'", b, want)
	}
	if StackKey(nil) != "" {
		t.Error("the empty stack must have the empty key")
	}
	// Frames that differ in any one field, or stacks that differ only in
	// how their strings split, have different keys.
	distinct := [][]Frame{
		{{Filename: "a.py", Line: 1, Name: "f"}},
		{{Filename: "a.py", Line: 11, Name: "f"}},
		{{Filename: "a.py", Line: 1, Name: "g"}},
		{{Filename: "b.py", Line: 1, Name: "f"}},
		{{Filename: "a.py", Line: 1, Name: "f"}, {Filename: "a.py", Line: 1, Name: "f"}},
		{{Filename: "a.py1", Line: 1, Name: "f"}},
	}
	seen := map[string]int{}
	for i, s := range distinct {
		k := StackKey(s)
		if j, ok := seen[k]; ok {
			t.Errorf("stacks %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
}

// TestStackKeyOrder: keys sort by file, then function, then line (as
// text): the order the sanitizer's ranking and the report used.
func TestStackKeyOrder(t *testing.T) {
	keys := []string{
		StackKey([]Frame{{Filename: "m.py", Line: 10, Name: "b"}}),
		StackKey([]Frame{{Filename: "m.py", Line: 20, Name: "a"}}),
		StackKey([]Frame{{Filename: "l.py", Line: 30, Name: "z"}}),
	}
	sort.Strings(keys)
	want := []string{"l.py\x00z\x0030\x00", "m.py\x00a\x0020\x00", "m.py\x00b\x0010\x00"}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("sorted keys %q, want %q", keys, want)
		}
	}
}
