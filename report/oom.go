package report

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

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
	// Expandable segments remap free pages; their free memory is not
	// fragmentation.
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
	// Survived is present when a snapshot's trace goes on after the OOM
	// (the program caught it): what came after.
	Survived *Survived `json:"survived,omitempty"`
	// Notes say what could not be decided, and disagreements.
	Notes []string `json:"notes"`
	// StatsAtOOM are the allocator statistics taken at this OOM.
	StatsAtOOM *AllocatorStats `json:"stats_at_oom"`
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
	Kind  Kind    `json:"kind"`
	Bytes int64   `json:"bytes"`
	Count int     `json:"count"`
	Site  Frame   `json:"site"`
	Stack []Frame `json:"stack"`
}

// OOMSource is one input's account of an OOM.
type OOMSource struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Line of the message (text) or TraceSeq of the "oom" trace entry
	// (snapshot); the other is null.
	Line     *int64 `json:"line"`
	TraceSeq *int64 `json:"trace_seq"`
}

// FragmentationDetail measures free memory that cannot serve large
// requests, on one device.
type FragmentationDetail struct {
	// At is "end" (a snapshot's end), "memory_stats" or "memory_summary".
	At       string `json:"at"`
	Segments int    `json:"segments"`
	// FreeBytes is reserved minus active memory.
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
}

// AllocatorStats are the main numbers of one torch.cuda.memory_stats()
// dict or memory_summary() table. Sizes are bytes; null when absent.
// Summary values are truncated to the unit it printed.
type AllocatorStats struct {
	Source string `json:"source"` // "memory_stats" or "memory_summary"
	Line   int64  `json:"line"`
	Device *int   `json:"device"`

	AllocatedBytes     *int64 `json:"allocated_bytes"`
	ReservedBytes      *int64 `json:"reserved_bytes"`
	ActiveBytes        *int64 `json:"active_bytes"`
	InactiveSplitBytes *int64 `json:"inactive_split_bytes"`
	PeakAllocatedBytes *int64 `json:"peak_allocated_bytes"`
	PeakReservedBytes  *int64 `json:"peak_reserved_bytes"`
	Segments           *int64 `json:"segments"`
	Allocations        *int64 `json:"allocations"`
	NumOOMs            *int64 `json:"num_ooms"`
	NumAllocRetries    *int64 `json:"num_alloc_retries"`
	// SameAs names other inputs of the same moment.
	SameAs []string `json:"same_as"`
	// PartialAtLine is the line where a memory_summary() table broke off
	// (cut, or a row not understood); absent for a whole table. The
	// values are those of the rows before it (null for rows not read).
	PartialAtLine int64 `json:"partial_at_line,omitempty"`
	// Verdict is what the set shows on its own (fragmentation after OOMs
	// and retries; live references after the cache was emptied); absent
	// when nothing stands out.
	Verdict string `json:"verdict,omitempty"`
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

func ptr[T any](v T) *T { return &v }

// known returns a pointer to v, or nil for -1 (unknown).
func known(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func fromStats(s oom.AllocatorStats, sameAs []string) AllocatorStats {
	get := func(k string) *int64 {
		if v, ok := s.Get(k); ok {
			return &v
		}
		return nil
	}
	out := AllocatorStats{Source: s.Source, Line: s.Line,
		AllocatedBytes: get("allocated_bytes.all.current"), ReservedBytes: get("reserved_bytes.all.current"),
		ActiveBytes: get("active_bytes.all.current"), InactiveSplitBytes: get("inactive_split_bytes.all.current"),
		PeakAllocatedBytes: get("allocated_bytes.all.peak"), PeakReservedBytes: get("reserved_bytes.all.peak"),
		Segments: get("segment.all.current"), Allocations: get("allocation.all.current"),
		NumOOMs: get("num_ooms"), NumAllocRetries: get("num_alloc_retries"), SameAs: sameAs, PartialAtLine: s.PartialAtLine, Verdict: s.Verdict()}
	if out.SameAs == nil {
		out.SameAs = []string{}
	}
	if s.Device >= 0 {
		out.Device = ptr(s.Device)
	}
	return out
}

// FromOOMText turns what a log, traceback, memory summary or memory stats
// file held into its report input: warnings, and its allocator stats.
func FromOOMText(path, source string, parseWarnings []string, res *oom.TextResult) Input {
	in := Input{Path: path, Format: source}
	in.Warnings = append(in.Warnings, parseWarnings...)
	for _, s := range res.Stats {
		in.AllocatorStats = append(in.AllocatorStats, fromStats(s, nil))
	}
	return in
}

// AddPostmortemNotes adds the postmortem's remarks about inputs ("no OOM
// message in it") to their warnings, and the stats' SameAs.
func AddPostmortemNotes(inputs []Input, pm *oom.Postmortem) {
	for i := range inputs {
		in := &inputs[i]
		for _, n := range pm.Notes {
			if n.Path == in.Path {
				in.Warnings = append(in.Warnings, n.Note)
			}
		}
		for _, s := range pm.Stats {
			if s.Path != in.Path {
				continue
			}
			for k := range in.AllocatorStats {
				if in.AllocatorStats[k].Line == s.Stats.Line && len(s.SameAs) > 0 {
					in.AllocatorStats[k].SameAs = s.SameAs
				}
			}
		}
	}
}

func poolMemory(p snapshot.PoolState) PoolMemory {
	pm := PoolMemory{Device: p.Device, Pool: p.PoolName(), PoolID: p.PoolID, Private: p.Private(), Stream: p.Stream,
		Expandable: p.Expandable, Segments: p.Segments, ReservedBytes: p.ReservedBytes, AllocatedBytes: p.AllocatedBytes,
		ActiveBytes: p.ActiveBytes, FreeBytes: p.FreeBytes, FreeBlocks: p.FreeBlocks, InactiveSplitBytes: p.InactiveSplitBytes,
		InactiveSplitBlocks: p.InactiveSplitBlocks, LargestFreeBlockBytes: p.LargestFreeBytes,
		FragmentationRatio: round(p.Ratio(), 4), EstimatedBlocks: p.EstimatedBlocks}
	if p.RequestedKnown {
		pm.RequestedBytes = ptr(p.RequestedBytes)
		pm.InternalFragmentationBytes = ptr(p.InternalBytes())
	}
	return pm
}

// FromPostmortem turns a postmortem into findings: one "oom" per OOM and
// one "fragmentation" per device where free-but-unusable memory is large.
func FromPostmortem(pm *oom.Postmortem) []Finding {
	var out []Finding
	for _, r := range pm.OOMs {
		out = append(out, oomFinding(r))
	}
	for _, fr := range pm.Fragmentation {
		out = append(out, fragmentationFinding(fr))
	}
	return out
}

func oomFinding(r oom.Report) Finding {
	f := Finding{Kind: KindOOM, Path: r.Sources[0].Path, Source: r.Sources[0].Format, Site: frame(r.Frame)}
	if r.Device >= 0 {
		f.Device = ptr(r.Device)
	}
	if r.AllocatedBytes > 0 {
		f.Bytes = r.AllocatedBytes
	}
	if r.LiveBlocks > 0 {
		f.Count = r.LiveBlocks
	}
	for _, fr := range r.Stack {
		f.Stack = append(f.Stack, frame(fr))
	}
	mem := &AllocatorMemory{AllocatedBytes: known(r.AllocatedBytes), ReservedBytes: known(r.ReservedBytes),
		ReservedUnallocatedBytes: known(r.ReservedUnallocatedBytes), ActiveBytes: known(r.ActiveBytes),
		LargestFreeBlockBytes: known(r.LargestFreeBlockBytes), Pools: []PoolMemory{}, Advice: []string{}}
	if r.Memory != nil {
		for _, p := range r.Memory.Pools {
			mem.Pools = append(mem.Pools, poolMemory(p))
		}
	}
	d := &OOMDetail{RequestedBytes: known(r.RequestedBytes), SegmentBytes: known(r.SegmentBytes),
		DeviceFreeBytes: known(r.DeviceFreeBytes), DeviceTotalBytes: known(r.DeviceTotalBytes),
		ProcessInUseBytes: known(r.ProcessInUseBytes), OtherProcesses: []ProcessMemory{}, UnlistedBytes: known(r.UnlistedBytes),
		AllowedBytes: known(r.AllowedBytes), PrivatePoolBytes: known(r.PrivatePoolBytes), WouldFitIfContiguous: r.WouldFitIfContiguous,
		Cause: []string{}, CauseEvidence: []OOMCause{}, Sites: []OOMSite{}, SitesTotal: r.SitesTotal,
		Sources: []OOMSource{}, Occurrences: r.Occurrences, Notes: append([]string{}, r.Notes...)}
	if a := r.Survived; a != nil {
		d.Survived = &Survived{Allocations: a.Allocs, LargestAllocBytes: a.LargestAlloc, SameSiteLargestBytes: a.SameSiteLargest,
			SegmentsReleased: a.SegmentsReleased, LaterOOMs: a.LaterOOMs}
		if a.Smaller.Stack >= 0 && r.SmallerFrame != (callsite.Frame{}) {
			d.Survived.SmallerRetry = &SmallerRetry{Site: frame(r.SmallerFrame), BeforeBytes: a.Smaller.Before, AfterBytes: a.Smaller.After}
		}
	}
	for _, p := range r.OtherProcesses {
		d.OtherProcesses = append(d.OtherProcesses, ProcessMemory{PID: p.PID, Bytes: p.Bytes, Name: r.ProcessNames[p.PID].Name})
	}
	if r.RequestPool != nil {
		d.RequestPool = &PoolRef{Pool: r.RequestPool.PoolName(), PoolID: r.RequestPool.PoolID, Stream: r.RequestPool.Stream}
	}
	for _, c := range r.Causes {
		d.Cause = append(d.Cause, c.Name)
		d.CauseEvidence = append(d.CauseEvidence, OOMCause{Cause: c.Name, Evidence: c.Evidence, Numbers: c.Numbers, Advice: c.Advice})
		mem.Advice = append(mem.Advice, c.Advice)
	}
	for _, s := range r.Sites {
		os := OOMSite{Kind: siteKind(s.Kind), Bytes: s.Bytes, Count: s.Count, Site: frame(s.Frame), Stack: []Frame{}}
		for _, fr := range s.Stack {
			os.Stack = append(os.Stack, frame(fr))
		}
		d.Sites = append(d.Sites, os)
	}
	if r.LiveBlocks >= 0 {
		d.LiveBlocks = ptr(r.LiveBlocks)
	}
	if r.TimeUs > 0 {
		d.TimeUs = ptr(r.TimeUs)
	}
	if r.Generation != "" {
		d.MessageGeneration = ptr(string(r.Generation))
	}
	if r.Exception != "" {
		d.Exception = ptr(r.Exception)
	}
	if r.Generation == pytorchtext.GenUnparsed || r.Generation == pytorchtext.GenCut || (r.Generation == pytorchtext.GenAsync && r.Reason != "") {
		d.UnparsedReason = ptr(r.Reason)
	}
	for _, s := range r.Sources {
		src := OOMSource{Path: s.Path, Format: s.Format}
		if s.Seq >= 0 {
			src.TraceSeq = ptr(s.Seq)
		} else {
			src.Line = ptr(s.Line)
		}
		d.Sources = append(d.Sources, src)
	}
	if r.Stats != nil {
		d.StatsAtOOM = ptr(fromStats(*r.Stats, nil))
	}
	f.AllocatorMemory, f.OOMDetail = mem, d
	f.Message = oomMessage(r)
	return f
}

func fragmentationFinding(fr oom.FragmentationReport) Finding {
	s := fr.State
	f := Finding{Kind: KindFragmentation, Path: fr.Path, Source: fr.Format, Bytes: s.InactiveSplitBytes, Count: s.InactiveSplitBlocks}
	if fr.Device >= 0 {
		f.Device = ptr(fr.Device)
	}
	mem := &AllocatorMemory{AllocatedBytes: ptr(s.AllocatedBytes), ReservedBytes: ptr(s.ReservedBytes),
		ReservedUnallocatedBytes: ptr(s.ReservedBytes - s.AllocatedBytes), ActiveBytes: ptr(s.ActiveBytes),
		LargestFreeBlockBytes: known(s.LargestFreeBytes), Pools: []PoolMemory{}, Advice: []string{fr.Advice}}
	for _, p := range fr.Pools {
		mem.Pools = append(mem.Pools, poolMemory(p))
	}
	d := &FragmentationDetail{At: fr.At, Segments: s.Segments, FreeBytes: s.FreeBytes, InactiveSplitBytes: s.InactiveSplitBytes}
	if fr.At == "end" {
		d.FreeBlocks, d.InactiveSplitBlocks = ptr(s.FreeBlocks), ptr(s.InactiveSplitBlocks)
		d.FragmentationRatio = ptr(round(s.Ratio(), 4))
	} else {
		d.InactiveSplitBlocks = ptr(s.InactiveSplitBlocks)
	}
	if s.RequestedKnown {
		d.BlockRequestedBytes, d.InternalFragmentationBytes = ptr(s.RequestedBytes), ptr(s.InternalBytes())
	}
	f.AllocatorMemory, f.FragmentationDetail = mem, d
	where := "at the end of the snapshot"
	if fr.At != "end" {
		where = "in " + fr.At + "()"
	}
	largest := ""
	if s.LargestFreeBytes >= 0 {
		largest = fmt.Sprintf(", the largest free block %s (fragmentation ratio %.2f)", IBytes(s.LargestFreeBytes), s.Ratio())
	}
	f.Message = fmt.Sprintf("fragmentation: %s of PyTorch's %s reserved is free but split around live blocks %s%s: empty_cache() cannot return it and larger requests need new segments; %s",
		IBytes(s.InactiveSplitBytes), IBytes(s.ReservedBytes), where, largest, fr.Advice)
	return f
}

// oomMessage is the one line of an OOM finding.
func oomMessage(r oom.Report) string {
	if r.Generation == pytorchtext.GenUnparsed && !hasSnapshot(r) {
		return "oom: a CUDA out-of-memory message that does not parse (" + r.Reason + "); nothing was read from it"
	}
	if r.Generation == pytorchtext.GenCUDAError && !hasSnapshot(r) {
		return "oom: \"CUDA error: out of memory\" from a CUDA call outside PyTorch's caching allocator; the message has no sizes"
	}
	var b strings.Builder
	b.WriteString("oom: ")
	if r.RequestedBytes >= 0 {
		fmt.Fprintf(&b, "%s requested", pytorchtext.FormatSize(r.RequestedBytes))
	} else {
		b.WriteString("an allocation failed")
	}
	if r.Device >= 0 {
		fmt.Fprintf(&b, " on GPU %d", r.Device)
	}
	if r.Frame != (callsite.Frame{}) {
		fmt.Fprintf(&b, " at %s", frame(r.Frame))
	}
	var state []string
	if r.ReservedBytes >= 0 {
		state = append(state, pytorchtext.FormatSize(r.ReservedBytes)+" reserved")
	}
	if r.AllocatedBytes >= 0 {
		state = append(state, pytorchtext.FormatSize(r.AllocatedBytes)+" allocated")
	}
	if r.DeviceFreeBytes >= 0 {
		state = append(state, pytorchtext.FormatSize(r.DeviceFreeBytes)+" free on the GPU")
	}
	if len(state) > 0 {
		b.WriteString(" (" + strings.Join(state, ", ") + ")")
	}
	if len(r.Causes) == 0 {
		b.WriteString("; cause not determined")
		if len(r.Notes) > 0 {
			b.WriteString(": " + r.Notes[0])
		}
		return b.String()
	}
	var causes []string
	for _, c := range r.Causes {
		causes = append(causes, c.Name)
	}
	fmt.Fprintf(&b, "; cause: %s; %s", strings.Join(causes, " + "), r.Causes[0].Advice)
	return b.String()
}

func hasSnapshot(r oom.Report) bool {
	for _, s := range r.Sources {
		if s.Seq >= 0 {
			return true
		}
	}
	return false
}

// siteCell is a finding's SITE cell: the call site, or for fragmentation
// where it was measured.
func siteCell(f Finding) string {
	if f.FragmentationDetail != nil {
		if f.FragmentationDetail.At == "end" {
			return "(free blocks at the end)"
		}
		return "(" + f.FragmentationDetail.At + ")"
	}
	if f.Kind == KindOOM && f.Site == (Frame{}) {
		return "(where it was asked is not known)"
	}
	if f.SiteUnknown != "" && f.Site == (Frame{}) {
		return "(site unknown)"
	}
	return f.Site.String()
}

// AddEndPools gives a snapshot's input its memory by pool at the end.
func AddEndPools(in *Input, res *snapshot.FragmentResult) {
	for _, dm := range res.End {
		for _, p := range dm.Pools {
			in.EndPools = append(in.EndPools, poolMemory(p))
		}
	}
}

// describeAllocatorStats summarises an input's memory_stats() and
// memory_summary() sets for its line above the findings.
func describeAllocatorStats(in Input) []string {
	var out []string
	for _, s := range in.AllocatorStats {
		var parts []string
		if s.Device != nil {
			parts = append(parts, fmt.Sprintf("device %d:", *s.Device))
		}
		if s.AllocatedBytes != nil {
			parts = append(parts, IBytes(*s.AllocatedBytes)+" allocated,")
		}
		if s.ReservedBytes != nil {
			parts = append(parts, IBytes(*s.ReservedBytes)+" reserved,")
		}
		if s.NumOOMs != nil {
			parts = append(parts, fmt.Sprintf("%d OOMs,", *s.NumOOMs))
		}
		if s.NumAllocRetries != nil {
			parts = append(parts, fmt.Sprintf("%d cudaMalloc retries,", *s.NumAllocRetries))
		}
		if s.PartialAtLine > 0 {
			parts = append(parts, fmt.Sprintf("partial: the table broke off at line %d,", s.PartialAtLine))
		}
		if v, _, ok := strings.Cut(s.Verdict, ":"); ok {
			parts = append(parts, "verdict: "+v+",")
		}
		if len(parts) > 0 {
			out = append(out, strings.TrimSuffix(strings.Join(parts, " "), ","))
		}
	}
	return out
}

// bytesCell and blocksCell show "?" for an OOM whose memory no input gives.
// The oom row's BYTES is the request, the allocation that failed (what
// was allocated then is in the row's message and in JSON's bytes).
func bytesCell(f Finding) string {
	if f.OOMDetail != nil {
		if f.OOMDetail.RequestedBytes == nil {
			return "?"
		}
		return IBytes(*f.OOMDetail.RequestedBytes)
	}
	return IBytes(f.Bytes)
}

func blocksCell(f Finding) string {
	if f.OOMDetail != nil && f.OOMDetail.LiveBlocks == nil {
		return "?"
	}
	return fmt.Sprint(f.Count)
}
