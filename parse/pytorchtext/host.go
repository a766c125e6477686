package pytorchtext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// PyTorch's CPU allocator's out-of-memory errors: host memory (the
// machine's RAM, or the process's limit), never a GPU's. Each generation,
// from its source:
//
//   - c10/core/impl/alloc_cpu.cpp (1.13+) and c10/core/CPUAllocator.cpp
//     (1.2-1.12), raised through CAFFE_ENFORCE, so after "[enforce fail at
//     FILE:LINE] COND. ": on Linux and macOS posix_memalign's error,
//     "DefaultCPUAllocator: can't allocate memory: you tried to allocate N
//     bytes. Error code E (STRERROR)"; on Windows (_aligned_malloc) and
//     Android (memalign) a null pointer, "DefaultCPUAllocator: not enough
//     memory: you tried to allocate N bytes." (" Buy new RAM!" after it
//     before 1.13).
//   - c10/core/CPUAllocator.cpp of 1.0-1.1 on Linux:
//     CAFFE_ENFORCE_EQ(posix_memalign(&data, gAlignment, nbytes), 0), which
//     prints "posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0" (12
//     is ENOMEM; Caffe2's allocator.h named it gCaffe2Alignment): no size.
//   - TH's THAlloc (aten/src/TH/THGeneral.cpp, PyTorch 0.x-1.x; Lua
//     Torch): "$ Torch: not enough memory: you tried to allocate NGB. Buy
//     new RAM!", N the request in GiB rounded down (size/1073741824).
//
// These phrases start such a message; hostForm must match from there.
const (
	cpuAllocatorPhrase  = "DefaultCPUAllocator: "
	posixMemalignPhrase = "posix_memalign(&data, g"
	thAllocPhrase       = "$ Torch: not enough memory: "
)

// hostForm matches a host allocator's message at its phrase (see above):
// 1 "not enough memory" or "can't allocate memory", 2 the bytes, 3 the
// error code, 4 its strerror text; 5 posix_memalign's error code; 6 TH's
// whole GiB.
var hostForm = lazyre.New(`^(?:DefaultCPUAllocator: (not enough memory|can't allocate memory): you tried to allocate (\d{1,20}) bytes\.?(?: Error code (\d+) \(([^)]*)\))?(?: Buy new RAM!)?` +
	`|posix_memalign\(&data, g(?:Caffe2)?Alignment, nbytes\) == 0\. (\d+) vs 0` +
	`|\$ Torch: not enough memory: you tried to allocate (\d{1,12})GB\. Buy new RAM!)`)

// badAllocPhrase is C++'s std::bad_alloc's what(), the name of the
// exception operator new throws when the machine's memory cannot serve a
// request: alone (badAllocRe) after "what():  " (the C++ runtime's
// terminate handler) or an exception's colon (pybind11's "MemoryError:
// std::bad_alloc", PyTorch's "RuntimeError: std::bad_alloc"), host
// memory. GPU libraries that throw it say so after it (thrust's
// "std::bad_alloc: cudaErrorMemoryAllocation: out of memory", RMM's
// "std::bad_alloc: out_of_memory: ..."): those are read from their words.
const badAllocPhrase = "std::bad_alloc"

// badAllocRe matches std::bad_alloc alone to the line's end (a closing
// quote allowed).
var badAllocRe = lazyre.New(`^std::bad_alloc['"]?\s*$`)

// hostStatuses are the GPU runtimes' statuses for host memory that ran
// out, from their headers: the allocation the runtime made in the
// machine's memory (its own bookkeeping, a staging or pinned buffer, host
// USM) failed, not one in the device's. Each is read where its device
// counterpart is (libraryOOMs), as a host message.
var hostStatuses = []struct{ phrase, library, name string }{
	{"ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", LibraryLevelZero, "ze_result_t 0x70000002"},
	{"UR_RESULT_ERROR_OUT_OF_HOST_MEMORY", LibraryUR, "ur_result_t 39"},
	{"PI_ERROR_OUT_OF_HOST_MEMORY", LibraryPI, "pi_result -6, OpenCL's CL_OUT_OF_HOST_MEMORY carried on"},
	{"VK_ERROR_OUT_OF_HOST_MEMORY", "Vulkan", "VkResult -1"},
	{"ErrorOutOfHostMemory", "Vulkan", "Vulkan-Hpp's name of VK_ERROR_OUT_OF_HOST_MEMORY, VkResult -1"},
	{"CL_OUT_OF_HOST_MEMORY", "OpenCL", "cl_int -6"},
}

// hostStatusPhrases returns the phrases of hostStatuses, for oomPhrases.
func hostStatusPhrases() []string {
	ps := make([]string, len(hostStatuses))
	for i, h := range hostStatuses {
		ps[i] = h.phrase
	}
	return ps
}

// hostStatusLibraries returns hostStatuses as libraryOOMs' entries.
func hostStatusLibraries() []struct{ phrase, library string } {
	ls := make([]struct{ phrase, library string }, len(hostStatuses))
	for i, h := range hostStatuses {
		ls[i].phrase, ls[i].library = h.phrase, h.library
	}
	return ls
}

// HostStatus returns the host-memory status (hostStatuses) in text, ""
// when it holds none.
func HostStatus(text string) string {
	for _, h := range hostStatuses {
		if strings.Contains(text, h.phrase) {
			return h.phrase
		}
	}
	return ""
}

// hostAllocCalls are the CUDA and HIP calls that allocate page-locked
// (pinned) host memory or pin memory already allocated: their
// out-of-memory error (cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY,
// hipErrorOutOfMemory) is the machine's memory running out, not a GPU's.
var hostAllocCalls = map[string]bool{
	"cudaMallocHost": true, "cudaHostAlloc": true, "cudaHostRegister": true,
	"cuMemHostAlloc": true, "cuMemAllocHost": true, "cuMemAllocHost_v2": true, "cuMemHostRegister": true, "cuMemHostRegister_v2": true,
	"hipHostMalloc": true, "hipMallocHost": true, "hipHostAlloc": true, "hipHostRegister": true,
}

// gpuCallRe matches a CUDA runtime, driver or HIP call's name.
var gpuCallRe = lazyre.New(`\b(?:cuda|cu|hip)[A-Z][A-Za-z0-9_]*`)

// hostAllocCall returns the pinned host allocation (hostAllocCalls) that
// failed with a CUDA or HIP out-of-memory error, from the words around
// it: the last call named on the line before the error (before, "FATAL
// server failed during startup | cudaMallocHost failed: "), or the call a
// check macro quotes after it (after: the CUDA samples' "code=2
// (cudaErrorMemoryAllocation) \"cudaMallocHost(&h, n)\""). "" when the
// call named is another or none is.
func hostAllocCall(before, after string) string {
	last := ""
	for _, c := range gpuCallRe.Re().FindAllString(before[max(0, len(before)-160):], -1) {
		if !strings.HasPrefix(c, "cudaError") && !strings.HasPrefix(c, "hipError") && c != "cudaSuccess" && c != "hipSuccess" {
			last = c
		}
	}
	if last == "" {
		if x := checkCallNameRe.FindStringSubmatch(after[:min(len(after), 400)]); x != nil {
			last = x[1]
		}
	}
	if hostAllocCalls[last] {
		return last
	}
	return ""
}

// pinnedFrameCall returns the pinned host allocation a traceback's
// innermost frames show the error was raised from, named as the CUDA or
// HIP call with the frame after it ("cudaHostAlloc (in
// cupy_backends.cuda.api.runtime.hostAlloc)"), or "" when none does.
// Only the three innermost frames count: the status is raised by a
// status check (CuPy's check_status) inside the wrapper of the call that
// failed, so a pinned allocation further out is not the call that failed.
// Wrappers: a frame named as the call itself (cuda-python's
// cudart.cudaHostAlloc, cuda.cudart.cudaMallocHost), and CuPy's runtime
// module's hostAlloc/hostRegister (cudaHostAlloc/cudaHostRegister).
func pinnedFrameCall(frames []tbFrame) string {
	for i := len(frames) - 1; i >= 0 && i >= len(frames)-3; i-- {
		name := frames[i].name
		short := name[strings.LastIndexByte(name, '.')+1:]
		if hostAllocCalls[short] {
			return short + " (in " + name + ")"
		}
		if strings.HasPrefix(name, "cupy_backends.cuda.api.runtime.") || strings.HasPrefix(name, "cupy.cuda.runtime.") {
			switch short {
			case "hostAlloc":
				return "cudaHostAlloc (in " + name + ")"
			case "hostRegister":
				return "cudaHostRegister (in " + name + ")"
			}
		}
	}
	return ""
}

// hostPhraseAt reports whether line[at:] starts with a host allocator's
// phrase.
func hostPhraseAt(line string, at int) bool {
	rest := line[at:]
	if strings.HasPrefix(rest, badAllocPhrase) {
		return badAllocRe.Re().MatchString(rest)
	}
	return strings.HasPrefix(rest, cpuAllocatorPhrase) || strings.HasPrefix(rest, posixMemalignPhrase) || strings.HasPrefix(rest, thAllocPhrase)
}

// parseHost reads a host allocator's message at line[at] (see
// hostPhraseAt) into m: Generation GenCPU, Host set, Requested the exact
// bytes where printed (TH's whole GiB give the lower bound, with
// requestedBelow the upper); hostErrno is posix_memalign's error code
// where printed, hostOS "Windows" (Windows' or Android's words) or
// "Linux" (Linux's or macOS's). ok is false when the text after the
// phrase is not the whole form (prose naming the allocator).
func parseHost(line string, at int, m *Message) (end int, ok bool) {
	if strings.HasPrefix(line[at:], badAllocPhrase) {
		m.Generation, m.Host, m.Backend, m.Text = GenCPU, true, "", badAllocPhrase
		return at + len(badAllocPhrase), true
	}
	g := hostForm.Re().FindStringSubmatchIndex(line[at:])
	if g == nil {
		return at, false
	}
	sub := func(k int) string {
		if g[2*k] < 0 {
			return ""
		}
		return line[at+g[2*k] : at+g[2*k+1]]
	}
	m.Generation, m.Host, m.Backend = GenCPU, true, ""
	m.Text = line[at : at+g[1]]
	switch {
	case sub(2) != "":
		if n, err := strconv.ParseInt(sub(2), 10, 64); err == nil {
			m.Requested = n
		}
		if sub(1) == "not enough memory" {
			m.hostOS = "Windows"
		} else {
			m.hostOS, m.hostErrno = "Linux", sub(3)
		}
	case sub(5) != "":
		m.hostOS, m.hostErrno = "Linux", sub(5)
	case sub(6) != "":
		if n, err := strconv.ParseInt(sub(6), 10, 64); err == nil && n < 1<<33 {
			m.Requested, m.requestedBelow = n<<30, (n+1)<<30
		}
	}
	return at + g[1], true
}

// hostNote is the warning for a host-memory message (Message.Host, see
// Reader.noteHost): what ran out, the request, and what the words tell.
func hostNote(m Message, line string) string {
	if m.Generation == GenTF {
		const format = "TensorFlow could not allocate a tensor in host memory (%s): the device is the CPU, so the machine's RAM (or the process's memory limit) ran out, not a GPU's; it is not counted as a GPU OOM. A smaller batch or input needs less; if the job was meant to run on a GPU, this op ran on the CPU (a TensorFlow build without GPU support, no GPU visible, or the op placed there)"
		text := m.Text
		if len(text) > 240 {
			text = clip(text)
		}
		switch device := tfDeviceRe.Re().FindString(line); {
		case m.hostNode != "":
			text += ", its op's node on the next line placed on " + m.hostNode // TF 1.0-1.3 (tfnode.go)
		case !strings.Contains(text, device):
			text += ", on " + device // the eager form's device is in the annotation before it
		}
		return fmt.Sprintf(format, text)
	}
	if m.Generation == GenCUDAError {
		for _, h := range hostStatuses {
			if strings.Contains(m.Text, h.phrase) {
				return fmt.Sprintf("%q: %s reported that host memory ran out (%s, %s): the machine's memory, not a GPU's, so it is not counted as a GPU OOM. A GPU runtime allocates its own bookkeeping, staging and page-locked (pinned) buffers for transfers, and host-visible allocations, in host memory, which free RAM, a container's memory limit or the locked-memory limit (ulimit -l) bounds; on an integrated GPU, whose device memory is the machine's own, a model or buffers too large for it can end so too. The status gives no sizes", m.Text, h.library, h.phrase, h.name)
			}
		}
	}
	if m.Generation == GenCUDAError && m.hostCall != "" {
		return fmt.Sprintf("%q: %s, which allocates page-locked (pinned) host memory, failed with out of memory: the machine's memory, not a GPU's, so it is not counted as a GPU OOM. Pinned memory cannot be paged out: free RAM, a container's memory limit or the locked-memory limit (ulimit -l) bounds it; the message has no sizes; a smaller pinned buffer (or pageable memory) needs less", m.Text, m.hostCall)
	}
	if m.Generation == GenCUDAError {
		// hostAllocRe: StreamExecutor's pinned host memory.
		through := "the CUDA driver (cuMemHostAlloc)"
		if Library(m.Text) == "the HIP runtime" {
			through = "the HIP runtime (hipHostMalloc)" // the ROCm build's rocm_driver.cc
		}
		return fmt.Sprintf("%q: StreamExecutor (TensorFlow's, or XLA's in JAX) could not allocate %d bytes (%s) of page-locked (pinned) host memory through %s, the buffers it copies to and from the GPU through: this is the machine's memory, not a GPU's, so it is not counted as a GPU OOM. Pinned memory cannot be paged out: free RAM, a container's memory limit or the locked-memory limit (ulimit -l) bounds it; the framework retries with smaller buffers and may go on (a GPU OOM, if one follows, is reported on its own)", m.Text, m.Requested, FormatSize(m.Requested), through)
	}
	if m.Text == badAllocPhrase {
		return "\"std::bad_alloc\" alone: a C++ allocation failed (operator new, or a container growing), which allocates the machine's memory: host memory ran out, or the size asked for was too large to serve (a size computed wrong); no GPU call is named, so it is not counted as a GPU OOM (a GPU library's std::bad_alloc names its error after it: thrust's and RMM's \"std::bad_alloc: cudaErrorMemoryAllocation: out of memory\", which is read as one); the message has no sizes"
	}
	var b strings.Builder
	who := "PyTorch's CPU allocator (DefaultCPUAllocator)"
	if strings.HasPrefix(m.Text, thAllocPhrase) {
		who = "Torch's TH allocator (THAlloc: PyTorch 0.x-1.x, Lua Torch)"
	}
	switch {
	case m.requestedBelow > 0 && m.Requested == 0:
		fmt.Fprintf(&b, "%s could not allocate under 1 GiB of host memory (the message rounds down to whole GiB)", who)
	case m.requestedBelow > 0:
		fmt.Fprintf(&b, "%s could not allocate %d to %d GiB of host memory (the message rounds down to whole GiB)", who, m.Requested>>30, m.requestedBelow>>30)
	case m.Requested >= 0:
		fmt.Fprintf(&b, "%s could not allocate %d bytes (%s) of host memory", who, m.Requested, FormatSize(m.Requested))
	default:
		fmt.Fprintf(&b, "%s could not allocate host memory (PyTorch 1.0-1.1 print the failed posix_memalign call, not the size)", who)
	}
	if m.hostErrno != "" && m.hostErrno != "12" {
		// posix_memalign fails with ENOMEM (12) for want of memory,
		// EINVAL (22) for a bad alignment: another code is no shortage.
		fmt.Fprintf(&b, ": %q. The error code is %s, not ENOMEM (12): posix_memalign refused the request for another reason than a shortage of memory (EINVAL, 22, is a bad alignment), so memory did not run out; it is not counted as a GPU OOM", m.Text, m.hostErrno)
		return b.String()
	}
	if m.Requested < 0 && m.hostErrno == "12" {
		b.WriteString(", error code 12 (ENOMEM)")
	}
	fmt.Fprintf(&b, ": %q. This is the machine's memory, not a GPU's; it is not counted as a GPU OOM. The message gives the request alone, not what the process held nor what was free", m.Text)
	switch m.hostOS {
	case "Windows":
		b.WriteString(". These words are Windows' (and Android's): on Windows an allocation fails when the memory committed would pass the commit limit, RAM plus the page file, so a larger page file (virtual memory) or fewer other programs make room too, not only a smaller request")
	case "Linux":
		b.WriteString(". These words are Linux's (and macOS's): posix_memalign returned ENOMEM; Linux's default overcommit policy refuses a request beyond RAM plus swap, and a ulimit -v or -d one beyond the limit, while memory used up gradually gets the OOM killer instead, which prints nothing here")
	}
	b.WriteString(". A smaller batch or input needs less; if the tensor was meant for the GPU, it was made or loaded on the CPU first")
	return b.String()
}
