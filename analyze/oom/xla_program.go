package oom

import (
	"fmt"
	"strings"
)

// smallestGPU is less than any GPU that JAX or TensorFlow's XLA runs on
// holds (the smallest CUDA GPUs of compute capability 5.2 and later have
// 2 GiB): a compiled program whose total allocation is below it did not
// fill the GPU by itself.
const smallestGPU = 1 << 30

// xlaSmallProgramNote is the note of an XLA OOM whose "BufferAssignment
// stats" give the compiled program's total allocation, need bytes, where
// the figures show that the program alone did not fill the GPU: need is
// at most a quarter of the GPU's total where the inputs give it (the
// program fits three times in the 75% JAX takes by default), or, where
// they do not, below smallestGPU. The memory was
// then held outside the program's own buffers: arrays of this process
// still alive (each call's results stay until dropped), XLA's
// preallocation (JAX takes 75% of each visible GPU at start by default,
// every JAX process does), or other processes. req is the request's
// words. ok is false when the figures do not show it.
func (r *Report) xlaSmallProgramNote(req string, need int64) (note string, ok bool) {
	var against string
	switch {
	case r.known(r.DeviceTotalBytes):
		if need > r.DeviceTotalBytes/4 {
			return "", false
		}
		against = fmt.Sprintf("%s of the GPU's %s", r.size(need), r.size(r.DeviceTotalBytes))
	case need < smallestGPU:
		against = fmt.Sprintf("%s, far less than any GPU that XLA runs on holds (1 GiB and more)", r.size(need))
	default:
		return "", false
	}
	return fmt.Sprintf("XLA (JAX, or TensorFlow's XLA) could not allocate %s (RESOURCE_EXHAUSTED), yet the \"BufferAssignment stats\" XLA printed after it give the compiled program's total allocation (its parameters, outputs and temporaries, needed at once) as %s: the program alone did not fill the GPU, so the memory was held outside its buffers: arrays of this process still alive (each call's results, and arrays kept in Python, stay on the GPU until dropped; jax.live_arrays() lists them), XLA's preallocation (JAX takes 75%% of each visible GPU at start by default, so two JAX processes on one GPU leave the second little: XLA_PYTHON_CLIENT_PREALLOCATE=false, XLA_PYTHON_CLIENT_MEM_FRACTION), or other processes (nvidia-smi at the time); the message names no device and gives no free memory, so which of these it was cannot be told from it", req, against), true
}

// tfEigenNote is the note of TensorFlow 1.x's EigenAllocator failure, a
// FATAL record: the GPU device's allocator for Eigen's own buffers could
// not allocate, and TensorFlow aborted. A request of 0 bytes fails only
// when the allocator fails whatever is asked (the BFC allocator's log
// before it, "tried to allocate 0 bytes", says so too), so its size
// tells nothing of what filled the memory.
func tfEigenNote(r *Report) string {
	req := r.requestWords("")
	if strings.HasPrefix(r.Text, "EigenAllocator for GPU ran out of memory when allocating 0.") {
		// A figure of 0 is no request (RequestedBytes stays unknown).
		req = "0 bytes (a request of nothing, which fails only when the allocator fails whatever is asked: its size tells nothing of what filled the memory)"
	}
	return "TensorFlow's GPU device could not allocate " + req + " for Eigen (EigenAllocator, in a FATAL record: LOG(FATAL) aborts the process); the record gives no other figure and names no GPU index; the BFC allocator's log before it (\"ran out of memory trying to allocate\", \"Sum Total of in-use chunks\") tells what was in use, and nvidia-smi at the time what other processes held"
}
