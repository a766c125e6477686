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
	switch pytorchtext.CheckForm(r.Text) {
	case "spill":
		what := "an allocation"
		if r.known(r.RequestedBytes) {
			what = "an allocation of " + r.size(r.RequestedBytes) + " (as dask's format_bytes printed it, two decimals)"
		}
		return "RMM could not make " + what + " and the spill manager on it (dask-cuda's or cuDF's spill-on-demand, a failure callback on RMM's memory resource) found no device memory it could spill to the host (\"spill-on-demand couldn't find any device memory to spill\"), so the allocation failed: the GPU was full of memory the spill manager cannot move (buffers in use by a task, exposed to other libraries as raw pointers, or held outside it: other processes, a CUDA context, a pool); nothing else of the GPU is printed (the ProxyManager or spill statistics after it tell what it held on the device); smaller partitions, a lower device_memory_limit (spilling earlier), or fewer workers per GPU make room", true
	case "thrust-launch":
		return "thrust reported the CUDA runtime's out-of-memory error (cudaErrorMemoryAllocation, error 2) at its parallel_for (\"parallel_for failed\", a kernel launch through cub, under for_each, transform, fill and most of its algorithms): a launch allocates no device memory but its threads' local memory, so the error was most likely reported there asynchronously, an earlier allocation or launch on the device having failed (CUDA returns a sticky or pending error at the next call), not this launch's own; the message has no sizes; " + asyncCheckAdvice, true
	case "torch-memory-saver":
		return "torch_memory_saver (SGLang's and verl's sleep mode, through its CURESULT_CHECK) could not get physical memory from the CUDA driver (result=2, CUDA_ERROR_OUT_OF_MEMORY, in its cu_mem_create: cuMemCreate) when it mapped a region back (resuming the weights or the KV cache after the trainer's step): the GPU had no room for it, most often because the training side's memory (parameters, optimizer state, activations, PyTorch's cached blocks) was still held when the engine woke; the message has no sizes; a lower mem-fraction-static (gpu_memory_utilization), offloading the trainer's parameters and optimizer (param_offload, optimizer_offload) or emptying PyTorch's cache (torch.cuda.empty_cache()) before the wake-up make room", true
	}
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

// asyncCheckAdvice is what a CUDA error reported at a call that
// allocates nothing (a launch, a synchronization) needs to be placed.
const asyncCheckAdvice = asyncBlocking + ", and nvidia-smi at the time would tell what held the GPU"

// asyncBlocking is how to make the call that failed report its own
// error.
const asyncBlocking = "CUDA_LAUNCH_BLOCKING=1 (each launch waits for its kernel) or compute-sanitizer makes the failing call report its own error"

// frameworkCheckNote is the note of a framework's own check that its
// memory ran out (pytorchtext.CheckForm): CatBoost's GPU memory pool,
// PaddlePaddle's start-up chunk, an OpenCL buffer (Boost.Compute). The
// figures are those its words print: CatBoost's in MiB (its MB is
// 1024*1024), PaddlePaddle's in bytes.
func (r *Report) frameworkCheckNote(lib string) string {
	switch lib {
	case "CatBoost":
		sizes := "the message's figures were not read"
		if free := int64(-1); r.msg != nil && r.known(r.RequestedBytes) && r.msg.Free >= 0 {
			free = r.msg.Free // the pool's, not the GPU's (not DeviceFreeBytes)
			sizes = fmt.Sprintf("it asked for %s and the pool's last free block held %s (CatBoost's MB is MiB; the GPU's own free memory is not printed)", r.size(r.RequestedBytes), r.size(free))
			if r.RequestedBytes > free {
				sizes += fmt.Sprintf(", %s short", r.sizeFrom(r.RequestedBytes-free, r.RequestedBytes, free))
			}
		}
		return "CatBoost's GPU memory pool (NCudaLib::TOutOfMemoryError from its stack-like pool) had no free block for a buffer: " + sizes + "; the pool is the memory CatBoost took from the GPU at start-up (gpu_ram_part, 0.95 of the GPU's free memory by default), so its free block is the pool's, not the GPU's, and no CUDA call failed; the training's buffers (the quantized features, border_count, depth, the number of rows) need more than the pool holds: a larger gpu_ram_part on a GPU free of other processes, a smaller border_count, max_ctr_complexity or depth, fewer rows, or more GPUs (devices) make room"
	case "PaddlePaddle":
		sizes := "the message's figures were not read"
		if r.known(r.RequestedBytes) && r.known(r.DeviceFreeBytes) {
			sizes = fmt.Sprintf("it wanted %s and the GPU had %s free (cudaMemGetInfo, exact bytes)", r.size(r.RequestedBytes), r.size(r.DeviceFreeBytes))
		}
		return "PaddlePaddle refused to start its GPU allocator (\"enforce allocating <= available failed\", GpuMaxChunkSize in gpu_info.cc): the first chunk it takes, FLAGS_fraction_of_gpu_memory_to_use of the GPU's memory less 5%, was more than the GPU had free; " + sizes + "; no allocation was made, the GPU was already held by something else (other processes, or another framework in this one): a GPU free of other processes (nvidia-smi), or a lower FLAGS_fraction_of_gpu_memory_to_use, makes room"
	}
	return "an OpenCL device could not allocate a buffer's memory (CL_MEM_OBJECT_ALLOCATION_FAILURE, as Boost.Compute's opencl_error words it, \"Memory Object Allocation Failure\"; LightGBM's GPU version and other programs on Boost.Compute), outside any PyTorch allocator: the message has no sizes; the device's memory was full, or one buffer asked for more than the device allows in one piece (CL_DEVICE_MAX_MEM_ALLOC_SIZE, a quarter of the memory on many devices), which the text cannot tell apart; for LightGBM, a smaller max_bin or num_leaves, or fewer rows, need smaller buffers, and the GPU's own monitor at the time would tell what held it"
}
