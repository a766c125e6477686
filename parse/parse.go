// Package parse holds what every input family shares: the Format of an
// input, errors and warnings that carry a position (Error, Diagnostic,
// Warnings), Open, which reads a file or
// standard input and removes gzip compression by its magic bytes, and the
// shell of a streaming reader (TableReader, TableBuilder, ReaderOptions).
//
// Each input family lives in a sub-package (parse/pytorch, ...) that turns
// bytes into Apache Arrow record batches with a documented schema; its
// Reader embeds a TableReader, so that every family reads alike.
// pipeline recognises which family an input belongs to by content (each
// family's package exports its Sniff and declares its Format constants).
package parse

import (
	"fmt"
)

// Format names an input format recognised by content. The string values
// appear in reports (the "format" of each input) and are stable. Each
// input family declares its own in its package (pytorch.FormatSnapshot,
// sanitizer.FormatText, nvml.FormatQueryGPU, ...); the pipeline's
// registry holds that no two families name one format.
type Format string

// FormatUnknown is the format of an input no family recognises.
const FormatUnknown Format = ""

// Kind is a sentinel error that classifies an *Error for errors.Is without
// adding its text to the message, which already says it in words.
type Kind struct {
	name   string
	parent *Kind
}

// NewKind returns a new sentinel.
func NewKind(name string) *Kind { return &Kind{name: name} }

func (k *Kind) Error() string { return k.name }

// Is makes a kind made by NewSubKind match its parent too.
func (k *Kind) Is(target error) bool { return k.parent != nil && target == error(k.parent) }

// NewSubKind returns a sentinel that errors.Is also finds as parent: a
// case of it that some callers tell apart.
func NewSubKind(name string, parent *Kind) *Kind { return &Kind{name: name, parent: parent} }

// ErrNotMine is returned (wrapped) by a parser when the input is not in its
// format at all, as opposed to an *Error, which means "mine, but broken".
var ErrNotMine = NewKind("not this format")

// ErrOwnOutput is an ErrUnknownFormat that is gpuleak's own JSON (a
// report, a baseline, a daily report, a diff): no input, but no stranger
// either.
var ErrOwnOutput = NewSubKind("gpuleak's own output", ErrUnknownFormat)

// ErrContainer is an ErrUnknownFormat that holds other files or another
// compression (a tar or zip archive, zstd, xz): what it holds may be
// inputs, but not as it is.
var ErrContainer = NewSubKind("an archive or another compression", ErrUnknownFormat)

// ErrPrintout is an ErrUnknownFormat that is a printout of memory
// figures gpuleak recognises but does not read (a profiler table,
// memory_allocated() printed each step, another tool's report, a snapshot
// saved as JSON): the error names what it is and what to record instead.
var ErrPrintout = NewSubKind("a memory printout gpuleak does not read", ErrUnknownFormat)

// ErrIsDirectory is returned (wrapped in an *Error) by Open for a path
// that names a directory, where a file was expected.
var ErrIsDirectory = NewKind("is a directory")

// ErrUnknownFormat is returned when no parser recognises an input.
var ErrUnknownFormat = NewKind("unrecognised input format")

// Error reports malformed input at a position. Offset is a byte offset
// from the start of the (decompressed) input, or -1 when the input is
// line-oriented and Line says where; Line is 1-based, 0 when unknown.
// Err, when set, is the underlying cause and is returned by Unwrap.
type Error struct {
	File   string
	Offset int64
	Line   int
	Msg    string
	Err    error
	// Gzip is true when the input is gzip-compressed: Offset counts bytes
	// of its decompressed content, and the message says so ("byte offset
	// N of the decompressed content"), as a reader of the file on disk
	// would otherwise look for it there. Compressed, when above 0, is how
	// many bytes of the file had been read (where its gzip stream was cut
	// short). Input.Locate sets both: a family's reader, given the
	// decompressed bytes, does not know.
	Gzip       bool
	Compressed int64
	// Embedded is true when Offset counts bytes of the snapshot a
	// _memory_viz page embeds, base64-decoded (Input.Embedded): the
	// message says so.
	Embedded bool
	// JSON is true when Offset counts bytes of the pickle made from a
	// snapshot saved as JSON (Input.JSON): the message says so.
	JSON bool
}

func (e *Error) Error() string {
	var pos string
	switch {
	case e.Line > 0:
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	case e.Offset >= 0 && e.Gzip && e.Compressed > 0:
		pos = fmt.Sprintf("%s: byte offset %d of the decompressed content (compressed bytes read: %d)", e.File, e.Offset, e.Compressed)
	case e.Offset >= 0 && e.Gzip:
		pos = fmt.Sprintf("%s: byte offset %d of the decompressed content", e.File, e.Offset)
	case e.Offset >= 0 && e.JSON:
		pos = fmt.Sprintf("%s: byte offset %d of the pickle made from the snapshot's JSON", e.File, e.Offset)
	case e.Offset >= 0 && e.Embedded:
		pos = fmt.Sprintf("%s: byte offset %d of the snapshot the page embeds (base64-decoded)", e.File, e.Offset)
	case e.Offset >= 0:
		pos = fmt.Sprintf("%s: byte offset %d", e.File, e.Offset)
	default:
		pos = e.File
	}
	msg := e.Msg
	if _, kind := e.Err.(*Kind); e.Err != nil && !(kind && msg != "") {
		if msg == "" {
			msg = e.Err.Error()
		} else {
			msg += ": " + e.Err.Error()
		}
	}
	return pos + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at a byte offset.
func Errorf(file string, offset int64, format string, args ...any) *Error {
	return &Error{File: file, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// LineErrorf returns an *Error at a 1-based line.
func LineErrorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Offset: -1, Line: line, Msg: fmt.Sprintf(format, args...)}
}
