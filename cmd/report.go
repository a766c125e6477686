package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/daily"
	"github.com/gpuleak/gpuleak/internal/startgc"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/pipeline"
	"github.com/gpuleak/gpuleak/report"
)

// ReportOptions are the flags and dependencies of "gpuleak report".
type ReportOptions struct {
	IO      *IOStreams
	Version string

	Roots     []string
	Output    string
	Format    string
	GroupBy   string
	Since     string
	From, To  string
	Baseline  string
	Tolerance string
	Jobs      int
	TZ        string
	// Fields names the columns of header-less nvidia-smi CSV logs, as
	// "gpuleak analyze --fields" does.
	Fields string
	// Now is the time --since counts back from; nil: the clock.
	Now func() time.Time
}

// NewCmdReport builds "gpuleak report". runF replaces the run function in
// tests; nil runs runReport.
func NewCmdReport(ios *IOStreams, version string, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: ios, Version: version}
	c := &cobra.Command{
		Use:   "report DIR|FILE... -o report.html|report.md|report.json",
		Short: "The daily memory report: a directory of many jobs' artifacts in, one page out",
		Long: `Report walks each DIR recursively (and reads each FILE), recognises every
artifact gpuleak reads by content (gzip too; other files are skipped and
counted), analyses them in parallel and writes one report:

  summary        jobs, hosts, GPUs (sampled by NVML, and those only snapshots,
                 OOM messages or profiler traces name), leaks, OOMs, growing GPUs
                 and processes, the worst findings first
  leaks          leak findings grouped by call site across jobs, with each
                 site's live bytes over its traces
  OOMs           each out-of-memory error with its cause and its memory
                 (requested, allocated, reserved, free), and OOMs per day by cause
  NVML trends    each GPU's and process's used memory over time, trend and
                 time to OOM
  fragmentation  segments whose free memory is split around live blocks
  unreadable     inputs that could not be read, with their positioned errors

A job is a directory's artifacts, analysed together as by "gpuleak analyze"
(an OOM's log with its snapshot, a GPU's --query-gpu log with its
--query-compute-apps log); --group-by reads host and job from the path
instead. Hosts also come from the artifacts (DCGM and gpustat labels).

--since, --from and --to keep the artifacts whose own timestamps (a trace's
end, a log's last sample, an OOM's time) fall in the window; an input
without timestamps (an OOM message, memory_stats) is dated by its file's
modification time. --since 7d over a week of artifacts is the weekly
review: leak sites that persisted or came back, OOMs per day by cause, GPUs
whose lowest used memory crept up.

The format comes from -o's extension (.html, .md, .json) or --format. The
HTML page is self-contained (inline SVG charts and CSS, nothing fetched),
readable on a phone. The JSON is the gpuleak.daily/v1 document, the data
behind the page; give yesterday's as --baseline to see leak sites new,
grown and fixed, and new OOM causes.

Symbolic links are followed, a root's too (a file or directory reached
twice is read once); a dangling link and a subdirectory that cannot be
read are listed as unreadable, with the reason, and the rest is reported.
Inputs are paths: "-" (standard input) is not read, as a directory walk
cannot be; save a pasted log to a file first. -o - writes to standard
output.

` + exitCodesHelp("", exitHelp{ExitOK, "done (also with unreadable inputs: the report lists them)"},
			exitHelp{ExitInput, "bad usage, a root that cannot be walked, or no input read at all (an empty root; the report is still written)"},
			exitHelp{ExitInternal, "the report could not be written, or an internal error"}),
		Example: `  # this morning's page from yesterday's artifacts
  gpuleak report /mnt/artifacts --since 24h -o report.html

  # hosts and jobs from the layout /mnt/artifacts/HOST/JOB/...
  gpuleak report /mnt/artifacts --group-by '{host}/{job}/...' -o report.html

  # what changed since yesterday's report
  gpuleak report /mnt/artifacts --since 24h -o today.json
  gpuleak report /mnt/artifacts --since 24h --baseline yesterday.json -o today.md

  # the weekly review
  gpuleak report /mnt/artifacts --since 7d -o week.html`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("report needs at least one DIR or FILE"), Hint: "Run 'gpuleak report --help' for usage."}
			}
			return noStdinRoot("report", args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Roots = args
			if runF != nil {
				return runF(opts)
			}
			return runReport(opts)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "write the report to `FILE` (\"-\": standard output, with --format)")
	f.StringVarP(&opts.Format, "format", "f", "", "html, markdown (md) or json; default: from -o's extension")
	f.StringVar(&opts.GroupBy, "group-by", "", "read host and job from each file's directories under its root: parts {host}, {job}, * (any) or a literal, a final ... for the rest, e.g. '{host}/{job}/...'")
	f.StringVar(&opts.Since, "since", "", "keep artifacts from this long before now: 24h, 7d, 90m")
	f.StringVar(&opts.From, "from", "", "keep artifacts from this time on: 2026-11-30, 2026-11-30T08:00:00Z (UTC when no zone)")
	f.StringVar(&opts.To, "to", "", "keep artifacts before this time, exclusive (same forms as --from): --to 2026-12-01 ends at its midnight and keeps none of 2026-12-01; give the next day to include a day")
	f.StringVar(&opts.Baseline, "baseline", "", "compare with an earlier report's JSON (gpuleak report --format json): leak sites new, grown, fixed, and new OOM causes")
	f.StringVar(&opts.Tolerance, "tolerance", "10%", "with --baseline, a leak site that grew by this much or less is the same: a size (1MiB), a percent (10%), or both")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "jobs (groups of files) analysed at once; 0: one per core")
	f.StringVar(&opts.TZ, "tz", "UTC", "NVML logs: time zone of timestamps without one (as in gpuleak analyze)")
	f.StringVar(&opts.Fields, "fields", "", "NVML logs: the fields of header-less nvidia-smi CSV, as given to --query-gpu or --query-compute-apps, for every such log of the run (as in gpuleak analyze; default "+strings.Join(nvml.DefaultQueryGPUFields, ",")+")")
	return c
}

func runReport(opts *ReportOptions) error {
	startgc.Settle(false) // many inputs, or a long run: the collector's default
	if opts.Output == "" {
		return usageErrorf("report needs -o FILE (report.html, report.md, report.json; \"-\" for standard output with --format)")
	}
	name := opts.Format
	if name == "" {
		switch strings.ToLower(filepath.Ext(opts.Output)) {
		case ".html", ".htm":
			name = "html"
		case ".md", ".markdown":
			name = "markdown"
		case ".json":
			name = "json"
		default:
			return usageErrorf("cannot tell the format from -o %q: name it .html, .md or .json, or give --format", opts.Output)
		}
	}
	format, err := report.ParseDailyFormat(name)
	if err != nil {
		return &UsageError{Err: err}
	}
	if opts.Jobs < 0 {
		return usageErrorf("--jobs must be 0 (one per core) or more, not %d", opts.Jobs)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	dopt := daily.Options{Roots: opts.Roots, Workers: opts.Jobs, Tool: report.Tool{Name: "gpuleak", Version: opts.Version}}
	if opts.GroupBy != "" {
		if dopt.Pattern, err = daily.ParsePattern(opts.GroupBy); err != nil {
			return &UsageError{Err: err}
		}
	}
	if opts.Since != "" {
		if opts.From != "" {
			return usageErrorf("give --since or --from, not both")
		}
		d, err := parseSince(opts.Since)
		if err != nil {
			return usageErrorf("bad --since %q: %v", opts.Since, err)
		}
		dopt.From = now().Add(-d)
	}
	if opts.From != "" {
		if dopt.From, err = parseWhen(opts.From); err != nil {
			return usageErrorf("bad --from %q: %v", opts.From, err)
		}
	}
	if opts.To != "" {
		if dopt.To, err = parseWhen(opts.To); err != nil {
			return usageErrorf("bad --to %q: %v", opts.To, err)
		}
	}
	if !dopt.From.IsZero() && !dopt.To.IsZero() && !dopt.From.Before(dopt.To) {
		return usageErrorf("--to (%s) must be after --from (%s)", dopt.To.Format(time.RFC3339), dopt.From.Format(time.RFC3339))
	}
	tol, err := parseTolerance(opts.Tolerance)
	if err != nil {
		return usageErrorf("bad --tolerance %q: %v", opts.Tolerance, err)
	}
	var base *report.Daily
	if opts.Baseline != "" {
		if opts.Baseline == "-" {
			return usageErrorf("--baseline needs a file, not standard input")
		}
		// parse.Open names the file first, as every input error does, and
		// reads a gzipped baseline too.
		bf, err := parse.Open(opts.Baseline, nil)
		if errors.Is(err, parse.ErrIsDirectory) {
			err = &parse.Error{File: opts.Baseline, Offset: -1, Err: parse.ErrIsDirectory,
				Msg: "is a directory: --baseline takes the JSON of an earlier gpuleak report"}
		}
		if err != nil {
			return &UsageError{Err: err}
		}
		base, err = daily.ReadDaily(bf.Reader(), opts.Baseline)
		bf.Close()
		if err != nil {
			return &UsageError{Err: err}
		}
	}
	nv, err := parseNVMLFlags(opts.TZ, opts.Fields, "")
	if err != nil {
		return err
	}
	if opts.IO.ErrTTY {
		dopt.Progress = opts.IO.ErrOut
	}
	if opts.Output != "-" {
		if err := checkOutputDir(opts.Output); err != nil {
			return err
		}
	}
	d, err := daily.Run(context.Background(), dopt, AnalyzeGroup(opts.Version, nv, true))
	if err != nil {
		return &UsageError{Err: err}
	}
	if base != nil {
		daily.Compare(d, base, opts.Baseline, tol)
	}
	// Unreadable inputs do not fail the report (a fleet's day has some),
	// but each is named on standard error too, as analyze names one.
	for i, u := range d.Unreadable {
		if i == maxStderrUnreadable {
			more := "1 more unreadable input"
			if n := d.Summary.Unreadable - i; n != 1 {
				more = fmt.Sprintf("%d more unreadable inputs", n)
			}
			fmt.Fprintf(opts.IO.ErrOut, "gpuleak report: %s: see the report's unreadable list\n", more)
			break
		}
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak report: unreadable: %s: %s\n", u.Path, u.Error)
	}
	for i, u := range d.ReadInPart {
		if i == maxStderrUnreadable {
			fmt.Fprintf(opts.IO.ErrOut, "gpuleak report: %s read in part: see the report's list of inputs read in part\n", counted(d.Summary.ReadInPart-i, "more input", "more inputs"))
			break
		}
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak report: warning: %s: read in part: %s\n", u.Path, u.Error)
	}
	if s := d.Summary; s.Read == 0 && s.OutsideWindow > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak report: no artifact in the window: the %s dated outside it\n",
			counted(s.OutsideWindow, "file read is", "files read are"))
	}
	if opts.Output == "-" {
		err = report.WriteDaily(opts.IO.Out, d, format)
	} else {
		err = writeFileAtomically(opts.Output, func(w io.Writer) error { return report.WriteDaily(w, d, format) })
	}
	if err != nil {
		return err
	}
	return noInputRead(opts.Roots, d.Summary)
}

// reportLooksFor is what gpuleak report looks for in the files under its
// roots, said when it found none.
const reportLooksFor = "PyTorch memory snapshots, logs with an out-of-memory message, memory_summary() and memory_stats() output, " +
	"profiler traces, compute-sanitizer reports and NVML sample logs (nvidia-smi, dmon, pmon, pynvml, gpustat, DCGM)"

// noInputRead is the outcome of a report that read no artifact: an empty
// or unmounted root, files of no format gpuleak reads, files it cannot
// read. Exit code 2, the code of an input that cannot be read (README,
// Exit codes), as analyze when every input fails; its page, already
// written, says nothing was analysed. Files read but dated outside the
// window are a quiet window (nil: runReport says so on standard error).
func noInputRead(roots []string, s report.DailySummary) error {
	if s.Read > 0 || s.OutsideWindow > 0 {
		return nil
	}
	where := strings.Join(roots, ", ")
	if s.Files == 0 {
		return &InputError{Err: fmt.Errorf("report: no input found under %s: looked, by content, in every file below (links followed) for %s; there was none",
			where, reportLooksFor)}
	}
	var why []string
	if s.Skipped > 0 {
		why = append(why, counted(s.Skipped, "holds", "hold")+" no format gpuleak reads")
	}
	if s.Unreadable > 0 {
		why = append(why, fmt.Sprintf("%d could not be read (named above)", s.Unreadable))
	}
	return &InputError{Err: fmt.Errorf("report: no input read under %s: of the %s found, %s; gpuleak reads %s, recognised by content",
		where, counted(s.Files, "file", "files"), strings.Join(why, ", "), reportLooksFor)}
}

// counted is n with the words for one or for more: "1 file", "2 files".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// maxStderrUnreadable bounds the unreadable inputs report names on
// standard error; the report itself lists up to report.DailyMaxItems.
const maxStderrUnreadable = 20

// AnalyzeGroup is the daily report's seam (daily.AnalyzeFunc): the files
// of one group are read and analysed together through the pipeline, as by
// "gpuleak analyze", every finding kept (no --top, no --min-bytes). curves
// keeps leak sites' live-bytes curves (report.Growth.LiveBytes) for charts.
func AnalyzeGroup(version string, nv pipeline.NVMLOptions, curves bool) daily.AnalyzeFunc {
	return func(ctx context.Context, paths []string) (*daily.Analysis, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		filter, err := callsite.NewFrameFilter(nil, nil)
		if err != nil {
			return nil, err
		}
		o := pipeline.Options{Use: pipeline.Analyze, Version: version, Stdin: strings.NewReader(""),
			Filter: filter, MinKept: 4, NVML: nv, Curves: curves}
		res, err := pipeline.Run(ctx, o, paths)
		a := &daily.Analysis{Errors: map[string]error{}}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The only input, or every one, could not be read.
			var ie *InputError
			if errors.As(err, &ie) {
				for p, e := range ie.ByPath {
					a.Errors[p] = e
				}
				if len(paths) == 1 {
					a.Errors[paths[0]] = ie.Err
				}
			}
			return a, nil
		}
		for p, e := range res.Errors {
			a.Errors[p] = e
		}
		a.Report = res.Report
		return a, nil
	}
}

// parseSince reads a duration: Go's (90m, 24h, 1h30m) or days (7d, 1.5d).
func parseSince(s string) (time.Duration, error) {
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || n <= 0 || n > 3650 {
			return 0, fmt.Errorf("want a positive number of days up to 3650, e.g. 7d")
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration: 24h, 7d, 90m")
	}
	return d, nil
}

// parseWhen reads a date (UTC midnight) or an RFC 3339 time (UTC when it
// has no zone).
func parseWhen(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a date (2026-11-30) or a time (2026-11-30T08:00:00Z)")
}

// noStdinRoot refuses "-" among report's and export's roots: they walk
// paths, and standard input is none (say so, rather than look for a file
// named "-").
func noStdinRoot(cmd string, args []string) error {
	for _, a := range args {
		if a == "-" {
			return &UsageError{Err: fmt.Errorf("%s reads DIR and FILE paths; \"-\" (standard input) is not supported: save the input to a file and give its path", cmd), Hint: "Run 'gpuleak " + cmd + " --help' for usage."}
		}
	}
	return nil
}

// outputError is the failure to write path (exit 3, "the report could
// not be written"), naming path rather than the temporary file beside it
// that the failing call named.
func outputError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le): // a failed rename names both files
		err = le.Err
	}
	return fmt.Errorf("writing %s: %w", path, err)
}

// checkOutputDir fails early (exit 3), before a long walk, when path is
// a directory, or the directory that is to hold it does not exist or is
// no directory.
func checkOutputDir(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return outputError(path, errIsDirectory)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return outputError(path, err)
	}
	if !st.IsDir() {
		return outputError(path, fmt.Errorf("%s is not a directory", dir))
	}
	return nil
}

// writeFileAtomically writes path through a temporary file beside it,
// renamed into place once whole: a reader never sees half a report, and a
// failed run leaves an earlier file as it was. A path that is a symbolic
// link is written through it (the link stays). A path that is no regular
// file (/dev/stdout, a named pipe) is written in place: renaming over it
// would replace it, and as root replace /dev/stdout itself.
func writeFileAtomically(path string, write func(io.Writer) error) error {
	if descriptorPath(path) {
		// /dev/stdout and /dev/fd/N name a descriptor whose file, when it is
		// a regular one (> out.json), must keep its inode: the process
		// writes to it too.
		return writeInPlace(path, path, write)
	}
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	if st, err := os.Stat(target); err == nil {
		if st.IsDir() {
			return outputError(path, errIsDirectory)
		}
		if !st.Mode().IsRegular() {
			return writeInPlace(path, target, write)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*")
	if err != nil {
		return outputError(path, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; a report is for others to read.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return outputError(path, err)
	}
	return nil
}

// descriptorPath: path names one of the process's open descriptors
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), never replaced
// by a rename.
func descriptorPath(path string) bool {
	p := filepath.ToSlash(filepath.Clean(path))
	switch {
	case p == "/dev/stdout" || p == "/dev/stderr":
		return true
	case strings.HasPrefix(p, "/dev/fd/"), strings.HasPrefix(p, "/proc/self/fd/"):
		return true
	case strings.HasPrefix(p, "/proc/"):
		// /proc/PID/fd/N
		parts := strings.Split(p, "/")
		return len(parts) == 5 && parts[3] == "fd"
	}
	return false
}

// writeInPlace writes to target, a file that is not regular (a device, a
// FIFO) or a descriptor (/dev/stdout), named path on the command line; it
// appends, as the shell's redirection left the file (empty after ">",
// kept after ">>").
func writeInPlace(path, target string, write func(io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return outputError(path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return outputError(path, err)
	}
	return nil
}

// errIsDirectory: an output FILE that names a directory (a rename over it
// fails with "file exists", which names the temporary file, not the
// cause).
var errIsDirectory = errors.New("is a directory: give the name of a file to write")
