package cmd

import (
	"github.com/gpuleak/gpuleak/analyze"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/report"
)

// analyzeNVML reads one NVML sample log for "gpuleak analyze": its trends,
// with the readers' defaults (UTC, the default field order of header-less
// CSV); "gpuleak trend" has the flags for other cases and links several
// logs of one GPU.
func analyzeNVML(in *parse.Input, format parse.Format) (report.Input, []report.Finding, error) {
	a := analyze.NewTrendAnalyzer(analyze.TrendOptions{})
	ti, err := readNVML(in, a, nvml.WithFormat(format))
	if err != nil {
		return report.Input{}, nil, err
	}
	ins, fs := report.FromTrends([]report.TrendInput{ti}, a.Finalize())
	return ins[0], fs, nil
}

// readNVML streams one NVML sample log into the trend analyzer and
// describes it for the report.
func readNVML(in *parse.Input, a *analyze.TrendAnalyzer, opts ...nvml.Option) (report.TrendInput, error) {
	r := nvml.NewReader(in.Reader(), in.Name, opts...)
	defer r.Release()
	for r.Next() {
		if err := a.Add(in.Name, r.RecordBatch()); err != nil {
			return report.TrendInput{}, err
		}
	}
	if err := r.Err(); err != nil {
		return report.TrendInput{}, err
	}
	m := r.Metadata()
	a.Input(in.Name, m.FirstUs, m.LastUs)
	clock := m.Clock.String()
	if m.Clock == nvml.ClockTimeOfDay && m.DateGiven {
		clock = nvml.ClockAbsolute.String()
	}
	return report.TrendInput{
		Path: in.Name, Format: string(m.Format), Samples: m.Rows,
		StartUs: m.FirstUs, EndUs: m.LastUs, Clock: clock, Warnings: m.Warnings,
	}, nil
}
