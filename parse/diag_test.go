package parse

import (
	"fmt"
	"slices"
	"testing"
)

func TestDiagnosticString(t *testing.T) {
	for _, c := range []struct {
		d    Diagnostic
		want string
	}{
		// A line said as a prefix: what readers wrote as "line %d: ..." before
		// positions became data.
		{LineNote(7, "a row is cut short (%q)", "x"), `line 7: a row is cut short ("x")`},
		// No position.
		{Note("no process rows"), "no process rows"},
		// The text says where: printed as it is, the position kept as data.
		{InlineNote(7, -1, "line %d is longer than %d bytes", 7, 10), "line 7 is longer than 10 bytes"},
		{InlineNote(0, 12, "text after the document at byte offset %d ignored", 12), "text after the document at byte offset 12 ignored"},
		// A literal without a line is its message.
		{Diagnostic{Offset: 3, Msg: "m"}, "m"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
	if d := LineNote(7, "m"); d.Line != 7 || d.Offset != -1 || d.Inline {
		t.Errorf("LineNote: %+v", d)
	}
	if d := Note("m"); d.Line != 0 || d.Offset != -1 {
		t.Errorf("Note: %+v", d)
	}
}

func TestWarningsPositions(t *testing.T) {
	w := NewWarnings("gpu.log")
	w.Linef(3, "a %s", "row")
	w.Add(InlineNote(0, 40, "at byte offset 40"))
	ds := w.Diagnostics()
	if len(ds) != 2 || ds[0] != (Diagnostic{File: "gpu.log", Line: 3, Offset: -1, Msg: "a row"}) ||
		ds[1] != (Diagnostic{File: "gpu.log", Offset: 40, Msg: "at byte offset 40", Inline: true}) {
		t.Errorf("diagnostics %+v", ds)
	}
	if got := w.Strings(); !slices.Equal(got, []string{"line 3: a row", "at byte offset 40"}) {
		t.Errorf("strings %q", got)
	}
	// A diagnostic that names its own file keeps it.
	w.Add(Diagnostic{File: "other", Offset: -1, Msg: "x"})
	if d := w.Diagnostics()[2]; d.File != "other" {
		t.Errorf("file %q", d.File)
	}
}

func TestWarningsEmpty(t *testing.T) {
	var w Warnings // the zero value is ready
	if w.Strings() != nil || len(w.Diagnostics()) != 0 || w.Len() != 0 {
		t.Errorf("empty: %q", w.Strings())
	}
	w.Addf("x")
	if got := w.Strings(); !slices.Equal(got, []string{"x"}) || w.Diagnostics()[0].File != "" {
		t.Errorf("zero value: %q", got)
	}
}

// The four policies the collector replaces differed; each case says which
// old behaviour it keeps or changes.
func TestWarningsDedupe(t *testing.T) {
	var w Warnings
	// nvml deduplicated by text: a warning added on every call of
	// Metadata, or the same line warned about twice, shows once.
	w.Addf("the given date was not used")
	w.Addf("the given date was not used")
	w.Linef(5, "cut short")
	w.Linef(5, "cut short")
	// The same remark about two lines is two warnings (their texts differ).
	w.Linef(6, "cut short")
	// sanitizer and pytorch deduplicated by key: the first place only.
	w.Once("cut", LineNote(9, "the log ends in the middle of a line: %s", "a"))
	w.Once("cut", LineNote(12, "the log ends in the middle of a line: %s", "b"))
	// A key and a text never stand for each other.
	w.Once("x", Note("keyed"))
	w.Addf("x")
	// pytorchtext and kineto kept repeated texts; now they show once.
	w.Linef(20, "a CUDA out-of-memory message cut short")
	w.Linef(20, "a CUDA out-of-memory message cut short")
	want := []string{
		"the given date was not used",
		"line 5: cut short",
		"line 6: cut short",
		"line 9: the log ends in the middle of a line: a",
		"keyed",
		"x",
		"line 20: a CUDA out-of-memory message cut short",
	}
	if got := w.Strings(); !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if w.Len() != len(want) {
		t.Errorf("Len %d, want %d", w.Len(), len(want))
	}
}

func TestWarningsCap(t *testing.T) {
	var w Warnings
	// pytorchtext kept the first 100 and dropped the rest silently; nvml
	// kept all. Now: the first MaxWarnings, then one line that counts the
	// rest, each counted once however often it is said again.
	const n = MaxWarnings + 50
	for i := 1; i <= n; i++ {
		w.Linef(i, "value not understood")
	}
	for i := 1; i <= n; i++ {
		w.Linef(i, "value not understood") // all said before
	}
	w.Once("long", Note("a long line")) // a new key past the cap counts
	w.Once("long", Note("a long line"))
	got := w.Strings()
	if len(got) != MaxWarnings+1 || got[0] != "line 1: value not understood" || got[MaxWarnings-1] != fmt.Sprintf("line %d: value not understood", MaxWarnings) {
		t.Fatalf("%d warnings, first %q", len(got), got[0])
	}
	if last, want := got[MaxWarnings], "51 more warnings were left out (only the first 100 are listed)"; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
	ds := w.Diagnostics()
	if d := ds[len(ds)-1]; d.Line != 0 || d.Offset != -1 {
		t.Errorf("the count has a position: %+v", d)
	}
	if w.Len() != n+1 {
		t.Errorf("Len %d, want %d", w.Len(), n+1)
	}
}

// Past maxUnlisted remembered remarks, each one said again counts again:
// memory stays bounded on a log that warns on every one of millions of
// lines.
func TestWarningsUnlistedBound(t *testing.T) {
	var w Warnings
	for i := 0; i < MaxWarnings+maxUnlisted+10; i++ {
		w.Linef(i+1, "m")
	}
	w.Linef(MaxWarnings+maxUnlisted+5, "m") // past the bound: not remembered
	w.Linef(MaxWarnings+1, "m")             // remembered
	if len(w.unlisted) != maxUnlisted || w.more != maxUnlisted+11 {
		t.Errorf("%d remembered, %d more", len(w.unlisted), w.more)
	}
}
