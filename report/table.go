package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// FormatTable is aligned text for people, the default format. The table
// writer renders every kind of document: the analysis here, the
// postmortem (table_postmortem.go), the trend (table_trend.go) and the
// diff (table_diff.go).
const FormatTable Format = "table"

func init() {
	register(FormatTable, Writer{
		Order:      0,
		Analysis:   writeTable,
		Postmortem: writePostmortem,
		Trend:      writeTrendTable,
		Diff:       writeDiffTable,
	})
}

// writeTable renders the analysis for people: one line per input, the
// ranked findings as a table, then warnings. On a terminal the table has
// light borders; piped, it is plain aligned columns whose content does
// not change between runs on the same inputs.
func writeTable(w io.Writer, r *Report, opt Options) error {
	r = cleaned(r)
	ew := &errWriter{w: w}
	writeInputs(ew, r)
	if ew.err != nil {
		return ew.err
	}
	writeCILines(ew, r)
	if len(r.Findings) == 0 {
		fmt.Fprintf(ew, "\n%s\n", noFindingsHeadline(r))
		if l := undescribedLine(r); l != "" {
			fmt.Fprintln(ew, l)
		}
	} else {
		fmt.Fprintln(ew)
		if err := findingsTable(ew, r, opt); err != nil {
			return err
		}
		if left := r.FindingsTotal - len(r.Findings); left > 0 {
			fmt.Fprintf(ew, "... %s not shown (--top 0 shows all)\n", plural(left, "more finding", "more findings"))
		}
		fmt.Fprintln(ew)
		for i, f := range r.Findings {
			fmt.Fprintf(ew, "%d. %s\n", i+1, clean(f.Message))
			if len(f.Stack) > 1 {
				fmt.Fprintf(ew, "   stack: %s\n", clean(stackLine(f.Stack, 6)))
			}
			if f.Baseline != nil {
				fmt.Fprintf(ew, "   baseline: %s\n", findingBaselineLine(f))
			}
		}
	}
	writeStatsVerdicts(ew, r)
	if len(r.Errors) > 0 {
		writeToolErrors(ew, r)
	}
	writeWarnings(ew, r)
	return ew.err
}

// writeStatsVerdicts writes the verdict of each memory_stats() or
// memory_summary() set that has one, whole: the line of its input shows
// only its first words ("verdict: cannot tell"), and a set's verdict is
// no finding unless it is fragmentation.
func writeStatsVerdicts(w io.Writer, r *Report) {
	head := false
	for _, in := range r.Inputs {
		for _, s := range in.AllocatorStats {
			if s.Verdict == "" {
				continue
			}
			if !head {
				fmt.Fprintln(w, "\nAllocator statistics:")
				head = true
			}
			fmt.Fprintf(w, "  %s: %s\n", clean(statsWhere(in.Path, s)), clean(s.Verdict))
		}
	}
}

// writeInputs writes one line per input: its path and what it holds.
func writeInputs(w io.Writer, r *Report) {
	for _, in := range r.Inputs {
		fmt.Fprintf(w, "%s: %s\n", clean(in.Path), clean(describeInput(in)))
	}
}

// writeCILines says, in the table, how the run compares with --baseline
// and what --suppressions left out.
func writeCILines(w io.Writer, r *Report) {
	for _, s := range r.Suppressed {
		fmt.Fprintf(w, "%s\n", suppressedLine(s))
	}
	c := r.Baseline
	if c == nil {
		return
	}
	t := c.Totals
	fmt.Fprintf(w, "Compared with %s: %d new, %d grown, %d shrunk, %d fixed, %d same%s; %s left out as in the baseline\n",
		clean(c.Path), t[StatusNew].Sites, t[StatusGrown].Sites, t[StatusShrunk].Sites, t[StatusFixed].Sites, t[StatusSame].Sites, otherStatuses(t),
		plural(c.LeftOut, "finding", "findings"))
}

func findingsTable(w io.Writer, r *Report, opt Options) error {
	multiInput := len(r.Inputs) > 1
	header := []string{"#", "KIND", "DEVICE", "BYTES", "BLOCKS", "GROWTH", "SITE"}
	if multiInput {
		header = append(header, "INPUT")
	}
	right := tw.AlignRight
	left := tw.AlignLeft
	aligns := []tw.Align{right, left, right, right, right, right, left, left}[:len(header)]
	var rows [][]string
	assumed := assumedPeriods(r)
	byHost := severalHosts(r)
	for i, f := range r.Findings {
		dev := "-"
		if f.Device != nil {
			dev = fmt.Sprint(*f.Device)
			if f.DeviceType != "" {
				dev = f.DeviceType + ":" + dev
			}
		} else if f.DeviceType != "" {
			dev = f.DeviceType
		}
		row := []string{fmt.Sprint(i + 1), string(f.Kind), dev, bytesCell(f), blocksCell(f), growthCell(f), siteCell(f)}
		if f.Kind == KindTrend {
			gpu, growth, site := trendCells(f)
			if byHost && f.Host != "" {
				gpu = f.Host + " " + gpu // GPU 0 of one host is not GPU 0 of another
			}
			if in, ok := assumed[f.Path]; ok && f.Classification == string(trend.Growing) && f.SlopeBytesPerS != nil {
				growth = "+" + perSampleCell(*f.SlopeBytesPerS, *in.AssumedIntervalS, in.Format)
			}
			row = []string{fmt.Sprint(i + 1), string(f.Kind), gpu, IBytes(f.Bytes), "-", growth, site}
		}
		if multiInput {
			row = append(row, f.Path)
		}
		rows = append(rows, row)
	}
	return renderTable(w, header, aligns, rows, opt.Terminal)
}

// renderTable writes rows under a header as aligned columns, each cell
// cleaned (control characters escaped). On a terminal the table has light
// borders; piped, it is plain columns without the padding at line ends,
// so that its content does not change between runs on the same inputs.
func renderTable(w io.Writer, header []string, aligns []tw.Align, rows [][]string, terminal bool) error {
	rendition := tw.Rendition{
		Borders:  tw.BorderNone,
		Symbols:  tw.NewSymbols(tw.StyleNone),
		Settings: tw.Settings{Separators: tw.Separators{BetweenColumns: tw.On, BetweenRows: tw.Off}, Lines: tw.Lines{ShowHeaderLine: tw.Off}},
	}
	if terminal {
		rendition = tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)}
	}
	// Render into a buffer: piped output drops the padding at line ends.
	var buf bytes.Buffer
	defer func() {
		if terminal {
			w.Write(buf.Bytes())
			return
		}
		writeTrimmed(w, buf.String())
	}()
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(rendition)),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
				Alignment:  tw.CellAlignment{PerColumn: aligns},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{PerColumn: aligns},
			},
		}),
	)
	t.Header(header)
	for _, row := range rows {
		for i := range row {
			row[i] = clean(row[i])
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// growthCell shows a leak's rate, "none" for memory held without growing
// across the iterations measured, and "?" where the input cannot tell:
// memory no trace covers, or one that shows too few iterations to measure
// (no repeating step, a trace without stacks, fewer than 4 steps).
func growthCell(f Finding) string {
	g := f.Growth
	switch {
	case g == nil && fromLeakCheck(f):
		return "at exit"
	case g == nil && fromTimeline(f) && f.Kind == KindLeak:
		return "rising" // its rate is in the message, over the timeline's windows
	case f.Kind == KindOOM || f.Kind == KindFragmentation || f.Kind == KindPendingFree:
		return "-"
	case g == nil, f.Kind != KindLeak && g.Measured == 0:
		return "?"
	case f.Kind != KindLeak:
		return "none"
	case g.BytesPerSecond != nil:
		return "+" + IBytes(int64(*g.BytesPerSecond)) + "/s"
	}
	return fmt.Sprintf("%d kept", g.Kept)
}

// fromTimeline reports whether a finding is a memory timeline's category
// (export_memory_timeline), which counts no blocks and no iterations.
func fromTimeline(f Finding) bool { return strings.HasPrefix(f.Source, "pytorch-memory-timeline") }

// fromLeakCheck reports whether a finding comes from a leak check at exit
// (compute-sanitizer), where growth is not a question.
func fromLeakCheck(f Finding) bool { return strings.HasPrefix(f.Source, "compute-sanitizer") }

// siteCell is a finding's SITE cell: the call site, or for fragmentation
// where it was measured.
func siteCell(f Finding) string {
	if f.FragmentationDetail != nil {
		if f.FragmentationDetail.At == "end" {
			return "(free blocks at the end)"
		}
		return "(" + f.FragmentationDetail.At + ")"
	}
	if f.Kind == KindOOM && f.Site == (Frame{}) {
		return "(where it was asked is not known)"
	}
	if f.SiteUnknown != "" && f.Site == (Frame{}) {
		return "(site unknown)"
	}
	if f.PID != nil && f.Kind != KindTrend {
		// One process's of a merged profiler trace.
		return fmt.Sprintf("%s (process %d)", f.Site.String(), *f.PID)
	}
	return f.Site.String()
}

// bytesCell and blocksCell show "?" for an OOM whose memory no input gives.
// The oom row's BYTES is the request, the allocation that failed (what
// was allocated then is in the row's message and in JSON's bytes).
func bytesCell(f Finding) string {
	if f.OOMDetail != nil {
		if f.OOMDetail.RequestedBytes == nil {
			return "?"
		}
		return f.OOMDetail.cell("requested_bytes", *f.OOMDetail.RequestedBytes)
	}
	return IBytes(f.Bytes)
}

func blocksCell(f Finding) string {
	if f.OOMDetail != nil && f.OOMDetail.LiveBlocks == nil {
		return "?"
	}
	if fromTimeline(f) {
		return "-" // a memory timeline sums tensors by category: no blocks
	}
	return fmt.Sprint(f.Count)
}

// trendCells are a trend finding's cells in the findings table: the GPU,
// the growth column and the site column.
func trendCells(f Finding) (gpu, growth, site string) {
	gpu = "-"
	switch {
	case f.GPU != nil:
		gpu = fmt.Sprintf("gpu %d", *f.GPU)
	case f.GPUUUID != "":
		gpu = shortUUID(f.GPUUUID)
	}
	growth = f.Classification
	if f.Classification == string(trend.Growing) && f.SlopeBytesPerS != nil {
		growth = "+" + rate(*f.SlopeBytesPerS)
	}
	site = "whole GPU"
	if _, inst, ok := strings.Cut(f.GPUUUID, "/"); ok && strings.HasPrefix(f.GPUUUID, "GPU-") {
		site = "MIG instance " + inst
	}
	if f.GPUName != "" {
		site += " (" + f.GPUName + ")"
	}
	if f.PID != nil {
		site = fmt.Sprintf("pid %d", *f.PID)
		if f.Process != "" {
			site += " " + f.Process
		}
		if f.MIGGI != nil {
			p := MIGPlace{GI: *f.MIGGI, CI: -1}
			if f.MIGCI != nil {
				p.CI = *f.MIGCI
			}
			site += " (" + migName(p) + ")"
		}
	}
	return gpu, growth, site
}

// writeToolErrors renders the tool errors section of the table output.
func writeToolErrors(w io.Writer, r *Report) {
	fmt.Fprintln(w, "\nErrors reported by the tool (not leaks):")
	multi := len(r.Inputs) > 1
	for i, e := range r.Errors {
		in := ""
		if multi {
			in = " (" + e.Path + ")"
		}
		fmt.Fprintf(w, "%d. [%s] %s%s\n", i+1, e.Kind, clean(e.Message), clean(in))
		if len(e.Stack) > 1 {
			fmt.Fprintf(w, "   stack: %s\n", clean(stackLine(e.Stack, 6)))
		}
	}
}

// writeWarnings writes the inputs' warnings, if any, under a heading.
func writeWarnings(w io.Writer, r *Report) {
	var warned bool
	for _, in := range r.Inputs {
		for _, msg := range in.Warnings {
			if !warned {
				fmt.Fprintln(w, "\nWarnings:")
				warned = true
			}
			fmt.Fprintf(w, "  %s: %s\n", clean(in.Path), clean(msg))
		}
	}
}

// errWriter keeps the first write error so a long rendering checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// writeTrimmed writes s to w without the spaces a table pads its lines'
// ends with (piped output stays plain and stable).
func writeTrimmed(w io.Writer, s string) {
	for _, line := range strings.SplitAfter(s, "\n") {
		trimmed := strings.TrimRight(line, " \n")
		if strings.HasSuffix(line, "\n") {
			trimmed += "\n"
		}
		io.WriteString(w, trimmed)
	}
}
