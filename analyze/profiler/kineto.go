package profiler

import (
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse/kineto"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// A profiler trace (torch.profiler with profile_memory=True) records every
// allocation and free of the caching allocator as a [memory] event, with
// the thread that made it, but no stack. The stack is rebuilt from the
// spans that enclose the event in time on the same thread: the Python
// functions (with_stack=True) and the op the Python code called. The
// events then become a snapshot's trace (the events, frames and stacks
// tables of parse/pytorch), and the snapshot's leak analysis runs on them
// unchanged: the same iterations, the same leak and retained verdicts.

// KinetoResult is the outcome of the analysis of one profiler trace.
type KinetoResult struct {
	// Leak is the snapshot analysis of the trace's [memory] events of
	// one accelerator type (DeviceType). A trace merged from several
	// processes' (its [memory] events carry several pids) is analysed one
	// process at a time, each across its own ProfilerStep#N spans and with
	// its own totals: Leak then holds every process's devices and sites,
	// each with its PID.
	Leak *snapshot.LeakResult
	// DeviceType is the c10::DeviceType whose [memory] events were
	// analysed (kineto.DeviceTypeName): CUDA when the trace has any, else
	// the accelerator type with the most events (XPU, MPS, ...); their
	// allocator's events have the same form. DeviceEvents counts them.
	DeviceType   int
	DeviceEvents int64
	// CUDAEvents, CPUEvents and OtherEvents count [memory] events by
	// device type: OtherEvents those of accelerator types other than
	// DeviceType, not analysed. OOMs are the [OutOfMemory] events.
	CUDAEvents, CPUEvents, OtherEvents int64
	OOMs                               []KinetoOOM
	// ProfilerSteps counts ProfilerStep#N spans; StepCalls counts calls of
	// torch.profiler's step() (prof.step()) seen as Python functions.
	ProfilerSteps, StepCalls int
	// WithPython is true when Python function spans enclosed allocations.
	WithPython bool
	// Warnings say what the trace could not show.
	Warnings []string
}

// KinetoOOM is an [OutOfMemory] event.
type KinetoOOM struct {
	// Device is the event's Device Id (-1 for the CPU), DeviceType its
	// Device Type (c10::DeviceType: 1 CUDA, 0 CPU, 12 XPU, ...).
	Device     int
	DeviceType int
	TimeUs     int64
	// Requested is the event's Bytes, -1 when it is negative (no size:
	// BytesArg keeps what the event wrote).
	Requested      int64 // bytes
	BytesArg       int64
	TotalAllocated int64 // bytes, -1 when absent
	TotalReserved  int64 // bytes, -1 when absent
}

// KinetoAnalyzer collects a trace's batches (Add) and analyses them
// (Finalize). Spans are kept until Finalize: a trace lists them in no
// time order, so containment is decided at the end.
type KinetoAnalyzer struct {
	opt   snapshot.LeakOptions
	names map[string]int32
	name  []string
	spans map[thread][]kSpan
	mem   []kMem
	res   KinetoResult

	nspans, droppedSpans, droppedMem int64
	pySpans                          int64
	// byType counts the [memory] events of each device type but the CPU.
	byType map[int32]int64
	// steps are the ProfilerStep#N spans; calls the Python spans of
	// prof.step() (with_stack=True), each ending a step.
	steps, calls []kStep
}

// kStep is a ProfilerStep#N span: [start, end) in ns, and its process.
type kStep struct {
	pid        int64
	start, end int64
}

// process is what is analysed on its own: the trace's device [memory]
// events (in device, time order) and its ProfilerStep#N spans, or, in a
// trace merged from several processes' (each event and span carries its
// pid), one process's. Each process's allocator keeps its own totals and
// its profiler its own steps.
type process struct {
	pid   int64
	multi bool // one of several: pid names it in output
	mem   []kMem
	steps []kStep
	// byCalls is set when steps are made from the process's prof.step()
	// calls, the trace having no ProfilerStep#N span (no schedule).
	byCalls bool
	// overlap is set when two of the steps overlap (setSteps); noTotals
	// are the devices whose last [memory] event has no Total Allocated or
	// Total Reserved (fixSummaries).
	overlap  bool
	noTotals []int
	leak     *snapshot.LeakResult
}

// prefix is what starts the process's lines in output: "" for a trace of
// one process, "process N: " for one of several.
func (p *process) prefix() string {
	if !p.multi {
		return ""
	}
	return fmt.Sprintf("process %d: ", p.pid)
}

// maxKinetoSpans and maxKinetoEvents bound what is kept of a trace (about
// 24 and 64 bytes each): spans beyond are not used to name stacks, CUDA
// [memory] events beyond are not analysed; both are said in warnings.
const (
	maxKinetoSpans  = 1 << 26
	maxKinetoEvents = 1 << 25
)

type thread struct{ pid, tid int64 }

// Span kinds.
const (
	spanOp = iota
	spanPython
	spanAnnotation
)

type kSpan struct {
	start, end int64 // ns
	name       int32
	kind       int8
}

type kMem struct {
	t          int64 // ns
	th         thread
	addr       uint64
	bytes      int64
	alloc      int64 // Total Allocated, -1 absent
	reserved   int64 // Total Reserved, -1 absent
	dev        int32
	dtype      int32 // c10::DeviceType
	order      int32 // file order within equal times (bounded by the sort)
	stack      int32
	seqInTrace int
}

// NewKinetoAnalyzer returns an analyzer with the snapshot analysis' options.
func NewKinetoAnalyzer(opt snapshot.LeakOptions) *KinetoAnalyzer {
	return &KinetoAnalyzer{opt: opt, names: map[string]int32{}, spans: map[thread][]kSpan{}, byType: map[int32]int64{}}
}

func (a *KinetoAnalyzer) intern(s string) int32 {
	if id, ok := a.names[s]; ok {
		return id
	}
	id := int32(len(a.name))
	s = strings.Clone(s)
	a.names[s] = id
	a.name = append(a.name, s)
	return id
}

// Add feeds one batch of a kineto.Reader.
func (a *KinetoAnalyzer) Add(t kineto.Table, rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(t.Schema()) {
		return fmt.Errorf("analyze: %s batch has schema %s", t, rec.Schema())
	}
	switch t {
	case kineto.TableMemory:
		tm := rec.Column(kineto.MemTimeNs).(*array.Int64)
		pid := rec.Column(kineto.MemPid).(*array.Int64)
		tid := rec.Column(kineto.MemTid).(*array.Int64)
		kind := rec.Column(kineto.MemKind).(*array.Dictionary)
		kd := kind.Dictionary().(*array.String)
		addr := rec.Column(kineto.MemAddr).(*array.Uint64)
		b := rec.Column(kineto.MemBytes).(*array.Int64)
		ta := rec.Column(kineto.MemTotalAllocated).(*array.Int64)
		tr := rec.Column(kineto.MemTotalReserved).(*array.Int64)
		dt := rec.Column(kineto.MemDeviceType).(*array.Int32)
		di := rec.Column(kineto.MemDeviceID).(*array.Int32)
		for i := 0; i < int(rec.NumRows()); i++ {
			alloc, reserved := int64(-1), int64(-1)
			if ta.IsValid(i) {
				alloc = ta.Value(i)
			}
			if tr.IsValid(i) {
				reserved = tr.Value(i)
			}
			if kd.Value(kind.GetValueIndex(i)) == kineto.KindOOM {
				o := KinetoOOM{Device: int(di.Value(i)), DeviceType: int(dt.Value(i)), TimeUs: tm.Value(i) / 1000,
					Requested: b.Value(i), BytesArg: b.Value(i), TotalAllocated: alloc, TotalReserved: reserved}
				if o.Requested < 0 {
					o.Requested = -1 // not a size: unknown
				}
				a.res.OOMs = append(a.res.OOMs, o)
				continue
			}
			dtype := dt.Value(i)
			switch dtype {
			case kineto.DeviceCPU:
				a.res.CPUEvents++
				continue
			case kineto.DeviceCUDA:
				a.res.CUDAEvents++
			}
			a.byType[dtype]++
			if dtype == kineto.DeviceMeta {
				continue // no memory; counted among the others
			}
			if len(a.mem) >= maxKinetoEvents {
				a.droppedMem++
				continue
			}
			a.mem = append(a.mem, kMem{t: tm.Value(i), th: thread{pid.Value(i), tid.Value(i)}, addr: addr.Value(i), bytes: b.Value(i),
				alloc: alloc, reserved: reserved, dev: di.Value(i), dtype: dtype, order: int32(len(a.mem) & 0x7fffffff), stack: -1})
		}
	case kineto.TableSpans:
		st := rec.Column(kineto.SpStartNs).(*array.Int64)
		du := rec.Column(kineto.SpDurNs).(*array.Int64)
		pid := rec.Column(kineto.SpPid).(*array.Int64)
		tid := rec.Column(kineto.SpTid).(*array.Int64)
		cat := rec.Column(kineto.SpCategory).(*array.Dictionary)
		cd := cat.Dictionary().(*array.String)
		name := rec.Column(kineto.SpName).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			var k int8
			switch cd.Value(cat.GetValueIndex(i)) {
			case kineto.CategoryCPUOp:
				k = spanOp
			case kineto.CategoryPythonFunction:
				k = spanPython
				a.pySpans++
				if profilerStep.MatchString(name.Value(i)) {
					a.res.StepCalls++
					a.calls = append(a.calls, kStep{pid: pid.Value(i), start: st.Value(i), end: st.Value(i) + du.Value(i)})
				}
			default:
				k = spanAnnotation
				if kineto.IsStep(name.Value(i)) {
					a.res.ProfilerSteps++
					a.steps = append(a.steps, kStep{pid: pid.Value(i), start: st.Value(i), end: st.Value(i) + du.Value(i)})
				}
			}
			if a.nspans >= maxKinetoSpans {
				a.droppedSpans++
				continue
			}
			a.nspans++
			th := thread{pid.Value(i), tid.Value(i)}
			a.spans[th] = append(a.spans[th], kSpan{start: st.Value(i), end: st.Value(i) + du.Value(i), name: a.intern(name.Value(i)), kind: k})
		}
	}
	return nil
}

// profilerStep matches the Python span of prof.step() (torch/profiler/profiler.py).
var profilerStep = lazyre.New(`(^|[/\\])torch[/\\]profiler[/\\]profiler\.py\(\d+\): step$`)

// pyFunction matches a python_function span's name: "file.py(LINE): function".
var pyFunction = lazyre.New(`^(.+)\((\d+)\): (.+)$`)

// objectAddr matches the address CPython prints in a built-in's name.
var objectAddr = lazyre.New(` at 0x[0-9a-fA-F]+>$`)

// frameOf turns a span's name into a frame.
func frameOf(name string, kind int8) callsite.Frame {
	if kind == spanPython {
		if m := pyFunction.FindStringSubmatch(name); m != nil {
			line, _ := strconv.ParseInt(m[2], 10, 64)
			return callsite.Frame{Filename: m[1], Line: line, Name: m[3]}
		}
		if m, ok := strings.CutPrefix(name, moduleSpan); ok {
			// A module call: hidden, and it keeps the allocations
			// inside from marking iterations. The module's class goes
			// on the op (stackOf).
			return callsite.ModuleCall(moduleClass(m))
		}
		return callsite.Frame{Name: objectAddr.ReplaceAllString(name, ">")}
	}
	return callsite.Frame{Name: name}
}

// moduleSpan starts the name of the python_function span of an nn.Module
// call ("nn.Module: Linear_1").
const moduleSpan = "nn.Module: "

// moduleClass is the class of the module a span names: its name without
// the instance number the profiler appends ("Linear_110" is the 111th
// Linear it saw called: Linear). A site is an op in a module class, not
// in each instance: a model's 24 layers of one class make one site, not
// 24 (one finding per GELU_0 ... GELU_23 was the field traces' 195
// findings).
func moduleClass(name string) string {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}

// stackOf returns the frames, innermost first, of the spans enclosing an
// allocation (outermost first in chain): the op that the innermost Python
// frame called (the outermost op below it: aten::clone rather than the
// aten::empty_strided inside it), then the Python frames; without Python
// frames, the outermost op alone.
func stackOf(chain []kSpan, names []string) []callsite.Frame {
	var fr []callsite.Frame
	op := -1
	for i, s := range chain {
		switch s.kind {
		case spanPython:
			op = -1
		case spanOp:
			if op < 0 {
				op = i
			}
		}
	}
	if op >= 0 {
		// The op's frame has no file; the class of the innermost module
		// that called it stands in its place: "aten::linear (nn.Module:
		// Linear)", for the op in every Linear.
		f := callsite.Frame{Name: names[chain[op].name]}
		for i := op - 1; i >= 0; i-- {
			if n := names[chain[i].name]; chain[i].kind == spanPython && strings.HasPrefix(n, moduleSpan) {
				f.Filename = moduleSpan + moduleClass(n[len(moduleSpan):])
				break
			}
		}
		fr = append(fr, f)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].kind == spanPython {
			fr = append(fr, frameOf(names[chain[i].name], spanPython))
		}
	}
	if len(fr) > maxKinetoDepth {
		fr = fr[:maxKinetoDepth]
	}
	return fr
}

const maxKinetoDepth = 128

// ProfilerSteps counts the ProfilerStep#N spans added so far (of every
// process), as KinetoResult.ProfilerSteps does after Finalize.
func (a *KinetoAnalyzer) ProfilerSteps() int { return a.res.ProfilerSteps }

// Finalize rebuilds each CUDA allocation's stack and runs the snapshot
// leak analysis.
func (a *KinetoAnalyzer) Finalize() (*KinetoResult, error) {
	res := &a.res
	a.pickDeviceType()
	// Stacks: per thread, sweep the spans (by start, longest first) and
	// the thread's memory events in time order. Spans of the same start
	// and duration (a Python call and its op timed to the same
	// microsecond) keep their file order, the first the parent: a stable
	// sort (an unstable one swapped some pairs, making a child its own
	// parent's parent, and one site two).
	byThread := map[thread][]int{}
	for i := range a.mem {
		byThread[a.mem[i].th] = append(byThread[a.mem[i].th], i)
	}
	stackIDs := map[string]int32{}
	var stacks [][]callsite.Frame
	for th, idx := range byThread {
		sp := a.spans[th]
		sort.SliceStable(sp, func(i, j int) bool {
			if sp[i].start != sp[j].start {
				return sp[i].start < sp[j].start
			}
			return sp[i].end > sp[j].end
		})
		sort.SliceStable(idx, func(i, j int) bool { return a.mem[idx[i]].t < a.mem[idx[j]].t })
		var open []kSpan
		next := 0
		for _, mi := range idx {
			m := &a.mem[mi]
			for next < len(sp) && sp[next].start <= m.t {
				for len(open) > 0 && open[len(open)-1].end < sp[next].start {
					open = open[:len(open)-1]
				}
				open = append(open, sp[next])
				next++
			}
			// Close spans ended before the event; a span that does not
			// nest (ends inside its parent's end) is dropped from the chain.
			chain := open[:0:0]
			for _, s := range open {
				if s.end >= m.t {
					chain = append(chain, s)
				}
			}
			for len(open) > 0 && open[len(open)-1].end < m.t {
				open = open[:len(open)-1]
			}
			fr := stackOf(chain, a.name)
			for _, f := range fr {
				if f.Filename != "" {
					res.WithPython = true
					break
				}
			}
			if len(fr) == 0 {
				continue
			}
			key := callsite.StackKey(fr)
			id, ok := stackIDs[key]
			if !ok {
				id = int32(len(stacks))
				stackIDs[key] = id
				stacks = append(stacks, fr)
			}
			m.stack = id
		}
	}
	sort.SliceStable(a.mem, func(i, j int) bool {
		if a.mem[i].dev != a.mem[j].dev {
			return a.mem[i].dev < a.mem[j].dev
		}
		return a.mem[i].t < a.mem[j].t
	})
	procs := a.processes()
	for _, p := range procs {
		la := snapshot.NewLeakAnalyzer(a.opt)
		a.setSteps(la, p)
		if err := a.feed(la, p.mem, stacks); err != nil {
			return nil, err
		}
		p.leak = la.Finalize()
		a.fixSummaries(p)
		a.markUnrecorded(p)
	}
	res.Leak = merge(procs)
	res.Leak.Warnings = a.warnings(procs)
	return res, nil
}

// processes splits the trace's device [memory] events by process. A
// trace of one process (the usual) is one, with the steps of that
// process, or every step when none carries its pid; a trace merged from
// several processes' is one per process, each with its own steps. a.mem
// is in device, time order, and so is each process's.
func (a *KinetoAnalyzer) processes() []*process {
	var pids []int64
	for _, m := range a.mem {
		if !slices.Contains(pids, m.th.pid) {
			pids = append(pids, m.th.pid)
		}
	}
	of := func(all []kStep, pid int64) []kStep {
		var out []kStep
		for _, s := range all {
			if s.pid == pid {
				out = append(out, s)
			}
		}
		return out
	}
	// Without ProfilerStep#N spans, the process's prof.step() calls end
	// its steps.
	byCalls := func(p *process, calls []kStep) {
		if len(p.steps) == 0 && len(calls) > 0 {
			p.steps, p.byCalls = stepsOfCalls(calls), true
		}
	}
	if len(pids) <= 1 {
		p := &process{mem: a.mem, steps: a.steps}
		calls := a.calls
		if len(pids) == 1 {
			p.pid = pids[0]
			if own := of(a.steps, p.pid); len(own) > 0 {
				p.steps = own
			}
			if own := of(a.calls, p.pid); len(own) > 0 {
				calls = own
			}
		}
		byCalls(p, calls)
		return []*process{p}
	}
	slices.Sort(pids)
	procs := make([]*process, len(pids))
	for i, pid := range pids {
		procs[i] = &process{pid: pid, multi: true, steps: of(a.steps, pid)}
		byCalls(procs[i], of(a.calls, pid))
	}
	for _, m := range a.mem {
		p := procs[slices.Index(pids, m.th.pid)]
		p.mem = append(p.mem, m)
	}
	return procs
}

// stepsOfCalls makes steps of the calls of prof.step() (their spans, in
// any order): each call ends a step and starts the next, the first step
// starting with the trace, the last running to its end (a step in which no
// event falls is one with the next: see setSteps).
func stepsOfCalls(calls []kStep) []kStep {
	cs := slices.Clone(calls)
	sort.Slice(cs, func(i, j int) bool { return cs[i].start < cs[j].start })
	out := make([]kStep, 0, len(cs)+1)
	from := int64(math.MinInt64)
	for _, c := range cs {
		out = append(out, kStep{pid: c.pid, start: from, end: c.start})
		from = c.start
	}
	return append(out, kStep{pid: cs[len(cs)-1].pid, start: from, end: math.MaxInt64})
}

// merge is the leak result of the trace: its one process's, or, for a
// trace of several, the processes' devices and sites, each marked with
// its process, the sites ranked together as one analysis ranks its own.
func merge(procs []*process) *snapshot.LeakResult {
	if len(procs) == 1 {
		return procs[0].leak
	}
	out := &snapshot.LeakResult{}
	for _, p := range procs {
		pid := p.pid
		for _, d := range p.leak.Devices {
			d.PID = &pid
			out.Devices = append(out.Devices, d)
		}
		for _, s := range p.leak.Sites {
			s.PID = &pid
			out.Sites = append(out.Sites, s)
		}
		out.OOMs = append(out.OOMs, p.leak.OOMs...)
	}
	sort.SliceStable(out.Sites, func(i, j int) bool {
		a, b := out.Sites[i], out.Sites[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Device < b.Device
	})
	return out
}

// pickDeviceType chooses the accelerator type whose [memory] events are
// analysed: CUDA when the trace has any, else the type with the most
// events (the lower number of two as many). Device ids are per type (an
// XPU's device 0 is not CUDA's), so one type is analysed; the others'
// events are counted in OtherEvents and dropped from a.mem.
func (a *KinetoAnalyzer) pickDeviceType() {
	res := &a.res
	res.DeviceType = kineto.DeviceCUDA
	if a.byType[kineto.DeviceCUDA] == 0 {
		best := int64(0)
		for t, n := range a.byType {
			if t == kineto.DeviceMeta {
				continue
			}
			if n > best || n == best && int(t) < res.DeviceType {
				res.DeviceType, best = int(t), n
			}
		}
	}
	for t, n := range a.byType {
		if int(t) == res.DeviceType {
			res.DeviceEvents = n
		} else {
			res.OtherEvents += n
		}
	}
	kept := a.mem[:0]
	for _, m := range a.mem {
		if int(m.dtype) == res.DeviceType {
			kept = append(kept, m)
		}
	}
	a.mem = kept
}

// stepLabel names the ProfilerStep#N spans when they mark iterations.
const stepLabel = "ProfilerStep#N spans"

// callLabel names the calls of prof.step() when they mark iterations (a
// trace with Python stacks and no schedule).
const callLabel = "prof.step() calls"

// setSteps gives the leak analysis each device's ProfilerStep#N starts as
// the sequence numbers feed gives its events (p.mem in device, time
// order): a step starts at the device's first event at or after its
// span's start. The profiler records a step where prof.step() is called,
// so they are the iterations exactly; the analysis uses them before any
// loop the allocations' stacks could mark (a trace without
// with_stack=True has no Python frame to mark one, and one with it names
// each function by its first line, so two calls of an op in one step look
// alike and a stack-found loop counts the step twice). Spans that overlap are not one run's steps
// (two threads stepped the profiler, or processes' traces merged without
// their pids): then none is used, and a warning says so.
func (a *KinetoAnalyzer) setSteps(la *snapshot.LeakAnalyzer, p *process) {
	if len(p.steps) == 0 {
		return
	}
	steps := slices.Clone(p.steps)
	sort.Slice(steps, func(i, j int) bool { return steps[i].start < steps[j].start })
	for i := 1; i < len(steps); i++ {
		// Within a microsecond is a rounding of ts and dur, not overlap.
		if steps[i].start < steps[i-1].end-1000 {
			p.overlap = true
			return
		}
	}
	for i := 0; i < len(p.mem); {
		j := i
		for j < len(p.mem) && p.mem[j].dev == p.mem[i].dev {
			j++
		}
		ev := p.mem[i:j]
		seqs := make([]int64, len(steps))
		for k, sp := range steps {
			seqs[k] = int64(sort.Search(len(ev), func(e int) bool { return ev[e].t >= sp.start }))
		}
		label := stepLabel
		if p.byCalls {
			label = callLabel
		}
		la.SetSteps(p.mem[i].dev, seqs, label)
		i = j
	}
}

// feed hands the trace to the leak analysis as a snapshot's frames,
// stacks and events tables.
func (a *KinetoAnalyzer) feed(la *snapshot.LeakAnalyzer, events []kMem, stacks [][]callsite.Frame) error {
	mem := memory.DefaultAllocator
	fb := array.NewRecordBuilder(mem, pytorch.FramesSchema)
	defer fb.Release()
	sb := array.NewRecordBuilder(mem, pytorch.StacksSchema)
	defer sb.Release()
	frameIDs := map[callsite.Frame]int32{}
	for sid, st := range stacks {
		for depth, f := range st {
			id, ok := frameIDs[f]
			if !ok {
				id = int32(len(frameIDs))
				frameIDs[f] = id
				fb.Field(pytorch.FrID).(*array.Int32Builder).Append(id)
				fb.Field(pytorch.FrFilename).(*array.StringBuilder).Append(f.Filename)
				fb.Field(pytorch.FrLine).(*array.Int64Builder).Append(f.Line)
				fb.Field(pytorch.FrName).(*array.StringBuilder).Append(f.Name)
			}
			sb.Field(pytorch.StID).(*array.Int32Builder).Append(int32(sid))
			sb.Field(pytorch.StDepth).(*array.Int32Builder).Append(int32(depth))
			sb.Field(pytorch.StFrameID).(*array.Int32Builder).Append(id)
		}
	}
	for _, x := range []struct {
		t pytorch.Table
		b *array.RecordBuilder
	}{{pytorch.TableFrames, fb}, {pytorch.TableStacks, sb}} {
		rec := x.b.NewRecordBatch()
		err := la.Add(x.t, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	eb := array.NewRecordBuilder(mem, pytorch.EventsSchema)
	defer eb.Release()
	action := eb.Field(pytorch.EvAction).(*array.BinaryDictionaryBuilder)
	seq := map[int32]int64{}
	flush := func() error {
		rec := eb.NewRecordBatch()
		defer rec.Release()
		return la.Add(pytorch.TableEvents, rec)
	}
	for i, m := range events {
		eb.Field(pytorch.EvDevice).(*array.Int32Builder).Append(m.dev)
		eb.Field(pytorch.EvSeq).(*array.Int64Builder).Append(seq[m.dev])
		seq[m.dev]++
		eb.Field(pytorch.EvTimeUs).(*array.Int64Builder).Append(m.t / 1000)
		act, size := pytorch.ActionAlloc, m.bytes
		if m.bytes < 0 {
			act, size = pytorch.ActionFreeCompleted, -m.bytes
		}
		if err := action.AppendString(act); err != nil {
			return err
		}
		eb.Field(pytorch.EvAddr).(*array.Uint64Builder).Append(m.addr)
		eb.Field(pytorch.EvSize).(*array.Int64Builder).Append(size)
		eb.Field(pytorch.EvStream).(*array.Int64Builder).Append(0)
		if m.stack >= 0 {
			eb.Field(pytorch.EvStackID).(*array.Int32Builder).Append(m.stack)
		} else {
			eb.Field(pytorch.EvStackID).(*array.Int32Builder).AppendNull()
		}
		eb.Field(pytorch.EvDeviceFree).(*array.Int64Builder).AppendNull()
		if (i+1)%(64<<10) == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// fixSummaries fills what a snapshot's segments would give from the
// trace's running totals: the last event's Total Reserved and Total
// Allocated of each device, -1 (unknown) where the event has none
// (PyTorch 1.8 and 1.9 wrote neither): the trace's live blocks leave out
// what was allocated before profiling, and it has no segments. Each
// process's allocator keeps its own totals: a process's are its own last
// event's (processes).
func (a *KinetoAnalyzer) fixSummaries(p *process) {
	last := map[int]kMem{}
	for _, m := range p.mem {
		last[int(m.dev)] = m
	}
	for i := range p.leak.Devices {
		d := &p.leak.Devices[i]
		if m, ok := last[d.Device]; ok {
			// The peak stands as far above the end's total as above the
			// blocks the trace left live.
			d.PeakActiveBytes = 0
			if d.PeakAboveEndBytes > 0 && m.alloc >= 0 {
				d.PeakActiveBytes = m.alloc + d.PeakAboveEndBytes
			}
			d.ReservedBytes, d.ActiveBytes = m.reserved, m.alloc
			if m.reserved < 0 || m.alloc < 0 {
				p.noTotals = append(p.noTotals, d.Device)
			}
			d.ActiveBlocks = d.LiveAtTraceEnd
		}
	}
}

// markUnrecorded says, on the devices whose growth could not be judged
// because nothing in the trace marks its steps (no Python frame:
// with_stack=False; no ProfilerStep#N span), that this is how the trace
// was recorded, and what to record instead.
func (a *KinetoAnalyzer) markUnrecorded(p *process) {
	if a.res.WithPython || len(p.steps) > 0 {
		return
	}
	for i := range p.leak.Devices {
		if d := &p.leak.Devices[i]; d.Unjudged != "" {
			d.Unjudged = "nothing in its trace marks the steps: no Python frame (recorded without with_stack=True) and no ProfilerStep#N span (no torch.profiler.schedule with prof.step())"
		}
	}
}

// beforeProfiling says, per device, how much memory was allocated before
// the trace's first CUDA [memory] event and is still held at its end: no
// event allocates it, so no finding can name it, yet it is in the devices'
// active bytes (the last event's Total Allocated). It is the first event's
// Total Allocated less the event's own bytes, less what the trace frees
// of addresses it never saw allocated; said only when the last event's
// Total Allocated agrees (the blocks the trace leaves live plus this, to
// within 1 MiB) and it is at least 1 MiB. events are one process's, in
// device, time order.
func beforeProfiling(events []kMem) []string {
	const MiB = 1 << 20
	var out []string
	for i := 0; i < len(events); {
		j := i
		for j < len(events) && events[j].dev == events[i].dev {
			j++
		}
		ev := events[i:j]
		i = j
		first, lastEv := ev[0], ev[len(ev)-1]
		if first.alloc < 0 || lastEv.alloc < 0 {
			continue // no totals (fixSummaries)
		}
		before := first.alloc - first.bytes
		live := map[uint64]int64{}
		var freedBefore, liveEnd int64
		for _, m := range ev {
			switch {
			case m.bytes > 0:
				live[m.addr] = m.bytes
			case m.bytes < 0:
				if _, ok := live[m.addr]; ok {
					delete(live, m.addr)
				} else {
					freedBefore -= m.bytes
				}
			}
		}
		for _, b := range live {
			liveEnd += b
		}
		held := before - freedBefore
		if held < MiB || abs64(lastEv.alloc-(liveEnd+held)) > MiB {
			continue
		}
		out = append(out, fmt.Sprintf("device %d: %s was allocated before profiling began and is still held at the end (the first [memory] event's Total Allocated, %s, less its own bytes and what the trace frees of blocks it never saw allocated; the last event's Total Allocated, %s, agrees): no event in the trace allocates it, so no finding names it; profile from the program's start, or record a memory snapshot (torch.cuda.memory._record_memory_history), to see its call sites",
			first.dev, humanize.IBytes(uint64(held)), humanize.IBytes(uint64(first.alloc)), humanize.IBytes(uint64(lastEv.alloc))))
	}
	return out
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// warnings are the trace's: each process's leak analysis' warnings, with
// those that would give a snapshot's advice rewritten, then what only a
// profiler trace shows. In a trace of several processes a process's own
// lines start with "process N: ".
func (a *KinetoAnalyzer) warnings(procs []*process) []string {
	res := &a.res
	var out []string
	for _, p := range procs {
		for _, w := range a.rewrite(p.leak.Warnings, p) {
			out = append(out, a.named(p.prefix()+w))
		}
		if w := a.stepWarning(p); w != "" {
			out = append(out, p.prefix()+w)
		}
	}
	if !res.WithPython && res.DeviceEvents > 0 && a.pySpans > 0 {
		spans := humanize.Comma(a.pySpans) + " Python function spans, but none encloses"
		if a.pySpans == 1 {
			spans = "1 Python function span, but it does not enclose"
		}
		out = append(out, fmt.Sprintf("the trace has %s an allocation on the allocation's thread (this PyTorch version may give Python spans other thread ids): sites are named by the op that allocated", spans))
	} else if !res.WithPython && res.DeviceEvents > 0 {
		out = append(out, "the trace has no Python functions around its allocations (recorded without with_stack=True): sites are named by the op that allocated; profile with with_stack=True to see the Python lines")
	} else if res.DeviceEvents > 0 {
		out = append(out, "Python lines in a profiler trace are where each function starts (or where it was when profiling began), not the line of the call: the op beside it says which call allocated")
	}
	if a.droppedSpans > 0 {
		out = append(out, fmt.Sprintf("%s spans beyond the first %s were not kept: the stacks of later allocations may be incomplete", humanize.Comma(a.droppedSpans), humanize.Comma(maxKinetoSpans)))
	}
	if a.droppedMem > 0 {
		out = append(out, fmt.Sprintf("%s device [memory] events beyond the first %s were not analysed: the analysis covers the start of the trace only", humanize.Comma(a.droppedMem), humanize.Comma(maxKinetoEvents)))
	}
	if res.DeviceType != kineto.DeviceCUDA && res.DeviceEvents > 0 {
		name := kineto.DeviceTypeName(res.DeviceType)
		out = append(out, fmt.Sprintf("the trace's device memory is %s's (c10 DeviceType %d): its %s [memory] events are analysed as CUDA's are, and the devices above are %s devices", name, res.DeviceType, humanize.Comma(res.DeviceEvents), name))
	}
	if len(procs) > 1 {
		pids := make([]string, len(procs))
		for i, p := range procs {
			pids[i] = strconv.FormatInt(p.pid, 10)
		}
		out = append(out, fmt.Sprintf("the trace's [memory] events come from %d processes (pids %s: traces merged into one file): each process is analysed on its own, across its own ProfilerStep#N spans, with its own allocator's totals (its last event's Total Allocated and Total Reserved), and each finding and device line names its process", len(procs), strings.Join(pids, ", ")))
	}
	for _, p := range procs {
		for _, d := range p.noTotals {
			out = append(out, a.named(p.prefix()+fmt.Sprintf("device %d: the trace's [memory] events carry no Total Allocated or Total Reserved (PyTorch 1.8 and 1.9 wrote neither): the device's active and reserved bytes are unknown, and memory allocated before profiling cannot be sized; the findings count the blocks the trace saw", d)))
		}
	}
	if res.CPUEvents > 0 {
		out = append(out, fmt.Sprintf("%s [memory] events of CPU memory not analysed", humanize.Comma(res.CPUEvents)))
	}
	if res.OtherEvents > 0 {
		var types []int
		for t := range a.byType {
			if int(t) != res.DeviceType {
				types = append(types, int(t))
			}
		}
		sort.Ints(types)
		var names []string
		for _, t := range types {
			names = append(names, fmt.Sprintf("%s of %s (c10 DeviceType %d)", humanize.Comma(a.byType[int32(t)]), kineto.DeviceTypeName(t), t))
		}
		out = append(out, fmt.Sprintf("%s [memory] events of devices other than %s not analysed (%s): one accelerator type is analysed per trace", humanize.Comma(res.OtherEvents), kineto.DeviceTypeName(res.DeviceType), strings.Join(names, ", ")))
	}
	for _, o := range res.OOMs {
		// Each event is an oom finding (its postmortem), which says the
		// rest; only why its request is unknown is said here.
		if o.Requested < 0 {
			dev := fmt.Sprintf("device %d", o.Device)
			if o.DeviceType != kineto.DeviceCUDA {
				dev = fmt.Sprintf("device %s:%d", kineto.DeviceString(o.DeviceType), o.Device)
			}
			if o.DeviceType == kineto.DeviceCPU {
				dev = "the CPU"
			}
			out = append(out, fmt.Sprintf("%s: an [OutOfMemory] event's Bytes is %d, not a size: the request that failed is unknown", dev, o.BytesArg))
		}
	}
	for _, p := range procs {
		for _, w := range beforeProfiling(p.mem) {
			out = append(out, a.named(p.prefix()+w))
		}
	}
	return out
}

// named names the device that starts a warning about the analysed
// devices ("device 0: ...") as the report's device lines do: "device
// xpu:0" for another accelerator than CUDA.
func (a *KinetoAnalyzer) named(w string) string {
	if a.res.DeviceType == kineto.DeviceCUDA {
		return w
	}
	return deviceLine.ReplaceAllString(w, "${1}device "+kineto.DeviceString(a.res.DeviceType)+":${2}:")
}

// deviceLine matches "device N:" that starts a warning, or a process's.
var deviceLine = lazyre.New(`^(process -?\d+: )?device (\d+):`)

// rewrite rewrites the snapshot analysis' warnings of a process that
// would give a snapshot's advice.
func (a *KinetoAnalyzer) rewrite(in []string, p *process) []string {
	var out []string
	for _, w := range in {
		switch {
		case strings.Contains(w, "ring buffer wrapped"):
			if i := strings.Index(w, " of addresses never seen allocated"); i > 0 {
				w = w[:i] + " of blocks allocated before profiling started (their allocations are not in the trace)"
			}
		case strings.HasPrefix(w, "the snapshot holds no segments"):
			continue // said by the caller for a trace: which [memory] events it has
		case strings.Contains(w, "_record_memory_history"):
			w = strings.SplitN(w, ";", 2)[0] + "; profile with torch.profiler.profile(profile_memory=True, with_stack=True) to name their call sites"
		case strings.Contains(w, "("+stepLabel+"), fewer than the"):
			// A schedule's active steps are all a trace holds.
			w += fmt.Sprintf("; profile %d or more active steps (torch.profiler.schedule(wait=1, warmup=1, active=%d), prof.step() after each)", snapshot.MinIterations, snapshot.MinIterations)
		case strings.Contains(w, "the trace shows no repeating step") && !a.res.WithPython && len(p.steps) == 0:
			// Nothing in such a trace can mark a step: its stacks have
			// no Python frame, and it has no ProfilerStep#N span.
			w += "; without with_stack=True and without ProfilerStep#N spans (torch.profiler.schedule with prof.step()) a trace has nothing that marks its steps"
		}
		out = append(out, w)
	}
	return out
}

// stepWarning says what a process's ProfilerStep#N spans (or its calls of
// prof.step()) did for the iterations; "" when it has neither.
func (a *KinetoAnalyzer) stepWarning(p *process) string {
	marked, iters := false, 0
	for _, d := range p.leak.Devices {
		marked = marked || d.IterationMarker != ""
		iters = max(iters, d.Iterations)
	}
	n := len(p.steps)
	switch {
	case p.byCalls && marked && iters < snapshot.MinIterations:
		return fmt.Sprintf("the trace has no ProfilerStep#N spans (no schedule), but prof.step() was called %s: each call ends a step, and they are its iterations, too few to judge growth across", counted(a.res.StepCalls, "time", "times"))
	case p.byCalls && marked:
		return fmt.Sprintf("the trace has no ProfilerStep#N spans (no schedule), but prof.step() was called %s: each call ends a step, and these steps are the iterations growth is judged across, not a loop found from the allocations' Python stacks (a trace's Python lines are where each function starts, so two calls of one op in a step look alike)", counted(a.res.StepCalls, "time", "times"))
	case n > 0 && p.overlap:
		return fmt.Sprintf("the trace has %d ProfilerStep#N spans, some of them overlapping (more than one process or thread stepped the profiler): they are not used as iterations; iterations are found from the allocations' stacks", n)
	case n > 0 && marked && n < snapshot.MinIterations:
		return fmt.Sprintf("the trace marks %s (ProfilerStep#N): they are its iterations, too few to judge growth across", counted(n, "profiler step", "profiler steps"))
	case n > 0 && marked && a.res.WithPython:
		return fmt.Sprintf("the trace marks %s (ProfilerStep#N): these steps are the iterations growth is judged across, not a loop found from the allocations' Python stacks (a trace's Python lines are where each function starts, so two calls of one op in a step look alike)", counted(n, "profiler step", "profiler steps"))
	case n > 0 && marked:
		return fmt.Sprintf("the trace marks %s (ProfilerStep#N); the allocations' stacks mark no iterations, so these steps are the iterations growth is judged across", counted(n, "profiler step", "profiler steps"))
	case n > 0:
		return fmt.Sprintf("the trace marks %s (ProfilerStep#N); iterations are found from the allocations' stacks", counted(n, "profiler step", "profiler steps"))
	case a.res.StepCalls > 0 && !p.multi:
		return fmt.Sprintf("the trace has no ProfilerStep#N spans (no schedule), but prof.step() was called %s; iterations are found from the allocations' stacks", counted(a.res.StepCalls, "time", "times"))
	case a.res.ProfilerSteps > 0:
		return fmt.Sprintf("none of the trace's %d ProfilerStep#N spans is this process's: iterations are found from the allocations' stacks", a.res.ProfilerSteps)
	}
	return ""
}

// counted counts n things in English: "1 step", "2 steps".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
