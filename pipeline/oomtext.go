package pipeline

import (
	"io"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/report"
)

// The PyTorch text family: torch.cuda.memory_stats() JSON,
// memory_summary() text, and logs or tracebacks with a CUDA out-of-memory
// message. Its OOM message test is the weakest of all (a phrase anywhere
// in text): it is asked last.
func init() {
	register(&family{
		name:    "pytorch-text",
		order:   60,
		formats: []parse.Format{pytorchtext.FormatMemoryStats, pytorchtext.FormatMemorySummary, pytorchtext.FormatOOMMessage, pytorchtext.FormatOOMLog},
		sniff: func(head []byte) parse.Format {
			switch {
			case pytorchtext.SniffStats(head):
				return pytorchtext.FormatMemoryStats
			case pytorchtext.SniffSummary(head):
				return pytorchtext.FormatMemorySummary
			case pytorchtext.SniffOOM(head):
				return pytorchtext.FormatOOMMessage
			}
			return parse.FormatUnknown
		},
		analyze: func(r *runner, in *parse.Input, _ []byte, f parse.Format) (report.Input, []report.Finding, error) {
			return analyzeOOMText(r, in, f)
		},
		postmortem: func(_ *runner, in *parse.Input, _ []byte, f parse.Format) (report.Input, anoom.Input, error) {
			return postmortemText(in, f)
		},
		tables: func(_ *Options, in *parse.Input, f parse.Format, emit Emit) error {
			var r *pytorchtext.Reader
			raw, _ := upToCut(in) // as readOOMText: the analysis marks it read in part
			if f == pytorchtext.FormatMemoryStats {
				r = pytorchtext.NewStatsReader(raw, in.Name)
			} else {
				r = pytorchtext.NewReader(raw, in.Name)
			}
			return drain(r, func() string { return "oom_" + r.Table().String() }, emit)
		},
	})
}

// readOOMText reads a log or traceback (pytorchtext.FormatOOMMessage), a
// memory_summary() text or memory_stats() JSON.
//
// A compressed input is read up to where its gzip stream is cut short,
// as a plain log cut short is (upToCut): cut says then where, and the
// caller marks the input read in part (markCut). Every reader of text
// logs goes through it, so that none refuses what another reads in part.
func readOOMText(in *parse.Input, format parse.Format) (*anoom.TextResult, *pytorchtext.Metadata, *parse.GzipCut, error) {
	raw, cut := upToCut(in)
	res, meta, err := readOOMTextFrom(raw, in.Name, format)
	return res, meta, cut, err
}

// readOOMTextFrom is readOOMText of the text in rd, named name.
func readOOMTextFrom(rd io.Reader, name string, format parse.Format) (*anoom.TextResult, *pytorchtext.Metadata, error) {
	mem := parse.NewRecyclingAllocator(1 << 20)
	var r *pytorchtext.Reader
	if format == pytorchtext.FormatMemoryStats {
		r = pytorchtext.NewStatsReader(rd, name, pytorchtext.WithAllocator(mem))
	} else {
		r = pytorchtext.NewReader(rd, name, pytorchtext.WithAllocator(mem))
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
	res := a.Finalize()
	res.UnifiedMemory = r.Metadata().UnifiedMemory
	res.NotOOMs = r.Metadata().NotOOMs.Strings()
	return res, r.Metadata(), nil
}

// textFormat is the format of a text input read as format: a log read
// as pytorchtext.FormatOOMMessage is labelled by whose out-of-memory
// messages it holds (pytorchtext.LogFormat), so that a TensorFlow or JAX
// log is not called PyTorch's.
func textFormat(format parse.Format, res *anoom.TextResult) parse.Format {
	if format != pytorchtext.FormatOOMMessage || res == nil {
		return format
	}
	return pytorchtext.LogFormat(res.Printers())
}

// analyzeOOMText reads a text input about OOMs for gpuleak analyze. Its
// findings come later, from the postmortem of all inputs (oomFacts).
func analyzeOOMText(r *runner, in *parse.Input, format parse.Format) (report.Input, []report.Finding, error) {
	res, meta, cut, err := readOOMText(in, format)
	if err != nil {
		return report.Input{}, nil, err
	}
	format = textFormat(format, res)
	r.oom.add(anoom.Input{Path: in.Name, Format: string(format), Text: res})
	return markCut(report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res), cut), nil, nil
}

// postmortemText reads a text input about OOMs for gpuleak oom.
func postmortemText(in *parse.Input, format parse.Format) (report.Input, anoom.Input, error) {
	res, meta, cut, err := readOOMText(in, format)
	if err != nil {
		return report.Input{}, anoom.Input{}, err
	}
	format = textFormat(format, res)
	return markCut(report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res), cut), anoom.Input{Path: in.Name, Format: string(format), Text: res}, nil
}

// postmortemLog reads, for gpuleak oom, an input no family reads for it
// (recognised as format, or not at all) as a log that may hold an OOM
// message further on; an input that is not text is unrecognised.
func postmortemLog(_ *runner, in *parse.Input, head []byte, _ parse.Format) (report.Input, anoom.Input, error) {
	if err := codePickleError(in.Name, head); err != nil {
		// A pickle, not a log that ran without an OOM.
		return report.Input{}, anoom.Input{}, err
	}
	if !isText(head) {
		if n, at := textThenBinary(head); n > 0 {
			return readTextThenBinary(in, n, at)
		}
		return report.Input{}, anoom.Input{}, unrecognised(in.Name)
	}
	rin, fact, err := postmortemText(in, pytorchtext.FormatOOMMessage)
	if err == nil && fact.Text != nil && len(fact.Text.Messages) == 0 && len(fact.Text.Stats) == 0 {
		// No OOM, and in its place a tool's error: not a log that ran
		// without one.
		if terr := toolErrorIn(in.Name, head); terr != nil {
			return report.Input{}, anoom.Input{}, terr
		}
	}
	return rin, fact, err
}

// isText reports whether an input's first bytes are text.
func isText(head []byte) bool { return pytorchtext.LooksLikeText(head) }
