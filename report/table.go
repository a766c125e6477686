package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// writeTable renders r for people: one line per input, the ranked findings
// as a table, then warnings. On a terminal the table has light borders;
// piped, it is plain aligned columns whose content does not change between
// runs on the same inputs.
func writeTable(w io.Writer, r *Report, opt Options) error {
	r = cleaned(r)
	ew := &errWriter{w: w}
	writeInputs(ew, r)
	if ew.err != nil {
		return ew.err
	}
	writeCILines(ew, r)
	if len(r.Findings) == 0 {
		if r.BelowMinBytes > 0 {
			fmt.Fprintf(ew, "\nNo findings as large as --min-bytes asks (%d smaller left out).\n", r.BelowMinBytes)
		} else {
			fmt.Fprintln(ew, "\nNo findings.")
		}
	} else {
		fmt.Fprintln(ew)
		if err := findingsTable(ew, r, opt); err != nil {
			return err
		}
		if left := r.FindingsTotal - len(r.Findings); left > 0 {
			fmt.Fprintf(ew, "... %d more finding(s) not shown (--top 0 shows all)\n", left)
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
	if len(r.Errors) > 0 {
		writeToolErrors(ew, r)
	}
	writeWarnings(ew, r)
	return ew.err
}

// writeInputs writes one line per input: its path and what it holds.
func writeInputs(w io.Writer, r *Report) {
	for _, in := range r.Inputs {
		fmt.Fprintf(w, "%s: %s\n", clean(in.Path), clean(describeInput(in)))
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

func findingsTable(w io.Writer, r *Report, opt Options) error {
	multiInput := len(r.Inputs) > 1
	header := []string{"#", "KIND", "DEVICE", "BYTES", "BLOCKS", "GROWTH", "SITE"}
	if multiInput {
		header = append(header, "INPUT")
	}
	rendition := tw.Rendition{
		Borders:  tw.BorderNone,
		Symbols:  tw.NewSymbols(tw.StyleNone),
		Settings: tw.Settings{Separators: tw.Separators{BetweenColumns: tw.On, BetweenRows: tw.Off}, Lines: tw.Lines{ShowHeaderLine: tw.Off}},
	}
	if opt.Terminal {
		rendition = tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)}
	}
	// Render into a buffer: piped output drops the padding at line ends.
	var buf bytes.Buffer
	defer func() {
		if opt.Terminal {
			w.Write(buf.Bytes())
			return
		}
		writeTrimmed(w, buf.String())
	}()
	right := tw.AlignRight
	left := tw.AlignLeft
	aligns := []tw.Align{right, left, right, right, right, right, left, left}[:len(header)]
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
	for i, f := range r.Findings {
		dev := "-"
		if f.Device != nil {
			dev = fmt.Sprint(*f.Device)
		}
		row := []string{fmt.Sprint(i + 1), string(f.Kind), dev, bytesCell(f), blocksCell(f), growthCell(f), siteCell(f)}
		if f.Kind == KindTrend {
			gpu, growth, site := trendCells(f)
			row = []string{fmt.Sprint(i + 1), string(f.Kind), gpu, IBytes(f.Bytes), "-", growth, site}
		}
		if multiInput {
			row = append(row, f.Path)
		}
		for i := range row {
			row[i] = clean(row[i])
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// growthCell shows a leak's rate, "none" for memory held without growing,
// and "?" where the input cannot tell.
func growthCell(f Finding) string {
	g := f.Growth
	switch {
	case g == nil && fromLeakCheck(f):
		return "at exit"
	case f.Kind == KindOOM || f.Kind == KindFragmentation || f.Kind == KindPendingFree:
		return "-"
	case g == nil:
		return "?"
	case f.Kind != KindLeak:
		return "none"
	case g.BytesPerSecond != nil:
		return "+" + IBytes(int64(*g.BytesPerSecond)) + "/s"
	}
	return fmt.Sprintf("%d kept", g.Kept)
}

func describeInput(in Input) string {
	if in.Error != "" {
		return "NOT READ: " + in.Error
	}
	parts := []string{in.Format}
	if in.Samples != nil {
		parts[0] += ", " + describeLog(in)
	}
	for _, d := range in.Devices {
		s := fmt.Sprintf("device %d: %s active in %s, %s reserved in %s",
			d.Device, IBytes(d.ActiveBytes), plural(d.ActiveBlocks, "block", "blocks"), IBytes(d.ReservedBytes), plural(d.Segments, "segment", "segments"))
		if d.PendingFreeBlocks > 0 {
			s += fmt.Sprintf(", %s pending free in %s", IBytes(d.PendingFreeBytes), plural(d.PendingFreeBlocks, "block", "blocks"))
		}
		if d.TraceEntries > 0 {
			entries := " trace entries"
			if d.TraceEntries == 1 {
				entries = " trace entry"
			}
			s += ", " + humanize.Comma(d.TraceEntries) + entries
			if d.TraceStartUs != nil && d.TraceEndUs != nil {
				if w := *d.TraceEndUs - *d.TraceStartUs; w > 0 {
					s += " over " + spanString(*d.TraceStartUs, *d.TraceEndUs)
				}
			}
			if d.Iterations >= 2 {
				s += fmt.Sprintf(", %d iterations", d.Iterations)
				if d.IterationSite != nil {
					s += " (starts at " + d.IterationSite.String() + ")"
				}
			}
		}
		parts = append(parts, s)
	}
	parts = append(parts, describeAllocatorStats(in)...)
	return strings.Join(parts, "; ")
}

// spanString renders the time from startUs to endUs (µs since the Unix
// epoch) with the precision its length needs ("52 ms", "4.7 ms",
// "17.5 s", "3m05s"), and the wall-clock start in UTC when the times are
// dates (a trace's clock may also start at 0).
func spanString(startUs, endUs int64) string {
	d := endUs - startUs
	var out string
	switch {
	case d < 1000:
		out = fmt.Sprintf("%d µs", d)
	case d < 10_000:
		out = fmt.Sprintf("%.1f ms", float64(d)/1e3)
	case d < 1_000_000:
		out = fmt.Sprintf("%.0f ms", float64(d)/1e3)
	case d < 10_000_000:
		out = fmt.Sprintf("%.2f s", float64(d)/1e6)
	case d < 60_000_000:
		out = fmt.Sprintf("%.1f s", float64(d)/1e6)
	default:
		out = (time.Duration(d) * time.Microsecond).Round(time.Second).String()
	}
	const year2000Us = 946684800_000_000
	if startUs >= year2000Us {
		out += ", from " + time.UnixMicro(startUs).UTC().Format("2006-01-02 15:04:05.000") + " UTC"
	}
	return out
}

// IBytes formats a size in bytes with IEC units: "512 B", "1.5 KiB",
// "80.0 MiB", "4.19 GiB".
func IBytes(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := humanize.IBytes(uint64(n))
	if neg {
		s = "-" + s
	}
	return s
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

// stackLine renders up to n frames, innermost first: "f (a.py:1) < g (b.py:2)".
func stackLine(st []Frame, n int) string {
	parts := make([]string, 0, n+1)
	for i, f := range st {
		if i == n {
			parts = append(parts, fmt.Sprintf("... %d more", len(st)-n))
			break
		}
		parts = append(parts, f.String())
	}
	return strings.Join(parts, " < ")
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
