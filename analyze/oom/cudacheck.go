package oom

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// checkNote is the note of a CUDA runtime or driver out-of-memory error
// that a program's own error check printed, where its words name the
// program (pytorchtext.CheckProgram): XGBoost, RMM, AMReX, NVHPC's
// OpenACC runtime, a macro's owner. ok is false when they name none.
// Sizes are said only where the text printed them (XGBoost's "Free
// memory" and "Requested memory" lines after its error).
func (r *Report) checkNote(lib string) (note string, ok bool) {
	prefix := ""
	if r.msg != nil {
		// The exception's type is the program's word too (a C++
		// exception's, "thrust::system::system_error").
		prefix = r.msg.Exception + " " + r.msg.Prefix
	}
	who, call := pytorchtext.CheckProgram(prefix, r.Text)
	if r.msg != nil && r.msg.Printer != "" {
		who = r.msg.Printer // named by the lines around it
	}
	if pytorchtext.RMMPoolLimit(r.Text) {
		return "RMM's pool memory resource (RAPIDS' memory manager, under cuDF, cuML, cupoch) refused to grow its pool past its maximum_pool_size (\"Maximum pool size exceeded\"): no CUDA allocation failed, the pool's limit was reached, by this request together with what the pool already held (its blocks stay in the pool when freed, and a fragmented pool may lack one free run of the size); the message has no sizes; a larger maximum_pool_size (rmm.reinitialize, or the program's own pool setting, such as cupoch's initialize_allocator) or fewer buffers alive at once make room", true
	}
	if who == "" {
		return "", false
	}
	what := "a CUDA call the message does not name"
	switch {
	case call == "" && strings.Contains(r.Text, "cudaErrorMemoryAllocation") && strings.HasPrefix(who, "XGBoost"):
		what = "an allocation (its allocator's cudaMalloc)"
	case call == "" && strings.HasPrefix(who, "thrust (its bad_alloc"):
		what = "an allocation (thrust's device allocator: a device_vector's storage, or an algorithm's temporary buffer)"
	case call != "" && (strings.HasPrefix(call, "cudaMalloc") || strings.HasPrefix(call, "cuMemAlloc") || strings.HasPrefix(call, "cuMemCreate")):
		what = "an allocation (" + call + ")"
	case call != "":
		what = "the call " + call + " (which needs memory of its own, or reports an earlier allocation's failure)"
	}
	sizes := "the message has no sizes"
	if r.known(r.RequestedBytes) && r.known(r.DeviceFreeBytes) {
		sizes = fmt.Sprintf("XGBoost printed the request, %s, and the GPU's free memory at the failure, %s (cudaMemGetInfo), on the lines after its error", r.size(r.RequestedBytes), r.size(r.DeviceFreeBytes))
		if r.RequestedBytes > r.DeviceFreeBytes {
			sizes += fmt.Sprintf(": the request was %s more than was free", r.sizeFrom(r.RequestedBytes-r.DeviceFreeBytes, r.RequestedBytes, r.DeviceFreeBytes))
		}
		sizes += "; the GPU's total and what held the rest are not printed"
	} else if r.known(r.RequestedBytes) {
		sizes = fmt.Sprintf("the request was %s; nothing else of the GPU is printed", r.size(r.RequestedBytes))
	}
	code := "cudaErrorMemoryAllocation"
	advice := "nvidia-smi at the time would tell what held the GPU (this program's own buffers, or other processes)"
	switch lib {
	case "the CUDA driver":
		code = "CUDA_ERROR_OUT_OF_MEMORY"
	case "the HIP runtime":
		code = "hipErrorOutOfMemory"
		what = strings.Replace(what, "CUDA call", "HIP call", 1)
		advice = "rocm-smi at the time would tell what held the GPU (this program's own buffers, or other processes)"
	}
	switch {
	case strings.HasPrefix(who, "XGBoost"):
		advice = "XGBoost's GPU training keeps the training matrix (its quantised pages), the gradients and the histograms on the GPU: a smaller max_bin or max_depth, fewer rows per GPU (Dask across GPUs, or external memory), or a GPU free of other processes (nvidia-smi) make room"
	case strings.HasPrefix(who, "AMReX") && strings.Contains(r.Text, "AMReX_Arena"):
		advice = "AMReX's arena allocates three quarters of the GPU's memory at start-up by default (amrex.the_arena_init_size): other processes on the GPU, or several MPI ranks sharing it, leave it no room; amrex.the_arena_init_size=0 (or a smaller size) lets it grow as needed, and nvidia-smi at the time would tell what held the GPU"
	case strings.HasPrefix(who, "NVHPC"):
		advice = "the OpenACC runtime allocates device copies of the arrays of data regions (enter data, copyin, create) as the program reaches them: nvidia-smi at the time, or NV_ACC_NOTIFY=2 (which logs each allocation), would tell what held the GPU; fewer arrays resident at once, a smaller problem per GPU, or more GPUs (MPI ranks) make room"
	}
	return who + " reported " + lib + "'s out-of-memory error (" + code + ", error 2) for " + what + ": the GPU had no room for it; " + sizes + "; " + advice, true
}

// CheckProgram names the program whose own CUDA error check printed the
// report's GenCUDAError message (pytorchtext.CheckProgram: "XGBoost",
// "AMReX (...)", RMM's pool), "" when its words name none.
func (r Report) CheckProgram() string {
	if r.Generation != pytorchtext.GenCUDAError {
		return ""
	}
	prefix := ""
	if r.msg != nil {
		prefix = r.msg.Exception + " " + r.msg.Prefix
	}
	if pytorchtext.RMMPoolLimit(r.Text) {
		return "RMM's pool memory resource"
	}
	if r.msg != nil && r.msg.Printer != "" {
		return r.msg.Printer // named by the lines around it
	}
	who, _ := pytorchtext.CheckProgram(prefix, r.Text)
	return who
}
