package pytorchtext

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// Generation names the form of an out-of-memory message, by the PyTorch
// releases that printed it. The string values appear in the messages
// table and are stable.
type Generation string

// Message generations.
const (
	// Gen2: PyTorch 2.1 and later, "Tried to allocate A. GPU d has a total
	// capacity of T of which F is free. ..." (2.1 spells it "capacty").
	Gen2 Generation = "2.x"
	// Gen1: PyTorch 1.x to 2.0, "Tried to allocate A (GPU d; T total
	// capacity; X already allocated; F free; [N allowed; ]R reserved in
	// total by PyTorch)"; releases before 1.5 end with "R cached)".
	Gen1 Generation = "1.x"
	// GenCUDAError: "CUDA error: out of memory", a CUDA call outside the
	// caching allocator failed (cuBLAS or cuDNN handles, NCCL, a CUDA
	// context); or a CUDA library's own out-of-memory status (see
	// Library): CUBLAS_STATUS_ALLOC_FAILED, CUDNN_STATUS_ALLOC_FAILED,
	// CUFFT_ALLOC_FAILED, CUSOLVER_STATUS_ALLOC_FAILED,
	// CUSPARSE_STATUS_ALLOC_FAILED, the driver's CUDA_ERROR_OUT_OF_MEMORY,
	// the runtime's "cudaErrorMemoryAllocation: out of memory", NCCL's
	// "Cuda failure 'out of memory'". The status has no sizes; the words
	// logged around it may give the request (StreamExecutor's "failed to
	// allocate ... (N bytes)", XLA's cudaMallocAsync allocator's, llama.cpp's,
	// NCCL's next line "Failed to CUDA calloc N bytes"), the device
	// (NCCL's line prefix) and, from XLA's cudaMallocAsync allocator, the
	// GPU's free and total memory; no other figure.
	GenCUDAError Generation = "cuda-error"
	// GenExa: "CUDA out of memory. Tried to allocate more than 1EB
	// memory." (CUDACachingAllocator and CUDAMallocAsyncAllocator's
	// allocate(), every release since 1.x): the request was at least
	// 2^60 bytes, a size computed wrong (overflowed, negative, or received
	// corrupted), not a shortage. The message has no other figures.
	GenExa Generation = "1eb"
	// GenUnparsed: a line mentions a CUDA out-of-memory error but not in a
	// form above (edited, or another program's words). Nothing is read
	// from it: numbers are never guessed.
	GenUnparsed Generation = "unparsed"
	// GenCut: a message cut short (a log line's length limit, an issue
	// title) after its request: the figures printed whole before the cut
	// are read (Requested always; the GPU's, the processes' as far as
	// they go); Reason says where it ends, as a byte column.
	GenCut Generation = "cut"
	// GenAsync: PyTorch's cudaMallocAsync allocator
	// (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, ComfyUI's
	// default), c10/cuda/CUDAMallocAsyncAllocator.cpp: "Allocation on
	// device d would exceed allowed memory. (out of memory)" then, one per
	// line, "Currently allocated : A", "Requested : R", "Device limit : T",
	// "Free (according to CUDA): F" and "PyTorch limit (set by
	// user-supplied memory fraction) : L". A is what PyTorch allocated
	// and has not freed (pytorch_used_bytes: Allocated). Reserved is -1:
	// the memory PyTorch freed stays in CUDA's pool of this process
	// (PyTorch sets the pool's release threshold to UINT64_MAX and does
	// not trim it before raising; torch.cuda.memory_reserved() gives the
	// pool's size, cudaMemPoolAttrReservedMemCurrent), and the message does
	// not print it, so Total - Free - A is that pool's cached memory, this
	// process's CUDA context and other processes together (the form of
	// PyTorch 2.x's CUDAMallocAsyncAllocator.cpp). L is the cap, printed
	// as 17179869184.00 GiB (2^64 bytes) when none was set (Allowed -1
	// then). Reason is set when the figures were cut off; those read are
	// kept.
	GenAsync Generation = "async"
	// GenTHC: PyTorch 0.x (THC): "cuda runtime error (2) : out of memory
	// at FILE:LINE" and "THCudaCheck FAIL file=F line=L error=2 : out of
	// memory"; the message has no sizes.
	GenTHC Generation = "0.x"
	// GenMPS: PyTorch's Apple Metal (MPS) allocator,
	// aten/src/ATen/mps/MPSAllocator.mm: "MPS backend out of memory (MPS
	// allocated: R, other allocations: O[, max allowed: L]). Tried to
	// allocate A on private|shared pool." A text cut after O or L (an issue
	// title) keeps them, with Requested -1 and a Reason. R is the size of PyTorch's MPS
	// heaps (Reserved: allocated and cached alike, the message does not
	// split them); O is the rest of this process's Metal memory
	// (MTLDevice.currentAllocatedSize - R), so ProcessInUse is R + O; L is
	// the high watermark limit (Allowed; PYTORCH_MPS_HIGH_WATERMARK_RATIO
	// or torch.mps.set_per_process_memory_fraction times the device's
	// recommended working set), absent when the ratio is 0. Releases up to
	// 2.3 print sizes in "KB", "MB", "GB", powers of 1024 like the later
	// "KiB", "MiB", "GiB". The message has no device index, no total and
	// no free memory (unified memory): Device, Total and Free are -1.
	GenMPS Generation = "mps"
	// GenCuPy: CuPy's memory pool, cupy/cuda/memory.pyx
	// OutOfMemoryError: "Out of memory allocating N bytes (allocated so
	// far: T bytes)." with an optional ", limit set to: L bytes" (sizes
	// with thousands separators, "{:,}"), the "(allocated so far ...)"
	// part absent when the pool does not know it (total -1, CuPy 13); CuPy
	// before 5 (cupy/cupy#1912) printed "out of memory to allocate N bytes
	// (total T bytes)". N is Requested; T is the pool's bytes from CUDA,
	// used and cached (total_bytes(); releases add N to it), read as
	// Reserved; L is Allowed (set_limit). No device, total or free.
	GenCuPy Generation = "cupy"
	// GenXLA: XLA's allocators (JAX, TensorFlow's XLA), each after the
	// status "RESOURCE_EXHAUSTED: " ("Resource exhausted: " in older
	// releases): the BFC allocator's adapter,
	// xla/stream_executor/integrations/tf_allocator_adapter.cc, "Out of
	// memory while trying to allocate N bytes." (PJRT's BFC prints the
	// size in HumanReadableNumBytes form, "16.00GiB"); the StreamExecutor
	// allocator without a pool,
	// xla/stream_executor/device_memory_allocator.cc, "Failed to allocate
	// request for 32.00MiB (33554432B) on device ordinal 0" (Device is the
	// ordinal); the PJRT CPU client's host buffers (and the TFRT GPU
	// client's), "Out of memory allocating N bytes." (%d: no separators;
	// after a status, not CuPy's OutOfMemoryError). N is Requested;
	// nothing else is given. Text is the message as far as it was read
	// (a closing markdown "**" or a quote after it left out), so that the
	// same message printed twice reads the same.
	GenXLA Generation = "xla"
	// GenTF: TensorFlow's, after ResourceExhaustedError (also "... (see
	// above for traceback):", TF 1.x's OpError.__str__) or the status
	// "RESOURCE_EXHAUSTED: " ("Resource exhausted: " in TF 1.x):
	// OpKernelContext::allocate_tensor, tensorflow/core/framework/
	// op_kernel.cc, "OOM when allocating tensor with shape[S] and type T on
	// DEVICE by allocator A" (TF 1.0 stops after the shape); a device's
	// MakeTensorFromProto, gpu_device.cc, "OOM when allocating tensor of
	// shape [S] and type T"; TF 2's eager form, "failed to allocate memory
	// [Op:NAME]", after a "{{function_node __wrapped__NAME_device_DEVICE}}"
	// annotation from TF 2.11. The message gives a shape or nothing, not
	// bytes: no sizes are read; Device is the GPU index in
	// "/device:GPU:d" (TF 1.x: "/gpu:d"). A message that names the CPU
	// ("/device:CPU:0", "/cpu:0") is a host-memory failure: Host is set,
	// and the reader does not count it as an OOM.
	GenTF Generation = "tensorflow"
	// GenCPU: PyTorch's CPU allocator (DefaultCPUAllocator, TH's THAlloc)
	// could not allocate host memory (see host.go for the forms): Host is
	// always set, so the reader warns and makes no row. Requested is the
	// request where printed.
	GenCPU Generation = "cpu"
	// GenHAMi: HAMi-core (libvgpu.so, preloaded into every process of a
	// Kubernetes pod that HAMi shares a GPU with) refused an allocation
	// over the pod's memory limit (nvidia.com/gpumem), before CUDA saw it:
	// "[HAMI-core ERROR (pid:1 thread=... allocator.c:52)]: Device d OOM
	// U / L" (src/allocator/allocator.c: LOG_ERROR("Device %d OOM %lu /
	// %lu", d, new_allocated, limit)). U is the pod's usage on the device
	// with the request added (HAMiWouldUse of Text), L the limit (Allowed); the
	// request alone is not printed. The caller gets
	// CUDA_ERROR_OUT_OF_MEMORY (PyTorch then raises OutOfMemoryError,
	// unless the program catches it).
	GenHAMi Generation = "hami"
	// GenKVCache: an LLM serving engine found, at start-up, too little of
	// the GPU memory it may use left for its KV cache, after loading the
	// weights and a profiling run (a ValueError or RuntimeError, not an
	// allocator's failure): vLLM's "No available memory for the cache
	// blocks. Try increasing `gpu_memory_utilization` when initializing
	// the engine." (worker.py raise_if_cache_size_invalid, and V1's
	// kv_cache_utils.py), V0's "The model's max seq len (N) is larger than
	// the maximum number of tokens that can be stored in KV cache (M).",
	// V1's "To serve at least one request with the model's max seq len
	// (N), (X GiB KV cache is needed, which is larger than the available
	// KV cache memory (Y GiB). Based on the available memory, the
	// estimated maximum model length is E." ("models's" in early
	// releases; X and Y printed "%.2f" of GiB, read by KVCacheFigures:
	// neither is an allocation's request), and SGLang's "Not enough memory. Please try to
	// increase --mem-fraction-static." (model_runner.py). Read after an
	// exception's colon or at a line's start, never in source code. No
	// device, total or free memory is printed.
	GenKVCache Generation = "kv-cache"
	// GenPaddle: PaddlePaddle's GPU allocator (memory/detail/
	// system_allocator.cc, later allocator_facade's BadAlloc): "Out of
	// memory error on GPU d. Cannot allocate X memory on GPU d, [Y memory
	// has been allocated and ]available memory is only Z." X, Y, Z are
	// printed "%f" with a unit of HumanReadableSize (B, kB, MB, GB, TB:
	// powers of 1024): X is Requested, Y Paddle's allocated memory read
	// as Reserved, Z the GPU's available memory (cudaMemGetInfo) read as
	// Free. No total.
	GenPaddle Generation = "paddle"
	// GenORT: ONNX Runtime's BFC arena (onnxruntime/core/framework/
	// bfc_arena.cc, the form of 1.8 to 1.19), thrown by
	// BFCArena::AllocateRawInternal with its place before the words:
	// "Failed to allocate memory for requested buffer of size R" (the
	// arena's device allocator failed for its extension and for 90% steps
	// of it down to R: cudaMalloc for the CUDA execution provider, the
	// host's allocator for the CPU's, the line does not say which), or
	// "Available memory of A is smaller than requested bytes of R" (the
	// arena's memory limit, gpu_mem_limit or OrtArenaCfg's max_mem, less
	// what the arena already took from its device, was A: a limit was set
	// and reached; ArenaAvailable reads A from Text). R is the request
	// rounded up to 256 bytes, read as Requested. No device, total or free
	// memory; Backend is "" (the arena's device is not named).
	GenORT Generation = "onnxruntime"
	// GenBatchFinder: Hugging Face Accelerate's batch size finder
	// (accelerate.utils.find_executable_batch_size, which the Trainer's
	// auto_find_batch_size and training scripts use) gave up: "No
	// executable batch size found, reached zero." (utils/memory.py). It
	// calls the function with a batch size and halves the size each time
	// the function raises an out-of-memory error (should_reduce_batch_size:
	// "CUDA out of memory.", cuDNN's CUDNN_STATUS_NOT_SUPPORTED, the CPU
	// allocator's "can't allocate memory", and later the XPU's and NPU's),
	// so every size down to 1 failed so, unless it started at 0. No size,
	// device or figure is printed; the caught OOMs are not (unless the
	// program logged them).
	GenBatchFinder Generation = "batch-size-finder"
	// GenTheano: Theano's GPU back-ends. The old CUDA back-end
	// (theano/sandbox/cuda, CudaNdarray's device_malloc): "Error
	// allocating N bytes of device memory (out of memory). Driver report F
	// bytes free and T bytes total" (cudaMalloc failed; F and T from
	// cudaMemGetInfo right after, in bytes), or, with the CNMeM pool
	// (lib.cnmem), "Error allocating N bytes of device memory
	// (CNMEM_STATUS_OUT_OF_MEMORY)." with no driver figures. The reason in
	// parentheses must be one of these two: another (a launch failure) is
	// no OOM. N is Requested, F Free, T Total; no device, no Theano
	// figures. The gpuarray back-end (libgpuarray, pygpu):
	// "GpuArrayException: b'out of memory'" (Python 3's bytes repr of
	// GA_MEMORY_ERROR's string; "GpuArrayException: out of memory" on
	// Python 2), no figures but the device where Theano's start-up line
	// gives it (Reader: "Mapped name None to device cuda1: ...", the old
	// back-end's "Using gpu device 0: ..."); its "cuMemAlloc:
	// CUDA_ERROR_OUT_OF_MEMORY" statuses are GenCUDAError (Printer names
	// Theano for them).
	GenTheano Generation = "theano"
	// GenDirectML: torch-directml (PyTorch on DirectX 12 through
	// DirectML, Windows: the --directml mode of ComfyUI, SD.Next and the
	// AMD forks of stable-diffusion-webui): "Could not allocate tensor
	// with N bytes. There is not enough GPU video memory available!" N is
	// Requested, exact; no device, total or free memory is printed.
	GenDirectML Generation = "directml"
)

// Message is one out-of-memory message. Sizes are bytes as PyTorch
// printed them: format_size() rounds to two decimals of KiB, MiB or GiB, so
// a size is within SizeTolerance of the true value ("N bytes" is exact). A
// size the message does not carry is -1.
type Message struct {
	// Generation is the form the message has (Gen2, Gen1, ...).
	Generation Generation
	// Typo is true for PyTorch 2.1's "total capacty".
	Typo bool
	// Backend is "CUDA", "HIP" (ROCm builds), "XPU" (Intel GPUs) or "MPS"
	// (Apple Metal).
	Backend string
	// Exception is the exception type written before the message
	// ("torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError",
	// "RuntimeError"), empty when the line has none.
	Exception string
	// Prefix is the text on the line before the exception or the message
	// (a launcher's "[rank1]: ", a timestamp), right-trimmed of spaces.
	Prefix string
	// Device is the GPU index, -1 when the message does not say.
	Device int
	// Requested is the allocation that failed, as the caching allocator
	// rounded it (a 3 MiB request shows as the 20 MiB block it needed),
	// as printed however large (see scanner.request); -1 when unknown.
	Requested int64
	// Total and Free are the GPU's memory and what CUDA reported free.
	Total, Free int64
	// ProcessInUse is this process's memory on the GPU, PyTorch's and
	// not ("Including non-PyTorch memory, this process has M memory in
	// use"); -1 when not printed (NVML unavailable, or before 2.1).
	ProcessInUse int64
	// Processes are the other processes the message names ("Process P
	// has M memory in use"), in its order.
	Processes []Process
	// Allowed is the per-process limit ("N allowed;",
	// torch.cuda.set_per_process_memory_fraction), -1 when none was set.
	Allowed int64
	// Allocated is memory allocated by PyTorch (2.x: including private
	// pools; 1.x: "already allocated").
	Allocated int64
	// PrivatePools is the part of Allocated in private pools (CUDA
	// graphs), -1 when not printed.
	PrivatePools int64
	// ReservedUnallocated is memory reserved by PyTorch but not allocated
	// (2.x, and "cached" before 1.4); -1 in other 1.x messages.
	ReservedUnallocated int64
	// Reserved is all memory reserved by PyTorch (1.x "reserved in total
	// by PyTorch", or Allocated + "cached" before 1.4); -1 in 2.x
	// messages, where it is Allocated + ReservedUnallocated.
	Reserved int64
	// Cached is true for releases before 1.4, which print "C cached)":
	// memory reserved but not allocated. ReservedUnallocated is then C and
	// Reserved is Allocated + C.
	Cached bool
	// Inactive is "W inactive" where a build prints it (free memory in
	// split blocks), -1 otherwise.
	Inactive int64
	// Reason says why a GenUnparsed message was not read.
	Reason string
	// Text is the message from the backend's name to the end of the line.
	Text string
	// Warnings are figures read as unknown because no GPU has them (NVML
	// overflowing to 2^64 bytes), one sentence each.
	Warnings []string
	// Coarse lists the figures typed with fewer decimals than PyTorch
	// prints ("2 GiB", "7.8 GiB": a message retyped or shortened by hand),
	// each with the rounding allowance its precision gives (half a unit
	// of its last digit: 0.5 GiB for "2 GiB"); nil when every figure is as
	// format_size() prints it (SizeTolerance holds then).
	Coarse []CoarseFigure
	// Host is true for a TensorFlow message whose device is the CPU
	// ("/device:CPU:0") and for PyTorch's CPU allocator's (GenCPU): the
	// machine's memory ran out, not a GPU's.
	Host bool

	// Of a GenCPU message (see parseHost): the upper bound of a request
	// printed in whole GiB, posix_memalign's error code, and whose words
	// these are ("Windows", "Linux").
	requestedBelow    int64
	hostErrno, hostOS string
	// hostNode is the device of the op's node line (tfnode.go) that
	// placed a TensorFlow message naming none on the CPU, "" otherwise.
	hostNode string
	// hostCall is the pinned host allocation (cudaMallocHost, ...) a
	// CUDA or HIP out-of-memory error's words name, "" when none.
	hostCall string
	// Printer is the program whose own CUDA check printed a GenCUDAError
	// message in words several programs print alike ("CUDA Error: out
	// of memory"), as the lines next to it name it (darknetEvidenceRe);
	// "" when they name none (see CheckProgram).
	Printer string
	// Reraised is true when the innermost frame of the message's
	// traceback raises a new exception built from a value ("raise
	// RuntimeError(resp['error'])"): the message's words were passed on
	// there (a worker's or a server's error, or one caught before), so
	// that line is not where the allocation failed.
	Reraised bool
	// Call is the runtime call whose status a program's check printed,
	// as its lines give it (llama.cpp's ggml_cuda_error prints it on the
	// line after its device line: "cudaGraphLaunch", "cuMemCreate",
	// "hipMalloc"); "" when they give none.
	Call string
}

// CoarseFigure is a figure of a message typed coarser than PyTorch prints
// it. Field is its column in the messages table ("requested", "total",
// "free", "process_in_use", "allowed", "allocated", "private_pools",
// "reserved_unallocated", "reserved"), or "process N" for the Nth of
// Processes, from 0. Tolerance is how far from the true size the figure
// may be, in bytes. Typed is the figure as the text has it ("24 GiB",
// "7.8 GiB"), to be printed back as given: FormatSize's two decimals would
// claim a precision the text did not have; "" for a figure the message
// does not print but sums from coarse ones (MPS: this process's Metal
// memory), which FormatWithin renders.
type CoarseFigure struct {
	Field     string
	Tolerance int64
	Typed     string
}

// In returns the field of m that f names, nil for a name m has no field
// for (a process beyond Processes).
func (f CoarseFigure) In(m *Message) *int64 {
	switch f.Field {
	case "requested":
		return &m.Requested
	case "total":
		return &m.Total
	case "free":
		return &m.Free
	case "process_in_use":
		return &m.ProcessInUse
	case "allowed":
		return &m.Allowed
	case "allocated":
		return &m.Allocated
	case "private_pools":
		return &m.PrivatePools
	case "reserved_unallocated":
		return &m.ReservedUnallocated
	case "reserved":
		return &m.Reserved
	}
	if n, ok := strings.CutPrefix(f.Field, "process "); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(m.Processes) {
			return &m.Processes[i].Bytes
		}
	}
	return nil
}

// FormatCoarse writes figures as the messages table's coarse column holds
// them: "field=allowance=typed" triples joined by ";" ("=typed" left out
// for a figure without Typed). Neither a field name nor a typed size has
// "=" or ";".
func FormatCoarse(figs []CoarseFigure) string {
	var b strings.Builder
	for i, f := range figs {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%s=%d", f.Field, f.Tolerance)
		if f.Typed != "" {
			b.WriteString("=" + f.Typed)
		}
	}
	return b.String()
}

// ParseCoarse reads the coarse column (FormatCoarse); nil for "" and for
// entries it cannot read.
func ParseCoarse(s string) []CoarseFigure {
	var figs []CoarseFigure
	for _, kv := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(kv, "=")
		v, typed, _ := strings.Cut(v, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n <= 0 {
			continue
		}
		figs = append(figs, CoarseFigure{k, n, typed})
	}
	return figs
}

// FormatWithin renders size as FormatSize does, but with no more
// decimals than an allowance of tol bytes leaves true: a decimal place is
// printed only where tol is less than one of its units, so one decimal
// for "7.8 GiB" (±0.05 GiB), none for "24 GiB" (±0.5 GiB); FormatSize's
// two where tol is within SizeTolerance. Where tol is a whole unit or
// more, the size is told in the next unit up ("1 GiB" for 1024 MiB
// ±1 GiB, not "1024 MiB"). It is for a figure known only to ±tol (one
// typed coarse, or computed from such figures).
func FormatWithin(size, tol int64) string {
	if tol <= SizeTolerance(size) || size <= 1024 {
		return FormatSize(size)
	}
	unit, name := withinUnit(size, tol)
	d := 0
	switch {
	case tol < unit/100:
		d = 2
	case tol < unit/10:
		d = 1
	}
	return fmt.Sprintf("%.*f %s", d, float64(size)/float64(unit), name)
}

// withinUnit is the unit FormatWithin tells size in: FormatSize's, or a
// larger one while tol is a whole unit or more.
func withinUnit(size, tol int64) (int64, string) {
	units := []struct {
		n    int64
		name string
	}{{1 << 10, "KiB"}, {1 << 20, "MiB"}, {1 << 30, "GiB"}}
	u := 2
	switch {
	case size <= 1<<20:
		u = 0
	case size <= 1<<30:
		u = 1
	}
	for u < len(units)-1 && tol >= units[u].n {
		u++
	}
	return units[u].n, units[u].name
}

// FormatTolerance renders an allowance in the unit of figure, a size as
// FormatSize, FormatWithin or a message prints it ("0.5 GiB" beside
// "24 GiB", "0.05 GiB" beside "7.8 GiB"), with three significant digits
// at most (an allowance is stored in whole bytes); in bytes beside a
// figure in bytes.
func FormatTolerance(tol int64, figure string) string {
	unit := map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
	_, name, _ := strings.Cut(figure, " ")
	n, ok := unit[name]
	if !ok || tol <= 0 {
		return fmt.Sprintf("%d bytes", max(tol, 0))
	}
	return strconv.FormatFloat(float64(tol)/float64(n), 'g', 3, 64) + " " + name
}

// Process is another process's memory on the GPU, from a 2.x message.
type Process struct {
	PID   int64 // the process id NVML gave
	Bytes int64 // its memory on the GPU
}

// SizeTolerance is how far from the true size a size printed by PyTorch's
// format_size() may be: half a hundredth of the unit it chose (KiB, MiB,
// GiB), 0 for sizes up to 1024 bytes, which are printed exactly.
func SizeTolerance(size int64) int64 {
	switch {
	case size <= 1024:
		return 0
	case size <= 1<<20:
		return 1 << 10 / 200
	case size <= 1<<30:
		return 1 << 20 / 200
	}
	return 1 << 30 / 200
}

// FormatSize renders size as PyTorch's format_size() does ("64.00 MiB",
// "0 bytes").
func FormatSize(size int64) string {
	f := float64(size)
	switch {
	case size <= 1024:
		return fmt.Sprintf("%d bytes", size)
	case size <= 1<<20:
		return fmt.Sprintf("%.2f KiB", f/(1<<10))
	case size <= 1<<30:
		return fmt.Sprintf("%.2f MiB", f/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", f/(1<<30))
}

// oomPhrases are what a line must contain to hold an out-of-memory
// message; classify then tells a message from prose that names the error.
var oomPhrases = slices.Concat([]string{"Cuda out of memory. Tried to allocate more than 1EB", "CUDA out of memory", "HIP out of memory", "XPU out of memory", "MPS backend out of memory", "CUDA error: out of memory", "HIP error: out of memory",
	"CUDA error:out of memory", "HIP error:out of memory", "Allocation on device ", "cuda runtime error (2) : out of memory",
	"cuda runtime err(2): out of memory", "THCudaCheck FAIL ", "Tried to allocate ",
	// A message whose first words, the request with them, were cut off
	// (see bodyStart): its figures' first words.
	gen1Body, gen2Body, gen2BodyTypo,
	// CUDA libraries' out-of-memory statuses (libraryOOMs).
	"_ALLOC_FAILED", "CUDA_ERROR_OUT_OF_MEMORY", cudaRuntimeCheckPhrase, metalOOMStatus, metalOOMWords, "HIP_ERROR_OutOfMemory", "hipError_t(1002)",
	"hipErrorOutOfMemory", "hipErrorMemoryAllocation", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "UR_RESULT_ERROR_OUT_OF_RESOURCES", "PI_ERROR_OUT_OF_RESOURCES",
	levelZeroOOM},
	// The runtimes' host-memory statuses (hostStatuses).
	hostStatusPhrases(),
	[]string{ortCallCUDA, ortCallHIP, "VK_ERROR_OUT_OF_DEVICE_MEMORY", vulkanHppOOM, "cudaErrorMemoryAllocation: out of memory", "Cuda failure 'out of memory'", "Cuda failure 2 'out of memory'",
		"cuda failed with error 2 out of memory", "cuda execution failed with error 2",
		"cudaMalloc failed: out of memory", "Cuda Runtime (out of memory)", trtAllocPhrase, "cudaErrorMemoryAllocation out of memory",
		// Other frameworks' (see frameworkOOMs).
		"Out of memory allocating ", "out of memory to allocate ", "Out of memory while trying to allocate ", "Failed to allocate request for ",
		"OOM when allocating tensor", "failed to allocate memory", tfRanOutPhrase, tfEigenPhrase, xlaHBMPhrase, directMLPhrase, "Out of memory error on GPU ",
		ortFailedPhrase, ortAvailablePhrase, theanoPhrase, gpuArrayPhrase, gpuArrayPy2Phrase, gpuArrayPy2PhraseCap,
		// HAMi-core's, after its log prefix (hamiPrefix).
		hamiPhrase,
		// Intel's extension's refusal of one allocation over 4 GB
		// (ipexLimitPhrase), and the MPS allocator's of one buffer over
		// Metal's maxBufferLength (mpsBufferPhrase).
		ipexLimitPhrase, mpsBufferPhrase,
		// LLM serving engines' KV cache at start-up (kvCacheOOMs).
		"No available memory for the cache blocks", "The model's max seq len (", "To serve at least one request with the model",
		"Not enough memory. Please try to increase --mem-fraction-static", tgiWarmupPhrase, vllmSamplerPhrase, vllmStartupPhrase,
		// Accelerate's batch size finder that halved its batch to zero.
		batchFinderPhrase,
		// PyTorch's CPU allocator's (host memory; see host.go).
		cpuAllocatorPhrase, posixMemalignPhrase, thAllocPhrase, badAllocPhrase},
	// Programs' own CUDA error checks (checkForms).
	checkPhrases(),
	// TensorRT's OutOfMemory code, last: a line cut after "Out" reads
	// as the phrases above first (phraseCut keeps the first reading).
	[]string{trtVMemPhrase})

// frameworkOOMs are other frameworks' out-of-memory messages: the words
// that start one, the framework, its generation, and the exception names
// or status words one of which must end the text before it (followed by a
// colon). Without them the words are anybody's ("Out of memory while
// trying to allocate" is also many C programs' malloc failure, "Failed to
// allocate request for" the Linux crypto tests', "failed to allocate
// memory" everyone's). The same words may start two frameworks' messages
// (CuPy's and XLA's "Out of memory allocating "): what ends the text
// before them tells which.
//
// A status word is no proof: RESOURCE_EXHAUSTED is absl's and gRPC's
// status for any exhausted resource (a stream limit, a quota, a message
// buffer: "RESOURCE_EXHAUSTED: Failed to allocate request for stream 7").
// For the words others use too, form is the whole form the framework
// prints (from its source), which the text after the words must match.
var frameworkOOMs = []struct {
	phrase, framework string
	gen               Generation
	after             []string
	form              *lazyre.Regexp
	// place, when set, must come before the words on their line (the
	// function that raised them), instead of an exception or status.
	place string
}{
	{"Out of memory allocating ", "CuPy", GenCuPy, []string{"OutOfMemoryError"}, nil, ""},
	{"out of memory to allocate ", "CuPy", GenCuPy, []string{"OutOfMemoryError"}, nil, ""},
	{"Out of memory while trying to allocate ", "XLA", GenXLA, statusWords, nil, ""},
	// device_memory_allocator.cc: "Failed to allocate request for %s (%uB)
	// on device ordinal %d" (HumanReadableNumBytes, then the bytes).
	{"Failed to allocate request for ", "XLA", GenXLA, statusWords, lazyre.New(`^Failed to allocate request for [0-9.]+ ?[KMGTPE]?i?B \([0-9]+B\) on device ordinal [0-9]+`), ""},
	// PJRT: ResourceExhausted("Out of memory allocating %d bytes.").
	{"Out of memory allocating ", "XLA", GenXLA, statusWords, lazyre.New(`^Out of memory allocating [0-9]+ bytes\.`), ""},
	// The TPU compiler's: its whole form, read anywhere (the status and
	// the compiler's words come between: "RESOURCE_EXHAUSTED: XLA:TPU
	// compile permanent error. Ran out of memory ...").
	{xlaHBMPhrase, "XLA", GenXLA, nil, lazyre.New(`^Ran out of memory in memory space hbm\. Used [0-9.]+[KMGT]?B? of [0-9.]+[KMGT]?B? hbm\.`), ""},
	{"OOM when allocating tensor", "TensorFlow", GenTF, statusWords, nil, ""},
	// TF 1.x's "Ran out of GPU memory when allocating N bytes for " and the
	// op's node on the next line.
	{tfRanOutPhrase, "TensorFlow", GenTF, statusWords, lazyre.New(`^Ran out of GPU memory when allocating [0-9]+ bytes`), ""},
	// TF 1.x's GPU device's Eigen allocator, a FATAL record that aborts
	// the process: its whole form, read anywhere.
	{tfEigenPhrase, "TensorFlow", GenTF, nil, lazyre.New(`^EigenAllocator for GPU ran out of memory when allocating [0-9]+\.`), ""},
	// TF 2's eager op error: "failed to allocate memory [Op:AddV2]".
	{"failed to allocate memory", "TensorFlow", GenTF, statusWords, lazyre.New(`^failed to allocate memory \[Op:`), ""},
	// PaddlePaddle's words are its own (no exception needs to come
	// before: Paddle prints them on a line of their own after
	// "ResourceExhaustedError: ", and issue titles quote them): the whole
	// form, read anywhere.
	{"Out of memory error on GPU ", "PaddlePaddle", GenPaddle, nil, lazyre.New(`^Out of memory error on GPU \d+\. Cannot allocate [0-9.]+ ?[kKMGTPE]?B memory on GPU \d+, `), ""},
	// ONNX Runtime's BFC arena (onnxruntime/core/framework/bfc_arena.cc):
	// AllocateRawInternal throws its status with its own place before it
	// ("bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(
	// size_t, bool, ...) Failed to allocate ..."), which is what makes the
	// words ORT's; no form is asked of the rest, so a figure wrapped to
	// the next line is joined (see endsCut).
	{ortFailedPhrase, "ONNX Runtime", GenORT, nil, nil, ortPlace},
	{ortAvailablePhrase, "ONNX Runtime", GenORT, nil, nil, ortPlace},
	// Theano's CUDA back-end: its whole form, read anywhere (prose that
	// quotes the format string, "Error allocating %li bytes", has no
	// figures and is not read).
	{theanoPhrase, "Theano", GenTheano, nil, lazyre.New(`^Error allocating \d+ bytes of device memory \((?:out of memory|CNMEM_STATUS_OUT_OF_MEMORY)\)`), ""},
	// torch-directml's: its whole form, read anywhere (a title that
	// writes the size as "XXXXXXXX" is not read).
	{directMLPhrase, "DirectML", GenDirectML, nil, lazyre.New(`^Could not allocate tensor with \d+ bytes\. There is not enough GPU video memory available!`), ""},
	// libgpuarray's error string as pygpu raises it on Python 3.
	{gpuArrayPhrase, "Theano", GenTheano, []string{"GpuArrayException"}, nil, ""},
	// The same on Python 2 (a str, printed bare): the whole rest of the
	// line, after the exception's name (findOOM finds it by
	// gpuArrayPy2Phrase, see libraryStart).
	{gpuArrayPy2Words, "Theano", GenTheano, []string{"GpuArrayException"}, lazyre.New(`^out of memory\s*$`), ""},
	{gpuArrayPy2WordsCap, "Theano", GenTheano, []string{"GpuArrayException"}, lazyre.New(`^Out of memory\s*$`), ""},
}

// Theano's words (see GenTheano): its CUDA back-end's device_malloc, and
// libgpuarray's out-of-memory string as pygpu's GpuArrayException
// prints it on Python 3.
const (
	theanoPhrase   = "Error allocating "
	gpuArrayPhrase = "b'out of memory'"
	// gpuArrayPy2Phrase is pygpu's exception on Python 2, whose error
	// string prints bare: "pygpu.gpuarray.GpuArrayException: out of
	// memory"; the message is its gpuArrayPy2Words.
	gpuArrayPy2Phrase = "GpuArrayException: out of memory"
	gpuArrayPy2Words  = "out of memory"
	// libgpuarray releases that capitalise the string.
	gpuArrayPy2PhraseCap = "GpuArrayException: Out of memory"
	gpuArrayPy2WordsCap  = "Out of memory"
)

// ONNX Runtime's BFC arena's words (see GenORT) and the place that
// throws them.
const (
	ortFailedPhrase    = "Failed to allocate memory for requested buffer of size"
	ortAvailablePhrase = "Available memory of"
	ortPlace           = "BFCArena::AllocateRawInternal"
)

// tfRanOutPhrase starts TensorFlow 1.x's failure to allocate an op's
// memory on the GPU, which gives the bytes: "Ran out of GPU memory when
// allocating 1294336000 bytes for " (the node follows on the next line).
const tfRanOutPhrase = "Ran out of GPU memory when allocating "

// tfEigenPhrase starts TensorFlow 1.x's EigenAllocator failure
// (common_runtime/gpu/gpu_device.cc, LOG(FATAL)): "EigenAllocator for GPU
// ran out of memory when allocating N. See error logs for more detailed
// info." N is the bytes Eigen asked for (0 when the BFC allocator was
// asked for 0 bytes: "tried to allocate 0 bytes" is logged before it).
const tfEigenPhrase = "EigenAllocator for GPU ran out of memory when allocating "

// cudaRuntimeCheckPhrase starts the CUDA runtime's out-of-memory error as
// the check macros of NVIDIA's inference libraries throw it:
// TensorRT-LLM's check<cudaError> ("[TensorRT-LLM][ERROR] CUDA runtime
// error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory
// (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)") and
// FasterTransformer's check_cuda_error ("[FT][ERROR] CUDA runtime error:
// out of memory /workspace/.../allocator.h:220"), cudaGetErrorString's
// words after the call that failed. Another error ("invalid device
// ordinal") is not one.
const cudaRuntimeCheckPhrase = "CUDA runtime error"

// cudaRuntimeCheckRe matches the whole of one (cudaRuntimeCheckPhrase).
var cudaRuntimeCheckRe = lazyre.New(`^CUDA runtime error(?: in [^\n]*?)?: out of memory\b`)

// metalOOMStatus is Metal's out-of-memory status of a command buffer
// (MTLCommandBufferErrorOutOfMemory, printed by its IOGPU name).
const metalOOMStatus = "kIOGPUCommandBufferCallbackErrorOutOfMemory"

// metalOOMWords is MLX's words for a command buffer that failed for lack
// of memory ("[METAL] Command buffer execution failed: " and the error's
// localizedDescription), which macOS gives as "Insufficient Memory
// (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)" or, in some
// releases, "Insufficient Memory" alone (jjang-ai/vmlx#58, #156): the
// words with or without the status are one message (metalOOMRe).
const metalOOMWords = "Command buffer execution failed: Insufficient Memory"

// metalOOMRe matches MLX's message at the start of a text: its words and
// the status after them, if printed.
var metalOOMRe = lazyre.New(`^Command buffer execution failed: Insufficient Memory(?: \([0-9A-Fa-f]{8}:kIOGPUCommandBufferCallbackErrorOutOfMemory\))?`)

// ortCallCUDA and ortCallHIP start ONNX Runtime's error for a CUDA or HIP
// call that failed with out of memory (cuda_call.cc's CudaCall,
// rocm_call.cc's RocmCall: "%s failure %d: %s ; GPU=%d ; hostname=%s ;
// ... expr=%s", the library, the error's number and its string): 2 is
// cudaErrorMemoryAllocation and hipErrorOutOfMemory, whose strings are
// "out of memory". The text goes on with the device, the host and the
// call that failed (ortCallRe).
const (
	ortCallCUDA = "CUDA failure 2: out of memory ; GPU="
	ortCallHIP  = "HIP failure 2: out of memory ; GPU="
)

// ortCallRe reads ONNX Runtime's failed call at the start of a text (see
// ortCallCUDA): its words and the device.
var ortCallRe = lazyre.New(`^(?:CUDA|HIP) failure 2: out of memory ; GPU=(\d{1,3})\b`)

// LibraryCNTK is CNTK's (Microsoft's Cognitive Toolkit) as a failed CUDA
// call's printer. ONNX Runtime took its CudaCall from CNTK's, whose
// words its own start with: CNTK's (Source/Math/CommonMatrix.h) are "%s
// failure %d: %s ; GPU=%d ; hostname=%s ; expr=%s", raised as a
// RuntimeError (its Python API) or printed as "EXCEPTION occurred: ..."
// before its "[CALL STACK]"; ONNX Runtime's add "; %s", its message,
// after the expression ("expr=%s; %s", cuda_call.cc, rocm_call.cc; an
// empty message leaves "expr=cudaMalloc(...); "), and from 1.10 its file
// and line before it ("; file=%s ; line=%d ; expr=%s; %s").
const LibraryCNTK = "CNTK"

// ortCallLibrary tells whose failed call text is, a text ortCallRe
// matches at its start: LibraryCNTK where its expression ends the text
// with no "; " after it (CNTK's form), "ONNX Runtime" otherwise (its file
// and line, its "; " after the expression, or a text cut before the
// expression, which the words alone do not tell).
func ortCallLibrary(text string) string {
	if strings.Contains(text, " ; file=") {
		return "ONNX Runtime"
	}
	i := strings.Index(text, " ; expr=")
	if i < 0 {
		return "ONNX Runtime"
	}
	expr := strings.TrimRight(text[i+len(" ; expr="):], " \t\r\n")
	if expr == "" || strings.HasSuffix(expr, ";") || strings.Contains(expr, "; ") {
		return "ONNX Runtime"
	}
	return LibraryCNTK
}

// directMLPhrase starts torch-directml's out-of-memory message (see
// GenDirectML).
const directMLPhrase = "Could not allocate tensor with "

// xlaHBMPhrase starts the TPU compiler's refusal of a program whose
// buffers do not fit a TPU core's high-bandwidth memory (libtpu's memory
// space assignment, after "RESOURCE_EXHAUSTED: XLA:TPU compile permanent
// error. " in JAX, "Resource exhausted: Compilation failure: " in TF 1.x):
// "Ran out of memory in memory space hbm. Used 21.90G of 7.48G hbm.
// Exceeded hbm capacity by 14.42G." (sizes "G", "M", "K" of 1024, "B"
// bytes). The compiler counts it before the program runs: nothing was
// allocated. Its "memory space vmem" form (a core's on-chip vector
// memory, "Please file a bug against XLA") is no device memory.
const xlaHBMPhrase = "Ran out of memory in memory space hbm."

// XLATPUHBM reports whether text, a GenXLA message's Text, is the TPU
// compiler's (xlaHBMPhrase): Requested is then the HBM the compiled
// program needs ("Used"), Total a TPU core's HBM as the compiler counts it.
func XLATPUHBM(text string) bool { return strings.HasPrefix(text, xlaHBMPhrase) }

// xlaHBMExcessRe reads the excess the TPU compiler prints after its
// figures: "hbm. Exceeded hbm capacity by 1.52M." (tpuBytes' units).
var xlaHBMExcessRe = lazyre.New(` hbm\. Exceeded hbm capacity by (\d{1,6}(?:\.\d{1,2})?[KMGTB])\b`)

// XLATPUHBMExcess returns the bytes by which the TPU compiler's message
// (XLATPUHBM) says the program exceeds a core's HBM ("Exceeded hbm
// capacity by E", E in "G", "M", "K" of 1024 or "B", to half a unit of
// its last digit): the compiler's own count of the shortfall, finer than
// its "Used U of C" when the two round to the same figure. ok is false
// when text is not that message or was cut before a readable E.
func XLATPUHBMExcess(text string) (excess int64, ok bool) {
	if !XLATPUHBM(text) {
		return -1, false
	}
	m := xlaHBMExcessRe.Re().FindStringSubmatch(text)
	if m == nil {
		return -1, false
	}
	s := &scanner{s: m[1]}
	if excess, err := s.tpuBytes(); err == nil {
		return excess, true
	}
	return -1, false
}

// statusWords end the text before an XLA or TensorFlow message: the
// status code's name as absl prints it, TF 1.x's, and the Python
// exception of both (XlaRuntimeError prints the status).
var statusWords = []string{"RESOURCE_EXHAUSTED", "Resource exhausted", "ResourceExhaustedError"}

// seeAbove is what TF 1.x's OpError.__str__ writes between the exception's
// name and its message when the op's creation stack came before: "%s (see
// above for traceback): %s" (ResourceExhaustedError (see above for
// traceback): OOM when allocating tensor ...).
const seeAbove = " (see above for traceback)"

// functionNodeRe matches TensorFlow 2.11+'s annotation of an eager op's
// error before its message: "{{function_node
// __wrapped__AddV2_device_/job:localhost/replica:0/task:0/device:GPU:0}}".
var functionNodeRe = lazyre.New(`\{\{function_node [^{}]*\}\}$`)

// frameworkAt returns the entry of frameworkOOMs whose words start
// line[at:] and whose exception or status ends the text before them
// (then a colon; TF 1.x's seeAbove and TF 2's function_node annotation
// may come between), or -1; found says whether any entry's words start
// line[at:].
func frameworkAt(line string, at int) (k int, found bool) {
	before := strings.TrimRight(line[:at], " \t")
	if loc := functionNodeRe.Re().FindStringIndex(before); loc != nil {
		before = strings.TrimRight(before[:loc[0]], " \t")
	}
	colon := strings.HasSuffix(before, ":")
	before = strings.TrimSuffix(strings.TrimRight(strings.TrimSuffix(before, ":"), " "), seeAbove)
	for k, f := range frameworkOOMs {
		if !phraseAt(line[at:], f.phrase) {
			continue
		}
		found = true
		if f.form != nil && !f.form.Re().MatchString(line[at:]) && !formCutIn(f.form, strings.TrimRight(line[at:], " \t\r\n")) {
			continue // another program's words (a line that ends inside the form may go on: see frameworkFormCut)
		}
		if f.place != "" && !strings.Contains(line[:at], f.place) {
			continue
		}
		if f.after == nil {
			return k, true // its form alone says whose it is
		}
		for _, a := range f.after {
			if colon && strings.HasSuffix(before, a) {
				return k, true
			}
		}
	}
	return -1, found
}

// formCutIn reports whether text, a line's rest from a framework's words
// on (trailing spaces trimmed), stops inside the framework's form: it
// does not match form but starts a text that could (the line's end cut
// the form off: "Cannot allocate" and the size on the next line).
func formCutIn(form *lazyre.Regexp, text string) bool {
	return text != "" && !form.Re().MatchString(text) && form.StartsMatch(text)
}

// phraseAt reports whether rest starts with a framework's words (see
// frameworkOOMs), or is them but for the space they end with: a line
// that ends with the words ("... when allocating", the figure on the next
// line).
func phraseAt(rest, phrase string) bool {
	return strings.HasPrefix(rest, phrase) || strings.HasSuffix(phrase, " ") && strings.TrimRight(rest, " \t\r\n") == phrase[:len(phrase)-1]
}

// cutPhraseAt returns where a framework's words that end with a space
// (frameworkOOMs) end line's text from `from` on without that space, -1
// when none do (see phraseAt).
func cutPhraseAt(line string, from int) int {
	if from >= len(line) {
		return -1
	}
	t := strings.TrimRight(line[from:], " \t\r\n")
	for _, p := range cutPhrases() {
		if strings.HasSuffix(t, p) {
			return from + len(t) - len(p)
		}
	}
	return -1
}

// cutPhrases are the phrases of frameworkOOMs that end in a space,
// without it, in frameworkOOMs' order (cutPhraseAt); made on first use.
var cutPhrases = sync.OnceValue(func() []string {
	var ps []string
	for _, f := range frameworkOOMs {
		if p := strings.TrimSuffix(f.phrase, " "); p != f.phrase {
			ps = append(ps, p)
		}
	}
	return ps
})

// frameworkFormCut reports whether the framework's message at line[at]
// has a form (frameworkOOMs) that the line ends inside of, before the
// form is whole ("Out of memory error on GPU 0. Cannot allocate" and the
// size on the next line): only a next line that completes the form makes
// it a message (pendingMessage.formCut).
func frameworkFormCut(line string, at int) bool {
	k, _ := frameworkAt(line, at)
	return k >= 0 && frameworkOOMs[k].form != nil && !frameworkOOMs[k].form.Re().MatchString(line[at:])
}

// Framework names the framework a generation's messages come from:
// "CuPy", "XLA" (JAX, or TensorFlow's XLA), "TensorFlow"; "" for
// PyTorch's and CUDA's own.
func Framework(g Generation) string {
	for _, f := range frameworkOOMs {
		if f.gen == g {
			return f.framework
		}
	}
	return ""
}

// libraryOOMs are the out-of-memory words of CUDA libraries and of CUDA
// itself, as their error strings print them, with the library's name.
// Each is a failed allocation inside the library (cuBLAS:
// "Resource allocation failed inside the cuBLAS library. This is usually
// caused by a cudaMalloc() failure"; cuFFT: "failed to allocate GPU or CPU
// memory"). Statuses that only follow an OOM sometimes
// (CUDNN_STATUS_NOT_INITIALIZED, CUBLAS_STATUS_NOT_INITIALIZED: also a
// wrong install) are not among them.
var libraryOOMs = append([]struct{ phrase, library string }{
	{"CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS"},
	{"CUDNN_STATUS_ALLOC_FAILED", "cuDNN"},
	{"CUFFT_ALLOC_FAILED", "cuFFT"},
	{"CUSOLVER_STATUS_ALLOC_FAILED", "cuSOLVER"},
	{"CUSPARSE_STATUS_ALLOC_FAILED", "cuSPARSE"},
	{"CUDA_ERROR_OUT_OF_MEMORY", "the CUDA driver"},
	{"cudaErrorMemoryAllocation: out of memory", "the CUDA runtime"},
	// RMM's RMM_CUDA_TRY: "CUDA error at: FILE:LINE: " then
	// cudaGetErrorName and cudaGetErrorString with a space between.
	{"cudaErrorMemoryAllocation out of memory", "the CUDA runtime"},
	// NCCL's CUDACHECK: "Cuda failure '%s'" (before 2.19), "Cuda
	// failure %d '%s'" (later); 2 is cudaErrorMemoryAllocation.
	{"Cuda failure 'out of memory'", "NCCL"},
	{"Cuda failure 2 'out of memory'", "NCCL"},
	// tensorview's TV_CHECK_CUDA_ERR (spconv 2, cumm): "cuda failed with
	// error %d %s" (cudaGetErrorString); spconv 1's: "cuda execution
	// failed with error %d", no string. 2 is cudaErrorMemoryAllocation.
	{"cuda failed with error 2 out of memory", "the CUDA runtime"},
	{"cuda execution failed with error 2", "the CUDA runtime"},
	// "cudaMalloc failed: out of memory": MXNet's pooled storage manager
	// and others; llama.cpp's ggml CUDA backend (ggml-cuda.cu,
	// ggml_backend_cuda_buffer_type_alloc_buffer) prints "allocating %.2f
	// MiB on device %d: " before it (ggmlAlloc reads the size and the
	// device; the message's text then starts there and Library names
	// llama.cpp); its HIP builds print the same words.
	{"cudaMalloc failed: out of memory", "the CUDA runtime"},
	// TensorRT's default allocator: 8.x and later "[defaultAllocator.cpp::
	// allocate::N] Error Code 1: Cuda Runtime (out of memory)"; 7.x's
	// "Cuda Error in allocate: 2 (out of memory)" is read by trtAllocLen.
	{"Cuda Runtime (out of memory)", "TensorRT"},
	// TensorRT 8.6 and later's virtual memory buffer (the builder's and
	// the runtime's growable buffers, cuMemCreate): "[virtualMemoryBuffer
	// .cpp::resizePhysical::N] Error Code 2: OutOfMemory (Requested size
	// was B bytes.)", the physical memory it could not add ("(no further
	// information)" elsewhere); trtVMemRe reads B.
	{trtVMemPhrase, "TensorRT"},
	// StreamExecutor's ROCm build (TensorFlow's and XLA's rocm_driver.cc,
	// ToString(hipError_t)) spells hipErrorOutOfMemory
	// "HIP_ERROR_OutOfMemory"; releases built on HIP before 3.x, whose
	// out-of-memory code was hipErrorMemoryAllocation = 1002 and not in
	// that switch, print its number: "hipError_t(1002)". Both follow
	// "failed to allocate 7.35G (7889485824 bytes) from device: " as the
	// CUDA build's CUDA_ERROR_OUT_OF_MEMORY does.
	// Metal's command buffer status on Apple silicon, as MLX ("[METAL]
	// Command buffer execution failed: Insufficient Memory
	// (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)") and
	// llama.cpp's Metal backend ("error: Insufficient Memory (...)")
	// print it: the GPU ran out of (unified) memory running the buffer.
	{metalOOMStatus, "Metal"},
	{metalOOMWords, "Metal"},
	{"HIP_ERROR_OutOfMemory", "the HIP runtime"},
	{"hipError_t(1002)", "the HIP runtime"},
	// The HIP runtime's own name of its out-of-memory error
	// (hipGetErrorName, hipamd/src/hip_error.cpp), as programs' check
	// macros print it: "error: 'hipErrorOutOfMemory'(2) at square.cpp:76"
	// (HIP's samples, ROCm/hip#2132), "HIPError(code hipErrorOutOfMemory,
	// out of memory)" (AMDGPU.jl, JuliaGPU/AMDGPU.jl#591), AMReX's "HIP
	// error in file F line N hipErrorOutOfMemory" (BLAST-WarpX/warpx#3398);
	// hipErrorMemoryAllocation is its other name (1002 before HIP 3,
	// an alias of 2 since).
	{"hipErrorOutOfMemory", "the HIP runtime"},
	{"hipErrorMemoryAllocation", "the HIP runtime"},
	// Intel's oneAPI runtimes, as SYCL's exceptions print their status
	// after its number ("Native API failed. Native API returns: 40
	// (UR_RESULT_ERROR_OUT_OF_RESOURCES)", PyTorch XPU's "UR backend
	// failed. UR backend returns:40 (...)", "level_zero backend failed
	// with error: 40 (...)"; before the Unified Runtime, "-5
	// (PI_ERROR_OUT_OF_RESOURCES)"). The Level Zero adapter maps the
	// driver's ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY to
	// UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (ze2urResult): device memory.
	// OUT_OF_RESOURCES is OpenCL's CL_OUT_OF_RESOURCES carried on: any
	// resource the device could not give (memory most often: llama.cpp's
	// SYCL guide and Intel's issues meet it when a model or a context
	// does not fit, intel/ipex-llm#12872, intel/torch-xpu-ops#2445; also
	// a kernel's launch resources, intel/llvm#14300), so IntelResources
	// tells it apart and its note says the text does not prove memory.
	{"UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", LibraryUR},
	{"UR_RESULT_ERROR_OUT_OF_RESOURCES", LibraryUR},
	{"PI_ERROR_OUT_OF_RESOURCES", LibraryPI},
	// ONNX Runtime's failed CUDA or HIP call (ortCallCUDA).
	{ortCallCUDA, "ONNX Runtime"},
	{ortCallHIP, "ONNX Runtime"},
	// Vulkan's VkResult for an allocation the device's memory could not
	// hold (llama.cpp's and MLC LLM's Vulkan backends, Mesa's drivers:
	// "Vulkan Error, code=-2: VK_ERROR_OUT_OF_DEVICE_MEMORY",
	// mlc-ai/mlc-llm#974; "MESA: error: .../anv_device.c:4237:
	// VK_ERROR_OUT_OF_DEVICE_MEMORY", ggml-org/llama.cpp#8492), and the
	// same result as Vulkan-Hpp's exception words it
	// ("vk::Device::allocateMemory: ErrorOutOfDeviceMemory").
	// VK_ERROR_OUT_OF_HOST_MEMORY is the host's: see hostStatuses.
	{"VK_ERROR_OUT_OF_DEVICE_MEMORY", "Vulkan"},
	{vulkanHppOOM, "Vulkan"},
	// Intel's Level Zero driver's own status for device memory
	// (zeMemAllocDevice and the calls that need device memory), as the
	// programs on it print it: chipStar's "hipErrorTbd
	// (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ) in FILE:LINE:FUNC"
	// (CHIP-SPV/chipStar#612), a SYCL runtime's or a program's check.
	{levelZeroOOM, LibraryLevelZero},
},
	// The runtimes' host-memory statuses (hostStatuses): read as such,
	// host messages (Message.Host), never GPU OOMs.
	hostStatusLibraries()...)

// levelZeroOOM is Level Zero's status for device memory that ran out
// (ze_result_t 0x70000003).
const levelZeroOOM = "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"

// LibraryLevelZero is the name Library gives Intel's Level Zero driver.
const LibraryLevelZero = "Intel's Level Zero driver"

// vulkanHppOOM is Vulkan-Hpp's name of VK_ERROR_OUT_OF_DEVICE_MEMORY in
// its exceptions' text (vk::OutOfDeviceMemoryError: "FUNC:
// ErrorOutOfDeviceMemory").
const vulkanHppOOM = "ErrorOutOfDeviceMemory"

// The names Library gives Intel's oneAPI runtimes: the Unified Runtime
// (oneAPI 2024.1 and later) and the Plugin Interface before it.
const (
	LibraryUR = "the oneAPI Unified Runtime"
	LibraryPI = "the SYCL runtime (PI)"
)

// IntelResources reports whether a message's text holds the oneAPI
// runtimes' "out of resources" status (UR_RESULT_ERROR_OUT_OF_RESOURCES,
// PI_ERROR_OUT_OF_RESOURCES): device memory as a rule, but any resource
// the device could not give (see libraryOOMs), unlike
// UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY.
func IntelResources(text string) bool {
	return strings.Contains(text, "_ERROR_OUT_OF_RESOURCES")
}

// intelStatusLeadRe matches what SYCL's exceptions print before a oneAPI
// status: the word "returns" or "error", a colon and the status's number,
// then the parenthesis the status's name opens ("Native API returns: 40
// (", "UR backend returns:40 (", "failed with error: 40 (").
var intelStatusLeadRe = lazyre.New(`\b(?:returns|error): ?-?\d{1,4} \($`)

// statusLeadRe matches other words a failed call's status follows (see
// classifyLibrary): chipStar's HIP error and the Level Zero status in
// parentheses ("hipErrorTbd ("), "result = " (a renderer's "VK call
// failed! result = VK_ERROR_..."), "returned error value " (GFXReconstruct),
// and GTK's Vulkan error, the result's description then its name ("A host
// memory allocation has failed. (").
var statusLeadRe = lazyre.New(`(?:\bhipError\w+ \(|\bresult ?=|\berror value|\bhas failed\. \()$`)

// amrexLeadRe matches what AMReX prints before a GPU error's name: "HIP
// error in file F line N " (also CUDA's).
var amrexLeadRe = lazyre.New(`\b(?:HIP|CUDA) error in file \S+ line \d+$`)

// trtVMemPhrase is TensorRT's out-of-memory error code and words (see
// libraryOOMs), and trtVMemRe reads the request after it.
// It is read after "Error Code 2: " only (libraryStart).
const trtVMemPhrase = "OutOfMemory ("

var trtVMemRe = lazyre.New(`^OutOfMemory \(Requested size was (\d{1,20}) bytes\.?\)`)

// trtAllocPhrase ends TensorRT 7's logger's words for its default
// allocator's failed cudaMalloc, "Cuda Error in FUNC: 2 (out of memory)"
// (2 is cudaErrorMemoryAllocation), FUNC being the C++ __FUNCTION__ of
// the allocator: "allocate" as GCC names it ("../rtSafe/safeRuntime.cpp
// (25) - Cuda Error in allocate: 2 (out of memory)"), the qualified
// "nvinfer1::internal::DefaultAllocator::allocate" as MSVC does (the
// Windows builds: "C:\source\rtSafe\safeRuntime.cpp (25) - Cuda Error
// in nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)").
// The message starts at "Cuda Error in " (see trtAllocLen).
const trtAllocPhrase = "allocate: 2 (out of memory)"

// trtAllocRe matches TensorRT 7's allocator status at the start of a
// text: "Cuda Error in ", "allocate" or a C++ name qualified down to
// "::allocate", then ": 2 (out of memory)".
var trtAllocRe = lazyre.New(`^Cuda Error in (?:[A-Za-z_]\w*::)*allocate: 2 \(out of memory\)`)

// trtAllocLen returns the length of TensorRT 7's allocator status at the
// start of s (see trtAllocPhrase), 0 when s does not start with one.
func trtAllocLen(s string) int {
	if !strings.HasPrefix(s, "Cuda Error in ") {
		return 0
	}
	if loc := trtAllocRe.Re().FindStringIndex(s); loc != nil {
		return loc[1]
	}
	return 0
}

// trtAllocStart returns where the status whose trtAllocPhrase was found at
// line[i] starts ("Cuda Error in "), -1 when the words before it are not
// TensorRT 7's.
func trtAllocStart(line string, i int) int {
	j := i
	for j > 0 && (isIdentByte(line[j-1]) && line[j-1] != '.' || line[j-1] == ':') {
		j--
	}
	j -= len("Cuda Error in ")
	if j < 0 || trtAllocLen(line[j:]) == 0 {
		return -1
	}
	return j
}

// ggmlAllocRe reads what llama.cpp's ggml CUDA backend prints before
// cudaMalloc's error: "allocating 9866.00 MiB on device 1: " (%.2f MiB).
var ggmlAllocRe = lazyre.New(`allocating (\d{1,12}\.\d{2}) MiB on device (\d{1,3}): $`)

// ggmlTextRe matches a message's text that starts with llama.cpp's words
// before cudaMalloc's error (see ggmlAllocRe).
var ggmlTextRe = lazyre.New(`^(?:allocating \d{1,12}\.\d{2} MiB on device \d{1,3}: cudaMalloc failed: |` + vulkanSizeWords + `\d{1,20} failed\. )`)

// ggmlAlloc returns the bytes (MiB printed to two decimals, so to within
// 0.005 MiB) and the device that prefix, the text before llama.cpp's
// "cudaMalloc failed", says failed to allocate; -1, -1 when it does not
// say.
func ggmlAlloc(prefix string) (bytes int64, device int) {
	m := ggmlAllocRe.FindStringSubmatch(prefix)
	if m == nil {
		return -1, -1
	}
	mib, _ := strconv.ParseFloat(m[1], 64)
	d, _ := strconv.Atoi(m[2])
	return int64(mib*(1<<20) + 0.5), d
}

// wholeStatusLine reports whether a library's status phrase is a
// program's whole error line, not a bare status token: at the start of a
// line it is a message (tensorview's lines start the line after the
// exception's first, "RuntimeError: .../tensor.h 168").
func wholeStatusLine(phrase string) bool {
	return phrase == metalOOMWords || strings.HasPrefix(phrase, "cudaErrorMemoryAllocation") || strings.HasPrefix(phrase, "cuda failed with error ") || strings.HasPrefix(phrase, "cuda execution failed with error ")
}

// logRecordRe matches the header of a framework's own log record, with
// its level letter: TensorFlow's C++ logging ("2021-09-24
// 16:22:13.020179: I tensorflow/stream_executor/cuda/cuda_driver.cc:801] "),
// glog's and absl's ("I0924 16:22:13.020179 12345 cuda_driver.cc:801] ",
// "I20240101 ...", "I0000 00:00:1711234567.123456   12345 gpu_device.cc:1928] ").
// I is INFO, W WARNING, E ERROR, F FATAL. The file may be a Windows path
// with its drive ("E C:\tf_jenkins\...\cuda_driver.cc:924] ", TF's
// Windows builds).
var logRecordRe = lazyre.New(`(?:^|[\s\]|:])([IWEF])(?:\d{4,8} \d{2}:\d{2}:\d+(?:\.\d+)?\s+\d+)?\s+(?:[A-Za-z]:)?[\w./\\-]+\.(?:cc|cpp|cu|h|c|py):\d+\]\s`)

// logLevel returns the level letter ('I', 'W', 'E', 'F') of the framework
// log record whose header is in prefix, the text before a message; 0 when
// there is none.
func logLevel(prefix string) byte {
	if m := logRecordRe.FindStringSubmatch(prefix); m != nil {
		return m[1][0]
	}
	return 0
}

// LogLevel returns the level letter ('I', 'W', 'E', 'F') of the framework
// log record whose header is in prefix (a Message's Prefix); 0 when the
// text has none (an issue title, a line copied without its header).
func LogLevel(prefix string) byte { return logLevel(prefix) }

// loggedOnly reports whether the message at line[at] is inside a
// framework's log record at INFO or WARNING level: the program logged the
// failure and went on (TensorFlow's cuda_driver.cc logs "failed to
// allocate ... CUDA_ERROR_OUT_OF_MEMORY" at INFO when it probes how much
// it can take at start-up and retries smaller; its BFC allocator's
// WARNING "ran out of memory trying to allocate" says "The caller
// indicates that this is not a failure"). An ERROR or FATAL record is an
// error.
//
// The spill managers on RMM log their failure to find memory to spill at
// WARNING level, then the allocation fails (spillPhrase): an error.
func loggedOnly(line string, at int) bool {
	if strings.HasPrefix(line[at:], "RMM allocation of ") {
		return false
	}
	l := logLevel(line[:at])
	return l == 'I' || l == 'W'
}

// hostAllocRe matches what StreamExecutor's cuda_driver.cc (TensorFlow's,
// and XLA's in JAX) logs before the driver's error when cuMemHostAlloc
// fails: "failed to alloc N bytes on host: ". That is page-locked
// (pinned) host memory for copies to and from the GPU, the machine's
// memory, not the GPU's: its CUDA_ERROR_OUT_OF_MEMORY is no GPU OOM.
// The ROCm build logs the same words before HIP_ERROR_OutOfMemory.
var hostAllocRe = lazyre.New(`failed to alloc (\d{1,18}) bytes on host: $`)

// driverBytesRe reads the size TensorFlow's cuda_driver.cc gives before the
// driver's error: "failed to allocate 7.81G (8387559424 bytes) from
// device: ".
var driverBytesRe = lazyre.New(`failed to allocate [^()]*\((\d{1,18}) bytes\) from device: $`)

// xlaAsyncRe reads what XLA's cudaMallocAsync allocator
// (xla/stream_executor/gpu/gpu_cudamallocasync_allocator.cc, TensorFlow's
// TF_GPU_ALLOCATOR=cuda_malloc_async and JAX's async allocator) logs at
// ERROR level before the driver's error when cuMemAllocFromPoolAsync
// fails: "gpu_async_0 cuMemAllocAsync failed to allocate N bytes: " (the
// status's "RESOURCE_EXHAUSTED: : " may come between; releases before
// 2.12 print "N: " without " bytes"). Its next line gives the GPU's free
// and total memory (xlaAsyncFreeTotalRe).
var xlaAsyncRe = lazyre.New(`cuMemAllocAsync failed to allocate (\d{1,18})(?: bytes)?: (?:RESOURCE_EXHAUSTED: :? ?)?$`)

// xlaAsyncFreeTotalRe reads the line XLA's cudaMallocAsync allocator logs
// after its failure: cuMemGetInfo's free and total bytes, "Reported by
// CUDA: Free memory/Total memory: F/T" (older releases: "Free
// memory/Total memory: F/T"), the log record's prefix not repeated.
var xlaAsyncFreeTotalRe = lazyre.New(`^\s*(?:Reported by CUDA: )?Free memory/Total memory: (\d{1,18})/(\d{1,18})\s*$`)

// bufferAssignmentRe matches a line of the "BufferAssignment stats" XLA
// prints after its out-of-memory message (xla/service/buffer_assignment.cc,
// BufferAssignment::StatsString, HumanReadableNumBytes sizes):
// "BufferAssignment OOM Debugging.", "BufferAssignment stats:", then
// "parameter allocation:    2.78GiB", ..., "total allocation:   11.62GiB",
// "total fragmentation:  324.96MiB (2.73%)".
var bufferAssignmentRe = lazyre.New(`^\s*(?:BufferAssignment OOM Debugging\.|BufferAssignment stats:|(?:parameter|constant|maybe_live_out|preallocated temp|thread-local|total) allocation:\s+\S+|total fragmentation:.*)\s*$`)

// maxBufferAssignmentLines bounds the lines read after an XLA message as
// its BufferAssignment stats.
const maxBufferAssignmentLines = 12

// bufferAssignmentLine reads line as one of the BufferAssignment stats
// after XLA message m (see bufferAssignmentRe): used says it is one; the
// "total allocation" line is added to m.Text (read by XLATotalAllocation)
// and ends them (done).
func bufferAssignmentLine(m *Message, line string) (used, done bool) {
	if !bufferAssignmentRe.Re().MatchString(line) {
		return false, false
	}
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "total allocation:") {
		m.Text += "\n" + t
		return true, true
	}
	return true, false
}

// XLATotalAllocation returns the "total allocation" of the BufferAssignment
// stats XLA printed after a GenXLA message, as its Text holds it (see
// bufferAssignmentLine): the bytes the compiled program needs at once
// (parameters, outputs and temporaries; HumanReadableNumBytes, so to
// within half its last digit); -1 when the stats are not there.
func XLATotalAllocation(text string) int64 {
	i := strings.LastIndex(text, "\ntotal allocation:")
	if i < 0 {
		return -1
	}
	s := &scanner{s: text, i: i + len("\ntotal allocation:")}
	s.spaces()
	n, err := s.humanBytes()
	if err != nil {
		return -1
	}
	return n
}

// ncclPrefixRe reads the prefix NCCL's debug log puts before each of its
// lines, "host:pid:tid [cudaDev] " (src/debug.cc: the CUDA device index
// in the process, as cudaGetDevice gives it), at the end of the text
// before its "Cuda failure 'out of memory'" status and the place and
// "NCCL WARN " after it: "ng30903:3063028:3066152 [3] include/alloc.h:178
// NCCL WARN ".
var ncclPrefixRe = lazyre.New(`(?:^|\s)([\w.-]+):(\d{1,10}):(\d{1,10}) \[(\d{1,3})\] (?:[\w./-]+:\d+ )?NCCL WARN $`)

// ncclDevice returns the device NCCL's line prefix names before its
// status (see ncclPrefixRe), and the prefix up to "]" (host, pid, tid
// and device: the same on the lines its failure goes on with); -1 and ""
// when prefix is no NCCL line's.
func ncclDevice(prefix string) (device int, who string) {
	x := ncclPrefixRe.Re().FindStringSubmatchIndex(prefix)
	if x == nil {
		return -1, ""
	}
	device, _ = strconv.Atoi(prefix[x[8]:x[9]])
	return device, prefix[x[2] : x[9]+1]
}

// NCCLProcess returns the host and the process id that NCCL's line
// prefix ("host:pid:tid [cudaDev]") names in prefix, a GenCUDAError
// message's Prefix; "" and -1 when it names none.
func NCCLProcess(prefix string) (host string, pid int64) {
	// A message's Prefix lost the space after "NCCL WARN" that
	// ncclPrefixRe ends with.
	x := ncclPrefixRe.FindStringSubmatch(strings.TrimRight(prefix, " ") + " ")
	if x == nil {
		return "", -1
	}
	pid, _ = strconv.ParseInt(x[2], 10, 64)
	return x[1], pid
}

// ncclCallocRe reads the line NCCL logs after a failed allocation of its
// own (src/include/alloc.h, ncclCudaCalloc and ncclCudaMalloc): "Failed to
// CUDA calloc 6291456 bytes" ("calloc async" in later releases), after
// the same "host:pid:tid [cudaDev]" prefix as its "Cuda failure" line.
var ncclCallocRe = lazyre.New(`\] (?:[\w./-]+:\d+ )?NCCL WARN Failed to CUDA (?:calloc|malloc)(?: async)? (\d{1,18}) bytes\s*$`)

// ncclCallocWords start NCCL's line after a failed allocation of its own
// (ncclCallocRe).
const ncclCallocWords = "Failed to CUDA "

// ncclFailureRe reads NCCL's CUDACHECK and CUCHECK line, "Cuda failure
// 'invalid argument'" (before 2.19), "Cuda failure 1 'invalid argument'"
// (later), with its CUDA error string.
var ncclFailureRe = lazyre.New(`\] (?:[\w./-]+:\d+ )?NCCL WARN Cuda failure (?:\d+ )?'[^']*'`)

// bfcRe matches TensorFlow's BFC allocator's record of an allocation it
// could not make (tensorflow/core/common_runtime/bfc_allocator.cc, logged
// at WARNING level): "Allocator (GPU_0_bfc) ran out of memory trying to
// allocate 560.44MiB (rounded to 587661312)requested by op _EagerConst"
// (TF 2.x; "(rounded to N)" from 2.4), TF 1.x's "Allocator (GPU_0_bfc) ran
// out of memory trying to allocate 18.00MiB.  Current allocation summary
// follows." and its first releases' "Ran out of memory trying to allocate
// 1.18GiB.  See logs for memory state." (HumanReadableNumBytes sizes).
var bfcRe = lazyre.New(`(?:Allocator \(([A-Za-z0-9_]+)\) ran|bfc_allocator\.cc:\d+\] Ran) out of memory trying to allocate (\d{1,9}(?:\.\d+)?(?:B|KiB|MiB|GiB|TiB))(?: \(rounded to (\d{1,18})\))?`)

// bfcRetryPhrase marks the BFC allocator's record of an allocation that
// a caller may retry smaller or do without (AllocateRaw with
// retry_on_failure false, cuDNN's and XLA's scratch space): "... with
// freed_by_count=0. The caller indicates that this is not a failure, but
// may mean that there could be performance gains if more memory were
// available." The run goes on: no OOM.
const bfcRetryPhrase = "The caller indicates that this is not a failure"

// bfcDeviceRe reads the GPU of a BFC allocator's name ("GPU_0_bfc").
var bfcDeviceRe = lazyre.New(`^GPU_(\d{1,3})_bfc$`)

// bfcFailure reads line as TensorFlow's BFC allocator's failure (see
// bfcRe): a GenTF message whose Requested is the rounded bytes (or the
// size as printed, to within HumanReadableNumBytes' two decimals), whose
// Device is the allocator's GPU, and whose Text starts at "Allocator" (or
// "Ran"). ok is false for any other line, and for the record of an
// allocation the caller does not count as failed (bfcRetryPhrase).
func bfcFailure(line string) (m Message, ok bool) {
	if !strings.Contains(line, "an out of memory trying to allocate ") {
		// bfcRe's two forms share no literal prefix, so the expression
		// would run on every line of the log: these words are in both.
		return m, false
	}
	x := bfcRe.Re().FindStringSubmatchIndex(line)
	if x == nil || strings.Contains(line[x[1]:], bfcRetryPhrase) {
		return m, false
	}
	start := x[0]
	if line[x[0]] == 'b' {
		start = strings.Index(line[x[0]:], "Ran out") + x[0]
	}
	m = Message{Generation: GenTF, Device: -1, Requested: -1, Total: -1, Free: -1, ProcessInUse: -1, Allowed: -1,
		Allocated: -1, PrivatePools: -1, ReservedUnallocated: -1, Reserved: -1, Inactive: -1}
	m.Prefix = strings.TrimRight(line[:start], " ")
	m.Text = strings.TrimRight(line[start:], " \r\n")
	if x[6] >= 0 {
		m.Requested, _ = strconv.ParseInt(line[x[6]:x[7]], 10, 64)
	} else {
		s := &scanner{s: line, i: x[4]}
		if n, err := s.humanBytes(); err == nil {
			m.Requested = n
		}
	}
	if x[2] >= 0 {
		if d := bfcDeviceRe.FindStringSubmatch(line[x[2]:x[3]]); d != nil {
			m.Device, _ = strconv.Atoi(d[1])
			m.Backend = "CUDA"
		}
	}
	return m, true
}

// BFCFailure reports whether text, a GenTF message's Text, is the BFC
// allocator's record of its failure rather than TensorFlow's OOM message.
func BFCFailure(text string) bool {
	return strings.HasPrefix(text, "Allocator (") || strings.HasPrefix(text, "Ran out of memory trying to allocate ")
}

// XLAAsyncFailure reports whether prefix, the text before a driver's
// CUDA_ERROR_OUT_OF_MEMORY, is XLA's cudaMallocAsync allocator's words
// (see xlaAsyncRe).
func XLAAsyncFailure(prefix string) bool { return xlaAsyncRe.Re().MatchString(prefix) }

// driverBytes returns the bytes that prefix says failed to allocate
// (StreamExecutor's cuda_driver.cc, XLA's cudaMallocAsync allocator), -1
// when it does not say.
func driverBytes(prefix string) int64 {
	for _, re := range []*lazyre.Regexp{driverBytesRe, xlaAsyncRe, rmmAllocRe} {
		if m := re.FindStringSubmatch(prefix); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return n
		}
	}
	return -1
}

// rmmAllocRe reads what RMM's RMM_CUDA_TRY_ALLOC (rmm/detail/error.hpp)
// prints before the runtime's error name and string when an allocation
// call fails: "CUDA error (failed to allocate N bytes) at: FILE:LINE: "
// (its out_of_memory's what(), after "std::bad_alloc: out_of_memory: ").
var rmmAllocRe = lazyre.New(`CUDA error \(failed to allocate (\d{1,18}) bytes\) at: ?\S+:\d+: $`)

// rmmWrappedBytes returns the bytes RMM's words give (rmmAllocRe) when a
// paste wrapped them from the line before (last) onto the message's line
// (prefix, the text before the message): the two joined as they were
// printed, a width's wrap having cut them anywhere. -1 when they do not
// read so.
func rmmWrappedBytes(last, prefix string) int64 {
	if !strings.Contains(last, "failed to allocate") && !strings.Contains(prefix, "failed to allocate") {
		return -1
	}
	if m := rmmAllocRe.FindStringSubmatch(last + prefix); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	return -1
}

// leadInRe matches the words a library error is printed after, at the end
// of the text before it: PyTorch's "CUDA error: " (cuBLAS, cuSPARSE),
// "cuDNN error: ", "cuFFT error: ", "cusolver error: ".
var leadInRe = lazyre.New(`\b(CUDA|cuDNN|cuFFT|cusolver|CUSOLVER|cuSOLVER|cuBLAS|cuSPARSE|HIP) error: ?$`)

// libraryAt returns the library whose out-of-memory status starts s (after
// an optional lead-in such as "CUDA error: ") and the status's length
// with it; "" when none does.
func libraryAt(s string) (library string, n int) {
	lead := 0
	if i := strings.Index(s, " error:"); i >= 0 && i <= len("cuSPARSE") && leadInRe.MatchString(s[:i+len(" error:")]) {
		lead = i + len(" error:")
		if lead < len(s) && s[lead] == ' ' {
			lead++
		}
	}
	if n := trtAllocLen(s[lead:]); n > 0 {
		return "TensorRT", lead + n
	}
	if loc := cudaRuntimeCheckRe.Re().FindStringIndex(s[lead:]); loc != nil {
		return "the CUDA runtime", lead + loc[1]
	}
	if loc := metalOOMRe.Re().FindStringIndex(s[lead:]); loc != nil {
		return "Metal", lead + loc[1] // with its status, if printed: one message
	}
	if loc := ortCallRe.Re().FindStringIndex(s[lead:]); loc != nil {
		return ortCallLibrary(s[lead:]), lead + loc[1]
	}
	if lib, n, _ := checkAt(s[lead:]); n > 0 {
		return lib, lead + n
	}
	for _, l := range libraryOOMs {
		if strings.HasPrefix(s[lead:], l.phrase) {
			if n := lead + len(l.phrase); n < len(s) && isDigit(l.phrase[len(l.phrase)-1]) && isDigit(s[n]) {
				continue // "error 20", "error 201": another status
			}
			return l.library, lead + len(l.phrase)
		}
	}
	return "", 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Library returns the CUDA library that ran out of memory in a
// GenCUDAError message's text ("cuBLAS", "cuDNN", "cuFFT", "cuSOLVER",
// "cuSPARSE", "NCCL", "the CUDA driver", "the CUDA runtime", "the HIP
// runtime", "TensorRT",
// "llama.cpp (ggml)"); "" for
// PyTorch's own "CUDA error: out of memory", which does not say.
func Library(text string) string {
	if strings.HasPrefix(text, ncclCallocWords) {
		return "NCCL" // its allocation's line without its status line (see ncclAlone)
	}
	if ggmlTextRe.Re().MatchString(text) {
		return "llama.cpp (ggml)"
	}
	if lib, _, _ := checkAt(text); lib != "" {
		return lib
	}
	for _, l := range libraryOOMs {
		if strings.Contains(text, l.phrase) {
			if l.library == "ONNX Runtime" {
				return ortCallLibrary(text[strings.Index(text, l.phrase):])
			}
			return l.library
		}
	}
	if i := strings.Index(text, "Cuda Error in "); i >= 0 && trtAllocLen(text[i:]) > 0 {
		return "TensorRT"
	}
	if cudaRuntimeCheckRe.Re().MatchString(text) {
		return "the CUDA runtime"
	}
	return ""
}

// findOOM returns the index in line of the first out-of-memory phrase at or
// after from, or -1.
func findOOM(line string, from int) int {
	if !phraseHeads().mayHold(line, from) {
		return findOOMFrom(line, from, -1) // no phrase is on the line
	}
	return findOOMFrom(line, from, phraseStart(line, from))
}

// phraseStart returns where the first of oomPhrases' messages starts in
// line at or after from (libraryStart), -1 when none does.
func phraseStart(line string, from int) int {
	best := -1
	for _, p := range oomPhrases {
		for at := from; at < len(line); {
			i := strings.Index(line[at:], p)
			if i < 0 {
				break
			}
			j := libraryStart(line, at+i, p)
			if j < 0 {
				at += i + 1 // "_ALLOC_FAILED" of no library's status
				continue
			}
			if j >= from && (best < 0 || j < best) {
				best = j
			}
			break
		}
	}
	return best
}

// findOOMFrom is findOOM given best, where phraseStart found a phrase's
// message (-1 for none): a framework's phrase cut at the line's end, and
// PyTorch's exception, found as findOOM documents.
func findOOMFrom(line string, from, best int) int {
	if best < 0 {
		best = cutPhraseAt(line, from)
	}
	if j := torchOOMAt(line, from); j >= 0 && (best < 0 || j < best) {
		best = j
	}
	return best
}

// headSet is a set of byte sequences of one width (8 bytes, or 4 where
// a word is shorter than 8), the first bytes of each of a list of words,
// as a bitmap of their hashes: a line with no position whose bytes hash
// into it holds none of the words, and the search word by word
// (strings.Index for each) need not run on it. A position whose hash is
// in the set may still start no word (two sequences share a hash, or
// the word goes on otherwise).
type headSet struct {
	bits [1 << headBits / 64]uint64
	// width is 8 or 4; 0 when a word is shorter than 4 bytes, so that
	// any line may hold one.
	width int
}

// headBits is the width of headSet's hashes: 64 Kibit, 8 KiB.
const headBits = 16

// newHeadSet returns the set of words' heads.
func newHeadSet(words []string) *headSet {
	s := headSet{width: 8}
	for _, w := range words {
		switch {
		case len(w) < 4:
			s.width = 0
		case len(w) < 8 && s.width == 8:
			s.width = 4
		}
	}
	if s.width == 0 {
		return &s
	}
	for _, w := range words {
		h := s.hash(w, 0)
		s.bits[h/64] |= 1 << (h % 64)
	}
	return &s
}

// hash hashes the set's width of bytes at b[i] into headBits bits.
func (s *headSet) hash(b string, i int) uint32 {
	if s.width == 8 {
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		return uint32((x * 0x9E3779B97F4A7C15) >> (64 - headBits))
	}
	x := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
	return (x * 2654435761) >> (32 - headBits)
}

// mayHold reports whether a word may start in line at or after from:
// whether the bytes at some such position hash into the set (as hash
// does, written out here: this runs on every line of a log).
func (s *headSet) mayHold(line string, from int) bool {
	from = max(from, 0)
	switch s.width {
	case 8:
		for i := from; i+8 <= len(line); i++ {
			b := line[i : i+8]
			x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
			if h := uint32((x * 0x9E3779B97F4A7C15) >> (64 - headBits)); s.bits[h/64]&(1<<(h%64)) != 0 {
				return true
			}
		}
	case 4:
		for i := from; i+4 <= len(line); i++ {
			b := line[i : i+4]
			x := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
			if h := (x * 2654435761) >> (32 - headBits); s.bits[h/64]&(1<<(h%64)) != 0 {
				return true
			}
		}
	default:
		return true
	}
	return false
}

// phraseHeads is the set of oomPhrases' heads (findOOM), made on first
// use.
var phraseHeads = sync.OnceValue(func() *headSet { return newHeadSet(oomPhrases) })

// torchOOMAt returns where the text after PyTorch's out-of-memory
// exception starts ("torch.OutOfMemoryError: " or
// "torch.cuda.OutOfMemoryError: ", at or after from), -1 when there is
// none or nothing follows it. The exception alone makes the text an
// out-of-memory message, whatever its words (a form gpuleak does not
// know is read as GenUnparsed); Python's "except torch.OutOfMemoryError:"
// is source code, not a raised error.
func torchOOMAt(line string, from int) int {
	for at := from; at < len(line); {
		i := strings.Index(line[at:], "OutOfMemoryError: ")
		if i < 0 {
			return -1
		}
		j := at + i + len("OutOfMemoryError: ")
		at = j
		for j < len(line) && line[j] == ' ' {
			j++
		}
		if strings.TrimRight(line[j:], " \t\r\n") == "" || !torchOOMException(line[:j]) {
			continue
		}
		if pre := strings.TrimLeft(line[:j], " \t"); strings.HasPrefix(pre, "except ") || strings.HasPrefix(pre, "except(") {
			continue
		}
		return j
	}
	return -1
}

// hamiPhrase ends HAMi-core's log prefix and starts its out-of-memory
// message ("[HAMI-core ERROR (pid:1 thread=... allocator.c:52)]: Device 0
// OOM 4401922048 / 4294967296"); the message starts after "]: ".
const hamiPhrase = "]: Device "

// hamiRe is the whole of HAMi-core's out-of-memory line: its ERROR prefix,
// the device, the usage with the request, the limit.
var hamiRe = lazyre.New(`\[HAMI-core ERROR[^\]]*\]: (Device (\d+) OOM (\d+) / (\d+))`)

// HAMiWouldUse reads a GenHAMi message's text ("Device 0 OOM 4401922048 /
// 4294967296"): the pod's usage on the device with the request added, in
// bytes; -1 when text is no such message.
func HAMiWouldUse(text string) int64 { return firstInt(hamiTextRe, text) }

var hamiTextRe = lazyre.New(`^Device \d+ OOM (\d+) / \d+$`)

// The words after a GPU's index that start the figures of a message cut
// before them ("(GPU 0; 15.75 GiB total capacity; ...", "GPU 0 has a
// total capacity of ..."): a paste that begins mid-message (a comment
// quoting only the part in parentheses, a log cut at its start).
const (
	gen1Body     = " total capacity; "
	gen2Body     = " has a total capacity of "
	gen2BodyTypo = " has a total capacty of "
)

// gen1BodyRe and gen2BodyRe match what must come before gen1Body and
// gen2Body in a message cut before its request: the GPU, and for the 1.x
// form its total capacity, as PyTorch prints them (format_size).
var (
	gen1BodyRe = lazyre.New(`(^|[^.\w])\(?GPU \d+; \d+(\.\d+)? (bytes|KiB|MiB|GiB|TiB)$`)
	gen2BodyRe = lazyre.New(`(^|[^.\w])GPU \d+$`)
)

// bodyStart returns where a message cut before its request starts, for
// the phrase p found at line[i] (gen1Body, gen2Body): at "(GPU" or "GPU";
// -1 when the words before the phrase are not a GPU's.
func bodyStart(line string, i int, p string) int {
	re := gen2BodyRe
	if p == gen1Body {
		re = gen1BodyRe
	}
	m := re.Re().FindStringIndex(line[:i])
	if m == nil {
		return -1
	}
	j := strings.LastIndex(line[m[0]:i], "GPU ") + m[0]
	if j > 0 && line[j-1] == '(' {
		j--
	}
	return j
}

// libraryStart returns where the phrase p found at line[i] starts its
// message: for a library's status, at its name or the lead-in before it
// ("CUDA error: CUBLAS_STATUS_ALLOC_FAILED"); -1 for an "_ALLOC_FAILED"
// that is no library's out-of-memory status.
func libraryStart(line string, i int, p string) int {
	if p == hamiPhrase {
		return i + len("]: ")
	}
	if p == gen1Body || p == gen2Body || p == gen2BodyTypo {
		return bodyStart(line, i, p)
	}
	if p == trtAllocPhrase {
		return trtAllocStart(line, i)
	}
	if p == gpuArrayPy2Phrase || p == gpuArrayPy2PhraseCap {
		return i + len("GpuArrayException: ")
	}
	if p == cudaRuntimeCheckPhrase && !cudaRuntimeCheckRe.Re().MatchString(line[i:]) {
		return -1 // another CUDA runtime error ("invalid device ordinal")
	}
	if k := checkFormOf(p); k >= 0 {
		return checkStart(line, i, k)
	}
	if p == trtVMemPhrase && !strings.HasSuffix(line[:i], "Error Code 2: ") {
		return -1 // another "OutOfMemory (": TensorRT's code is 2
	}
	if p == "_ALLOC_FAILED" {
		j := i
		for j > 0 && (line[j-1] >= 'A' && line[j-1] <= 'Z' || line[j-1] == '_') {
			j--
		}
		if lib, _ := libraryAt(line[j:]); lib == "" {
			return -1
		}
		i = j
	}
	if lib, _ := libraryAt(line[i:]); lib != "" {
		if m := leadInRe.FindStringSubmatchIndex(line[:i]); m != nil {
			return m[0]
		}
	}
	return i
}

// How a phrase found by findOOM reads.
const (
	// notMessage: prose that names the error ("I keep getting CUDA out of
	// memory errors when ..."), or a phrase that is no message's start.
	notMessage = iota
	// weakMessage: a message only if it parses whole or goes on on the
	// next lines (a bare "CUDA out of memory" ending an issue title or a
	// sentence; "Tried to allocate" without the words before it).
	weakMessage
	// message: read it, and report it even when it does not parse.
	message
)

// classify reads the text around an out-of-memory phrase at line[at].
// After "CUDA out of memory" a message goes on with ". Tried to
// allocate"; words running on as a sentence ("errors when", "error
// persists", ". a known issue?", "\" before") are prose. The phrase alone
// at the end of the line is a message only after an exception type
// ("RuntimeError:"). A phrase right after a backtick, or an allocator
// message right after an opening quote, is quoted in prose or markdown: a
// message only if it parses (weak), except as a JSON string's value
// ("error": "...").
func classify(line string, at int) int {
	rest := line[at:]
	if codeStringAt(line, at) {
		return notMessage
	}
	kind := message
	allocator := strings.HasPrefix(rest, "CUDA out of memory") || strings.HasPrefix(rest, "HIP out of memory") ||
		strings.HasPrefix(rest, "XPU out of memory") || strings.HasPrefix(rest, "MPS backend out of memory")
	// PyTorch's sizeless form is a status line: in a code span of its
	// own it is the error quoted ("I got `CUDA error: out of memory`"),
	// as a library's status is (classifyLibrary).
	sizeless := (strings.HasPrefix(rest, "CUDA error: out of memory") || strings.HasPrefix(rest, "HIP error: out of memory") ||
		strings.HasPrefix(rest, "CUDA error:out of memory") || strings.HasPrefix(rest, "HIP error:out of memory")) && at > 0 && codeSpanQuotesError(line, at-1)
	if at > 0 && (line[at-1] == '`' && !sizeless || allocator && (line[at-1] == '"' || line[at-1] == '\'')) && !strings.HasSuffix(strings.TrimRight(line[:at-1], " "), ":") {
		// A backtick quotes in markdown; a quoted allocator message
		// must parse. A sizeless form in quotes is an exception's repr
		// (RuntimeError('CUDA error: out of memory')).
		kind = weakMessage
	}
	if strings.HasPrefix(rest, "Device ") && at >= len("]: ") && line[at-3:at] == "]: " {
		// HAMi-core's line, whole, or another program's words.
		if m := hamiRe.Re().FindStringSubmatchIndex(line); m != nil && m[2] == at {
			return message
		}
		return notMessage
	}
	if lib, _ := libraryAt(rest); lib != "" {
		return classifyLibrary(line, at, lib, kind)
	}
	for _, l := range libraryOOMs {
		if strings.HasPrefix(rest, l.phrase) {
			return notMessage // another status that starts alike ("error 222")
		}
	}
	if strings.HasPrefix(rest, mpsBufferPhrase) {
		// The whole form, after its exception ("RuntimeError: ", a
		// report's "Exception Message:** ") or starting the line.
		before := strings.TrimRight(line[:at], " \t*")
		if mpsBufferRe.Re().MatchString(rest) && (before == "" || strings.HasSuffix(before, ":")) {
			return message
		}
		return notMessage
	}
	if strings.HasPrefix(rest, ipexLimitPhrase) {
		// After its exception ("RuntimeError: ") or starting the line.
		if before := strings.TrimRight(line[:at], " \t"); before == "" || strings.HasSuffix(before, ":") {
			return message
		}
		return notMessage
	}
	if strings.HasPrefix(rest, batchFinderPhrase) {
		// After an exception's colon (a log prefix or an issue form's
		// "[Bug]:" before it) or at a line's start; in a code span only
		// as an error quoted; never a source line's string.
		return raisedAt(line, at)
	}
	if _, found, words := kvCacheForm(rest); words && !found {
		// An engine's words without its form (TGI's without its
		// tokens): English, not an OOM.
		return notMessage
	} else if found {
		// After an exception's colon ("ValueError: ", a log prefix before
		// it), at a line's start, or quoted so in a code span; never a
		// source line's string ("raise ValueError(\"No available ...").
		return raisedAt(line, at)
	}
	if strings.HasPrefix(rest, badAllocPhrase) {
		// C++'s std::bad_alloc alone (see badAllocRe), after what() or
		// an exception's colon; its name in "instance of
		// 'std::bad_alloc'" is the line before what(); with words after
		// it (thrust's and RMM's "std::bad_alloc: cudaErrorMemory...")
		// it is a GPU library's, read from those words.
		before := strings.TrimRight(line[:at], " \t")
		if badAllocRe.Re().MatchString(rest) && (strings.HasSuffix(before, "what():") || strings.HasSuffix(before, "Error:") || strings.HasSuffix(before, "Exception:")) {
			return message
		}
		return notMessage
	}
	if hostPhraseAt(line, at) {
		// Host memory: never counted, so a quoted one is warned of too;
		// only the whole form is one (not prose naming the allocator).
		if hostForm.Re().MatchString(rest) {
			return message
		}
		return notMessage
	}
	if k, found := frameworkAt(line, at); found {
		// After its exception or status and a colon
		// ("cupy.cuda.memory.OutOfMemoryError: ", "XlaRuntimeError:
		// RESOURCE_EXHAUSTED: "); else prose or another program's words.
		if k < 0 {
			return notMessage
		}
		if frameworkOOMs[k].after == nil {
			// A form whole enough to be nobody else's (Paddle's): in a
			// code span it is the error quoted.
			return message
		}
		if strings.Count(line[:at], "`")%2 == 1 {
			return weakMessage // quoted in markdown: a code span opened before it
		}
		return kind
	}
	switch {
	case strings.HasPrefix(rest, "Allocation on device "):
		d := rest[len("Allocation on device "):]
		j := 0
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		if j == 0 && len(d) > 0 && d[0] < ' ' && d[0] != '\t' && d[0] != '\r' && d[0] != '\n' {
			j = 1 // the device index written as a byte (see asyncDeviceByte)
		}
		switch {
		case j > 0 && strings.HasPrefix(d[j:], " would exceed allowed memory. (out of memory)"):
		case asyncZeroCutAt(line, at) && (torchOOMException(line[:at]) || comfyExceptionLead(line[:at])):
			// PyTorch 2.x's message cut at device 0's NUL byte (see
			// AsyncDeviceZeroCut), after the exception that names it
			// an OOM, or as ComfyUI logs the exception it caught.
		default:
			return notMessage
		}
	case strings.HasPrefix(rest, "THCudaCheck FAIL "):
		if !strings.Contains(rest, " error=2 : out of memory") {
			return notMessage
		}
	case strings.HasPrefix(rest, "Tried to allocate "), strings.HasPrefix(rest, "(GPU "), strings.HasPrefix(rest, "GPU "):
		// The words before lost: a message only if it parses whole.
		return weakMessage
	case strings.HasPrefix(rest, "MPS backend out of memory"):
		// Its figures follow in parentheses; anything else after the
		// phrase is a title or a sentence ("... out of memory OSX", "...
		// out of memory, but works if ..."), unless the phrase ends the
		// line after an exception type.
		after := rest[len("MPS backend out of memory"):]
		switch {
		case strings.HasPrefix(after, " (MPS allocated: "):
		case strings.TrimRight(after, " .\r\n\"'`") == "":
			if prefix, exc := splitPrefix(line[:at]); exc == "" || proseWord(prefix) {
				return weakMessage
			}
		default:
			return notMessage
		}
	case strings.HasPrefix(rest, "CUDA out of memory"), strings.HasPrefix(rest, "HIP out of memory"), strings.HasPrefix(rest, "XPU out of memory"):
		after := rest[strings.Index(rest, " out of memory")+len(" out of memory"):]
		closed := strings.TrimLeft(after, ".\"'`)")
		next := strings.TrimLeft(closed, " \t")
		switch {
		case strings.HasPrefix(next, "Tried"):
		case next != "" && strings.HasPrefix("Tried to allocate ", strings.TrimRight(next, " \t\r\n")):
			// Cut inside "Tried to allocate" (a collector's line limit):
			// the message's next words, not a sentence's.
		case next == "" || cutMark(next) != "":
			// Alone at the end (or before an ellipsis that stands for the
			// rest: "... CUDA out of memory. ..."): a message only after an exception type
			// that no sentence leads into ("... w/ RuntimeError: CUDA out
			// of memory" in a comment is prose). The phrase with PyTorch's
			// period as the whole line ("CUDA out of memory.") is the
			// message's first sentence, the rest cut (a collector keeping
			// one sentence): a message whose figures are missing, as
			// after an exception type; a title or sentence has no period
			// there or words before it.
			if strings.TrimSpace(line[:at]) == "" && strings.HasPrefix(after, ".") && strings.TrimSpace(after) == "." {
				return kind
			}
			if prefix, exc := splitPrefix(line[:at]); exc == "" || proseWord(prefix) {
				return weakMessage
			}
		case strings.IndexByte(",;!?", closed[0]) >= 0:
			return notMessage
		case next != closed && isLowerOrDigitWord(next):
			return notMessage // "errors when", "error persists", "when I run", ". a known issue?"
		case closed != after && next[0] != '(' && next[0] != '[':
			return notMessage // a quotation ends: "\" before"
		}
	}
	return kind
}

// classifyLibrary reads a CUDA library's out-of-memory status at line[at]
// (see libraryOOMs). NCCL's "Cuda failure 'out of memory'" is a log line of
// its own. A status is an error where it follows a colon ("RuntimeError:
// CUDA error: CUBLAS_STATUS_ALLOC_FAILED", "Could not create cudnn handle:
// CUDNN_STATUS_ALLOC_FAILED", "CuFftError: CUFFT_ALLOC_FAILED"), the word
// "error" ("failed with error CUDA_ERROR_OUT_OF_MEMORY") or "results in"
// (numba's "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"), or
// starts the line with its lead-in ("CUDA error: ..."). Alone it is an
// issue title (weak, never kept: it has no figures); after other words,
// prose ("I get CUBLAS_STATUS_ALLOC_FAILED when ...").
func classifyLibrary(line string, at int, lib string, kind int) int {
	start := 0 // where the text the status is read after begins
	if kind == weakMessage || strings.Count(line[:at], "`")%2 == 1 {
		// Quoted in markdown (a code span opened before it): an error
		// line in it is one as on a line of its own ("I get error:
		// `/spconv/src/spconv/indice.cu 125 cuda execution failed with
		// error 2`"), a status token alone is prose ("the
		// `CUDNN_STATUS_ALLOC_FAILED` section"), and a table row's cell
		// quotes one (documentation).
		open := strings.LastIndexByte(line[:at], '`')
		if open < 0 || !codeSpanQuotesError(line, open) {
			return weakMessage
		}
		start = open + 1
	}
	if lib == "NCCL" {
		return message
	}
	if _, _, k := checkAt(line[at:]); k >= 0 {
		return classifyCheck(line, at, k)
	}
	before := strings.TrimRight(line[start:at], " \t")
	word := before[strings.LastIndexAny(before, " \t")+1:]
	leadIn, whole := true, false // "CUDA error: " before the status; a whole status line
	for _, l := range libraryOOMs {
		if strings.HasPrefix(line[at:], l.phrase) {
			leadIn, whole = false, wholeStatusLine(l.phrase)
		}
	}
	if trtAllocLen(line[at:]) > 0 {
		leadIn = false // TensorRT 7's status, after its logger's place
	}
	if strings.HasPrefix(line[at:], "hipErrorOutOfMemory: out of memory") {
		whole = true // the error's name and its string (hipGetErrorString)
	}
	if _, n := libraryAt(line[at:]); at > start && n > 0 && at+n < len(line) {
		if q := line[at-1]; (q == '\'' || q == '"') && line[at+n] == q {
			// The status in quotes, as a check macro prints it ("error:
			// 'hipErrorOutOfMemory'(2) at square.cpp:76"): read after
			// what comes before the quote.
			before = strings.TrimRight(line[start:at-1], " \t")
		}
	}
	switch {
	case lib == "ONNX Runtime", lib == LibraryCNTK:
		// Its whole form ("... failure 2: out of memory ; GPU=0"), after
		// its place ("onnxruntime::CudaCall") or anywhere.
		return message
	case lib == "Metal" && strings.HasSuffix(before, "[METAL]"):
		return message // MLX's tag ("[METAL] Command buffer execution failed: ")
	case intelStatusLeadRe.MatchString(before), amrexLeadRe.MatchString(before), strings.HasSuffix(before, "(code"):
		// A status after its number in a SYCL exception ("Native API
		// returns: 40 ("), after AMReX's place ("HIP error in file F
		// line N"), or AMDGPU.jl's "HIPError(code hipErrorOutOfMemory,".
		return message
	case statusLeadRe.MatchString(before):
		// chipStar's "hipErrorTbd (STATUS ) in FILE:LINE", a renderer's
		// "result = STATUS", a replayer's "returned error value
		// STATUS", GTK's "...(): A host memory allocation has failed.
		// (STATUS) (-1)": each the status of a call that failed. An
		// assignment's semicolon after it is source code ("result =
		// VK_ERROR_OUT_OF_HOST_MEMORY;" in a driver's).
		if _, n := libraryAt(line[at:]); strings.HasPrefix(strings.TrimLeft(line[at+n:], " \t"), ";") {
			return notMessage
		}
		return message
	case strings.HasSuffix(before, "::"):
		return notMessage // Fortran's or C++'s "::": source code naming it
	case strings.HasSuffix(before, ":"), word == "error", word == "Error", word == "ERROR", strings.HasSuffix(before, "results in"):
		return message
	case strings.HasSuffix(before, "][ERROR]"):
		// A library's ERROR tag: TensorRT-LLM's "[TensorRT-LLM][ERROR]",
		// FasterTransformer's "[FT][ERROR]".
		return message
	case before == "" && (leadIn || whole):
		return message
	case trtSourceRe.MatchString(before) && lib == "TensorRT":
		// TensorRT 7's logger: "../rtSafe/safeRuntime.cpp (25) - Cuda
		// Error in allocate: 2 (out of memory)".
		return message
	case whole && sourceLineRe.MatchString(before):
		// The file and line the check names, then its status: the
		// exception's two lines joined into one (an issue title,
		// "RuntimeError: .../indice_cuda.cu 124 cuda execution failed
		// with error 2").
		return message
	case before == "" || start > 0:
		return weakMessage
	}
	return notMessage
}

// ipexLimitPhrase starts Intel's extension for PyTorch's (IPEX) refusal of
// one allocation larger than the device allows in one piece, before it
// tries: "Current platform can NOT allocate memory block with size larger
// than 4GB! Tried to allocate 6.85 GiB (GPU  0; 15.56 GiB total capacity;
// 0 bytes already allocated; 0 bytes reserved in total by PyTorch)" (the
// 1.x form, two spaces after "GPU"): read as that form of an XPU message,
// its Text keeping the phrase (IPEXLimitRefused).
const ipexLimitPhrase = "Current platform can NOT allocate memory block with size larger than 4GB!"

// mpsBufferPhrase starts PyTorch's MPS allocator's refusal of one buffer
// larger than the device allows (MPSAllocator.mm alloc_buffer_block:
// TORCH_CHECK(size < m_max_buffer_size, "Invalid buffer size: ",
// format_size(size)), the limit being Metal's MTLDevice maxBufferLength),
// before any allocation. Other programs print the words too, with a
// count: only the whole form with a size in format_size's units
// (mpsBufferRe), after an exception's colon or at a line's start, is
// read, as an MPS message whose Requested is the size and whose Text is
// the form (MPSBufferRefused).
const mpsBufferPhrase = "Invalid buffer size: "

var mpsBufferRe = lazyre.New(`^Invalid buffer size: \d+(?:\.\d+)? (?:bytes|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\b`)

// MPSBufferRefused reports whether a message's text is the MPS
// allocator's refusal of one buffer over Metal's maxBufferLength
// (mpsBufferPhrase): no memory ran short.
func MPSBufferRefused(text string) bool { return mpsBufferRe.Re().MatchString(text) }

// IPEXLimitRefused reports whether a message's text is IPEX's refusal of
// one allocation over 4 GB (ipexLimitPhrase): no memory ran short.
func IPEXLimitRefused(text string) bool { return strings.HasPrefix(text, ipexLimitPhrase) }

// kvCacheOOMs are the engines' KV cache failures of GenKVCache: the words
// that start one and the engine. Their words are the engines' own; what
// follows them is read for figures where it is whole (KVCacheFigures), a
// line cut or wrapped inside them keeps the failure without figures.
// An entry with a form reads only where form accepts the text from its
// words on (TGI's words alone are common English).
var kvCacheOOMs = []struct {
	phrase, engine string
	form           func(string) bool
}{
	{"No available memory for the cache blocks", "vLLM", nil},
	{"The model's max seq len (", "vLLM", nil},
	{"To serve at least one request with the model", "vLLM", nil},
	{"Not enough memory. Please try to increase --mem-fraction-static", "SGLang", nil},
	{tgiWarmupPhrase, "TGI", tgiWarmupAt},
	// V1's sampler warmup (gpu_model_runner.py _dummy_sampler_run), which
	// re-raises the CUDA OutOfMemoryError it meets: "CUDA out of memory
	// occurred when warming up sampler with N dummy requests. Please try
	// lowering `max_num_seqs` or `gpu_memory_utilization` when
	// initializing the engine."
	{vllmSamplerPhrase, "vLLM", nil},
	// V1's check before loading anything (gpu_worker.py): the GPU's free
	// memory at start-up is less than gpu_memory_utilization × its total.
	// The words alone could be anyone's: the whole form is asked.
	{vllmStartupPhrase, "vLLM", func(text string) bool { return vllmStartupRe.Re().MatchString(text) }},
}

// vllmStartupPhrase starts vLLM V1's refusal to start on a GPU whose free
// memory is below its share: "Free memory on device[ cuda:1] (19.77/22.05
// GiB) on startup is less than desired GPU memory utilization (0.9, 19.84
// GiB). Decrease GPU memory utilization or reduce GPU memory used by other
// processes." (GiB with two decimals; the device from 0.11 on).
const vllmStartupPhrase = "Free memory on device"

// vllmStartupRe reads vLLM's start-up refusal (vllmStartupPhrase): the
// device, free and total memory, gpu_memory_utilization and the memory
// it asked for.
var vllmStartupRe = lazyre.New(`^Free memory on device(?: [a-z]+:(\d+))? \((\d+\.\d+)/(\d+\.\d+) GiB\) on startup is less than desired GPU memory utilization \(([0-9.]+), (\d+\.\d+) GiB\)`)

// VLLMStartupFigures reads vLLM's start-up refusal (vllmStartupPhrase) in
// a GenKVCache message's text: the device (-1 when not printed), the
// GPU's free and total memory at start-up, the memory vLLM asked for
// (gpu_memory_utilization × total; each within SizeTolerance of GiB to two
// decimals) and gpu_memory_utilization as printed; ok is false for
// another text.
func VLLMStartupFigures(text string) (device int, free, total, desired int64, util string, ok bool) {
	m := vllmStartupRe.Re().FindStringSubmatch(text)
	if m == nil {
		return -1, -1, -1, -1, "", false
	}
	gib := func(s string) int64 {
		f, _ := strconv.ParseFloat(s, 64)
		return int64(math.Round(f * (1 << 30)))
	}
	device = -1
	if m[1] != "" {
		device, _ = strconv.Atoi(m[1])
	}
	return device, gib(m[2]), gib(m[3]), gib(m[5]), m[4], true
}

// vllmSamplerPhrase starts vLLM V1's sampler warmup failure (kvCacheOOMs).
const vllmSamplerPhrase = "CUDA out of memory occurred when warming up sampler"

// vllmSamplerRe reads the dummy requests of vLLM's sampler warmup failure.
var vllmSamplerRe = lazyre.New(`^CUDA out of memory occurred when warming up sampler with (\d+)(?:\s|$)`)

// VLLMSamplerRequests returns the dummy requests (max_num_seqs) a vLLM
// sampler warmup failure's text names; -1 when it names none (cut before
// them), and 0, false for another text.
func VLLMSamplerRequests(text string) (n int64, ok bool) {
	if !strings.HasPrefix(text, vllmSamplerPhrase) {
		return 0, false
	}
	if m := vllmSamplerRe.Re().FindStringSubmatch(text); m != nil {
		n, _ = strconv.ParseInt(m[1], 10, 64)
		return n, true
	}
	return -1, true
}

// batchFinderPhrase starts Accelerate's batch size finder's failure
// (GenBatchFinder).
const batchFinderPhrase = "No executable batch size found, reached zero"

// tgiWarmupPhrase starts text-generation-inference's failures at start-up
// (and its forks', LoRAX's): the server's warmup
// (flash_causal_lm.py) runs one prefill batch of --max-batch-prefill-tokens
// tokens and re-raises the CUDA OutOfMemoryError it meets as "RuntimeError:
// Not enough memory to handle N prefill tokens. You need to decrease
// `--max-batch-prefill-tokens`"; its "Not enough memory to handle N total
// tokens with M prefill tokens. You need to decrease
// `--max-batch-total-tokens` or `--max-batch-prefill-tokens`" says the KV
// cache left after warmup holds fewer tokens than --max-batch-total-tokens.
// The router repeats the text in its ERROR record ("Server error: ") and
// exits with its Debug form, `Error: Warmup(Generation("..."))`.
const tgiWarmupPhrase = "Not enough memory to handle "

// tgiWarmupRe reads TGI's warmup failure: the tokens of the KV cache
// (--max-batch-total-tokens, in releases that print it) and of the
// prefill batch.
var tgiWarmupRe = lazyre.New(`^Not enough memory to handle (\d+) (?:total tokens with (\d+) )?prefill tokens`)

// TGIWarmupTokens reads a TGI warmup failure's text (tgiWarmupPhrase):
// the prefill batch's tokens and the KV cache's total tokens, -1 where
// the text does not give one.
func TGIWarmupTokens(text string) (prefill, total int64) {
	prefill, total = -1, -1
	m := tgiWarmupRe.Re().FindStringSubmatch(text)
	if m == nil {
		return
	}
	if m[2] != "" {
		total, _ = strconv.ParseInt(m[1], 10, 64)
		prefill, _ = strconv.ParseInt(m[2], 10, 64)
		return
	}
	prefill, _ = strconv.ParseInt(m[1], 10, 64)
	return
}

// debugStringOpen reports whether text, the words before a failure's
// text, ends by opening a string inside a type's name and a parenthesis:
// a Rust enum's Debug form (`Warmup(Generation("`) or a Python
// exception's repr (`RuntimeError('`, `exception=RuntimeError('`), which
// wrap an error's text whole. A word before the name makes it code or
// prose (`raise ValueError("`, `I got RuntimeError('`).
func debugStringOpen(before string) bool {
	if len(before) < 3 || !strings.HasSuffix(before, "(\"") && !strings.HasSuffix(before, "('") {
		return false
	}
	name := before[:len(before)-2]
	i := len(name)
	for i > 0 && isWordByte(name[i-1]) {
		i--
	}
	if i == len(name) || name[i] < 'A' || name[i] > 'Z' {
		return false
	}
	lead := strings.TrimRight(name[:i], " \t")
	if strings.HasSuffix(lead, "(") {
		// Nested in another type's parenthesis (Rust's
		// `Warmup(Generation("`), not in a call of a function
		// (`logger.error(Exception("`, which is code).
		j := len(lead) - 1
		for j > 0 && isWordByte(lead[j-1]) {
			j--
		}
		return j < len(lead)-1 && lead[j] >= 'A' && lead[j] <= 'Z'
	}
	return lead == "" || !isWordByte(lead[len(lead)-1])
}

// kvCacheAt returns the engine whose KV cache failure starts line[at:],
// and whether one does.
func kvCacheAt(line string, at int) (engine string, found bool) {
	engine, found, _ = kvCacheForm(line[at:])
	return engine, found
}

// kvCacheForm finds the engine whose KV cache failure's words start
// text: found when its form (if any) accepts the text, words when the
// words are there at all.
func kvCacheForm(text string) (engine string, found, words bool) {
	for _, k := range kvCacheOOMs {
		if strings.HasPrefix(text, k.phrase) {
			if k.form != nil && !k.form(text) {
				return "", false, true
			}
			return k.engine, true, true
		}
	}
	return "", false, false
}

// tgiWarmupAt reports whether text, which starts with tgiWarmupPhrase,
// goes on as TGI's failure does: its tokens ("4096 prefill tokens", "N
// total tokens with M prefill tokens"), or a number the line's end cut or
// wrapped. The words alone are common English ("Not enough memory to
// handle this file", "... 3 textures"): the review of session 42 found
// them read as a TGI OOM.
func tgiWarmupAt(text string) bool {
	if tgiWarmupRe.MatchString(text) {
		return true
	}
	rest := strings.TrimRight(text[len(tgiWarmupPhrase):], " \r")
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	// Cut after the phrase, or after its number, or inside the words
	// that follow it.
	tail := strings.TrimLeft(rest[i:], " ")
	return i == len(rest) || i > 0 && tail != "" && (strings.HasPrefix("total tokens with ", tail) || strings.HasPrefix("prefill tokens", tail))
}

// KVCacheEngine names the engine of a GenKVCache message's text ("vLLM",
// "SGLang"); "" for another text.
func KVCacheEngine(text string) string {
	e, _ := kvCacheAt(text, 0)
	return e
}

// kvCacheRe reads V1's figures: the KV cache one request of max_model_len
// needs, the memory left for the KV cache (GiB, "%.2f"), max_model_len
// and the estimated maximum length.
var kvCacheRe = lazyre.New(`max seq len \((\d+)\), \((\d+(?:\.\d+)?) GiB KV cache is needed, which is larger than the available KV cache memory \((-?\d+(?:\.\d+)?) GiB\)(?:\. Based on the available memory, the estimated maximum model length is (-?\d+))?`)

// KVCacheFigures reads a GenKVCache message's text: the model's max seq
// len, the KV cache bytes one such request needs, the bytes available for
// the KV cache (both GiB to two decimals: within SizeTolerance), and the
// maximum length the engine estimated from them; -1 for each it does not
// print. V0's form gives the max seq len and the tokens the KV cache holds
// (as estimated).
func KVCacheFigures(text string) (maxLen, needed, available, estimated int64) {
	maxLen, needed, available, estimated = -1, -1, -1, -1
	gib := func(s string) int64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return -1
		}
		return int64(math.Round(f * (1 << 30)))
	}
	if m := kvCacheRe.Re().FindStringSubmatch(text); m != nil {
		maxLen, _ = strconv.ParseInt(m[1], 10, 64)
		needed, available = gib(m[2]), gib(m[3])
		if m[4] != "" {
			estimated, _ = strconv.ParseInt(m[4], 10, 64)
		}
		return
	}
	if m := kvCacheV0Re.Re().FindStringSubmatch(text); m != nil {
		maxLen, _ = strconv.ParseInt(m[1], 10, 64)
		estimated, _ = strconv.ParseInt(m[2], 10, 64)
	}
	return
}

var kvCacheV0Re = lazyre.New(`^The model's max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((-?\d+)\)`)

// codeSpanQuotesError reports whether the markdown code span that opens
// at line[open] (a backtick) quotes an error the writer got: it follows a
// colon or the word "error" ("I get error: `...`", "I got the same error
// `...`"), or it starts the line (after a quote's or a list's marker) and
// ends it or a clause ("`...error 2`, It seems ..."). After other words
// it names one in prose or documentation ("the program's `...`", "ending
// `...`"), as it does at the start of a line that a sentence goes on
// after (prose wrapped at a width: "`...` of a library)"); a markdown
// table's cell quotes one.
func codeSpanQuotesError(line string, open int) bool {
	if open >= len(line) || line[open] != '`' || strings.HasPrefix(strings.TrimLeft(line, " \t"), "|") {
		return false
	}
	before := strings.TrimRight(line[:open], " \t")
	if strings.HasSuffix(before, ":") {
		return true
	}
	if strings.Trim(before, " \t>*-") == "" {
		end := strings.IndexByte(line[open+1:], '`')
		if end < 0 {
			return true // the span goes on past the line: a wrapped paste
		}
		after := strings.TrimLeft(line[open+1+end+1:], " \t")
		return after == "" || strings.IndexByte(",.;:!?", after[0]) >= 0
	}
	word := before[strings.LastIndexAny(before, " \t")+1:]
	return word == "error" || word == "Error" || word == "ERROR"
}

// trtSourceRe matches the end of the text before TensorRT 7's status:
// its source file, line in parentheses and a dash ("safeRuntime.cpp (25)
// -").
var trtSourceRe = lazyre.New(`\.(?:cpp|cu|h) \(\d{1,6}\) -$`)

// sourceLineRe matches the end of the text before a whole status line
// when it names a source file and line, as tensorview's and spconv 1's
// checks print them ("indice_cuda.cu 124", "tensor.h 168").
var sourceLineRe = lazyre.New(`\.(?:cu|cuh|cc|cpp|cxx|c|h|hpp)[ :]\d{1,6}$`)

// proseWord reports whether text ends with a lower-case word (a sentence
// leading into what follows) rather than a log prefix's "]", ":", "|" or
// "-".
func proseWord(text string) bool {
	i := strings.LastIndexByte(text, ' ')
	w := text[i+1:]
	if w == "" {
		return false
	}
	for j := 0; j < len(w); j++ {
		if c := w[j]; !(c >= 'a' && c <= 'z' || c == '/') {
			return false
		}
	}
	return true
}

// proseQuote reports whether the message at line[at] follows its
// exception inside a sentence: the text before the exception ends with a
// lower-case word ("... a few seconds later your terminal vomits
// RuntimeError: CUDA out of memory. ..."), where a log puts a prefix, a
// colon or nothing.
func proseQuote(line string, at int) bool {
	prefix, exc := splitPrefix(line[:at])
	return exc != "" && proseWord(prefix)
}

// isLowerOrDigitWord reports whether s starts with a lower-case letter: a
// sentence going on.
func isLowerOrDigitWord(s string) bool { return s != "" && s[0] >= 'a' && s[0] <= 'z' }

// ParseMessage reads the out-of-memory message that starts at line[at]
// (at the backend's name, "CUDA" or "HIP", at "Allocation on device" for
// cudaMallocAsync, at "cuda runtime error" or "THCudaCheck" for PyTorch
// 0.x, or at "Tried to allocate" when the words before were lost). It
// always returns a Message; one that does not follow a known form has
// Generation GenUnparsed and a Reason, and no sizes. end is where the
// message's last part ends in line.
//
// A message inside a quoted string (a JSON value, a Python repr: the
// quote opened before it on the line) ends with the string: what follows
// the closing quote (`",` and the next key, `')>)` of a repr) is not read
// as the message's, so a message cut short inside the string reads as cut
// and a status token keeps no quote.
func ParseMessage(line string, at int) (m Message, end int) {
	if lim := literalEnd(line, at); lim < len(line) {
		if lib, n := libraryAt(line[at:]); lib == "" || at+n <= lim {
			line = line[:lim]
		}
	}
	if lim := parenEnd(line, at); lim < len(line) {
		line = line[:lim]
	}
	if lim := cellEnd(line, at); lim < len(line) {
		line = line[:lim]
	}
	m = Message{Device: -1, Requested: -1, Total: -1, Free: -1, ProcessInUse: -1, Allowed: -1,
		Allocated: -1, PrivatePools: -1, ReservedUnallocated: -1, Reserved: -1, Inactive: -1}
	m.Text = strings.TrimRight(line[at:], " \r\n")
	m.Prefix, m.Exception = splitPrefix(line[:at])
	s := &scanner{s: line, i: at}
	if hostPhraseAt(line, at) {
		if end, ok := parseHost(line, at, &m); ok {
			return m, end
		}
	}
	if k, _ := frameworkAt(line, at); k >= 0 {
		return parseFramework(s, &m, k)
	}
	if loc := mpsBufferRe.Re().FindStringIndex(line[at:]); loc != nil {
		// The MPS allocator's refusal of one buffer: its size only.
		m.Backend, m.Generation = "MPS", GenMPS
		s.i, s.mps = at+len(mpsBufferPhrase), true
		m.Requested, _ = s.size()
		m.Text = line[at : at+loc[1]]
		return m, at + loc[1]
	}
	if strings.HasPrefix(line[at:], ipexLimitPhrase) {
		// The 1.x form of Intel's extension after the refusal.
		m.Backend = "XPU"
		s.i = at + len(ipexLimitPhrase)
		for s.i < len(line) && line[s.i] == ' ' {
			s.i++
		}
		if err := parseAllocatorMessage(s, &m); err != nil || m.Generation != Gen1 {
			m.Generation, m.Reason = GenUnparsed, "IPEX's refusal of an allocation over 4 GB without the figures it prints"
			if err != nil {
				m.Reason = err.Error()
			}
			return m, len(strings.TrimRight(line, " \r\n"))
		}
		return m, s.i
	}
	if strings.HasPrefix(line[at:], batchFinderPhrase) {
		// The sentence alone: prose may go on after it on the line.
		m.Generation = GenBatchFinder
		m.Text = batchFinderPhrase
		if strings.HasPrefix(line[at+len(m.Text):], ".") {
			m.Text += "."
		}
		return m, at + len(m.Text)
	}
	if engine, _ := kvCacheAt(line, at); engine != "" {
		// The engine's sentences up to the line's end (less a quote or
		// code span that closes there).
		m.Generation = GenKVCache
		m.Text = trimQuoteClose(line[at:])
		return m, at + len(m.Text)
	}
	if x := hamiRe.Re().FindStringSubmatchIndex(line); x != nil && x[2] == at {
		// HAMi-core: figures printed with %d and %lu, exact.
		m.Backend, m.Generation = "CUDA", GenHAMi
		m.Text = line[x[2]:x[3]]
		m.Device, _ = strconv.Atoi(line[x[4]:x[5]])
		m.Allowed, _ = strconv.ParseInt(line[x[8]:x[9]], 10, 64)
		return m, x[3]
	}
	if lib, n := libraryAt(line[at:]); lib != "" {
		m.Backend, m.Generation = "CUDA", GenCUDAError
		switch {
		case strings.HasPrefix(line[at:], "HIP") || lib == "the HIP runtime":
			m.Backend = "HIP"
		case lib == "Metal":
			m.Backend = "MPS" // Apple's GPU, through Metal
		case lib == LibraryUR || lib == LibraryPI:
			m.Backend = "XPU" // a oneAPI (SYCL) device
		case lib == "Vulkan":
			m.Backend = "Vulkan"
		case lib == LibraryLevelZero:
			m.Backend = "XPU" // a Level Zero device: an Intel GPU
		}
		if x := syclAllocRe.Re().FindStringSubmatch(line[at : at+n]); x != nil && lib == "llama.cpp (ggml)" {
			// llama.cpp's SYCL backend: an Intel GPU, and the bytes.
			m.Backend = "XPU"
			m.Requested, _ = strconv.ParseInt(x[1], 10, 64)
			m.Text = line[at : at+n]
		}
		if _, _, k := checkAt(line[at : at+n]); k >= 0 {
			checkFigures(&m, line[at:at+n], k)
			if checkForms[k].phrase == clAllocPhrase {
				m.Backend = "OpenCL" // any vendor's GPU
			}
		}
		if x := trtVMemRe.Re().FindStringSubmatch(line[at:]); x != nil && lib == "TensorRT" {
			m.Requested, _ = strconv.ParseInt(x[1], 10, 64)
		}
		if lib == "ONNX Runtime" || lib == LibraryCNTK {
			if x := ortCallRe.Re().FindStringSubmatch(line[at:]); x != nil {
				m.Device, _ = strconv.Atoi(x[1])
			}
		}
		if _, _, k := checkAt(line[at:]); k >= 0 && checkForms[k].phrase == darknetPhrase && !strings.HasPrefix(line[at+n:], " (err_num") {
			// darknet's words, without its perror line's strerror after
			// them ("CUDA Error: out of memory: No error"): the two
			// lines of one failure read alike, one OOM.
			m.Text = darknetPhrase
		}
		if HostStatus(line[at:at+n]) != "" {
			// A runtime's host-memory status: the machine's memory.
			m.Host, m.Backend, m.Text = true, "", line[at:at+n]
		} else if call := hostAllocCall(line[:at], line[at:]); call != "" && (lib == "the CUDA driver" || lib == "the CUDA runtime" || lib == "the HIP runtime") {
			// A pinned host allocation's failure (cudaMallocHost,
			// cuMemHostAlloc, hipHostMalloc): the machine's memory.
			m.Host, m.Backend, m.hostCall = true, "", call
		}
		if x := cntkGPURe.Re().FindStringSubmatch(line[at+n:]); x != nil && m.Device < 0 {
			m.Device, _ = strconv.Atoi(x[1])
		}
		if h := hostAllocRe.Re().FindStringSubmatch(line[:at]); h != nil && (lib == "the CUDA driver" || lib == "the HIP runtime") {
			// Pinned host memory (see hostAllocRe): not the GPU's.
			m.Host, m.Backend = true, ""
			m.Requested, _ = strconv.ParseInt(h[1], 10, 64)
			m.Text = strings.TrimRight(line[strings.LastIndex(line[:at], "failed to alloc "):at+n], " ")
		}
		return m, at + n
	}
	switch {
	case s.eat("Cuda"), s.eat("CUDA"):
		m.Backend = "CUDA"
	case s.eat("HIP"):
		m.Backend = "HIP"
	case s.eat("XPU"):
		m.Backend = "XPU"
	case s.eat("MPS backend"):
		m.Backend, m.Generation = "MPS", GenMPS
		s.mps = true
		if err := parseMPS(s, &m); err != nil {
			m.Reason = err.Error()
			if strings.HasPrefix(m.Reason, "the message ends at column") && m.ProcessInUse >= 0 {
				// Cut after its figures (an issue title): keep them.
				m.Requested = -1
				m.Warnings = s.huge
				return m, len(strings.TrimRight(line, " \r\n"))
			}
			m.Generation = GenUnparsed
			m.Device, m.Requested, m.Allowed, m.Reserved, m.ProcessInUse = -1, -1, -1, -1, -1
			return m, len(strings.TrimRight(line, " \r\n"))
		}
		m.Warnings = s.huge
		return m, s.i
	case s.eat("Allocation on device "):
		m.Backend = "CUDA"
		m.Generation = GenAsync
		if strings.TrimRight(line[s.i:], " \t\r\n") == "" {
			// Cut at device 0's NUL byte: the figures were never printed.
			m.Device, m.Reason = 0, AsyncDeviceZeroCut
			m.Text = strings.TrimRight(line[at:], " \t\r\n")
			return m, len(strings.TrimRight(line, " \r\n"))
		}
		if err := parseAsync(s, &m); err != nil {
			m.Reason = err.Error()
			if !strings.HasPrefix(m.Reason, "the message ends at column") {
				return m, len(strings.TrimRight(line, " \r\n"))
			}
		}
		m.Warnings = s.huge
		return m, s.i
	case strings.HasPrefix(line[at:], "cuda runtime err"), strings.HasPrefix(line[at:], "THCudaCheck FAIL "):
		// PyTorch 0.x: THCudaCheck FAIL prints "file=F line=L error=2 :
		// out of memory" to stderr, then raises "cuda runtime error (2) :
		// out of memory at F:L". Both name the same place: say it the
		// same way, so that the pair is one OOM.
		m.Backend, m.Generation = "CUDA", GenTHC
		rest := m.Text
		if strings.HasPrefix(rest, "THCudaCheck FAIL ") {
			file, line := thcField(rest, "file="), thcField(rest, "line=")
			m.Text = "cuda runtime error (2) : out of memory"
			if file != "" {
				m.Text += " at " + file + ":" + line
			}
		} else if i := strings.Index(rest, "out of memory"); i >= 0 {
			m.Text = "cuda runtime error (2) : " + rest[i:]
		}
		return m, len(strings.TrimRight(line, " \r\n"))
	}
	if s.eat(" error: out of memory") || s.eat(" error:out of memory") {
		m.Generation = GenCUDAError
		return m, s.i
	}
	err := parseAllocatorMessage(s, &m)
	if err != nil {
		bad := Message{Generation: GenUnparsed, Backend: m.Backend, Exception: m.Exception, Prefix: m.Prefix,
			Device: -1, Requested: -1, Total: -1, Free: -1, ProcessInUse: -1, Allowed: -1, Allocated: -1,
			PrivatePools: -1, ReservedUnallocated: -1, Reserved: -1, Inactive: -1, Text: m.Text, Reason: err.Error()}
		if !strings.HasPrefix(bad.Reason, "the message ends at column") && s.i < len(line) && line[s.i] >= 0x80 && m.Requested > 0 {
			// The message stops where text in another script goes on
			// ("GPU 。" then the reporter's words): cut there.
			bad.Reason = fmt.Sprintf("the message ends at column %d, where other text follows", s.i+1)
		}
		bodyCut := (strings.HasPrefix(line[at:], "(GPU ") || strings.HasPrefix(line[at:], "GPU ")) && m.Free >= 0
		if strings.HasPrefix(bad.Reason, "the message ends at column") && (m.Requested > 0 || bodyCut) {
			// Keep every figure printed whole before the cut; of a message
			// read from its GPU on, once it has given the free memory.
			m.Generation, m.Reason, m.Warnings = GenCut, bad.Reason, append(m.Warnings, s.huge...)
			return m, len(strings.TrimRight(line, " \r\n"))
		}
		return bad, len(strings.TrimRight(line, " \r\n"))
	}
	m.Warnings = append(m.Warnings, s.huge...)
	return m, s.i
}

// cellEnd returns where the markdown table cell that holds the message
// at line[at] ends (the " |" after it, on a line that starts with "|"): a
// message cut to a cell's width ("... Tried to allocate 2.32 GiB. GPU 0
// has a to |") ends there, and its figures printed whole before the cut
// are read. len(line) when the line is no table's row.
func cellEnd(line string, at int) int {
	if !strings.HasPrefix(strings.TrimLeft(line[:at], " \t"), "|") {
		return len(line)
	}
	if j := strings.Index(line[at:], " |"); j >= 0 {
		return at + j
	}
	return len(line)
}

// cntkGPURe matches the GPU that CNTK's CUDA checks print after the
// status ("CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ;
// hostname=... ; expr=...": its CUDA_CALL's "%s failure %d: %s ; GPU=%d
// ; hostname=%s ; expr=%s"); its group is the index.
var cntkGPURe = lazyre.New(`^\s*;\s*GPU=(\d{1,4})\s*(?:;|$)`)

// parenEnd returns where the parenthesis opened right before the message
// at line[at] closes ("... runs out of memory (CUDA out of memory. Tried
// to allocate 3.22 GiB)": the message quoted in a title's parentheses,
// cut there); len(line) when no parenthesis opens right before it, or it
// does not close on the line. The message's own parentheses ("(GPU 0;
// ...)") are counted in.
//
// A status name in the parentheses (chipStar's "hipErrorTbd
// (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ) in FILE:LINE:FUNC") is a
// runtime's annotation of its own record, whose words go on after them:
// it is not cut.
func parenEnd(line string, at int) int {
	if at == 0 || line[at-1] != '(' || statusToken(line[at:]) {
		return len(line)
	}
	depth := 1
	for i := at; i < len(line); i++ {
		switch line[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(line)
}

// statusToken reports whether s starts with a runtime's status name: an
// identifier of capitals, digits and underscores with an underscore in it
// (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, CUDA_ERROR_OUT_OF_MEMORY).
func statusToken(s string) bool {
	n, under := 0, false
	for n < len(s) && (s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9' || s[n] == '_') {
		under = under || s[n] == '_'
		n++
	}
	return n > 0 && under && (n == len(s) || s[n] == ' ' || s[n] == ')' || s[n] == ':')
}

// literalEnd returns where the quoted string that holds the message at
// line[at] ends: the first unescaped quote after at of the kind that
// opened the string, the last quote of its kind before at, which opens
// one only at the line's start or after a space, a tab or one of "([{:=,"
// (an apostrophe inside a word, "I'm", opens nothing; nor does the
// closing quote of a string before the message). len(line) when the
// message is in no string, or its string does not close on the line.
func literalEnd(line string, at int) int {
	end := len(line)
	for _, q := range []byte{'"', '\''} {
		open := strings.LastIndexByte(line[:at], q)
		if open < 0 || open > 0 && strings.IndexByte(" \t([{:=,", line[open-1]) < 0 {
			continue
		}
		for j := at; j < end; j++ {
			if line[j] == '\\' {
				j++
				continue
			}
			if line[j] == q {
				end = j
				break
			}
		}
	}
	return end
}

// parseFramework reads another framework's message (frameworkOOMs[k]) at
// s.i. A message that departs from the form keeps the generation with no
// sizes and a Reason.
func parseFramework(s *scanner, m *Message, k int) (Message, int) {
	f := frameworkOOMs[k]
	m.Generation, m.Backend = f.gen, "CUDA"
	start := s.i
	s.i = min(s.i+len(f.phrase), len(s.s)) // the phrase may end the line without its space (phraseAt)
	var err error
	switch {
	case f.gen == GenCuPy && f.phrase == "Out of memory allocating ":
		// "N bytes (allocated so far: T bytes[, limit set to: L bytes])."
		if m.Requested, err = s.groupedBytes(); err == nil && s.eat(" (allocated so far: ") {
			if m.Reserved, err = s.groupedBytes(); err == nil && s.eat(", limit set to: ") {
				m.Allowed, err = s.groupedBytes()
			}
		}
	case f.phrase == "out of memory to allocate ":
		// "N bytes (total T bytes)", CuPy before 5.
		if m.Requested, err = s.groupedBytes(); err == nil && s.eat(" (total ") {
			m.Reserved, err = s.groupedBytes()
		}
	case f.phrase == "Out of memory while trying to allocate ":
		// "N bytes." (tf_allocator_adapter.cc) or "16.00GiB" (PJRT's
		// HumanReadableNumBytes).
		at := s.i
		if m.Requested, err = s.groupedBytes(); err != nil {
			s.i = at
			m.Requested, err = s.humanBytes()
		}
	case f.gen == GenDirectML:
		// "N bytes. There is not enough GPU video memory available!"
		if m.Requested, err = s.groupedBytes(); err == nil {
			err = s.want(". There is not enough GPU video memory available!")
		}
		m.Backend = "" // DirectX 12: the message names no vendor's API
	case f.phrase == xlaHBMPhrase:
		// " Used U of C hbm.[ Exceeded hbm capacity by E.]": the program's
		// need and the core's HBM.
		if err = s.want(" Used "); err == nil {
			if m.Requested, err = s.tpuBytes(); err == nil {
				if err = s.want(" of "); err == nil {
					if m.Total, err = s.tpuBytes(); err == nil {
						err = s.want(" hbm")
					}
				}
			}
		}
		if err == nil && s.eat(". Exceeded hbm capacity by ") {
			if _, err = s.tpuBytes(); err != nil {
				m.Total = -1
			}
		}
	case f.phrase == "Out of memory allocating ":
		// XLA's "N bytes." (absl's %d of a size_t).
		m.Requested, err = s.groupedBytes()
	case f.phrase == "Failed to allocate request for ":
		// "%s (%uB) on device ordinal %d": HumanReadableNumBytes, then the
		// exact bytes.
		if m.Requested, err = s.humanBytes(); err == nil && s.eat(" (") {
			at := s.i
			if d := s.digits(); d != "" && len(d) <= 18 && s.eat("B)") {
				m.Requested, _ = strconv.ParseInt(d, 10, 64)
			} else {
				s.i = at
				err = s.expected(`the size in bytes, "NB)"`)
			}
			if err == nil {
				if err = s.want(" on device ordinal "); err == nil {
					m.Device, err = s.int()
				}
			}
		}
	case f.gen == GenPaddle:
		err = parsePaddle(s, m)
		if err == nil {
			s.eat(".")
			m.Text = s.s[start:s.i]
			return *m, s.i
		}
		if m.Requested >= 0 {
			// Cut or wrapped after its request (a paste's line end
			// after "available memory is only"): the figures before.
			m.Reason = err.Error() + " (cut after its request)"
			m.Text = strings.TrimRight(s.s[start:], " \r\n")
			if m.Free < 0 {
				m.Free = -1
			}
			return *m, len(strings.TrimRight(s.s, " \r\n"))
		}
	case f.phrase == theanoPhrase:
		// "N bytes of device memory (REASON)[. Driver report F bytes free
		// and T bytes total]" (the form matched: REASON is an OOM's).
		if m.Requested, err = s.groupedBytes(); err == nil {
			if err = s.want(" of device memory ("); err == nil {
				if j := strings.IndexByte(s.s[s.i:], ')'); j >= 0 {
					s.i += j + 1
				}
				if s.eat(". Driver report ") {
					if m.Free, err = s.groupedBytes(); err == nil {
						if err = s.want(" free and "); err == nil {
							if m.Total, err = s.groupedBytes(); err == nil {
								s.eat(" total")
							}
						}
					}
					if err != nil {
						// Cut after the request: keep it.
						m.Reason, m.Free, m.Total = err.Error(), -1, -1
						m.Text = strings.TrimRight(s.s[start:], " \r\n")
						return *m, len(strings.TrimRight(s.s, " \r\n"))
					}
				} else {
					s.eat(".")
				}
				m.Text = s.s[start:s.i]
				return *m, s.i
			}
		}
	case f.phrase == gpuArrayPhrase || f.phrase == gpuArrayPy2Words || f.phrase == gpuArrayPy2WordsCap:
		m.Text = s.s[start:s.i]
		return *m, s.i
	case f.gen == GenORT:
		// "R" after the failed extension's words, or "A is smaller than
		// requested bytes of R".
		m.Backend = ""
		if !s.eat(" ") {
			err = s.expected(`" " and a size in bytes`)
		}
		if f.phrase == ortAvailablePhrase && err == nil {
			if _, err = s.arenaBytes(); err == nil {
				err = s.want(" is smaller than requested bytes of ")
			}
		}
		if err == nil {
			m.Requested, err = s.arenaBytes()
		}
		if err == nil {
			m.Text = s.s[start:s.i]
			return *m, s.i
		}
		m.Text = strings.TrimRight(s.s[start:], " \r\n")
	case f.phrase == tfEigenPhrase:
		// "N." then "See error logs ...": the bytes, the GPU (no index).
		if m.Requested, err = s.int64(); err == nil {
			m.Text = s.s[start:s.i] + "."
			return *m, s.i + 1
		}
	case f.phrase == tfRanOutPhrase:
		// "N bytes for " and the node on the next line: the bytes, the
		// GPU (no index).
		if m.Requested, err = s.groupedBytes(); err == nil {
			m.Text = s.s[start:s.i]
			return *m, s.i
		}
	case f.gen == GenTF:
		// The device is in the message ("... on /job:localhost/replica:0/
		// task:0/device:GPU:0 by allocator GPU_0_bfc") or, for the eager
		// form, in the function_node annotation before it.
		m.Backend = ""
		where := m.Text
		if f.phrase == "failed to allocate memory" {
			where = functionNodeRe.Re().FindString(strings.TrimRight(s.s[:start], " \t"))
			// "[Op:AddV2]" ends it; " name: ..." after it is Python's.
			if s.eat(" [Op:") {
				if j := strings.IndexByte(s.s[s.i:], ']'); j >= 0 {
					s.i += j + 1
					m.Text = s.s[start:s.i]
				}
			}
		}
		if d := tfDeviceRe.FindStringSubmatch(where); d != nil {
			n, _ := strconv.Atoi(d[2])
			switch strings.ToUpper(d[1]) {
			case "GPU":
				m.Backend, m.Device = "CUDA", n
			case "CPU":
				m.Host = true
			}
		}
		return *m, len(strings.TrimRight(s.s, " \r\n"))
	}
	if err != nil {
		m.Reason = err.Error()
		m.Requested, m.Reserved, m.Allowed, m.Device = -1, -1, -1, -1
	}
	if f.gen == GenXLA {
		m.Backend = "" // XLA on a GPU, a TPU or the CPU: the message does not say
		if err == nil {
			// The message as read: a markdown "**" or other text glued
			// after it is not the message's (one message printed twice,
			// in bold and in a log record, reads the same).
			s.eat(".")
			m.Text = s.s[start:s.i]
		}
	}
	return *m, len(strings.TrimRight(s.s, " \r\n"))
}

// parsePaddle reads PaddlePaddle's message after its words "Out of
// memory error on GPU ": "d. Cannot allocate X memory on GPU d, [Y memory
// has been allocated and ]available memory is only Z." (device, request,
// reserved, free). A text that does not go on with " memory on GPU "
// after X is read as far as X, without error.
func parsePaddle(s *scanner, m *Message) error {
	d, err := s.int()
	if err != nil {
		return err
	}
	m.Device = d
	if err := s.want(". Cannot allocate "); err != nil {
		return err
	}
	if m.Requested, err = s.paddleBytes(); err != nil || !s.eat(" memory on GPU ") {
		return err
	}
	s.int()
	s.eat(", ")
	if !s.eat("available") {
		if m.Reserved, err = s.paddleBytes(); err != nil {
			return err
		}
		if err := s.want(" memory has been allocated and "); err != nil {
			return err
		}
	}
	s.eat("available")
	if err := s.want(" memory is only "); err != nil {
		return err
	}
	m.Free, err = s.paddleBytes()
	return err
}

// tfDeviceRe matches the device a TensorFlow message names, its type and
// index: "/device:GPU:0", "/device:CPU:0", TF 1.x's "/gpu:0" and "/cpu:0",
// "/device:XLA_GPU:0".
var tfDeviceRe = lazyre.New(`/(?:device:)?(?:XLA_)?([CG]PU|[cg]pu):(\d+)`)

// groupedBytes reads "N bytes" where N may have thousands separators
// ("25,600,000 bytes", Python's "{:,}").
func (s *scanner) groupedBytes() (int64, error) {
	at := s.i
	var n int64
	digits := 0
	for s.i < len(s.s) {
		c := s.s[s.i]
		switch {
		case c >= '0' && c <= '9':
			if digits >= 18 {
				return -1, fmt.Errorf("column %d: size out of range", at+1)
			}
			n = n*10 + int64(c-'0')
			digits++
		case c == ',' && digits > 0 && s.i+1 < len(s.s) && s.s[s.i+1] >= '0' && s.s[s.i+1] <= '9':
		default:
			goto done
		}
		s.i++
	}
done:
	if digits == 0 {
		return -1, s.expected("a size")
	}
	if err := s.want(" bytes"); err != nil {
		return -1, err
	}
	return n, nil
}

// arenaBytes reads a size ONNX Runtime's arena prints, a size_t in
// decimal without separators; one over the int64 range is an error.
func (s *scanner) arenaBytes() (int64, error) {
	at := s.i
	if v, err := s.int64(); err == nil {
		return v, nil
	}
	s.i = at
	return -1, s.expected("a size in bytes below 2^63")
}

// ArenaAvailable reads a GenORT message's text ("Available memory of A is
// smaller than requested bytes of R"): A, the bytes the arena's memory
// limit left it, or -1 when text is the other form or no such message.
func ArenaAvailable(text string) int64 { return firstInt(ortAvailableRe, text) }

// firstInt is the integer re's first group reads in text; -1 when re does
// not match or the number does not fit in int64.
func firstInt(re *lazyre.Regexp, text string) int64 {
	m := re.Re().FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return -1
	}
	return v
}

var ortAvailableRe = lazyre.New(`^Available memory of (\d+) is smaller than requested bytes of \d+$`)

// paddleBytes reads PaddlePaddle's HumanReadableSize ("56.000000MB",
// "7.782776GB": "%f" and a unit of powers of 1024, up to EB for a request
// a size_t overflow made) as bytes, the space some releases and pastes put
// before the unit too ("56.000000 MB", as the message's form accepts); a
// size past int64 is math.MaxInt64.
func (s *scanner) paddleBytes() (int64, error) {
	at := s.i
	num := s.digits()
	if s.eat(".") {
		num += "." + s.digits()
	}
	v, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil {
		s.i = at
		return -1, s.expected("a size")
	}
	s.eat(" ")
	unit := float64(s.unit(paddleUnits))
	if unit == 0 {
		s.i = at
		return -1, s.expected(`"B", "kB", "MB", "GB", "TB", "PB" or "EB"`)
	}
	if b := v*unit + 0.5; b < math.MaxInt64 {
		return int64(b), nil
	}
	return math.MaxInt64, nil
}

// sizeUnit is a unit a message prints after a size, as printed, and its
// bytes.
type sizeUnit struct {
	text  string
	bytes int64
}

// The units of the forms' sizes, each list in the order they are tried
// (a unit before another that ends it: "kB" before "B"): Paddle's %f
// sizes (powers of 1024, "kB" or "KB"), XLA's HumanReadableNumBytes,
// PyTorch's format_size() (after a space; the MPS allocator's "KB",
// "MB", "GB" up to 2.3 too, powers of 1024 as well).
var (
	paddleUnits     = []sizeUnit{{"EB", 1 << 60}, {"PB", 1 << 50}, {"kB", 1 << 10}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40}, {"B", 1}}
	humanUnits      = []sizeUnit{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}}
	formatSizeUnits = []sizeUnit{{" KiB", 1 << 10}, {" MiB", 1 << 20}, {" GiB", 1 << 30}}
	mpsSizeUnits    = []sizeUnit{{" KiB", 1 << 10}, {" MiB", 1 << 20}, {" GiB", 1 << 30}, {" KB", 1 << 10}, {" MB", 1 << 20}, {" GB", 1 << 30}}
)

// unit reads the first of units at s.i and returns its bytes; 0 (s.i
// unmoved) when none is there.
func (s *scanner) unit(units []sizeUnit) int64 {
	for _, u := range units {
		if s.eat(u.text) {
			return u.bytes
		}
	}
	return 0
}

// humanBytes reads a size as TensorFlow's HumanReadableNumBytes prints it:
// "D.DD" then "B", "KiB", "MiB", "GiB", "TiB" with no space ("16.00GiB");
// within half a hundredth of the unit.
func (s *scanner) humanBytes() (int64, error) {
	return s.hundredthsSize(humanUnits, "a size with two decimals", `"B", "KiB", "MiB", "GiB" or "TiB"`, false)
}

// tpuUnits are the TPU compiler's units (tpuBytes).
var tpuUnits = []sizeUnit{{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}}

// tpuBytes reads a size as the TPU compiler prints it: "21.90G",
// "530.00M", "64.0K", "0B" (at most two decimals; K, M, G, T of 1024, B
// bytes); within half a unit of its last digit.
func (s *scanner) tpuBytes() (int64, error) {
	return s.hundredthsSize(tpuUnits, "a size with at most two decimals", `"K", "M", "G", "T" or "B"`, true)
}

// hundredthsSize reads a size of at most six whole digits and two
// decimals, then one of units; within half a hundredth of the unit.
// tooPrecise and unitNames say what was wanted in its errors; rewind puts
// s.i back at the size's start when no unit follows it.
func (s *scanner) hundredthsSize(units []sizeUnit, tooPrecise, unitNames string, rewind bool) (int64, error) {
	at := s.i
	whole := s.digits()
	if whole == "" || len(whole) > 6 {
		return -1, s.expected("a size")
	}
	frac := ""
	if s.eat(".") {
		frac = s.digits()
	}
	if len(frac) > 2 {
		s.i = at
		return -1, s.expected(tooPrecise)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	unit := s.unit(units)
	if unit == 0 {
		if rewind {
			s.i = at
		}
		return -1, s.expected(unitNames)
	}
	hundredths, _ := strconv.ParseInt(whole+frac, 10, 64)
	return hundredths/100*unit + (hundredths%100*unit+50)/100, nil
}

// thcField reads "name=value" up to the next space in a THCudaCheck line.
func thcField(s, name string) string {
	i := strings.Index(s, name)
	if i < 0 {
		return ""
	}
	v := s[i+len(name):]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// AsyncDeviceZeroCut is the Reason of a GenAsync message that is only
// "Allocation on device " after torch.OutOfMemoryError (or
// torch.cuda.OutOfMemoryError): PyTorch's CUDAMallocAsyncAllocator.cpp
// streams the device's index, a c10::DeviceIndex (int8_t), as a
// character, so on device 0 it writes a NUL byte, and the exception's
// text ends there when Python reads it as a C string (PyTorch 2.x until
// pytorch/pytorch#168369, ComfyUI's "torch.OutOfMemoryError: Allocation on
// device "). The device is 0; the figures after it were never printed,
// in this text or any log of the run.
const AsyncDeviceZeroCut = "the message ends after \"Allocation on device \", where PyTorch wrote device 0's index as a NUL byte (a c10::DeviceIndex streamed as a character), which ends the exception's text: its figures were never printed"

// asyncDeviceByte: on a device other than 0, the same releases write the
// index as the byte of that value (device 1 as 0x01) and the message goes
// on whole; parseAsync reads the byte as the index.
const asyncDeviceByte = ' '

// torchOOMException reports whether before, the text before a message,
// ends with PyTorch's out-of-memory exception and its colon
// ("torch.OutOfMemoryError: ", "torch.cuda.OutOfMemoryError: ", a log
// prefix before it).
func torchOOMException(before string) bool {
	_, exc := splitPrefix(before)
	return exc == "torch.OutOfMemoryError" || exc == "torch.cuda.OutOfMemoryError"
}

// asyncZeroCutAt reports whether the text at line[at] is "Allocation on
// device " and nothing after it: cudaMallocAsync's message cut at device
// 0's NUL byte (see AsyncDeviceZeroCut), which is an OOM only where the
// text names its exception.
func asyncZeroCutAt(line string, at int) bool {
	rest, ok := strings.CutPrefix(line[at:], "Allocation on device ")
	return ok && strings.TrimRight(rest, " \t\r\n") == ""
}

// codeKeywords are the words of Python (and C-like languages) after
// which a string literal is code's: raised, returned, tested, printed.
var codeKeywords = []string{"raise", "return", "assert", "if", "elif", "in", "not", "and", "or", "yield", "throw", "new", "await", "print", "==", "!=", " ="}

// codeStringAt reports whether the message at line[at] is a string
// literal in source code, not an error that happened: the quote before
// it opens a literal that code raises, returns, compares or passes to a
// function ("raise RuntimeError('CUDA error: out of memory')", "err =
// RuntimeError(...)", "if 'CUDA error: out of memory' in str(e):",
// "is_cuda_out_of_memory(RuntimeError('CUDA error: out of memory'))").
// An exception's repr as Python prints it stands alone, after a colon, in
// a list, or as another exception's argument ("Caught:
// RuntimeError('...')", "Exception(RuntimeError('...'))"): not code; nor
// is a key's value ("error='...'", "{'error': '...'}"), nor a type's or
// variant's Debug print (Rust's `Generation("...")`).
func codeStringAt(line string, at int) bool {
	if at == 0 || (line[at-1] != '\'' && line[at-1] != '"') {
		return false
	}
	q := line[at-1]
	if end := strings.IndexByte(line[at:], q); end >= 0 {
		// Tested after the literal: "'...' in str(e)", "'...' == s".
		after := strings.TrimLeft(line[at+end+1:], " \t")
		if strings.HasPrefix(after, "==") || strings.HasPrefix(after, "!=") || membershipTestRe.MatchString(after) {
			return true
		}
	}
	before := strings.TrimRight(line[:at-1], " \t")
	if strings.HasSuffix(before, "(") {
		name := before[:len(before)-1]
		start := len(name)
		for start > 0 && isIdentByte(name[start-1]) {
			start--
		}
		callee := name[start:]
		if callee == "" {
			return false // a tuple's repr
		}
		if !exceptionName(callee) {
			// A function's argument (print(...), f(...)); a capitalised
			// name is a type's or a variant's, as data prints it (Rust's
			// Debug: Generation("...")).
			return functionName(callee)
		}
		// An exception constructed: code when what comes before it is.
		before = strings.TrimRight(name[:start], " \t")
		if strings.HasSuffix(before, "(") {
			outer := strings.TrimRight(before[:len(before)-1], " \t")
			k := len(outer)
			for k > 0 && isIdentByte(outer[k-1]) {
				k--
			}
			return functionName(outer[k:])
		}
	}
	for _, w := range codeKeywords {
		if strings.HasSuffix(before, w) {
			k := len(before) - len(w)
			if w[0] == ' ' || w[0] == '=' || w[0] == '!' || k == 0 || !isIdentByte(before[k-1]) {
				if operatorWord(w) && !codeStatementRe.MatchString(strings.TrimLeft(before, " \t")) {
					// "and", "or", "not", "in" join a sentence as well as
					// an expression: "job failed and '...' was logged" is
					// a log's words. Code only where the line is a
					// statement (see codeStatementRe).
					continue
				}
				return true
			}
		}
	}
	return false
}

// operatorWord reports whether w, one of codeKeywords, is an operator
// that prose uses too ("and", "or", "not", "in").
func operatorWord(w string) bool { return w == "and" || w == "or" || w == "not" || w == "in" }

// codeStatementRe matches the start of a line of Python that an
// expression with an operator word belongs to: a keyword that starts a
// statement ("if", "elif", "while", "assert", "return", "yield",
// "raise", "print(", "lambda"), or an assignment ("ok = ...", "x.y[0] =
// ...", "x += ...").
var codeStatementRe = lazyre.New(`^(?:(?:if|elif|while|assert|return|yield|raise|lambda|not)\b|print\(|[A-Za-z_][\w.\[\]'"]*\s*(?:[-+*/|&]?=)[^=])`)

// membershipTestRe matches the rest of a membership test after a string
// literal: "in" or "not in" and an expression (names, calls, indexes)
// that ends the condition (the line, a colon ending it, a closing
// parenthesis). A log line that quotes the error and goes on in words
// ("caught '...' in step 5, skipping", "... in training and skipped it")
// is none; a test joined to more code ("if '...' in s and n:", "x =
// '...' in s or y") is code by the words before the literal.
var membershipTestRe = lazyre.New(`^(?:not\s+)?in\s+(?:[\w.]+|\([^()]*\)|\[[^\]]*\])+\s*(?:$|:\s*(?:#.*)?$|\))`)

// functionName reports whether name (qualified or not) reads as a
// function's: its last part starts with a lower-case letter
// (is_cuda_out_of_memory, print, torch.cuda.is_oom).
func functionName(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	return last != "" && last[0] >= 'a' && last[0] <= 'z'
}

// exceptionName reports whether name (qualified or not) reads as an
// exception class's: it ends with "Error", "Exception" or "Warning".
func exceptionName(name string) bool {
	return strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception") || strings.HasSuffix(name, "Warning")
}

// comfyExceptionLead reports whether before, the text before a message,
// ends with ComfyUI's record of an exception it caught while running a
// prompt: "!!! Exception during processing !!! " and then str(ex), the
// exception's text without its type (ComfyUI's execution.py,
// logging.error(f"!!! Exception during processing !!! {ex}"), a log
// prefix before it). The traceback ComfyUI logs next ends with the
// exception's type and the same text.
func comfyExceptionLead(before string) bool {
	return strings.HasSuffix(strings.TrimRight(before, " "), comfyExceptionMark)
}

// comfyExceptionMark is ComfyUI's mark of an exception caught while
// running a prompt (see comfyExceptionLead).
const comfyExceptionMark = "!!! Exception during processing !!!"

// parseAsync reads a cudaMallocAsync message after "Allocation on device
// ": its figures, one "label : size" each, separated by spaces or line
// ends (a reader joins the lines). The device is digits, or one byte
// below asyncDeviceByte whose value is the index.
func parseAsync(s *scanner, m *Message) error {
	var err error
	if s.i < len(s.s) && s.s[s.i] < asyncDeviceByte && s.s[s.i] != '\t' && s.s[s.i] != '\r' && s.s[s.i] != '\n' {
		m.Device = int(s.s[s.i])
		s.i++
	} else if m.Device, err = s.int(); err != nil {
		return err
	}
	if err := s.want(" would exceed allowed memory. (out of memory)"); err != nil {
		return err
	}
	var limit int64 = -1
	for _, f := range []struct {
		label, field string
		v            *int64
	}{
		{"Currently allocated", "allocated", &m.Allocated}, {"Requested", "requested", &m.Requested}, {"Device limit", "total", &m.Total},
		{"Free (according to CUDA)", "free", &m.Free}, {"PyTorch limit (set by user-supplied memory fraction)", "allowed", &limit},
	} {
		s.spaces()
		if err := s.want(f.label); err != nil {
			return err
		}
		s.spaces()
		if err := s.want(":"); err != nil {
			return err
		}
		s.spaces()
		n := len(s.huge)
		read := s.size
		if f.v == &m.Requested {
			read = s.request
		}
		if *f.v, err = read(); err != nil {
			return err
		}
		s.note(m, f.field)
		if f.v == &limit {
			s.huge = s.huge[:n] // the unset limit is not a figure gone wrong
		}
	}
	// The limit is SIZE_MAX (printed 17179869184.00 GiB, read as unknown)
	// unless set_per_process_memory_fraction set one; at or above the
	// device's memory it caps nothing.
	if limit >= 0 && (m.Total < 0 || limit < m.Total) {
		m.Allowed = limit
	}
	return nil
}

// parseMPS reads an MPS message after "MPS backend" (see GenMPS). A text
// cut after the request (the pool's name lost) is read as whole: the pool
// plays no part in the figures.
func parseMPS(s *scanner, m *Message) error {
	if err := s.want(" out of memory (MPS allocated: "); err != nil {
		return err
	}
	var err error
	if m.Reserved, err = s.size(); err != nil {
		return err
	}
	s.note(m, "reserved")
	reservedTol := s.tol
	if err := s.want(", other allocations: "); err != nil {
		return err
	}
	other, err := s.size()
	if err != nil {
		return err
	}
	if reservedTol+s.tol > 0 {
		m.Coarse = append(m.Coarse, CoarseFigure{"process_in_use", max(reservedTol, SizeTolerance(m.Reserved)) + max(s.tol, SizeTolerance(other)), ""})
	}
	if s.eat(", max allowed: ") {
		if m.Allowed, err = s.size(); err != nil {
			return err
		}
		s.note(m, "allowed")
	}
	if m.Reserved >= 0 && other >= 0 {
		m.ProcessInUse = m.Reserved + other
	}
	if err := s.want("). Tried to allocate "); err != nil {
		return err
	}
	if m.Requested, err = s.request(); err != nil {
		return err
	}
	s.note(m, "requested")
	if s.i >= s.end() {
		return nil
	}
	if err := s.want(" on "); err != nil {
		return err
	}
	if !s.eat("shared pool") {
		return s.want("private pool")
	}
	return nil
}

// splitPrefix splits the text before a message into a prefix and an
// exception type: "[rank0]: torch.OutOfMemoryError: " gives "[rank0]:"
// and "torch.OutOfMemoryError".
// TF 1.x's " (see above for traceback)" between the exception and its
// colon, and TF 2's function_node annotation after it, are neither.
func splitPrefix(before string) (prefix, exception string) {
	t := strings.TrimRight(before, " ")
	if loc := functionNodeRe.Re().FindStringIndex(t); loc != nil {
		t = strings.TrimRight(t[:loc[0]], " ")
	}
	if strings.HasSuffix(t, ":") {
		body := strings.TrimSuffix(t[:len(t)-1], seeAbove)
		// XLA's and TF's status word after the exception
		// ("XlaRuntimeError: RESOURCE_EXHAUSTED: ") is not one.
		for _, w := range statusWords[:2] {
			if rest := strings.TrimRight(strings.TrimSuffix(body, w), " "); rest != body && strings.HasSuffix(rest, ":") {
				body = rest[:len(rest)-1]
				break
			}
		}
		start := len(body)
		for start > 0 && isIdentByte(body[start-1]) {
			start--
		}
		if id := body[start:]; start < len(body) && strings.HasSuffix(id, "Error") && !strings.HasPrefix(id, ".") {
			return strings.TrimRight(body[:start], " "), id
		}
	}
	return t, ""
}

func isIdentByte(c byte) bool {
	return c == '.' || c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// bodyOnly is the warning for a message read from its GPU on: the words
// before, with the size asked for, are not in the text.
const bodyOnly = "an out-of-memory message that starts at its GPU (its first words, \"CUDA out of memory. Tried to allocate N\", are not in the text: a paste or a log cut at its start): the size asked for is not in it; its other figures were read"

// parseAllocatorMessage reads " out of memory. Tried to allocate ..." in
// either generation.
func parseAllocatorMessage(s *scanner, m *Message) error {
	if s.eat("(GPU ") || s.eat("GPU ") {
		// Cut before "Tried to allocate": the request is unknown. The
		// 1.x figures follow "GPU d; ", the 2.x ones "GPU d has".
		m.Warnings = append(m.Warnings, bodyOnly)
		j := s.i
		for j < len(s.s) && s.s[j] >= '0' && s.s[j] <= '9' {
			j++
		}
		if strings.HasPrefix(s.s[j:], "; ") {
			m.Generation = Gen1
			return parseGen1(s, m)
		}
		m.Generation = Gen2
		return parseGen2(s, m)
	}
	if !s.eat("Tried to allocate ") {
		if err := s.want(" out of memory. Tried to allocate "); err != nil {
			return err
		}
	}
	if s.eat("more than 1EB memory") {
		// allocate()'s check of the size before any figure is known.
		m.Generation = GenExa
		s.eat(".")
		return nil
	}
	var err error
	if m.Requested, err = s.request(); err != nil {
		return err
	}
	s.note(m, "requested")
	switch {
	case s.eat(". GPU "):
		m.Generation = Gen2
		return parseGen2(s, m)
	case s.eat(" (GPU "):
		m.Generation = Gen1
		return parseGen1(s, m)
	}
	if err := s.cutInside(". GPU ", " (GPU "); err != nil {
		return err
	}
	return s.expected(`". GPU " (PyTorch 2.1 and later) or " (GPU " (before)`)
}

func parseGen2(s *scanner, m *Message) error {
	var err error
	if strings.HasPrefix(s.s[s.i:], " has a total capac") {
		// No index between "GPU " and its words (huggingface/text-
		// generation-inference#2246): a build that wrote the index as
		// something a paste dropped. The figures are whole; the device
		// is not known.
		m.Device = -1
	} else if m.Device, err = s.int(); err != nil {
		return err
	}
	if s.eat(" has a total capacty of ") {
		m.Typo = true
	} else if err := s.want(" has a total capacity of "); err != nil {
		return err
	}
	if m.Total, err = s.size(); err != nil {
		return err
	}
	s.note(m, "total")
	if err := processesAfterTotal(s, m); err != nil {
		return err
	}
	// XPU in PyTorch 2.5 and 2.6 prints no free memory: "... total
	// capacity of T. Of the allocated memory ...".
	if m.Backend != "XPU" || !s.eat(". ") {
		if err := s.want(" of which "); err != nil {
			return err
		}
		if m.Free, err = s.size(); err != nil {
			return err
		}
		s.note(m, "free")
		if err := s.want(" is free. "); err != nil {
			return err
		}
	}
	for {
		switch {
		case s.eat("Process "):
			p, err := s.process(m)
			if err == nil {
				err = s.want(".")
			}
			if p.Bytes >= 0 && (err == nil || strings.HasPrefix(err.Error(), "the message ends at column")) {
				// Its size is whole, even if cut right after ("Process
				// 12 has 1.00 GiB memory in u").
				m.Processes = append(m.Processes, p)
			}
			if err != nil {
				return err
			}
			if err := s.want(" "); err != nil {
				return err
			}
			continue
		case s.eat("Including non-PyTorch memory, this process has "):
			if m.ProcessInUse >= 0 {
				return fmt.Errorf("column %d: this process's memory is given twice", s.i+1)
			}
			n, err := s.size()
			if err != nil {
				return err
			}
			s.note(m, "process_in_use")
			if err := s.want(" memory in use."); err != nil {
				return err
			}
			m.ProcessInUse = n
			if err := s.want(" "); err != nil {
				return err
			}
			continue
		}
		break
	}
	if err := s.cutInside("Process ", "Including non-PyTorch memory, this process has "); err != nil {
		return err
	}
	if s.startsSize() {
		if m.Allowed, err = s.size(); err != nil {
			return err
		}
		s.note(m, "allowed")
		if err := s.want(" allowed; "); err != nil {
			return err
		}
	}
	if err := s.want("Of the allocated memory "); err != nil {
		return err
	}
	if m.Allocated, err = s.size(); err != nil {
		return err
	}
	s.note(m, "allocated")
	if err := s.want(" is allocated by PyTorch, "); err != nil {
		return err
	}
	if s.eat("with ") {
		if m.PrivatePools, err = s.size(); err != nil {
			return err
		}
		s.note(m, "private_pools")
		if !s.eat(" allocated in private pools (e.g., HIP Graphs), ") {
			if err := s.want(" allocated in private pools (e.g., CUDA Graphs), "); err != nil {
				return err
			}
		}
	}
	if err := s.cutInside("with "); err != nil {
		return err // a line wrapped right after "with"
	}
	if err := s.want("and "); err != nil {
		return err
	}
	if m.ReservedUnallocated, err = s.size(); err != nil {
		return err
	}
	s.note(m, "reserved_unallocated")
	if err := s.want(" is reserved by PyTorch but unallocated."); err != nil {
		return err
	}
	return nil
}

// processesAfterTotal reads a 2.x message cut after its total whose
// paste keeps the "Process P has M memory in use" parts after the cut (on
// the lines under it: "... total capacity of 21.97 GiB" then "Process
// 1185086 has 21.77 GiB memory in use"): the processes are read, and the
// message is reported cut where " of which " should have followed. nil
// when the text goes on otherwise.
func processesAfterTotal(s *scanner, m *Message) error {
	if s.i >= len(s.s) || strings.HasPrefix(s.s[s.i:], " of which ") {
		return nil
	}
	rest := strings.TrimLeft(s.s[s.i:], ". \t")
	if !strings.HasPrefix(rest, "Process ") {
		return nil
	}
	cut := s.i
	s.i = len(s.s) - len(rest)
	for s.eat("Process ") {
		p, err := s.process(m)
		if err != nil {
			return err
		}
		if p.Bytes >= 0 {
			m.Processes = append(m.Processes, p)
		}
		s.eat(".")
		s.spaces()
	}
	return fmt.Errorf("the message ends at column %d, where \" of which \" should follow; the free memory and PyTorch's are left out, the process lines under the cut were read", cut+1)
}

func parseGen1(s *scanner, m *Message) error {
	var err error
	for s.i < len(s.s) && s.s[s.i] == ' ' {
		s.i++ // IPEX's "(GPU  0; "
	}
	if m.Device, err = s.int(); err != nil {
		return err
	}
	if err := s.want("; "); err != nil {
		return err
	}
	if m.Total, err = s.size(); err != nil {
		return err
	}
	s.note(m, "total")
	if err := s.want(" total capacity; "); err != nil {
		return err
	}
	if m.Allocated, err = s.size(); err != nil {
		return err
	}
	s.note(m, "allocated")
	if err := s.want(" already allocated"); err != nil {
		return err
	}
	if err := s.abridged(); err != nil {
		return err
	}
	if err := s.want("; "); err != nil {
		return err
	}
	// Intel's extension (IPEX) prints no free memory: "XPU out of memory.
	// Tried to allocate A (GPU d; T total capacity; X already allocated; R
	// reserved in total by PyTorch)". Its next size is read below.
	var next int64 = -1
	v, err := s.size()
	switch {
	case err != nil:
		return err
	case s.eat(" free)"):
		m.Free = v
		s.note(m, "free")
		s.i--
		return s.abridged()
	case s.eat(" free; "):
		m.Free = v
		s.note(m, "free")
	case m.Backend == "XPU" && v >= 0:
		next = v
	case s.cutNaming(" free; ") == 0:
		// Cut inside the word that names it ("10.56 MiB fr"): whole.
		m.Free = v
		s.note(m, "free")
		return s.want(" free; ")
	default:
		return s.want(" free; ")
	}
	// The parts after "free; " are "size name" pairs separated by "; ":
	// "N allowed" (1.8+), then "R reserved in total by PyTorch" (1.4+) or
	// "C cached" (before: reserved minus allocated), and in some builds
	// "W inactive" (free memory in split blocks). Read them in any order.
	var cached int64 = -1
	for {
		v := next
		if next >= 0 {
			next = -1
		} else if v, err = s.size(); err != nil {
			return err
		}
		switch {
		case s.eat(" allowed"):
			m.Allowed = v
			s.note(m, "allowed")
		case s.eat(" reserved in total by PyTorch"):
			m.Reserved = v
			s.note(m, "reserved")
		case s.eat(" cached"):
			cached = v
			s.note(m, "reserved_unallocated")
			s.note(m, "reserved")
		case s.eat(" inactive"):
			m.Inactive = v
		default:
			// Cut inside the words that name the figure ("6.60 GiB
			// reser"): it is whole, and read as theirs.
			switch s.cutNaming(" allowed", " reserved in total by PyTorch", " cached", " inactive") {
			case 0:
				m.Allowed = v
				s.note(m, "allowed")
			case 1:
				m.Reserved = v
				s.note(m, "reserved")
			case 2:
				m.Cached, m.ReservedUnallocated, m.Reserved = true, v, m.Allocated+v
				s.note(m, "reserved_unallocated")
				s.note(m, "reserved")
			}
			if err := s.cutInside(" allowed", " reserved in total by PyTorch", " cached", " inactive"); err != nil {
				return err
			}
			return s.expected(`" allowed", " reserved in total by PyTorch" or " cached"`)
		}
		if s.eat(")") || (s.i >= s.end() && m.Reserved >= 0 || s.i >= s.end() && cached >= 0) {
			// A paste may lose the closing parenthesis with the line's end.
			break
		}
		if err := s.want("; "); err != nil {
			return err
		}
	}
	switch {
	case cached >= 0 && m.Reserved < 0:
		// Releases before 1.4 print what the allocator holds but the
		// program does not use ("cached" = reserved - allocated).
		m.Cached = true
		m.ReservedUnallocated = cached
		m.Reserved = m.Allocated + cached
	case m.Reserved < 0:
		return fmt.Errorf("the message has neither \"reserved in total by PyTorch\" nor \"cached\"")
	}
	return nil
}

// maxSize bounds the counters read as figures (see scanner.size): 1 PiB,
// far above any GPU's memory. Requests have their own bound (maxRequest).
const maxSize = 1 << 50

// scanner reads a message left to right; its errors name the column.
type scanner struct {
	s    string
	i    int
	huge []string // sizes read as unknown (see size)
	mps  bool     // also "KB", "MB", "GB" (MPS messages up to 2.3, powers of 1024)
	// tol is the rounding allowance of the last size read when it was
	// typed with fewer than two decimals ("2 GiB"), 0 otherwise; typed is
	// then that size as the text has it.
	tol   int64
	typed string
}

// note records the last size read as field's when it was typed coarse.
func (s *scanner) note(m *Message, field string) {
	if s.tol > 0 {
		m.Coarse = append(m.Coarse, CoarseFigure{field, s.tol, s.typed})
	}
}

func (s *scanner) spaces() {
	for s.i < len(s.s) && (s.s[s.i] == ' ' || s.s[s.i] == '\t') {
		s.i++
	}
}

func (s *scanner) eat(lit string) bool {
	if strings.HasPrefix(s.s[s.i:], lit) {
		s.i += len(lit)
		return true
	}
	return false
}

// process reads a "Process N has SIZE memory in use" line after its
// "Process ": the process's figures, noted in m; what follows the words
// (a full stop, or a cut) is the caller's to read.
func (s *scanner) process(m *Message) (Process, error) {
	p := Process{Bytes: -1} // until its size is read
	var err error
	if p.PID, err = s.int64(); err != nil {
		return p, err
	}
	if err := s.want(" has "); err != nil {
		return p, err
	}
	if p.Bytes, err = s.size(); err != nil {
		return p, err
	}
	s.note(m, fmt.Sprintf("process %d", len(m.Processes)))
	return p, s.want(" memory in use")
}

// want eats lit, or says where the text departs from it.
func (s *scanner) want(lit string) error {
	if s.eat(lit) {
		return nil
	}
	k := 0
	for k < len(lit) && s.i+k < len(s.s) && s.s[s.i+k] == lit[k] {
		k++
	}
	end := s.end()
	if s.i+k >= end {
		return fmt.Errorf("the message ends at column %d, where %q should follow", end+1, lit[min(k, len(lit)):])
	}
	if mark := cutMark(s.s[s.i+k:]); mark != "" {
		// An ellipsis (or a truncation mark) where the next part should
		// be: the rest was left out ("... 142.81 MiB is free...."), so it
		// reads as cut there.
		return fmt.Errorf("the message ends at column %d, %s", s.i+k+1, mark)
	}
	got := s.s[s.i+k:]
	if len(got) > 24 {
		got = got[:24] + "..."
	}
	return fmt.Errorf("column %d: want %q, found %q", s.i+k+1, lit[k:], got)
}

// end is where the text ends, trailing spaces and line ends trimmed.
// A closing quote at the end is not text of the message: a Python string
// literal, a markdown backtick, a JSON string (the next line may go on).
func (s *scanner) end() int { return len(strings.TrimRight(s.s, " \r\n\"'`")) }

// ellipsisAt returns the reason's ending (ellipsisCut, markCut) when an
// ellipsis or a truncation mark stands at s.i; "" when none does.
func (s *scanner) ellipsisAt() string { return cutMark(s.s[s.i:]) }

// ellipsisCut ends the reason of a message shortened with an ellipsis.
const ellipsisCut = "where an ellipsis stands for the rest"

// markCut ends the reason of a message a log shipper cut with a mark of
// its own ("[truncated]", "<truncated 2048 bytes>"): a cut, as an
// ellipsis is.
const markCut = "where a truncation mark stands for the rest"

// cutMark returns ellipsisCut when rest starts with an ellipsis ("...",
// "…"), markCut when it starts (after spaces) with a log shipper's
// truncation mark ("[truncated]", "(truncated)", "<truncated N bytes>",
// any case; "...[truncated]" is an ellipsis), and "" otherwise.
func cutMark(rest string) string {
	if strings.HasPrefix(rest, "...") || strings.HasPrefix(rest, "…") {
		return ellipsisCut
	}
	rest = strings.TrimLeft(rest, " \t")
	if len(rest) >= 10 && strings.IndexByte("[(<", rest[0]) >= 0 && strings.EqualFold(rest[1:10], "truncated") {
		return markCut
	}
	return ""
}

// Shortened reports whether a cut message's reason (Message.Reason) says
// an ellipsis, a placeholder with one or a truncation mark stands for the
// rest: a shortening by a writer or a shipper, not a line's end.
func Shortened(reason string) bool { return shortenedReason(reason) }

// shortenedReason reports whether a reason ends where an ellipsis or a
// truncation mark stands for the rest.
func shortenedReason(reason string) bool {
	return strings.HasSuffix(reason, ellipsisCut) || strings.HasSuffix(reason, markCut)
}

// abridged reports a 1.x message whose parentheses close early, at s.i
// ("(GPU 0; 8.00 GiB total capacity; 7.21 GiB already allocated)"): the
// figures after were left out of the paste (a guide's or a reporter's
// shortening), so it reads as cut there, the figures before it kept.
func (s *scanner) abridged() error {
	if s.i < len(s.s) && s.s[s.i] == ')' {
		return fmt.Errorf("the message ends at column %d, where its parentheses close with the figures after left out", s.i+1)
	}
	return nil
}

// cutNaming returns which of names the text, cut at its end, stops
// inside of: the index of the only one that the rest of the text (more
// than spaces) begins; -1 when it is at none, several, or not at its end.
// A 1.x figure is named by the words after it: a figure cut inside them
// ("6.60 GiB reser") is known to be theirs.
func (s *scanner) cutNaming(names ...string) int {
	rest := s.s[s.i:s.end()]
	if strings.TrimSpace(rest) == "" {
		return -1
	}
	found := -1
	for k, n := range names {
		if len(rest) <= len(n) && strings.HasPrefix(n, rest) {
			if found >= 0 {
				return -1
			}
			found = k
		}
	}
	return found
}

// cutInside reports a text that ends partway into one of lits, or that
// an ellipsis cuts partway into one.
func (s *scanner) cutInside(lits ...string) error {
	if s.i >= s.end() {
		return nil // nothing of them: the next part says what is missing
	}
	rest := s.s[s.i:s.end()]
	for _, lit := range lits {
		if len(rest) < len(lit) && strings.HasPrefix(lit, rest) {
			return fmt.Errorf("the message ends at column %d, inside %q", s.end()+1, lit)
		}
		// An ellipsis inside it ("Including non-PyTorch ...", "Includ…"):
		// the rest was left out there, as where a part should start.
		k := 0
		for k < len(lit) && k < len(rest) && rest[k] == lit[k] {
			k++
		}
		if mark := cutMark(rest[k:]); k > 0 && k < len(lit) && mark != "" {
			return fmt.Errorf("the message ends at column %d, %s", s.i+k+1, mark)
		}
	}
	return nil
}

func (s *scanner) expected(what string) error {
	if s.i >= s.end() {
		return fmt.Errorf("the message ends at column %d, where %s should follow", s.i+1, what)
	}
	if m := placeholderRe.Re().FindStringIndex(s.s[s.i:]); m != nil {
		// A writer's abridgment: a placeholder where the figure was,
		// then an ellipsis ("GPU X ... only a few hundred MiB free"): cut
		// there, as at an ellipsis.
		return fmt.Errorf("the message ends at column %d, %s", s.i+1, ellipsisCut)
	}
	got := s.s[s.i:]
	if len(got) > 24 {
		got = got[:24] + "..."
	}
	return fmt.Errorf("column %d: want %s, found %q", s.i+1, what, got)
}

// placeholderRe matches a placeholder for a figure followed by an
// ellipsis: one or two letters or a "<...>" name, then "..." or "…".
var placeholderRe = lazyre.New(`^(?:[A-Za-z]{1,2}|<[^<> ]{1,12}>) ?(?:\.\.\.|…)`)

func (s *scanner) digits() string {
	j := s.i
	for j < len(s.s) && s.s[j] >= '0' && s.s[j] <= '9' {
		j++
	}
	d := s.s[s.i:j]
	s.i = j
	return d
}

func (s *scanner) startsSize() bool {
	return s.i < len(s.s) && s.s[s.i] >= '0' && s.s[s.i] <= '9'
}

func (s *scanner) int64() (int64, error) {
	at := s.i
	d := s.digits()
	if d == "" {
		return -1, s.expected("a number")
	}
	n, err := strconv.ParseInt(d, 10, 64)
	if err != nil {
		return -1, fmt.Errorf("column %d: number %s out of range", at+1, d)
	}
	return n, nil
}

func (s *scanner) int() (int, error) {
	n, err := s.int64()
	if err == nil && n > 1<<20 {
		return -1, fmt.Errorf("column %d: GPU index %d out of range", s.i+1, n)
	}
	return int(n), err
}

// size reads a counter's size as format_size() prints it: "N bytes"
// (N <= 1024) or "D.DD KiB|MiB|GiB". A figure of maxSize or more is read as
// unknown (-1), with a warning: the GPU's total and free memory, this and
// other processes' memory in use, the limit and PyTorch's allocated and
// reserved memory are counters that no GPU fills that far, but that
// overflow (cudaMallocAsync's unset limit is SIZE_MAX, 2^64 bytes).
func (s *scanner) size() (int64, error) { return s.sizeBelow(false) }

// Requests printed beyond 1 EB. allocate() of the caching allocators
// (c10/cuda/CUDACachingAllocator.cpp, CUDAMallocAsyncAllocator.cpp)
// refuses a size of 1 EB (2^60 bytes) or more with "Tried to allocate more
// than 1EB memory" (GenExa) before format_size() prints one, but
// raw_alloc() and raw_alloc_with_stream() (torch.cuda.
// caching_allocator_alloc, libraries' workspaces) call malloc() without
// that check, and format_size() prints every size in GiB, however large:
// a request is a size_t, so at most 2^64 bytes (17179869184.00 GiB)
// prints. Up to maxRequest (4 EiB) it is read as printed; above it, the
// sums a postmortem makes of it would overflow int64, so it is read as
// unknown, with a warning; above 2^64 bytes (maxPrintedShift) no PyTorch
// prints it, and it is unknown too, with a warning that says so.
const (
	maxRequest      = 1 << 62
	maxPrintedShift = 64
)

// RequestBeyondRead reports whether text, a message's Text, prints its
// request ("Tried to allocate N", cudaMallocAsync's "Requested : N") as a
// size PyTorch can print (at most 2^64 bytes) but above the 4 EiB that
// gpuleak reads (maxRequest): Requested is then -1, yet the request was
// more than any GPU holds.
func RequestBeyondRead(text string) bool {
	for _, label := range []string{"Tried to allocate ", "Requested"} {
		i := strings.Index(text, label)
		if i < 0 {
			continue
		}
		s := &scanner{s: text, i: i + len(label)}
		if label == "Requested" {
			s.spaces()
			if !s.eat(":") {
				continue
			}
			s.spaces()
		}
		if n, err := s.request(); err == nil && n < 0 && len(s.huge) == 1 && !strings.Contains(s.huge[0], "no request PyTorch prints") {
			return true
		}
	}
	return false
}

// request reads the size of the allocation that failed ("Tried to
// allocate", "Requested :") as size does, but as the number printed,
// however large: a request is no counter that overflows, and PyTorch
// prints every size it tries (1048576.00 GiB for torch.empty(1<<50)).
// Only a figure above maxRequest is read as unknown, with a warning.
func (s *scanner) request() (int64, error) { return s.sizeBelow(true) }

// sizeBelow is size (request false) or request (true).
func (s *scanner) sizeBelow(request bool) (int64, error) {
	at := s.i
	s.tol = 0
	whole := s.digits()
	if whole == "" {
		return -1, s.expected("a size")
	}
	if s.i >= s.end() {
		return -1, fmt.Errorf("the message ends at column %d, inside a size", s.end()+1)
	}
	if len(whole) > 15 {
		return -1, fmt.Errorf("column %d: size %s out of range", at+1, whole)
	}
	if mark := s.ellipsisAt(); mark != "" {
		return -1, fmt.Errorf("the message ends at column %d, inside a size, %s", s.i+1, mark)
	}
	if err := s.cutInside(" bytes"); err != nil {
		return -1, err
	}
	if s.eat(" bytes") {
		n, _ := strconv.ParseInt(whole, 10, 64)
		return n, nil
	}
	// format_size() prints two decimals; a size retyped or shortened by
	// hand may have none or one ("2 GiB", "7.8 GiB"): read it, with the
	// allowance its precision gives (s.tol). More than two are read as
	// two would be: their allowance is within SizeTolerance.
	frac := ""
	if s.eat(".") {
		// ("1...": the ellipsis after the whole part ended it above.)
		if frac = s.digits(); frac == "" {
			if s.i >= s.end() {
				return -1, fmt.Errorf("the message ends at column %d, inside a size", s.end()+1)
			}
			s.i = at
			return -1, fmt.Errorf("column %d: size %q has a decimal point but no decimals", at+1, s.s[at:min(len(s.s), at+len(whole)+1)])
		}
		if len(frac) < 2 && s.i >= s.end() {
			return -1, fmt.Errorf("the message ends at column %d, inside a size", s.end()+1)
		}
		if mark := s.ellipsisAt(); len(frac) < 2 && mark != "" {
			return -1, fmt.Errorf("the message ends at column %d, inside a size, %s", s.i+1, mark)
		}
	}
	decimals := len(frac)
	if len(frac) > 2 {
		frac = frac[:2] // below format_size()'s own rounding
	}
	for len(frac) < 2 {
		frac += "0"
	}
	number := s.s[at:s.i]
	units := formatSizeUnits
	if s.mps {
		units = mpsSizeUnits
	}
	unit := s.unit(units)
	if unit == 0 {
		if err := s.cutInside(" KiB", " MiB", " GiB"); err != nil {
			return -1, err
		}
		return -1, s.expected(`" KiB", " MiB" or " GiB"`)
	}
	hundredths, _ := strconv.ParseInt(whole+frac, 10, 64)
	s.tol, s.typed = 0, ""
	switch decimals {
	case 0:
		s.tol = unit / 2
	case 1:
		s.tol = unit / 20
	}
	if s.tol > 0 {
		// As typed, with the unit by its IEC name (MPS's "GB" is GiB).
		s.typed = number + " " + map[int64]string{1 << 10: "KiB", 1 << 20: "MiB", 1 << 30: "GiB"}[unit]
	}
	if request && hundredths > maxRequest/unit*100 {
		// Hundredths of the unit in 2^64 bytes: unit is 2^10, 2^20 or
		// 2^30, so this stays within int64.
		printable := int64(1) << (maxPrintedShift - bits.TrailingZeros64(uint64(unit))) * 100
		if hundredths > printable {
			s.huge = append(s.huge, fmt.Sprintf("%q at column %d is no request PyTorch prints (a request is a size_t: format_size() prints at most 17179869184.00 GiB, 2^64 bytes); it is read as unknown", s.s[at:s.i], at+1))
		} else {
			s.huge = append(s.huge, fmt.Sprintf("%q at column %d is more than 4 EiB, a request only a raw allocation prints (torch.cuda.caching_allocator_alloc, a library's workspace: allocate() refuses 1 EiB and more with \"more than 1EB\"), and more than gpuleak reads as a size; it is read as unknown, but it is far beyond any GPU: a size computed wrong", s.s[at:s.i], at+1))
		}
		return -1, nil
	}
	if !request && hundredths/100 >= maxSize/unit {
		// No GPU has this much: NVML's figure overflowed (2^64 bytes is
		// printed 17179869184.00 GiB). Unknown, like "0 bytes in use".
		s.huge = append(s.huge, fmt.Sprintf("%q at column %d is no real size (at least %d TiB: a counter that overflowed); it is read as unknown", s.s[at:s.i], at+1, maxSize>>40))
		return -1, nil
	}
	// hundredths/100*unit <= 2^60 and unit <= 2^30: split to stay within
	// int64.
	return hundredths/100*unit + (hundredths%100*unit+50)/100, nil
}

// trimQuoteClose returns text less the spaces, quotes and code-span
// backticks that close a quote or span at its end, and the parentheses
// closing a wrapper opened before text (`Warmup(Generation("...`"))`):
// only those text itself does not open.
func trimQuoteClose(text string) string {
	// The parentheses are counted once and the surplus closes trimmed
	// from the end as they are met: counting the whole text for each one
	// trimmed was quadratic (a line of a million ")" took 12 s).
	extra := strings.Count(text, ")") - strings.Count(text, "(")
	for {
		t := strings.TrimRight(text, " \r\n`\"'")
		if extra > 0 && strings.HasSuffix(t, ")") {
			t = t[:len(t)-1]
			extra--
		}
		if t == text {
			return t
		}
		text = t
	}
}

// raisedAt says whether the phrase at line[at:] stands as an error
// raised: after an exception's colon (a log prefix or an issue form's
// "[Bug]:" before it) or at a line's start, inside a debug string, or in
// a code span that quotes an error; never as a source line's string.
func raisedAt(line string, at int) int {
	before := strings.TrimRight(line[:at], " \t")
	switch {
	case debugStringOpen(before):
		return message
	case strings.Count(line[:at], "`")%2 == 1:
		if codeSpanQuotesError(line, strings.LastIndexByte(line[:at], '`')) {
			return message
		}
		return notMessage
	case before == "" || strings.HasSuffix(before, ":"):
		return message
	}
	return notMessage
}
