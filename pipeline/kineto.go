package pipeline

import (
	"fmt"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/profiler"
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
		why := "it was recorded without profile_memory=True"
		switch {
		case meta.NoTraceEvents:
			why = "the file has no traceEvents member, only a trace's header (cut before its events, or saved without them)"
		case meta.ProfileMemory != nil && *meta.ProfileMemory:
			why = "profile_memory was on, but no allocation happened while profiling (or the events were filtered out)"
		}
		return report.Input{}, nil, &parse.Error{File: in.Name, Offset: -1,
			Msg: fmt.Sprintf("a PyTorch profiler trace of %d events with no [memory] events: %s; record with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, with_stack=True) and export_chrome_trace, or take a snapshot with torch.cuda.memory._record_memory_history()", meta.Events, why)}
	}
	res, err := a.Finalize()
	if err != nil {
		return report.Input{}, nil, err
	}
	warns := meta.Warnings.Strings()
	if res.DeviceEvents == 0 && res.OtherEvents == 0 {
		warns = append(warns, fmt.Sprintf("the trace's %d [memory] events are all of CPU memory: no GPU allocation was recorded; profile a run that uses the GPU with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]", meta.MemoryEvents))
	}
	rin, fs := report.FromLeaks(in.Name, string(format), warns, res.Leak)
	// Each [OutOfMemory] event is an OOM: its postmortem comes later, from
	// all inputs together (a message in the job's log fills it in).
	if len(res.OOMs) > 0 {
		fact := anoom.Input{Path: in.Name, Format: string(format)}
		for _, o := range res.OOMs {
			total := int64(-1)
			for _, d := range meta.Devices {
				if d.ID == o.Device && d.TotalMemory > 0 {
					total = d.TotalMemory
				}
			}
			fact.TraceOOMs = append(fact.TraceOOMs, anoom.TraceOOM{Device: o.Device, TimeUs: o.TimeUs,
				Requested: o.Requested, Allocated: o.TotalAllocated, Reserved: o.TotalReserved, Total: total})
		}
		r.oom.add(fact)
	}
	return rin, fs, nil
}
