package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/internal/sizes"
)

// The words the converters' messages and the text writers (table,
// markdown, junit) share: sizes, counts, stacks, and the one line that
// describes an input.

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

// FromTo renders the two ends of a change, sizes in bytes, with the
// decimals that tell them apart when they differ (sizes.Of, in the larger
// one's unit): a rise from 20500 to 20990 MiB reads "from 20.0 GiB to
// 20.5 GiB", not "from 20 GiB to 20 GiB"; a fall likewise. Every message
// that names two sizes of one quantity side by side (an NVML step, a
// snapshot site's growth, a memory timeline's, a gate's before and
// after) renders them here.
func FromTo(from, to int64) (string, string) {
	if from <= to {
		return sizes.Of(from, to, IBytes)
	}
	t, f := sizes.Of(to, from, IBytes)
	return f, t
}

// plural counts n things: "1 block", "2 blocks".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// kindCount counts n findings of kind k in English: a kind that is a
// noun counts itself ("1 leak", "2 leaks", "2 OOMs"), trend findings are
// NVML series ("series" is its own plural), and a kind that is an
// adjective counts findings ("2 retained findings").
func kindCount(k Kind, n int) string {
	switch k {
	case KindLeak:
		return plural(n, "leak", "leaks")
	case KindOOM:
		return plural(n, "OOM", "OOMs")
	case KindTrend:
		return plural(n, "NVML series", "NVML series")
	}
	return plural(n, string(k)+" finding", string(k)+" findings")
}

// ReadInPart says what of an input was skipped as unreadable ("3 lines
// could not be read and were skipped (lines 12, 40, 41)"); "" when the
// input was read whole.
func ReadInPart(in Input) string {
	if in.SkippedLines == 0 {
		return in.Cut
	}
	if in.Cut != "" {
		in.Cut = "; " + in.Cut
	}
	at := make([]string, len(in.SkippedAt))
	for i, n := range in.SkippedAt {
		at[i] = fmt.Sprint(n)
	}
	where := ""
	switch {
	case len(at) == 1:
		where = " (line " + at[0] + ")"
	case len(at) > 1:
		where = " (lines " + strings.Join(at, ", ")
		if in.SkippedLines > len(at) && len(at) >= 10 {
			where += ", ..."
		}
		where += ")"
	}
	if in.SkippedLines == 1 {
		return "1 line could not be read and was skipped" + where + in.Cut
	}
	return fmt.Sprintf("%d lines could not be read and were skipped%s%s", in.SkippedLines, where, in.Cut)
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

// printersText says whose out-of-memory messages a log holds
// (Input.OOMPrinters): "out-of-memory messages of TensorFlow, NCCL". A
// message not read ("unparsed") has no known printer: it is said apart,
// not named as one.
func printersText(printers []string) string {
	named := slices.DeleteFunc(slices.Clone(printers), func(p string) bool { return p == "unparsed" })
	switch {
	case len(named) == len(printers):
		return "out-of-memory messages of " + strings.Join(named, ", ")
	case len(named) == 0:
		return "out-of-memory messages in a form not read"
	}
	return "out-of-memory messages of " + strings.Join(named, ", ") + ", and others in a form not read"
}

// describeInput is the line that says what an input held: its format,
// then its samples, devices and allocator statistics; why it was not read.
func describeInput(in Input) string {
	if in.Error != "" {
		return "NOT READ: " + in.Error
	}
	parts := []string{in.Format}
	if in.Format == "oom-log" && len(in.OOMPrinters) > 0 {
		// The label is neutral: say whose messages it holds.
		parts[0] += " (" + printersText(in.OOMPrinters) + ")"
	}
	if in.Format == "pytorch-oom-message" && len(in.OOMPrinters) == 0 {
		// No message: say what it holds, not PyTorch's messages.
		parts[0] = noOOMLabel(in)
	}
	if in.Samples != nil {
		parts[0] += ", " + describeLog(in)
	}
	if note := ReadInPart(in); note != "" {
		parts[0] += "; READ IN PART: " + note
	}
	for _, d := range in.Devices {
		s := fmt.Sprintf("%s: %s active in %s, %s reserved",
			deviceName(d), bytesOrUnknown(d.ActiveBytes), plural(d.ActiveBlocks, "block", "blocks"), bytesOrUnknown(d.ReservedBytes))
		if d.LiveBytes != nil && d.ActiveBytes != nil && *d.ActiveBytes-*d.LiveBytes >= 1<<20 {
			// A profiler trace's total counts memory allocated before
			// profiling, in blocks the trace never saw: the blocks it left
			// live hold only part of it.
			s = fmt.Sprintf("%s: %s active (%s of it in the %s the trace left live), %s reserved",
				deviceName(d), IBytes(*d.ActiveBytes), IBytes(*d.LiveBytes), plural(d.ActiveBlocks, "allocation", "allocations"), bytesOrUnknown(d.ReservedBytes))
			if d.ActiveBlocks == 0 {
				// A clean run frees all it allocated while profiling.
				s = fmt.Sprintf("%s: %s active (none of it allocated while profiling: the trace left no allocation live), %s reserved",
					deviceName(d), IBytes(*d.ActiveBytes), bytesOrUnknown(d.ReservedBytes))
			}
		}
		// Reserved memory is in segments: none counted beside some
		// reserved is an input that does not list segments (a profiler
		// trace's Total Reserved), not "0 segments".
		if d.Segments > 0 || d.ReservedBytes == nil || *d.ReservedBytes == 0 {
			s += " in " + plural(d.Segments, "segment", "segments")
		}
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
				switch {
				case d.IterationSite != nil:
					s += " (starts at " + d.IterationSite.String() + ")"
				case d.IterationMarker != "":
					s += " (" + d.IterationMarker + ")"
				}
			}
			s += describePeak(d)
		}
		parts = append(parts, s)
	}
	parts = append(parts, describeAllocatorStats(in)...)
	return strings.Join(parts, "; ")
}

// describePeak renders a device's peak within its trace, when it stood
// above the end by 1 MiB and 5% or more (less is the end itself, shown
// rounded to the same size): ", peak 13 GiB active at 138 ms into the
// trace (12 GiB of it allocated during the trace; largest site forward
// (model.py:39), 2.6 GiB)"; "" otherwise.
func describePeak(d DeviceSummary) string {
	if d.PeakActiveBytes == nil || d.PeakSeq == nil {
		return ""
	}
	var end int64
	if d.ActiveBytes != nil {
		end = *d.ActiveBytes
	}
	if above := *d.PeakActiveBytes - end; above < 1<<20 || above < end/20 {
		return ""
	}
	when := fmt.Sprintf("at trace entry %s of %s", humanize.Comma(*d.PeakSeq+1), humanize.Comma(d.TraceEntries))
	switch {
	case *d.PeakSeq < 0:
		when = "at the trace's start"
	case d.PeakUs != nil && d.TraceStartUs != nil && d.TraceEndUs != nil && *d.TraceEndUs > *d.TraceStartUs:
		when = "at " + spanString(0, *d.PeakUs-*d.TraceStartUs) + " into the trace"
	}
	s := fmt.Sprintf(", peak %s active %s (%s of it allocated during the trace", IBytes(*d.PeakActiveBytes), when, IBytes(d.PeakTraceBytes))
	if len(d.PeakSites) > 0 {
		site := "(no stack)"
		if ps := d.PeakSites[0]; ps.Site != nil {
			site = ps.Site.String()
		}
		s += fmt.Sprintf("; largest site %s, %s", site, IBytes(d.PeakSites[0].Bytes))
	}
	return s + ")"
}

// deviceName names a device of an input's line: "device 0", "device
// xpu:0" (another accelerator than CUDA), "process 100, device 0" (one
// process's of a merged profiler trace).
func deviceName(d DeviceSummary) string {
	name := fmt.Sprintf("device %d", d.Device)
	if d.DeviceType != "" {
		name = fmt.Sprintf("device %s:%d", d.DeviceType, d.Device)
	}
	if d.PID != nil {
		name = fmt.Sprintf("process %d, %s", *d.PID, name)
	}
	return name
}

// partialWhat names what a partial set of source (AllocatorStats.Source)
// was cut in: a memory_summary() table, or a memory_stats() dict printed
// in a log.
func partialWhat(source string) string {
	if source == "memory_stats" {
		return "dict"
	}
	return "table"
}

// partialWords says why a set of allocator statistics is partial: its
// table or dict broke off at a line, or (a memory_stats() dict) went on
// past the bound of what is read of one, unread after it.
func partialWords(s AllocatorStats) string {
	switch {
	case s.PartialBoundBytes > 0:
		return fmt.Sprintf("partial: the dict is longer than the %s read of one: read to line %d, the rest not", IBytes(s.PartialBoundBytes), s.PartialAtLine)
	case s.PartialBoundLines > 0:
		return fmt.Sprintf("partial: the dict is longer than the %d lines read of one: read to line %d, the rest not", s.PartialBoundLines, s.PartialAtLine)
	}
	return fmt.Sprintf("partial: the %s broke off at line %d", partialWhat(s.Source), s.PartialAtLine)
}

// describeAllocatorStats summarises an input's memory_stats() and
// memory_summary() sets for its line above the findings. A device's
// sets of one process (the same Process, or none) are its prints of
// cumulative counters over time: the latest alone is shown, saying how
// many there were; a device printed by several processes (a launcher's
// ranks) is shown once for each, named by its Process.
func describeAllocatorStats(in Input) []string {
	type proc struct {
		dev  int
		proc string
	}
	last, prints, labels := map[proc]int{}, map[proc]int{}, map[int]map[string]bool{}
	fell := map[proc]string{} // the first fall of a cumulative counter
	for i, s := range in.AllocatorStats {
		if s.Device == nil {
			continue // a dict that names no device: each may be another's
		}
		k := proc{*s.Device, s.Process}
		last[k] = i
		prints[k]++
		if s.CountersFell != "" && fell[k] == "" {
			fell[k] = fmt.Sprintf("line %d: %s", s.Line, s.CountersFell)
		}
		if labels[k.dev] == nil {
			labels[k.dev] = map[string]bool{}
		}
		labels[k.dev][s.Process] = true
	}
	var out []string
	for i, s := range in.AllocatorStats {
		var parts []string
		if s.Device != nil {
			k := proc{*s.Device, s.Process}
			if last[k] != i {
				continue
			}
			name := fmt.Sprintf("device %d", *s.Device)
			if len(labels[k.dev]) > 1 && s.Process != "" {
				name += " (" + s.Process + ")"
			}
			switch n := prints[k]; {
			case n > 1 && fell[k] != "":
				// Not one process's counters over time: which print
				// stands for the device is not known.
				name += fmt.Sprintf(", %d prints of separate runs or processes (%s; one process's cumulative counters never fall unless reset), the latest", n, fell[k])
			case n > 1:
				name += fmt.Sprintf(", the latest of %d prints", n)
			}
			parts = append(parts, name+":")
		}
		if s.AllocatedBytes != nil {
			parts = append(parts, IBytes(*s.AllocatedBytes)+" allocated,")
		}
		if s.ReservedBytes != nil {
			parts = append(parts, IBytes(*s.ReservedBytes)+" reserved,")
		}
		if s.NumOOMs != nil {
			parts = append(parts, plural(int(*s.NumOOMs), "OOM", "OOMs")+",")
		}
		if s.NumAllocRetries != nil {
			parts = append(parts, plural(int(*s.NumAllocRetries), "cudaMalloc retry", "cudaMalloc retries")+",")
		}
		if s.PartialAtLine > 0 {
			parts = append(parts, partialWords(s)+",")
		}
		if v, _, ok := strings.Cut(s.Verdict, ":"); ok {
			parts = append(parts, "verdict: "+v+",")
		}
		if len(parts) > 0 {
			out = append(out, strings.TrimSuffix(strings.Join(parts, " "), ","))
		}
	}
	return out
}

// spanLayout is the layout of a span's end: its time of day, with the
// date too when the span crosses midnight.
func spanLayout(start, end time.Time) string {
	if start.YearDay() != end.YearDay() || start.Year() != end.Year() {
		return "2006-01-02 15:04:05"
	}
	return "15:04:05"
}

// describeLog summarises an NVML log: "459 samples from 08:06:12 to
// 08:08:08 UTC (116 s)", "1 sample at 2026-12-02 08:59:58 UTC". A sample
// is a sampling instant (one table, one tick of every GPU), as a
// finding's samples are its series'.
func describeLog(in Input) string {
	s := plural(int(*in.Samples), "sample", "samples")
	if in.StartUs == nil || in.EndUs == nil {
		return s
	}
	start, end := time.UnixMicro(*in.StartUs).UTC(), time.UnixMicro(*in.EndUs).UTC()
	dur := trend.Duration(float64(*in.EndUs-*in.StartUs) / 1e6)
	one := *in.Samples == 1 && *in.StartUs == *in.EndUs
	switch in.Clock {
	case "row-order":
		if one {
			return s + " (no time in the log)"
		}
		how := "placed by row order"
		if in.StartGiven {
			how += " from --start"
		}
		if p := in.AssumedIntervalS; p != nil {
			how += fmt.Sprintf(", %s apart assumed", trend.Duration(*p))
		}
		if in.StartGiven {
			// --start gave the first sample's time: the log's times are
			// times, not offsets from the epoch.
			return fmt.Sprintf("%s from %s to %s UTC (%s; no times in the log: %s)", s, start.Format("2006-01-02 15:04:05"), end.Format(spanLayout(start, end)), dur, how)
		}
		return fmt.Sprintf("%s over %s (no times in the log: %s)", s, dur, how)
	case "time-of-day":
		if one {
			return fmt.Sprintf("%s at %s (no date in the log)", s, start.Format("15:04:05"))
		}
		return fmt.Sprintf("%s from %s to %s (%s; no dates in the log)", s, start.Format("15:04:05"), end.Format("15:04:05"), dur)
	}
	if one {
		return fmt.Sprintf("%s at %s UTC", s, start.Format("2006-01-02 15:04:05"))
	}
	return fmt.Sprintf("%s from %s to %s UTC (%s)", s, start.Format("2006-01-02 15:04:05"), end.Format(spanLayout(start, end)), dur)
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

// findingBaselineLine says what a finding's site held in the baseline.
func findingBaselineLine(f Finding) string {
	b := f.Baseline
	line := fmt.Sprintf("%s from %s in %s to %s in %d%s", b.Status, IBytes(b.BeforeBytes), plural(b.BeforeCount, "allocation", "allocations"),
		IBytes(b.AfterBytes), b.AfterCount, baselineChange(b))
	if f.Kind == KindTrend {
		// An NVML series holds no allocations.
		line = fmt.Sprintf("%s from %s used (%s) to %s%s", b.Status, IBytes(b.BeforeBytes), plural(max(b.BeforeCount, 1), "series", "series"),
			IBytes(b.AfterBytes), baselineChange(b))
	}
	switch b.Status {
	case StatusNew:
		line = "new (not in the baseline)"
	case StatusUnmatched:
		line = "unmatched (neither new nor in the baseline, see the note)"
	}
	if b.Note != "" {
		line += "; " + clean(b.Note)
	}
	return line
}

// baselineChange is a finding's change from the baseline: " (+768 KiB,
// +150.0%)", the percentage left out where the baseline held 0 bytes.
func baselineChange(b *FindingBaseline) string {
	sign := "+"
	if b.DeltaBytes < 0 {
		sign = "-"
	}
	d := b.DeltaBytes
	if d < 0 {
		d = -d
	}
	if b.DeltaPercent == nil {
		return fmt.Sprintf(" (%s%s)", sign, IBytes(d))
	}
	return fmt.Sprintf(" (%s%s, %+.1f%%)", sign, IBytes(d), *b.DeltaPercent)
}

// suppressedLine says what one suppression rule left out.
func suppressedLine(s SuppressedFindings) string {
	if s.Expired {
		return fmt.Sprintf("Suppression %s expired on %s: not applied (its findings are reported)", clean(s.Rule), s.Expires)
	}
	line := fmt.Sprintf("Suppressed by %s: %s holding %s", clean(s.Rule), plural(s.Findings, "finding", "findings"), IBytes(s.Bytes))
	if s.Reason != "" {
		line += " (" + clean(s.Reason) + ")"
	}
	return line
}

// bytesOrUnknown prints a size the input may not give: "unknown" for nil.
func bytesOrUnknown(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return IBytes(*n)
}
