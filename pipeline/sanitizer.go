package pipeline

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	ansanitizer "github.com/gpuleak/gpuleak/analyze/sanitizer"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// The compute-sanitizer family: --leak-check full reports, text logs (any
// --prefix, cuda-memcheck too) and --xml --save files.
func init() {
	register(&family{
		name:    "compute-sanitizer",
		order:   40,
		formats: []parse.Format{sanitizer.FormatText, sanitizer.FormatXML},
		sniff: func(head []byte) parse.Format {
			if f, ok := sanitizer.Sniff(head); ok {
				return f
			}
			return parse.FormatUnknown
		},
		analyze: func(r *runner, in *parse.Input, head []byte, f parse.Format) (report.Input, []report.Finding, error) {
			return analyzeSanitizer(r, in, head, f)
		},
		tables: func(_ *Options, in *parse.Input, f parse.Format, emit Emit) error {
			var r *sanitizer.Reader
			raw, _ := upToCut(in) // as analyzeSanitizer: the analysis marks it read in part
			if f == sanitizer.FormatXML {
				r = sanitizer.NewXMLReader(raw, in.Name)
			} else {
				r = sanitizer.NewReader(raw, in.Name)
			}
			return drain(r, func() string { return "sanitizer_" + r.Table().String() }, emit)
		},
	})
}

// analyzeSanitizer streams a compute-sanitizer report (text or XML)
// through the sanitizer analysis. Its tool errors are added to
// r.toolErrors, for the report's errors section. head is the input's
// first bytes: a log that checked nothing is explained by the tool's own
// error line there, when it has one.
func analyzeSanitizer(r *runner, in *parse.Input, head []byte, format parse.Format) (report.Input, []report.Finding, error) {
	// Batches after the first few reuse the buffers of those released
	// before them: no Arrow garbage per record for the collector. The
	// analysis copies what it keeps out of them. Batches of 8192 rows
	// (about 800 leak records of 10 frames) fit in the pool whole; batches
	// of 65536 frames did not, and held ~10 MiB each.
	mem := sanitizer.WithAllocator(parse.NewRecyclingAllocator(8 << 20))
	batch := sanitizer.WithBatchSize(8192)
	var sr *sanitizer.Reader
	var program *programOOM
	// A compressed report is read up to where its gzip stream is cut
	// short, as a report cut short uncompressed is (its last record
	// dropped, its missing summary warned about), and marked read in part.
	raw, cut := upToCut(in)
	if format == sanitizer.FormatXML {
		sr = sanitizer.NewXMLReader(raw, in.Name, mem, batch)
	} else {
		program = startProgramOOM(in.Name)
		defer program.stop()
		sr = sanitizer.NewReader(raw, in.Name, mem, batch, sanitizer.WithProgramOutput(program))
	}
	defer sr.Release()
	a := ansanitizer.NewAnalyzer(ansanitizer.Options{Filter: r.o.Filter, Suppressions: r.o.Suppressions})
	for sr.Next() {
		if err := a.Add(sr.Table(), sr.RecordBatch()); err != nil {
			return report.Input{}, nil, err
		}
	}
	if err := sr.Err(); err != nil {
		return report.Input{}, nil, err
	}
	res := a.Finalize()
	// An OOM message of the program's, amid the tool's lines (a PyTorch
	// script that ran out of memory under the tool): an OOM finding, from
	// the postmortem of all inputs, as for a log.
	var text *anoom.TextResult
	var oomWarnings []string
	if program != nil {
		if t, meta := program.result(); t != nil && (len(t.Messages) > 0 || len(t.Stats) > 0) {
			text, oomWarnings = t, meta.Warnings.Strings()
		} else if meta != nil {
			// No OOM, but out-of-memory errors that are not GPU OOMs
			// (TensorFlow's INFO probes, host memory): say why they are
			// not findings, as for a log read alone.
			oomWarnings = meta.NotOOMs.Strings()
		}
	}
	at := ""
	if res.ToolFailureLine > 0 {
		at = fmt.Sprintf(": line %d", res.ToolFailureLine)
	}
	checkedNothing := res.ToolFailure != "" && res.Records == 0
	if checkedNothing && text == nil {
		// Nothing was checked, or nothing that was is in the log, and the
		// program's output holds no OOM: reporting "no findings" would
		// read as a clean run. Records read before the failure (API
		// errors of a process that then crashed) are reported, with the
		// warnings of the run.
		do := "fix what the message says (the tool's setup, or a program that ended before using CUDA) and rerun it"
		if _, _, te := findToolError([]byte(res.ToolFailure)); te != nil {
			do = strings.TrimSuffix(te.Means, ", so nothing was checked") + "; " + te.Do
		}
		return report.Input{}, nil, &InputError{Err: fmt.Errorf("%s%s: the tool failed (%q) and reported no results: nothing was checked, so the analysis is impossible (this is not a clean run); %s",
			in.Name, at, res.ToolFailure, do)}
	}
	// A text log that ends before any run's summary and holds no record
	// (the job killed, the upload stopped, before the process exited):
	// the leak check, which runs at exit, printed nothing, and whatever
	// the tool found is not in the log. No finding of its would read as a
	// clean run. (An XML report has no summary: one of no record is a
	// clean run; one cut short is an error of the reader.)
	unfinished := format != sanitizer.FormatXML && res.ToolFailure == "" && res.Records == 0 && !anySummary(res.Runs)
	if unfinished && text == nil {
		// The tool said why in a line of its own, which it does not
		// count as a failure ("--xml was enabled but no save location
		// was specified"): say what it means.
		if err := toolErrorAt(in.Name, head); err != nil {
			return report.Input{}, nil, err
		}
		return report.Input{}, nil, &InputError{Err: fmt.Errorf("%s: the log ends before compute-sanitizer's ERROR SUMMARY and holds no record: the tool did not finish (the process was killed, or the log was cut short), so nothing it checked is in the log (the leak check runs when the process exits); this is not a clean run: give the whole log, or rerun to the end",
			in.Name)}
	}
	if text != nil {
		r.oom.add(anoom.Input{Path: in.Name, Format: string(textFormat(pytorchtext.FormatOOMMessage, text)), Text: text})
	}
	rin, fs, errs := report.FromSanitizer(in.Name, string(format), append(sr.Metadata().Warnings.Strings(), oomWarnings...), res)
	if format != sanitizer.FormatXML && res.Leaks == 0 && !anyLeakSummary(res.Runs) {
		// An XML report has no summary: one without a leak record is
		// taken as a clean leak check, the text log's summary is the
		// evidence one ran.
		rin.LeaksUnjudged = "no run in the log ran the leak check: it has no LEAK SUMMARY and no leak record, which compute-sanitizer prints only with --leak-check full, when the process exits (a run that ended early, or a tool other than memcheck, prints neither)"
	}
	switch {
	case checkedNothing:
		// The program's OOM is reported (a crash the tool did not follow
		// through: "No CUDA-MEMCHECK results found"), but the tool's own
		// checks gave nothing: no finding of theirs means nothing.
		where := ""
		if res.ToolFailureLine > 0 {
			where = fmt.Sprintf(" at line %d", res.ToolFailureLine)
		}
		rin.Warnings = append(rin.Warnings, fmt.Sprintf("the tool failed (%q%s) and reported no results: the sanitizer checked nothing that is in the log (no leak check ran, no record was printed), which is not a clean run; only the program's out-of-memory message is reported", res.ToolFailure, where))
	case res.ToolFailure != "" && !failureExplained(res):
		rin.Warnings = append(rin.Warnings, fmt.Sprintf("the tool reported a failure of its own (%q): what follows it was not checked; the findings may be incomplete", res.ToolFailure))
	}
	r.toolErrors = append(r.toolErrors, errs...)
	return markCut(rin, cut), fs, nil
}

// anySummary reports whether a run of the log printed its ERROR SUMMARY
// or LEAK SUMMARY.
func anySummary(runs []ansanitizer.Run) bool {
	for _, r := range runs {
		if r.HasErrorSummary || r.HasLeakSummary {
			return true
		}
	}
	return false
}

// anyLeakSummary reports whether a run of the log printed its LEAK SUMMARY.
func anyLeakSummary(runs []ansanitizer.Run) bool {
	for _, r := range runs {
		if r.HasLeakSummary {
			return true
		}
	}
	return false
}

// failureExplained reports whether a run's warnings already say what the
// tool's failure left unchecked: a run that failed before its summary.
func failureExplained(res *ansanitizer.Result) bool {
	for _, r := range res.Runs {
		if r.Failure != "" && !r.HasErrorSummary {
			return true
		}
	}
	return false
}

// programOOM reads the program's output of a compute-sanitizer log as
// the sanitizer's reader hands it out (sanitizer.WithProgramOutput), with
// the OOM-text family's reader, in a goroutine: one pass over the input.
// The tool's lines come blanked, so the lines it names are the log's.
type programOOM struct {
	w    *bufio.Writer
	pw   *io.PipeWriter
	done chan struct{}
	text *anoom.TextResult
	meta *pytorchtext.Metadata
	err  error
}

// startProgramOOM starts reading; write the output to it, then call
// result (or stop, when the read failed).
func startProgramOOM(name string) *programOOM {
	pr, pw := io.Pipe()
	p := &programOOM{pw: pw, done: make(chan struct{}), w: bufio.NewWriterSize(pw, 64<<10)}
	go func() {
		defer close(p.done)
		p.text, p.meta, p.err = readOOMTextFrom(pr, name, pytorchtext.FormatOOMMessage)
		// A reader that stopped early (a line too long for it) must not
		// block the writer: what is left is read and dropped.
		_, _ = io.Copy(io.Discard, pr)
	}()
	return p
}

func (p *programOOM) Write(b []byte) (int, error) { return p.w.Write(b) }

// result ends the output and returns what the reader found: nil when it
// failed (the program's output is not the tool's report, whose analysis
// stands without it).
func (p *programOOM) result() (*anoom.TextResult, *pytorchtext.Metadata) {
	p.stop()
	if p.err != nil {
		return nil, nil
	}
	return p.text, p.meta
}

// stop ends the output and waits for the reader; calling it again does
// nothing.
func (p *programOOM) stop() {
	if p.w != nil {
		_ = p.w.Flush()
		_ = p.pw.Close()
		p.w = nil
		<-p.done
	}
}
