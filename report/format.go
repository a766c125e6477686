package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// Format is an output format: "table", "json", "sarif", ... Each format is
// one file of this package (table.go, json.go, sarif.go, ...) that declares
// its Format constant and registers its Writer.
type Format string

// DocKind is a kind of document a command writes, and so which member of a
// Writer renders it.
type DocKind string

// The kinds of document.
const (
	// DocAnalysis: the gpuleak.report/v1 document of "gpuleak analyze".
	DocAnalysis DocKind = "analysis"
	// DocPostmortem: the gpuleak.report/v1 document of "gpuleak oom", its
	// findings of kinds oom and fragmentation.
	DocPostmortem DocKind = "postmortem"
	// DocTrend: the gpuleak.report/v1 document of "gpuleak trend", its
	// findings of kind trend.
	DocTrend DocKind = "trend"
	// DocDiff: the gpuleak.diff/v1 document of "gpuleak diff".
	DocDiff DocKind = "diff"
	// DocDaily: the gpuleak.daily/v1 document of "gpuleak report".
	DocDaily DocKind = "daily"
)

// Document is what a command writes: its kind, and the member that holds it.
type Document struct {
	Kind DocKind
	// Report holds the document of kinds DocAnalysis, DocPostmortem and DocTrend.
	Report *Report
	// Diff holds the document of kind DocDiff.
	Diff *DiffReport
	// Daily holds the document of kind DocDaily.
	Daily *Daily
}

// Writer renders documents in one output format. A member renders one
// kind of document; it is nil where the format does not render that kind.
// Errors are those of the io.Writer (and of building a binary format).
type Writer struct {
	// Order places the format in help text and error messages, lowest
	// first.
	Order int
	// Help glosses the format in --format's help ("" for none).
	Help string

	Analysis   func(w io.Writer, r *Report, opt Options) error
	Postmortem func(w io.Writer, r *Report, opt Options) error
	Trend      func(w io.Writer, r *Report, opt Options) error
	Diff       func(w io.Writer, d *DiffReport, opt Options) error
	Daily      func(w io.Writer, d *Daily, opt Options) error
}

// reportWriter is w's member for a kind of document held in a *Report;
// nil for DocDiff, and where w does not render k.
func (w Writer) reportWriter(k DocKind) func(io.Writer, *Report, Options) error {
	switch k {
	case DocAnalysis:
		return w.Analysis
	case DocPostmortem:
		return w.Postmortem
	case DocTrend:
		return w.Trend
	}
	return nil
}

// supports reports whether w renders documents of kind k.
func (w Writer) supports(k DocKind) bool {
	switch k {
	case DocDiff:
		return w.Diff != nil
	case DocDaily:
		return w.Daily != nil
	}
	return w.reportWriter(k) != nil
}

// registry holds the output formats. Each format's file adds its own in
// an init function (so that a new format is one new file); nothing writes
// the registry after package initialisation.
var registry = map[Format]Writer{}

// register adds the writer of format f. A format registered twice is a
// mistake in this package, found by any test.
func register(f Format, w Writer) {
	if _, dup := registry[f]; dup {
		panic(fmt.Sprintf("report: format %q registered twice", f))
	}
	registry[f] = w
}

// Formats lists the output formats that render documents of kind k, in
// their Order, for help text and validation.
func Formats(k DocKind) []Format {
	return formats(func(w Writer) bool { return w.supports(k) })
}

// formats lists the output formats whose writer keep accepts, in their
// Order (then by name).
func formats(keep func(Writer) bool) []Format {
	var out []Format
	for f, w := range registry {
		if keep(w) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := registry[out[i]].Order, registry[out[j]].Order; a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

// FormatNames joins the names of fs: "table, json".
func FormatNames(fs []Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// FormatHelp describes the formats that render documents of kind k, for
// --format's help: "table, json, sarif (SARIF 2.1.0 ...) or pprof (...)".
func FormatHelp(k DocKind) string {
	fs := Formats(k)
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f)
		if h := registry[f].Help; h != "" {
			parts[i] += " (" + h + ")"
		}
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// ParseFormat returns the Format named s, or an error naming the choices.
func ParseFormat(s string) (Format, error) {
	if _, ok := registry[Format(s)]; ok {
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown format %q (choose %s)", s, FormatNames(formats(func(Writer) bool { return true })))
}

// UnsupportedError says that a format does not render a kind of document
// ("gpuleak oom --format sarif"). Choices are the formats that do.
type UnsupportedError struct {
	Format  Format
	Kind    DocKind
	Choices []Format
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("format %q does not render the %s document (choose %s)", e.Format, e.Kind, FormatNames(e.Choices))
}

// Check returns nil when format f renders documents of kind k, else an
// *UnsupportedError (or an error for a format that does not exist).
func Check(f Format, k DocKind) error {
	w, ok := registry[f]
	if !ok {
		return fmt.Errorf("unknown format %q", f)
	}
	if !w.supports(k) {
		return &UnsupportedError{Format: f, Kind: k, Choices: Formats(k)}
	}
	return nil
}

// Options control rendering.
type Options struct {
	// Terminal: the output is a terminal, so tables may be decorated.
	// Piped output is plain and stable.
	Terminal bool
	// SourceRoot is stripped from the start of recorded source paths, so
	// that code scanning finds them in the repository (SARIF).
	SourceRoot string
	// ShowSame lists, in a diff, the sites that did not change too.
	ShowSame bool
}

// Write renders d in format f. Errors are those of w, an unknown format,
// an *UnsupportedError when f does not render d's kind, or a document
// without the member its kind names.
func Write(w io.Writer, d Document, f Format, opt Options) error {
	if err := Check(f, d.Kind); err != nil {
		return err
	}
	wr := registry[f]
	switch {
	case d.Kind == DocDiff && d.Diff != nil:
		return wr.Diff(w, d.Diff, opt)
	case d.Kind == DocDaily && d.Daily != nil:
		return wr.Daily(w, d.Daily, opt)
	case d.Kind != DocDiff && d.Kind != DocDaily && d.Report != nil:
		return wr.reportWriter(d.Kind)(w, d.Report, opt)
	}
	return fmt.Errorf("report: a %s document without its content", d.Kind)
}

// Rank sorts findings in report order: by kind (leaks first; trends by
// classification, growing first), then bytes (largest first), then path,
// device and site, so that equal inputs always give the same order. OOMs
// keep the order they are given in (the postmortem's: by input, then by
// where each was first printed), so that "OOM 2 of 7" of gpuleak oom is
// finding 2 of gpuleak analyze.
func Rank(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if a.Kind.rank() != b.Kind.rank() {
			return a.Kind.rank() < b.Kind.rank()
		}
		if a.Kind == KindOOM && b.Kind == KindOOM {
			return false
		}
		if a.Kind == KindTrend && trendRank(a) != trendRank(b) {
			return trendRank(a) < trendRank(b)
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if da, db := deviceOf(a), deviceOf(b); da != db {
			return da < db
		}
		return stackKey(a.Stack) < stackKey(b.Stack)
	})
}

func deviceOf(f *Finding) int {
	if f.Device == nil {
		return -1
	}
	return *f.Device
}

// stackKey is callsite.StackKey of a report's stack: findings that tie
// are ordered as the analyses order their sites.
func stackKey(st []Frame) string {
	var b []byte
	for _, f := range st {
		b = callsite.AppendFrameKey(b, f.File, f.Function, f.Line)
	}
	return string(b)
}
