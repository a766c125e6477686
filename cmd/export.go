package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/daily"
	"github.com/gpuleak/gpuleak/export"
	"github.com/gpuleak/gpuleak/internal/startgc"
	"github.com/gpuleak/gpuleak/pipeline"
)

// ExportOptions are the flags and dependencies of "gpuleak export".
type ExportOptions struct {
	IO      *IOStreams
	Version string

	Roots   []string
	Out     string
	To      string
	GroupBy string
	Jobs    int
	TZ      string
}

// NewCmdExport builds "gpuleak export". runF replaces the run function in
// tests; nil runs runExport.
func NewCmdExport(ios *IOStreams, version string, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{IO: ios, Version: version}
	c := &cobra.Command{
		Use:   "export FILE|DIR... -o DIR [--to parquet|arrow]",
		Short: "Write parsed tables and findings as Parquet or Arrow IPC, partitioned for query engines",
		Long: `Export walks each DIR (and reads each FILE) as "gpuleak report" does and writes,
under the output directory, every artifact's parsed tables and the findings,
in Hive partitions:

  DIR/table=TABLE/date=YYYY-MM-DD/host=HOST/part-RUN-N.parquet

RUN names this export (its UTC start time and random bits): an export into a
directory that already holds parts adds its own beside them and never
replaces one. Parts are mode 0644. Directories the export made and left
empty (nothing written: no input read, or an error) are removed again; one
that existed before stays.

Tables: findings (one row per finding); snapshot_segments, snapshot_blocks,
snapshot_events, snapshot_frames, snapshot_stacks (PyTorch snapshots);
samples (NVML logs); sanitizer_records, sanitizer_frames, sanitizer_runs;
oom_* (OOM messages, memory_summary, memory_stats); profiler_memory and
profiler_spans (profiler traces). Each table of an input gets two columns,
job and path. Parquet is Zstd-compressed; --to arrow writes Arrow IPC files.
README.md documents the schemas and shows DuckDB and Spark SQL queries.

Inputs are paths, walked as "gpuleak report" walks them (links followed);
"-" (standard input) is not supported: save the input to a file first.

` + exitCodesHelp("", exitHelp{ExitOK, "done (unreadable inputs are counted on standard error)"},
			exitHelp{ExitInput, "bad usage, a root that cannot be walked, or no file exported at all (an empty root)"},
			exitHelp{ExitInternal, "a file that cannot be written"}),
		Example: `  gpuleak export /mnt/artifacts -o /mnt/fleet --group-by '{host}/{job}/...'
  duckdb -c "SELECT kind, count(*) FROM read_parquet('/mnt/fleet/table=findings/**/*.parquet', hive_partitioning=true) GROUP BY kind"`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("export needs at least one FILE or DIR"), Hint: "Run 'gpuleak export --help' for usage."}
			}
			return noStdinRoot("export", args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Roots = args
			if runF != nil {
				return runF(opts)
			}
			return runExport(opts)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.Out, "output", "o", "", "the output `DIR` (created; parts are added beside what it holds)")
	f.StringVar(&opts.To, "to", "parquet", "parquet or arrow (Arrow IPC files)")
	f.StringVar(&opts.GroupBy, "group-by", "", "read host and job from each file's directories, as in gpuleak report: '{host}/{job}/...'")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "jobs (groups of files) exported at once; 0: one per core")
	f.StringVar(&opts.TZ, "tz", "UTC", "NVML logs: time zone of timestamps without one")
	return c
}

func runExport(opts *ExportOptions) error {
	startgc.Settle(false) // many inputs, or a long run: the collector's default
	if opts.Out == "" {
		return usageErrorf("export needs -o DIR")
	}
	format := export.Format(opts.To)
	if format != export.Parquet && format != export.Arrow {
		return usageErrorf("unknown --to %q (choose parquet or arrow)", opts.To)
	}
	if opts.Jobs < 0 {
		return usageErrorf("--jobs must be 0 (one per core) or more, not %d", opts.Jobs)
	}
	eopt := export.Options{Roots: opts.Roots, Out: opts.Out, Format: format, Workers: opts.Jobs}
	if opts.GroupBy != "" {
		p, err := daily.ParsePattern(opts.GroupBy)
		if err != nil {
			return &UsageError{Err: err}
		}
		eopt.Pattern = p
	}
	nv, err := parseNVMLFlags(opts.TZ, "", "")
	if err != nil {
		return err
	}
	// Made before the walk, so that an output that cannot be made is
	// said at once; taken away again, with every parent this run made,
	// when nothing is written into it (a directory that was there before
	// stays).
	var dirs export.Dirs
	defer dirs.RemoveEmpty()
	if err := dirs.MkdirAll(opts.Out, 0o755); err != nil {
		return outputError(opts.Out, err) // exit 3: the export could not be written
	}
	sum, err := export.Run(context.Background(), eopt, AnalyzeGroup(opts.Version, nv, false), ExportTables(nv))
	if err != nil {
		return &UsageError{Err: err}
	}
	tables := make([]string, 0, len(sum.Rows))
	for t := range sum.Rows {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	fmt.Fprintf(opts.IO.ErrOut, "gpuleak export: %s: %d exported, %d skipped (no artifact), %d unreadable; %s in %s\n",
		counted(sum.Files, "file", "files"), sum.Exported, sum.Skipped, sum.Unreadable, counted(sum.Parts, "part", "parts"), opts.Out)
	for _, t := range tables {
		fmt.Fprintf(opts.IO.ErrOut, "  %-20s %d rows\n", t, sum.Rows[t])
	}
	for _, e := range sum.Errors {
		fmt.Fprintf(opts.IO.ErrOut, "  not read: %s\n", e)
	}
	for _, e := range sum.InPart {
		fmt.Fprintf(opts.IO.ErrOut, "  read in part: %s\n", e)
	}
	if n := sum.ReadInPart - len(sum.InPart); n > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "  read in part: %s more\n", counted(n, "input", "inputs"))
	}
	if sum.Exported == 0 {
		// An empty or unmounted root, or nothing gpuleak reads: exit 2,
		// as report (noInputRead), so that a job's status shows it.
		where := strings.Join(opts.Roots, ", ")
		if sum.Files == 0 {
			return &InputError{Err: fmt.Errorf("export: no input found under %s: looked, by content, in every file below (links followed) for %s; there was none",
				where, reportLooksFor)}
		}
		return &InputError{Err: fmt.Errorf("export: nothing exported under %s: of the %s found, %d without a format gpuleak reads, %d unreadable (named above)",
			where, counted(sum.Files, "file", "files"), sum.Skipped, sum.Unreadable)}
	}
	return nil
}

// ExportTables is export's seam (export.TablesFunc): the pipeline's
// parsed tables of one file (pipeline.Tables).
func ExportTables(nv pipeline.NVMLOptions) export.TablesFunc {
	return func(ctx context.Context, path string, emit export.Emit) error {
		return pipeline.Tables(ctx, pipeline.Options{NVML: nv}, path, pipeline.Emit(emit))
	}
}
