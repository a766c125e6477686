package pipeline

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	anrun "github.com/gpuleak/gpuleak/analyze/run"
	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/report"
)

// The NVML sample log family: nvidia-smi --query-gpu and
// --query-compute-apps CSV, dmon, pmon, pynvml JSON lines, gpustat,
// DCGM exporter metrics, and nvidia-smi's and gpustat's text tables.
func init() {
	register(&family{
		name:  "nvml",
		order: 50,
		formats: []parse.Format{nvml.FormatQueryGPU, nvml.FormatQueryApps, nvml.FormatDmon,
			nvml.FormatPmon, nvml.FormatDcgmiDmon, nvml.FormatPynvmlJSONL, nvml.FormatGpustatJSON, nvml.FormatDCGMPrometheus,
			nvml.FormatNvidiaSmiText, nvml.FormatGpustatText, nvml.FormatNvidiaSmiXML, nvml.FormatPynvmlText},
		sniff:      nvml.Sniff,
		fallback:   headerlessCSV,
		analyze:    analyzeNVMLInput,
		postmortem: postmortemNVML,
		tables: func(o *Options, in *parse.Input, f parse.Format, emit Emit) error {
			raw, _ := upToCut(in)
			r := nvml.NewReader(raw, in.Name, append(append([]nvml.Option(nil), o.NVML.Reader...), nvml.WithFormat(f))...)
			if isTextTable(f) {
				return drainTextTable(r, emit)
			}
			return drain(r, func() string { return "samples" }, emit)
		},
	})
}

// readsUpToCut reports whether inputs of format f are read up to where a
// gzip stream is cut short (NVML logs, line by line; not the text
// tables, which are first read whole as job logs), rather than refused.
func readsUpToCut(f parse.Format) bool {
	switch {
	case byFormat[f] == nil:
		// No family's: a long log scanned whole for an OOM message
		// (readOOMText); a compute-sanitizer pass after it fails at the
		// cut, as before.
		return f == parse.FormatUnknown
	case byFormat[f].name == "pytorch-text", byFormat[f].name == "compute-sanitizer":
		return true // readOOMText, analyzeSanitizer
	}
	return byFormat[f].name == "nvml" && !isTextTable(f)
}

// upToCut is the reader of an NVML log: for a compressed one, reading up
// to where its gzip stream is cut short (an upload or copy stopped), as a
// plain log cut short is read; cut (nil for a plain log) says then where.
// Every reader of NVML logs (analyze, trend, oom, export's tables) reads
// through it, so that none refuses what another reads in part.
func upToCut(in *parse.Input) (io.Reader, *parse.GzipCut) {
	if !in.Gzip {
		return in.Reader(), nil
	}
	cut := in.UpToGzipCut()
	return cut, cut
}

// headerlessCSV claims comma-separated values without a header as the
// nvidia-smi query the --fields given name.
func headerlessCSV(head []byte, o *Options) parse.Format {
	if len(o.NVML.Fields) > 0 && (looksLikeHeaderlessCSV(head) || textFirst(o.NVML.Fields[0]) && looksLikeRowsOfText(head)) {
		return nvml.FormatForFields(o.NVML.Fields)
	}
	return parse.FormatUnknown
}

// textFirst reports whether field, the first --fields names, holds text,
// not a number or date: a fleet script's host column ("gpu07, 0, NVIDIA
// A100-SXM4-80GB, ..."), the GPU's name or uuid.
func textFirst(field string) bool {
	switch strings.TrimSpace(field) {
	case "host", "hostname", "nodename", "name", "gpu_name", "uuid", "gpu_uuid", "process_name", "pci.bus_id", "gpu_bus_id":
		return true
	}
	return false
}

// looksLikeRowsOfText is looksLikeHeaderlessCSV for a log whose first
// field is text: its first line's first field text (a host name, plain
// or qualified, "gpu07.cluster.local"; a GPU's name, "NVIDIA A100-SXM4-
// 80GB"; a bus id), a later field of that line a value starting with a
// digit (a header of field names has none: "hostname, timestamp, index,
// memory.used"), and the rows of head one CSV table of values.
func looksLikeRowsOfText(head []byte) bool {
	head = bytes.TrimLeft(nvml.SkipDateLines(head), "\r\n")
	line, _, _ := bytes.Cut(head, []byte("\n"))
	f := bytes.Split(bytes.TrimSpace(line), []byte(","))
	if len(f) < 3 {
		return false
	}
	if first := bytes.TrimSpace(f[0]); len(first) == 0 || first[0] == '[' {
		return false
	}
	if !slices.ContainsFunc(f[1:], func(x []byte) bool {
		x = bytes.TrimSpace(x)
		return len(x) > 0 && x[0] >= '0' && x[0] <= '9'
	}) {
		return false
	}
	return nvml.LooksLikeCSVRows(head, 3)
}

// looksLikeHeaderlessCSV: the first line is comma-separated values, at
// least three, the first a number or date (not a header of names), and
// the rows of head read as one CSV table of values (nvml.LooksLikeCSVRows):
// a training log whose first line is a tqdm bar with commas is a log.
// Lines of date's output before the first row (a "date -Iseconds;
// nvidia-smi ... --format=csv,noheader" loop) are not rows.
func looksLikeHeaderlessCSV(head []byte) bool {
	head = bytes.TrimLeft(nvml.SkipDateLines(head), "\r\n")
	line, _, _ := bytes.Cut(head, []byte("\n"))
	f := bytes.Split(bytes.TrimSpace(line), []byte(","))
	if len(f) < 3 {
		return false
	}
	first := bytes.TrimSpace(f[0])
	return len(first) > 0 && first[0] >= '0' && first[0] <= '9' && nvml.LooksLikeCSVRows(head, 3)
}

// drainTextTable emits the samples of an nvidia-smi or gpustat text
// table (its GPUs' and processes' memory, one row per GPU or process per
// table, as any NVML log's) once the whole input is read. A job log read
// as one may hold no memory figure, the analysis then reading its OOM
// message or sanitizer report instead: such an input emits no samples,
// and no error, and what the analysis found is exported as its findings.
func drainTextTable(r *nvml.Reader, emit Emit) error {
	defer r.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if r.Err() != nil {
		return nil
	}
	for _, rec := range recs {
		if err := emit("samples", rec); err != nil {
			return err
		}
	}
	return nil
}

// isTextTable reports whether f is one of the family's text tables, which
// job logs print before an error of their own, or pynvml's printouts,
// which a program's own log holds among its lines (an OOM traceback
// after them among them).
func isTextTable(f parse.Format) bool {
	return f == nvml.FormatNvidiaSmiText || f == nvml.FormatGpustatText || f == nvml.FormatPynvmlText
}

// analyzeNVMLInput reads one NVML log for gpuleak analyze. Job logs often
// print nvidia-smi's table first and fail with an out-of-memory error
// later: the error is the finding. Only a log without one, or without a
// compute-sanitizer report further on, is read as NVML samples.
func analyzeNVMLInput(r *runner, in *parse.Input, head []byte, format parse.Format) (report.Input, []report.Finding, error) {
	if !isTextTable(format) {
		return analyzeNVML(r, in, format)
	}
	rr, err := newRereader(in, in.Name)
	if err != nil {
		return report.Input{}, nil, err
	}
	defer rr.Close()
	if rin, fs, ok, err := analyzeLongText(r, in, head, rr); ok || err != nil {
		return rin, fs, err
	}
	samples, err := rr.again()
	if err != nil {
		return report.Input{}, nil, err
	}
	defer samples.Close()
	return analyzeNVML(r, samples, format)
}

// nvmlRun holds the NVML sample logs of one run: they are judged together,
// so that a --query-compute-apps log finds its GPU's total memory and end
// in a --query-gpu log of the same GPU.
type nvmlRun struct {
	a      *antrend.Analyzer
	inputs []report.TrendInput
}

// analyzeNVML reads one NVML sample log into the run's trend analyzer;
// its findings come from nvmlRun.finalize once every input is read. An
// input that fails part way through leaves none of its samples behind.
func analyzeNVML(r *runner, in *parse.Input, format parse.Format) (report.Input, []report.Finding, error) {
	run := r.nvml
	ti, err := readNVML(in, run.a, r.join.procs, append(append([]nvml.Option(nil), r.o.NVML.Reader...), nvml.WithFormat(format))...)
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
func (n *nvmlRun) finalize(ins []report.Input) []report.Finding {
	if len(n.inputs) == 0 {
		return nil
	}
	judged, fs := report.FromTrends(n.inputs, n.a.Finalize())
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

// The NVML log's read-ahead: four chunks of 512 KiB. A read-ahead takes
// the read system calls (and gzip's inflation, for a compressed log) off
// the parser's goroutine: on the 154.7 MB --query-gpu log they are about a
// sixth of its time, on a 2-core machine's page cache copy.
const (
	readAheadChunk  = 512 << 10
	readAheadChunks = 4
)

// readNVML streams one NVML sample log into the trend analyzer (and its
// per-process samples into procs, when not nil) and describes it for the
// report.
func readNVML(in *parse.Input, a *antrend.Analyzer, procs *anrun.ProcessCollector, opts ...nvml.Option) (report.TrendInput, error) {
	// The analyzers copy what they keep: a batch's buffers serve the next
	// ones once it is released.
	mem := parse.NewRecyclingAllocator(64 << 20)
	raw, cut := upToCut(in)
	if in.Regular {
		ra := parse.NewLineReadAhead(raw, readAheadChunk, readAheadChunks)
		defer ra.Close() // after the Reader's goroutine stops (deferred below): it reads ra
		raw = ra
	}
	r := nvml.NewReader(raw, in.Name, append([]nvml.Option{nvml.WithAllocator(mem)}, opts...)...)
	defer r.Release()
	src, stop := readAhead[nvml.Table](in, r)
	defer stop() // before r.Release
	for src.Next() {
		if err := a.Add(in.Name, src.RecordBatch()); err != nil {
			return report.TrendInput{}, err
		}
		if procs != nil {
			procs.Add(in.Name, src.RecordBatch())
		}
	}
	if err := src.Err(); err != nil {
		return report.TrendInput{}, err
	}
	m := r.Metadata()
	warnings := m.Warnings.Strings()
	var cutWhy string
	if cut != nil && cut.Cut {
		cutWhy = cut.String()
		warnings = append(warnings, "read in part: "+cutWhy+"; the samples are those before the cut")
	}
	cutWhy = joinCut(cutWhy, m.Cut)
	a.Input(in.Name, m.FirstUs, m.LastUs)
	a.ProcessesListed(in.Name, m.ProcessesListedUs)
	a.ProcessesPartial(in.Name, m.ProcessesPartialUs)
	a.Graphics(in.Name, m.GraphicsPIDs)
	clock := m.Clock.String()
	if m.Clock == nvml.ClockTimeOfDay && m.DateGiven {
		clock = nvml.ClockAbsolute.String()
	}
	var mig map[report.MIGKey]report.MIGPlace
	for _, p := range m.MIGProcesses {
		if mig == nil {
			mig = map[report.MIGKey]report.MIGPlace{}
		}
		mig[report.MIGKey{GPU: int(p.GPU), PID: p.PID}] = report.MIGPlace{GI: int(p.GI), CI: int(p.CI)}
	}
	return report.TrendInput{
		MIG:  mig,
		Path: in.Name, Format: string(m.Format), Samples: m.Instants, Rows: m.Rows,
		StartUs: m.FirstUs, EndUs: m.LastUs, Clock: clock, Warnings: warnings,
		StartGiven: m.Clock == nvml.ClockRowOrder && m.DateGiven,
		Interval:   m.Interval, IntervalAssumed: m.Clock == nvml.ClockRowOrder && m.IntervalAssumed,
		SkippedLines: m.SkippedLines, SkippedAt: m.SkippedAt, Cut: cutWhy,
	}, nil
}

// joinCut joins what cut an input short: its gzip stream's cut (gz) and
// its content's (text: a pasted table stopped before its Processes box
// ended, nvml.Metadata's Cut), either of them "".
func joinCut(gz, text string) string {
	switch {
	case gz == "":
		return text
	case text == "":
		return gz
	}
	return gz + "; " + text
}

// trendSamples reads any input for gpuleak trend as an NVML sample log.
func trendSamples(r *runner, in *parse.Input) (report.TrendInput, error) {
	defer r.progress(in)()
	// A log in no layout is refused with what it lacks, when it shows (a
	// header-less CSV's --fields, a -q excerpt's GPU line): nvml.Reader's
	// error says it.
	return readNVML(in, r.nvml.a, nil, r.o.NVML.Reader...)
}

// postmortemNVML reads an NVML log for gpuleak oom: its process samples
// name the processes an OOM message lists. A text table (nvidia-smi's,
// gpustat's) is first scanned whole as a log that may hold the OOM message
// (a job's log that printed the table, then died), as gpuleak analyze
// does; without one its process rows are read.
func postmortemNVML(r *runner, in *parse.Input, head []byte, format parse.Format) (report.Input, anoom.Input, error) {
	if isTextTable(format) {
		rr, err := newRereader(in, in.Name)
		if err != nil {
			return report.Input{}, anoom.Input{}, err
		}
		defer rr.Close()
		res, meta, cut, err := readOOMText(in, pytorchtext.FormatOOMMessage)
		if err != nil {
			return report.Input{}, anoom.Input{}, err
		}
		if len(res.Messages) > 0 || len(res.Stats) > 0 {
			format := textFormat(pytorchtext.FormatOOMMessage, res)
			return markCut(report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res), cut),
				anoom.Input{Path: in.Name, Format: string(format), Text: res}, nil
		}
		again, err := rr.again()
		if err != nil {
			return report.Input{}, anoom.Input{}, err
		}
		defer again.Close()
		in = again
	}
	procs, meta, cut, err := readGPUProcesses(in, format, r.o)
	if err != nil {
		return report.Input{}, anoom.Input{}, err
	}
	warnings, cutWhy := meta.Warnings.Strings(), ""
	if cut != nil && cut.Cut {
		cutWhy = cut.String()
		warnings = append(warnings, "read in part: "+cutWhy+"; the processes are those sampled before the cut")
	}
	cutWhy = joinCut(cutWhy, meta.Cut)
	return report.Input{Path: in.Name, Format: string(format), Warnings: warnings,
			SkippedLines: meta.SkippedLines, SkippedAt: meta.SkippedAt, Cut: cutWhy},
		anoom.Input{Path: in.Name, Format: string(format), Processes: procs}, nil
}

// maxGPUProcessSamples bounds the process samples kept from one NVML log.
const maxGPUProcessSamples = 1 << 20

// readGPUProcesses reads the per-process samples of an NVML log, its
// times without a zone in o.Location (UTC when nil); cut, for a
// compressed log, says whether and where its stream was cut short.
func readGPUProcesses(in *parse.Input, format parse.Format, o *Options) ([]anoom.GPUProcess, *nvml.Metadata, *parse.GzipCut, error) {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	raw, cut := upToCut(in)
	r := nvml.NewReader(raw, in.Name, nvml.WithFormat(format), nvml.WithLocation(loc))
	defer r.Release()
	var out []anoom.GPUProcess
	for r.Next() {
		rec := r.RecordBatch()
		pid := rec.Column(nvml.ColPID).(*array.Int64)
		used := rec.Column(nvml.ColUsed).(*array.Int64)
		tm := rec.Column(nvml.ColTime).(*array.Timestamp)
		name := rec.Column(nvml.ColProcess).(*array.Dictionary)
		for i := 0; i < int(rec.NumRows()) && len(out) < maxGPUProcessSamples; i++ {
			if pid.IsNull(i) {
				continue
			}
			p := anoom.GPUProcess{PID: pid.Value(i), UsedBytes: -1, Source: in.Name}
			if used.IsValid(i) {
				p.UsedBytes = used.Value(i)
			}
			if tm.IsValid(i) {
				p.TimeUs = int64(tm.Value(i))
			}
			if name.IsValid(i) {
				if d, ok := name.Dictionary().(*array.String); ok {
					p.Name = d.Value(name.GetValueIndex(i))
				}
			}
			out = append(out, p)
		}
	}
	if err := r.Err(); err != nil {
		return nil, nil, nil, err
	}
	return out, r.Metadata(), cut, nil
}
