package report

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/analyze"
)

// FromLeaks turns a snapshot's leak analysis into the report's input
// entry and findings. path is the input as named on the command line,
// source its format; parseWarnings come from the parser.
func FromLeaks(path, source string, parseWarnings []string, res *analyze.LeakResult) (Input, []Finding) {
	in := Input{Path: path, Format: source}
	in.Warnings = append(append(in.Warnings, parseWarnings...), res.Warnings...)
	for _, d := range res.Devices {
		ds := DeviceSummary{
			Device: d.Device, Segments: d.Segments, ReservedBytes: d.ReservedBytes,
			ActiveBytes: d.ActiveBytes, ActiveBlocks: d.ActiveBlocks, TraceEntries: d.TraceEntries,
			UnmatchedFrees: d.UnmatchedFrees, LiveAtTraceEnd: d.LiveAtTraceEnd,
			BlocksNotInTrace: d.BlocksNotInTrace,
		}
		if d.HasTime {
			start, end := d.TraceStartUs, d.TraceEndUs
			ds.TraceStartUs, ds.TraceEndUs = &start, &end
		}
		in.Devices = append(in.Devices, ds)
	}
	var out []Finding
	for _, s := range res.Sites {
		dev := s.Device
		f := Finding{
			Kind:    siteKind(s.Kind),
			Path:    path,
			Source:  source,
			Device:  &dev,
			Bytes:   s.Bytes,
			Count:   s.Count,
			Site:    frame(s.Frame),
			Message: siteMessage(s),
			Sizes:   s.Sizes,
		}
		for _, fr := range s.Stack {
			f.Stack = append(f.Stack, frame(fr))
		}
		if g := s.Growth; g != nil {
			gr := &Growth{R2: round(g.R2, 4), Kept: g.Kept, Allocations: g.Allocations, ActiveTenths: g.ActiveParts}
			if g.Timed {
				// Only a leak has a rate: the slope of one burst is not growth.
				rate := 0.0
				if s.Kind == analyze.Leak {
					rate = round(g.Slope, 1)
				}
				first, last := g.FirstUs, g.LastUs
				gr.BytesPerSecond, gr.FirstKeptUs, gr.LastKeptUs = &rate, &first, &last
			}
			f.Growth = gr
		}
		out = append(out, f)
	}
	return in, out
}

func siteKind(k analyze.SiteKind) Kind {
	switch k {
	case analyze.Leak:
		return KindLeak
	case analyze.Live:
		return KindLive
	}
	return KindRetained
}

func frame(f analyze.Frame) Frame {
	return Frame{Function: f.Name, File: f.Filename, Line: f.Line}
}

func round(x float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// siteMessage is the one line a person acts on.
func siteMessage(s analyze.Site) string {
	where := "with no stack recorded:"
	switch {
	case len(s.Stack) > 0 && !hasPython(s.Stack):
		where = "from C++ with no Python caller, in " + frame(s.Frame).String()
	case len(s.Stack) > 0:
		where = "at " + frame(s.Frame).String()
	}
	what := fmt.Sprintf("%s (%s) %s", plural(s.Count, "allocation", "allocations"), IBytes(s.Bytes), where)
	g := s.Growth
	switch s.Kind {
	case analyze.Leak:
		rate := ""
		if g != nil && g.Timed {
			rate = fmt.Sprintf(", +%s/s %s", IBytes(int64(g.Slope)), span(g))
		}
		kept := ""
		if g != nil && g.Allocations > 0 {
			kept = fmt.Sprintf("; %d of the %d allocations made there were never freed", g.Kept, g.Allocations)
		}
		return fmt.Sprintf("leak: %s keep accumulating%s%s; find what still references them (a list, dict, cache or attribute that is never cleared, or a tensor kept with its graph: store loss.item() or .detach())",
			what, rate, kept)
	case analyze.Live:
		suspect := ""
		if s.Repeated {
			suspect = fmt.Sprintf(" %d allocations of one size from one site is the pattern a leak leaves;", s.Count)
		}
		return fmt.Sprintf("live: %s held at the end; the trace does not cover when they were allocated, so growth cannot be judged;%s record a longer trace with torch.cuda.memory._record_memory_history(max_entries=...)", what, suspect)
	}
	when := ""
	if g != nil && g.Timed {
		when = " allocated " + span(g)
	}
	return fmt.Sprintf("retained: %s%s and held to the end without growing; expected for weights, optimizer state and workspaces, a leak only if it should have been freed", what, when)
}

// span says when a site's kept allocations were made, in seconds into the
// trace: "at 6.3 s", or "from 0.4 s to 4.6 s" when they spread over more
// than a twentieth of the trace.
func span(g *analyze.Growth) string {
	w := g.WindowEnd - g.WindowStart
	first, last := offset(g.FirstUs-g.WindowStart, w), offset(g.LastUs-g.WindowStart, w)
	if w <= 0 || (g.LastUs-g.FirstUs)*20 < w {
		return fmt.Sprintf("at %s into the trace", first)
	}
	return fmt.Sprintf("from %s to %s into the trace", first, last)
}

// offset renders a time into a trace of length w (both µs) with the
// precision w needs: "6.3 s" in a 17 s trace, "4 ms" in a 50 ms one.
func offset(us, w int64) string {
	switch {
	case w < 10_000:
		return fmt.Sprintf("%.1f ms", float64(us)/1e3)
	case w < 1_000_000:
		return fmt.Sprintf("%.0f ms", float64(us)/1e3)
	}
	return fmt.Sprintf("%.1f s", float64(us)/1e6)
}

// hasPython reports whether a stack has a Python frame (a .py file).
func hasPython(st []analyze.Frame) bool {
	for _, f := range st {
		if strings.HasSuffix(f.Filename, ".py") {
			return true
		}
	}
	return false
}
