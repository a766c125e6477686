package pipeline

import (
	"fmt"
	"sort"
	"strings"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/profiler"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
	"github.com/gpuleak/gpuleak/report"
)

// The PyTorch profiler trace family: torch.profiler export_chrome_trace
// JSON (Kineto), recognised by its traceEvents key or an array of events.
func init() {
	register(&family{
		name:    "pytorch-profiler-trace",
		order:   20,
		formats: []parse.Format{kineto.FormatTrace},
		sniff:   sniffAs(kineto.FormatTrace, kineto.Sniff),
		analyze: analyzeKineto,
		tables: func(_ *Options, in *parse.Input, _ parse.Format, emit Emit) error {
			r := kineto.NewReader(in.Reader(), in.Name)
			return drain(r, func() string { return "profiler_" + r.Table().String() }, emit)
		},
	})
}

// analyzeKineto streams a profiler trace through the snapshot leak
// analysis (profiler.KinetoAnalyzer rebuilds each allocation's stack).
func analyzeKineto(r *runner, in *parse.Input, _ []byte, format parse.Format) (report.Input, []report.Finding, error) {
	mem := parse.NewRecyclingAllocator(64 << 20)
	kr := kineto.NewReader(in.Reader(), in.Name, kineto.WithAllocator(mem))
	defer kr.Release()
	a := profiler.NewKinetoAnalyzer(r.leakOptions())
	for kr.Next() {
		if err := a.Add(kr.Table(), kr.RecordBatch()); err != nil {
			return report.Input{}, nil, err
		}
	}
	if err := kr.Err(); err != nil {
		return report.Input{}, nil, err
	}
	meta := kr.Metadata()
	if meta.MemoryEvents == 0 && meta.OOMEvents == 0 {
		const record = "record with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, with_stack=True) and export_chrome_trace, or take a snapshot with torch.cuda.memory._record_memory_history()"
		var msg string
		switch {
		case meta.NoTraceEvents:
			// A header alone: nothing says how the events were recorded.
			msg = fmt.Sprintf("no traceEvents member: the file holds a PyTorch profiler trace's header (%s) and no events (a trace cut before its events, or saved without them); give the whole trace, as export_chrome_trace wrote it", strings.Join(meta.HeaderKeys, ", "))
		case meta.Events == 0:
			// A whole trace of no event (the profiler stopped before its
			// first step, or a schedule whose active steps never came):
			// read, and said to judge nothing, so that no gate passes on
			// it and no "no finding" stands for it.
			why := "the trace holds no events (its traceEvents is empty): nothing can be judged from it; the profiler recorded nothing (stopped before any step, or a schedule whose active steps never came), so nothing shows how it was set up either; " + record
			return report.Input{Path: in.Name, Format: string(format), Warnings: append(meta.Warnings.Strings(), why), Empty: why}, nil, nil
		case meta.Spans == 0 && meta.ByCategory["kernel"]+meta.ByCategory["gpu_memcpy"]+meta.ByCategory["gpu_memset"] == 0:
			// No op, record_function range or kernel: the profiler ran
			// around no work (the model ran outside its with-block, or
			// the schedule's active steps never came), so no step was
			// too few: nothing ran that could allocate.
			msg = fmt.Sprintf("a PyTorch profiler trace of %s with no operator, kernel or [memory] event (%s): nothing ran under the profiler (its trace marks no op and no step; the model ran outside the profiler's with-block, or its schedule's active steps never came), so nothing of the GPU's memory can be judged from it; profile the steps that run the model (prof.step() at the end of each), %s",
				counted(int(meta.Events), "event", "events"), categoryWords(meta.ByCategory), record)
		case meta.ProfileMemory != nil && *meta.ProfileMemory && a.ProfilerSteps() >= snapshot.MinIterations:
			// The allocator's every allocation and free is an event: with
			// none in steps enough to judge growth, nothing it manages
			// grew (a CUDA graph replayed in memory it already held).
			w := fmt.Sprintf("profile_memory was on, and the trace's %d profiler steps (ProfilerStep#N) hold no [memory] event: PyTorch's caching allocator allocated and freed nothing while profiling (as when a CUDA graph replays in memory it already holds), so no memory it manages grew; how much it held is unknown (a trace records only what changes), and memory allocated outside it (a library's own cudaMalloc, NCCL's buffers) is never in a trace", a.ProfilerSteps())
			return report.Input{Path: in.Name, Format: string(format), Warnings: append(meta.Warnings.Strings(), w)}, nil, nil
		case meta.ProfileMemory != nil && *meta.ProfileMemory:
			msg = fmt.Sprintf("a PyTorch profiler trace of %s with no [memory] events: profile_memory was on, but PyTorch's caching allocator allocated and freed nothing while profiling (or the events were filtered out), and its %s too few to show that nothing grew (%d needed); profile more steps (torch.profiler.schedule(wait=1, warmup=1, active=%d) with prof.step() each step), or take a snapshot with torch.cuda.memory._record_memory_history()",
				counted(int(meta.Events), "event", "events"), counted(a.ProfilerSteps(), "profiler step is", "profiler steps are"), snapshot.MinIterations, snapshot.MinIterations)
		default:
			msg = fmt.Sprintf("a PyTorch profiler trace of %s with no [memory] events: it was recorded without profile_memory=True; %s", counted(int(meta.Events), "event", "events"), record)
		}
		return report.Input{}, nil, &parse.Error{File: in.Name, Offset: -1, Msg: msg}
	}
	res, err := a.Finalize()
	if err != nil {
		return report.Input{}, nil, err
	}
	warns := meta.Warnings.Strings()
	if res.DeviceEvents == 0 && res.OtherEvents == 0 {
		// Host memory alone says nothing of a GPU's: no finding could
		// come from it, so it is not read as a trace with none (a gate
		// passed on it, a diff of every site as new), but said so, as a
		// trace without [memory] events is.
		if meta.OOMEvents == 0 {
			return report.Input{}, nil, &parse.Error{File: in.Name, Offset: -1, Msg: fmt.Sprintf("a PyTorch profiler trace whose %s all of CPU memory (Device Type 0): no GPU allocation was recorded, so no GPU memory can be judged from it; profile a run that uses the GPU with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and profile_memory=True, or take a snapshot with torch.cuda.memory._record_memory_history()", counted(int(meta.MemoryEvents), "[memory] event is", "[memory] events are"))}
		}
		warns = append(warns, fmt.Sprintf("the trace's %d [memory] events are all of CPU memory: no GPU allocation was recorded; profile a run that uses the GPU with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]", meta.MemoryEvents))
	}
	rin, fs := report.FromLeaks(in.Name, string(format), warns, res.Leak)
	if res.DeviceType != kineto.DeviceCUDA && res.DeviceEvents > 0 {
		// Another accelerator's devices (xpu:0), as the trace names them.
		typ := kineto.DeviceString(res.DeviceType)
		for i := range rin.Devices {
			rin.Devices[i].DeviceType = typ
		}
		for i := range fs {
			fs[i].DeviceType = typ
		}
	}
	// Each [OutOfMemory] event is an OOM: its postmortem comes later, from
	// all inputs together (a message in the job's log fills it in).
	if len(res.OOMs) > 0 {
		fact := anoom.Input{Path: in.Name, Format: string(format)}
		for _, o := range res.OOMs {
			// deviceProperties lists the trace's accelerators by id, not
			// by type: they size an event of the type the trace's memory
			// is of (or of a trace with no device memory), never the CPU.
			sized := o.DeviceType != kineto.DeviceCPU && (o.DeviceType == res.DeviceType || res.DeviceEvents == 0)
			total := int64(-1)
			for _, d := range meta.Devices {
				if d.ID == o.Device && d.TotalMemory > 0 && sized {
					total = d.TotalMemory
				}
			}
			fact.TraceOOMs = append(fact.TraceOOMs, anoom.TraceOOM{Device: o.Device, DeviceType: kineto.DeviceString(o.DeviceType), TimeUs: o.TimeUs,
				Requested: o.Requested, Allocated: o.TotalAllocated, Reserved: o.TotalReserved, Total: total})
		}
		r.oom.add(fact)
	}
	return rin, fs, nil
}

// categoryWords lists a trace's event categories with their counts,
// most first: "7 ac2g, 7 cuda_runtime, 45 without a category".
func categoryWords(by map[string]int64) string {
	cats := make([]string, 0, len(by))
	for c := range by {
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool {
		if by[cats[i]] != by[cats[j]] {
			return by[cats[i]] > by[cats[j]]
		}
		return cats[i] < cats[j]
	})
	words := make([]string, 0, len(cats))
	for _, c := range cats {
		if c == "" {
			words = append(words, fmt.Sprintf("%d without a category", by[c]))
			continue
		}
		words = append(words, fmt.Sprintf("%d %s", by[c], c))
	}
	return strings.Join(words, ", ")
}
