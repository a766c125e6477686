package parse

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
)

// Diagnostic is a remark about an input that did not stop its reading:
// something a parser tolerated, skipped or could not tell (a warning). It
// carries its position as data, so that a report can place it (SARIF's
// region) as well as print it.
type Diagnostic struct {
	// File names the input, as in Error.
	File string
	// Line is the 1-based line the remark is about; 0 when none.
	Line int
	// Offset is the byte offset (of the decompressed input) the remark is
	// about; -1 when none.
	Offset int64
	// Msg is the remark. It does not repeat Line, unless Inline.
	Msg string
	// Inline is true when Msg names its position in its own words ("line 7
	// is longer than ...", "... at byte offset 12 ignored"): String then
	// adds no "line N: " before it.
	Inline bool
}

// String is the remark as reports print it: "line N: Msg" when it has a
// line (and Msg does not say it), else Msg. The file is not named: reports
// list warnings under their input.
func (d Diagnostic) String() string {
	if d.Line > 0 && !d.Inline {
		return "line " + strconv.Itoa(d.Line) + ": " + d.Msg
	}
	return d.Msg
}

// Note is a remark about the whole input, without a position.
func Note(format string, args ...any) Diagnostic {
	return Diagnostic{Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// LineNote is a remark about 1-based line; it prints as "line N: msg".
func LineNote(line int, format string, args ...any) Diagnostic {
	return Diagnostic{Line: line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// InlineNote is a remark at line (0 when none) or byte offset (-1 when
// none) whose text already says where; it prints as its text.
func InlineNote(line int, offset int64, format string, args ...any) Diagnostic {
	return Diagnostic{Line: line, Offset: offset, Msg: fmt.Sprintf(format, args...), Inline: true}
}

// MaxWarnings is the most warnings kept about one input; past it they are
// counted, and the list ends with a line that says how many more there
// were.
const MaxWarnings = 100

// maxUnlisted bounds the remarks past MaxWarnings remembered (by hash) so
// that one said again is not counted again; past it, every one counts.
const maxUnlisted = 1 << 16

// Warnings collects the diagnostics of one input, in the order found, under
// one policy for every parser: a remark is kept once, by the key given to
// Once or else by its printed text (the same line warned about twice, or a
// warning added on every call of Metadata, shows once); past MaxWarnings,
// remarks are counted and not kept, and Diagnostics and Strings end with a
// line that says how many were left out. The zero value is ready to use;
// NewWarnings names the input in the Diagnostics.
type Warnings struct {
	file     string
	list     []Diagnostic
	seen     map[string]bool // keys of the kept remarks
	unlisted map[uint64]bool // hashes of the keys of the others
	seed     maphash.Seed
	more     int // remarks past MaxWarnings
}

// NewWarnings returns an empty collector for the input named file.
func NewWarnings(file string) Warnings { return Warnings{file: file} }

// Add records d unless a remark of the same text was recorded.
func (w *Warnings) Add(d Diagnostic) { w.add("t"+d.String(), d) }

// Once records d unless a remark of the same key was recorded: a remark
// that says the same of every place ("the log ends in the middle of a
// line") is made once, at its first place.
func (w *Warnings) Once(key string, d Diagnostic) { w.add("k"+key, d) }

// Addf records a remark about the whole input (Note).
func (w *Warnings) Addf(format string, args ...any) { w.Add(Note(format, args...)) }

// Linef records a remark about a line (LineNote).
func (w *Warnings) Linef(line int, format string, args ...any) {
	w.Add(LineNote(line, format, args...))
}

func (w *Warnings) add(key string, d Diagnostic) {
	if w.seen[key] {
		return
	}
	if len(w.list) < MaxWarnings {
		if w.seen == nil {
			w.seen = map[string]bool{}
		}
		w.seen[key] = true
		if d.File == "" {
			d.File = w.file
		}
		w.list = append(w.list, d)
		return
	}
	if w.unlisted == nil {
		w.unlisted = map[uint64]bool{}
		w.seed = maphash.MakeSeed()
	}
	h := maphash.String(w.seed, key)
	if w.unlisted[h] {
		return
	}
	if len(w.unlisted) < maxUnlisted {
		w.unlisted[h] = true
	}
	w.more++
}

// Len is the number of remarks recorded, those left out included.
func (w *Warnings) Len() int { return len(w.list) + w.more }

// Diagnostics are the remarks kept, in the order found, and, when some
// were left out, a last one without position that says how many.
func (w *Warnings) Diagnostics() []Diagnostic {
	out := slices.Clone(w.list)
	if w.more > 0 {
		out = append(out, Diagnostic{File: w.file, Offset: -1,
			Msg: fmt.Sprintf("%d more warnings were left out (only the first %d are listed)", w.more, MaxWarnings)})
	}
	return out
}

// Strings are the Diagnostics as reports print them (Diagnostic.String);
// nil when there are none.
func (w *Warnings) Strings() []string {
	var out []string
	for _, d := range w.Diagnostics() {
		out = append(out, d.String())
	}
	return out
}
