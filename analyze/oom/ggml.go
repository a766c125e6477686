package oom

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// ggmlRepeat reports whether m is the llama.cpp allocation failure that r
// holds, printed again: the same words ("allocating 9866.00 MiB on device
// 1: cudaMalloc failed: out of memory"), so the same buffer on the same
// device.
func ggmlRepeat(r *Report, m Message) bool {
	return r.msg != nil && r.msg.Text == m.Text && pytorchtext.Library(m.Text) == "llama.cpp (ggml)"
}

// ggmlAgain judges m, a llama.cpp allocation failure with r's words,
// printed again in the input at path after r's last line there. llama.cpp
// logs each failure once, with its chain of callers ("ggml_gallocr_
// reserve_n: failed to allocate CUDA1 buffer", "llama_kv_cache_update_impl:
// failed to allocate compute buffers"); a line of its log that shows it
// went on between the two (the earlier failure's caller returning its
// error, a request served: Message.ProgressLine) makes m another call
// that failed the same way, returned new (true) and chained from r (a
// server that kept running fails again at each request that needs the
// buffer). Without such a line, m is read as r printed again, with a
// note. A message r's OOM has not been printed with in this input is r's
// (the same OOM in several files).
func ggmlAgain(r *Report, m Message, path string) (*Report, bool) {
	r, prev := lastPrinted(r, path)
	if prev == 0 || m.Line <= prev {
		return r, false
	}
	if m.ProgressLine <= prev {
		r.Notes = append(r.Notes, fmt.Sprintf("%s:%d prints this failure again with no line of llama.cpp's or Ollama's between that shows it went on (the failure's caller logging its error, a request served, another load request): read as this OOM printed twice; the text cannot tell that from a second call that failed at once", path, m.Line))
		return r, false
	}
	return r.another(fmt.Sprintf("%s:%d prints this failure again after line %d showed llama.cpp went on (the failure's caller logged its error, a request was served, or Ollama sent another load request): llama.cpp logs each failure once, so that is another call that failed the same way, counted as another OOM", path, m.Line, m.ProgressLine),
		fmt.Sprintf("the same failure as %s:%d, again after line %d showed llama.cpp went on (the failure's caller logged its error, a request was served, or Ollama sent another load request): llama.cpp logs each failure once, so this is another call that failed, another OOM with the same figures", path, prev, m.ProgressLine)), true
}

// another starts the OOM that a message printed again is counted as
// (r.again), with its note, and adds firstNote to r, the one before.
func (r *Report) another(firstNote, againNote string) *Report {
	n := &Report{Device: -1}
	n.clear()
	r.again = n
	r.Notes = append(r.Notes, firstNote)
	n.Notes = append(n.Notes, againNote)
	return n
}

// ggmlStatusNote is the note of a runtime's out-of-memory string that
// llama.cpp's ggml error function printed with its device line
// (pytorchtext.GGMLPrinter): the device and the place are read, the call
// is on the line after.
func (r *Report) ggmlStatusNote() string {
	on := ""
	if r.Device >= 0 {
		on = fmt.Sprintf(" on device %d (the device current at the check, ggml's index among the GPUs it uses)", r.Device)
	}
	where := ""
	if r.Frame.Filename != "" {
		where = " in " + frameString(r.Frame)
	}
	call := ""
	if r.msg != nil {
		call = r.msg.Call
	}
	what := "a buffer it allocates whole (the model's weights, its KV cache, a compute buffer, or its memory pool's growth: cuMemCreate, cuMemSetAccess, cudaMalloc, on the line after) found no room"
	switch {
	case call != "" && allocatingCall(call):
		what = "its call " + call + " (an allocation: the model's weights, its KV cache, a compute buffer, or its memory pool's growth) found no room"
	case call != "":
		// A launch, a copy or a synchronization: no buffer of its own
		// (a launch's kernels may still need local memory, which the
		// driver grows at the launch: hence "most likely").
		what = "its call " + call + " allocates no buffer of its own (a kernel or graph launch, a copy or a synchronization), so the error was most likely reported there asynchronously: an earlier allocation or launch on the device failed and CUDA returned its error at this later call, which the text does not name (a launch can also fail itself, for the local memory its kernels need, which the text cannot tell apart); " + asyncBlocking
	}
	return "llama.cpp's ggml backend (ggml_cuda_error) reported the runtime's out-of-memory error" + on + where + ", outside any PyTorch allocator: " + what + "; the message has no sizes; llama.cpp's own log before it (the buffer sizes it printed per device) and nvidia-smi at the time tell what held the GPU; fewer layers on the GPU (--n-gpu-layers), a smaller context (--ctx-size) or batch (--ubatch-size), a quantized KV cache (--cache-type-k/-v) or another split across GPUs (--tensor-split) need less"
}

// allocatingCall reports whether call, a CUDA, HIP or MUSA runtime or
// driver function a check named, allocates device memory (cudaMalloc,
// cudaMallocAsync, cuMemCreate, cuMemAlloc, cuMemSetAccess and cuMemMap,
// which back a virtual range with memory, hipMalloc, musaMalloc, a
// library handle's creation, a graph's instantiation); a launch, a copy
// or a synchronization does not, and reports earlier failures.
func allocatingCall(call string) bool {
	for _, p := range []string{"cudaMalloc", "cuMemAlloc", "cuMemCreate", "cuMemSetAccess", "cuMemMap", "hipMalloc", "hipMemCreate", "hipMemSetAccess", "hipMemMap",
		"hipExtMalloc", "musaMalloc", "muMemAlloc", "muMemCreate", "cublasCreate", "hipblasCreate", "cudaGraphInstantiate", "hipGraphInstantiate", "cudaStreamCreate", "cuCtxCreate"} {
		if strings.HasPrefix(call, p) {
			return true
		}
	}
	return false
}
