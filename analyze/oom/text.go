package oom

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// Message is one out-of-memory message read from a log.
type Message struct {
	pytorchtext.Message
	// Line is the message's line in its input.
	Line int64
	// Frames are the traceback that ended with it, innermost first; nil
	// without one.
	Frames []callsite.Frame
	// Folded is N of Ray's "[repeated Nx across cluster]" on its line:
	// lines of its kind Ray's log deduplication folded into it, it the
	// last of them; 0 without. FoldedFirst is the line of the first of
	// that kind in the input (Ray prints it on its own), 0 when it is not
	// in the input. See pytorchtext's messages table (folded,
	// folded_first).
	Folded      int
	FoldedFirst int64
	// ProgressLine is the last line before the message that counts the
	// run's progress (a step, iteration or epoch number, a tqdm bar) among
	// its process's lines, or a llama.cpp line that shows it went on
	// after an allocation failure; 0 when none (pytorchtext's
	// progress_line).
	ProgressLine int64
}

// AllocatorStats is one torch.cuda.memory_stats() dict, or the numbers of
// one torch.cuda.memory_summary() table, keyed as memory_stats() keys them.
type AllocatorStats struct {
	// Source is pytorchtext.SourceMemoryStats or SourceMemorySummary.
	Source string
	// Line is where it starts in its input.
	Line int64
	// Device is the GPU index, -1 when the input does not say.
	Device int
	// Values by key ("allocated_bytes.all.current", "num_ooms", ...).
	Values map[string]int64
	// Resolution of the values that are not exact: the true value is in
	// [value, value+resolution) (memory_summary() truncates to its unit).
	Resolution map[string]int64
	// PartialAtLine is the line where a memory_summary() table broke off
	// (cut, or a row not understood), or a memory_stats() dict printed in
	// a log was cut: Values hold only the rows (keys) before it. 0 for a
	// whole set.
	PartialAtLine int64
	// PartialBound: for a memory_stats() dict whose text went on past the
	// most read of one (pytorchtext.PartialBoundKey), that bound: bytes if
	// positive, lines if negative; PartialAtLine is then the last line
	// read, and the dict was not cut. 0 otherwise.
	PartialBound int64
	// Process is what begins a memory_summary() table's lines in a log,
	// the same over one process's output (a launcher's "[rank1]:"): two
	// tables of one device with different ones are two processes'; ""
	// when none (pytorchtext's stats column process).
	Process string
}

// Get returns a value and whether the stats have it.
func (s *AllocatorStats) Get(key string) (int64, bool) {
	v, ok := s.Values[key]
	return v, ok
}

// TextResult is what a log, a memory summary or memory stats hold.
type TextResult struct {
	Messages []Message        // in input order
	Stats    []AllocatorStats // in input order
	// UnifiedMemory is a unified-memory device the text names (its
	// messages' "memory outside PyTorch" is then host memory too); nil
	// when none. Set by the caller from the reader's metadata.
	UnifiedMemory *pytorchtext.UnifiedMemory
	// NotOOMs are the warnings of the out-of-memory errors the text holds
	// that are not counted as GPU OOMs (pytorchtext.Metadata.NotOOMs: a
	// recovered llama.cpp or TensorRT allocation, a record at INFO
	// level, host memory), each already a warning of the input; set by
	// the caller from the reader's metadata.
	NotOOMs []string
}

// TextAnalyzer collects the tables of package pytorchtext into typed
// values. Feed it every record batch with Add, then call Finalize once.
type TextAnalyzer struct {
	msgs   map[int32]*Message
	procs  map[int32][]pytorchtext.Process
	frames map[int32][]callsite.Frame
	sets   map[int32]*AllocatorStats
}

// NewTextAnalyzer returns an empty analyzer.
func NewTextAnalyzer() *TextAnalyzer {
	return &TextAnalyzer{msgs: map[int32]*Message{}, procs: map[int32][]pytorchtext.Process{},
		frames: map[int32][]callsite.Frame{}, sets: map[int32]*AllocatorStats{}}
}

// Add feeds one record batch of table t. It returns an error when the
// batch does not have the table's schema.
func (a *TextAnalyzer) Add(t pytorchtext.Table, rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(t.Schema()) {
		return fmt.Errorf("analyze: %s batch has schema %s", t, rec.Schema())
	}
	n := int(rec.NumRows())
	// Every string kept from the batch is copied: its buffers are reused
	// once the batch is released.
	names := callsite.Interner{}
	switch t {
	case pytorchtext.TableMessages:
		gen := rec.Column(pytorchtext.MsgGeneration).(*array.Dictionary)
		genDict := gen.Dictionary().(*array.String)
		size := func(col, i int) int64 {
			c := rec.Column(col).(*array.Int64)
			if c.IsNull(i) {
				return -1
			}
			return c.Value(i)
		}
		str := func(col, i int) string {
			c := rec.Column(col).(*array.String)
			if c.IsNull(i) {
				return ""
			}
			return strings.Clone(c.Value(i))
		}
		for i := 0; i < n; i++ {
			m := &Message{Line: rec.Column(pytorchtext.MsgLine).(*array.Int64).Value(i)}
			m.Generation = pytorchtext.Generation(names.Get(genDict.Value(gen.GetValueIndex(i))))
			m.Typo = rec.Column(pytorchtext.MsgTypo).(*array.Boolean).Value(i)
			m.Backend = str(pytorchtext.MsgBackend, i)
			m.Exception = str(pytorchtext.MsgException, i)
			m.Prefix = str(pytorchtext.MsgPrefix, i)
			m.Device = -1
			if c := rec.Column(pytorchtext.MsgDevice).(*array.Int32); c.IsValid(i) {
				m.Device = int(c.Value(i))
			}
			m.Requested = size(pytorchtext.MsgRequested, i)
			m.Total = size(pytorchtext.MsgTotal, i)
			m.Free = size(pytorchtext.MsgFree, i)
			m.ProcessInUse = size(pytorchtext.MsgProcessInUse, i)
			m.Allowed = size(pytorchtext.MsgAllowed, i)
			m.Allocated = size(pytorchtext.MsgAllocated, i)
			m.PrivatePools = size(pytorchtext.MsgPrivatePools, i)
			m.ReservedUnallocated = size(pytorchtext.MsgReservedUnallocated, i)
			m.Reserved = size(pytorchtext.MsgReserved, i)
			m.Reason = str(pytorchtext.MsgReason, i)
			m.Text = str(pytorchtext.MsgText, i)
			m.Cached = rec.Column(pytorchtext.MsgCached).(*array.Boolean).Value(i)
			m.Coarse = pytorchtext.ParseCoarse(str(pytorchtext.MsgCoarse, i))
			if c := rec.Column(pytorchtext.MsgFolded).(*array.Int32); c.IsValid(i) {
				m.Folded = int(c.Value(i))
				if f := rec.Column(pytorchtext.MsgFoldedFirst).(*array.Int64); f.IsValid(i) {
					m.FoldedFirst = f.Value(i)
				}
			}
			if c := rec.Column(pytorchtext.MsgProgressLine).(*array.Int64); c.IsValid(i) {
				m.ProgressLine = c.Value(i)
			}
			m.Printer = str(pytorchtext.MsgPrinter, i)
			m.Call = str(pytorchtext.MsgCall, i)
			m.Reraised = rec.Column(pytorchtext.MsgReraised).(*array.Boolean).Value(i)
			a.msgs[rec.Column(pytorchtext.MsgID).(*array.Int32).Value(i)] = m
		}
	case pytorchtext.TableProcesses:
		for i := 0; i < n; i++ {
			id := rec.Column(pytorchtext.ProcMessage).(*array.Int32).Value(i)
			a.procs[id] = append(a.procs[id], pytorchtext.Process{PID: rec.Column(pytorchtext.ProcPID).(*array.Int64).Value(i),
				Bytes: rec.Column(pytorchtext.ProcBytes).(*array.Int64).Value(i)})
		}
	case pytorchtext.TableFrames:
		for i := 0; i < n; i++ {
			id := rec.Column(pytorchtext.FrMessage).(*array.Int32).Value(i)
			a.frames[id] = append(a.frames[id], callsite.Frame{Filename: names.Get(rec.Column(pytorchtext.FrFilename).(*array.String).Value(i)),
				Line: rec.Column(pytorchtext.FrLine).(*array.Int64).Value(i), Name: names.Get(rec.Column(pytorchtext.FrName).(*array.String).Value(i))})
		}
	case pytorchtext.TableStats:
		src := rec.Column(pytorchtext.StSource).(*array.Dictionary)
		srcDict := src.Dictionary().(*array.String)
		dev := rec.Column(pytorchtext.StDevice).(*array.Int32)
		for i := 0; i < n; i++ {
			id := rec.Column(pytorchtext.StSet).(*array.Int32).Value(i)
			s := a.sets[id]
			if s == nil {
				s = &AllocatorStats{Source: names.Get(srcDict.Value(src.GetValueIndex(i))), Line: rec.Column(pytorchtext.StSetLine).(*array.Int64).Value(i),
					Device: -1, Values: map[string]int64{}, Resolution: map[string]int64{}}
				if dev.IsValid(i) {
					s.Device = int(dev.Value(i))
				}
				if proc := rec.Column(pytorchtext.StProcess).(*array.Dictionary); proc.IsValid(i) {
					s.Process = names.Get(proc.Dictionary().(*array.String).Value(proc.GetValueIndex(i)))
				}
				a.sets[id] = s
			}
			key := names.Get(rec.Column(pytorchtext.StKey).(*array.String).Value(i))
			if key == pytorchtext.PartialKey {
				s.PartialAtLine = rec.Column(pytorchtext.StValue).(*array.Int64).Value(i)
				continue
			}
			if key == pytorchtext.PartialBoundKey {
				s.PartialBound = rec.Column(pytorchtext.StValue).(*array.Int64).Value(i)
				continue
			}
			s.Values[key] = rec.Column(pytorchtext.StValue).(*array.Int64).Value(i)
			if r := rec.Column(pytorchtext.StResolution).(*array.Int64).Value(i); r > 0 {
				s.Resolution[key] = r
			}
		}
	}
	return nil
}

// Finalize returns the messages and stats in input order.
func (a *TextAnalyzer) Finalize() *TextResult {
	res := &TextResult{}
	ids := make([]int32, 0, len(a.msgs))
	for id := range a.msgs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		m := a.msgs[id]
		m.Processes = a.procs[id]
		m.Frames = a.frames[id]
		res.Messages = append(res.Messages, *m)
	}
	ids = ids[:0]
	for id := range a.sets {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		res.Stats = append(res.Stats, *a.sets[id])
	}
	return res
}

// Inconsistent says how the set's current figures contradict one another,
// "" when they do not (or are not there to compare): PyTorch's caching
// allocator reserves the memory it allocates, so allocated and active
// memory are at most the reserved, and the non-releasable memory
// (inactive split blocks) is free memory of the reserved segments, at
// most reserved less allocated. Each figure is taken with its resolution
// (a memory_summary() truncates to its unit). A table edited by hand, or
// two devices' or two moments' rows joined, breaks these; no verdict is
// drawn from it.
func (s *AllocatorStats) Inconsistent() string {
	reserved, ok := s.Get("reserved_bytes.all.current")
	if !ok {
		return ""
	}
	res := func(k string) int64 { return max(s.Resolution[k], 0) }
	tolR := res("reserved_bytes.all.current")
	for _, k := range []string{"allocated_bytes.all.current", "active_bytes.all.current"} {
		if v, ok := s.Get(k); ok && v > reserved+tolR+res(k) {
			return fmt.Sprintf("the set's figures contradict each other: %s %s but only %s reserved (PyTorch reserves all it allocates); it is not judged (a table edited, or rows of two devices or moments joined?)",
				size(v), strings.SplitN(k, "_bytes", 2)[0], size(reserved))
		}
	}
	split, ok1 := s.Get("inactive_split_bytes.all.current")
	alloc, ok2 := s.Get("allocated_bytes.all.current")
	if ok1 && ok2 && split > reserved-alloc+tolR+res("allocated_bytes.all.current")+res("inactive_split_bytes.all.current") {
		return fmt.Sprintf("the set's figures contradict each other: %s non-releasable (free, split around live blocks) but only %s reserved and not allocated (%s reserved, %s allocated); it is not judged (a table edited, or rows of two devices or moments joined?)",
			size(split), size(reserved-alloc), size(reserved), size(alloc))
	}
	return ""
}

// ExpandableReserved is the reserved memory of the pools (large, small)
// whose segments are expandable (PYTORCH_CUDA_ALLOC_CONF=
// expandable_segments:True), 0 when none or when the set does not say.
// PyTorch counts a segment (segment.*) only for a cudaMalloc: memory that
// an expandable segment maps is reserved with no segment counted. It also
// leaves expandable segments out of inactive_split (non-releasable
// memory), so the set's split figures cover only the other pools. A
// cudaMallocAsync backend's set is not taken for one: it fills in only
// the all-pool figures.
func (s *AllocatorStats) ExpandableReserved() int64 {
	var n int64
	for _, pool := range []string{"large_pool", "small_pool"} {
		reserved, ok1 := s.Get("reserved_bytes." + pool + ".current")
		segs, ok2 := s.Get("segment." + pool + ".current")
		if ok1 && ok2 && reserved > 0 && segs == 0 {
			n += reserved
		}
	}
	return n
}

// AsyncBackend reports whether the set is the cudaMallocAsync backend's
// (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync): its getDeviceStats
// fills only the "all" current and peak of allocated_bytes, active_bytes
// and reserved_bytes, from the CUDA memory pool's attributes, and leaves
// every other statistic zero (CUDAMallocAsyncAllocator.cpp: "Many stat
// types are specific to the native allocator"): segments, allocations,
// non-releasable memory, the pools' breakdown, the totals allocated and
// freed, num_ooms and num_alloc_retries. Told by reserved memory in no
// pool and no segment, or allocated memory never allocated: the native
// allocator's pools add up to its "all", and its total allocated is at
// least its current.
func (s *AllocatorStats) AsyncBackend() bool {
	reserved, ok := s.Get("reserved_bytes.all.current")
	alloc, okA := s.Get("allocated_bytes.all.current")
	if !ok || reserved <= 0 {
		return false
	}
	if total, ok := s.Get("allocated_bytes.all.allocated"); ok && okA && alloc > 0 && total == 0 {
		return true
	}
	large, ok1 := s.Get("reserved_bytes.large_pool.current")
	small, ok2 := s.Get("reserved_bytes.small_pool.current")
	segs, ok3 := s.Get("segment.all.current")
	return ok1 && ok2 && ok3 && large == 0 && small == 0 && segs == 0
}

// SplitUnmeasured reports whether the set's non-releasable memory
// (inactive_split_bytes) says nothing: all its reserved memory is in
// expandable segments, which PyTorch leaves out of it, or the set is the
// cudaMallocAsync backend's, which does not count it (AsyncBackend).
func (s *AllocatorStats) SplitUnmeasured() bool {
	if s.AsyncBackend() {
		return true
	}
	reserved, ok := s.Get("reserved_bytes.all.current")
	exp := s.ExpandableReserved()
	return ok && exp > 0 && exp+s.Resolution["reserved_bytes.all.current"]+s.Resolution["reserved_bytes.large_pool.current"]+s.Resolution["reserved_bytes.small_pool.current"] >= reserved
}

// expandableSplitBound is the most free memory the expandable pools can
// hold in pages shared with live blocks, -1 when the set does not say, and
// their active blocks: a block leaves free memory only in its first and
// last page (snapshot.ExpandablePage: 20 MiB in the large pool, 2 MiB in
// the small one), so the pages it shares hold less than two pages of free
// memory.
func (s *AllocatorStats) expandableSplitBound() (bound, n int64) {
	for _, pool := range []string{"large_pool", "small_pool"} {
		reserved, ok1 := s.Get("reserved_bytes." + pool + ".current")
		segs, ok2 := s.Get("segment." + pool + ".current")
		if !ok1 || !ok2 || reserved <= 0 || segs > 0 {
			continue
		}
		blocks, ok := s.Get("active." + pool + ".current")
		if !ok {
			if blocks, ok = s.Get("allocation." + pool + ".current"); !ok {
				return -1, 0
			}
		}
		active, ok := s.Get("active_bytes." + pool + ".current")
		if !ok {
			if active, ok = s.Get("allocated_bytes." + pool + ".current"); !ok {
				return -1, 0
			}
		}
		free := max(reserved+s.Resolution["reserved_bytes."+pool+".current"]-active, 0)
		bound += min(free, 2*snapshot.ExpandablePage(pool == "small_pool")*blocks)
		n += blocks
	}
	return bound, n
}

// Verdict says what a memory_stats()/memory_summary() set shows on its own,
// "" when nothing stands out:
//   - OOMs or cudaMalloc retries while the free memory split around live
//     blocks (non-releasable memory, inactive_split_bytes) is at least the
//     allocated memory: fragmentation;
//   - the same, with reserved-but-unallocated memory at least the
//     allocated, in expandable segments (which PyTorch leaves out of the
//     non-releasable memory): "cannot tell", as that memory may be the
//     free part of pages shared with live blocks (fragmentation: the OOM's
//     release unmapped every whole free page) or whole free pages of
//     tensors freed after the OOM; unless the live blocks are too few to
//     share that much (each shares at most two pages), which is not
//     fragmentation;
//   - the same, with reserved-but-unallocated memory at least the
//     allocated, in a set without non-releasable memory (a memory_summary()
//     cut before its Non-releasable memory row): "cannot tell", as that
//     memory may as well be whole free segments (tensors freed after the
//     OOM, the usual picture of a summary printed in an except block); the
//     peak figures are said where they bound it;
//   - after OOMs or cudaMalloc retries, allocated about equal to
//     reserved after segments were returned to the GPU (empty_cache, or
//     the allocator's release on OOM): live tensors hold the memory, not
//     the cache (without an OOM, that is only what a program holds: no
//     verdict);
//   - after OOMs or cudaMalloc retries, reserved memory neither
//     allocated nor non-releasable of at least the allocated memory and
//     64 MiB: whole free segments freed after the error, which the
//     cache keeps and empty_cache() returns ("cached"; not in
//     expandable segments, whose non-releasable memory is not
//     measured; without an OOM, a cache is what PyTorch keeps: no
//     verdict).
func (s *AllocatorStats) Verdict() string {
	alloc, ok1 := s.Get("allocated_bytes.all.current")
	reserved, ok2 := s.Get("reserved_bytes.all.current")
	if !ok1 || !ok2 || reserved <= 0 {
		return ""
	}
	if why := s.Inconsistent(); why != "" {
		return "cannot tell: " + why
	}
	ooms, _ := s.Get("num_ooms")
	retries, _ := s.Get("num_alloc_retries")
	released, _ := s.Get("reserved_bytes.all.freed")
	unalloc := reserved - alloc
	split, haveSplit := s.Get("inactive_split_bytes.all.current")
	expandable := s.ExpandableReserved() > 0
	if s.SplitUnmeasured() {
		haveSplit = false
	}
	tol := max(s.Resolution["allocated_bytes.all.current"], s.Resolution["reserved_bytes.all.current"], 1<<20)
	switch {
	case (ooms > 0 || retries > 0) && haveSplit && split >= fragmentationMinSplit && split >= alloc:
		return fmt.Sprintf("fragmentation: %s and %s with %s reserved but only %s allocated: %s is free but split around live blocks (non-releasable; a retry releases every whole free segment first)",
			counted(ooms, "OOM", "OOMs"), counted(retries, "cudaMalloc retry", "cudaMalloc retries"), size(reserved), size(alloc), size(split))
	case (ooms > 0 || retries > 0) && expandable && unalloc >= fragmentationMinSplit && unalloc >= alloc:
		bound, blocks := s.expandableSplitBound()
		if bound >= 0 && max(split, 0)+bound < max(fragmentationMinSplit, alloc) {
			return "" // too few live blocks to share that much: whole free pages
		}
		v := fmt.Sprintf("cannot tell: %s and %s with %s reserved and %s allocated in expandable segments, which PyTorch leaves out of the non-releasable memory (inactive_split_bytes): the %s reserved but unallocated is fragmentation if it lies in pages that live blocks also use (an OOM's release unmaps every whole free page), or whole free pages of tensors freed since (empty_cache() unmaps those); the set cannot tell which",
			counted(ooms, "OOM", "OOMs"), counted(retries, "cudaMalloc retry", "cudaMalloc retries"), size(reserved), size(alloc), size(unalloc))
		if bound >= 0 && bound < unalloc {
			v += fmt.Sprintf(" (at most %s of it can share pages with the %d live blocks: a block leaves free memory only in its first and last page, 20 MiB each, 2 MiB in the small pool)", size(bound), blocks)
		}
		return v
	case (ooms > 0 || retries > 0) && !haveSplit && unalloc >= fragmentationMinSplit && unalloc >= alloc:
		v := fmt.Sprintf("cannot tell: %s and %s with %s reserved and %s allocated, but the set has no non-releasable memory (inactive_split_bytes; a memory_summary() cut before its Non-releasable memory row): whether the %s reserved but unallocated is split around live blocks (fragmentation) or whole free segments (tensors freed after the OOM; empty_cache() returns those) cannot be told",
			counted(ooms, "OOM", "OOMs"), counted(retries, "cudaMalloc retry", "cudaMalloc retries"), size(reserved), size(alloc), size(unalloc))
		peakAlloc, ok1 := s.Get("allocated_bytes.all.peak")
		peakRes, ok2 := s.Get("reserved_bytes.all.peak")
		if ok1 && ok2 && peakRes > 0 {
			// Allocated is never more than reserved: when allocated
			// peaked, at most peak reserved - peak allocated was free in
			// the cache.
			// A summary's figures are truncated to their unit: the
			// reserved peak may be up to its resolution more.
			free := max(peakRes+s.Resolution["reserved_bytes.all.peak"]-peakAlloc, 0)
			freeS, peakS := sizeOf(free, peakRes)
			v += fmt.Sprintf("; when allocated memory peaked (%s), at most %s of the %s peak reserved was free in the cache", size(peakAlloc), freeS, peakS)
		}
		return v
	case (ooms > 0 || retries > 0) && released > 0 && alloc >= fragmentationMinSplit && unalloc <= tol+reserved/100:
		allocS, reservedS := sizeOf(alloc, reserved)
		return fmt.Sprintf("live references: after %s and %s, %s allocated of %s reserved after %s of segments were returned to the GPU (empty_cache or an OOM's release): live tensors hold this memory, not the cache; empty_cache() cannot free it, only dropping the references can",
			counted(ooms, "OOM", "OOMs"), counted(retries, "cudaMalloc retry", "cudaMalloc retries"), allocS, reservedS, size(released))
	case (ooms > 0 || retries > 0) && haveSplit && !expandable && unalloc-max(split, 0) >= fragmentationMinSplit && unalloc-max(split, 0) >= alloc:
		// Reserved memory neither allocated nor split around live
		// blocks lies in whole free segments: the cache keeps them for
		// the process's next allocations, and empty_cache() returns
		// them to the GPU. An OOM's retry released every whole free
		// segment first, so these were freed after it.
		cached := unalloc - max(split, 0)
		cachedS, reservedS := sizeOf(cached, reserved)
		return fmt.Sprintf("cached: after %s and %s, %s of the %s reserved is in whole free segments (reserved %s less %s allocated and %s free but split around live blocks), freed after the error (a retry releases every whole free segment first): PyTorch's cache keeps it for this process's next allocations; live tensors do not hold it and it is not fragmentation; torch.cuda.empty_cache() would return it to the GPU (nvidia-smi counts it as this process's until then)",
			counted(ooms, "OOM", "OOMs"), counted(retries, "cudaMalloc retry", "cudaMalloc retries"), cachedS, reservedS, size(reserved), size(alloc), size(max(split, 0)))
	}
	return ""
}

// Printers names who printed the out-of-memory messages (see
// pytorchtext.Printer), each once, in the order of their first message;
// nil when there is none.
func (r *TextResult) Printers() []string {
	var ps []string
	for _, m := range r.Messages {
		if p := pytorchtext.Printer(m.Message); !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}
