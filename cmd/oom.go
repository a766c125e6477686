package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/pipeline"
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
  - NVML logs and nvidia-smi's table: they name the processes a message lists
  - PyTorch profiler traces: each [OutOfMemory] event is an OOM (the message
    beside it gives the cause)
  Other inputs are read as "gpuleak analyze" reads them and listed by their
  format; one that cannot be read exits 2, as for analyze. An input whose
  kind cannot show an OOM (a memory timeline, an NVML sample log,
  memory_stats() JSON) is said to be so, not "searched, no OOM".

Causes:
  fragmentation    PyTorch held enough free memory, but no free block was large enough
  other-processes  other processes held the GPU memory the request needed
  accumulation     memory grew from one or a few call sites until the limit
  memory-limit     the process hit its own cap (set_per_process_memory_fraction)
                   while the GPU had room
  capacity         the working set is larger than the GPU, or (the fallback)
                   the GPU was full and no cause above explains it alone
  outside-process  from a snapshot alone: the request exceeded all this process
                   held plus the GPU's free memory, and another OOM of the trace
                   shows the GPU large enough, so the memory was held outside
                   it (other processes); without that, the cause is not told

Sizes are printed as PyTorch prints them (two decimals of KiB, MiB, GiB),
except a figure a paste typed with fewer ("24 GiB"): it is printed as typed;
--format json writes the gpuleak.report/v1 document with one "oom" finding
per OOM and "fragmentation" findings (README.md documents them).

Not OOMs (a warning each, no finding, so --fail-on oom passes): a
framework's log record of an allocation at INFO or WARNING level (it went
on), host memory, and TensorRT's allocator failures that its builder
skipped ("Skipping tactic ... insufficient memory" after them, and no
"Could not find any implementation for node" or other failed build, nor
an exception naming the engine, before the build completed, the run
ended for another reason or the text ended).

` + exitCodesHelp("To fail a CI job on an OOM, use gpuleak analyze --fail-on oom.",
			exitHelp{ExitOK, "done (an input without an OOM included: the postmortem says so)"},
			exitHelp{ExitInput, "bad usage or an input that cannot be read (the others are still reported)"},
			exitHelpInternal),
		Example: `  # the snapshot an OOM observer wrote, with the job's log
  gpuleak oom oom_snapshot.pickle train.log

  # only the log: the message's numbers
  gpuleak oom slurm-1234.out

  # JSON, with what memory_summary() printed in the except block
  gpuleak oom --format json snapshot.pickle summary.txt > postmortem.json`,
		Args: needFiles("oom"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			return validated(opts, opts.validate, runF, runOOM)
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
	return checkDistinct(opts.Paths, opts.IO.In)
}

func runOOM(opts *OOMOptions) error {
	res, err := runInputs(opts.IO, opts.Version, pipeline.Options{Use: pipeline.Postmortem,
		Filter: opts.filter, MinKept: opts.MinKept, Location: opts.loc}, opts.Paths)
	if err != nil {
		return err
	}
	if err := writeFailed(report.Write(opts.IO.Out, report.Document{Kind: report.DocPostmortem, Report: res.Report}, opts.format, report.Options{Terminal: opts.IO.OutTTY}), "the report"); err != nil {
		return err
	}
	return res.Unread
}
