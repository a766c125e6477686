package analyze

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dustin/go-humanize"
	"gonum.org/v1/gonum/stat"

	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// SiteKind classifies the memory a call site holds at the end of a run.
type SiteKind int

// Site kinds.
const (
	// Leak: the site's live memory grew through the run: allocations were
	// kept at several moments, continuing well past the site's first.
	Leak SiteKind = iota
	// Live: held at the end, but the trace does not cover when it was
	// allocated (no trace, or allocated before the trace began).
	Live
	// Retained: allocated once (or in one burst) and held to the end
	// without growing: weights, optimizer state, workspaces.
	Retained
)

func (k SiteKind) String() string {
	switch k {
	case Leak:
		return "leak"
	case Live:
		return "live"
	case Retained:
		return "retained"
	}
	return "unknown"
}

// LeakOptions tune the leak analysis. The zero value is usable.
type LeakOptions struct {
	// Filter hides framework frames; nil means DefaultFrameFilter().
	Filter *FrameFilter
	// MinKept is the fewest kept allocations a leak may have (default 4).
	MinKept int
}

// Tests of steady growth (see steadyGrowth).
const (
	growthParts       = 10  // the span from a site's first kept allocation to the end, in parts
	growthMinParts    = 3   // parts that must hold a kept allocation
	growthMinExtent   = 0.7 // the kept allocations must reach this far into the span
	growthMinWindow   = 0.1 // and cover this much of the whole trace
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
	ReservedBytes int64 // sum of segments' total_size
	ActiveBytes   int64 // sum of active_allocated blocks' size
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
	// BlocksNotInTrace counts active blocks the trace does not cover,
	// taken from the snapshot's segments instead.
	BlocksNotInTrace int
}

// Site is memory one call site holds at the end, of one kind.
type Site struct {
	Kind   SiteKind
	Device int
	Bytes  int64
	Count  int
	// Stack is the call stack with framework frames hidden, innermost
	// first. When every frame is a framework frame the whole stack is
	// kept; it is empty when the allocations had no stack.
	Stack []Frame
	// Frame is the innermost user frame of Stack (zero when Stack is empty).
	Frame Frame
	// Sizes are the distinct allocation sizes, largest first (at most 8).
	Sizes []int64
	// Growth is the evidence from the trace; nil without a trace covering
	// these allocations.
	Growth *Growth
	// NotInTrace counts allocations known only from the snapshot's blocks.
	NotInTrace int
	// Repeated is set on a live or retained site that holds at least
	// MinKept allocations of one size: the pattern a leak leaves, which the
	// trace could not confirm.
	Repeated bool
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
	opt     LeakOptions
	devs    map[int32]*deviceState
	frames  []Frame
	stacks  [][]int32
	unknown map[string]int64
	timed   bool
	untimed bool
}

type deviceState struct {
	dev         int32
	live        map[uint64]liveAlloc
	pending     map[uint64]struct{}
	allocs      map[int32]int // allocations per stack id during the trace
	entries     int64
	lastSeq     int64
	firstUs     int64
	lastUs      int64
	hasTime     bool
	badTime     int64 // timestamps out of range or going backwards
	prevUs      int64
	unmatched   int64
	reused      int64
	segments    int
	reserved    int64
	sawSegments bool
	active      []blockInfo
	ooms        []OOMEntry
	// oomLive holds, for the first maxOOMCaptures OOMs, the allocations
	// live at the OOM and the allocation counts up to it.
	oomLive []oomCapture
}

// oomCapture is the trace's live set at an "oom" entry.
type oomCapture struct {
	seq    int64
	clock  int64 // the OOM's time (µs) or trace position
	live   map[uint64]liveAlloc
	allocs map[int32]int
}

// maxOOMCaptures bounds the live sets kept for OOMs of one device: each is
// a copy of the trace's live allocations.
const maxOOMCaptures = 32

type liveAlloc struct {
	seq    int64
	timeUs int64
	size   int64
	stack  int32
}

type blockInfo struct {
	addr  uint64
	size  int64
	stack int32
}

// NewLeakAnalyzer returns an analyzer with options opt.
func NewLeakAnalyzer(opt LeakOptions) *LeakAnalyzer {
	if opt.Filter == nil {
		opt.Filter = DefaultFrameFilter()
	}
	if opt.MinKept <= 0 {
		opt.MinKept = defaultMinKept
	}
	return &LeakAnalyzer{opt: opt, devs: map[int32]*deviceState{}, unknown: map[string]int64{}}
}

func (a *LeakAnalyzer) dev(d int32) *deviceState {
	s, ok := a.devs[d]
	if !ok {
		s = &deviceState{dev: d, live: map[uint64]liveAlloc{}, pending: map[uint64]struct{}{}, allocs: map[int32]int{}}
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
	addr := rec.Column(pytorch.EvAddr).(*array.Uint64)
	size := rec.Column(pytorch.EvSize).(*array.Int64)
	stack := rec.Column(pytorch.EvStackID).(*array.Int32)
	free := rec.Column(pytorch.EvDeviceFree).(*array.Int64)

	var d *deviceState
	for i := 0; i < int(rec.NumRows()); i++ {
		if dv := device.Value(i); d == nil || d.dev != dv {
			d = a.dev(dv)
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
		code := codes[action.GetValueIndex(i)]
		switch code {
		case actAlloc:
			ad := addr.Value(i)
			if _, ok := d.live[ad]; ok {
				d.reused++
			}
			st := stackAt(stack, i)
			d.live[ad] = liveAlloc{seq: seq.Value(i), timeUs: t, size: size.Value(i), stack: st}
			d.allocs[st]++
		case actFreeRequested:
			ad := addr.Value(i)
			if _, ok := d.live[ad]; ok {
				delete(d.live, ad)
			} else {
				d.unmatched++
			}
			d.pending[ad] = struct{}{}
		case actFreeCompleted:
			ad := addr.Value(i)
			if _, ok := d.pending[ad]; ok {
				delete(d.pending, ad)
			} else if _, ok := d.live[ad]; ok {
				delete(d.live, ad)
			} else {
				d.unmatched++
			}
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
				d.oomLive = append(d.oomLive, oomCapture{seq: seq.Value(i), clock: clock, live: maps.Clone(d.live), allocs: maps.Clone(d.allocs)})
			}
		case actOther:
			a.unknown[strings.Clone(dict.Value(action.GetValueIndex(i)))]++ // a map key outlives the batch
		}
	}
}

func (a *LeakAnalyzer) addSegments(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.SegDevice).(*array.Int32)
	total := rec.Column(pytorch.SegTotalSize).(*array.Int64)
	for i := 0; i < int(rec.NumRows()); i++ {
		d := a.dev(device.Value(i))
		d.sawSegments = true
		d.segments++
		d.reserved = satAdd(d.reserved, total.Value(i))
	}
}

func (a *LeakAnalyzer) addBlocks(rec arrow.RecordBatch) {
	device := rec.Column(pytorch.BlkDevice).(*array.Int32)
	addr := rec.Column(pytorch.BlkAddress).(*array.Uint64)
	size := rec.Column(pytorch.BlkSize).(*array.Int64)
	state := rec.Column(pytorch.BlkState).(*array.Dictionary)
	dict := state.Dictionary().(*array.String)
	stack := rec.Column(pytorch.BlkStackID).(*array.Int32)
	for i := 0; i < int(rec.NumRows()); i++ {
		if dict.Value(state.GetValueIndex(i)) != pytorch.StateActiveAllocated {
			continue
		}
		d := a.dev(device.Value(i))
		d.active = append(d.active, blockInfo{addr: addr.Value(i), size: size.Value(i), stack: stackAt(stack, i)})
	}
}

func (a *LeakAnalyzer) addFrames(rec arrow.RecordBatch) {
	id := rec.Column(pytorch.FrID).(*array.Int32)
	file := rec.Column(pytorch.FrFilename).(*array.String)
	line := rec.Column(pytorch.FrLine).(*array.Int64)
	name := rec.Column(pytorch.FrName).(*array.String)
	names := interner{} // the names outlive the batch's buffers
	for i := 0; i < int(rec.NumRows()); i++ {
		k := int(id.Value(i))
		for len(a.frames) <= k {
			a.frames = append(a.frames, Frame{})
		}
		a.frames[k] = Frame{Filename: names.get(file.Value(i)), Line: line.Value(i), Name: names.get(name.Value(i))}
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
	seq     int64
	clock   int64
	size    int64
	inTrace bool
}

type siteGroup struct {
	stack  []Frame
	ids    []int32 // stack ids that map to this group
	allocs []keptAlloc
}

// Finalize ends the analysis. The analyzer must not be used afterwards.
func (a *LeakAnalyzer) Finalize() *LeakResult {
	res := &LeakResult{}
	devs := make([]int32, 0, len(a.devs))
	for d := range a.devs {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	if a.timed && a.untimed {
		res.Warnings = append(res.Warnings, "some trace entries have timestamps and some do not: growth is judged by trace position where they are missing")
	} else if a.untimed {
		res.Warnings = append(res.Warnings, "the trace has no timestamps (PyTorch before 2.1): growth is judged by trace position, and rates are per trace entry, not per second")
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
		ActiveBlocks: len(d.active), TraceEntries: d.entries,
		HasTime: d.hasTime, TraceStartUs: d.firstUs, TraceEndUs: d.lastUs,
		UnmatchedFrees: d.unmatched, LiveAtTraceEnd: len(d.live),
	}
	for _, b := range d.active {
		s.ActiveBytes = satAdd(s.ActiveBytes, b.size)
	}
	return s
}

// frameStack resolves a stack id to frames, innermost first.
func (a *LeakAnalyzer) frameStack(id int32) []Frame {
	if id < 0 || int(id) >= len(a.stacks) {
		return nil
	}
	ids := a.stacks[id]
	out := make([]Frame, 0, len(ids))
	for _, f := range ids {
		if f >= 0 && int(f) < len(a.frames) {
			out = append(out, a.frames[f])
		}
	}
	return out
}

// userStack removes framework frames. A stack with no other frame keeps
// its informative framework frames (frameworkSite), so that unrelated
// framework-only stacks are not merged into one site.
func (a *LeakAnalyzer) userStack(full []Frame) []Frame {
	var out []Frame
	for _, f := range full {
		if !a.opt.Filter.Hidden(f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return frameworkSite(full)
	}
	return out
}

func stackKey(st []Frame) string {
	var b []byte
	for _, f := range st {
		b = append(b, f.Filename...)
		b = append(b, 0)
		b = binary.AppendVarint(b, f.Line)
		b = append(b, f.Name...)
		b = append(b, 0)
	}
	return string(b)
}

// deviceSites groups one device's live allocations by call site and
// classifies each group.
func (a *LeakAnalyzer) deviceSites(d *deviceState, groupOf map[int32]string, sum *DeviceSummary) ([]Site, []string) {
	var warns []string
	in := siteSet{dev: d.dev, haveBlocks: d.sawSegments, blocks: d.active, live: d.live, allocs: d.allocs,
		timed: d.hasTime, winStart: 0, winEnd: d.lastSeq, lastSeq: d.lastSeq}
	if d.hasTime {
		in.winStart, in.winEnd = d.firstUs, d.lastUs
	}
	sites, st := a.groupSites(in, groupOf)
	sum.BlocksNotInTrace = st.notInTrace
	nAllocs := 0
	for _, n := range d.allocs {
		nAllocs += n
	}
	switch {
	case d.entries == 0 && len(d.active) > 0:
		warns = append(warns, fmt.Sprintf("device %d: no trace entries (history was not recorded with torch.cuda.memory._record_memory_history): growth cannot be judged, live memory is reported by site", d.dev))
	case d.entries > 0 && nAllocs == 0:
		warns = append(warns, fmt.Sprintf("device %d: the trace records no allocations (recorded with enabled=\"state\", or it ended before any): growth cannot be judged", d.dev))
	default:
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
	if st.total > 0 && st.noStack*2 > st.total {
		warns = append(warns, fmt.Sprintf("device %d: %d of %d live allocations have no stack; record with torch.cuda.memory._record_memory_history(stacks=\"python\") to name their call sites", d.dev, st.noStack, st.total))
	}
	return sites, warns
}

// siteSet is what grouping allocations into sites takes: the blocks
// known to be allocated (the truth, when haveBlocks), the trace's live
// allocations (which date them), the allocations per stack id made in the
// trace, and the trace's window (µs when timed, else trace positions) and
// last position (growth is judged by position).
type siteSet struct {
	dev              int32
	haveBlocks       bool
	blocks           []blockInfo
	live             map[uint64]liveAlloc
	allocs           map[int32]int
	timed            bool
	winStart, winEnd int64
	lastSeq          int64 // the trace position where the set is taken
}

// siteStats counts what grouping found besides the sites.
type siteStats struct {
	notInTrace, notActive int
	notInTraceBytes       int64
	noStack, total        int
}

// groupSites groups allocations by call site and classifies each group.
func (a *LeakAnalyzer) groupSites(in siteSet, groupOf map[int32]string) ([]Site, siteStats) {
	var st siteStats
	clockOf := func(l liveAlloc) int64 {
		if in.timed {
			return l.timeUs
		}
		return l.seq
	}
	groups := map[string]*siteGroup{}
	add := func(stack int32, k keptAlloc) {
		key, ok := groupOf[stack]
		var sk []Frame
		if !ok {
			sk = a.userStack(a.frameStack(stack))
			key = stackKey(sk)
			groupOf[stack] = key
		}
		g := groups[key]
		if g == nil {
			if sk == nil {
				sk = a.userStack(a.frameStack(stack))
			}
			g = &siteGroup{stack: sk}
			groups[key] = g
		}
		if !containsID(g.ids, stack) {
			g.ids = append(g.ids, stack)
		}
		g.allocs = append(g.allocs, k)
	}

	// The snapshot's active blocks are the truth about the end; the trace
	// says when each was allocated. Blocks the trace does not cover were
	// allocated before it began.
	if in.haveBlocks {
		activeAt := make(map[uint64]struct{}, len(in.blocks))
		for _, b := range in.blocks {
			activeAt[b.addr] = struct{}{}
			if l, ok := in.live[b.addr]; ok {
				add(l.stack, keptAlloc{seq: l.seq, clock: clockOf(l), size: l.size, inTrace: true})
				continue
			}
			add(b.stack, keptAlloc{size: b.size})
			st.notInTrace++
			st.notInTraceBytes = satAdd(st.notInTraceBytes, b.size)
		}
		for addr := range in.live {
			if _, ok := activeAt[addr]; !ok {
				st.notActive++
			}
		}
	} else {
		for _, l := range in.live {
			add(l.stack, keptAlloc{seq: l.seq, clock: clockOf(l), size: l.size, inTrace: true})
		}
	}

	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sites []Site
	for _, k := range keys {
		g := groups[k]
		st.total += len(g.allocs)
		if len(g.stack) == 0 {
			st.noStack += len(g.allocs)
		}
		nallocs := 0
		for _, id := range g.ids {
			nallocs += in.allocs[id]
		}
		sites = append(sites, a.classify(int(in.dev), g, nallocs, in.timed, in.winStart, in.winEnd, in.lastSeq)...)
	}
	return sites, st
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// classify splits a site's live allocations into findings. A site whose
// kept allocations show steady growth is a leak; within it, allocation
// sizes kept only at the site's very start (a workspace made in the first
// step beside a tensor kept every step) are retained, not leaked.
// Allocations the trace does not cover are live (growth unknown) unless
// they share a size with a leaking part of the site.
func (a *LeakAnalyzer) classify(dev int, g *siteGroup, nallocs int, timed bool, winStart, winEnd, lastSeq int64) []Site {
	var in []keptAlloc
	for _, k := range g.allocs {
		if k.inTrace {
			in = append(in, k)
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].seq < in[j].seq })
	// A stack whose every frame the filter hides (userStack kept its
	// informative framework frames) is named by its innermost frame.
	allHidden := true
	for _, f := range g.stack {
		if !a.opt.Filter.Hidden(f) {
			allHidden = false
			break
		}
	}
	newSite := func(kind SiteKind) *Site {
		s := &Site{Kind: kind, Device: dev, Stack: g.stack}
		if i := innermostUser(g.stack); i >= 0 && !allHidden {
			s.Frame = g.stack[i]
		} else if len(g.stack) > 0 {
			s.Frame = g.stack[0]
		}
		return s
	}
	// Growth is judged by trace position, which counts the allocator's
	// activity: idle time (start-up, data loading, sleep) does not stretch
	// or squeeze it. Time only gives the rate.
	growing, _ := steadyGrowth(seqs(in), 0, lastSeq, a.opt.MinKept)
	if !growing {
		// Held without growth in the trace. When part of the site's
		// allocations predate the trace, its history is unknown: live.
		kind := Retained
		if len(in) < len(g.allocs) {
			kind = Live
		}
		s := newSite(kind)
		for _, k := range g.allocs {
			s.add(k)
		}
		if kind == Retained {
			s.Growth = growthOf(in, nallocs, timed, winStart, winEnd, lastSeq)
		}
		s.Repeated = s.Count >= a.opt.MinKept && len(s.Sizes) == 1
		return []Site{*s.done()}
	}

	// Partition by size.
	bySize := map[int64][]keptAlloc{}
	for _, k := range g.allocs {
		bySize[k.size] = append(bySize[k.size], k)
	}
	first := in[0].seq
	startEnd := first + (lastSeq-first)/growthParts
	sizes := sortedSizes(bySize)
	parts := make(map[int64][]keptAlloc, len(sizes)) // in-trace allocations of each size, by clock
	grows := make(map[int64]bool, len(sizes))
	anyGrows := false
	for _, size := range sizes {
		var pin []keptAlloc
		for _, k := range bySize[size] {
			if k.inTrace {
				pin = append(pin, k)
			}
		}
		sort.Slice(pin, func(i, j int) bool { return pin[i].seq < pin[j].seq })
		parts[size] = pin
		grows[size], _ = steadyGrowth(seqs(pin), 0, lastSeq, a.opt.MinKept)
		anyGrows = anyGrows || grows[size]
	}
	leak, held, live := newSite(Leak), newSite(Retained), newSite(Live)
	var leakIn, heldIn []keptAlloc
	for _, size := range sizes {
		part, pin := bySize[size], parts[size]
		// Sizes kept only at the site's start are peeled off as retained
		// only beside a size that leaks by itself: when every allocation
		// has its own size, the growth is the site's as a whole.
		switch {
		case len(pin) == 0:
			for _, k := range part {
				live.add(k)
			}
		case anyGrows && !grows[size] && pin[len(pin)-1].seq <= startEnd:
			for _, k := range part {
				held.add(k)
			}
			heldIn = append(heldIn, pin...)
		default:
			for _, k := range part {
				leak.add(k)
			}
			leakIn = append(leakIn, pin...)
		}
	}
	sort.Slice(leakIn, func(i, j int) bool { return leakIn[i].seq < leakIn[j].seq })
	sort.Slice(heldIn, func(i, j int) bool { return heldIn[i].seq < heldIn[j].seq })
	var out []Site
	if leak.Count > 0 {
		leak.Growth = growthOf(leakIn, nallocs, timed, winStart, winEnd, lastSeq)
		out = append(out, *leak.done())
	}
	if held.Count > 0 {
		held.Growth = growthOf(heldIn, nallocs, timed, winStart, winEnd, lastSeq)
		out = append(out, *held.done())
	}
	if live.Count > 0 {
		live.Repeated = live.Count >= a.opt.MinKept && len(live.Sizes) == 1
		out = append(out, *live.done())
	}
	return out
}

// satAdd adds sizes, saturating instead of wrapping: a hostile file may
// hold more allocations of large sizes than int64 can sum.
func satAdd(a, b int64) int64 {
	if c := a + b; c >= a {
		return c
	}
	return math.MaxInt64
}

func (s *Site) add(k keptAlloc) {
	s.Bytes = satAdd(s.Bytes, k.size)
	s.Count++
	if !k.inTrace {
		s.NotInTrace++
	}
	for _, z := range s.Sizes {
		if z == k.size {
			return
		}
	}
	s.Sizes = append(s.Sizes, k.size)
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

// steadyGrowth reports whether kept allocations at the sorted clocks ts
// show live memory growing through a run traced from start to end: at
// least minKept allocations, falling in at least growthMinParts of the
// growthParts equal parts of the span from the first of them to end, the
// last at least growthMinExtent of the way along that span, and that
// span of kept allocations covering at least growthMinWindow of the
// trace. Memory allocated at one moment, in a burst that stops early, or
// in the last moments before the snapshot (a queue of the latest few
// batches, the last step's outputs) does not grow through the run. It
// also returns the number of parts that hold a kept allocation.
func steadyGrowth(ts []int64, start, end int64, minKept int) (bool, int) {
	if len(ts) == 0 {
		return false, 0
	}
	first, last := ts[0], ts[len(ts)-1]
	span := end - first
	if span <= 0 {
		return false, 1
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
	extent := float64(last-first) / float64(span)
	window := float64(last-first) / float64(max(end-start, 1))
	return len(ts) >= minKept && parts >= growthMinParts && extent >= growthMinExtent && window >= growthMinWindow, parts
}

// growthOf fits the cumulative kept bytes of allocations (sorted by trace
// position) against time (seconds when timed, else trace position) by
// least squares.
func growthOf(in []keptAlloc, nallocs int, timed bool, winStart, winEnd, lastSeq int64) *Growth {
	if len(in) == 0 {
		return nil
	}
	g := &Growth{Timed: timed, FirstUs: in[0].clock, LastUs: in[len(in)-1].clock, Kept: len(in),
		Allocations: nallocs, WindowStart: winStart, WindowEnd: winEnd}
	_, g.ActiveParts = steadyGrowth(seqs(in), 0, lastSeq, 1)
	if len(in) < 2 || g.LastUs == g.FirstUs {
		return g
	}
	x := make([]float64, len(in))
	y := make([]float64, len(in))
	var cum float64
	scale := 1.0
	if timed {
		scale = 1e6
	}
	for i, k := range in {
		cum += float64(k.size)
		x[i] = float64(k.clock-in[0].clock) / scale
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
