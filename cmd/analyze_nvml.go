package cmd

import (
	"bytes"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/analyze"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/report"
)

// nvmlOptions are the NVML flags of "gpuleak analyze" (--tz, --fields,
// --gpu-memory), parsed.
type nvmlOptions struct {
	reader []nvml.Option
	fields []string
	trend  analyze.TrendOptions
	procs  *analyze.ProcessCollector // per-process samples kept for joining with snapshots; nil: none
}

// parseNVMLFlags checks and parses --tz, --fields and --gpu-memory.
func parseNVMLFlags(tz, fields, gpuMemory string) (nvmlOptions, error) {
	var o nvmlOptions
	loc, err := parseZone(tz)
	if err != nil {
		return o, usageErrorf("bad --tz %q: %v", tz, err)
	}
	o.reader = append(o.reader, nvml.WithLocation(loc))
	for _, f := range strings.Split(fields, ",") {
		if f = strings.TrimSpace(f); f != "" {
			o.fields = append(o.fields, f)
		}
	}
	if len(o.fields) > 0 {
		o.reader = append(o.reader, nvml.WithFields(o.fields))
	}
	if gpuMemory != "" {
		n, err := humanize.ParseBytes(gpuMemory)
		if err != nil || n == 0 || n > 1<<50 {
			return o, usageErrorf("bad --gpu-memory %q: want a size such as 80GiB", gpuMemory)
		}
		o.trend.GPUMemoryBytes = int64(n)
	}
	return o, nil
}

// looksLikeHeaderlessCSV: the first line is comma-separated values, at
// least three, the first a number or date (not a header of names).
func looksLikeHeaderlessCSV(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	f := bytes.Split(bytes.TrimSpace(line), []byte(","))
	if len(f) < 3 {
		return false
	}
	first := bytes.TrimSpace(f[0])
	return len(first) > 0 && first[0] >= '0' && first[0] <= '9'
}

// analyzeNVML reads one NVML sample log for "gpuleak analyze": its trends,
// with --tz, --fields and --gpu-memory; "gpuleak trend" links several logs
// of one GPU and has flags for logs without dates or times.
func analyzeNVML(in *parse.Input, format parse.Format, o nvmlOptions) (report.Input, []report.Finding, error) {
	a := analyze.NewTrendAnalyzer(o.trend)
	ti, err := readNVML(in, a, o.procs, append(append([]nvml.Option(nil), o.reader...), nvml.WithFormat(format))...)
	if err != nil {
		return report.Input{}, nil, err
	}
	ins, fs := report.FromTrends([]report.TrendInput{ti}, a.Finalize())
	return ins[0], fs, nil
}

// readNVML streams one NVML sample log into the trend analyzer and
// describes it for the report.
func readNVML(in *parse.Input, a *analyze.TrendAnalyzer, procs *analyze.ProcessCollector, opts ...nvml.Option) (report.TrendInput, error) {
	r := nvml.NewReader(in.Reader(), in.Name, opts...)
	defer r.Release()
	for r.Next() {
		if err := a.Add(in.Name, r.RecordBatch()); err != nil {
			return report.TrendInput{}, err
		}
		if procs != nil {
			procs.Add(in.Name, r.RecordBatch())
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
