package sanitizer

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dustin/go-humanize"
	"github.com/ianlancetaylor/demangle"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
)

// Allocator classes of leaked memory, from the allocation API in a leak's
// host backtrace.
const (
	AllocDevice     = "device"      // cudaMalloc, cuMemAlloc, pitched and array allocations
	AllocAsync      = "async"       // stream-ordered: cudaMallocAsync, cudaMallocFromPoolAsync
	AllocPinned     = "pinned"      // page-locked host memory: cudaMallocHost, cudaHostAlloc
	AllocManaged    = "managed"     // unified memory: cudaMallocManaged
	AllocDeviceHeap = "device-heap" // malloc() inside a kernel ("on the device heap")
)

// allocAPIs maps allocation API functions to allocator classes.
var allocAPIs = map[string]string{
	"cudaMalloc": AllocDevice, "cuMemAlloc": AllocDevice, "cuMemAlloc_v2": AllocDevice,
	"cudaMallocPitch": AllocDevice, "cuMemAllocPitch": AllocDevice, "cuMemAllocPitch_v2": AllocDevice,
	"cudaMalloc3D": AllocDevice, "cudaMallocArray": AllocDevice, "cudaMalloc3DArray": AllocDevice,
	"cudaMallocMipmappedArray": AllocDevice, "cuMemCreate": AllocDevice, "cuArrayCreate": AllocDevice,
	"cuArrayCreate_v2": AllocDevice, "cuArray3DCreate": AllocDevice, "cuArray3DCreate_v2": AllocDevice,
	"cudaMallocAsync": AllocAsync, "cudaMallocFromPoolAsync": AllocAsync,
	"cuMemAllocAsync": AllocAsync, "cuMemAllocFromPoolAsync": AllocAsync,
	"cudaMallocHost": AllocPinned, "cudaHostAlloc": AllocPinned, "cuMemAllocHost": AllocPinned,
	"cuMemAllocHost_v2": AllocPinned, "cuMemHostAlloc": AllocPinned,
	"cudaHostRegister": AllocPinned, "cuMemHostRegister": AllocPinned, "cuMemHostRegister_v2": AllocPinned,
	"cudaMallocManaged": AllocManaged, "cuMemAllocManaged": AllocManaged,
}

// DefaultHidden describes the runtime frames hidden from
// compute-sanitizer backtraces, for help text; frames the frame filter
// hides (DefaultHidden) are hidden too.
const DefaultHidden = `the CUDA driver and runtime (libcuda, libcudart, cuda*/cu* API functions,
cuda_runtime.h wrappers, kernel launch stubs), the C library and program start-up
(libc, __libc_start_main, _start, thread start; MSVC's mainCRTStartup,
__scrt_common_main, invoke_main), the Python interpreter (python3,
libpython, Py*/_Py* functions), Cython wrappers (__pyx_*), compute-sanitizer's own
modules (sanitizer-collection, sanitizer-public) and frames without a name (unless
no frame of the program has one: then its own, by module and return address).`

var (
	runtimeFuncRe   = lazyre.New(`^(cuda[A-Z]\w*|cu(Mem|Launch|Ctx|Stream|Event|Module|Graph|Array|Array3D|Tex|Surf|Device|Init|Func|Pointer|Library|Kernel|Get|Ipc|Occupancy|Profiler|Link|Mipmapped|Import|External|Signal|Wait|Driver|Coredump|Multicast|Tensor|Green|Log|Checkpoint|UserObject)\w*|__cuda\w*|__device_stub\w*|libcudart_static_\w+|_cudaGetProcAddress|__libc_start_main|__libc_start_call_main|_start|start_thread|clone3?|__clone3?|BaseThreadInitThunk|RtlUserThreadStart|(w?main|w?WinMain|_?_tmain|_?_tWinMain)CRTStartup|__scrt_common_main(_seh)?|invoke_main|_?Py[A-Z]\w*|__pyx_\w+|__Pyx_\w+)$`)
	runtimeFileRe   = lazyre.New(`(^|[/\\])(cuda_runtime\.h|cuda_runtime_api\.h|crt[/\\][\w.]+\.h|device_functions\.h|[\w.-]+\.cudafe1\.stub\.c)$`)
	runtimeModuleRe = lazyre.New(`(^|[/\\])(libcuda\.so|libcudart\.so|libcudadebugger\.so|libnvidia-[\w-]+\.so|nvcuda\w*\.dll|cudart\w*\.dll|nvcudart\w*\.dll|libc\.so|libc-[\d.]+\.so|libpthread[\w-]*\.so|libdl[\w-]*\.so|ld-linux[\w-]*\.so|libstdc\+\+\.so|libgcc_s\.so|libm\.so|kernel32\.dll|ntdll\.dll|KERNELBASE\.dll|ucrtbase\w*\.dll|vcruntime\w*\.dll|msvcp\w*\.dll|python[\d.]*|python[\d.]*\.exe|libpython[\d.]*\.so|python\d+\.dll|sanitizer-collection\.dll|sanitizer-public\.dll|libsanitizer-collection\.so|libsanitizer-public\.so)[.\d]*$`)
	// Libraries: kept in stacks, but a site is named by the program's own
	// frame when there is one.
	libraryModuleRe = lazyre.New(`(^|[/\\])lib(cublas|cublasLt|cudnn\w*|cufft\w*|curand|cusparse\w*|cusolver\w*|nccl|nvrtc\w*|nvJitLink|cupti|nvToolsExt|cutensor\w*|nvinfer\w*|torch\w*|c10\w*|tensorflow\w*|xla\w*|jax\w*|rmm|cudf)[\w.-]*\.so|\.cpython-[\w.-]*\.so|\.pyd$|[/\\](site|dist)-packages[/\\]`)
)

// HandlePool is the Pool of memory PyTorch's library handles hold.
const HandlePool = "PyTorch's per-device library handle pool (cuBLAS, cuDNN handles and their workspaces)"

// pools are the caching allocators of frameworks: memory they hold at exit
// was freed by the program and kept for reuse, not leaked by it.
var pools = []struct {
	re         *lazyre.Regexp
	name, hint string
}{
	{lazyre.New(`CachingHostAllocator`), "PyTorch's pinned-memory caching allocator (CachingHostAllocator)",
		"torch.cuda.empty_cache() does not release it; it is returned to the driver at exit"},
	// PyTorch creates one cuBLAS/cuBLASLt/cuSOLVER/cuSPARSE/cuDNN/MIOpen
	// handle per device and thread on first use (with its workspace) and
	// keeps it in a pool for the whole process (aten/src/ATen/cuda/CublasHandlePool.cpp,
	// DeviceThreadHandlePool). A program's own cublasCreate never
	// destroyed has none of these callers and stays a leak.
	{lazyre.New(`\bat::cuda::(getCurrentCUDABlas(Lt)?Handle|getCurrentCUDASolverDnHandle|getCurrentCUDASparseHandle|setWorkspaceForHandle|getChosenWorkspaceSize|getCUDABlasLtWorkspace)\b|\bat::native::get(Cudnn|Miopen)Handle\b|\bcreate(CuDNN|Cublas|Cublaslt|Cusparse|Cusolver)Handle\b|DeviceThreadHandlePool`),
		HandlePool,
		"PyTorch creates these handles once per device and thread and keeps them until the process ends; nothing to free in the program"},
	// Only the pool's own allocation path: its per-device allocator
	// (DeviceCachingAllocator::malloc, alloc_block; THCCachingAllocator
	// before PyTorch 2), NativeCachingAllocator::malloc, which calls it,
	// expandable segments, and the cudaMallocAsync backend. With
	// PYTORCH_NO_CUDA_MEMORY_CACHING=1 (which PyTorch advises under
	// cuda-memcheck) NativeCachingAllocator::allocate calls cudaMalloc
	// itself (uncached_allocate) and frees with cudaFree: what is left
	// at exit was never freed, a leak.
	{lazyre.New(`CUDACachingAllocator::.*\b(DeviceCachingAllocator::|THCCachingAllocator::|NativeCachingAllocator::malloc\b|ExpandableSegment::|CudaMallocAsync::)`), "PyTorch's CUDA caching allocator (c10::cuda::CUDACachingAllocator)",
		"call torch.cuda.empty_cache() before exit to release its free blocks; to find tensors still referenced, analyse a memory snapshot (torch.cuda.memory._dump_snapshot) with gpuleak"},
	{lazyre.New(`PinnedMemoryPool`), "CuPy's pinned memory pool (PinnedMemoryPool)",
		"call cupy.get_default_pinned_memory_pool().free_all_blocks() before exit to release it"},
	{lazyre.New(`SingleDeviceMemoryPool`), "CuPy's memory pool (SingleDeviceMemoryPool)",
		"call cupy.get_default_memory_pool().free_all_blocks() before exit to release it"},
	{lazyre.New(`rmm::mr::.*(pool|arena|binning|fixed_size)_memory_resource|rmm::mr::detail::stream_ordered_memory_resource`), "RMM's pool memory resource",
		"release the pool resource before exit"},
	{lazyre.New(`(tensorflow|tsl|xla|stream_executor)::.*BFCAllocator`), "the TensorFlow/XLA BFC allocator",
		"the allocator holds its region until the process ends; set XLA_PYTHON_CLIENT_ALLOCATOR=platform or TF_GPU_ALLOCATOR=cuda_malloc_async to check for real leaks"},
	{lazyre.New(`CachingDeviceAllocator`), "CUB's CachingDeviceAllocator",
		"call FreeAllCached() before exit to release it"},
	{lazyre.New(`mxnet::storage::.*Pooled`), "MXNet's pooled storage manager",
		"the pool holds memory until the process ends"},
}

// Options tune the analysis of a compute-sanitizer report. The
// zero value is usable.
type Options struct {
	// Filter hides framework frames in addition to the runtime frames
	// (DefaultHidden); its keep patterns keep frames from both.
	// Nil means DefaultFrameFilter().
	Filter *callsite.FrameFilter
	// Suppressions leave matching records out of the result; each
	// rule's matches are counted.
	Suppressions []Suppression
}

// Suppression leaves out the records it matches. Every field that is set
// must match: Kind equals the record's kind ("leak", "retained", or an
// error kind such as "api"); Function, Module and File match some frame of
// the record (function names demangled, in full and short); Message
// matches the record's first line; Allocator equals its allocator class.
type Suppression struct {
	// Name labels the rule in counts: its name= field, else "FILE:LINE".
	Name      string
	Kind      string
	Allocator string
	Function  *regexp.Regexp
	Module    *regexp.Regexp
	File      *regexp.Regexp
	Message   *regexp.Regexp
}

// SuppressionsHelp documents the suppressions file, for help text.
const SuppressionsHelp = `One rule per line; blank lines and lines starting with # are ignored. A rule is
space-separated key=value fields, all of which must match a record for it to be
left out: kind=leak|retained|api|memory-access|race|... (the finding or error
kind), function=REGEXP (some frame's function, demangled), module=REGEXP (some
frame's shared object or executable), file=REGEXP (some frame's source file),
message=REGEXP (the record's first line), allocator=device|async|pinned|managed|device-heap,
and name=LABEL to name the rule in counts. Put a value with spaces in double quotes
(\" for a quote; other backslashes are kept for the regexp). Example:
  kind=leak module=libcublas function=^cublasCreate name=cublas-handle`

// suppressibleKinds are the finding and error kinds a rule may name.
var suppressibleKinds = map[string]bool{
	"leak": true, "retained": true, "api": true, "memory-access": true, "race": true,
	"malloc-free": true, "uninitialized": true, "unused-memory": true, "sync": true,
	"hardware-exception": true, "other": true,
}

// ParseSuppressions parses a suppressions file (SuppressionsHelp). name
// names it in errors and in rule labels. Errors name the line at fault.

func ParseSuppressions(name string, data []byte) ([]Suppression, error) {
	var out []Suppression
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields, err := splitFields(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		s := Suppression{Name: fmt.Sprintf("%s:%d", name, i+1)}
		seen := map[string]bool{}
		for _, f := range fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("%s:%d: %q is not key=value", name, i+1, f)
			}
			if seen[k] {
				return nil, fmt.Errorf("%s:%d: %q given twice in one rule (a rule's fields must all match; write two rules for either)", name, i+1, k)
			}
			seen[k] = true
			var re **regexp.Regexp
			switch k {
			case "name":
				s.Name = v
			case "kind":
				if !suppressibleKinds[v] {
					return nil, fmt.Errorf("%s:%d: unknown kind %q (%s)", name, i+1, v, strings.Join(slices.Sorted(maps.Keys(suppressibleKinds)), ", "))
				}
				s.Kind = v
			case "allocator":
				switch v {
				case AllocDevice, AllocAsync, AllocPinned, AllocManaged, AllocDeviceHeap:
				default:
					return nil, fmt.Errorf("%s:%d: unknown allocator %q (device, async, pinned, managed, device-heap)", name, i+1, v)
				}
				s.Allocator = v
			case "function":
				re = &s.Function
			case "module":
				re = &s.Module
			case "file":
				re = &s.File
			case "message":
				re = &s.Message
			default:
				return nil, fmt.Errorf("%s:%d: unknown key %q (kind, function, module, file, message, allocator, name)", name, i+1, k)
			}
			if re != nil {
				c, err := regexp.Compile(v)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: bad %s pattern: %w", name, i+1, k, err)
				}
				*re = c
			}
		}
		if s.Kind == "" && s.Allocator == "" && s.Function == nil && s.Module == nil && s.File == nil && s.Message == nil {
			return nil, fmt.Errorf("%s:%d: a rule needs at least one of kind, function, module, file, message, allocator", name, i+1)
		}
		out = append(out, s)
	}
	return out, nil
}

// splitFields splits a rule line at spaces, keeping "quoted values" whole.
func splitFields(line string) ([]string, error) {
	var out []string
	for line != "" {
		line = strings.TrimLeft(line, " \t")
		if line == "" {
			break
		}
		end := strings.IndexAny(line, " \t")
		if q := strings.IndexByte(line, '"'); q >= 0 && (end < 0 || q < end) {
			// A quoted value runs to the next unescaped quote; \" is a
			// quote, other backslashes stay (they are regexp escapes).
			var v strings.Builder
			i := q + 1
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && line[i+1] == '"' {
					i++
				}
				v.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unterminated quoted value in %q", line)
			}
			out = append(out, line[:q]+v.String())
			line = line[i+1:]
			continue
		}
		if end < 0 {
			end = len(line)
		}
		out = append(out, line[:end])
		line = line[end:]
	}
	return out, nil
}

// Result is the outcome of the analysis of one compute-sanitizer
// report. Sizes are bytes.
type Result struct {
	// Sites hold leaked memory by call site: kind Leak (the program never
	// freed it) or Retained (a framework's caching allocator held it at
	// exit). Ranked leaks first, then by bytes, largest first.
	Sites []Site
	// Errors are the records that are not leaks, grouped by kind, message
	// and place, in order of first appearance.
	Errors []Error
	// Runs are the sanitizer runs in the report, with their summaries.
	Runs []Run
	// Leaks and LeakBytes count the leak records read (retained included,
	// suppressed ones too); Records counts all records but the tool's own
	// notices (sanitizer.KindNotice), which ERROR SUMMARY does not count.
	Leaks     int
	LeakBytes int64
	Records   int
	// Suppressed counts what each suppression rule left out, in rule order
	// (rules that matched nothing are omitted).
	Suppressed []SuppressedCount
	Warnings   []string
	// ToolFailure is the first notice in which the tool reports its own
	// failure ("Internal Memcheck Error: Initialization failed", "Internal
	// error (7)", "No CUDA-MEMCHECK results found", ...), ToolFailureLine
	// its line (0 when unknown); empty when the tool did not fail. A run
	// whose tool failed checked nothing after the failure: no records
	// does not mean a clean run.
	ToolFailure     string
	ToolFailureLine int64
}

// toolFailureRe matches the first line of a notice (or, in XML, a record)
// in which compute-sanitizer or cuda-memcheck reports that it could not
// check.
var toolFailureRe = lazyre.New(`^(Internal (Memcheck |Sanitizer |Racecheck |Initcheck |Synccheck )?[Ee]rror\b|No (CUDA-MEMCHECK|COMPUTE-SANITIZER|compute-sanitizer) results found|Error: (No attachable process|Target application terminated before|Device not supported|Unable to|Failed to|Could not)|(Error: )?--xml was enabled but no save location was specified)`)

// Site is leaked memory from one call site, one allocator class.
type Site struct {
	Kind      callsite.Kind // Leak or Retained
	Allocator string        // AllocDevice, AllocAsync, ...; "" when the record has no stack
	// API is the allocation function of the first leak read at the site
	// (cudaMalloc, cuMemAlloc_v2, cudaMallocArray, ...: allocAPIs' names);
	// "" when its backtrace holds none.
	API string
	// Pool names the caching allocator holding Retained memory; Hint says
	// how to release it, or, for a Leak a framework made for the program
	// (PyTorch's tensors with its pool off), what the program must do.
	Pool, Hint string
	Bytes      int64
	Count      int
	// Stack is the backtrace with runtime and framework frames hidden,
	// innermost first (native frames, then Python frames); empty without
	// a backtrace.
	Stack []callsite.Frame
	// Frame is the innermost user frame (zero without a backtrace).
	Frame callsite.Frame
	// Sizes are the distinct allocation sizes, largest first (at most 8).
	Sizes []int64
	// Processes counts the distinct (run, process) pairs that leaked here:
	// leak reports, each of a process or of a cudaDeviceReset in one (see
	// parse/sanitizer's process column).
	Processes int
	// Unknown says why the site is not known when the records do not name
	// one: a LEAK SUMMARY counting leaks whose records are not in the log,
	// a backtrace cut after the runtime's frames. Empty otherwise.
	Unknown string
	// Name is the NVTX name the program gave the allocations
	// (nvtxMemRegionsName, shown with compute-sanitizer --nvtx yes:
	// "Leaked 1 bytes at 0x... called My allocation"); "" when none.
	Name string
	// NoLineInfo: the site frame has a function and return address but no
	// source file (built without -lineinfo or -g); sites at other
	// addresses of the same function are kept apart.
	NoLineInfo bool
	// NoSymbols: the program's own frames have no function names, only
	// their module and return address ("./leak [0x3113]": linked without
	// -rdynamic). The site is the innermost of them, which in a program
	// linked with the static CUDA runtime may be the runtime's code; when
	// several such sites share it, each is named by the first frame where
	// its stack parts from theirs.
	NoSymbols bool
}

// Error is a group of non-leak records: one kind, message and place.
type Error struct {
	Kind    string // sanitizer.Kind*: api, memory-access, race, ...
	Message string // the first record's first line
	// API, Error, Result and ErrorMessage describe an API error
	// (cudaFree, cudaErrorLaunchFailure, 719, "unspecified launch failure").
	API, Error   string
	Result       int64
	ErrorMessage string
	// Function is the device function of the faulting instruction (short
	// name): the function of the record's "at" line (XML: <where><func>);
	// "" for host-side errors.
	Function string
	// Kernel is the __global__ function whose launch faulted (short
	// name): the outermost of the record's device frames, as
	// compute-sanitizer lists the device backtrace from the faulting
	// function to the kernel ("at CycleTrackingGuts(...)" then "Device
	// Frame:CycleTrackingKernel(...)": the kernel is CycleTrackingKernel).
	// A record whose only device frame is its "at" line names its kernel
	// there (Kernel == Function) when it has its host backtrace too, since
	// the device backtrace comes before it; a record without any backtrace
	// (a log cut inside the record, --show-backtrace no) or with lines left
	// out of its paste does not show whether that function is the kernel
	// or one it called, nor does an outermost frame that is a member
	// function (which a __global__ function cannot be): Kernel is then "",
	// and NoKernel says why. "" for host-side errors.
	Kernel string
	// NoKernel says why Kernel is "" for a device-side error; "" otherwise.
	NoKernel string
	// Run names the tool's run the records are of ("run 2 (line 14)")
	// when the log holds several; "" otherwise. Records of two runs are
	// two errors.
	Run string
	run int32
	// Frame is where it happened: the device frame of a device-side
	// error, else the innermost user host frame; Stack is the device
	// frames then the visible host frames.
	Frame callsite.Frame
	Stack []callsite.Frame
	// Launch is the innermost user host frame (the kernel launch of a
	// device-side error); zero when none.
	Launch callsite.Frame
	// NoCaller says why a record with a host backtrace names no frame of
	// the program's (Launch zero): its host frames are the CUDA runtime's,
	// the driver's, the C library's or a wrapper's only, counted, the
	// outermost named ("1 frame: cudaMemcpy in libcudart.so.12"). "" when
	// Launch is known or the record has no host backtrace.
	NoCaller string
	// Details are the first record's other detail lines.
	Details       []string
	Thread, Block string
	Count         int
}

// Run is one run of the tool and what its summaries say.
type Run struct {
	Tool string // "compute-sanitizer", "cuda-memcheck", "" without a banner
	Line int64  // the banner's line, 0 without one
	// StartLine is the run's first line of the tool's: its banner, or
	// without one its first record or summary; 0 when not known (XML).
	StartLine int64
	Processes int
	Records   int
	// Leaks and LeakBytes count the leak records read.
	Leaks     int
	LeakBytes int64
	// HasLeakSummary: SummaryBytes and SummaryAllocations hold LEAK SUMMARY.
	HasLeakSummary                   bool
	SummaryBytes, SummaryAllocations int64
	// HasErrorSummary: SummaryErrors holds ERROR SUMMARY, or with
	// RaceSummary racecheck's RACECHECK SUMMARY ("N hazards displayed"),
	// which it prints instead.
	HasErrorSummary bool
	RaceSummary     bool
	SummaryErrors   int64
	NotPrinted      int64
	TargetError     bool
	// Failure is the first notice of the tool's own failure in the run
	// ("No CUDA-MEMCHECK results found"), FailureLine its line; Terminated
	// the tool's notice that the target did not end normally ("Error:
	// process didn't terminate successfully"), TerminatedLine its line and
	// TerminatedWhy the reason the tool gave with it, if any. Empty when
	// the run has none.
	Failure, Terminated, TerminatedWhy string
	FailureLine, TerminatedLine        int64
	// Agrees is true when the summaries match the records read (leaks and
	// errors, counting those not printed); false when they do not or are
	// missing.
	Agrees bool
}

// SuppressedCount is what one suppression rule left out.
type SuppressedCount struct {
	Rule    string
	Records int
	Bytes   int64 // leaked bytes of suppressed leak records
}

// Analyzer groups the records of a compute-sanitizer report as they
// arrive. Feed it every record batch of a sanitizer.Reader with Add, in
// the Reader's order, then call Finalize once.
//
// Its memory grows with what the report holds distinct (sites, error
// groups, frame texts, runs), not with its records: a record is folded
// into its site's or error group's totals as soon as its frames are in,
// and only the records batch read last is kept (retained) until then.
// So the order of the batches matters, as the Reader gives it: record ids
// increase from batch to batch, (run, process) never decreases, and a
// record's frames come after its records batch and before the next one.
// Add returns an error for batches out of that order.
type Analyzer struct {
	opt  Options
	runs []Run
	// lastID is the largest record id taken (notices too): the log's
	// last record, by which a record is known not to end the log.
	lastID int32
	names  callsite.Interner // every string kept from a batch, copied out of its buffers
	// facts holds one frameFacts per distinct frame text: a log of 100k
	// leak records has a few dozen distinct frames, each worked out once.
	facts map[frameKey]*frameFacts
	// prevFacts are the facts of the frames of the last record read, by
	// their place in it (the first maxPrevFacts).
	prevFacts []*frameFacts
	// kernels holds the short name of each distinct name of a faulting
	// device function (the records table's "kernel" column).
	kernels map[string]string

	// pending is the records batch whose records wait for their frames
	// (retained; nil when none), frames the frames read since (reused
	// from batch to batch).
	pending arrow.RecordBatch
	frames  []idFrame
	// nextID is the lowest record id a records batch may bring; lastProc
	// the (run, process) of the last record taken.
	nextID   int32
	lastProc [2]int32

	// What the records folded so far add up to.
	res        Result // Records, Leaks, LeakBytes, ToolFailure
	suppressed []SuppressedCount
	sites      map[string]*siteAcc
	siteOrder  []*siteAcc
	errs       map[string]*Error
	errOrder   []*Error
	perRun     map[int32]*runCount
	noStack    int
	key, sig   []byte // scratch for building keys
	// leakMemo holds the site facts of recent leak records by their
	// frames (leakFactsOf); at most maxLeakMemo entries.
	leakMemo map[string]*leakFacts
}

// maxPrevFacts bounds Analyzer.prevFacts: deeper frames are looked up
// by their text only.
const maxPrevFacts = 256

// idFrame is a frame of the record with id id.
type idFrame struct {
	btFrame
	id int32
}

// runCount is what the records of one run add up to, and what its notices
// said (see Run).
type runCount struct {
	records, leaks int
	bytes          int64

	failure, terminated, terminatedWhy string
	failureLine, terminatedLine        int64
}

// frameKey is a frame as the frames table gives it, without its pc.
type frameKey struct {
	kind, function, file, module string
	line                         int64
}

// record is one row of a records batch. Its strings view the batch's
// buffers: valid only while the batch is, and copied (interned) by whatever
// keeps them.
type record struct {
	id, run, process int32
	kind             string
	size             int64
	memoryType       string
	message          string
	api, err, errMsg string
	result           int64
	kernel           string
	thread, block    string
	details          string
	line             int64 // 1-based line of a text report; 0 when unknown
	// saved: the record says its host backtrace was saved ("Saved host
	// backtrace up to driver entry point", XML's <saveLocation>).
	saved bool
	// saveLoc is the save location as written ("allocation time",
	// "hggcMalloc time"); "" without one.
	saveLoc string
	// cut: the input ends inside the record's last frame or line, which
	// the reader left out: its backtrace is not whole.
	cut bool
	// name is the allocation's NVTX name ("called My allocation"); "".
	name string
}

// btFrame is a frame of a backtrace with its names worked out: the facts
// shared by every frame of the same text, and its own return address.
type btFrame struct {
	*frameFacts
	pc uint64
}

// frameFacts is what a frame's text says, worked out once per distinct
// frame (the regular expressions that class a frame cost far more than
// reading it).
type frameFacts struct {
	kind    string
	full    string // demangled, as printed otherwise
	short   string // without return type, parameters and clone suffixes
	base    string // short without namespace and template arguments
	file    string
	module  string
	line    int64
	isRT    bool // runtime()
	library bool // isLibraryFrame
	pool    int  // the index in pools of the caching allocator named by full, or -1
	// vis is visible's answer under the analyzer's options: 0 not yet
	// known, 1 visible, 2 hidden.
	vis int8
	// id numbers the distinct frames in the order met; key is the
	// frame's text, interned.
	id  uint32
	key frameKey
}

// NewAnalyzer returns an analyzer with options opt.
func NewAnalyzer(opt Options) *Analyzer {
	if opt.Filter == nil {
		opt.Filter = callsite.DefaultFrameFilter()
	}
	return &Analyzer{
		opt: opt, names: callsite.Interner{}, facts: map[frameKey]*frameFacts{}, kernels: map[string]string{},
		suppressed: make([]SuppressedCount, len(opt.Suppressions)),
		sites:      map[string]*siteAcc{}, errs: map[string]*Error{}, perRun: map[int32]*runCount{},
	}
}

// Add takes one record batch of table t. Errors name a batch whose schema
// is not the table's, or which comes out of the Reader's order (see
// Analyzer).
func (a *Analyzer) Add(t sanitizer.Table, rec arrow.RecordBatch) error {
	if want := t.Schema(); want == nil || !rec.Schema().Equal(want) {
		return fmt.Errorf("sanitizer analysis: batch does not have the %s schema", t)
	}
	switch t {
	case sanitizer.TableRecords:
		return a.addRecords(rec)
	case sanitizer.TableFrames:
		return a.addFrames(rec)
	case sanitizer.TableRuns:
		a.addRuns(rec)
	}
	return nil
}

// view reads a utf8 or dictionary<utf8> cell as a string that views the
// batch's buffer: valid only while the batch is; "" for null.
func view(col arrow.Array, i int) string {
	switch c := col.(type) {
	case *array.String:
		if c.IsNull(i) {
			return ""
		}
		return c.Value(i)
	case *array.Dictionary:
		if c.IsNull(i) {
			return ""
		}
		return c.Dictionary().(*array.String).Value(c.GetValueIndex(i))
	}
	return ""
}

// str reads a utf8 or dictionary<utf8> cell, as a copy that outlives the
// batch; "" for null.
func (a *Analyzer) str(col arrow.Array, i int) string {
	return a.names.Get(view(col, i))
}

// int64At reads an int64 cell; 0 for null.
func int64At(col arrow.Array, i int) int64 {
	c := col.(*array.Int64)
	if c.IsNull(i) {
		return 0
	}
	return c.Value(i)
}

func boolAt(col arrow.Array, i int) bool {
	c := col.(*array.Boolean)
	return !c.IsNull(i) && c.Value(i)
}

// addRecords folds the records waiting for their frames (every frame of
// theirs has come by now) and keeps rec's until its frames come.
func (a *Analyzer) addRecords(rec arrow.RecordBatch) error {
	ids := rec.Column(sanitizer.RecRecord).(*array.Int32)
	runs := rec.Column(sanitizer.RecRun).(*array.Int32)
	procs := rec.Column(sanitizer.RecProcess).(*array.Int32)
	next, last := a.nextID, a.lastProc
	for i := 0; i < int(rec.NumRows()); i++ {
		id := ids.Value(i)
		if id < next {
			a.dropPending()
			return fmt.Errorf("sanitizer analysis: record %d comes after record %d: record ids must increase, as sanitizer.Reader writes them", id, next-1)
		}
		p := [2]int32{runs.Value(i), procs.Value(i)}
		if p[0] < last[0] || (p[0] == last[0] && p[1] < last[1]) {
			a.dropPending()
			return fmt.Errorf("sanitizer analysis: record %d of run %d, process %d comes after run %d, process %d: runs and processes must not go back, as in sanitizer.Reader's order", id, p[0], p[1], last[0], last[1])
		}
		next, last = id+1, p
	}
	a.fold()
	if rec.NumRows() == 0 {
		return nil
	}
	a.nextID, a.lastProc = next, last
	rec.Retain()
	a.pending = rec
	return nil
}

// addFrames works out the frames of rec (once per distinct frame text)
// and keeps them for their records, which must be those of the records
// batch read last.
func (a *Analyzer) addFrames(rec arrow.RecordBatch) error {
	cols := rec.Columns()
	ids := cols[sanitizer.FrRecord].(*array.Int32)
	pcs := cols[sanitizer.FrPC].(*array.Uint64)
	lo, hi := int32(0), int32(-1)
	prevID, pos := int32(-1), 0
	if a.pending != nil {
		pids := a.pending.Column(sanitizer.RecRecord).(*array.Int32)
		lo, hi = pids.Value(0), pids.Value(pids.Len()-1)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		id := ids.Value(i)
		if id < lo || id > hi {
			a.dropPending()
			return fmt.Errorf("sanitizer analysis: a frame of record %d does not follow the records batch of its record, as in sanitizer.Reader's order", id)
		}
		if id != prevID {
			prevID, pos = id, 0
		}
		// The key views the batch's buffers; it is copied (interned) only
		// for a frame not seen before. The records of one site repeat one
		// backtrace: the frame at the same place in the record before is
		// most often this one, and comparing costs less than hashing.
		k := frameKey{view(cols[sanitizer.FrKind], i), view(cols[sanitizer.FrFunction], i),
			view(cols[sanitizer.FrFile], i), view(cols[sanitizer.FrModule], i), int64At(cols[sanitizer.FrLine], i)}
		var facts *frameFacts
		if pos < len(a.prevFacts) && a.prevFacts[pos].key == k {
			facts = a.prevFacts[pos]
		} else if facts = a.facts[k]; facts == nil {
			k = frameKey{a.names.Get(k.kind), a.names.Get(k.function), a.names.Get(k.file), a.names.Get(k.module), k.line}
			facts = newFrameFacts(k.kind, k.function, k.file, k.module, k.line)
			facts.id, facts.key = uint32(len(a.facts)), k
			a.facts[k] = facts
		}
		if pos < len(a.prevFacts) {
			a.prevFacts[pos] = facts
		} else if pos < maxPrevFacts {
			a.prevFacts = append(a.prevFacts, facts)
		}
		pos++
		f := idFrame{btFrame: btFrame{frameFacts: facts}, id: id}
		if !pcs.IsNull(i) {
			f.pc = pcs.Value(i)
		}
		a.frames = append(a.frames, f)
	}
	return nil
}

func (a *Analyzer) addRuns(rec arrow.RecordBatch) {
	cols := rec.Columns()
	for i := 0; i < int(rec.NumRows()); i++ {
		var r Run
		r.Tool = a.str(cols[sanitizer.RunTool], i)
		r.Line = int64At(cols[sanitizer.RunLine], i)
		r.Processes = int(cols[sanitizer.RunProcesses].(*array.Int32).Value(i))
		r.HasLeakSummary = !cols[sanitizer.RunLeakBytes].IsNull(i)
		r.SummaryBytes = int64At(cols[sanitizer.RunLeakBytes], i)
		r.SummaryAllocations = int64At(cols[sanitizer.RunLeakAllocations], i)
		r.HasErrorSummary = !cols[sanitizer.RunErrors].IsNull(i)
		r.SummaryErrors = int64At(cols[sanitizer.RunErrors], i)
		r.NotPrinted = int64At(cols[sanitizer.RunErrorsNotPrinted], i)
		r.TargetError = cols[sanitizer.RunTargetError].(*array.Boolean).Value(i)
		if len(cols) > sanitizer.RunStartLine {
			r.StartLine = int64At(cols[sanitizer.RunStartLine], i)
		}
		if len(cols) > sanitizer.RunErrorsFromRacecheck {
			r.RaceSummary = boolAt(cols[sanitizer.RunErrorsFromRacecheck], i)
		}
		a.runs = append(a.runs, r)
	}
}

// fileLineFuncRe is the frame layout "file:line:function" that
// compute-sanitizer prints for code with line information in some builds
// (CUDA.jl's libjulia frames, Cython modules): "/src/interpreter.c:127:do_call".
var fileLineFuncRe = lazyre.New(`^(.*[^:\s]\.[A-Za-z][\w+]{0,7}):(\d{1,9}):([^:\s].*)$`)

// newFrameFacts works out the names and classes of a frame.
func newFrameFacts(kind, function, file, module string, line int64) *frameFacts {
	f := newBtFrameNames(kind, function, file, module, line)
	f.isRT = f.classRuntime()
	f.library = libraryModuleRe.MatchString(f.module) || libraryModuleRe.MatchString(f.file) || callsite.IsLibrary(callsite.Frame{Filename: f.file})
	f.pool = -1
	if f.kind != sanitizer.FramePython {
		for i, p := range pools {
			if p.re.MatchString(f.full) {
				f.pool = i
				break
			}
		}
		// An unsymbolised frame of PyTorch's libc10_cuda calling the CUDA
		// runtime is its caching allocator's: the library's device memory
		// comes from CUDACachingAllocator (cudaMallocAsync's allocator
		// calls cudaMallocAsync, which another Pool does not claim).
		if f.pool < 0 && f.full == "" && c10CUDAModule.MatchString(f.module+" "+f.file) {
			f.pool = cachingAllocatorPool
		}
	}
	return f
}

// uncachedTorchRe matches a frame of PyTorch's CUDA allocator outside its
// pool's allocation path (which pools claims first): with
// PYTORCH_NO_CUDA_MEMORY_CACHING=1, NativeCachingAllocator::allocate calls
// cudaMalloc itself (uncached_allocate) and the tensor's deleter calls
// cudaFree when its last reference goes.
var uncachedTorchRe = lazyre.New(`\bc10::cuda::CUDACachingAllocator::`)

// uncachedTorchHint is what to do about a leak PyTorch allocated without
// its pool: the program never calls cudaFree on a tensor, it drops it.
const uncachedTorchHint = "these are PyTorch tensors allocated with the caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), which PyTorch frees with cudaFree when their last reference goes: drop what still references them at exit (a list, dict, cache or attribute never cleared, or a tensor kept with its graph: store loss.item() or .detach())"

// uncachedTorch reports whether a leak's backtrace went through PyTorch's
// CUDA allocator without its pool (poolOf found none).
func uncachedTorch(frames []btFrame) bool {
	for _, f := range frames {
		if f.kind != sanitizer.FramePython && uncachedTorchRe.MatchString(f.full) {
			return true
		}
	}
	return false
}

// c10CUDAModule matches the file of PyTorch's c10 CUDA library on Linux
// and Windows (libc10_cuda.so, c10_cuda.dll).
var c10CUDAModule = lazyre.New(`(^|[/\\])(lib)?c10_cuda\.(so|dll)\b`)

// cachingAllocatorPool is the index in pools of PyTorch's CUDA caching
// allocator.
var cachingAllocatorPool = func() int {
	for i, p := range pools {
		if strings.Contains(p.name, "CUDACachingAllocator") {
			return i
		}
	}
	panic("pools: no CUDACachingAllocator")
}()

func newBtFrameNames(kind, function, file, module string, line int64) *frameFacts {
	if kind != sanitizer.FramePython && file == "" && line == 0 {
		if m := fileLineFuncRe.FindStringSubmatch(function); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			file, line, function = m[1], n, m[3]
		}
	}
	f := &frameFacts{kind: kind, file: file, module: module, line: line, full: function}
	if kind == sanitizer.FramePython {
		f.short, f.base = function, function
		return f
	}
	if strings.HasPrefix(function, "_Z") || strings.HasPrefix(function, "__Z") {
		f.full = demangle.Filter(function)
	}
	f.short = callsite.ShortName(f.full)
	f.base = baseName(f.short)
	return f
}

// runtimeBase reports whether a frame is the CUDA runtime's by its base
// name: a template of the runtime API ("cudaMalloc<float>") or a function
// of the static runtime's own namespace ("cudart::cudaApiMalloc"). A
// member of the program's own class or namespace is the program's, though
// its name starts as the API's do: kotekan's constructor
// "cudaInputData::cudaInputData" (a site lost from an API error's stack).
func runtimeBase(short, base string) bool {
	if !runtimeFuncRe.MatchString(base) {
		return false
	}
	// Only a name spelled as the API's ("cuda..." and "cu..." alike)
	// can be the program's own member: the names the toolchain makes
	// ("__device_stub__...", which nvcc puts in the kernel's own
	// namespace, "__cuda...", "libcudart_static_...") are the runtime's
	// in any namespace.
	if strings.HasPrefix(base, "__") || strings.HasPrefix(base, "libcudart_static_") {
		return true
	}
	q := short
	if i := strings.IndexByte(q, '<'); i > 0 {
		q = q[:i]
	}
	return !strings.Contains(q, "::") || strings.HasPrefix(q, "cudart::")
}

// baseName drops namespaces and template arguments: "ns::f<int>" -> "f".
func baseName(short string) string {
	if i := strings.IndexByte(short, '<'); i > 0 {
		short = short[:i]
	}
	if i := strings.LastIndex(short, "::"); i >= 0 {
		short = short[i+2:]
	}
	return short
}

// frame is the Frame shown for f: its short function name, its source file
// (or module when the file is unknown) and line.
func (f btFrame) frame() callsite.Frame {
	file := f.file
	if file == "" {
		file = f.module
	}
	name := f.short
	if name == "" && f.pc != 0 {
		name = fmt.Sprintf("0x%x", f.pc)
	} else if f.noLineInfo() {
		// Without debug info the return address is all that tells two call
		// sites in one function apart.
		name = fmt.Sprintf("%s@0x%x", name, f.pc)
	}
	return callsite.Frame{Filename: file, Line: f.line, Name: name}
}

// noLineInfo reports whether f is a native frame of the program itself
// (not the runtime's, not a library's) with a name and return address
// but no source file or line.
func (f btFrame) noLineInfo() bool {
	return f.kind == sanitizer.FrameHost && f.short != "" && f.pc != 0 && f.file == "" && f.line == 0 &&
		!f.runtime() && !isLibraryFrame(f)
}

// unsymbolized reports whether f is a native frame of the program's own
// without a symbol: a return address in a module that is not the CUDA
// runtime's or driver's, the C library's, the interpreter's, the tool's
// or a known library's.
func (f btFrame) unsymbolized() bool {
	return f.kind == sanitizer.FrameHost && f.short == "" && f.pc != 0 && f.module != "" && !f.runtime() && !isLibraryFrame(f)
}

// runtime reports whether f is a frame of the CUDA driver or runtime, the C
// library, the Python interpreter or a Cython wrapper.
func (f btFrame) runtime() bool { return f.isRT }

func (f *frameFacts) classRuntime() bool {
	if f.kind == sanitizer.FramePython {
		return false
	}
	return runtimeFuncRe.MatchString(f.short) || runtimeBase(f.short, f.base) ||
		(f.file != "" && runtimeFileRe.MatchString(f.file)) ||
		(f.module != "" && runtimeModuleRe.MatchString(f.module))
}

func (a *Analyzer) kept(f btFrame) bool {
	k := a.opt.Filter
	return k.Keeps(f.file) || k.Keeps(f.full) || k.Keeps(f.short) || (f.module != "" && k.Keeps(f.module))
}

// visible reports whether f is shown in a site's stack.
func (a *Analyzer) visible(f btFrame) bool {
	if f.vis == 0 {
		f.vis = 2
		if a.classVisible(f) {
			f.vis = 1
		}
	}
	return f.vis == 1
}

func (a *Analyzer) classVisible(f btFrame) bool {
	if a.kept(f) {
		return true
	}
	if f.short == "" || f.runtime() {
		return false
	}
	return !a.opt.Filter.Hidden(callsite.Frame{Filename: f.file, Line: f.line, Name: f.full}) &&
		!a.opt.Filter.Hidden(callsite.Frame{Filename: f.file, Line: f.line, Name: f.short})
}

func isLibraryFrame(f btFrame) bool { return f.library }

// stackOf works out the visible stack of a record's frames of one kind
// group and its site frame.
func (a *Analyzer) stackOf(frames []btFrame) (stack []callsite.Frame, site callsite.Frame, ok bool) {
	var native, python, pyVisible []btFrame
	for _, f := range frames {
		switch f.kind {
		case sanitizer.FrameHost:
			native = append(native, f)
		case sanitizer.FramePython:
			python = append(python, f)
		}
	}
	var vis []btFrame
	for _, f := range native {
		if a.visible(f) {
			vis = append(vis, f)
		}
	}
	for _, f := range python {
		if a.visible(f) {
			vis = append(vis, f)
			pyVisible = append(pyVisible, f)
		}
	}
	var siteF *btFrame
	switch {
	case len(python) > 0:
		// A Python program: its site is a Python frame. With paths
		// stripped (the default --strip-paths), the entry script is known
		// only as the file of the outermost frame.
		entry := python[len(python)-1].file
		stripped := !strings.ContainsAny(entry, "/\\")
		for i := range pyVisible {
			f := &pyVisible[i]
			if isLibraryFrame(*f) || (stripped && f.file != entry) {
				continue
			}
			siteF = f
			break
		}
		if siteF == nil && len(pyVisible) > 0 {
			siteF = &pyVisible[0]
		}
		if siteF == nil {
			siteF = &python[len(python)-1]
		}
	default:
		for i := range vis {
			if !isLibraryFrame(vis[i]) {
				siteF = &vis[i]
				break
			}
		}
		if siteF == nil {
			// No named frame of the program's: its frames may be there
			// without symbols (a binary linked without -rdynamic:
			// "Host Frame:./leak [0x3113]"), even below a library's
			// named frame ("cublasCreate_v2" called from
			// "./server [0x199ee2]"). They are the program's: the site
			// is the innermost of them, and the stack keeps them, in
			// their place among the visible frames, with their return
			// addresses, so that two call sites stay two.
			site, n := -1, 0
			for _, f := range native {
				switch {
				case f.unsymbolized():
					if site < 0 {
						site = n
					}
				case !a.visible(f):
					continue
				}
				stack = append(stack, f.frame())
				n++
			}
			if site >= 0 {
				return stack, stack[site], true
			}
			stack = stack[:0]
			if len(vis) > 0 {
				siteF = &vis[0]
			}
		}
		if siteF == nil {
			// Only runtime and framework frames: name the site by the
			// innermost framework frame that is not allocator machinery.
			var fw []callsite.Frame
			for _, f := range native {
				// An interpreter's dispatch (Julia's jl_apply_generic,
				// CPython's _PyEval_*) calls whatever the program's
				// code is: never its site.
				if fr := f.frame(); f.short != "" && !f.runtime() && callsite.ClassOf(callsite.Frame{Name: f.short, Filename: f.file}) != callsite.Interpreter {
					fw = append(fw, fr)
				}
			}
			if fw = callsite.FrameworkSite(fw); len(fw) > 0 {
				return fw, fw[0], true
			}
			// Only the runtime's, the driver's and the C library's frames:
			// no site to name (see cutBacktrace).
			return nil, callsite.Frame{}, false
		}
	}
	for _, f := range vis {
		stack = append(stack, f.frame())
	}
	if siteF == nil {
		return stack, callsite.Frame{}, len(stack) > 0
	}
	if len(stack) == 0 {
		stack = []callsite.Frame{siteF.frame()}
	}
	return stack, siteF.frame(), true
}

// allocatorOf is the allocator class of a leak: the innermost allocation
// API in its backtrace.
func allocatorOf(r *record, frames []btFrame) string {
	if r.memoryType == "device heap" {
		return AllocDeviceHeap
	}
	for _, f := range frames {
		if f.kind != sanitizer.FrameHost {
			continue
		}
		if c, ok := allocAPIs[f.base]; ok {
			return c
		}
	}
	return ""
}

// savedAtAPI returns the allocation API a leak record's save location
// names ("Saved host backtrace up to driver entry point at hggcMalloc
// time": Alibaba HGGC's memcheck, which writes compute-sanitizer's layout
// for its own API) when a host frame of the backtrace is that function,
// and the frame's index; "", -1 otherwise. NVIDIA's tools write
// "allocation time", which names none.
func savedAtAPI(loc string, frames []btFrame) (string, int) {
	fn, ok := strings.CutSuffix(loc, " time")
	if !ok || fn == "" || strings.ContainsAny(fn, " \t") {
		return "", -1
	}
	at := -1
	for i, f := range frames {
		if f.kind == sanitizer.FrameHost && f.base == fn {
			at = i
		}
	}
	if at < 0 {
		return "", -1
	}
	return strings.Clone(fn), at // loc views a batch that is recycled
}

// allocAPIOf is the allocation API the program called in a leak's
// backtrace: the outermost one, nearest the program's frames (a backtrace
// "saved up to driver entry point" starts at the driver's cuMemAlloc_v2
// that the runtime's cudaMalloc called); "" when it holds none.
// A driver API frame whose caller has no symbol may be the runtime's,
// linked statically into the program (cudart_static's cudaMalloc calls
// cuMemAlloc_v2): which API the program called is then not known.
func allocAPIOf(frames []btFrame) string {
	api, at := "", -1
	for i, f := range frames {
		if _, ok := allocAPIs[f.base]; ok && f.kind == sanitizer.FrameHost {
			api, at = f.base, i
		}
	}
	if strings.HasPrefix(api, "cu") && !strings.HasPrefix(api, "cuda") && at+1 < len(frames) && frames[at+1].short == "" {
		return ""
	}
	return api
}

// poolOf returns the index in pools of the caching allocator in a
// backtrace, or -1.
func poolOf(frames []btFrame) int {
	for _, f := range frames {
		if f.pool >= 0 {
			return f.pool
		}
	}
	return -1
}

func (s *Suppression) matches(kind, allocator string, r *record, frames []btFrame) bool {
	if s.Kind != "" && s.Kind != kind {
		return false
	}
	if s.Allocator != "" && s.Allocator != allocator {
		return false
	}
	if s.Message != nil && !s.Message.MatchString(r.message) {
		return false
	}
	anyFrame := func(re *regexp.Regexp, get func(btFrame) []string) bool {
		if re == nil {
			return true
		}
		for _, f := range frames {
			for _, v := range get(f) {
				if v != "" && re.MatchString(v) {
					return true
				}
			}
		}
		return false
	}
	return anyFrame(s.Function, func(f btFrame) []string { return []string{f.full, f.short} }) &&
		anyFrame(s.Module, func(f btFrame) []string { return []string{f.module} }) &&
		anyFrame(s.File, func(f btFrame) []string { return []string{f.file} })
}

// dropPending releases the records batch waiting for its frames, when
// Add fails: the analysis ends there.
func (a *Analyzer) dropPending() {
	if a.pending != nil {
		a.pending.Release()
		a.pending = nil
	}
}

// siteAcc is a Site as its records add up.
type siteAcc struct {
	site Site
	// sizes are the largest distinct sizes so far, largest first (at most
	// maxSizes).
	sizes []int64
	// lastProc is the (run, process) of the site's last record: records
	// come in (run, process) order, so each change is one more process.
	lastProc [2]int32
	// whole, lastID and lastRun: a site whose backtraces hold runtime
	// frames only (leakFacts.whole), the id and run of its last record.
	whole           string
	lastID, lastRun int32
}

// addSize keeps sz among the site's largest distinct sizes.
func (s *siteAcc) addSize(sz int64) {
	i, found := slices.BinarySearchFunc(s.sizes, sz, func(e, t int64) int { return cmp.Compare(t, e) })
	if found || i >= maxSizes {
		return
	}
	if len(s.sizes) == maxSizes {
		s.sizes = s.sizes[:maxSizes-1]
	}
	s.sizes = slices.Insert(s.sizes, i, sz)
}

// fold folds the records of the pending batch, with their frames, into
// the totals, and releases the batch.
func (a *Analyzer) fold() {
	rec := a.pending
	if rec == nil {
		return
	}
	a.pending = nil
	defer rec.Release()
	frames := a.frames
	if !slices.IsSortedFunc(frames, func(x, y idFrame) int { return cmp.Compare(x.id, y.id) }) {
		slices.SortStableFunc(frames, func(x, y idFrame) int { return cmp.Compare(x.id, y.id) })
	}
	cols := rec.Columns()
	ids := cols[sanitizer.RecRecord].(*array.Int32)
	runs := cols[sanitizer.RecRun].(*array.Int32)
	procs := cols[sanitizer.RecProcess].(*array.Int32)
	var bt []btFrame
	for i := 0; i < int(rec.NumRows()); i++ {
		r := record{
			id:         ids.Value(i),
			run:        runs.Value(i),
			process:    procs.Value(i),
			kind:       view(cols[sanitizer.RecKind], i),
			size:       int64At(cols[sanitizer.RecSize], i),
			memoryType: view(cols[sanitizer.RecMemoryType], i),
			message:    view(cols[sanitizer.RecMessage], i),
			api:        view(cols[sanitizer.RecAPI], i),
			err:        view(cols[sanitizer.RecError], i),
			result:     int64At(cols[sanitizer.RecResult], i),
			errMsg:     view(cols[sanitizer.RecErrorMessage], i),
			kernel:     view(cols[sanitizer.RecKernel], i),
			thread:     view(cols[sanitizer.RecThread], i),
			block:      view(cols[sanitizer.RecBlock], i),
			details:    view(cols[sanitizer.RecDetails], i),
			line:       int64At(cols[sanitizer.RecLine], i),
			saved:      view(cols[sanitizer.RecSaveLocation], i) != "",
			saveLoc:    view(cols[sanitizer.RecSaveLocation], i),
			cut:        boolAt(cols[sanitizer.RecCut], i),
			name:       view(cols[sanitizer.RecName], i),
		}
		for len(frames) > 0 && frames[0].id < r.id {
			frames = frames[1:] // cannot happen: addFrames checked the ids
		}
		bt = bt[:0]
		for len(frames) > 0 && frames[0].id == r.id {
			bt = append(bt, frames[0].btFrame)
			frames = frames[1:]
		}
		a.take(&r, bt)
	}
	clear(a.frames)
	a.frames = a.frames[:0]
}

// take folds one record, with its frames, into the totals.
func (a *Analyzer) take(r *record, frames []btFrame) {
	a.lastID = max(a.lastID, r.id)
	if r.kind == sanitizer.KindLeak && r.size <= 0 && len(frames) == 0 {
		// What a line cut in its size leaves ("Leaked 262,144 bytes at "
		// at the end of a cut log, which the parser warns about): no
		// allocation to report.
		return
	}
	res := &a.res
	rc := a.perRun[r.run]
	if rc == nil {
		rc = &runCount{}
		a.perRun[r.run] = rc
	}
	if r.kind == sanitizer.KindNotice {
		a.notice(r, rc)
		return
	}
	res.Records++
	rc.records++
	kind := r.kind
	alloc := ""
	var lf *leakFacts
	if r.kind == sanitizer.KindLeak {
		res.Leaks++
		res.LeakBytes += r.size
		rc.leaks++
		rc.bytes += r.size
		lf = a.leakFactsOf(r, frames)
		alloc = lf.site.Allocator
		if lf.site.Kind == callsite.Retained {
			kind = callsite.Retained.String()
		}
	}
	for i := range a.opt.Suppressions {
		s := &a.opt.Suppressions[i]
		if s.matches(kind, alloc, r, frames) {
			a.suppressed[i].Rule = s.Name
			a.suppressed[i].Records++
			if r.kind == sanitizer.KindLeak {
				a.suppressed[i].Bytes += r.size
			}
			return
		}
	}
	if r.kind != sanitizer.KindLeak {
		if res.ToolFailure == "" && toolFailureRe.MatchString(r.message) {
			res.ToolFailure, res.ToolFailureLine = strings.Clone(r.message), r.line
		}
		a.addError(r, frames)
		return
	}
	key := lf.key
	if lf.noStack {
		a.noStack++
		key += strconv.FormatInt(r.size, 10)
	}
	acc := a.sites[key]
	if acc == nil {
		acc = &siteAcc{site: lf.site, lastProc: [2]int32{-1, -1}}
		a.sites[key] = acc
		a.siteOrder = append(a.siteOrder, acc)
	}
	if lf.whole != "" {
		acc.whole, acc.lastID, acc.lastRun = lf.whole, r.id, r.run
	}
	acc.site.Bytes += r.size
	acc.site.Count++
	acc.addSize(r.size)
	if p := [2]int32{r.run, r.process}; p != acc.lastProc {
		acc.lastProc = p
		acc.site.Processes++
	}
}

// notice takes one of the tool's own notices (sanitizer.KindNotice): not
// a record of the program's, but a failure of the tool's or the end of the
// target process, which say what was not checked. Others (cuda-memcheck
// 11's deprecation notice) say nothing of the run.
func (a *Analyzer) notice(r *record, rc *runCount) {
	switch {
	case toolFailureRe.MatchString(r.message):
		if a.res.ToolFailure == "" {
			a.res.ToolFailure, a.res.ToolFailureLine = strings.Clone(r.message), r.line
		}
		if rc.failure == "" {
			rc.failure, rc.failureLine = strings.Clone(r.message), r.line
		}
	case strings.HasPrefix(r.message, "Error: process didn't terminate successfully"):
		if rc.terminated == "" {
			rc.terminated, rc.terminatedLine = strings.Clone(r.message), r.line
			// The tool's reason, when it gives one ("The application may
			// have hit an error when dereferencing Unified Memory ...").
			if r.details != "" {
				rc.terminatedWhy = strings.Clone(strings.SplitN(r.details, "\n", 2)[0])
			}
		}
	}
}

// leakFacts is what a leak record's frames say of its site: the Site
// without its totals, and its key among the sites (to which a leak
// without a backtrace adds its size).
type leakFacts struct {
	site    Site
	key     string
	noStack bool
	// whole is why no site is named when the record's runtime-only
	// backtrace turns out whole as printed (the log goes on after it:
	// see Finalize); "" when site.Unknown is not cutBacktrace's.
	whole string
}

// maxLeakMemo bounds the leak facts kept by the frames that gave them
// (entries); the table starts over when full.
const maxLeakMemo = 4096

// leakFactsOf works out the site facts of a leak record, once for each
// distinct sequence of frames (their texts and return addresses): the
// records of one site repeat one backtrace.
func (a *Analyzer) leakFactsOf(r *record, frames []btFrame) *leakFacts {
	sig := append(a.sig[:0], 0)
	if r.memoryType == "device heap" {
		sig[0] = 1
	}
	if r.saved && len(frames) == 0 {
		sig[0] |= 2
	}
	for _, f := range frames {
		sig = binary.LittleEndian.AppendUint32(sig, f.id)
		sig = binary.LittleEndian.AppendUint64(sig, f.pc)
	}
	if r.name != "" {
		sig = append(append(sig, 0xff), r.name...)
	}
	api, apiAt := allocAPIOf(frames), -1
	if api == "" {
		api, apiAt = savedAtAPI(r.saveLoc, frames)
		if apiAt >= 0 {
			sig[0] |= 4
			sig = append(sig, api...)
		}
	}
	a.sig = sig
	if lf, ok := a.leakMemo[string(sig)]; ok {
		return lf
	}
	alloc := allocatorOf(r, frames)
	kind := sanitizer.KindLeak
	pool := poolOf(frames)
	if pool >= 0 {
		kind = callsite.Retained.String()
	}
	stack, site, ok := a.stackOf(frames)
	if apiAt >= 0 {
		// The frames up to the API the save location names are the
		// allocator's: the site is the API's caller.
		_, site, ok = a.stackOf(frames[apiAt+1:])
	}
	lf := &leakFacts{site: Site{Kind: callsite.Leak, Allocator: alloc, API: api, Stack: stack, Frame: site}}
	key := kind + "\x00" + alloc + "\x00"
	if r.name != "" {
		lf.site.Name = strings.Clone(r.name)
		key += "nvtx\x00" + lf.site.Name + "\x00"
	}
	switch {
	case !ok && hasHostFrames(frames):
		lf.site.Unknown = cutBacktrace(frames)
		if !strings.HasPrefix(lf.site.Unknown, "the whole backtrace") {
			lf.whole = wholeRuntimeBacktrace(frames)
		}
		key += "cut\x00" + lf.site.Unknown
	case !ok && r.saved && len(frames) == 0:
		// Backtraces were on (the record says its backtrace was saved),
		// but none of it is there: the log ends, or was cut, before its
		// first frame. Not --show-backtrace no.
		lf.site.Unknown = "the record says its host backtrace was saved, but no frame of it follows: the log was cut before them"
		key += "cut\x00" + lf.site.Unknown
	case !ok:
		lf.noStack = true
		key += "size\x00"
	default:
		key += callsite.StackKey(stack)
	}
	lf.key = key
	for _, f := range frames {
		if f.kind == sanitizer.FrameHost && f.frame() == site && site != (callsite.Frame{}) {
			lf.site.NoLineInfo = f.noLineInfo()
			lf.site.NoSymbols = f.unsymbolized()
			break
		}
	}
	if pool >= 0 {
		lf.site.Kind = callsite.Retained
		lf.site.Pool, lf.site.Hint = pools[pool].name, pools[pool].hint
	} else if uncachedTorch(frames) {
		lf.site.Hint = uncachedTorchHint
	}
	if a.leakMemo == nil || len(a.leakMemo) >= maxLeakMemo {
		a.leakMemo = make(map[string]*leakFacts)
	}
	a.leakMemo[string(sig)] = lf
	return lf
}

// Finalize groups what Add took. Call it once.
func (a *Analyzer) Finalize() *Result {
	a.fold()
	res := &Result{Records: a.res.Records, Leaks: a.res.Leaks, LeakBytes: a.res.LeakBytes,
		ToolFailure: a.res.ToolFailure, ToolFailureLine: a.res.ToolFailureLine}
	for _, acc := range a.siteOrder {
		s := acc.site
		if acc.whole != "" && (acc.lastID < a.lastID || a.runSummarised(acc.lastRun)) {
			// A record follows the site's last one, or its run's summary
			// does: the log was not cut in its backtraces.
			s.Unknown = acc.whole
		}
		s.Sizes = acc.sizes
		res.Sites = append(res.Sites, s)
	}
	nameUnsymbolized(res.Sites)
	sort.SliceStable(res.Sites, func(i, j int) bool {
		a, b := &res.Sites[i], &res.Sites[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return callsite.StackKey(a.Stack) < callsite.StackKey(b.Stack)
	})
	for _, e := range a.errOrder {
		if e.run >= 0 && int(e.run) < len(a.runs) {
			e.Run = runName(a.runs[e.run], int(e.run), len(a.runs))
		}
		res.Errors = append(res.Errors, *e)
	}
	for _, s := range a.suppressed {
		if s.Records > 0 {
			res.Suppressed = append(res.Suppressed, s)
		}
	}
	if a.noStack > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s without a host backtrace (compute-sanitizer --show-backtrace no?): grouped by size, not by call site; run without --show-backtrace no to see where they were allocated",
			count(int64(a.noStack), "leak record", "leak records")))
	}
	for i, run := range a.runs {
		rc := a.perRun[int32(i)]
		if rc == nil {
			rc = &runCount{}
		}
		run.Records, run.Leaks, run.LeakBytes = rc.records, rc.leaks, rc.bytes
		run.Failure, run.FailureLine = rc.failure, rc.failureLine
		run.Terminated, run.TerminatedLine, run.TerminatedWhy = rc.terminated, rc.terminatedLine, rc.terminatedWhy
		res.Warnings = append(res.Warnings, checkRun(&run, i, len(a.runs))...)
		res.Runs = append(res.Runs, run)
		if s, ok := summaryOnly(run, i, len(a.runs)); ok {
			res.Sites = append(res.Sites, s)
		}
	}
	if w := runsNote(res.Runs); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res
}

// runName names run i of n in a message: "" when it is the only one,
// else "run 2 (line 9)" by its banner's line or, without a banner, its
// first line of the tool's.
func runName(r Run, i, n int) string {
	if n <= 1 {
		return ""
	}
	name := fmt.Sprintf("run %d", i+1)
	switch {
	case r.Line > 0:
		name += fmt.Sprintf(" (line %d)", r.Line)
	case r.StartLine > 0:
		name += fmt.Sprintf(" (from line %d, no banner)", r.StartLine)
	}
	return name
}

// maxRunsNamed bounds the runs runsNote lists.
const maxRunsNamed = 8

// runsNote reports each run of a log of several where the runs need
// saying: some has no banner (runs told apart by their summaries: a
// summary or record after a run's ERROR SUMMARY, or a second LEAK
// SUMMARY, starts the next), or their LEAK SUMMARYs disagree (one leaked,
// another did not). Each run is judged on its own: a leak in any run is a
// finding (and trips --fail-on leak) whatever the runs after it say, for
// a log's runs may be different programs (a CI job's test binaries) as
// well as one program before and after a fix, and the log does not say
// which. "" when there is nothing to say.
func runsNote(runs []Run) string {
	if len(runs) < 2 {
		return ""
	}
	bannerless, leaked, clean := false, 0, 0
	for _, r := range runs {
		bannerless = bannerless || r.Line == 0 && r.StartLine > 0
		switch {
		case r.HasLeakSummary && r.SummaryBytes > 0 || r.Leaks > 0:
			leaked++
		case r.HasLeakSummary:
			clean++
		}
	}
	if !bannerless && (leaked == 0 || clean == 0) {
		return ""
	}
	var parts []string
	for i, r := range runs {
		if i == maxRunsNamed {
			parts = append(parts, fmt.Sprintf("%d more", len(runs)-i))
			break
		}
		var what []string
		if r.HasLeakSummary {
			what = append(what, fmt.Sprintf("LEAK SUMMARY %s bytes in %s", humanize.Comma(r.SummaryBytes), count(r.SummaryAllocations, "allocation", "allocations")))
		} else if r.Leaks > 0 {
			what = append(what, fmt.Sprintf("%s read, no LEAK SUMMARY", count(int64(r.Leaks), "leak record", "leak records")))
		}
		if r.HasErrorSummary {
			what = append(what, "ERROR SUMMARY "+count(r.SummaryErrors, "error", "errors"))
		}
		if len(what) == 0 {
			what = append(what, count(int64(r.Records), "record", "records")+", no summary")
		}
		parts = append(parts, runName(r, i, len(runs))+": "+strings.Join(what, ", "))
	}
	msg := fmt.Sprintf("the log holds %d runs of the tool", len(runs))
	if bannerless {
		msg += " (a run without a banner is told from the one before it by its summaries: a LEAK SUMMARY, ERROR SUMMARY or record after a run's ERROR SUMMARY, or a second LEAK SUMMARY, starts the next)"
	}
	msg += ": " + strings.Join(parts, "; ") + ". Each run is judged on its own: a leak in any run is a finding and trips --fail-on leak, whatever the runs after it say (the runs of one log may be different programs); where a later run is the same program after a fix, give its log alone"
	return msg
}

// nameUnsymbolized renames the sites of unsymbolized frames (NoSymbols)
// that share their innermost frame, the code that called the allocation
// for all of them (the static CUDA runtime's, a wrapper of the program's):
// each is named by its innermost frame that the others do not have at the
// same depth, the first return address where their stacks part.
func nameUnsymbolized(sites []Site) {
	byFrame := map[callsite.Frame][]int{}
	for i := range sites {
		if sites[i].NoSymbols {
			byFrame[sites[i].Frame] = append(byFrame[sites[i].Frame], i)
		}
	}
	for _, group := range byFrame {
		if len(group) < 2 {
			continue
		}
		for _, i := range group {
			s := &sites[i]
			for d, f := range s.Stack {
				shared := false
				for _, j := range group {
					if j != i && d < len(sites[j].Stack) && sites[j].Stack[d] == f {
						shared = true
						break
					}
				}
				if !shared {
					s.Frame = f
					break
				}
			}
		}
	}
}

// summaryOnly is the part of a run's LEAK SUMMARY that no record in the
// log accounts for (records not printed, a log cut or filtered before
// them): a leak of unknown site, so that a log holding only summaries is
// not read as clean. Whether some of it is a framework's cache cannot be
// told without the records.
func summaryOnly(r Run, i, n int) (Site, bool) {
	if !r.HasLeakSummary || r.SummaryBytes <= r.LeakBytes || r.SummaryAllocations <= int64(r.Leaks) {
		return Site{}, false
	}
	why := "the log holds no record of them"
	switch {
	case r.NotPrinted > 0:
		why = fmt.Sprintf("their records were not printed (%s over --print-limit)", count(r.NotPrinted, "error", "errors"))
	case r.Leaks > 0:
		why = "their records are not in the log (cut or filtered)"
	}
	run := runName(r, i, n)
	if run != "" {
		run = " of " + run
	}
	return Site{
		Kind: callsite.Leak, Bytes: r.SummaryBytes - r.LeakBytes, Count: int(min(r.SummaryAllocations-int64(r.Leaks), math.MaxInt32)),
		Unknown: fmt.Sprintf("counted only by the LEAK SUMMARY%s: %s; rerun compute-sanitizer --leak-check full --print-limit 0 and keep the whole log", run, why),
	}, true
}

// startFrameRe matches the outermost frames of a process or thread.
var startFrameRe = lazyre.New(`^(_start|__libc_start_main|__libc_start_call_main|start_thread|clone3?|__clone3?|BaseThreadInitThunk|RtlUserThreadStart|(w?main|w?WinMain|_?_tmain|_?_tWinMain)CRTStartup)$`)

// hasHostFrames reports whether a record has a host backtrace.
func hasHostFrames(frames []btFrame) bool {
	for _, f := range frames {
		if f.kind == sanitizer.FrameHost {
			return true
		}
	}
	return false
}

// cutBacktrace says why a backtrace of runtime, driver and C library
// frames only names no site, naming the module it ends in.
func cutBacktrace(frames []btFrame) string {
	module, started := "", false
	for _, f := range frames {
		if f.kind == sanitizer.FrameHost && f.module != "" {
			module = f.module
		}
		started = started || startFrameRe.MatchString(f.base)
	}
	if started {
		// The backtrace is whole (it reaches the process's or a thread's
		// start): nothing of the program's own allocated this.
		where := ""
		if module != "" {
			where = " (" + module + ")"
		}
		return "the whole backtrace holds only CUDA runtime, driver, C library or wrapper frames" + where + ": the runtime or a library allocated it on its own, not a call of the program's"
	}
	if module == "" {
		return "the backtrace holds only CUDA runtime, driver, C library or wrapper frames, and no module: the log was cut before the program's own frames"
	}
	return fmt.Sprintf("the backtrace ends in %s with CUDA runtime, driver, C library or wrapper frames only: the log was cut before the program's own frames", module)
}

// wholeRuntimeBacktrace says why a backtrace of runtime, driver and C
// library frames only names no site when the record is whole in the log
// (something follows it): compute-sanitizer printed no frame further
// out, so the caller is not known, and the log is not to blame.
func wholeRuntimeBacktrace(frames []btFrame) string {
	return fmt.Sprintf("the backtrace compute-sanitizer printed holds only CUDA runtime, driver, C library or wrapper frames (%s), and the log goes on after the record, so it was not cut there: the tool printed no frame further out, and none of the program's names the site", hostFramesText(frames))
}

// hostFramesText counts a backtrace's host frames and names the
// outermost: "1 frame: cudaMalloc in leaky", "3 frames, the outermost
// cudaMalloc in leaky".
func hostFramesText(frames []btFrame) string {
	n, last := 0, ""
	for _, f := range frames {
		if f.kind != sanitizer.FrameHost {
			continue
		}
		n++
		name := f.short
		if name == "" {
			name = "an unnamed function"
			if f.pc != 0 {
				name = fmt.Sprintf("0x%x", f.pc)
			}
		}
		if f.module != "" {
			name += " in " + f.module
		}
		last = name
	}
	if n == 1 {
		return "1 frame: " + last
	}
	return fmt.Sprintf("%d frames, the outermost %s", n, last)
}

// runSummarised reports whether run i printed a LEAK SUMMARY or an ERROR
// SUMMARY, which follow all its records.
func (a *Analyzer) runSummarised(i int32) bool {
	if i < 0 || int(i) >= len(a.runs) {
		return false
	}
	return a.runs[i].HasLeakSummary || a.runs[i].HasErrorSummary
}

// hasElision reports whether a record's detail lines (joined by "\n")
// hold an elision mark: a line that is "..." (or "…"), or that starts or
// ends with one after a space, where whoever pasted the record left lines
// out.
func hasElision(details string) bool {
	for details != "" {
		line, rest, _ := strings.Cut(details, "\n")
		details = rest
		t := strings.TrimSpace(line)
		if t == "..." || t == "…" || strings.HasPrefix(t, "... ") || strings.HasSuffix(t, " ...") || strings.HasSuffix(t, " …") {
			return true
		}
	}
	return false
}

// isMemberFunction reports whether a demangled C++ name is that of a
// non-static member function, by the cv-qualifier after its parameters
// ("camera::get_ray(float, float, curandStateXORWOW *) const"): a
// __global__ function cannot be one.
func isMemberFunction(full string) bool {
	t := strings.TrimSpace(full)
	return strings.HasSuffix(t, ") const") || strings.HasSuffix(t, ") volatile") || strings.HasSuffix(t, ") const volatile")
}

// sameDeviceFrame reports whether device frames a and b, one after the
// other, are the same frame printed twice: the same function, source line
// and offset.
func sameDeviceFrame(a, b btFrame) bool {
	return a.short == b.short && a.file == b.file && a.line == b.line && a.pc == b.pc
}

func (a *Analyzer) addError(r *record, frames []btFrame) {
	function := ""
	if r.kernel != "" {
		var ok bool
		if function, ok = a.kernels[r.kernel]; !ok {
			k := a.names.Get(r.kernel)
			function = newBtFrameNames(sanitizer.FrameDevice, k, "", "", 0).short
			a.kernels[k] = function
		}
	}
	var device []callsite.Frame
	var host []btFrame
	var lastDev btFrame
	// stubOf: the kernel, for telling its host-side launch stub from the
	// launch site: the outermost (last) device frame (the stub nvcc
	// generates is named after the kernel, not after a device function
	// it calls).
	hasHost, stubOf := false, function
	for _, f := range frames {
		if f.kind == sanitizer.FrameDevice {
			stubOf = f.short
		} else {
			hasHost = true
		}
	}
	for _, f := range frames {
		switch {
		case f.kind == sanitizer.FrameDevice && len(device) == 1 && lastDev.frameFacts != nil && sameDeviceFrame(lastDev, f):
			// cuda-memcheck's layout names the faulting function twice:
			// "at 0x000000e0 in k" and "Device Frame:k (k : 0xe0)", one
			// frame, not a call of k by k. Only the "at" line's frame,
			// the first, is so repeated: later equal frames are a
			// recursion's (walk+0x90 calling itself), and stay.
		case f.kind == sanitizer.FrameDevice:
			device = append(device, f.frame())
			lastDev = f
		case stubOf != "" && baseName(f.short) == baseName(stubOf):
			// The host-side launch stub nvcc generates for the kernel,
			// at the kernel's declaration: not the launch site.
		default:
			host = append(host, f)
		}
	}
	// The kernel is the outermost device frame (see Error.Kernel): the
	// last of several, or the only one when the record's host backtrace
	// shows that its device backtrace, printed before it, was not cut.
	kernel, noKernel := "", ""
	switch {
	case len(device) == 0 && function == "":
		// A host-side error.
	case r.cut && !hasHost:
		// The input ends inside the device backtrace ("Device
		// Frame:/home/.../build_cuda_debug/_d"): the reader left the cut
		// frame out, and the frames before it are not the outermost.
		noKernel = "the log ends inside the record's device backtrace, so the kernel, its outermost frame, is not shown"
	case len(device) <= 1 && !r.saved && !hasHost:
		noKernel = "the record shows no backtrace: cut or left out of the log, or the tool ran with --show-backtrace no"
	case len(device) <= 1 && hasElision(r.details):
		// NVIDIA/cccl#8288's paste: "at cp_async_bulk_cp_mask in
		// cp_async_bulk.h:236", then "=========   ..." where lines were
		// left out; the issue names the kernel, DeviceScanKernel, which
		// the record no longer shows.
		noKernel = `lines of the record were left out of the paste ("..."), so its device backtrace may not be whole`
	case lastDev.frameFacts != nil && isMemberFunction(lastDev.full):
		// cuda-memcheck's device backtrace of an imprecise exception
		// may stop short of the kernel: "Device Frame:...:_ZNK6camera7get_ray..."
		// (a const member function) as the only caller.
		noKernel = fmt.Sprintf("the record's outermost device frame, %s, is a member function, which a __global__ function cannot be: the device backtrace stops before the kernel", lastDev.short)
	case lastDev.frameFacts != nil:
		kernel = lastDev.short
	default:
		kernel = function
	}
	hostStack, launch, _ := a.stackOf(host)
	noCaller := ""
	if len(host) > 0 && launch == (callsite.Frame{}) {
		noCaller = fmt.Sprintf("its host backtrace holds only CUDA runtime, driver, C library or wrapper frames (%s): no frame of the program's names the caller", hostFramesText(host))
		if r.cut {
			// "Host Frame:cudaMemcpyAsy", the input's last line: the
			// frames further out were never in the log.
			noCaller = fmt.Sprintf("the log ends inside its host backtrace, before any named frame of the program's (%s): the caller is not shown", hostFramesText(host))
		}
	}
	site := launch
	if len(device) > 0 {
		site = device[0]
	}
	// Runs are judged apart: alike records of two runs are two errors.
	k := binary.LittleEndian.AppendUint32(a.key[:0], uint32(r.run))
	k = append(k, r.kind...)
	k = append(k, 0)
	if r.kind == sanitizer.KindRace {
		// A race is named by the code offsets of its two accesses
		// ("compress(...)+0x260", "and Write access at ...+0x200"), which
		// are not addresses: racecheck prints each race once, its hazards
		// counted in it ("[294291 hazards]"), so two records are two races.
		k = append(k, r.message...)
		k = append(k, 0)
		k = append(k, r.details...)
	} else {
		k = appendHexElided(k, r.message)
	}
	k = append(k, 0)
	// The function and the device frames shown, not the kernel: a record
	// cut before its backtraces is one of those that show them.
	k = append(k, function...)
	k = append(k, 0)
	for _, f := range device {
		k = callsite.AppendFrameKey(k, f.Filename, f.Name, f.Line)
	}
	k = append(k, 0)
	for _, f := range hostStack {
		k = callsite.AppendFrameKey(k, f.Filename, f.Name, f.Line)
	}
	a.key = k
	if e, ok := a.errs[string(k)]; ok {
		e.Count++
		if e.Kernel == "" && kernel != "" {
			e.Kernel, e.NoKernel = kernel, ""
		}
		return
	}
	// The record's strings view its batch: the group keeps copies.
	e := &Error{
		Kind: a.names.Get(r.kind), Message: strings.Clone(r.message), API: a.names.Get(r.api), Error: a.names.Get(r.err),
		Result: r.result, ErrorMessage: a.names.Get(r.errMsg), Function: function, Kernel: kernel, NoKernel: noKernel, Frame: site, Launch: launch, NoCaller: noCaller,
		Thread: strings.Clone(r.thread), Block: strings.Clone(r.block), Count: 1, run: r.run,
	}
	e.Stack = append(append(e.Stack, device...), hostStack...)
	if r.details != "" {
		e.Details = strings.Split(strings.Clone(r.details), "\n")
	}
	a.errs[string(k)] = e
	a.errOrder = append(a.errOrder, e)
}

// appendHexElided appends s to b with every hexadecimal number ("0x"
// followed by hex digits) cut to "0x": what the regular expression
// 0x[0-9a-fA-F]+ replaced by "0x" gives, so that records differing only
// in addresses fall in one group.
func appendHexElided(b []byte, s string) []byte {
	for {
		i := strings.Index(s, "0x")
		if i < 0 {
			return append(b, s...)
		}
		j := i + 2
		for j < len(s) && isHexDigit(s[j]) {
			j++
		}
		if j == i+2 {
			// "0x" without a digit after it stays as it is; the search
			// goes on after its "0" (an "x0x1" is "x" then "0x1").
			b = append(b, s[:i+1]...)
			s = s[i+1:]
			continue
		}
		b = append(b, s[:i+2]...)
		s = s[j:]
	}
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// checkRun compares a run's summaries with the records read and says
// what does not add up.
func checkRun(r *Run, i, n int) []string {
	// name prefixes a message about one run of several.
	name := runName(*r, i, n)
	if name != "" {
		name += ": "
	}
	var out []string
	r.Agrees = r.HasLeakSummary || r.HasErrorSummary
	if r.HasLeakSummary && (r.SummaryAllocations != int64(r.Leaks) || r.SummaryBytes != r.LeakBytes) {
		r.Agrees = false
		why := "the log is incomplete or was edited"
		if r.NotPrinted > 0 {
			why = fmt.Sprintf("%s not printed (--print-limit); rerun with --print-limit 0 to see every leak", count(r.NotPrinted, "error was", "errors were"))
		}
		out = append(out, fmt.Sprintf("%sLEAK SUMMARY says %s bytes in %s, but %s bytes in %s were read: %s",
			name, humanize.Comma(r.SummaryBytes), count(r.SummaryAllocations, "allocation", "allocations"),
			humanize.Comma(r.LeakBytes), count(int64(r.Leaks), "leak record", "leak records"), why))
	}
	if r.HasErrorSummary && r.SummaryErrors != int64(r.Records)+r.NotPrinted {
		r.Agrees = false
		said := "ERROR SUMMARY says " + count(r.SummaryErrors, "error", "errors")
		if r.RaceSummary {
			said = "RACECHECK SUMMARY says " + count(r.SummaryErrors, "hazard", "hazards") + " displayed"
		}
		out = append(out, fmt.Sprintf("%s%s, but %s read (%d not printed)",
			name, said, count(int64(r.Records), "record was", "records were"), r.NotPrinted))
	} else if r.NotPrinted > 0 && !(r.HasLeakSummary && r.SummaryAllocations != int64(r.Leaks)) {
		out = append(out, fmt.Sprintf("%s%s not printed (--print-limit): findings cover only the printed ones; rerun with --print-limit 0",
			name, count(r.NotPrinted, "error was", "errors were")))
	}
	switch {
	case r.HasErrorSummary:
		if r.Terminated != "" {
			out = append(out, fmt.Sprintf("%sthe tool says the process did not end normally (line %d: %q%s): it may have crashed, so what it would have done after that point was not run nor checked",
				name, r.TerminatedLine, r.Terminated, theToolAdds(r.TerminatedWhy)))
		}
	case r.Terminated != "" || r.Failure != "":
		// A process that crashed (on an OOM, an exception) before its exit
		// handlers ran: the tool printed what it found up to then, but no
		// leak check (it runs when the context is torn down) nor summary.
		r.Agrees = false
		var why []string
		if r.Terminated != "" {
			why = append(why, fmt.Sprintf("the process ended early (line %d: %q%s)", r.TerminatedLine, r.Terminated, theToolAdds(r.TerminatedWhy)))
		}
		if r.Failure != "" {
			why = append(why, fmt.Sprintf("the tool printed no results at the end (line %d: %q)", r.FailureLine, r.Failure))
		}
		out = append(out, fmt.Sprintf("%sno ERROR SUMMARY: %s, so the run has no summary: the %s printed before that are reported, but leaks were not checked (the leak check runs at the process's exit) and the totals cannot be checked",
			name, strings.Join(why, " and "), count(int64(r.Records), "record", "records")))
	case r.Line > 0:
		r.Agrees = false
		out = append(out, fmt.Sprintf("%sno ERROR SUMMARY: the log was cut short or the tool did not finish, so totals cannot be checked", name))
	case r.Tool == "" && (r.Records > 0 || r.Leaks > 0):
		// Records without the banner before them nor the summary after
		// them: a few lines quoted from a longer log (a bug report, a CI
		// excerpt). What was left out on either side is unknown.
		r.Agrees = false
		out = append(out, fmt.Sprintf("%sno COMPUTE-SANITIZER banner and no ERROR SUMMARY: an excerpt of a log, so records left out of it are not counted and totals cannot be checked", name))
	}
	if r.HasErrorSummary && !r.HasLeakSummary && r.Leaks == 0 {
		out = append(out, fmt.Sprintf("%sno LEAK SUMMARY and no leak record: unless the program ran under compute-sanitizer --leak-check full, leaks were not checked", name))
	}
	if r.Processes > 1 {
		// Each leak report is printed at a CUDA context's teardown: a
		// process's exit (several with --target-processes all) or a
		// cudaDeviceReset in one process. The text log names no process:
		// which of the two it was cannot be told.
		out = append(out, fmt.Sprintf("%sthe log holds %d leak reports that share one summary (one at each CUDA context teardown: the exit of each process under --target-processes all, or a cudaDeviceReset within one process; the log does not say which); sites add them up", name, r.Processes))
	}
	if r.TargetError {
		out = append(out, fmt.Sprintf("%sthe target application returned an error", name))
	}
	return out
}

// theToolAdds quotes the reason the tool gave with a notice, if any.
func theToolAdds(why string) string {
	if why == "" {
		return ""
	}
	return fmt.Sprintf("; the tool adds: %q", why)
}

// maxSizes is the most distinct allocation sizes a Site lists.
const maxSizes = 8

// count writes n and the noun that agrees with it: "1 leak", "1,024 leaks".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return humanize.Comma(n) + " " + many
}
