package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

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
	out.Process = s.Process
	if s.PartialBound > 0 {
		out.PartialBoundBytes = s.PartialBound
	} else if s.PartialBound < 0 {
		out.PartialBoundLines = -s.PartialBound
	}
	out.ExpandableSegments = s.ExpandableReserved() > 0
	if s.SplitUnmeasured() {
		out.InactiveSplitBytes = nil
	}
	if s.AsyncBackend() {
		// Zeros the backend never counts, not measured ones.
		out.CudaMallocAsync = true
		out.Segments, out.Allocations, out.NumOOMs, out.NumAllocRetries = nil, nil, nil, nil
	}
	if s.Device >= 0 {
		out.Device = ptr(s.Device)
	}
	return out
}

// FromOOMText turns what a log, traceback, memory summary or memory stats
// file held into its report input: warnings, and its allocator stats.
func FromOOMText(path, source string, parseWarnings []string, res *oom.TextResult) Input {
	in := Input{Path: path, Format: source, OOMPrinters: res.Printers(), NotOOMs: res.NotOOMs}
	in.Warnings = append(in.Warnings, parseWarnings...)
	for i, s := range res.Stats {
		st := fromStats(s, nil)
		st.CountersFell = countersFell(res.Stats[:i], s)
		in.AllocatorStats = append(in.AllocatorStats, st)
		if why := s.Inconsistent(); why != "" {
			// Said where the text report shows it, not only in the
			// verdict (whose header line keeps its first words).
			if s.Line > 0 {
				why = fmt.Sprintf("line %d: %s", s.Line, why)
			}
			in.Warnings = append(in.Warnings, why)
		}
	}
	return in
}

// cumulativeCounters are statistics one process's allocator only adds
// to (reset_accumulated_memory_stats aside), with their names in a
// memory_summary() table.
var cumulativeCounters = []struct{ key, words string }{
	{"allocated_bytes.all.allocated", "total allocated (Allocated memory, Tot Alloc)"},
	{"allocated_bytes.all.freed", "total freed (Allocated memory, Tot Freed)"},
	{"reserved_bytes.all.allocated", "total reserved (GPU reserved memory, Tot Alloc)"},
	{"allocation.all.allocated", "allocations made (Allocations, Tot Alloc)"},
	{"num_ooms", "OOM count"},
	{"num_alloc_retries", "cudaMalloc retry count"},
}

// countersFell says which cumulative counter of s is below the one of
// the last set before it (in before) of the same device and process
// (a device named; a summary's values with their truncation allowed
// for): "" when none is, or there is no such set. See
// AllocatorStats.CountersFell.
func countersFell(before []oom.AllocatorStats, s oom.AllocatorStats) string {
	if s.Device < 0 {
		return ""
	}
	for i := len(before) - 1; i >= 0; i-- {
		p := before[i]
		if p.Device != s.Device || p.Process != s.Process {
			continue
		}
		for _, c := range cumulativeCounters {
			was, ok1 := p.Get(c.key)
			now, ok2 := s.Get(c.key)
			if ok1 && ok2 && now+s.Resolution[c.key] < was {
				return fmt.Sprintf("its %s, %s, is below the %s of the print at line %d", c.words, counterValue(c.key, now), counterValue(c.key, was), p.Line)
			}
		}
		return ""
	}
	return ""
}

// counterValue renders a cumulative counter's value: bytes for the
// totals of bytes, a count otherwise.
func counterValue(key string, v int64) string {
	if strings.Contains(key, "_bytes.") {
		return IBytes(v)
	}
	return fmt.Sprint(v)
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
				if in.AllocatorStats[k].Line != s.Stats.Line {
					continue
				}
				if len(s.SameAs) > 0 {
					in.AllocatorStats[k].SameAs = s.SameAs
				}
				in.AllocatorStats[k].UndescribedOOMs = s.Undescribed
			}
		}
		for _, at := range pm.StatsAtOOM {
			if at.Path != in.Path || at.OOM < 0 || at.OOM >= len(pm.OOMs) {
				continue
			}
			for k := range in.AllocatorStats {
				if st := &in.AllocatorStats[k]; st.Line == at.Line {
					st.source = in.Path
					noteStatsAtOOM(st, pm.OOMs[at.OOM])
				}
			}
		}
	}
}

// noteStatsAtOOM says, of a stats set taken at an OOM (its allocated and
// reserved memory are the OOM's), which OOM it is; where the set alone
// cannot tell, what that OOM's postmortem found: a set of the OOM's own
// figures was taken after the release that precedes an OOM, not after
// tensors were freed, and a snapshot shows the blocks.
func noteStatsAtOOM(st *AllocatorStats, r oom.Report) {
	var snap, oomName string
	for _, src := range r.Sources {
		if src.Seq >= 0 {
			snap, oomName = src.Path, fmt.Sprintf("the OOM at trace entry %d of %s", src.Seq, src.Path)
			break
		}
	}
	for _, src := range r.Sources {
		if oomName == "" && src.Seq < 0 && !src.Event && (src.Path != st.source || src.Line != st.Line) {
			oomName = fmt.Sprintf("the OOM message at %s:%d", src.Path, src.Line)
		}
	}
	if oomName == "" {
		return
	}
	if !slices.Contains(st.SameAs, oomName) {
		st.SameAs = append(st.SameAs, oomName)
	}
	if !strings.HasPrefix(st.Verdict, "cannot tell:") {
		return
	}
	var causes []string
	for _, c := range r.Causes {
		causes = append(causes, c.Name)
	}
	found := "no cause either"
	if len(causes) > 0 {
		found = strings.Join(causes, " and ")
	}
	if snap != "" {
		st.Verdict += fmt.Sprintf("; these are the figures at %s, whose snapshot shows the blocks: its postmortem finds %s", oomName, found)
		return
	}
	st.Verdict += fmt.Sprintf("; these are the figures of %s (the same allocated and reserved memory: taken at that OOM, not after tensors were freed): its postmortem finds %s", oomName, found)
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
	f := Finding{Kind: KindOOM, Path: r.Sources[0].Path, Source: r.Sources[0].Format, Site: frame(r.Frame), DeviceType: r.DeviceType}
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
		Sources: []OOMSource{}, Occurrences: r.Occurrences, FoldedOOMs: r.FoldedOOMs, Notes: append([]string{}, r.Notes...)}
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
		os := OOMSite{Kind: siteKind(s.Kind), Bytes: s.Bytes, Count: s.Count, NotInTrace: s.NotInTrace, Site: frame(s.Frame), Stack: []Frame{}}
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
		switch {
		case s.Seq >= 0:
			src.TraceSeq = ptr(s.Seq)
		case !s.Event: // a profiler trace's [OutOfMemory] event has neither
			src.Line = ptr(s.Line)
		}
		d.Sources = append(d.Sources, src)
	}
	if r.Stats != nil {
		d.StatsAtOOM = ptr(fromStats(*r.Stats, nil))
	}
	for _, c := range r.Coarse {
		d.CoarseFigures = append(d.CoarseFigures, CoarseFigure{Figure: c.Figure, Bytes: c.Bytes, AsTyped: c.Typed, ToleranceBytes: c.Tolerance})
	}
	f.AllocatorMemory, f.OOMDetail = mem, d
	f.Message = oomMessage(r, d)
	if r.Process != "" {
		// Which worker printed it: ranks' OOMs alike but for it.
		f.Process = r.Process
		f.Message = strings.Replace(f.Message, "oom: ", "oom ("+r.Process+"): ", 1)
	}
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
	d := &FragmentationDetail{At: fr.At, Segments: s.Segments, FreeBytes: s.FreeBytes, InactiveSplitBytes: s.InactiveSplitBytes, MisfitSegments: s.MisfitSegments, SplitShape: fr.Shape}
	if fr.At == "end" {
		d.FreeBlocks, d.InactiveSplitBlocks = ptr(s.FreeBlocks), ptr(s.InactiveSplitBlocks)
		d.FragmentationRatio = ptr(round(s.Ratio(), 4))
		if s.LargestSplitBytes >= 0 {
			d.LargestSplitBlockBytes = ptr(s.LargestSplitBytes)
		}
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
	if fr.Expandable {
		where += " (in expandable segments: the free part of the pages that live blocks also use)"
	}
	switch fr.Shape {
	case oom.ShapePinned:
		f.Message = fmt.Sprintf("pinned free memory: %s of PyTorch's %s reserved is free but split around live blocks %s%s; %s",
			IBytes(s.InactiveSplitBytes), IBytes(s.ReservedBytes), where, pinnedBlocks(s, fr.Expandable, fr.Pools), fr.Advice)
	case oom.ShapeUnknown:
		f.Message = fmt.Sprintf("fragmentation or pinned free memory: %s of PyTorch's %s reserved is free but split around live blocks %s, in %s: empty_cache() cannot return it; the set does not give their sizes, so whether it lies in many small pieces that a large request does not fit (fragmentation) or in a few large ones cannot be told; %s",
			IBytes(s.InactiveSplitBytes), IBytes(s.ReservedBytes), where, plural(s.InactiveSplitBlocks, "split block", "split blocks"), fr.Advice)
	default:
		f.Message = fmt.Sprintf("fragmentation: %s of PyTorch's %s reserved is free but split around live blocks %s%s; %s",
			IBytes(s.InactiveSplitBytes), IBytes(s.ReservedBytes), where, splitBlocks(s, fr.Expandable, fr.Pools), fr.Advice)
	}
	if fr.PeakReservedBytes > 0 && fr.PeakActiveBytes > 0 && fr.PeakReservedBytes >= fr.PeakActiveBytes {
		// The end is often idle, after a pass: what its frees left split
		// beside the blocks it kept. The peak says what was idle when
		// memory was needed.
		f.Message += fmt.Sprintf(" (at the trace's peak %s was active of the %s then reserved: %s of the reserve, split or whole, was not in use then; a peak before the trace began is not seen)",
			IBytes(fr.PeakActiveBytes), IBytes(fr.PeakReservedBytes), IBytes(fr.PeakReservedBytes-fr.PeakActiveBytes))
	}
	// Split memory in private pools serves only their own allocations
	// (a CUDA graph's replays, a MemPool's tensors): the sizes above do
	// not fit the default pool's requests there.
	var private int64
	for _, p := range fr.Pools {
		if p.Private() {
			private += p.InactiveSplitBytes
		}
	}
	if private > 0 {
		f.Message += fmt.Sprintf(" (%s of it lies in private pools, segment_pool_id other than (0, 0): a CUDA graph's or a torch.cuda.MemPool's, which serve only that graph's or pool's allocations, not the program's other requests, and keep their segments until the graph or pool is freed)", IBytes(private))
	}
	if s.MisfitSegments > 0 {
		which := "one segment do not fit it"
		if s.MisfitSegments > 1 {
			which = fmt.Sprintf("%d segments do not fit them", s.MisfitSegments)
		}
		f.Message += fmt.Sprintf(" (the snapshot is inconsistent: the blocks of %s, see the warnings; the free memory counted is what the active blocks leave within their segments, a bound and not a measurement)", which)
	}
	return f
}

// splitBlocks tells what the split free memory can serve and what else is
// free: the largest split block, and the wholly free segments (or, in
// expandable segments, runs of whole free pages) beside it, which
// empty_cache() returns and which can take requests up to the largest
// free block. The fragmentation ratio (over all free memory) is in the
// JSON only: with whole segments free it says little of the split.
func splitBlocks(s snapshot.PoolState, expandable bool, pools []snapshot.PoolState) string {
	out := ": empty_cache() cannot return it"
	if s.LargestSplitBytes >= 0 {
		out = fmt.Sprintf(", the largest split block %s", IBytes(s.LargestSplitBytes)) + out
	}
	if expandable {
		out += " (it unmaps only whole free pages)"
	}
	return out + wholeFree(s, expandable, pools)
}

// pinnedBlocks is splitBlocks for split memory that lies mostly in one
// block (oom.ShapePinned): it says that requests up to that block fit,
// and what keeps empty_cache() from returning it.
func pinnedBlocks(s snapshot.PoolState, expandable bool, pools []snapshot.PoolState) string {
	largest, out, pin := s.LargestSplitBytes, "", ": live blocks in the same segments keep empty_cache() from returning it"
	switch {
	case s.InactiveSplitBlocks == 1:
		largest, out, pin = s.InactiveSplitBytes, ", in one free split block", ": the live blocks of its segment keep empty_cache() from returning it"
	case largest >= 0:
		out = fmt.Sprintf(", %s of it in the largest of %d split blocks", IBytes(largest), s.InactiveSplitBlocks)
	}
	out += pin
	if expandable {
		out += " (it unmaps only whole free pages)"
	}
	if largest >= 0 {
		out += fmt.Sprintf(", but it is not fragmented: requests up to %s fit in it", IBytes(largest))
	}
	return out + wholeFree(s, expandable, pools)
}

// wholeFree is the tail of splitBlocks and pinnedBlocks: what larger
// requests need, and the wholly free segments (or runs of whole free
// pages) beside the split memory.
func wholeFree(s snapshot.PoolState, expandable bool, pools []snapshot.PoolState) string {
	out := ""
	grow := "larger requests need new segments"
	if expandable {
		grow = "larger requests need more pages mapped"
		for _, p := range pools {
			if !p.Expandable && p.InactiveSplitBytes > 0 {
				grow = "larger requests need new segments or more pages mapped"
			}
		}
	}
	whole, n := s.FreeBytes-s.InactiveSplitBytes, s.WholeFreeBlocks
	if s.LargestFreeBytes < 0 || whole <= 0 || n <= 0 {
		return out + ", and " + grow
	}
	unit := plural(n, "segment", "segments")
	for _, p := range pools {
		if p.Expandable && p.WholeFreeBlocks > 0 {
			unit = plural(n, "segment or run of whole pages", "segments or runs of whole pages")
			if p.WholeFreeBlocks == n {
				unit = plural(n, "run of whole pages", "runs of whole pages")
			}
		}
	}
	if s.LargestFreeBytes > s.LargestSplitBytes {
		return out + fmt.Sprintf("; %s more is free in %s with no live block, which empty_cache() would return, and requests larger than %s (the largest free block) need %s",
			IBytes(whole), unit, IBytes(s.LargestFreeBytes), strings.TrimPrefix(grow, "larger requests need "))
	}
	return out + fmt.Sprintf("; %s more is free in %s with no live block, which empty_cache() would return, and %s",
		IBytes(whole), unit, grow)
}

// figuresInWords reports whether a program's out-of-memory text prints
// its figures in its own words, not beside a status: CatBoost's pool
// ("Requested R MB; Free F MB"), PaddlePaddle's start-up check ("A > B"),
// the spill manager's request, NCCL 1.x's buffer (pytorchtext.CheckForm),
// TensorRT's Error Code 2 ("OutOfMemory (Requested size was B bytes.)").
func figuresInWords(text string) bool {
	switch pytorchtext.CheckForm(text) {
	case "catboost-pool", "paddle-chunk", "spill", "nccl1-buffer":
		return true
	}
	return strings.HasPrefix(text, "OutOfMemory (Requested size was ")
}

// cudaErrorSizes ends the line of a CUDA error's OOM finding
// (GenCUDAError): the status itself has no sizes, but the lines logged
// with it may give the request (NCCL's "Failed to CUDA calloc N bytes")
// and the GPU's free and total memory (XLA's cudaMallocAsync allocator's
// "Free memory/Total memory"). shown says the line names the request
// already.
func cudaErrorSizes(r oom.Report, d *OOMDetail, shown bool) string {
	var got []string
	if !shown && r.RequestedBytes >= 0 {
		got = append(got, d.size("requested_bytes", r.RequestedBytes)+" requested")
	}
	switch free, total := r.DeviceFreeBytes, r.DeviceTotalBytes; {
	case free >= 0 && total >= 0:
		got = append(got, d.size("device_free_bytes", free)+" free of the GPU's "+d.size("device_total_bytes", total))
	case free >= 0:
		got = append(got, d.size("device_free_bytes", free)+" free on the GPU")
	case total >= 0:
		got = append(got, "a GPU of "+d.size("device_total_bytes", total))
	}
	switch {
	case len(got) > 0 && figuresInWords(r.Text):
		return "; its words give " + strings.Join(got, ", ")
	case len(got) > 0:
		return "; the status has no sizes; read beside it: " + strings.Join(got, ", ")
	case shown:
		return "; the line gives no other sizes"
	}
	return "; the message has no sizes"
}

// oomMessage is the one line of an OOM finding; d gives the figures
// typed coarse (OOMDetail.size).
func oomMessage(r oom.Report, d *OOMDetail) string {
	if r.Generation == pytorchtext.GenUnparsed && !hasSnapshot(r) {
		backend := "a CUDA"
		switch {
		case strings.HasPrefix(r.Text, "HIP"):
			backend = "a HIP"
		case strings.HasPrefix(r.Text, "XPU"):
			backend = "an XPU"
		case strings.HasPrefix(r.Text, "MPS"):
			backend = "an MPS"
		}
		return "oom: " + backend + " out-of-memory message that does not parse (" + r.Reason + "); nothing was read from it"
	}
	if r.Generation == pytorchtext.GenCUDAError && !hasSnapshot(r) {
		if lib := pytorchtext.Library(r.Text); lib != "" {
			if pytorchtext.RMMPoolLimit(r.Text) {
				return "oom: RMM's pool memory resource refused to grow past its maximum_pool_size (" + clipText(r.Text, 80) + "); the message has no sizes"
			}
			if who := r.CheckProgram(); who != "" {
				// A program's own CUDA check (XGBoost, AMReX, RMM, ...).
				return "oom: " + lib + "'s out-of-memory error, reported by " + who + " (" + clipText(r.Text, 80) + ")" + cudaErrorSizes(r, d, false)
			}
			if r.RequestedBytes >= 0 && (lib == "the CUDA driver" || lib == "the CUDA runtime" || lib == "the HIP runtime") {
				// StreamExecutor's "failed to allocate 7.81G (8387559424
				// bytes) from device" (TensorFlow, XLA): not PyTorch's.
				return "oom: " + d.size("requested_bytes", r.RequestedBytes) + " requested: StreamExecutor (TensorFlow's or XLA's GPU layer) could not allocate it from the device (" + clipText(r.Text, 80) + ")" + cudaErrorSizes(r, d, true)
			}
			if r.RequestedBytes >= 0 && lib == "llama.cpp (ggml)" {
				dev := ""
				if r.Device >= 0 {
					dev = fmt.Sprintf(" on device %d", r.Device)
				}
				return "oom: " + d.size("requested_bytes", r.RequestedBytes) + " requested" + dev + ": llama.cpp's ggml CUDA backend could not cudaMalloc the buffer (" + clipText(r.Text, 80) + "); the line gives no other sizes"
			}
			switch c := r.Caller(); {
			case r.ByPyTorch():
				return "oom: " + lib + " ran out of memory outside PyTorch's caching allocator (" + clipText(r.Text, 80) + ")" + cudaErrorSizes(r, d, false)
			case c != "":
				// numba's, CuPy's, a Java program's: no PyTorch in it.
				return "oom: " + lib + " ran out of memory in " + c + " (" + clipText(r.Text, 80) + ")" + cudaErrorSizes(r, d, false)
			}
			return "oom: " + lib + " ran out of memory (" + clipText(r.Text, 80) + ")" + cudaErrorSizes(r, d, false)
		}
		return "oom: \"CUDA error: out of memory\" from a CUDA call outside PyTorch's caching allocator; the message has no sizes"
	}
	if r.Generation == pytorchtext.GenKVCache && !hasSnapshot(r) && len(r.Notes) > 0 {
		// No allocation failed: the engine's own sizing (see the note).
		at := ""
		if r.Frame != (callsite.Frame{}) {
			at = fmt.Sprintf(" at %s", frame(r.Frame))
		}
		what := "'s KV cache did not fit at start-up"
		if pytorchtext.KVCacheEngine(r.Text) == "TGI" {
			what = "'s warmup ran out of GPU memory at start-up"
		}
		if _, ok := pytorchtext.VLLMSamplerRequests(r.Text); ok {
			what = "'s sampler warmup ran out of GPU memory at start-up"
		}
		return "oom: " + pytorchtext.KVCacheEngine(r.Text) + what + at + "; " + r.Notes[0]
	}
	if r.Generation == pytorchtext.GenBatchFinder && !hasSnapshot(r) && len(r.Notes) > 0 {
		// Out-of-memory errors caught, none of them printed (see the note).
		at := ""
		if r.Frame != (callsite.Frame{}) {
			at = fmt.Sprintf(" at %s", frame(r.Frame))
		}
		return "oom: Accelerate's batch size finder halved its batch to zero (each size it tried ran out of memory, unless it started at 0)" + at + "; " + r.Notes[0]
	}
	if r.Generation == pytorchtext.GenExa && !hasSnapshot(r) {
		return "oom: a request of more than 1 EiB (\"Tried to allocate more than 1EB memory\"): a size computed wrong, not a shortage of memory"
	}
	var b strings.Builder
	b.WriteString("oom: ")
	if r.Host() {
		// The CPU allocator's failure, not a GPU's: what it is, no GPU
		// verdict.
		if r.RequestedBytes >= 0 {
			fmt.Fprintf(&b, "%s of host memory (RAM) requested", d.size("requested_bytes", r.RequestedBytes))
		} else {
			b.WriteString("a host-memory (RAM) allocation failed")
		}
		if r.AllocatedBytes >= 0 {
			fmt.Fprintf(&b, " (%s allocated by PyTorch's CPU allocator)", d.size("allocated_bytes", r.AllocatedBytes))
		}
		b.WriteString("; " + r.Notes[0])
		return b.String()
	}
	if r.RequestedBytes >= 0 {
		fmt.Fprintf(&b, "%s requested", d.size("requested_bytes", r.RequestedBytes))
	} else {
		b.WriteString("an allocation failed")
	}
	switch {
	case r.Device >= 0 && r.DeviceType != "":
		fmt.Fprintf(&b, " on %s:%d", r.DeviceType, r.Device)
	case r.Device >= 0 && r.Generation == pytorchtext.GenXLA:
		fmt.Fprintf(&b, " on device %d", r.Device) // XLA's ordinal: a GPU or a TPU
	case r.Device >= 0:
		fmt.Fprintf(&b, " on GPU %d", r.Device)
	}
	if r.Frame != (callsite.Frame{}) {
		fmt.Fprintf(&b, " at %s", frame(r.Frame))
	}
	var state []string
	if r.ReservedBytes >= 0 {
		state = append(state, d.size("reserved_bytes", r.ReservedBytes)+" reserved")
	}
	if r.AllocatedBytes >= 0 {
		state = append(state, d.size("allocated_bytes", r.AllocatedBytes)+" allocated")
	}
	if r.DeviceFreeBytes >= 0 {
		state = append(state, d.size("device_free_bytes", r.DeviceFreeBytes)+" free on the GPU")
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

// AddEndPools gives a snapshot's input its memory by pool at the end.
func AddEndPools(in *Input, res *snapshot.FragmentResult) {
	for _, dm := range res.End {
		for _, p := range dm.Pools {
			in.EndPools = append(in.EndPools, poolMemory(p))
		}
	}
}

// clipText shortens text to at most n bytes, at a rune's start, with "...".
func clipText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && text[n]&0xC0 == 0x80 {
		n--
	}
	return text[:n] + "..."
}
