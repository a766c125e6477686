package cmd

import (
	"github.com/gpuleak/gpuleak/analyze/callsite"
	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/report"
)

// oomFacts collects what each input says about out-of-memory errors, so
// that inputs about one run (a snapshot, the log with its OOM message, a
// memory summary) make one postmortem after all are read.
type oomFacts struct {
	inputs []anoom.Input
}

func (o *oomFacts) add(in anoom.Input) { o.inputs = append(o.inputs, in) }

// postmortem combines the facts; its notes go to the report's inputs.
func (o *oomFacts) postmortem(inputs []report.Input, filter *callsite.FrameFilter) (*anoom.Postmortem, []report.Finding) {
	pm := anoom.NewPostmortem(o.inputs, anoom.PostmortemOptions{Filter: filter})
	report.AddPostmortemNotes(inputs, pm)
	return pm, report.FromPostmortem(pm)
}

// readOOMText reads a log or traceback (parse.FormatOOMText), a
// memory_summary() text or memory_stats() JSON.
func readOOMText(in *parse.Input, format parse.Format) (*anoom.TextResult, *pytorchtext.Metadata, error) {
	mem := parse.NewRecyclingAllocator(1 << 20)
	var r *pytorchtext.Reader
	if format == parse.FormatMemoryStats {
		r = pytorchtext.NewStatsReader(in.Reader(), in.Name, pytorchtext.WithAllocator(mem))
	} else {
		r = pytorchtext.NewReader(in.Reader(), in.Name, pytorchtext.WithAllocator(mem))
	}
	defer r.Release()
	a := anoom.NewTextAnalyzer()
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			return nil, nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	return a.Finalize(), r.Metadata(), nil
}

// analyzeOOMText reads a text input about OOMs for "gpuleak analyze". Its
// findings come later, from the postmortem of all inputs (oomFacts).
func analyzeOOMText(opts *AnalyzeOptions, in *parse.Input, format parse.Format) (report.Input, []report.Finding, error) {
	res, meta, err := readOOMText(in, format)
	if err != nil {
		return report.Input{}, nil, err
	}
	opts.oom.add(anoom.Input{Path: in.Name, Format: string(format), Text: res})
	return report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res), nil, nil
}

// analyzeUnrecognisedText reads text no format claimed by its first bytes
// as a log: an OOM message may come after them. ok is false when the
// input is not text or holds no OOM message nor memory summary.
func analyzeUnrecognisedText(opts *AnalyzeOptions, in *parse.Input, head []byte) (rin report.Input, fs []report.Finding, ok bool, err error) {
	if !pytorchtext.LooksLikeText(head) {
		return report.Input{}, nil, false, nil
	}
	res, meta, err := readOOMText(in, parse.FormatOOMText)
	if err != nil || (len(res.Messages) == 0 && len(res.Stats) == 0) {
		return report.Input{}, nil, false, err
	}
	opts.oom.add(anoom.Input{Path: in.Name, Format: string(parse.FormatOOMText), Text: res})
	return report.FromOOMText(in.Name, string(parse.FormatOOMText), meta.Warnings.Strings(), res), nil, true, nil
}

// unrecognised is the error for an input no format claims.
func unrecognised(path string) error {
	return &parse.Error{File: path, Offset: 0, Msg: "unrecognised input format: not a PyTorch memory snapshot, a log with a CUDA out-of-memory message, " +
		"memory_summary() text, memory_stats() JSON, a compute-sanitizer report (text or XML), a PyTorch profiler trace or memory timeline, nor an NVML sample log (nvidia-smi CSV, dmon, pmon, pynvml, gpustat, DCGM)", Err: parse.ErrUnknownFormat}
}

// isText reports whether an input's first bytes are text.
func isText(head []byte) bool { return pytorchtext.LooksLikeText(head) }
