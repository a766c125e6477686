package pipeline

import (
	"fmt"

	ansanitizer "github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// The compute-sanitizer family: --leak-check full reports, text logs (any
// --prefix, cuda-memcheck too) and --xml --save files.
func init() {
	register(&family{
		name:    "compute-sanitizer",
		order:   40,
		formats: []parse.Format{sanitizer.FormatText, sanitizer.FormatXML},
		sniff: func(head []byte) parse.Format {
			if f, ok := sanitizer.Sniff(head); ok {
				return f
			}
			return parse.FormatUnknown
		},
		analyze: func(r *runner, in *parse.Input, _ []byte, f parse.Format) (report.Input, []report.Finding, error) {
			return analyzeSanitizer(r, in, f)
		},
		tables: func(_ *Options, in *parse.Input, f parse.Format, emit Emit) error {
			var r *sanitizer.Reader
			if f == sanitizer.FormatXML {
				r = sanitizer.NewXMLReader(in.Reader(), in.Name)
			} else {
				r = sanitizer.NewReader(in.Reader(), in.Name)
			}
			return drain(r, func() string { return "sanitizer_" + r.Table().String() }, emit)
		},
	})
}

// analyzeSanitizer streams a compute-sanitizer report (text or XML)
// through the sanitizer analysis. Its tool errors are added to
// r.toolErrors, for the report's errors section.
func analyzeSanitizer(r *runner, in *parse.Input, format parse.Format) (report.Input, []report.Finding, error) {
	// Batches after the first few reuse the buffers of those released
	// before them: no Arrow garbage per record for the collector. The
	// analysis copies what it keeps out of them. Batches of 8192 rows
	// (about 800 leak records of 10 frames) fit in the pool whole; batches
	// of 65536 frames did not, and held ~10 MiB each.
	mem := sanitizer.WithAllocator(parse.NewRecyclingAllocator(8 << 20))
	batch := sanitizer.WithBatchSize(8192)
	var sr *sanitizer.Reader
	if format == sanitizer.FormatXML {
		sr = sanitizer.NewXMLReader(in.Reader(), in.Name, mem, batch)
	} else {
		sr = sanitizer.NewReader(in.Reader(), in.Name, mem, batch)
	}
	defer sr.Release()
	a := ansanitizer.NewAnalyzer(ansanitizer.Options{Filter: r.o.Filter, Suppressions: r.o.Suppressions})
	for sr.Next() {
		if err := a.Add(sr.Table(), sr.RecordBatch()); err != nil {
			return report.Input{}, nil, err
		}
	}
	if err := sr.Err(); err != nil {
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
	rin, fs, errs := report.FromSanitizer(in.Name, string(format), sr.Metadata().Warnings.Strings(), res)
	if res.ToolFailure != "" {
		rin.Warnings = append(rin.Warnings, fmt.Sprintf("the tool reported a failure of its own (%q): what follows it was not checked; the findings may be incomplete", res.ToolFailure))
	}
	r.toolErrors = append(r.toolErrors, errs...)
	return rin, fs, nil
}
