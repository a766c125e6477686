package cmd

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/pipeline"
	"github.com/gpuleak/gpuleak/report"
)

// AnalyzeOptions are the flags and dependencies of "gpuleak analyze".
type AnalyzeOptions struct {
	IO      *IOStreams
	Version string

	Paths      []string
	Format     string
	Top        int
	MinBytes   string
	HideFrames []string
	KeepFrames []string
	FailOn     []string
	MinKept    int
	// Suppressions is the path of a compute-sanitizer suppressions file.
	Suppressions string
	// TZ, Fields and GPUMemory are for NVML sample logs, as in "gpuleak
	// trend": the zone of timestamps without one, the fields of
	// header-less nvidia-smi CSV, the total memory of GPUs whose logs do
	// not give it.
	TZ, Fields, GPUMemory string

	nvml pipeline.NVMLOptions // parsed from TZ, Fields and GPUMemory

	CI CIOptions // --quiet, --baseline, --write-baseline, --tolerance, --source-root (cmd/ci.go)

	// Parsed from the flags by validate, in RunE, before runF sees them.
	format           report.Format
	minBytes         int64
	gates            []report.Gate
	filter           *callsite.FrameFilter
	suppressions     []sanitizer.Suppression  // parsed from Suppressions: for compute-sanitizer records
	suppressionRules []report.SuppressionRule // the same file: for every finding
	failOnSet        bool                     // --fail-on given, possibly empty
}

// NewCmdAnalyze builds "gpuleak analyze". runF replaces the run function
// in tests; nil runs runAnalyze.
func NewCmdAnalyze(ios *IOStreams, version string, runF func(*AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{IO: ios, Version: version}
	c := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Rank the call sites that hold GPU memory, telling leaks from memory held on purpose",
		Long: `Analyze reads each FILE (or standard input for "-"), recognises its format by
content, and reports what holds GPU memory, ranked:

  oom            an out-of-memory error, with its causes (see gpuleak oom)
  leak           live memory from one call site kept growing across the
                 run's iterations
  pending-free   blocks freed but still used by work queued on a side stream
                 (record_stream): active_pending_free
  trend          NVML samples: one GPU's or process's used memory and its trend
  non-pytorch    memory a process used outside PyTorch's caching allocator (a
                 snapshot joined with an NVML process log)
  fragmentation  much free memory split around live blocks at the end: in
                 many pieces (fragmentation) or mostly one (pinned free memory)
  live           held at the end, but the trace does not say when it was allocated
  retained       allocated once and held without growing (weights, optimizer
                 state, workspaces, a framework's caching pool)

Inputs, gzip-compressed or not:
  - PyTorch CUDA memory snapshots: the pickles written by
    torch.cuda.memory._dump_snapshot() (protocols 0-5). Record them with
    torch.cuda.memory._record_memory_history() so that a trace of
    allocations shows growth.
  - compute-sanitizer --leak-check full reports: text logs (any --prefix,
    cuda-memcheck too) and --xml --save files. The tool's other errors are
    listed in their own section.
  - NVML sample logs: nvidia-smi --query-gpu / --query-compute-apps CSV,
    dmon, pmon, nvidia-smi's table and -q report, pynvml JSON lines,
    gpustat (--json or text), DCGM exporter metrics and dcgmi dmon
    (gpuleak trend shows them per GPU and process).
  - PyTorch profiler outputs: export_chrome_trace JSON recorded with
    profile_memory=True (with_stack=True names the Python callers; a
    schedule with prof.step() marks the steps, 4 or more of them to judge
    growth), and export_memory_timeline's .json and .raw.json.gz (memory by
    category).

A snapshot given with an nvidia-smi --query-compute-apps log of the same run
adds a non-pytorch finding: the process's memory outside PyTorch's caching
allocator, and whether it grew.

Call sites are stacks with framework frames hidden:
` + callsite.DefaultHidden + `
Change that with --hide-frames and --keep-frames (regular expressions matched
against a frame's file name or function name).

Logs and tracebacks with a CUDA out-of-memory message, torch.cuda.memory_summary()
text and torch.cuda.memory_stats() JSON are read too; what all inputs say about
one OOM makes one "oom" finding ("gpuleak oom" prints the full postmortem).

Sizes in tables use IEC units (KiB, MiB, GiB); JSON gives bytes. The JSON
report's schema is gpuleak.report/v1 (README.md documents it).

` + exitCodesHelp(helpUnreadCostsItself, exitHelpDone, exitHelp{ExitFindings, "findings matched --fail-on"}, exitHelpInput, exitHelpInternal),
		Example: `  # a postmortem of one snapshot
  gpuleak analyze snapshot.pickle

  # JSON for programs, every finding
  gpuleak analyze --format json --top 0 snapshot.pickle.gz > report.json

  # CI: exit 1 when leaks hold more than 64 MiB, or on any OOM
  gpuleak analyze --fail-on 'leak>64MiB,oom' artifacts/*.pickle

  # CI against the last good run: write a baseline once, commit it, then
  # fail only on sites that are new or grew by more than 10%
  gpuleak analyze --write-baseline gpuleak-baseline.json good.pickle
  gpuleak analyze --baseline gpuleak-baseline.json --fail-on 'new,grown>10%' --quiet run.pickle

  # treat frames of your own framework as internals; keep one library visible
  gpuleak analyze --hide-frames '/mylib/' --keep-frames 'transformers/models' snap.pickle

  # a profiler trace; a snapshot with nvidia-smi logs of the same run
  gpuleak analyze trace.json.gz
  gpuleak analyze snap.pickle apps.csv gpu.csv

  # from a pipe
  zcat snap.pickle.gz | gpuleak analyze -`,
		Args: needFiles("analyze"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			opts.failOnSet = c.Flags().Changed("fail-on")
			return validated(opts, opts.validate, runF, runAnalyze)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Format, "format", "f", "table", "output format: "+report.FormatHelp(report.DocAnalysis))
	f.IntVar(&opts.Top, "top", 20, "show the N most important findings; 0 shows all")
	f.StringVar(&opts.MinBytes, "min-bytes", "0", "leave out findings smaller than this size: 4MiB, 1.5GiB, 4096 (KB, MB, GB are powers of 1000); oom findings are always kept")
	f.StringArrayVar(&opts.HideFrames, "hide-frames", nil, "also hide frames whose file or function matches this regular expression (repeatable)")
	f.StringArrayVar(&opts.KeepFrames, "keep-frames", nil, "never hide frames whose file or function matches this regular expression (repeatable)")
	f.StringArrayVar(&opts.FailOn, "fail-on", nil, "exit with code 1 when a gate of `GATES` trips (comma-separated; repeatable):\n"+report.GateHelp)
	f.IntVar(&opts.MinKept, "min-kept", 4, "fewest allocations a growing site must keep (made during the trace), or iterations it must have grown in, to be called a leak")
	f.StringVar(&opts.TZ, "tz", "UTC", "NVML logs: time zone of timestamps without one: UTC, Local, an IANA name (Europe/Berlin) or an offset (+02:00)")
	f.StringVar(&opts.Fields, "fields", "", "NVML logs: the fields of header-less nvidia-smi CSV, as given to --query-gpu or --query-compute-apps (default "+strings.Join(nvml.DefaultQueryGPUFields, ",")+")")
	f.StringVar(&opts.GPUMemory, "gpu-memory", "", "NVML logs: the total memory of GPUs whose logs do not give it (dmon, pmon, --query-compute-apps), e.g. 80GiB")
	f.StringVar(&opts.Suppressions, "suppressions", "", "leave out compute-sanitizer records and findings matching the rules in `FILE`, and count them:\n"+sanitizer.SuppressionsHelp+"\n"+report.SuppressionExtraHelp)
	addCIFlags(f, &opts.CI)
	return c
}

// failOnKinds are the finding kinds --fail-on takes as plain gates, for a
// usage message (trend, which each NVML series gets whatever it does, is a
// gate on growing series only: report.GateHelp).
const failOnKinds = "leak, pending-free, live, retained, oom, fragmentation, non-pytorch"

// validate checks the flags and parses them into opts; every error is a
// UsageError.
func (opts *AnalyzeOptions) validate() error {
	var err error
	opts.format = report.Format(opts.Format)
	if report.Check(opts.format, report.DocAnalysis) != nil {
		// html is the daily report's (gpuleak report), not analyze's.
		return usageErrorf("unknown format %q (choose %s)", opts.Format, report.FormatNames(report.Formats(report.DocAnalysis)))
	}
	if opts.minBytes, err = parseSize(opts.MinBytes); err != nil {
		return usageErrorf("bad --min-bytes %q: %v", opts.MinBytes, err)
	}
	if opts.Top < 0 {
		return usageErrorf("--top must be 0 (all) or more, not %d", opts.Top)
	}
	if opts.MinKept < 1 {
		return usageErrorf("--min-kept must be 1 or more, not %d", opts.MinKept)
	}
	if opts.failOnSet && strings.TrimSpace(strings.Join(opts.FailOn, "")) == "" {
		return usageErrorf("--fail-on needs a kind (%s) or another gate (leak>64MiB, new, ...: see --help)", failOnKinds)
	}
	if opts.gates, err = parseGates(opts.FailOn, &opts.CI); err != nil {
		return err
	}
	if opts.CI.Quiet && opts.format != report.FormatTable {
		// --quiet writes no report: its text lines would stand where a
		// --format json (or junit, sarif, ...) consumer expects a document.
		return usageErrorf("--quiet writes no report, only the tripped gates as lines of text: drop --format %s, or drop --quiet and read the report's gates", opts.Format)
	}
	if opts.filter, err = callsite.NewFrameFilter(opts.HideFrames, opts.KeepFrames); err != nil {
		return &UsageError{Err: err}
	}
	if opts.nvml, err = parseNVMLFlags(opts.TZ, opts.Fields, opts.GPUMemory); err != nil {
		return err
	}
	if opts.suppressions, opts.suppressionRules, err = loadSuppressions(opts.Suppressions); err != nil {
		return &UsageError{Err: err}
	}
	// Flags that act only beside another do nothing alone: say so, rather
	// than let a CI line believe it set a tolerance or stripped its paths.
	if opts.CI.Baseline == "" && strings.TrimSpace(opts.CI.Tolerance) != "0" {
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak: warning: --tolerance %s does nothing without --baseline\n", opts.CI.Tolerance)
	}
	if opts.CI.SourceRoot != "" && opts.format != report.FormatSARIF {
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak: warning: --source-root does nothing with --format %s (it strips paths in SARIF)\n", opts.format)
	}
	return checkDistinct(opts.Paths, opts.IO.In)
}

func runAnalyze(opts *AnalyzeOptions) error {
	base, err := loadBaselineFlag(opts)
	if err != nil {
		return err
	}
	res, err := runInputs(opts.IO, opts.Version, pipeline.Options{Use: pipeline.Analyze,
		Filter: opts.filter, MinKept: opts.MinKept, MinBytes: opts.minBytes,
		Suppressions: opts.suppressions, Rules: opts.suppressionRules, NVML: opts.nvml, PlainLogs: gatesOOM(opts.gates)}, opts.Paths)
	if err != nil {
		return err
	}
	rep := res.Report
	kept := rep.Findings
	gin, err := compareWithBaseline(opts, rep, &kept, base)
	if err != nil {
		return err
	}
	gin.Sources = readSources(rep.Inputs)
	rep.Gates = report.Evaluate(opts.gates, gin)
	if opts.Top > 0 && len(kept) > opts.Top {
		rep.Ranked, kept = kept, kept[:opts.Top]
	}
	rep.Findings = kept
	if !opts.CI.Quiet {
		if err := writeFailed(report.Write(opts.IO.Out, report.Document{Kind: report.DocAnalysis, Report: rep}, opts.format, report.Options{Terminal: opts.IO.OutTTY, SourceRoot: opts.CI.SourceRoot}), "the report"); err != nil {
			return err
		}
	}
	notJudgedOn(opts.IO, rep.Gates)
	tripped := reportTrips(opts.IO, &opts.CI, rep.Gates)
	// An unreadable input (listed in the report) outranks a tripped gate:
	// exit 2, so that CI notices the input it could not judge.
	if res.Unread != nil {
		return res.Unread
	}
	// A gate no input could answer (sanitizer-errors over snapshots only:
	// the wrong artifacts), or a leak gate an input could not judge growth
	// for (a 3-step profiler trace), is not a pass: exit 2 as for an
	// input not read.
	if err := unjudged(rep.Gates); err != nil {
		return err
	}
	return tripped
}

// readSources lists the inputs read, in whole or in part, for the gates:
// each with its family, whether it could judge leaks, and the allocator
// statistics tables read inside it (a memory_summary() in an OOM's log).
func readSources(ins []report.Input) []report.Source {
	srcs := []report.Source{}
	for _, in := range ins {
		if in.Error == "" {
			if f := pipeline.FamilyOf(in.Format); f != "" {
				srcs = append(srcs, report.Source{Path: in.Path, Family: f, Format: in.Format, LeaksUnjudged: in.LeaksUnjudged, Empty: in.Empty,
					Tables: report.StatsTables(in)})
			}
		}
	}
	return srcs
}

// unjudged returns an *InputError naming the gates no input could answer,
// nil when every gate was judged.
func unjudged(gates []report.GateResult) error {
	var msgs []string
	for _, g := range gates {
		if g.Unjudged {
			msgs = append(msgs, fmt.Sprintf("--fail-on %s could not be judged: %s", g.Gate, g.Why))
		}
	}
	if msgs == nil {
		return nil
	}
	return &InputError{Err: errors.New(strings.Join(msgs, "\ngpuleak: "))}
}

// notJudgedOn warns, on standard error, of each judged gate that could
// not be judged on some inputs (leak over a snapshot without a trace,
// beside one with a trace): its verdict stands on the others only.
func notJudgedOn(ios *IOStreams, gates []report.GateResult) {
	for _, g := range gates {
		if g.Unjudged || g.Tripped {
			continue // named with the error after the report, or in its why
		}
		for _, n := range g.NotJudgedOn {
			fmt.Fprintf(ios.ErrOut, "gpuleak: warning: --fail-on %s was not judged on %s: %s; it was judged on the other inputs only\n",
				g.Gate, report.Clean(n.Path), report.Clean(n.Why))
		}
	}
}

// parseSize reads a size such as 64MiB, 1.5GiB, 512KB (1000-byte units) or
// 4096 (bytes).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("a size cannot be negative")
	}
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("want a size like 64MiB, 1.5GiB or 4096")
	}
	if n > math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return int64(n), nil
}

// gatesOOM reports whether a gate counts OOMs: a log of a run that had
// none is then an answer (it passes), not an unrecognised input, as
// gpuleak oom reads it.
func gatesOOM(gs []report.Gate) bool {
	for _, g := range gs {
		if g.Name == string(report.KindOOM) {
			return true
		}
	}
	return false
}
