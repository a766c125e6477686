package pytorchtext

import "github.com/gpuleak/gpuleak/parse"

// The formats this package reads. The string values appear in reports
// (each input's "format") and are stable.
const (
	// FormatOOMMessage is a log or traceback holding CUDA out-of-memory
	// messages (torch.OutOfMemoryError, RuntimeError: CUDA out of memory).
	FormatOOMMessage parse.Format = "pytorch-oom-message"
	// FormatOOMLog is a log read as FormatOOMMessage whose out-of-memory
	// messages are not (all) PyTorch's: another framework's (TensorFlow,
	// JAX/XLA, CuPy, PaddlePaddle, ONNX Runtime, TensorRT, llama.cpp, an
	// LLM serving engine's KV cache), or only CUDA errors whose words do
	// not tell which program printed them (see LogFormat). Each OOM's
	// form is its message_generation; the input lists the printers.
	FormatOOMLog parse.Format = "oom-log"
	// FormatMemorySummary is the text of torch.cuda.memory_summary().
	FormatMemorySummary parse.Format = "pytorch-memory-summary"
	// FormatMemoryStats is torch.cuda.memory_stats() written as JSON.
	FormatMemoryStats parse.Format = "pytorch-memory-stats"
)
