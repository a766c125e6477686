package pipeline

import (
	"context"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	anrun "github.com/gpuleak/gpuleak/analyze/run"
	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// oomFacts collects what each input says about out-of-memory errors, so
// that inputs about one run (a snapshot, the log with its OOM message, a
// memory summary) make one postmortem after all are read.
type oomFacts struct {
	inputs []anoom.Input
}

func (o *oomFacts) add(in anoom.Input) { o.inputs = append(o.inputs, in) }

// postmortem combines the facts; its notes go to the report's inputs.
func (o *oomFacts) postmortem(inputs []report.Input, filter *callsite.FrameFilter) (*anoom.Postmortem, []report.Finding) {
	pm := anoom.NewPostmortem(o.inputs, anoom.PostmortemOptions{Filter: filter})
	report.AddPostmortemNotes(inputs, pm)
	return pm, report.FromPostmortem(pm)
}

// postmortemAll reads every input for gpuleak oom and makes one
// postmortem of each OOM from what they all say.
func (r *runner) postmortemAll(ctx context.Context, paths []string) (*Result, error) {
	// Families without a postmortem reader of their own are read as
	// analyze reads them (postmortemFile): NVML samples and processes go
	// to these.
	r.nvml = &nvmlRun{a: antrend.NewAnalyzer(r.o.NVML.Trend)}
	r.join.procs = anrun.NewProcessCollector()
	err := r.each(ctx, paths, func(path string) (report.Input, error) {
		in, fact, err := r.postmortemFile(path)
		if err == nil && fact != nil {
			r.oom.add(*fact)
		}
		return in, err
	})
	if err != nil {
		return nil, err
	}
	rep := r.rep
	pm, findings := r.oom.postmortem(rep.Inputs, r.o.Filter)
	for _, p := range pm.WithoutOOM {
		for i := range rep.Inputs {
			if rep.Inputs[i].Path == p {
				rep.Inputs[i].Warnings = append(rep.Inputs[i].Warnings, "no out-of-memory entry in the snapshot's trace")
			}
		}
	}
	rep.Findings, rep.FindingsTotal = findings, len(findings)
	return &Result{Report: rep, Unread: r.unread.err(), Errors: r.unread.byPath}, nil
}

// postmortemFile reads one input for the postmortem, its format
// recognised as gpuleak analyze recognises it. A family without a
// postmortem reader (profiler traces, memory timelines, compute-sanitizer
// reports) is read as analyze reads it, errors included: the OOM facts it
// holds (a trace's [OutOfMemory] events, a program's OOM message amid a
// sanitizer's lines) go to r.oom, its other findings are not the
// postmortem's subject. Text that no family claims is read as a log: a
// log without an OOM message says so, it is not an error. fact is nil
// when the input's facts went to r.oom already.
func (r *runner) postmortemFile(path string) (report.Input, *anoom.Input, error) {
	in, head, err := r.open(path)
	if err != nil {
		return report.Input{}, nil, err
	}
	defer in.Close()
	if len(head) == 0 {
		return report.Input{}, nil, &parse.Error{File: path, Offset: 0, Msg: "empty input"}
	}
	defer r.progress(in)()
	format := r.o.detect(head)
	var rin report.Input
	var fact anoom.Input
	switch f := byFormat[format]; {
	case f != nil && f.postmortem != nil:
		rin, fact, err = f.postmortem(r, in, head, format)
	case f != nil:
		rin, _, err = f.analyze(r, in, head, format)
		if err != nil {
			return report.Input{Format: string(format)}, nil, in.Locate(err)
		}
		rin.Warnings = append(rin.Warnings, damageNotes(in)...)
		return blindToOOMs(rin, err), nil, err
	default:
		rin, fact, err = postmortemLog(r, in, head, format)
	}
	if err != nil {
		// What the content was recognised as, for the unread input's entry.
		return report.Input{Format: string(format)}, nil, in.Locate(err)
	}
	rin.Warnings = append(rin.Warnings, damageNotes(in)...)
	return blindToOOMs(rin, err), &fact, err
}

// blindToOOMs adds to an input read that cannot show an out-of-memory
// error (report.OOMBlind: a memory timeline, an NVML sample log,
// memory_stats() JSON) a warning that says so: the postmortem's "no
// out-of-memory error" is then no claim that it was searched.
func blindToOOMs(in report.Input, err error) report.Input {
	if why := report.OOMBlind(in.Format); err == nil && why != "" {
		in.Warnings = append(in.Warnings, why)
	}
	return in
}
