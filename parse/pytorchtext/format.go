package pytorchtext

import "github.com/gpuleak/gpuleak/parse"

// The formats this package reads. The string values appear in reports
// (each input's "format") and are stable.
const (
	// FormatOOMMessage is a log or traceback holding CUDA out-of-memory
	// messages (torch.OutOfMemoryError, RuntimeError: CUDA out of memory).
	FormatOOMMessage parse.Format = "pytorch-oom-message"
	// FormatMemorySummary is the text of torch.cuda.memory_summary().
	FormatMemorySummary parse.Format = "pytorch-memory-summary"
	// FormatMemoryStats is torch.cuda.memory_stats() written as JSON.
	FormatMemoryStats parse.Format = "pytorch-memory-stats"
)
