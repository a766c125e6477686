package report

import (
	"fmt"
	"io"
	"strings"
)

// writeDiffTable renders the diff for people: a line per site that
// changed (every site with Options.ShowSame), its stack when it has more
// than one frame, then the totals and the compute-sanitizer summaries.
func writeDiffTable(w io.Writer, d *DiffReport, opt Options) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "gpuleak diff: %s -> %s\n", clean(d.Base), clean(d.New))
	for _, wn := range d.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", clean(wn))
	}
	shown := 0
	for _, e := range d.Entries {
		if e.Status == StatusSame && !opt.ShowSame {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(ew)
		}
		shown++
		dev := ""
		switch {
		case e.DeviceType != "" && e.Device != nil:
			dev = fmt.Sprintf(" [%s device %d]", e.DeviceType, *e.Device)
		case e.DeviceType != "":
			dev = " [" + e.DeviceType + "]"
		case e.Device != nil:
			dev = fmt.Sprintf(" [device %d]", *e.Device)
		}
		if e.Allocator != "" {
			dev += " [" + e.Allocator + " memory]"
		}
		fmt.Fprintf(ew, "%-6s %-13s %s%s\n", e.Status, e.Kind, clean(e.Site), dev)
		fmt.Fprintf(ew, "       %s\n", changeLine(e))
		if len(e.Stack) > 1 {
			// Sites differ by their whole stack, not only their frame.
			fmt.Fprintf(ew, "       stack: %s\n", shownStack(e.Stack))
		}
		if len(e.BeforeStack) > 0 {
			fmt.Fprintf(ew, "       in BASE: %s\n", shownStack(e.BeforeStack))
		}
		if e.Differs != "" {
			fmt.Fprintf(ew, "       differs from the entry shown the same by its %s\n", clean(e.Differs))
		}
		if e.Note != "" {
			fmt.Fprintf(ew, "       note: %s\n", clean(e.Note))
		}
	}
	if shown == 0 && len(d.Entries) == 0 {
		fmt.Fprintln(ew, "\nNeither run holds memory at a call site.")
	} else if shown == 0 {
		fmt.Fprintln(ew, "\nNo site changed.")
	}
	t := d.Totals
	fmt.Fprintf(ew, "\n%d new, %d grown, %d shrunk, %d fixed, %d same%s; held %s -> %s\n",
		t[StatusNew].Sites, t[StatusGrown].Sites, t[StatusShrunk].Sites, t[StatusFixed].Sites, t[StatusSame].Sites, otherStatuses(t),
		IBytes(t["all"].BeforeBytes), IBytes(t["all"].AfterBytes))
	if d.LeakSummaryBefore != nil || d.LeakSummaryAfter != nil {
		fmt.Fprintf(ew, "compute-sanitizer summaries: leaked %s -> %s, errors %s -> %s\n",
			summaryBytes(d.LeakSummaryBefore), summaryBytes(d.LeakSummaryAfter),
			summaryErrors(d.LeakSummaryBefore), summaryErrors(d.LeakSummaryAfter))
		if d.LeakSummaryStatus != "" {
			fmt.Fprintf(ew, "by the summaries, the leak is %s\n", d.LeakSummaryStatus)
		}
	}
	return ew.err
}

// shownStack is a stack's first frames, innermost first.
func shownStack(stack []string) string {
	st := stack[:min(len(stack), shownStackFrames)]
	more := ""
	if len(stack) > shownStackFrames {
		more = " < ..."
	}
	return clean(strings.Join(st, " < ")) + more
}

func changeLine(e DiffEntry) string {
	s := bytesIn(e.BeforeBytes, e.BeforeCount) + " -> " + bytesIn(e.AfterBytes, e.AfterCount)
	if e.Kind == KindTrend {
		// An NVML series holds no allocations: its bytes are its used
		// memory (the last sample's, or a released run's peak).
		s = seriesIn(e.BeforeBytes, e.BeforeCount, e.BeforeClass) + " -> " + seriesIn(e.AfterBytes, e.AfterCount, e.AfterClass)
	} else if e.BeforeBytes == 0 && e.AfterBytes == 0 {
		s = fmt.Sprintf("%d -> %d records", e.BeforeCount, e.AfterCount)
	}
	if e.DeltaPercent != nil && e.DeltaBytes != 0 {
		if p := *e.DeltaPercent; p > -0.05 && p < 0.05 {
			// "+0.0%" beside a change: the bytes say how much.
			s += fmt.Sprintf(" (%s, under 0.1%%)", signedBytes(float64(e.DeltaBytes)))
		} else {
			s += fmt.Sprintf(" (%+.1f%%)", p)
		}
	}
	return s
}

func summaryBytes(s *LeakSummary) string {
	if s == nil || s.Bytes == nil {
		return "(no LEAK SUMMARY)"
	}
	b := fmt.Sprintf("%s in %s", IBytes(*s.Bytes), plural(int(deref(s.Allocations)), "allocation", "allocations"))
	if s.Runs > 1 {
		b += fmt.Sprintf(" (added over %d runs)", s.Runs)
	}
	return b
}

func summaryErrors(s *LeakSummary) string {
	if s == nil || s.Errors == nil {
		return "(no ERROR SUMMARY)"
	}
	return fmt.Sprint(*s.Errors)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// bytesIn is "12 MiB in 12 allocations"; bytes held in no counted
// allocation (a memory timeline's category, whose count is unknown) are
// the bytes alone, never "in 0 allocations".
func bytesIn(bytes int64, count int) string {
	if count == 0 && bytes != 0 {
		return IBytes(bytes)
	}
	return fmt.Sprintf("%s in %s", IBytes(bytes), plural(count, "allocation", "allocations"))
}

// seriesIn is an NVML series' side of a diff line: "used 11 GiB (1
// series, step)"; "none" for the run without it, and the class left out
// where the run's baseline does not record it.
func seriesIn(bytes int64, count int, class string) string {
	if count == 0 && bytes == 0 {
		return "none"
	}
	in := plural(max(count, 1), "series", "series")
	if class != "" {
		in += ", " + class
	}
	return fmt.Sprintf("used %s (%s)", IBytes(bytes), in)
}
