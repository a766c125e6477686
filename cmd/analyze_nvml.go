package cmd

import (
	"bytes"
	"strings"

	"github.com/dustin/go-humanize"

	anrun "github.com/gpuleak/gpuleak/analyze/run"
	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/report"
)

// nvmlOptions are the NVML flags of "gpuleak analyze" (--tz, --fields,
// --gpu-memory), parsed.
type nvmlOptions struct {
	reader []nvml.Option
	fields []string
	trend  antrend.Options
	procs  *anrun.ProcessCollector // per-process samples kept for joining with snapshots; nil: none
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

// nvmlRun holds the NVML sample logs of one "gpuleak analyze" run: they
// are judged together, so that a --query-compute-apps log finds its GPU's
// total memory and end in a --query-gpu log of the same GPU.
type nvmlRun struct {
	a      *antrend.Analyzer
	inputs []report.TrendInput
}

// analyzeNVML reads one NVML sample log for "gpuleak analyze" into the
// run's trend analyzer, with --tz, --fields and --gpu-memory; its findings
// come from nvmlRun.finalize once every input is read. An input that fails
// part way through leaves none of its samples behind.
func analyzeNVML(in *parse.Input, format parse.Format, opts *AnalyzeOptions) (report.Input, []report.Finding, error) {
	o, run := opts.nvml, opts.nvmlRun
	ti, err := readNVML(in, run.a, o.procs, append(append([]nvml.Option(nil), o.reader...), nvml.WithFormat(format))...)
	if err != nil {
		run.a.Drop(in.Name)
		return report.Input{}, nil, err
	}
	run.inputs = append(run.inputs, ti)
	ins, _ := report.FromTrends([]report.TrendInput{ti}, &antrend.Result{})
	return ins[0], nil, nil
}

// finalize judges the run's NVML series, replaces the entries of its
// inputs in ins by the judged ones (which carry the analysis's warnings)
// and returns their findings.
func (r *nvmlRun) finalize(ins []report.Input) []report.Finding {
	if len(r.inputs) == 0 {
		return nil
	}
	judged, fs := report.FromTrends(r.inputs, r.a.Finalize())
	for _, j := range judged {
		for i := range ins {
			if ins[i].Path == j.Path && ins[i].Error == "" {
				ins[i] = j
				break
			}
		}
	}
	return fs
}

// readNVML streams one NVML sample log into the trend analyzer and
// describes it for the report.
func readNVML(in *parse.Input, a *antrend.Analyzer, procs *anrun.ProcessCollector, opts ...nvml.Option) (report.TrendInput, error) {
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
		StartUs: m.FirstUs, EndUs: m.LastUs, Clock: clock, Warnings: m.Warnings.Strings(),
	}, nil
}
