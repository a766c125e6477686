package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// CIOptions are the flags of "gpuleak analyze" for CI jobs: quiet gates
// and the comparison with a committed baseline.
type CIOptions struct {
	// Quiet: print only the gates that tripped, not the report.
	Quiet bool
	// Baseline is the path of a baseline (--write-baseline) or a JSON
	// report to compare with; WriteBaseline where to write this run's.
	Baseline      string
	WriteBaseline string
	// Tolerance: how much a site may grow and still be the same.
	Tolerance string
	// SourceRoot is stripped from recorded source paths (SARIF).
	SourceRoot string

	tol report.Tolerance // parsed from Tolerance
}

func addCIFlags(f *pflag.FlagSet, o *CIOptions) {
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print only the --fail-on gates that tripped (on standard output), not the report (no --format)")
	f.StringVar(&o.Baseline, "baseline", "", "compare with the baseline in `FILE` (written by --write-baseline, or a --format json report): report only the sites that are new or grew beyond --tolerance")
	f.StringVar(&o.WriteBaseline, "write-baseline", "", "write this run's sites to `FILE` (sorted, stable JSON, meant to be committed), before --baseline leaves any out")
	f.StringVar(&o.SourceRoot, "source-root", "", "with --format sarif, strip this `DIR` (where the job ran, as recorded in the inputs) from source paths, so that code scanning finds them in the repository")
	f.StringVar(&o.Tolerance, "tolerance", "0", "with --baseline, a site that grew by this much or less is the same: a size (1MiB), a percent (10%), or both (10%,1MiB: it must exceed both)")
}

// parseGates reads the --fail-on expressions and the CI flags they need.
func parseGates(args []string, o *CIOptions) ([]report.Gate, error) {
	gates, err := report.ParseGates(args)
	if err != nil {
		return nil, &UsageError{Err: err, Hint: "Run 'gpuleak analyze --help' for the --fail-on expressions."}
	}
	if o.tol, err = parseTolerance(o.Tolerance); err != nil {
		return nil, usageErrorf("bad --tolerance %q: %v", o.Tolerance, err)
	}
	for _, g := range gates {
		if g.NeedsBaseline() && o.Baseline == "" {
			return nil, usageErrorf("--fail-on %s compares with a baseline: give --baseline FILE", g.Text)
		}
	}
	if o.WriteBaseline == "-" {
		return nil, usageErrorf("--write-baseline needs a FILE: standard output carries the report")
	}
	if o.Quiet && len(gates) == 0 && o.WriteBaseline == "" {
		return nil, usageErrorf("--quiet prints only the --fail-on gates that trip: give --fail-on")
	}
	return gates, nil
}

// parseTolerance reads "10%", "1MiB", "4096" or "10%,1MiB".
func parseTolerance(s string) (report.Tolerance, error) {
	var t report.Tolerance
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if strings.HasSuffix(p, "%") {
			v, err := strconv.ParseFloat(strings.TrimSpace(p[:len(p)-1]), 64)
			if err != nil || v < 0 || v > 1e9 {
				return t, fmt.Errorf("want a percent such as 10%%")
			}
			t.Percent = v
			continue
		}
		n, err := parseSize(p)
		if err != nil {
			return t, err
		}
		t.Bytes = n
	}
	return t, nil
}

// loadBaselineFlag reads --baseline; nil without one.
func loadBaselineFlag(opts *AnalyzeOptions) (*report.Baseline, error) {
	if opts.CI.Baseline == "" {
		return nil, nil
	}
	if opts.CI.Baseline == "-" {
		return nil, usageErrorf("--baseline needs a file, not standard input")
	}
	b, warns, err := loadSavedRun(opts.CI.Baseline, nil)
	if errors.Is(err, parse.ErrIsDirectory) {
		err = &parse.Error{File: opts.CI.Baseline, Offset: -1, Err: parse.ErrIsDirectory,
			Msg: "is a directory: --baseline takes a file written by --write-baseline or by --format json"}
	}
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if b == nil {
		return nil, &InputError{Err: &parse.Error{File: opts.CI.Baseline, Offset: 0,
			Msg: "not a baseline: want a file written by --write-baseline or by --format json (schema " + report.BaselineSchema + " or " + report.Schema + ")"}}
	}
	for _, w := range warns {
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak: warning: %s\n", report.Clean(w))
	}
	return b, nil
}

// compareWithBaseline writes --write-baseline (unless an input was not
// read), then, with a baseline, leaves out of *kept the findings whose
// site did not grow beyond the tolerance and marks the others. It returns
// what the gates look at.
func compareWithBaseline(opts *AnalyzeOptions, rep *report.Report, kept *[]report.Finding, base *report.Baseline) (report.GateInput, error) {
	gin := report.GateInput{Findings: *kept, Errors: rep.Errors, Tolerance: opts.CI.tol, Inputs: rep.Inputs}
	run := report.RunBaseline(*kept, rep.Errors, rep.Inputs)
	if opts.CI.WriteBaseline != "" && refuseBaseline(opts, rep) {
		// The run exits 2 for the unread inputs (runAnalyze); FILE is
		// left as it was.
	} else if opts.CI.WriteBaseline != "" {
		if err := writeFileAtomically(opts.CI.WriteBaseline, func(w io.Writer) error { return report.WriteBaseline(w, run) }); err != nil {
			return gin, fmt.Errorf("--write-baseline: %w", err)
		}
	}
	if base == nil {
		return gin, nil
	}
	diff := report.Compare(base, run, opts.CI.tol)
	byKey := map[string]*report.DiffEntry{}
	cmp := &report.BaselineComparison{Path: opts.CI.Baseline, ToleranceBytes: opts.CI.tol.Bytes,
		TolerancePercent: opts.CI.tol.Percent, Totals: report.DiffTotalsOf(diff), Fixed: []report.DiffEntry{}}
	for i := range diff {
		// A key's sites compared added up (a baseline without lines) are
		// one entry without lines, that all of the key's findings share.
		byKey[diff[i].Key+"\x00"+diff[i].Lines] = &diff[i]
		if diff[i].Status == report.StatusFixed {
			cmp.Fixed = append(cmp.Fixed, diff[i])
		}
	}
	out := (*kept)[:0:0]
	keys := report.SiteKeys(*kept) // as run's sites were keyed
	for i, f := range *kept {
		k := keys[i]
		e := byKey[k+"\x00"+report.SiteLines(&f)]
		if e == nil {
			e = byKey[k+"\x00"]
		}
		// An NVML series that grows now and did not in the baseline is
		// a leak suspect whatever its bytes did (a released run's peak
		// may be below the baseline's plateau): kept, with the note that
		// says its class changed.
		newlyGrowing := e != nil && report.NewlyGrowing(*e)
		if e == nil || (e.Status != report.StatusNew && e.Status != report.StatusGrown && e.Status != report.StatusUnmatched && !newlyGrowing) {
			cmp.LeftOut++
			continue
		}
		f.Baseline = &report.FindingBaseline{Status: e.Status, BeforeBytes: e.BeforeBytes, BeforeCount: e.BeforeCount,
			AfterBytes: e.AfterBytes, AfterCount: e.AfterCount, DeltaBytes: e.DeltaBytes, DeltaPercent: e.DeltaPercent,
			BeforeSite: e.BeforeSite, Note: baselineWords.Replace(e.Note)}
		out = append(out, f)
	}
	*kept = out
	rep.FindingsTotal = len(out)
	rep.Baseline = cmp
	gin.Findings, gin.Diff = out, diff
	return gin, nil
}

// refuseBaseline reports whether --write-baseline must not be written
// because an input could not be read, and says so on standard error. A
// baseline is committed and trusted: one written without an input's sites
// would call them new in every later run (and --write-baseline is used
// with -q, which prints no report to show the gap), and overwriting the
// committed one would lose them. Leaving the input out of the command
// line is the way to write a baseline without it: the choice is then the
// user's, visible in the command.
func refuseBaseline(opts *AnalyzeOptions, rep *report.Report) bool {
	var names []string
	for _, in := range rep.Inputs {
		if in.Error != "" {
			names = append(names, in.Path)
		}
	}
	if len(names) == 0 {
		return false
	}
	what := "1 input was"
	if len(names) > 1 {
		what = fmt.Sprintf("%d inputs were", len(names))
	}
	fmt.Fprintf(opts.IO.ErrOut, "gpuleak: --write-baseline %s not written (left as it was): %s not read (%s), and a baseline without its sites would report them as new in every later run; fix the input, or leave it out of the command line to write a baseline without it\n",
		report.Clean(opts.CI.WriteBaseline), what, report.Clean(strings.Join(names, ", ")))
	return true
}

// baselineWords names the runs of a diff's note as analyze --baseline
// sees them.
var baselineWords = strings.NewReplacer("BASE's", "the baseline's", "BASE", "the baseline", "NEW's", "this run's", "NEW", "this run")

// reportTrips prints the gates that tripped, one line each: on standard
// output with --quiet (they are all it prints), else on standard error
// below the report. It returns ErrFindings when any tripped.
func reportTrips(ios *IOStreams, o *CIOptions, gates []report.GateResult) error {
	w := ios.ErrOut
	if o.Quiet {
		w = ios.Out
	}
	tripped := false
	for _, g := range gates {
		if !g.Tripped {
			continue
		}
		tripped = true
		if _, err := fmt.Fprintf(w, "gpuleak: --fail-on %s tripped: %s\n", g.Gate, report.Clean(g.Why)); o.Quiet && writeFailed(err, "the report") != nil {
			return writeFailed(err, "the report")
		}
	}
	if tripped {
		return ErrFindings
	}
	return nil
}

// maxSavedRun bounds the size of a JSON report or baseline read back.
const maxSavedRun = 256 << 20

// loadSavedRun reads a baseline (gpuleak.baseline/v1) or a JSON report
// (gpuleak.report/v1) as a baseline. It returns nil, nil, nil when the
// input is neither (it must then be analysed); warnings say what a saved
// report could not give (findings --top left out).
func loadSavedRun(path string, stdin io.Reader) (*report.Baseline, []string, error) {
	in, err := parse.Open(path, stdin)
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	head, err := in.Head()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	schema, err := savedSchema(head)
	if err != nil {
		return nil, nil, &parse.Error{File: path, Offset: 0, Msg: err.Error()}
	}
	if schema == "" {
		return nil, nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(in.Reader(), maxSavedRun+1))
	if err != nil {
		return nil, nil, &parse.Error{File: path, Offset: -1, Msg: "reading", Err: err}
	}
	if len(data) > maxSavedRun {
		return nil, nil, &parse.Error{File: path, Offset: maxSavedRun, Msg: fmt.Sprintf("a saved %s larger than %d MiB", schema, maxSavedRun>>20)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	switch schema {
	case report.BaselineSchema:
		var b report.Baseline
		if err := dec.Decode(&b); err != nil {
			return nil, nil, jsonError(path, dec, int64(len(data)), err)
		}
		return &b, nil, nil
	default:
		var r report.Report
		if err := dec.Decode(&r); err != nil {
			return nil, nil, jsonError(path, dec, int64(len(data)), err)
		}
		var warns []string
		if r.FindingsTotal > len(r.Findings) {
			warns = append(warns, fmt.Sprintf("%s lists %d of its %d findings (written with --top): the comparison sees only those, and sites absent from it are not taken for new or fixed; write reports with --top 0", path, len(r.Findings), r.FindingsTotal))
		}
		if r.BelowMinBytes > 0 {
			warns = append(warns, fmt.Sprintf("%s leaves out %d findings under its --min-bytes: sites absent from it are not taken for new or fixed; write reports without --min-bytes", path, r.BelowMinBytes))
		}
		if r.Baseline != nil {
			warns = append(warns, fmt.Sprintf("%s was itself compared with a baseline: it lists only new and grown sites", path))
		}
		for _, in := range r.Inputs {
			// A report written while an input could not be read (exit 2),
			// or from one read in part, holds none or only some of that
			// input's sites: a comparison with it must not read as one of
			// whole runs.
			switch {
			case in.Error != "":
				warns = append(warns, fmt.Sprintf("%s was written while an input could not be read (%s): it holds none of that input's sites, so the comparison sees only the others'", path, in.Error))
			case report.ReadInPart(in) != "":
				warns = append(warns, fmt.Sprintf("%s was written from %s read in part (%s): it holds only the sites of the rest of it", path, in.Path, report.ReadInPart(in)))
			}
		}
		return report.BaselineOf(&r), warns, nil
	}
}

// savedSchema recognises gpuleak's own JSON documents by their "schema"
// member, wherever it stands among the first 64 KiB (jq -S moves it).
// A gpuleak document of a schema this version does not read is an error.
func savedSchema(head []byte) (string, error) {
	h := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(h) == 0 || h[0] != '{' {
		return "", nil
	}
	m := savedSchemaRE.FindSubmatch(h)
	if m == nil {
		return "", nil
	}
	switch s := string(m[1]); s {
	case report.BaselineSchema, report.Schema:
		return s, nil
	case report.DiffSchema:
		return "", fmt.Errorf("a %s document: give the runs it compares (or their reports or baselines)", s)
	default:
		return "", fmt.Errorf("schema %q: this gpuleak reads %s and %s", s, report.Schema, report.BaselineSchema)
	}
}

var savedSchemaRE = lazyre.New(`"schema"\s*:\s*"(gpuleak\.[a-z]+/v[0-9]+)"`)

// jsonError positions a JSON decoding error.
func jsonError(path string, dec *json.Decoder, size int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := dec.InputOffset()
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = size
	}
	return &parse.Error{File: path, Offset: off, Msg: "bad JSON", Err: err}
}

// formatFor reads --format for a command whose document is of kind k: a
// format that does not exist, or does not render k (the CI formats render
// only the findings of gpuleak analyze), is a usage error naming those
// that do.
func formatFor(s, command string, k report.DocKind) (report.Format, error) {
	f, err := report.ParseFormat(s)
	if err == nil {
		err = report.Check(f, k)
	}
	if err != nil {
		return "", usageErrorf("unknown format %q for %s (choose %s)", s, command, report.FormatNames(report.Formats(k)))
	}
	return f, nil
}

// splitSuppressions parses a suppressions file into the rules for
// compute-sanitizer records and those for findings (report.SuppressionRule).
func splitSuppressions(path string, data []byte, now time.Time) ([]sanitizer.Suppression, []report.SuppressionRule, error) {
	rules, err := report.ParseSuppressionRules(path, data)
	if err != nil {
		return nil, nil, err
	}
	var lines []string
	for i := range rules {
		if rules[i].Records != "" && !rules[i].Expired(now) {
			lines = append(lines, rules[i].Records)
		}
	}
	recs, err := sanitizer.ParseSuppressions(path, []byte(strings.Join(lines, "\n")))
	if err != nil {
		return nil, nil, err
	}
	return recs, rules, nil
}
