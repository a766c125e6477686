package pipeline

import (
	"bytes"
	"errors"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// The long-text scan: text that no family claims in its first 64 KiB may
// still be a long CI or training log with an OOM message or a
// compute-sanitizer report further on. It is scanned whole for the first,
// then again for the second (a family whose own format may be followed by
// either, such as nvidia-smi's table, asks it first too). An input that
// comes once is kept in a temporary file for the second reading.

// analyzeUnclaimed reads an input no family claimed, for gpuleak analyze.
func analyzeUnclaimed(r *runner, in *parse.Input, head []byte) (report.Input, []report.Finding, error) {
	path := in.Name
	if err := codePickleError(path, head); err != nil {
		return report.Input{}, nil, err
	}
	if !isText(head) {
		if n, at := textThenBinary(head); n > 0 {
			rin, fact, err := readTextThenBinary(in, n, at)
			if err != nil {
				return report.Input{}, nil, err
			}
			r.oom.add(fact)
			return rin, nil, nil
		}
		return report.Input{}, nil, unrecognised(path)
	}
	// head is the reader's buffer (Peek): the long-text scan reads on and
	// overwrites it in an input longer than it. The tests after the scan
	// look at the input's start.
	head = bytes.Clone(head)
	rr, err := newRereader(in, path)
	if err != nil {
		return report.Input{}, nil, err
	}
	defer rr.Close()
	if rin, fs, ok, err := analyzeLongText(r, in, head, rr); ok || err != nil {
		return rin, fs, err
	}
	if err := toolErrorIn(path, head); err != nil {
		return report.Input{}, nil, err
	}
	if looksLikeHeaderlessCSV(head) {
		return report.Input{}, nil, &parse.Error{File: path, Offset: 0, Err: parse.ErrUnknownFormat,
			Msg: "unrecognised comma-separated values: if this is nvidia-smi CSV without a header (--format=csv,noheader), give its fields in order with --fields (as passed to --query-gpu or --query-compute-apps, e.g. --fields timestamp,index,memory.used,memory.total)"}
	}
	if err := smiXMLError(path, head); err != nil {
		return report.Input{}, nil, err
	}
	if n, msg, ok := nvml.QTextExcerpt(head); ok {
		return report.Input{}, nil, &parse.Error{File: path, Offset: -1, Line: n, Err: parse.ErrUnknownFormat, Msg: msg}
	}
	if n, msg, ok := nvml.XMLExcerpt(head); ok {
		return report.Input{}, nil, &parse.Error{File: path, Offset: -1, Line: n, Err: parse.ErrUnknownFormat, Msg: msg}
	}
	if hint := toolErrorHint(head); hint != "" {
		e := unrecognised(path).(*parse.Error)
		e.Msg += hint
		return report.Input{}, nil, e
	}
	if r.o.PlainLogs {
		// Read whole by the long-text scan: no OOM message, no
		// compute-sanitizer report, no tool's error. Or read up to where
		// its gzip stream is cut short: then said so, never as whole.
		return markCut(report.Input{Path: path, Format: string(pytorchtext.FormatOOMMessage), Warnings: []string{
			"no CUDA out-of-memory message in it, nor anything else gpuleak reads (a snapshot, memory_summary(), a compute-sanitizer report, NVML samples): read as a log of a run without an OOM, for --fail-on oom"}}, in.ReadToCut()), nil, nil
	}
	if err := printoutError(path, head); err != nil {
		return report.Input{}, nil, err
	}
	return report.Input{}, nil, unrecognised(path)
}

// smiXMLError is the error for nvidia-smi's XML report (nvidia-smi -q -x)
// after text the NVML reader does not skip (its XML is read when it
// starts the input, after prompts and Markdown fences); nil when head
// holds none.
func smiXMLError(path string, head []byte) error {
	if i := bytes.Index(head, []byte("<nvidia_smi_log")); i >= 0 {
		return &parse.Error{File: path, Offset: int64(i), Err: parse.ErrUnknownFormat,
			Msg: "nvidia-smi's XML (nvidia-smi -q -x) after other text: give the XML alone, from its <?xml line, or samples over time (nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 1)"}
	}
	return nil
}

// analyzeLongText scans text whole for an OOM message, then reads it again
// (through rr) as a compute-sanitizer log. ok is false when it holds
// neither.
func analyzeLongText(r *runner, in *parse.Input, head []byte, rr *rereader) (report.Input, []report.Finding, bool, error) {
	if rin, fs, ok, err := analyzeUnrecognisedText(r, in, head); ok || err != nil {
		return rin, fs, ok, err
	}
	again, err := rr.again()
	if err != nil {
		return report.Input{}, nil, false, err
	}
	defer again.Close()
	rin, fs, err := analyzeSanitizer(r, again, head, sanitizer.FormatText)
	if errors.Is(err, parse.ErrNotMine) {
		return report.Input{}, nil, false, nil
	}
	return rin, fs, err == nil, err
}

// analyzeUnrecognisedText reads text no family claimed by its first bytes
// as a log: an OOM message may come after them. ok is false when the
// input is not text or holds no OOM message nor memory summary.
func analyzeUnrecognisedText(r *runner, in *parse.Input, head []byte) (rin report.Input, fs []report.Finding, ok bool, err error) {
	if !isText(head) {
		return report.Input{}, nil, false, nil
	}
	res, meta, cut, err := readOOMText(in, pytorchtext.FormatOOMMessage)
	if err != nil || (len(res.Messages) == 0 && len(res.Stats) == 0) {
		return report.Input{}, nil, false, err
	}
	format := textFormat(pytorchtext.FormatOOMMessage, res)
	r.oom.add(anoom.Input{Path: in.Name, Format: string(format), Text: res})
	return markCut(report.FromOOMText(in.Name, string(format), meta.Warnings.Strings(), res), cut), nil, true, nil
}
