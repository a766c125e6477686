// Package pipeline reads gpuleak's inputs and analyses them: it
// recognises each input's family by content (a registry of families, one
// file per family: its formats, how it is sniffed, and how it is analysed
// for each use), opens each input once, and owns what spans inputs: the
// facts of one out-of-memory error seen in several files, the
// compute-sanitizer tool errors, the NVML logs judged together, and the
// join of a snapshot with the NVML process of its run. cmd gives it
// validated options and writes what Run returns.
package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/report"
)

// Use is what the inputs are read for: each family says how it is
// analysed for each.
type Use int

const (
	// Analyze ranks what holds memory (gpuleak analyze, gpuleak diff):
	// each input's findings and those that span inputs.
	Analyze Use = iota
	// Postmortem explains out-of-memory errors (gpuleak oom).
	Postmortem
	// Trend judges NVML sample logs (gpuleak trend).
	Trend
)

// Options are what Run needs, validated by the caller.
type Options struct {
	Use Use
	// Version is gpuleak's version, for the report's tool entry.
	Version string
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Progress, when set, is called as each input starts being read, with
	// its name, its size in bytes (-1 when unknown) and a function that
	// returns the bytes read so far (raw, before gzip); Run calls the
	// function it returns when the input is done.
	Progress func(name string, size int64, read func() int64) (stop func())

	// Filter hides framework frames; MinKept is the fewest allocations a
	// growing site must keep to be a leak (snapshot.LeakOptions).
	Filter  *callsite.FrameFilter
	MinKept int
	// MinBytes leaves out findings smaller than it, in bytes (not OOMs);
	// Analyze only.
	MinBytes int64
	// PlainLogs reads a text input no family claims, and in which no OOM
	// message, compute-sanitizer report or tool error is found, as a log
	// that ran without an OOM (as gpuleak oom reads it) rather than as
	// unrecognised: for analyze --fail-on oom, which a log of a run
	// without one must pass. Its input warns that nothing else was read
	// from it, and gates no text log answers stay unjudged. Analyze only.
	PlainLogs bool
	// Suppressions are the compute-sanitizer record rules; Rules every
	// rule of the same file, as it applies to findings (Analyze only).
	Suppressions []sanitizer.Suppression
	Rules        []report.SuppressionRule
	// NVML reads NVML sample logs.
	NVML NVMLOptions
	// Location is the zone of NVML timestamps without one, for the NVML
	// logs given to Postmortem (nil: UTC).
	Location *time.Location
	// Curves keeps each leak site's live bytes at every iteration start
	// (report.Growth.LiveBytes), for the daily report's charts.
	Curves bool
}

// NVMLOptions read NVML sample logs: the reader's options (zone, fields,
// dates), the fields of header-less nvidia-smi CSV (to recognise it), and
// the trend analysis's options.
type NVMLOptions struct {
	Reader []nvml.Option
	Fields []string
	Trend  antrend.Options
}

// Result is what Run read: the report document and, when some inputs
// could not be read, Unread.
type Result struct {
	// Report lists every input (an unread one with its error) and the
	// findings: for Analyze ranked, --min-bytes and suppressions applied,
	// before any --top cut (FindingsTotal is their number).
	Report *report.Report
	// Unread is nil when every input was read, else an *InputError naming
	// the first that was not (and how many more): the command writes the
	// report, then returns it.
	Unread error
	// Errors holds each input that could not be read, by path, with its
	// error (the daily report tells files it skips from files it could
	// not read); empty when every input was read.
	Errors map[string]error
}

// InputError wraps the failure to read or parse inputs (exit code 2).
// ByPath, when set, holds every input that could not be read, by path,
// with its own error (a run where every input failed).
type InputError struct {
	Err    error
	ByPath map[string]error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Run reads every path ("-" is Options.Stdin) once, recognising its
// family by content, and analyses them for o.Use. An input that cannot be
// read costs only itself (Result.Unread), unless it is the only one given
// or every input failed: then Run returns an *InputError and no result. Run stops between inputs when ctx is done.
func Run(ctx context.Context, o Options, paths []string) (*Result, error) {
	settleGC(paths)
	r := &runner{o: &o, rep: &report.Report{Schema: report.Schema, Tool: report.Tool{Name: "gpuleak", Version: o.Version}}}
	switch o.Use {
	case Trend:
		return r.trendAll(ctx, paths)
	case Postmortem:
		return r.postmortemAll(ctx, paths)
	}
	return r.analyzeAll(ctx, paths)
}

// runner holds one Run: its options, the report being built and the
// state that spans inputs.
type runner struct {
	o      *Options
	rep    *report.Report
	unread unread

	oom        oomFacts           // OOM facts of all inputs, for one postmortem
	toolErrors []report.ToolError // compute-sanitizer errors that are not leaks
	join       joinFacts          // snapshots and NVML processes, to join
	nvml       *nvmlRun           // NVML sample logs of all inputs, judged together
}

func (r *runner) leakOptions() snapshot.LeakOptions {
	return snapshot.LeakOptions{Filter: r.o.Filter, MinKept: r.o.MinKept, Curves: r.o.Curves}
}

// each reads every path with read: an input that cannot be read is listed
// with its error (when paths has more than one), or stops the run. read
// returns, with its error, an input whose Format is what the content was
// recognised as (empty when it was not).
func (r *runner) each(ctx context.Context, paths []string, read func(path string) (report.Input, error)) error {
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		in, err := read(path)
		if err != nil {
			if len(paths) == 1 {
				return &InputError{Err: err}
			}
			r.rep.Inputs = append(r.rep.Inputs, r.unread.add(path, in.Format, err))
			continue
		}
		r.rep.Inputs = append(r.rep.Inputs, in)
	}
	if r.unread.n == len(paths) {
		return r.unread.err()
	}
	return nil
}

// open opens one input and reads its first bytes.
func (r *runner) open(path string) (*parse.Input, []byte, error) {
	in, err := parse.Open(path, r.o.Stdin)
	if err != nil {
		return nil, nil, err
	}
	head, err := in.Head()
	if err != nil && !(parse.IsGzipCut(err) && readsUpToCut(r.o.detect(head))) {
		in.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := containerError(path, head); err != nil {
		in.Close()
		return nil, nil, err
	}
	if schema := ownSchema(head); schema != "" {
		// gpuleak's own output: not an input. Read as text, the messages
		// it quotes would pass for a log's (an OOM report for an OOM log
		// that "has no OOM", or one counted twice).
		in.Close()
		where := "give it to gpuleak diff or --baseline (a report or baseline)"
		switch schema {
		case report.DailySchema:
			where = "give it to gpuleak report --baseline"
		case report.DiffSchema:
			where = "a diff is read by nothing"
		}
		return nil, nil, &parse.Error{File: path, Offset: 0, Err: parse.ErrOwnOutput,
			Msg: fmt.Sprintf("a %s document, gpuleak's own output, not an input: %s, or analyse the inputs it was written from", schema, where)}
	}
	return in, head, nil
}

// ownSchema returns the schema of gpuleak's own JSON documents (a report,
// a baseline, a diff, a daily report) when head is one, else "".
func ownSchema(head []byte) string {
	h := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(h) == 0 || h[0] != '{' {
		return ""
	}
	if m := ownSchemaRE.Re().FindSubmatch(h); m != nil {
		return string(m[1])
	}
	return ""
}

// ownSchemaRE finds a gpuleak schema member among the first bytes of a
// JSON object, wherever it stands (jq -S moves it), as diff reads them.
var ownSchemaRE = lazyre.New(`"schema"\s*:\s*"(gpuleak\.[a-z]+/v[0-9]+)"`)

// progress starts the progress callback for in; call the result when in
// is done.
func (r *runner) progress(in *parse.Input) (stop func()) {
	if r.o.Progress == nil {
		return func() {}
	}
	return r.o.Progress(in.Name, in.Size, in.RawBytesRead)
}

// unread collects the inputs that could not be read, so that the others
// are still reported.
type unread struct {
	first  error
	n      int
	byPath map[string]error
}

// add records a failed input and returns its report entry: its path,
// the format its content was recognised as ("" when it was not: a file
// that cannot be opened, or content no family claims) and the error.
func (u *unread) add(path, format string, err error) report.Input {
	if u.first == nil {
		u.first = err
	}
	u.n++
	if u.byPath == nil {
		u.byPath = map[string]error{}
	}
	u.byPath[path] = err
	return report.Input{Path: path, Format: format, Error: err.Error(), Warnings: []string{}}
}

// err is nil when every input was read, else an *InputError naming the
// first failure (and how many more).
func (u *unread) err() error {
	switch {
	case u.n == 0:
		return nil
	case u.n == 1:
		return &InputError{Err: u.first, ByPath: u.byPath}
	}
	return &InputError{Err: fmt.Errorf("%w (and %d more inputs could not be read; the report lists them)", u.first, u.n-1), ByPath: u.byPath}
}

// unrecognised is the error for an input no family claims.
func unrecognised(path string) error {
	return &parse.Error{File: path, Offset: 0, Msg: "unrecognised input format: not a PyTorch memory snapshot, a log with a CUDA out-of-memory message, " +
		"memory_summary() text, memory_stats() JSON, a compute-sanitizer report (text or XML), a PyTorch profiler trace or memory timeline, nor an NVML sample log (nvidia-smi CSV, dmon, pmon, pynvml, gpustat, DCGM)", Err: parse.ErrUnknownFormat}
}

// readAhead returns src read on a goroutine of its own, two batches ahead
// of its consumer, when in is a regular file: parsing on one core and
// analysing on the other. A regular file's reads end, so stopping early
// never waits on a pipe; other inputs are read as they are. stop ends the
// goroutine; call it before src is released.
func readAhead[T any](in *parse.Input, src parse.BatchSource[T]) (_ parse.BatchSource[T], stop func()) {
	if !in.Regular {
		return src, func() {}
	}
	p := parse.NewPrefetch[T](src, 2)
	return p, p.Close
}
