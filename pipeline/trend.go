package pipeline

import (
	"context"

	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/report"
)

// trendAll reads every input for gpuleak trend as an NVML sample log and
// judges them together; any input that cannot be read stops the run.
func (r *runner) trendAll(ctx context.Context, paths []string) (*Result, error) {
	r.nvml = &nvmlRun{a: antrend.NewAnalyzer(r.o.NVML.Trend)}
	var inputs []report.TrendInput
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ti, err := r.trendFile(path)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		inputs = append(inputs, ti)
	}
	ins, findings := report.FromTrends(inputs, r.nvml.a.Finalize())
	r.rep.Inputs, r.rep.Findings, r.rep.FindingsTotal = ins, findings, len(findings)
	return &Result{Report: r.rep}, nil
}

// trendFile reads one input into the run's trend analyzer: a family with
// a trend function of its own decides (a snapshot is refused); every
// other input is read as NVML samples, whose reader says whether it is.
func (r *runner) trendFile(path string) (report.TrendInput, error) {
	in, head, err := r.open(path)
	if err != nil {
		return report.TrendInput{}, err
	}
	defer in.Close()
	format := Detect(head)
	if f := byFormat[format]; f != nil && f.trend != nil {
		return f.trend(r, in, format)
	}
	return trendSamples(r, in)
}
