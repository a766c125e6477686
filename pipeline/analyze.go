package pipeline

import (
	"context"
	"fmt"
	"time"

	anrun "github.com/gpuleak/gpuleak/analyze/run"
	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// analyzeAll reads every input for gpuleak analyze, then makes the
// findings that span inputs (NVML logs judged together, one postmortem
// per OOM, snapshots joined with NVML processes), ranks them and applies
// --min-bytes and the suppressions.
func (r *runner) analyzeAll(ctx context.Context, paths []string) (*Result, error) {
	r.join.procs = anrun.NewProcessCollector()
	r.nvml = &nvmlRun{a: antrend.NewAnalyzer(r.o.NVML.Trend)}
	var findings []report.Finding
	err := r.each(ctx, paths, func(path string) (report.Input, error) {
		in, fs, err := r.analyzeFile(path)
		if err == nil {
			findings = append(findings, fs...)
		}
		return in, err
	})
	if err != nil {
		return nil, err
	}
	rep := r.rep
	// NVML logs of one GPU (a --query-gpu log and its --query-compute-apps
	// log) are judged together, as in gpuleak trend.
	findings = append(findings, r.nvml.finalize(rep.Inputs)...)
	// Out-of-memory errors and fragmentation, from all inputs together.
	_, ofs := r.oom.postmortem(rep.Inputs, r.o.Filter)
	findings = append(findings, ofs...)
	findings = append(findings, r.join.join(rep.Inputs)...)
	report.Rank(findings)
	kept := findings[:0]
	for _, f := range findings {
		if f.Bytes < r.o.MinBytes && f.Kind != report.KindOOM { // an OOM is never too small
			continue
		}
		kept = append(kept, f)
	}
	rep.BelowMinBytes = len(findings) - len(kept)
	kept, rep.Suppressed = report.Suppress(kept, r.o.Rules, time.Now())
	rep.Errors = r.toolErrors
	rep.Findings, rep.FindingsTotal = kept, len(kept)
	return &Result{Report: rep, Unread: r.unread.err(), Errors: r.unread.byPath}, nil
}

// analyzeFile reads one input, recognises its family and analyses it.
func (r *runner) analyzeFile(path string) (report.Input, []report.Finding, error) {
	in, head, err := r.open(path)
	if err != nil {
		return report.Input{}, nil, err
	}
	defer in.Close()
	if len(head) == 0 {
		msg := "empty input"
		if in.LeadingNULs > 0 {
			msg = fmt.Sprintf("empty input: only %d NUL bytes", in.LeadingNULs)
		}
		return report.Input{}, nil, &parse.Error{File: path, Offset: 0, Msg: msg}
	}
	defer r.progress(in)()
	format := r.o.detect(head)
	var rin report.Input
	var fs []report.Finding
	if f := byFormat[format]; f != nil {
		rin, fs, err = f.analyze(r, in, head, format)
	} else {
		rin, fs, err = analyzeUnclaimed(r, in, head)
	}
	if err != nil {
		return report.Input{Format: string(format)}, nil, in.Locate(err)
	}
	rin.Warnings = append(rin.Warnings, damageNotes(in)...)
	return rin, fs, nil
}
