package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/capture"
	"github.com/gpuleak/gpuleak/internal/startgc"
)

// CaptureOptions are the flags and dependencies of "gpuleak capture".
type CaptureOptions struct {
	IO      *IOStreams
	Version string

	Output   string
	Interval time.Duration
	Duration time.Duration
	GPUs     []int
	PID      int64
	Rotate   string
	Analyze  bool
	Command  []string // the program to run and follow, with its arguments

	// Open opens the sampling source (capture.Open; tests inject a fake).
	Open func(capture.Config) (capture.Source, error)
	// Notify subscribes c to the signals that stop sampling or are passed
	// on to the program (signal.Notify by default); stop unsubscribes.
	Notify func(c chan<- os.Signal) (stop func())
	// StdinTTY says whether standard input is a terminal: Ctrl-C there
	// reaches the program directly, and is not passed on a second time.
	StdinTTY bool
}

// ChildExitError carries the exit code of the program "capture -- CMD" ran,
// when it is not 0; gpuleak exits with that code.
type ChildExitError struct {
	Program string
	Code    int
	Signal  string // the signal that ended it, if one did
}

func (e *ChildExitError) Error() string {
	if e.Signal != "" {
		return fmt.Sprintf("%s was ended by %s (exit code %d)", e.Program, e.Signal, e.Code)
	}
	return fmt.Sprintf("%s exited with code %d", e.Program, e.Code)
}

// NewCmdCapture builds "gpuleak capture". runF replaces the run function
// in tests; nil runs runCapture.
func NewCmdCapture(ios *IOStreams, version string, runF func(*CaptureOptions) error) *cobra.Command {
	opts := &CaptureOptions{IO: ios, Version: version, Open: capture.Open, Notify: notifySignals, StdinTTY: stdinTTY(ios)}
	c := &cobra.Command{
		Use:   "capture [flags] [-- CMD ARGS...]",
		Short: "Sample GPU memory live through NVML into a log that analyze and trend read",
		Long: `Capture samples, through NVML, every GPU's memory (memory info v2: total,
reserved, used, free; v1 where v2 is not supported) and the memory of each
process on it (compute and graphics running processes), with UTC timestamps
in microseconds, the host, GPU index, UUID and name, pid and process name.
Samples are written as JSON lines (the pynvml layout gpuleak's NVML reader
reads), one line per GPU per tick, flushed every tick: "gpuleak analyze" and
"gpuleak trend" read the file like any NVML log. A name ending in .csv gets
nvidia-smi --query-gpu CSV instead, and the processes go to NAME.apps.csv
beside it in --query-compute-apps CSV (read both with gpuleak trend).

With -- CMD ARGS, capture starts the program, follows it and its children
(by the process tree in /proc; processes of other programs are left out),
samples until it exits, and exits with its exit code. SIGTERM and SIGHUP are
passed on to it, and SIGINT too unless standard input is a terminal (there
Ctrl-C reaches the program directly). Without a program, sampling runs for
--duration, until --pid exits, or until SIGINT or SIGTERM; the tick being
taken is written before capture exits. At the end a line on standard error
gives the samples taken, the interval achieved and what sampling cost.

Capture needs a gpuleak built with NVML (make build-nvml, or go build -tags
nvml: cgo) and the NVIDIA driver's libnvidia-ml.so.1 at run time; without
them it says so.

` + exitCodesHelp("With -- CMD, capture exits with the program's exit code (128 + N when signal N ended it), unless it exits 2 or 3.",
			exitHelp{ExitOK, "sampling stopped as asked"},
			exitHelp{ExitInput, "bad usage, a build without NVML, no NVML library or driver, or a program that cannot be started (nothing is sampled then)"},
			exitHelpSamples),
		Example: `  # follow a training run, sampling every second; print the trends at the end
  gpuleak capture -o train.jsonl --analyze -- python3 train.py --epochs 3

  # GPUs 0 and 1 every 100 ms for ten minutes
  gpuleak capture -o gpu.jsonl --interval 100ms --duration 10m --gpu 0,1

  # days of sampling, a new file every hour (gpu-20261201T020000Z.jsonl, ...)
  gpuleak capture -o gpu.jsonl --interval 5s --rotate 1h`,
		RunE: func(c *cobra.Command, args []string) error {
			if n := c.ArgsLenAtDash(); n > 0 || (n < 0 && len(args) > 0) {
				return usageErrorf("capture takes no FILE; put the program to run after --: gpuleak capture -- %s", strings.Join(args, " "))
			}
			opts.Command = args
			if runF != nil {
				return runF(opts)
			}
			return runCapture(opts)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "the file to write: JSON lines, or nvidia-smi CSV for a name ending in .csv (processes in NAME.apps.csv); default gpuleak-capture-TIME.jsonl, \"-\" for standard output")
	f.DurationVar(&opts.Interval, "interval", time.Second, "time between samples (at least 10ms)")
	f.DurationVar(&opts.Duration, "duration", 0, "stop sampling after this long (default: until the program or --pid exits, or a signal); a program is still waited for")
	f.IntSliceVar(&opts.GPUs, "gpu", nil, "NVML indices of the GPUs to sample (default all), e.g. 0,1")
	f.Int64Var(&opts.PID, "pid", 0, "record only this process and its children, and stop when it exits")
	f.StringVar(&opts.Rotate, "rotate", "", "start a new file every period (1h) or size (100MiB); files are named after their first sample's time")
	f.BoolVar(&opts.Analyze, "analyze", false, "print the trends of the samples (gpuleak trend) when capture stops")
	return c
}

func notifySignals(c chan<- os.Signal) func() {
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	return func() { signal.Stop(c) }
}

func stdinTTY(ios *IOStreams) bool {
	f, ok := ios.In.(*os.File)
	return ok && isTerminal(f)
}

func runCapture(opts *CaptureOptions) error {
	startgc.Settle(false) // many inputs, or a long run: the collector's default
	if opts.Interval < 10*time.Millisecond {
		return usageErrorf("--interval must be at least 10ms, not %v", opts.Interval)
	}
	if opts.Duration < 0 {
		return usageErrorf("--duration must not be negative, not %v", opts.Duration)
	}
	if opts.PID < 0 || (opts.PID > 0 && len(opts.Command) > 0) {
		return usageErrorf("--pid takes a process id, and not together with -- CMD")
	}
	var rot capture.Rotation
	if opts.Rotate != "" {
		var err error
		if rot, err = capture.ParseRotation(opts.Rotate, parseSize); err != nil {
			return usageErrorf("bad --rotate %q: %v", opts.Rotate, err)
		}
	}
	out := opts.Output
	if out == "" {
		out = "gpuleak-capture-" + time.Now().UTC().Format("20060102T150405Z") + ".jsonl"
	}
	if out == "-" && (rot != capture.Rotation{}) {
		return usageErrorf("--rotate needs a file (-o), not standard output")
	}
	if out == "-" && opts.Analyze {
		return usageErrorf("--analyze needs a file (-o), not standard output")
	}
	if opts.PID > 0 && !capture.Exists(opts.PID) {
		return usageErrorf("--pid %d: no such process", opts.PID)
	}

	src, err := openSource(opts.Open, capture.Config{GPUs: opts.GPUs})
	if err != nil {
		return err
	}
	defer src.Close()

	var w *capture.Writer
	if out == "-" {
		w = capture.NewStreamWriter(opts.IO.Out)
	} else {
		w = capture.NewWriter(out, rot)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ropt := capture.RunOptions{Interval: opts.Interval, Duration: opts.Duration}

	sigs := make(chan os.Signal, 4)
	stopNotify := opts.Notify(sigs)
	defer stopNotify()

	note := func(msg string) { fmt.Fprintln(opts.IO.ErrOut, "gpuleak: "+msg) }
	var prog *capture.Program
	if len(opts.Command) > 0 {
		stdout := opts.IO.Out
		if out == "-" {
			stdout = opts.IO.ErrOut // standard output holds the samples
		}
		if prog, err = capture.StartProgram(opts.Command, opts.IO.In, stdout, opts.IO.ErrOut); err != nil {
			return &InputError{Err: err}
		}
		go func() { <-prog.Done(); cancel() }()
		ropt.Keep = capture.FollowFilter(prog.Tree, note)
	} else if opts.PID > 0 {
		ropt.Keep = capture.FollowFilter(capture.NewProcessTree(opts.PID), note)
		ropt.OnTick = func([]capture.GPUSample) {
			if !capture.Exists(opts.PID) {
				cancel()
			}
		}
	}
	go func() {
		for {
			select {
			case s := <-sigs:
				if prog == nil {
					cancel()
					continue
				}
				if s == os.Interrupt && opts.StdinTTY {
					continue // the terminal sent it to the program too
				}
				_ = prog.Signal(s)
			case <-ctx.Done():
				return
			}
		}
	}()

	st, runErr := capture.Run(ctx, src, w, ropt)
	if err := w.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing samples: %w", err)
	}
	var childErr error
	if prog != nil {
		if runErr != nil {
			// Sampling failed: the program goes on unsampled; wait for it
			// all the same, so that its exit code comes back.
			fmt.Fprintf(opts.IO.ErrOut, "gpuleak: sampling stopped (%v); waiting for %s to exit\n", runErr, prog.Name)
		}
		code, sig, err := prog.Wait()
		switch {
		case err != nil:
			childErr = err
		case code != 0:
			childErr = &ChildExitError{Program: filepath.Base(prog.Name), Code: code, Signal: sig}
		}
	}
	files := w.Files()
	fmt.Fprintln(opts.IO.ErrOut, captureSummary(&st, files, out))
	if runErr != nil {
		if childErr != nil {
			fmt.Fprintf(opts.IO.ErrOut, "gpuleak: %v\n", childErr)
		} else if prog != nil {
			fmt.Fprintf(opts.IO.ErrOut, "gpuleak: %s exited with code 0\n", filepath.Base(opts.Command[0]))
		}
		return runErr // an incomplete capture: exit 3
	}
	if opts.Analyze && len(files) > 0 {
		topts := &TrendOptions{IO: opts.IO, Version: opts.Version, Paths: files, Format: "table", TZ: "UTC"}
		if err := topts.validate(); err != nil {
			return err
		}
		if err := runTrend(topts); err != nil {
			return err
		}
	}
	return childErr
}

// captureSummary is the line capture prints when it stops.
func captureSummary(st *capture.Stats, files []string, out string) string {
	var b strings.Builder
	where := out
	if len(files) > 1 {
		where = fmt.Sprintf("%d files (%s ... %s)", len(files), files[0], files[len(files)-1])
	} else if out == "-" {
		where = "standard output"
	}
	span := time.Duration(st.LastUs-st.FirstUs) * time.Microsecond
	fmt.Fprintf(&b, "gpuleak: %d samples (%d rows) over %.1f s to %s", st.Ticks, st.Rows, span.Seconds(), where)
	if st.Ticks > 1 {
		fmt.Fprintf(&b, "; interval %s mean, %s median, %s p99, %s max", ms(st.MeanInterval), ms(st.P50Interval), ms(st.P99Interval), ms(st.MaxInterval))
	}
	if st.Ticks > 0 {
		fmt.Fprintf(&b, "; per sample %s wall", ms(st.PerTick(st.SampleWall)))
		if st.CPU >= 0 {
			fmt.Fprintf(&b, ", %s CPU (gpuleak's own)", ms(st.PerTick(st.CPU)))
		}
	}
	if st.Failed > 0 {
		fmt.Fprintf(&b, "; %d samples failed (last: %v)", st.Failed, st.LastErr)
	}
	return b.String()
}

// ms prints a duration in milliseconds: three significant digits below
// 100 ms, whole milliseconds above.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.3g ms", v)
}

// openSource opens the NVML sample source for capture and watch: a build
// without NVML is a usage error (exit 2, saying how to build it in), a
// machine without the driver an input error (exit 2, naming the library).
func openSource(open func(capture.Config) (capture.Source, error), cfg capture.Config) (capture.Source, error) {
	src, err := open(cfg)
	if err == nil {
		return src, nil
	}
	if errors.Is(err, capture.ErrNotBuiltIn) {
		return nil, &UsageError{Err: err}
	}
	return nil, &InputError{Err: err}
}
