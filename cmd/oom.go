package cmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/detect"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorch"
	"github.com/gpuleak/gpuleak/report"
)

// OOMOptions are the flags and dependencies of "gpuleak oom".
type OOMOptions struct {
	// IO and Version are dependencies; the rest are the arguments and
	// flags.
	IO      *IOStreams
	Version string

	Paths      []string
	Format     string
	HideFrames []string
	KeepFrames []string
	MinKept    int
	// TZ is the time zone of NVML log timestamps that carry none.
	TZ string

	// Parsed from the flags by validate, in RunE, before runF sees them.
	format report.Format
	filter *callsite.FrameFilter
	loc    *time.Location // parsed from TZ
}

// NewCmdOOM builds "gpuleak oom". runF replaces the run function in
// tests; nil runs runOOM.
func NewCmdOOM(ios *IOStreams, version string, runF func(*OOMOptions) error) *cobra.Command {
	opts := &OOMOptions{IO: ios, Version: version}
	c := &cobra.Command{
		Use:   "oom FILE...",
		Short: "Explain CUDA out-of-memory errors: what was asked, where the memory was, why it failed, what to change",
		Long: `Oom reads what a job that died with "CUDA out of memory" left behind and writes
a postmortem of each out-of-memory error: what was asked for, what was free on
the GPU, where PyTorch's memory was (by pool and stream, with the call sites
holding it), the causes, with the numbers behind each, and what to change.

Inputs, recognised by content (several about one run make one postmortem):
  - PyTorch memory snapshots with "oom" trace entries: written by an OOM
    observer (torch._C._cuda_attach_out_of_memory_observer) or in the except
    block; each OOM of the trace gets a postmortem, its state rebuilt from
    the trace as it was at that moment
  - logs and tracebacks holding the OOM message, in any form PyTorch has
    printed (1.x to 2.x), anywhere in the file
  - torch.cuda.memory_summary() text and torch.cuda.memory_stats() JSON

Causes:
  fragmentation    PyTorch held enough free memory, but no free block was large enough
  other-processes  other processes held the GPU memory the request needed
  accumulation     memory grew from one or a few call sites until the limit
  memory-limit     the process hit its own cap (set_per_process_memory_fraction)
                   while the GPU had room
  capacity         the working set is larger than the GPU
  outside-process  from a snapshot alone: the request exceeded all this process
                   held plus the GPU's free memory, so the memory was held
                   outside it (other processes, or a GPU too small)

Sizes are printed as PyTorch prints them (two decimals of KiB, MiB, GiB);
--format json writes the gpuleak.report/v1 document with one "oom" finding
per OOM and "fragmentation" findings (README.md documents them).`,
		Example: `  # the snapshot an OOM observer wrote, with the job's log
  gpuleak oom oom_snapshot.pickle train.log

  # only the log: the message's numbers
  gpuleak oom slurm-1234.out

  # JSON, with what memory_summary() printed in the except block
  gpuleak oom --format json snapshot.pickle summary.txt > postmortem.json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("oom needs at least one FILE (\"-\" reads standard input)"), Hint: "Run 'gpuleak oom --help' for usage."}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runOOM(opts)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Format, "format", "f", "table", "output format: table (a postmortem for people) or json")
	f.StringArrayVar(&opts.HideFrames, "hide-frames", nil, "also hide frames whose file or function matches this regular expression (repeatable)")
	f.StringArrayVar(&opts.KeepFrames, "keep-frames", nil, "never hide frames whose file or function matches this regular expression (repeatable)")
	f.IntVar(&opts.MinKept, "min-kept", 4, "fewest allocations a call site must keep up to an OOM to count as growing (accumulation)")
	f.StringVar(&opts.TZ, "tz", "UTC", "NVML logs given beside the OOM: time zone of timestamps without one: UTC, Local, an IANA name (Europe/Berlin) or an offset (+02:00)")
	return c
}

// validate checks the flags and parses them into opts; every error is a
// UsageError.
func (opts *OOMOptions) validate() error {
	var err error
	if opts.format, err = formatFor(opts.Format, "oom", report.DocPostmortem); err != nil {
		return err
	}
	if opts.filter, err = callsite.NewFrameFilter(opts.HideFrames, opts.KeepFrames); err != nil {
		return &UsageError{Err: err}
	}
	if opts.loc, err = parseZone(opts.TZ); err != nil {
		return usageErrorf("bad --tz %q: %v", opts.TZ, err)
	}
	return checkDistinct(opts.Paths)
}

func runOOM(opts *OOMOptions) error {
	format, filter := opts.format, opts.filter
	lopt := snapshot.LeakOptions{Filter: filter, MinKept: opts.MinKept}
	rep := &report.Report{Schema: report.Schema, Tool: report.Tool{Name: "gpuleak", Version: opts.Version}}
	var facts oomFacts
	var unread unreadInputs // an unreadable input costs only itself
	for _, path := range opts.Paths {
		in, fact, err := oomFile(opts, path, lopt)
		if err != nil {
			if len(opts.Paths) == 1 {
				return &InputError{Err: err}
			}
			rep.Inputs = append(rep.Inputs, unread.add(path, err))
			continue
		}
		rep.Inputs = append(rep.Inputs, in)
		facts.add(fact)
	}
	if unread.n == len(opts.Paths) {
		return unread.Err()
	}
	pm, findings := facts.postmortem(rep.Inputs, filter)
	for _, p := range pm.WithoutOOM {
		for i := range rep.Inputs {
			if rep.Inputs[i].Path == p {
				rep.Inputs[i].Warnings = append(rep.Inputs[i].Warnings, "no out-of-memory entry in the snapshot's trace")
			}
		}
	}
	rep.Findings, rep.FindingsTotal = findings, len(findings)
	if err := report.Write(opts.IO.Out, report.Document{Kind: report.DocPostmortem, Report: rep}, format, report.Options{Terminal: opts.IO.OutTTY}); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return unread.Err()
}

// oomFile reads one input for the postmortem. Text that no format claims
// is read as a log: a log without an OOM message says so, it is not an
// error.
func oomFile(opts *OOMOptions, path string, lopt snapshot.LeakOptions) (report.Input, oom.Input, error) {
	in, err := parse.Open(path, opts.IO.In)
	if err != nil {
		return report.Input{}, oom.Input{}, err
	}
	defer in.Close()
	head, err := in.Head()
	if err != nil {
		return report.Input{}, oom.Input{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(head) == 0 {
		return report.Input{}, oom.Input{}, &parse.Error{File: path, Offset: 0, Msg: "empty input"}
	}
	prog := startProgress(opts.IO.ErrOut, opts.IO.ErrTTY, path, in.Size, in.RawBytesRead)
	defer prog.Stop()
	format := detect.Detect(head)
	switch format {
	case parse.FormatPyTorchSnapshot:
		r := pytorch.NewReader(in.Reader(), in.Name, pytorch.WithAllocator(parse.NewRecyclingAllocator(64<<20)))
		defer r.Release()
		a := snapshot.NewAnalyzer(lopt)
		for r.Next() {
			if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
				return report.Input{}, oom.Input{}, err
			}
		}
		if err := r.Err(); err != nil {
			return report.Input{}, oom.Input{}, err
		}
		res := a.Finalize()
		rin, _ := report.FromLeaks(in.Name, string(format), append(r.Metadata().Warnings.Strings(), res.Fragment.Warnings...), res.Leak)
		report.AddEndPools(&rin, res.Fragment)
		return rin, oom.Input{Path: in.Name, Format: string(format), Snapshot: res}, nil
	case parse.FormatNvidiaSmiQueryApps, parse.FormatNvidiaSmiPmon, parse.FormatPynvmlJSONL, parse.FormatGpustatJSON,
		parse.FormatNvidiaSmiQueryGPU, parse.FormatNvidiaSmiDmon, parse.FormatDCGMPrometheus:
		// An NVML log: its process samples name the processes an OOM
		// message lists.
		procs, warnings, err := readGPUProcesses(in, format, opts.loc)
		if err != nil {
			return report.Input{}, oom.Input{}, err
		}
		return report.Input{Path: in.Name, Format: string(format), Warnings: warnings},
			oom.Input{Path: in.Name, Format: string(format), Processes: procs}, nil
	case parse.FormatMemoryStats, parse.FormatMemorySummary, parse.FormatOOMText:
	default:
		if !isText(head) {
			return report.Input{}, oom.Input{}, unrecognised(path)
		}
		format = parse.FormatOOMText
	}
	res, meta, err := readOOMText(in, format)
	if err != nil {
		return report.Input{}, oom.Input{}, err
	}
	return report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res), oom.Input{Path: in.Name, Format: string(format), Text: res}, nil
}

// maxGPUProcessSamples bounds the process samples kept from one NVML log.
const maxGPUProcessSamples = 1 << 20

// readGPUProcesses reads the per-process samples of an NVML log.
func readGPUProcesses(in *parse.Input, format parse.Format, loc *time.Location) ([]oom.GPUProcess, []string, error) {
	if loc == nil {
		loc = time.UTC
	}
	r := nvml.NewReader(in.Reader(), in.Name, nvml.WithFormat(format), nvml.WithLocation(loc))
	defer r.Release()
	var out []oom.GPUProcess
	for r.Next() {
		rec := r.RecordBatch()
		pid := rec.Column(nvml.ColPID).(*array.Int64)
		used := rec.Column(nvml.ColUsed).(*array.Int64)
		tm := rec.Column(nvml.ColTime).(*array.Timestamp)
		name := rec.Column(nvml.ColProcess).(*array.Dictionary)
		for i := 0; i < int(rec.NumRows()) && len(out) < maxGPUProcessSamples; i++ {
			if pid.IsNull(i) {
				continue
			}
			p := oom.GPUProcess{PID: pid.Value(i), UsedBytes: -1, Source: in.Name}
			if used.IsValid(i) {
				p.UsedBytes = used.Value(i)
			}
			if tm.IsValid(i) {
				p.TimeUs = int64(tm.Value(i))
			}
			if name.IsValid(i) {
				if d, ok := name.Dictionary().(*array.String); ok {
					p.Name = d.Value(name.GetValueIndex(i))
				}
			}
			out = append(out, p)
		}
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	return out, r.Metadata().Warnings.Strings(), nil
}
