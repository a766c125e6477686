package pipeline

import (
	"context"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	anoom "github.com/gpuleak/gpuleak/analyze/oom"
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
	err := r.each(ctx, paths, func(path string) (report.Input, error) {
		in, fact, err := r.postmortemFile(path)
		if err == nil {
			r.oom.add(fact)
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

// postmortemFile reads one input for the postmortem. Text that no family
// reads for it is read as a log: a log without an OOM message says so, it
// is not an error.
func (r *runner) postmortemFile(path string) (report.Input, anoom.Input, error) {
	in, head, err := r.open(path)
	if err != nil {
		return report.Input{}, anoom.Input{}, err
	}
	defer in.Close()
	if len(head) == 0 {
		return report.Input{}, anoom.Input{}, &parse.Error{File: path, Offset: 0, Msg: "empty input"}
	}
	defer r.progress(in)()
	format := Detect(head)
	if f := byFormat[format]; f != nil && f.postmortem != nil {
		return f.postmortem(r, in, head, format)
	}
	return postmortemLog(r, in, head, format)
}
