package report

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
)

// FromSanitizer turns the analysis of a compute-sanitizer report into the
// report's input entry, findings (kinds leak and retained, Device null)
// and tool errors. path is the input as named on the command line, source
// its format; parseWarnings come from the parser.
func FromSanitizer(path, source string, parseWarnings []string, res *sanitizer.Result) (Input, []Finding, []ToolError) {
	in := Input{Path: path, Format: source}
	in.Warnings = append(append(in.Warnings, parseWarnings...), res.Warnings...)
	var byRun []RunSummary
	for i, run := range res.Runs {
		s := &LeakSummary{}
		if run.HasLeakSummary {
			s.Bytes, s.Allocations = &run.SummaryBytes, &run.SummaryAllocations
		}
		if run.HasErrorSummary {
			s.Errors = &run.SummaryErrors
			leaks := int64(run.Leaks)
			if run.HasLeakSummary {
				leaks = run.SummaryAllocations
			}
			s.NonLeakErrors = ptr(max(run.SummaryErrors-leaks, 0))
		}
		if s.Bytes != nil || s.Errors != nil {
			if in.LeakSummary == nil {
				in.LeakSummary = &LeakSummary{}
			}
			in.LeakSummary.add(s)
			byRun = append(byRun, RunSummary{Run: i + 1, Line: run.StartLine,
				Bytes: s.Bytes, Allocations: s.Allocations, Errors: s.Errors, NonLeakErrors: s.NonLeakErrors})
		}
	}
	if len(byRun) > 1 {
		// A total of several runs is no run's own figure: say it is a
		// total, and give each run's.
		in.LeakSummary.ByRun = byRun
	}
	for _, s := range res.Suppressed {
		msg := fmt.Sprintf("suppressed by %s: %s", s.Rule, plural(s.Records, "record", "records"))
		if s.Bytes > 0 {
			msg += fmt.Sprintf(" (%s leaked)", IBytes(s.Bytes))
		}
		in.Warnings = append(in.Warnings, msg)
	}
	var fs []Finding
	for _, s := range res.Sites {
		f := Finding{
			Kind:      KindLeak,
			Path:      path,
			Source:    source,
			Bytes:     s.Bytes,
			Count:     s.Count,
			Site:      frame(s.Frame),
			Message:   sanitizerSiteMessage(s),
			Sizes:     s.Sizes,
			Allocator: s.Allocator,
			Stack:     []Frame{},

			SiteUnknown: s.Unknown,
		}
		if s.Kind == callsite.Retained {
			f.Kind = KindRetained
		}
		for _, fr := range s.Stack {
			f.Stack = append(f.Stack, frame(fr))
		}
		fs = append(fs, f)
	}
	var errs []ToolError
	for _, e := range res.Errors {
		te := ToolError{
			Path: path, Source: source, Kind: e.Kind, Text: e.Message, API: e.API, Error: e.Error,
			Function: e.Function, Kernel: e.Kernel, Site: frame(e.Frame), Stack: []Frame{}, Count: e.Count,
			Message: toolErrorMessage(e),
		}
		if (e.Kernel != "" || e.Function != "") && e.Launch != (callsite.Frame{}) {
			l := frame(e.Launch)
			te.Launch = &l
		}
		for _, fr := range e.Stack {
			te.Stack = append(te.Stack, frame(fr))
		}
		errs = append(errs, te)
	}
	return in, fs, errs
}

// memoryOf names the memory of an allocator class, and the call that
// frees it, by the allocation API where one is known (api: cuMemAlloc_v2's
// is cuMemFree, cudaMallocArray's cudaFreeArray).
func memoryOf(alloc, api string) (what, free string) {
	switch alloc {
	case sanitizer.AllocDevice:
		what, free = "device memory (cudaMalloc)", "cudaFree"
	case sanitizer.AllocAsync:
		what, free = "stream-ordered memory (cudaMallocAsync)", "cudaFreeAsync"
	case sanitizer.AllocPinned:
		what, free = "pinned host memory (cudaMallocHost/cudaHostAlloc)", "cudaFreeHost"
	case sanitizer.AllocManaged:
		what, free = "managed memory (cudaMallocManaged)", "cudaFree"
	case sanitizer.AllocDeviceHeap:
		return "device-heap memory (malloc in a kernel)", "free() in device code"
	default:
		return "memory", "the matching free call"
	}
	if api == "" {
		return what, free
	}
	if f, ok := freeCalls[api]; ok {
		free = f
	}
	return what[:strings.IndexByte(what, '(')] + "(" + api + ")", free
}

// freeCalls names the call that frees what an allocation API allocated,
// where it is not its class's (cudaFree, cudaFreeAsync, cudaFreeHost):
// the driver API's, arrays', registered host memory's.
var freeCalls = map[string]string{
	"cuMemAlloc": "cuMemFree", "cuMemAlloc_v2": "cuMemFree", "cuMemAllocPitch": "cuMemFree",
	"cuMemAllocPitch_v2": "cuMemFree", "cuMemAllocManaged": "cuMemFree",
	"cudaMallocArray": "cudaFreeArray", "cudaMalloc3DArray": "cudaFreeArray",
	"cudaMallocMipmappedArray": "cudaFreeMipmappedArray",
	"cuArrayCreate":            "cuArrayDestroy", "cuArrayCreate_v2": "cuArrayDestroy",
	"cuArray3DCreate": "cuArrayDestroy", "cuArray3DCreate_v2": "cuArrayDestroy",
	"cuMemCreate":     "cuMemRelease",
	"cuMemAllocAsync": "cuMemFreeAsync", "cuMemAllocFromPoolAsync": "cuMemFreeAsync",
	"cuMemAllocHost": "cuMemFreeHost", "cuMemAllocHost_v2": "cuMemFreeHost", "cuMemHostAlloc": "cuMemFreeHost",
	"cudaHostRegister": "cudaHostUnregister", "cuMemHostRegister": "cuMemHostUnregister",
	"cuMemHostRegister_v2": "cuMemHostUnregister",
}

// sanitizerSiteMessage is the one line a person acts on for a leak site.
func sanitizerSiteMessage(s sanitizer.Site) string {
	what, free := memoryOf(s.Allocator, s.API)
	n := plural(s.Count, "allocation", "allocations")
	if s.Unknown != "" && s.Kind == callsite.Retained {
		// The pool is known from the frames the log kept, the caller not.
		return fmt.Sprintf("retained: %s (%s) of %s held at exit by %s, the program's own caller not known (%s): the pool keeps freed blocks for reuse, so this is not a leak of the program; %s",
			n, IBytes(s.Bytes), what, s.Pool, s.Unknown, s.Hint)
	}
	if s.Unknown != "" {
		of := ""
		if s.Allocator != "" {
			of = " of " + what
		}
		return fmt.Sprintf("leak: %s (%s)%s never freed, site unknown: %s", n, IBytes(s.Bytes), of, s.Unknown)
	}
	if len(s.Stack) == 0 {
		sizes := ""
		if len(s.Sizes) == 1 && s.Count > 1 {
			sizes = " of " + IBytes(s.Sizes[0])
		}
		named := ""
		if s.Name != "" {
			named = fmt.Sprintf(" named %q by the program (NVTX),", s.Name)
		}
		return fmt.Sprintf("leak: %s%s (%s)%s never freed, with no stack recorded (compute-sanitizer --show-backtrace no); rerun with backtraces to see where they were allocated",
			n, sizes, IBytes(s.Bytes), named)
	}
	procs := ""
	if s.Processes > 1 {
		procs = fmt.Sprintf(" in %d leak reports (processes, or device resets)", s.Processes)
	}
	at := frame(s.Frame).String()
	if s.NoLineInfo {
		// A host frame: its file:line comes from the host code's debug
		// information (-g); -lineinfo is device code's. A shared
		// library's frame is the program's only if it built it
		// (tensorrt_rtx_1_1.dll is NVIDIA's, shipped without it).
		if m := s.Frame.Filename; isSharedLibrary(m) {
			at += fmt.Sprintf(" (no line information: the frame is in the shared library %s; if it is one the program builds, rebuild it with -g to see file:line)", baseOf(m))
		} else {
			at += " (no line information: rebuild the host code with -g to see file:line)"
		}
	}
	if s.NoSymbols {
		// NVIDIA's compute-sanitizer manual: host backtraces name
		// functions when the host compiler is given -rdynamic.
		innermost := ""
		if len(s.Stack) > 0 && s.Stack[0] == s.Frame {
			innermost = ", and the innermost, named here, may be the statically linked CUDA runtime's code"
		}
		at += fmt.Sprintf(" (the program's frames in %s have no symbols, only return addresses%s: link with -rdynamic (nvcc -Xcompiler -rdynamic) to see function names, and build with -g for file:line)", s.Frame.Filename, innermost)
	}
	if s.Kind == callsite.Retained {
		why := "the pool keeps freed blocks for reuse, so this is not a leak of the program"
		if s.Pool == sanitizer.HandlePool {
			why = "library handles the framework keeps for the process's life, so this is not a leak of the program"
		}
		return fmt.Sprintf("retained: %s (%s) of %s held at exit by %s, allocated at %s%s: %s; %s",
			n, IBytes(s.Bytes), what, s.Pool, at, procs, why, s.Hint)
	}
	if h, ok := libraryHandleOf(s.Stack); ok {
		return fmt.Sprintf("leak: %s (%s) of %s at %s%s, made by %s for %s, never destroyed; call %s when it is no longer needed (create it once and reuse it: one created per call or iteration is the usual cause)",
			n, IBytes(s.Bytes), what, at, procs, h.call, h.what, h.destroy)
	}
	if s.Hint != "" {
		were := "were"
		if s.Count == 1 {
			were = "was"
		}
		return fmt.Sprintf("leak: %s (%s) of %s at %s%s %s never freed; %s",
			n, IBytes(s.Bytes), what, at, procs, were, s.Hint)
	}
	if s.Count == 1 {
		return fmt.Sprintf("leak: 1 allocation (%s) of %s at %s%s was never freed; release it with %s when it is no longer needed",
			IBytes(s.Bytes), what, at, procs, free)
	}
	return fmt.Sprintf("leak: %s (%s) of %s at %s%s were never freed; release each with %s: a buffer allocated per call or iteration and never freed is the usual cause",
		n, IBytes(s.Bytes), what, at, procs, free)
}

// libraryHandle is a CUDA library's handle (or plan) whose creation
// allocates device memory that only its destroy call gives back.
type libraryHandle struct{ call, what, destroy string }

// libraryHandles: the creating calls, by function-name prefix.
var libraryHandles = []libraryHandle{
	{"cublasLtCreate", "a cuBLASLt handle", "cublasLtDestroy"},
	{"cublasCreate", "a cuBLAS handle and its workspace", "cublasDestroy"},
	{"cudnnCreate", "a cuDNN handle", "cudnnDestroy"},
	{"cusparseCreate", "a cuSPARSE handle", "cusparseDestroy"},
	{"cusolverDnCreate", "a cuSOLVER handle", "cusolverDnDestroy"},
	{"cufftPlan", "a cuFFT plan", "cufftDestroy"},
	{"cufftMakePlan", "a cuFFT plan", "cufftDestroy"},
	{"curandCreateGenerator", "a cuRAND generator", "curandDestroyGenerator"},
}

// libraryHandleOf finds, in a leak's stack (innermost first), the library
// call that created a handle holding the memory: the leak is the handle,
// freed by its destroy call, not by cudaFree.
func libraryHandleOf(stack []callsite.Frame) (libraryHandle, bool) {
	for _, f := range stack {
		for _, h := range libraryHandles {
			if strings.HasPrefix(f.Name, h.call) {
				h.call = f.Name
				return h, true
			}
		}
	}
	return libraryHandle{}, false
}

// stickyErrors are CUDA errors that an earlier kernel fault leaves behind:
// every later call fails with them.
var stickyErrors = map[string]bool{
	"cudaErrorLaunchFailure": true, "cudaErrorIllegalAddress": true, "cudaErrorMisalignedAddress": true,
	"cudaErrorIllegalInstruction": true, "cudaErrorHardwareStackError": true, "cudaErrorAssert": true,
	"cudaErrorInvalidAddressSpace": true, "cudaErrorInvalidPc": true, "cudaErrorLaunchTimeout": true,
}

// outOfMemoryErrors are the CUDA runtime's and driver's out-of-memory
// errors.
var outOfMemoryErrors = map[string]bool{"cudaErrorMemoryAllocation": true, "CUDA_ERROR_OUT_OF_MEMORY": true}

// shutdownErrors are the CUDA runtime's and driver's errors for a call made
// while the process is shutting down, after the runtime began to unload
// (cudaGetErrorString and cuGetErrorString both say "driver shutting
// down"): a destructor or exit handler that runs after it (a global or
// thread-local object's, a library's static cleanup) called CUDA too late.
// The call's arguments are not at fault. Their numbers changed between
// CUDA versions (cudaErrorCudartUnloading is 29 before CUDA 10.1, 4
// after), so they are told by name or text only.
var shutdownErrors = map[string]bool{"cudaErrorCudartUnloading": true, "CUDA_ERROR_DEINITIALIZED": true}

// isShutdownError reports whether an API error is one of shutdownErrors,
// by its name or, where the tool gave only its text, by that.
func isShutdownError(e sanitizer.Error) bool {
	return shutdownErrors[e.Error] || e.Error == "" && e.ErrorMessage == "driver shutting down"
}

// isSharedLibrary reports whether module names a shared library (.so,
// .so.N, .dll, .dylib) rather than an executable.
func isSharedLibrary(module string) bool {
	m := strings.ToLower(baseOf(module))
	return strings.HasSuffix(m, ".dll") || strings.HasSuffix(m, ".dylib") || strings.HasSuffix(m, ".so") || strings.Contains(m, ".so.")
}

// toolErrorMessage is the one line a person acts on for a tool error.
func toolErrorMessage(e sanitizer.Error) string {
	times := ""
	if e.Count > 1 {
		times = fmt.Sprintf(" (%d times)", e.Count)
		if e.Thread != "" || len(e.Details) > 0 {
			// Records alike but for their addresses, code offsets and
			// threads (initcheck's reads at 0x150 and 0x290 by threads
			// 0 and 1) are one error: the thread and details shown are
			// one record's.
			times = fmt.Sprintf(" (%d times; the first's thread and details shown)", e.Count)
		}
	}
	if e.Run != "" {
		// Runs are judged apart: the run's name says whose.
		times = " [" + e.Run + "]" + times
	}
	site := frame(e.Frame).String()
	switch {
	case e.Kind == "api" && e.API != "":
		var b strings.Builder
		fmt.Fprintf(&b, "%s failed", e.API)
		if e.Error != "" {
			fmt.Fprintf(&b, " with %s", e.Error)
			if e.ErrorMessage != "" {
				fmt.Fprintf(&b, " (%q)", e.ErrorMessage)
			}
		} else if e.Result != 0 {
			fmt.Fprintf(&b, " with error %d", e.Result)
		}
		if e.Frame != (callsite.Frame{}) {
			fmt.Fprintf(&b, " at %s", site)
		} else if e.NoCaller != "" {
			fmt.Fprintf(&b, ", called from a site not known (%s)", e.NoCaller)
		}
		b.WriteString(times)
		switch {
		case stickyErrors[e.Error]:
			b.WriteString("; this error is left by an earlier kernel fault: fix the first error reported")
		case outOfMemoryErrors[e.Error]:
			b.WriteString("; out of GPU memory: an allocation failed (this call's, or an earlier one whose error this call returns), not a bad argument")
		case isShutdownError(e):
			name := e.Error
			if name == "" {
				name = "driver shutting down"
			}
			fmt.Fprintf(&b, "; the CUDA runtime was already shutting down at process exit: a destructor or exit handler (see the stack) called CUDA after it began to unload, not a bad argument. Release GPU resources before main returns, or, where the call only frees memory the exit releases anyway, suppress it (kind=api message=%q)", name)
		default:
			b.WriteString("; check the call's arguments and its return value")
		}
		return b.String()
	case e.Kernel != "" || e.Function != "":
		var b strings.Builder
		b.WriteString(e.Message)
		switch {
		case e.Kernel == "":
			// The function may be the kernel or a device function it
			// called: NoKernel says why the record does not tell.
			fmt.Fprintf(&b, " in %s, its kernel not named", site)
			if e.NoKernel != "" {
				fmt.Fprintf(&b, " (%s)", e.NoKernel)
			}
		case e.Function != "" && e.Function != e.Kernel:
			fmt.Fprintf(&b, " in device function %s, called from kernel %s", site, e.Kernel)
		default:
			fmt.Fprintf(&b, " in kernel %s", site)
		}
		if e.Thread != "" {
			fmt.Fprintf(&b, ", thread %s block %s", e.Thread, e.Block)
		}
		if len(e.Details) > 0 {
			fmt.Fprintf(&b, "%s%s", detailsSep(e, b.String()), strings.Join(e.Details, " "))
		}
		if e.Launch != (callsite.Frame{}) {
			fmt.Fprintf(&b, "; launched from %s", frame(e.Launch).String())
		} else if e.NoCaller != "" {
			fmt.Fprintf(&b, "; launched from a site not known (%s)", e.NoCaller)
		}
		b.WriteString(times)
		return b.String()
	}
	msg := e.Message
	if e.Frame != (callsite.Frame{}) {
		msg += " at " + site
	} else if e.NoCaller != "" {
		msg += " (site not known: " + e.NoCaller + ")"
	}
	if len(e.Details) > 0 {
		msg += detailsSep(e, msg) + strings.Join(e.Details, " ")
	}
	return msg + times
}

// detailsSep is what joins a tool error's first line to its detail lines:
// ": " before details that say more about it ("Address 0x... is out of
// bounds"), a space before lines that go on with its sentence, as
// racecheck's "and Write access at ..." lines after "Race reported between
// Read access at ..." (ORNL/HeCBench#133) do, or after text so far that
// ends in a colon already (racecheck's hazard, "Potential RAW hazard
// detected at __shared__ 0x8c in block (0,0,0) :").
func detailsSep(e sanitizer.Error, so string) string {
	if strings.HasPrefix(e.Details[0], "and ") || strings.HasSuffix(so, ":") {
		return " "
	}
	return ": "
}
