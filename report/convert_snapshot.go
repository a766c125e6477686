package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// FromLeaks turns a snapshot's leak analysis into the report's input
// entry and findings. path is the input as named on the command line,
// source its format; parseWarnings come from the parser.
func FromLeaks(path, source string, parseWarnings []string, res *snapshot.LeakResult) (Input, []Finding) {
	in := Input{Path: path, Format: source}
	in.Warnings = append(append(in.Warnings, parseWarnings...), res.Warnings...)
	for _, d := range res.Devices {
		ds := DeviceSummary{
			Device: d.Device, Segments: d.Segments, ReservedBytes: knownBytes(d.ReservedBytes),
			ActiveBytes: knownBytes(d.ActiveBytes), ActiveBlocks: d.ActiveBlocks, TraceEntries: d.TraceEntries,
			UnmatchedFrees: d.UnmatchedFrees, LiveAtTraceEnd: d.LiveAtTraceEnd,
			BlocksNotInTrace: d.BlocksNotInTrace, PendingFreeBytes: d.PendingFreeBytes,
			PendingFreeBlocks: d.PendingFreeBlocks, Iterations: d.Iterations,
			IterationMarker: d.IterationMarker, GrowthUnjudged: d.Unjudged, PID: d.PID,
		}
		if d.Iterations > 0 && d.IterationSite != (callsite.Frame{}) {
			fr := frame(d.IterationSite)
			ds.IterationSite = &fr
		}
		if source == "pytorch-profiler-trace" && d.ActiveBytes >= 0 {
			lb := d.LiveBytes
			ds.LiveBytes = &lb
		}
		if d.HasTime {
			start, end := d.TraceStartUs, d.TraceEndUs
			ds.TraceStartUs, ds.TraceEndUs = &start, &end
		}
		if d.PeakActiveBytes > 0 {
			peak, seq := d.PeakActiveBytes, d.PeakSeq
			ds.PeakActiveBytes, ds.PeakSeq, ds.PeakTraceBytes = &peak, &seq, d.PeakTraceBytes
			if d.PeakReservedBytes > 0 {
				r := d.PeakReservedBytes
				ds.PeakReservedBytes = &r
			}
			if d.HasTime && d.PeakUs != 0 {
				t := d.PeakUs
				ds.PeakUs = &t
			}
			for _, ps := range d.PeakSites {
				p := PeakSite{Bytes: ps.Bytes, Count: ps.Count}
				if ps.Frame != (callsite.Frame{}) {
					fr := frame(ps.Frame)
					p.Site = &fr
				}
				ds.PeakSites = append(ds.PeakSites, p)
			}
		}
		in.Devices = append(in.Devices, ds)
	}
	in.LeaksUnjudged = leaksUnjudged(res.Devices)
	// The devices whose snapshot holds no trace entry: their live sites'
	// messages say the history was not recorded, not that it began late.
	untraced := map[int]bool{}
	for _, d := range res.Devices {
		if d.TraceEntries == 0 {
			untraced[d.Device] = true
		}
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
			Message: siteMessage(s, untraced[s.Device]),
			Sizes:   s.Sizes,
			PID:     s.PID,
		}
		if s.PID != nil {
			// One process's of several (a merged profiler trace): the
			// verdict says whose.
			kind, rest, _ := strings.Cut(f.Message, ": ")
			f.Message = fmt.Sprintf("%s: in process %d, %s", kind, *s.PID, rest)
		}
		for _, fr := range s.Stack {
			f.Stack = append(f.Stack, frame(fr))
		}
		for _, p := range s.PrivatePools {
			f.PrivatePools = append(f.PrivatePools, PrivatePoolBytes{PoolID: p.ID, Bytes: p.Bytes})
		}
		if s.Kind == callsite.PendingFree {
			if s.Stream >= 0 {
				st := s.Stream
				f.Stream = &st
			}
			for _, fr := range s.FreedAt {
				f.FreedAt = append(f.FreedAt, frame(fr))
			}
		}
		if g := s.Growth; g != nil {
			gr := &Growth{R2: round(g.R2, 4), Kept: g.Kept, Allocations: g.Allocations, ActiveTenths: g.ActiveParts,
				Iterations: g.Iterations, IterationMarker: g.Marker, Measured: g.Measured, Every: g.Every, GrewIn: g.GrewIn,
				BytesPerIteration: round(g.PerIteration, 1), PlateauIteration: g.PlateauStep,
				FirstIteration: g.FirstStep, LastIteration: g.LastStep, OnsetIteration: g.OnsetStep,
				ReplacedAtPlateau: g.Replaced}
			if s.Kind != callsite.Leak {
				gr.BytesPerIteration = 0
			} else {
				// A leak is not bounded: where it stopped rising, if it
				// did, is stopped_iteration.
				gr.PlateauIteration, gr.StoppedIteration = 0, g.StoppedStep
			}
			if g.Timed {
				// Only a leak has a rate: the slope of one burst is not growth.
				rate := 0.0
				if s.Kind == callsite.Leak {
					rate = round(g.Slope, 1)
				}
				first, last := g.FirstUs, g.LastUs
				gr.BytesPerSecond, gr.FirstKeptUs, gr.LastKeptUs = &rate, &first, &last
				if len(g.Curve) == len(g.CurveClock) {
					gr.LiveBytes, gr.LiveAtUs = g.Curve, g.CurveClock
				}
			}
			if g.LoopAfter > 0 {
				gr.AfterIterations = g.LoopAfter
				if g.Loop != (callsite.Frame{}) {
					lf := frame(g.Loop)
					gr.LoopSite = &lf
				}
			}
			f.Growth = gr
		}
		out = append(out, f)
	}
	lockstep(out)
	return in, out
}

// leaksUnjudged says why a snapshot's or profiler trace's devices could
// not judge leaks when none of them could judge growth across iterations
// (snapshot.DeviceSummary.Unjudged): how it was recorded (no trace, no
// stacks) or what its trace shows (too few steps, no repeating step):
// either way no leak could be found in it. "" when one device could, or
// there is no device (nothing held, nothing to leak). The devices'
// reasons, one when they agree, else each with its device.
func leaksUnjudged(ds []snapshot.DeviceSummary) string {
	var whys []string
	for _, d := range ds {
		if d.Unjudged == "" {
			return ""
		}
		whys = append(whys, d.Unjudged)
	}
	if len(whys) == 0 {
		return ""
	}
	if slices.Equal(slices.Compact(slices.Clone(whys)), whys[:1]) {
		return whys[0]
	}
	for i, d := range ds {
		whys[i] = fmt.Sprintf("device %d: %s", d.Device, whys[i])
		if d.PID != nil {
			whys[i] = fmt.Sprintf("process %d, %s", *d.PID, whys[i])
		}
	}
	return strings.Join(whys, "; ")
}

// lockstep notes, on each leak whose allocations were kept in the same
// iterations as one or more other leaks' of its device and process (the
// same first and last, grown in as many of as many), which they are: one
// object kept each step can hold them all (a loss kept without .item()
// holds the tensors its graph saved, each from its own op). The verdicts
// stand; the note says where to look first. At most maxLockstep are named.
func lockstep(fs []Finding) {
	type key struct {
		dev, pid                 string
		iters, grew, first, last int
	}
	keyOf := func(f *Finding) (key, bool) {
		g := f.Growth
		if f.Kind != KindLeak || g == nil || g.Kept < 2 || g.GrewIn < 2 {
			return key{}, false
		}
		k := key{dev: dev(f.Device), iters: g.Iterations, grew: g.GrewIn, first: g.FirstIteration, last: g.LastIteration}
		if f.PID != nil {
			k.pid = fmt.Sprint(*f.PID)
		}
		return k, true
	}
	groups := map[key][]int{}
	for i := range fs {
		if k, ok := keyOf(&fs[i]); ok {
			groups[k] = append(groups[k], i)
		}
	}
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			// The other leaks by site name, each once: two leaks of one
			// line differ in their callers.
			own := fs[i].Site.String()
			var names []string
			count := map[string]int{}
			for _, j := range idx {
				if j == i {
					continue
				}
				name := fs[j].Site.String()
				if count[name] == 0 {
					names = append(names, name)
				}
				count[name]++
			}
			var others []string
			for _, name := range names {
				if len(others) == maxLockstep {
					break
				}
				switch n := count[name]; {
				case name == own && n == 1:
					others = append(others, name+" from another caller")
				case name == own:
					others = append(others, fmt.Sprintf("%s from %d other callers", name, n))
				case n > 1:
					others = append(others, fmt.Sprintf("%s (%d callers)", name, n))
				default:
					others = append(others, name)
				}
			}
			if n := len(names) - len(others); n > 0 {
				others = append(others, fmt.Sprintf("%d more", n))
			}
			g := fs[i].Growth
			leaks := "the leaks"
			if len(idx) == 2 {
				leaks = "the leak"
			}
			fs[i].Message += fmt.Sprintf("; its allocations were kept in the same iterations (%d to %d) as %s at %s: one object kept each step can hold them all, as a loss kept without .item() holds the tensors its graph saved",
				g.FirstIteration, g.LastIteration, leaks, strings.Join(others, ", "))
		}
	}
}

// maxLockstep bounds the sites a lockstep note names.
const maxLockstep = 4

func siteKind(k callsite.Kind) Kind {
	switch k {
	case callsite.Leak:
		return KindLeak
	case callsite.PendingFree:
		return KindPendingFree
	case callsite.Live:
		return KindLive
	}
	return KindRetained
}

// knownBytes is n, nil when negative (unknown).
func knownBytes(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

func frame(f callsite.Frame) Frame {
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

// siteMessage is the one line a person acts on. Its numbers are the
// finding's: the allocations and bytes held at the end, and the growth
// evidence the verdict rests on.
func siteMessage(s snapshot.Site, untraced bool) string {
	where := "with no stack recorded"
	switch {
	case s.Frame.Name == "autograd backward" && s.Frame.Filename == "":
		where = "made by autograd's backward pass (no frame of your code on its stack)"
	case len(s.Stack) > 0 && !hasPython(s.Stack):
		where = "from C++ with no Python caller, in " + frame(s.Frame).String()
	case len(s.Stack) > 0:
		where = "at " + frame(s.Frame).String()
	}
	held := fmt.Sprintf("%s (%s)", plural(s.Count, "allocation", "allocations"), IBytes(s.Bytes))
	g := s.Growth
	switch s.Kind {
	case callsite.Leak:
		ev := ""
		if g != nil && g.Measured > 0 {
			what := "its live memory at the start of an iteration"
			if g.Floor {
				what = "the floor of its live memory (the least it held from an iteration's start on: a sawtooth whose minima rise)"
			}
			from, to := FromTo(g.FromBytes, g.ToBytes)
			ev = fmt.Sprintf(": %s grew in %d of %s, %s per iteration (from %s to %s)",
				what, g.GrewIn, measured(g), signedBytes(g.PerIteration), from, to)
			if g.OnsetStep > 0 {
				// Flat, then growing: the rate is the one since it began.
				onset, to := FromTo(g.OnsetBytes, g.ToBytes)
				ev = fmt.Sprintf(": %s stayed at %s until iteration %d, then grew in %d of the %d measured since (%s in all), %s per iteration since then (to %s)",
					what, onset, g.OnsetStep, g.GrewSince, g.SinceOnset, measured(g), signedBytes(g.PerIteration), to)
			}
			if g.Timed {
				ev += fmt.Sprintf(", +%s/s", IBytes(int64(g.Slope)))
			}
			ev += stoppedNote(g)
		}
		kept := ""
		if g != nil && g.Allocations > 0 {
			kept = fmt.Sprintf(" (%d of the %d allocations made there during the trace", g.Kept, g.Allocations)
			if b := s.Bytes; s.NotInTrace == 0 && g.Kept == s.Count && g.KeptTraceBytes > 0 && (g.KeptTraceBytes < b-b/100 || g.KeptTraceBytes > b+b/100) {
				// The curve counts the trace's sizes (requested), the held
				// bytes the blocks': say so where they differ.
				kept += fmt.Sprintf("; the growth above counts the %s the trace records for them, their blocks hold %s", IBytes(g.KeptTraceBytes), IBytes(b))
			}
			if g.InLastStep > 0 && g.InLastStep < g.Kept {
				kept += fmt.Sprintf("; %d of them (%s) made in iteration %d, %s", g.InLastStep, IBytes(g.InLastStepBytes), g.Iterations, lastStep(g, "possibly still in use", "possibly still in use by the next step"))
			}
			if s.NotInTrace > 0 {
				kept += fmt.Sprintf(", and %d older than the trace", s.NotInTrace)
			}
			kept += ")"
		}
		grows := "keeps growing across iterations"
		if g != nil && g.StoppedStep > 0 {
			grows = "grew across iterations, then stopped"
		}
		return fmt.Sprintf("leak: memory allocated %s %s%s; %s held at the end%s%s; find what still references them (a list, dict, cache or attribute that is never cleared, or a tensor kept with its graph: store loss.item() or .detach())",
			where, grows, ev, held, kept, poolNote(s))
	case callsite.PendingFree:
		stream := ""
		if s.Stream >= 0 {
			stream = fmt.Sprintf(" on stream 0x%x", s.Stream)
		}
		where += stream
		freed := ""
		if len(s.FreedAt) > 0 {
			var names []string
			for _, f := range s.FreedAt {
				names = append(names, frame(f).String())
			}
			freed = "; freed at " + strings.Join(names, ", ")
		}
		return fmt.Sprintf("pending-free: %s allocated %s were freed but cannot be reused yet: another stream they were used on (Tensor.record_stream) has not reached the free%s%s; synchronize that stream (or wait on its event) before freeing, or stop calling record_stream and keep the tensor alive until the side stream's work is done",
			held, where, freed, pendingWhen(s.Pending))
	case callsite.Live:
		suspect := ""
		switch {
		case s.Repeated && s.RepeatedCount == s.Count:
			suspect = fmt.Sprintf("; %d allocations of one size from one site is the pattern a leak leaves", s.Count)
		case s.Repeated:
			suspect = fmt.Sprintf("; %d of them are of one size (%s): many allocations of one size from one site is the pattern a leak leaves", s.RepeatedCount, IBytes(s.RepeatedSize))
		}
		// A live site may mix allocations older than the trace with ones
		// made during it (classify): say which the trace cannot date.
		which, others := "they were", ""
		if n := s.Count - s.NotInTrace; s.NotInTrace > 0 && n > 0 {
			which = fmt.Sprintf("%d of them were", s.NotInTrace)
			if s.NotInTrace == 1 {
				which = "one of them was"
			}
			others = fmt.Sprintf("; the other %d were made during the trace", n)
			if n == 1 {
				others = "; the other one was made during the trace"
			}
		}
		suspect += poolNote(s)
		if untraced {
			return fmt.Sprintf("live: %s %s held at the end; the snapshot has no trace (history was not recorded: call torch.cuda.memory._record_memory_history() before the run), so when they were allocated, and whether they grew, cannot be told%s", held, where, suspect)
		}
		return fmt.Sprintf("live: %s %s held at the end; the snapshot's trace does not show when %s allocated (before recording started, or before the ring buffer's oldest entry%s), so growth cannot be judged%s", held, where, which, others, suspect)
	}
	return fmt.Sprintf("retained: %s %s held at the end%s%s; expected for weights, optimizer state, caches and workspaces, a leak only if it should have been freed", held, where, retainedWhy(g), poolNote(s))
}

// poolNote names the private pools (segment_pool_id other than (0, 0))
// that hold a site's blocks, and why such memory stays: "" when all are
// in the default pool. Which kind of pool an id is comes from how
// PyTorch numbers them (snapshot.PoolBytes): (N, 0) only a CUDA graph's
// capture makes; (0, N) is torch.cuda.graph_pool_handle()'s or a
// torch.cuda.MemPool's, which the id alone cannot tell apart. A private
// pool's segments are its own: they are not freed by empty_cache() and
// serve no other allocation until the pool is released, when the graphs
// captured into it are freed (pytorch/pytorch#51436, #190348) or the
// MemPool is deleted.
func poolNote(s snapshot.Site) string {
	if len(s.PrivatePools) == 0 {
		return ""
	}
	// The pools by kind, each kind said once: a site whose blocks lie in
	// one pool per captured graph (graphs captured again and kept) would
	// otherwise name every pool.
	type kind struct {
		one, many string
		ids       [][2]int64
		bytes     int64
	}
	kinds := []*kind{
		{one: "the private pool a CUDA graph's capture made for itself", many: "private pools, one per CUDA graph's capture, each made for that graph"},
		{one: "a private pool from torch.cuda.graph_pool_handle() (shared by CUDA graphs, as torch.compile's mode=\"reduce-overhead\" makes) or a torch.cuda.MemPool", many: "private pools from torch.cuda.graph_pool_handle() (shared by CUDA graphs) or torch.cuda.MemPool"},
		{one: "a private pool", many: "private pools"},
	}
	for _, p := range s.PrivatePools {
		k := kinds[2]
		switch {
		case p.ID[0] != 0 && p.ID[1] == 0:
			k = kinds[0]
		case p.ID[0] == 0:
			k = kinds[1]
		}
		k.ids = append(k.ids, p.ID)
		k.bytes = satAdd(k.bytes, p.Bytes)
	}
	var parts []string
	for _, k := range kinds {
		if len(k.ids) == 0 {
			continue
		}
		in := "in"
		if k.bytes < s.Bytes {
			in = IBytes(k.bytes) + " of it in"
		}
		if len(k.ids) == 1 {
			parts = append(parts, fmt.Sprintf("%s %s (segment_pool_id (%d, %d))", in, k.one, k.ids[0][0], k.ids[0][1]))
			continue
		}
		slices.SortFunc(k.ids, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
		first, last := k.ids[0], k.ids[len(k.ids)-1]
		parts = append(parts, fmt.Sprintf("%s %d %s (segment_pool_id (%d, %d) to (%d, %d))", in, len(k.ids), k.many, first[0], first[1], last[0], last[1]))
	}
	graph, shared := len(kinds[0].ids), len(kinds[1].ids)
	why := "a private pool's segments serve only its own allocations and are not released by empty_cache() until the pool is"
	switch {
	case graph > 1 && shared == 0:
		why = fmt.Sprintf("each CUDA graph keeps its private pool, these tensors' segments with it, until the graph is freed (del the graph or graph.reset()); %d graphs' pools hold them, as graphs captured again and each kept do; empty_cache() does not release them", graph)
	case graph == 1 && shared == 0:
		why = "a CUDA graph keeps its private pool, these tensors' segments with it (its static inputs, outputs and the memory its replays reuse), until the graph is freed (del the graph or graph.reset()); empty_cache() does not release it"
	case shared > 0:
		why += ": when every CUDA graph captured into it is freed, or the MemPool is deleted"
	}
	return "; " + strings.Join(parts, ", ") + ": " + why
}

// stoppedNote says, on a leak whose growth stopped before the end (see
// snapshot.Growth.StoppedStep), for how long, and why the plateau rule
// calls it a leak all the same: the rule that calls a curve bounded when
// it rose and then stayed flat (a cache that filled up) looks at the
// halves of the iterations, whatever their number, and this one still rose
// in the second half. "" otherwise.
func stoppedNote(g *snapshot.Growth) string {
	if g.StoppedStep == 0 {
		return ""
	}
	how := "no rise"
	if g.StoppedFlat {
		how = "flat"
	}
	unit := plural(g.StoppedFor, "iteration", "iterations")
	if g.Every > 1 {
		unit = plural(g.StoppedFor, "measurement", "measurements")
	}
	first, second := FromTo(g.FirstHalfMax, g.SecondHalfMax)
	return fmt.Sprintf(", then %s in the last %s (since iteration %d); still a leak by the plateau rule, which calls memory that stops rising bounded only when it stopped in the first half of the iterations: it rose in the second half, to %s, above the first half's highest, %s; a longer trace would tell whether it stays flat (a cache that filled up)",
		how, unit, g.StoppedStep, second, first)
}

// pendingWhen says whether a pending-free site's blocks build up over the
// run or are only the last iterations' (empty without iterations).
func pendingWhen(p *snapshot.PendingGrowth) string {
	switch {
	case p == nil:
		return ""
	case p.Growing():
		return fmt.Sprintf("; growing: blocks left pending in %d of the %d iterations since iteration %d and never released, in %s: async stream work delays release",
			p.Steps, p.Iterations-max(p.FirstStep, 1)+1, max(p.FirstStep, 1), plural(p.Segments, "segment", "segments"))
	case p.FirstStep == p.LastStep:
		return fmt.Sprintf("; bounded: all from iteration %d of %d", p.FirstStep, p.Iterations)
	}
	return fmt.Sprintf("; bounded: from iterations %d to %d of %d, older ones were released", p.FirstStep, p.LastStep, p.Iterations)
}

// measured renders "8 iterations" or "64 measurements, every 4 iterations".
func measured(g *snapshot.Growth) string {
	if g.Every > 1 {
		return fmt.Sprintf("%d measurements, one every %d iterations", g.Measured, g.Every)
	}
	return plural(g.Measured, "iteration", "iterations") + markerNote(g) + loopNote(g)
}

// markerNote says which spans marked g's iterations when the tracer's
// recorded steps did ("" when a stack did).
func markerNote(g *snapshot.Growth) string {
	if g.Marker == "" {
		return ""
	}
	return " (" + g.Marker + ")"
}

// loopNote names the loop whose passes g's iterations are when it is not
// the one the device's iterations are (a loop that ran after them, such as
// validation after training); "" otherwise.
func loopNote(g *snapshot.Growth) string {
	if g.LoopAfter == 0 {
		return ""
	}
	s := fmt.Sprintf(" of the loop that ran after the run's %s", plural(g.LoopAfter, "iteration", "iterations"))
	if g.Loop != (callsite.Frame{}) {
		s += " (its passes start at " + frame(g.Loop).String() + ")"
	}
	return s
}

func signedBytes(x float64) string {
	if x < 0 {
		return "-" + IBytes(int64(-x))
	}
	return "+" + IBytes(int64(x))
}

// retainedWhy says what the trace shows about retained memory: a plateau,
// the iterations it was allocated in, or why growth cannot be judged.
func retainedWhy(g *snapshot.Growth) string {
	if g == nil {
		return ""
	}
	if g.Measured > 0 {
		from, to := FromTo(g.FromBytes, g.ToBytes)
		switch {
		case g.BelowMinKept > 0:
			return fmt.Sprintf(", growing across iterations (its live memory at the start of an iteration went from %s to %s, rising in %d of %s), but it keeps %s, fewer than --min-kept %d, and its rises do not make %d iterations of steady growth: not called a leak at that setting", from, to, g.GrewIn, measured(g), plural(g.Kept, "allocation", "allocations"), g.BelowMinKept, g.BelowMinKept)
		case g.StepGrowth > 0:
			return fmt.Sprintf(", replaced by a bigger block each iteration (its live memory at the start of an iteration went from %s to %s) while the rest of each iteration came to allocate %s more (the last quarter of the iterations against the first): the step itself grew (a batch or sequence made bigger each step), and this is its latest input, not a leak", from, to, IBytes(g.StepGrowth))
		case g.FirstStep == g.LastStep && g.FirstStep == 0:
			return fmt.Sprintf(", allocated before the first of %d iterations%s and not growing across them", g.Iterations, loopNote(g))
		case g.FirstStep == g.LastStep:
			return fmt.Sprintf(", allocated in iteration %d of %d%s and not growing across them", g.FirstStep, g.Iterations, loopNote(g))
		case g.EndBytes*4 < g.ToBytes*3:
			return fmt.Sprintf(", not growing at the end: its live memory at the start of an iteration went from %s to %s (rising in %d of %s), then fell to %s", from, to, g.GrewIn, measured(g), IBytes(g.EndBytes))
		case g.PlateauStep > 0:
			return fmt.Sprintf(", not growing: bounded, its live memory at the start of an iteration rose to a plateau of %s by iteration %d%s and stayed there to iteration %d%s", IBytes(g.ToBytes), g.PlateauStep, clockAt(g, g.PlateauClock), g.Iterations, loopNote(g)) + replacedNote(g) + lastStepNote(g)
		}
		return fmt.Sprintf(", allocated in iterations %d to %d of %d%s and not growing across them", g.FirstStep, g.LastStep, g.Iterations, loopNote(g)) + lastStepNote(g)
	}
	when := ""
	if g.Timed {
		when = ", allocated " + span(g)
	}
	switch {
	case g.Iterations == 0 && g.Burst != nil:
		return when + "; the " + g.Burst.At("at this line") + ", so growth across iterations cannot be judged"
	case g.Iterations == 0 && g.NoTraceStacks:
		return when + "; the trace's allocations carry no stacks, so its iterations cannot be found and growth across iterations cannot be judged"
	}
	switch g.Iterations {
	case 0:
		return when + "; the trace shows no repeating step, so growth across iterations cannot be judged"
	case 1:
		return when + "; the trace covers 1 step, so growth across iterations cannot be judged"
	}
	few := fmt.Sprintf("%s; the trace covers %d steps, too few to judge growth across iterations", when, g.Iterations)
	if g.Kept == g.Iterations && g.Marker != "" {
		// As many kept as the tracer's own steps: one a step, the
		// pattern a leak leaves, which more steps would judge.
		few += fmt.Sprintf(" (%d of its allocations kept, as many as the steps: one kept a step is what a leak leaves; profile more steps to tell)", g.Kept)
	}
	return few
}

// lastStepNote names the part of a retained site made in the last
// iteration, which had not ended, when it came on top of what the site held
// at that iteration's start (live bytes at the end above the last measured
// start by at least half of it): measured at iteration starts, the figures
// before do not count it (oom_peak's 1 GiB of a failed step's activations
// beside a plateau of 33 MiB). A cache that replaced an entry in the last
// iteration holds no more than before, and gets no note.
func lastStepNote(g *snapshot.Growth) string {
	if g.InLastStep == 0 || g.InLastStep >= g.Kept || g.EndBytes-g.ToBytes < g.InLastStepBytes/2 {
		return ""
	}
	verb := "were"
	if g.InLastStep == 1 {
		verb = "was"
	}
	return fmt.Sprintf("; %d of the %d allocations (%s) %s made in iteration %d, %s, on top of what the iterations measured", g.InLastStep, g.Kept, IBytes(g.InLastStepBytes), verb, g.Iterations, lastStep(g, "memory of that step (possibly still in use)", "memory of that step, possibly still in use by the next step"))
}

// lastStep says what the last iteration was, and then unended or ended:
// in a snapshot (or a trace whose stacks mark the iterations) one that had
// not ended when the trace did; where the tracer's own steps mark them (a
// profiler's ProfilerStep#N spans), the last step it recorded, which ended
// (prof.step() ends a step) but may have handed what it made to the next,
// unrecorded.
func lastStep(g *snapshot.Growth, unended, ended string) string {
	if g.Marker != "" {
		return "the last step the profiler recorded: " + ended + ", which the trace does not show"
	}
	return "the last, which had not ended: " + unended
}

// replacedNote says, for a bounded site that kept allocating at its
// plateau, why a plateau reached late in the run is not a leak that
// stopped: what it holds was made since, in place of what it held.
func replacedNote(g *snapshot.Growth) string {
	if g.Replaced == 0 {
		return ""
	}
	were := "were"
	if g.Replaced == 1 {
		were = "was"
	}
	return fmt.Sprintf(" while it kept allocating: %d of the %s it holds at the end (%s) %s made after iteration %d's start, in %s, each in place of memory held since an earlier one (a cache at its capacity evicting as it adds); a leak that stopped would still hold what it made while rising", g.Replaced, plural(g.Kept, "allocation", "allocations"), IBytes(g.ReplacedBytes), were, g.CapStep, plural(g.ReplacedIn, "iteration", "iterations"))
}

// clockAt renders " (12.3 s into the trace)" for a time, "" untimed.
func clockAt(g *snapshot.Growth, clock int64) string {
	if !g.Timed {
		return ""
	}
	return fmt.Sprintf(" (%s into the trace)", seconds(clock-g.WindowStart, g.WindowEnd-g.WindowStart))
}

// span says when a site's kept allocations were made, in seconds into the
// trace: "at 6.3 s", or "from 0.4 s to 4.6 s" when they spread over more
// than a twentieth of the trace; the precision is what the span needs.
func span(g *snapshot.Growth) string {
	w := g.WindowEnd - g.WindowStart
	if w <= 0 || (g.LastUs-g.FirstUs)*20 < w {
		return fmt.Sprintf("at %s into the trace", seconds(g.FirstUs-g.WindowStart, w))
	}
	return fmt.Sprintf("from %s to %s into the trace", seconds(g.FirstUs-g.WindowStart, w), seconds(g.LastUs-g.WindowStart, w))
}

// seconds renders a duration of us microseconds with the decimals a
// window of w microseconds needs to tell its twentieths apart.
func seconds(us, w int64) string {
	dec := 1
	for step := int64(100_000); dec < 6 && w > 0 && w/20 < step; step /= 10 {
		dec++
	}
	return fmt.Sprintf("%.*f s", dec, float64(us)/1e6)
}

// hasPython reports whether a stack has a Python frame (a .py file).
func hasPython(st []callsite.Frame) bool {
	for _, f := range st {
		if strings.HasSuffix(f.Filename, ".py") {
			return true
		}
	}
	return false
}
