package cmd

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	anrun "github.com/gpuleak/gpuleak/analyze/run"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/detect"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorch"
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

	nvml nvmlOptions // parsed from TZ, Fields and GPUMemory

	CI CIOptions // --quiet, --baseline, --write-baseline, --tolerance, --source-root (cmd/ci.go)

	// Parsed from the flags by validate, in RunE, before runF sees them.
	format           report.Format
	minBytes         int64
	gates            []report.Gate
	filter           *callsite.FrameFilter
	suppressions     []sanitizer.Suppression  // parsed from Suppressions: for compute-sanitizer records
	suppressionRules []report.SuppressionRule // the same file: for every finding
	failOnSet        bool                     // --fail-on given, possibly empty
	toolErrors       []report.ToolError       // filled by analyzeFile, for the report
	oom              oomFacts                 // OOM facts of all inputs, for one postmortem
	run              runFacts                 // snapshots and NVML processes, joined (analyze_run.go)
	nvmlRun          *nvmlRun                 // NVML sample logs of all inputs, judged together
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
  fragmentation  much free memory split around live blocks at the end
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
    dmon, pmon, pynvml JSON lines, gpustat --json, DCGM exporter metrics
    (gpuleak trend shows them per GPU and process).
  - PyTorch profiler outputs: export_chrome_trace JSON recorded with
    profile_memory=True (with_stack=True names the Python callers), and
    export_memory_timeline's .json and .raw.json.gz (memory by category).

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
report's schema is gpuleak.report/v1 (README.md documents it). An input that
cannot be read costs only itself: the others are reported, it is listed with
its error, and the exit code is 2. Exit codes: 0 done, 1 findings matched
--fail-on, 2 bad usage or input, 3 internal error.`,
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
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("analyze needs at least one FILE (\"-\" reads standard input)"), Hint: "Run 'gpuleak analyze --help' for usage."}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			opts.failOnSet = c.Flags().Changed("fail-on")
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runAnalyze(opts)
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

// failOnKinds are the finding kinds --fail-on takes as plain gates (every
// kind but trend, which each NVML series gets whatever it does: its
// classes are gates of their own).
const failOnKinds = "leak, pending-free, live, retained, oom, fragmentation, non-pytorch"

// validate checks the flags and parses them into opts; every error is a
// UsageError.
func (opts *AnalyzeOptions) validate() error {
	var err error
	if opts.format, err = report.ParseFormat(opts.Format); err != nil {
		return &UsageError{Err: err}
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
	if opts.filter, err = callsite.NewFrameFilter(opts.HideFrames, opts.KeepFrames); err != nil {
		return &UsageError{Err: err}
	}
	if opts.nvml, err = parseNVMLFlags(opts.TZ, opts.Fields, opts.GPUMemory); err != nil {
		return err
	}
	if opts.suppressions, opts.suppressionRules, err = loadSuppressions(opts.Suppressions); err != nil {
		return &UsageError{Err: err}
	}
	return checkDistinct(opts.Paths)
}

func runAnalyze(opts *AnalyzeOptions) error {
	format, gates, filter, minBytes := opts.format, opts.gates, opts.filter, opts.minBytes
	opts.run.procs = anrun.NewProcessCollector()
	opts.nvml.procs = opts.run.procs
	base, err := loadBaselineFlag(opts)
	if err != nil {
		return err
	}

	rep, kept, unread, err := analyzeInputs(opts, filter, minBytes)
	if err != nil {
		return err
	}
	rep.FindingsTotal = len(kept)
	gin, err := compareWithBaseline(opts, rep, &kept, base)
	if err != nil {
		return err
	}
	rep.Gates = report.Evaluate(gates, gin)
	if opts.Top > 0 && len(kept) > opts.Top {
		kept = kept[:opts.Top]
	}
	rep.Findings = kept
	if !opts.CI.Quiet {
		if err := report.Write(opts.IO.Out, report.Document{Kind: report.DocAnalysis, Report: rep}, format, report.Options{Terminal: opts.IO.OutTTY, SourceRoot: opts.CI.SourceRoot}); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	}
	tripped := reportTrips(opts.IO, &opts.CI, rep.Gates)
	// An unreadable input (listed in the report) outranks a tripped gate:
	// exit 2, so that CI notices the input it could not judge.
	if err := unread.Err(); err != nil {
		return err
	}
	return tripped
}

// analyzeInputs reads and analyses every input: the report without its
// findings, the findings --min-bytes keeps, ranked, and the inputs that
// could not be read (listed in the report; an error only when the one
// input given could not be).
func analyzeInputs(opts *AnalyzeOptions, filter *callsite.FrameFilter, minBytes int64) (*report.Report, []report.Finding, unreadInputs, error) {
	rep := &report.Report{Schema: report.Schema, Tool: report.Tool{Name: "gpuleak", Version: opts.Version}}
	var findings []report.Finding
	// An input that cannot be read costs only itself: the report lists it
	// with its error, and the run exits 2 after writing the others'.
	var unread unreadInputs
	opts.nvmlRun = &nvmlRun{a: antrend.NewAnalyzer(opts.nvml.trend)}
	for _, path := range opts.Paths {
		in, fs, err := analyzeFile(opts, path, snapshot.LeakOptions{Filter: filter, MinKept: opts.MinKept})
		if err != nil {
			if len(opts.Paths) == 1 {
				return nil, nil, unreadInputs{}, &InputError{Err: err}
			}
			rep.Inputs = append(rep.Inputs, unread.add(path, err))
			continue
		}
		rep.Inputs = append(rep.Inputs, in)
		findings = append(findings, fs...)
	}
	if unread.n == len(opts.Paths) {
		return nil, nil, unread, unread.Err()
	}
	// NVML logs of one GPU (a --query-gpu log and its --query-compute-apps
	// log) are judged together, as in gpuleak trend.
	findings = append(findings, opts.nvmlRun.finalize(rep.Inputs)...)
	// Out-of-memory errors and fragmentation, from all inputs together.
	_, ofs := opts.oom.postmortem(rep.Inputs, filter)
	findings = append(findings, ofs...)
	findings = append(findings, opts.run.join(rep.Inputs)...)
	report.Rank(findings)
	kept := findings[:0]
	for _, f := range findings {
		if f.Bytes < minBytes && f.Kind != report.KindOOM { // an OOM is never too small
			continue
		}
		kept = append(kept, f)
	}
	rep.BelowMinBytes = len(findings) - len(kept)
	kept, rep.Suppressed = report.Suppress(kept, opts.suppressionRules, time.Now())
	rep.Errors = opts.toolErrors
	return rep, kept, unread, nil
}

// analyzeFile reads one input, recognises its format and analyses it.
func analyzeFile(opts *AnalyzeOptions, path string, lopt snapshot.LeakOptions) (report.Input, []report.Finding, error) {
	in, err := parse.Open(path, opts.IO.In)
	if err != nil {
		return report.Input{}, nil, err
	}
	defer in.Close()
	head, err := in.Head()
	if err != nil {
		return report.Input{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(head) == 0 {
		msg := "empty input"
		if in.LeadingNULs > 0 {
			msg = fmt.Sprintf("empty input: only %d NUL bytes", in.LeadingNULs)
		}
		return report.Input{}, nil, &parse.Error{File: path, Offset: 0, Msg: msg}
	}
	prog := startProgress(opts.IO.ErrOut, opts.IO.ErrTTY, path, in.Size, in.RawBytesRead)
	defer prog.Stop()
	format := detect.Detect(head)
	if format == parse.FormatUnknown && len(opts.nvml.fields) > 0 && looksLikeHeaderlessCSV(head) {
		format = nvml.FormatForFields(opts.nvml.fields)
	}
	switch format {
	case parse.FormatPyTorchSnapshot:
		return analyzeSnapshot(opts, in, string(format), lopt)
	case parse.FormatSanitizer, parse.FormatSanitizerXML:
		return analyzeSanitizer(opts, in, format, lopt)
	case parse.FormatNvidiaSmiText, parse.FormatGpustatText:
		// Job logs often print nvidia-smi's table first and fail with an
		// out-of-memory error later: the error is the finding. Only a log
		// without one, or without a compute-sanitizer report further on,
		// is read as NVML samples.
		rr, err := newRereader(in, path)
		if err != nil {
			return report.Input{}, nil, err
		}
		defer rr.Close()
		if rin, fs, ok, err := analyzeLongText(opts, in, head, rr, lopt); ok || err != nil {
			return rin, fs, err
		}
		samples, err := rr.again()
		if err != nil {
			return report.Input{}, nil, err
		}
		defer samples.Close()
		return analyzeNVML(samples, format, opts)
	case parse.FormatNvidiaSmiQueryGPU, parse.FormatNvidiaSmiQueryApps, parse.FormatNvidiaSmiDmon, parse.FormatNvidiaSmiPmon,
		parse.FormatPynvmlJSONL, parse.FormatGpustatJSON, parse.FormatDCGMPrometheus:
		return analyzeNVML(in, format, opts)
	case parse.FormatOOMText, parse.FormatMemorySummary, parse.FormatMemoryStats:
		return analyzeOOMText(opts, in, format)
	case parse.FormatKinetoTrace:
		return analyzeKineto(in, format, lopt)
	case parse.FormatMemoryTimeline, parse.FormatMemoryTimelineRaw, parse.FormatMemoryTimelineHTML:
		return analyzeTimeline(in, format)
	}
	// Text no format claims in its first 64 KiB may still be a long CI or
	// training log with an OOM message or a compute-sanitizer report further
	// on: scan it whole for the first, then again for the second. An input
	// that comes once is kept in a temporary file for the second reading.
	if !isText(head) {
		return report.Input{}, nil, unrecognised(path)
	}
	rr, err := newRereader(in, path)
	if err != nil {
		return report.Input{}, nil, err
	}
	defer rr.Close()
	if rin, fs, ok, err := analyzeLongText(opts, in, head, rr, lopt); ok || err != nil {
		return rin, fs, err
	}
	if looksLikeHeaderlessCSV(head) {
		return report.Input{}, nil, &parse.Error{File: path, Offset: 0, Err: parse.ErrUnknownFormat,
			Msg: "unrecognised comma-separated values: if this is nvidia-smi CSV without a header (--format=csv,noheader), give its fields in order with --fields (as passed to --query-gpu or --query-compute-apps, e.g. --fields timestamp,index,memory.used,memory.total)"}
	}
	return report.Input{}, nil, unrecognised(path)
}

// analyzeLongText scans text whole for an OOM message, then reads it again
// (through rr) as a compute-sanitizer log: a long CI or training log may
// hold either past its first 64 KiB. ok is false when it holds neither.
func analyzeLongText(opts *AnalyzeOptions, in *parse.Input, head []byte, rr *rereader, lopt snapshot.LeakOptions) (report.Input, []report.Finding, bool, error) {
	if rin, fs, ok, err := analyzeUnrecognisedText(opts, in, head); ok || err != nil {
		return rin, fs, ok, err
	}
	again, err := rr.again()
	if err != nil {
		return report.Input{}, nil, false, err
	}
	defer again.Close()
	rin, fs, err := analyzeSanitizer(opts, again, parse.FormatSanitizer, lopt)
	if errors.Is(err, parse.ErrNotMine) {
		return report.Input{}, nil, false, nil
	}
	return rin, fs, err == nil, err
}

// analyzeSnapshot streams a snapshot through the leak and fragmentation
// analyses; what it says about OOMs goes to opts.oom.
func analyzeSnapshot(opts *AnalyzeOptions, in *parse.Input, format string, lopt snapshot.LeakOptions) (report.Input, []report.Finding, error) {
	// Batches are released as soon as they are analysed: their buffers
	// serve the next ones.
	mem := parse.NewRecyclingAllocator(64 << 20)
	popts := []pytorch.Option{pytorch.WithAllocator(mem)}
	if in.Regular {
		// A regular file's reads end: inflate it on another core.
		popts = append(popts, pytorch.WithReadAhead())
	}
	r := pytorch.NewReader(in.Reader(), in.Name, popts...)
	defer r.Release()
	var src parse.BatchSource[pytorch.Table] = r
	if in.Regular {
		// Decode on one core and analyse on the other (a regular file's
		// reads end, so stopping early never waits on a pipe).
		p := parse.NewPrefetch[pytorch.Table](r, 2)
		defer p.Close() // before r.Release
		src = p
	}
	a := snapshot.NewAnalyzer(lopt)
	reserved := anrun.NewReservedCollector()
	for src.Next() {
		if err := a.Add(src.Table(), src.RecordBatch()); err != nil {
			return report.Input{}, nil, err
		}
		reserved.Add(src.Table(), src.RecordBatch())
	}
	if err := src.Err(); err != nil {
		return report.Input{}, nil, err
	}
	res := a.Finalize()
	opts.run.addSnapshot(in.Name, reserved.Series())
	opts.oom.add(anoom.Input{Path: in.Name, Format: format, Snapshot: res})
	rin, fs := report.FromLeaks(in.Name, format, append(r.Metadata().Warnings.Strings(), res.Fragment.Warnings...), res.Leak)
	return rin, fs, nil
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
