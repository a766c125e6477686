package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
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
	// Formats: the formats of the inputs read (sorted, each once; see
	// InputFormats), so that a run without findings still says what it
	// was; absent in baselines written before this member.
	Formats []string `json:"formats,omitempty"`
	// GrowthUnjudged: the devices on which an input of the run (a
	// snapshot or profiler trace) could not judge growth across
	// iterations (see DeviceSummary.GrowthUnjudged): memory that leaks
	// there could only be retained or live, so a leak of the other run at
	// such a site is neither new nor fixed (see markUnjudged). Sorted;
	// absent when none, and in baselines written before this member,
	// which cannot tell and compare as before.
	GrowthUnjudged []UnjudgedDevice `json:"growth_unjudged,omitempty"`
	// Active: each device's active memory at the end of the run's
	// snapshots and profiler traces, by device and format (see ActiveOf);
	// absent when none gave it, and in baselines written before this
	// member.
	Active []DeviceActive `json:"active,omitempty"`
	// Stats: each device's memory as the run's last allocator statistics
	// of it give it (memory_summary() tables, memory_stats() dicts; see
	// StatsOf), which name no call site; absent when none gave it, and
	// in baselines written before this member.
	Stats []DeviceStats `json:"allocator_stats,omitempty"`
	// Omitted counts the findings of the run its document left out: a
	// JSON report written with --top (findings_total less those listed)
	// or --min-bytes (findings_below_min_bytes). A site absent from such
	// a run may be one of them (see markOmitted). Absent when none.
	Omitted int `json:"omitted,omitempty"`
}

// DeviceActive is a device's active memory at the end of the inputs of
// format Source (added up where several gave it), in bytes.
type DeviceActive struct {
	Device int    `json:"device"`
	Source string `json:"source"`
	Bytes  int64  `json:"bytes"`
}

// ActiveOf adds up, by device and format, the active memory at the end of
// each input read that gives it (a snapshot's blocks, a profiler trace's
// last Total Allocated), sorted.
func ActiveOf(ins []Input) []DeviceActive {
	var out []DeviceActive
	for _, in := range ins {
		if in.Error != "" {
			continue
		}
		for _, d := range in.Devices {
			if d.ActiveBytes == nil {
				continue
			}
			i := slices.IndexFunc(out, func(a DeviceActive) bool { return a.Device == d.Device && a.Source == in.Format })
			if i < 0 {
				out = append(out, DeviceActive{Device: d.Device, Source: in.Format})
				i = len(out) - 1
			}
			out[i].Bytes += *d.ActiveBytes
		}
	}
	slices.SortFunc(out, func(a, b DeviceActive) int {
		if a.Device != b.Device {
			return a.Device - b.Device
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out
}

// ActiveWarning says, for each device and format both runs give the
// active memory of, where it grew beyond the tolerance by more than the
// sites compared account for (entries, the diff of the two runs): memory
// no compared site holds grew. A profiler trace's active memory counts
// what was allocated before profiling began and is still held, which no
// site names (a schedule that records some steps of many: a leak in the
// steps between its windows shows only so); a site --min-bytes left out
// is another. "" when none did.
func ActiveWarning(base, run *Baseline, es []DiffEntry, tol Tolerance) string {
	var notes []string
	for _, a := range run.Active {
		i := slices.IndexFunc(base.Active, func(b DeviceActive) bool { return b.Device == a.Device && b.Source == a.Source })
		if i < 0 {
			continue
		}
		before := base.Active[i].Bytes
		var sites int64
		for _, e := range es {
			if e.Device != nil && *e.Device == a.Device && e.source == a.Source && holdsMemory(e.Kind) {
				sites += e.AfterBytes - e.BeforeBytes
			}
		}
		rest := a.Bytes - before - sites
		if rest <= tol.Bytes || float64(rest) <= tol.Percent/100*float64(before) {
			continue
		}
		where := "from before the trace began (allocated where it recorded nothing: in steps a profiler schedule did not record, or before profiling started), or at sites --min-bytes left out"
		if a.Source != "pytorch-profiler-trace" {
			where = "at sites --min-bytes left out, or without a site"
		}
		notes = append(notes, fmt.Sprintf("device %d (%s): active memory at the end %s -> %s (%s), of which the sites compared account for %s: %s more is held %s; record those steps too (a longer active window, or a snapshot) to name where it was allocated",
			a.Device, a.Source, IBytes(before), IBytes(a.Bytes), signedIBytes(a.Bytes-before), signedIBytes(sites), IBytes(rest), where))
	}
	return strings.Join(notes, "; ")
}

// UnjudgedDevice is a device on which growth could not be judged: by the
// input of format Source, for the reason Why.
type UnjudgedDevice struct {
	Device int    `json:"device"`
	Source string `json:"source"`
	Why    string `json:"why"`
}

// UnjudgedOf lists the devices on which the inputs read could not judge
// growth, by device and format, sorted (the first input's reason where
// several say).
func UnjudgedOf(ins []Input) []UnjudgedDevice {
	var out []UnjudgedDevice
	for _, in := range ins {
		if in.Error != "" {
			continue
		}
		for _, d := range in.Devices {
			if d.GrowthUnjudged == "" || slices.ContainsFunc(out, func(u UnjudgedDevice) bool { return u.Device == d.Device && u.Source == in.Format }) {
				continue
			}
			out = append(out, UnjudgedDevice{Device: d.Device, Source: in.Format, Why: d.GrowthUnjudged})
		}
	}
	slices.SortFunc(out, func(a, b UnjudgedDevice) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Source, b.Source))
	})
	return out
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
	// DeviceType: Device's type when it is not CUDA ("xpu", "mps"; "cpu"
	// for host memory, Device null), as Finding.DeviceType; part of Key.
	DeviceType string `json:"device_type,omitempty"`
	// Site is the innermost user frame, Stack the visible stack (at most
	// 16 frames), both as "function (file:line)" with the file's base name.
	Site  string   `json:"site"`
	Stack []string `json:"stack,omitempty"`
	// Lines: the line number of each frame of the stack (0 where the
	// frame has none), comma-separated. Findings with the same Key but
	// other Lines are other sites of the same run (two statements of one
	// function); "" for sites without a stack, and in baselines written
	// before this member, whose site then stands for all its lines.
	Lines string `json:"lines,omitempty"`
	// Allocator: the compute-sanitizer allocator class (see
	// Finding.Allocator), part of the Key; "" for snapshots.
	Allocator string `json:"allocator,omitempty"`
	// At: for a compute-sanitizer error, where it happened, as
	// "function (file:line)" (ToolError.Site); absent otherwise, and in
	// baselines written before this member.
	At    string `json:"at,omitempty"`
	Bytes int64  `json:"bytes"`
	Count int    `json:"count"`
	// Iterations: for a leak, the iterations its run's trace shows (see
	// Growth.Iterations); absent when none were found.
	Iterations int `json:"iterations,omitempty"`
	// Class: for an NVML series (kind trend), its classification
	// (growing, sawtooth, step, flat, undetermined), the worst of its
	// findings' where several add up (growing first); absent for other
	// kinds, and in baselines written before this member.
	Class string `json:"class,omitempty"`
	// GPUUUID: for an NVML series (kind trend), the UUID of its GPU when
	// its findings name one and all the same one; absent otherwise, and in
	// baselines written before this member. Compare pairs by it the series
	// whose key changed with the host or container labels (a DCGM exporter
	// restarted under a new pod name).
	GPUUUID string `json:"gpu_uuid,omitempty"`
	// ReplacedUUIDs: for a GPU's series (kind trend), the UUIDs of the GPUs
	// its index held earlier in the run, whose samples all ended before
	// its own began (a GPU replaced: replacedGPUs); their memory is not in
	// Bytes. Absent when none.
	ReplacedUUIDs []string `json:"replaced_gpu_uuids,omitempty"`
	// Source: the format of the input the site's findings came from
	// (Finding.Source); absent in baselines written before this member.
	// Sites of a snapshot, a profiler trace, a memory timeline and a
	// compute-sanitizer report are keyed differently and never match
	// one another (see markOtherFamilies).
	Source string `json:"source,omitempty"`
}

// maxStackInBaseline bounds the frames a baseline site lists.
const maxStackInBaseline = 16

// SiteKey identifies a finding's call site across runs: its kind, device
// (its type and index: cuda:0, xpu:0 and the host's memory are three
// devices), allocator class (compute-sanitizer: device, pinned, ...) and
// visible stack, each frame as function and file without the line
// number (an edit above the site must not make it new) and the file's
// base name (directories change from machine to machine, and
// compute-sanitizer --strip-paths drops them). Addresses are never part of it. Findings without a stack are keyed by
// their site, trend findings by GPU and process name (PIDs change from run
// to run), fragmentation by device. Findings of one run that differ only
// in their process id share a SiteKey: SiteKeys tells them apart.
func SiteKey(f *Finding) string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	switch {
	case f.DeviceType != "" && f.Device != nil:
		// Another accelerator's (a profiler trace of XPU or MPS): never
		// CUDA device N's site. CUDA keeps "|devN", as baselines hold it.
		fmt.Fprintf(&b, "|%s:%d", f.DeviceType, *f.Device)
	case f.DeviceType != "":
		b.WriteString("|" + f.DeviceType) // "cpu": host memory, no index
	case f.Device != nil:
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

// toolErrorKey identifies a compute-sanitizer error across runs. A
// device-side error is keyed by the function of its faulting instruction,
// which a record cut before its backtraces shows too (its kernel it does
// not), and which reports written before the member "function" existed
// held as "kernel".
func toolErrorKey(e *ToolError) string {
	fn := e.Function
	if fn == "" {
		fn = e.Kernel
	}
	k := "sanitizer-error|" + e.Kind + "|" + e.API + "|" + e.Error + "|" + fn
	if e.API == "" && fn == "" {
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

// SiteKeys is the SiteKey of each finding of one run, with the findings
// that differ only in their process id told apart.
//
// A process id is not a site: it changes from run to run of the same job,
// so it never enters a key, and across runs a process is matched by what
// the key holds (its name and GPU for NVML series, its stack for a
// profiler trace merged from several processes). But within one run two
// processes are two sites: two "python" processes on GPU 0, or two ranks
// of a trace with the same stack, must not be added up into one site of a
// baseline, nor share one SARIF fingerprint. So among the findings of one
// SiteKey, the processes are ordered by when their series starts (NVML),
// then by pid (ranks start in order, so pid order is launch order), and
// the second and later take "|process N" after the key: the first keeps
// the plain key, so a run with one process per key keys as before, and
// the Nth process of a name in one run is matched with the Nth of the
// other run.
func SiteKeys(fs []Finding) []string {
	keys := make([]string, len(fs))
	type proc struct {
		pid, start int64
	}
	procs := map[string][]proc{}
	for i := range fs {
		f := &fs[i]
		keys[i] = SiteKey(f)
		if f.PID == nil {
			continue
		}
		start := int64(math.MaxInt64)
		if f.SeriesStartUs != nil {
			start = *f.SeriesStartUs
		}
		ps := procs[keys[i]]
		if j := slices.IndexFunc(ps, func(p proc) bool { return p.pid == *f.PID }); j >= 0 {
			ps[j].start = min(ps[j].start, start)
			continue
		}
		procs[keys[i]] = append(ps, proc{pid: *f.PID, start: start})
	}
	rank := map[string]map[int64]int{}
	for k, ps := range procs {
		if len(ps) < 2 {
			continue
		}
		slices.SortFunc(ps, func(a, b proc) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.pid, b.pid)) })
		rank[k] = map[int64]int{}
		for n, p := range ps {
			rank[k][p.pid] = n
		}
	}
	for i := range fs {
		if f := &fs[i]; f.PID != nil {
			if n := rank[keys[i]][*f.PID]; n > 0 {
				keys[i] += fmt.Sprintf("|process %d", n+1)
			}
		}
	}
	return keys
}

// processOrdinal is the N of a key's "|process N" (SiteKeys), 0 without.
func processOrdinal(key string) int {
	i := strings.LastIndex(key, "|process ")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(key[i+len("|process "):])
	if err != nil {
		return 0
	}
	return n
}

// SiteLines is the line number of each frame of a finding's stack
// (0 where a frame has none), comma-separated: what tells apart two
// findings of one run with the same SiteKey. "" when no frame has a line.
func SiteLines(f *Finding) string {
	var b strings.Builder
	hasLine := false
	for i, fr := range f.Stack {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, fr.Line)
		hasLine = hasLine || fr.Line > 0
	}
	if !hasLine {
		return ""
	}
	return b.String()
}

// NewBaseline adds up findings and tool errors by site: by SiteKey and,
// within one key, by SiteLines (two statements of one function are two
// sites). summary may be nil.
func NewBaseline(fs []Finding, errs []ToolError, summary *LeakSummary) *Baseline {
	byKey := map[string]*BaselineSite{}
	keys := SiteKeys(fs)
	replaced := replacedGPUs(fs, keys)
	for i := range fs {
		f := &fs[i]
		k := keys[i]
		if replaced[i] {
			continue
		}
		lines := SiteLines(f)
		s := byKey[k+"\x00"+lines]
		if s == nil {
			s = &BaselineSite{Key: k, Kind: f.Kind, Device: f.Device, DeviceType: f.DeviceType, Site: f.Site.String(), Lines: lines, Allocator: f.Allocator, Source: f.Source}
			if f.Kind == KindTrend {
				s.Site, s.GPUUUID = trendSiteName(f), f.GPUUUID
			}
			if n := processOrdinal(k); n > 0 {
				s.Site += fmt.Sprintf(" (process %d of this site in the run, by start)", n)
			}
			for j, fr := range f.Stack {
				if j == maxStackInBaseline {
					s.Stack = append(s.Stack, fmt.Sprintf("... %d more frames", len(f.Stack)-j))
					break
				}
				s.Stack = append(s.Stack, fr.String())
			}
			byKey[k+"\x00"+lines] = s
		}
		if f.Kind == KindTrend && (s.Class == "" || TrendClassRank(f.Classification) < TrendClassRank(s.Class)) {
			s.Class = f.Classification
		}
		if f.Kind == KindTrend && s.GPUUUID != f.GPUUUID {
			s.GPUUUID = "-" // several GPUs under one key: none to pair by
		}
		s.Bytes += f.Bytes
		if siteFamily(f.Source) == familyTimeline {
			// A timeline's categories hold bytes, not allocations: its
			// count is 0 (unknown), and stays so.
			s.Count += f.Count
		} else {
			s.Count += max(f.Count, 1)
		}
		if f.Kind == KindLeak && f.Growth != nil {
			s.Iterations = max(s.Iterations, f.Growth.Iterations)
		}
	}
	for i := range fs {
		if !replaced[i] {
			continue
		}
		if s := byKey[keys[i]+"\x00"+SiteLines(&fs[i])]; s != nil && !slices.Contains(s.ReplacedUUIDs, fs[i].GPUUUID) {
			s.ReplacedUUIDs = append(s.ReplacedUUIDs, fs[i].GPUUUID)
		}
	}
	for i := range errs {
		e := &errs[i]
		k := toolErrorKey(e)
		s := byKey[k]
		if s == nil {
			s = &BaselineSite{Key: k, Kind: Kind("sanitizer-error"), Site: e.Message}
			if e.Site != (Frame{}) {
				s.At = e.Site.String()
			}
			byKey[k] = s
		}
		s.Count += max(e.Count, 1)
	}
	b := &Baseline{Schema: BaselineSchema, Sites: []BaselineSite{}}
	for _, s := range byKey {
		b.Sites = append(b.Sites, *s)
	}
	sort.Slice(b.Sites, func(i, j int) bool {
		if b.Sites[i].Key != b.Sites[j].Key {
			return b.Sites[i].Key < b.Sites[j].Key
		}
		return b.Sites[i].Lines < b.Sites[j].Lines
	})
	if summary != nil {
		b.LeakSummary = &LeakSummary{}
		b.LeakSummary.add(summary)
	}
	return b
}

// replacedGPUs marks the findings of fs (keyed by keys, SiteKeys) that
// are a GPU's series (kind trend, no process) whose samples all end
// before those of another GPU series of the same key (host and index)
// with another UUID begin: a GPU replaced during the run (an RMA, a node
// rebuilt), its index taken by another. The GPUs were never in the host
// together, so their memory does not add up: the site is the GPU at the
// index at the end. Series of one key that overlap in time (a MIG
// GPU's instances, which share their GPU's index) are not marked.
func replacedGPUs(fs []Finding, keys []string) map[int]bool {
	byKey := map[string][]int{}
	for i := range fs {
		f := &fs[i]
		if f.Kind == KindTrend && f.PID == nil && f.GPUUUID != "" && f.SeriesStartUs != nil && f.SeriesEndUs != nil {
			byKey[keys[i]] = append(byKey[keys[i]], i)
		}
	}
	out := map[int]bool{}
	for _, is := range byKey {
		for _, i := range is {
			for _, j := range is {
				if fs[i].GPUUUID != fs[j].GPUUUID && *fs[i].SeriesEndUs < *fs[j].SeriesStartUs {
					out[i] = true
					break
				}
			}
		}
	}
	return out
}

// gpuReplacedNote says where the GPU at a key's index was replaced during a
// run (BaselineSite.ReplacedUUIDs): only the last GPU's memory is counted;
// "" where none was.
func gpuReplacedNote(b, a []*BaselineSite) string {
	var notes []string
	for _, side := range []struct {
		name  string
		sites []*BaselineSite
	}{{"BASE", b}, {"NEW", a}} {
		for _, s := range side.sites {
			if len(s.ReplacedUUIDs) > 0 {
				notes = append(notes, fmt.Sprintf("the GPU at this index was replaced during %s's run (%s before, %s at the end): only the last one's memory is counted",
					side.name, strings.Join(s.ReplacedUUIDs, ", "), s.GPUUUID))
			}
		}
	}
	return strings.Join(notes, "; ")
}

// trendSiteName names an NVML series as a diff shows it: its GPU and
// process, and the host and container that its key holds too (two hosts'
// "GPU 0" are two GPUs).
func trendSiteName(f *Finding) string {
	name := trendName(f)
	if f.Host != "" {
		name += " on " + f.Host
	}
	if f.Container != "" {
		name += " in container " + f.Container
	}
	return name
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
	b := RunBaseline(r.Findings, r.Errors, r.Inputs)
	b.Omitted = max(r.FindingsTotal-len(r.Findings), 0) + max(r.BelowMinBytes, 0)
	return b
}

// markOmitted turns a new entry into unmatched when BASE's document left
// findings out (--top, --min-bytes), and a fixed one when NEW's did: the
// site may be one of those, so it is neither new nor fixed, and --fail-on
// new does not count it (a report written with --min-bytes 40MiB made
// every smaller site of the same run "new").
func markOmitted(base, run *Baseline, es []DiffEntry) {
	for i := range es {
		e := &es[i]
		var side string
		var n int
		switch {
		case e.Status == StatusNew && base.Omitted > 0:
			side, n = "BASE", base.Omitted
		case e.Status == StatusFixed && run.Omitted > 0:
			side, n = "NEW", run.Omitted
		default:
			continue
		}
		e.Status = StatusUnmatched
		e.Note = joinNotes(e.Note, fmt.Sprintf("%s's report left out %s (written with --top or --min-bytes), and this site may be one of them: neither new nor fixed; write reports with --top 0 and without --min-bytes",
			side, plural(n, "finding", "findings")))
	}
}

// RunBaseline is the baseline of findings and tool errors of a run that
// read inputs ins: with their compute-sanitizer summaries, formats,
// devices that could not judge growth and active memory.
func RunBaseline(fs []Finding, errs []ToolError, ins []Input) *Baseline {
	b := NewBaseline(fs, errs, SummaryOf(ins))
	b.Formats = InputFormats(ins)
	b.GrowthUnjudged = UnjudgedOf(ins)
	b.Active = ActiveOf(ins)
	b.Stats = StatsOf(ins)
	return b
}

// DeviceStats is a device's memory as a run's last allocator statistics
// of it give it (Source "memory_summary" or "memory_stats", Device nil
// for a table whose title was cut off): allocated and reserved bytes, nil
// where the statistics did not give them (a table cut before the row).
type DeviceStats struct {
	Device         *int   `json:"device"`
	Source         string `json:"source"`
	AllocatedBytes *int64 `json:"allocated_bytes"`
	ReservedBytes  *int64 `json:"reserved_bytes"`
}

// StatsOf lists, by device and source, the last allocator statistics of
// the inputs read that give allocated or reserved memory, in the order
// first met.
func StatsOf(ins []Input) []DeviceStats {
	var out []DeviceStats
	for _, in := range ins {
		if in.Error != "" {
			continue
		}
		for _, st := range in.AllocatorStats {
			if st.AllocatedBytes == nil && st.ReservedBytes == nil {
				continue
			}
			d := DeviceStats{Device: st.Device, Source: st.Source, AllocatedBytes: st.AllocatedBytes, ReservedBytes: st.ReservedBytes}
			i := slices.IndexFunc(out, func(o DeviceStats) bool { return sameDevice(o.Device, d.Device) && o.Source == d.Source })
			if i < 0 {
				out = append(out, d)
				continue
			}
			out[i] = d
		}
	}
	return out
}

// sameDevice reports whether two devices, nil when not given, are one.
func sameDevice(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// StatsWarning compares, device by device, the memory the two runs'
// allocator statistics give (memory_summary(), memory_stats(); see
// StatsOf): they name no call site, so the sites compared (and the
// "held" totals, which add up sites) cannot show it. A device whose
// number either side does not give is paired when each run gives
// statistics of one device only. "" when the runs give none to pair.
func StatsWarning(base, run *Baseline) string {
	var notes []string
	for _, a := range run.Stats {
		i := slices.IndexFunc(base.Stats, func(b DeviceStats) bool { return sameDevice(b.Device, a.Device) && b.Source == a.Source })
		if i < 0 && len(base.Stats) == 1 && len(run.Stats) == 1 && base.Stats[0].Source == a.Source && (a.Device == nil || base.Stats[0].Device == nil) {
			i = 0
		}
		if i < 0 {
			continue
		}
		b := base.Stats[i]
		var parts []string
		for _, m := range []struct {
			what       string
			before, at *int64
		}{{"allocated", b.AllocatedBytes, a.AllocatedBytes}, {"reserved", b.ReservedBytes, a.ReservedBytes}} {
			if m.before == nil || m.at == nil {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s -> %s (%s)", m.what, IBytes(*m.before), IBytes(*m.at), signedIBytes(*m.at-*m.before)))
		}
		if len(parts) == 0 {
			continue
		}
		dev := "the device (its number not given)"
		switch {
		case a.Device != nil:
			dev = fmt.Sprintf("device %d", *a.Device)
		case b.Device != nil:
			dev = fmt.Sprintf("device %d", *b.Device)
		}
		notes = append(notes, fmt.Sprintf("%s, by each run's last %s: %s", dev, statsSourceWords(a.Source), strings.Join(parts, ", ")))
	}
	if len(notes) == 0 {
		return ""
	}
	return strings.Join(notes, "; ") + "; allocator statistics name no call site, so no site below accounts for this memory and the held totals (which add up sites) leave it out; a snapshot of each run (torch.cuda.memory._record_memory_history, then _dump_snapshot) would name where it is held"
}

// statsSourceWords names an AllocatorStats source as PyTorch's call.
func statsSourceWords(source string) string {
	switch source {
	case "memory_summary":
		return "torch.cuda.memory_summary() table"
	case "memory_stats":
		return "torch.cuda.memory_stats() dict"
	}
	return source
}

// InputFormats lists the formats of the inputs read, sorted, each once.
func InputFormats(ins []Input) []string {
	var fs []string
	for _, in := range ins {
		if in.Error == "" && in.Format != "" && !slices.Contains(fs, in.Format) {
			fs = append(fs, in.Format)
		}
	}
	slices.Sort(fs)
	return fs
}

// Families of memory sites: inputs whose sites are keyed alike. A
// snapshot's sites are user frames, a profiler trace's are ops (aten::...)
// with the Python stack that called them (lines where functions start), a
// memory timeline's are categories (activation, parameter, ...) without a
// stack or device, compute-sanitizer's carry their allocator. Sites of two
// families never share a key, so that "new" and "fixed" across families
// would only say that the inputs differ.
const (
	familySnapshot  = "a PyTorch memory snapshot"
	familyTrace     = "a PyTorch profiler trace"
	familyTimeline  = "a PyTorch memory timeline"
	familySanitizer = "a compute-sanitizer report"
)

// siteFamily is the family of memory sites an input format gives; ""
// for the others (NVML logs, OOM messages, memory_summary(), ...), which
// are compared as before.
func siteFamily(format string) string {
	switch format {
	case "pytorch-snapshot":
		return familySnapshot
	case "pytorch-profiler-trace":
		return familyTrace
	case "pytorch-memory-timeline", "pytorch-memory-timeline-raw":
		return familyTimeline
	case "compute-sanitizer", "compute-sanitizer-xml":
		return familySanitizer
	}
	return ""
}

// families lists the site families of a run: from its inputs' formats
// and its memory sites' sources; empty when neither says (a baseline
// written before they were recorded).
func families(b *Baseline) []string {
	var out []string
	add := func(format string) {
		if f := siteFamily(format); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range b.Formats {
		add(f)
	}
	for i := range b.Sites {
		if holdsMemory(b.Sites[i].Kind) {
			add(b.Sites[i].Source)
		}
	}
	slices.Sort(out)
	return out
}

// FamilyWarning says when BASE and NEW hold memory sites of families the
// other run has none of (a profiler trace against the memory timeline of
// the same run): those sites cannot be matched, and are unmatched rather
// than new or fixed. "" when the runs share their families, or one does
// not say.
func FamilyWarning(base, run *Baseline) string {
	bf, af := families(base), families(run)
	if len(bf) == 0 || len(af) == 0 || slices.Equal(bf, af) {
		return ""
	}
	return fmt.Sprintf("BASE is read from %s and NEW from %s: memory sites of different inputs (a snapshot's call sites, a trace's ops, a timeline's categories, compute-sanitizer's allocations) cannot be matched, so those only one side's inputs can give are listed as unmatched, neither new nor fixed; compare a run with a run of the same kind of input",
		strings.Join(bf, " and "), strings.Join(af, " and "))
}

// markOtherFamilies turns a new entry that BASE's inputs could not have
// given (and a fixed one that NEW's could not have given) into unmatched,
// with a Note: "new" would trip --fail-on new on a change of input, and
// "fixed" would claim a fix. A memory site needs an input of its family
// (siteFamily); a fragmentation finding, a snapshot or PyTorch's
// allocator stats (memory_summary(), memory_stats()); a trend, an NVML
// log. Other findings (OOMs, which many inputs give) are left as they
// are, and so are runs that do not say what they read (a baseline written
// before Baseline.Formats).
func markOtherFamilies(base, run *Baseline, es []DiffEntry) {
	for i := range es {
		e := &es[i]
		var other string
		var formats []string
		switch e.Status {
		case StatusNew:
			other, formats = "BASE", runFormats(base)
		case StatusFixed:
			other, formats = "NEW", runFormats(run)
		default:
			continue
		}
		what, ok := producers(e.Kind, e.source)
		if !ok || len(formats) == 0 || slices.ContainsFunc(formats, func(f string) bool { return slices.Contains(what.formats, f) }) {
			continue
		}
		e.Status = StatusUnmatched
		e.Note = joinNotes(e.Note, fmt.Sprintf("%s, and %s is read from %s, whose inputs cannot match it (none gives one): neither new nor fixed",
			what.name, other, strings.Join(formats, ", ")))
	}
}

// producer names the inputs that can give a finding, and their formats.
type producer struct {
	name    string
	formats []string
}

// producers says which input formats can give a finding of kind k read
// from an input of format source; ok is false when any may (or it cannot
// be told).
func producers(k Kind, source string) (producer, bool) {
	if fam := siteFamily(source); fam != "" && holdsMemory(k) {
		var fs []string
		for _, f := range allFormats {
			if siteFamily(f) == fam {
				fs = append(fs, f)
			}
		}
		return producer{"a site of " + fam, fs}, true
	}
	switch k {
	case KindFragmentation:
		return producer{"a fragmentation finding, which a snapshot or PyTorch's allocator stats give", fragmentationFormats}, true
	case KindTrend:
		fs := make([]string, len(nvml.Formats))
		for i, f := range nvml.Formats {
			fs[i] = string(f)
		}
		return producer{"a trend, which an NVML log gives", fs}, true
	}
	return producer{}, false
}

// fragmentationFormats are the formats of the inputs that give
// fragmentation findings: a snapshot's segments, PyTorch's allocator
// stats (memory_summary(), memory_stats()).
var fragmentationFormats = []string{"pytorch-snapshot", "pytorch-memory-summary", "pytorch-memory-stats"}

// allFormats are the formats siteFamily names.
var allFormats = []string{"pytorch-snapshot", "pytorch-profiler-trace", "pytorch-memory-timeline",
	"pytorch-memory-timeline-raw", "compute-sanitizer", "compute-sanitizer-xml"}

// runFormats are the formats of the inputs a run read: Baseline.Formats,
// or, in a baseline written before them, its memory sites' sources.
func runFormats(b *Baseline) []string {
	if len(b.Formats) > 0 {
		return b.Formats
	}
	var fs []string
	for i := range b.Sites {
		if s := b.Sites[i].Source; s != "" && !slices.Contains(fs, s) {
			fs = append(fs, s)
		}
	}
	slices.Sort(fs)
	return fs
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
	StatusGrown  = "grown"  // holds more than in the base run, beyond the tolerance; or an NVML series that grows now and did not (NewlyGrowing)
	StatusShrunk = "shrunk" // holds less
	StatusFixed  = "fixed"  // absent from this run
	StatusSame   = "same"   // holds as much (or more, within the tolerance)
	// StatusUnmatched: absent from one run, which held memory without a
	// stack on the same device and allocator class: the site may be
	// among it, so it is neither new nor fixed (see Compare).
	StatusUnmatched = "unmatched"
	// StatusUnreached: absent from NEW, whose run failed a CUDA call at
	// the same site (a cudaMallocHost that returned an error): not
	// reached or not done, so not fixed.
	StatusUnreached = "unreached"
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
	DeviceType   string   `json:"device_type,omitempty"`
	Site         string   `json:"site"`
	Stack        []string `json:"stack,omitempty"`
	BeforeBytes  int64    `json:"before_bytes"`
	AfterBytes   int64    `json:"after_bytes"`
	BeforeCount  int      `json:"before_count"`
	AfterCount   int      `json:"after_count"`
	DeltaBytes   int64    `json:"delta_bytes"`
	DeltaPercent *float64 `json:"delta_percent"`
	// Lines and Allocator: as in BaselineSite (NEW's, or BASE's for a
	// fixed site); Lines is "" where the sites of a key were compared
	// added up (a baseline written without lines).
	Lines     string `json:"lines,omitempty"`
	Allocator string `json:"allocator,omitempty"`
	// BeforeSite and BeforeStack: the site as BASE recorded it, where its
	// lines differ from NEW's (see Compare: the only site with these
	// functions in both runs, taken as moved); absent otherwise.
	BeforeSite  string   `json:"before_site,omitempty"`
	BeforeStack []string `json:"before_stack,omitempty"`
	// Differs: where another entry of the diff shows the same kind,
	// device, site and first stack frames, what tells this one apart
	// ("frame 7: mm_mat2_backward (...)", a key part such as another
	// function signature); absent otherwise.
	Differs string `json:"differs,omitempty"`
	// BeforeClass and AfterClass: for an NVML series (kind trend), its
	// classification in BASE and in NEW (BaselineSite.Class); absent for
	// other kinds, for the run without the series, and for baselines
	// written before it was recorded. A series whose class changed has a
	// Note that says so (to growing: a leak suspect).
	BeforeClass string `json:"before_class,omitempty"`
	AfterClass  string `json:"after_class,omitempty"`
	// Note: what the comparison of this site assumed or could not tell
	// (code that moved, a site that held memory as another kind).
	Note string `json:"note,omitempty"`

	// source: the format of the site's input (BaselineSite.Source);
	// iterations: its leak's iterations (BaselineSite.Iterations), NEW's
	// or, for a fixed site, BASE's.
	source     string
	iterations int
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
	// Entries: new, grown, fixed, shrunk, unmatched, unreached, then
	// same; by bytes changed, largest first, then by key.
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

// Compare compares run with base site by site. Sites match by Key and,
// where a key holds several sites in a run (statements at other lines of
// the same functions), by Key and Lines. A key with one site in each run
// at other lines is taken as one site whose code moved: no other site of
// either run has those functions and files, and BeforeSite says where it
// was; with more sites than that, sites at other lines are new and fixed,
// each with a Note. Sites without lines (a baseline written before
// lines were recorded) stand for all of their key's sites, added up.
// A fixed and a new site that are the same code called through another
// path are one entry (see mergeOtherPaths); sites that may be among the
// memory the other run recorded no stack for are unmatched (see
// markUnmatched); a site NEW failed a CUDA call at is unreached (see
// markUnreached). Entries that would show the same text say what
// differs (Differs).
func Compare(base, run *Baseline, tol Tolerance) []DiffEntry {
	runSites, renamed := pairByUUID(base.Sites, run.Sites)
	before, keys := groupByKey(base.Sites, nil)
	after, keys := groupByKey(runSites, keys)
	var out []DiffEntry
	for _, k := range keys {
		es := compareKey(before[k], after[k], tol)
		if was, ok := renamed[k]; ok {
			for i := range es {
				es[i].Note = joinNotes(fmt.Sprintf("paired by its GPU's UUID: BASE named it %s (its host or container label changed, as when a DCGM exporter restarts under a new pod name)", was), es[i].Note)
			}
		}
		if note := gpuReplacedNote(before[k], after[k]); note != "" {
			for i := range es {
				es[i].Note = joinNotes(note, es[i].Note)
			}
		}
		out = append(out, es...)
	}
	out = matchTraceOps(base, run, out, tol)
	markUnjudged(base, run, out, tol)
	noteKindChanges(out)
	out = mergeOtherPaths(out, tol)
	markUnmatched(base, run, out)
	markStacklessOOMs(base, run, out)
	markUnreached(run, out)
	markOtherFamilies(base, run, out)
	markOmitted(base, run, out)
	markLookalikes(out)
	order := map[string]int{StatusNew: 0, StatusGrown: 1, StatusFixed: 2, StatusShrunk: 3, StatusUnmatched: 4, StatusUnreached: 5, StatusSame: 6}
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
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.Lines < b.Lines
	})
	return out
}

// holdsMemory says whether sites of kind k hold memory at a call site
// (not an NVML series, fragmentation, an OOM or a tool error).
func holdsMemory(k Kind) bool {
	switch k {
	case KindTrend, KindFragmentation, KindOOM, KindNonPyTorch, Kind("sanitizer-error"):
		return false
	}
	return true
}

// stackless says whether a site holds memory with no stack to name its
// call site (compute-sanitizer --show-backtrace no, a snapshot recorded
// without stacks).
func stackless(s *BaselineSite) bool {
	return holdsMemory(s.Kind) && len(s.Stack) == 0 && strings.Contains(s.Key, "|no stack|")
}

// markUnmatched turns new and fixed entries into unmatched where the
// other run held memory without a stack that they may be part of: on
// the same device (any device when the runs share none, as the same
// code run on another GPU) and allocator class (any, where the
// stack-less memory has none). A new site of NEW may be among the
// memory BASE recorded no stack for, and BASE's stack-less memory may
// be NEW's stacked sites; either way neither run tells which, and
// "new" would trip --fail-on new on a run that only recorded stacks.
// The Note says what the other run held without a stack.
func markUnmatched(base, run *Baseline, es []DiffEntry) {
	noCommon := DeviceWarning(base, run) != ""
	// Stack-less memory of each run, and whether each run has memory at
	// a stacked site, by device and allocator class.
	type pool struct {
		bytes int64
		count int
		dev   *int
		alloc string
	}
	pools := func(b *Baseline) []pool {
		var ps []pool
		for i := range b.Sites {
			s := &b.Sites[i]
			if !stackless(s) {
				continue
			}
			found := false
			for j := range ps {
				if dev(ps[j].dev) == dev(s.Device) && ps[j].alloc == s.Allocator {
					ps[j].bytes = satAdd(ps[j].bytes, s.Bytes)
					ps[j].count += s.Count
					found = true
					break
				}
			}
			if !found && len(ps) < maxStacklessPools {
				ps = append(ps, pool{bytes: s.Bytes, count: s.Count, dev: s.Device, alloc: s.Allocator})
			}
		}
		return ps
	}
	covers := func(p pool, dv *int, alloc string) bool {
		return (noCommon || dev(p.dev) == dev(dv)) && (p.alloc == "" || p.alloc == alloc)
	}
	// Stack-less memory that the other run holds stack-less too (blocks
	// allocated before a snapshot's trace began, in both runs) stands
	// for itself: only what one run holds beyond the other's may be
	// the other's stacked sites.
	beyond := func(ps, others []pool) []pool {
		var out []pool
		for _, p := range ps {
			for _, o := range others {
				if (noCommon || dev(o.dev) == dev(p.dev)) && o.alloc == p.alloc {
					p.bytes -= o.bytes
					p.count -= o.count
				}
			}
			if p.bytes > 0 {
				out = append(out, p)
			}
		}
		return out
	}
	bp0, ap0 := pools(base), pools(run)
	bp, ap := beyond(bp0, ap0), beyond(ap0, bp0)
	describe := func(p pool) string {
		s := IBytes(p.bytes)
		if p.count > 0 {
			s += " in " + plural(p.count, "allocation", "allocations")
		}
		if p.alloc != "" {
			s += " of " + p.alloc + " memory"
		}
		if p.dev != nil {
			s += " on " + dev(p.dev)
		}
		return s
	}
	was := make([]string, len(es))
	for i := range es {
		e := &es[i]
		was[i] = e.Status
		if !holdsMemory(e.Kind) || (e.Status != StatusNew && e.Status != StatusFixed) {
			continue
		}
		other, side, mine := bp, "BASE", "new"
		if e.Status == StatusFixed {
			other, side, mine = ap, "NEW", "fixed"
		}
		noStack := strings.Contains(e.Key, "|no stack|")
		if noStack {
			// Stack-less memory on one device against stack-less memory
			// on another (runs on no common device): all of it compares.
			other = bp0
			if e.Status == StatusFixed {
				other = ap0
			}
		}
		for _, p := range other {
			// A site holding more than that memory is not all among it.
			if covers(p, e.Device, e.Allocator) && (noStack || max(e.BeforeBytes, e.AfterBytes) <= p.bytes) {
				e.Status = StatusUnmatched
				if noStack {
					// In place of noteKindChanges' note, which names
					// the other entry's status before this pass.
					e.Note = fmt.Sprintf("%s recorded no stacks for %s: this memory may be the same, so it is not called %s", side, describe(p), mine)
					break
				}
				e.Note = joinNotes(fmt.Sprintf("%s recorded no stacks for %s (beyond what the other run holds without a stack): this site may be among them, so it is not called %s", side, describe(p), mine), e.Note)
				break
			}
		}
	}
	// Stack-less memory of one run that the other run's stacked sites,
	// now unmatched, may be.
	for i := range es {
		e := &es[i]
		if (e.Status != StatusNew && e.Status != StatusFixed) || !strings.Contains(e.Key, "|no stack|") || !holdsMemory(e.Kind) {
			continue
		}
		otherWas, side := StatusFixed, "NEW"
		if e.Status == StatusFixed {
			otherWas, side = StatusNew, "BASE"
		}
		n, b := 0, int64(0)
		for j := range es {
			o := &es[j]
			if o.Status == StatusUnmatched && was[j] == otherWas && !strings.Contains(o.Key, "|no stack|") &&
				(noCommon || dev(o.Device) == dev(e.Device)) && (e.Allocator == "" || e.Allocator == o.Allocator) {
				n++
				b = satAdd(b, max(o.BeforeBytes, o.AfterBytes))
			}
		}
		if n == 0 {
			continue
		}
		e.Status = StatusUnmatched
		e.Note = joinNotes(fmt.Sprintf("%s recorded no stacks for this memory: it may be the %s (%s) listed as unmatched", side, plural(n, "site", "sites"), IBytes(b)), e.Note)
	}
}

// markUnjudged turns a new leak into unmatched where BASE could not judge
// growth on its device (a snapshot recorded with context="state", whose
// trace has no stacks to find iterations by; a trace without a repeating
// step) and held memory at the same site as another kind (retained, live):
// BASE could only report a leak there as that, so "new" would trip
// --fail-on new on a change of recording, and a kind change would claim
// one. A fixed leak where NEW could not judge is unmatched alike. The
// other run's entry at the site as another kind, a fixed or new one
// (the same memory called another kind), is unmatched too; one present in
// both runs is compared with the unmatched leaks' bytes added to the side
// that judged growth, and its Note says so. Runs that do not say where
// they could not judge (baselines written before
// Baseline.GrowthUnjudged) are left as they are.
func markUnjudged(base, run *Baseline, es []DiffEntry, tol Tolerance) {
	whyOf := func(b *Baseline) map[string]string {
		m := map[string]string{}
		for i, u := range b.GrowthUnjudged {
			if i == maxUnjudged {
				break // bounded: a baseline is untrusted input
			}
			k := fmt.Sprintf("%d\x00%s", u.Device, siteFamily(u.Source))
			if _, ok := m[k]; !ok {
				m[k] = u.Why
			}
		}
		return m
	}
	bw, aw := whyOf(base), whyOf(run)
	if len(bw) == 0 && len(aw) == 0 {
		return
	}
	lookup := func(m map[string]string, e *DiffEntry) (string, bool) {
		if e.Device == nil {
			return "", false
		}
		why, ok := m[fmt.Sprintf("%d\x00%s", *e.Device, siteFamily(e.source))]
		return why, ok
	}
	bySite := map[string][]int{}
	for i := range es {
		if holdsMemory(es[i].Kind) {
			k := dev(es[i].Device) + "\x00" + siteWithoutKind(es[i])
			bySite[k] = append(bySite[k], i)
		}
	}
	type mark struct {
		i      int
		status string
		note   string
	}
	var marks []mark
	// Per entry present in both runs: the leaks' bytes and counts to add
	// to the side that judged growth, and what they are.
	type addition struct {
		bytes  int64
		count  int
		leakOf string // "BASE" or "NEW"
		why    string
	}
	adds := map[int]*addition{}
	for i := range es {
		e := &es[i]
		if e.Kind != KindLeak || (e.Status != StatusNew && e.Status != StatusFixed) {
			continue
		}
		un, side, mine, judged := bw, "BASE", "new", "NEW"
		if e.Status == StatusFixed {
			un, side, mine, judged = aw, "NEW", "fixed", "BASE"
		}
		why, ok := lookup(un, e)
		if !ok {
			continue
		}
		held := func(o *DiffEntry) (int64, int) {
			if side == "BASE" {
				return o.BeforeBytes, o.BeforeCount
			}
			return o.AfterBytes, o.AfterCount
		}
		var parts []string
		var others []int
		for _, j := range bySite[dev(e.Device)+"\x00"+siteWithoutKind(*e)] {
			o := &es[j]
			if o.Kind == KindLeak {
				continue
			}
			b, c := held(o)
			if b == 0 && c == 0 {
				continue
			}
			others = append(others, j)
			if len(parts) < maxOtherSites {
				parts = append(parts, fmt.Sprintf("%s in %s as %s", IBytes(b), plural(c, "allocation", "allocations"), o.Kind))
			}
		}
		if len(others) == 0 {
			continue
		}
		could := fmt.Sprintf("%s could not judge growth on %s: %s; a leak there could only be reported as retained or live", side, dev(e.Device), why)
		verb := "held"
		if side == "NEW" {
			verb = "holds"
		}
		marks = append(marks, mark{i, StatusUnmatched, fmt.Sprintf("%s, and %s %s %s at this site: this may be the same leak, so it is not called %s",
			could, side, verb, strings.Join(parts, ", "), mine)})
		for _, j := range others {
			o := &es[j]
			switch o.Status {
			case StatusNew, StatusFixed:
				// The same memory, called another kind by the run that
				// could not judge.
				marks = append(marks, mark{j, StatusUnmatched, fmt.Sprintf("%s; %s holds %s at this site as a leak (listed as unmatched): this may be that leak, so it is not called %s",
					could, judged, IBytes(max(e.AfterBytes, e.BeforeBytes)), o.Status)})
			case StatusUnmatched, StatusUnreached:
			default:
				a := adds[j]
				if a == nil {
					a = &addition{leakOf: judged, why: could}
					adds[j] = a
				}
				a.bytes = satAdd(a.bytes, max(e.AfterBytes, e.BeforeBytes))
				a.count += max(e.AfterCount, e.BeforeCount)
			}
		}
	}
	for _, m := range marks {
		es[m.i].Status = m.status
		es[m.i].Note = joinNotes(m.note, es[m.i].Note)
	}
	for j, a := range adds {
		o := &es[j]
		b := &BaselineSite{Bytes: o.BeforeBytes, Count: o.BeforeCount}
		r := &BaselineSite{Bytes: o.AfterBytes, Count: o.AfterCount}
		with := r
		if a.leakOf == "BASE" {
			with = b
		}
		with.Bytes = satAdd(with.Bytes, a.bytes)
		with.Count += a.count
		st := status(b, r, tol)
		o.Status = st
		o.Note = joinNotes(fmt.Sprintf("%s; %s's leak at this site (%s, listed as unmatched) may be part of this memory: with it added, %s -> %s, %s",
			a.why, a.leakOf, IBytes(a.bytes), IBytes(b.Bytes), IBytes(r.Bytes), st), o.Note)
	}
}

// maxUnjudged bounds the devices a run's GrowthUnjudged is read for.
const maxUnjudged = 4096

// markUnreached turns fixed sites into unreached where NEW's run failed
// a CUDA call at the same site (innermost frame, with its line): the
// allocation was not made, it was not fixed. Where NEW's run failed calls
// with an error an earlier kernel fault leaves behind (see stickyErrors),
// its other fixed compute-sanitizer sites keep their status with a note:
// the run may have stopped before them.
func markUnreached(run *Baseline, es []DiffEntry) {
	failedAt := map[string]string{}
	sticky := ""
	for i := range run.Sites {
		s := &run.Sites[i]
		if s.Kind != Kind("sanitizer-error") {
			continue
		}
		// toolErrorKey: sanitizer-error|kind|API|error|kernel|...
		parts := strings.SplitN(s.Key, "|", 6)
		if len(parts) < 6 || parts[2] == "" {
			continue
		}
		if s.At != "" && len(failedAt) < maxFailedSites {
			if _, ok := failedAt[s.At]; !ok {
				call := parts[2] + " failed"
				if parts[3] != "" {
					call += " with " + parts[3]
				}
				failedAt[s.At] = call
			}
		}
		if stickyErrors[parts[3]] && sticky == "" {
			sticky = parts[3]
		}
	}
	for i := range es {
		e := &es[i]
		if e.Status != StatusFixed || !holdsMemory(e.Kind) {
			continue
		}
		if msg, ok := failedAt[e.Site]; ok {
			e.Status = StatusUnreached
			e.Note = joinNotes("NEW's run failed a CUDA call at this site ("+msg+"): the allocation was not made, so the site is not fixed", e.Note)
			continue
		}
		if sticky != "" && e.Allocator != "" {
			e.Note = joinNotes("NEW's run failed CUDA calls with "+sticky+", which an earlier kernel fault leaves behind: it may have stopped before this site, rather than fixed it", e.Note)
		}
	}
}

// maxFailedSites bounds the sites of failed calls looked up.
const maxFailedSites = 4096

// maxStacklessPools bounds the stack-less pools of a run (device and
// allocator class; a baseline is untrusted input).
const maxStacklessPools = 64

// DeviceWarning says when base and run held memory on CUDA devices and
// on no device in common: sites are compared by device, so none of them
// matches, and the same code run on another GPU shows as fixed and new.
// "" otherwise.
func DeviceWarning(base, run *Baseline) string {
	devices := func(b *Baseline) []int {
		var ds []int
		for _, s := range b.Sites {
			if s.Device != nil && !slices.Contains(ds, *s.Device) {
				ds = append(ds, *s.Device)
			}
		}
		slices.Sort(ds)
		return ds
	}
	bd, ad := devices(base), devices(run)
	if len(bd) == 0 || len(ad) == 0 {
		return ""
	}
	for _, d := range bd {
		if slices.Contains(ad, d) {
			return ""
		}
	}
	return fmt.Sprintf("BASE held memory on device %s and NEW on device %s, none in common: sites are compared by device, so the same code run on another GPU is listed as fixed and new (each such entry's note says what the other run held)",
		joinInts(bd), joinInts(ad))
}

func joinInts(ns []int) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}

// groupByKey groups sites by Key, appending keys first seen to keys.
// Sites listed twice with the same key and lines (a baseline edited by
// hand) are added up.
func groupByKey(sites []BaselineSite, keys []string) (map[string][]*BaselineSite, []string) {
	g := map[string][]*BaselineSite{}
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	byLines := map[[2]string]*BaselineSite{}
	for i := range sites {
		s := sites[i]
		if !seen[s.Key] {
			seen[s.Key] = true
			keys = append(keys, s.Key)
		}
		if o := byLines[[2]string{s.Key, s.Lines}]; o != nil {
			o.Bytes += s.Bytes
			o.Count += s.Count
			continue
		}
		byLines[[2]string{s.Key, s.Lines}] = &s
		g[s.Key] = append(g[s.Key], &s)
	}
	return g, keys
}

// compareKey compares the sites of one key in both runs (see Compare).
func compareKey(b, a []*BaselineSite, tol Tolerance) []DiffEntry {
	var out []DiffEntry
	if len(b) > 0 && len(a) > 0 && (hasNoLines(b) || hasNoLines(a)) {
		// One side does not tell the lines apart: compare the key's sites
		// added up.
		e := pairEntry(addUp(b)[0], addUp(a)[0], tol)
		if n := max(len(b), len(a)); n > 1 {
			e.Note = joinNotes(fmt.Sprintf("%s of these functions and files at other lines, added up: one run's sites record no lines (a baseline written before they were), so they are compared as one; the site shown is the first", plural(n, "site", "sites")), e.Note)
		}
		return []DiffEntry{e}
	}
	switch {
	case len(b) == 0:
		for _, s := range a {
			out = append(out, newEntry(s))
		}
		return out
	case len(a) == 0:
		for _, s := range b {
			out = append(out, fixedEntry(s))
		}
		return out
	}
	// Sites at the same lines in both runs are the same site.
	byLines := map[string]*BaselineSite{}
	for _, s := range b {
		byLines[s.Lines] = s
	}
	matched := map[string]bool{}
	var restB, restA []*BaselineSite
	for _, s := range a {
		if p := byLines[s.Lines]; p != nil {
			matched[s.Lines] = true
			out = append(out, pairEntry(p, s, tol))
			continue
		}
		restA = append(restA, s)
	}
	for _, s := range b {
		if !matched[s.Lines] {
			restB = append(restB, s)
		}
	}
	if len(restA) == 0 || len(restB) == 0 {
		for _, s := range restA {
			out = append(out, newEntry(s))
		}
		for _, s := range restB {
			out = append(out, fixedEntry(s))
		}
		return out
	}
	if moved := pairInLineOrder(restB, restA); moved != nil {
		note := fmt.Sprintf("at other lines than in BASE: BASE and NEW each have %s of these functions and files at lines the other has not, paired in line order as statements an edit moved (an edit keeps their order, in every frame)", plural(len(restA), "site", "sites"))
		if len(b) == 1 && len(a) == 1 {
			note = "at other lines than in BASE: compared as one site because no other site of either run has these functions and files, as code an edit moved"
		}
		note += "; if a statement was removed and another added, read it as fixed and new"
		for i, bs := range moved {
			e := pairEntry(bs, restA[i], tol)
			e.BeforeSite, e.BeforeStack = bs.Site, bs.Stack
			e.Note = joinNotes(note, e.Note)
			out = append(out, e)
		}
		return out
	}
	// Both runs have sites of these functions at lines the other has
	// not, and no order-keeping pairing: an edit may have moved them, but
	// which went where is not known.
	for _, s := range restA {
		e := newEntry(s)
		e.Note = "BASE has " + otherSites(s, restB) + "; if the file was edited between the runs, this may be one of them moved (which one is not known)"
		out = append(out, e)
	}
	for _, s := range restB {
		e := fixedEntry(s)
		e.Note = "NEW has " + otherSites(s, restA) + "; if the file was edited between the runs, this may be one of them moved (which one is not known)"
		out = append(out, e)
	}
	return out
}

// maxOtherSites bounds the sites a note names.
const maxOtherSites = 3

// otherSites names the other run's sites of s's functions and files at
// lines s has not: each by its innermost frame, and by the first frame
// that differs from s's where that one is the same.
func otherSites(s *BaselineSite, others []*BaselineSite) string {
	var names []string
	for i, o := range others {
		if i == maxOtherSites {
			names = append(names, fmt.Sprintf("%d more", len(others)-i))
			break
		}
		name := o.Site
		if n := firstDifference(s.Stack, o.Stack); n > 0 && n < len(o.Stack) {
			name += " < ... " + o.Stack[n]
		}
		names = append(names, name)
	}
	return plural(len(others), "site", "sites") + " of these functions and files at other lines: " + strings.Join(names, ", ")
}

// maxMovedSites and maxMovedFrames bound the sites of one key paired in
// line order, and their frames (a baseline is untrusted input).
const (
	maxMovedSites  = 64
	maxMovedFrames = 256
)

// pairInLineOrder pairs the sites of one key that BASE (b) and NEW (a)
// hold at lines the other has not, when they are as many and in the same
// order in every frame: sorted by their lines, the i-th of b is listed
// for the i-th of a (a is sorted in place). nil when they cannot be
// paired so.
func pairInLineOrder(b, a []*BaselineSite) []*BaselineSite {
	if len(a) == 1 && len(b) == 1 {
		return b // one each: no order to keep
	}
	if len(a) != len(b) || len(a) > maxMovedSites || strings.Count(a[0].Lines, ",") >= maxMovedFrames {
		return nil
	}
	bl, al := make([][]int64, len(b)), make([][]int64, len(a))
	for i := range b {
		bl[i], al[i] = parseLines(b[i].Lines), parseLines(a[i].Lines)
		if bl[i] == nil || al[i] == nil || len(bl[i]) != len(al[0]) || len(al[i]) != len(al[0]) {
			return nil
		}
	}
	ib, ia := make([]int, len(b)), make([]int, len(a))
	for i := range ib {
		ib[i], ia[i] = i, i
	}
	sort.SliceStable(ib, func(x, y int) bool { return slices.Compare(bl[ib[x]], bl[ib[y]]) < 0 })
	sort.SliceStable(ia, func(x, y int) bool { return slices.Compare(al[ia[x]], al[ia[y]]) < 0 })
	for x := range ia {
		for y := x + 1; y < len(ia); y++ {
			for f := range al[0] {
				if cmp.Compare(bl[ib[x]][f], bl[ib[y]][f]) != cmp.Compare(al[ia[x]][f], al[ia[y]][f]) {
					return nil
				}
			}
		}
	}
	sorted := make([]*BaselineSite, len(a))
	out := make([]*BaselineSite, len(b))
	for x := range ia {
		sorted[x], out[x] = a[ia[x]], b[ib[x]]
	}
	copy(a, sorted)
	return out
}

// parseLines reads BaselineSite.Lines; nil when it is not a list of
// non-negative numbers.
func parseLines(s string) []int64 {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// joinNotes joins notes that are not empty with "; ".
func joinNotes(notes ...string) string {
	var kept []string
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	return strings.Join(kept, "; ")
}

// hasNoLines says whether a site of ss was recorded without lines.
func hasNoLines(ss []*BaselineSite) bool {
	for _, s := range ss {
		if s.Lines == "" {
			return true
		}
	}
	return false
}

// addUp merges the sites of one key into one without lines, shown as
// its first site.
func addUp(ss []*BaselineSite) []*BaselineSite {
	if len(ss) <= 1 {
		if len(ss) == 1 && ss[0].Lines != "" {
			s := *ss[0]
			s.Lines = ""
			return []*BaselineSite{&s}
		}
		return ss
	}
	s := *ss[0]
	s.Lines = ""
	for _, o := range ss[1:] {
		s.Bytes += o.Bytes
		s.Count += o.Count
	}
	return []*BaselineSite{&s}
}

func newEntry(a *BaselineSite) DiffEntry {
	return finish(DiffEntry{Status: StatusNew, Key: a.Key, Kind: a.Kind, Device: a.Device, DeviceType: a.DeviceType, Site: a.Site, Stack: a.Stack,
		Lines: a.Lines, Allocator: a.Allocator, AfterBytes: a.Bytes, AfterCount: a.Count, AfterClass: a.Class, source: a.Source, iterations: a.Iterations})
}

func fixedEntry(b *BaselineSite) DiffEntry {
	return finish(DiffEntry{Status: StatusFixed, Key: b.Key, Kind: b.Kind, Device: b.Device, DeviceType: b.DeviceType, Site: b.Site, Stack: b.Stack,
		Lines: b.Lines, Allocator: b.Allocator, BeforeBytes: b.Bytes, BeforeCount: b.Count, BeforeClass: b.Class, source: b.Source, iterations: b.Iterations})
}

// pairEntry compares a site present in both runs. A leak whose runs'
// traces show different numbers of iterations is judged per iteration:
// what it held in BASE scaled to NEW's iterations, as a leak that keeps
// the same bytes each iteration would hold (a longer run of the same leak
// is not a grown leak); the Note says so.
func pairEntry(b, a *BaselineSite, tol Tolerance) DiffEntry {
	e := newEntry(a)
	e.BeforeBytes, e.BeforeCount, e.BeforeClass = b.Bytes, b.Count, b.Class
	e.Status = status(b, a, tol)
	if a.Kind == KindOOM && b.Kind == KindOOM && e.Status != StatusSame && (printedSizes(b.Source) || printedSizes(a.Source)) &&
		abs64(a.Bytes-b.Bytes) <= pytorchtext.SizeTolerance(b.Bytes)+pytorchtext.SizeTolerance(a.Bytes) {
		// An OOM message prints PyTorch's allocated memory to two
		// decimals of its unit: the snapshot of the same OOM differs by
		// that rounding, which is no change.
		e.Status = StatusSame
		e.Note = "the bytes differ by no more than the rounding of the sizes an OOM message prints (two decimals of their unit): the same"
	}
	if a.Kind == KindLeak && b.Iterations > 0 && a.Iterations > 0 && b.Iterations != a.Iterations && b.Bytes > 0 {
		scaled := *b
		scaled.Bytes = int64(float64(b.Bytes) / float64(b.Iterations) * float64(a.Iterations))
		e.Status = status(&scaled, a, tol)
		e.Note = fmt.Sprintf("BASE's trace shows %d iterations, NEW's %d: judged per iteration, %s per iteration -> %s, as if the leak kept the same bytes in each (iterations count within each trace, not before it)",
			b.Iterations, a.Iterations, IBytes(b.Bytes/int64(b.Iterations)), IBytes(a.Bytes/int64(a.Iterations)))
	}
	e.Note = joinNotes(e.Note, classChange(b.Class, a.Class))
	if NewlyGrowing(e) {
		// Its memory grows now and did not: a change, whatever its bytes
		// did (its last sample, or a released run's peak, may be below
		// BASE's plateau), so not shrunk or the same.
		e.Status = StatusGrown
	}
	return finish(e)
}

// NewlyGrowing reports whether e is an NVML series classified growing in
// NEW and, in BASE, as another class it recorded (step, sawtooth, flat):
// its status is StatusGrown whatever its bytes did, and every grown gate
// counts it. A baseline written before classes were recorded gives none.
func NewlyGrowing(e DiffEntry) bool {
	return e.AfterClass == "growing" && e.BeforeClass != "" && e.BeforeClass != "growing"
}

// classChange says how an NVML series' class changed from BASE to NEW:
// "" when it did not, or when one run's class is not known (a baseline
// written before classes were recorded). A series that grows in NEW and
// did not in BASE is a leak suspect whatever its bytes did: its bytes are
// the used memory of its last sample, or the peak of a run that came
// back to its baseline, and either may be lower while it grows.
func classChange(before, after string) string {
	if before == "" || after == "" || before == after {
		return ""
	}
	note := fmt.Sprintf("classified %s in BASE, %s in NEW", before, after)
	switch {
	case after == "growing":
		note += ": its used memory grows in NEW, a leak suspect whatever its bytes did (gpuleak trend on NEW's log gives the slope)"
	case before == "growing":
		note += ": it no longer grows"
	}
	return note
}

// TrendClassRank orders NVML series classes, the worst (growing) first:
// growing 0, step 1, sawtooth 2, flat 3, any other 4.
func TrendClassRank(c string) int {
	switch c {
	case "growing":
		return 0
	case "step":
		return 1
	case "sawtooth":
		return 2
	case "flat":
		return 3
	}
	return 4
}

// printedSizes says whether an input format gives sizes as PyTorch's
// format_size() prints them, rounded (an OOM message; also a log with
// PyTorch's messages beside another framework's, pytorchtext.FormatOOMLog,
// whose exact figures the rounding allowance leaves the same).
func printedSizes(format string) bool {
	return format == string(pytorchtext.FormatOOMMessage) || format == string(pytorchtext.FormatOOMLog)
}

// noteKindChanges notes, on a new site and a fixed one that differ only
// by their kind or device (memory a run held as retained that the other
// calls a leak; the same script run on another GPU), that the site held
// memory in the other run too: "new" alone would say it held nothing.
func noteKindChanges(es []DiffEntry) {
	fixed := map[string]int{}
	for i, e := range es {
		if e.Status == StatusFixed {
			fixed[siteWithoutKind(e)] = i
		}
	}
	for i := range es {
		e := &es[i]
		if e.Status != StatusNew {
			continue
		}
		j, ok := fixed[siteWithoutKind(*e)]
		if !ok || e.Note != "" || es[j].Note != "" {
			continue
		}
		if es[j].Kind != e.Kind && (!holdsMemory(es[j].Kind) || !holdsMemory(e.Kind)) {
			// An OOM, a fragmentation finding or a trend is no
			// memory a site held as another kind.
			continue
		}
		f := &es[j]
		e.Note = fmt.Sprintf("this site held %s in %s in BASE%s (listed as fixed): new%s only", IBytes(f.BeforeBytes),
			plural(f.BeforeCount, "allocation", "allocations"), kindDevice(f, e), kindDevice(e, f))
		f.Note = fmt.Sprintf("this site holds %s in %s in NEW%s (listed as new): fixed%s only", IBytes(e.AfterBytes),
			plural(e.AfterCount, "allocation", "allocations"), kindDevice(e, f), kindDevice(f, e))
	}
}

// mergeOtherPaths merges a fixed entry and a new one of the same kind,
// device and allocator class whose innermost frame is the same (the
// site a table shows) and whose stacks differ by outer frames inserted
// (see insertedFrames): the same code called through another path (one
// more wrapper function). Only where that innermost frame has one fixed entry and one
// new entry, neither with a note, are they one site, shown with NEW's
// stack, BASE's as BeforeStack, and a Note naming the first outer frame
// that differs; with more, which was which is not known. Keys and
// stacks are bounded as a baseline's are read (maxLookalikes entries
// per innermost frame are looked at).
func mergeOtherPaths(es []DiffEntry, tol Tolerance) []DiffEntry {
	type pair struct{ fixed, new, n int }
	groups := map[string]*pair{}
	var order []string
	for i := range es {
		e := &es[i]
		if (e.Status != StatusFixed && e.Status != StatusNew) || len(e.Stack) < 2 || e.Note != "" {
			continue
		}
		k := strings.Join([]string{string(e.Kind), dev(e.Device), e.Allocator, e.Site, e.Stack[0]}, "\x00")
		g := groups[k]
		if g == nil {
			g = &pair{fixed: -1, new: -1}
			groups[k] = g
			order = append(order, k)
		}
		g.n++
		if g.n > maxLookalikes {
			continue
		}
		if e.Status == StatusFixed {
			g.fixed = i
		} else {
			g.new = i
		}
	}
	drop := map[int]bool{}
	for _, k := range order {
		g := groups[k]
		if g.n != 2 || g.fixed < 0 || g.new < 0 {
			continue
		}
		f, n := &es[g.fixed], &es[g.new]
		d := firstDifference(f.Stack, n.Stack)
		if d < 1 || !insertedFrames(f.Stack, n.Stack, d) {
			continue
		}
		frameOf := func(st []string) string {
			if d < len(st) {
				return st[d]
			}
			return "nothing (the stack ends)"
		}
		m := *n
		m.BeforeBytes, m.BeforeCount = f.BeforeBytes, f.BeforeCount
		m.Status = status(&BaselineSite{Bytes: f.BeforeBytes, Count: f.BeforeCount}, &BaselineSite{Bytes: n.AfterBytes, Count: n.AfterCount}, tol)
		m.BeforeStack = f.Stack
		m.Note = fmt.Sprintf("the same site called through another path: the stacks differ from frame %d, %s in BASE, %s in NEW", d+1, frameOf(f.Stack), frameOf(n.Stack))
		*n = finish(m)
		drop[g.fixed] = true
	}
	return withoutDropped(es, drop)
}

// insertedFrames says whether the longer of x and y is the shorter with
// frames inserted at d, the first index where they differ: a wrapper
// added or removed between the same inner and outer frames. Frames
// replaced (gemm<float> for gemm<BFloat16>, another caller) are another
// path through other code, left as fixed and new.
func insertedFrames(x, y []string, d int) bool {
	if len(x) > len(y) {
		x, y = y, x
	}
	if len(x) == len(y) {
		return false
	}
	n := len(y) - len(x)
	return slices.Equal(x[d:], y[d+n:])
}

// kindDevice says " as KIND", " on device N" or both, for what e has
// that o has not.
func kindDevice(e, o *DiffEntry) string {
	s := ""
	if e.Kind != o.Kind {
		s += " as " + string(e.Kind)
	}
	if dev(e.Device) != dev(o.Device) {
		s += " on " + dev(e.Device)
	}
	return s
}

func dev(d *int) string {
	if d == nil {
		return "no device"
	}
	return fmt.Sprintf("device %d", *d)
}

// siteWithoutKind is an entry's key and lines without its kind and
// device.
func siteWithoutKind(e DiffEntry) string {
	k := e.Key
	if i := strings.IndexByte(k, '|'); i >= 0 {
		k = k[i:]
	} else {
		k = ""
	}
	if rest, ok := strings.CutPrefix(k, "|dev"); ok {
		n := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if n < 0 {
			n = len(rest)
		}
		k = rest[n:]
	}
	return k + "\x00" + e.Lines
}

// lookalike is what a diff table shows of an entry before its numbers:
// kind, device, allocator, site and the first frames of its stack.
func lookalike(e *DiffEntry) string {
	dev := ""
	if e.Device != nil {
		dev = fmt.Sprint(*e.Device)
	}
	st := e.Stack[:min(len(e.Stack), shownStackFrames)]
	more := ""
	if len(e.Stack) > shownStackFrames {
		more = "..."
	}
	return strings.Join([]string{string(e.Kind), dev, e.Allocator, e.Site, strings.Join(st, "\x00"), more}, "\x01")
}

// shownStackFrames is how many frames of a stack the diff table shows.
const shownStackFrames = 6

// markLookalikes fills Differs for entries that show the same (see
// lookalike): the first frame of the stack where each differs from each
// of the others, or else the first part of the key (a C++ signature the
// short name hides, a frame past the 16 a baseline keeps), or the lines.
func markLookalikes(es []DiffEntry) {
	groups := map[string][]int{}
	for i := range es {
		l := lookalike(&es[i])
		groups[l] = append(groups[l], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, i := range g {
			var parts []string
			for n, j := range g {
				if n == maxLookalikes {
					// Bounded (a baseline is untrusted input).
					parts = append(parts, plural(len(g)-n, "more entry", "more entries")+" shown alike not compared")
					break
				}
				if j == i {
					continue
				}
				if p := telling(&es[i], &es[j]); p != "" && !slices.Contains(parts, p) {
					parts = append(parts, p)
				}
			}
			es[i].Differs = strings.Join(parts, "; ")
		}
	}
}

// maxLookalikes bounds the entries an entry is told apart from.
const maxLookalikes = 64

// telling is what tells entry e apart from o, which shows the same.
func telling(e, o *DiffEntry) string {
	if n := firstDifference(e.Stack, o.Stack); n >= 0 {
		if n < len(e.Stack) {
			return fmt.Sprintf("frame %d: %s", n+1, e.Stack[n])
		}
		return fmt.Sprintf("stack ending after frame %d", n)
	}
	ek, ok := strings.Split(e.Key, "|"), strings.Split(o.Key, "|")
	if n := firstDifference(ek, ok); n >= 0 {
		if n < len(ek) {
			if ek[n] == "" {
				return "key part " + fmt.Sprint(n+1) + " empty"
			}
			return "key: " + ek[n]
		}
		return "key ending before " + ok[n]
	}
	if e.Lines != o.Lines {
		if e.Lines == "" {
			return "all lines, added up"
		}
		return "lines " + e.Lines
	}
	return ""
}

// firstDifference is the first index where x and y differ, -1 when equal.
func firstDifference(x, y []string) int {
	for i := range max(len(x), len(y)) {
		if i >= len(x) || i >= len(y) || x[i] != y[i] {
			return i
		}
	}
	return -1
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

// otherStatuses is ", N unmatched" for the statuses a totals line shows
// only where some site has them: "" when none has.
func otherStatuses(t map[string]DiffTotals) string {
	s := ""
	for _, st := range []string{StatusUnmatched, StatusUnreached} {
		if n := t[st].Sites; n > 0 {
			s += fmt.Sprintf(", %d %s", n, st)
		}
	}
	return s
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

// FindingBaseline is a finding's site in the baseline: its status (new,
// grown, or unmatched: the baseline holds memory without a stack that it
// may be among, see Compare) and what it held there.
type FindingBaseline struct {
	Status      string `json:"status"`
	BeforeBytes int64  `json:"before_bytes"`
	BeforeCount int    `json:"before_count"`
	// AfterBytes, AfterCount, DeltaBytes and DeltaPercent: the site's in
	// this run, as the comparison counted them (DiffEntry's: the findings
	// of a site the baseline holds without lines are added up), and the
	// change; DeltaPercent is null when the baseline held 0 bytes.
	AfterBytes   int64    `json:"after_bytes"`
	AfterCount   int      `json:"after_count"`
	DeltaBytes   int64    `json:"delta_bytes"`
	DeltaPercent *float64 `json:"delta_percent"`
	// BeforeSite and Note: as in DiffEntry (code that moved, a site the
	// baseline holds as another kind or device, a leak judged per
	// iteration); absent when they do not apply.
	BeforeSite string `json:"before_site,omitempty"`
	Note       string `json:"note,omitempty"`
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

// withoutDropped returns es less the entries whose indices drop holds, in
// es's order (reusing its array).
func withoutDropped(es []DiffEntry, drop map[int]bool) []DiffEntry {
	if len(drop) == 0 {
		return es
	}
	out := es[:0]
	for i := range es {
		if !drop[i] {
			out = append(out, es[i])
		}
	}
	return out
}

// pairByUUID is run's sites with the key of an NVML series (kind trend)
// that BASE does not have replaced by BASE's key of the series of the
// same GPU UUID and process name that run does not have, where each side
// has exactly one such series: the GPU's labels changed (a DCGM exporter
// restarted: its Hostname label is its pod's name; a new container name),
// not the GPU. renamed maps each BASE key given to a site of run to
// BASE's site name.
func pairByUUID(base, run []BaselineSite) ([]BaselineSite, map[string]string) {
	inBase, inRun := map[string]bool{}, map[string]bool{}
	baseName := map[string]string{}
	for _, s := range base {
		inBase[s.Key] = true
		baseName[s.Key] = s.Site
	}
	for _, s := range run {
		inRun[s.Key] = true
	}
	// Unpaired series by UUID and process: their keys on each side.
	type id struct{ uuid, process string }
	process := func(key string) string {
		// "trend|gpu N|host|process|container"
		if p := strings.Split(key, "|"); len(p) >= 5 {
			return p[3]
		}
		return ""
	}
	only := func(sites []BaselineSite, other map[string]bool) map[id][]string {
		m := map[id][]string{}
		for _, s := range sites {
			if s.Kind != KindTrend || s.GPUUUID == "" || s.GPUUUID == "-" || other[s.Key] {
				continue
			}
			k := id{s.GPUUUID, process(s.Key)}
			if !slices.Contains(m[k], s.Key) {
				m[k] = append(m[k], s.Key)
			}
		}
		return m
	}
	b, a := only(base, inRun), only(run, inBase)
	to := map[string]string{} // NEW's key -> BASE's
	for k, rk := range a {
		if bk := b[k]; len(bk) == 1 && len(rk) == 1 {
			to[rk[0]] = bk[0]
		}
	}
	if len(to) == 0 {
		return run, nil
	}
	out := slices.Clone(run)
	renamed := map[string]string{}
	for i := range out {
		if bk, ok := to[out[i].Key]; ok {
			renamed[bk] = baseName[bk]
			out[i].Key = bk
		}
	}
	return out, renamed
}
