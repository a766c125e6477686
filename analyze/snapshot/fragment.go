package snapshot

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// The caching allocator's sizes (c10/cuda/CUDACachingAllocator.cpp).
const (
	allocMinBlock    = 512     // kMinBlockSize: every block is a multiple of it
	allocSmallSize   = 1 << 20 // kSmallSize: requests up to it use the small pool
	allocSmallBuffer = 2 << 20 // kSmallBuffer: the small pool's segments
	allocLargeBuffer = 20 << 20
	allocMinLarge    = 10 << 20 // kMinLargeAlloc: below it, a request gets a 20 MiB segment
	allocRoundLarge  = 2 << 20  // kRoundLarge: larger segments are rounded to it
)

// ExpandablePage is the page an expandable segment maps and unmaps: the
// segment_size of its ExpandableSegment, kSmallBuffer (2 MiB) for the
// small pool and kLargeBuffer (20 MiB) for the large one.
func ExpandablePage(small bool) int64 {
	if small {
		return allocSmallBuffer
	}
	return allocLargeBuffer
}

// AllocRoundSize is the block size the caching allocator gives a request
// of size bytes: a multiple of 512, at least 512 (round_size without
// roundup_power2_divisions).
func AllocRoundSize(size int64) int64 {
	if size < allocMinBlock {
		return allocMinBlock
	}
	return (size + allocMinBlock - 1) / allocMinBlock * allocMinBlock
}

// AllocSegmentSize is the size of the segment the caching allocator
// reserves from CUDA when no cached block fits a request of size bytes
// (get_allocation_size): 2 MiB for the small pool, 20 MiB up to 10 MiB,
// else the size rounded up to 2 MiB. PyTorch's OOM message prints this as
// "Tried to allocate".
func AllocSegmentSize(size int64) int64 {
	switch {
	case size <= allocSmallSize:
		return allocSmallBuffer
	case size < allocMinLarge:
		return allocLargeBuffer
	}
	return (size + allocRoundLarge - 1) / allocRoundLarge * allocRoundLarge
}

// PoolKey identifies a pool of the caching allocator: a block is served
// only from segments of its device, pool and stream.
type PoolKey struct {
	Device int
	// Small is true for the small pool (requests up to 1 MiB, 2 MiB
	// segments), false for the large pool.
	Small bool
	// PoolID is (0, 0) for the default pool, else a private pool (a CUDA
	// graph's, or a torch.cuda.MemPool).
	PoolID [2]int64
	// Stream is the cudaStream_t the pool's segments serve.
	Stream int64
	// Expandable is true for expandable segments
	// (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): one virtual
	// range per pool and stream, into which the allocator maps physical
	// pages (ExpandablePage bytes) where blocks need them and unmaps whole
	// free pages (empty_cache, or its release before an OOM). Free memory
	// in a page that also holds a live block stays mapped: the only
	// fragmentation such a segment has.
	Expandable bool
}

// PoolName is "large" or "small".
func (k PoolKey) PoolName() string {
	if k.Small {
		return "small"
	}
	return "large"
}

// Private reports whether the pool is a private pool.
func (k PoolKey) Private() bool { return k.PoolID != [2]int64{} }

func (k PoolKey) less(o PoolKey) bool {
	switch {
	case k.Device != o.Device:
		return k.Device < o.Device
	case k.PoolID != o.PoolID:
		return k.PoolID[0] < o.PoolID[0] || (k.PoolID[0] == o.PoolID[0] && k.PoolID[1] < o.PoolID[1])
	case k.Small != o.Small:
		return !k.Small
	case k.Stream != o.Stream:
		return k.Stream < o.Stream
	}
	return !k.Expandable && o.Expandable
}

// PoolState is the memory of one pool (or, in a total, of several) at one
// moment. Sizes are bytes.
type PoolState struct {
	PoolKey
	Segments int
	// ReservedBytes is the segments' memory, reserved from CUDA.
	ReservedBytes int64
	// AllocatedBytes is in blocks allocated to the program; ActiveBytes
	// adds blocks the program freed that wait for streams that used them.
	AllocatedBytes, ActiveBytes int64
	AllocatedBlocks             int
	// RequestedBytes is what the program asked for, of the allocated
	// blocks; AllocatedBytes - RequestedBytes is internal fragmentation.
	// RequestedKnown is false when a block does not say (PyTorch < 2.1).
	RequestedBytes int64
	RequestedKnown bool
	// FreeBytes (ReservedBytes - ActiveBytes) is in FreeBlocks free blocks.
	FreeBytes  int64
	FreeBlocks int
	// InactiveSplitBytes is free memory in segments that also hold active
	// blocks: it cannot be returned to CUDA (empty_cache) and serves only
	// requests that fit a free block (external fragmentation). In an
	// expandable segment it is the free memory in pages that also hold
	// active bytes (empty_cache unmaps only whole free pages), in
	// InactiveSplitBlocks pieces: a free block that spans whole free pages
	// gives a piece on each side of them, one that does not is one piece.
	InactiveSplitBytes  int64
	InactiveSplitBlocks int
	// WholeFreeBlocks counts the free memory that empty_cache() returns
	// (FreeBytes - InactiveSplitBytes): wholly free fixed segments, and
	// runs of whole free pages of expandable segments.
	WholeFreeBlocks int
	// LargestFreeBytes is the largest free block.
	LargestFreeBytes int64
	// LargestSplitBytes is the largest of the InactiveSplitBlocks: the
	// largest request the split memory can serve. A larger free block is
	// a wholly free segment, which empty_cache() would return. -1 when not
	// known (allocator stats give no blocks).
	LargestSplitBytes int64
	// EstimatedBlocks counts blocks whose size was estimated from their
	// requested size while replaying the trace (see FragmentResult).
	EstimatedBlocks int
	// MisfitSegments counts segments whose blocks, as the snapshot gives
	// them, do not fit them (outside the segment, or adding up past its
	// total_size: an inconsistent snapshot; FragmentResult.Warnings names
	// them). Their free memory is what their active blocks leave within
	// them, so FreeBytes never exceeds ReservedBytes, but it is a bound,
	// not a measurement.
	MisfitSegments int
}

// InternalBytes is internal fragmentation: allocated block sizes minus
// the sizes requested; 0 when not known.
func (p PoolState) InternalBytes() int64 {
	if !p.RequestedKnown {
		return 0
	}
	return p.AllocatedBytes - p.RequestedBytes
}

// Ratio is the fragmentation ratio of the free memory: 1 - largest free
// block / free memory; 0 when nothing is free (one free block: 0; many
// small ones: near 1).
func (p PoolState) Ratio() float64 {
	if p.FreeBytes <= 0 {
		return 0
	}
	return 1 - float64(p.LargestFreeBytes)/float64(p.FreeBytes)
}

func (p *PoolState) addUp(o PoolState) {
	p.Segments += o.Segments
	p.ReservedBytes += o.ReservedBytes
	p.AllocatedBytes += o.AllocatedBytes
	p.ActiveBytes += o.ActiveBytes
	p.AllocatedBlocks += o.AllocatedBlocks
	p.RequestedBytes += o.RequestedBytes
	p.RequestedKnown = p.RequestedKnown && o.RequestedKnown
	p.FreeBytes += o.FreeBytes
	p.FreeBlocks += o.FreeBlocks
	p.InactiveSplitBytes += o.InactiveSplitBytes
	p.InactiveSplitBlocks += o.InactiveSplitBlocks
	p.WholeFreeBlocks += o.WholeFreeBlocks
	p.LargestFreeBytes = max(p.LargestFreeBytes, o.LargestFreeBytes)
	p.LargestSplitBytes = max(p.LargestSplitBytes, o.LargestSplitBytes)
	p.EstimatedBlocks += o.EstimatedBlocks
	p.MisfitSegments += o.MisfitSegments
}

// DeviceMemory is the state of one device's caching allocator at one
// moment, by pool.
type DeviceMemory struct {
	Device int
	// Pools, ordered by pool id, large before small, then stream.
	Pools []PoolState
	// Total sums the pools (its PoolKey has only Device set; its
	// LargestFreeBytes is the largest of any pool).
	Total PoolState
	// Fixed sums the pools of fixed (not expandable) segments: those
	// PyTorch counts (segment.*), and whose free blocks are all a request
	// that does not fit them can use (an expandable segment maps more
	// pages).
	Fixed PoolState
	// Blocks are the allocated blocks, in address order: at an OOM
	// (OOMState.Memory) only; nil in FragmentResult.End, whose blocks
	// are the snapshot's own.
	Blocks []StateBlock
}

// StateBlock is an allocated block at one moment.
type StateBlock struct {
	Addr uint64
	Size int64
	// Stack is the block's allocation stack from the snapshot's blocks,
	// -1 when the block is not in the snapshot's final state or has none.
	Stack int32
}

// OOMState is the caching allocator at an "oom" trace entry, rebuilt by
// undoing the trace's later entries from the snapshot's final state.
type OOMState struct {
	Device int
	Seq    int64
	TimeUs int64 // 0 without timestamps
	// Requested is the allocation that failed (bytes, as rounded by the
	// allocator); DeviceFree what CUDA reported free, -1 when absent.
	Requested, DeviceFree int64
	Stream                int64
	Stack                 int32 // the failing allocation's stack, -1 when none
	Memory                DeviceMemory
	// RequestPool is the pool the request had to be served from (the
	// default pool is assumed: a trace entry does not name private pools).
	RequestPool PoolKey
	// RequestPoolFree and RequestPoolLargestFree are free memory and the
	// largest free block in that pool (all its streams' segments are
	// separate pools: only those on the request's stream count).
	RequestPoolFree, RequestPoolLargestFree int64
	// FixedFree is free memory in fixed segments of the device, any pool.
	FixedFree int64
	// WouldFitIfContiguous: FixedFree would have held the request (rounded
	// to a block) had it been one block.
	WouldFitIfContiguous bool
	// Expandable: the device's segments are expandable.
	Expandable bool
	// Mismatches counts later trace entries the final state contradicted
	// (the state is then approximate).
	Mismatches int
	// After is what the trace holds after this OOM: a program that went
	// on allocating survived it (caught the error and retried).
	After OOMAfter
}

// SmallerRetry is a stack whose largest allocation after an OOM (After,
// bytes requested) is smaller than before it (Before).
type SmallerRetry struct {
	Stack         int32
	Before, After int64
}

// OOMAfter describes a snapshot's trace after one OOM.
type OOMAfter struct {
	// Entries counts trace entries after the OOM (later OOMs included).
	Entries int
	// Allocs counts allocations after the OOM; LargestAlloc is the
	// largest of them (bytes requested).
	Allocs       int
	LargestAlloc int64
	// SameSiteLargest is the largest allocation after the OOM from the
	// stack that failed (a retry that fit), 0 when none.
	SameSiteLargest int64
	// SegmentsReleased counts segments returned to the GPU after it
	// (segment_free, segment_unmap: empty_cache or the allocator's own
	// release).
	SegmentsReleased int
	// LaterOOMs counts OOMs after it.
	LaterOOMs int
	// Smaller is a stack that allocated less after the OOM than before it
	// (a retry with a smaller batch), the one with the largest allocation
	// before; its Stack is -1 when none (or past the first 32 OOMs).
	Smaller SmallerRetry
	// LastTimeUs is the time of the trace's last entry, 0 without times.
	LastTimeUs int64
}

// FragmentResult is the fragmentation analysis of one snapshot.
type FragmentResult struct {
	// End is each device's state at the end of the snapshot.
	End []DeviceMemory
	// OOMs are the states at each "oom" trace entry, in trace order per
	// device, devices in order.
	OOMs []OOMState
	// Warnings about the replay.
	Warnings []string
}

// FragmentAnalyzer measures fragmentation in a snapshot at its end and at
// each out-of-memory entry of its trace. Feed it every record batch of a
// snapshot (events in trace order per device) with Add, then call Finalize
// once.
//
// The state at an OOM is rebuilt backwards: from the snapshot's segments
// and blocks (the exact final state), each later trace entry is undone,
// newest first. This needs only the trace after the OOM, which a wrapped
// ring buffer keeps. A trace entry gives the size the program requested,
// not its block's: a block that the final state does not hold is given
// the size the allocator would have rounded the request to, or the whole
// free gap when the rest could not have been split off; such blocks are
// counted in PoolState.EstimatedBlocks.
type FragmentAnalyzer struct {
	segs     []fragSegRow
	keys     []PoolKey         // the segments' pools, by fragSegRow.key
	keyIdx   map[PoolKey]int32 // index of each in keys
	blocks   rowList[fragBlockRow]
	devs     map[int32]*fragDevice
	rowCodes []uint8 // the code of each row of the batch: its action (addEvents) or state (addBlocks)
	// blockBytes adds up the sizes of each segment's blocks, inactive
	// ones too, a row for each run of one segment's blocks (a segment's
	// blocks come together, so mostly one row a segment; Finalize sorts
	// the rows and adds up those of a segment): blocks tile their segment,
	// so more than its total_size says the snapshot is inconsistent. Rows,
	// not a map by segment: on 57,000 segments the map cost 5% of the
	// run's instructions. A rowList, not a slice: growing a slice of
	// 57,000 rows copied them (append) or left up to half of it unused
	// (doubling), both held while the decoder's memory is.
	blockBytes rowList[segBytes]
}

// segBytes is the size of a run of a segment's blocks: the segment's
// device and address, and the bytes.
type segBytes struct {
	dev  int32
	addr uint64
	sum  int64
}

// fragSegRow is a segment, as addSegments keeps it until Finalize: no
// pointers, its pool an index in FragmentAnalyzer.keys (24 bytes, not
// 72, on a snapshot of many segments).
type fragSegRow struct {
	dev  int32
	key  int32
	addr uint64
	size int64
}

// fragBlockRow is an active block, as addBlocks keeps it until Finalize:
// no pointers, so that the collector need not scan a row for each block of
// a snapshot that has hundreds of thousands.
type fragBlockRow struct {
	dev             int32
	seg, addr       uint64
	size, req       int64
	hasReq, pending bool // pending: active_pending_free
	stack           int32
}

// fragDevice keeps a device's trace from its first OOM on.
type fragDevice struct {
	events  []fragEvent
	seenOOM bool
	// preMax is the largest allocation by stack id before the first OOM
	// (at least 0), for maxStacksTracked stacks.
	preMax addrTable[int64]
}

// maxStacksTracked bounds the stacks whose largest allocation is kept.
const maxStacksTracked = 1 << 16

type fragEvent struct {
	seq    int64
	act    uint8
	addr   uint64
	size   int64
	stream int64
	timeUs int64
	free   int64
	stack  int32
}

// Replay actions.
const (
	fAlloc = iota
	fFreeRequested
	fFreeCompleted
	fSegmentAlloc
	fSegmentFree
	fSegmentMap
	fSegmentUnmap
	fOOM
	fOther
)

func fragAction(s string) uint8 {
	switch s {
	case pytorch.ActionAlloc:
		return fAlloc
	case pytorch.ActionFreeRequested:
		return fFreeRequested
	case pytorch.ActionFreeCompleted, "free":
		return fFreeCompleted
	case pytorch.ActionSegmentAlloc:
		return fSegmentAlloc
	case pytorch.ActionSegmentFree:
		return fSegmentFree
	case pytorch.ActionSegmentMap:
		return fSegmentMap
	case pytorch.ActionSegmentUnmap:
		return fSegmentUnmap
	case pytorch.ActionOOM:
		return fOOM
	}
	return fOther
}

// Block states, as blockStates codes them.
const (
	blockOther     uint8 = iota // a state this version does not know
	blockInactive               // inactive: free space inside a segment
	blockAllocated              // active_allocated
	blockPending                // active_pending_free
)

// blockStates returns the state code of each row of a blocks batch's
// state column, in buf's storage: its dictionary is coded once, then the
// rows through parse.DictRowCodes.
func blockStates(col *array.Dictionary, buf []uint8) []uint8 {
	dict := col.Dictionary().(*array.String)
	codes := make([]uint8, dict.Len())
	for k := range codes {
		switch dict.Value(k) {
		case pytorch.StateInactive:
			codes[k] = blockInactive
		case pytorch.StateActiveAllocated:
			codes[k] = blockAllocated
		case pytorch.StateActivePendingFree:
			codes[k] = blockPending
		}
	}
	return parse.DictRowCodes(col, codes, buf)
}

// sawOOM reports whether any "oom" trace entry has been fed.
func (a *FragmentAnalyzer) sawOOM() bool {
	for _, d := range a.devs {
		if d.seenOOM {
			return true
		}
	}
	return false
}

// NewFragmentAnalyzer returns an empty analyzer.
func NewFragmentAnalyzer() *FragmentAnalyzer {
	return &FragmentAnalyzer{devs: map[int32]*fragDevice{}, keyIdx: map[PoolKey]int32{}}
}

// Add feeds one record batch of table t. It returns an error when the
// batch does not have the table's schema.
func (a *FragmentAnalyzer) Add(t pytorch.Table, rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(t.Schema()) {
		return fmt.Errorf("analyze: %s batch has schema %s", t, rec.Schema())
	}
	switch t {
	case pytorch.TableSegments:
		a.addSegments(rec)
	case pytorch.TableBlocks:
		a.addBlocks(rec)
	case pytorch.TableEvents:
		a.addEvents(rec)
	}
	return nil
}

func (a *FragmentAnalyzer) addSegments(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.SegDevice).(*array.Int32)
	addr := rec.Column(pytorch.SegAddress).(*array.Uint64)
	total := rec.Column(pytorch.SegTotalSize).(*array.Int64)
	stream := rec.Column(pytorch.SegStream).(*array.Int64)
	typ := rec.Column(pytorch.SegType).(*array.Dictionary)
	typDict := typ.Dictionary().(*array.String)
	pool := rec.Column(pytorch.SegPoolID).(*array.FixedSizeList)
	poolValues := pool.ListValues().(*array.Int64)
	exp := rec.Column(pytorch.SegExpandable).(*array.Boolean)
	ki := int32(-1)
	for i := 0; i < int(rec.NumRows()); i++ {
		k := PoolKey{Device: int(device.Value(i)), Small: typDict.Value(typ.GetValueIndex(i)) == "small",
			Stream: stream.Value(i), Expandable: exp.Value(i)}
		if pool.IsValid(i) {
			k.PoolID = [2]int64{poolValues.Value(2 * i), poolValues.Value(2*i + 1)}
		}
		if ki < 0 || a.keys[ki] != k { // segments of one pool mostly come together
			var ok bool
			if ki, ok = a.keyIdx[k]; !ok {
				ki = int32(len(a.keys))
				a.keys = append(a.keys, k)
				a.keyIdx[k] = ki
			}
		}
		a.segs = appendRow(a.segs, fragSegRow{dev: device.Value(i), key: ki, addr: addr.Value(i), size: total.Value(i)})
	}
}

func (a *FragmentAnalyzer) addBlocks(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.BlkDevice).(*array.Int32)
	seg := rec.Column(pytorch.BlkSegmentAddress).(*array.Uint64)
	addr := rec.Column(pytorch.BlkAddress).(*array.Uint64)
	size := rec.Column(pytorch.BlkSize).(*array.Int64)
	req := rec.Column(pytorch.BlkRequestedSize).(*array.Int64)
	stack := rec.Column(pytorch.BlkStackID).(*array.Int32)
	a.rowCodes = blockStates(rec.Column(pytorch.BlkState).(*array.Dictionary), a.rowCodes)
	run := segBytes{dev: -1} // the run of one segment's blocks being added up
	for i, st := range a.rowCodes {
		if d, sa := device.Value(i), seg.Value(i); d != run.dev || sa != run.addr {
			if run.sum != 0 {
				a.blockBytes.add(run)
			}
			run = segBytes{dev: d, addr: sa}
		}
		run.sum += max(size.Value(i), 0)
		if st == blockInactive { // free space is what the active blocks leave: not kept
			continue
		}
		a.blocks.add(fragBlockRow{dev: device.Value(i), seg: seg.Value(i), addr: addr.Value(i),
			size: size.Value(i), req: req.Value(i), hasReq: req.IsValid(i), pending: st == blockPending, stack: stackAt(stack, i)})
	}
	if run.sum != 0 {
		a.blockBytes.add(run)
	}
}

func (a *FragmentAnalyzer) addEvents(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.EvDevice).(*array.Int32)
	seq := rec.Column(pytorch.EvSeq).(*array.Int64)
	timeUs := rec.Column(pytorch.EvTimeUs).(*array.Int64)
	action := rec.Column(pytorch.EvAction).(*array.Dictionary)
	dict := action.Dictionary().(*array.String)
	codes := make([]uint8, dict.Len())
	for i := range codes {
		codes[i] = fragAction(dict.Value(i))
	}
	a.rowCodes = parse.DictRowCodes(action, codes, a.rowCodes)
	addr := rec.Column(pytorch.EvAddr).(*array.Uint64)
	size := rec.Column(pytorch.EvSize).(*array.Int64)
	stream := rec.Column(pytorch.EvStream).(*array.Int64)
	stack := rec.Column(pytorch.EvStackID).(*array.Int32)
	free := rec.Column(pytorch.EvDeviceFree).(*array.Int64)
	var d *fragDevice
	var dv int32 = -1
	for i, n := 0, int(rec.NumRows()); i < n; i++ { // NumRows is an interface call
		if device.Value(i) != dv || d == nil {
			dv = device.Value(i)
			if d = a.devs[dv]; d == nil {
				d = &fragDevice{}
				a.devs[dv] = d
			}
		}
		code := a.rowCodes[i]
		if code == fOOM {
			d.seenOOM = true
		}
		if !d.seenOOM && code == fAlloc {
			if st := stackAt(stack, i); st >= 0 {
				if p := d.preMax.ptr(uint64(st)); p != nil {
					*p = max(*p, size.Value(i))
				} else if d.preMax.len() < maxStacksTracked {
					d.preMax.put(uint64(st), max(0, size.Value(i)))
				}
			}
		}
		// Only entries from the first OOM on are undone.
		if !d.seenOOM || code == fOther {
			continue
		}
		e := fragEvent{seq: seq.Value(i), act: code, addr: addr.Value(i), size: size.Value(i),
			stream: stream.Value(i), free: -1, stack: stackAt(stack, i)}
		if timeUs.IsValid(i) {
			e.timeUs = timeUs.Value(i)
		}
		if free.IsValid(i) {
			e.free = free.Value(i)
		}
		d.events = append(d.events, e)
	}
}

// fragBlock is an active block in the replay.
type fragBlock struct {
	addr      uint64
	size, req int64
	hasReq    bool
	pending   bool
	estimated bool
	stack     int32
}

// fragSeg is a segment in the replay, its active blocks in address order.
type fragSeg struct {
	addr uint64
	size int64
	// key is the segment's pool, shared by the segments of one pool (a
	// snapshot's are the FragmentAnalyzer's keys): never changed.
	key    *PoolKey
	blocks []fragBlock
	// misfit: the snapshot's blocks of this segment do not fit it (see
	// misfitWhy).
	misfit bool
}

func (s *fragSeg) end() uint64 { return s.addr + uint64(s.size) }

// maxMisfitWarnings bounds the segments named by misfit's warnings.
const maxMisfitWarnings = 3

// misfitWhy says how the segment's blocks, as the snapshot gives them, do
// not fit it: an active block that starts before it or ends past its end,
// or all its blocks (sum bytes, inactive ones too) larger than its
// total_size; "" when they fit.
func (s *fragSeg) misfitWhy(sum int64) string {
	out, first := 0, -1
	for i, b := range s.blocks {
		if b.addr < s.addr || b.size < 0 || b.addr+uint64(b.size) > s.end() {
			if out++; first < 0 {
				first = i
			}
		}
	}
	var why []string
	if out > 0 {
		b := s.blocks[first]
		why = append(why, fmt.Sprintf("%d active blocks lie outside it (the first at 0x%x, %d bytes)", out, b.addr, b.size))
	}
	if sum > s.size {
		why = append(why, fmt.Sprintf("its blocks add up to %d bytes (%s), more than its total_size", sum, humanize.IBytes(uint64(sum))))
	}
	return strings.Join(why, "; ")
}

// blockAt returns the index of the first block at or after addr.
func (s *fragSeg) blockAt(addr uint64) int {
	return sort.Search(len(s.blocks), func(i int) bool { return s.blocks[i].addr >= addr })
}

// fragState is one device's allocator in the replay.
type fragState struct {
	dev        int
	segs       []*fragSeg // by address, disjoint
	mismatches int
}

// segAt returns the segment holding addr, or nil.
func (st *fragState) segAt(addr uint64) *fragSeg {
	i := sort.Search(len(st.segs), func(i int) bool { return st.segs[i].end() > addr })
	if i < len(st.segs) && st.segs[i].addr <= addr {
		return st.segs[i]
	}
	return nil
}

func (st *fragState) insertSeg(s *fragSeg) {
	i := sort.Search(len(st.segs), func(i int) bool { return st.segs[i].addr >= s.addr })
	st.segs = append(st.segs, nil)
	copy(st.segs[i+1:], st.segs[i:])
	st.segs[i] = s
}

func (st *fragState) removeSeg(s *fragSeg) {
	for i, x := range st.segs {
		if x == s {
			st.segs = append(st.segs[:i], st.segs[i+1:]...)
			return
		}
	}
}

// undo reverts one trace entry.
func (st *fragState) undo(e fragEvent) {
	switch e.act {
	case fAlloc:
		// The block was handed out by this entry: before it, free.
		s := st.segAt(e.addr)
		if s == nil {
			st.mismatches++
			return
		}
		i := s.blockAt(e.addr)
		if i == len(s.blocks) || s.blocks[i].addr != e.addr || s.blocks[i].pending {
			st.mismatches++
			return
		}
		s.blocks = append(s.blocks[:i], s.blocks[i+1:]...)
	case fFreeRequested:
		s := st.segAt(e.addr)
		if s == nil {
			st.mismatches++
			return
		}
		i := s.blockAt(e.addr)
		if i == len(s.blocks) || s.blocks[i].addr != e.addr || !s.blocks[i].pending {
			st.mismatches++
			return
		}
		s.blocks[i].pending = false
	case fFreeCompleted:
		// Before it the block was active, pending; its size is not in
		// the entry (which gives the requested size).
		s := st.segAt(e.addr)
		if s == nil {
			st.mismatches++
			return
		}
		i := s.blockAt(e.addr)
		if i > 0 && s.blocks[i-1].addr+uint64(s.blocks[i-1].size) > e.addr {
			st.mismatches++ // inside an active block: not free
			return
		}
		gapEnd := s.end()
		if i < len(s.blocks) {
			gapEnd = s.blocks[i].addr
		}
		avail := int64(gapEnd - e.addr)
		if avail <= 0 {
			st.mismatches++
			return
		}
		size := AllocRoundSize(e.size)
		// What is left after it is part of the block when the allocator
		// could not have split it off (should_split).
		rest := avail - size
		switch {
		case rest < 0:
			size = avail
			st.mismatches++
		case s.key.Small || s.key.Expandable:
			if rest < allocMinBlock {
				size = avail
			}
		default:
			if rest <= allocSmallSize {
				size = avail
			}
		}
		b := fragBlock{addr: e.addr, size: size, req: e.size, hasReq: true, pending: true, estimated: true, stack: -1}
		s.blocks = append(s.blocks, fragBlock{})
		copy(s.blocks[i+1:], s.blocks[i:])
		s.blocks[i] = b
	case fSegmentAlloc:
		s := st.segAt(e.addr)
		if s == nil || s.addr != e.addr {
			st.mismatches++
			return
		}
		if len(s.blocks) > 0 {
			st.mismatches++
		}
		st.removeSeg(s)
	case fSegmentFree:
		if st.segAt(e.addr) != nil || (e.size > 0 && st.segAt(e.addr+uint64(e.size)-1) != nil) {
			st.mismatches++
			return
		}
		st.insertSeg(&fragSeg{addr: e.addr, size: e.size, key: &PoolKey{Device: st.dev, Small: e.size <= allocSmallBuffer, Stream: e.stream}})
	case fSegmentMap:
		st.unmap(e.addr, e.size)
	case fSegmentUnmap:
		st.mapRange(e.addr, e.size, e.stream)
	}
}

// unmap removes [addr, addr+size) from an expandable segment (undoing a
// segment_map), splitting it when the range is inside.
func (st *fragState) unmap(addr uint64, size int64) {
	s := st.segAt(addr)
	end := addr + uint64(size)
	if s == nil || end > s.end() || size <= 0 {
		st.mismatches++
		return
	}
	var left, right []fragBlock
	for _, b := range s.blocks {
		switch {
		case b.addr+uint64(b.size) <= addr:
			left = append(left, b)
		case b.addr >= end:
			right = append(right, b)
		default:
			st.mismatches++ // an active block in memory being unmapped
		}
	}
	st.removeSeg(s)
	if addr > s.addr {
		st.insertSeg(&fragSeg{addr: s.addr, size: int64(addr - s.addr), key: s.key, blocks: left})
	}
	if end < s.end() {
		st.insertSeg(&fragSeg{addr: end, size: int64(s.end() - end), key: s.key, blocks: right})
	}
}

// mapRange adds [addr, addr+size) to the expandable segments, free,
// joining the segments it touches (undoing a segment_unmap).
func (st *fragState) mapRange(addr uint64, size int64, stream int64) {
	if size <= 0 || st.segAt(addr) != nil || st.segAt(addr+uint64(size)-1) != nil {
		st.mismatches++
		return
	}
	s := &fragSeg{addr: addr, size: size, key: &PoolKey{Device: st.dev, Stream: stream, Expandable: true}}
	if l := st.segAt(addr - 1); addr > 0 && l != nil && l.key.Expandable {
		st.removeSeg(l)
		s.key = l.key
		s.blocks = l.blocks
		s.size += int64(addr - l.addr)
		s.addr = l.addr
	}
	if r := st.segAt(s.end()); r != nil && r.addr == s.end() && r.key.Expandable {
		st.removeSeg(r)
		s.key = r.key
		s.blocks = append(s.blocks, r.blocks...)
		s.size += r.size
	}
	st.insertSeg(s)
}

// measure returns the device's memory by pool, with its allocated blocks
// when withBlocks is set.
func (st *fragState) measure(withBlocks bool) DeviceMemory {
	pools := map[PoolKey]*PoolState{}
	dm := DeviceMemory{Device: st.dev}
	var p *PoolState
	var pk *PoolKey // p's key, as the last segment had it
	for _, s := range st.segs {
		if s.key != pk { // segments of one pool mostly come together
			pk = s.key
			if p = pools[*pk]; p == nil {
				p = &PoolState{PoolKey: *pk, RequestedKnown: true}
				pools[*pk] = p
			}
		}
		p.Segments++
		p.ReservedBytes += s.size
		if s.misfit {
			p.MisfitSegments++
		}
		next := s.addr
		gap := func(to uint64) {
			if to <= next {
				return
			}
			n := int64(to - next)
			p.FreeBytes += n
			p.FreeBlocks++
			switch {
			case s.key.Expandable:
				p.addExpandableGap(s, next, to)
			case len(s.blocks) > 0:
				p.addSplit(n)
			default:
				p.WholeFreeBlocks++
			}
			p.LargestFreeBytes = max(p.LargestFreeBytes, n)
		}
		// A block outside the segment (an inconsistent snapshot, see
		// misfitWhy) is clipped to it: the free pieces lie within the
		// segment, so they never add up past its size.
		for _, b := range s.blocks {
			gap(min(b.addr, s.end()))
			p.ActiveBytes += b.size
			if b.estimated {
				p.EstimatedBlocks++
			}
			if !b.pending {
				p.AllocatedBytes += b.size
				p.AllocatedBlocks++
				p.RequestedBytes += b.req
				p.RequestedKnown = p.RequestedKnown && b.hasReq
				if withBlocks {
					dm.Blocks = append(dm.Blocks, StateBlock{Addr: b.addr, Size: b.size, Stack: b.stack})
				}
			}
			next = max(next, min(b.addr+uint64(b.size), s.end()))
		}
		gap(s.end())
	}
	dm.Total = PoolState{PoolKey: PoolKey{Device: st.dev}, RequestedKnown: true}
	dm.Fixed = dm.Total
	for _, p := range pools {
		dm.Pools = append(dm.Pools, *p)
		dm.Total.addUp(*p)
		if !p.Expandable {
			dm.Fixed.addUp(*p)
		}
	}
	sort.Slice(dm.Pools, func(i, j int) bool { return dm.Pools[i].less(dm.Pools[j].PoolKey) })
	return dm
}

// addSplit counts a free piece of n bytes that cannot be returned.
func (p *PoolState) addSplit(n int64) {
	p.InactiveSplitBytes += n
	p.InactiveSplitBlocks++
	p.LargestSplitBytes = max(p.LargestSplitBytes, n)
}

// addExpandableGap counts the free bytes [g0, g1) of the expandable
// segment s, whose other bytes are active blocks. The segment maps and
// unmaps whole pages (ExpandablePage), counted from its start: a range
// the snapshot lists is one run of mapped pages. What lies in the pages at
// either end of the gap that also hold a block stays mapped (split); the
// whole pages between are what empty_cache() unmaps.
func (p *PoolState) addExpandableGap(s *fragSeg, g0, g1 uint64) {
	page := ExpandablePage(s.key.Small)
	o0, o1 := int64(g0-s.addr), int64(g1-s.addr)
	up := (o0 + page - 1) / page * page // the first whole page's start
	down := o1 / page * page            // the last whole page's end
	if g1 == s.end() {
		down = o1 // no block after: the segment's last page is free to its end
	}
	if up >= down { // no whole page: the gap shares its pages with blocks
		p.addSplit(o1 - o0)
		return
	}
	if up > o0 {
		p.addSplit(up - o0)
	}
	if o1 > down {
		p.addSplit(o1 - down)
	}
	p.WholeFreeBlocks++
}

// keptChunk is the blocks (or segments) of a chunk Finalize copies the
// blocks (or segments) into.
const keptChunk = 4096

// Finalize ends the analysis. The analyzer must not be used afterwards.
func (a *FragmentAnalyzer) Finalize() *FragmentResult {
	res := &FragmentResult{}
	states := map[int32]*fragState{}
	state := func(d int32) *fragState {
		if states[d] == nil {
			states[d] = &fragState{dev: int(d)}
		}
		return states[d]
	}
	// Segments by (device, address) and blocks by (device, segment,
	// address), stably: PyTorch writes them so (one device after
	// another, each sorted by address), and then nothing moves. Each
	// segment's blocks are then a run of the one array they are copied
	// to, and no map or slice is made per segment.
	segs, rows := a.segs, &a.blocks
	a.segs = nil
	segCmp := func(x, y fragSegRow) int { return cmp.Or(cmp.Compare(x.dev, y.dev), cmp.Compare(x.addr, y.addr)) }
	if !slices.IsSortedFunc(segs, segCmp) {
		slices.SortStableFunc(segs, segCmp)
	}
	blockCmp := func(x, y *fragBlockRow) int {
		return cmp.Or(cmp.Compare(x.dev, y.dev), cmp.Compare(x.seg, y.seg), cmp.Compare(x.addr, y.addr))
	}
	nb := rows.len()
	block := rows.at
	for j := 1; j < nb; j++ {
		if blockCmp(rows.at(j-1), rows.at(j)) > 0 { // sort a copy
			sorted := make([]fragBlockRow, 0, nb)
			for b := range rows.all {
				sorted = append(sorted, b)
			}
			slices.SortStableFunc(sorted, func(x, y fragBlockRow) int { return blockCmp(&x, &y) })
			block = func(j int) *fragBlockRow { return &sorted[j] }
			break
		}
	}
	var all []fragSeg // chunks too, for the same reason
	// The blocks are copied into chunks of keptChunk, each segment's
	// into one chunk: one array of them all was new memory, page-faulted
	// in block by block, where chunks mostly reuse the heap's freed spans
	// (on 128,000 blocks, about 7 MB less max RSS with the segments'
	// chunks, and most of this loop's time).
	var kept []fragBlock
	orphans, j := 0, 0
	var bad []string // segments whose blocks do not fit them
	nbad := 0
	sumCmp := func(x, y segBytes) int { return cmp.Or(cmp.Compare(x.dev, y.dev), cmp.Compare(x.addr, y.addr)) }
	nsums, sumAt := a.blockBytes.len(), a.blockBytes.at
	for k := 1; k < nsums; k++ {
		if sumCmp(*sumAt(k - 1), *sumAt(k)) > 0 { // sort a copy
			sorted := make([]segBytes, 0, nsums)
			for x := range a.blockBytes.all {
				sorted = append(sorted, x)
			}
			slices.SortFunc(sorted, sumCmp)
			sumAt = func(k int) *segBytes { return &sorted[k] }
			break
		}
	}
	k := 0 // the rows from k on are of the segments not passed yet
	for i, r := range segs {
		if len(all) == cap(all) {
			all = make([]fragSeg, 0, min(len(segs)-i, keptChunk))
		}
		all = append(all, fragSeg{})
		s := &all[len(all)-1]
		*s = fragSeg{addr: r.addr, size: r.size, key: &a.keys[r.key]}
		st := state(r.dev)
		st.segs = append(st.segs, s)
		if i+1 < len(segs) && segs[i+1].dev == r.dev && segs[i+1].addr == r.addr {
			continue // a segment listed twice: its blocks go to the last
		}
		for ; j < nb && (block(j).dev < r.dev || block(j).dev == r.dev && block(j).seg < r.addr); j++ {
			orphans++
		}
		from := len(kept)
		for ; j < nb && block(j).dev == r.dev && block(j).seg == r.addr; j++ {
			b := block(j)
			if len(kept) == cap(kept) { // a new chunk, the segment's blocks so far moved to it
				kept = append(make([]fragBlock, 0, max(keptChunk, 2*(len(kept)-from))), kept[from:]...)
				from = 0
			}
			kept = append(kept, fragBlock{addr: b.addr, size: b.size, req: b.req, hasReq: b.hasReq,
				pending: b.pending, stack: b.stack})
		}
		s.blocks = kept[from:len(kept):len(kept)] // full: the replay's appends copy it
		here := segBytes{dev: r.dev, addr: r.addr}
		for k < nsums && sumCmp(*sumAt(k), here) < 0 {
			k++
		}
		sum := int64(0)
		for ; k < nsums && sumCmp(*sumAt(k), here) == 0; k++ {
			sum = satAdd(sum, sumAt(k).sum)
		}
		if why := s.misfitWhy(sum); why != "" {
			s.misfit = true
			if nbad++; len(bad) < maxMisfitWarnings {
				bad = append(bad, fmt.Sprintf("device %d: segment at 0x%x (total_size %d bytes, %s): %s", r.dev, r.addr, r.size, humanize.IBytes(uint64(max(r.size, 0))), why))
			}
		}
	}
	for _, w := range bad {
		res.Warnings = append(res.Warnings, w+": the snapshot is inconsistent (edited, or written by another tool); its free and fragmentation figures count only the part of the segment its active blocks leave free within it, and say nothing reliable of this segment")
	}
	if nbad > len(bad) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d more segments whose blocks do not fit them", nbad-len(bad)))
	}
	orphans += nb - j
	a.blocks = rowList[fragBlockRow]{}
	a.blockBytes = rowList[segBytes]{}
	if orphans > 0 {
		res.Warnings = append(res.Warnings, count(int64(orphans), "block names", "blocks name")+" a segment the snapshot does not have; ignored")
	}
	for d := range a.devs {
		state(d)
	}
	devs := make([]int32, 0, len(states))
	for d := range states {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	for _, d := range devs {
		st := states[d]
		res.End = append(res.End, st.measure(false))
		fd := a.devs[d]
		if fd == nil {
			continue
		}
		expandable := false
		for _, s := range st.segs {
			expandable = expandable || s.key.Expandable
		}
		// The largest allocation by stack before each of the first OOMs.
		var before []map[int32]int64
		run := map[int32]int64{}
		for k, v := range fd.preMax.all {
			run[int32(k)] = v
		}
		for _, e := range fd.events {
			switch {
			case e.act == fOOM && len(before) < 32:
				snap := make(map[int32]int64, len(run))
				for k, v := range run {
					snap[k] = v
				}
				before = append(before, snap)
			case e.act == fAlloc && e.stack >= 0 && (run[e.stack] > 0 || len(run) < maxStacksTracked):
				run[e.stack] = max(run[e.stack], e.size)
			}
		}
		nOOM := 0
		for _, e := range fd.events {
			if e.act == fOOM {
				nOOM++
			}
		}
		var ooms []OOMState
		var after OOMAfter
		siteMax := map[int32]int64{} // largest later allocation by stack
		for i := len(fd.events) - 1; i >= 0; i-- {
			e := fd.events[i]
			if after.LastTimeUs == 0 && e.timeUs > 0 {
				after.LastTimeUs = e.timeUs
			}
			if e.act != fOOM {
				after.Entries++
				switch e.act {
				case fAlloc:
					after.Allocs++
					after.LargestAlloc = max(after.LargestAlloc, e.size)
					if e.stack >= 0 && len(siteMax) < 1<<16 {
						siteMax[e.stack] = max(siteMax[e.stack], e.size)
					}
				case fSegmentFree, fSegmentUnmap:
					after.SegmentsReleased++
				}
				st.undo(e)
				continue
			}
			o := OOMState{Device: int(d), Seq: e.seq, TimeUs: e.timeUs, Requested: e.size, DeviceFree: e.free,
				Stream: e.stream, Stack: e.stack, Memory: st.measure(true), Mismatches: st.mismatches, Expandable: expandable, After: after}
			if e.stack >= 0 {
				o.After.SameSiteLargest = siteMax[e.stack]
			}
			o.After.Smaller.Stack = -1
			if k := nOOM - 1 - after.LaterOOMs; k < len(before) {
				for st, a := range siteMax {
					sm := o.After.Smaller
					if b := before[k][st]; a > 0 && b > a && (sm.Stack < 0 || b > sm.Before || (b == sm.Before && st < sm.Stack)) {
						o.After.Smaller = SmallerRetry{Stack: st, Before: b, After: a}
					}
				}
			}
			after.LaterOOMs++
			after.Entries++
			o.RequestPool = PoolKey{Device: int(d), Small: e.size <= allocSmallSize, Stream: e.stream, Expandable: expandable}
			for _, p := range o.Memory.Pools {
				if p.PoolKey == o.RequestPool {
					o.RequestPoolFree, o.RequestPoolLargestFree = p.FreeBytes, p.LargestFreeBytes
				}
			}
			o.FixedFree = o.Memory.Fixed.FreeBytes
			o.WouldFitIfContiguous = o.FixedFree >= AllocRoundSize(e.size)
			ooms = append(ooms, o)
		}
		for i := len(ooms) - 1; i >= 0; i-- {
			res.OOMs = append(res.OOMs, ooms[i])
		}
		if st.mismatches > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("device %d: %d trace entries after the first OOM do not agree with the snapshot's final state; the state at the OOM is approximate", d, st.mismatches))
		}
	}
	return res
}
