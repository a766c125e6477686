package pytorchtext

import (
	"slices"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// Printer names the program or library whose words an out-of-memory
// message is in: "PyTorch" for PyTorch's forms (2.x, 1.x, async, mps, 0.x,
// 1eb, cut, cpu, and a CUDA error raised as a torch exception); another
// framework's name for its forms (Framework: "CuPy", "XLA", "TensorFlow",
// "PaddlePaddle", "ONNX Runtime"; "Theano" for libgpuarray's); the serving
// engine of a KV cache failure ("vLLM", "SGLang", "TGI"); "HAMi-core";
// "Accelerate" for its batch size finder; for a CUDA error, the library
// whose status it is ("cuBLAS", "NCCL", "TensorRT", "llama.cpp", "CUDA
// driver", "CUDA runtime"), or "CUDA" where the words name none (c10's
// "CUDA error: out of memory" outside a torch exception is also other
// programs' words); "unparsed" for a message not read, unless a torch
// exception raised it (PyTorch's then).
func Printer(m Message) string {
	switch m.Generation {
	case Gen2, Gen1, GenAsync, GenMPS, GenTHC, GenExa, GenCut, GenCPU:
		return "PyTorch"
	case GenKVCache:
		if e := KVCacheEngine(m.Text); e != "" {
			return e
		}
		return "an LLM serving engine"
	case GenHAMi:
		return "HAMi-core"
	case GenBatchFinder:
		return "Accelerate"
	case GenUnparsed:
		if strings.HasPrefix(m.Exception, "torch.") {
			// torch.OutOfMemoryError (or another torch exception)
			// raised it: PyTorch's, whatever its words.
			return "PyTorch"
		}
		return "unparsed"
	case GenCUDAError:
		if strings.HasPrefix(m.Exception, "torch.") || strings.HasPrefix(m.Exception, "c10::") {
			// A torch exception, or the C++ one PyTorch's checks throw
			// (c10::Error, its type on a terminate handler's line).
			return "PyTorch"
		}
		if strings.Contains(m.Prefix, "GpuArrayException") || strings.Contains(m.Prefix, "gpudata_alloc") {
			// libgpuarray's status ("gpudata_alloc: cuMemAlloc:
			// CUDA_ERROR_OUT_OF_MEMORY"), which Theano's gpuarray
			// back-end raises.
			return "Theano"
		}
		if m.Printer == GGMLPrinter {
			return "llama.cpp"
		}
		switch l := Library(m.Text); l {
		case "":
			return m.Backend // "CUDA", "HIP"
		case "llama.cpp (ggml)":
			return "llama.cpp"
		default:
			return strings.TrimPrefix(l, "the ")
		}
	}
	if f := Framework(m.Generation); f != "" {
		return f
	}
	return string(m.Generation)
}

// pytorchPrinters are the printers (see Printer) whose messages a PyTorch
// program's log holds beside PyTorch's own: CUDA's and its libraries'
// statuses, which PyTorch raises with their words, and the libraries that
// run inside a PyTorch process (Accelerate, NCCL, HAMi-core). They do not
// make a log another framework's; they do not make it PyTorch's either.
var pytorchPrinters = []string{"CUDA", "HIP", "cuBLAS", "cuDNN", "cuFFT", "cuSOLVER", "cuSPARSE",
	"CUDA driver", "CUDA runtime", "NCCL", "HAMi-core", "Accelerate", "unparsed"}

// LogFormat is the format of a log (read as FormatOOMMessage) whose
// out-of-memory messages were printed by printers (see Printer):
// FormatOOMMessage when none was read (the content was recognised as
// that) or when PyTorch printed at least one and every other printer is
// one a PyTorch program's log holds too; FormatOOMLog otherwise (another
// framework's messages, or only CUDA errors whose words do not tell
// whose).
func LogFormat(printers []string) parse.Format {
	if len(printers) == 0 {
		return FormatOOMMessage
	}
	torch := false
	for _, p := range printers {
		switch {
		case p == "PyTorch":
			torch = true
		case !slices.Contains(pytorchPrinters, p):
			return FormatOOMLog
		}
	}
	if !torch {
		return FormatOOMLog
	}
	return FormatOOMMessage
}
