package report

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// GateHelp documents the --fail-on expressions, for help text.
const GateHelp = `A gate is NAME, or NAME>VALUE, or NAME>=VALUE; several are separated by
commas (or given with repeated --fail-on). The run exits with code 1 when
any gate trips. NAME is:
  a finding kind     leak, pending-free, live, retained, oom, fragmentation, non-pytorch
                     (with a size: see below), ...:
                     alone, any finding of that kind; with a size, the bytes
                     all of its findings hold together (leak>64MiB)
  growing, step, sawtooth, flat
                     NVML series of that class (alone: any; with a size: the
                     used memory of all of them at their last sample, or at
                     the peak of growth given back before the log ended)
  oom                alone, also the out-of-memory errors an allocator
                     counted (num_ooms, memory_summary()'s "CUDA OOMs")
                     beyond those the inputs describe: caught, or their
                     message not given; with a size, the OOM findings only;
                     not judged on inputs that cannot show an OOM (NVML
                     logs, memory timelines, compute-sanitizer XML)
  trend              the same as growing: the NVML series that are leak
                     suspects (every series is a trend finding, flat and
                     one-sample ones too; those trip only their class's gate)
  non-pytorch        memory a process used outside PyTorch's caching allocator:
                     at an OOM (in use less reserved), or a non-pytorch finding
                     (a snapshot joined with an NVML log), the most of any
                     (non-pytorch>1GiB); alone, any non-pytorch finding (an
                     OOM always has some: its CUDA context)
  sanitizer-errors   compute-sanitizer errors that are not leaks, printed or
                     not (ERROR SUMMARY less the leaks, where it counts more
                     than the records read): sanitizer-errors>0; alone, any
  new                sites absent from --baseline (alone: any; with a size:
                     the bytes they hold together)
  grown              sites holding more than in --baseline: alone, beyond
                     --tolerance; grown>10% any site grown by more than 10%;
                     grown>1MiB any site grown by more than 1 MiB; an NVML
                     series that grows in this run and did not in the
                     baseline (another class there) trips every grown gate,
                     whatever its bytes did
VALUE is a size (64MiB, 1.5GiB, 4096; KB, MB, GB are powers of 1000), a count
(sanitizer-errors) or a percent (grown). ">" trips above VALUE, ">=" at it:
leak>64MiB passes at exactly 64 MiB and trips one byte over. A gate no
input can answer (sanitizer-errors with no compute-sanitizer report; trend
and the NVML classes with no NVML log; fragmentation with no snapshot,
memory_summary() table or memory_stats() dump; pending-free, live and
retained with no snapshot, profiler trace or memory timeline; leak with no snapshot, sanitizer
report, profiler trace or memory timeline, or none that could judge
leaks: a snapshot without a trace or without stacks in it, a trace of too
few steps or of none that repeats, a sanitizer log without --leak-check
full) is not judged: the run says so
and exits with code 2, as for an input it could not read. leak judged on
some inputs only names the others and exits as their verdict.`

// GateOp compares a gate's measure with its threshold.
type GateOp string

// Gate operators.
const (
	OpAny GateOp = ""   // NAME alone: anything at all
	OpGT  GateOp = ">"  // above the threshold
	OpGE  GateOp = ">=" // at or above the threshold
)

// Gate is one --fail-on expression.
type Gate struct {
	// Text is the expression as written, trimmed.
	Text string
	Name string
	Op   GateOp
	// Threshold is bytes, a count, or (Percent) hundredths of a percent.
	Threshold int64
	Percent   bool
}

// GateError is a --fail-on expression gpuleak cannot read. Column is
// 1-based, in Arg.
type GateError struct {
	Arg    string
	Column int
	Msg    string
}

func (e *GateError) Error() string {
	return fmt.Sprintf("bad --fail-on %q at column %d: %s", e.Arg, e.Column, e.Msg)
}

// gate names that are not finding kinds.
const (
	gateNonPyTorch      = "non-pytorch"
	gateSanitizerErrors = "sanitizer-errors"
	gateNew             = "new"
	gateGrown           = "grown"
)

var trendClasses = map[string]bool{"growing": true, "step": true, "sawtooth": true, "flat": true}

// trendClass is the NVML class the gate counts: its name, or growing for
// trend (the kind every series' finding has, flat or of one sample alike,
// so that "any trend finding" would trip on every NVML log); "" for a
// gate on no NVML class.
func (g Gate) trendClass() string {
	switch {
	case trendClasses[g.Name]:
		return g.Name
	case g.Name == string(KindTrend):
		return "growing"
	}
	return ""
}

// KnownKind reports whether k is a finding kind gpuleak writes: one the
// report ranks (a kind added to Kind.rank is known here too).
func KnownKind(k Kind) bool { return k != "" && k.rank() != Kind("\x00").rank() }

// ParseGates reads --fail-on arguments: each a comma-separated list of
// expressions (see GateHelp). An empty argument, or an empty expression
// between commas, is an error.
func ParseGates(args []string) ([]Gate, error) {
	var gs []Gate
	for _, arg := range args {
		col := 1
		for _, part := range strings.Split(arg, ",") {
			g, err := parseGate(arg, part, col)
			if err != nil {
				return nil, err
			}
			gs = append(gs, g)
			col += len(part) + 1
		}
	}
	return gs, nil
}

// parseGate reads one expression, part of arg starting at column col.
func parseGate(arg, part string, col int) (Gate, error) {
	lead := len(part) - len(strings.TrimLeft(part, " \t"))
	s := strings.TrimSpace(part)
	at := func(off int, format string, a ...any) error {
		return &GateError{Arg: arg, Column: col + lead + off, Msg: fmt.Sprintf(format, a...)}
	}
	if s == "" {
		return Gate{}, at(0, "empty expression: want a finding kind, growing, non-pytorch, sanitizer-errors, new or grown")
	}
	n := 0
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] == '-' || n > 0 && s[n] >= '0' && s[n] <= '9') {
		n++
	}
	name := s[:n]
	g := Gate{Text: s, Name: name}
	if name == "" {
		return g, at(0, "want a name (a finding kind, growing, non-pytorch, sanitizer-errors, new or grown), not %q", s[:1])
	}
	if !knownGate(name) {
		return g, at(0, "unknown name %q: %s", name, "want a finding kind ("+kindList()+"), growing, step, sawtooth, flat, sanitizer-errors, new or grown")
	}
	rest := strings.TrimLeft(s[n:], " ")
	off := len(s) - len(rest)
	switch {
	case rest == "":
		return g, nil
	case strings.HasPrefix(rest, ">="):
		g.Op, rest, off = OpGE, rest[2:], off+2
	case strings.HasPrefix(rest, ">"):
		g.Op, rest, off = OpGT, rest[1:], off+1
	default:
		return g, at(off, "want > or >= after %q, not %q", name, rest[:1])
	}
	val := strings.TrimSpace(rest)
	off += len(rest) - len(strings.TrimLeft(rest, " "))
	if val == "" {
		return g, at(off, "want a value after %q", g.Op)
	}
	switch {
	case strings.HasSuffix(val, "%"):
		if name != gateGrown {
			return g, at(off, "a percent compares growth against --baseline: only grown takes one")
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(val[:len(val)-1]), 64)
		if err != nil || p < 0 || p > 1e9 || math.IsNaN(p) {
			return g, at(off, "want a percent such as 10%%, not %q", val)
		}
		g.Percent, g.Threshold = true, int64(math.Round(p*100))
	case name == gateSanitizerErrors:
		c, err := strconv.ParseInt(val, 10, 64)
		if err != nil || c < 0 {
			return g, at(off, "want a count of errors such as 0, not %q", val)
		}
		g.Threshold = c
	default:
		b, err := humanize.ParseBytes(val)
		if err != nil || strings.HasPrefix(val, "-") {
			return g, at(off, "want a size such as 64MiB, 1.5GiB or 4096, not %q", val)
		}
		if b > math.MaxInt64 {
			b = math.MaxInt64
		}
		g.Threshold = int64(b)
	}
	return g, nil
}

func knownGate(name string) bool {
	switch name {
	case gateNonPyTorch, gateSanitizerErrors, gateNew, gateGrown:
		return true
	}
	return trendClasses[name] || KnownKind(Kind(name))
}

// kindList names the finding kinds, in report order.
func kindList() string {
	var names []string
	for _, k := range []Kind{KindOOM, KindLeak, KindPendingFree, KindTrend, KindNonPyTorch, KindFragmentation, KindLive, KindRetained} {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// NeedsBaseline reports whether a gate compares with --baseline.
func (g Gate) NeedsBaseline() bool { return g.Name == gateNew || g.Name == gateGrown }

// GateInput is what gates look at: the findings left after --min-bytes
// (before --top cuts the list), the tool errors, and, with a baseline,
// the comparison with it (nil without one).
type GateInput struct {
	Findings []Finding
	Errors   []ToolError
	Diff     []DiffEntry
	// Tolerance decides plain "grown".
	Tolerance Tolerance
	// Sources are the inputs read, in whole or in part, each with its
	// family. A gate that only some families can answer, and no source is
	// of, is unjudged; so is the leak gate when no source of its families
	// could judge leaks (Input.LeaksUnjudged), and when some could, it is
	// judged on them and names the others (GateResult.NotJudgedOn). Nil
	// leaves every gate judged.
	Sources []Source
	// Inputs are the report's inputs: the oom gate also counts the
	// out-of-memory errors their allocator statistics counted (num_ooms
	// of memory_stats() or memory_summary()'s "CUDA OOMs") beyond those
	// the inputs describe. Nil counts none.
	Inputs []Input
}

// Source is an input read, as the gates see it.
type Source struct {
	Path string
	// Family is the input's family (pipeline's: pytorch-snapshot,
	// compute-sanitizer, nvml, ...); Format its format
	// (pytorch-memory-summary, ...).
	Family, Format string
	// LeaksUnjudged is Input.LeaksUnjudged: why the input could not judge
	// leaks; "" when it could, or shows no leaks of any kind.
	LeaksUnjudged string
	// Empty is Input.Empty: why no gate can be judged on the input (it
	// holds no event); "" when it holds something.
	Empty string
	// Tables are the formats of the tables read inside the input besides
	// its own (pytorch-memory-summary, pytorch-memory-stats: a
	// memory_summary() table or memory_stats() dump printed in a log, an
	// OOM message's file, a pprint of the dict), as StatsTables lists
	// them: a gate those formats answer is judged on the input, whatever
	// format carried them.
	Tables []string
}

// StatsTables lists the formats of in's allocator statistics sets that
// give what the fragmentation gate counts (the non-releasable, inactive
// split, bytes and the reserved bytes), once each, for Source.Tables:
// "pytorch-memory-summary" for a memory_summary() table,
// "pytorch-memory-stats" for a memory_stats() dump. Nil when it has none.
func StatsTables(in Input) []string {
	var out []string
	for _, st := range in.AllocatorStats {
		if st.InactiveSplitBytes == nil || st.ReservedBytes == nil {
			continue
		}
		f := "pytorch-memory-stats"
		if st.Source == "memory_summary" {
			f = "pytorch-memory-summary"
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// NotJudged is an input a gate could not be judged on, and why.
type NotJudged struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// GateResult is one --fail-on gate and what it measured; the report
// lists every gate, tripped or not.
type GateResult struct {
	// Gate is the expression as written.
	Gate    string `json:"gate"`
	Tripped bool   `json:"tripped"`
	// Why says what was measured against the threshold, in one line.
	Why string `json:"why"`
	// Unjudged is true when no input read is of a family that can give
	// what the gate counts (sanitizer-errors over snapshots only), or none
	// of those could (leak over snapshots without a trace): the gate could
	// not trip, and says so rather than pass.
	Unjudged bool `json:"unjudged,omitempty"`
	// NotJudgedOn lists the inputs of a family the gate counts that could
	// not give what it counts, when others could (leak over a snapshot
	// with a trace and one without): the gate was judged on the others
	// only, and Why says so. Absent otherwise.
	NotJudgedOn []NotJudged `json:"not_judged_on,omitempty"`

	g Gate
}

// Evaluate measures every gate on in, in gate order.
func Evaluate(gs []Gate, in GateInput) []GateResult {
	var out []GateResult
	for _, g := range gs {
		can, cannot := g.judging(in.Sources)
		switch {
		case in.Sources == nil:
		case g.families() == nil && (can > 0 || len(cannot) == 0):
			// Any input answers the gate (an OOM, a baseline's new
			// sites): judged, on all but the empty ones.
		case can == 0 && len(cannot) == 0:
			out = append(out, GateResult{Gate: g.Text, Unjudged: true, g: g,
				Why: "no input is or holds " + g.sources() + ", the only inputs that give what it counts"})
			continue
		case can == 0:
			out = append(out, GateResult{Gate: g.Text, Unjudged: true, NotJudgedOn: cannot, g: g,
				Why: "no input given could judge " + g.judged() + ": " + notJudgedList(cannot)})
			continue
		}
		why, ok := g.eval(in)
		if why == "" {
			why = "nothing to measure: " + g.nothing()
		}
		if len(cannot) > 0 {
			why += fmt.Sprintf("; judged on %s only, not on %s", plural(can, "input", "inputs"), notJudgedList(cannot))
		}
		out = append(out, GateResult{Gate: g.Text, Tripped: ok, Why: why, NotJudgedOn: cannot, g: g})
	}
	return out
}

// judging counts the sources of the gate's families (every source, for
// a gate any input answers) that can give what it counts, and lists those
// that cannot (an input that holds no event; a leak gate's snapshot
// without a trace).
func (g Gate) judging(srcs []Source) (can int, cannot []NotJudged) {
	fams := g.families()
	for _, s := range srcs {
		if fams != nil && !slices.Contains(fams, s.Family) && !slices.Contains(fams, s.Format) &&
			!slices.ContainsFunc(s.Tables, func(t string) bool { return slices.Contains(fams, t) }) {
			continue
		}
		if s.Empty != "" {
			cannot = append(cannot, NotJudged{Path: s.Path, Why: s.Empty})
			continue
		}
		if g.Name == string(KindLeak) && s.LeaksUnjudged != "" {
			cannot = append(cannot, NotJudged{Path: s.Path, Why: s.LeaksUnjudged})
			continue
		}
		// An input that cannot show an OOM (a memory timeline, an NVML
		// log, compute-sanitizer's XML) cannot answer the oom gate;
		// memory_stats() can, by its counter (num_ooms).
		if why := OOMBlind(s.Format); g.Name == string(KindOOM) && why != "" && s.Format != "pytorch-memory-stats" {
			cannot = append(cannot, NotJudged{Path: s.Path, Why: why})
			continue
		}
		can++
	}
	return can, cannot
}

// judged names what the gate counts, for "no input given could judge
// ...": leaks, OOMs, retained memory.
func (g Gate) judged() string {
	switch g.Name {
	case string(KindOOM):
		return "OOMs"
	case string(KindLive), string(KindRetained), string(KindPendingFree), string(KindNonPyTorch):
		return g.Name + " memory"
	case string(KindFragmentation), gateSanitizerErrors:
		return g.Name
	}
	return g.Name + "s"
}

// maxNotJudgedListed bounds the inputs a gate's why names; the JSON
// report's not_judged_on lists them all.
const maxNotJudgedListed = 3

// notJudgedList names the inputs a gate could not be judged on, each with
// why: "a.pickle: it has no trace ...; b.pickle: ...".
func notJudgedList(ns []NotJudged) string {
	var parts []string
	for i, n := range ns {
		if i == maxNotJudgedListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(ns)-i))
			break
		}
		parts = append(parts, n.Path+": "+n.Why)
	}
	return strings.Join(parts, "; ")
}

// families is answeredBy's list, sources its words.
func (g Gate) families() []string {
	f, _ := g.answeredBy()
	return f
}

func (g Gate) sources() string {
	_, s := g.answeredBy()
	return s
}

// answeredBy names the input families (pipeline's: pytorch-snapshot,
// nvml, ...) or formats (pytorch-memory-summary, ...) whose findings the
// gate counts, for the gates only some inputs can answer, and says so in
// words; nil and "" for a gate any input can (an OOM is in logs,
// snapshots and traces alike, and judging leaves out the inputs OOMBlind
// names; new and grown compare with a baseline).
func (g Gate) answeredBy() ([]string, string) {
	switch g.Name {
	case gateSanitizerErrors:
		return []string{"compute-sanitizer"}, "a compute-sanitizer report"
	case string(KindLeak):
		return []string{"pytorch-snapshot", "compute-sanitizer", "pytorch-profiler-trace", "pytorch-memory-timeline"},
			"a PyTorch memory snapshot, a compute-sanitizer report, a PyTorch profiler trace or memory timeline"
	case string(KindPendingFree), string(KindLive), string(KindRetained):
		// The call sites of PyTorch's allocations: compute-sanitizer's
		// records are leaks only.
		return []string{"pytorch-snapshot", "pytorch-profiler-trace", "pytorch-memory-timeline"},
			"a PyTorch memory snapshot, profiler trace or memory timeline"
	case string(KindFragmentation):
		return fragmentationFormats, "a PyTorch memory snapshot, memory_summary() table or memory_stats() dump"
	}
	if g.trendClass() != "" {
		return []string{"nvml"}, "an NVML sample log"
	}
	return nil, ""
}

// nothing says what a gate found none of.
func (g Gate) nothing() string {
	switch {
	case g.Name == gateNonPyTorch:
		return "no OOM with in-use and reserved memory, and no non-pytorch finding"
	case g.Name == gateNew:
		return "no site absent from the baseline"
	case g.Name == gateGrown:
		return "no site grew enough"
	case g.trendClass() != "":
		return "no " + g.trendClass() + " NVML series"
	}
	return "no " + g.Name + " finding"
}

// Matches reports whether a finding counts toward the gate (for per-input
// verdicts: JUnit); gates on totals (non-pytorch, sanitizer-errors) match
// findings of no kind.
func (r GateResult) Matches(f *Finding) bool {
	switch g := r.g; {
	case g.Name == gateNew || g.Name == gateGrown:
		return f.Baseline != nil && f.Baseline.Status == g.Name
	case g.trendClass() != "":
		return f.Kind == KindTrend && f.Classification == g.trendClass()
	case g.Name == gateNonPyTorch:
		return f.Kind == KindNonPyTorch
	case g.Name == gateSanitizerErrors:
		return false
	default:
		return string(f.Kind) == g.Name
	}
}

// IsSanitizerErrors reports whether the gate counts compute-sanitizer errors.
func (r GateResult) IsSanitizerErrors() bool { return r.g.Name == gateSanitizerErrors }

// crosses reports whether v passes the gate's threshold.
func (g Gate) crosses(v int64) bool {
	switch g.Op {
	case OpGT:
		return v > g.Threshold
	case OpGE:
		return v >= g.Threshold
	}
	return v > 0
}

func (g Gate) eval(in GateInput) (string, bool) {
	switch {
	case g.Name == gateSanitizerErrors:
		return g.evalSanitizerErrors(in)
	case g.Name == gateNonPyTorch:
		most, found := int64(0), false
		for i := range in.Findings {
			f := &in.Findings[i]
			var v int64
			switch {
			case f.Kind == KindNonPyTorch:
				v = f.Bytes
			case g.Op == OpAny: // alone: the finding kind only
				continue
			case f.Kind != KindOOM || f.OOMDetail == nil || f.AllocatorMemory == nil || f.ProcessInUseBytes == nil || f.AllocatorMemory.ReservedBytes == nil:
				continue
			default:
				v = *f.ProcessInUseBytes - *f.AllocatorMemory.ReservedBytes
			}
			if !found || v > most {
				most, found = v, true
			}
		}
		if !found {
			return "", false
		}
		return fmt.Sprintf("%s used outside PyTorch's caching allocator (at an OOM, or beside a snapshot)", sizeWhy(most)), g.crosses(most)
	case g.Name == gateNew:
		n, b := 0, int64(0)
		for _, e := range in.Diff {
			if e.Status == StatusNew {
				n++
				b += e.AfterBytes
			}
		}
		if n == 0 {
			return "", false
		}
		why := fmt.Sprintf("%s absent from the baseline, holding %s", plural(n, "site", "sites"), sizeWhy(b))
		if g.Op == OpAny {
			return why, true
		}
		return why, g.crosses(b)
	case g.Name == gateGrown:
		return g.evalGrown(in)
	case g.trendClass() != "":
		// "series" is its own plural.
		c := g.trendClass()
		return g.sumFindings(in.Findings, func(f *Finding) bool { return f.Kind == KindTrend && f.Classification == c },
			func(n int) string { return plural(n, c+" NVML series", c+" NVML series") })
	}
	if g.Name == string(KindOOM) {
		return g.evalOOM(in)
	}
	// Counted as the summary counts them: "1 leak", "4 leaks", "2 OOMs",
	// "3 retained findings".
	return g.sumFindings(in.Findings, func(f *Finding) bool { return string(f.Kind) == g.Name },
		func(n int) string { return kindCount(Kind(g.Name), n) })
}

// sumFindings gates the findings match selects: any, or their bytes
// together; count words n of them.
func (g Gate) sumFindings(fs []Finding, match func(*Finding) bool, count func(n int) string) (string, bool) {
	n, b := 0, int64(0)
	for i := range fs {
		if match(&fs[i]) {
			n++
			b = satAdd(b, fs[i].Bytes)
		}
	}
	if n == 0 {
		return "", false
	}
	why := fmt.Sprintf("%s holding %s", count(n), sizeWhy(b))
	if g.Op == OpAny {
		return why, true
	}
	return why, g.crosses(b)
}

// evalSanitizerErrors counts the compute-sanitizer errors that are not
// leaks: in each input, the records read, or the tool's summaries' count
// where that is more (LeakSummary.NonLeakErrors: records --print-limit
// left unprinted, or a log cut between its records and its summary).
func (g Gate) evalSanitizerErrors(in GateInput) (string, bool) {
	records := map[string]int64{}
	var n int64
	for _, e := range in.Errors {
		records[e.Path] += int64(max(e.Count, 1))
		n += int64(max(e.Count, 1))
	}
	unprinted := int64(0)
	for _, inp := range in.Inputs {
		if s := inp.LeakSummary; s != nil && s.NonLeakErrors != nil && *s.NonLeakErrors > records[inp.Path] {
			unprinted += *s.NonLeakErrors - records[inp.Path]
		}
	}
	if n+unprinted == 0 {
		return "", false // as for every gate: nothing found, nothing trips
	}
	why := plural(int(n), "compute-sanitizer error record", "compute-sanitizer error records") + " (not leaks)"
	if unprinted > 0 {
		why = plural(int(n+unprinted), "compute-sanitizer error", "compute-sanitizer errors") +
			fmt.Sprintf(" (not leaks), by the tool's ERROR SUMMARY: %d of them without a record read (--print-limit, or a cut log)", unprinted)
	}
	return why, g.crosses(n + unprinted)
}

// evalOOM counts the OOM findings, and the out-of-memory errors an
// allocator counted (num_ooms) that no input describes
// (AllocatorStats.UndescribedOOMs): a caught OOM, or one whose message is
// not in the inputs, still happened. The counter is per process and
// cumulative, so the largest count of any one set of a device is taken
// (a summary printed twice is one process's), and the devices' added up.
//
// With a size, the gate measures what the OOMs asked for: their requests
// (OOMDetail.RequestedBytes, a message's "Tried to allocate"), added up,
// as the text and Markdown tables show an OOM's bytes. The memory PyTorch
// had allocated at an OOM (Finding.Bytes) is the process's state, not the
// OOM's size: a 16 GiB request on an empty 15.24 GiB GPU has 0 bytes
// allocated and is a 16 GiB OOM. An OOM whose request is not known (XLA's
// status without sizes, a message cut before it), like an OOM counted only
// by the allocator, has no size: it trips a plain oom gate, and is named,
// not measured, by one with a size.
func (g Gate) evalOOM(in GateInput) (string, bool) {
	n, unsized, req := 0, 0, int64(0)
	for i := range in.Findings {
		if f := &in.Findings[i]; f.Kind == KindOOM {
			n++
			if f.OOMDetail != nil && f.OOMDetail.RequestedBytes != nil {
				req = satAdd(req, *f.OOMDetail.RequestedBytes)
			} else {
				unsized++
			}
		}
	}
	why, ok := "", false
	switch {
	case n == 0:
	case unsized == n:
		why, ok = kindCount(KindOOM, n)+", of no known request", g.Op == OpAny
	default:
		why, ok = fmt.Sprintf("%s requesting %s", kindCount(KindOOM, n), sizeWhy(req)), g.Op == OpAny || g.crosses(req)
		if unsized > 0 {
			why += fmt.Sprintf(" (%d of them of no known request, not counted)", unsized)
		}
	}
	if folded, at := foldedOOMs(in.Findings); folded > 0 {
		// Lines Ray's log deduplication folded: OOMs of no size the
		// inputs show.
		why += fmt.Sprintf("; at least %s folded into their lines by Ray's log deduplication (%s), of no known size", plural(folded, "more OOM line", "more OOM lines"), at)
		if g.Op == OpAny {
			ok = true
		}
	}
	most, where, atLeast := allocatorCountedOOMs(in.Inputs)
	if most == 0 {
		return why, ok
	}
	extra := fmt.Sprintf("%s%s more counted by the allocator (num_ooms, %s) than the inputs describe", atLeast, plural(int(most), "out-of-memory error", "out-of-memory errors"), where)
	if why != "" {
		extra = why + "; " + extra
	}
	if g.Op == OpAny {
		return extra, true
	}
	return extra + ", of no known size", ok
}

// foldedOOMs adds up the OOM findings' FoldedOOMs, and names where they
// were folded (file:line of each finding's first source).
func foldedOOMs(fs []Finding) (int, string) {
	n := 0
	var at []string
	for i := range fs {
		f := &fs[i]
		if f.Kind != KindOOM || f.OOMDetail == nil || f.OOMDetail.FoldedOOMs == 0 {
			continue
		}
		n += f.OOMDetail.FoldedOOMs
		if s := f.OOMDetail.Sources; len(s) > 0 && s[0].Line != nil {
			at = append(at, fmt.Sprintf("%s:%d", s[0].Path, *s[0].Line))
		}
	}
	return n, strings.Join(at, ", ")
}

// allocatorCountedOOMs adds up the out-of-memory errors allocators
// counted beyond those the inputs describe (AllocatorStats.UndescribedOOMs):
// the counter is a device's in one process (memory_stats(device)) and
// cumulative, so the largest set of each device and process
// (AllocatorStats.Process: a launcher's ranks print tables of "device 0"
// each), the latest of equal ones, over them; where names those sets (file:line, ...);
// atLeast is "at least " when several sets name no device (one process's
// printed twice, or several processes'), "" otherwise.
func allocatorCountedOOMs(inputs []Input) (most int64, where, atLeast string) {
	type devMost struct {
		n     int64
		where string
	}
	type devProc struct {
		dev  int
		proc string
	}
	byDev := map[devProc]devMost{}
	var devs []devProc
	unnamed := 0
	for _, inp := range inputs {
		for _, s := range inp.AllocatorStats {
			d := -1
			if s.Device != nil {
				d = *s.Device
			} else if s.UndescribedOOMs > 0 {
				unnamed++
			}
			k := devProc{d, s.Process}
			if cur, seen := byDev[k]; s.UndescribedOOMs > 0 && (!seen || s.UndescribedOOMs >= cur.n) {
				if !seen {
					devs = append(devs, k)
				}
				byDev[k] = devMost{s.UndescribedOOMs, fmt.Sprintf("%s:%d", inp.Path, s.Line)}
			}
		}
	}
	var at []string
	for _, d := range devs {
		most += byDev[d].n
		at = append(at, byDev[d].where)
	}
	if unnamed > 1 {
		atLeast = "at least "
	}
	return most, strings.Join(at, ", "), atLeast
}

// evalGrown trips on the site that grew most beyond the threshold.
func (g Gate) evalGrown(in GateInput) (string, bool) {
	for _, e := range in.Diff {
		if NewlyGrowing(e) {
			// A change of class is no size: any grown gate counts it.
			before, after := sizesWhy(e.BeforeBytes, e.AfterBytes)
			return fmt.Sprintf("%s %s grows in this run and did not in the baseline (classified %s there; %s -> %s): a leak suspect whatever its bytes did",
				e.Kind, e.Site, e.BeforeClass, before, after), true
		}
		if e.Status == StatusNew || e.Status == StatusFixed || e.Status == StatusUnmatched || e.AfterBytes <= e.BeforeBytes {
			continue
		}
		delta := e.AfterBytes - e.BeforeBytes
		var ok bool
		switch {
		case g.Op == OpAny:
			ok = e.Status == StatusGrown
		case g.Percent:
			// delta/before*100 > threshold/100, exactly: delta*10000 vs threshold*before.
			l := new(big.Int).Mul(big.NewInt(delta), big.NewInt(10000))
			r := new(big.Int).Mul(big.NewInt(g.Threshold), big.NewInt(e.BeforeBytes))
			c := l.Cmp(r)
			ok = c > 0 || g.Op == OpGE && c == 0
		default:
			ok = g.crosses(delta)
		}
		if ok {
			pct := ""
			if e.DeltaPercent != nil {
				pct = fmt.Sprintf(" (%+.2f%%)", *e.DeltaPercent)
			}
			before, after := sizesWhy(e.BeforeBytes, e.AfterBytes)
			return fmt.Sprintf("%s %s grew from %s to %s%s", e.Kind, e.Site, before, after, pct), true
		}
	}
	return "", false
}

func sizeWhy(b int64) string {
	return fmt.Sprintf("%s (%s bytes)", IBytes(b), humanize.Comma(b))
}

// sizesWhy renders a site's size before and after, in bytes, as sizeWhy
// does, with the decimals that tell the two apart (FromTo): "20.00 GiB
// (21,474,836,480 bytes)" and "20.01 GiB (...)", never "20 GiB" twice.
func sizesWhy(before, after int64) (string, string) {
	b, a := FromTo(before, after)
	return fmt.Sprintf("%s (%s bytes)", b, humanize.Comma(before)), fmt.Sprintf("%s (%s bytes)", a, humanize.Comma(after))
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
