package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // --tz works on hosts without a zone database

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/pipeline"
	"github.com/gpuleak/gpuleak/report"
)

// TrendOptions are the flags and dependencies of "gpuleak trend".
type TrendOptions struct {
	IO      *IOStreams
	Version string

	Paths     []string
	Format    string
	TZ        string
	Fields    string
	Date      string
	Start     string
	Interval  time.Duration
	GPUMemory string
	FailOn    []string

	// Parsed from the flags by validate, in RunE, before runF sees them.
	format report.Format
	nvml   pipeline.NVMLOptions // parsed from TZ, Fields, Date, Start, Interval, GPUMemory
	failOn map[string]bool      // the classes of --fail-on
	gates  []report.Gate        // the same, in the order given, as analyze's gates
}

// NewCmdTrend builds "gpuleak trend". runF replaces the run function in
// tests; nil runs runTrend.
func NewCmdTrend(ios *IOStreams, version string, runF func(*TrendOptions) error) *cobra.Command {
	opts := &TrendOptions{IO: ios, Version: version}
	c := &cobra.Command{
		Use:   "trend FILE...",
		Short: "Trends of GPU memory in NVML sample logs: which GPU and which process grows, how fast, and when it runs out",
		Long: `Trend reads NVML sample logs (or standard input for "-"), recognised by
content, and shows for every GPU and every process how its used memory moved:

  growing   still rising through the last part of the log (or a sawtooth
            whose floor rises): a leak suspect, with a time to OOM when the
            trend is credible
  step      growth (or a release) that then stays flat: a model or cache
            loaded, or growth that stopped (at a cap, an OOM)
  sawtooth  memory rises and is given back: allocation churn, normal
  flat      no change beyond the noise

The slope is Theil-Sen's (robust to spikes and steps), with its 95% interval,
and the least-squares slope and R² beside it.

Inputs: nvidia-smi --query-gpu and --query-compute-apps CSV (any field order,
with or without header and units), nvidia-smi dmon and pmon text, nvidia-smi's
table (plain, -l, watch) and -q report, pynvml sampler JSON lines, gpustat
(--json or text), DCGM exporter Prometheus text and dcgmi dmon. Logs of
one GPU given together are linked (by UUID, or host and index at the same
time): process logs then find their GPU's total memory, and memory used by no
listed process is measured.

Times without a zone (nvidia-smi's, dmon's, gpustat's) are read in --tz. Logs
with times of day only (pmon -o T) take their date from --date; logs without
times (dmon or pmon without -o, DCGM text without timestamps) are placed by
row order, --interval apart from --start. Sizes in tables use IEC units (KiB,
MiB, GiB); JSON (gpuleak.report/v1, findings of kind "trend") gives bytes.

` + exitCodesHelp(helpUnreadCostsItself, exitHelpDone, exitHelp{ExitFindings, "a series has a --fail-on class"}, exitHelpInput, exitHelpInternal),
		Example: `  # a job's nvidia-smi loop, and its processes
  gpuleak trend gpu.csv apps.csv

  # header-less CSV in another field order, logged in Berlin
  gpuleak trend --fields index,memory.used,timestamp --tz Europe/Berlin smi.log

  # pmon -o T of 30 November; dmon without times, sampled every 5 s
  gpuleak trend --date 2026-11-30 pmon.txt
  gpuleak trend --start '2026-11-30 09:08:02' --interval 5s dmon.txt

  # CI: exit 1 when a GPU or process is still growing
  gpuleak trend --fail-on growing --format json samples.jsonl > trend.json`,
		Args: needFiles("trend"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			return validated(opts, opts.validate, runF, runTrend)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Format, "format", "f", "table", "output format: table or json")
	f.StringVar(&opts.TZ, "tz", "UTC", "time zone of timestamps without one: UTC, Local, an IANA name (Europe/Berlin) or an offset (+02:00)")
	f.StringVar(&opts.Fields, "fields", "", "the fields of header-less nvidia-smi CSV, as given to --query-gpu or --query-compute-apps (default "+strings.Join(nvml.DefaultQueryGPUFields, ",")+")")
	f.StringVar(&opts.Date, "date", "", "the date (YYYY-MM-DD) of logs with times of day only (pmon/dmon -o T)")
	f.StringVar(&opts.Start, "start", "", "the time of the first sample of logs without times (YYYY-MM-DD HH:MM:SS in --tz, or RFC 3339)")
	f.DurationVar(&opts.Interval, "interval", 0, "the period of logs without times (default 1s; 30s for DCGM text)")
	f.StringVar(&opts.GPUMemory, "gpu-memory", "", "the total memory of GPUs whose logs do not give it (dmon, pmon, --query-compute-apps), e.g. 80GiB")
	f.StringSliceVar(&opts.FailOn, "fail-on", nil, "exit with code 1 when a series has one of these classes (growing, step, sawtooth, flat)")
	return c
}

// validate checks the flags and parses them into opts; every error is a
// UsageError.
func (opts *TrendOptions) validate() error {
	format, err := formatFor(opts.Format, "trend", report.DocTrend)
	if err != nil {
		return err
	}
	loc, err := parseZone(opts.TZ)
	if err != nil {
		return usageErrorf("bad --tz %q: %v", opts.TZ, err)
	}
	var ropts []nvml.Option
	ropts = append(ropts, nvml.WithLocation(loc))
	var fields []string
	if opts.Fields != "" {
		for _, f := range strings.Split(opts.Fields, ",") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		ropts = append(ropts, nvml.WithFields(fields))
	}
	if opts.Date != "" {
		d, err := time.ParseInLocation("2006-01-02", opts.Date, loc)
		if err != nil {
			return usageErrorf("bad --date %q: want YYYY-MM-DD", opts.Date)
		}
		ropts = append(ropts, nvml.WithDate(d))
	}
	if opts.Start != "" {
		t, err := parseStart(opts.Start, loc)
		if err != nil {
			return usageErrorf("bad --start %q: want YYYY-MM-DD HH:MM:SS or RFC 3339", opts.Start)
		}
		ropts = append(ropts, nvml.WithStart(t))
	}
	if opts.Interval < 0 {
		return usageErrorf("--interval must be positive, not %v", opts.Interval)
	}
	if opts.Interval > 0 {
		ropts = append(ropts, nvml.WithInterval(opts.Interval))
	}
	var aopt trend.Options
	if opts.GPUMemory != "" {
		n, err := humanize.ParseBytes(opts.GPUMemory)
		if err != nil || n == 0 || n > 1<<50 {
			return usageErrorf("bad --gpu-memory %q: want a size such as 80GiB", opts.GPUMemory)
		}
		aopt.GPUMemoryBytes = int64(n)
	}
	failOn := map[string]bool{}
	var classes []string
	for _, c := range opts.FailOn {
		switch cl := trend.Class(strings.TrimSpace(c)); cl {
		case trend.Growing, trend.Step, trend.Sawtooth, trend.Flat:
			if !failOn[string(cl)] {
				classes = append(classes, string(cl))
			}
			failOn[string(cl)] = true
		default:
			return usageErrorf("bad --fail-on class %q (choose growing, step, sawtooth, flat)", c)
		}
	}
	// A class is analyze's gate of that name: the JSON report lists each,
	// tripped or not, as analyze's does.
	gates, err := report.ParseGates(classes)
	if err != nil {
		return err
	}
	opts.format, opts.failOn, opts.gates = format, failOn, gates
	opts.nvml = pipeline.NVMLOptions{Reader: ropts, Fields: fields, Trend: aopt}
	return checkDistinct(opts.Paths, opts.IO.In)
}

func runTrend(opts *TrendOptions) error {
	res, err := runInputs(opts.IO, opts.Version, pipeline.Options{Use: pipeline.Trend, NVML: opts.nvml}, opts.Paths)
	if err != nil {
		return err
	}
	// Every input here is an NVML log, so every class gate is judged.
	res.Report.Gates = report.Evaluate(opts.gates, report.GateInput{Findings: res.Report.Findings})
	if err := writeFailed(report.Write(opts.IO.Out, report.Document{Kind: report.DocTrend, Report: res.Report}, opts.format, report.Options{Terminal: opts.IO.OutTTY}), "the report"); err != nil {
		return err
	}
	// Name each class that tripped, as analyze names its gates.
	tripped := false
	for _, g := range res.Report.Gates {
		if g.Tripped {
			tripped = true
			fmt.Fprintf(opts.IO.ErrOut, "gpuleak: --fail-on %s tripped: %s\n", g.Gate, g.Why)
		}
	}
	// An unreadable input (listed in the report) outranks a tripped class,
	// as in analyze.
	if res.Unread != nil {
		return res.Unread
	}
	if tripped {
		return ErrFindings
	}
	return nil
}

// parseZone reads --tz: UTC, Local, an IANA zone name or a fixed offset
// (+02:00, -0530, +2).
func parseZone(s string) (*time.Location, error) {
	switch strings.ToLower(s) {
	case "", "utc", "z":
		return time.UTC, nil
	case "local":
		return time.Local, nil
	}
	if s[0] == '+' || s[0] == '-' {
		digits := strings.ReplaceAll(s[1:], ":", "")
		var h, m int
		var err error
		switch len(digits) {
		case 1, 2:
			h, err = strconv.Atoi(digits)
		case 4:
			if h, err = strconv.Atoi(digits[:2]); err == nil {
				m, err = strconv.Atoi(digits[2:])
			}
		default:
			err = errors.New("want an offset such as +02:00")
		}
		if err != nil || h > 14 || m > 59 {
			return nil, errors.New("want an offset such as +02:00")
		}
		off := h*3600 + m*60
		if s[0] == '-' {
			off = -off
		}
		return time.FixedZone(s, off), nil
	}
	return time.LoadLocation(s)
}

// parseStart reads --start in loc unless it carries a zone.
func parseStart(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	var last error
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006/01/02 15:04:05", "2006-01-02 15:04:05.999999", "2006/01/02 15:04:05.999999"} {
		t, err := time.ParseInLocation(layout, s, loc)
		if err == nil {
			return t, nil
		}
		last = err
	}
	return time.Time{}, last
}
