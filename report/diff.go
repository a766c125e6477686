package report

import (
	"fmt"
	"sort"
	"strings"
)

// BaselineSchema is the value of the "schema" member of a baseline file
// (gpuleak analyze --write-baseline). Members may be added within v1.
const BaselineSchema = "gpuleak.baseline/v1"

// Baseline is what one run held, by call site: the file written by
// --write-baseline, meant to be committed beside the code. It holds no
// paths, times or versions, and its sites are sorted, so that the same
// run always writes the same bytes and a change reads as a small diff.
type Baseline struct {
	Schema string         `json:"schema"`
	Sites  []BaselineSite `json:"sites"`
	// LeakSummary adds up the compute-sanitizer LEAK SUMMARY and ERROR
	// SUMMARY lines of the run's inputs; absent when none had one.
	LeakSummary *LeakSummary `json:"leak_summary,omitempty"`
}

// BaselineSite is the memory one call site held in one run, or the
// records of one compute-sanitizer error. Bytes and Count add up the
// findings of the run with the same Key.
type BaselineSite struct {
	// Key identifies the site across runs (see SiteKey).
	Key  string `json:"key"`
	Kind Kind   `json:"kind"`
	// Device is the CUDA device index, null when the input does not say.
	Device *int `json:"device"`
	// Site is the innermost user frame, Stack the visible stack (at most
	// 16 frames), both as "function (file:line)" with the file's base name.
	Site  string   `json:"site"`
	Stack []string `json:"stack,omitempty"`
	Bytes int64    `json:"bytes"`
	Count int      `json:"count"`
}

// maxStackInBaseline bounds the frames a baseline site lists.
const maxStackInBaseline = 16

// SiteKey identifies a finding's call site across runs: its kind, device
// allocator class (compute-sanitizer: device, pinned, ...) and visible
// stack, each frame as function and file without the line
// number (an edit above the site must not make it new) and the file's
// base name (directories change from machine to machine, and
// compute-sanitizer --strip-paths drops them). Addresses are never part of it. Findings without a stack are keyed by
// their site, trend findings by GPU and process name (PIDs change from run
// to run), fragmentation by device.
func SiteKey(f *Finding) string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	if f.Device != nil {
		fmt.Fprintf(&b, "|dev%d", *f.Device)
	}
	switch {
	case f.Kind == KindTrend:
		gpu := f.GPUUUID
		if f.GPU != nil {
			gpu = fmt.Sprint(*f.GPU)
		}
		fmt.Fprintf(&b, "|gpu %s|%s|%s|%s", gpu, f.Host, f.Process, f.Container)
	case len(f.Stack) > 0:
		if f.Allocator != "" {
			b.WriteString("|" + f.Allocator)
		}
		for _, fr := range f.Stack {
			b.WriteString("|" + frameKey(fr))
		}
	case f.Site != (Frame{}):
		b.WriteString("|" + frameKey(f.Site))
	case f.Kind != KindFragmentation:
		// No stack at all (compute-sanitizer --show-backtrace no):
		// the allocator class is all that tells sites apart.
		b.WriteString("|no stack|" + f.Allocator)
	}
	return b.String()
}

// toolErrorKey identifies a compute-sanitizer error across runs.
func toolErrorKey(e *ToolError) string {
	k := "sanitizer-error|" + e.Kind + "|" + e.API + "|" + e.Error + "|" + e.Kernel
	if e.API == "" && e.Kernel == "" {
		k += "|" + e.Text
	}
	return k + "|" + frameKey(e.Site)
}

func frameKey(f Frame) string {
	return f.Function + " @ " + portableFile(f.File)
}

// portableFile cuts a recorded path to its base name: the directories
// differ from machine to machine, and tools record them or not
// (compute-sanitizer --strip-paths).
func portableFile(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// NewBaseline adds up findings and tool errors by site (see SiteKey).
// summary may be nil.
func NewBaseline(fs []Finding, errs []ToolError, summary *LeakSummary) *Baseline {
	byKey := map[string]*BaselineSite{}
	for i := range fs {
		f := &fs[i]
		k := SiteKey(f)
		s := byKey[k]
		if s == nil {
			s = &BaselineSite{Key: k, Kind: f.Kind, Device: f.Device, Site: f.Site.String()}
			if f.Kind == KindTrend {
				s.Site = trendName(f)
			}
			for j, fr := range f.Stack {
				if j == maxStackInBaseline {
					s.Stack = append(s.Stack, fmt.Sprintf("... %d more frames", len(f.Stack)-j))
					break
				}
				s.Stack = append(s.Stack, fr.String())
			}
			byKey[k] = s
		}
		s.Bytes += f.Bytes
		s.Count += max(f.Count, 1)
	}
	for i := range errs {
		e := &errs[i]
		k := toolErrorKey(e)
		s := byKey[k]
		if s == nil {
			s = &BaselineSite{Key: k, Kind: Kind("sanitizer-error"), Site: e.Message}
			byKey[k] = s
		}
		s.Count += max(e.Count, 1)
	}
	b := &Baseline{Schema: BaselineSchema, Sites: []BaselineSite{}}
	for _, s := range byKey {
		b.Sites = append(b.Sites, *s)
	}
	sort.Slice(b.Sites, func(i, j int) bool { return b.Sites[i].Key < b.Sites[j].Key })
	if summary != nil {
		b.LeakSummary = &LeakSummary{}
		b.LeakSummary.add(summary)
	}
	return b
}

// trendName names an NVML series: its GPU and process.
func trendName(f *Finding) string {
	name := "GPU " + f.GPUUUID
	if f.GPU != nil {
		name = fmt.Sprintf("GPU %d", *f.GPU)
	}
	if f.Process != "" {
		name += " " + f.Process
	}
	return name
}

// BaselineOf is the baseline of a whole report: every finding it lists
// and its tool errors, with the compute-sanitizer summaries of its inputs.
func BaselineOf(r *Report) *Baseline {
	return NewBaseline(r.Findings, r.Errors, SummaryOf(r.Inputs))
}

// SummaryOf adds up the compute-sanitizer summaries of inputs; nil when
// none has one.
func SummaryOf(ins []Input) *LeakSummary {
	var s *LeakSummary
	for _, in := range ins {
		if in.LeakSummary != nil {
			if s == nil {
				s = &LeakSummary{}
			}
			s.add(in.LeakSummary)
		}
	}
	return s
}

// Diff statuses of a site, comparing a run with a base run.
const (
	StatusNew    = "new"    // absent from the base run
	StatusGrown  = "grown"  // holds more than in the base run, beyond the tolerance
	StatusShrunk = "shrunk" // holds less
	StatusFixed  = "fixed"  // absent from this run
	StatusSame   = "same"   // holds as much (or more, within the tolerance)
)

// Tolerance is how much a site may grow and still count as the same:
// more than Bytes and more than Percent of its base size make it grown.
type Tolerance struct {
	Bytes   int64
	Percent float64
}

// DiffEntry compares one site in two runs. Before* are zero for a new
// site, After* for a fixed one.
type DiffEntry struct {
	Status       string   `json:"status"`
	Key          string   `json:"key"`
	Kind         Kind     `json:"kind"`
	Device       *int     `json:"device"`
	Site         string   `json:"site"`
	Stack        []string `json:"stack,omitempty"`
	BeforeBytes  int64    `json:"before_bytes"`
	AfterBytes   int64    `json:"after_bytes"`
	BeforeCount  int      `json:"before_count"`
	AfterCount   int      `json:"after_count"`
	DeltaBytes   int64    `json:"delta_bytes"`
	DeltaPercent *float64 `json:"delta_percent"`
}

// DiffTotals adds up the entries of one status, or all of them.
type DiffTotals struct {
	Sites       int   `json:"sites"`
	BeforeBytes int64 `json:"before_bytes"`
	AfterBytes  int64 `json:"after_bytes"`
	BeforeCount int   `json:"before_count"`
	AfterCount  int   `json:"after_count"`
}

// DiffReport is the document "gpuleak diff --format json" writes
// (schema gpuleak.diff/v1).
type DiffReport struct {
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	Base   string `json:"base"`
	New    string `json:"new"`
	// Entries: new, grown, fixed, shrunk, then same; by bytes changed,
	// largest first, then by key.
	Entries []DiffEntry `json:"entries"`
	// Totals by status, and "all".
	Totals map[string]DiffTotals `json:"totals"`
	// LeakSummaryBefore and After: what the compute-sanitizer summary
	// lines of each run say, when they have any.
	LeakSummaryBefore *LeakSummary `json:"leak_summary_before,omitempty"`
	LeakSummaryAfter  *LeakSummary `json:"leak_summary_after,omitempty"`
	// LeakSummaryStatus compares the LEAK SUMMARY bytes of both runs
	// (new, grown, shrunk, fixed or same), when both have one.
	LeakSummaryStatus string `json:"leak_summary_status,omitempty"`
	// Warnings about what the comparison could not see.
	Warnings []string `json:"warnings"`
}

// DiffSchema is the value of the "schema" member of a diff report.
const DiffSchema = "gpuleak.diff/v1"

// Compare compares run with base site by site.
func Compare(base, run *Baseline, tol Tolerance) []DiffEntry {
	before := map[string]*BaselineSite{}
	for i := range base.Sites {
		before[base.Sites[i].Key] = &base.Sites[i]
	}
	var out []DiffEntry
	seen := map[string]bool{}
	for i := range run.Sites {
		a := &run.Sites[i]
		seen[a.Key] = true
		e := DiffEntry{Key: a.Key, Kind: a.Kind, Device: a.Device, Site: a.Site, Stack: a.Stack,
			AfterBytes: a.Bytes, AfterCount: a.Count}
		b := before[a.Key]
		if b == nil {
			e.Status = StatusNew
		} else {
			e.BeforeBytes, e.BeforeCount = b.Bytes, b.Count
			e.Status = status(b, a, tol)
		}
		out = append(out, finish(e))
	}
	for i := range base.Sites {
		b := &base.Sites[i]
		if seen[b.Key] {
			continue
		}
		out = append(out, finish(DiffEntry{Status: StatusFixed, Key: b.Key, Kind: b.Kind, Device: b.Device,
			Site: b.Site, Stack: b.Stack, BeforeBytes: b.Bytes, BeforeCount: b.Count}))
	}
	order := map[string]int{StatusNew: 0, StatusGrown: 1, StatusFixed: 2, StatusShrunk: 3, StatusSame: 4}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if order[a.Status] != order[b.Status] {
			return order[a.Status] < order[b.Status]
		}
		if da, db := abs64(a.DeltaBytes), abs64(b.DeltaBytes); da != db {
			return da > db
		}
		if a.AfterBytes != b.AfterBytes {
			return a.AfterBytes > b.AfterBytes
		}
		return a.Key < b.Key
	})
	return out
}

// status compares a site present in both runs. Sites that hold no bytes
// (tool errors) compare their counts.
func status(b, a *BaselineSite, tol Tolerance) string {
	before, after := b.Bytes, a.Bytes
	if before == 0 && after == 0 {
		before, after = int64(b.Count), int64(a.Count)
	}
	switch {
	case after < before:
		return StatusShrunk
	case after == before:
		return StatusSame
	case after-before > tol.Bytes && float64(after-before) > tol.Percent/100*float64(before):
		return StatusGrown
	}
	return StatusSame
}

func finish(e DiffEntry) DiffEntry {
	e.DeltaBytes = e.AfterBytes - e.BeforeBytes
	if e.BeforeBytes > 0 {
		p := float64(e.DeltaBytes) / float64(e.BeforeBytes) * 100
		e.DeltaPercent = &p
	}
	return e
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// DiffTotalsOf adds up entries by status; "all" holds every entry.
func DiffTotalsOf(es []DiffEntry) map[string]DiffTotals {
	t := map[string]DiffTotals{}
	for _, st := range []string{StatusNew, StatusGrown, StatusShrunk, StatusFixed, StatusSame, "all"} {
		t[st] = DiffTotals{}
	}
	for _, e := range es {
		for _, st := range []string{e.Status, "all"} {
			d := t[st]
			d.Sites++
			d.BeforeBytes += e.BeforeBytes
			d.AfterBytes += e.AfterBytes
			d.BeforeCount += e.BeforeCount
			d.AfterCount += e.AfterCount
			t[st] = d
		}
	}
	return t
}

// BaselineComparison is how a run compares with --baseline, site by site
// (see Compare). Findings whose site is the same, shrunk, or grown within
// the tolerance are left out of the report and counted in LeftOut.
type BaselineComparison struct {
	// Path of the baseline file, as given.
	Path string `json:"path"`
	// ToleranceBytes and TolerancePercent: how much a site may grow and
	// still count as the same (--tolerance).
	ToleranceBytes   int64   `json:"tolerance_bytes"`
	TolerancePercent float64 `json:"tolerance_percent"`
	// Totals by status and "all", as in gpuleak diff.
	Totals map[string]DiffTotals `json:"totals"`
	// Fixed lists the baseline's sites absent from this run.
	Fixed []DiffEntry `json:"fixed"`
	// LeftOut counts the findings left out as already in the baseline.
	LeftOut int `json:"findings_in_baseline"`
}

// FindingBaseline is a finding's site in the baseline: its status (new or
// grown) and what it held there.
type FindingBaseline struct {
	Status      string `json:"status"`
	BeforeBytes int64  `json:"before_bytes"`
	BeforeCount int    `json:"before_count"`
}

// SummaryStatus compares two runs' LEAK SUMMARY bytes: "" unless both
// have one.
func SummaryStatus(before, after *LeakSummary) string {
	if before == nil || after == nil || before.Bytes == nil || after.Bytes == nil {
		return ""
	}
	b, a := *before.Bytes, *after.Bytes
	switch {
	case b == a:
		return StatusSame
	case b == 0:
		return StatusNew
	case a == 0:
		return StatusFixed
	case a > b:
		return StatusGrown
	}
	return StatusShrunk
}
