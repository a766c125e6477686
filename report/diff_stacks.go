package report

import (
	"fmt"
	"strings"
)

// Sites that one run recorded with a stack and the other without: the
// keys differ only because of how the inputs were recorded, so "new" and
// "fixed" would claim a change the code did not make.

// keyFrames are the frames of a site key ("function @ file"), innermost
// first; nil for a key without frames.
func keyFrames(key string) []string {
	var out []string
	for _, p := range strings.Split(key, "|") {
		if strings.Contains(p, " @ ") {
			out = append(out, p)
		}
	}
	return out
}

// pythonFrame says whether a key frame has a file: a Python (or C++
// source) frame, not an op or a range of a profiler trace.
func pythonFrame(frame string) bool {
	_, file, _ := strings.Cut(frame, " @ ")
	return file != ""
}

// traceSite says whether a site holds memory and was read from a profiler
// trace.
func traceSite(source string, k Kind) bool {
	return source == "pytorch-profiler-trace" && holdsMemory(k)
}

// traceStacks says how a run's profiler trace sites were recorded: any
// is whether it has such sites, python whether any has a frame with a
// file (a trace recorded with with_stack=True has them for every
// allocation the Python code made; one recorded without, PyTorch's
// default, has none: its sites are the ops alone).
func traceStacks(b *Baseline) (any, python bool) {
	for i := range b.Sites {
		s := &b.Sites[i]
		if !traceSite(s.Source, s.Kind) {
			continue
		}
		any = true
		for _, f := range keyFrames(s.Key) {
			if pythonFrame(f) {
				return true, true
			}
		}
	}
	return any, false
}

// matchTraceOps compares the sites of a profiler trace recorded without
// Python stacks (with_stack=False: each site is an op, aten::clone) with
// those of a trace recorded with them (aten::clone < ... < step
// (train.py:9)) by op: the innermost frame of both is the op that
// allocated. Sites of one op, kind and device are one entry, the stacked
// run's added up, compared by bytes, with a Note that says how. An op
// held as another kind in the other run (a trace without stacks or
// ProfilerStep#N spans cannot judge growth, and calls a leak retained) is
// unmatched on both sides: neither new nor fixed. Ops that only one run
// has stay new or fixed. Nothing changes when both runs' traces have
// Python frames, or neither's has.
func matchTraceOps(base, run *Baseline, es []DiffEntry, tol Tolerance) []DiffEntry {
	bAny, bPy := traceStacks(base)
	aAny, aPy := traceStacks(run)
	if !bAny || !aAny || bPy == aPy {
		return es
	}
	// The op-only side's entries have this status (BASE's are fixed).
	opOnly, opSide, stackSide, opHeld, stackHeld := StatusFixed, "BASE", "NEW", "held", "holds"
	if !aPy {
		opOnly, opSide, stackSide, opHeld, stackHeld = StatusNew, "NEW", "BASE", "holds", "held"
	}
	type group struct {
		ops, stacked []int // entries of the op-only run, of the other
	}
	groups := map[string]*group{}
	var order []string
	for i := range es {
		e := &es[i]
		if (e.Status != StatusNew && e.Status != StatusFixed) || !traceSite(e.source, e.Kind) {
			continue
		}
		fr := keyFrames(e.Key)
		if len(fr) == 0 {
			continue
		}
		// The op alone: a stacked trace names an op called inside a
		// module with the module's class where a file would be
		// ("aten::linear @ nn.Module: Linear"); a trace without stacks has
		// no module to name ("aten::linear @ ").
		op, _, _ := strings.Cut(fr[0], " @ ")
		k := dev(e.Device) + "\x00" + op
		g := groups[k]
		if g == nil {
			if len(groups) == maxOpGroups {
				continue // bounded: a baseline is untrusted input
			}
			g = &group{}
			groups[k] = g
			order = append(order, k)
		}
		if e.Status == opOnly {
			g.ops = append(g.ops, i)
		} else {
			g.stacked = append(g.stacked, i)
		}
	}
	recorded := fmt.Sprintf("%s's profiler trace has no Python stacks (recorded without with_stack=True): its sites are the ops alone, and %s's have the Python lines under them", opSide, stackSide)
	drop := map[int]bool{}
	for _, k := range order {
		g := groups[k]
		if len(g.ops) == 0 || len(g.stacked) == 0 {
			continue
		}
		op := es[g.ops[0]].Site
		matchedOp, matchedStacked := map[int]bool{}, map[int]bool{}
		for _, o := range g.ops {
			var same []int
			for _, s := range g.stacked {
				if es[s].Kind == es[o].Kind {
					same = append(same, s)
				}
			}
			if len(same) == 0 {
				continue
			}
			matchedOp[o] = true
			// Each side as one site: the stacked sites added up.
			site := func(e *DiffEntry) BaselineSite {
				return BaselineSite{Kind: e.Kind, Bytes: max(e.BeforeBytes, e.AfterBytes), Count: max(e.BeforeCount, e.AfterCount), Iterations: e.iterations}
			}
			opS := site(&es[o])
			var st BaselineSite
			for _, s := range same {
				matchedStacked[s] = true
				x := site(&es[s])
				st.Kind, st.Bytes, st.Count, st.Iterations = x.Kind, satAdd(st.Bytes, x.Bytes), st.Count+x.Count, max(st.Iterations, x.Iterations)
			}
			b, a := &opS, &st
			if opSide == "NEW" {
				b, a = &st, &opS
			}
			p := pairEntry(b, a, tol)
			// One entry in place of the op's and its stacked sites':
			// the stacked site's stack where it is one.
			m := es[same[0]]
			if len(same) > 1 {
				m = es[o]
				m.Stack = []string{op}
			}
			m.BeforeBytes, m.BeforeCount, m.AfterBytes, m.AfterCount, m.Status = p.BeforeBytes, p.BeforeCount, p.AfterBytes, p.AfterCount, p.Status
			m.Lines = ""
			how := "matched by the op that allocated, " + op
			if len(same) > 1 {
				how = fmt.Sprintf("matched by the op that allocated, %s: %s's %d sites of it added up", op, stackSide, len(same))
			}
			m.Note = joinNotes(recorded+"; "+how, p.Note, m.Note)
			es[same[0]] = finish(m)
			for _, s := range same[1:] {
				drop[s] = true
			}
			drop[o] = true
		}
		// The op held as another kind on the other side.
		describe := func(is []int, matched map[int]bool) string {
			var parts []string
			for _, i := range is {
				if matched[i] {
					continue
				}
				e := &es[i]
				parts = append(parts, fmt.Sprintf("%s as %s", IBytes(max(e.BeforeBytes, e.AfterBytes)), e.Kind))
				if len(parts) == maxOtherSites {
					break
				}
			}
			return strings.Join(parts, ", ")
		}
		opsLeft, stackedLeft := describe(g.ops, matchedOp), describe(g.stacked, matchedStacked)
		if opsLeft == "" || stackedLeft == "" {
			continue
		}
		for _, o := range g.ops {
			if !matchedOp[o] {
				e := &es[o]
				e.Status = StatusUnmatched
				e.Note = joinNotes(fmt.Sprintf("%s; %s %s %s at %s under Python stacks (%s): a trace without them cannot always judge growth, so this is neither new nor fixed",
					recorded, stackSide, stackHeld, plural(len(g.stacked)-len(matchedStacked), "site", "sites"), op, stackedLeft), e.Note)
			}
		}
		for _, s := range g.stacked {
			if !matchedStacked[s] {
				e := &es[s]
				e.Status = StatusUnmatched
				e.Note = joinNotes(fmt.Sprintf("%s; %s %s %s (%s): this site may be that memory judged without stacks (a trace without them cannot always judge growth), so it is neither new nor fixed",
					recorded, opSide, opHeld, op, opsLeft), e.Note)
			}
		}
	}
	return withoutDropped(es, drop)
}

// maxOpGroups bounds the ops and devices matchTraceOps looks at.
const maxOpGroups = 4096

// markStacklessOOMs turns new and fixed OOMs into unmatched where one run
// has an OOM without a stack on the device and the other an OOM with one:
// an OOM message without its traceback (or a profiler trace's
// [OutOfMemory] event) against the snapshot, or the traceback, of the
// same OOM. The OOM without a stack is keyed by device alone, and may be
// any of the other run's; which one, the inputs do not tell, so neither
// is new or fixed. Devices compare as in markUnmatched: any, when the
// runs share none; an OOM whose device is unknown, with any.
func markStacklessOOMs(base, run *Baseline, es []DiffEntry) {
	noCommon := DeviceWarning(base, run) != ""
	noStack := func(e *DiffEntry) bool { return strings.Contains(e.Key, "|no stack|") }
	sameDevice := func(x, y *DiffEntry) bool {
		return noCommon || x.Device == nil || y.Device == nil || *x.Device == *y.Device
	}
	sideOf := map[string]string{StatusNew: "NEW", StatusFixed: "BASE"}
	var marks []struct {
		i    int
		note string
	}
	for i := range es {
		e := &es[i]
		if e.Kind != KindOOM || (e.Status != StatusNew && e.Status != StatusFixed) {
			continue
		}
		other := StatusFixed
		if e.Status == StatusFixed {
			other = StatusNew
		}
		var names []string
		n := 0
		for j := range es {
			o := &es[j]
			if o.Kind != KindOOM || o.Status != other || noStack(o) == noStack(e) || !sameDevice(e, o) {
				continue
			}
			n++
			if len(names) < maxOtherSites {
				names = append(names, o.Site)
			}
		}
		if n == 0 {
			continue
		}
		where := dev(e.Device)
		var note string
		if noStack(e) {
			note = fmt.Sprintf("this OOM on %s has no stack (an OOM message without its traceback, or a profiler trace's [OutOfMemory] event), and %s has %s with one (%s): it may be one of them, so it is not called %s",
				where, sideOf[other], plural(n, "OOM", "OOMs"), strings.Join(names, ", "), e.Status)
		} else {
			note = fmt.Sprintf("%s has %s on %s without a stack (an OOM message without its traceback, or a profiler trace's [OutOfMemory] event): this may be that OOM, so it is not called %s",
				sideOf[other], plural(n, "OOM", "OOMs"), where, e.Status)
		}
		marks = append(marks, struct {
			i    int
			note string
		}{i, note})
	}
	for _, m := range marks {
		e := &es[m.i]
		e.Status = StatusUnmatched
		e.Note = joinNotes(m.note, e.Note)
	}
}
