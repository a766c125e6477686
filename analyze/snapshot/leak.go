package snapshot

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dustin/go-humanize"
	"gonum.org/v1/gonum/stat"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// LeakOptions tune the leak analysis. The zero value is usable.
type LeakOptions struct {
	// Filter hides framework frames; nil means DefaultFrameFilter().
	Filter *callsite.FrameFilter
	// MinKept is the fewest kept allocations a leak may have (default 4).
	MinKept int
	// Curves keeps each site's live bytes at its iteration starts
	// (Growth.Curve), for charts: up to 1,026 int64s a site.
	Curves bool
}

const (
	growthParts       = 10 // the span from a site's first kept allocation to the end, in parts (activeParts)
	defaultMinKept    = 4
	maxSizesPerResult = 8
)

// LeakResult is the outcome of a leak analysis of one snapshot.
type LeakResult struct {
	Devices []DeviceSummary
	// Sites are ranked: leaks first, then live, then retained; each by
	// bytes, largest first.
	Sites    []Site
	Warnings []string
	// OOMs are the trace's "oom" entries, in trace order.
	OOMs []OOMEntry
}

// DeviceSummary is one device's state. Sizes are bytes; times are
// microseconds since the Unix epoch.
type DeviceSummary struct {
	Device        int
	Segments      int
	ReservedBytes int64 // sum of segments' total_size; -1 when unknown
	ActiveBytes   int64 // sum of active_allocated blocks' size; -1 when unknown
	ActiveBlocks  int
	TraceEntries  int64
	// HasTime is true when the trace's entries carry time_us; then
	// TraceStartUs and TraceEndUs bound them.
	HasTime                  bool
	TraceStartUs, TraceEndUs int64
	// UnmatchedFrees counts frees of addresses never seen allocated: the
	// ring buffer wrapped, or recording started after the allocation.
	UnmatchedFrees int64
	// LiveAtTraceEnd counts allocations the trace leaves live.
	LiveAtTraceEnd int
	// LiveBytes is what those allocations hold (a profiler trace's
	// ActiveBytes is the allocator's Total Allocated, which also counts
	// memory allocated before profiling).
	LiveBytes int64
	// BlocksNotInTrace counts active blocks the trace does not cover,
	// taken from the snapshot's segments instead.
	BlocksNotInTrace int
	// PendingFreeBytes and PendingFreeBlocks sum the blocks in state
	// active_pending_free.
	PendingFreeBytes  int64
	PendingFreeBlocks int
	// Iterations counts the starts of the step the trace repeats (0: no
	// repeating step found); IterationSite is the user frame whose
	// allocations mark them.
	Iterations    int
	IterationSite callsite.Frame
	// IterationMarker names the steps the tracer recorded when they mark
	// the iterations (SetSteps: "ProfilerStep#N spans", "prof.step()
	// calls"); "" when a stack marks them or there are none.
	IterationMarker string
	// Unjudged says why growth across iterations could not be judged on
	// the device (no trace, a trace without stacks, too few steps): its
	// memory could only be retained or live, never a leak. "" when it
	// could be, or the device holds nothing to judge.
	Unjudged string
	// PID is the process whose events these are, where the input holds
	// several processes' (a profiler trace merged from several, each
	// analysed on its own: profiler.KinetoAnalyzer); nil otherwise.
	PID *int64
	// PeakActiveBytes is the most memory the trace shows allocated at
	// once on the device: ActiveBytes (a trace without segments: the
	// bytes it leaves live) plus PeakAboveEndBytes (every size rounded up
	// to the allocator's 512-byte blocks; an allocation ends at its
	// free_requested, so blocks pending free are not counted). 0 when no
	// moment of the trace held more than its end. Only the trace's span is seen: a
	// peak before its oldest entry (recording started late, or the ring
	// buffer wrapped) is not.
	PeakActiveBytes int64
	// PeakAboveEndBytes is PeakActiveBytes less the end's: what the trace
	// allocated after the peak, less what it freed (0 when no moment was
	// above the end).
	PeakAboveEndBytes int64
	// PeakReservedBytes is what PyTorch had reserved at the peak: the
	// snapshot's segments less those the trace allocated after the peak,
	// plus those it freed (segment_alloc, segment_map, segment_free,
	// segment_unmap entries); 0 when unknown (no peak above the end, no
	// segments in the snapshot, or a trace that records no segment
	// entry, which then cannot tell none from unrecorded).
	PeakReservedBytes int64
	// PeakSeq is the trace entry (its seq) that reached the peak, -1 when
	// it is the trace's start (its entries only freed memory), and PeakUs
	// its time (µs since the Unix epoch; 0 when untimed or at the start).
	PeakSeq, PeakUs int64
	// PeakTraceBytes is what the trace's own allocations held at the
	// peak; the rest of PeakActiveBytes was allocated before the trace.
	// PeakSites are the call sites of those allocations, largest first
	// (at most maxPeakSites).
	PeakTraceBytes int64
	PeakSites      []PeakSite
}

// PeakSite is the memory one call site's allocations held at a device's
// peak (DeviceSummary.PeakActiveBytes). Bytes are block bytes.
type PeakSite struct {
	// Frame names the site: the innermost user frame of the allocations'
	// stack (zero when they had none).
	Frame callsite.Frame
	Bytes int64
	Count int
}

// maxPeakSites bounds DeviceSummary.PeakSites.
const maxPeakSites = 3

// Site is memory one call site holds at the end, of one kind.
type Site struct {
	Kind   callsite.Kind
	Device int
	Bytes  int64
	Count  int
	// Stack is the call stack with framework frames hidden, innermost
	// first. When every frame is a framework frame the whole stack is
	// kept; it is empty when the allocations had no stack.
	Stack []callsite.Frame
	// Frame is the innermost user frame of Stack (zero when Stack is empty).
	Frame callsite.Frame
	// Sizes are the distinct allocation sizes, largest first (at most 8).
	Sizes []int64
	// Growth is the evidence from the trace; nil without a trace covering
	// these allocations.
	Growth *Growth
	// NotInTrace counts allocations known only from the snapshot's blocks.
	NotInTrace int
	// Stream is the CUDA stream of a pending-free site's segments (-1
	// when unknown or not pending-free).
	Stream int64
	// FreedAt are, for a pending-free site, the innermost user frames of
	// the stacks that freed its blocks, most frequent first (at most 8).
	FreedAt []callsite.Frame
	// Pending is, for a pending-free site whose blocks the trace
	// allocated within its iterations, when they were allocated; nil
	// otherwise.
	Pending *PendingGrowth
	// Repeated is set on a live or retained site that holds at least
	// MinKept allocations of one size, and of that size three quarters of
	// its allocations or more: the pattern a leak leaves, which the trace
	// could not confirm. A step written on one line holds its other
	// buffers (a workspace, optimizer state) at the site beside the kept
	// tensors. RepeatedCount and RepeatedSize are how many of that size,
	// and the size (block bytes).
	Repeated      bool
	RepeatedCount int
	RepeatedSize  int64
	// PID is the process that holds the site's memory, where the input
	// holds several processes' (DeviceSummary.PID); nil otherwise.
	PID *int64
	// PrivatePools are the private pools (segment_pool_id other than
	// (0, 0): a CUDA graph's, or a torch.cuda.MemPool) that hold some of
	// the site's blocks, most bytes first; nil when all are in the
	// default pool.
	PrivatePools []PoolBytes
	// poolBytes are the bytes in each private pool (deviceState.poolOf)
	// until withPools names them.
	poolBytes map[int32]int64
}

// PoolBytes is how many bytes of a site's blocks lie in one private pool.
type PoolBytes struct {
	// ID is the segments' segment_pool_id. PyTorch makes (N, 0) for the
	// pool a CUDA graph's capture makes for itself (CUDAGraph::
	// capture_begin without a pool) and (0, N) for
	// torch.cuda.graph_pool_handle() (a pool graphs share) and for a
	// torch.cuda.MemPool (c10/cuda/CUDACachingAllocator.cpp, MemPool).
	ID    [2]int64
	Bytes int64
}

// withPools names s's private pools from d's segments, merging the
// segments of one pool.
func (s Site) withPools(d *deviceState) Site {
	if len(s.poolBytes) == 0 {
		return s
	}
	by := map[[2]int64]int64{}
	for i, b := range s.poolBytes {
		id := d.privSegs[i-1].pool
		by[id] = satAdd(by[id], b)
	}
	s.PrivatePools = nil
	for id, b := range by {
		s.PrivatePools = append(s.PrivatePools, PoolBytes{ID: id, Bytes: b})
	}
	sort.Slice(s.PrivatePools, func(i, j int) bool {
		p, q := s.PrivatePools[i], s.PrivatePools[j]
		if p.Bytes != q.Bytes {
			return p.Bytes > q.Bytes
		}
		return p.ID[0] < q.ID[0] || (p.ID[0] == q.ID[0] && p.ID[1] < q.ID[1])
	})
	s.poolBytes = nil
	return s
}

// Growth is how a site's kept allocations built up during the trace.
type Growth struct {
	// Timed is true when the trace has timestamps; then FirstUs and
	// LastUs are times (µs since the epoch) and Slope is bytes per second.
	// Without timestamps they are trace positions and Slope is bytes per
	// trace entry.
	Timed           bool
	FirstUs, LastUs int64
	Slope           float64
	// R2 is the coefficient of determination of the least-squares line
	// through cumulative kept bytes against time (1 = perfectly steady).
	R2 float64
	// Kept counts the allocations made during the trace and kept to its
	// end; Allocations counts all allocations the site made in the trace.
	Kept        int
	Allocations int
	// ActiveParts counts the tenths of the span from the site's first
	// kept allocation to the end of the trace that hold a kept allocation.
	ActiveParts int
	// WindowStart and WindowEnd bound the trace (same unit as FirstUs).
	WindowStart, WindowEnd int64

	// Iterations counts the iterations the trace shows (the starts of the
	// step it repeats); 0 when it shows no repeating step. The site's live
	// bytes were measured at Measured+1 iteration starts, every Every-th.
	Iterations, Measured, Every int
	// GrewIn counts the measured iterations in which the site's live
	// bytes rose; FromBytes and ToBytes are its live bytes at the first and
	// last measured start; PerIteration is (ToBytes-FromBytes) per
	// iteration, or, on a growing site (not a floor), the growth from the
	// second measured iteration in which the live bytes rose to the last,
	// per iteration between them (a leak every k-th iteration is not
	// diluted by the iterations before its first rise and after its last,
	// nor raised by what the first rise carried once).
	GrewIn             int
	FromBytes, ToBytes int64
	// EndBytes is the site's live bytes at the end of the trace (or the
	// moment analysed).
	EndBytes     int64
	PerIteration float64
	// Floor is set when the verdict is on the floor of the live bytes (a
	// sawtooth whose minima rise): GrewIn, FromBytes, ToBytes and
	// PerIteration are then about the least the site held from each
	// measured start on.
	Floor bool
	// OnsetStep is set on a growing site whose live bytes stayed flat at
	// FromBytes for at least a quarter of the measured iterations before
	// they began to grow (a bug a later epoch triggers): the iteration
	// (1-based) from whose start the growth is measured. PerIteration and
	// Slope are then the rate since that start, OnsetBytes the bytes held
	// there; the rate over the whole run would understate the leak.
	// SinceOnset counts the measured iterations from then on, GrewSince
	// those in which the live bytes rose.
	OnsetStep, SinceOnset, GrewSince int
	OnsetBytes                       int64
	// PlateauStep is the iteration (1-based) since which the site's live
	// bytes have stayed flat after rising, PlateauClock its start (time or
	// position, as FirstUs); 0 when they never rose or never settled.
	PlateauStep  int
	PlateauClock int64
	// StoppedStep is set on a leak whose live bytes stopped rising before
	// the end: the iteration (1-based) at whose start they were last
	// higher than at the one before, when the StoppedFor measured
	// iterations since, to the last, are more than any run of iterations
	// without a rise between two of its rises (a leak every k-th
	// iteration is not stopped between two of its own) and at least
	// minStopped. StoppedFlat says the bytes stayed the same since (else
	// they fell, within the noise). The plateau rule still calls it a
	// leak: it rose in the second half of the iterations to SecondHalfMax,
	// above FirstHalfMax, the highest of the first half (see judge).
	StoppedStep, StoppedFor     int
	StoppedFlat                 bool
	FirstHalfMax, SecondHalfMax int64
	// FirstStep and LastStep are the iterations (1-based; 0 = before the
	// first) in which the first and last kept allocations were made.
	FirstStep, LastStep int
	// InLastStep counts the kept allocations made in the last iteration
	// the trace shows (Iterations, when more than one), InLastStepBytes
	// their bytes: that iteration had not ended, so they may still be in
	// use (a loop's variables), not kept by a leak.
	InLastStep      int
	InLastStepBytes int64
	// KeptTraceBytes sums the sizes the trace records for the kept
	// allocations, each rounded up as the caching allocator rounds a
	// request (blockSize: at least 512 B): what the curve above counts.
	// The trace gives the requested sizes (PyTorch 2.x), while a site's
	// Bytes are its blocks', which may be bigger (a block not split).
	KeptTraceBytes int64
	// StepGrowth is set on a site of fewer than MinKept blocks whose live
	// bytes rose by replacement (a block freed for a bigger one) while the
	// bytes the rest of the trace allocated per iteration grew by at least
	// as much: StepGrowth is that growth (othersGrowth), in bytes. The
	// step grew (a batch or sequence made longer each step); the site holds
	// its latest input, retained.
	StepGrowth int64
	// BelowMinKept is LeakOptions.MinKept when the site's growth across
	// iterations passed every other test but kept fewer allocations than
	// it and rose in fewer iterations: the reason it is retained, not a
	// leak; 0 otherwise.
	BelowMinKept int
	// Replaced is set on a retained site whose live bytes stopped rising
	// at the start of iteration CapStep (1-based) but which kept
	// allocating and freeing while they stayed there: of its allocations
	// held at the end, Replaced (ReplacedBytes) were made after that
	// start, in ReplacedIn distinct iterations, each in place of memory
	// held since an earlier one (a cache at its capacity evicting its
	// oldest entries; see replacedSince). 0 otherwise.
	CapStep, Replaced, ReplacedIn int
	ReplacedBytes                 int64
	// Loop is the frame that marks the iterations above when they are the
	// passes of a second loop that ran after the device's LoopAfter
	// iterations (a validation loop after the training loop: see
	// findTail); zero when they are the device's own.
	Loop      callsite.Frame
	LoopAfter int
	// Burst is set on a site whose allocations would have marked the
	// device's steps but were made back to back (Burst says what that
	// shows), when no step was found.
	Burst *Burst
	// NoTraceStacks is set, when no iterations were found, on a snapshot
	// whose trace's allocations carry no stack (context="state", or the
	// pre-2.1 _record_memory_history(True, ...) without
	// trace_alloc_record_context): the iterations cannot be found, not
	// "no repeating step" (the run may have had one).
	NoTraceStacks bool
	// Marker names the step spans the tracer recorded that mark the
	// iterations above when no stack does (DeviceSummary.IterationMarker);
	// "" otherwise.
	Marker string
	// Curve is the site's live bytes at each measured iteration start and
	// then at the end of the trace; CurveClock their times (µs since the
	// epoch when Timed, else trace positions). Empty without iterations.
	// Kept only with LeakOptions.Curves, for charts (the daily report);
	// the verdict is on the fields above.
	Curve, CurveClock []int64
}

// PendingGrowth is when a pending-free site's blocks were allocated. Blocks
// still pending from nearly every iteration since an early one have never
// been released: the pending memory grows with the run ("async stream work
// delays release"); blocks only from the last iterations are the ones
// whose streams have not caught up yet: bounded.
type PendingGrowth struct {
	// Iterations counts the trace's iterations; FirstStep and LastStep
	// are the iterations (1-based; 0 = before the first) of the oldest and
	// newest pending block, Steps how many distinct iterations left one.
	Iterations, FirstStep, LastStep, Steps int
	// Segments counts the distinct segments holding the site's pending
	// blocks.
	Segments int
}

// Growing reports whether the pending blocks build up over the run: left
// in at least minBoundaries iterations, in three quarters of those since
// the oldest, which dates from the first half of the run.
func (p *PendingGrowth) Growing() bool {
	if p == nil || p.Iterations < minBoundaries {
		return false
	}
	since := p.Iterations - max(p.FirstStep, 1) + 1
	return p.Steps >= minBoundaries && p.Steps*4 >= since*3 && p.FirstStep*2 <= p.Iterations
}

// OOMEntry is an "oom" trace entry: an allocation the caching allocator
// could not satisfy.
type OOMEntry struct {
	Device     int
	Seq        int64
	TimeUs     int64 // 0 without timestamps
	Requested  int64 // bytes
	DeviceFree int64 // bytes free on the device, as CUDA reported
	Stack      int32 // -1 when none
}

// LeakAnalyzer replays a snapshot's trace, batch by batch, to find the
// allocations live at its end and the call sites that hold them. Feed it
// every record batch of a snapshot (in any order of tables; events in trace
// order per device) with Add, then call Finalize once.
type LeakAnalyzer struct {
	opt        LeakOptions
	rowCodes   []int          // the action code of each row of the batch (addEvents)
	stateCodes []uint8        // the state code of each row of a blocks batch (addBlocks)
	anchorOK   map[int32]int8 // stack id -> anchorClass
	// callOK and callGroups are callPasses's: each stack's callInfo, and
	// the callers' stacks (as frame ids) by group.
	callOK     map[int32]callInfo
	callGroups map[string]int32
	callOuters map[string]int32
	devs       map[int32]*deviceState
	frames     []callsite.Frame
	facts      []uint16 // per frame, its facts once known (frameFacts)
	computes   []int8   // per stack, doesCompute's answer once known: 1 yes, -1 no
	stacks     [][]int32
	unknown    map[string]int64
	timed      bool
	untimed    bool
	// segments is set when the snapshot holds a segment on any device:
	// then the segments are the truth about every device's end, and a
	// device with a trace but no segment holds nothing.
	segments bool
	// steps are the step starts given by SetSteps, by device.
	steps map[int32]*stepMarks
}

// stepMarks are a device's iteration starts recorded by the tracer itself
// (SetSteps): the sequence numbers of the first event of each step, and,
// as the events arrive, the replay log position each starts at.
type stepMarks struct {
	seqs  []int64 // ascending
	next  int     // the first of seqs not yet reached
	pos   []int   // log positions of seqs[:next]
	label string
}

// SetSteps gives device dev's iteration starts as the tracer recorded
// them (a profiler's ProfilerStep#N spans): seqs are the sequence numbers
// (the events table's seq) of the first event of each step, ascending;
// label names them in output ("ProfilerStep#N spans"). Where any step
// starts in the device's trace, the steps are its iterations, not a loop
// found from the allocations' stacks (see findIterations): growth is
// judged across them by the same rules, and fewer than 4 are too few.
// Call before the events are added.
func (a *LeakAnalyzer) SetSteps(dev int32, seqs []int64, label string) {
	if a.steps == nil {
		a.steps = map[int32]*stepMarks{}
	}
	a.steps[dev] = &stepMarks{seqs: slices.Clone(seqs), label: label}
}

type deviceState struct {
	dev     int32
	live    addrTable[liveAlloc]
	pending addrTable[pendingFree]
	// The replay log: every allocation (key index) and every free of an
	// allocation the trace made (^key index), with its time (0 untimed).
	keys  []allocKey
	keyOf keyIndex
	log   replayLog
	// segStreams are the segments' addresses and streams, in the order
	// the snapshot lists them: only pendingSites asks for a stream (that
	// of a block in state active_pending_free), so a map by address is
	// made then, and only when there is such a block. A map filled at
	// every segment cost most of addSegments' time on a snapshot of
	// 57,000 segments, for the few snapshots with a pending block.
	segStreams rowList[segStream]
	// privSegs are the segments of private pools (segment_pool_id not
	// (0, 0)), sorted by address before grouping (groupSites).
	privSegs []privSeg
	// pendingBlocks are the blocks in state active_pending_free.
	pendingBlocks []pendingBlock
	allocs        []int // allocations per key (index in keys) during the trace
	// stackedAllocs counts the trace's allocations that carry a stack:
	// none in a trace recorded with context="state" (stacks only for the
	// blocks live at the snapshot) or context=None (no stack at all).
	stackedAllocs int64
	entries       int64
	snapshots     int64 // "snapshot" entries: where _dump_snapshot was called
	lastSeq       int64
	firstUs       int64
	lastUs        int64
	hasTime       bool
	badTime       int64 // timestamps out of range or going backwards
	prevUs        int64
	unmatched     int64
	reused        int64
	segments      int
	reserved      int64
	sawSegments   bool
	active        rowList[blockInfo]
	ooms          []OOMEntry
	// oomLive holds, for the first maxOOMCaptures OOMs, the allocations
	// live at the OOM and the allocation counts up to it.
	oomLive []oomCapture
	// steps are the iteration starts the tracer recorded (SetSteps); nil
	// when none were given.
	steps *stepMarks
	// calls are callRuns' while findIterations runs; nil otherwise.
	calls []callRun
	// keyCount is passesOf's count of each key (by index in keys), all
	// zero between calls.
	keyCount []int32
	// passBuf is keyPasses' and stackPasses' working memory, kept
	// between their calls as keyCount is.
	passBuf passBuf
	// freedAt holds, by the stack id of a free_requested (or of a free
	// with no free_requested before it), 1 + the log position of the last
	// such free (0: none): where the program was seen freeing outside a
	// module's calls (callRuns).
	freedAt []int32
	// orphans are the frees of addresses the trace never saw allocated
	// (blocks older than the trace), in log order.
	orphans []orphanFree
	// curBytes is the bytes of the trace's allocations so far less what
	// it freed (blocks older than the trace too), in 512-byte blocks;
	// peakBytes is its highest, reached when the log held peakPos entries,
	// at entry peakSeq (time peakUs). The trace starts at 0.
	curBytes, peakBytes int64
	peakPos             int
	peakSeq, peakUs     int64
	// segEntries counts the trace's segment entries; segSincePeak is
	// the bytes they reserved (less those they released) since the
	// peak.
	segEntries   int64
	segSincePeak int64
	// lastOut is callRuns': the last log positions of the trace's entries
	// (allocations, frees with a stack) of the two caller groups (callInfo.group,
	// -1 for a stack under no caller's module call) seen last, latest first.
	lastOut lastGroups
}

// segStream is a segment's address and stream.
type segStream struct {
	addr   uint64
	stream int64
}

// orphanFree is a free of a block older than the trace: the log position
// it came before and the block's bytes.
type orphanFree struct {
	pos   int
	block int64
}

// lastGroups holds the last log positions of two caller groups' entries,
// latest first.
type lastGroups [2]groupPos

// groupPos is a caller group and a log position.
type groupPos struct {
	group int32
	pos   int
}

// oomCapture is the trace's live set at an "oom" entry.
type oomCapture struct {
	logLen int
	seq    int64
	clock  int64 // the OOM's time (µs) or trace position
	live   addrTable[liveAlloc]
	allocs []int // per key, as deviceState.allocs
}

// maxOOMCaptures bounds the live sets kept for OOMs of one device: each is
// a copy of the trace's live allocations.
const maxOOMCaptures = 32

type liveAlloc struct {
	pos    int // position in the replay log
	seq    int64
	timeUs int64
	size   int64
	key    int32
	stack  int32
}

type blockInfo struct {
	addr  uint64
	size  int64
	stack int32
}

// pendingFree is a free_requested entry not yet completed: the stack that
// freed it and the allocation it freed.
type pendingFree struct {
	freeStack int32
	alloc     liveAlloc
	known     bool // alloc is from the trace
}

// pendingBlock is a block in state active_pending_free at the end.
type pendingBlock struct {
	blockInfo
	segment uint64
}

// NewLeakAnalyzer returns an analyzer with options opt.
func NewLeakAnalyzer(opt LeakOptions) *LeakAnalyzer {
	if opt.Filter == nil {
		opt.Filter = callsite.DefaultFrameFilter()
	}
	if opt.MinKept <= 0 {
		opt.MinKept = defaultMinKept
	}
	return &LeakAnalyzer{opt: opt, devs: map[int32]*deviceState{}, unknown: map[string]int64{}, anchorOK: map[int32]int8{},
		callOK: map[int32]callInfo{}, callGroups: map[string]int32{}, callOuters: map[string]int32{}}
}

func (a *LeakAnalyzer) dev(d int32) *deviceState {
	s, ok := a.devs[d]
	if !ok {
		s = &deviceState{dev: d, steps: a.steps[d]}
		a.devs[d] = s
	}
	return s
}

// Add feeds one record batch of table t (a pytorch.Reader's output). It
// returns an error when the batch does not have the table's schema.
func (a *LeakAnalyzer) Add(t pytorch.Table, rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(t.Schema()) {
		return fmt.Errorf("analyze: %s batch has schema %s", t, rec.Schema())
	}
	switch t {
	case pytorch.TableEvents:
		a.addEvents(rec)
	case pytorch.TableSegments:
		a.addSegments(rec)
	case pytorch.TableBlocks:
		a.addBlocks(rec)
	case pytorch.TableFrames:
		a.addFrames(rec)
	case pytorch.TableStacks:
		a.addStacks(rec)
	}
	return nil
}

// PyTorch's time_us counts microseconds since the Unix epoch; a trace
// entry outside 2000-2200, or earlier than the one before it, means the
// clock cannot be trusted.
const (
	minPlausibleUs = 946684800_000000  // 2000-01-01
	maxPlausibleUs = 7258118400_000000 // 2200-01-01
)

// Action codes of the replay.
const (
	actOther = iota
	actAlloc
	actFreeRequested
	actFreeCompleted
	actOOM
	actKnown // an action the replay does not need
)

func actionCode(s string) int {
	switch s {
	case pytorch.ActionAlloc:
		return actAlloc
	case pytorch.ActionFreeRequested:
		return actFreeRequested
	case pytorch.ActionFreeCompleted, "free": // "free": the name in early recordings
		return actFreeCompleted
	case pytorch.ActionOOM:
		return actOOM
	case pytorch.ActionSegmentAlloc, pytorch.ActionSegmentFree, pytorch.ActionSegmentMap,
		pytorch.ActionSegmentUnmap, pytorch.ActionSnapshot:
		return actKnown
	}
	return actOther
}

func stackAt(col *array.Int32, i int) int32 {
	if col.IsNull(i) {
		return -1
	}
	return col.Value(i)
}

func (a *LeakAnalyzer) addEvents(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.EvDevice).(*array.Int32)
	seq := rec.Column(pytorch.EvSeq).(*array.Int64)
	timeUs := rec.Column(pytorch.EvTimeUs).(*array.Int64)
	action := rec.Column(pytorch.EvAction).(*array.Dictionary)
	dict := action.Dictionary().(*array.String)
	codes := make([]int, dict.Len())
	for i := range codes {
		codes[i] = actionCode(dict.Value(i))
	}
	a.rowCodes = parse.DictRowCodes(action, codes, a.rowCodes)
	addr := rec.Column(pytorch.EvAddr).(*array.Uint64)
	size := rec.Column(pytorch.EvSize).(*array.Int64)
	stack := rec.Column(pytorch.EvStackID).(*array.Int32)
	free := rec.Column(pytorch.EvDeviceFree).(*array.Int64)

	var d *deviceState
	for i, n := 0, int(rec.NumRows()); i < n; i++ { // NumRows is an interface call
		if dv := device.Value(i); d == nil || d.dev != dv {
			d = a.dev(dv)
		}
		if sm := d.steps; sm != nil {
			for sm.next < len(sm.seqs) && sm.seqs[sm.next] <= seq.Value(i) {
				sm.pos = append(sm.pos, d.log.n)
				sm.next++
			}
		}
		d.entries++
		d.lastSeq = seq.Value(i)
		var t int64
		if timeUs.IsValid(i) {
			t = timeUs.Value(i)
			if t < minPlausibleUs || t > maxPlausibleUs || (d.hasTime && t < d.prevUs) {
				d.badTime++
			}
			d.prevUs = t
			if !d.hasTime || t < d.firstUs {
				d.firstUs = t
			}
			if !d.hasTime || t > d.lastUs {
				d.lastUs = t
			}
			d.hasTime = true
			a.timed = true
		} else {
			a.untimed = true
		}
		code := a.rowCodes[i]
		switch code {
		case actAlloc:
			st := stackAt(stack, i)
			if st >= 0 {
				d.stackedAllocs++
			}
			k := d.key(allocKey{stack: st, size: size.Value(i)})
			if old, ok := d.live.swap(addr.Value(i), liveAlloc{pos: d.log.n, key: k, seq: seq.Value(i), timeUs: t, size: size.Value(i), stack: st}); ok {
				// The block at this address was freed and the trace lost
				// its free: what it held is no longer live.
				d.reused++
				d.log.add(^old.key, t)
				d.curBytes -= blockSize(old.size)
			}
			d.log.add(k, t)
			d.rise(blockSize(size.Value(i)), seq.Value(i), t)
			if int(k) == len(d.allocs) {
				d.allocs = append(d.allocs, 0)
			}
			d.allocs[k]++
		case actFreeRequested:
			ad := addr.Value(i)
			p := pendingFree{freeStack: stackAt(stack, i)}
			d.freed(p.freeStack)
			p.alloc, p.known = d.end(ad, size.Value(i), t)
			d.pending.put(ad, p)
		case actFreeCompleted:
			ad := addr.Value(i)
			if _, ok := d.pending.take(ad); ok {
				break // its free_requested ended the allocation
			}
			d.freed(stackAt(stack, i))
			d.end(ad, size.Value(i), t)
		case actOOM:
			var df int64
			if free.IsValid(i) {
				df = free.Value(i)
			}
			d.ooms = append(d.ooms, OOMEntry{Device: int(d.dev), Seq: seq.Value(i), TimeUs: t,
				Requested: size.Value(i), DeviceFree: df, Stack: stackAt(stack, i)})
			if len(d.oomLive) < maxOOMCaptures {
				clock := seq.Value(i)
				if timeUs.IsValid(i) {
					clock = t
				}
				d.oomLive = append(d.oomLive, oomCapture{logLen: d.log.n, seq: seq.Value(i), clock: clock, live: d.live.clone(), allocs: slices.Clone(d.allocs)})
			}
		case actOther:
			a.unknown[strings.Clone(dict.Value(action.GetValueIndex(i)))]++ // a map key outlives the batch
		case actKnown:
			switch dict.Value(action.GetValueIndex(i)) {
			case pytorch.ActionSnapshot:
				d.snapshots++
			case pytorch.ActionSegmentAlloc, pytorch.ActionSegmentMap:
				d.segEntries++
				d.segSincePeak = satAdd(d.segSincePeak, size.Value(i))
			case pytorch.ActionSegmentFree, pytorch.ActionSegmentUnmap:
				d.segEntries++
				d.segSincePeak -= size.Value(i)
			}
		}
	}
}

// rise adds an allocation of b block bytes at entry seq (time t) to the
// device's running bytes, and notes a new peak.
func (d *deviceState) rise(b, seq, t int64) {
	d.curBytes += b
	if d.curBytes > d.peakBytes {
		d.peakBytes, d.peakPos, d.peakSeq, d.peakUs = d.curBytes, d.log.n, seq, t
		d.segSincePeak = 0
	}
}

// end ends the allocation at address ad, freed at time t with size
// bytes: the trace's own (returned, ok) or, when the trace never saw it
// allocated, an orphan free. Either leaves the device's running bytes.
func (d *deviceState) end(ad uint64, size, t int64) (liveAlloc, bool) {
	if l, ok := d.live.take(ad); ok {
		d.log.add(^l.key, t)
		d.curBytes -= blockSize(l.size)
		return l, true
	}
	d.unmatched++
	b := blockSize(size)
	d.orphans = append(d.orphans, orphanFree{pos: d.log.n, block: b})
	d.curBytes -= b
	return liveAlloc{}, false
}

// freed notes a free with stack st at the log's current position.
func (d *deviceState) freed(st int32) {
	if st < 0 {
		return // no stack: a free that says nothing of where
	}
	if int(st) >= len(d.freedAt) {
		d.freedAt = append(d.freedAt, make([]int32, int(st)+1-len(d.freedAt))...)
	}
	d.freedAt[st] = int32(d.log.n) + 1
}

// key returns the index of k in the device's key table.
func (d *deviceState) key(k allocKey) int32 { return d.keyOf.index(&d.keys, k) }

// privSeg is a segment of a private pool: its addresses [addr, end).
type privSeg struct {
	addr, end uint64
	pool      [2]int64
}

// poolOf is the private pool holding the block at addr: an index into
// d.privSegs plus 1, 0 for the default pool. Blocks lie inside their
// segment, so the segment is found by address (the blocks' batches may
// come before their segments', so groupSites sorts d.privSegs before
// it asks).
func (d *deviceState) poolOf(addr uint64) int32 {
	if len(d.privSegs) == 0 {
		return 0
	}
	i := sort.Search(len(d.privSegs), func(i int) bool { return d.privSegs[i].addr > addr }) - 1
	if i < 0 || addr >= d.privSegs[i].end {
		return 0
	}
	return int32(i) + 1
}

func (a *LeakAnalyzer) addSegments(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.SegDevice).(*array.Int32)
	total := rec.Column(pytorch.SegTotalSize).(*array.Int64)
	address := rec.Column(pytorch.SegAddress).(*array.Uint64)
	stream := rec.Column(pytorch.SegStream).(*array.Int64)
	pool := rec.Column(pytorch.SegPoolID).(*array.FixedSizeList)
	poolValues := pool.ListValues().(*array.Int64)
	for i := 0; i < int(rec.NumRows()); i++ {
		d := a.dev(device.Value(i))
		d.segStreams.add(segStream{addr: address.Value(i), stream: stream.Value(i)})
		if pool.IsValid(i) {
			off := int(pool.Offset()+i) * 2
			if id := [2]int64{poolValues.Value(off), poolValues.Value(off + 1)}; id != [2]int64{} {
				d.privSegs = append(d.privSegs, privSeg{addr: address.Value(i), end: address.Value(i) + uint64(max(total.Value(i), 0)), pool: id})
			}
		}
		d.sawSegments = true
		a.segments = true
		d.segments++
		d.reserved = satAdd(d.reserved, total.Value(i))
	}
}

func (a *LeakAnalyzer) addBlocks(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.BlkDevice).(*array.Int32)
	addr := rec.Column(pytorch.BlkAddress).(*array.Uint64)
	size := rec.Column(pytorch.BlkSize).(*array.Int64)
	stack := rec.Column(pytorch.BlkStackID).(*array.Int32)
	segment := rec.Column(pytorch.BlkSegmentAddress).(*array.Uint64)
	a.stateCodes = blockStates(rec.Column(pytorch.BlkState).(*array.Dictionary), a.stateCodes)
	var d *deviceState
	for i, st := range a.stateCodes {
		if st != blockAllocated && st != blockPending {
			continue
		}
		if d == nil || d.dev != device.Value(i) {
			d = a.dev(device.Value(i))
		}
		b := blockInfo{addr: addr.Value(i), size: size.Value(i), stack: stackAt(stack, i)}
		if st == blockPending {
			d.pendingBlocks = append(d.pendingBlocks, pendingBlock{b, segment.Value(i)})
			continue
		}
		d.active.add(b)
	}
}

func (a *LeakAnalyzer) addFrames(rec arrow.RecordBatch) {
	id := rec.Column(pytorch.FrID).(*array.Int32)
	file := rec.Column(pytorch.FrFilename).(*array.String)
	line := rec.Column(pytorch.FrLine).(*array.Int64)
	name := rec.Column(pytorch.FrName).(*array.String)
	names := callsite.Interner{} // the names outlive the batch's buffers
	for i := 0; i < int(rec.NumRows()); i++ {
		k := int(id.Value(i))
		for len(a.frames) <= k {
			a.frames = append(a.frames, callsite.Frame{})
		}
		a.frames[k] = callsite.Frame{Filename: names.Get(file.Value(i)), Line: line.Value(i), Name: names.Get(name.Value(i))}
	}
}

func (a *LeakAnalyzer) addStacks(rec arrow.RecordBatch) {
	id := rec.Column(pytorch.StID).(*array.Int32)
	depth := rec.Column(pytorch.StDepth).(*array.Int32)
	frame := rec.Column(pytorch.StFrameID).(*array.Int32)
	for i := 0; i < int(rec.NumRows()); i++ {
		k := int(id.Value(i))
		for len(a.stacks) <= k {
			a.stacks = append(a.stacks, nil)
		}
		dp := int(depth.Value(i))
		for len(a.stacks[k]) <= dp {
			a.stacks[k] = append(a.stacks[k], -1)
		}
		a.stacks[k][dp] = frame.Value(i)
	}
}

// keptAlloc is an allocation live at the end: its position in the trace,
// its clock (a time in µs, or the position when the trace has no
// timestamps) and size; inTrace is false for blocks the trace does not
// cover.
type keptAlloc struct {
	seq   int64
	pos   int // position in the replay log
	clock int64
	// size is the trace's size (the replay's key), block the block's
	// size in the snapshot (the bytes held; the trace may give the
	// requested size).
	size, block int64
	inTrace     bool
	// pool is the private pool of its block (deviceState.poolOf), 0 for
	// the default pool.
	pool int32
}

type siteGroup struct {
	// charged: chargeOrphans has charged its keys.
	charged bool
	stack   []callsite.Frame
	ids     []int32     // stack ids that map to this group
	allocs  []keptAlloc // the allocations the trace covers (inTrace)
	// outside holds the block sizes of the active blocks the trace does
	// not cover: all a keptAlloc of one would say (8 bytes, not 48: on a
	// snapshot of 128,000 blocks and a short trace, 5 MB less).
	outside []int64
	// outsidePool is the private pool of each of outside (poolOf), nil
	// when the device has none.
	outsidePool []int32
	n, nOut     int // len(allocs) and len(outside) to come (groupSites' first pass)
}

// count is the number of the group's allocations.
func (g *siteGroup) count() int { return len(g.allocs) + len(g.outside) }

// each calls fn with each of the group's allocations: the ones the trace
// covers, then the others (as keptAlloc, inTrace false).
func (g *siteGroup) each(fn func(keptAlloc)) {
	for _, k := range g.allocs {
		fn(k)
	}
	for i, z := range g.outside {
		k := keptAlloc{size: z, block: z}
		if g.outsidePool != nil {
			k.pool = g.outsidePool[i]
		}
		fn(k)
	}
}

// Finalize ends the analysis. The analyzer must not be used afterwards.
func (a *LeakAnalyzer) Finalize() *LeakResult {
	res := &LeakResult{}
	devs := make([]int32, 0, len(a.devs))
	for dv, d := range a.devs {
		// _dump_snapshot records a "snapshot" entry on the current device;
		// a device with nothing else used no memory and is not reported.
		if !d.sawSegments && len(d.pendingBlocks) == 0 && d.entries == d.snapshots {
			continue
		}
		devs = append(devs, dv)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	if a.timed && a.untimed {
		res.Warnings = append(res.Warnings, "some trace entries have timestamps and some do not: growth is judged by trace position where they are missing")
	} else if a.untimed {
		res.Warnings = append(res.Warnings, "the trace entries have no timestamps (time_us): growth is judged by trace position, and rates are per trace entry, not per second")
	}
	for _, k := range sortedKeys(a.unknown) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s trace entries with unknown action %q ignored", humanize.Comma(a.unknown[k]), k))
	}
	if len(devs) == 0 {
		res.Warnings = append(res.Warnings, "the snapshot holds no segments and no trace entries: no GPU memory was in use, and none was recorded")
	}
	groupOf := map[int32]string{} // stack id -> group key, cached across devices
	for _, dv := range devs {
		d := a.devs[dv]
		if d.hasTime && (d.badTime > 0 || (d.firstUs == d.lastUs && d.entries > 1)) {
			why := count(d.badTime, "timestamp", "timestamps") + " out of range or going backwards"
			if d.badTime == 0 {
				why = "all timestamps equal"
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("device %d: trace timestamps cannot be trusted (%s): growth is judged by trace position", d.dev, why))
			d.hasTime = false
		}
		res.OOMs = append(res.OOMs, d.ooms...)
		sum := a.summarize(d)
		sites, warns := a.deviceSites(d, groupOf, &sum)
		res.Devices = append(res.Devices, sum)
		res.Sites = append(res.Sites, sites...)
		res.Warnings = append(res.Warnings, warns...)
	}
	rankSites(res.Sites)
	return res
}

// rankSites orders sites: leaks first, then live, then retained; each by
// bytes, largest first.
func rankSites(sites []Site) {
	sort.SliceStable(sites, func(i, j int) bool {
		a, b := sites[i], sites[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Device < b.Device
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (a *LeakAnalyzer) summarize(d *deviceState) DeviceSummary {
	s := DeviceSummary{
		Device: int(d.dev), Segments: d.segments, ReservedBytes: d.reserved,
		ActiveBlocks: d.active.len(), TraceEntries: d.entries,
		HasTime: d.hasTime, TraceStartUs: d.firstUs, TraceEndUs: d.lastUs,
		UnmatchedFrees: d.unmatched, LiveAtTraceEnd: d.live.len(),
	}
	for b := range d.active.all {
		s.ActiveBytes = satAdd(s.ActiveBytes, b.size)
	}
	for _, l := range d.live.all {
		s.LiveBytes = satAdd(s.LiveBytes, l.size)
	}
	if d.peakBytes > d.curBytes {
		// The end is the snapshot's active blocks; with no segment in
		// the snapshot (a trace alone) it is what the trace left live.
		end := s.ActiveBytes
		if !a.segments {
			end = s.LiveBytes
		}
		s.PeakAboveEndBytes = d.peakBytes - d.curBytes
		s.PeakActiveBytes = satAdd(end, s.PeakAboveEndBytes)
		s.PeakSeq, s.PeakUs = d.peakSeq, d.peakUs
		if d.peakPos == 0 {
			s.PeakSeq, s.PeakUs = -1, 0 // the trace only freed
		}
		s.PeakTraceBytes, s.PeakSites = a.peakSites(d)
		if a.segments && d.segEntries > 0 && d.peakPos > 0 {
			s.PeakReservedBytes = max(d.reserved-d.segSincePeak, 0)
		}
	}
	return s
}

// peakSites replays the device's log to its peak (deviceState.peakPos)
// and groups the trace's allocations live there by their innermost user
// frame: what they held in all, and the largest maxPeakSites sites.
func (a *LeakAnalyzer) peakSites(d *deviceState) (int64, []PeakSite) {
	live := make([]int32, len(d.keys))
	for _, ks := range d.log.keyRuns(0, d.peakPos) {
		for _, k := range ks {
			if k >= 0 {
				live[k]++
			} else {
				live[^k]--
			}
		}
	}
	var total int64
	byFrame := map[callsite.Frame]*PeakSite{}
	for k, n := range live {
		if n <= 0 {
			continue
		}
		key := d.keys[k]
		b := int64(n) * blockSize(key.size)
		total = satAdd(total, b)
		var fr callsite.Frame
		if key.stack >= 0 {
			fr = a.siteFrame(a.userStack(key.stack))
		}
		ps := byFrame[fr]
		if ps == nil {
			ps = &PeakSite{Frame: fr}
			byFrame[fr] = ps
		}
		ps.Bytes = satAdd(ps.Bytes, b)
		ps.Count += int(n)
	}
	sites := make([]PeakSite, 0, len(byFrame))
	for _, ps := range byFrame {
		sites = append(sites, *ps)
	}
	sort.Slice(sites, func(i, j int) bool {
		if sites[i].Bytes != sites[j].Bytes {
			return sites[i].Bytes > sites[j].Bytes
		}
		fi, fj := sites[i].Frame, sites[j].Frame
		if fi.Filename != fj.Filename {
			return fi.Filename < fj.Filename
		}
		if fi.Line != fj.Line {
			return fi.Line < fj.Line
		}
		return fi.Name < fj.Name
	})
	return total, sites[:min(len(sites), maxPeakSites)]
}

// frameStack resolves a stack id to frames, innermost first.
func (a *LeakAnalyzer) frameStack(id int32) []callsite.Frame {
	if id < 0 || int(id) >= len(a.stacks) {
		return nil
	}
	ids := a.stacks[id]
	out := make([]callsite.Frame, 0, len(ids))
	for _, f := range ids {
		if f >= 0 && int(f) < len(a.frames) {
			out = append(out, a.frames[f])
		}
	}
	return out
}

// autogradBackward names the allocations of autograd's backward pass when
// no frame of the program's own code is on their stack: the engine's
// threads run them, and their C++ stack starts at the thread's entry.
var autogradBackward = callsite.Frame{Name: "autograd backward"}

// workspace matches the frames that make a library's workspace (cuBLAS,
// cuDNN): a better name than the pass that asked for it.
var workspace = regexp.MustCompile(`(?i)workspace`)

// userStack removes framework frames from stack id's frames. A stack with
// no other frame keeps its informative framework frames
// (callsite.FrameworkSite), so that unrelated framework-only stacks are not
// merged into one site; a stack of autograd's engine is the one site
// "autograd backward". Its frames' tests are read from frameFacts.
func (a *LeakAnalyzer) userStack(id int32) []callsite.Frame {
	if id < 0 || int(id) >= len(a.stacks) {
		return nil
	}
	ids := a.stacks[id]
	var out []callsite.Frame
	for _, f := range ids {
		if f >= 0 && int(f) < len(a.frames) && a.frameFacts(f, factsHidden)&factHidden == 0 {
			out = append(out, a.frames[f])
		}
	}
	if len(out) > 0 {
		return out
	}
	// Every frame is a framework frame: the site is those that are not
	// machinery (all of them when every one is), as FrameworkSite, nor
	// generated code: torch.compile's files are named by a hash that
	// changes on every recompile, so a site named by one would be new to
	// every baseline. A stack of autograd's engine (its C++ frames, or,
	// with Python frames only, an outermost Python frame of autograd's:
	// the engine entered Python to run a compiled graph's backward) is
	// autograd backward.
	var site []callsite.Frame
	autograd := false
	outer := int32(-1) // the outermost Python frame
	for _, f := range ids {
		if f < 0 || int(f) >= len(a.frames) {
			continue
		}
		if a.frameFacts(f, factsMachinery)&(factMachinery|factGenerated) == 0 {
			site = append(site, a.frames[f])
		}
		autograd = autograd || a.frameFacts(f, factsAnchor)&factAutograd != 0
		if callsite.IsPython(a.frames[f]) {
			outer = f
		}
	}
	if outer >= 0 && callsite.IsAutogradPython(a.frames[outer]) {
		autograd = true
	}
	if len(site) == 0 {
		site = a.frameStack(id)
	}
	if autograd && !workspace.MatchString(site[0].Name) {
		return []callsite.Frame{autogradBackward}
	}
	return site
}

// siteKey is the grouping key of a stack whose framework frames are
// already removed: its frames outside installed packages (the program's
// own code) when it has any, else the whole stack. Allocations one line of
// the program makes through different library paths (the layers of a
// transformers model) are one site.
func siteKey(st []callsite.Frame) string {
	var own []callsite.Frame
	for _, f := range st {
		if !callsite.IsLibrary(f) {
			own = append(own, f)
		}
	}
	if len(own) == 0 {
		own = st
	}
	return callsite.StackKey(own)
}

// deviceSites groups one device's live allocations by call site and
// classifies each group.
func (a *LeakAnalyzer) deviceSites(d *deviceState, groupOf map[int32]string, sum *DeviceSummary) ([]Site, []string) {
	var warns []string
	in := siteSet{dev: d.dev, haveBlocks: d.sawSegments || a.segments, blocks: &d.active, live: &d.live, allocs: d.allocs,
		timed: d.hasTime, winStart: 0, winEnd: d.lastSeq, lastSeq: d.lastSeq, d: d}
	if d.hasTime {
		in.winStart, in.winEnd = d.firstUs, d.lastUs
	}
	in.iter = a.findIterations(d, d.log.n, d.hasTime)
	in.byFrame = d.log.n == 0
	sites, st := a.groupSites(in, groupOf)
	sites = append(sites, a.pendingSites(d, groupOf, in.iter)...)
	for _, b := range d.pendingBlocks {
		sum.PendingFreeBytes = satAdd(sum.PendingFreeBytes, b.size)
		sum.PendingFreeBlocks++
	}
	sum.BlocksNotInTrace = st.notInTrace
	if it := in.iter; it != nil {
		sum.Iterations = it.seen
		sum.IterationSite = a.loopFrame(it)
		sum.IterationMarker = it.marker
	}
	nAllocs := 0
	for _, n := range d.allocs {
		nAllocs += n
	}
	// A snapshot's trace whose allocations carry no stack was recorded
	// with context="state" or context=None: iterations cannot be found
	// from it, and whatever stacks there are come from the blocks.
	noTraceStacks := a.segments && nAllocs > 0 && d.stackedAllocs == 0
	switch {
	case d.entries == 0 && d.active.len() > 0:
		sum.Unjudged = "it has no trace (history was not recorded)"
		warns = append(warns, fmt.Sprintf("device %d: no trace entries (history was not recorded with torch.cuda.memory._record_memory_history): growth cannot be judged, live memory is reported by site", d.dev))
	case d.entries > 0 && nAllocs == 0:
		sum.Unjudged = "its trace records no allocations"
		warns = append(warns, fmt.Sprintf("device %d: the trace records no allocations (it holds %s and none is an allocation): growth cannot be judged", d.dev, count(d.entries, "entry", "entries")))
	default:
		if !in.iter.usable() {
			// d.live: the trace's allocations still held at its end.
			held := "memory the trace saw allocated is reported as retained"
			if d.live.len() == 0 {
				held = "and none of the memory the trace saw allocated is held at its end"
			}
			if noTraceStacks {
				sum.Unjudged = "its trace's allocations carry no stacks (recorded with context=\"state\" or None, or PyTorch 2.0's _record_memory_history(True, ...) without trace_alloc_record_context=True), so no iterations can be found"
				warns = append(warns, noTraceStacksWarning(d.dev, held, st))
			} else {
				sum.Unjudged = in.iter.why()
				if strings.HasPrefix(sum.Unjudged, "the trace ") {
					sum.Unjudged = "its trace " + strings.TrimPrefix(sum.Unjudged, "the trace ")
				}
				warns = append(warns, fmt.Sprintf("device %d: %s: growth across iterations cannot be judged, %s", d.dev, in.iter.why(), held))
			}
		}
		if d.unmatched > 0 {
			warns = append(warns, fmt.Sprintf("device %d: %s of addresses never seen allocated: the trace's ring buffer wrapped or recording started late (raise max_entries of torch.cuda.memory._record_memory_history)", d.dev, count(d.unmatched, "free", "frees")))
		}
		if st.notInTrace > 0 {
			warns = append(warns, fmt.Sprintf("device %d: active blocks allocated before the trace began: %s (%s); their sites come from the snapshot's blocks, reported as kind \"live\" unless they join a leak", d.dev, humanize.Comma(int64(st.notInTrace)), humanize.IBytes(uint64(st.notInTraceBytes))))
		}
	}
	if st.notActive > 0 {
		warns = append(warns, fmt.Sprintf("device %d: allocations the trace leaves live that are not active blocks in the snapshot's segments: %d; the segments are taken as the truth", d.dev, st.notActive))
	}
	if d.reused > 0 {
		warns = append(warns, fmt.Sprintf("device %d: %s at addresses already live (frees missing from the trace)", d.dev, count(d.reused, "allocation", "allocations")))
	}
	// Blocks older than the trace have no stack because recording had not
	// started (their own warning says so): asking for stacks="python" does
	// not name them. Among the trace's allocations, no stack beside others
	// that have one means stacks were recorded and these were made on a
	// thread with no Python frame (autograd runs backward on its own
	// threads): only stacks="all" shows their C++ frames.
	noStack, total := st.noStackInTrace, st.totalInTrace
	if d.entries == 0 {
		noStack, total = st.noStack, st.total
	}
	// "1 of 1 live allocations have" read wrong: a count agrees with its
	// noun and verb.
	have := fmt.Sprintf("%d of %d live allocations have", noStack, total)
	if total == 1 {
		have = "the 1 live allocation has"
	}
	switch {
	case total == 0 || noStack*2 <= total:
	case noTraceStacks:
		warns = append(warns, fmt.Sprintf("device %d: %s no stack: neither the trace nor the snapshot's blocks recorded one, as with torch.cuda.memory._record_memory_history(context=None); record with context=\"all\" (the default) or \"alloc\" to name their call sites", d.dev, have))
	case d.entries > 0 && noStack < total:
		warns = append(warns, fmt.Sprintf("device %d: %d of the %d live allocations made during the trace have no stack while the others have one: they were made on a thread with no Python frame (autograd's engine runs backward on its own threads); record with torch.cuda.memory._record_memory_history(stacks=\"all\") to see their C++ frames", d.dev, noStack, total))
	default:
		warns = append(warns, fmt.Sprintf("device %d: %s no stack; record with torch.cuda.memory._record_memory_history(stacks=\"python\") to name their call sites", d.dev, have))
	}
	return sites, warns
}

// noTraceStacksWarning says why the trace of device dev, whose
// allocations carry no stack (deviceState.stackedAllocs 0), shows no
// iterations: they are found from the stacks of the trace's allocations.
// held says what became of the memory the trace saw allocated; st tells
// whether the snapshot's blocks named the live allocations instead.
func noTraceStacksWarning(dev int32, held string, st siteStats) string {
	w := fmt.Sprintf("device %d: the trace's allocations carry no stacks, so its iterations cannot be found: growth across iterations cannot be judged, %s; ", dev, held)
	if st.noStackInTrace < st.totalInTrace {
		w += "torch.cuda.memory._record_memory_history(context=\"state\") records stacks only for the blocks live at the snapshot (they name the sites), context=None none at all"
	} else {
		w += "torch.cuda.memory._record_memory_history(context=None) records no stacks, context=\"state\" only those of the blocks live at the snapshot"
	}
	return w + ": record with context=\"all\" (the default) or \"alloc\" to judge growth (PyTorch 2.0: _record_memory_history(True, trace_alloc_max_entries=N, trace_alloc_record_context=True))"
}

// pendingSites groups the device's blocks in state active_pending_free by
// the call site that allocated them; with the trace's iterations it, each
// site's Pending says in which iterations its blocks were allocated.
func (a *LeakAnalyzer) pendingSites(d *deviceState, groupOf map[int32]string, it *iterations) []Site {
	type pgroup struct {
		site     *Site
		frees    map[string]int
		freeAt   map[string]callsite.Frame
		steps    map[int]bool
		segments map[uint64]bool
	}
	groups := map[string]*pgroup{}
	var keys []string
	var streamOf map[uint64]int64 // the segments' streams, by address: the last listed of an address
	if len(d.pendingBlocks) > 0 {
		streamOf = make(map[uint64]int64, d.segStreams.len())
		for s := range d.segStreams.all {
			streamOf[s.addr] = s.stream
		}
	}
	for _, b := range d.pendingBlocks {
		stack := b.stack
		p, ok := d.pending.get(b.addr)
		if ok && p.known {
			stack = allocStack(p.alloc.stack, b.stack)
		}
		key := a.groupKey(stack, groupOf)
		g := groups[key]
		if g == nil {
			st := a.userStack(stack)
			s := &Site{Kind: callsite.PendingFree, Device: int(d.dev), Stack: st, Stream: -1}
			if i := callsite.InnermostUser(st); i >= 0 {
				s.Frame = st[i]
			}
			if str, ok := streamOf[b.segment]; ok {
				s.Stream = str
			}
			g = &pgroup{site: s, frees: map[string]int{}, freeAt: map[string]callsite.Frame{}, steps: map[int]bool{}, segments: map[uint64]bool{}}
			groups[key] = g
			keys = append(keys, key)
		}
		g.site.add(keptAlloc{size: b.size, block: b.size, inTrace: ok && p.known})
		g.segments[b.segment] = true
		if ok && p.known && it.usable() {
			step := it.stepOf(p.alloc.pos)
			g.steps[step] = true
			pg := g.site.Pending
			if pg == nil {
				pg = &PendingGrowth{Iterations: it.seen, FirstStep: step, LastStep: step}
				g.site.Pending = pg
			}
			pg.FirstStep, pg.LastStep = min(pg.FirstStep, step), max(pg.LastStep, step)
		}
		if ok && p.freeStack >= 0 {
			fs := a.userStack(p.freeStack)
			if i := callsite.InnermostUser(fs); i >= 0 {
				fk := callsite.StackKey(fs[i : i+1])
				g.frees[fk]++
				g.freeAt[fk] = fs[i]
			}
		}
	}
	sort.Strings(keys)
	var out []Site
	for _, k := range keys {
		g := groups[k]
		fks := make([]string, 0, len(g.frees))
		for fk := range g.frees {
			fks = append(fks, fk)
		}
		sort.Slice(fks, func(i, j int) bool {
			if g.frees[fks[i]] != g.frees[fks[j]] {
				return g.frees[fks[i]] > g.frees[fks[j]]
			}
			return fks[i] < fks[j]
		})
		for i, fk := range fks {
			if i == maxSizesPerResult {
				break
			}
			g.site.FreedAt = append(g.site.FreedAt, g.freeAt[fk])
		}
		if pg := g.site.Pending; pg != nil {
			pg.Steps, pg.Segments = len(g.steps), len(g.segments)
		}
		out = append(out, *g.site.done())
	}
	return out
}

// siteSet is what grouping allocations into sites takes: the blocks
// known to be allocated (the truth, when haveBlocks), the trace's live
// allocations (which date them), the allocations per key made in the
// trace, the trace's window (µs when timed, else trace positions) and
// last position, and its iterations.
type siteSet struct {
	dev              int32
	haveBlocks       bool
	blocks           *rowList[blockInfo]
	live             *addrTable[liveAlloc]
	allocs           []int // per key, as deviceState.allocs
	timed            bool
	winStart, winEnd int64
	lastSeq          int64 // the trace position where the set is taken
	d                *deviceState
	iter             *iterations
	byFrame          bool              // group by the frame that names the site alone
	stackKeys        map[int32][]int32 // stack id -> key indices, built on first use
}

// keysOf returns the key indices of the stacks ids.
func (in *siteSet) keysOf(ids []int32) []int32 {
	if in.stackKeys == nil {
		in.stackKeys = map[int32][]int32{}
		for i, k := range in.d.keys {
			in.stackKeys[k.stack] = append(in.stackKeys[k.stack], int32(i))
		}
	}
	var out []int32
	for _, id := range ids {
		out = append(out, in.stackKeys[id]...)
	}
	return out
}

// siteStats counts what grouping found besides the sites.
type siteStats struct {
	notInTrace, notActive int
	notInTraceBytes       int64
	noStack, total        int
	// noStackInTrace and totalInTrace count the same among the
	// allocations the trace made (not the blocks older than it).
	noStackInTrace, totalInTrace int
}

// allocStack is the stack of a block the trace's live allocation covers,
// given the trace entry's stack and the block's: the entry's, or the
// block's where the entry has none. Both are the one stack captured at the
// allocation when both are recorded; a trace recorded with
// context="state" gives its entries none, while the snapshot's blocks keep
// theirs.
func allocStack(entry, block int32) int32 {
	if entry < 0 {
		return block
	}
	return entry
}

// groupKey returns the site key of a stack id, cached in groupOf.
func (a *LeakAnalyzer) groupKey(stack int32, groupOf map[int32]string) string {
	key, ok := groupOf[stack]
	if !ok {
		key = siteKey(a.userStack(stack))
		groupOf[stack] = key
	}
	return key
}

// siteFrame is the frame that names a site of stack st (framework frames
// removed by userStack): its innermost user frame; a stack whose every
// frame the filter hides (userStack kept its informative framework frames)
// is named by its innermost frame.
func (a *LeakAnalyzer) siteFrame(st []callsite.Frame) callsite.Frame {
	allHidden := true
	for _, f := range st {
		if !a.opt.Filter.Hidden(f) {
			allHidden = false
			break
		}
	}
	if i := callsite.InnermostUser(st); i >= 0 && !allHidden {
		return st[i]
	}
	if len(st) > 0 {
		return st[0]
	}
	return callsite.Frame{}
}

// groupSites groups allocations by call site and classifies each group.
func (a *LeakAnalyzer) groupSites(in siteSet, groupOf map[int32]string) ([]Site, siteStats) {
	var st siteStats
	privSegs := in.d.privSegs
	sort.Slice(privSegs, func(i, j int) bool { return privSegs[i].addr < privSegs[j].addr }) // for poolOf
	clockOf := func(l liveAlloc) int64 {
		if in.timed {
			return l.timeUs
		}
		return l.seq
	}
	groups := map[string]*siteGroup{}
	// Without a trace, the key of each stack: worked out once (its
	// frames' classification), not once per block (on a snapshot of
	// 6,644 blocks and no trace that was 60% of the run).
	frameKeyOf := map[int32]string{}
	// The group of each stack seen: the ids of a.stacks in a slice (a
	// map lookup per block was a tenth of the grouping on a snapshot of
	// 128,000 blocks), others (no stack) in a map.
	var byStack []*siteGroup
	byOther := map[int32]*siteGroup{}
	groupOfStack := func(stack int32) *siteGroup {
		if stack >= 0 && int(stack) < len(byStack) && byStack[stack] != nil {
			return byStack[stack]
		} else if g, ok := byOther[stack]; ok {
			return g
		}
		var key string
		if in.byFrame {
			// Without a trace nothing is judged: one finding per site.
			var ok bool
			if key, ok = frameKeyOf[stack]; !ok {
				key = callsite.StackKey([]callsite.Frame{a.siteFrame(a.userStack(stack))})
				frameKeyOf[stack] = key
			}
		} else {
			key = a.groupKey(stack, groupOf)
		}
		g := groups[key]
		if g == nil {
			g = &siteGroup{stack: a.userStack(stack)}
			groups[key] = g
		}
		if !containsID(g.ids, stack) {
			g.ids = append(g.ids, stack)
		}
		if stack >= 0 && int(stack) < len(a.stacks) {
			if int(stack) >= len(byStack) {
				byStack = append(byStack, make([]*siteGroup, int(stack)+1-len(byStack))...)
			}
			byStack[stack] = g
		} else {
			byOther[stack] = g
		}
		return g
	}
	kept := func(l liveAlloc) keptAlloc {
		return keptAlloc{seq: l.seq, pos: l.pos, clock: clockOf(l), size: l.size, block: l.size, inTrace: true}
	}
	// Two passes over every allocation live at the end, in one order:
	// the first finds each one's group and counts them, the second fills
	// every group's rows, made at their exact size (appending grew them
	// by copies, which on a snapshot of many blocks cost more than the
	// grouping). Each group's rows are an allocation of their own: one
	// array of all of them, 48 bytes a block, was new memory,
	// page-faulted in row by row, where smaller ones mostly reuse the
	// heap's freed spans (on 128,000 blocks, about 5 MB less max RSS and
	// a thousand fewer page faults).
	//
	// The snapshot's active blocks are the truth about the end; the trace
	// says when each was allocated (a block the trace's live set holds).
	// Blocks the trace does not cover (inTrace false) were allocated
	// before it began. Without blocks, the trace's live set is the end.
	n := in.live.len()
	if in.haveBlocks {
		n = in.blocks.len()
	}
	order := make([]*siteGroup, 0, n) // the group of each allocation, in each's order
	matched := map[uint64]struct{}{}  // the live allocations that are active blocks
	// inLive marks the blocks the trace's live set holds, so that the
	// second pass looks up only those.
	var inLive []uint64
	if in.haveBlocks {
		inLive = make([]uint64, (n+63)/64)
		maybeLive := in.live.filter()
		i := 0
		for b := range in.blocks.all {
			stack := b.stack
			var l liveAlloc
			ok := maybeLive.mayHold(b.addr)
			if ok {
				l, ok = in.live.get(b.addr)
			}
			if ok {
				stack = allocStack(l.stack, b.stack)
				inLive[i/64] |= 1 << (i % 64)
				matched[b.addr] = struct{}{}
			} else {
				st.notInTrace++
				st.notInTraceBytes = satAdd(st.notInTraceBytes, b.size)
			}
			g := groupOfStack(stack)
			order = append(order, g)
			if inLive[i/64]&(1<<(i%64)) != 0 {
				g.n++
			} else {
				g.nOut++
			}
			i++
		}
	} else {
		for _, l := range in.live.all {
			g := groupOfStack(l.stack)
			order = append(order, g)
			g.n++
		}
	}
	for _, g := range groups {
		g.allocs = make([]keptAlloc, 0, g.n)
		if g.nOut > 0 {
			g.outside = make([]int64, 0, g.nOut)
		}
	}
	if in.haveBlocks {
		i := 0
		for b := range in.blocks.all {
			g := order[i]
			if inLive[i/64]&(1<<(i%64)) != 0 {
				l, _ := in.live.get(b.addr)
				k := kept(l)
				k.block = b.size
				k.pool = in.d.poolOf(b.addr)
				g.allocs = append(g.allocs, k)
			} else {
				g.outside = append(g.outside, b.size)
				if len(in.d.privSegs) > 0 {
					g.outsidePool = append(g.outsidePool, in.d.poolOf(b.addr))
				}
			}
			i++
		}
	} else {
		i := 0
		for _, l := range in.live.all {
			g := order[i]
			g.allocs = append(g.allocs, kept(l))
			i++
		}
	}
	if in.haveBlocks {
		st.notActive = in.live.len() - len(matched)
	}

	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sites []Site
	for _, k := range keys {
		g := groups[k]
		st.total += g.count()
		if len(g.stack) == 0 {
			st.noStack += g.count()
		}
		for _, k := range g.allocs {
			if k.inTrace {
				st.totalInTrace++
				if len(g.stack) == 0 {
					st.noStackInTrace++
				}
			}
		}
		nallocs := 0
		for _, k := range in.keysOf(g.ids) {
			if int(k) < len(in.allocs) { // a key made after the set was taken
				nallocs += in.allocs[k]
			}
		}
		var t *iterations
		if len(g.outside) == 0 {
			t = in.iter.tailOf(g.allocs)
		}
		if t == nil {
			for _, s := range a.classify(&in, g, nallocs) {
				sites = append(sites, s.withPools(in.d))
			}
			continue
		}
		// Made after the last iteration began, in the loop that ran
		// then: judged across that loop's passes.
		tin := in
		tin.iter = t
		loop := a.tailFrame(in.iter)
		for _, s := range a.classify(&tin, g, nallocs) {
			if s.Growth != nil {
				s.Growth.Loop, s.Growth.LoopAfter = loop, in.iter.seen
			}
			sites = append(sites, s.withPools(in.d))
		}
	}
	return sites, st
}

// loopFrame is the frame of the program's own code that marks the
// iterations it (its innermost user frame), zero when none does.
func (a *LeakAnalyzer) loopFrame(it *iterations) callsite.Frame {
	if it == nil || it.anchor < 0 {
		return callsite.Frame{}
	}
	if it.byCall {
		return a.frames[it.caller]
	}
	st := a.userStack(it.anchor)
	if i := callsite.InnermostUser(st); i >= 0 {
		return st[i]
	}
	return callsite.Frame{}
}

// tailFrame names the loop that ran after it's iterations (it.tail): the
// innermost frame of the program's own code on its marker's stack that is
// not on the stack marking it's iterations (both loops may call one helper,
// such as the function that makes a batch: the line that calls it tells
// them apart).
func (a *LeakAnalyzer) tailFrame(it *iterations) callsite.Frame {
	t := it.tail
	if t == nil || t.anchor < 0 {
		return callsite.Frame{}
	}
	main := map[callsite.Frame]bool{}
	if it.anchor >= 0 {
		for _, f := range a.userStack(it.anchor) {
			main[f] = true
		}
	}
	for _, f := range a.userStack(t.anchor) {
		if !main[f] && !callsite.IsLibrary(f) && !a.opt.Filter.Hidden(f) {
			return f
		}
	}
	return a.loopFrame(t)
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// chargeOrphans counts in the live bytes of site g's keys the blocks older
// than the trace that the trace frees, when g holds blocks older than it.
// A trace that lost its start (the ring buffer wrapped, or recording
// began late) frees blocks it never saw allocated, and cannot say whose
// they were; counted by the trace's allocations alone, a site that
// replaces what it made before the trace (a cache at its capacity
// evicting an old entry for each new one) rises at every replacement
// and seems to keep growing. A site that holds blocks of a size older
// than the trace at its end made such blocks before it: each free of an
// older block of that size is charged to it, at one of its keys of that
// size, which holds the block from the trace's start to the free (its
// curve falls there, where it rose at the replacement). When the free was
// another site's, this site's growth is taken for less than it was: a
// leak may be missed, none is made up. Sizes the site did not allocate
// during the trace have no curve to charge.
func (a *LeakAnalyzer) chargeOrphans(in *siteSet, g *siteGroup) {
	d, it := in.d, in.iter
	if len(d.orphans) == 0 || len(g.outside) == 0 || g.charged {
		return
	}
	g.charged = true
	older := map[int64]bool{}
	for _, z := range g.outside {
		older[blockSize(z)] = true
	}
	if len(older) == 0 {
		return
	}
	done := map[int64]bool{}
	for _, k := range in.keysOf(g.ids) {
		z := blockSize(d.keys[k].size)
		if !older[z] || done[z] {
			continue
		}
		done[z] = true
		var at []int
		for _, o := range d.orphans {
			if o.block == z {
				at = append(at, o.pos)
			}
		}
		it.charge(k, at, z)
	}
}

// classify splits a site's live allocations into findings. A site whose
// live bytes grew across the trace's iterations (judge) is a leak; within
// it, allocation sizes made in one burst (a workspace made in the first
// step beside a tensor kept every step) are retained, not leaked.
// Allocations the trace does not cover are live (growth unknown) unless
// they share a size with a leaking part of the site.
func (a *LeakAnalyzer) classify(in *siteSet, g *siteGroup, nallocs int) []Site {
	var inT []keptAlloc
	for _, k := range g.allocs {
		if k.inTrace {
			inT = append(inT, k)
		}
	}
	sort.Slice(inT, func(i, j int) bool { return inT[i].seq < inT[j].seq })
	newSite := func(kind callsite.Kind) *Site {
		return &Site{Kind: kind, Device: int(in.dev), Stack: g.stack, Stream: -1, Frame: a.siteFrame(g.stack)}
	}
	it := in.iter
	var whole []int64
	var tr trend
	var stepGrew int64
	var belowMinKept int
	if it.usable() {
		a.chargeOrphans(in, g)
		keys := in.keysOf(g.ids)
		whole = it.curve(keys)
		tr = verdict(whole)
		// The growth must be what is held at the end. Judged on the whole
		// site, a one-time rise (the cuBLAS workspace the first matmul
		// through the line makes, held to the end) counts as "one rise"
		// of the end's slack (judge), and growth that was freed before the
		// end (a list released when its function returned) passed for
		// held. Without the keys the first iteration settled, the
		// growth must hold by itself.
		if ch := it.changing(keys); tr.grows && len(ch) < len(keys) && !verdict(it.curve(ch)).grows {
			tr.grows = false
		}
		// A site keeps MinKept allocations, or grew in MinKept iterations:
		// a buffer replaced by a bigger one each step (torch.cat onto a
		// history) keeps one block.
		if tr.grows && !(len(inT) >= a.opt.MinKept || tr.rises >= a.opt.MinKept && !tr.floor) {
			tr.grows, belowMinKept = false, a.opt.MinKept
		}
		// Fewer blocks than MinKept grow only by replacement; when the rest
		// of each step grew as much, the step itself grew (a batch or a
		// sequence made longer each step): its input, not a leak.
		if tr.grows && len(inT) < a.opt.MinKept {
			if o := it.othersGrowth(in.d, in.keysOf(g.ids)); o >= tr.to-tr.from {
				tr.grows = false
				stepGrew = o
			}
		}
	}
	// A curve that stopped rising while the site kept replacing the
	// memory it held (a cache at its capacity, evicting an old entry for
	// each new one) is bounded, however late it reached the capacity.
	var repl replacement
	if tr.grows && !tr.floor {
		bySize := map[int64][]int32{}
		for _, k := range in.keysOf(g.ids) {
			z := in.d.keys[k].size
			bySize[z] = append(bySize[z], k)
		}
		curveOf := func(size int64) []int64 { return it.curve(bySize[size]) }
		if repl = it.replacedSince(whole, inT, a.opt.MinKept, curveOf); repl.count > 0 {
			tr.grows = false
		}
	}
	if !tr.grows {
		// Held without growth across iterations. When part of the site's
		// allocations predate the trace, its history is unknown: live.
		kind := callsite.Retained
		if len(inT) < g.count() {
			kind = callsite.Live
		}
		s := newSite(kind)
		s.addGroup(g, a.opt.MinKept)
		if kind == callsite.Retained {
			s.Growth = a.growthOf(in, inT, nallocs, whole, tr)
			s.Growth.StepGrowth = stepGrew
			s.Growth.BelowMinKept = belowMinKept
			if repl.count > 0 {
				s.Growth.CapStep, s.Growth.Replaced, s.Growth.ReplacedIn, s.Growth.ReplacedBytes = repl.since, repl.count, repl.iters, repl.bytes
			}
			if b := in.iter.burstAt(g.ids); b != nil {
				s.Growth.Burst = b
			}
		}
		return []Site{*s.done()}
	}

	// Partition by size.
	bySize := map[int64][]keptAlloc{}
	g.each(func(k keptAlloc) { bySize[k.size] = append(bySize[k.size], k) })
	sizes := sortedSizes(bySize)
	keysBySize := map[int64][]int32{}
	for _, k := range in.keysOf(g.ids) {
		z := in.d.keys[k].size
		keysBySize[z] = append(keysBySize[z], k)
	}
	trends := make(map[int64]trend, len(sizes))
	anyGrows := false
	for _, size := range sizes {
		trends[size] = verdict(it.curve(keysBySize[size]))
		anyGrows = anyGrows || trends[size].grows
	}
	// A size that rose once looks like a burst, but a tensor kept every
	// step whose shape follows the step's batch (padded sequences, a
	// server's batches of varying size, dynamic shapes) has a new size in
	// many iterations, each rising once: such sizes, taken together, grow
	// across iterations, and are the leak's, not bursts. Only those the
	// first iteration made and held unchanged since (a workspace) stay
	// bursts then, unless the site's count of blocks tells them apart:
	// when every later iteration keeps the same number of the site's
	// blocks, those the first made beyond that number are its bursts
	// (madeOnce), and a size made in the first iteration with none of
	// them is the first step's kept tensor. When the count cannot tell
	// (a leak every k-th step), a size of the first iteration joins the
	// leak when unsure is true, else stays a burst.
	recurring := func(cand []int64, unsure bool) map[int64]bool {
		var later, first []int64
		var keys []int32
		for _, size := range cand {
			if len(it.changing(keysBySize[size])) > 0 {
				later = append(later, size)
				keys = append(keys, keysBySize[size]...)
			} else {
				first = append(first, size)
			}
		}
		if len(later) < 2 || !verdict(it.curve(keys)).grows {
			return nil
		}
		out := make(map[int64]bool, len(cand))
		for _, size := range later {
			out[size] = true
		}
		once := it.madeOnce(inT)
		for _, size := range first {
			if once == nil {
				out[size] = unsure
				continue
			}
			n, made := 0, 0
			for _, k := range bySize[size] {
				if k.inTrace {
					n++
					if once[k.seq] {
						made++
					}
				}
			}
			if n > 0 && made == 0 {
				out[size] = true
			}
		}
		return out
	}
	var onceCand []int64
	for _, size := range sizes {
		if anyGrows && !trends[size].grows && trends[size].rises <= 1 {
			onceCand = append(onceCand, size)
		}
	}
	varying := recurring(onceCand, false)
	// When no size grows by itself (the site grows by replacement: a KV
	// cache reallocated bigger each turn), a size made in one burst and
	// held since (a library workspace made by the first call through the
	// same line) is no part of the growth: it is retained when the rest of
	// the site grows without it.
	burst := map[int64]bool{}
	if !anyGrows {
		var cand []int64
		for _, size := range sizes {
			if heldSinceOneRise(it.curve(keysBySize[size])) {
				cand = append(cand, size)
			}
		}
		// Every allocation of its own size, with none of them told
		// apart as a burst by the count: the growth is the site's as a
		// whole, as it was before any size was peeled off.
		varying := recurring(cand, true)
		for _, size := range cand {
			if !varying[size] {
				burst[size] = true
			}
		}
		var rest []int32
		for _, k := range in.keysOf(g.ids) {
			if !burst[in.d.keys[k].size] {
				rest = append(rest, k)
			}
		}
		if len(burst) == 0 || len(burst) == len(sizes) || !verdict(it.curve(rest)).grows {
			burst = nil
		}
	}
	leak, held, live := newSite(callsite.Leak), newSite(callsite.Retained), newSite(callsite.Live)
	var liveBlocks []int64 // the block sizes of live's allocations
	var leakIn, heldIn []keptAlloc
	var leakSizes, heldSizes []int64
	var firstOnce int64 // bytes of the blocks madeOnce peeled off
	for _, size := range sizes {
		var pin []keptAlloc
		for _, k := range bySize[size] {
			if k.inTrace {
				pin = append(pin, k)
			}
		}
		// Sizes made in one burst are peeled off as retained only beside a
		// size that leaks by itself: when every allocation has its own
		// size, the growth is the site's as a whole.
		switch {
		case len(pin) == 0:
			for _, k := range bySize[size] {
				live.add(k)
				liveBlocks = append(liveBlocks, k.block)
			}
		case anyGrows && !trends[size].grows && trends[size].rises <= 1 && !varying[size], burst[size]:
			for _, k := range bySize[size] {
				held.add(k)
			}
			heldIn = append(heldIn, pin...)
			heldSizes = append(heldSizes, size)
		default:
			// Blocks the first iteration made beyond what every later
			// one keeps (a library's 1 MiB buffer made by the first call
			// through the line, beside the tensor kept every step) were
			// made once: retained, as a size made in one burst is.
			once := it.madeOnce(pin)
			for _, k := range bySize[size] {
				if !once[k.seq] {
					leak.add(k)
				}
			}
			for _, k := range pin {
				if once[k.seq] {
					held.add(k)
					heldIn = append(heldIn, k)
					firstOnce = satAdd(firstOnce, blockSize(k.size))
				} else {
					leakIn = append(leakIn, k)
				}
			}
			leakSizes = append(leakSizes, size)
		}
	}
	sort.Slice(leakIn, func(i, j int) bool { return leakIn[i].seq < leakIn[j].seq })
	sort.Slice(heldIn, func(i, j int) bool { return heldIn[i].seq < heldIn[j].seq })
	var out []Site
	if leak.Count > 0 {
		// The leak's curve is the site's but for the sizes peeled off as
		// retained: sizes no longer held at the end (a buffer replaced by
		// a bigger one) are part of its growth.
		held := map[int64]bool{}
		for _, size := range heldSizes {
			held[size] = true
		}
		var keys []int32
		for _, k := range in.keysOf(g.ids) {
			if !held[in.d.keys[k].size] {
				keys = append(keys, k)
			}
		}
		v := it.curve(keys)
		shiftFrom(v, 1, -firstOnce)
		leak.Growth = a.growthOf(in, leakIn, nallocs, v, verdict(v))
		out = append(out, *leak.done())
	}
	if held.Count > 0 {
		var keys []int32
		for _, size := range heldSizes {
			keys = append(keys, keysBySize[size]...)
		}
		v := it.curve(keys)
		shiftFrom(v, 1, firstOnce)
		held.Growth = a.growthOf(in, heldIn, nallocs, v, verdict(v))
		out = append(out, *held.done())
	}
	if live.Count > 0 {
		live.repeated(liveBlocks, a.opt.MinKept)
		out = append(out, *live.done())
	}
	return out
}

// shiftFrom adds d to v[i:] (live bytes: not below 0, and saturating).
func shiftFrom(v []int64, i int, d int64) {
	for j := i; j < len(v) && d != 0; j++ {
		if d < 0 {
			v[j] = max(v[j]+d, 0)
		} else {
			v[j] = satAdd(v[j], d)
		}
	}
}

// madeOnce returns, by seq, those of a leaking size's live blocks pin
// (sorted by seq) that the first iteration, or the stretch before it,
// made beyond what each later one keeps: when every complete iteration
// after the first keeps the same number c (at least 1) of them, over at
// least minBoundaries-1 iterations, and the first (or the stretch before
// it) keeps c+e, its first e. Such blocks were made
// once (a buffer the first call through the line makes beside the tensor
// kept every step: the same stack and size, so no key of their own tells
// them apart); the growth is the c a step. A leak whose count varies
// (every k-th step, gradient accumulation's micro-batches) peels nothing.
// nil when there is none.
func (it *iterations) madeOnce(pin []keptAlloc) map[int64]bool {
	if !it.usable() || len(pin) == 0 {
		return nil
	}
	n := len(it.pos)
	// Blocks per interval: interval i runs from boundary i to boundary
	// i+1; n-1, after the last boundary, has not ended; pre counts those
	// made before the first boundary (the setup, or the first step's
	// part before its marker when the marker is not its first line).
	per := make([]int, n)
	pre := 0
	for _, k := range pin {
		switch i := sort.SearchInts(it.pos, k.pos+1) - 1; {
		case i < 0:
			pre++
		case i < n-1:
			per[i]++
		}
	}
	c := per[1]
	if c == 0 || per[0] <= c && pre <= c || n-2 < minBoundaries-1 {
		return nil
	}
	for _, m := range per[2 : n-1] {
		if m != c {
			return nil
		}
	}
	// The stretch before the first boundary is a step, or part of one: of
	// what it keeps beyond a step's c, its first were made once too (the
	// workspaces the first matmul through the line made, before the
	// step's tensor).
	once := map[int64]bool{}
	e0, ePre := per[0]-c, pre-c
	for _, k := range pin {
		switch i := sort.SearchInts(it.pos, k.pos+1) - 1; {
		case i == 0 && e0 > 0:
			once[k.seq] = true
			e0--
		case i < 0 && ePre > 0:
			once[k.seq] = true
			ePre--
		}
	}
	return once
}

// lateOnset returns the last of the boundaries b (live bytes at iteration
// starts) through which they stayed flat from the start, when that flat
// start spans at least a quarter of the measured intervals; 0 otherwise.
// The first iteration may set the level (a loop variable still held at
// the next start, a buffer made once): the flat run may begin at b[1].
func lateOnset(b []int64) int {
	if len(b) < 3 {
		return 0
	}
	start := 0
	if b[1] != b[0] {
		start = 1
	}
	o := start
	for o+1 < len(b) && b[o+1] == b[start] {
		o++
	}
	if o == start || o == len(b)-1 || o*4 < len(b)-1 {
		return 0
	}
	return o
}

// minStopped is the fewest measured iterations without a rise, at the
// end of a leak's curve, that say its growth stopped (see
// Growth.StoppedStep).
const minStopped = 2

// stoppedRising returns, for live bytes v at the iteration boundaries,
// the last boundary at which they rose and the measured iterations since
// (to the last boundary), when those are at least minStopped and more
// than any run without a rise between two rises; flat says v stayed the
// same since. since is 0 otherwise (still rising, or a leak every k-th
// iteration between two of its rises).
func stoppedRising(v []int64) (last, since int, flat bool) {
	last, gap := -1, 0
	for i := 1; i < len(v); i++ {
		if v[i] > v[i-1] {
			if last >= 0 {
				gap = max(gap, i-last-1)
			}
			last = i
		}
	}
	if last < 0 {
		return 0, 0, false
	}
	since = len(v) - 1 - last
	if since < minStopped || since <= gap {
		return 0, 0, false
	}
	flat = true
	for _, x := range v[last+1:] {
		flat = flat && x == v[last]
	}
	return last, since, flat
}

// replacement is what replacedSince found: the kept allocations (count,
// bytes) made in iters distinct iterations after the iteration since
// (1-based) whose start was the last to see the live bytes rise.
type replacement struct {
	since, count, iters int
	bytes               int64
}

// replacedSince tells a bounded cache that reached its capacity late from
// a leak that stopped. v is a site's live bytes at the iteration
// boundaries (then at the end), kept its allocations made during the
// trace and held at the end, curveOf the live bytes of its allocations of
// one size (as v). When the live bytes stopped rising (stoppedRising) and
// yet the allocations held at the end include, made after the last rise,
// ones from at least minKept distinct iterations (the last, unfinished
// iteration left out: its variables are in use) holding at least a
// quarter of the growth, the site replaced what it held while holding no
// more: each survivor of those iterations took the place of memory that
// had survived earlier ones (an LRU evicting its oldest entry, a window of
// the last N results). Only sizes whose live bytes rose in the second half
// of the iterations count, with their growth: that rise is what the
// plateau rule calls a leak, and a window of another size filled early
// beside it does not make it bounded. A leak that stopped holds what it
// made while rising; a step's variable replaced by its like each step
// survives from one iteration only. Fewer survivors do when the live
// bytes stayed exactly flat (a cache that rarely misses; see below). The
// zero replacement otherwise.
func (it *iterations) replacedSince(v []int64, kept []keptAlloc, minKept int, curveOf func(size int64) []int64) replacement {
	if !it.usable() || len(v) != len(it.pos)+1 {
		return replacement{}
	}
	n := len(it.pos)
	last, since, flat := stoppedRising(v[:n])
	if since == 0 {
		return replacement{}
	}
	mid := (n - 1) / 2 // the first half's last boundary, as judge's
	// By size of the site's kept allocations: its growth when it rose
	// late, else 0.
	grew := map[int64]int64{}
	var growth int64
	for _, k := range kept {
		if _, ok := grew[k.size]; ok {
			continue
		}
		var g int64
		if c := curveOf(k.size); c[last] > c[mid] {
			g = max(c[last]-c[0], 0)
			growth = satAdd(growth, g)
		}
		grew[k.size] = g
	}
	r := replacement{since: it.ord[last] + 1}
	seen := map[int]bool{} // the boundaries that start the survivors' iterations
	for _, k := range kept {
		if k.pos < it.pos[last] || k.pos >= it.pos[n-1] || grew[k.size] == 0 {
			continue
		}
		r.count++
		r.bytes = satAdd(r.bytes, blockSize(k.size))
		seen[sort.SearchInts(it.pos, k.pos+1)-1] = true
	}
	r.iters = len(seen)
	if growth <= 0 || r.iters < 2 {
		return replacement{}
	}
	if r.iters >= minKept && r.bytes >= growth/4 {
		return r
	}
	// A cache that rarely misses once full replaces little of what it
	// holds: an entry now and then, each in place of another. That still
	// tells it from a leak that stopped when the live bytes stayed
	// exactly the same since the last rise (each survivor took the place
	// of memory that had been held), for at least minKept iterations, the
	// survivors come from two iterations or more (a step's variable
	// replaced by its like survives from one), and not all from the
	// iterations just before the last (a window of the last N results
	// kept beside a leak that stopped holds those).
	if !flat || since < minKept {
		return replacement{}
	}
	for b := n - 1 - r.iters; b < n-1; b++ {
		if !seen[b] {
			return r
		}
	}
	return replacement{}
}

// riseSpan returns the second and the last boundary after from at which
// the live bytes v (at the boundaries) are higher than at the one before;
// 0, 0 when there are fewer than two.
func riseSpan(v []int64, from int) (second, last int) {
	rises := 0
	for i := from + 1; i < len(v); i++ {
		if v[i] > v[i-1] {
			rises++
			if rises == 2 {
				second = i
			}
			last = i
		}
	}
	if rises < 2 {
		return 0, 0
	}
	return second, last
}

// heldSinceOneRise reports whether v, live bytes at iteration boundaries
// followed by those at the end, rose between exactly two boundaries and
// never fell, or held the same bytes from the first boundary on: memory
// made once, in one iteration or before the first, and held to the end.
func heldSinceOneRise(v []int64) bool {
	rises := 0
	for i := 1; i < len(v); i++ {
		switch {
		case v[i] < v[i-1]:
			return false
		case v[i] > v[i-1]:
			if i == len(v)-1 {
				return false // made after the last boundary: the unfinished iteration's
			}
			rises++
		}
	}
	return rises == 1 || rises == 0 && len(v) > 0 && v[0] > 0
}

// satAdd adds sizes, saturating instead of wrapping: a hostile file may
// hold more allocations of large sizes than int64 can sum.
func satAdd(a, b int64) int64 {
	if c := a + b; c >= a {
		return c
	}
	return math.MaxInt64
}

// repeated sets s.Repeated, RepeatedCount and RepeatedSize from the block
// sizes of s's allocations: the commonest size (the larger of two as
// common) when it has at least minKept of them and three quarters of all.
func (s *Site) repeated(blocks []int64, minKept int) {
	n := map[int64]int{}
	for _, b := range blocks {
		n[b]++
	}
	s.repeatedOf(n, len(blocks), minKept)
}

// repeatedOf is repeated on the block sizes' counts n of all blocks:
// the commonest size, the larger of two as common, which depends only
// on the counts at the end.
func (s *Site) repeatedOf(n map[int64]int, all, minKept int) {
	var size int64
	best := 0
	for z, c := range n {
		if c > best || c == best && z > size {
			size, best = z, c
		}
	}
	if best >= minKept && best*4 >= all*3 {
		s.Repeated, s.RepeatedCount, s.RepeatedSize = true, best, size
	}
}

// addGroup adds every allocation of g to s, an empty site, as add does
// for each, and sets s.Repeated as repeated does on their block sizes: in
// one pass that counts the blocks by size, whose sizes are then s.Sizes
// (done sorts them, so their order here does not matter). add's scan of
// s.Sizes for each allocation, and a second pass for repeated, were most
// of the grouping of a snapshot's 120,000 blocks into a few sites.
func (s *Site) addGroup(g *siteGroup, minKept int) {
	n := make(map[int64]int, 8)
	for _, k := range g.allocs {
		s.Bytes = satAdd(s.Bytes, k.block)
		if !k.inTrace {
			s.NotInTrace++
		}
		n[k.block]++
		s.addPool(k.pool, k.block)
	}
	for i, z := range g.outside {
		s.Bytes = satAdd(s.Bytes, z)
		n[z]++
		if g.outsidePool != nil {
			s.addPool(g.outsidePool[i], z)
		}
	}
	s.Count += g.count()
	s.NotInTrace += len(g.outside)
	for z := range n {
		s.Sizes = append(s.Sizes, z)
	}
	s.repeatedOf(n, g.count(), minKept)
}

// addPool counts bytes of a block in private pool pool (poolOf: 0 for
// the default pool, which is not counted).
func (s *Site) addPool(pool int32, bytes int64) {
	if pool <= 0 {
		return
	}
	if s.poolBytes == nil {
		s.poolBytes = map[int32]int64{}
	}
	s.poolBytes[pool] = satAdd(s.poolBytes[pool], bytes)
}

func (s *Site) add(k keptAlloc) {
	s.Bytes = satAdd(s.Bytes, k.block)
	s.Count++
	s.addPool(k.pool, k.block)
	if !k.inTrace {
		s.NotInTrace++
	}
	for _, z := range s.Sizes {
		if z == k.block {
			return
		}
	}
	s.Sizes = append(s.Sizes, k.block)
}

func (s *Site) done() *Site {
	sort.Slice(s.Sizes, func(i, j int) bool { return s.Sizes[i] > s.Sizes[j] })
	if len(s.Sizes) > maxSizesPerResult {
		s.Sizes = s.Sizes[:maxSizesPerResult]
	}
	return s
}

func sortedSizes(m map[int64][]keptAlloc) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

func seqs(ks []keptAlloc) []int64 {
	out := make([]int64, len(ks))
	for i, k := range ks {
		out[i] = k.seq
	}
	return out
}

// activeParts counts the growthParts equal parts of the span from the
// first of the sorted positions ts to end that hold one of them: how a
// site's kept allocations spread over the trace (Growth.ActiveParts). The
// verdict is judge's, on iterations.
func activeParts(ts []int64, end int64) int {
	if len(ts) == 0 {
		return 0
	}
	first := ts[0]
	span := end - first
	if span <= 0 {
		return 1
	}
	var seen [growthParts]bool
	parts := 0
	for _, t := range ts {
		p := int((t - first) * growthParts / (span + 1))
		if p >= growthParts {
			p = growthParts - 1
		}
		if !seen[p] {
			seen[p] = true
			parts++
		}
	}
	return parts
}

// growthOf is the evidence about a site: when its kept allocations (sorted
// by trace position) were made, and, when the trace has iterations, its
// live bytes v at their boundaries and the verdict tr on them. The slope
// is that of v against time (bytes per second when timed, else per trace
// position) when there are iterations, else of the cumulative kept bytes.
func (a *LeakAnalyzer) growthOf(in *siteSet, kept []keptAlloc, nallocs int, v []int64, tr trend) *Growth {
	g := &Growth{Timed: in.timed, Kept: len(kept), Allocations: nallocs, WindowStart: in.winStart, WindowEnd: in.winEnd}
	it := in.iter
	g.NoTraceStacks = a.segments && in.d.stackedAllocs == 0 && !it.usable()
	if it != nil {
		g.Iterations = it.seen
		g.Every = it.every
		g.Marker = it.marker
	}
	for _, k := range kept {
		g.KeptTraceBytes = satAdd(g.KeptTraceBytes, blockSize(k.size))
	}
	if len(kept) > 0 {
		g.FirstUs, g.LastUs = kept[0].clock, kept[len(kept)-1].clock
		g.ActiveParts = activeParts(seqs(kept), in.lastSeq)
		g.FirstStep, g.LastStep = it.stepOf(kept[0].pos), it.stepOf(kept[len(kept)-1].pos)
		if g.Iterations > 1 && g.LastStep == g.Iterations {
			for _, k := range kept {
				if it.stepOf(k.pos) == g.Iterations {
					g.InLastStep++
					g.InLastStepBytes = satAdd(g.InLastStepBytes, k.block)
				}
			}
		}
	}
	if it.usable() && len(v) == len(it.pos)+1 {
		n := len(it.pos)
		g.Measured = n - 1
		g.GrewIn = tr.rises
		g.FromBytes, g.ToBytes, g.EndBytes = tr.from, tr.to, tr.end
		g.Floor = tr.floor
		from := 0
		if tr.grows && !tr.floor {
			from = lateOnset(v[:n])
		}
		if iters := it.ord[n-1] - it.ord[from]; iters > 0 {
			g.PerIteration = float64(tr.to-v[from]) / float64(iters)
		}
		if i, j := riseSpan(v[:n], from); tr.grows && !tr.floor && j > i && v[j] > v[i] {
			// From the second rise to the last: a leak that happens every
			// k-th iteration (gradient accumulation's micro-batches, an
			// evaluation every few steps) adds nothing in the iterations
			// before its first rise and after its last, which would lower
			// its rate; and the first rise may carry what the site made
			// once (the first iteration's temporaries, a workspace), which
			// would raise it. Between two of its own rises, a leak of B
			// bytes every k iterations measures B/k. (Noise that left no
			// more at the last rise than at the second keeps the net rate.)
			g.PerIteration = float64(v[j]-v[i]) / float64(it.ord[j]-it.ord[i])
		}
		if tr.rises > 0 && tr.plateau > 0 && tr.plateau < n-1 && !tr.floor {
			g.PlateauStep = it.ord[tr.plateau] + 1
			g.PlateauClock = it.clock[tr.plateau]
		}
		if tr.grows && !tr.floor {
			if last, since, flat := stoppedRising(v[:n]); since > 0 {
				g.StoppedStep, g.StoppedFor, g.StoppedFlat = it.ord[last]+1, since, flat
				g.FirstHalfMax, g.SecondHalfMax = tr.firstMax, tr.lastMax
			}
		}
		g.Slope, g.R2 = it.fitCurve(v, in.timed)
		if from > 0 {
			g.OnsetStep, g.SinceOnset, g.OnsetBytes = it.ord[from]+1, n-1-from, v[from]
			for i := from + 1; i < n; i++ {
				if v[i] > v[i-1] {
					g.GrewSince++
				}
			}
			g.Slope, g.R2 = fitClocks(it.clock[from:], v[from:], in.timed)
		}
		if a.opt.Curves {
			g.Curve = v
			g.CurveClock = append(append(make([]int64, 0, n+1), it.clock...), in.winEnd)
		}
		return g
	}
	if len(kept) < 2 || g.LastUs == g.FirstUs {
		return g
	}
	x := make([]float64, len(kept))
	y := make([]float64, len(kept))
	var cum float64
	scale := 1.0
	if in.timed {
		scale = 1e6
	}
	for i, k := range kept {
		cum += float64(k.size)
		x[i] = float64(k.clock-kept[0].clock) / scale
		y[i] = cum
	}
	alpha, beta := stat.LinearRegression(x, y, nil, false)
	g.Slope = beta
	g.R2 = stat.RSquared(x, y, nil, alpha, beta)
	return g
}

// count renders "1 free" or "1,234 frees".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return humanize.Comma(n) + " " + many
}
