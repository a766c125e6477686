package cmd

import (
	"bytes"
	"fmt"
	"os"
	"time"

	ansanitizer "github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// loadSuppressions reads the --suppressions file ("" means none): the
// rules compute-sanitizer records take (those without min-bytes, not
// expired), and every rule as it applies to findings.
func loadSuppressions(path string) ([]ansanitizer.Suppression, []report.SuppressionRule, error) {
	if path == "" {
		return nil, nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--suppressions: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // an editor's byte order mark
	return splitSuppressions(path, data, time.Now())
}

// analyzeSanitizer streams a compute-sanitizer report (text or XML)
// through the sanitizer analysis. Its tool errors are added to
// opts.toolErrors, for the report's errors section.
func analyzeSanitizer(opts *AnalyzeOptions, in *parse.Input, format parse.Format, lopt snapshot.LeakOptions) (report.Input, []report.Finding, error) {
	var r *sanitizer.Reader
	if format == parse.FormatSanitizerXML {
		r = sanitizer.NewXMLReader(in.Reader(), in.Name)
	} else {
		r = sanitizer.NewReader(in.Reader(), in.Name)
	}
	defer r.Release()
	a := ansanitizer.NewAnalyzer(ansanitizer.Options{Filter: lopt.Filter, Suppressions: opts.suppressions})
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			return report.Input{}, nil, err
		}
	}
	if err := r.Err(); err != nil {
		return report.Input{}, nil, err
	}
	res := a.Finalize()
	if res.ToolFailure != "" && res.Leaks == 0 {
		// Nothing was checked: reporting "no findings" would read as a
		// clean run.
		at := ""
		if res.ToolFailureLine > 0 {
			at = fmt.Sprintf(": line %d", res.ToolFailureLine)
		}
		return report.Input{}, nil, &InputError{Err: fmt.Errorf("%s%s: the tool failed (%q) and reported no results: nothing was checked, so the analysis is impossible (this is not a clean run); fix what the message says (the tool's setup, or a program that ended before using CUDA) and rerun it",
			in.Name, at, res.ToolFailure)}
	}
	rin, fs, errs := report.FromSanitizer(in.Name, string(format), r.Metadata().Warnings.Strings(), res)
	if res.ToolFailure != "" {
		rin.Warnings = append(rin.Warnings, fmt.Sprintf("the tool reported a failure of its own (%q): what follows it was not checked; the findings may be incomplete", res.ToolFailure))
	}
	opts.toolErrors = append(opts.toolErrors, errs...)
	return rin, fs, nil
}
