package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	antrend "github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/report"
)

// trendAll reads every input for gpuleak trend as an NVML sample log and
// judges them together; any input that cannot be read stops the run.
func (r *runner) trendAll(ctx context.Context, paths []string) (*Result, error) {
	r.nvml = &nvmlRun{a: antrend.NewAnalyzer(r.o.NVML.Trend)}
	// An input that cannot be read costs only itself, as for analyze: its
	// samples read before the error are dropped (none of it is judged),
	// it is listed with its error in command-line order, and the others
	// are judged together. A single input, or every input, failing gives
	// no report.
	var inputs []report.TrendInput
	failed := map[int]report.Input{} // by position among paths
	for i, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ti, err := r.trendFile(path)
		if err != nil {
			if len(paths) == 1 {
				return nil, &InputError{Err: err}
			}
			r.nvml.a.Drop(path)
			failed[i] = r.unread.add(path, ti.Format, err)
			continue
		}
		inputs = append(inputs, ti)
	}
	if r.unread.n == len(paths) {
		return nil, r.unread.err()
	}
	ins, findings := report.FromTrends(inputs, r.nvml.a.Finalize())
	all := make([]report.Input, 0, len(paths))
	for i := range paths {
		if in, ok := failed[i]; ok {
			all = append(all, in)
			continue
		}
		all, ins = append(all, ins[0]), ins[1:]
	}
	r.rep.Inputs, r.rep.Findings, r.rep.FindingsTotal = all, findings, len(findings)
	return &Result{Report: r.rep, Unread: r.unread.err(), Errors: r.unread.byPath}, nil
}

// trendFile reads one input into the run's trend analyzer: a family with
// a trend function of its own decides (a snapshot is refused); every
// other input is read as NVML samples, whose reader says whether it is.
func (r *runner) trendFile(path string) (report.TrendInput, error) {
	in, head, err := r.open(path)
	if err != nil {
		return report.TrendInput{}, err
	}
	defer in.Close()
	format := Detect(head)
	var ti report.TrendInput
	if f := byFormat[format]; f != nil && f.trend != nil {
		ti, err = f.trend(r, in, format)
	} else {
		ti, err = trendSamples(r, in)
	}
	if err != nil {
		// What the content was recognised as, for the unread input's
		// entry (a snapshot refused, a log cut inside a row).
		detected := r.o.detect(head)
		if errors.Is(err, parse.ErrNotMine) {
			err = notNVML(in.Name, head, detected, err)
		}
		return report.TrendInput{Format: string(detected)}, in.Locate(err)
	}
	ti.Warnings = append(ti.Warnings, damageNotes(in)...)
	return ti, nil
}

// notNVML is the error for an input the NVML reader found none of its
// layouts in, head its start and f what it was recognised as: an input of
// another family is named with the command that reads it, a tool's error
// saved in place of its output (nvidia-smi's "NVIDIA-SMI has failed ...")
// nvidia-smi's XML and a -q text excerpt without its GPU line are named
// as analyze names them, rather than by the
// NVML reader's list of its layouts (and its hint about --fields, which
// misleads for all of them).
func notNVML(name string, head []byte, f parse.Format, err error) error {
	fam := byFormat[f]
	if fam == nil {
		if te := toolErrorIn(name, head); te != nil {
			return te
		}
		if xe := smiXMLError(name, head); xe != nil {
			return xe
		}
		if n, msg, ok := nvml.QTextExcerpt(head); ok {
			return &parse.Error{File: name, Offset: -1, Line: n, Err: parse.ErrUnknownFormat, Msg: msg}
		}
		if n, msg, ok := nvml.XMLExcerpt(head); ok {
			return &parse.Error{File: name, Offset: -1, Line: n, Err: parse.ErrUnknownFormat, Msg: msg}
		}
		if pe := printoutError(name, head); pe != nil {
			return pe
		}
		var pe *parse.Error
		if hint := toolErrorHint(head); hint != "" && errors.As(err, &pe) {
			pe.Msg += hint
		}
		return err
	}
	if fam.name == "nvml" || fam.trend != nil {
		return err // the NVML reader's, or the family's own words
	}
	use := "gpuleak analyze"
	if fam.name == "pytorch-text" {
		use = "gpuleak oom or gpuleak analyze"
	}
	if f == pytorchtext.FormatOOMMessage {
		// The sniff found an OOM phrase: whose messages the input's
		// start holds names it (a TensorFlow log is no PyTorch one).
		if res, _, rerr := readOOMTextFrom(bytes.NewReader(head), name, f); rerr == nil {
			f = textFormat(f, res)
		}
	}
	return &parse.Error{File: name, Offset: 0, Err: parse.ErrNotMine,
		Msg: fmt.Sprintf("%s %s input (by its content), not an NVML sample log: use %s", article(string(f)), f, use)}
}

// article is the indefinite article before a format's name ("an
// oom-log", "a pytorch-snapshot").
func article(name string) string {
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an"
	}
	return "a"
}
