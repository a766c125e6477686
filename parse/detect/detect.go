// Package detect recognises the format of an input from its first bytes,
// never from its name.
package detect

import (
	"bytes"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorch"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
)

// Detect returns the format of an input whose (decompressed) content
// starts with head, at most parse.SniffLen bytes. It returns
// parse.FormatUnknown when no family claims the input.
func Detect(head []byte) parse.Format {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	switch {
	case pytorch.Sniff(head):
		return parse.FormatPyTorchSnapshot
	}
	if f := kineto.SniffFormat(head); f != parse.FormatUnknown {
		return f
	}
	if f, ok := sanitizer.Sniff(head); ok {
		return f
	}
	// NVML sample logs: nvidia-smi CSV, dmon/pmon, pynvml, gpustat, DCGM.
	if f := nvml.Sniff(head); f != parse.FormatUnknown {
		return f
	}
	// PyTorch text. The OOM message test is the weakest (a phrase anywhere
	// in text): keep it after the other text families.
	switch {
	case pytorchtext.SniffStats(head):
		return parse.FormatMemoryStats
	case pytorchtext.SniffSummary(head):
		return parse.FormatMemorySummary
	case pytorchtext.SniffOOM(head):
		return parse.FormatOOMText
	}
	return parse.FormatUnknown
}
