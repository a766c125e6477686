package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteTrend renders the report of "gpuleak trend": the JSON document as
// Write does, or for people one line per input, a compact table with a
// row per GPU and per process in the order of the findings, on a terminal
// a sparkline of each GPU's used memory, then the line to act on of each
// finding and the warnings.
func WriteTrend(w io.Writer, r *Report, f Format, opt Options) error {
	switch f {
	case FormatJSON:
		return writeJSON(w, r)
	case FormatTable:
	default:
		return fmt.Errorf("unknown format %q", f)
	}
	r = cleaned(r)
	ew := &errWriter{w: w}
	writeInputs(ew, r)
	if len(r.Findings) == 0 {
		fmt.Fprintln(ew, "\nNo memory samples.")
	} else {
		fmt.Fprintln(ew)
		if err := trendTable(ew, r, opt); err != nil {
			return err
		}
		if opt.Terminal {
			sparklines(ew, r)
		}
		fmt.Fprintln(ew)
		for i, f := range r.Findings {
			fmt.Fprintf(ew, "%d. %s\n", i+1, clean(f.Message))
		}
	}
	writeWarnings(ew, r)
	return ew.err
}

func trendTable(w io.Writer, r *Report, opt Options) error {
	multi := len(r.Inputs) > 1
	header := []string{"#", "GPU", "PID", "PROCESS", "CLASS", "SAMPLES", "END", "PEAK", "SLOPE", "R²", "TIME TO OOM"}
	if multi {
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
	if !opt.Terminal {
		// Render into a buffer: piped output drops the padding at line ends.
		var buf bytes.Buffer
		out := w
		defer func() { writeTrimmed(out, buf.String()) }()
		w = &buf
	}
	l, rt := tw.AlignLeft, tw.AlignRight
	aligns := []tw.Align{rt, rt, rt, l, l, rt, rt, rt, rt, rt, l, l}[:len(header)]
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(rendition)),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{Formatting: tw.CellFormatting{AutoFormat: tw.Off}, Alignment: tw.CellAlignment{PerColumn: aligns}},
			Row:    tw.CellConfig{Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone}, Alignment: tw.CellAlignment{PerColumn: aligns}},
		}),
	)
	t.Header(header)
	for i, f := range r.Findings {
		if f.Kind != KindTrend {
			continue
		}
		gpu, _, _ := trendCells(f)
		gpu = strings.TrimPrefix(gpu, "gpu ")
		pid, proc := "-", "-"
		if f.PID != nil {
			pid = fmt.Sprint(*f.PID)
			if f.Process != "" {
				proc = f.Process
			}
		}
		// A slope and its R² describe a trend only when there is one: beside
		// "flat" or "step" they would read as growth.
		slope, r2 := "-", "-"
		if f.Classification == string(trend.Growing) && f.SlopeBytesPerS != nil {
			slope = rate(*f.SlopeBytesPerS)
			if *f.SlopeBytesPerS > 0 {
				slope = "+" + slope
			}
		}
		if f.Classification == string(trend.Growing) && f.R2 != nil {
			r2 = fmt.Sprintf("%.2f", *f.R2)
		}
		oom := "-"
		if f.TimeToOOMS != nil && len(f.TimeToOOMRangeS) == 2 {
			oom = oomRange(*f.TimeToOOMS, f.TimeToOOMRangeS[0], f.TimeToOOMRangeS[1])
		}
		peak := "-"
		if f.PeakBytes != nil {
			peak = IBytes(*f.PeakBytes)
		}
		end := f.Bytes
		if f.LastBytes != nil {
			end = *f.LastBytes
		}
		row := []string{fmt.Sprint(i + 1), gpu, pid, proc, f.Classification, fmt.Sprint(f.Samples), IBytes(end), peak, slope, r2, oom}
		if multi {
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

// sparkBlocks are the eight heights of a sparkline.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws values scaled to top.
func sparkline(values []int64, top int64) string {
	var b strings.Builder
	for _, v := range values {
		i := 0
		if top > 0 && v > 0 {
			i = int(int64(len(sparkBlocks)-1) * v / top)
			i = max(0, min(i, len(sparkBlocks)-1))
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}

// sparklines draws each GPU's used memory over its log.
func sparklines(w io.Writer, r *Report) {
	first := true
	for _, f := range r.Findings {
		if f.Kind != KindTrend || f.PID != nil || len(f.ProfileBytes) == 0 || f.PeakBytes == nil {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		gpu, _, _ := trendCells(f)
		of := ""
		if f.CapacityBytes != nil {
			of = " of " + IBytes(*f.CapacityBytes)
		}
		fmt.Fprintf(w, "%-8s %s  peak %s%s  (%s)\n", clean(gpu), sparkline(f.ProfileBytes, *f.PeakBytes), IBytes(*f.PeakBytes), of, clean(f.Path))
	}
}
