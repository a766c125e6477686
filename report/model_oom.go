package report

import "github.com/gpuleak/gpuleak/parse/pytorchtext"

// AllocatorMemory is PyTorch's caching allocator's memory at an OOM, or
// where a "fragmentation" finding measured it. Sizes are bytes; null when
// the inputs do not say.
type AllocatorMemory struct {
	AllocatedBytes           *int64 `json:"allocated_bytes"`
	ReservedBytes            *int64 `json:"reserved_bytes"`
	ReservedUnallocatedBytes *int64 `json:"reserved_unallocated_bytes"`
	ActiveBytes              *int64 `json:"active_bytes"`
	// LargestFreeBlockBytes: for an OOM, the largest free block where the
	// request could go (its pool and stream); for fragmentation, the
	// largest free block of the device's fixed segments.
	LargestFreeBlockBytes *int64 `json:"largest_free_block_bytes"`
	// Pools is the memory by pool, from a snapshot; [] otherwise.
	Pools []PoolMemory `json:"pools"`
	// Advice says what to change, one entry per cause.
	Advice []string `json:"advice"`
}

// PoolMemory is one pool of the caching allocator: blocks are served only
// from segments of their device, pool and stream. Sizes are bytes.
type PoolMemory struct {
	Device int `json:"device"`
	// Pool is "large" or "small"; PoolID is [0, 0] for the default pool,
	// else a private pool (Private: a CUDA graph's, a MemPool).
	Pool    string   `json:"pool"`
	PoolID  [2]int64 `json:"pool_id"`
	Private bool     `json:"private"`
	Stream  int64    `json:"stream"`
	// Expandable segments map and unmap pages (20 MiB, 2 MiB in the
	// small pool): only their free memory in pages shared with live
	// blocks (InactiveSplitBytes) is fragmentation.
	Expandable     bool  `json:"expandable"`
	Segments       int   `json:"segments"`
	ReservedBytes  int64 `json:"reserved_bytes"`
	AllocatedBytes int64 `json:"allocated_bytes"`
	ActiveBytes    int64 `json:"active_bytes"`
	// RequestedBytes is what the program asked for, of the allocated
	// blocks; InternalFragmentationBytes = allocated - requested. Null
	// when blocks do not say (PyTorch < 2.1).
	RequestedBytes             *int64 `json:"requested_bytes"`
	InternalFragmentationBytes *int64 `json:"internal_fragmentation_bytes"`
	FreeBytes                  int64  `json:"free_bytes"`
	FreeBlocks                 int    `json:"free_blocks"`
	// InactiveSplitBytes: free memory in segments that also hold active
	// blocks (empty_cache cannot return it).
	InactiveSplitBytes    int64 `json:"inactive_split_bytes"`
	InactiveSplitBlocks   int   `json:"inactive_split_blocks"`
	LargestFreeBlockBytes int64 `json:"largest_free_block_bytes"`
	// FragmentationRatio is 1 - largest free block / free bytes.
	FragmentationRatio float64 `json:"fragmentation_ratio"`
	// EstimatedBlocks counts blocks sized from their requested size while
	// replaying the trace back to an OOM.
	EstimatedBlocks int `json:"estimated_blocks"`
}

// OOMDetail is the postmortem of one out-of-memory error. Sizes are bytes,
// null when the inputs do not say; sizes only a message gives are as
// PyTorch printed them (two decimals of KiB, MiB or GiB).
type OOMDetail struct {
	// RequestedBytes is the allocation that failed: from a snapshot, the
	// request as the allocator rounded it; from a message, what it printed
	// (under 10 MiB: the segment size PyTorch needed, 2 or 20 MiB).
	RequestedBytes *int64 `json:"requested_bytes"`
	// SegmentBytes is the segment PyTorch had to reserve for it.
	SegmentBytes *int64 `json:"segment_bytes"`
	// DeviceFreeBytes and DeviceTotalBytes: the GPU's free and total memory.
	DeviceFreeBytes  *int64 `json:"device_free_bytes"`
	DeviceTotalBytes *int64 `json:"device_total_bytes"`
	// ProcessInUseBytes: this process on the GPU, PyTorch's memory and not.
	ProcessInUseBytes *int64 `json:"process_in_use_bytes"`
	// OtherProcesses named by the message; UnlistedBytes is memory in use
	// that none of them nor this process accounts for.
	OtherProcesses []ProcessMemory `json:"other_processes"`
	UnlistedBytes  *int64          `json:"unlisted_bytes"`
	// AllowedBytes is the per-process limit (set_per_process_memory_fraction).
	AllowedBytes     *int64 `json:"allowed_bytes"`
	PrivatePoolBytes *int64 `json:"private_pool_bytes"`
	// WouldFitIfContiguous: PyTorch's reserved-but-free memory (in fixed
	// segments) would have held the request had it been one block.
	WouldFitIfContiguous *bool `json:"would_fit_if_contiguous"`
	// RequestPool is the pool the request had to come from (snapshot only).
	RequestPool *PoolRef `json:"request_pool"`
	// Cause lists the causes, the most specific first: fragmentation,
	// other-processes, accumulation, memory-limit, capacity. Empty when the
	// inputs cannot tell (Notes say why).
	Cause []string `json:"cause"`
	// CauseEvidence gives, per cause, the numbers that led to it.
	CauseEvidence []OOMCause `json:"cause_evidence"`
	// Sites are the call sites holding the most memory at the OOM, largest
	// first (at most 5; snapshot only); SitesTotal counts them all.
	Sites      []OOMSite `json:"sites"`
	SitesTotal int       `json:"sites_total"`
	LiveBlocks *int      `json:"live_blocks"`
	// TimeUs: when it happened, µs since the Unix epoch.
	TimeUs *int64 `json:"time_us"`
	// MessageGeneration of the OOM message ("2.x", "1.x", "async" for
	// cudaMallocAsync, "0.x" for THC, "cuda-error", "cut", "unparsed");
	// null without a message. UnparsedReason says why an unparsed message
	// was not read, or where a cut one ends.
	MessageGeneration *string `json:"message_generation"`
	Exception         *string `json:"exception"`
	UnparsedReason    *string `json:"unparsed_reason"`
	// Sources are the inputs that described this OOM.
	Sources     []OOMSource `json:"sources"`
	Occurrences int         `json:"occurrences"`
	// FoldedOOMs counts out-of-memory lines of this one's kind that a log
	// deduplicator (Ray's "[repeated Nx across cluster]") folded into its
	// line and that no input shows: each counts as an OOM, so the OOMs
	// were at least the findings plus these; absent when none (a note
	// says where the count came from).
	FoldedOOMs int `json:"folded_ooms,omitempty"`
	// Survived is present when a snapshot's trace goes on after the OOM
	// (the program caught it): what came after.
	Survived *Survived `json:"survived,omitempty"`
	// Notes say what could not be decided, and disagreements.
	Notes []string `json:"notes"`
	// CoarseFigures are the figures above that the OOM's message gave with
	// fewer decimals than PyTorch prints (a paste retyped by hand: "24
	// GiB" where PyTorch printed "23.69 GiB"), and those computed from
	// them: their bytes are the figure as typed, true only to within its
	// tolerance. Absent when every figure is as PyTorch prints it.
	CoarseFigures []CoarseFigure `json:"coarse_figures,omitempty"`
	// StatsAtOOM are the allocator statistics taken at this OOM.
	StatsAtOOM *AllocatorStats `json:"stats_at_oom"`
}

// CoarseFigure is a figure of an OOMDetail (or its AllocatorMemory) known
// only to the precision its message gave it.
type CoarseFigure struct {
	// Figure is the figure's JSON name in the finding ("requested_bytes",
	// "device_total_bytes", "reserved_bytes", ...), or
	// "other_processes[i].bytes".
	Figure string `json:"figure"`
	// Bytes is the figure's value in the finding.
	Bytes int64 `json:"bytes"`
	// AsTyped is the figure as the message had it ("24 GiB"); absent for
	// one the message does not print but that gpuleak computed from
	// coarse figures (2.x's reserved = allocated + reserved but
	// unallocated).
	AsTyped string `json:"as_typed,omitempty"`
	// ToleranceBytes is how far the true size may be from Bytes: half a
	// unit of the last digit typed (0.5 GiB for "24 GiB"), the sum of the
	// figures' for one computed.
	ToleranceBytes int64 `json:"tolerance_bytes"`
}

// Text renders the figure as its message gave it: as typed, or with no
// more decimals than its tolerance leaves true.
func (c CoarseFigure) Text() string {
	if c.AsTyped != "" {
		return c.AsTyped
	}
	return pytorchtext.FormatWithin(c.Bytes, c.ToleranceBytes)
}

// size renders b, the finding's figure named figure, as PyTorch's
// messages do ("24.00 GiB"), or as its message gave it where that figure
// is coarse ("24 GiB"): two decimals would claim a precision the message
// did not have.
func (d *OOMDetail) size(figure string, b int64) string {
	if t, ok := d.coarse(figure, b); ok {
		return t
	}
	return sz(b)
}

// coarse returns figure's text as the message gave it when that figure,
// of b bytes, is coarse; d may be nil.
func (d *OOMDetail) coarse(figure string, b int64) (string, bool) {
	if d != nil {
		for _, c := range d.CoarseFigures {
			if c.Figure == figure && c.Bytes == b {
				return c.Text(), true
			}
		}
	}
	return "", false
}

// cell renders b, the finding's figure named figure, as the findings
// tables do (IBytes), or as its message gave it where that figure is
// coarse: IBytes's "2.0 GiB" would claim a tenth of a GiB the message
// did not have. d may be nil (a finding without an OOM).
func (d *OOMDetail) cell(figure string, b int64) string {
	if t, ok := d.coarse(figure, b); ok {
		return t
	}
	return IBytes(b)
}

// sizep is size for a figure that may be unknown ("?").
func (d *OOMDetail) sizep(figure string, b *int64) string {
	if b == nil {
		return "?"
	}
	return d.size(figure, *b)
}

// PoolRef names a pool.
type PoolRef struct {
	Pool   string   `json:"pool"`
	PoolID [2]int64 `json:"pool_id"`
	Stream int64    `json:"stream"`
}

// ProcessMemory is another process's memory on the GPU.
type ProcessMemory struct {
	PID   int64 `json:"pid"`
	Bytes int64 `json:"bytes"`
	// Name is the process name an NVML log given with the message has
	// for this PID; absent without one.
	Name string `json:"name,omitempty"`
}

// OOMCause is one cause with its evidence.
type OOMCause struct {
	Cause    string           `json:"cause"`
	Evidence string           `json:"evidence"`
	Numbers  map[string]int64 `json:"numbers"`
	Advice   string           `json:"advice"`
}

// OOMSite is a call site holding memory at an OOM.
type OOMSite struct {
	// Kind is "leak" for a site that grew up to the OOM, "retained" or
	// "live" as for findings.
	Kind  Kind  `json:"kind"`
	Bytes int64 `json:"bytes"`
	Count int   `json:"count"`
	// NotInTrace counts the blocks older than the trace (known from the
	// snapshot's blocks only); a "live" site has at least one.
	NotInTrace int     `json:"not_in_trace"`
	Site       Frame   `json:"site"`
	Stack      []Frame `json:"stack"`
}

// OOMSource is one input's account of an OOM.
type OOMSource struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Line of the message (text) or TraceSeq of the "oom" trace entry
	// (snapshot); the other is null. Both are null for a profiler
	// trace's [OutOfMemory] event (format pytorch-profiler-trace).
	Line     *int64 `json:"line"`
	TraceSeq *int64 `json:"trace_seq"`
}

// FragmentationDetail measures free memory that cannot serve large
// requests, on one device.
type FragmentationDetail struct {
	// At is "end" (a snapshot's end), "memory_stats" or "memory_summary".
	At       string `json:"at"`
	Segments int    `json:"segments"`
	// FreeBytes is reserved minus active memory (see MisfitSegments).
	FreeBytes  int64 `json:"free_bytes"`
	FreeBlocks *int  `json:"free_blocks"`
	// InactiveSplitBytes is free memory split around active blocks.
	InactiveSplitBytes  int64 `json:"inactive_split_bytes"`
	InactiveSplitBlocks *int  `json:"inactive_split_blocks"`
	// BlockRequestedBytes is what the program asked for of the allocated
	// blocks; InternalFragmentationBytes = allocated - requested.
	BlockRequestedBytes        *int64 `json:"block_requested_bytes"`
	InternalFragmentationBytes *int64 `json:"internal_fragmentation_bytes"`
	// FragmentationRatio is 1 - largest free block / free bytes; null
	// without the largest free block (stats).
	FragmentationRatio *float64 `json:"fragmentation_ratio"`
	// LargestSplitBlockBytes is the largest free block among the split
	// ones (InactiveSplitBytes): the largest request they can serve; null
	// without blocks (stats).
	LargestSplitBlockBytes *int64 `json:"largest_split_block_bytes"`
	// SplitShape is how the split memory lies: "scattered" (the largest
	// split block holds less than half of it: fragmentation, a request
	// larger than that block does not fit), "pinned" (one block, or the
	// largest, holds at least half: requests up to its size fit, and the
	// live blocks of its segment keep empty_cache() from returning it) or
	// "unknown" (stats that count several split blocks but not their
	// sizes).
	SplitShape string `json:"split_shape"`
	// MisfitSegments counts segments whose blocks do not fit them (outside
	// the segment, or adding up past its total_size): an inconsistent
	// snapshot, named in the input's warnings. FreeBytes then counts what
	// the active blocks leave within their segments: a bound, never more
	// than reserved. Absent when every segment's blocks fit it.
	MisfitSegments int `json:"misfit_segments,omitempty"`
}

// AllocatorStats are the main numbers of one torch.cuda.memory_stats()
// dict or memory_summary() table. Sizes are bytes; null when absent.
// Summary values are truncated to the unit it printed.
type AllocatorStats struct {
	Source string `json:"source"` // "memory_stats" or "memory_summary"
	Line   int64  `json:"line"`
	Device *int   `json:"device"`

	AllocatedBytes *int64 `json:"allocated_bytes"`
	ReservedBytes  *int64 `json:"reserved_bytes"`
	ActiveBytes    *int64 `json:"active_bytes"`
	// InactiveSplitBytes is the non-releasable memory; null when all the
	// reserved memory is in expandable segments, which PyTorch leaves out
	// of it (its 0 then measures nothing).
	InactiveSplitBytes *int64 `json:"inactive_split_bytes"`
	// ExpandableSegments: some of the reserved memory is in expandable
	// segments (reserved with no segment counted); InactiveSplitBytes
	// covers only the other segments.
	ExpandableSegments bool `json:"expandable_segments,omitempty"`
	// CudaMallocAsync: the set is the cudaMallocAsync backend's
	// (backend:cudaMallocAsync), which fills only allocated, active and
	// reserved memory (current and peak) and leaves the rest zero:
	// InactiveSplitBytes, Segments, Allocations, NumOOMs and
	// NumAllocRetries are then null (not measured), whatever it printed.
	CudaMallocAsync bool `json:"cuda_malloc_async,omitempty"`
	// CountersFell: a cumulative counter of this set (a total allocated
	// or freed, an OOM or retry count) is below the one of the print
	// before it of the same device and Process, which one process's
	// counters never are unless reset (reset_accumulated_memory_stats):
	// the two are prints of separate runs or processes. The counter and
	// both values, with the earlier print's line; absent otherwise.
	CountersFell       string `json:"counters_fell,omitempty"`
	PeakAllocatedBytes *int64 `json:"peak_allocated_bytes"`
	PeakReservedBytes  *int64 `json:"peak_reserved_bytes"`
	Segments           *int64 `json:"segments"`
	Allocations        *int64 `json:"allocations"`
	NumOOMs            *int64 `json:"num_ooms"`
	NumAllocRetries    *int64 `json:"num_alloc_retries"`
	// UndescribedOOMs is how many more out-of-memory errors the
	// allocator counted (num_ooms) than the inputs describe: OOMs the
	// program caught, or whose message is not among the inputs. Absent
	// when none; the oom gate counts them.
	UndescribedOOMs int64 `json:"undescribed_ooms,omitempty"`
	// SameAs names other inputs of the same moment.
	SameAs []string `json:"same_as"`
	// PartialAtLine is the line where a memory_summary() table broke off
	// (cut, or a row not understood); absent for a whole table. The
	// values are those of the rows before it (null for rows not read).
	PartialAtLine int64 `json:"partial_at_line,omitempty"`
	// PartialBoundBytes and PartialBoundLines: a memory_stats() dict in a
	// log that went on past the most gpuleak reads of one (this many
	// bytes, or lines): it was not cut; it was read up to PartialAtLine and
	// the rest was not read. Absent otherwise.
	PartialBoundBytes int64 `json:"partial_bound_bytes,omitempty"`
	PartialBoundLines int64 `json:"partial_bound_lines,omitempty"`
	// Process is what begins a memory_summary() table's lines in a log,
	// the same over one process's output (a launcher's "[rank1]:", a
	// logger's prefix with its date and time as "#"): tables of one
	// device with different ones are different processes', with the same
	// one (or none) one process's prints, whose counters are cumulative.
	// Absent when its lines have none.
	Process string `json:"process,omitempty"`
	// Verdict is what the set shows on its own (fragmentation after OOMs
	// and retries; live references after the cache was emptied); absent
	// when nothing stands out.
	Verdict string `json:"verdict,omitempty"`

	source string // the input's path, while notes are added
}

// Survived is what a snapshot's trace holds after an OOM the program
// caught: allocations made after it (the largest, in bytes), the largest
// from the stack that failed (a smaller retry that fit; 0 when none),
// segments returned to the GPU (empty_cache) and later OOMs.
type Survived struct {
	Allocations          int   `json:"allocations"`
	LargestAllocBytes    int64 `json:"largest_allocation_bytes"`
	SameSiteLargestBytes int64 `json:"same_site_largest_bytes"`
	SegmentsReleased     int   `json:"segments_released"`
	LaterOOMs            int   `json:"later_ooms"`
	// SmallerRetry is a site that allocated less after the OOM than
	// before it (a retry with a smaller batch); absent when none.
	SmallerRetry *SmallerRetry `json:"smaller_retry,omitempty"`
}

// SmallerRetry is a site's largest allocation before and after an OOM.
type SmallerRetry struct {
	Site        Frame `json:"site"`
	BeforeBytes int64 `json:"before_bytes"`
	AfterBytes  int64 `json:"after_bytes"`
}
