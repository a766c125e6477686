package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// Format is an output format.
type Format string

// Output formats.
const (
	FormatTable    Format = "table"    // aligned text for people
	FormatJSON     Format = "json"     // the gpuleak.report/v1 document
	FormatSARIF    Format = "sarif"    // SARIF 2.1.0 for code scanning (report/sarif.go)
	FormatMarkdown Format = "markdown" // a job summary or PR comment (report/markdown.go)
	FormatJUnit    Format = "junit"    // JUnit XML test report (report/junit.go)
	FormatPprof    Format = "pprof"    // gzipped profile.proto of live GPU memory (report/pprof.go)
)

// Formats lists the output formats, for help text and validation.
var Formats = []Format{FormatTable, FormatJSON, FormatSARIF, FormatMarkdown, FormatJUnit, FormatPprof}

// Writer renders a report in one format.
type Writer func(w io.Writer, r *Report, opt Options) error

// writers is the registry of output formats: one file each.
var writers = map[Format]Writer{
	FormatTable:    writeTable,
	FormatJSON:     func(w io.Writer, r *Report, _ Options) error { return writeJSON(w, r) },
	FormatSARIF:    writeSARIF,
	FormatMarkdown: writeMarkdown,
	FormatJUnit:    writeJUnit,
	FormatPprof:    writePprof,
}

// ParseFormat returns the Format named s, or an error naming the choices.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (choose %s)", s, strings.Join(names, ", "))
}

// Options control rendering.
type Options struct {
	// Terminal: the output is a terminal, so tables may be decorated.
	// Piped output is plain and stable.
	Terminal bool
	// SourceRoot is stripped from the start of recorded source paths, so
	// that code scanning finds them in the repository (SARIF).
	SourceRoot string
}

// Write renders r in format f. Errors are those of w, or an unknown format.
func Write(w io.Writer, r *Report, f Format, opt Options) error {
	if wr := writers[f]; wr != nil {
		return wr(w, r, opt)
	}
	return fmt.Errorf("unknown format %q", f)
}

// Rank sorts findings in report order: by kind (leaks first; trends by
// classification, growing first), then bytes (largest first), then path,
// device and site, so that equal inputs always give the same order.
func Rank(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if a.Kind.rank() != b.Kind.rank() {
			return a.Kind.rank() < b.Kind.rank()
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
