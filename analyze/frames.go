// Package analyze finds where GPU memory went. Analyzers take Arrow record
// batches from the parsers (or small typed views of them), return plain
// result structs, and do no I/O.
package analyze

import (
	"fmt"
	"regexp"
	"strings"
)

// Frame is one stack frame: a source file, a 1-based line (0 when
// unknown) and a function name.
type Frame struct {
	Filename string
	Line     int64
	Name     string
}

// FrameFilter decides which frames are framework frames, hidden when
// allocations are grouped by call site. A frame is hidden when a hide rule
// matches it and no keep pattern does.
type FrameFilter struct {
	hide []frameRule
	keep []*regexp.Regexp
}

// frameRule matches a frame's filename or function name, unless except
// matches the filename.
type frameRule struct {
	file, name, except *regexp.Regexp
}

// DefaultHidden describes the frames hidden by default, for help text.
const DefaultHidden = `PyTorch internals (files under torch/, functorch/, c10/, aten/; C++ names in the
c10::, at::, torch::, caffe2:: and pybind11:: namespaces), the Python runtime and
standard library (files under lib/pythonX.Y/ outside site-packages, <frozen ...>,
CPython's C sources and Py*/_Py* functions) and unsymbolized C++ frames ("??").`

var defaultRules = []frameRule{
	{file: regexp.MustCompile(`(^|/)(torch|functorch|c10|aten)/`)},
	{name: regexp.MustCompile(`^(c10|at|torch|caffe2|pybind11)::`)},
	{file: regexp.MustCompile(`/lib/python3\.[0-9]+t?/`), except: regexp.MustCompile(`/(site|dist)-packages/`)},
	{file: regexp.MustCompile(`^<(frozen [^>]*|string)>$`)},
	{file: regexp.MustCompile(`(^|/)(Python|Objects|Modules|Include|Parser)/[^/]*\.[ch]$`)},
	{name: regexp.MustCompile(`^(_?Py[A-Z_]|__libc_start|_start$|unwind::|CapturedTraceback)`)},
	{file: regexp.MustCompile(`^\?\?$`)},
}

// DefaultFrameFilter hides the frames DefaultHidden describes.
func DefaultFrameFilter() *FrameFilter {
	return &FrameFilter{hide: defaultRules}
}

// NewFrameFilter returns the default filter extended by user patterns:
// each hide pattern hides frames whose filename or function name it
// matches; each keep pattern keeps frames it matches (filename or name)
// even when a hide rule matches them. Errors name a pattern that does not
// compile.
func NewFrameFilter(hide, keep []string) (*FrameFilter, error) {
	f := DefaultFrameFilter()
	f.hide = append([]frameRule(nil), f.hide...)
	for _, p := range hide {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bad --hide-frames pattern %q: %w", p, err)
		}
		f.hide = append(f.hide, frameRule{file: re, name: re})
	}
	for _, p := range keep {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bad --keep-frames pattern %q: %w", p, err)
		}
		f.keep = append(f.keep, re)
	}
	return f, nil
}

// Hidden reports whether fr is a framework frame.
func (f *FrameFilter) Hidden(fr Frame) bool {
	for _, re := range f.keep {
		if re.MatchString(fr.Filename) || re.MatchString(fr.Name) {
			return false
		}
	}
	for _, r := range f.hide {
		if r.except != nil && r.except.MatchString(fr.Filename) {
			continue
		}
		if (r.file != nil && r.file.MatchString(fr.Filename)) || (r.name != nil && r.name.MatchString(fr.Name)) {
			return true
		}
	}
	return false
}

// isLibrary reports whether a frame is in an installed package rather than
// the user's own code.
func isLibrary(fr Frame) bool {
	return strings.Contains(fr.Filename, "/site-packages/") || strings.Contains(fr.Filename, "/dist-packages/")
}

// innermostUser returns the index in stack (innermost first, framework
// frames already removed) of the frame that names a call site: the
// innermost frame outside installed packages, or else the innermost frame.
// It returns -1 for an empty stack.
func innermostUser(stack []Frame) int {
	for i, fr := range stack {
		if !isLibrary(fr) {
			return i
		}
	}
	if len(stack) > 0 {
		return 0
	}
	return -1
}
