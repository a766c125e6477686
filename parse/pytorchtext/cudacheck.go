package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A CUDA program checks each call's status with an error-check macro of
// its own and prints the runtime's or the driver's out-of-memory error in
// its own words: cudaGetErrorString(cudaErrorMemoryAllocation) is "out of
// memory", cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY are 2.
// checkForms are the macros' whole forms, from their sources, each with
// the words findOOM looks for (in oomPhrases) and the program or library
// whose macro prints it. Each is read as a GenCUDAError message of the
// CUDA runtime or driver (Library), and CheckProgram names its printer.
//
// A form that names the file, the line and the error code (or the call)
// is nobody's prose and no source code's (a format string has %s and %d
// where these have figures): it is read anywhere, an issue body that
// quotes it included. A form without them ("FILE(LINE): out of memory",
// thrust::system_error's what() of a check that passes its place) is
// read only where an error sits: after an exception's or a what() line's
// colon, at a line's start, or quoted so in a code span (raisedAt).
var checkForms = []checkForm{
	// NVHPC's OpenACC and CUDA Fortran runtime: "Accelerator Fatal
	// Error: call to cuMemAlloc returned error 2
	// (CUDA_ERROR_OUT_OF_MEMORY): Out of memory" (PGI releases: without
	// the name in parentheses), then " File: ... Function: ... Line:".
	newCheckForm("returned error 2", `call to (cu[A-Za-z0-9_]+) returned error 2(?: \(CUDA_ERROR_OUT_OF_MEMORY\))?: Out of memory`,
		"the CUDA driver", "NVHPC's OpenACC runtime (nvc, nvfortran)", true),
	// NVIDIA's multi-GPU programming models' CUDA_RT_CALL: "ERROR: CUDA
	// RT call \"cudaMalloc(...)\" in line 378 of file jacobi.cpp failed
	// with out of memory (2)."
	newCheckForm("failed with out of memory (2)", `CUDA RT call "[^"]*" in line \d+ of file \S+ failed with out of memory \(2\)`,
		"the CUDA runtime", "the program's CUDA_RT_CALL check (the form of NVIDIA's multi-GPU programming models)", true),
	// AMReX's AMREX_GPU_SAFE_CALL and AMREX_GPU_ERROR_CHECK, through
	// amrex::Abort: "amrex::Abort::0::CUDA error 2 in file
	// .../AMReX_Arena.cpp line 169: out of memory !!!", "GPU last error
	// detected in file ... line N: out of memory !!!".
	newCheckForm("CUDA error 2 in file ", `(?:amrex::Abort::\d+::)?CUDA error 2 in file \S+ line \d+: out of memory`,
		"the CUDA runtime", "AMReX (its GPU error check, amrex::Abort)", true),
	newCheckForm("GPU last error detected in file ", `(?:amrex::Abort::\d+::)?GPU last error detected in file \S+ line \d+: out of memory`,
		"the CUDA runtime", "AMReX (its GPU error check, amrex::Abort)", true),
	// dlib's CHECK_CUDA: "Error while calling cudaMalloc(...) in file
	// .../gpu_data.cpp:221. code: 2, reason: out of memory".
	newCheckForm("code: 2, reason: out of memory", `Error while calling .{1,400}? in file \S+:\d+\. code: 2, reason: out of memory`,
		"the CUDA runtime", "dlib (its CHECK_CUDA)", true),
	// A glog CHECK of the CUDA status: Caffe's CUDA_CHECK ("Check failed:
	// error == cudaSuccess (2 vs. 0)  out of memory"), MXNet's mshadow
	// ("Check failed: e == cudaSuccess: CUDA: out of memory"; its
	// storage's "Check failed: e == cudaSuccess || e ==
	// cudaErrorCudartUnloading CUDA: out of memory"), early
	// PaddlePaddle's ("Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda
	// Error: out of memory") and Caffe2's CUDA_ENFORCE ("[enforce fail at
	// context_gpu.cu:415] error == cudaSuccess. 2 vs 0. Error at:
	// .../context_gpu.cu:415: out of memory"). CheckProgram tells which.
	newCheckForm("cudaSuccess", `Check failed: \w+ == cudaSuccess(?: \|\| \w+ == cudaErrorCudartUnloading)? ?(?:\(2 vs\. 0\))?:?\s*(?:CUDA: |Cuda Error: )?out of memory|Check failed: cudaSuccess == \w+ ?\(0 vs\. 2\)\s*(?:Cuda Error: )?out of memory|\w+ == cudaSuccess\. 2 vs 0\. Error at: \S+: out of memory`,
		"the CUDA runtime", "a glog CHECK of the CUDA status", true),
	// The CUDA samples' checkCudaErrors (helper_cuda.h): "CUDA error at
	// file.cu:45 code=2(cudaErrorMemoryAllocation) \"cudaMalloc(...)\"".
	newCheckForm("code=2(cudaErrorMemoryAllocation)", `CUDA error at \S+ code=2\(cudaErrorMemoryAllocation\)`,
		"the CUDA runtime", "the program's checkCudaErrors (the CUDA samples' helper_cuda.h)", true),
	// The OptiX SDK's CUDA_CHECK (sutil/Exception.h): "CUDA call
	// (cudaMalloc(...) ) failed with error: 'out of memory'".
	newCheckForm("failed with error: 'out of memory", `CUDA call \(.{1,400}? failed with error: 'out of memory`,
		"the CUDA runtime", "the program's CUDA_CHECK (the form of the OptiX SDK's sutil)", true),
	// tiny-cuda-nn's CUDA_CHECK_THROW (instant-ngp): "cudaMalloc(&rawptr,
	// n_bytes+DEBUG_GUARD_SIZE*2) failed with error out of memory".
	newCheckForm("failed with error out of memory", `cuda[A-Z][A-Za-z]*\(.{0,400}?\) failed with error out of memory`,
		"the CUDA runtime", "tiny-cuda-nn (its CUDA_CHECK_THROW)", true),
	// The check macro of "CUDA by Example"-era code and Shane Cook's
	// "CUDA Programming" (CUDA_CALL, CHECK_CUDA): "Cuda Error: out of
	// memory (err_num=2) at line:88", "CUDA ERROR: ... (err_num=2)".
	newCheckForm("out of memory (err_num=2)", `(?i:cuda error): out of memory \(err_num=2\)`,
		"the CUDA runtime", "the program's CUDA_CALL check (\"CUDA Error: ... (err_num=N)\")", true),
	// The CUDA SDK's cutil CUDA_SAFE_CALL ("Cuda error in file '%s' in
	// line %i : %s."), and checks that name the function instead
	// ("Cuda error in func \"cuda_init_device\" at line 33: out of
	// memory.", NoncerPro/noncerpro-nimiq-cuda#17).
	newCheckForm("Cuda error in file '", `Cuda error in file '[^']+' in line \d+ ?: out of memory`,
		"the CUDA runtime", "the program's CUDA_SAFE_CALL (the CUDA SDK's cutil)", true),
	newCheckForm("Cuda error in func ", `Cuda error in func "?[\w:~]+"? at line \d+: out of memory`,
		"the CUDA runtime", "the program's own CUDA check (\"Cuda error in func F at line N\")", true),
	// The gpuErrchk macro many CUDA programs copy (gpuAssert: "GPUassert:
	// %s %s %d\n", the error string, the file and the line):
	// "GPUassert: out of memory mean.cu 377" (tromp/cuckoo#53),
	// "GPUassert:out of memory/.../pointpillars.cc 378".
	newCheckForm("GPUassert:", `GPUassert: ?out of memory ?\S+ \d+`,
		"the CUDA runtime", "the program's gpuErrchk (its \"GPUassert\" check)", true),
	// The CUDA samples' checkCudaErrors of a driver API call
	// (helper_cuda_drvapi.h; cutil's cuSafeCallNoSync before it):
	// "checkCudaErrors() Driver API error = 0002 \"CUDA_ERROR_OUT_OF_MEMORY\"
	// from file <F>, line N." (0002 is CUDA_ERROR_OUT_OF_MEMORY).
	newCheckForm("Driver API error = 0002", `\w+\(\) Driver API error = 0002 (?:"CUDA_ERROR_OUT_OF_MEMORY" )?from file <[^>]*>, line \d+`,
		"the CUDA driver", "the program's checkCudaErrors (the CUDA samples' helper_cuda_drvapi.h)", true),
	// vLLM's CuMemAllocator (csrc/cumem_allocator.cpp, its sleep mode's
	// allocator) checks the CUDA driver's calls (cuMemCreate, cuMemMap)
	// with a CUDA_CHECK of its own: "CUDA Error: %s at %s:%d", the
	// driver's cuGetErrorString, then raised as a RuntimeError
	// (vllm-project/vllm#13941: "RuntimeError: CUDA Error: out of memory
	// at /workspace/csrc/cumem_allocator.cpp:62"). Other programs' checks
	// print the same format with the runtime's string (cudaGetErrorString)
	// and their own file. Both before darknet's form, whose words start
	// theirs (checkAt takes the first form that matches). Read at a
	// line's start or after a colon: a test's string literal quotes it.
	newCheckForm(cumemPhrase, `CUDA Error: out of memory at \S*`+cumemPhrase+`\d+`,
		"the CUDA driver", "vLLM's CuMemAllocator (its sleep mode's allocator, csrc/cumem_allocator.cpp: a CUDA_CHECK of the driver's cuMemCreate and cuMemMap)", false),
	newCheckForm(darknetPhrase+" at ", `CUDA Error: out of memory at \S+:\d+`,
		"the CUDA runtime", "the program's own CUDA check (\"CUDA Error: %s at FILE:LINE\", the file and line its words name)", false),
	// "CUDA Error: out of memory" alone is darknet's check_error (cuda.c)
	// and as many other programs' checks ("CUDA Error: %s"): darknet's
	// after the layer's number its table printed without a line end
	// ("    0 CUDA Error: out of memory"), then its error()'s perror line
	// ("CUDA Error: out of memory: No error", the same failure) and
	// "darknet: ./src/cuda.c:36: check_error: Assertion `0' failed.".
	// darknet is its printer only where that number, or the lines next
	// to it, say so (CheckProgram, Message.Printer). Words of no file or
	// code: read at a line's start, after a colon or after that number
	// (classifyCheck).
	newCheckForm(darknetPhrase, darknetPhrase,
		"the CUDA runtime", checkProgramUnnamed, false),
	// llama.cpp's ggml SYCL backend (ggml-sycl.cpp,
	// ggml_backend_sycl_buffer_type_alloc_buffer) when sycl::malloc_device
	// returns no memory: "%s: can't allocate %lu Bytes of memory on
	// device" (intel/compute-runtime#984, ggml-org/llama.cpp PR #28953).
	// llama.cpp's, as its CUDA backend's "cudaMalloc failed" is: its chain
	// and retry follow (ggmlretry.go); the bytes are the request.
	// Read at a line's start or after a colon (the function's name and
	// its colon, or a paste that wrapped after them).
	newCheckForm(syclAllocPhrase, `(?:ggml_backend_sycl_buffer_type_alloc_buffer: )?can't allocate \d{1,20} Bytes of memory on device`,
		"llama.cpp (ggml)", "", false),
	// thrust::system_error's what() of a check that passes its place
	// (XGBoost's dh::safe_cuda in device_helpers.cuh: ".../device_helpers
	// .cuh(456): out of memory"), and PMacc's CUDA_CHECK in PIConGPU and
	// mallocMC, whose what() puts the error on the next line (".../
	// SimpleCudaMalloc_impl.hpp(42):" then "error: out of memory"; the
	// reader joins the two, see whatCutRe).
	newCheckForm("): out of memory", "[^\\s'\"`(]*\\.[A-Za-z]{1,4}\\(\\d{1,6}\\): out of memory",
		"the CUDA runtime", "", false),
	newCheckForm(whatErrorPhrase, "[^\\s'\"`(]*\\.[A-Za-z]{1,4}\\(\\d{1,6}\\): error: out of memory",
		"the CUDA runtime", "", false),
	// "ROCm error: out of memory": the HIP runtime's string
	// (hipErrorOutOfMemory) as llama.cpp's ggml error function prints it
	// in a HIP build (GGML_CUDA_NAME " error: %s", ggml_cuda_error; its
	// device line after it names the device and the place, ggmldevice.go).
	// Read after a colon or at a line's start.
	newCheckForm("ROCm error: out of memory", "ROCm error: out of memory",
		"the HIP runtime", "a program's own HIP check (\"ROCm error: %s\": the words of llama.cpp's ggml in a HIP build, ggml_cuda_error)", false),
	// A check that tags the runtime's string with the API's name in
	// brackets: "[CUDA] Error: %s" (xmr-stak's CUDA_CHECK, thrown as a
	// std::runtime_error: "what():  [CUDA] Error: out of memory",
	// fireice-uk/xmr-stak PR #399). Words of no file or code: read after
	// what() or a colon, or at a line's start.
	newCheckForm("[CUDA] Error: out of memory", `\[CUDA\] Error: out of memory`,
		"the CUDA runtime", "the program's own CUDA check (\"[CUDA] Error: %s\")", false),
	// thrust's bad_alloc (thrust/system/detail/bad_alloc.h: "std::bad_alloc:
	// " and the error) of a device allocation's failure, in releases whose
	// CUDA error category's message is the runtime's string alone
	// (OrangeOwlSolutions/Thrust#1: "terminate called after throwing an
	// instance of 'thrust::system::detail::bad_alloc'", then "what():
	// std::bad_alloc: out of memory"; later ones print "std::bad_alloc:
	// cudaErrorMemoryAllocation: out of memory", read as the runtime's
	// status). C++'s own std::bad_alloc prints "std::bad_alloc" alone (a
	// host allocation, host.go). Read after what() or a colon, or at a
	// line's start.
	newCheckForm(thrustBadAllocPhrase, thrustBadAllocPhrase,
		"the CUDA runtime", "thrust (its bad_alloc: a device allocation failed)", false),
	// RMM's pool memory resource, at its maximum_pool_size: "RMM failure
	// at:.../pool_memory_resource.hpp:179: Maximum pool size exceeded"
	// ("std::bad_alloc: out_of_memory: " before it in later releases). No
	// CUDA call failed: the pool refused to grow past its limit.
	newCheckForm(rmmPoolPhrase, `RMM failure at: ?\S+:\d+: Maximum pool size exceeded`,
		"RMM", "RMM's pool memory resource (RAPIDS: cuDF, cuML, cupoch)", true),
	// thrust's CUDA back-end (cuda_cub::parallel_for, under for_each,
	// transform, fill and most algorithms) throws a system_error whose
	// what() is "parallel_for failed: " then the runtime's string
	// ("parallel_for failed: out of memory"; later releases put the
	// error's name first, "cudaErrorMemoryAllocation: out of memory").
	// The call is a kernel launch (cub's DeviceFor), which allocates no
	// device memory but its threads' local memory: the status is most
	// often an earlier asynchronous failure reported there. Read where an
	// error sits (raisedAt): after a what() or a colon, or at a line's
	// start.
	newCheckForm(thrustLaunchPhrase, `(parallel_for)(?::)? failed(?: to synchronize)?: (?:cudaErrorMemoryAllocation: )?out of memory`,
		"the CUDA runtime", "thrust (a thrust::system_error)", false),
	// CatBoost's GPU memory pool (catboost/cuda/cuda_lib/memory_pool/
	// stack_like_memory_pool.h, TStackLikeMemoryPool::Create) throws
	// NCudaLib::TOutOfMemoryError "Error: Out of memory. Requested R MB;
	// Free F MB" (MiB: its MB is 1024*1024, the figures doubles; older
	// releases print them without the unit) after its file and line. The
	// pool is the block CatBoost took from the GPU at start-up
	// (gpu_ram_part of the free memory): no CUDA call failed, the pool
	// had no free block of the size. catboostPoolRe reads the figures.
	newCheckForm(catboostPoolPhrase, `[^\s'"`+"`"+`(]+\.h:\d+: Error: Out of memory\. Requested \d+(?:\.\d+)?(?: MB)?; Free \d+(?:\.\d+)?(?: MB)?`,
		"CatBoost", "CatBoost's GPU memory pool (NCudaLib::TStackLikeMemoryPool)", true),
	// PaddlePaddle's Fluid (before 1.5) sizes the first chunk of its
	// buddy allocator at start-up (gpu_info.cc, GpuMaxChunkSize):
	// FLAGS_fraction_of_gpu_memory_to_use of the GPU's total less 5%,
	// which must not exceed what cudaMemGetInfo gives free (less 256
	// bytes): "enforce allocating <= available failed, A > B", both in
	// bytes. No allocation was made: the free memory was below the share
	// asked for.
	newCheckForm(paddleChunkPhrase, `enforce allocating <= available failed, \d{1,20} > \d{1,20}`,
		"PaddlePaddle", "PaddlePaddle's start-up check of its memory fraction (gpu_info.cc)", true),
	// torch_memory_saver (SGLang's and verl's sleep mode, CUDA virtual
	// memory) checks each driver call with CURESULT_CHECK: "[torch_memory_
	// saver.cpp] CUresult error  result=2 file=F func=cu_mem_create
	// line=N" (later "CUresult error: 2 (out of memory) file=..."); 2 is
	// CUDA_ERROR_OUT_OF_MEMORY, and func the function of the check, its
	// cu_mem_create wrapping cuMemCreate (the physical memory when a
	// paused region resumes).
	newCheckForm(tmsPhrase, `\[torch_memory_saver\.cpp\] CUresult error(?: +result=2 |: 2 \(out of memory\) +)(?:file=\S+ )?func=(\w+)`,
		"the CUDA driver", "torch_memory_saver (its CURESULT_CHECK)", true),
	// dask-cuda's and cuDF's spill managers hook RMM's allocation
	// failure (a FailureCallbackResourceAdaptor): when spilling finds no
	// device memory to move to the host they log "RMM allocation of N
	// failed, spill-on-demand couldn't find any device memory to spill"
	// (N as dask's format_bytes, "605.37 MiB"; "N bytes" in older
	// releases) and the allocation fails. spillRe reads the size.
	newCheckForm(spillPhrase, `RMM allocation of \d+(?:\.\d+)? ?(?:[kMGT]i?B|B|bytes)(?: bytes)? failed, spill-on-demand couldn't find any device memory to spill`,
		"RMM", "the spill manager on RMM (dask-cuda's or cuDF's spill-on-demand)", true),
	// Boost.Compute's opencl_error (LightGBM's GPU version) prints
	// CL_MEM_OBJECT_ALLOCATION_FAILURE (-4) by its description, "Memory
	// Object Allocation Failure": the OpenCL device could not allocate a
	// buffer's memory. Read where an error sits (after a what()).
	// MXNet's pooled storage manager (src/storage/pooled_storage_manager
	// .h, PooledStorageManager::Alloc) tries its device storage's
	// cudaMalloc twice, releasing its pool between, then logs FATAL
	// "Memory allocation failed." after its file and line (MXNet 0.7 to
	// 0.9; later releases check the status itself).
	newCheckForm(mxnetPoolPhrase, `pooled_storage_manager\.h:\d+\] ?Memory allocation failed|pooled_storage_manager\.h:\d+: Memory allocation failed`,
		"the CUDA runtime", "MXNet (its pooled storage manager: cudaMalloc failed twice, its pool released between)", true),
	// NCCL 1.x's allocDevMem (src/core.cu): cudaMalloc failed, "WARN
	// src/core.cu:225 failed to allocate 2101248 byte device buffer"
	// (its WARN prints the file and line first), then "NCCL Init failed
	// (10) 'cuda malloc failed'". The bytes are the request.
	newCheckForm(nccl1BufferPhrase, `WARN \S+:\d+ failed to allocate \d{1,20} byte device buffer`,
		"NCCL", "", true),
	newCheckForm(clAllocPhrase, clAllocPhrase,
		"OpenCL", "Boost.Compute (its opencl_error, CL_MEM_OBJECT_ALLOCATION_FAILURE)", false),
}

// The phrases of the check forms whose notes differ (see checkForms).
const (
	thrustLaunchPhrase = "parallel_for"
	catboostPoolPhrase = "Error: Out of memory. Requested "
	paddleChunkPhrase  = "enforce allocating <= available failed"
	tmsPhrase          = "[torch_memory_saver.cpp] CUresult error"
	spillPhrase        = "spill-on-demand couldn't find any device memory"
	clAllocPhrase      = "Memory Object Allocation Failure"
	mxnetPoolPhrase    = "Memory allocation failed"
	nccl1BufferPhrase  = " byte device buffer"
)

// CheckForm names the form of checkForms that a GenCUDAError message's
// text starts with, for the notes that differ by form: "thrust-launch",
// "catboost-pool", "paddle-chunk", "torch-memory-saver", "spill",
// "opencl-alloc", "nccl1-buffer", "rmm-pool"; "" for another form or
// none.
func CheckForm(text string) string {
	_, _, k := checkAt(text)
	if k < 0 {
		return ""
	}
	switch checkForms[k].phrase {
	case thrustLaunchPhrase:
		return "thrust-launch"
	case catboostPoolPhrase:
		return "catboost-pool"
	case paddleChunkPhrase:
		return "paddle-chunk"
	case tmsPhrase:
		return "torch-memory-saver"
	case spillPhrase:
		return "spill"
	case clAllocPhrase:
		return "opencl-alloc"
	case nccl1BufferPhrase:
		return "nccl1-buffer"
	case rmmPoolPhrase:
		return "rmm-pool"
	}
	return ""
}

// catboostPoolRe reads CatBoost's pool figures (see checkForms): the
// request and the pool's free block, MiB.
var catboostPoolRe = lazyre.New(`Requested (\d+(?:\.\d+)?)(?: MB)?; Free (\d+(?:\.\d+)?)`)

// paddleChunkRe reads PaddlePaddle's chunk and the free memory, bytes.
var paddleChunkRe = lazyre.New(`available failed, (\d{1,20}) > (\d{1,20})`)

// nccl1BufferRe reads NCCL 1.x's buffer's bytes.
var nccl1BufferRe = lazyre.New(`failed to allocate (\d{1,20}) byte device buffer`)

// spillRe reads the spill manager's request: a figure and its unit.
var spillRe = lazyre.New(`RMM allocation of (\d+(?:\.\d+)?) ?([kMGT]i?B|B|bytes)?`)

// checkFigures sets the figures a check form k prints in text (its
// match): CatBoost's request and its pool's free memory, PaddlePaddle's
// chunk and the GPU's free memory, the spill manager's request. A figure
// printed with decimals is rounded to a byte (decimalFigure).
func checkFigures(m *Message, text string, k int) {
	switch checkForms[k].phrase {
	case catboostPoolPhrase:
		if x := catboostPoolRe.Re().FindStringSubmatch(text); x != nil {
			m.Requested = decimalFigure(x[1], 1<<20)
			m.Free = decimalFigure(x[2], 1<<20)
		}
	case paddleChunkPhrase:
		if x := paddleChunkRe.Re().FindStringSubmatch(text); x != nil {
			m.Requested, _ = strconv.ParseInt(x[1], 10, 64)
			m.Free, _ = strconv.ParseInt(x[2], 10, 64)
		}
	case nccl1BufferPhrase:
		if x := nccl1BufferRe.Re().FindStringSubmatch(text); x != nil {
			m.Requested, _ = strconv.ParseInt(x[1], 10, 64)
		}
	case spillPhrase:
		if x := spillRe.Re().FindStringSubmatch(text); x != nil {
			if unit, ok := byteUnits[x[2]]; ok {
				m.Requested = decimalFigure(x[1], unit)
			}
		}
	}
}

// byteUnits are the units a figure of a library's own words may have:
// dask's format_bytes (binary, "MiB"), XGBoost's HumanMemUnit ("GB",
// "MB", "KB": powers of 1024), bare bytes ("B", "bytes", none).
var byteUnits = map[string]int64{"": 1, "B": 1, "bytes": 1, "kiB": 1 << 10, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"KB": 1 << 10, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}

// decimalFigure returns the bytes of a figure s (digits, maybe decimals)
// of unit bytes each, rounded to a byte; -1 when s does not read. The
// libraries print these figures as they print them (CatBoost's ten
// significant digits, XGBoost's six, dask's two decimals): the notes say
// so, and no rounding allowance is noted (m.Coarse is PyTorch's typed
// figures').
func decimalFigure(s string, unit int64) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*float64(unit) > 1<<62 {
		return -1
	}
	return int64(f*float64(unit) + 0.5)
}

// checkForm is one of checkForms: the phrase findOOM looks for, the
// whole form (re) and the same anchored at a text's start (at), the
// library whose error it is (Library), the printer (CheckProgram), and
// whether it is read anywhere.
type checkForm struct {
	phrase   string
	re, at   *lazyre.Regexp
	lib, who string
	anywhere bool
}

// newCheckForm makes a checkForm of its whole form's expression.
func newCheckForm(phrase, expr, lib, who string, anywhere bool) checkForm {
	return checkForm{phrase: phrase, re: lazyre.New(expr), at: lazyre.New(`^(?:` + expr + `)`), lib: lib, who: who, anywhere: anywhere}
}

// checkPhrases returns the phrases of checkForms, for oomPhrases.
func checkPhrases() []string {
	ps := make([]string, len(checkForms))
	for k, f := range checkForms {
		ps[k] = f.phrase
	}
	return ps
}

// checkFormOf returns the index in checkForms of the form whose phrase p
// is, -1 for another phrase.
func checkFormOf(p string) int {
	for k, f := range checkForms {
		if f.phrase == p {
			return k
		}
	}
	return -1
}

// checkStart returns where the form k whose phrase was found at line[i]
// starts, -1 when the words around the phrase are not the form.
func checkStart(line string, i, k int) int {
	lo := max(0, i-512)
	for _, loc := range checkForms[k].re.Re().FindAllStringIndex(line[lo:min(len(line), i+512)], -1) {
		if lo+loc[0] <= i && i < lo+loc[1] {
			return lo + loc[0]
		}
	}
	return -1
}

// checkAt returns the form that starts s, as libraryAt does: its library
// and length; "" when none does.
func checkAt(s string) (library string, n int, k int) {
	for k, f := range checkForms {
		if !strings.Contains(s, f.phrase) {
			continue // each form holds its phrase: no match without it
		}
		if loc := f.at.Re().FindStringIndex(s); loc != nil {
			return f.lib, loc[1], k
		}
	}
	return "", 0, -1
}

// classifyCheck reads a check form k at line[at] (see checkForms).
//
// PMacc's two-line form, once joined ("what():  F(N): error: out of
// memory"), is read only after its what(): "F(N): error: ..." at a line's
// start is a compiler's diagnostic.
func classifyCheck(line string, at, k int) int {
	if checkForms[k].anywhere {
		return message
	}
	if checkForms[k].phrase == whatErrorPhrase && !strings.HasSuffix(strings.TrimRight(line[:at], " \t"), "what():") {
		return notMessage
	}
	if checkForms[k].phrase == darknetPhrase && darknetLayerRe.MatchString(line[:at]) {
		return message // after the number of the layer darknet was making
	}
	return raisedAt(line, at)
}

// syclAllocPhrase ends llama.cpp's SYCL backend's allocation failure
// (see checkForms), and syclAllocRe reads its bytes.
const syclAllocPhrase = " Bytes of memory on device"

var syclAllocRe = lazyre.New(`can't allocate (\d{1,20}) Bytes of memory on device`)

// darknetPhrase is darknet's check_error's words (see checkForms), which
// other programs' checks print too.
const darknetPhrase = "CUDA Error: out of memory"

// thrustBadAllocPhrase is thrust's bad_alloc's what() of a device
// allocation's failure (see checkForms).
const thrustBadAllocPhrase = "std::bad_alloc: out of memory"

// cumemPhrase is the file vLLM's CuMemAllocator's check names.
const cumemPhrase = "cumem_allocator.cpp:"

// checkProgramUnnamed is the printer CheckProgram names for
// darknetPhrase where nothing names the program.
const checkProgramUnnamed = "a program's own CUDA check (its words, \"CUDA Error: out of memory\", are darknet's check_error's and other programs' alike; nothing in the text names which)"

// DarknetPrinter is darknet's name as a check's printer (CheckProgram,
// Message.Printer).
const DarknetPrinter = "darknet (its check_error)"

// darknetEvidenceRe matches a line of darknet's around its check_error's
// words: its assertion ("darknet: ./src/cuda.c:36: check_error:
// Assertion `0' failed.", the program's name before it whatever it is,
// darknet_ros's included) and AlexeyAB's fork's dark_cuda.c ("CUDA status
// Error: file: ...\\src\\dark_cuda.c : cuda_free() : line: 423").
var darknetEvidenceRe = lazyre.New(`cuda\.c:\d+: check_error|\bdark_cuda\.c\b`)

// darknetEvidence reports whether line is one of darknet's lines around
// its check_error's words (darknetEvidenceRe).
func darknetEvidence(line string) bool {
	return strings.Contains(line, "cuda.c") && darknetEvidenceRe.MatchString(line)
}

// maxDarknetLines is how far (lines) darknet's lines may be from its
// check_error's words to name darknet as their printer.
const maxDarknetLines = 3

// darknetHeld reports whether m is darknetPhrase alone with no printer
// named yet: the lines after it may name darknet.
func darknetHeld(m Message) bool {
	return m.Generation == GenCUDAError && m.Printer == "" && m.Text == darknetPhrase
}

// seeDarknet notes a line of darknet's (darknetEvidence) and names
// darknet as the printer of the message held (Reader.darknet) when line
// is darknet's or its perror line after the held words ("CUDA Error: out
// of memory: No error"), adding it; another line adds it as it is. Blank
// lines, up to maxDarknetLines, keep it held.
func (r *Reader) seeDarknet(line string) {
	ev := darknetEvidence(line)
	if ev {
		r.darknetSeen = r.line
	}
	h := r.darknet
	if h == nil {
		return
	}
	c := strings.TrimSpace(contLine(h.lead, line))
	if c == "" && h.lines < maxDarknetLines {
		h.lines++
		return
	}
	r.darknet = nil
	if ev || strings.HasPrefix(c, darknetPhrase+": ") {
		// (The perror line is darknet's too: its own words, read next,
		// find darknetSeen.)
		h.msg.Printer = DarknetPrinter
		r.darknetSeen = r.line
	}
	r.addMessage(h.msg, h.frames, h.line)
}

// holdDarknet holds m, darknetPhrase alone (darknetHeld) after lead on
// its line, for the line after it, unless darknet's layer number is lead
// or darknet's lines came just before it (then it is darknet's).
func (r *Reader) holdDarknet(m Message, frames []tbFrame, lead string) {
	if darknetLayerRe.MatchString(lead) || r.darknetSeen > 0 && r.line-r.darknetSeen <= maxDarknetLines {
		m.Printer = DarknetPrinter
		r.darknetSeen = r.line
		r.addMessage(m, frames, r.line)
		return
	}
	r.flushDarknet()
	r.darknet = &heldMessage{msg: m, frames: frames, line: r.line, lead: lead}
}

// flushDarknet adds the message held for darknet's lines as it is.
func (r *Reader) flushDarknet() {
	if h := r.darknet; h != nil {
		r.darknet = nil
		r.addMessage(h.msg, h.frames, h.line)
	}
}

// darknetLayerRe matches the layer's number darknet printed before its
// error on the same line ("    6 "; after a markdown quote's "> " in a
// paste).
var darknetLayerRe = lazyre.New(`^(?:>\s*)?\s*\d{1,4}\s+$`)

// whatErrorPhrase is the phrase of PMacc's joined form (see checkForms).
const whatErrorPhrase = "): error: out of memory"

// CheckProgram names the program or library whose error-check macro
// printed a GenCUDAError message (see checkForms), from its text and the
// text before it on its line (prefix, with the message's exception's type
// before it: a C++ exception's, "thrust::system::system_error"): "XGBoost" for its device_helpers
// .cuh and its "Memory allocation error on worker" (xgboostFiguresRe),
// "RMM" for RAPIDS' memory manager, a macro's owner for the forms of
// checkForms (darknet for its words only after its layer's number in
// prefix; the lines around them may name it, Message.Printer); "" when
// the words do not say. call is the CUDA call the
// words name ("cuMemAlloc", "cudaMalloc"), "" when they name none.
func CheckProgram(prefix, text string) (program, call string) {
	whole := prefix + text
	for _, f := range checkForms {
		if f.who == "" || !strings.Contains(text, f.phrase) {
			continue
		}
		if m := f.re.Re().FindStringSubmatch(text); m != nil {
			if len(m) > 1 {
				call = m[1]
			}
			program = f.who
			if f.phrase == "cudaSuccess" {
				program = glogCheckProgram(m[0])
			}
			break
		}
	}
	if c := checkCallNameRe.FindStringSubmatch(text); c != nil && call == "" {
		call = c[1]
	}
	if call == "" && (strings.Contains(whole, "gpu_device_storage.h") && strings.Contains(text, "cudaSuccess") || strings.Contains(text, "pooled_storage_manager.h")) {
		// MXNet's GPUDeviceStorage::Alloc checks its cudaMalloc alone;
		// its pooled storage manager's failure is that cudaMalloc's.
		call = "cudaMalloc"
	}
	if program == checkProgramUnnamed && darknetLayerRe.MatchString(prefix+" ") {
		program = DarknetPrinter // after the number of the layer darknet was making
	}
	switch {
	case program != "":
	case strings.Contains(whole, "device_helpers.cuh"), strings.Contains(whole, "Memory allocation error on worker"),
		strings.Contains(strings.ToLower(whole), "xgboost"), strings.Contains(whole, "gpu_hist"):
		program = "XGBoost"
	case strings.Contains(whole, "rmm/") || strings.Contains(whole, "RMM failure") || strings.Contains(whole, "rmm::"):
		program = "RMM (RAPIDS' memory manager: cuDF, cuML, cupoch)"
	case strings.Contains(whole, "mallocMC"):
		program = "mallocMC (PIConGPU's device heap, through PMacc's CUDA check)"
	case strings.Contains(whole, "thrust::") && strings.Contains(whole, "bad_alloc"):
		program = "thrust (its bad_alloc: a device allocation failed)"
	case strings.Contains(whole, "thrust::"):
		program = "thrust (a thrust::system_error)"
	case strings.Contains(whole, "pooled_storage_manager"):
		program = "MXNet (its GPU memory pool, pooled_storage_manager)"
	}
	return program, call
}

// glogCheckProgram names the program whose glog CHECK of the CUDA
// status printed check, a match of its form (see checkForms).
func glogCheckProgram(check string) string {
	switch {
	case strings.Contains(check, "Error at:"):
		return "Caffe2 (its CUDA_ENFORCE)"
	case strings.Contains(check, "cudaSuccess =="):
		return "PaddlePaddle (its early CHECK of cudaStat)"
	case strings.Contains(check, "Check failed: e == cudaSuccess"):
		return "MXNet (mshadow's CHECK of the CUDA status)"
	case strings.Contains(check, "Check failed: error == cudaSuccess"):
		return "Caffe (its CUDA_CHECK, a glog CHECK)"
	}
	return "a glog CHECK of the CUDA status (Caffe, MXNet or a program built on them)"
}

// checkCallNameRe finds a CUDA runtime or driver call named in a check's words.
var checkCallNameRe = lazyre.New(`\b(cuda[A-Z][A-Za-z]*|cu[A-Z][A-Za-z0-9_]*)\(`)

// whatCutRe matches a what() line that ends with a place and a colon, its
// error on the next line (PMacc's CUDA_CHECK: "what():  .../
// SimpleCudaMalloc_impl.hpp(42):" then "error: out of memory").
var whatCutRe = lazyre.New(`what\(\):\s+\S+\.[A-Za-z]{1,4}\(\d{1,6}\):\s*$`)

// whatErrorRe matches the line after it that gives the error.
var whatErrorRe = lazyre.New(`^\s*error: out of memory\s*$`)

// whatCut is a what() line whose error may come on the next line.
type whatCut struct {
	text string
	line int64
}

// joinWhat returns the line before joined with line when the line before
// was a what() line cut after its place (whatCutRe) and line gives the
// out-of-memory error, and notes line as such a cut for the next.
func (r *Reader) joinWhat(line string) (joined string, at int64, ok bool) {
	prev := r.what
	r.what = nil
	if prev != nil && prev.line == r.line-1 && whatErrorRe.MatchString(line) {
		return strings.TrimRight(prev.text, " \t") + " " + strings.TrimSpace(line), prev.line, true
	}
	if strings.Contains(line, "what():") && whatCutRe.MatchString(line) {
		r.what = &whatCut{text: line, line: r.line}
	}
	return "", 0, false
}

// rmmPoolPhrase is the words of RMM's pool limit (see checkForms).
const rmmPoolPhrase = "Maximum pool size exceeded"

// RMMPoolLimit reports whether text, a GenCUDAError message's Text, is
// RMM's pool memory resource refusing to grow past its maximum size
// ("RMM failure at:FILE:LINE: Maximum pool size exceeded"), not a failed
// CUDA allocation.
func RMMPoolLimit(text string) bool {
	_, _, k := checkAt(text)
	return k >= 0 && checkForms[k].phrase == rmmPoolPhrase
}

// XGBoost's allocators (device_helpers.cuh, ThrowOOMError) log a failed
// allocation at FATAL level as "Memory allocation error on worker R: "
// then the error ("std::bad_alloc: cudaErrorMemoryAllocation: out of
// memory", RMM's words under RMM), and on the next two lines the GPU's
// free memory at the failure (cudaMemGetInfo) and the request, in bytes:
// "- Free memory: 8126464", "- Requested memory: 33554432". XGBoost 2.1
// and later print them through HumanMemUnit (common.cc): the bytes over
// 1024^3, 1024^2 or 1024 with the unit "GB", "MB" or "KB" (powers of
// 1024 whatever the names), at a stream's six significant digits
// ("53.1098GB", "64GB"), and "B" below 1 KB. A Python repr of the
// exception keeps the three on one line, joined by "\n" (escaped once
// or twice): xgboostInlineRe reads them there.
const xgboostWorkerWords = "Memory allocation error on worker "

// xgboostFigureRe matches one of those figure lines (behind any prefix).
var xgboostFigureRe = lazyre.New(`(?:^|\s)- (Free|Requested) memory: (\d{1,20}(?:\.\d{1,12})?)(GB|MB|KB|B)?\s*$`)

// xgboostInlineRe matches a figure after an escaped line end.
var xgboostInlineRe = lazyre.New(`\\+n- (Free|Requested) memory: (\d{1,20}(?:\.\d{1,12})?)(GB|MB|KB|B)?`)

// xgboostFigure sets m's Free or Requested from a figure's submatches
// (its name, its number, its unit).
func xgboostFigure(m *Message, x []string) {
	n := decimalFigure(x[2], byteUnits[x[3]])
	if x[1] == "Free" {
		m.Free = n
	} else {
		m.Requested = n
	}
}

// xgboostInline reads XGBoost's figures on the message's own line
// (rest, from the message on; see xgboostInlineRe), and reports whether
// it read any.
func xgboostInline(m *Message, rest string) bool {
	xs := xgboostInlineRe.Re().FindAllStringSubmatch(rest, maxXGBoostLines)
	for _, x := range xs {
		xgboostFigure(m, x)
	}
	return len(xs) > 0
}

// maxXGBoostLines is how many lines after XGBoost's error are read for
// its figures.
const maxXGBoostLines = 2

// xgboostHeld reports whether a GenCUDAError message whose text before
// it on its line is prefix is XGBoost's (xgboostWorkerWords), whose
// figures follow it.
func xgboostHeld(prefix string) bool { return strings.Contains(prefix, xgboostWorkerWords) }

// xgboostLine reads line for the XGBoost message held (Reader.xgb): a
// figure line sets its Free or Requested and is taken; another line, or
// the last figure line, adds the message. It reports whether line was
// taken.
func (r *Reader) xgboostLine(line string) bool {
	h := r.xgb
	x := xgboostFigureRe.FindStringSubmatch(line)
	if x == nil {
		r.xgb = nil
		r.addMessage(h.msg, h.frames, h.line)
		return false
	}
	xgboostFigure(&h.msg, x)
	h.lines++
	if h.lines == maxXGBoostLines {
		r.xgb = nil
		r.addMessage(h.msg, h.frames, h.line)
	}
	return true
}

// NVHPC's OpenACC and CUDA Fortran runtime prints the place of the
// directive or statement whose call failed on the three lines after its
// error (MFC/MFC#989's log): " File: /home/.../m_rhs.fpp",
// " Function: s_initialize_rhs_module:172" (the routine, and the line it
// starts on) and " Line: 249" (the statement's). The reader holds the
// error while they come and adds it with that place as its innermost
// frame, as a traceback's would be: the report names the routine and the
// file and line.
var nvhpcPlaceRe = lazyre.New(`^\s*(File|Function|Line): (\S.*?)\s*$`)

// maxNVHPCLines is how many lines after NVHPC's error are read for its
// place.
const maxNVHPCLines = 3

// nvhpcHeld reports whether a GenCUDAError message whose text is text,
// with prefix before it on its line, is NVHPC's, whose place follows.
func nvhpcHeld(prefix, text string) bool {
	who, _ := CheckProgram(prefix, text)
	return strings.HasPrefix(who, "NVHPC")
}

// nvhpcLine reads line for the NVHPC message held (Reader.nvhpc): a place
// line is taken; another line, or the third place line, adds the message.
// It reports whether line was taken.
func (r *Reader) nvhpcLine(line string) bool {
	h := r.nvhpc
	x := nvhpcPlaceRe.FindStringSubmatch(contLine(h.lead, line))
	if x == nil {
		r.flushNVHPC()
		return false
	}
	p := &r.nvhpcPlace
	switch x[1] {
	case "File":
		p.file = x[2]
	case "Function":
		// "s_initialize_rhs_module:172": the routine, and its first line.
		p.name, _, _ = strings.Cut(x[2], ":")
	case "Line":
		p.line, _ = strconv.ParseInt(x[2], 10, 64)
	}
	h.lines++
	if h.lines == maxNVHPCLines {
		r.flushNVHPC()
	}
	return true
}

// flushNVHPC adds the NVHPC message held, with the place read as its
// innermost frame when its file was read.
func (r *Reader) flushNVHPC() {
	h := r.nvhpc
	if h == nil {
		return
	}
	r.nvhpc = nil
	frames := h.frames
	if r.nvhpcPlace.file != "" {
		frames = append(frames[:len(frames):len(frames)], r.nvhpcPlace)
	}
	r.addMessage(h.msg, frames, h.line)
}
