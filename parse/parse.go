// Package parse holds what every input family shares: the Format of an
// input, errors and warnings that carry a position (Error, Diagnostic,
// Warnings), Open, which reads a file or
// standard input and removes gzip compression by its magic bytes, and the
// shell of a streaming reader (TableReader, TableBuilder, ReaderOptions).
//
// Each input family lives in a sub-package (parse/pytorch, ...) that turns
// bytes into Apache Arrow record batches with a documented schema; its
// Reader embeds a TableReader, so that every family reads alike.
// pipeline recognises which family an input belongs to by content (each
// family's package exports its Sniff).
package parse

import (
	"fmt"
)

// Format names an input format recognised by content. The string values
// appear in reports (the "format" of each input) and are stable.
type Format string

// Formats gpuleak recognises.
const (
	FormatUnknown         Format = ""
	FormatPyTorchSnapshot Format = "pytorch-snapshot"      // torch.cuda.memory._dump_snapshot() pickle
	FormatSanitizer       Format = "compute-sanitizer"     // compute-sanitizer / cuda-memcheck text log
	FormatSanitizerXML    Format = "compute-sanitizer-xml" // compute-sanitizer --xml --save file

	// NVML sample logs, read by parse/nvml into its samples table.
	FormatNvidiaSmiQueryGPU  Format = "nvidia-smi-query-gpu"  // nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]
	FormatNvidiaSmiQueryApps Format = "nvidia-smi-query-apps" // nvidia-smi --query-compute-apps=... --format=csv[,noheader][,nounits]
	FormatNvidiaSmiDmon      Format = "nvidia-smi-dmon"       // nvidia-smi dmon text (-s m, -s mu, ...; -o DT, -o T or none)
	FormatNvidiaSmiPmon      Format = "nvidia-smi-pmon"       // nvidia-smi pmon text (-s m, -s mu, ...; -o DT, -o T or none)
	FormatPynvmlJSONL        Format = "pynvml-jsonl"          // a pynvml sampler's JSON lines: ts, gpu, uuid, total, used, free, reserved, processes
	FormatGpustatJSON        Format = "gpustat-json"          // gpustat --json documents, one per sample, pretty or one per line
	FormatDCGMPrometheus     Format = "dcgm-prometheus"       // DCGM exporter Prometheus text: DCGM_FI_DEV_FB_USED/FREE/TOTAL/RESERVED
	FormatNvidiaSmiText      Format = "nvidia-smi-text"       // nvidia-smi's default table or -q report, one or more outputs (gpustat text among them)
	FormatGpustatText        Format = "gpustat-text"          // gpustat's text output, one or more

	// PyTorch text (package parse/pytorchtext).
	FormatOOMText       Format = "pytorch-oom-message"    // a log or traceback with CUDA out-of-memory messages
	FormatMemorySummary Format = "pytorch-memory-summary" // torch.cuda.memory_summary() text
	FormatMemoryStats   Format = "pytorch-memory-stats"   // torch.cuda.memory_stats() as JSON

	// PyTorch profiler outputs (package parse/kineto).
	FormatKinetoTrace        Format = "pytorch-profiler-trace"       // torch.profiler export_chrome_trace JSON (Kineto)
	FormatMemoryTimeline     Format = "pytorch-memory-timeline"      // export_memory_timeline .json: [times_us, sizes by category]
	FormatMemoryTimelineRaw  Format = "pytorch-memory-timeline-raw"  // export_memory_timeline .raw.json.gz: [[ts_ns, action, bytes, category], ...]
	FormatMemoryTimelineHTML Format = "pytorch-memory-timeline-html" // export_memory_timeline .html: a picture only
)

// Kind is a sentinel error that classifies an *Error for errors.Is without
// adding its text to the message, which already says it in words.
type Kind struct{ name string }

// NewKind returns a new sentinel.
func NewKind(name string) *Kind { return &Kind{name} }

func (k *Kind) Error() string { return k.name }

// ErrNotMine is returned (wrapped) by a parser when the input is not in its
// format at all, as opposed to an *Error, which means "mine, but broken".
var ErrNotMine = NewKind("not this format")

// ErrUnknownFormat is returned when no parser recognises an input.
var ErrUnknownFormat = NewKind("unrecognised input format")

// Error reports malformed input at a position. Offset is a byte offset
// from the start of the (decompressed) input, or -1 when the input is
// line-oriented and Line says where; Line is 1-based, 0 when unknown.
// Err, when set, is the underlying cause and is returned by Unwrap.
type Error struct {
	File   string
	Offset int64
	Line   int
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	var pos string
	switch {
	case e.Line > 0:
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	case e.Offset >= 0:
		pos = fmt.Sprintf("%s: byte offset %d", e.File, e.Offset)
	default:
		pos = e.File
	}
	msg := e.Msg
	if _, kind := e.Err.(*Kind); e.Err != nil && !(kind && msg != "") {
		if msg == "" {
			msg = e.Err.Error()
		} else {
			msg += ": " + e.Err.Error()
		}
	}
	return pos + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at a byte offset.
func Errorf(file string, offset int64, format string, args ...any) *Error {
	return &Error{File: file, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// LineErrorf returns an *Error at a 1-based line.
func LineErrorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Offset: -1, Line: line, Msg: fmt.Sprintf(format, args...)}
}
