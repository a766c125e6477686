package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// ParseDailyFormat returns the output format named s for the daily
// report (one that renders DocDaily: html, markdown, json; "md" is
// markdown), or an error naming the choices.
func ParseDailyFormat(s string) (Format, error) {
	if s == "md" {
		s = string(FormatMarkdown)
	}
	if err := Check(Format(s), DocDaily); err != nil {
		return "", fmt.Errorf("unknown report format %q (choose %s)", s, FormatNames(Formats(DocDaily)))
	}
	return Format(s), nil
}

// WriteDaily renders d in format f: Write of a DocDaily document.
func WriteDaily(w io.Writer, d *Daily, f Format) error {
	return Write(w, Document{Kind: DocDaily, Daily: d}, f, Options{})
}

func writeDailyJSON(w io.Writer, d *Daily, _ Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// The view: what both the page and the Markdown show, computed once.

type dailyView struct {
	D      *Daily
	Title  string
	Window string
	Cards  []card
	Worst  []string
	// Nothing is the summary's sentence when no finding is worth a line
	// (Worst empty): what the files read show, and how many there were.
	Nothing string
	// NoLeak, NoOOM, NoGPU and NoFrag are what an empty section says:
	// "No leak." over the files read, but when none was read, that
	// nothing was (a section's "No leak." would read as a clean day).
	NoLeak, NoOOM, NoGPU, NoFrag string
	// NoErrors is what the compute-sanitizer errors section says when it
	// lists none: over how many reports, or that none was read.
	NoErrors string
	Leaks    []leakView
	Errors   []errView
	OOMs     []oomView
	OOMDays  [][]string // date, cause, count
	GPUs     []gpuView
	Frag     []fragView
	Baseline []string
	// InputWarnings: each input's warnings, the inputs in path order.
	InputWarnings []inputWarnView
	// Undescribed: a line per job whose allocator counted OOMs that no
	// input describes (Daily.UndescribedOOMs), listed beside the OOMs.
	Undescribed []string
}

// inputWarnView is one input's warnings: Title names it (path, job,
// format), Lines are its warnings and, when it has more than are listed,
// a line that says how many more and where to see them.
type inputWarnView struct {
	Path, Title string
	Lines       []string
}

type card struct {
	Label, Value string
	Alert        bool
}

type leakView struct {
	S     *DailyLeakSite
	Title string
	Lines []string
	Stack string
}

// errView is one group of alike compute-sanitizer error records.
type errView struct {
	E     *DailyToolError
	Title string
	Lines []string
	Stack string
}

type oomView struct {
	F     *DailyFinding
	Title string
	Lines []string
	Bars  []barValue
}

type barValue struct {
	Label string
	Bytes int64
}

type gpuView struct {
	G     *DailyGPU
	Title string
	Lines []string
	Rows  [][]string // series: name, class, last, peak, slope, time to OOM, input
}

type fragView struct {
	F     *DailyFinding
	Title string
	Lines []string
	Bars  []barValue
}

func jobOf(host, job string) string {
	switch {
	case host == "":
		return job
	case job == "":
		return host
	}
	return host + "/" + job
}

func clockUs(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05 UTC")
}

func newDailyView(d *Daily) *dailyView {
	v := &dailyView{D: d, Title: "GPU memory report", Nothing: nothingSentence(d.Summary),
		NoLeak: "No leak.", NoOOM: "No OOM.", NoGPU: "No NVML sample log.", NoFrag: "No fragmented segments."}
	switch n := d.Summary.SanitizerReports; {
	case n == 0:
		v.NoErrors = "No compute-sanitizer report was read."
	default:
		v.NoErrors = fmt.Sprintf("No error other than leaks in the %s read.", plural(n, "compute-sanitizer report", "compute-sanitizer reports"))
	}
	if d.Summary.Read == 0 {
		const none = "Nothing was read (see the summary): nothing is known."
		v.NoLeak, v.NoOOM, v.NoGPU, v.NoFrag, v.NoErrors = none, none, none, none, none
	}
	if s := d.Summary; s.ToolErrors > 0 {
		// "Nothing leaked" is true of findings; the errors are beside them.
		v.Nothing += fmt.Sprintf(" compute-sanitizer reported %s that %s not leaks (see below).",
			plural(s.ToolErrors, "error record", "error records"), noun(s.ToolErrors, "is", "are"))
	}
	switch {
	case len(d.Days) == 1:
		v.Title += " — " + d.Days[0]
	case len(d.Days) > 1:
		v.Title += " — " + d.Days[0] + " to " + d.Days[len(d.Days)-1]
	}
	var win []string
	if d.FromUs != nil {
		win = append(win, "from "+clockUs(*d.FromUs))
	}
	if d.ToUs != nil {
		win = append(win, "to "+clockUs(*d.ToUs))
	}
	if len(win) == 0 {
		win = append(win, "all dates")
	}
	v.Window = strings.Join(win, " ") + "; " + strings.Join(d.Roots, ", ")
	s := d.Summary
	// "2 leaks at 2 sites": the count on the card, its sites in the label
	// (Markdown's "**2** leaks at 2 sites"); no leak is "0 leaks".
	leaks := noun(s.Leaks, "leak", "leaks")
	if s.Leaks > 0 {
		leaks += " at " + plural(s.LeakSites, "site", "sites")
	}
	// A card's label is the noun its count counts, in number with it
	// ("1 job", "2 jobs"), as the Markdown page reads it: "**1** job".
	v.Cards = []card{
		{noun(s.Jobs, "job", "jobs"), fmt.Sprint(s.Jobs), false},
		gpusCard(s),
		{leaks, fmt.Sprint(s.Leaks), s.Leaks > 0},
		{noun(s.OOMs, "OOM", "OOMs"), fmt.Sprint(s.OOMs), s.OOMs > 0},
		{noun(s.Growing, "growing GPU or process", "growing GPUs and processes"), fmt.Sprint(s.Growing), s.Growing > 0},
		{"fragmented", fmt.Sprint(s.Fragmentation), s.Fragmentation > 0},
		{fmt.Sprintf("files read (%d skipped, %d outside the window)", s.Skipped, s.OutsideWindow), fmt.Sprintf("%d of %d", s.Read, s.Files), s.Read == 0},
		{"unreadable", fmt.Sprint(s.Unreadable), s.Unreadable > 0},
	}
	if s.SanitizerReports > 0 || s.ToolErrors > 0 {
		v.Cards = append(v.Cards, card{noun(s.ToolErrors, "compute-sanitizer error (not a leak)", "compute-sanitizer errors (not leaks)"), fmt.Sprint(s.ToolErrors), s.ToolErrors > 0})
	}
	if s.ReadInPart > 0 {
		// Not a whole read: the page says so beside the files read.
		v.Cards = append(v.Cards, card{"read in part (lines skipped)", fmt.Sprint(s.ReadInPart), true})
	}
	if s.InputsWithWarnings > 0 {
		v.Cards = append(v.Cards, card{noun(s.InputsWithWarnings, "input with warnings", "inputs with warnings"), fmt.Sprint(s.InputsWithWarnings), false})
	}
	if s.Hosts > 0 {
		v.Cards = append(v.Cards[:1], append([]card{{noun(s.Hosts, "host", "hosts"), fmt.Sprint(s.Hosts), false}}, v.Cards[1:]...)...)
	}
	if s.UndescribedOOMs > 0 {
		// Beside the OOMs card, never in it: these OOMs have no message,
		// size or cause, and are not among the OOMs listed.
		for i, c := range v.Cards {
			if c.Label == "OOM" || c.Label == "OOMs" {
				u := card{noun(s.UndescribedOOMs, "OOM counted by the allocator without a message", "OOMs counted by the allocator without a message"), fmt.Sprint(s.UndescribedOOMs), true}
				v.Cards = append(v.Cards[:i+1], append([]card{u}, v.Cards[i+1:]...)...)
				break
			}
		}
		for _, u := range d.UndescribedOOMs {
			v.Undescribed = append(v.Undescribed, fmt.Sprintf("[%s] the allocator counted %s (num_ooms, %s line %d, %s) that no input describes: caught by the program, or their message not kept; their size, cause and time are not known",
				jobOf(u.Host, u.Job), plural(int(u.Count), "out-of-memory error", "out-of-memory errors"), u.Path, u.Line, u.Date))
		}
		if len(d.OOMs) == 0 {
			v.NoOOM = "No OOM is described in the inputs (no message, no snapshot of one), but allocators counted " +
				plural(s.UndescribedOOMs, "out-of-memory error", "out-of-memory errors") + ":"
		}
	}
	undescribed := v.Undescribed[:min(len(v.Undescribed), 3)]
	for _, f := range s.Worst {
		if f.Kind != KindOOM && len(undescribed) > 0 {
			// After the described OOMs, before the rest.
			v.Worst = append(v.Worst, undescribed...)
			undescribed = nil
		}
		v.Worst = append(v.Worst, fmt.Sprintf("[%s] %s", jobOf(f.Host, f.Job), f.Message))
	}
	v.Worst = append(v.Worst, undescribed...)
	for i := range d.LeakSites {
		l := &d.LeakSites[i]
		lv := leakView{S: l, Title: leakSiteTitle(l)}
		rate := ""
		if l.MaxBytesPerS > 0 {
			rate = fmt.Sprintf(", up to %s/s", IBytes(int64(l.MaxBytesPerS)))
		}
		// A memory timeline's category counts bytes, not allocations:
		// its sites hold no count, which "in 0 allocations" would misstate.
		in := ""
		if l.Count > 0 {
			in = " in " + plural(l.Count, "allocation", "allocations")
		}
		lv.Lines = append(lv.Lines, fmt.Sprintf("%s%s held at the end, from %s in %s%s", IBytes(l.Bytes),
			in, plural(l.Findings, "finding", "findings"), plural(l.JobCount, "job", "jobs"), rate))
		jobs := "jobs: " + strings.Join(l.Jobs, ", ")
		if more := l.JobCount - len(l.Jobs); more > 0 {
			jobs += fmt.Sprintf(" and %d more", more)
		}
		lv.Lines = append(lv.Lines, jobs)
		if len(l.Devices) > 0 {
			lv.Lines = append(lv.Lines, "devices: "+strings.Join(l.Devices, ", "))
		}
		days := "days: " + strings.Join(l.Days, ", ")
		switch {
		case l.Persisted:
			days += " (persisted: every day since its first)"
		case l.CameBack:
			days += " (came back after a day without it)"
		}
		lv.Lines = append(lv.Lines, days, l.Message)
		var st []string
		for _, fr := range l.Stack {
			st = append(st, fr.String())
		}
		lv.Stack = strings.Join(st, " < ")
		v.Leaks = append(v.Leaks, lv)
	}
	for i := range d.ToolErrors {
		e := &d.ToolErrors[i]
		ev := errView{E: e, Title: fmt.Sprintf("%s: %s", jobOf(e.Host, e.Job), e.Kind)}
		if s := e.Site.String(); e.Site != (Frame{}) {
			ev.Title += " at " + s
		}
		ev.Lines = append(ev.Lines, fmt.Sprintf("%s, %s, %s", plural(max(e.Count, 1), "record", "records"), e.Date, e.Path), e.Message)
		if e.Text != "" && e.Text != e.Message {
			ev.Lines = append(ev.Lines, "the tool: "+e.Text)
		}
		if e.Launch != nil {
			ev.Lines = append(ev.Lines, "launched at "+e.Launch.String())
		}
		var st []string
		for _, fr := range e.Stack {
			st = append(st, fr.String())
		}
		ev.Stack = strings.Join(st, " < ")
		v.Errors = append(v.Errors, ev)
	}
	for i := range d.OOMs {
		f := &d.OOMs[i]
		ov := oomView{F: f, Title: fmt.Sprintf("%s: %s", jobOf(f.Host, f.Job), baseOf(f.Path))}
		if f.OOMDetail != nil {
			cause := "unknown"
			if len(f.Cause) > 0 {
				cause = strings.Join(f.Cause, " + ")
			}
			when := ""
			if f.TimeUs != nil && *f.TimeUs > 0 {
				when = " at " + clockUs(*f.TimeUs)
			}
			ov.Title = "cause: " + cause + " — " + ov.Title
			ov.Lines = append(ov.Lines, fmt.Sprintf("%s%s, %s", f.Date, when, f.Path))
			add := func(label string, p *int64) {
				if p != nil {
					ov.Bars = append(ov.Bars, barValue{label, *p})
				}
			}
			add("requested", f.RequestedBytes)
			if f.AllocatorMemory != nil {
				add("allocated by PyTorch", f.AllocatedBytes)
				add("reserved but unallocated", f.ReservedUnallocatedBytes)
				add("reserved", f.ReservedBytes)
			}
			add("allowed (memory fraction)", f.AllowedBytes)
			if f.DeviceFreeBytes != nil {
				// Off the scale of the others on a large GPU: said, not drawn.
				ov.Lines = append(ov.Lines, "free on the GPU then: "+IBytes(*f.DeviceFreeBytes))
			}
		}
		ov.Lines = append(ov.Lines, f.Message)
		v.OOMs = append(v.OOMs, ov)
	}
	for _, c := range d.OOMsByDay {
		v.OOMDays = append(v.OOMDays, []string{c.Date, c.Key, fmt.Sprint(c.Count)})
	}
	inPartPaths := map[string]bool{} // a series from such a log is no whole log's
	for _, u := range d.ReadInPart {
		inPartPaths[u.Path] = true
	}
	for i := range d.GPUs {
		g := &d.GPUs[i]
		gv := gpuView{G: g, Title: fmt.Sprintf("%s — %s", jobOf(g.Host, g.Job), g.GPU)}
		gv.Lines = append(gv.Lines, "worst trend: "+g.Class)
		if c := g.BaselineCreepBytesPerDay; c != nil {
			gv.Lines = append(gv.Lines, fmt.Sprintf("lowest used memory moved %s per day across the report's days", signedIBytes(int64(*c))))
		}
		for j := range g.Series {
			f := &g.Series[j]
			name := "whole GPU"
			if f.PID != nil {
				name = fmt.Sprintf("pid %d %s", *f.PID, f.Process)
			}
			slope, tto := "-", "-"
			if s, ok := trendSlope(&f.Finding); ok {
				slope = signedIBytes(int64(s*3600)) + "/h"
			}
			if f.TimeToOOMS != nil {
				tto = (time.Duration(*f.TimeToOOMS) * time.Second).String()
			} else if f.TimeToOOMReason != "" {
				tto = "none: " + f.TimeToOOMReason
			}
			if p := f.AssumedIntervalS; p != nil && *p > 0 {
				// A log without times: per sample is what it shows; per
				// hour, and a time to OOM, rest on the period assumed.
				if s, ok := trendSlope(&f.Finding); ok {
					slope = perSampleCell(s, *p, f.Source)
					if s >= 0 {
						slope = "+" + slope
					}
				}
				assumed := fmt.Sprintf("if the %ss are %s apart, as assumed", sampleUnit(f.Source), trend.Duration(*p))
				if f.TimeToOOMS != nil {
					tto = fmt.Sprintf("%s (%s %s)", samplesCell(*f.TimeToOOMS, *p, f.Source), (time.Duration(*f.TimeToOOMS) * time.Second).String(), assumed)
				} else if strings.HasPrefix(f.TimeToOOMReason, "at this rate") {
					// The one reason that gives times ("would run
					// out in 26 min, more than 20 times the 39 s
					// ..."): they rest on the period too.
					tto += " (" + assumed + ")"
				}
			}
			peak := "-"
			if f.PeakBytes != nil {
				peak = IBytes(*f.PeakBytes)
			}
			log := baseOf(f.Path)
			if inPartPaths[f.Path] {
				log += " (read in part)"
			}
			if p := f.AssumedIntervalS; p != nil && *p > 0 {
				log += fmt.Sprintf(" (no times: %s apart assumed)", trend.Duration(*p))
			}
			// The last sample's used memory: a growing run that was
			// released keeps its peak in Bytes and its end in LastBytes.
			last := f.Bytes
			if f.LastBytes != nil {
				last = *f.LastBytes
			}
			gv.Rows = append(gv.Rows, []string{strings.TrimSpace(name), f.Classification, IBytes(last), peak, slope, tto, log})
		}
		v.GPUs = append(v.GPUs, gv)
	}
	for i := range d.Fragmentation {
		f := &d.Fragmentation[i]
		fv := fragView{F: f, Title: fmt.Sprintf("%s: %s", jobOf(f.Host, f.Job), baseOf(f.Path))}
		fv.Lines = append(fv.Lines, f.Path, f.Message)
		if m := f.AllocatorMemory; m != nil {
			add := func(label string, p *int64) {
				if p != nil {
					fv.Bars = append(fv.Bars, barValue{label, *p})
				}
			}
			add("reserved", m.ReservedBytes)
			add("active", m.ActiveBytes)
			if fd := f.FragmentationDetail; fd != nil {
				fv.Bars = append(fv.Bars, barValue{"free in segments", fd.FreeBytes}, barValue{"inactive split", fd.InactiveSplitBytes})
			}
			add("largest free block", m.LargestFreeBlockBytes)
		}
		v.Frag = append(v.Frag, fv)
	}
	for _, w := range d.InputWarnings {
		iv := inputWarnView{Path: w.Path, Title: fmt.Sprintf("%s, %s, %s", jobOf(w.Host, w.Job), w.Format, plural(w.WarningsTotal, "warning", "warnings"))}
		iv.Lines = append(iv.Lines, w.Warnings...)
		if more := w.WarningsTotal - len(w.Warnings); more > 0 {
			iv.Lines = append(iv.Lines, fmt.Sprintf("and %d more: gpuleak analyze %s lists them all", more, w.Path))
		}
		v.InputWarnings = append(v.InputWarnings, iv)
	}
	if b := d.Baseline; b != nil {
		for _, e := range b.Leaks {
			before, after := FromTo(e.BeforeBytes, e.AfterBytes)
			v.Baseline = append(v.Baseline, fmt.Sprintf("%s leak site %s: %s → %s", e.Status, e.Site, before, after))
		}
		for _, c := range b.NewOOMCauses {
			v.Baseline = append(v.Baseline, "new OOM cause: "+c)
		}
		if len(v.Baseline) == 0 {
			v.Baseline = append(v.Baseline, "no leak site new, grown, shrunk or fixed, and no new OOM cause")
		}
	}
	return v
}

// signedIBytes is IBytes with its sign ("+5.0 MiB", "-1.0 KiB", "+0 B").
func signedIBytes(n int64) string {
	if n < 0 {
		return "-" + IBytes(-n)
	}
	return "+" + IBytes(n)
}

func baseOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// noun is one when n is 1, else many.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// nothingSentence is the summary's sentence when no finding is worth a
// line. "Nothing leaked" is a verdict on the files read: over none (an
// empty or unmounted root, a day of truncated artifacts, a window that
// holds none) it would read as a clean day, so it says what was read.
func nothingSentence(s DailySummary) string {
	switch {
	case s.Read == 0 && s.Files == 0:
		return "No file was found under the roots: nothing was analysed."
	case s.Read == 0:
		var why []string
		if s.Unreadable > 0 {
			why = append(why, fmt.Sprintf("%d could not be read", s.Unreadable))
		}
		if s.Skipped > 0 {
			why = append(why, fmt.Sprintf("%d skipped", s.Skipped))
		}
		if s.OutsideWindow > 0 {
			why = append(why, fmt.Sprintf("%d outside the window", s.OutsideWindow))
		}
		return fmt.Sprintf("No artifact was read of the %s found (%s): nothing was analysed.", plural(s.Files, "file", "files"), strings.Join(why, ", "))
	case s.Unreadable > 0:
		return fmt.Sprintf("Nothing leaked, ran out of memory or grew in the %s read%s; %d could not be read, and nothing is known of them.", plural(s.Read, "file", "files"), inPart(s), s.Unreadable)
	case s.ReadInPart > 0:
		return fmt.Sprintf("Nothing leaked, ran out of memory or grew in the %s read%s.", plural(s.Read, "file", "files"), inPart(s))
	}
	return "Nothing leaked, ran out of memory or grew."
}

// inPart says how many of the files read were read in part: ", 1 of them
// in part (lines that could not be read were skipped)"; "" for none.
func inPart(s DailySummary) string {
	if s.ReadInPart == 0 {
		return ""
	}
	of := fmt.Sprintf("%d of them", s.ReadInPart)
	switch {
	case s.ReadInPart == s.Read && s.Read == 1:
		of = "which was read"
	case s.ReadInPart == s.Read:
		of = "all of them"
	}
	return ", " + of + " in part (lines that could not be read were skipped, and nothing is known of them)"
}

// gpusCard counts the GPUs the inputs name: those NVML logs sample, and
// those only other inputs name (DailySummary.OtherDevices), saying which.
func gpusCard(s DailySummary) card {
	if s.OtherDevices == 0 {
		return card{noun(s.GPUs, "GPU sampled by NVML", "GPUs sampled by NVML"), fmt.Sprint(s.GPUs), false}
	}
	n := s.GPUs + s.OtherDevices
	return card{fmt.Sprintf("%s (%d sampled by NVML, %d named only by %s)", noun(n, "GPU", "GPUs"),
		s.GPUs, s.OtherDevices, strings.Join(s.OtherDeviceKinds, ", ")), fmt.Sprint(n), false}
}

// leakSiteTitle names a leak site of the daily report: its frame, or
// where it has none, why: its SiteUnknown, or, for findings that carry
// no stack at all (compute-sanitizer run with --show-backtrace no, a
// snapshot's blocks without frames), that the records have none. Never
// the bare "(no stack)" of a frame that is empty for another reason (a
// record cut in its backtrace, leaks only a LEAK SUMMARY counts).
func leakSiteTitle(l *DailyLeakSite) string {
	switch {
	case l.Site != (Frame{}):
		return l.Site.String()
	case l.SiteUnknown != "":
		return "site unknown: " + l.SiteUnknown
	case len(l.Stack) > 0:
		return l.Stack[0].String()
	}
	return "no site: the records carry no stack (recorded without one)"
}
