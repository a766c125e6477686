package oom

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/internal/sizes"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// OOM causes. The string values are part of the report's schema.
const (
	// CauseFragmentation: PyTorch's segments held enough free memory for
	// the request, but no free block was large enough.
	CauseFragmentation = "fragmentation"
	// CauseAccumulation: memory grew from one or a few call sites until
	// the limit.
	CauseAccumulation = "accumulation"
	// CauseOtherProcesses: other processes held the GPU memory the request
	// needed.
	CauseOtherProcesses = "other-processes"
	// CauseMemoryLimit: the process hit a cap set on its memory while the
	// GPU had, or may have had, room: PyTorch's
	// set_per_process_memory_fraction, a HAMi pod's nvidia.com/gpumem,
	// ONNX Runtime's arena limit (gpu_mem_limit, OrtArenaCfg max_mem).
	CauseMemoryLimit = "memory-limit"
	// CauseUnifiedMemory: on a device whose GPU memory is the machine's
	// RAM (an APU, DGX Spark, Jetson; named in the log), memory outside
	// PyTorch's allocator held what the request needed: host memory of
	// the OS, the page cache, other programs and this process's CPU side.
	CauseUnifiedMemory = "unified-memory"
	// CauseCapacity: the process's working set is larger than the GPU, or
	// (the fallback) the GPU was full and no other cause explains it.
	CauseCapacity = "capacity"
	// CauseAllocationLimit: the device's runtime refused one allocation
	// larger than it allows in one piece while the GPU had room for it:
	// on Intel GPUs (XPU), Level Zero's maxMemAllocSize, 4 GiB on Arc and
	// integrated GPUs unless relaxed allocation limits are asked for (see
	// xpuSingleAllocation); MPS's one-buffer limit; llama.cpp's Vulkan
	// backend's check of the device's maxMemoryAllocationSize.
	CauseAllocationLimit = "allocation-limit"
	// CauseOutsideProcess: from a snapshot alone (which does not give the
	// GPU's total memory), the request was more than all this process held
	// plus the GPU's free memory, and another OOM of the same trace shows
	// the GPU holding the request beside what this process held: other
	// processes held the rest. Without such an OOM the GPU may as well be
	// too small, and no cause is given.
	CauseOutsideProcess = "outside-process"
)

// unlistedHolders is what may hold GPU memory that no process an OOM
// message lists holds (total - free - the processes listed): PyTorch
// lists the compute processes NVML reports, so graphics processes (the
// display), processes NVML cannot see (other containers, MPS clients
// counted under its server) and the driver's own memory are not among
// them, nor this process's memory NVML does not count for it.
const unlistedHolders = "graphics processes such as the display, which the list of compute processes omits; processes in other containers; the driver; or memory of this process that NVML does not count"

// Thresholds of the postmortem.
const (
	// accumulationShare: growing sites must hold at least this share of
	// the memory allocated at the OOM.
	accumulationShare = 0.5
	// otherProcessesMin: other processes must hold at least this much to be
	// a cause (below, it is the driver's and CUDA context's noise).
	otherProcessesMin = 256 << 20
	// otherEstimatedMin: when the message lists no processes, memory
	// outside PyTorch's allocator includes this process's CUDA context and
	// libraries; only more than this is put on other processes.
	otherEstimatedMin = 2 << 30
	// fragmentationMinSplit and fragmentationMinShare: free memory in split
	// segments (which empty_cache cannot return) at the end of a run is
	// reported when it is at least fragmentationMinSplit and at least
	// fragmentationMinShare of reserved memory or fragmentationMinLarge.
	//
	// Reviewed in session 46 (h46c), kept. PyTorch sets no bar: its OOM
	// message advises expandable_segments ("If reserved but unallocated
	// memory is large", printed whatever the figure: 4.17 MiB in pasted
	// messages as readily as 136 GiB) and its notes say max_split_size_mb
	// "may allow some borderline workloads to complete"; _memory_viz draws
	// the segments and judges nothing. So the bar is ours, and it is set
	// by what split memory costs. Whole free segments are not lost: any
	// request that fits takes them, empty_cache() returns them, and the
	// allocator frees them itself and retries before raising an OOM
	// (release_cached_blocks); only the split part is held against
	// requests larger than its pieces. Over the 33 public field snapshots
	// (../shared/field/snapshots, summed in Python from their segments'
	// blocks) the split part is 0-14% of reserved memory but in one, 25%
	// (cranberrii: 1.5 GiB in pieces of 43 MiB or less), reported. Most
	// field snapshots are taken idle, after a pass: MAGMA27 holds 982 MiB
	// split (7.3% of 13.2 GiB reserved; 43% of the segments that still
	// hold a live block, since what the pass freed left holes beside its
	// 313 MiB output), yet its trace shows 13.0 GiB active at its peak,
	// and 13.2 GiB reserved at the end: unless segments were released
	// after the peak (its trace records no segment entry to tell), at
	// most 0.24 GiB (2%) of the reserve was idle when memory was needed.
	// cranberrii's trace does record them: 5.5 GiB active at its peak
	// in 5.9 GiB then reserved, 433 MiB idle then, against 1.5 GiB split
	// at its end; the finding gives both (PeakReservedBytes). Idle split memory beside the
	// blocks a pass keeps is what the next pass reuses, so a share of
	// the segments that hold live blocks (43% there) would call every
	// such idle snapshot fragmented; a share of reserved memory, a fifth,
	// does not, while a fifth of the GPU's reserve split into pieces (or
	// 2 GiB, on GPUs of 80 GiB and more, where a fifth is 16 GiB) is
	// memory a larger request cannot have. A snapshot taken at the peak or
	// at the OOM (the observer's) has nothing freed yet to inflate the
	// split part, and the same share holds; the OOM message's own
	// figures are judged against the request instead (would it fit if
	// contiguous), not by these bars.
	fragmentationMinSplit = 64 << 20
	// capacitySlackShare: an OOM message's fragmentation on a full GPU
	// whose reserved but unallocated memory is less than this share of
	// PyTorch's reserve names capacity too: contiguous, that memory
	// would have held this request but gains no more than itself, a
	// sliver of the working set (R-Drop#9's fairseq run: 122.88 MiB of
	// 14.88 GiB, 0.8%, for a 68 MiB request on a 15.90 GiB GPU).
	capacitySlackShare    = 0.02
	fragmentationMinShare = 0.2
	fragmentationMinLarge = 2 << 30
	// tightSlack: a message without a per-process limit that reports less
	// than this much free beyond the segment needed is a full GPU
	// (cudaMalloc needs room of its own: page tables, granularity).
	tightSlack = 128 << 20
	// smallSegment is the segment a small-pool request (1 MiB or less)
	// needs: a message that prints it asked the small pool. Before
	// PyTorch 1.1 (kSmallAlloc in CUDACachingAllocator.cpp) it was 1 MiB.
	smallSegment    = 2 << 20
	oldSmallSegment = 1 << 20
	// beyondAnyGPU: one request larger than this is more than any GPU
	// holds (the largest, B300 and MI355X, have 288 GB, 268 GiB; on a
	// Grace superchip cudaMalloc takes only the GPU's own HBM): a size
	// computed wrong, not memory held elsewhere, even where the inputs do
	// not give the GPU's total (a snapshot alone).
	beyondAnyGPU = 1 << 40
	// xpuSingleAllocation is the most Intel's GPU runtime allocates in one
	// piece by default on Arc and integrated GPUs: the "stateful
	// addressing model" limits one allocation to 4 GiB (compute-runtime's
	// programmers-guide/ALLOCATIONS_GREATER_THAN_4GB.md), and since
	// Unified Runtime pull request 1245 (January 2024) the Level Zero
	// adapter goes beyond the device's maxMemAllocSize only when
	// UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 is set. Some devices report
	// a little less (an A770 refuses a 4.00 GiB request: IPEX issue 846,
	// intel-xpu-backend-for-triton issue 7477), Data Center GPU Max
	// allocates more natively. PyTorch's XPU allocator reports the
	// refusal as "XPU out of memory" (pytorch/pytorch pull request 176868).
	xpuSingleAllocation = 4 << 30
	// othersMoveRatio: a GPU that reported room for the request after the
	// failure is put down to other processes when the processes the
	// message lists held at least this many times the room beyond the
	// request (see othersWithRoom).
	othersMoveRatio = 2
	// oomTopSites is how many sites an OOM report keeps.
	oomTopSites = 5
)

// Input is what one input contributes to a postmortem: a snapshot's
// analysis, or what a log, memory summary or memory stats file holds.
type Input struct {
	// Path names the input as the command line did; Format is its
	// parse.Format.
	Path   string
	Format string
	// Snapshot is set for a snapshot, Text for the other formats.
	Snapshot *snapshot.Result
	Text     *TextResult
	// Processes are per-process samples of an NVML log (nvidia-smi
	// --query-compute-apps, pmon, pynvml): they name the processes an
	// OOM message lists by PID.
	Processes []GPUProcess
	// TraceOOMs are a PyTorch profiler trace's [OutOfMemory] events.
	TraceOOMs []TraceOOM
}

// TraceOOM is a profiler trace's [OutOfMemory] event (Kineto's
// reportOutOfMemory): the request and PyTorch's allocated and reserved
// memory at the failure; not the GPU's total or free memory.
type TraceOOM struct {
	Device int
	// DeviceType names the device's type as PyTorch names devices: "" or
	// "cuda" for CUDA, "xpu", "mps", ..., and "cpu" for host memory (the
	// CPU allocator's failure, not a GPU's: Device is then -1).
	DeviceType string
	TimeUs     int64 // µs since the epoch, 0 when unknown
	// Requested, Allocated and Reserved are bytes; Allocated and Reserved
	// -1 when the event lacks them.
	Requested, Allocated, Reserved int64
	// Total is the GPU's memory in bytes from the trace's
	// deviceProperties (totalGlobalMem), -1 when the trace does not give it.
	Total int64
}

// GPUProcess is one sample of a process's memory on a GPU, from an NVML
// log.
type GPUProcess struct {
	PID       int64
	Name      string // the process name as NVML gave it; "" when absent
	UsedBytes int64  // -1 when absent
	TimeUs    int64  // µs since the epoch; 0 when the log has no times
	Source    string // the log's path
}

// PostmortemOptions tune the combination. The zero value is usable.
type PostmortemOptions struct {
	// Filter hides framework frames of tracebacks; nil means
	// DefaultFrameFilter().
	Filter *callsite.FrameFilter
}

// Postmortem explains the out-of-memory errors of a run from every input
// given about it: each OOM once, with what each input said about it.
type Postmortem struct {
	// OOMs in input order: a snapshot's in trace order, then messages no
	// snapshot explains.
	OOMs []Report
	// Fragmentation lists memory that is free but cannot serve large
	// requests, at the end of a run, where it is large.
	Fragmentation []FragmentationReport
	// Stats are the memory_stats()/memory_summary() sets not folded into
	// an OOM.
	Stats []StatsReport
	// StatsAtOOM are the sets folded into an OOM (and the summaries of
	// their numbers), each with the OOM's index in OOMs.
	StatsAtOOM []StatsAt
	// Notes say, per input, what it did not have ("no OOM message").
	Notes []InputNote
	// WithoutOOM are the snapshots whose trace has no "oom" entry (most
	// snapshots: not worth a note where leaks are the subject).
	WithoutOOM []string
}

// InputNote is a remark about one input.
type InputNote struct {
	Path string // the input
	Note string // one sentence
}

// Source is one input's account of an OOM.
type Source struct {
	// Path and Format of the input.
	Path, Format string
	// Line of the message in a text input; 0 for a snapshot.
	Line int64
	// Seq is the "oom" trace entry of a snapshot; -1 for text.
	Seq int64
	// Event is set for a profiler trace's [OutOfMemory] event (Line 0,
	// Seq -1).
	Event bool
}

// Report is the postmortem of one out-of-memory error. Sizes are bytes,
// -1 when no input says. Sizes from a message are as PyTorch printed
// them: within pytorchtext.SizeTolerance of the truth.
type Report struct {
	// Sources are the inputs that describe this OOM, snapshots first.
	Sources []Source
	// Device is the GPU index, -1 when unknown.
	Device int
	// DeviceType names Device's type when a profiler trace's event gives
	// one other than CUDA: "xpu", "mps", ..., or "cpu" for a host-memory
	// allocation failure (Host); "" otherwise.
	DeviceType string
	// TimeUs is when it happened (µs since the epoch), 0 when unknown.
	TimeUs int64
	// Generation of the message, "" without one. Unparsed messages
	// (Generation pytorchtext.GenUnparsed) carry only Reason and Text.
	Generation pytorchtext.Generation
	Exception  string // the exception type before the message
	// Process is the worker process the message's line prefix names
	// (torchrun's "[rank3]: ", vLLM's and Ray's "(VllmWorker rank=7
	// pid=10948) "), as printed without brackets: "rank3"; "" when none.
	Process string
	Reason  string // why an unparsed message was not read
	Text    string // the message
	// RequestedBytes is the allocation that failed: from a snapshot, the
	// request rounded to a block; from a message only, the size it printed
	// (for requests under 10 MiB, the segment the allocator needed).
	RequestedBytes int64
	// SegmentBytes is the segment PyTorch had to reserve for it.
	SegmentBytes int64
	// DeviceFreeBytes and DeviceTotalBytes: the GPU's free and total
	// memory, as CUDA reported.
	DeviceFreeBytes, DeviceTotalBytes int64
	// ProcessInUseBytes is this process's memory on the GPU, PyTorch's and
	// not (2.x messages, with NVML).
	ProcessInUseBytes int64
	// ProcessNames are NVML samples of the processes OtherProcesses
	// lists, by PID (from an NVML log given with the message).
	ProcessNames map[int64]GPUProcess
	// OtherProcesses the message names; UnlistedBytes is memory in use on
	// the GPU that neither they nor this process account for (other
	// containers' processes, the driver); -1 when unknown.
	OtherProcesses []pytorchtext.Process
	UnlistedBytes  int64
	// AllowedBytes is the per-process limit; -1 when none was set or the
	// inputs do not say.
	AllowedBytes int64
	// PyTorch's memory at the OOM; PrivatePoolBytes is the part of
	// AllocatedBytes in private pools (from a 2.2+ message).
	AllocatedBytes, ReservedBytes, ReservedUnallocatedBytes, ActiveBytes int64
	PrivatePoolBytes                                                     int64
	// LargestFreeBlockBytes is the largest free block in the pool the
	// request had to come from (snapshot only).
	LargestFreeBlockBytes int64
	// WouldFitIfContiguous: the free memory in PyTorch's (fixed) segments
	// would have held the request had it been one block; nil when unknown.
	WouldFitIfContiguous *bool
	// Memory is the allocator's state by pool (snapshot only).
	Memory *snapshot.DeviceMemory
	// RequestPool is the pool the request had to be served from
	// (snapshot only).
	RequestPool *snapshot.PoolKey
	// LiveBlocks counts allocated blocks, -1 when unknown.
	LiveBlocks int
	// Sites are the call sites holding the most memory at the OOM, largest
	// first (snapshot only; at most 5).
	Sites []snapshot.Site
	// SitesTotal counts all of them.
	SitesTotal int
	// Stack is where the failing allocation was asked for, innermost
	// first, framework frames hidden (from the snapshot's trace entry or
	// the traceback); Frame is its innermost user frame.
	Stack []callsite.Frame
	Frame callsite.Frame
	// Causes, the most specific first; empty when the inputs cannot tell.
	Causes []Cause
	// Notes explain what could not be decided, or inconsistencies.
	Notes []string
	// Stats is a memory_stats()/memory_summary() set taken at this OOM.
	Stats *AllocatorStats
	// Occurrences counts the messages folded into this report.
	Occurrences int
	// FoldedOOMs counts out-of-memory lines the inputs do not show that
	// this OOM's line stands for: Ray's log deduplication folded N lines
	// of its kind ("[repeated Nx across cluster]", this one the last of
	// them) after printing the first on its own; FoldedOOMs is N-1, and 1
	// more when that first line is not in the input. Each is counted as an
	// OOM (other workers', whose figures may differ), so the OOMs were at
	// least len(OOMs) plus the FoldedOOMs of each. A note says where the
	// count came from.
	FoldedOOMs int
	// Coarse are the figures above that the OOM's message gave with fewer
	// decimals than PyTorch prints (a paste retyped by hand: "24 GiB"),
	// and those summed from them; nil when none. Text about the OOM
	// prints them as given, not with two decimals (see Report.size).
	Coarse []CoarseFigure
	// Survived is set when the snapshot's trace goes on after this OOM:
	// the program caught the error and went on. SmallerFrame names
	// Survived.Smaller's stack.
	Survived     *snapshot.OOMAfter
	SmallerFrame callsite.Frame

	accumulated int64                // bytes in growing sites
	ruTol       int64                // rounding of ReservedUnallocatedBytes when derived (1.x: reserved - allocated)
	backend     string               // the message's ("CUDA", "HIP", "XPU", "MPS"); "" without one
	msg         *pytorchtext.Message // the first message folded in
	origin      string               // origin(msg.Prefix), set with msg
	coarse      *Message             // that message, when it has figures typed coarse (see judgeCoarse)
	unified     *pytorchtext.UnifiedMemory
	unifiedPath string // the input that names unified
	// after is the first allocator statistics of the device printed
	// after a figureless cudaMallocAsync message in its input (a summary
	// in the except block), afterPath that input; nil when none.
	after      *AllocatorStats
	afterPath  string
	caller     string // the program a figureless message came from (callerOf)
	expandable bool
	snapshot   bool
	// tfLimit and tfInUse: TensorFlow's BFC allocator's Limit and InUse
	// (bytes) printed before its OOM; -1 when not (pytorchtext's
	// takeBFCStats gives them as the message's allowed and allocated).
	tfLimit, tfInUse int64
	// tfShapeSized: RequestedBytes is the tensor's shape times its type's
	// size (see tfTensorCause).
	tfShapeSized bool
	event        bool // from a profiler trace's [OutOfMemory] event
	// gpuAtLeast is the least the GPU holds by another OOM of the same
	// snapshot and device: the GPU's free memory and PyTorch's reserved
	// memory there, the most of any (at trace entry gpuAtLeastSeq); -1
	// when none says.
	gpuAtLeast    int64
	gpuAtLeastSeq int64
	// again is the OOM of the same message printed later in the same
	// input after the run went on (see printedAgain); nil when none.
	again *Report
	// stackCall is the CUDA call a message's stack names (see
	// stackCallOf), "" when none; stackCallAt its frame, as frameString
	// writes it.
	stackCall, stackCallAt string
}

// CoarseFigure is a figure of a Report known only to the precision a
// message's text gave it (see pytorchtext.CoarseFigure).
type CoarseFigure struct {
	// Figure names the Report's figure as JSON names it:
	// "requested_bytes", "device_total_bytes", "device_free_bytes",
	// "process_in_use_bytes", "allowed_bytes", "allocated_bytes",
	// "private_pool_bytes", "reserved_unallocated_bytes",
	// "reserved_bytes", or "other_processes[i].bytes" for OtherProcesses[i].
	Figure string
	// Bytes is the figure as read; Tolerance how far the true size may be
	// from it, in bytes (half a unit of the last digit typed).
	Bytes, Tolerance int64
	// Typed is the figure as the text has it ("24 GiB"); "" for one the
	// text does not print but that sums or subtracts coarse figures (2.x's
	// reserved, 1.x's reserved but unallocated, MPS's Metal memory).
	Typed string
}

// Text renders the figure as given: as typed, or, for one summed, with
// the decimals its allowance leaves true (pytorchtext.FormatWithin).
func (f CoarseFigure) Text() string {
	if f.Typed != "" {
		return f.Typed
	}
	return pytorchtext.FormatWithin(f.Bytes, f.Tolerance)
}

// Cause is one reason for an OOM, with the numbers that show it.
type Cause struct {
	// Name is one of the Cause* constants.
	Name string
	// Evidence says which numbers led to the cause.
	Evidence string
	// Numbers are those numbers by name: sizes in bytes (names ending in
	// _bytes) and counts.
	Numbers map[string]int64
	// Advice says what to change.
	Advice string
}

// FragmentationReport is free memory that PyTorch's segments hold but
// cannot serve large requests with, on one device at one moment.
type FragmentationReport struct {
	// Path and Format of the input.
	Path, Format string
	Device       int // -1 when unknown
	// At is "end" for the end of a snapshot, or the stats' source.
	At string
	// State sums the device's segments, fixed and expandable (whose split
	// memory is the free memory in pages shared with live blocks); from
	// stats, only reserved, allocated, active, requested and inactive
	// split are known (LargestFreeBytes is -1), and those of fixed
	// segments only (PyTorch leaves expandable ones out of
	// inactive_split).
	State snapshot.PoolState
	// Expandable is true when some of the split memory is in expandable
	// segments.
	Expandable bool
	// Pools by pool, snapshot only.
	Pools []snapshot.PoolState
	// Shape is how the split memory lies: ShapeScattered, ShapePinned or
	// ShapeUnknown (see splitShape).
	Shape string
	// Advice says what to change.
	Advice string
	// PeakActiveBytes and PeakReservedBytes are, for a snapshot whose
	// trace shows a peak above its end, the memory active then and what
	// PyTorch had reserved then (snapshot.DeviceSummary); 0 when unknown.
	// The split memory at an idle end says little of what fragmentation
	// cost when memory was needed; their difference bounds it.
	PeakActiveBytes, PeakReservedBytes int64
}

// Shapes of the free memory of a FragmentationReport. The string values
// are part of the report's schema (split_shape).
const (
	// ShapeScattered: the largest split block holds less than half of the
	// split memory: it lies in many pieces, and a request larger than the
	// largest does not fit although their sum would (fragmentation).
	ShapeScattered = "scattered"
	// ShapePinned: one split block, or the largest, holds at least half of
	// the split memory: requests up to its size fit; what keeps the memory
	// is the live blocks of its segment, which keep empty_cache() from
	// returning it (reserved but not returnable, not fragmented).
	ShapePinned = "pinned"
	// ShapeUnknown: memory_stats() or memory_summary() counts more than
	// one split block but not their sizes.
	ShapeUnknown = "unknown"
)

// StatsAt is a memory_stats()/memory_summary() set, by its input and
// line, taken at OOMs[OOM].
type StatsAt struct {
	Path string
	Line int64
	OOM  int
}

// StatsReport is one memory_stats()/memory_summary() set.
type StatsReport struct {
	// Path and Format of the input; Stats the set.
	Path, Format string
	Stats        AllocatorStats
	// SameAs names what else describes the same moment: a memory
	// summary of these numbers ("memory_summary.txt"), or the end of a
	// snapshot ("the end of x.pickle").
	SameAs []string
	// SnapshotEnd is true when a snapshot's end is that moment.
	SnapshotEnd bool
	// Undescribed is how many more out-of-memory errors the set's
	// allocator counted (num_ooms) than the inputs describe (GPU OOMs of
	// any input): OOMs a program caught, or whose message is not among
	// the inputs; 0 when none.
	Undescribed int64
	// summaries are the memory_summary() sets dropped as showing this
	// set's numbers (dedupeStats).
	summaries []StatsAt
}

func (r *Report) known(v int64) bool { return v >= 0 }

// Host reports whether the OOM is of host memory: a profiler trace's
// [OutOfMemory] event of the CPU (PyTorch's CPU allocator could not get
// the request from the machine's RAM), not a GPU's. No GPU cause is
// judged for it, and no GPU message or statistics are folded into it.
func (r *Report) Host() bool { return r.DeviceType == "cpu" }

// NewPostmortem combines inputs about one run: snapshots' OOMs, OOM messages
// (one OOM printed in several files, or several times, is one), tracebacks
// and allocator statistics, and finds the causes of each OOM.
func NewPostmortem(inputs []Input, opt PostmortemOptions) *Postmortem {
	if opt.Filter == nil {
		opt.Filter = callsite.DefaultFrameFilter()
	}
	pm := &Postmortem{}
	var reports []*Report
	// Snapshots first: messages are matched against their OOMs.
	for _, in := range inputs {
		if in.Snapshot == nil {
			continue
		}
		if len(in.Snapshot.OOMs) == 0 {
			pm.WithoutOOM = append(pm.WithoutOOM, in.Path)
		}
		for _, so := range in.Snapshot.OOMs {
			r := fromSnapshotOOM(in, so)
			r.gpuAtLeast, r.gpuAtLeastSeq = gpuAtLeast(in.Snapshot.OOMs, so)
			if same := sameSnapshotOOM(reports, r); same != nil {
				same.addSnapshotView(r)
				continue
			}
			reports = append(reports, r)
		}
	}
	// Profiler traces' [OutOfMemory] events: messages are matched
	// against them too.
	for _, in := range inputs {
		for _, e := range in.TraceOOMs {
			reports = append(reports, fromTraceOOM(in, e))
		}
	}
	for _, in := range inputs {
		if in.Text == nil {
			continue
		}
		if len(in.Text.Messages) == 0 && len(in.Text.Stats) == 0 && len(in.Text.NotOOMs) == 0 {
			// An input whose out-of-memory errors are all not counted
			// has its warnings, which say why: a second, generic one
			// would only repeat that it holds no OOM.
			pm.Notes = append(pm.Notes, InputNote{in.Path, "no CUDA out-of-memory message in it"})
		}
		var last *Report // of this input's messages, the last one's
		var lastLine int64
		procs := inputProcesses(in.Text.Messages)
		for _, m := range in.Text.Messages {
			src := Source{Path: in.Path, Format: in.Format, Line: m.Line, Seq: -1}
			if last != nil && last.msg != nil && parsed(last.msg.Generation) && reraise(m) && m.Line > lastLine && m.Line-lastLine <= maxReraiseLines &&
				last.origin == origin(m.Prefix) {
				// An engine's words for the CUDA OOM just before them,
				// which it caught and raised again ("The above exception
				// was the direct cause of ..."): one failure, not two.
				last.Sources = append(last.Sources, src)
				last.Notes = append(last.Notes, fmt.Sprintf("line %d is the same failure raised again by the engine: %s", m.Line, m.Text))
				if n := reraiseEngineNote(m.Text); n != "" {
					last.Notes = append(last.Notes, n)
				}
				continue
			}
			if n := len(reports); last != nil && n > 0 && reports[n-1] == last && len(last.Sources) == 1 && last.msg != nil && !parsed(last.msg.Generation) &&
				reraise(Message{Message: *last.msg}) && parsed(m.Generation) && m.Line > lastLine && m.Line-lastLine <= maxReraiseLines && last.origin == origin(m.Prefix) {
				// The engine's words printed before the CUDA OOM they
				// re-raise (a paste that puts the error it ended with
				// first, a logger's summary before the traceback): one
				// failure, which the CUDA message's figures describe.
				r := &Report{Device: -1}
				r.clear()
				r.addMessage(m, src, opt.Filter)
				r.Sources = append(last.Sources, r.Sources...)
				r.Notes = append(r.Notes, fmt.Sprintf("line %d is the same failure, printed before this message in the words of the engine that caught it and raised it again: %s", lastLine, last.msg.Text))
				if n := reraiseEngineNote(last.msg.Text); n != "" {
					r.Notes = append(r.Notes, n)
				}
				reports[n-1] = r
				last, lastLine = r, m.Line
				continue
			}
			r := matchMessage(reports, m)
			if r != nil && m.Folded > 0 && m.FoldedFirst > 0 && r.hasLine(in.Path, m.FoldedFirst) {
				// Ray's fold of the lines of a kind after the first,
				// which it printed on its own: later lines, other
				// OOMs than that first one's (see addFolded).
				r = nil
			}
			if r != nil && m.Generation == pytorchtext.GenUnparsed && r.msg != nil && parsed(r.msg.Generation) {
				// The start of a message read whole, printed again and cut
				// before its first figure (pytest's short test summary):
				// nothing was read from it, so it is no source of the OOM.
				r.Notes = append(r.Notes, fmt.Sprintf("%s:%d repeats the start of this message, cut before a figure could be read (%s): the same OOM, not a source of its figures", in.Path, m.Line, m.Reason))
				continue
			}
			if r != nil && r.msg != nil && parsed(m.Generation) && sameNumbers(r.msg, &m.Message) {
				var second bool
				if r, second = printedAgain(r, m, in.Path, procs); second {
					reports = append(reports, r)
				}
			}
			if r != nil && ggmlRepeat(r, m) {
				var second bool
				if r, second = ggmlAgain(r, m, in.Path); second {
					reports = append(reports, r)
				}
			}
			if r == nil {
				r = &Report{Device: -1}
				r.clear()
				reports = append(reports, r)
			}
			r.addMessage(m, src, opt.Filter)
			last, lastLine = r, m.Line
			if r.unified == nil && in.Text.UnifiedMemory != nil {
				r.unified, r.unifiedPath = in.Text.UnifiedMemory, in.Path
			}
		}
	}
	// Allocator statistics: fold a set taken at an OOM into it, keep the
	// others for the run.
	var stats []StatsReport
	for _, in := range inputs {
		if in.Text == nil {
			continue
		}
		for _, s := range in.Text.Stats {
			stats = append(stats, StatsReport{Path: in.Path, Format: in.Format, Stats: s})
		}
	}
	stats = dedupeStats(stats)
	for i := range stats {
		s := &stats[i]
		if r := statsAtOOM(reports, &s.Stats); r != nil {
			r.Stats = &s.Stats
			r.Sources = append(r.Sources, Source{Path: s.Path, Format: s.Format, Line: s.Stats.Line, Seq: -1})
			k := slices.Index(reports, r)
			pm.StatsAtOOM = append(pm.StatsAtOOM, StatsAt{Path: s.Path, Line: s.Stats.Line, OOM: k})
			for _, d := range s.summaries {
				d.OOM = k
				pm.StatsAtOOM = append(pm.StatsAtOOM, d)
			}
			continue
		}
		for _, in := range inputs {
			if in.Snapshot == nil {
				continue
			}
			for _, end := range in.Snapshot.Fragment.End {
				if !s.SnapshotEnd && statsMatchState(&s.Stats, end) {
					s.SameAs = append(s.SameAs, "the end of "+in.Path)
					s.SnapshotEnd = true
				}
			}
		}
		pm.Stats = append(pm.Stats, *s)
	}
	// Name the processes a message lists from NVML logs given with it:
	// the sample nearest the OOM (the last one without times).
	var procs []GPUProcess
	for _, in := range inputs {
		procs = append(procs, in.Processes...)
	}
	statsAfterAsync(reports, pm.Stats)
	sameInWorkers(reports)
	coarseBudget := maxCoarseVariants
	for _, r := range reports {
		r.noteCoarse()
		r.nameProcesses(procs)
		r.findCauses()
		r.judgeCoarse(procs, opt.Filter, &coarseBudget)
		pm.OOMs = append(pm.OOMs, *r)
	}
	// Counted OOMs without a report (the GPU allocator's count: host
	// memory's are not in it).
	gpuOOMs := 0
	for i := range pm.OOMs {
		if !pm.OOMs[i].Host() {
			gpuOOMs++
		}
	}
	for i := range pm.Stats {
		s := &pm.Stats[i]
		if n, ok := s.Stats.Get("num_ooms"); ok && int(n) > gpuOOMs {
			s.Undescribed = n - int64(gpuOOMs)
			pm.Notes = append(pm.Notes, InputNote{s.Path, fmt.Sprintf("the allocator counted %s (num_ooms); the inputs describe %d", counted(n, "out-of-memory error", "out-of-memory errors"), gpuOOMs)})
		}
	}
	// A set folded into an OOM counts that OOM and any before it: more
	// than the inputs describe are OOMs the program caught, or whose
	// message is not among them (the gate trips on the OOM already).
	for _, at := range pm.StatsAtOOM {
		st := pm.OOMs[at.OOM].Stats
		if st == nil || st.Line != at.Line {
			continue
		}
		if n, ok := st.Get("num_ooms"); ok && int(n) > gpuOOMs {
			pm.Notes = append(pm.Notes, InputNote{at.Path, fmt.Sprintf("the allocator counted %s (num_ooms, line %d, taken at the OOM it is shown with); the inputs describe %d", counted(n, "out-of-memory error", "out-of-memory errors"), at.Line, gpuOOMs)})
		}
	}
	pm.Fragmentation = fragmentationReports(inputs, pm.Stats)
	return pm
}

// statsAfterAsync gives each cudaMallocAsync OOM whose message printed
// no figures the first allocator statistics of its device (or of a
// device not named) that its own input printed after it: what the
// backend counts of its pool (allocated and reserved, current and peak)
// is then in the inputs, if not taken at the error.
func statsAfterAsync(reports []*Report, stats []StatsReport) {
	for _, r := range reports {
		if r.Generation != pytorchtext.GenAsync || r.msg == nil || r.known(r.AllocatedBytes) || len(r.Sources) == 0 {
			continue
		}
		src := r.Sources[0]
		for i := range stats {
			st := &stats[i]
			if st.Path != src.Path || st.Stats.Line <= src.Line || st.Stats.Device >= 0 && r.Device >= 0 && st.Stats.Device != r.Device {
				continue
			}
			if _, ok := st.Stats.Get("reserved_bytes.all.peak"); !ok {
				continue
			}
			r.after, r.afterPath = &st.Stats, st.Path
			break
		}
	}
}

// asyncAfterNote says what the statistics printed after a figureless
// cudaMallocAsync OOM show (see statsAfterAsync), "" without them: the
// pool's peaks since the run began (or its last reset) bound what it
// held when it failed; its current figures are what stayed after.
func (r *Report) asyncAfterNote() string {
	st := r.after
	if st == nil {
		return ""
	}
	what := "torch.cuda.memory_stats()"
	if st.Source == pytorchtext.SourceMemorySummary {
		what = "torch.cuda.memory_summary()"
	}
	var peaks []string
	if v, ok := st.Get("allocated_bytes.all.peak"); ok {
		peaks = append(peaks, size(v)+" allocated")
	}
	if v, ok := st.Get("reserved_bytes.all.peak"); ok {
		peaks = append(peaks, size(v)+" reserved")
	}
	note := fmt.Sprintf("the %s printed after it (%s:%d) gives the CUDA pool's peaks since the run began or its statistics were reset, %s: the most this process's pool held, at the error or before it",
		what, r.afterPath, st.Line, strings.Join(peaks, " and "))
	alloc, ok1 := st.Get("allocated_bytes.all.current")
	reserved, ok2 := st.Get("reserved_bytes.all.current")
	if ok1 && ok2 {
		note += fmt.Sprintf("; when it was printed, %s allocated and %s reserved (what stayed once the failed step's tensors were freed)", size(alloc), size(reserved))
	}
	if st.AsyncBackend() {
		note += "; its OOM count (CUDA OOMs: 0), non-releasable memory, segments and allocations are zeros the cudaMallocAsync backend never counts, not evidence against this OOM"
	}
	return note
}

// clear marks every size unknown.
func (r *Report) clear() {
	r.RequestedBytes, r.SegmentBytes, r.DeviceFreeBytes, r.DeviceTotalBytes = -1, -1, -1, -1
	r.ProcessInUseBytes, r.UnlistedBytes, r.AllowedBytes = -1, -1, -1
	r.tfLimit, r.tfInUse = -1, -1
	r.AllocatedBytes, r.ReservedBytes, r.ReservedUnallocatedBytes, r.ActiveBytes, r.PrivatePoolBytes = -1, -1, -1, -1, -1
	r.LargestFreeBlockBytes, r.LiveBlocks = -1, -1
	r.gpuAtLeast, r.gpuAtLeastSeq = -1, -1
}

// gpuAtLeast is a floor on the total memory of so's GPU from the other
// OOMs of its snapshot on that device: at each, CUDA's free memory and
// PyTorch's segments were both on the GPU. It returns the highest, and the
// trace entry that gives it; -1, -1 when no other OOM gives both.
func gpuAtLeast(all []snapshot.OOM, so snapshot.OOM) (int64, int64) {
	best, seq := int64(-1), int64(-1)
	for _, o := range all {
		if o.Seq == so.Seq || o.Device != so.Device || o.DeviceFree < 0 || o.Memory.Total.ReservedBytes < 0 {
			continue
		}
		if v := o.DeviceFree + o.Memory.Total.ReservedBytes; v > best {
			best, seq = v, o.Seq
		}
	}
	return best, seq
}

// sameSnapshotOOM finds the report of an OOM another snapshot already
// recorded as r's: the OOM observer's snapshot and one dumped after the
// except block hold the same "oom" trace entry. The entry has no address;
// it is the same when its device, time, request and the GPU's free memory
// are. Without a time (PyTorch before 2.1) two OOMs of one request cannot
// be told from one seen twice, and are kept apart; so are two entries of
// one snapshot.
func sameSnapshotOOM(reports []*Report, r *Report) *Report {
	if r.TimeUs == 0 {
		return nil
	}
	for _, o := range reports {
		if !o.snapshot || o.Device != r.Device || o.TimeUs != r.TimeUs || o.RequestedBytes != r.RequestedBytes ||
			o.DeviceFreeBytes != r.DeviceFreeBytes || o.event || o.msg != nil {
			continue
		}
		seen := false
		for _, s := range o.Sources {
			seen = seen || s.Path == r.Sources[0].Path
		}
		if !seen {
			return o
		}
	}
	return nil
}

// addSnapshotView folds o, the same OOM as seen by a later snapshot, into
// r: its source, and what happened after the OOM where only o's trace goes
// on past it (the observer's snapshot ends at the OOM; the one dumped
// after the except block tells whether the run survived it). The state at
// the OOM is r's: a snapshot that ends there holds it as is, one that goes
// on rebuilt it by undoing the later entries.
func (r *Report) addSnapshotView(o *Report) {
	r.Sources = append(r.Sources, o.Sources...)
	if r.Survived != nil || o.Survived == nil {
		return
	}
	r.Survived, r.SmallerFrame = o.Survived, o.SmallerFrame
	for _, n := range o.Notes {
		if strings.HasPrefix(n, survivedNote) {
			r.Notes = append(r.Notes, n)
		}
	}
}

// survivedNote begins the note of an OOM whose snapshot's trace goes on
// after it.
const survivedNote = "the OOM was survived"

func fromSnapshotOOM(in Input, so snapshot.OOM) *Report {
	r := &Report{Device: so.Device, TimeUs: so.TimeUs, snapshot: true}
	r.clear()
	r.Sources = []Source{{Path: in.Path, Format: in.Format, Seq: so.Seq}}
	r.RequestedBytes = so.Requested
	r.SegmentBytes = snapshot.AllocSegmentSize(so.Requested)
	if so.Expandable {
		// Expandable segments map the pages a block needs (2 MiB each),
		// not a new segment.
		const page = 2 << 20
		r.SegmentBytes = (snapshot.AllocRoundSize(so.Requested) + page - 1) / page * page
	}
	if so.DeviceFree >= 0 {
		r.DeviceFreeBytes = so.DeviceFree
	}
	mem := so.Memory
	r.Memory = &mem
	pool := so.RequestPool
	r.RequestPool = &pool
	t := mem.Total
	r.AllocatedBytes, r.ReservedBytes, r.ActiveBytes = t.AllocatedBytes, t.ReservedBytes, t.ActiveBytes
	r.ReservedUnallocatedBytes = t.ReservedBytes - t.AllocatedBytes
	r.LiveBlocks = t.AllocatedBlocks
	r.LargestFreeBlockBytes = so.RequestPoolLargestFree
	fit := so.WouldFitIfContiguous
	if so.Expandable {
		fit = mem.Total.FreeBytes >= snapshot.AllocRoundSize(so.Requested) // free pieces of the expandable segments
	}
	r.WouldFitIfContiguous = &fit
	r.expandable = so.Expandable
	r.Stack, r.Frame = so.Stack, so.Frame
	if a := so.After; a.Entries > 0 {
		r.Survived, r.SmallerFrame = &a, so.SmallerFrame
		note := fmt.Sprintf(survivedNote+": the trace goes on for %s after it, %d of them allocations", counted(a.Entries, "entry", "entries"), a.Allocs)
		if a.Allocs > 0 {
			note += fmt.Sprintf(" (the largest %s)", size(a.LargestAlloc))
		}
		if a.SegmentsReleased > 0 {
			segs := fmt.Sprintf("%d segments were", a.SegmentsReleased)
			if a.SegmentsReleased == 1 {
				segs = "1 segment was"
			}
			note += ", " + segs + " returned to the GPU (empty_cache, or the allocator releasing its cache to retry)"
		}
		switch {
		case a.SameSiteLargest > 0 && a.SameSiteLargest < so.Requested:
			note += fmt.Sprintf("; where it failed, a smaller allocation of %s then fit (a retry with a smaller batch)", size(a.SameSiteLargest))
		case a.Smaller.Stack >= 0 && so.SmallerFrame != (callsite.Frame{}):
			note += fmt.Sprintf("; %s allocated at most %s after it, %s before: a retry with a smaller batch fit", frameString(so.SmallerFrame), size(a.Smaller.After), size(a.Smaller.Before))
		}
		if a.LaterOOMs > 0 {
			if a.LaterOOMs == 1 {
				note += "; 1 more OOM followed"
			} else {
				note += fmt.Sprintf("; %d more OOMs followed", a.LaterOOMs)
			}
		} else {
			note += "; no later OOM"
		}
		r.Notes = append(r.Notes, note)
	}
	if so.SitesKnown {
		sites := append([]snapshot.Site(nil), so.Sites...)
		sort.SliceStable(sites, func(i, j int) bool { return sites[i].Bytes > sites[j].Bytes })
		r.SitesTotal = len(sites)
		for _, s := range so.Sites {
			if s.Kind == callsite.Leak {
				r.accumulated += s.Bytes
			}
		}
		if len(sites) > oomTopSites {
			sites = sites[:oomTopSites]
		}
		r.Sites = sites
	} else {
		r.Notes = append(r.Notes, "the call sites at this OOM are not known: only the first 32 OOMs of a device keep them")
	}
	if so.Mismatches > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s with the snapshot's final state: the state at the OOM is approximate", counted(so.Mismatches, "later trace entry did not agree", "later trace entries did not agree")))
	}
	if t.EstimatedBlocks > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s sized by the allocator's rounding of their requested size (a trace entry does not give the block's size): each may have been up to 1 MiB larger", counted(t.EstimatedBlocks, "block freed after the OOM is", "blocks freed after the OOM are")))
	}
	return r
}

// fromTraceOOM is the report of a profiler trace's [OutOfMemory] event:
// the request and PyTorch's allocated and reserved memory. Reserved less
// allocated is not taken for free memory a block could have held: the
// event does not say which pool or stream it was in, nor whether the GPU
// had room, so no cause rests on it; a message matched later gives those.
func fromTraceOOM(in Input, e TraceOOM) *Report {
	r := &Report{Device: e.Device, TimeUs: e.TimeUs, event: true}
	r.clear()
	r.Sources = []Source{{Path: in.Path, Format: in.Format, Seq: -1, Event: true}}
	r.RequestedBytes, r.SegmentBytes = e.Requested, e.Requested
	r.AllocatedBytes, r.ReservedBytes = e.Allocated, e.Reserved
	if e.DeviceType != "" && e.DeviceType != "cuda" {
		r.DeviceType = e.DeviceType
		r.backend = strings.ToUpper(e.DeviceType) // XPU's terms for an XPU (backendWords)
	}
	if r.Host() {
		// The CPU allocator's: no device, no cache (PyTorch reports 0
		// reserved), nothing of a GPU.
		r.Device, r.ReservedBytes, r.backend = -1, -1, ""
		return r
	}
	if e.Total > 0 {
		// The GPU's size, from the trace's deviceProperties: enough to
		// tell a request (or the live memory and it) larger than the GPU;
		// its free memory stays unknown.
		r.DeviceTotalBytes = e.Total
	}
	return r
}

// near reports whether a size printed in a message is v.
func near(printed, v int64) bool {
	d := printed - v
	if d < 0 {
		d = -d
	}
	return d <= pytorchtext.SizeTolerance(printed)+pytorchtext.SizeTolerance(v)
}

// parsed reports whether a message of generation g carries figures.
func parsed(g pytorchtext.Generation) bool {
	return g == pytorchtext.Gen1 || g == pytorchtext.Gen2 || g == pytorchtext.GenAsync || g == pytorchtext.GenMPS
}

// sameNumbers reports whether two parsed messages say the same.
func sameNumbers(a, b *pytorchtext.Message) bool {
	if a.Generation != b.Generation || a.Device != b.Device || len(a.Processes) != len(b.Processes) {
		return false
	}
	for i := range a.Processes {
		if a.Processes[i] != b.Processes[i] {
			return false
		}
	}
	return a.Requested == b.Requested && a.Total == b.Total && a.Free == b.Free && a.ProcessInUse == b.ProcessInUse &&
		a.Allowed == b.Allowed && a.Allocated == b.Allocated && a.PrivatePools == b.PrivatePools &&
		a.ReservedUnallocated == b.ReservedUnallocated && a.Reserved == b.Reserved
}

// matchMessage finds the report a message belongs to: one that already
// holds the same message (printed again, or in another file), or a
// snapshot's OOM with the same device, request and free memory.
//
// Messages on pytest's result lines of two different tests ("FAILED
// tests/core_test.py::CoreTest::test_jit_42 - RuntimeError: ...") are two
// failures, however alike their words.
func matchMessage(reports []*Report, m Message) *Report {
	test := origin(m.Prefix)
	other := func(r *Report) bool {
		t := r.origin
		return t != "" && test != "" && t != test
	}
	if !parsed(m.Generation) {
		for _, r := range reports {
			if r.msg != nil && r.msg.Generation == m.Generation && r.msg.Text == m.Text && !other(r) {
				return r
			}
		}
		// The same words cut short (a paste's last line cut mid-sentence,
		// "CUDA_ERROR_OUT_OF_MEMORY: out" after records ending "out of
		// memory"): the same failure as the whole ones.
		if m.Generation == pytorchtext.GenCUDAError {
			for _, r := range reports {
				if r.msg != nil && r.msg.Generation == m.Generation && len(m.Text) < len(r.msg.Text) && strings.HasPrefix(r.msg.Text, m.Text) && !other(r) {
					return r
				}
			}
		}
		// A message read from its GPU on and cut that a message already
		// read holds is that one quoted in part.
		if m.Generation == pytorchtext.GenCut && m.Requested < 0 {
			for _, r := range reports {
				if r.msg != nil && parsed(r.msg.Generation) && strings.Contains(r.msg.Text, m.Text) && !other(r) {
					return r
				}
			}
		}
		// A message shortened by a writer (an ellipsis, a placeholder:
		// "Tried to allocate 18.84 GiB. GPU X ... only a few hundred MiB
		// free") whose figures before the shortening are those of one
		// already read is that one quoted.
		if m.Generation == pytorchtext.GenCut && m.Requested > 0 && pytorchtext.Shortened(m.Reason) {
			for _, r := range reports {
				if r.msg == nil || !parsed(r.msg.Generation) || other(r) || !near(m.Requested, r.msg.Requested) {
					continue
				}
				if (m.Device < 0 || m.Device == r.msg.Device) && (m.Total < 0 || near(m.Total, r.msg.Total)) && (m.Free < 0 || near(m.Free, r.msg.Free)) {
					return r
				}
			}
		}
		// A message cut short that repeats the start of one already read
		// is that one printed again, truncated (pytest's short test
		// summary, a logger's line limit).
		if strings.HasPrefix(m.Reason, "the message ends at column") && strings.Contains(m.Text, "Tried to allocate ") {
			start := cutStart(m.Text)
			for _, r := range reports {
				if r.msg != nil && parsed(r.msg.Generation) && len(r.msg.Text) > len(start) && strings.HasPrefix(r.msg.Text, start) && !other(r) {
					return r
				}
			}
		}
		return nil
	}
	for _, r := range reports {
		if r.msg != nil && sameNumbers(r.msg, &m.Message) && !other(r) {
			return r
		}
	}
	// The whole message after one cut short that repeats its start (the
	// cut one printed first: a summary line above the traceback): the same
	// OOM, which the whole message then describes (see addMessage).
	for _, r := range reports {
		if repeatsStart(r, m) {
			return r
		}
	}
	if m.Requested < 0 && m.Generation != pytorchtext.GenMPS {
		// A message read from its GPU on (its first words cut off) that
		// says what one already read says but the request: that message
		// quoted again in part (a comment quoting the figures).
		bare := m.Message
		for _, r := range reports {
			if r.msg == nil || r.msg.Requested < 0 || other(r) {
				continue
			}
			bare.Requested = r.msg.Requested
			if sameNumbers(r.msg, &bare) {
				return r
			}
		}
	}
	for _, r := range reports {
		if !r.event || r.msg != nil || r.Host() || (m.Device >= 0 && m.Device != r.Device) {
			continue
		}
		// A trace's [OutOfMemory] event: the same request, and the
		// allocated memory the message prints.
		if near(m.Requested, r.RequestedBytes) && (r.AllocatedBytes < 0 || near(m.Allocated, r.AllocatedBytes)) {
			return r
		}
	}
	for _, r := range reports {
		if !r.snapshot || r.msg != nil || (m.Device >= 0 && m.Device != r.Device) {
			continue
		}
		// The message prints the segment size the allocator needed; older
		// releases the rounded request.
		if !near(m.Requested, r.SegmentBytes) && !near(m.Requested, r.RequestedBytes) {
			continue
		}
		if r.DeviceFreeBytes >= 0 && !near(m.Free, r.DeviceFreeBytes) {
			continue
		}
		return r
	}
	return nil
}

// hasLine reports whether one of r's sources is line of the text input
// at path.
func (r *Report) hasLine(path string, line int64) bool {
	for _, s := range r.Sources {
		if s.Path == path && s.Seq < 0 && !s.Event && s.Line == line {
			return true
		}
	}
	return false
}

// printedAgain judges m, a message with figures that says what r's does
// (the same figures: a whole copy, not a quote in part), printed
// again in the input at path after r's last line there: r reported twice
// (a launcher's error summary after the worker's traceback, a logger's
// record and stderr), or the same failure again after the run went on (a
// training loop that caught the OOM and skipped the batch, a retry, the
// next step). The evidence is a line between the two that counts the
// run's progress among the lines of m's process (Message.ProgressLine):
// with one, m is a second OOM, returned new (true) and chained from r;
// without, m is r's, returned, with a note that the text cannot tell it
// from a failure repeated at once. A message that r's OOM has not been
// printed with in this input is r's, without a note (the same OOM in
// several files).
//
// The progress line is no evidence, and m stays r's with a note that
// says "two OOMs, or one reported twice" (one, the conservative count),
// when the copy before it ended its process (its traceback reached
// "<module>": an uncaught exception; the lines after it are its buffered
// stdout flushed at exit, another process's, or a restarted run's), or
// when m carries no process mark and procs (inputProcesses) says the
// input may hold several processes' lines, or m names a GPU other than 0
// (a job that sees several GPUs): an unmarked progress line may then be
// another process's (rank 0's tqdm bar). A traceback printed by hand at
// the top level (traceback.print_exc() in a module-level loop) reads as
// uncaught too.
func printedAgain(r *Report, m Message, path string, procs inputProcs) (*Report, bool) {
	r, prev := lastPrinted(r, path)
	if prev == 0 || m.Line <= prev {
		return r, false
	}
	other := procs.otherAfter(prev, m)
	if m.ProgressLine > prev && other >= m.ProgressLine {
		// The run went on after the first print, and failed another way
		// (the OOM between); nothing counts progress after that one: a
		// summary or a handler's echo of the first failure (an error
		// report listing it, a wrapper printing the error it kept)
		// reads the same as the same failure again. Records of a
		// handler that went on still count (failedBetween).
		if d, ok := procs.failedBetween(prev, m); ok {
			return r.another(fmt.Sprintf("%s:%d prints this message again after line %d logged another OOM the same way (a record without a traceback: a handler that caught the error and went on): the run went on after this OOM, so that one is counted as a second OOM", path, m.Line, d),
				fmt.Sprintf("the same message as %s:%d, printed again after line %d logged another OOM the same way (a record without a traceback: a handler that caught the error and went on): a second OOM with the same figures, not the first reported twice", path, prev, d)), true
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%s:%d prints this message again; the last line before it that counts progress, line %d, comes before line %d's other OOM, and none after that: the run went on after this OOM and then failed another way, which does not show it went on to fail this way again (a summary or an echo of this failure prints it so): two OOMs, or one reported twice; the text cannot tell, so it is counted once", path, m.Line, m.ProgressLine, other))
		return r, false
	}
	if m.ProgressLine > prev {
		why := ""
		switch {
		case procs.fatal[prev]:
			why = fmt.Sprintf("line %d's traceback reached <module>, as an uncaught exception's does (or one printed by hand at the top level, traceback.print_exc()): if uncaught, the process ended there, and line %d is its buffered output flushed at exit, another process's, or a restarted run's, not that process going on", prev, m.ProgressLine)
		case workerRe.Re().FindString(m.Prefix) == "" && (procs.several != "" || m.Device > 0):
			several := procs.several
			if several == "" {
				several = fmt.Sprintf("the message names GPU %d: the job sees several GPUs, and may run a process on each", m.Device)
			}
			why = fmt.Sprintf("line %d carries no process mark and %s: it may be another process's (rank 0's progress bar), so it is no evidence that this message's process went on", m.ProgressLine, several)
		}
		if why != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s:%d prints this message again after a line that counts progress, but %s: two OOMs, or one reported twice; the text cannot tell, so it is counted once", path, m.Line, why))
			return r, false
		}
		return r.another(fmt.Sprintf("%s:%d prints this message again after line %d counted the run's progress (a step, iteration or epoch line of its process): the run went on after this OOM, so that one is counted as a second OOM", path, m.Line, m.ProgressLine),
			fmt.Sprintf("the same message as %s:%d, printed again after line %d counted the run's progress (a step, iteration or epoch line of its process): the run went on after the first (the OOM caught: a batch skipped, a retry), so this is a second OOM with the same figures, not the first reported twice", path, prev, m.ProgressLine)), true
	}
	if d, ok := procs.failedBetween(prev, m); ok {
		return r.another(fmt.Sprintf("%s:%d prints this message again after line %d logged another OOM the same way (a record without a traceback: a handler that caught the error and went on): the run went on after this OOM, so that one is counted as a second OOM", path, m.Line, d),
			fmt.Sprintf("the same message as %s:%d, printed again after line %d logged another OOM the same way (a record without a traceback: a handler that caught the error and went on): a second OOM with the same figures, not the first reported twice", path, prev, d)), true
	}
	r.Notes = append(r.Notes, fmt.Sprintf("%s:%d prints this message again with no line between that counts the run's progress (a step, iteration or epoch line of its process): read as this OOM reported twice (a launcher's error summary, a logger and stderr); the text cannot tell that from a retry that failed the same way at once", path, m.Line))
	return r, false
}

// failedBetween returns the line of another OOM logged between prev, the
// line of a message m prints again, and m: a message with other figures
// whose line reads as m's and prev's do (the same text before the
// message, digits aside: a logger's record, its timestamp apart; the same
// exception), where none of the three came with a traceback. Such
// records are a handler's that caught each OOM and went on (a training
// loop's `except RuntimeError: logging.warning(e)`): the run failed
// another way between, so m is a new failure. Tracebacks are left out (an
// uncaught exception's, printed again in a summary that lists several
// failures, pytest's, a launcher's), and so are inputs that may hold
// several processes' lines (inputProcs.several). false when none.
func (p inputProcs) failedBetween(prev int64, m Message) (int64, bool) {
	if p.several != "" || len(m.Frames) > 0 {
		return 0, false
	}
	form := func(x Message) string { return digitsOut(x.Prefix) + "\x00" + x.Exception }
	var first *Message
	for i := range p.msgs {
		if p.msgs[i].Line == prev {
			first = &p.msgs[i]
			break
		}
	}
	if first == nil || len(first.Frames) > 0 || form(*first) != form(m) {
		return 0, false
	}
	for _, d := range p.msgs {
		if d.Line <= prev || d.Line >= m.Line {
			continue
		}
		if len(d.Frames) == 0 && form(d) == form(m) && origin(d.Prefix) == origin(m.Prefix) && parsed(d.Generation) && !sameNumbers(&d.Message, &m.Message) {
			return d.Line, true
		}
	}
	return 0, false
}

// otherAfter returns the line of the last OOM message between prev, the
// line of a message m prints again, and m whose words differ from m's
// (another failure); 0 when there is none.
func (p inputProcs) otherAfter(prev int64, m Message) int64 {
	var last int64
	for _, d := range p.msgs {
		if d.Line > prev && d.Line < m.Line && d.Text != m.Text {
			last = d.Line
		}
	}
	return last
}

// digitsOut returns s with each run of digits replaced by "#": a log
// prefix with its timestamp and counters made alike.
func digitsOut(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if i == 0 || s[i-1] < '0' || s[i-1] > '9' {
				b.WriteByte('#')
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lastPrinted returns the last OOM of r's chain of OOMs printed again
// (Report.again), and the last line of the input at path it was printed
// on, 0 when that input has not printed it.
func lastPrinted(r *Report, path string) (*Report, int64) {
	for r.again != nil {
		r = r.again
	}
	var prev int64
	for _, s := range r.Sources {
		if s.Path == path && s.Seq < 0 && !s.Event {
			prev = max(prev, s.Line)
		}
	}
	return r, prev
}

// inputProcs is what one input's messages say of the processes that
// printed them (see printedAgain).
type inputProcs struct {
	// fatal holds the lines of messages whose traceback reached <module>.
	fatal map[int64]bool
	// several says why the input may hold several processes' lines
	// (messages with a launcher's process mark, several uncaught
	// tracebacks); "" when nothing says so.
	several string
	// msgs are the input's messages, in input order.
	msgs []Message
}

// inputProcesses reads inputProcs from one input's messages.
func inputProcesses(ms []Message) inputProcs {
	p := inputProcs{fatal: map[int64]bool{}, msgs: ms}
	var marked int64
	var fatal []int64
	for _, m := range ms {
		if n := len(m.Frames); n > 0 && m.Frames[n-1].Name == "<module>" {
			p.fatal[m.Line] = true
			fatal = append(fatal, m.Line)
		}
		if marked == 0 && workerRe.Re().FindString(m.Prefix) != "" {
			marked = m.Line
		}
	}
	switch {
	case marked > 0:
		p.several = fmt.Sprintf("the input holds messages with a launcher's process mark (line %d)", marked)
	case len(fatal) > 1:
		p.several = fmt.Sprintf("the input holds %d uncaught tracebacks (lines %d and %d), a process's end each", len(fatal), fatal[0], fatal[1])
	}
	return p
}

// maxReraiseLines bounds the lines between a CUDA OOM and an engine's
// re-raise of it: a chained traceback's (vLLM's _dummy_sampler_run is a
// few dozen lines after the OOM it caught).
const maxReraiseLines = 200

// reraise reports whether m is an engine's re-raise of a CUDA OOM it
// caught in its words: vLLM's sampler warmup, TGI's warmup. The two
// must come from one process (origin: another worker's words are its own
// failure).
func reraise(m Message) bool {
	if _, ok := pytorchtext.VLLMSamplerRequests(m.Text); ok {
		return true
	}
	return pytorchtext.KVCacheEngine(m.Text) == "TGI"
}

// cutStart is the text of a message cut short without the ellipsis that
// shortened it ("... of which 1...") or the quote that closed a quoted
// part (a comment's "`... of which 84.98 GiB is free.`"): the start of
// the whole message.
func cutStart(text string) string {
	t := strings.TrimRight(text, " ")
	if u := strings.TrimRight(t, "`'\""); u != t {
		t, text = strings.TrimRight(u, " "), u
	}
	if !strings.HasSuffix(t, "...") && !strings.HasSuffix(t, "…") {
		return text
	}
	return strings.TrimRight(strings.TrimSuffix(t, "…"), ".")
}

// repeatsStart reports whether r holds only a message cut short (no
// snapshot, no trace event) whose start the whole message m begins with:
// m is that message printed whole.
func repeatsStart(r *Report, m Message) bool {
	if r.msg == nil || r.snapshot || r.event || r.msg.Generation != pytorchtext.GenCut || !parsed(m.Generation) {
		return false
	}
	if t, u := r.origin, origin(m.Prefix); t != "" && u != "" && t != u {
		return false
	}
	start := cutStart(r.msg.Text)
	return strings.Contains(start, "Tried to allocate ") && len(m.Text) > len(start) && strings.HasPrefix(m.Text, start)
}

// testIDRe reads the test a pytest result line names: "FAILED
// tests/core_test.py::CoreTest::test_jit_42 - ", "ERROR x.py::t - ",
// "FAILED [0.0956s] test_x.py::T::test_fraction - ".
var testIDRe = lazyre.New(`(?:^|\s)(?:FAILED|ERROR)(?: \[[^\]]*\])? (\S+::\S+) -(?:\s|$)`)

// workerRe reads the process a line's prefix names: the label Python's
// multiprocessing workers of vLLM and Ray print before every line of
// theirs, "(VllmWorker rank=7 pid=10948) " (vLLM V1's MultiprocExecutor),
// "(VllmWorkerProcess pid=479247) " (V0), "(Worker_TP1 pid=2345) ",
// "(EngineCore_DP0 pid=132) ", "(RayWorkerWrapper pid=38, ip=10.0.0.2) ",
// and Ray's label of a task or an actor without a name, "(pid=45601) ",
// "(pid=45601, ip=10.0.0.2) " (the node's address when it is not the
// driver's: one pid on two nodes is two processes); and torchrun's
// "[rank1]: " (its --tee / local ranks' filter).
var workerRe = lazyre.New(`\(((?:[A-Za-z_][\w]* )?(?:rank=\d+ )?pid=\d+(?:, ip=[^)]*)?)\)|\[(rank\d+)\]:`)

// origin returns what a message's prefix says of the program or process
// that printed it: the pytest test (testID), else the worker process
// (workerRe: "VllmWorker rank=7 pid=10948", "rank1"), else the markdown
// table row it is a cell of (tableRow); "" when it says none. Messages
// of two origins are two OOMs however alike: one process's memory is not
// another's.
func origin(prefix string) string {
	if t := testID(prefix); t != "" {
		return t
	}
	if m := workerRe.FindStringSubmatch(prefix); m != nil {
		return m[1] + m[2]
	}
	return tableRow(prefix)
}

// tableRow returns the cells before a message in a markdown table's row
// ("| Qwen2.5-0.5B | 50% | hf_ckpt | oom | 0 | 8 | ... | "), spaces
// collapsed, as "table row | Qwen2.5-0.5B | 50% | hf_ckpt | ...": a
// results table lists one run a row, and rows whose other cells differ
// are different runs (a model, a setting, a scenario), however alike the
// messages cut to the cell's width. "" when the prefix is not a row with
// at least two cells before the message.
func tableRow(prefix string) string {
	p := strings.TrimSpace(prefix)
	if !strings.HasPrefix(p, "|") || !strings.HasSuffix(p, "|") || strings.Count(p, "|") < 3 {
		return ""
	}
	return "table row " + strings.Join(strings.Fields(p), " ")
}

// sameInWorkers notes, on each of reports that are one message printed
// by several worker processes (the same generation and text, two or more
// origins), that the others failed the same way: each is its own OOM, a
// process with its own GPU memory, and the cause and fix read for one
// hold for each.
func sameInWorkers(reports []*Report) {
	type key struct{ gen, text string }
	groups := map[key][]*Report{}
	var order []key
	for _, r := range reports {
		if r.msg == nil || r.snapshot || r.origin == "" {
			continue
		}
		k := key{string(r.Generation), r.Text}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		var who, rows []string
		tests, table := true, true
		for _, r := range g {
			if !slices.Contains(who, r.origin) {
				who = append(who, r.origin)
				if len(r.Sources) > 0 {
					rows = append(rows, fmt.Sprintf("%s:%d", r.Sources[0].Path, r.Sources[0].Line))
				}
			}
			tests = tests && testID(r.msg.Prefix) != ""
			table = table && strings.HasPrefix(r.origin, "table row ")
		}
		if len(who) < 2 {
			// One process's OOMs (a line Ray folded others into after
			// the first, the same pid's): no other process's failure.
			continue
		}
		note := fmt.Sprintf("%d worker processes printed this same message (%s): each is counted as its own OOM, a process with its own GPU memory; the message gives no figure that tells them apart, so what is said here of one holds for each", len(who), strings.Join(who, "; "))
		if tests {
			// pytest names the test, not the process: tests run one
			// after another in one process unless a plugin (xdist)
			// spreads them over workers.
			note = fmt.Sprintf("%d tests failed with this same message (%s): each is counted as its own OOM; the log does not say whether they ran in one process, one after the other with the same memory held, or in separate workers; the message gives no figure that tells them apart, so what is said here of one holds for each", len(who), strings.Join(who, "; "))
		}
		if table {
			// Cells of a results table: a row per run.
			note = fmt.Sprintf("%d rows of a table whose other cells differ hold this same message (%s): a row per run (another model, setting or scenario), so each is counted as its own OOM; the message as the cell holds it gives no figure that tells them apart", len(who), strings.Join(rows, ", "))
		}
		for _, r := range g {
			r.Notes = append(r.Notes, note)
		}
	}
}

// testID returns the pytest test a message's prefix names, "" when none.
func testID(prefix string) string {
	if m := testIDRe.FindStringSubmatch(prefix); m != nil {
		return m[1]
	}
	return ""
}

// addMessage folds a message into the report.
func (r *Report) addMessage(m Message, src Source, filter *callsite.FrameFilter) {
	r.Sources = append(r.Sources, src)
	r.Occurrences++
	if m.Folded > 0 {
		r.addFolded(m, src)
	}
	if r.Exception == "" {
		r.Exception = m.Exception
	}
	if r.Process == "" {
		if w := workerRe.FindStringSubmatch(m.Prefix); w != nil {
			r.Process = w[1] + w[2]
		}
	}
	if r.caller == "" {
		r.caller = callerOf(m)
	}
	if r.stackCall == "" {
		r.stackCall, r.stackCallAt = stackCallOf(m.Frames)
	}
	if len(r.Stack) == 0 && len(m.Frames) > 0 {
		r.Stack = oomUserStack(m.Frames, filter)
		if i := callsite.InnermostUser(r.Stack); i >= 0 {
			r.Frame = r.Stack[i]
		}
		r.reraisedSite(m)
		r.reportedSite(m)
		r.tfInternalSite(m)
	}
	if r.msg != nil && !repeatsStart(r, m) {
		return
	}
	mm := m.Message
	r.msg, r.origin = &mm, origin(mm.Prefix)
	if len(m.Coarse) > 0 && !r.snapshot {
		c := m
		r.coarse = &c
	}
	r.Generation, r.Text, r.Reason = m.Generation, m.Text, m.Reason
	if !parsed(m.Generation) {
		if m.Requested > 0 && !r.snapshot {
			r.RequestedBytes, r.SegmentBytes = m.Requested, m.Requested // printed before the message was cut
		}
		if m.Generation == pytorchtext.GenPaddle && !r.snapshot {
			// Paddle's allocated memory and the GPU's available memory.
			if r.Device < 0 {
				r.Device = m.Device
			}
			r.ReservedBytes, r.DeviceFreeBytes = m.Reserved, m.Free
		}
		if m.Generation == pytorchtext.GenCuPy && !r.snapshot {
			r.ReservedBytes, r.AllowedBytes = m.Reserved, m.Allowed // the pool's bytes, its limit
		}
		if m.Generation == pytorchtext.GenTF && !r.snapshot && m.Allowed >= 0 && m.Allocated >= 0 {
			r.tfLimit, r.tfInUse = m.Allowed, m.Allocated
		}
		if m.Generation == pytorchtext.GenTheano && !r.snapshot {
			// The driver's free and total memory (cudaMemGetInfo) where
			// Theano's CUDA back-end printed them.
			r.DeviceFreeBytes, r.DeviceTotalBytes = m.Free, m.Total
		}
		if (m.Generation == pytorchtext.GenTF || m.Generation == pytorchtext.GenXLA || m.Generation == pytorchtext.GenCUDAError || m.Generation == pytorchtext.GenTheano) && r.Device < 0 {
			r.Device = m.Device // "/device:GPU:d", XLA's "device ordinal d", llama.cpp's "on device d", Theano's start-up line
		}
		if m.Generation == pytorchtext.GenKVCache && !r.snapshot {
			if dev, free, total, _, _, ok := pytorchtext.VLLMStartupFigures(m.Text); ok {
				// vLLM's start-up check: the GPU's figures it printed.
				r.DeviceFreeBytes, r.DeviceTotalBytes = free, total
				if r.Device < 0 {
					r.Device = dev
				}
			}
		}
		if m.Generation == pytorchtext.GenXLA && !r.snapshot && m.Total >= 0 {
			// The TPU compiler's count of a core's HBM (XLATPUHBM).
			r.DeviceTotalBytes = m.Total
		}
		if m.Generation == pytorchtext.GenCUDAError && !r.snapshot && (m.Total >= 0 || m.Free >= 0) && pytorchtext.CheckForm(m.Text) != "catboost-pool" {
			// XLA's cudaMallocAsync allocator's cuMemGetInfo, logged
			// after its failure (exact bytes); XGBoost's free memory
			// alone ("- Free memory: N"); PaddlePaddle's at start-up.
			// CatBoost's free memory is its pool's, not the GPU's: its
			// note says it.
			r.DeviceTotalBytes, r.DeviceFreeBytes = m.Total, m.Free
		}
		if m.Generation == pytorchtext.GenHAMi && !r.snapshot {
			r.AllowedBytes = m.Allowed // the pod's limit
			if r.Device < 0 {
				r.Device = m.Device
			}
		}
		if m.Generation == pytorchtext.GenCut && !r.snapshot {
			// The figures printed whole before the cut.
			if r.Device < 0 {
				r.Device = m.Device
			}
			r.DeviceTotalBytes, r.DeviceFreeBytes, r.ProcessInUseBytes = m.Total, m.Free, m.ProcessInUse
			r.OtherProcesses, r.AllowedBytes = m.Processes, m.Allowed
			r.AllocatedBytes = m.Allocated // 1.x prints it right after the total
			r.PrivatePoolBytes = m.PrivatePools
			switch {
			case m.ReservedUnallocated >= 0 && m.Allocated >= 0:
				// 2.x cut after its last figure ("and 4.84 GiB is rese").
				r.takeReserved(m.Allocated+m.ReservedUnallocated, m.Allocated, 0)
			case m.Reserved >= 0 && m.Allocated >= 0:
				// 1.x cut inside the words after its reserved memory.
				r.takeReserved(m.Reserved, m.Allocated, pytorchtext.SizeTolerance(m.Reserved)+pytorchtext.SizeTolerance(m.Allocated))
			}
		}
		return
	}
	if r.Device < 0 {
		r.Device = m.Device
	}
	r.backend = m.Backend
	if m.Generation == pytorchtext.GenMPS {
		// PyTorch's MPS heaps, this process's Metal memory and the high
		// watermark limit; nothing of the device (see GenMPS).
		r.ProcessInUseBytes, r.AllowedBytes = m.ProcessInUse, m.Allowed
		if !r.snapshot {
			r.RequestedBytes, r.SegmentBytes, r.ReservedBytes = m.Requested, m.Requested, m.Reserved
		}
		return
	}
	r.DeviceTotalBytes = m.Total
	r.ProcessInUseBytes = m.ProcessInUse
	r.OtherProcesses = m.Processes
	r.AllowedBytes = m.Allowed
	r.PrivatePoolBytes = m.PrivatePools
	msgReserved := m.Reserved
	if m.Generation == pytorchtext.Gen2 {
		msgReserved = m.Allocated + m.ReservedUnallocated
	}
	if !r.snapshot {
		r.RequestedBytes, r.SegmentBytes = m.Requested, m.Requested
		r.DeviceFreeBytes = m.Free
		if m.Backend == "XPU" && m.Free >= 0 && m.Total >= 0 && msgReserved >= 0 && near(m.Free, m.Total-msgReserved) {
			// XPUCachingAllocator prints total - reserved as the free
			// memory of a device without the ext_intel_free_memory
			// aspect: no measurement.
			r.DeviceFreeBytes = -1
			r.Notes = append(r.Notes, fmt.Sprintf("the %s free printed is the GPU's total less PyTorch's reserved memory, the estimate PyTorch prints on an XPU device that cannot report its free memory: what the GPU really had free, and what else held it, is unknown", r.size(m.Free)))
		}
		ruTol := int64(0)
		if m.Generation == pytorchtext.Gen1 && !m.Cached {
			ruTol = pytorchtext.SizeTolerance(m.Reserved) + pytorchtext.SizeTolerance(m.Allocated)
		}
		if m.Generation == pytorchtext.GenAsync {
			// cudaMallocAsync: freed memory goes back to CUDA's pool,
			// which the message does not show.
			r.AllocatedBytes, r.ReservedBytes, r.ReservedUnallocatedBytes = m.Allocated, msgReserved, -1
			return
		}
		r.takeReserved(msgReserved, m.Allocated, ruTol)
		return
	}
	// The snapshot's numbers are exact; say when the message disagrees.
	if !near(m.Allocated, r.AllocatedBytes) && (m.PrivatePools < 0 || !near(m.Allocated-m.PrivatePools, r.AllocatedBytes)) {
		r.Notes = append(r.Notes, fmt.Sprintf("the message says %s allocated by PyTorch, the snapshot's state at the OOM %s", pytorchtext.FormatSize(m.Allocated), pytorchtext.FormatSize(r.AllocatedBytes)))
	}
	if !near(msgReserved, r.ReservedBytes) {
		r.Notes = append(r.Notes, fmt.Sprintf("the message says %s reserved by PyTorch, the snapshot's state at the OOM %s", pytorchtext.FormatSize(msgReserved), pytorchtext.FormatSize(r.ReservedBytes)))
	}
}

// addFolded counts the lines Ray's log deduplication folded into m's
// line (see FoldedOOMs) and says where the count came from.
func (r *Report) addFolded(m Message, src Source) {
	unseen := m.Folded - 1
	first := fmt.Sprintf("the first of its kind, which Ray prints on its own before folding the rest, is line %d", m.FoldedFirst)
	if m.FoldedFirst == 0 {
		unseen++
		first = "the first of its kind, which Ray prints on its own before folding the rest, is not in the input"
	}
	r.FoldedOOMs += unseen
	r.Notes = append(r.Notes, fmt.Sprintf("Ray's log deduplication folded %d lines of this kind into line %d (\"[repeated %dx across cluster]\"; it is the last of them), and %s: at least %d such out-of-memory lines were printed, %d of them not in the input, each counted here as an OOM; Ray folds lines that match but for words holding a digit, so theirs may be other GPUs, other sizes, other workers (or one printed again): RAY_DEDUP_LOGS=0, or each worker's log under /tmp/ray/session_latest/logs, shows them all",
		m.Folded, src.Line, m.Folded, first, m.Folded+1, unseen))
}

// takeReserved sets PyTorch's allocated and reserved memory from a
// message, the reserved but unallocated memory between them (ruTol: the
// rounding of that difference when derived from two printed figures),
// and whether that memory would have held the request had it been one
// block (unknown when the request lies within the rounding).
func (r *Report) takeReserved(reserved, allocated, ruTol int64) {
	r.AllocatedBytes, r.ReservedBytes = allocated, reserved
	r.ReservedUnallocatedBytes, r.ruTol = reserved-allocated, ruTol
	ru := r.ReservedUnallocatedBytes
	if tol := pytorchtext.SizeTolerance(ru); ru >= 0 && r.RequestedBytes > 0 && (ru+tol-r.ruTol >= r.RequestedBytes || ru+tol+r.ruTol < r.RequestedBytes) {
		fit := ru+pytorchtext.SizeTolerance(ru) >= r.RequestedBytes
		r.WouldFitIfContiguous = &fit
	}
}

// siblingMaxBytes bounds what each of a job's own workers holds on a GPU
// it does not compute on: a CUDA context and a little more (300 MiB to
// about 1.5 GiB, by CUDA release, GPU and the libraries loaded).
const siblingMaxBytes = 2 << 30

// siblingProcesses says, for the processes an OOM message lists beside
// this one on GPU device, whether they look like the job's own workers
// (ranks, data-loader or pool processes) that each made a CUDA context on
// that GPU: two or more, each holding at most siblingMaxBytes, and alike
// (the largest within a tenth, or 16 MiB, of the smallest). It returns
// the words for the evidence and the advice (per-rank device selection
// first, then the other-processes advice), or "", "" when they do not.
// Consecutive PIDs (within twice their count) are said when they are so.
func siblingProcesses(procs []pytorchtext.Process, device int) (string, string) {
	if len(procs) < 2 {
		return "", ""
	}
	lo, hi := procs[0].Bytes, procs[0].Bytes
	minPID, maxPID := procs[0].PID, procs[0].PID
	for _, p := range procs {
		lo, hi = min(lo, p.Bytes), max(hi, p.Bytes)
		minPID, maxPID = min(minPID, p.PID), max(maxPID, p.PID)
	}
	if hi > siblingMaxBytes || lo <= 0 || hi > lo+max(lo/10, 16<<20) {
		return "", ""
	}
	gpu := "this GPU"
	if device >= 0 {
		gpu = fmt.Sprintf("GPU %d", device)
	}
	each := pytorchtext.FormatSize(lo) + " each"
	if hi != lo {
		each = pytorchtext.FormatSize(lo) + " to " + pytorchtext.FormatSize(hi) + " each"
	}
	w := fmt.Sprintf("the %d other processes hold alike small amounts (%s), as a job's own workers (ranks, data-loader or pool processes) do when each makes a CUDA context on %s", len(procs), each, gpu)
	if maxPID-minPID < int64(2*len(procs)) {
		w += fmt.Sprintf(" (their PIDs, %d to %d, are consecutive, as processes started together are)", minPID, maxPID)
	}
	a := fmt.Sprintf("if they are this job's workers, make each select its own GPU before its first CUDA call (torch.cuda.set_device(local_rank), or CUDA_VISIBLE_DEVICES set per process) and keep workers that need no GPU from touching CUDA, so that none makes a context on %s; if they are not, free the GPU from them (nvidia-smi lists them) or give this job a GPU of its own (CUDA_VISIBLE_DEVICES, the scheduler's exclusive mode)", gpu)
	return w, a
}

// cutOthers is the other-processes cause of a message cut short after
// its list of processes ("Process P has N memory in use.") without its
// "this process has" sentence and PyTorch's figures: PyTorch lists every
// process NVML reports on the GPU but its own, which it names "this
// process" (in another PID namespace, a container's, its own PID does not
// match and it is listed as a Process too). So this process is one of
// those listed or none of them, and the others hold at least the sum of
// all but the largest. Where that is at least othersMoveRatio times what
// the request lacked (the request less the free memory, plus tightSlack)
// and at least otherProcessesMin, other processes held the room whichever
// is this one; else nil.
func (r *Report) cutOthers() *Cause {
	if len(r.OtherProcesses) < 2 || !r.known(r.RequestedBytes) || !r.known(r.DeviceFreeBytes) || r.known(r.ProcessInUseBytes) {
		return nil
	}
	var listed, largest int64
	var from []int64
	var who []string
	for _, p := range r.OtherProcesses {
		listed += p.Bytes
		largest = max(largest, p.Bytes)
		from = append(from, p.Bytes)
		who = append(who, fmt.Sprintf("process %d: %s", p.PID, r.size(p.Bytes)))
	}
	least := listed - largest
	short := max(0, r.RequestedBytes-r.DeviceFreeBytes) + tightSlack
	if least < otherProcessesMin || least < othersMoveRatio*short {
		return nil
	}
	ev := fmt.Sprintf("the GPU had %s free for a %s request; the message lists %s: if this process is one of them (listed by PID, as in a container), it is at most the largest, and the others hold at least %s, %d times what the request lacked with cudaMalloc's own margin (%s); the message was cut before PyTorch's figures, so they cannot say more",
		r.size(r.DeviceFreeBytes), r.size(r.RequestedBytes), strings.Join(who, "; "), r.sizeFrom(least, from...), least/short, r.size(short))
	return &Cause{Name: CauseOtherProcesses, Evidence: ev,
		Numbers: map[string]int64{"other_processes_at_least_bytes": least, "device_free_bytes": r.DeviceFreeBytes, "requested_bytes": r.RequestedBytes},
		Advice:  "free the GPU from the other processes (nvidia-smi lists them) or give this job a GPU of its own (CUDA_VISIBLE_DEVICES, the scheduler's exclusive mode)"}
}

// cutAfterFigures reports a message cut short after every figure a cause
// is judged from: the request, the GPU's free memory, PyTorch's allocated
// and reserved memory (2.x's last figure, "and 4.84 GiB is rese", is
// whole once its unit is). What the cut took (the advice after them) is
// not needed.
func (r *Report) cutAfterFigures() bool {
	return r.msg != nil && r.msg.Generation == pytorchtext.GenCut && !r.snapshot && r.RequestedBytes > 0 &&
		r.known(r.DeviceFreeBytes) && r.known(r.AllocatedBytes) && r.known(r.ReservedBytes)
}

// ortCauses judges an ONNX Runtime BFC arena OOM (pytorchtext.GenORT):
// the arena's own limit reached ("Available memory of A ..."): cause
// memory-limit; a request of 2^60 bytes or more: capacity, a size
// computed wrong; else the device allocator failed, on a device the
// message does not name: a note, no cause.
func (r *Report) ortCauses() {
	const arenaAdvice = "arena_extend_strategy kSameAsRequested grows the arena by what is asked rather than by doubling, and the run option memory.enable_memory_arena_shrinkage returns its unused regions after a run"
	switch avail := pytorchtext.ArenaAvailable(r.Text); {
	case !r.known(r.RequestedBytes):
		r.Notes = append(r.Notes, "ONNX Runtime's BFC arena could not allocate, but its size was not read ("+r.Reason+"): the cause cannot be told")
	case avail >= 0 && r.known(r.RequestedBytes) && avail < r.RequestedBytes:
		r.Causes = append(r.Causes, Cause{Name: CauseMemoryLimit,
			Evidence: fmt.Sprintf("ONNX Runtime's BFC arena had %s left under its memory limit for a %s request: the arena refuses to grow past the limit set on it (gpu_mem_limit of the CUDA execution provider, or max_mem of its arena config) before asking the device, which may have had memory free", r.size(avail), r.size(r.RequestedBytes)),
			Numbers:  map[string]int64{"arena_available_bytes": avail, "requested_bytes": r.RequestedBytes},
			Advice:   "raise gpu_mem_limit (or the arena's max_mem), or need less at once (smaller inputs or batch); " + arenaAdvice})
	case r.RequestedBytes >= 1<<60:
		r.Causes = append(r.Causes, Cause{Name: CauseCapacity,
			Evidence: fmt.Sprintf("the request was %s, at least 1 EiB (2^60 bytes), more than any device holds", r.size(r.RequestedBytes)),
			Numbers:  map[string]int64{"requested_bytes": r.RequestedBytes},
			Advice:   "the size was most likely computed wrong (an overflowed or negative size, a shape from a dynamic axis gone wrong); a smaller batch will not help: look at the node's input shapes"})
		r.Notes = append(r.Notes, "ONNX Runtime's BFC arena was asked for "+r.size(r.RequestedBytes)+", far more than any GPU or host has: the size was computed wrong, not a shortage of memory")
	default:
		r.Notes = append(r.Notes, "ONNX Runtime's BFC arena could not grow by the "+r.size(r.RequestedBytes)+" request: its device allocator failed for the extension it wanted and for 90% steps of it down to the request itself (cudaMalloc under the CUDA execution provider, the host's allocator under the CPU's: the arena serves both and the message does not say which); the arena keeps what it took for the session's life, so the session itself may hold most of the device; the message gives no figure of the device, so the cause cannot be told: nvidia-smi (or ORT's verbose log, 'Extending BFCArena for Cuda' and 'Total allocated bytes') tells what held it; smaller inputs, gpu_mem_limit, or "+arenaAdvice)
	}
}

// asyncBeyondNote says why a cudaMallocAsync OOM on a full GPU gets no
// cause when beyond bytes (the device's total less its free memory and
// PyTorch's allocated memory) are more than a CUDA context and libraries
// hold: they are this process's pool as well as other processes', and
// the message (c10/cuda/CUDAMallocAsyncAllocator.cpp) splits them not.
// seg is the request in bytes.
func (r *Report) asyncBeyondNote(seg, beyond int64) string {
	free, total := r.sizeOf(r.DeviceFreeBytes, r.DeviceTotalBytes)
	return fmt.Sprintf("the GPU had %s free of %s for a %s request; PyTorch had %s allocated, and the other %s in use is this process's cudaMallocAsync pool (memory PyTorch freed, which the pool keeps: PyTorch does not trim it before raising this error), its CUDA context and libraries, and any other process on the GPU: the message does not tell them apart, so the cause is not determined; torch.cuda.memory_reserved() at the error gives the pool's size under this backend, nvidia-smi the other processes; if the pool holds most of it, its free memory could not serve the request (split, or freed on another stream not yet synchronized) and torch.cuda.empty_cache() returns it to the GPU",
		free, total, r.size(seg), r.size(r.AllocatedBytes), r.sizeFrom(beyond, r.DeviceTotalBytes, r.DeviceFreeBytes, r.AllocatedBytes))
}

// oomUserStack hides framework frames of a traceback.
func oomUserStack(full []callsite.Frame, filter *callsite.FrameFilter) []callsite.Frame {
	var out []callsite.Frame
	for _, f := range full {
		if !filter.Hidden(f) && !cudaBindingFrame(f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return callsite.FrameworkSite(full)
	}
	return out
}

// zeroRequestNote says why a request of 0 bytes gives no cause. PyTorch
// never tries to allocate 0 bytes: allocate() and raw_alloc() of its CUDA
// allocators (c10/cuda/CUDACachingAllocator.cpp, CUDAMallocAsyncAllocator
// .cpp) return a null pointer for size 0 without calling malloc, and the
// caching allocator's message prints the segment it needed, 2 MiB at the
// least (a request is rounded up to 512 bytes, a small one to a 2 MiB
// segment). A 0 is therefore no request that failed: free memory, a
// block or a segment of 0 bytes explains nothing.
func (r *Report) zeroRequestNote() string {
	what := "the message says \"Tried to allocate 0 bytes\""
	switch {
	case r.event && r.msg == nil:
		what = "the [OutOfMemory] event gives 0 bytes requested"
	case r.snapshot:
		what = "the snapshot's oom entry gives 0 bytes requested"
	}
	return what + ", a request PyTorch never fails: its allocators return no memory for 0 bytes without trying to allocate any, and the caching allocator prints the segment it needed, at least 2 MiB; the input was edited or garbled, so the request that failed, and the cause, cannot be told (the job's own log, or a snapshot at the OOM, gives them)"
}

// size renders bytes as PyTorch's messages do ("4.19 GiB", "0 bytes").
func size(b int64) string { return pytorchtext.FormatSize(b) }

// size renders bytes as PyTorch's messages do, except a size that is one
// of r's coarse figures (r.Coarse), which is printed as its message gave
// it ("24 GiB", not "24.00 GiB"). Sizes are told by value: text about an
// OOM names its figures, and a derived size that equals one is that
// size to the same precision.
func (r *Report) size(b int64) string {
	for _, f := range r.Coarse {
		if f.Bytes == b {
			return f.Text()
		}
	}
	return size(b)
}

// requestWords names the request for a note: its size then of, or,
// where the message's figure was not read (cut, or in a form not parsed),
// words that say so, never "-1 bytes".
func (r *Report) requestWords(of string) string {
	if !r.known(r.RequestedBytes) {
		return "(the request's size was not read)"
	}
	return r.size(r.RequestedBytes) + of
}

// sizeFrom renders v, a size r computed from the figures from, as
// Report.size does; where some of those are coarse (r.Coarse), with no
// more decimals than their allowances together leave true: 24 GiB less
// 6.93 GiB is "17 GiB", not "17.07 GiB".
func (r *Report) sizeFrom(v int64, from ...int64) string {
	var tol int64
	for _, b := range from {
		for _, f := range r.Coarse {
			if f.Bytes == b && b >= 0 {
				tol += f.Tolerance
				break
			}
		}
	}
	if tol == 0 {
		return r.size(v)
	}
	return pytorchtext.FormatWithin(v, tol+pytorchtext.SizeTolerance(v))
}

// sizeOf is the package's sizeOf with r's sizes (see Report.size).
func (r *Report) sizeOf(part, whole int64) (string, string) { return sizes.Of(part, whole, r.size) }

// noteCoarse sets r.Coarse from the coarse figures of the message whose
// figures r holds (r.coarse): each as the report holds it, where it still
// has the message's value (a snapshot's or stats' exact figure replaces
// it), and the reserved or reserved-but-unallocated memory r derived from
// a coarse figure, with the allowances added.
func (r *Report) noteCoarse() {
	r.Coarse = nil
	m := r.coarse
	if m == nil || r.snapshot {
		return
	}
	fields := map[string]struct {
		name string
		v    *int64
	}{"requested": {"requested_bytes", &r.RequestedBytes}, "total": {"device_total_bytes", &r.DeviceTotalBytes},
		"free": {"device_free_bytes", &r.DeviceFreeBytes}, "process_in_use": {"process_in_use_bytes", &r.ProcessInUseBytes},
		"allowed": {"allowed_bytes", &r.AllowedBytes}, "allocated": {"allocated_bytes", &r.AllocatedBytes},
		"private_pools": {"private_pool_bytes", &r.PrivatePoolBytes}, "reserved_unallocated": {"reserved_unallocated_bytes", &r.ReservedUnallocatedBytes},
		"reserved": {"reserved_bytes", &r.ReservedBytes}}
	tol := map[string]int64{} // the allowance of each coarse figure of the message, by field
	for _, f := range m.Coarse {
		mm := m.Message
		mv := f.In(&mm)
		if mv == nil || *mv < 0 {
			continue
		}
		tol[f.Field] = f.Tolerance
		name, v := "", (*int64)(nil)
		if to, ok := fields[f.Field]; ok {
			name, v = to.name, to.v
		} else if n, ok := strings.CutPrefix(f.Field, "process "); ok {
			if i, err := strconv.Atoi(n); err == nil && i < len(r.OtherProcesses) && r.OtherProcesses[i].PID == m.Processes[i].PID {
				name, v = fmt.Sprintf("other_processes[%d].bytes", i), &r.OtherProcesses[i].Bytes
			}
		}
		if v != nil && *v == *mv {
			r.Coarse = append(r.Coarse, CoarseFigure{Figure: name, Bytes: *v, Tolerance: f.Tolerance, Typed: f.Typed})
		}
	}
	// A figure the report derives from two of the message's, one of them
	// coarse: as coarse as their allowances together.
	allowance := func(field string, v int64) int64 {
		if t, ok := tol[field]; ok {
			return t
		}
		return pytorchtext.SizeTolerance(v)
	}
	derived := func(name string, v, t int64) {
		if v < 0 || t <= pytorchtext.SizeTolerance(v) {
			return
		}
		for _, f := range r.Coarse {
			if f.Figure == name {
				return
			}
		}
		r.Coarse = append(r.Coarse, CoarseFigure{Figure: name, Bytes: v, Tolerance: t})
	}
	_, a := tol["allocated"]
	_, ru := tol["reserved_unallocated"]
	_, res := tol["reserved"]
	switch {
	case m.Generation == pytorchtext.Gen2 && (a || ru) && r.ReservedBytes == m.Allocated+m.ReservedUnallocated:
		derived("reserved_bytes", r.ReservedBytes, allowance("allocated", m.Allocated)+allowance("reserved_unallocated", m.ReservedUnallocated))
	case m.Generation == pytorchtext.Gen1 && !m.Cached && (a || res) && r.ReservedUnallocatedBytes == m.Reserved-m.Allocated:
		derived("reserved_unallocated_bytes", r.ReservedUnallocatedBytes, allowance("reserved", m.Reserved)+allowance("allocated", m.Allocated))
	}
}

// counted counts n things in English: "1 block", "2 blocks".
func counted[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sizeOf renders a part and its whole as size does, with the decimals
// that tell them apart where they differ (see sizes.Of).
func sizeOf(part, whole int64) (string, string) { return sizes.Of(part, whole, size) }

// findCauses classifies the OOM from the numbers its inputs gave.
func (r *Report) findCauses() {
	defer r.uniqueCauses()
	if r.Host() {
		req := "the request"
		if r.known(r.RequestedBytes) {
			req = "the " + r.size(r.RequestedBytes) + " request"
		}
		r.Notes = append(r.Notes, "a host-memory allocation failure the profiler recorded (an [OutOfMemory] event of the CPU, c10 DeviceType 0): PyTorch's CPU allocator could not get "+req+" from the machine's RAM (the job's log says \"DefaultCPUAllocator: not enough memory\"); not a GPU out-of-memory error, so no GPU cause is judged; the machine's memory (the container's limit, other processes, the kernel's OOM killer in dmesg) tells what held it")
		if !r.known(r.RequestedBytes) {
			r.Notes = append(r.Notes, "the event gives no size for the request that failed (see the warnings)")
		}
		return
	}
	if r.event && r.msg == nil {
		if r.known(r.DeviceTotalBytes) {
			r.Notes = append(r.Notes, "from a profiler trace's [OutOfMemory] event alone: it gives the request and PyTorch's allocated and reserved memory, and the trace the GPU's total (deviceProperties), not the GPU's free memory nor where the free memory was, so only a request that with the memory in use is larger than the GPU is judged; the OOM message in the job's log (give it too) or a snapshot tells the cause")
		} else {
			r.Notes = append(r.Notes, "from a profiler trace's [OutOfMemory] event alone: it gives the request and PyTorch's allocated and reserved memory, not the GPU's total or free memory nor where the free memory was, so only a request larger than any GPU is judged; the OOM message in the job's log (give it too) or a snapshot tells the cause")
		}
	}
	judge := false // a cut message whose figures are all there (cutAfterFigures)
	if !parsed(r.Generation) && !r.snapshot && !(r.event && r.msg == nil) {
		tpu := r.Generation == pytorchtext.GenXLA && pytorchtext.XLATPUHBM(r.Text)
		if req := r.RequestedBytes; r.known(req) && tpu {
			if c, ok := r.tpuCapacity(req); ok {
				r.Causes = append(r.Causes, c)
			}
		} else if r.known(req) && r.Generation != pytorchtext.GenExa && r.Generation != pytorchtext.GenCut &&
			(req > beyondAnyGPU || r.known(r.DeviceTotalBytes) && !r.freeAboveTotal() && req > r.DeviceTotalBytes+pytorchtext.SizeTolerance(req)+pytorchtext.SizeTolerance(r.DeviceTotalBytes)) {
			// One request larger than the GPU's total, or than any GPU:
			// whatever else the message lacks, nothing could have made
			// room (as for PyTorch's own messages: see aloneCapacity).
			r.Causes = append(r.Causes, r.aloneCapacity(req))
		}
		switch r.Generation {
		case pytorchtext.GenCUDAError:
			note := r.cudaErrorNote()
			if r.msg != nil && backendWords[r.msg.Backend] != nil {
				// ROCm's StreamExecutor: rocm-smi, not nvidia-smi.
				note = backendWords[r.msg.Backend].Replace(note)
			}
			r.Notes = append(r.Notes, note)
			if r.msg != nil && r.msg.Backend == "Vulkan" && strings.Contains(r.Text, "exceeds device memory allocation limit") && len(r.Causes) == 0 {
				// ggml_vk_create_buffer refused it before allocating.
				r.Causes = append(r.Causes, Cause{Name: CauseAllocationLimit,
					Evidence: fmt.Sprintf("llama.cpp's Vulkan backend refused the %s buffer itself (\"Requested buffer size exceeds device memory allocation limit\"): one allocation larger than the Vulkan device allows in one piece (its maxMemoryAllocationSize or maxBufferSize), checked before any allocation; no memory ran short, and the lines give no other figure", r.size(r.RequestedBytes)),
					Numbers:  map[string]int64{"requested_bytes": r.RequestedBytes},
					Advice:   "make the buffer smaller than the device's limit (vulkaninfo lists maxMemoryAllocationSize): a smaller batch (--ubatch-size) or context (--ctx-size) for a compute buffer; more memory, or GGML_VK_FORCE_MAX_ALLOCATION_SIZE (which only lowers the limit), does not help"})
			}
		case pytorchtext.GenExa:
			// The size is not printed, but at least 2^60 bytes is more
			// than any GPU holds: capacity, as a request beyond any GPU
			// with its size printed is (beyondAnyGPU).
			r.Causes = append(r.Causes, Cause{Name: CauseCapacity,
				Evidence: "the request was at least 1 EiB (\"more than 1EB\": allocate() prints no size that large), more than any GPU holds",
				Numbers:  map[string]int64{"requested_at_least_bytes": 1 << 60},
				Advice:   "the size was most likely computed wrong; a smaller batch will not help: look at the size asked for at the traceback's line"})
			r.Notes = append(r.Notes, "the request was at least 1 EiB (2^60 bytes; PyTorch's allocator refuses such a size before it tries: \"more than 1EB\"), far more than any GPU has: the size was computed wrong (an overflowed or negative size, a corrupted shape, a size received from a collective that went out of step), not a shortage of memory; a smaller batch will not help: look at the size asked for at the traceback's line")
		case pytorchtext.GenUnparsed:
			r.Notes = append(r.Notes, "the message does not parse ("+r.Reason+"); nothing was read from it")
		case pytorchtext.GenCut:
			if r.cutAfterFigures() {
				r.Notes = append(r.Notes, "the message was cut short ("+r.Reason+") after its figures: the request, the GPU's free memory and PyTorch's allocated and reserved memory were read whole, and the causes below are judged from them; the words after the cut are not read")
				judge = true
				break
			}
			if r.cutTooBig() {
				break
			}
			if !r.known(r.RequestedBytes) {
				// Read from its GPU on and cut: neither end is there.
				r.Notes = append(r.Notes, "the message was cut at both ends ("+r.Reason+"; it starts at its GPU, without the size asked for): only the figures between were read, so the cause cannot be told; the full message (the job's own log rather than a collector's, or str(e)) gives it")
				r.checkImpossible()
				break
			}
			if c := r.cutOthers(); c != nil {
				r.Causes = append(r.Causes, *c)
				r.Notes = append(r.Notes, "the message was cut short ("+r.Reason+") after its list of processes: PyTorch's memory is not among the figures read, but the request, the GPU's free memory and the processes listed decide the cause (see it); the full message (the job's own log rather than a collector's, or str(e)) gives the rest")
				r.checkImpossible()
				break
			}
			r.Notes = append(r.Notes, "the message was cut short ("+r.Reason+"): only the figures printed before the cut were read, PyTorch's memory is not among them, so the cause cannot be told; the full message (the job's own log rather than a collector's, or str(e)) gives it")
			r.checkImpossible()
		case pytorchtext.GenCuPy:
			held := ""
			if r.known(r.ReservedBytes) {
				held = "; the pool held " + r.size(r.ReservedBytes) + " from CUDA (\"allocated so far\": in use and cached; some releases count the request in it)"
			}
			if r.known(r.AllowedBytes) {
				held += ", against the limit of " + r.size(r.AllowedBytes) + " set on it (MemoryPool.set_limit)"
			}
			r.Notes = append(r.Notes, "CuPy's memory pool could not allocate the request (cupy.cuda.memory.OutOfMemoryError)"+held+"; the message gives no GPU total or free memory; CuPy frees the pool's cached blocks and retries before raising this, so the memory was held by arrays still referenced, or outside the pool (other processes, libraries)")
		case pytorchtext.GenXLA:
			r.Notes = append(r.Notes, r.xlaNote())
		case pytorchtext.GenPaddle:
			held := ""
			if r.known(r.ReservedBytes) {
				held = ", with " + r.size(r.ReservedBytes) + " allocated by Paddle"
			}
			free := ""
			if r.known(r.DeviceFreeBytes) && held != "" {
				free = " and " + r.size(r.DeviceFreeBytes) + " available on the GPU"
			} else if r.known(r.DeviceFreeBytes) {
				free = ", with " + r.size(r.DeviceFreeBytes) + " available on the GPU"
			}
			r.Notes = append(r.Notes, "PaddlePaddle's GPU allocator could not allocate "+r.requestWords("")+held+free+" (its message gives no GPU total, so what else held the GPU cannot be told from it): nvidia-smi at the time tells whether other processes did; a smaller batch, or FLAGS_fraction_of_gpu_memory_to_use / FLAGS_allocator_strategy (auto_growth takes memory as needed rather than a share up front), change what Paddle takes")
		case pytorchtext.GenORT:
			r.ortCauses()
		case pytorchtext.GenTheano:
			r.theanoNote()
		case pytorchtext.GenDirectML:
			r.Notes = append(r.Notes, "torch-directml (PyTorch on DirectX 12 through DirectML, on Windows) could not allocate a tensor of "+r.requestWords("")+": the message gives no device, total or free memory, so whether this process's tensors or other programs (the desktop, a browser, another model) filled the GPU's video memory cannot be told from it; Task Manager's GPU page (dedicated and shared GPU memory) at the time would tell. PyTorch's CUDA allocator settings (PYTORCH_CUDA_ALLOC_CONF, torch.cuda.empty_cache()) do not apply to DirectML: a smaller batch, resolution or model, or the program's low-VRAM mode, needs less")
		case pytorchtext.GenHAMi:
			if u := pytorchtext.HAMiWouldUse(r.Text); u > 0 && r.known(r.AllowedBytes) {
				would, limit := r.sizeOf(u, r.AllowedBytes)
				r.Causes = append(r.Causes, Cause{Name: CauseMemoryLimit,
					Evidence: fmt.Sprintf("HAMi-core refused the allocation on device %d: with it, the pod's GPU memory would have been %s, over the pod's limit of %s (nvidia.com/gpumem); the GPU itself may have had memory free", r.Device, would, limit),
					Numbers:  map[string]int64{"would_use_bytes": u, "allowed_bytes": r.AllowedBytes, "over_by_bytes": u - r.AllowedBytes},
					Advice:   "the pod reached the GPU memory HAMi gives it, not the GPU's: raise the pod's nvidia.com/gpumem (or gpumem-percentage), or reduce what its processes need"})
			}
			r.Notes = append(r.Notes, "HAMi-core (libvgpu.so, the library HAMi preloads into the pod's processes) counts every process of the pod on the device against the limit, the CUDA context included, and reports the limit as the GPU's total to nvidia-smi and PyTorch; its line gives the usage with the request, not the request alone; the program may have caught the CUDA error (no traceback then)")
		case pytorchtext.GenTF:
			if pytorchtext.BFCFailure(r.Text) {
				// The BFC allocator's own record, with no TensorFlow
				// OOM message after it in the inputs.
				r.Notes = append(r.Notes, "TensorFlow's BFC allocator could not allocate "+r.requestWords(" of")+" GPU memory ("+r.Text+"): its failure record, logged at WARNING level before the error it raises (not the \"caller indicates that this is not a failure\" record of an allocation that may be retried smaller, which is no OOM); TensorFlow's own error after it is not in the inputs, or does not say OOM (an InternalError \"Dst tensor is not initialized\" is how an eager copy to the GPU fails then); the chunk dump the allocator prints next (\"Current allocation summary follows.\", \"Sum Total of in-use chunks\") tells what was in use")
				break
			}
			if strings.HasPrefix(r.Text, "Ran out of GPU memory") {
				// TF 1.x's form with the bytes.
				r.Notes = append(r.Notes, "TensorFlow could not allocate "+r.requestWords(" of")+" GPU memory for an op (ResourceExhaustedError: "+r.Text+"; the op's node follows the message): the message gives the request alone, not what was in use; the BFC allocator's log before it (\"ran out of memory trying to allocate\", \"Sum Total of in-use chunks\") tells what was, and TensorFlow's RunOptions(report_tensor_allocations_upon_oom=True) lists the tensors")
				break
			}
			if strings.HasPrefix(r.Text, "EigenAllocator for GPU") {
				r.Notes = append(r.Notes, tfEigenNote(r))
				break
			}
			if strings.HasPrefix(r.Text, "failed to allocate memory") {
				// TF 2's eager form: the op's name only.
				r.Notes = append(r.Notes, "TensorFlow could not allocate an op's output in eager mode (ResourceExhaustedError: "+r.Text+"): the message gives neither the tensor's shape nor its bytes; the BFC allocator's log before it (\"ran out of memory trying to allocate\", \"Sum Total of in-use chunks\") tells what was in use")
				break
			}
			r.tfTensorCause()
			r.Notes = append(r.Notes, r.tfTensorNote())
		case pytorchtext.GenKVCache:
			r.Notes = append(r.Notes, r.kvCacheNote())
		case pytorchtext.GenBatchFinder:
			r.Notes = append(r.Notes, batchFinderNote)
		case pytorchtext.GenTHC:
			r.Notes = append(r.Notes, "PyTorch 0.x (THC) ran out of memory: its message has no sizes; the line of the failing CUDA call is in the message, the Python line in the traceback")
		}
		if !judge {
			return
		}
	}
	if r.Generation == pytorchtext.GenMPS && r.msg != nil {
		r.mpsCauses()
		return
	}
	if r.Generation == pytorchtext.GenAsync && r.msg != nil {
		r.Notes = append(r.Notes, "PyTorch's cudaMallocAsync allocator (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync): the memory PyTorch frees stays reserved in CUDA's memory pool of this process (PyTorch sets the pool's release threshold to UINT64_MAX), and the message prints what PyTorch allocated but not the pool's reserved memory; fragmentation cannot be told from it")
		switch {
		case r.Reason == pytorchtext.AsyncDeviceZeroCut && r.after != nil:
			r.Notes = append(r.Notes, "the message is only \"Allocation on device \": PyTorch wrote the device's index as a character, and device 0's is a NUL byte, which ends the exception's text (fixed in pytorch/pytorch#168369), so its figures (Currently allocated, Requested, Device limit, Free) were never printed, here or in any log of the run: the OOM is certain (torch.OutOfMemoryError), its request and the GPU's free memory are not known", r.asyncAfterNote())
		case r.Reason == pytorchtext.AsyncDeviceZeroCut:
			r.Notes = append(r.Notes, "the message is only \"Allocation on device \": PyTorch wrote the device's index as a character, and device 0's is a NUL byte, which ends the exception's text (fixed in pytorch/pytorch#168369), so its figures (Currently allocated, Requested, Device limit, Free) were never printed, here or in any log of the run: the OOM is certain (torch.OutOfMemoryError), its cause cannot be told from it; a snapshot or torch.cuda.memory_stats() taken at the error, or nvidia-smi at the time, would tell what held the GPU")
		case r.Reason != "" && !r.known(r.RequestedBytes) && !r.known(r.AllocatedBytes):
			r.Notes = append(r.Notes, "only the message's first line is here (a UI or a logger often shows just that): its figures (Currently allocated, Requested, Device limit, Free) are on the lines after it in the full log or traceback")
		case r.Reason != "":
			r.Notes = append(r.Notes, "the message was cut short ("+r.Reason+"): only the figures before the cut were read")
		}
		if r.after != nil && r.Reason != pytorchtext.AsyncDeviceZeroCut {
			r.Notes = append(r.Notes, r.asyncAfterNote())
		}
	}
	r.checkImpossible()
	req := r.RequestedBytes
	if !r.known(req) && r.msg != nil && pytorchtext.RequestBeyondRead(r.Text) {
		// Printed, but above the 4 EiB gpuleak reads: more than any GPU,
		// capacity as a request of "more than 1EB" is (GenExa).
		r.Causes = append(r.Causes, Cause{Name: CauseCapacity,
			Evidence: "the request printed is more than 4 EiB (see the warnings), more than any GPU holds: no release of cached memory, by this process or others, and no limit could have made room",
			Numbers:  map[string]int64{"requested_at_least_bytes": 1 << 62},
			Advice:   "the size was most likely computed wrong (an overflowed or negative size, a corrupted shape); a smaller batch will not help: look at the size asked for at the traceback's line"})
		r.backendTerms()
		return
	}
	if !r.known(req) {
		// Every cause below weighs the request against free memory.
		switch {
		case r.event && r.msg == nil:
			r.Notes = append(r.Notes, "the [OutOfMemory] event gives no size for the request that failed (see the warnings): whether free memory would have held it, and so the cause, cannot be told")
		case r.Reason == "":
			r.Notes = append(r.Notes, "the message gives no size for the request that failed (see the warnings): whether free memory would have held it, and so the cause, cannot be told")
		}
		if r.msg != nil && parsed(r.msg.Generation) {
			// A message read from its GPU on (cut before its request):
			// its processes are read as in a whole one.
			r.reconcileProcesses()
		}
		r.backendTerms()
		return
	}
	if req == 0 {
		// No allocation of 0 bytes fails: see zeroRequestNote.
		r.Notes = append(r.Notes, r.zeroRequestNote())
		r.backendTerms()
		return
	}
	block, seg := req, r.SegmentBytes
	tol := int64(0)
	if r.snapshot {
		block = snapshot.AllocRoundSize(req)
	} else {
		tol = pytorchtext.SizeTolerance(req)
	}
	fromMessage := r.msg != nil && (parsed(r.msg.Generation) || judge)
	if fromMessage {
		r.reconcileProcesses()
	}
	freeTol := int64(0)
	if fromMessage {
		freeTol = pytorchtext.SizeTolerance(r.DeviceFreeBytes)
	}
	// The GPU had room for the segment when CUDA reported at least that
	// much free. A message without a limit ("allowed") that reports barely
	// more free than the segment is a GPU that was full all the same:
	// cudaMalloc needs some room of its own (page tables, granularity).
	slack := int64(0)
	if fromMessage && !r.known(r.AllowedBytes) && !r.snapshot {
		slack = tightSlack
	}
	gpuRoom := r.known(r.DeviceFreeBytes) && r.DeviceFreeBytes+freeTol >= seg-tol+slack
	// noCap: a message that would print "N allowed" had a cap been set
	// (1.8 to 2.0 and 2.2+; before 1.8 no cap could be set; 2.1, "total
	// capacty", sets one without printing it) and prints none.
	noCap := fromMessage && !r.snapshot && !r.known(r.AllowedBytes) && !r.msg.Typo
	gpuFull := r.known(r.DeviceFreeBytes) && !gpuRoom
	var shortfall int64 = -1
	marginOnly := false // full only for want of cudaMalloc's own room
	if gpuFull {
		shortfall = seg - r.DeviceFreeBytes
		if shortfall <= 0 {
			// Free memory matched the request but not the room cudaMalloc
			// needs of its own: what was missing is that margin.
			shortfall, marginOnly = seg+slack-r.DeviceFreeBytes, true
		}
	}
	var full []Cause // causes that alone explain the shortfall

	// Capacity that nothing else can fix: the live memory and the request
	// are more than the whole GPU. alone: the request by itself is more
	// than the whole GPU, or than any GPU (beyondAnyGPU) where the inputs
	// do not give its total.
	alone := block > beyondAnyGPU
	tooBig := alone
	if r.known(r.DeviceTotalBytes) && !r.freeAboveTotal() {
		live := max(r.AllocatedBytes, 0)
		totalTol := tol + pytorchtext.SizeTolerance(r.DeviceTotalBytes)
		alone = alone || block > r.DeviceTotalBytes+totalTol
		tooBig = alone || live+block > r.DeviceTotalBytes+totalTol
	}

	// Fragmentation: enough free memory in PyTorch's segments, no block
	// large enough.
	frag := false
	addFrag := func(ev string, nums map[string]int64, advice string) {
		frag = true
		ev += r.growthRefused(gpuRoom, seg)
		nums["requested_bytes"] = req
		if shortfall >= 0 {
			nums["shortfall_bytes"] = shortfall
		}
		full = append(full, Cause{Name: CauseFragmentation, Evidence: ev, Numbers: nums, Advice: advice})
	}
	// Statistics taken at this OOM that count no segment for reserved
	// memory show expandable segments: a message's reserved but
	// unallocated memory is then what the OOM's release could not unmap
	// (pages shared with live blocks), and setting them is no advice.
	msgExp, msgAdvice := "", r.fragmentationAdvice()
	if r.Memory == nil && r.Stats != nil && r.Stats.ExpandableReserved() > 0 {
		msgExp, msgAdvice = "expandable segments were already on (the allocator statistics at this OOM count no segment for the reserved memory): ", expandableFragmentationAdvice
	}
	switch {
	case tooBig:
	case r.Memory != nil && r.expandable:
		// Expandable segments map and unmap pages where requests need
		// them; what stays free is in partial pages between live blocks.
		free := r.Memory.Total.FreeBytes
		// The OOM itself says the segment could not grow (the GPU or a
		// limit refused more pages).
		if free >= block && r.LargestFreeBlockBytes < block {
			addFrag(fmt.Sprintf("expandable segments were already on, yet %s stayed free inside them in pieces between live blocks (the largest where the request could go: %s) and the %s request found no room",
				r.size(free), r.size(r.LargestFreeBlockBytes), r.size(req)),
				map[string]int64{"reserved_free_bytes": free, "largest_free_block_bytes": r.LargestFreeBlockBytes}, expandableFragmentationAdvice)
		} else if free >= block {
			r.Notes = append(r.Notes, fmt.Sprintf("expandable segments: the %s free in PyTorch's segments is unmapped and mapped again where a request needs it, so it is not fragmentation", r.size(free)))
		}
	case r.Memory != nil:
		fixed := r.Memory.Fixed
		if fixed.FreeBytes >= block && r.LargestFreeBlockBytes < block {
			addFrag(fmt.Sprintf("%s reserved but free in PyTorch's segments (%d free blocks in %d segments) would have held the %s request had it been contiguous; the largest free block where it could go was %s",
				r.size(fixed.FreeBytes), fixed.FreeBlocks, fixed.Segments, r.size(req), r.size(r.LargestFreeBlockBytes)),
				map[string]int64{"reserved_free_bytes": fixed.FreeBytes, "largest_free_block_bytes": r.LargestFreeBlockBytes, "free_blocks": int64(fixed.FreeBlocks)},
				r.fragmentationAdvice())
		}
	case fromMessage && (req == smallSegment || req == oldSmallSegment):
		// A printed 2 MiB is a small-pool segment (requests up to
		// 1 MiB), 1 MiB before PyTorch 1.1 (kSmallAlloc): reserved-but-
		// unallocated memory may all be in the large pool, which small
		// requests never use.
		if r.known(r.ReservedUnallocatedBytes) && r.ReservedUnallocatedBytes > 0 {
			// Nor whether that memory would have held it contiguous: it
			// may be the large pool's (the postmortem said it would, beside
			// this note: the session-42 tester).
			r.WouldFitIfContiguous = nil
			r.Notes = append(r.Notes, fmt.Sprintf("the request was for the small pool (a %s segment for an allocation of 1 MiB or less): the message does not say how much of the %s reserved but unallocated is in that pool, so fragmentation cannot be told", r.size(req), r.size(r.ReservedUnallocatedBytes)))
		}
	case r.known(r.ReservedUnallocatedBytes) && r.ruTol > 0 && r.ReservedUnallocatedBytes+r.ruTol >= req && r.ReservedUnallocatedBytes-r.ruTol < req:
		// 1.x prints reserved and allocated, each rounded: their
		// difference is known to within both roundings.
		r.Notes = append(r.Notes, fmt.Sprintf("%s reserved but unallocated is reserved minus allocated, each rounded to two decimals: it lies between %s and %s, so whether it would have held the %s request cannot be told",
			r.size(r.ReservedUnallocatedBytes), r.size(max(r.ReservedUnallocatedBytes-r.ruTol, 0)), r.size(r.ReservedUnallocatedBytes+r.ruTol), r.size(req)))
	case r.known(r.ReservedUnallocatedBytes) && r.ReservedUnallocatedBytes+pytorchtext.SizeTolerance(r.ReservedUnallocatedBytes)-r.ruTol >= req && gpuRoom && noCap:
		// The allocator reserves a new segment when no free block fits:
		// with room on the GPU and no cap, split blocks did not stop it.
		r.Notes = append(r.Notes, fmt.Sprintf("%s reserved by PyTorch but unallocated would have held the %s request had it been contiguous, but the GPU had %s free and the message shows no per-process limit: PyTorch would have reserved a new %s segment instead, so split free blocks do not explain this OOM",
			r.size(r.ReservedUnallocatedBytes), r.size(req), r.size(r.DeviceFreeBytes), r.size(seg)))
	case r.known(r.ReservedUnallocatedBytes) && r.ReservedUnallocatedBytes+pytorchtext.SizeTolerance(r.ReservedUnallocatedBytes)-r.ruTol >= req && gpuRoom && !r.snapshot && !r.known(r.AllowedBytes):
		// With room on the GPU, split blocks stop the allocator only where
		// a per-process limit refused the new segment; a message that
		// cannot print one (PyTorch 2.1's "total capacty") or inputs
		// without a message do not show whether one was set, so neither
		// is the cause stated (the limit's own note below says so).
		why := "the inputs do not show whether one was set"
		if r.msg != nil && r.msg.Typo {
			why = "PyTorch 2.1's message does not print one"
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%s reserved by PyTorch but unallocated would have held the %s request had it been contiguous, but the GPU had %s free: PyTorch reserves a new %s segment when no free block fits, so split free blocks explain this OOM only if a per-process limit (set_per_process_memory_fraction) refused that segment, and %s",
			r.size(r.ReservedUnallocatedBytes), r.size(req), r.size(r.DeviceFreeBytes), r.size(seg), why))
	case r.known(r.ReservedUnallocatedBytes) && r.ReservedUnallocatedBytes+pytorchtext.SizeTolerance(r.ReservedUnallocatedBytes)-r.ruTol >= req:
		addFrag(msgExp+fmt.Sprintf("%s reserved by PyTorch but unallocated would have held the %s request had it been contiguous (the message does not give the largest free block; a snapshot would)", r.size(r.ReservedUnallocatedBytes), r.size(req)),
			map[string]int64{"reserved_unallocated_bytes": r.ReservedUnallocatedBytes}, msgAdvice)
	case gpuFull && r.known(r.ReservedUnallocatedBytes) && r.ReservedUnallocatedBytes+pytorchtext.SizeTolerance(r.ReservedUnallocatedBytes)+r.ruTol >= shortfall+tightSlack && (marginOnly || r.ReservedUnallocatedBytes-r.ruTol >= shortfall+tightSlack || r.ruTol == 0):
		// Smaller than the request, but the GPU would have had room had
		// PyTorch's split free blocks been free on the GPU.
		addFrag(msgExp+fmt.Sprintf("%s reserved by PyTorch but unallocated sits in split blocks that cannot be returned to the GPU; had it been free there, the GPU's %s free would have become %s, enough for the %s request with the %s margin gpuleak allows cudaMalloc for its own page tables and granularity (as it was, %s was missing)",
			r.size(r.ReservedUnallocatedBytes), r.size(r.DeviceFreeBytes), r.size(r.DeviceFreeBytes+r.ReservedUnallocatedBytes), r.size(seg), r.size(tightSlack), r.size(shortfall)),
			map[string]int64{"reserved_unallocated_bytes": r.ReservedUnallocatedBytes}, msgAdvice)
	}

	// Other processes: the GPU lacked room and others held it.
	var others int64 = -1
	othersEstimated := false
	// The figures others and UnlistedBytes are computed from (sizeFrom).
	var othersFrom, unlistedFrom []int64
	unlistedCounted := false // UnlistedBytes is in others
	// What other processes must have held for the GPU to have had room
	// for the segment: the shortfall, and beyond it the room cudaMalloc is
	// given of its own (slack, gpuRoom's rule), less the roundings of the
	// request and the free memory.
	othersNeed := shortfall
	if gpuFull && !marginOnly {
		othersNeed = max(0, shortfall+slack-freeTol-tol)
	}
	if gpuFull && r.known(r.DeviceTotalBytes) {
		used := r.DeviceTotalBytes - r.DeviceFreeBytes
		var listed int64
		for _, p := range r.OtherProcesses {
			listed += p.Bytes
			othersFrom = append(othersFrom, p.Bytes)
		}
		switch {
		case r.known(r.ProcessInUseBytes):
			// What no listed process accounts for; below
			// otherProcessesMin it is the rounding of the message.
			r.UnlistedBytes = max(0, used-r.ProcessInUseBytes-listed)
			unlistedFrom = append([]int64{r.DeviceTotalBytes, r.DeviceFreeBytes, r.ProcessInUseBytes}, othersFrom...)
			others = listed
			// Memory no listed process holds is not shown to be other
			// processes': the message lists compute processes only (not the
			// display's graphics ones), none in other containers, and not
			// what of this process NVML does not count. Like memory outside
			// PyTorch's allocator where no process is listed, it counts for
			// other processes from otherEstimatedMin on; on a device whose
			// GPU memory is the machine's RAM it is host memory
			// (unifiedMemory) from otherProcessesMin on.
			unlistedMin := int64(otherEstimatedMin)
			if r.unified != nil && r.unified.Sure {
				unlistedMin = otherProcessesMin
			}
			if r.UnlistedBytes >= unlistedMin {
				others += r.UnlistedBytes
				othersFrom = unlistedFrom
				unlistedCounted = true
			}
		case len(r.OtherProcesses) > 0:
			others = listed
		case r.known(r.ReservedBytes):
			others, othersEstimated = max(0, used-r.ReservedBytes), true
			othersFrom = []int64{r.DeviceTotalBytes, r.DeviceFreeBytes, r.ReservedBytes}
		}
	}
	if !tooBig && others >= 0 && others >= othersNeed && others >= otherProcessesMin && (!othersEstimated || others >= otherEstimatedMin) {
		var who []string
		for _, p := range r.OtherProcesses {
			w := fmt.Sprintf("process %d: %s", p.PID, r.size(p.Bytes))
			if q, ok := r.ProcessNames[p.PID]; ok {
				if q.Name != "" {
					w = fmt.Sprintf("process %d, %s: %s", p.PID, q.Name, r.size(p.Bytes))
				}
				if q.UsedBytes >= 0 {
					w += fmt.Sprintf(", %s in %s", r.size(q.UsedBytes), q.Source)
				}
			}
			who = append(who, w)
		}
		unlisted := ""
		if r.UnlistedBytes > otherProcessesMin {
			unlisted = fmt.Sprintf("%s not attributed to a process the message lists (%s)", r.sizeFrom(r.UnlistedBytes, unlistedFrom...), unlistedHolders)
			if unlistedCounted {
				who, unlisted = append(who, unlisted), ""
			}
		}
		short := fmt.Sprintf("%s short", r.sizeFrom(shortfall, seg, r.DeviceFreeBytes))
		if marginOnly {
			short = fmt.Sprintf("barely more than the request: %s short of the %s margin gpuleak allows cudaMalloc for its own page tables and granularity", r.size(shortfall), r.size(tightSlack))
		}
		free, total := r.sizeOf(r.DeviceFreeBytes, r.DeviceTotalBytes)
		ev := fmt.Sprintf("the GPU had %s free of %s for a %s request (%s); other processes held %s", free, total, r.size(seg), short, r.sizeFrom(others, othersFrom...))
		if othersEstimated {
			ev = fmt.Sprintf("the GPU had %s free of %s for a %s request (%s); %s was in use outside PyTorch's allocator (the message lists no processes: this includes this process's CUDA context and libraries)", free, total, r.size(seg), short, r.sizeFrom(others, othersFrom...))
		} else if len(who) > 0 {
			ev += " (" + strings.Join(who, "; ") + ")"
		}
		if unlisted != "" {
			// Not counted for them (see unlistedMin).
			ev += ", besides " + unlisted
		}
		if r.known(r.ProcessInUseBytes) {
			ev += fmt.Sprintf(", this process %s", r.size(r.ProcessInUseBytes))
			if out := r.ProcessInUseBytes - r.ReservedBytes; r.known(r.ReservedBytes) && out >= otherProcessesMin {
				ev += fmt.Sprintf(" (%s of it outside PyTorch's caching allocator: CUDA context, libraries, other allocators in the process)", r.sizeFrom(out, r.ProcessInUseBytes, r.ReservedBytes))
			}
		}
		advice := "free the GPU from the other processes (nvidia-smi lists them) or give this job a GPU of its own (CUDA_VISIBLE_DEVICES, the scheduler's exclusive mode)"
		if w, a := siblingProcesses(r.OtherProcesses, r.Device); w != "" {
			ev += "; " + w
			advice = a
		}
		name := CauseOtherProcesses
		if len(r.OtherProcesses) == 0 {
			if unlistedCounted {
				// No process to free is named: what holds the memory
				// is still to be found.
				advice = "find what holds the GPU beside this process (nvidia-smi, its graphics processes included, run on the host rather than in a container) and free it, or give this job a GPU of its own (CUDA_VISIBLE_DEVICES, the scheduler's exclusive mode)"
			}
			// Memory no listed process holds: on a unified-memory
			// device, host memory (see unifiedMemory).
			name, ev, advice = r.unifiedMemory(name, ev, advice, others)
		}
		full = append(full, Cause{Name: name, Evidence: ev,
			Numbers: map[string]int64{"other_processes_bytes": others, "device_free_bytes": r.DeviceFreeBytes, "device_total_bytes": r.DeviceTotalBytes, "shortfall_bytes": shortfall},
			Advice:  advice})
	}

	// Outside this process: from a snapshot alone (no total capacity),
	// a request larger than all this process held plus the GPU's free
	// memory could not have fit whatever this process released. The rest
	// of the GPU may be memory other processes held or memory the GPU does
	// not have: only where the same trace shows the GPU holding the
	// request beside what this process held (another OOM's free and
	// reserved memory) did others hold it. Else the cause cannot be told,
	// and a note, first, says what would tell.
	outside := false
	if gpuFull && !alone && !r.known(r.DeviceTotalBytes) && r.known(r.ReservedBytes) && seg > r.ReservedBytes+r.DeviceFreeBytes {
		outside = true
		if held := r.gpuAtLeast - r.DeviceFreeBytes - r.ReservedBytes; r.gpuAtLeast >= 0 && held >= shortfall {
			full = append(full, Cause{Name: CauseOutsideProcess,
				Evidence: fmt.Sprintf("the %s request is more than all this process held (%s reserved) and the GPU's %s free together; the GPU holds at least %s (free and reserved at the OOM of trace entry %d), so at least %s was held outside this process (other processes), more than the %s that was missing",
					r.size(seg), r.size(r.ReservedBytes), r.size(r.DeviceFreeBytes), r.size(r.gpuAtLeast), r.gpuAtLeastSeq, r.size(held), r.size(shortfall)),
				Numbers: map[string]int64{"segment_bytes": seg, "reserved_bytes": r.ReservedBytes, "device_free_bytes": r.DeviceFreeBytes, "device_at_least_bytes": r.gpuAtLeast, "outside_bytes": held, "shortfall_bytes": shortfall},
				Advice:  "run nvidia-smi (or keep the OOM message) to see what else holds the GPU: free it or give this job a GPU of its own"})
		} else {
			r.Notes = append([]string{fmt.Sprintf("the %s request is more than all this process held (%s reserved) and the GPU's %s free together, so nothing this process could release would have made room; the snapshot does not record the GPU's total memory, so whether the GPU is smaller than the request (one allocation larger than the GPU: check the size asked for at the traceback's line, or split the tensor) or other processes held the rest (free them, or give this job a GPU of its own) cannot be told: the OOM message (its total capacity and process lines) or nvidia-smi tells which",
				r.size(seg), r.size(r.ReservedBytes), r.size(r.DeviceFreeBytes))}, r.Notes...)
		}
	}

	// Accumulation: growing call sites hold most of the memory, and
	// their growth explains what was missing.
	if r.snapshot && !tooBig && !outside && r.AllocatedBytes > 0 && float64(r.accumulated) >= accumulationShare*float64(r.AllocatedBytes) {
		need := int64(-1) // what growth must explain
		switch {
		case gpuFull:
			need = shortfall
		case gpuRoom && r.known(r.AllowedBytes) && r.known(r.ReservedBytes):
			need = max(r.ReservedBytes+seg-r.AllowedBytes, 0)
		}
		if need < 0 || r.accumulated >= need {
			var parts []string
			var top snapshot.Site
			for _, s := range r.Sites {
				if s.Kind != callsite.Leak {
					continue
				}
				if len(parts) == 0 {
					top = s
				}
				if len(parts) < 3 {
					parts = append(parts, fmt.Sprintf("%s (%s) from %s", counted(s.Count, "block", "blocks"), r.size(s.Bytes), frameString(s.Frame)))
				}
			}
			grew, allocated := r.sizeOf(r.accumulated, r.AllocatedBytes)
			ev := fmt.Sprintf("memory grew from %s until the OOM: %s of the %s allocated (%s)", strings.Join(parts, ", "),
				grew, allocated, sizes.Percent(r.accumulated, r.AllocatedBytes))
			if need >= 0 {
				ev += fmt.Sprintf(", more than the %s that was missing", r.size(need))
			}
			if g := top.Growth; g != nil && g.Allocations > 0 {
				ev += fmt.Sprintf("; %d of the %d allocations made at %s were still held", g.Kept, g.Allocations, frameString(top.Frame))
			}
			nums := map[string]int64{"accumulated_bytes": r.accumulated, "allocated_bytes": r.AllocatedBytes, "top_site_bytes": top.Bytes, "top_site_blocks": int64(top.Count)}
			if need >= 0 {
				nums["shortfall_bytes"] = need
			}
			full = append(full, Cause{Name: CauseAccumulation, Evidence: ev, Numbers: nums,
				Advice: fmt.Sprintf("fix the retention at %s: store loss.item() or .detach() rather than tensors that keep their graph, clear lists, dicts and caches of tensors, delete models and optimizers you replace", frameString(top.Frame))})
		}
	}

	// One allocation larger than an Intel GPU allows in one piece, with
	// room for it on the GPU.
	limit, overLimit := r.xpuAllocationLimit(block, seg, tol, alone)
	if overLimit {
		full = append(full, limit)
	}

	// Memory limit: the GPU had room, the process's cap refused. Only a
	// message's "allowed", or a snapshot (whose trace entry reports the
	// GPU's free memory at the failed cudaMalloc), shows a cap.
	// With fragmentation found too, the cap is a cause only where the
	// numbers show it was reached.
	if gpuRoom {
		capTol := pytorchtext.SizeTolerance(r.AllowedBytes) + pytorchtext.SizeTolerance(max(r.ReservedBytes, 0)) + tol
		switch {
		case frag && !r.known(r.AllowedBytes):
		case r.known(r.AllowedBytes) && r.known(r.ReservedBytes) && r.ReservedBytes+seg+capTol < r.AllowedBytes:
			if frag || overLimit {
				break
			}
			r.Notes = append(r.Notes, fmt.Sprintf("%s allowed, yet PyTorch's %s reserved and the %s segment fit under it, and the GPU had %s free: the allocation failed for a reason the message does not show",
				r.size(r.AllowedBytes), r.size(r.ReservedBytes), r.size(seg), r.size(r.DeviceFreeBytes)))
		case r.known(r.AllowedBytes):
			ev := fmt.Sprintf("%s allowed (torch.cuda.set_per_process_memory_fraction) while the GPU had %s free", r.size(r.AllowedBytes), r.size(r.DeviceFreeBytes))
			if r.known(r.ReservedBytes) {
				ev += fmt.Sprintf(": PyTorch had %s reserved and needed %s more", r.size(r.ReservedBytes), r.size(seg))
			}
			full = append(full, Cause{Name: CauseMemoryLimit, Evidence: ev,
				Numbers: map[string]int64{"allowed_bytes": r.AllowedBytes, "device_free_bytes": r.DeviceFreeBytes, "reserved_bytes": r.ReservedBytes, "segment_bytes": seg},
				Advice:  memoryLimitAdvice})
		case r.snapshot:
			ev := fmt.Sprintf("the GPU had %s free, yet PyTorch could not reserve %s more than its %s: a per-process limit refused it (torch.cuda.set_per_process_memory_fraction; the OOM message gives it as \"N allowed\")",
				r.size(r.DeviceFreeBytes), r.size(seg), r.size(r.ReservedBytes))
			full = append(full, Cause{Name: CauseMemoryLimit, Evidence: ev,
				Numbers: map[string]int64{"device_free_bytes": r.DeviceFreeBytes, "reserved_bytes": r.ReservedBytes, "segment_bytes": seg},
				Advice:  memoryLimitAdvice})
		case r.msg != nil && r.msg.Typo:
			r.Notes = append(r.Notes, fmt.Sprintf("the GPU reported %s free, enough for the %s request; PyTorch 2.1's message does not print a per-process limit, so one (set_per_process_memory_fraction) may have refused it, or the allocation failed for another reason the message does not show (another process allocating at the same moment, a MIG slice or a driver or runtime fault)", r.size(r.DeviceFreeBytes), r.size(seg)))
		case overLimit:
		case r.msg != nil && len(r.OtherProcesses) > 0 && r.othersWithRoom(seg) != nil:
			full = append(full, *r.othersWithRoom(seg))
		case r.unified != nil && r.unified.Sure && !r.snapshot:
			full = append(full, r.unifiedRoom(seg))
		default:
			note := fmt.Sprintf("the GPU reported %s free, enough for the %s request, and the message shows no per-process limit: the allocation failed for a reason the message does not show (another process allocating at the same moment, a MIG slice or a driver or runtime fault)", r.size(r.DeviceFreeBytes), r.size(seg))
			switch {
			case r.unified != nil:
				note += fmt.Sprintf("; %s:%d names %s: if the OS uses the GPU's memory as system RAM, the free figure does not count what the OS, the page cache and other programs hold of it", r.unifiedPath, r.unified.Line, r.unified.Device)
			case r.backend == "HIP":
				note += "; on ROCm the device may be an APU (Strix Halo, MI300A and others share the machine's RAM; the message cannot tell, a log line naming the device, gfx1151 or MI300A, would): there the free figure is what the driver's limit on GPU memory (the GTT/TTM pool) leaves, not the RAM the OS can hand out, which the OS, the page cache and other programs use uncounted, so on an APU host memory running short is the likely reason (free -g and the page cache at the time tell)"
			}
			r.Notes = append(r.Notes, note)
		}
	}

	// Capacity: this process's working set is what filled the GPU.
	var causes []Cause
	self := r.ProcessInUseBytes
	if !r.known(self) {
		self = r.ReservedBytes
	}
	// cudaMallocAsync: what the GPU held beyond PyTorch's allocations is
	// this process's pool (memory PyTorch freed, which CUDA's pool keeps),
	// its CUDA context and other processes; the message does not split it.
	var asyncBeyond int64 = -1
	if r.Generation == pytorchtext.GenAsync && !r.snapshot && gpuFull && r.known(r.DeviceTotalBytes) && r.known(r.AllocatedBytes) {
		asyncBeyond = max(0, r.DeviceTotalBytes-r.DeviceFreeBytes-r.AllocatedBytes)
	}
	capacity := func() Cause {
		free, total := r.sizeOf(r.DeviceFreeBytes, r.DeviceTotalBytes)
		ev := fmt.Sprintf("the GPU had %s free of %s for a %s request", free, total, r.size(seg))
		if alone {
			return r.aloneCapacity(req)
		}
		if tooBig {
			ev = fmt.Sprintf("the %s request and the %s PyTorch had allocated are more than the GPU's %s: no release of cached memory or other processes could have made room",
				r.size(req), r.size(max(r.AllocatedBytes, 0)), r.size(r.DeviceTotalBytes))
		} else if marginOnly {
			ev += fmt.Sprintf(" (only %s above the request: %s short of the %s of room gpuleak allows cudaMalloc for its own page tables and granularity)", r.size(r.DeviceFreeBytes-seg), r.size(shortfall), r.size(tightSlack))
		} else if shortfall > 0 {
			ev += fmt.Sprintf(" (%s short)", r.sizeFrom(shortfall, seg, r.DeviceFreeBytes))
		}
		if r.known(self) && !r.known(r.ProcessInUseBytes) {
			// The message lists no processes: what it gives of this one is
			// PyTorch's reserved memory, not all the process held.
			ev += fmt.Sprintf("; PyTorch's allocator held %s", r.size(self))
		} else if r.known(self) {
			ev += fmt.Sprintf("; this process held %s", r.size(self))
			if r.known(r.ReservedBytes) && self-r.ReservedBytes >= otherEstimatedMin {
				ev += fmt.Sprintf(" (%s of it outside PyTorch's caching allocator: CUDA context, libraries, other allocators in the process)", r.sizeFrom(self-r.ReservedBytes, self, r.ReservedBytes))
			}
		}
		if asyncBeyond >= 0 && !tooBig {
			ev += fmt.Sprintf("; PyTorch had %s allocated, and the %s beyond it is this process's cudaMallocAsync pool, its CUDA context and any other process (the message does not split them): too little for other processes to have filled the GPU",
				r.size(r.AllocatedBytes), r.sizeFrom(asyncBeyond, r.DeviceTotalBytes, r.DeviceFreeBytes, r.AllocatedBytes))
		}
		switch {
		case others > 0 && othersEstimated:
			ev += fmt.Sprintf(", %s outside PyTorch's allocator (this process's CUDA context included: the message lists no processes)", r.sizeFrom(others, othersFrom...))
		case others >= 0 && !othersEstimated && r.UnlistedBytes >= otherProcessesMin:
			// Listed processes and what none of them holds, apart: the
			// latter is not shown to be other processes' (unlistedHolders).
			if len(r.OtherProcesses) > 0 {
				listed := others
				if unlistedCounted {
					listed -= r.UnlistedBytes
				}
				ev += fmt.Sprintf(", other processes %s", r.size(listed))
			}
			ev += fmt.Sprintf(", %s not attributed to a process the message lists (%s)", r.sizeFrom(r.UnlistedBytes, unlistedFrom...), unlistedHolders)
		case others >= 0 && !othersEstimated:
			ev += fmt.Sprintf(", other processes %s", r.sizeFrom(others, othersFrom...))
		}
		// Only when the live memory and the request exceed the GPU is the
		// working set larger than it; else the GPU was full of what this
		// process and others held, which no other cause explains alone.
		advice := "the GPU was full and no cause above explains it alone: need less at the peak (a smaller batch, activation checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast), offloading to the CPU, sharding across GPUs) or free what else holds the GPU"
		if tooBig {
			advice = "the working set is larger than the GPU: a smaller batch, activation checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast), offloading to the CPU, or sharding across GPUs (FSDP, DeepSpeed ZeRO)"
		} else if overLimit {
			// Second to the allocation limit, which explains it alone.
			advice = "if the allocation limit above is not the cause, the GPU had no room beyond the request: need less at the peak (a smaller batch, activation checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast), offloading to the CPU, sharding across GPUs) or free what else holds the GPU"
		} else if marginOnly {
			// The free memory exceeded the request: "full" would read as
			// contradicting the figure above it.
			advice = strings.Replace(advice, "the GPU was full and", "the GPU had no room beyond the request and", 1)
		}
		return Cause{Name: CauseCapacity, Evidence: ev,
			Numbers: map[string]int64{"device_total_bytes": r.DeviceTotalBytes, "device_free_bytes": r.DeviceFreeBytes, "process_bytes": self, "segment_bytes": seg, "allocated_bytes": r.AllocatedBytes},
			Advice:  advice}
	}
	switch {
	case tooBig:
		causes = append(causes, capacity())
	case len(full) == 0 && asyncBeyond >= otherEstimatedMin:
		r.Notes = append(r.Notes, r.asyncBeyondNote(seg, asyncBeyond))
	case (len(full) == 0 || overLimit && len(full) == 1) && gpuFull && r.known(r.DeviceTotalBytes):
		// Beside an allocation limit, the GPU was full all the same
		// (free memory only just above the request).
		full = append(full, capacity())
	case frag && len(full) == 1 && gpuFull && r.known(r.DeviceTotalBytes) && r.Memory == nil && r.known(r.ReservedUnallocatedBytes) && r.known(r.ReservedBytes) &&
		float64(r.ReservedUnallocatedBytes) < capacitySlackShare*float64(r.ReservedBytes):
		// Fragmentation from a message's figures on a full GPU, with
		// the reserved but unallocated memory a sliver of the reserve:
		// no defragmenting gains more than that sliver, so the next
		// request a little larger fails all the same; the working set
		// fills the GPU, and capacity stands beside fragmentation.
		c := capacity()
		c.Evidence += fmt.Sprintf("; the %s reserved but unallocated is %.1f%% of the %s reserved: making it contiguous (max_split_size_mb, expandable segments) gains at most that much, so this job runs at the GPU's capacity and a slightly larger request fails all the same",
			r.size(r.ReservedUnallocatedBytes), 100*float64(r.ReservedUnallocatedBytes)/float64(r.ReservedBytes), r.size(r.ReservedBytes))
		c.Numbers["reserved_unallocated_bytes"] = r.ReservedUnallocatedBytes
		c.Advice = "the fragmentation above explains this request alone, but fixing it gains too little to last: need less at the peak (a smaller batch, activation checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast), offloading to the CPU, sharding across GPUs) or free what else holds the GPU"
		full = append(full, c)
	}
	if gpuFull && !r.known(r.DeviceTotalBytes) && !outside && !alone {
		r.Notes = append(r.Notes, fmt.Sprintf("the GPU had %s free for a %s request: whether other processes held the rest needs the GPU's total memory and its processes, which the OOM message gives", r.size(r.DeviceFreeBytes), r.size(seg)))
	}
	if len(full) == 0 && len(causes) == 0 && r.snapshot && !gpuFull && !gpuRoom {
		r.Notes = append(r.Notes, "the trace entry does not give the GPU's free memory: the cause cannot be told")
	}
	// Every cause here explains the whole shortfall alone. The one that
	// holds the most memory comes first (fragmentation: the memory split;
	// other processes: theirs; accumulation: the growth), then the
	// constraints (a limit, memory outside this process, capacity); ties
	// go to the most specific: what a change in this job fixes before
	// what needs more memory. Memory outside PyTorch's allocator estimated
	// from the totals (no process listed) includes this process's own CUDA
	// context and libraries: it counts for what is left once the most
	// those may hold (otherEstimatedMin) is taken off, the least other
	// processes can have held. So a 2-3 GiB estimate ranks after the
	// fragmentation the message states, and 30 GiB outside PyTorch
	// before 22 MiB of it.
	order := map[string]int{CauseFragmentation: 0, CauseOtherProcesses: 1, CauseUnifiedMemory: 1, CauseAccumulation: 2, CauseMemoryLimit: 3, CauseAllocationLimit: 3, CauseOutsideProcess: 4, CauseCapacity: 5}
	held := func(c Cause) int64 {
		switch c.Name {
		case CauseFragmentation:
			return max(c.Numbers["reserved_unallocated_bytes"], c.Numbers["reserved_free_bytes"])
		case CauseOtherProcesses, CauseUnifiedMemory:
			if othersEstimated {
				return max(0, c.Numbers["other_processes_bytes"]-otherEstimatedMin)
			}
			return c.Numbers["other_processes_bytes"]
		case CauseAccumulation:
			return c.Numbers["accumulated_bytes"]
		}
		return 0
	}
	sort.SliceStable(full, func(i, j int) bool {
		if a, b := held(full[i]), held(full[j]); a != b {
			return a > b
		}
		return order[full[i].Name] < order[full[j].Name]
	})
	r.Causes = append(causes, full...)
	if fromMessage && !r.snapshot && !r.known(r.DeviceFreeBytes) {
		if r.msg.Free < 0 && len(r.Causes) == 0 {
			r.Notes = append(r.Notes, "the message gives no free memory (Intel's XPU messages before PyTorch 2.7, and its extension's, do not print it): whether the GPU was full, and what else held it, cannot be told")
		}
		capTol := pytorchtext.SizeTolerance(r.AllowedBytes) + pytorchtext.SizeTolerance(max(r.ReservedBytes, 0)) + tol
		if r.known(r.AllowedBytes) && r.known(r.ReservedBytes) && r.ReservedBytes+seg+capTol < r.AllowedBytes {
			r.Notes = append(r.Notes, fmt.Sprintf("%s allowed, yet PyTorch's %s reserved and the %s segment fit under it: the cap did not refuse it", r.size(r.AllowedBytes), r.size(r.ReservedBytes), r.size(seg)))
		}
	}
	r.backendTerms()
}

// reraiseEngineNote is what an engine's words, re-raising a CUDA OOM
// whose message was read with them, add to that message's figures: where
// the engine was (vLLM's sampler warm-up, and its settings), or "" when
// the words name no such phase.
func reraiseEngineNote(text string) string {
	n, ok := pytorchtext.VLLMSamplerRequests(text)
	if !ok {
		return ""
	}
	reqs := "its dummy requests (max_num_seqs of them)"
	if n > 0 {
		reqs = fmt.Sprintf("%d dummy requests (max_num_seqs)", n)
	}
	return "vLLM met this OOM at start-up while warming up its sampler with " + reqs + ", after the weights, the KV cache and (where enabled) the CUDA graphs had taken their share: the KV cache, sized to fill gpu_memory_utilization × the GPU's total, left too little for the sampler's logits of that many sequences; lower max_num_seqs (fewer sequences' logits at once) or gpu_memory_utilization (a smaller KV cache, more room left)"
}

// kvCacheNote is the note of an LLM serving engine's KV cache failure at
// start-up (pytorchtext.GenKVCache): no allocation failed; the engine
// measured what its weights and a profiling run took of the GPU memory it
// may use and found too little left for its KV cache. The message gives
// none of the GPU's figures (V1's gives the KV cache needed and left).
func (r *Report) kvCacheNote() string {
	engine := pytorchtext.KVCacheEngine(r.Text)
	maxLen, needed, available, estimated := pytorchtext.KVCacheFigures(r.Text)
	if engine == "TGI" {
		return tgiWarmupNote(r.Text)
	}
	if n, ok := pytorchtext.VLLMSamplerRequests(r.Text); ok {
		reqs := "its dummy requests (max_num_seqs of them)"
		if n > 0 {
			reqs = fmt.Sprintf("%d dummy requests (max_num_seqs)", n)
		}
		return "vLLM ran out of GPU memory at start-up while warming up its sampler with " + reqs + ", after the weights, the KV cache and (where enabled) the CUDA graphs had taken their share; the CUDA OutOfMemoryError it met was re-raised in these words: the KV cache, sized to fill gpu_memory_utilization × the GPU's total, left too little for the sampler's logits of that many sequences (other processes' memory on the GPU counts against it too); the message gives none of the GPU's figures (the worker's traceback above it holds the OutOfMemoryError with them, where it was printed): lower max_num_seqs (fewer sequences' logits at once) or gpu_memory_utilization (a smaller KV cache, more room left)"
	}
	if _, free, total, desired, util, ok := pytorchtext.VLLMStartupFigures(r.Text); ok {
		head := fmt.Sprintf("vLLM refused to start (ValueError, before loading the model): it takes gpu_memory_utilization (%s) of the GPU's total, %s of %s, and checks that this much is free at start-up; %s was free, so %s of the GPU was in use before vLLM loaded anything: other processes (another engine or job on this GPU, a previous run not yet gone) or this process's own CUDA context and libraries (NCCL's buffers with several GPUs): the message does not say which, so no cause is named; nvidia-smi at start-up lists the processes. ",
			util, r.size(desired), r.size(total), r.size(free), r.size(total-free))
		if total <= 0 {
			return head + "Lower gpu_memory_utilization to what is free, or free the GPU"
		}
		if frac := float64(free) / float64(total); frac < vllmTooLittleFree {
			return head + fmt.Sprintf("What was free is %.1f%% of the GPU (under %.0f%%): too little for any model's weights and KV cache, so no gpu_memory_utilization setting would start it; free the GPU (end or move the processes nvidia-smi lists on it, or pick another GPU with CUDA_VISIBLE_DEVICES)", frac*100, vllmTooLittleFree*100)
		}
		return head + fmt.Sprintf("Lower gpu_memory_utilization to what is free (at most %.2f, %s free of %s, less a margin for what the engine allocates outside its share), or free the GPU", math.Floor(float64(free)/float64(total)*100)/100, r.size(free), r.size(total))
	}
	if engine == "SGLang" {
		return "SGLang could not size its KV cache pool at start-up (RuntimeError: Not enough memory): no allocation failed; it sizes the pool from the GPU's free memory after loading the weights, less the share of the GPU's total it keeps for activations and CUDA graphs (1 - --mem-fraction-static), and nothing was left: the weights (and whatever else holds the GPU: other processes count, as they lower the free memory) fill the fraction; the message gives no figures, the start-up log's \"Load weight end ... avail mem\" line does. Raise --mem-fraction-static (a smaller share kept back; if OOMs then come while serving, the model needs a larger GPU, quantization or tensor parallelism: --tp), or free the GPU"
	}
	what := "vLLM found no memory left for its KV cache at start-up (ValueError, raised before serving): no allocation failed; the KV cache gets what is left of gpu_memory_utilization × the GPU's total memory once the weights and a profiling run's peak (activations, memory outside PyTorch such as the CUDA context, and in recent releases CUDA graphs) are taken off, and nothing was left"
	advice := "raise gpu_memory_utilization where the GPU has room (it is a share of the whole GPU, the weights included), lower max_num_seqs or max_num_batched_tokens (a smaller profiling peak), use a quantized model, or split the model across GPUs (tensor_parallel_size); the start-up log's memory profiling lines give the figures"
	switch {
	case needed >= 0 && available >= 0:
		what = fmt.Sprintf("vLLM found too little memory left for its KV cache at start-up (ValueError, raised before serving): no allocation failed; one request of the model's max_model_len (%d tokens) needs %.2f GiB of KV cache, and %.2f GiB was left for it (what remains of gpu_memory_utilization × the GPU's total once the weights and a profiling run's peak are taken off)", maxLen, float64(needed)/(1<<30), float64(available)/(1<<30))
		advice = "lower max_model_len"
		if estimated > 0 {
			advice += fmt.Sprintf(" (vLLM estimated that %d tokens fit)", estimated)
		}
		advice += ", or raise gpu_memory_utilization where the GPU has room, use a quantized model or KV cache (kv_cache_dtype=fp8), or split the model across GPUs (tensor_parallel_size)"
	case maxLen >= 0:
		what = fmt.Sprintf("vLLM's KV cache, sized at start-up (ValueError, raised before serving), holds fewer tokens (%d) than the model's max_model_len (%d): no allocation failed; the KV cache gets what is left of gpu_memory_utilization × the GPU's total memory once the weights and a profiling run's peak are taken off", estimated, maxLen)
		advice = "lower max_model_len to what the KV cache holds, or raise gpu_memory_utilization where the GPU has room, use a quantized model, or split the model across GPUs (tensor_parallel_size)"
	case strings.HasPrefix(r.Text, "To serve") || strings.HasPrefix(r.Text, "The model's"):
		what = "vLLM found too little memory left for its KV cache to serve one request of the model's max_model_len at start-up (ValueError, raised before serving; the message was cut before its figures): no allocation failed; the KV cache gets what is left of gpu_memory_utilization × the GPU's total memory once the weights and a profiling run's peak are taken off"
		advice = "lower max_model_len, or raise gpu_memory_utilization where the GPU has room, use a quantized model or KV cache (kv_cache_dtype=fp8), or split the model across GPUs (tensor_parallel_size)"
	}
	return what + "; the message gives none of the GPU's figures: " + advice
}

// batchFinderNote is the note of Accelerate's batch size finder that
// gave up (pytorchtext.GenBatchFinder).
const batchFinderNote = "Hugging Face Accelerate's batch size finder (find_executable_batch_size, behind the Trainer's auto_find_batch_size and many training scripts) gave up: it halves the batch size each time the step raises an out-of-memory error it knows (CUDA's \"CUDA out of memory.\", cuDNN's CUDNN_STATUS_NOT_SUPPORTED, the CPU allocator's \"can't allocate memory\"; the XPU's and NPU's in later releases) and reached zero, so the step ran out of memory even with a batch of 1 (or the starting batch size was 0: a setting left unset or computed as 0 raises the same words at once); it caught those errors, so their figures, device and site are not in this message: the log before it (or running the step once with batch size 1 without the finder) shows the last one; memory that does not depend on the batch (the model's weights, optimizer state, a sequence length that is too long, other processes on the GPU) is what to cut: a smaller or quantized model, a shorter max length, gradient checkpointing, offloading or sharding"

// tgiWarmupNote is the note of text-generation-inference's warmup
// failure (pytorchtext's tgiWarmupPhrase, LoRAX's the same): at start-up,
// after loading the weights, TGI allocates its KV cache (for
// --max-batch-total-tokens where the message names total tokens; sized
// from what is left otherwise) and runs one prefill batch of
// --max-batch-prefill-tokens tokens, and re-raises what that raised
// (torch's CUDA OutOfMemoryError, as a rule) in these words.
func tgiWarmupNote(text string) string {
	prefill, total := pytorchtext.TGIWarmupTokens(text)
	batch := "one prefill batch of --max-batch-prefill-tokens tokens"
	if prefill >= 0 {
		batch = fmt.Sprintf("one prefill batch of %d tokens (--max-batch-prefill-tokens)", prefill)
	}
	cache, advice := "its KV cache", "lower --max-batch-prefill-tokens (--max-input-length, or --max-input-tokens, must stay under it)"
	if total >= 0 {
		cache = fmt.Sprintf("a KV cache for %d tokens (--max-batch-total-tokens)", total)
		advice = "lower --max-batch-total-tokens (recent releases size it from the memory left when it is not set) or --max-batch-prefill-tokens"
	}
	return "text-generation-inference (TGI, or a fork of it such as LoRAX) ran out of GPU memory in its warmup at start-up: after loading the weights it allocates " + cache + " and runs " + batch + ", and re-raises the error that raised (a CUDA OutOfMemoryError, as a rule) in these words; the message gives none of the GPU's figures (the shard's traceback, which holds the exception it was raised from, may): " + advice + ", use a quantized model (--quantize), shard the model across more GPUs (--num-shard), or free the GPU of other processes (--cuda-memory-fraction lowers TGI's own share)"
}

// cudaErrorNote is the note of a message without sizes from a CUDA call
// outside an allocator's message (pytorchtext.GenCUDAError), in the terms
// of the program that made the call: PyTorch's snapshot and
// memory_summary() are named only where PyTorch made it (its "CUDA
// error: " lead-in, or its exception or files); a driver status in
// numba's, CuPy's or a Java program's words is theirs.
func (r *Report) cudaErrorNote() string {
	lib := pytorchtext.Library(r.Text)
	if r.msg != nil && r.msg.Printer == pytorchtext.GGMLPrinter {
		return r.ggmlStatusNote()
	}
	pytorch := r.ByPyTorch()
	by := ""
	if r.caller != "" && !pytorch {
		by = " (called by " + r.caller + ")"
	}
	switch lib {
	case "llama.cpp (ggml)":
		what := "a buffer"
		if r.known(r.RequestedBytes) {
			what = "a buffer of " + r.size(r.RequestedBytes)
			if r.Device >= 0 {
				what += fmt.Sprintf(" on device %d", r.Device)
			}
		}
		if r.msg != nil && r.msg.Backend == "XPU" {
			// The SYCL backend's "can't allocate N Bytes of memory on device".
			return "llama.cpp's ggml SYCL backend could not allocate " + what + " on its Intel GPU (sycl::malloc_device returned no memory: \"can't allocate N Bytes of memory on device\"; the model's weights, its KV cache or a compute buffer, each allocated whole): the GPU had no room for it, or the one allocation was more than the device gives in one piece (its maxMemAllocSize; some Arc GPUs refuse less, ggml-org/llama.cpp PR #28953), which the line cannot tell apart; it gives no other sizes; llama.cpp's own log before it (the buffer sizes it printed per device) and xpu-smi at the time tell what held the GPU; fewer layers on the GPU (--n-gpu-layers), a smaller context (--ctx-size) or batch (--ubatch-size) or a quantized KV cache (--cache-type-k/-v) make the buffers smaller"
		}
		if r.msg != nil && r.msg.Backend == "Vulkan" {
			if strings.Contains(r.Text, "exceeds device memory allocation limit") {
				// ggml_vk_create_buffer's own check, before any allocation.
				return "llama.cpp's ggml Vulkan backend refused " + what + " because it is larger than the device allows in one allocation (\"Requested buffer size exceeds device memory allocation limit\": Vulkan's maxMemoryAllocationSize or maxBufferSize, often 2 or 4 GiB), before it tried: the request's size is the fault, not memory that ran out, and more free memory would not help; a smaller batch (--ubatch-size) or context (--ctx-size) makes the compute buffer smaller, and GGML_VK_FORCE_MAX_ALLOCATION_SIZE only lowers the limit"
			}
			return "llama.cpp's ggml Vulkan backend could not allocate " + strings.Replace(what, " on device", " on Vulkan device", 1) + " (\"Device memory allocation of size N failed\", then Vulkan's ErrorOutOfDeviceMemory, VK_ERROR_OUT_OF_DEVICE_MEMORY; the model's weights, its KV cache or a compute buffer, each allocated whole): the memory heap it allocates from had no room for it (on an integrated GPU, the share of the machine's memory the driver gives the GPU), and the lines give no other sizes; llama.cpp's own log before it (the buffer sizes it printed per device) and the GPU's own monitor at the time tell what held it; fewer layers on the GPU (--n-gpu-layers), a smaller context (--ctx-size) or batch (--ubatch-size) or a quantized KV cache (--cache-type-k/-v) make the buffers smaller"
		}
		return "llama.cpp's ggml CUDA backend could not cudaMalloc " + what + " (the model's weights, its KV cache or a compute buffer, each allocated whole; a HIP build prints the same words): the GPU had no room for it, and the line gives no other sizes; llama.cpp's own log before it (the buffer sizes it printed per device) and nvidia-smi at the time tell what held the GPU; fewer layers on the GPU (--n-gpu-layers), a smaller context (--ctx-size) or batch (--ubatch-size), a quantized KV cache (--cache-type-k/-v) or another split across GPUs (--tensor-split) make the buffers smaller"
	case "CatBoost", "PaddlePaddle", "OpenCL":
		return r.frameworkCheckNote(lib)
	case "TensorRT":
		if strings.HasPrefix(r.Text, "OutOfMemory (") {
			// Error Code 2 (pytorchtext's trtVMemPhrase).
			what := "physical memory"
			if r.known(r.RequestedBytes) {
				what = r.size(r.RequestedBytes) + " of physical memory (its \"Requested size was B bytes\", exact)"
			}
			return "TensorRT could not add " + what + " to a growable buffer (\"Error Code 2: OutOfMemory\", its out-of-memory code: the virtual memory buffer's resizePhysical, cuMemCreate, or an execution context's or a builder's buffer), outside PyTorch's caching allocator: the GPU had no room for it; nothing else of the GPU is printed; an OOM because a line after it says the build failed or the run ended, or none says the builder skipped the tactic and went on; a smaller workspace limit (the builder's memory pool limit, trtexec --memPoolSize), smaller input shapes or batch, or a GPU free of other processes make room"
		}
		what, sizes := "GPU memory", "; the line has no sizes (TensorRT 8.4 and later log the bytes asked for in a WARNING after it)"
		if r.known(r.RequestedBytes) {
			what, sizes = r.size(r.RequestedBytes)+" of GPU memory", "; the size is from the allocator's WARNING after its status (\"Requested amount of GPU memory\"), and nothing else of the GPU is given"
		}
		return "TensorRT's default allocator could not allocate " + what + " (cudaMalloc's out-of-memory error): building an engine, a tactic's workspace or an activation buffer, or running one, outside PyTorch's caching allocator; an OOM because a line after it says the build failed or the run ended, or none says the builder skipped the tactic and went on (a skipped tactic is a warning, not an OOM)" + sizes + "; a smaller workspace limit (the builder's memory pool limit, trtexec --memPoolSize), smaller input shapes or batch, or a GPU free of other processes make room"
	case "":
		if r.msg != nil && r.msg.Backend == "HIP" {
			// ROCm's libraries, not CUDA's.
			return "a HIP call outside PyTorch's caching allocator ran out of memory (a rocBLAS, hipBLASLt or MIOpen workspace, RCCL buffers, a HIP context; or pinned host memory: " + pinnedSources + ", whose failure HIP reports in the same words): the message has no sizes; a snapshot or memory_summary() taken at the error would tell where the GPU memory was, and the host's free RAM whether pinned memory could not be had"
		}
		return "a CUDA call outside PyTorch's caching allocator ran out of memory (a cuBLAS or cuDNN workspace, NCCL buffers, a CUDA context; or pinned host memory: " + pinnedSources + ", whose failure CUDA reports in the same words, the GPU's memory not involved): the message has no sizes; a snapshot or memory_summary() taken at the error would tell where the GPU memory was, and the host's free RAM (a container's memory limit counts) whether pinned memory could not be had"
	case "Metal":
		return "Metal could not run a command buffer for lack of GPU memory (\"Insufficient Memory\", kIOGPUCommandBufferCallbackErrorOutOfMemory), on Apple silicon, where the GPU's memory is the machine's unified memory up to the limit macOS sets for the GPU (its recommended working set, below the RAM): the program that submitted it (MLX, llama.cpp's Metal backend and the tools built on them; PyTorch's MPS backend prints \"MPS backend out of memory\" instead) needed more at once than was left; the message has no sizes, nor what else held the memory (other models loaded, other programs): a smaller or more quantized model, a shorter context or batch, fewer models at once; macOS 14 and later let the limit be raised (sudo sysctl iogpu.wired_limit_mb=N), at the expense of the rest of the system"
	case pytorchtext.LibraryUR, pytorchtext.LibraryPI:
		return r.oneAPINote(lib, pytorch)
	case pytorchtext.LibraryLevelZero:
		where := ""
		if m := levelZeroPlaceRe.FindStringSubmatch(r.Text); m != nil {
			where = " (the check names its place: " + m[1] + ")"
		}
		return "Intel's Level Zero driver reported that device memory ran out (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY), as the program on it printed the status of a call that failed" + where + ", outside any PyTorch allocator: the message has no sizes; on a discrete Intel GPU its own memory was full, on an integrated one the share of the machine's memory the driver gives it, unless the one allocation asked for more than the device allows in one piece (its maxMemAllocSize, about 4 GiB on Arc and integrated GPUs unless relaxed allocation limits are asked for), which the driver refuses with the same status whatever is free (intel/compute-runtime#984): the text cannot tell the two apart; xpu-smi at the time would tell what held the GPU"
	case "Vulkan":
		return "a Vulkan allocation found the device's memory full (VK_ERROR_OUT_OF_DEVICE_MEMORY), in a program that runs on Vulkan (llama.cpp's or MLC LLM's Vulkan backend, an upscaler, a renderer), outside any PyTorch allocator: the message has no sizes (llama.cpp's ggml_vulkan logs the allocation's on the line before it, \"Device memory allocation of size N failed\"); the heap Vulkan allocates from was full, on an integrated GPU the share of system memory the driver gives it: the GPU's own monitor at the time (nvidia-smi, rocm-smi, the OS's) would tell what held it; fewer layers on the GPU, a smaller context, batch or model need less"
	case "ONNX Runtime":
		call := "a " + r.backend + " call"
		if m := ortExprRe.FindStringSubmatch(r.Text); m != nil {
			call = m[1]
		}
		on := ""
		if r.Device >= 0 {
			on = fmt.Sprintf(" on GPU %d", r.Device)
		}
		code := "cudaErrorMemoryAllocation"
		if strings.HasPrefix(r.Text, "HIP") {
			code = "hipErrorOutOfMemory"
		}
		return "ONNX Runtime's " + call + " failed with out of memory (error 2, " + code + ")" + on + ", outside its BFC arena's own accounting (the arena's failure reads \"Failed to allocate memory for requested buffer\"): the GPU had no room for it (a stream, a library handle or a buffer); the message has no sizes, and nvidia-smi at the time would tell what held the GPU: the arena of each session, other sessions and other processes all count"
	case pytorchtext.LibraryCNTK:
		call := "a CUDA call"
		if m := cntkExprRe.FindStringSubmatch(r.Text); m != nil {
			call = m[1]
		}
		on := ""
		if r.Device >= 0 {
			on = fmt.Sprintf(" on GPU %d", r.Device)
		}
		return "CNTK's " + call + " failed with out of memory (error 2, cudaErrorMemoryAllocation)" + on + " (its CudaCall's words, \"CUDA failure 2: out of memory ; GPU=N ; hostname=H ; expr=E\", which ONNX Runtime's start alike: CNTK's end with the expression): the GPU had no room for the matrix or buffer it asked for; the message has no sizes, and nvidia-smi at the time would tell what held the GPU (CNTK's own matrices, or other processes); a smaller minibatch needs less"
	case "NCCL":
		what, sizes := "GPU memory for its buffers", "the message has no sizes"
		if r.known(r.RequestedBytes) {
			what, sizes = r.size(r.RequestedBytes)+" of GPU memory for its buffers", "the size is from NCCL's next line (\"Failed to CUDA calloc N bytes\"), and nothing else of the GPU is given"
		}
		if r.Device >= 0 {
			what += fmt.Sprintf(" on device %d (the CUDA device index of NCCL's line prefix, host:pid:tid [device], counted in the process's visible devices)", r.Device)
		}
		if host, pid := pytorchtext.NCCLProcess(r.msg.Prefix); pid >= 0 {
			what += fmt.Sprintf(", in process %d on host %s", pid, host)
		}
		failed := " (cudaMalloc failed with 'out of memory')"
		if strings.HasPrefix(r.Text, "Failed to CUDA ") {
			// Its line after the failed call, without the status line
			// before it (see pytorchtext's ncclAlone).
			sizes = "the size is from its line \"" + r.Text + "\"; the line NCCL prints before it naming the CUDA error (\"Cuda failure '...'\") is not in the input, so that the error was out of memory, the one most often behind a failed allocation, is read, not said; nothing else of the GPU is given"
			failed = " (its allocation call failed)"
		}
		if pytorchtext.CheckForm(r.Text) == "nccl1-buffer" {
			// NCCL 1.x's allocDevMem (pytorchtext's checkForms).
			sizes = "the size is from its own words (\"failed to allocate N byte device buffer\", exact), and nothing else of the GPU is given; NCCL 1.x logs any cudaMalloc error in these words, out of memory being the one a full GPU gives"
			failed = " (cudaMalloc failed; NCCL 1.x's allocDevMem, then \"NCCL Init failed ... 'cuda malloc failed'\")"
		}
		note := "NCCL could not allocate " + what + failed + ", outside PyTorch's caching allocator: " + sizes + "; the GPU was full when the communicator or a transport was set up, and PyTorch's cached memory counts against it (a memory_summary() or snapshot taken then would tell how much)"
		if strings.Contains(r.msg.Prefix, "(may be unrelated)") {
			// ncclGetLastError's text, quoted by the caller's error
			// (XLA's, PyTorch's ProcessGroupNCCL): the last warning NCCL
			// logged in the process, not necessarily this failure's.
			note = "the failure quotes this as NCCL's last warning, which it says \"may be unrelated\" (ncclGetLastError: the last warning NCCL logged in the process, not necessarily the cause of the operation that failed, whose own error is the one named before it): if it is this failure's, " + note
		}
		return note
	case "the CUDA driver", "the CUDA runtime", "the HIP runtime", "RMM":
		if note, ok := r.checkNote(lib); ok {
			return note // a program's own CUDA check (cudacheck.go)
		}
		if r.known(r.RequestedBytes) && r.msg != nil && pytorchtext.XLAAsyncFailure(r.msg.Prefix) {
			gpu := "; the line after it, which gives the GPU's free and total memory (\"Free memory/Total memory\"), is not in the text"
			if r.known(r.DeviceTotalBytes) {
				gpu = fmt.Sprintf("; CUDA reported %s free of %s then (cuMemGetInfo, after the failure)", r.size(r.DeviceFreeBytes), r.size(r.DeviceTotalBytes))
			}
			return "XLA's cudaMallocAsync allocator (gpu_cudamallocasync_allocator.cc: JAX's or TensorFlow's, TF_GPU_ALLOCATOR=cuda_malloc_async) could not get " + r.size(r.RequestedBytes) + " from CUDA's memory pool (cuMemAllocFromPoolAsync: " + lib + "'s out-of-memory error)" + gpu + "; the \"Stats:\" lines it logs next (InUse, MaxInUse, the histogram of allocations) tell what the allocator held"
		}
		if r.known(r.RequestedBytes) {
			// StreamExecutor's cuda_driver.cc: "failed to allocate 7.81G
			// (8387559424 bytes) from device"; INFO and WARNING records
			// are probes, not OOMs (the reader does not count them).
			record := ", in an ERROR record:"
			switch pytorchtext.LogLevel(r.msg.Prefix) {
			case 'F':
				record = ", in a FATAL record:"
			case 0:
				record = "; the line has no log level (an issue title, a copied line), and TensorFlow logs these words at INFO level when it probes how much memory it can take and retries smaller (no OOM) as well as at ERROR level when the allocation failed;"
			}
			return "StreamExecutor (the GPU layer of TensorFlow and XLA/JAX) could not allocate " + r.size(r.RequestedBytes) + " from the device (" + lib + "'s out-of-memory error)" + record + " the line gives only the size asked for, not what was in use; the allocator's own log around it (TensorFlow's BFC allocator prints a summary of its chunks) or nvidia-smi at the time would tell what held the memory"
		}
		if m := checkCallRe.FindStringSubmatch(r.Text); m != nil && r.msg != nil {
			// An inference library's CUDA check (cudaRuntimeCheckPhrase).
			who, advice := "a library", "the library's own settings for its buffers and cache, or a GPU free of other processes, make room"
			switch {
			case strings.Contains(r.msg.Prefix, "[TensorRT-LLM]"):
				who, advice = "TensorRT-LLM", "the engine's buffers are sized by its build limits (max_batch_size, max_input_len, max_num_tokens) and its KV cache by the share of free memory it takes (free_gpu_memory_fraction, Triton's kv_cache_free_gpu_mem_fraction): lowering them, or a GPU free of other processes, makes room"
			case strings.Contains(r.msg.Prefix, "[FT]"):
				who, advice = "FasterTransformer", "a smaller batch or sequence length, or a GPU free of other processes, makes room"
			}
			call := "CUDA runtime call"
			if m[1] != "" && !checkCallNameRe.MatchString(m[1]) {
				// The check's stringified expression is no call's name
				// (TensorRT-LLM's "CUDA runtime error in error: out of
				// memory": a variable holding the status).
				call = fmt.Sprintf("CUDA runtime call (the message names the expression %q, not the call)", m[1])
			} else if m[1] != "" {
				call = m[1]
				if strings.HasPrefix(m[1], "cudaMalloc") {
					call += " (an allocation)"
				}
			}
			return who + "'s " + call + " failed with " + lib + "'s out-of-memory error, outside PyTorch's caching allocator: the GPU had no room for it; the message has no sizes, and nvidia-smi at the time would tell what held the GPU; " + advice
		}
		switch {
		case pytorch:
			api := "a CUDA"
			if lib == "the HIP runtime" {
				api = "a HIP" // ROCm's PyTorch: an extension's hipMalloc
			}
			return api + " allocation outside PyTorch's caching allocator ran out of memory (" + lib + "'s out-of-memory error, from a library or extension that allocates on its own): the message has no sizes; a snapshot or memory_summary() taken at the error would tell what PyTorch held"
		case r.caller != "":
			call := "call to the CUDA driver (an allocation, or creating a context, which needs memory of its own: the message does not say which)"
			if lib != "the CUDA driver" {
				call = "call to " + lib + " (an allocation, or creating a context, which needs memory of its own: the message does not say which)"
			}
			fn, from := "", ""
			if m := driverCallRe.FindStringSubmatch(r.msg.Prefix); m != nil {
				fn = m[1]
			} else if r.stackCall != "" {
				// The message does not name it; its stack does.
				fn, from = r.stackCall, "named by the stack's frame "+r.stackCallAt
			}
			if fn != "" {
				var what []string
				switch {
				case strings.HasPrefix(fn, "cuMemAlloc"), strings.HasPrefix(fn, "cuMemCreate"), strings.HasPrefix(fn, "cuMemHostAlloc"), strings.HasPrefix(fn, "cudaMalloc"):
					what = append(what, "an allocation")
				case strings.HasPrefix(fn, "cuCtxCreate"), strings.HasPrefix(fn, "cuDevicePrimaryCtx"):
					what = append(what, "creating a context, which needs memory of its own")
				}
				if from != "" {
					what = append(what, from)
				}
				call = "call to " + fn
				if len(what) > 0 {
					call += " (" + strings.Join(what, "; ") + ")"
				}
			}
			return r.caller + "'s " + call + " failed with " + lib + "'s out-of-memory error: the GPU had no room for it; the message has no sizes, and PyTorch's allocator plays no part: nvidia-smi at the time (what other processes held) or " + r.caller + "'s own memory report would tell what held the GPU"
		}
		if lib == "the HIP runtime" && strings.Contains(r.Text, "hipError") && !strings.Contains(r.Text, "hipError_t(") {
			return "a HIP call failed with hipErrorOutOfMemory (" + lib + "'s out-of-memory error, by the name hipGetErrorName gives it, from the program's own error check; the message does not say which call failed, an allocation or a context's or a stream's creation): the message has no sizes; rocm-smi at the time would tell what held the GPU"
		}
		if lib == "the HIP runtime" {
			return "a HIP call ran out of memory (" + lib + "'s out-of-memory error, in the words of TensorFlow's and XLA's ROCm builds; the message does not say whether it was an allocation or a context's creation): the message has no sizes; rocm-smi at the time would tell what held the GPU"
		}
		return "a CUDA call ran out of memory (" + lib + "'s out-of-memory error) in a program or library that calls CUDA itself (numba, CuPy, PyCUDA, a CUDA extension; the message does not say which, nor whether it was an allocation or a context's creation): the message has no sizes; nvidia-smi at the time would tell what held the GPU, and, if the program is PyTorch's, a snapshot or memory_summary() taken at the error what PyTorch held"
	}
	if pytorch {
		return lib + " could not allocate the memory it needed (an ALLOC_FAILED status: a handle, a plan or a workspace, allocated outside PyTorch's caching allocator; almost always a failed cudaMalloc, the GPU being full): the message has no sizes; a snapshot or memory_summary() taken at the error would tell what PyTorch held"
	}
	return lib + " could not allocate the memory it needed" + by + " (an ALLOC_FAILED status: a handle, a plan or a workspace; almost always a failed cudaMalloc, the GPU being full): the message has no sizes; nvidia-smi at the time, or the framework's own memory report, would tell what held the GPU"
}

// tfTensorNote is the note of TensorFlow's "OOM when allocating tensor"
// (pytorchtext.GenTF): raised as ResourceExhaustedError, or op_kernel.cc's
// WARNING record of the op's failure counted alone (no exception after it
// in the text); its size, where known, is the BFC allocator's record that
// the reader read as the same failure, for TensorFlow's words give a
// shape, not bytes.
func (r *Report) tfTensorNote() string {
	what := "TensorFlow's allocator could not allocate a tensor (ResourceExhaustedError: OOM when allocating tensor)"
	if r.msg != nil && strings.Contains(r.msg.Prefix, "op_kernel.cc:") {
		what = "TensorFlow's allocator could not allocate a tensor for an op (OOM when allocating tensor), in op_kernel.cc's WARNING record of the op's failure (\"OP_REQUIRES failed at\"): TensorFlow returns the failed status to the caller, which raises it as ResourceExhaustedError, and no such exception follows in the inputs: the log was cut there, or the program caught the error"
	}
	if r.tfShapeSized {
		what += "; the " + r.size(r.RequestedBytes) + " requested are the tensor's elements times its type's size, from the shape and type the message gives"
		if r.tfLimit >= 0 {
			return what
		}
		return what + "; the BFC allocator's log before it (\"Sum Total of in-use chunks\", its Stats' Limit and InUse) tells what was in use"
	}
	if r.known(r.RequestedBytes) {
		if r.tfLimit >= 0 {
			return what + "; the message gives the tensor's shape and type, and the " + r.size(r.RequestedBytes) + " requested are the BFC allocator's record before it (\"ran out of memory trying to allocate\", rounded to the allocator's bins), read as the same failure"
		}
		return what + "; the message gives the tensor's shape and type, and the " + r.size(r.RequestedBytes) + " requested are the BFC allocator's record before it (\"ran out of memory trying to allocate\", rounded to the allocator's bins), read as the same failure; its chunk dump (\"Sum Total of in-use chunks\") tells what was in use"
	}
	if r.tfLimit >= 0 {
		return what + "; the message gives no size gpuleak reads (its shape is cut, or its type's size unknown)"
	}
	return what + "; the message gives its shape and type, not bytes; the BFC allocator's log before it (\"ran out of memory trying to allocate\", \"Sum Total of in-use chunks\") tells what was in use"
}

// ortExprRe reads the call ONNX Runtime's failed CUDA or HIP call names
// ("; expr=cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);"):
// the function's name.
var ortExprRe = lazyre.New(`; expr=([A-Za-z_][A-Za-z0-9_]*)\(`)

// cntkExprRe reads the call CNTK's failed CUDA call names ("; expr=
// cudaMalloc((void**) &deviceBufferPtr, ...)"): the function's name.
var cntkExprRe = ortExprRe

// oneAPINote is the note of a oneAPI runtime's status (lib, see
// pytorchtext.LibraryUR): out of device memory, or "out of resources",
// which is not always memory (pytorchtext.IntelResources).
func (r *Report) oneAPINote(lib string, pytorch bool) string {
	outside := ""
	if pytorch {
		outside = ", outside PyTorch's XPU caching allocator (its own allocations fail with \"XPU out of memory\"): a oneDNN or oneMKL workspace, a copy or a kernel's launch"
	}
	if pytorchtext.IntelResources(r.Text) {
		return "a SYCL call failed with " + lib + "'s \"out of resources\" status (OpenCL's CL_OUT_OF_RESOURCES carried on)" + outside + ", read as an OOM: on Intel GPUs it is most often device memory that ran out (a model, a context or a batch that does not fit, or memory still held after an earlier OOM), but the status covers any resource the device could not give (a kernel's launch resources among them), so the text does not prove that memory ran out; it has no sizes; xpu-smi at the time would tell what held the GPU"
	}
	return "a SYCL call ran out of device memory (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: the Level Zero driver's ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, as " + lib + " passes it on)" + outside + ": the message has no sizes; xpu-smi at the time would tell what held the GPU"
}

// levelZeroPlaceRe reads the place a Level Zero status's check names
// after it (chipStar's "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ) in
// FILE:LINE:FUNC").
var levelZeroPlaceRe = lazyre.New(`ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\s*\)? in (\S+:\d+(?::\w+)?)`)

// pinnedSources are PyTorch's ways to ask for page-locked (pinned) host
// memory: the caching host allocator's cudaHostAlloc, whose failure PyTorch
// raises as "CUDA error: out of memory" with no call named (recorded on an
// H200, PyTorch 2.11: torch.empty(2**43, pin_memory=True)).
const pinnedSources = "pin_memory=True, Tensor.pin_memory(), DataLoader(pin_memory=True)"

// checkCallRe reads the function an inference library's CUDA check names
// ("CUDA runtime error in ::cudaMallocAsync(ptr, n, ...): out of
// memory"); the group is empty where none is named.
var checkCallRe = lazyre.New(`^CUDA runtime error(?: in :*([A-Za-z_][A-Za-z0-9_]*))?`)

// checkCallNameRe matches a CUDA runtime or driver function's name
// ("cudaMallocAsync", "cuMemAlloc_v2"), what checkCallRe's group names
// when the check was given the call itself.
var checkCallNameRe = lazyre.New(`^cu(?:da)?[A-Z][A-Za-z0-9_]*$`)

// driverCallRe finds the CUDA driver function a message names before its
// status (numba's "Call to cuMemAlloc results in").
var driverCallRe = lazyre.New(`\b(cu[A-Z][A-Za-z0-9_]*)\b`)

// vllmTooLittleFree is the share of a GPU's total below which vLLM's
// start-up refusal gets no gpu_memory_utilization advice: a setting that
// small (0.04 of an 80 GiB GPU is 3.2 GiB) leaves no room for a model's
// weights, its KV cache and the engine's own buffers, and one rounded
// down to two decimals may be 0.00.
const vllmTooLittleFree = 0.05

// tpuCapacity is the cause of the TPU compiler's refusal (XLATPUHBM):
// the program needs need bytes of HBM, more than a core's
// r.DeviceTotalBytes beyond the sizes' rounding; ok is false when the
// figures do not show that (a paste edited, or cut before the capacity).
// The compiler's "Exceeded hbm capacity by E" (XLATPUHBMExcess) shows it
// where U and C round to the same figure (a program over by megabytes):
// E above zero is the compiler's own count of the shortfall.
func (r *Report) tpuCapacity(need int64) (c Cause, ok bool) {
	hbm := r.DeviceTotalBytes
	if !r.known(hbm) {
		return Cause{}, false
	}
	excess, stated := pytorchtext.XLATPUHBMExcess(r.Text)
	stated = stated && excess > 0
	over := need > hbm+pytorchtext.SizeTolerance(need)+pytorchtext.SizeTolerance(hbm)
	if !over && !stated {
		return Cause{}, false
	}
	by := r.size(need - hbm)
	nums := map[string]int64{"requested_bytes": need, "device_total_bytes": hbm}
	if stated {
		by = r.size(excess) + ", the compiler's \"Exceeded hbm capacity by\" figure"
		nums["excess_bytes"] = excess
	}
	ev := fmt.Sprintf("the compiled program needs %s of HBM at once, more than the %s a TPU core has (by %s), as XLA's TPU compiler counted before running it: no release of memory and no other process could have made room", r.size(need), r.size(hbm), by)
	return Cause{Name: CauseCapacity, Evidence: ev,
		Numbers: nums,
		Advice:  "make the program's per-core working set smaller: a smaller per-core batch or sequence length, more sharding of parameters, optimizer state and activations across cores (FSDP, tensor parallelism, a larger TPU slice), rematerialization (jax.checkpoint / remat), bfloat16 parameters or optimizer state; the \"Largest program allocations in hbm\" list XLA prints after the error names the buffers to cut"}, true
}

// smallXLARequest: a request below this that XLA's BFC allocator refuses
// says nothing of what filled the memory (24, 16 and 4 bytes in
// jax-ml/jax#4994's CPU tests).
const smallXLARequest = 64 << 10

// xlaNote is the note of an XLA message (pytorchtext.GenXLA), by the
// allocator its words name (see GenXLA): none of them says what else held
// the memory, and only the StreamExecutor allocator's names the device.
func (r *Report) xlaNote() string {
	if pytorchtext.XLATPUHBM(r.Text) {
		need, hbm := "", ""
		if r.known(r.RequestedBytes) && r.known(r.DeviceTotalBytes) {
			need, hbm = " ("+r.size(r.RequestedBytes)+")", " ("+r.size(r.DeviceTotalBytes)+")"
		}
		return "XLA's TPU compiler refused the program (\"Ran out of memory in memory space hbm\"): the buffers it must hold at once" + need + " do not fit one TPU core's high-bandwidth memory" + hbm + ", counted when the program was compiled, before it ran: nothing was allocated, no other process took part, and no GPU is involved (sizes as the compiler prints them, G of 1024^3, to half a unit of the last digit); the lines XLA prints after it (\"Total hbm usage\", \"Largest program allocations in hbm\") name the largest buffers"
	}
	req := "the request"
	if r.known(r.RequestedBytes) {
		req = "a request of " + r.size(r.RequestedBytes)
	}
	switch {
	case strings.HasPrefix(r.Text, "Failed to allocate request for "):
		dev := "the device"
		if r.Device >= 0 {
			dev = fmt.Sprintf("device %d", r.Device)
		}
		return "XLA's StreamExecutor allocator could not get " + req + " from " + dev + " (RESOURCE_EXHAUSTED: an allocation made on the device directly, outside XLA's BFC pool: every allocation under JAX's XLA_PYTHON_CLIENT_ALLOCATOR=platform, else XLA's own direct ones, such as the compiler's, which get only what the pool left: JAX preallocates 75% of a GPU by default, XLA_PYTHON_CLIENT_MEM_FRACTION): the device had no room for it; the message gives no other figures, nor whether the device is a GPU or a TPU; nvidia-smi at the time would tell what else held a GPU, and the \"BufferAssignment stats\" XLA prints after the error, when present, what the program needed"
	case strings.HasPrefix(r.Text, "Out of memory allocating "):
		return "XLA could not allocate " + req + " (RESOURCE_EXHAUSTED: \"Out of memory allocating\", the words of XLA's CPU client, whose buffers are host memory from an aligned malloc, and of the TFRT GPU client of recent releases): the message names no device; if JAX ran on the CPU (jax.devices() lists CpuDevice: a jaxlib without CUDA, or no GPU visible), the machine's memory (or the process's limit) ran out, not a GPU's; the message gives no other figures"
	case r.known(r.RequestedBytes) && r.RequestedBytes < smallXLARequest:
		return "XLA (JAX, or TensorFlow's XLA) could not allocate " + req + " (RESOURCE_EXHAUSTED): a request this small fails only when the allocator has nothing left at all, or fails for a reason of its own (a build for a new platform, a container's memory limit), so its size tells nothing of what filled the memory; the message names no device (XLA's CPU client printed the same words in older jaxlib) and gives no other figures"
	}
	if need := pytorchtext.XLATotalAllocation(r.Text); need > 0 {
		if note, ok := r.xlaSmallProgramNote(req, need); ok {
			return note
		}
		return "XLA (JAX, or TensorFlow's XLA) could not allocate " + req + " (RESOURCE_EXHAUSTED); the \"BufferAssignment stats\" XLA printed after it give the compiled program's total allocation, " + r.size(need) + " (its parameters, outputs and temporaries, needed at once): a GPU with less memory, or less left to JAX (it takes 75% at start by default: XLA_PYTHON_CLIENT_MEM_FRACTION, XLA_PYTHON_CLIENT_PREALLOCATE=false), cannot run it as compiled; the message names no device and gives no free memory, so whether other processes held the rest cannot be told from it"
	}
	return "XLA (JAX, or TensorFlow's XLA) could not allocate " + req + " (RESOURCE_EXHAUSTED): the message gives no other figures and names no device; on a GPU, JAX takes 75% of its memory at start by default (XLA_PYTHON_CLIENT_MEM_FRACTION, XLA_PYTHON_CLIENT_PREALLOCATE=false), and the \"BufferAssignment stats\" XLA prints after the error, when present, tell what the program needed"
}

// ByPyTorch reports whether a message without figures
// (pytorchtext.GenCUDAError) is PyTorch's to explain: its exception or
// files say PyTorch, or nothing names another program and the words are
// PyTorch's ("CUDA error: out of memory"; a library's ALLOC_FAILED status
// after the "CUDA error: " lead-in of PyTorch's c10 checks, or cuDNN's,
// cuFFT's, cuSOLVER's). A bare driver or runtime status is anybody's.
func (r Report) ByPyTorch() bool {
	switch {
	case r.caller == "PyTorch":
		return true
	case r.caller != "":
		return false
	case pytorchtext.Library(r.Text) == "":
		return true
	}
	i := strings.Index(r.Text, "_ALLOC_FAILED")
	return i >= 0 && strings.Contains(r.Text[:i], " error:")
}

// Caller names the program or library the report's messages came from,
// as far as their words and tracebacks say (see callerOf): "numba",
// "PyCUDA", "JCuda", "CuPy", "TensorFlow", "JAX", "PyTorch", or "".
func (r Report) Caller() string { return r.caller }

// callerOf names the program or library a message came from, by the words
// of its exception, the text before it, the message and its traceback's
// files, innermost first: "numba", "PyCUDA", "JCuda", "CuPy",
// "TensorFlow", "JAX", "PyTorch"; "" when none says.
func callerOf(m Message) string {
	hay := []string{m.Exception, m.Prefix, m.Text}
	for i := len(m.Frames) - 1; i >= 0; i-- {
		hay = append(hay, m.Frames[i].Filename)
	}
	for _, h := range hay {
		h = strings.ToLower(h)
		for _, c := range []struct{ word, name string }{
			{"numba", "numba"}, {"pycuda", "PyCUDA"}, {"jcuda", "JCuda"}, {"cupy", "CuPy"},
			{"tensorflow", "TensorFlow"}, {"jax", "JAX"}, {"torch", "PyTorch"},
		} {
			if strings.Contains(h, c.word) {
				return c.name
			}
		}
	}
	return ""
}

// freeAboveTotal reports whether the GPU's free memory a message printed
// is more than its total (beyond both figures' rounding), and if so notes
// it once: a discrete GPU cannot report that. ROCm on APUs (gfx1151 Strix
// Halo, MI300A) and other unified-memory devices do: the total is the
// memory set aside for the GPU, the free figure counts system memory the
// GPU may also map, so the total is not the limit and a request above it
// says nothing of capacity.
func (r *Report) freeAboveTotal() bool {
	if !r.known(r.DeviceFreeBytes) || !r.known(r.DeviceTotalBytes) ||
		r.DeviceFreeBytes <= r.DeviceTotalBytes+pytorchtext.SizeTolerance(r.DeviceFreeBytes)+pytorchtext.SizeTolerance(r.DeviceTotalBytes) {
		return false
	}
	note := fmt.Sprintf("the message gives %s free of a %s total: more free than the total, which a discrete GPU cannot report; a unified-memory device can (an APU such as AMD's gfx1151 or MI300A, whose total is the memory set aside for the GPU while the free figure counts system memory it may also map), so the total is not this GPU's limit and no capacity cause is drawn from it", r.size(r.DeviceFreeBytes), r.size(r.DeviceTotalBytes))
	if !slices.Contains(r.Notes, note) {
		r.Notes = append(r.Notes, note)
	}
	return true
}

// aloneCapacity is the capacity cause of a request larger by itself than
// the whole GPU, or than any GPU (beyondAnyGPU) where the inputs do not
// give the GPU's total: no release of memory, by this process or others,
// and no limit could have made room. Beyond any GPU, the size was computed
// wrong, as with a request of 1 EB and more (pytorchtext.GenExa); larger
// than this GPU only, it may be meant, so both are said.
func (r *Report) aloneCapacity(req int64) Cause {
	nums := map[string]int64{"requested_bytes": req}
	var ev string
	if r.known(r.DeviceTotalBytes) {
		nums["device_total_bytes"] = r.DeviceTotalBytes
		ev = fmt.Sprintf("the %s request alone is more than the GPU's %s total", r.size(req), r.size(r.DeviceTotalBytes))
		if r.DeviceTotalBytes > 0 && req >= 2*r.DeviceTotalBytes {
			ev += fmt.Sprintf(" (%d times it)", req/r.DeviceTotalBytes)
		}
	} else {
		ev = fmt.Sprintf("the %s request alone is more than any GPU holds (the largest hold 268 GiB), though the inputs do not give this GPU's total", r.size(req))
	}
	ev += ": no release of cached memory, by this process or others, and no limit could have made room"
	if r.known(r.DeviceFreeBytes) {
		nums["device_free_bytes"] = r.DeviceFreeBytes
		ev += fmt.Sprintf("; the GPU had %s free", r.size(r.DeviceFreeBytes))
	}
	advice := "one allocation larger than the GPU: check the size asked for at the traceback's line (a shape, a dtype or a count computed wrong); if it is meant, a smaller batch of everything else will not make room: split this tensor (chunk the operation, shard it across GPUs) or use a GPU with more memory"
	if req > beyondAnyGPU {
		advice = "one allocation larger than the GPU, and than any GPU made: the size was most likely computed wrong (an overflowed or negative size, a corrupted shape, a size received from a collective that went out of step), not a shortage of memory; a smaller batch will not help: look at the size asked for at the traceback's line"
	}
	return Cause{Name: CauseCapacity, Evidence: ev, Numbers: nums, Advice: advice}
}

// othersWithRoom is the other-processes cause of a message that reports
// room for the segment on the GPU, no per-process cap, and other
// processes: PyTorch reads the GPU's free memory (cudaMemGetInfo) after
// its last attempt failed, once it had released its cached blocks, so
// memory free in the message was in use at the failure a moment before.
// Where the listed processes held at least othersMoveRatio times the room
// beyond the segment (and at least otherProcessesMin), their own
// allocations and frees between the two moments are the likely cause (a
// co-located inference engine or trainer does that); else nil, and the
// message does not show the cause.
func (r *Report) othersWithRoom(seg int64) *Cause {
	if !r.known(r.DeviceFreeBytes) || !r.known(r.DeviceTotalBytes) {
		return nil
	}
	var others int64
	var who []string
	var froms []int64
	for _, p := range r.OtherProcesses {
		others += p.Bytes
		froms = append(froms, p.Bytes)
		w := fmt.Sprintf("process %d: %s", p.PID, r.size(p.Bytes))
		if q, ok := r.ProcessNames[p.PID]; ok && q.Name != "" {
			w = fmt.Sprintf("process %d, %s: %s", p.PID, q.Name, r.size(p.Bytes))
		}
		who = append(who, w)
	}
	margin := r.DeviceFreeBytes - seg
	if margin <= 0 || others < otherProcessesMin || others < othersMoveRatio*margin {
		return nil
	}
	free, total := r.sizeOf(r.DeviceFreeBytes, r.DeviceTotalBytes)
	ev := fmt.Sprintf("the GPU reported %s free of %s, %s more than the %s request, yet the allocation failed: PyTorch reads the free memory after its last attempt failed (having released its cached blocks), so that memory was in use at the failure and free a moment later; other processes held %s (%s), %d times that margin, so their own allocations and frees between the two moments explain it",
		free, total, r.sizeFrom(margin, r.DeviceFreeBytes, seg), r.size(seg), r.sizeFrom(others, froms...), strings.Join(who, "; "), others/margin)
	if r.known(r.ProcessInUseBytes) {
		ev += fmt.Sprintf("; this process held %s", r.size(r.ProcessInUseBytes))
	}
	ev += fmt.Sprintf("; without them the GPU would have had %s free (the message cannot rule out a driver or runtime fault instead)", r.sizeFrom(r.DeviceFreeBytes+others, append([]int64{r.DeviceFreeBytes}, froms...)...))
	return &Cause{Name: CauseOtherProcesses, Evidence: ev,
		Numbers: map[string]int64{"other_processes_bytes": others, "device_free_bytes": r.DeviceFreeBytes, "device_total_bytes": r.DeviceTotalBytes, "segment_bytes": seg, "room_beyond_request_bytes": margin},
		Advice:  "other processes share this GPU and their memory moves: free the GPU from them (nvidia-smi lists them) or give this job a GPU of its own (CUDA_VISIBLE_DEVICES, the scheduler's exclusive mode); where they are this job's own (a co-located inference engine or trainer), cap theirs (gpu_memory_utilization, mem_fraction_static) so that the sum leaves room"}
}

// xpuAllocationLimit is the allocation-limit cause of an XPU message
// whose request is one allocation of 4 GiB or more (xpuSingleAllocation)
// where the GPU had room for it: the free memory printed, or, where the
// message prints none or only PyTorch's estimate (the total less its
// reserved memory, which leaves other processes out), the GPU's total
// less PyTorch's reserved memory. A request larger than the GPU (alone)
// or over the per-process cap the message gives is explained by those
// instead.
func (r *Report) xpuAllocationLimit(block, seg, tol int64, alone bool) (Cause, bool) {
	if r.backend != "XPU" || r.snapshot || r.msg == nil || !parsed(r.msg.Generation) {
		return Cause{}, false
	}
	if pytorchtext.IPEXLimitRefused(r.Text) {
		// Refused by Intel's extension itself, before any allocation.
		return Cause{Name: CauseAllocationLimit,
			Evidence: fmt.Sprintf("Intel's extension for PyTorch (IPEX) refused the %s request itself (\"Current platform can NOT allocate memory block with size larger than 4GB!\"): one allocation over the 4 GB the device allows in one piece, checked before any allocation; no memory ran short (PyTorch held %s reserved of the GPU's %s)", r.size(r.RequestedBytes), r.size(max(r.ReservedBytes, 0)), r.size(r.DeviceTotalBytes)),
			Numbers:  map[string]int64{"requested_bytes": r.RequestedBytes, "single_allocation_limit_bytes": xpuSingleAllocation},
			Advice:   "split the tensor into pieces under 4 GB (chunk the operation, a smaller batch for this allocation); PyTorch's own XPU backend (torch 2.5+) makes no such check of its own: there Level Zero's limit applies, which UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 lifts"}, true
	}
	if alone || block+tol < xpuSingleAllocation {
		return Cause{}, false
	}
	reserved := max(r.ReservedBytes, 0)
	if r.known(r.AllowedBytes) && reserved+seg > r.AllowedBytes+pytorchtext.SizeTolerance(r.AllowedBytes)+tol {
		return Cause{}, false // the cap refused it (memory-limit)
	}
	var room int64
	var ev string
	nums := map[string]int64{"requested_bytes": r.RequestedBytes, "segment_bytes": seg, "single_allocation_limit_bytes": xpuSingleAllocation}
	switch {
	case r.known(r.DeviceFreeBytes):
		room = r.DeviceFreeBytes + pytorchtext.SizeTolerance(r.DeviceFreeBytes)
		ev = fmt.Sprintf("the GPU had %s free", r.size(r.DeviceFreeBytes))
		nums["device_free_bytes"] = r.DeviceFreeBytes
	case r.known(r.DeviceTotalBytes):
		room = r.DeviceTotalBytes - reserved + pytorchtext.SizeTolerance(r.DeviceTotalBytes)
		left, total := r.size(r.DeviceTotalBytes-reserved), r.size(r.DeviceTotalBytes)
		how := "the message prints no free memory"
		if r.msg.Free >= 0 {
			how = "the free memory printed is PyTorch's estimate, the same"
		}
		ev = fmt.Sprintf("the GPU's %s total less PyTorch's %s reserved left %s (%s: memory of other processes, if any, is not counted)", total, r.size(reserved), left, how)
		nums["device_total_bytes"], nums["reserved_bytes"] = r.DeviceTotalBytes, reserved
	default:
		return Cause{}, false
	}
	if room < seg-tol {
		return Cause{}, false
	}
	nums["room_bytes"] = room
	ev = fmt.Sprintf("the %s request is one allocation of 4 GiB or more on an Intel GPU, and %s, enough for it: Intel's GPU runtime refuses one allocation larger than the device's maxMemAllocSize (Level Zero's limit, 4 GiB or a little less on Arc and integrated GPUs; Data Center GPU Max allocates more) unless the process was started with UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1, and PyTorch reports the refusal as an out-of-memory error; the message does not give the device's limit nor whether that variable was set (if it was, or the GPU is a Data Center GPU Max, this is not the cause)", r.size(r.RequestedBytes), ev)
	return Cause{Name: CauseAllocationLimit, Evidence: ev, Numbers: nums,
		Advice: "set UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 in the environment before the process starts (the runtime reads it once; kernels are then built for 64-bit addressing, which can be slower), or split the tensor into pieces under 4 GiB (chunk the operation, a smaller batch for this allocation)"}, true
}

// hostAdvice and amdAdvice are what frees memory for a GPU that shares
// the machine's RAM: host memory, and on AMD the GPU's mapping limit.
const (
	hostAdvice = "free host memory: this process's CPU copies (load weights straight to the device, drop the CPU model after .to()), other programs, the page cache (sync; echo 3 > /proc/sys/vm/drop_caches, as root)"
	amdAdvice  = "; or raise the memory the GPU may map (the BIOS carve-out, the GTT/TTM limit: amdgpu.gttsize, ttm.pages_limit)"
)

// unifiedMemory rewords the other-processes cause for a device whose GPU
// memory is (or may be) the machine's RAM. A log that names such a device
// (pytorchtext.UnifiedMemory, Sure) makes it the unified-memory cause: the
// memory outside PyTorch is host memory of the OS, the page cache, other
// programs and this process's CPU side, and no other GPU is to be had. A
// ROCm message (APUs run ROCm), or a device that shares memory only in
// some configurations, keeps the cause with a hedge naming unified memory.
func (r *Report) unifiedMemory(name, ev, advice string, others int64) (string, string, string) {
	host := "host memory (the OS, the page cache (a model just read from disk stays in it), other programs, and this process's own CPU memory: a CPU copy of the weights, pinned buffers)"
	u := r.unified
	switch {
	case u != nil && u.Sure:
		ev += fmt.Sprintf("; %s:%d names %s, a device whose GPU memory is the machine's RAM: the %s outside PyTorch's allocator is %s, not only other GPU processes", r.unifiedPath, u.Line, u.Device, r.size(others), host)
		advice = hostAdvice
		if u.Vendor == "AMD" {
			advice += amdAdvice
		}
		return CauseUnifiedMemory, ev, advice
	case u != nil:
		ev += fmt.Sprintf("; %s:%d names %s: if the OS used the GPU's memory as system RAM, the %s outside PyTorch's allocator may be %s", r.unifiedPath, u.Line, u.Device, r.size(others), host)
		advice += "; if the GPU's memory is shared with the OS, " + hostAdvice
	case r.backend == "HIP":
		ev += fmt.Sprintf("; on ROCm the device may be an APU (Strix Halo, MI300A and others share the machine's RAM; the message cannot tell), and there the %s outside PyTorch's allocator is %s", r.size(others), host)
		advice += "; on an APU with unified memory no other GPU is to be had: " + hostAdvice + amdAdvice
	}
	return name, ev, advice
}

// unifiedRoom is the unified-memory cause of an OOM that the message
// says had room (free memory above the request, no per-process limit) on
// a device the log names as one whose GPU memory is the machine's RAM
// (r.unified, Sure): there the runtime's free memory is what the driver's
// limit on GPU memory leaves (an AMD APU's GTT/TTM pool: hipMemGetInfo),
// not the RAM the kernel can hand out, which the OS, the page cache,
// other programs and this process's CPU side take uncounted. seg is the
// request in bytes.
func (r *Report) unifiedRoom(seg int64) Cause {
	u := r.unified
	ev := fmt.Sprintf("the GPU reported %s free, enough for the %s request, and the message shows no per-process limit; %s:%d names %s, a device whose GPU memory is the machine's RAM: there the free figure is what the driver's limit on GPU memory leaves (on an AMD APU the GTT/TTM pool), not the RAM the OS can hand out now; the OS, the page cache (a model just read from disk stays in it), other programs and this process's CPU memory take the same RAM without being counted in it, so the allocation most likely found too little host memory",
		r.size(r.DeviceFreeBytes), r.size(seg), r.unifiedPath, u.Line, u.Device)
	advice := hostAdvice + "; free -g at the time tells how much the OS had"
	if u.Vendor == "AMD" {
		advice += amdAdvice
	}
	return Cause{Name: CauseUnifiedMemory, Evidence: ev,
		Numbers: map[string]int64{"device_free_bytes": r.DeviceFreeBytes, "segment_bytes": seg},
		Advice:  advice}
}

// backendWords words CUDA's terms as the message's backend's: ROCm's
// (HIP) and Intel's (XPU, Level Zero). The figures and the reasoning are
// the caching allocator's, the same on all three.
var backendWords = map[string]*strings.Replacer{
	"HIP": strings.NewReplacer("cudaMalloc", "hipMalloc", "CUDA context", "HIP context", "a MIG slice or ", "",
		"nvidia-smi", "rocm-smi", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "A CUDA call", "A HIP call",
		// ROCm's own messages name PYTORCH_HIP_ALLOC_CONF; expandable
		// segments came to ROCm later than to CUDA's 2.1.
		"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1+)", "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True (as the message's own hint says)",
		"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"),
	"XPU": strings.NewReplacer("cudaMalloc", "the Level Zero allocation", "CUDA context", "Level Zero context",
		"a MIG slice or ", "", "nvidia-smi", "xpu-smi", "CUDA_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
		"torch.cuda.set_per_process_memory_fraction", "torch.xpu.set_per_process_memory_fraction",
		"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1+)", "PYTORCH_XPU_ALLOC_CONF (expandable segments where the release has them)"),
}

// backendTerms rewrites the causes and notes in the terms of the
// message's backend (see backendWords).
func (r *Report) backendTerms() {
	w := backendWords[r.backend]
	if w == nil {
		return
	}
	for i := range r.Causes {
		r.Causes[i].Evidence = w.Replace(r.Causes[i].Evidence)
		r.Causes[i].Advice = w.Replace(r.Causes[i].Advice)
	}
	for i := range r.Notes {
		r.Notes[i] = w.Replace(r.Notes[i])
	}
}

// mpsCauses explains an MPS message (pytorchtext.GenMPS). MPSAllocator.mm
// refuses an allocation when this process's Metal memory
// (currentAllocatedSize: PyTorch's MPS heaps and its other allocations)
// plus the request would pass the high watermark limit ("max allowed");
// without a limit, or under it, Metal itself could not allocate. The
// message gives neither the device's memory nor what other processes use
// (unified memory), so nothing is said of them.
func (r *Report) mpsCauses() {
	if pytorchtext.MPSBufferRefused(r.Text) {
		// Refused before any allocation: one buffer over Metal's limit.
		r.Causes = append(r.Causes, Cause{Name: CauseAllocationLimit,
			Evidence: fmt.Sprintf("PyTorch's MPS allocator refused the %s buffer itself (\"%s\"): one buffer larger than Metal allows on this Mac (the device's maxBufferLength), checked before any allocation; no memory ran short, and the message gives no other figure", r.size(r.RequestedBytes), r.Text),
			Numbers:  map[string]int64{"requested_bytes": r.RequestedBytes},
			Advice:   "PyTorch has no setting that raises Metal's per-buffer limit (PYTORCH_MPS_HIGH_WATERMARK_RATIO is another limit, on the total): split the operation so that no single tensor is that large (a smaller batch or resolution for this step, chunking the operation: an attention or matmul output is often the large one), or run this step on the CPU"})
		return
	}
	// What the figures are comes after what they say.
	defer func() {
		r.Notes = append(r.Notes, "Apple MPS (unified memory): \"MPS allocated\" is PyTorch's MPS heaps (allocated and cached memory together: the message does not split them, so fragmentation cannot be told), \"other allocations\" the rest of this process's Metal memory, \"max allowed\" the high watermark limit; the message gives neither the memory of the machine nor what other processes use")
	}()
	req, inUse := r.RequestedBytes, r.ProcessInUseBytes
	if !r.known(r.AllowedBytes) {
		r.Notes = append(r.Notes, "no high watermark limit was set (PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0): Metal itself could not allocate, the machine's unified memory was exhausted; the message does not say by what")
		return
	}
	if !r.known(inUse) {
		return
	}
	other := inUse - r.ReservedBytes
	if !r.known(req) {
		// Cut before its request: only a process already over the limit
		// tells.
		if inUse > r.AllowedBytes+pytorchtext.SizeTolerance(r.ReservedBytes)+pytorchtext.SizeTolerance(other)+pytorchtext.SizeTolerance(r.AllowedBytes) {
			r.Causes = append(r.Causes, Cause{Name: CauseMemoryLimit,
				Evidence: fmt.Sprintf("this process's Metal memory, %s in PyTorch's MPS heaps and %s of other allocations, was over the %s max allowed (the high watermark limit) before the request, whatever its size", r.size(r.ReservedBytes), r.size(other), r.size(r.AllowedBytes)),
				Numbers:  map[string]int64{"allowed_bytes": r.AllowedBytes, "reserved_bytes": r.ReservedBytes, "other_allocations_bytes": other, "shortfall_bytes": inUse - r.AllowedBytes},
				Advice:   mpsAdvice(r.ReservedBytes, other)})
			return
		}
		r.Notes = append(r.Notes, fmt.Sprintf("the message was cut short (%s) before its request: this process's %s of Metal memory (%s of it outside PyTorch's MPS heaps) against %s max allowed, but whether the request passed the limit cannot be told", r.Reason, r.size(inUse), r.size(other), r.size(r.AllowedBytes)))
		return
	}
	tol := pytorchtext.SizeTolerance(r.ReservedBytes) + pytorchtext.SizeTolerance(other) + pytorchtext.SizeTolerance(req) + pytorchtext.SizeTolerance(r.AllowedBytes)
	need := inUse + req
	if need+tol < r.AllowedBytes {
		r.Notes = append(r.Notes, fmt.Sprintf("this process's %s of Metal memory and the %s request (%s) stay under the %s max allowed: the limit did not refuse it, Metal itself could not allocate (the machine's unified memory exhausted, or a buffer larger than Metal allows); the message does not say which",
			r.size(inUse), r.size(req), r.sizeFrom(need, inUse, req), r.size(r.AllowedBytes)))
		return
	}
	ev := fmt.Sprintf("this process's Metal memory, %s in PyTorch's MPS heaps and %s of other allocations, and the %s request come to %s", r.size(r.ReservedBytes), r.size(other), r.size(req), r.sizeFrom(need, inUse, req))
	switch {
	case inUse > r.AllowedBytes+tol:
		ev += fmt.Sprintf(": this process was over the %s max allowed (the high watermark limit) before the request", r.size(r.AllowedBytes))
	case need > r.AllowedBytes+tol:
		ev += fmt.Sprintf(", over the %s max allowed (the high watermark limit)", r.size(r.AllowedBytes))
	default:
		ev += fmt.Sprintf(", the %s max allowed (the high watermark limit) within the rounding of the printed sizes", r.size(r.AllowedBytes))
	}
	if other > r.ReservedBytes {
		ev += fmt.Sprintf("; most of it (%s) is outside PyTorch's MPS heaps", r.size(other))
	}
	advice := mpsAdvice(r.ReservedBytes, other)
	r.Causes = append(r.Causes, Cause{Name: CauseMemoryLimit, Evidence: ev,
		Numbers: map[string]int64{"allowed_bytes": r.AllowedBytes, "reserved_bytes": r.ReservedBytes, "other_allocations_bytes": other,
			"segment_bytes": req, "shortfall_bytes": max(need-r.AllowedBytes, 0)},
		Advice: advice})
}

// mpsAdvice is what to change for an MPS message at its limit, given the
// bytes in PyTorch's MPS heaps and in the process's other Metal memory.
func mpsAdvice(heaps, other int64) string {
	advice := "need less at the peak (a smaller batch or image size, fewer models loaded at once, float16); the limit is PYTORCH_MPS_HIGH_WATERMARK_RATIO (or torch.mps.set_per_process_memory_fraction) times the device's recommended working set: raising it, or 0.0 for none, lets macOS swap and may stall the system"
	if other > heaps {
		advice += fmt.Sprintf("; %s of this process's Metal memory is outside PyTorch's MPS heaps, which torch.mps.empty_cache() does not release: look for what else in the process holds Metal memory (another framework, models kept from earlier steps)", size(other))
	}
	return advice
}

// cutTooBig judges a message cut after the memory PyTorch had allocated
// (a 1.x message shortened after "already allocated", a 2.x one cut after
// "Of the allocated memory A is allocated by PyTorch"): that memory is in
// use by tensors, so when it and the request are more than the GPU's
// total, no free, cached or other process's memory could have made room
// (capacity, as for a whole message); when they are more than the limit
// the message gives ("N allowed"), the limit refused it (memory-limit).
// Else the note says which figures are there and that PyTorch's reserved
// memory, which would tell the rest, was cut. It reports whether it judged.
func (r *Report) cutTooBig() bool {
	if !r.known(r.RequestedBytes) || r.RequestedBytes == 0 || !r.known(r.AllocatedBytes) {
		return false
	}
	req, alloc := r.RequestedBytes, r.AllocatedBytes
	tol := pytorchtext.SizeTolerance(req) + pytorchtext.SizeTolerance(alloc)
	cut := fmt.Sprintf(" (the message was cut after its allocated memory: %s)", r.Reason)
	switch {
	case r.known(r.DeviceTotalBytes) && req+alloc > r.DeviceTotalBytes+tol+pytorchtext.SizeTolerance(r.DeviceTotalBytes):
		ev := fmt.Sprintf("the %s request and the %s PyTorch had allocated are more than the GPU's %s: no release of cached memory or other processes could have made room",
			r.size(req), r.size(alloc), r.size(r.DeviceTotalBytes))
		r.Causes = append(r.Causes, Cause{Name: CauseCapacity, Evidence: ev + cut,
			Numbers: map[string]int64{"requested_bytes": req, "allocated_bytes": alloc, "device_total_bytes": r.DeviceTotalBytes},
			Advice:  "the working set is larger than the GPU: a smaller batch, activation checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast), offloading to the CPU, or sharding across GPUs (FSDP, DeepSpeed ZeRO)"})
		return true
	case r.known(r.AllowedBytes) && req+alloc > r.AllowedBytes+tol+pytorchtext.SizeTolerance(r.AllowedBytes):
		ev := fmt.Sprintf("the %s request and the %s PyTorch had allocated are more than the %s allowed (torch.cuda.set_per_process_memory_fraction): the limit refused it",
			r.size(req), r.size(alloc), r.size(r.AllowedBytes))
		if r.known(r.DeviceFreeBytes) {
			ev += fmt.Sprintf(", with %s free on the GPU", r.size(r.DeviceFreeBytes))
		}
		r.Causes = append(r.Causes, Cause{Name: CauseMemoryLimit, Evidence: ev + cut,
			Numbers: map[string]int64{"requested_bytes": req, "allocated_bytes": alloc, "allowed_bytes": r.AllowedBytes},
			Advice:  memoryLimitAdvice})
		return true
	}
	given := []string{fmt.Sprintf("the request (%s)", r.size(req)), fmt.Sprintf("the %s PyTorch had allocated", r.size(alloc))}
	if r.known(r.DeviceTotalBytes) {
		given = append(given, "the GPU's total ("+r.size(r.DeviceTotalBytes)+")")
	}
	if r.known(r.DeviceFreeBytes) {
		given = append(given, "its free memory ("+r.size(r.DeviceFreeBytes)+")")
	}
	if r.known(r.AllowedBytes) {
		given = append(given, "the limit ("+r.size(r.AllowedBytes)+" allowed)")
	}
	r.Notes = append(r.Notes, fmt.Sprintf("the message was cut short (%s): it gives %s, and the request with the allocated memory fits them; PyTorch's reserved memory, which would tell whether cached or split blocks held the rest, was cut, so the cause cannot be told; the full message (the job's own log rather than a collector's, or str(e)) gives it",
		r.Reason, strings.Join(given, ", ")))
	return true
}

// checkImpossible notes figures that cannot all hold on one GPU: this
// process, PyTorch's reserved memory or the listed processes above the
// GPU's total. On Windows (WDDM) the driver may spill into shared system
// memory; else the message was edited or pieced together.
func (r *Report) checkImpossible() {
	if !r.known(r.DeviceTotalBytes) || r.DeviceTotalBytes == 0 {
		return
	}
	limit := r.DeviceTotalBytes + pytorchtext.SizeTolerance(r.DeviceTotalBytes)
	var listed int64
	for _, p := range r.OtherProcesses {
		listed += p.Bytes
	}
	for _, f := range []struct {
		what string
		v    int64
	}{{"PyTorch's reserved memory", r.ReservedBytes}, {"this process's memory", r.ProcessInUseBytes}, {"the processes listed", listed}} {
		if f.v > limit+pytorchtext.SizeTolerance(f.v) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s (%s) is more than the GPU's %s: impossible on one GPU's memory; on Windows the driver (WDDM) may have spilled into shared system memory, else the message was edited or pieced together: the causes given rest on these figures", f.what, r.size(f.v), r.size(r.DeviceTotalBytes)))
			return
		}
	}
}

// nameProcesses finds, for each process the message lists, its NVML
// sample nearest the OOM.
func (r *Report) nameProcesses(procs []GPUProcess) {
	for _, p := range r.OtherProcesses {
		best := -1
		for i, q := range procs {
			if q.PID != p.PID {
				continue
			}
			if best < 0 || (r.TimeUs > 0 && q.TimeUs > 0 && absDiff(q.TimeUs, r.TimeUs) < absDiff(procs[best].TimeUs, r.TimeUs)) || (r.TimeUs == 0 && q.TimeUs >= procs[best].TimeUs) {
				best = i
			}
		}
		if best >= 0 {
			if r.ProcessNames == nil {
				r.ProcessNames = map[int64]GPUProcess{}
			}
			r.ProcessNames[p.PID] = procs[best]
		}
	}
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// reconcileProcesses reads a message's process figures. "this process has
// 0 bytes memory in use" is NVML failing to see the process (a container's
// PID namespace): unknown, not zero. A "Process N has M" line may name this
// very process, seen from outside its PID namespace: when this process's
// memory and the listed processes' together are more than the GPU had in
// use, the process that makes the sum too large is this one.
func (r *Report) reconcileProcesses() {
	if r.ProcessInUseBytes == 0 {
		r.ProcessInUseBytes = -1
		r.Notes = append(r.Notes, "the message says this process has 0 bytes memory in use: NVML could not see the process (a container's PID namespace), so its memory is unknown, not zero")
	}
	if !r.known(r.DeviceTotalBytes) || !r.known(r.DeviceFreeBytes) || !r.known(r.ReservedBytes) || len(r.OtherProcesses) == 0 {
		return
	}
	used := r.DeviceTotalBytes - r.DeviceFreeBytes
	self := r.ProcessInUseBytes
	if !r.known(self) {
		self = r.ReservedBytes // at least PyTorch's reserved memory is on the GPU
	}
	var listed, tol int64
	for _, p := range r.OtherProcesses {
		listed += p.Bytes
		tol += pytorchtext.SizeTolerance(p.Bytes)
	}
	tol += pytorchtext.SizeTolerance(r.DeviceTotalBytes) + pytorchtext.SizeTolerance(r.DeviceFreeBytes) + pytorchtext.SizeTolerance(self)
	if self+listed <= used+tol {
		return
	}
	// This process holds PyTorch's reserved memory plus what lives outside
	// the caching allocator (the CUDA context, libraries: a few hundred
	// MiB, rarely more than 2 GiB). Of the listed processes that hold at
	// least the reserved memory, the smallest fits that best; when a
	// second one is also within 2 GiB of it, say the choice is uncertain.
	k, k2 := -1, -1
	for i, p := range r.OtherProcesses {
		if p.Bytes+pytorchtext.SizeTolerance(p.Bytes) < r.ReservedBytes {
			continue
		}
		switch {
		case k < 0 || p.Bytes < r.OtherProcesses[k].Bytes:
			k, k2 = i, k
		case k2 < 0 || p.Bytes < r.OtherProcesses[k2].Bytes:
			k2 = i
		}
	}
	if k < 0 {
		return
	}
	p := r.OtherProcesses[k]
	r.OtherProcesses = append(append([]pytorchtext.Process(nil), r.OtherProcesses[:k]...), r.OtherProcesses[k+1:]...)
	if !r.known(r.ProcessInUseBytes) {
		r.ProcessInUseBytes = p.Bytes
	}
	note := fmt.Sprintf("process %d (%s) is taken for this process, seen from outside its PID namespace: with PyTorch's %s reserved, the processes listed would hold more than the %s in use on the GPU, and it is the smallest listed process that holds PyTorch's reserved memory",
		p.PID, r.size(p.Bytes), r.size(r.ReservedBytes), r.size(used))
	if k2 >= 0 {
		if q := r.OtherProcesses[k2-btoi(k2 > k)]; q.Bytes-r.ReservedBytes < otherEstimatedMin {
			note += fmt.Sprintf("; process %d (%s) could be it as well: the message cannot tell which", q.PID, r.size(q.Bytes))
		}
	}
	r.Notes = append(r.Notes, note)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// growthRefused says why PyTorch could not reserve a new segment instead.
func (r *Report) growthRefused(gpuRoom bool, seg int64) string {
	switch {
	case gpuRoom && r.known(r.AllowedBytes):
		return fmt.Sprintf("; the %s limit (allowed) kept PyTorch from reserving a new %s segment", r.size(r.AllowedBytes), r.size(seg))
	case gpuRoom && r.msg != nil && r.msg.Typo:
		return fmt.Sprintf("; the GPU had %s free, so a per-process limit (set_per_process_memory_fraction, which PyTorch 2.1's message does not print) kept PyTorch from reserving a new %s segment", r.size(r.DeviceFreeBytes), r.size(seg))
	case gpuRoom:
		return fmt.Sprintf("; the GPU had %s free, so a per-process limit kept PyTorch from reserving a new %s segment", r.size(r.DeviceFreeBytes), r.size(seg))
	case r.known(r.DeviceFreeBytes):
		return fmt.Sprintf("; the GPU had only %s free for a new %s segment", r.size(r.DeviceFreeBytes), r.size(seg))
	}
	return ""
}

const fragmentationAdvice = "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1+) so that freed memory is mapped again contiguously; before 2.1, max_split_size_mb (e.g. 128) keeps large cached blocks from being split; or allocate the large, long-lived buffers first, before many small ones interleave with them"

// The allocator's settings against fragmentation came late:
// max_split_size_mb (pull request 44742, PYTORCH_CUDA_ALLOC_CONF) in
// PyTorch 1.10, expandable_segments (pull request 96995, April 2023) in
// 2.1. A message's form tells the release: 1.0-1.3 ("cached") has
// neither, 1.4-2.0 ("reserved in total by PyTorch") may have the first,
// and has it when its message names it (the hint "try setting
// max_split_size_mb" of later 1.x releases).
const (
	cachedFragmentationAdvice = "this message's form is PyTorch 1.0-1.3's, whose allocator has no setting against fragmentation (max_split_size_mb came in 1.10, expandable_segments in 2.1: upgrading gives them): allocate the large, long-lived buffers first, before many small ones interleave with them, or lower the peak (a smaller batch, activation checkpointing)"
	namedFragmentationAdvice  = "set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 (this release has it: its message names it) so that large cached blocks are not split; or allocate the large, long-lived buffers first, before many small ones interleave with them; expandable_segments:True, which maps freed memory again contiguously, needs PyTorch 2.1+ (upgrading gives it)"
	gen1FragmentationAdvice   = "this message's form is PyTorch 1.4-2.0's: from 1.10 on, set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 so that large cached blocks are not split (earlier releases do not have it); or allocate the large, long-lived buffers first, before many small ones interleave with them; expandable_segments:True, which maps freed memory again contiguously, needs PyTorch 2.1+ (upgrading gives both)"
)

// fragmentationAdvice is the fragmentation cause's advice for the release
// the OOM message's form tells (see cachedFragmentationAdvice): a CUDA
// message of the 1.x forms gets what its releases have; a 2.x message or
// a snapshot (2.1+ has all) the general advice.
func (r *Report) fragmentationAdvice() string {
	if r.snapshot || r.msg == nil || r.backend != "CUDA" || r.msg.Generation != pytorchtext.Gen1 {
		return fragmentationAdvice
	}
	switch {
	case r.msg.Cached:
		return cachedFragmentationAdvice
	case strings.Contains(r.msg.Text, "max_split_size_mb"):
		return namedFragmentationAdvice
	}
	return gen1FragmentationAdvice
}

const expandableFragmentationAdvice = "expandable segments were already on, so the free memory is in partial pages between long-lived blocks: allocate the large, long-lived buffers first (or in a torch.cuda.MemPool of their own), free the short-lived ones sooner, or lower the peak (smaller batch, activation checkpointing); max_split_size_mb does not apply to expandable segments"

const memoryLimitAdvice = "the process reached its own cap, not the GPU's: raise torch.cuda.set_per_process_memory_fraction (or the framework setting that sets it), or reduce what this process needs"

func frameString(f callsite.Frame) string {
	if f.Filename == "" && f.Name == "" {
		return "(no stack)"
	}
	file := f.Filename
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		file = file[i+1:]
	}
	if f.Line > 0 {
		return fmt.Sprintf("%s (%s:%d)", f.Name, file, f.Line)
	}
	return fmt.Sprintf("%s (%s)", f.Name, file)
}

// statsNear reports whether a stats value (maybe truncated to its
// resolution) is v, give or take tol.
func statsNear(s *AllocatorStats, key string, v, tol int64) bool {
	x, ok := s.Get(key)
	if !ok {
		return false
	}
	return x-tol <= v && v < x+max(s.Resolution[key], 1)+tol
}

// statsAtOOM finds the OOM a stats set was taken at: it counts an OOM and
// its allocated and reserved memory are the OOM's.
func statsAtOOM(reports []*Report, s *AllocatorStats) *Report {
	if n, ok := s.Get("num_ooms"); !ok || n == 0 {
		return nil
	}
	var found *Report
	for _, r := range reports {
		if r.Stats != nil || r.Host() || !r.known(r.AllocatedBytes) || !r.known(r.ReservedBytes) || (s.Device >= 0 && r.Device >= 0 && s.Device != r.Device) {
			continue
		}
		tol := int64(0)
		if !r.snapshot {
			tol = pytorchtext.SizeTolerance(r.AllocatedBytes) + pytorchtext.SizeTolerance(r.ReservedBytes)
		}
		if statsNear(s, "allocated_bytes.all.current", r.AllocatedBytes, tol) && statsNear(s, "reserved_bytes.all.current", r.ReservedBytes, tol) {
			found = r
		}
	}
	return found
}

// statsMatchState reports whether a stats set describes a snapshot state.
// PyTorch counts a segment per cudaMalloc: the fixed segments, not the
// mapped ranges of expandable ones that a snapshot lists.
func statsMatchState(s *AllocatorStats, dm snapshot.DeviceMemory) bool {
	if s.Device >= 0 && s.Device != dm.Device {
		return false
	}
	return statsNear(s, "allocated_bytes.all.current", dm.Total.AllocatedBytes, 0) &&
		statsNear(s, "reserved_bytes.all.current", dm.Total.ReservedBytes, 0) &&
		statsNear(s, "segment.all.current", int64(dm.Fixed.Segments), 0)
}

// dedupeStats drops a memory_summary() set that shows the numbers of a
// memory_stats() set given too (truncated to its units), and names the
// summary in the stats set's SameAs.
func dedupeStats(in []StatsReport) []StatsReport {
	dup := make([]bool, len(in))
	for i, a := range in {
		if a.Stats.Source != pytorchtext.SourceMemorySummary {
			continue
		}
		for j, b := range in {
			if b.Stats.Source != pytorchtext.SourceMemoryStats || (a.Stats.Device >= 0 && b.Stats.Device >= 0 && a.Stats.Device != b.Stats.Device) {
				continue
			}
			if summaryShows(&a.Stats, &b.Stats) {
				dup[i] = true
				in[j].SameAs = append(in[j].SameAs, a.Path)
				in[j].summaries = append(in[j].summaries, StatsAt{Path: a.Path, Line: a.Stats.Line})
				break
			}
		}
	}
	var out []StatsReport
	for i := range in {
		if !dup[i] {
			out = append(out, in[i])
		}
	}
	return out
}

// summaryShows reports whether every value of a summary is a stats value
// truncated to the summary's unit.
func summaryShows(sum, stats *AllocatorStats) bool {
	if len(sum.Values) == 0 {
		return false
	}
	for k, v := range sum.Values {
		bv, ok := stats.Values[k]
		if !ok || bv < v || bv >= v+max(sum.Resolution[k], 1) {
			return false
		}
	}
	return true
}

const endFragmentationAdvice = "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1+), or max_split_size_mb before 2.1, or allocate long-lived buffers before short-lived ones so that they do not split the segments"

// pinnedAdvice is the advice for split memory that lies mostly in one
// block (ShapePinned): no allocator setting against fragmentation helps
// requests that already fit; what returns it is freeing, or not placing,
// the live blocks of its segment, or expandable segments, whose whole free
// pages empty_cache() unmaps.
const pinnedAdvice = "it matters only when another process needs the memory or a larger request comes: free the live blocks that share its segment, or allocate long-lived buffers before large short-lived ones so that they do not share a segment; with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1+) empty_cache() unmaps a segment's whole free pages beside live blocks"

// splitShape tells whether split free memory s is scattered or pinned
// (see ShapeScattered): by its largest split block where the snapshot
// gives it, by the count of split blocks where only one is counted.
func splitShape(s snapshot.PoolState) string {
	switch {
	case s.LargestSplitBytes >= 0 && 2*s.LargestSplitBytes >= s.InactiveSplitBytes:
		return ShapePinned
	case s.LargestSplitBytes >= 0:
		return ShapeScattered
	case s.InactiveSplitBlocks == 1:
		return ShapePinned
	}
	return ShapeUnknown
}

// worthReporting says whether free memory that cannot be returned is large.
func worthReporting(split, reserved int64) bool {
	return split >= fragmentationMinSplit && (float64(split) >= fragmentationMinShare*float64(reserved) || split >= fragmentationMinLarge)
}

// fragmentationReports finds large free-but-unusable memory at the end of
// snapshots, and in stats sets that no snapshot describes.
func fragmentationReports(inputs []Input, stats []StatsReport) []FragmentationReport {
	var out []FragmentationReport
	for _, in := range inputs {
		if in.Snapshot == nil {
			continue
		}
		for _, dm := range in.Snapshot.Fragment.End {
			// Fixed and expandable segments alike: an expandable
			// segment's split memory is what stays mapped in pages
			// shared with live blocks, which empty_cache() does not
			// unmap and a larger request cannot use.
			f := dm.Total
			if !worthReporting(f.InactiveSplitBytes, f.ReservedBytes) {
				continue
			}
			fr := FragmentationReport{Path: in.Path, Format: in.Format, Device: dm.Device, At: "end", State: f, Advice: endFragmentationAdvice, Pools: dm.Pools, Shape: splitShape(f)}
			if in.Snapshot.Leak != nil {
				for _, ds := range in.Snapshot.Leak.Devices {
					if ds.Device == dm.Device && ds.PeakReservedBytes > 0 && ds.PeakActiveBytes > 0 {
						fr.PeakActiveBytes, fr.PeakReservedBytes = ds.PeakActiveBytes, ds.PeakReservedBytes
					}
				}
			}
			if fr.Shape == ShapePinned {
				fr.Advice = pinnedAdvice
			}
			if exp := f.InactiveSplitBytes - dm.Fixed.InactiveSplitBytes; exp > 0 {
				fr.Expandable = true
				if exp >= dm.Fixed.InactiveSplitBytes {
					fr.Advice = expandableFragmentationAdvice
				}
			}
			out = append(out, fr)
		}
	}
	for _, s := range stats {
		if s.SnapshotEnd {
			continue // the snapshot's end says more
		}
		st := &s.Stats
		split, ok1 := st.Get("inactive_split_bytes.all.current")
		reserved, ok2 := st.Get("reserved_bytes.all.current")
		if !ok1 || !ok2 || !worthReporting(split, reserved) || st.Inconsistent() != "" {
			continue // an inconsistent set's verdict says why it is not judged
		}
		ps := snapshot.PoolState{PoolKey: snapshot.PoolKey{Device: max(st.Device, 0)}, ReservedBytes: reserved, InactiveSplitBytes: split, LargestFreeBytes: -1, LargestSplitBytes: -1}
		ps.AllocatedBytes, _ = st.Get("allocated_bytes.all.current")
		ps.ActiveBytes, _ = st.Get("active_bytes.all.current")
		ps.RequestedBytes, ps.RequestedKnown = st.Get("requested_bytes.all.current")
		if n, ok := st.Get("segment.all.current"); ok {
			ps.Segments = int(n)
		}
		if n, ok := st.Get("inactive_split.all.current"); ok {
			ps.InactiveSplitBlocks = int(n)
		}
		ps.FreeBytes = ps.ReservedBytes - ps.ActiveBytes
		fr := FragmentationReport{Path: s.Path, Format: s.Format, Device: st.Device, At: st.Source, State: ps, Advice: endFragmentationAdvice, Shape: splitShape(ps)}
		if fr.Shape == ShapePinned {
			fr.Advice = pinnedAdvice
		}
		out = append(out, fr)
	}
	return out
}

// maxCoarse bounds the coarse figures judgeCoarse moves independently
// (2^maxCoarse variants); more are moved together with the last.
// maxCoarseVariants bounds the variants judged in one postmortem (a log of
// thousands of retyped messages): past it, fewer figures move
// independently, down to all together (2 variants).
const (
	maxCoarse         = 10
	maxCoarseVariants = 1 << 18
)

// judgeCoarse keeps the causes of a message whose figures were typed
// coarser than PyTorch prints them ("2 GiB", Message.Coarse) only when they
// hold at that precision: the message is judged again with every coarse
// figure at either end of its rounding allowance (half a unit of its last
// digit), every combination; where any gives other causes, or another
// answer to whether the request would have fit if contiguous, the causes
// (and that answer) are dropped and a note says the figures are too coarse
// to decide. Figures are only moved within what was typed: the truth lies
// in that box, and a cause that holds at all its corners is taken to hold.
// budget bounds the variants tried across a postmortem (maxCoarseVariants);
// past it, the last figures move together.
func (r *Report) judgeCoarse(procs []GPUProcess, filter *callsite.FrameFilter, budget *int) {
	m := r.coarse
	if m == nil || r.snapshot || len(r.Sources) == 0 {
		return
	}
	figs := m.Coarse
	typed := make([]string, 0, len(figs))
	for _, f := range figs {
		mm := m.Message
		if v := f.In(&mm); v != nil && *v >= 0 {
			text := f.Typed
			if text == "" {
				text = pytorchtext.FormatWithin(*v, f.Tolerance)
			}
			name := strings.ReplaceAll(f.Field, "_", " ")
			if n, ok := strings.CutPrefix(f.Field, "process "); ok {
				// The Nth process line: named by its PID, as printed.
				if i, err := strconv.Atoi(n); err == nil && i < len(m.Processes) {
					name = fmt.Sprintf("process %d", m.Processes[i].PID)
				}
			}
			typed = append(typed, fmt.Sprintf("%s %s ±%s", name, text, pytorchtext.FormatTolerance(f.Tolerance, text)))
		}
	}
	verdict := func(q *Report) string {
		names := make([]string, 0, len(q.Causes))
		for _, c := range q.Causes {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		fit := "?"
		if q.WouldFitIfContiguous != nil {
			fit = strconv.FormatBool(*q.WouldFitIfContiguous)
		}
		return strings.Join(names, ",") + "|" + fit
	}
	nominal := verdict(r)
	seen := map[string]bool{nominal: true}
	var others []string
	n := min(len(figs), maxCoarse)
	for n > 1 && 1<<n > *budget {
		n--
	}
	*budget = max(*budget-1<<n, 0)
	for mask := 0; mask < 1<<n; mask++ {
		mm := m.Message
		mm.Processes = slices.Clone(m.Processes)
		for i, f := range figs {
			d := f.Tolerance
			if mask&(1<<min(i, n-1)) == 0 {
				d = -d
			}
			moveFigure(&mm, f, d)
		}
		q := &Report{Device: -1}
		q.clear()
		q.addMessage(Message{Message: mm, Line: m.Line, Frames: m.Frames}, r.Sources[0], filter)
		q.unified, q.unifiedPath = r.unified, r.unifiedPath
		q.nameProcesses(procs)
		q.findCauses()
		if v := verdict(q); !seen[v] {
			seen[v] = true
			others = append(others, v)
		}
	}
	if len(others) == 0 {
		together := ""
		if n < len(figs) {
			together = fmt.Sprintf(" (the last %d moved together, not each on its own: too many to try every combination)", len(figs)-n+1)
		}
		r.Notes = append(r.Notes, "some figures were typed with fewer decimals than PyTorch prints ("+strings.Join(typed, ", ")+"): "+
			"the verdict holds at every end of that rounding"+together)
		return
	}
	causes := map[string]bool{}
	for _, v := range append([]string{nominal}, others...) {
		names, _, _ := strings.Cut(v, "|")
		if names == "" {
			names = "no cause"
		}
		names = strings.ReplaceAll(names, ",", " with ")
		causes[names] = true
	}
	alts := slices.Sorted(maps.Keys(causes))
	r.Causes, r.WouldFitIfContiguous = nil, nil
	r.Notes = append(r.Notes, "some figures were typed with fewer decimals than PyTorch prints ("+strings.Join(typed, ", ")+"), "+
		"too coarse to decide the cause: within that rounding the figures give "+strings.Join(alts, " or ")+
		"; the message as PyTorch printed it, with two decimals (the job's own log, or str(e)), tells")
}

// moveFigure adds d bytes to m's figure f, keeping a known figure at 0
// or more and an unknown one unknown.
func moveFigure(m *pytorchtext.Message, f pytorchtext.CoarseFigure, d int64) {
	if v := f.In(m); v != nil && *v >= 0 {
		*v = max(*v+d, 0)
	}
}

// theanoNote says what a Theano message (pytorchtext.GenTheano) tells:
// the request and, where its CUDA back-end printed them, the driver's free
// and total memory, which count Theano's memory and everyone else's
// together. (A request over the GPU's total is capacity: findCauses
// judges that for every printer's message.)
func (r *Report) theanoNote() {
	switch {
	case strings.Contains(r.Text, "CNMEM_STATUS_OUT_OF_MEMORY"):
		r.Notes = append(r.Notes, "Theano's CNMeM pool (lib.cnmem in .theanorc or THEANO_FLAGS) could not allocate "+r.requestWords("")+": the pool took its share of the GPU at start-up (lib.cnmem as a fraction of the GPU's memory, or in MiB above 1) and the arrays in use filled it; the message gives no pool or GPU figures. A larger lib.cnmem (below 1), a smaller batch, or lib.cnmem=0 (no pool: cudaMalloc each time, and the driver's figures in the message) tell more")
	case strings.HasPrefix(r.Text, "Error allocating "):
		figs := ""
		if r.known(r.DeviceFreeBytes) && r.known(r.DeviceTotalBytes) {
			figs = "; the driver then reported " + r.size(r.DeviceFreeBytes) + " free of " + r.size(r.DeviceTotalBytes) + " (cudaMemGetInfo: Theano's arrays, its CUDA context and other processes together, which the message does not split)"
		}
		r.Notes = append(r.Notes, "Theano's CUDA back-end (CudaNdarray) could not allocate "+r.requestWords("")+" with cudaMalloc"+figs+"; nvidia-smi at the time tells whether other processes held the GPU; Theano's allow_gc=True (the default) frees intermediate results between uses, a smaller batch needs less")
	default:
		r.Notes = append(r.Notes, "Theano's gpuarray back-end (libgpuarray, pygpu's GpuArrayException) could not allocate GPU memory: the message gives no size or figures; its preallocation (gpuarray.preallocate) and nvidia-smi at the time tell what held the GPU")
	}
}
