package cmd

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/pipeline"
	"github.com/gpuleak/gpuleak/report"
)

// DiffOptions are the flags and dependencies of "gpuleak diff".
type DiffOptions struct {
	IO      *IOStreams
	Version string

	Base, New    string
	Format       string
	MinBytes     string
	HideFrames   []string
	KeepFrames   []string
	MinKept      int
	Tolerance    string
	All          bool
	Suppressions string

	// Parsed from the flags by validate, in RunE, before runF sees them.
	format       report.Format
	minBytes     int64
	tol          report.Tolerance
	filter       *callsite.FrameFilter
	suppressions []sanitizer.Suppression
	rules        []report.SuppressionRule
}

// NewCmdDiff builds "gpuleak diff". runF replaces the run function in
// tests; nil runs runDiff.
func NewCmdDiff(ios *IOStreams, version string, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: ios, Version: version}
	c := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "Compare two runs call site by call site: what is new, grown, shrunk or fixed",
		Long: `Diff compares what two runs held, call site by call site. BASE and NEW are
each a snapshot, a PyTorch profiler trace or memory timeline, a
compute-sanitizer report or an NVML log (analysed as gpuleak analyze
would), a JSON report written by "gpuleak analyze --format
json" (write it with --top 0: the diff sees only the findings it lists), or
a baseline written by --write-baseline. "-" reads any of these from
standard input: gpuleak analyze --format json --top 0 old.pickle |
gpuleak diff - new.pickle.

A site's key is the finding's kind, device (type and index: cuda:0, xpu:0
and host memory differ), allocator class and stack with
framework frames hidden, each frame as function and file base name without
the line number (directories change from machine to machine); addresses
never enter it. Findings without a stack are one site per kind, device and
allocator; an NVML series is one site per GPU and process name. Process
ids never enter a key (they change from run to run): within a run,
processes of one key are other sites, numbered by when they start (then
by pid), and the Nth is matched with the Nth of the other run. Within a run, findings of one key at other lines are other
sites, matched across runs by their lines; the sites of a key each run
holds at lines the other has not are paired as code an edit moved when
they are as many and in the same order in every frame (shown with their
BASE stack and a note), else they are new and fixed, each with a note.
A fixed and a new site with the same innermost frame (kind, device and
allocator too) whose stacks differ only by outer frames one inserts (a
wrapper) are one site called through another path, shown once with a note naming the first frame that differs,
when that frame has just one of each. Sites that would show alike say what
tells them apart. A leak whose traces
show different numbers of iterations is judged per iteration. Each site is:

  new     absent from BASE
  grown   holds more bytes than in BASE, beyond --tolerance
  shrunk  holds fewer
  fixed   absent from NEW
  same    holds as many (or more, within --tolerance)
  unmatched  absent from one run that holds memory with no stack (on the
          same device and allocator class) that it may be among: neither
          new nor fixed, and --fail-on new does not count it; the note
          says what that run recorded no stacks for; also a leak against
          a run that could not judge growth on its device (a snapshot
          recorded with context="state") and held the site as retained
  unreached  absent from NEW, whose run failed a CUDA call at the same
          site (compute-sanitizer): the allocation was not made, not fixed

compute-sanitizer errors that are not leaks are compared by their counts,
and the reports' LEAK SUMMARY and ERROR SUMMARY totals are shown side by
side.

` + exitCodesHelp("", exitHelpDone, exitHelpInput, exitHelpInternal),
		Example: `  # what the leak adds to a clean run of the same script
  gpuleak diff clean.pickle leak.pickle

  # a compute-sanitizer log before and after a fix
  gpuleak diff before.txt after.txt

  # against a committed baseline, as JSON
  gpuleak diff --format json gpuleak-baseline.json snapshot.pickle`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return &UsageError{Err: fmt.Errorf("diff needs two inputs, BASE and NEW, not %d", len(args)), Hint: "Run 'gpuleak diff --help' for usage."}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Base, opts.New = args[0], args[1]
			return validated(opts, opts.validate, runF, runDiff)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Format, "format", "f", "table", "output format: table or json (schema "+report.DiffSchema+")")
	f.StringVar(&opts.MinBytes, "min-bytes", "0", "leave out findings smaller than this size in both runs (4MiB, 1.5GiB, 4096)")
	f.StringArrayVar(&opts.HideFrames, "hide-frames", nil, "also hide frames whose file or function matches this regular expression (repeatable)")
	f.StringArrayVar(&opts.KeepFrames, "keep-frames", nil, "never hide frames whose file or function matches this regular expression (repeatable)")
	f.IntVar(&opts.MinKept, "min-kept", 4, "fewest allocations a site must keep to be called a leak")
	f.StringVar(&opts.Tolerance, "tolerance", "0", "a site that grew by this much or less is the same: a size (1MiB), a percent (10%), or both (10%,1MiB)")
	f.BoolVar(&opts.All, "all", false, "list the sites that are the same too")
	f.StringVar(&opts.Suppressions, "suppressions", "", "leave out compute-sanitizer records matching the rules in `FILE` (see gpuleak analyze --help)")
	return c
}

// validate checks the flags and parses them into opts; every error is a
// UsageError.
func (opts *DiffOptions) validate() error {
	var err error
	if opts.format, err = formatFor(opts.Format, "diff", report.DocDiff); err != nil {
		return err
	}
	if opts.minBytes, err = parseSize(opts.MinBytes); err != nil {
		return usageErrorf("bad --min-bytes %q: %v", opts.MinBytes, err)
	}
	if opts.MinKept < 1 {
		return usageErrorf("--min-kept must be 1 or more, not %d", opts.MinKept)
	}
	if opts.tol, err = parseTolerance(opts.Tolerance); err != nil {
		return usageErrorf("bad --tolerance %q: %v", opts.Tolerance, err)
	}
	if opts.Base == "-" && opts.New == "-" {
		return usageErrorf("\"-\" (standard input) can be given only once")
	}
	if opts.filter, err = callsite.NewFrameFilter(opts.HideFrames, opts.KeepFrames); err != nil {
		return &UsageError{Err: err}
	}
	if opts.suppressions, opts.rules, err = loadSuppressions(opts.Suppressions); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}

func runDiff(opts *DiffOptions) error {
	format, minBytes, tol, filter, sup, rules := opts.format, opts.minBytes, opts.tol, opts.filter, opts.suppressions, opts.rules
	d := &report.DiffReport{Schema: report.DiffSchema, Tool: report.Tool{Name: "gpuleak", Version: opts.Version},
		Base: opts.Base, New: opts.New}
	var runs [2]*report.Baseline
	for i, path := range []string{opts.Base, opts.New} {
		b, warns, err := loadRun(opts, path, filter, sup, rules, minBytes)
		if err != nil {
			return err
		}
		runs[i] = b
		d.Warnings = append(d.Warnings, warns...)
	}
	if w := report.DeviceWarning(runs[0], runs[1]); w != "" {
		d.Warnings = append(d.Warnings, w)
	}
	if w := report.FamilyWarning(runs[0], runs[1]); w != "" {
		d.Warnings = append(d.Warnings, w)
	}
	d.Entries = report.Compare(runs[0], runs[1], tol)
	if w := report.ActiveWarning(runs[0], runs[1], d.Entries, tol); w != "" {
		d.Warnings = append(d.Warnings, w)
	}
	if w := report.StatsWarning(runs[0], runs[1]); w != "" {
		d.Warnings = append(d.Warnings, w)
	}
	d.Totals = report.DiffTotalsOf(d.Entries)
	d.LeakSummaryBefore, d.LeakSummaryAfter = runs[0].LeakSummary, runs[1].LeakSummary
	d.LeakSummaryStatus = report.SummaryStatus(d.LeakSummaryBefore, d.LeakSummaryAfter)
	if err := report.Write(opts.IO.Out, report.Document{Kind: report.DocDiff, Diff: d}, format, report.Options{ShowSame: opts.All}); err != nil {
		return fmt.Errorf("writing the diff: %w", err)
	}
	return nil
}

// loadRun reads one side of a diff: a saved report or baseline, or an
// input to analyse.
func loadRun(opts *DiffOptions, path string, filter *callsite.FrameFilter, sup []sanitizer.Suppression, rules []report.SuppressionRule, minBytes int64) (*report.Baseline, []string, error) {
	ios := opts.IO
	var stdin io.Reader
	var rec *recordingReader
	if path == "-" {
		// Standard input comes once: what the look for a saved report
		// reads of it is read again by the analysis.
		rec = &recordingReader{r: opts.IO.In}
		stdin = rec
	}
	b, warns, err := loadSavedRun(path, stdin)
	if err != nil {
		return nil, nil, &InputError{Err: err}
	}
	if b == nil && rec != nil {
		again := *opts.IO
		again.In = io.MultiReader(bytes.NewReader(rec.buf), opts.IO.In)
		ios = &again
	}
	if b != nil {
		if minBytes > 0 {
			kept := b.Sites[:0:0]
			for _, s := range b.Sites {
				if s.Bytes >= minBytes || s.Kind == report.KindOOM || s.Bytes == 0 {
					kept = append(kept, s)
				}
			}
			b.Sites = kept
		}
		return b, warns, nil
	}
	nopts, err := parseNVMLFlags("UTC", "", "")
	if err != nil {
		return nil, nil, err
	}
	res, err := runInputs(ios, opts.Version, pipeline.Options{Use: pipeline.Analyze, Filter: filter, MinKept: opts.MinKept,
		MinBytes: minBytes, Suppressions: sup, Rules: rules, NVML: nopts}, []string{path})
	if err != nil {
		return nil, nil, err
	}
	rep, kept := res.Report, res.Report.Findings
	for _, in := range rep.Inputs {
		for _, w := range in.Warnings {
			warns = append(warns, path+": "+w)
		}
	}
	return report.RunBaseline(kept, rep.Errors, rep.Inputs), warns, nil
}

// recordingReader keeps what is read through it: the bytes a look at the
// head of standard input consumed, to be read again.
type recordingReader struct {
	r   io.Reader
	buf []byte
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf = append(r.buf, p[:n]...)
	return n, err
}
