package snapshot

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/gpuleak/gpuleak/analyze/callsite"
	"gonum.org/v1/gonum/stat"
)

// A leak is memory that keeps growing across the iterations of a run, not
// memory that one step builds up (a forward pass keeps an activation per
// layer, the first step makes gradients and optimizer state). The trace is
// therefore cut into iterations, and a call site's live bytes (its
// allocations minus its frees, so that a block replacing an older one nets
// out) are compared at the same phase of successive iterations.
//
// The iterations come from an anchor: the call stack whose allocations recur
// most often at even spacing through the trace, among the stacks made by
// the program's own step-level code. A stack made inside an nn.Module call
// or by autograd's backward does not qualify: the layers of one forward
// pass, or the gradients of one backward, recur evenly too, but they are
// parts of one step. Spacing is measured in trace positions (the
// allocator's activity), so idle time neither stretches nor squeezes it.

// Iteration rule constants.
const (
	// minBoundaries is the fewest anchor occurrences (iteration starts)
	// that can show growth: three iterations measured.
	minBoundaries = 4
	// MinIterations is minBoundaries for other packages: the fewest
	// iteration starts (profiler steps) across which growth is judged.
	MinIterations = minBoundaries
	// MinRises is the fewest measured iterations in which a leaking site's
	// live bytes must rise.
	MinRises = 3
	// maxBoundaries bounds the boundaries kept; a longer trace is measured
	// every k-th iteration.
	maxBoundaries = 512
	// evenShare: the gaps within [3/4, 4/3] of the median gap must cover at
	// least this share of the span from the first to the last occurrence.
	evenShare = 0.5
	// minCover: the anchor's occurrences must span at least this share of
	// the trace.
	minCover = 0.4
	// tailSteps: the trace after the last iteration's start must be longer
	// than this many median iterations to be searched for a loop of its own.
	tailSteps = 2
	// maxGrowthChecks bounds the log replays of othersGrowth per device.
	maxGrowthChecks = 64
)

// allocKey is a stack and an allocation size: the unit whose live bytes
// the replay follows.
type allocKey struct {
	stack int32
	size  int64
}

// change is a key's live bytes from boundary b on.
type change struct {
	b int32
	v int64
}

// iterations is the step structure of one device's trace up to a moment.
type iterations struct {
	// anchor is the stack id whose allocations start the iterations; -1
	// when none was found.
	anchor int32
	// seen counts the anchor's occurrences: seen-1 iterations completed.
	seen int
	// every: the boundaries are every k-th occurrence.
	every int
	// pos are the log positions of the boundaries (the anchor's
	// allocations), clock their times (µs) or positions, ord their
	// occurrence numbers (0 = first).
	pos   []int
	clock []int64
	ord   []int
	// changes, per key, the key's live bytes at each boundary where they
	// differ from the boundary before.
	changes [][]change
	// growthChecks counts the calls of othersGrowth (maxGrowthChecks).
	growthChecks int
	// tail is the step structure of a second loop that ran after the last
	// of these iterations (a validation loop after the training loop), found
	// in the trace from log position tailFrom (the last iteration's start)
	// on; nil when the trace has none (see findTail).
	tail     *iterations
	tailFrom int
	// byCall is set when the iterations are the calls of a module made
	// from one line of the program (callPasses); caller is that line's
	// frame id.
	byCall bool
	caller int32
	// burst is set when no step was found and one stack's allocations
	// would have marked steps but were made back to back (runStarts): the
	// evidence the finding and the warning give; nil otherwise.
	burst *Burst
	// upto is the log position the iterations were taken up to (the
	// end's boundary).
	upto int
	// marker names the step spans that mark the iterations when the
	// tracer's recorded steps (SetSteps) stand in for an anchor ("" when
	// the anchor, a stack, marks them).
	marker string
}

// usable reports whether the trace has enough iterations to judge growth.
func (it *iterations) usable() bool { return it != nil && len(it.pos) >= minBoundaries }

// tailOf returns the loop that ran after the last iteration (it.tail) when
// every allocation of allocs was made during the trace in that stretch,
// else nil: memory made there is judged across that loop's passes.
func (it *iterations) tailOf(allocs []keptAlloc) *iterations {
	if it == nil || it.tail == nil || len(allocs) == 0 {
		return nil
	}
	for _, k := range allocs {
		if !k.inTrace || k.pos < it.tailFrom {
			return nil
		}
	}
	return it.tail
}

// othersGrowth is how much more the allocations of keys other than own
// allocated per iteration at the end of the measured iterations than at
// their start (the medians of the last and the first quarter of them), in
// block bytes; 0 when it did not grow or there are fewer than two
// complete iterations. A step whose batch grows allocates more in
// every layer; a history concatenated onto does not make the rest of the
// step allocate more.
//
// Each call replays the device's log, so a device's trace answers at most
// maxGrowthChecks of them (a hand-made trace of many such sites would
// otherwise cost sites times entries); past that it answers 0, and the
// sites stay leaks, as before the rule.
func (it *iterations) othersGrowth(d *deviceState, own []int32) int64 {
	if it == nil || len(it.pos) < 3 || it.growthChecks >= maxGrowthChecks {
		return 0
	}
	it.growthChecks++
	mine := make(map[int32]bool, len(own))
	for _, k := range own {
		mine[k] = true
	}
	first, last := it.pos[0], it.pos[len(it.pos)-1]
	var sum []int64 // per measured interval
	b := -1
	log := d.log.keyIterFrom(first)
	for i := first; i < last; i++ {
		k := log.next()
		for b+1 < len(it.pos) && i >= it.pos[b+1] {
			b++
			sum = append(sum, 0)
		}
		if k < 0 || mine[k] {
			continue
		}
		sum[b] = satAdd(sum[b], blockSize(d.keys[k].size))
	}
	if len(sum) < 2 {
		return 0
	}
	// The first and last quarters' medians: one heavy iteration (an
	// evaluation, a checkpoint) at either end is not the step growing.
	q := max(len(sum)/4, 1)
	lo, hi := medianOf(sum[:q]), medianOf(sum[len(sum)-q:])
	if hi <= lo {
		return 0
	}
	return hi - lo
}

// medianOf returns the median of v (the lower of the middle two), sorting
// a copy.
func medianOf(v []int64) int64 {
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[(len(c)-1)/2]
}

// stepOf returns the iteration (1-based; 0 = before the first) the log
// position p falls in.
func (it *iterations) stepOf(p int) int {
	if it == nil {
		return 0
	}
	i := sort.SearchInts(it.pos, p+1) // boundaries at or before p
	if i == 0 {
		return 0
	}
	return it.ord[i-1] + 1
}

// curve sums the live bytes of keys at each boundary, and, as its last
// element, at the moment the iterations were taken up to.
func (it *iterations) curve(keys []int32) []int64 {
	v := make([]int64, len(it.pos)+1)
	for _, k := range keys {
		if int(k) >= len(it.changes) {
			continue
		}
		ch := it.changes[k]
		for j, c := range ch {
			end := int32(len(v))
			if j+1 < len(ch) {
				end = ch[j+1].b
			}
			for b := c.b; b < end; b++ {
				v[b] = satAdd(v[b], c.v)
			}
		}
	}
	return v
}

// charge adds to key k's live bytes the blocks older than the trace that
// k's site made and the trace frees before the log positions at (in
// order; bytes each: see chargeOrphans): each is held at the boundaries
// before its free, none after. A boundary counts the entries before its
// position, so a free before position p is gone at the boundary at p; one
// after upto counts nowhere.
func (it *iterations) charge(k int32, at []int, bytes int64) {
	if int(k) >= len(it.changes) || len(at) == 0 {
		return
	}
	n := len(it.pos)
	v := make([]int64, n+1) // k's live bytes at each boundary, then the end
	for j, c := range it.changes[k] {
		end := int32(n + 1)
		if j+1 < len(it.changes[k]) {
			end = it.changes[k][j+1].b
		}
		for b := c.b; b < end; b++ {
			v[b] = c.v
		}
	}
	// The older blocks are held until their frees: at each boundary, k
	// holds those not yet freed beside what the trace made (so that its
	// bytes never fall below zero).
	var left int64
	for _, p := range at {
		if p <= it.upto {
			left += bytes
		}
	}
	b := 0
	for _, p := range at {
		if p > it.upto {
			break
		}
		for ; b < n && it.pos[b] < p; b++ {
			v[b] += left
		}
		left -= bytes
	}
	for ; b <= n; b++ {
		v[b] += left
	}
	var ch []change
	for b, x := range v {
		if b == 0 && x != 0 || b > 0 && x != v[b-1] {
			ch = append(ch, change{b: int32(b), v: x})
		}
	}
	it.changes[k] = ch
}

// changing returns those of keys whose live bytes change across the
// iteration starts after the first iteration: it leaves out each key that
// the first iteration settled, whose live bytes at every start from the
// second on are those at the second (not below those at the first), and
// at the end no more. Such a key holds memory made once (a cuBLAS
// workspace made by the first matmul) or a step's variable replaced by
// its like every step (freed at the end, or not); neither grows across
// iterations, so whether it is still held at the end says nothing about
// whether a site's growth is. A key whose only rise is in a later
// iteration stays (a leak whose every block has a size of its own rises
// once per key), and so does one made after the last start (the newest
// of a buffer replaced by a bigger one each step).
func (it *iterations) changing(keys []int32) []int32 {
	n := len(it.pos)
	var out []int32
	for _, k := range keys {
		if int(k) >= len(it.changes) || !settledInFirst(it.changes[k], n) {
			out = append(out, k)
		}
	}
	return out
}

// settledInFirst reports whether a key whose live bytes change as ch says
// (see iterations.changes: a value recorded at a boundary where the key
// was touched, perhaps unchanged) over n boundaries and then the end
// (boundary n) holds at boundaries 2 to n-1 what it held at boundary 1, at
// least what it held at boundary 0, and at the end no more.
func settledInFirst(ch []change, n int) bool {
	var at0, at1 int64 // the bytes at boundaries 0 and 1
	for _, c := range ch {
		switch {
		case c.b == 0:
			at0, at1 = c.v, c.v
		case c.b == 1:
			at1 = c.v
		case c.v != at1 && int(c.b) < n, c.v > at1:
			return false
		}
	}
	return at1 >= at0
}

// isAutograd says whether a frame's name is autograd's engine or the
// thread entry its workers start from: it holds
// torch::autograd::Engine, torch::autograd::python::PythonEngine or
// execute_native_thread_routine. (Substring tests: a regexp of the same
// three alternatives backtracked through every C++ frame's long name and
// was a fifth of a small snapshot's analysis.)
func isAutograd(name string) bool {
	return strings.Contains(name, "torch::autograd::Engine") ||
		strings.Contains(name, "torch::autograd::python::PythonEngine") ||
		strings.Contains(name, "execute_native_thread_routine")
}

// Anchor classes of a stack (anchorClass).
const (
	anchorNo      = iota // cannot mark iterations
	anchorLibrary        // made in an installed package's loop (a trainer, generate)
	anchorOwn            // made by the program's own code
)

// anchorClass says whether allocations of stack id can mark iterations:
// the stack must have a Python frame outside the framework, no frame of a
// module call or of backward, and no forward called within a forward. It is anchorOwn when its innermost such
// frame is the program's own code, anchorLibrary when it is in an
// installed package (a loop inside a library may be the steps of one call,
// such as the tokens of one generate()).
func (a *LeakAnalyzer) anchorClass(id int32) int8 {
	if v, ok := a.anchorOK[id]; ok {
		return v
	}
	class := int8(anchorNo)
	forwards := 0
	if id >= 0 && int(id) < len(a.stacks) {
		for _, fid := range a.stacks[id] {
			if fid < 0 || int(fid) >= len(a.frames) {
				continue // as frameStack skips it
			}
			ff := a.frameFacts(fid, factsAnchor)
			// Allocations under a module call or backward are parts of a
			// step, never the step itself. So are those of a forward called
			// within another forward: a layer of a model, even where the
			// stack has no frame of module.py's call (a model that calls its
			// layers' forward directly, or a recorder that dropped those
			// frames: a field snapshot's 12 layers of one forward pass had
			// only forward frames and were taken for 12 iterations). One
			// forward alone may be the model's, called once a step.
			if ff&factForward != 0 {
				forwards++
			}
			if ff&(factModuleOrBackward|factAutograd) != 0 || forwards > 1 {
				class = anchorNo
				break
			}
			if class == anchorNo && a.frameFacts(fid, factsUser)&factUserPython != 0 {
				class = anchorOwn
				if a.facts[fid]&factLibrary != 0 {
					class = anchorLibrary
				}
			}
		}
	}
	a.anchorOK[id] = class
	return class
}

// Facts about a frame, tested once per frame (frameFacts) rather than once
// for each stack it is on: each is a regexp or a few substring tests, and
// a snapshot's stacks share their frames (a few thousand frames on tens of
// thousands of stacks). They are found in groups, each when first asked
// for, so that a frame is not tested for what no caller asks of it.
const (
	factsAnchor          uint16 = 1 << iota // the next three are known
	factForward                             // a Python frame named forward
	factModuleOrBackward                    // callsite.IsModuleOrBackward
	factAutograd                            // isAutograd(name)
	factsHidden                             // factHidden is known
	factHidden                              // the filter hides it (a framework frame)
	factsUser                               // the next two are known
	factUserPython                          // a Python frame the filter shows, of the program (callsite.User)
	factLibrary                             // callsite.IsLibrary
	factsMachinery                          // factMachinery and factGenerated are known
	factMachinery                           // callsite.IsMachinery
	factGenerated                           // code generated at run time (callsite.Generated)
)

// frameFacts returns frame fid's facts, those of group known (factsAnchor,
// factsHidden, factsUser, factsMachinery) among them (fid indexes
// a.frames).
func (a *LeakAnalyzer) frameFacts(fid int32, known uint16) uint16 {
	if len(a.facts) < len(a.frames) {
		a.facts = append(a.facts, make([]uint16, len(a.frames)-len(a.facts))...)
	}
	ff := a.facts[fid]
	if ff&known != 0 {
		return ff
	}
	f := a.frames[fid]
	switch known {
	case factsAnchor:
		if f.Name == "forward" && callsite.IsPython(f) {
			ff |= factForward
		}
		if callsite.IsModuleOrBackward(f) {
			ff |= factModuleOrBackward
		}
		if isAutograd(f.Name) {
			ff |= factAutograd
		}
	case factsHidden:
		if a.opt.Filter.Hidden(f) {
			ff |= factHidden
		}
	case factsUser:
		if callsite.IsPython(f) && a.frameFacts(fid, factsHidden)&factHidden == 0 && callsite.ClassOf(f) == callsite.User {
			ff |= factUserPython
		}
		if callsite.IsLibrary(f) {
			ff |= factLibrary
		}
		ff |= a.facts[fid] // the hidden group just found
	case factsMachinery:
		if callsite.IsMachinery(f) {
			ff |= factMachinery
		}
		if callsite.ClassOf(f) == callsite.Generated {
			ff |= factGenerated
		}
	}
	ff |= known
	a.facts[fid] = ff
	return ff
}

// findIterations finds the iteration structure of device d's trace up to
// log position upto.
func (a *LeakAnalyzer) findIterations(d *deviceState, upto int, timed bool) *iterations {
	defer func() { d.calls, d.keyCount, d.passBuf = nil, nil, passBuf{} }()
	// The steps the tracer recorded (a profiler's ProfilerStep#N spans)
	// are the program's own: where there are any, they are the iterations,
	// however few (too few to judge growth is said so), and no stack is
	// asked. A profiler trace's Python frames carry each function's first
	// line, not the calling line: two calls of one op in a step (the batch
	// and a validation batch, both torch.randn) have one stack, and a
	// stack-found loop would count each step twice.
	if sp := d.stepStarts(upto); len(sp) > 0 {
		it := &iterations{anchor: -1, every: 1, marker: d.steps.label}
		a.fill(d, it, sp, upto, timed)
		return it
	}
	it := a.iterationsIn(d, 0, upto, timed)
	if !it.usable() {
		if last := a.lastLoop(d, upto, timed); last != nil {
			it = last
		}
	}
	if !it.usable() {
		if w := a.beforeTeardown(d, upto, timed); w != nil {
			it = w
		}
	}
	a.findTail(d, it, upto, timed)
	return it
}

// beforeTeardown looks, in a trace that shows no repeating step, for a
// loop followed by a teardown that outlasted it (a CUDA graph replayed
// 30 times, then the graph and the model deleted, the state dict copied,
// buffers made and freed, in more allocator entries than the loop): the
// passes span too little of the trace to mark iterations, and the loop
// does not run to the trace's end. The teardown is the longest stretch at
// the trace's end that does no compute (no allocation inside a module
// call, by backward, or without a stack, which backward's are) and leaves
// no key's live count above where it found it (what it allocates it
// frees, so that it adds nothing held at the end to any site: it can only
// release what the loop made, which the leak rules already weigh). The
// same rules (iterationsIn, then lastLoop) are applied to the trace before
// it; a loop found there, marked by a stack of the program (not by the
// calls of a module), marks the iterations when it runs to the
// teardown (what follows its last pass, up to it, is no longer than
// tailSteps median passes). The live bytes are then replayed to the
// trace's end, so that memory the teardown released is not held. nil
// when there is none.
func (a *LeakAnalyzer) beforeTeardown(d *deviceState, upto int, timed bool) *iterations {
	t := a.teardownStart(d, upto)
	if t >= upto || t < 4*minBoundaries {
		return nil
	}
	w := a.iterationsIn(d, 0, t, timed)
	if !w.usable() {
		w = a.lastLoop(d, t, timed)
	}
	// The passes must be marked by a stack of the program's own: the
	// calls of a module are compute, and what ends at the last compute
	// may be one forward pass of repeating layers (a model captured in a
	// CUDA graph before a loop that left nothing held, which the teardown
	// then takes in).
	if !w.usable() || w.anchor < 0 || w.byCall {
		return nil
	}
	gaps := make([]int, len(w.pos)-1)
	for i := 1; i < len(w.pos); i++ {
		gaps[i-1] = (w.pos[i] - w.pos[i-1]) / max(w.ord[i]-w.ord[i-1], 1)
	}
	sort.Ints(gaps)
	if med := gaps[len(gaps)/2]; med <= 0 || t-w.pos[len(w.pos)-1] > tailSteps*med {
		return nil
	}
	w.replay(d, upto)
	return w
}

// teardownStart returns the log position at which the teardown (see
// beforeTeardown) of the log positions below upto starts: the smallest
// after the last allocation that does compute from which on no key is
// allocated more often than freed. upto when there is none.
func (a *LeakAnalyzer) teardownStart(d *deviceState, upto int) int {
	net := make([]int32, len(d.keys)) // allocations less frees, whole log
	lastWork := -1
	for at, ks := range d.log.keyRuns(0, upto) {
		for e, k := range ks {
			if k >= 0 {
				net[k]++
				if st := d.keys[k].stack; st < 0 || a.doesCompute(st) {
					lastWork = at + e
				}
			} else {
				net[^k]--
			}
		}
	}
	// Walking forward, a key is short while the allocations less frees
	// before position i are below its whole log's: from i on it would be
	// allocated more often than freed.
	short := 0
	for _, n := range net {
		if n > 0 {
			short++
		}
	}
	seen := make([]int32, len(d.keys))
	for at, ks := range d.log.keyRuns(0, upto) {
		for e, k := range ks {
			if i := at + e; short == 0 && i > lastWork {
				return i
			}
			if k >= 0 {
				seen[k]++
				if seen[k] == net[k] {
					short--
				}
			} else {
				k = ^k
				if seen[k] == net[k] {
					short++
				}
				seen[k]--
			}
		}
	}
	return upto
}

// doesCompute reports whether stack id's allocation was made inside a
// module call or by backward. Each stack's answer is kept (a.computes):
// teardownStart asks for every allocation of the trace, and a stack's
// frames are many (55 a stack in cranberrii's trace).
func (a *LeakAnalyzer) doesCompute(id int32) bool {
	if int(id) >= len(a.stacks) {
		return true
	}
	if len(a.computes) < len(a.stacks) {
		a.computes = append(a.computes, make([]int8, len(a.stacks)-len(a.computes))...)
	}
	if c := a.computes[id]; c != 0 {
		return c > 0
	}
	c := int8(-1)
	for _, fid := range a.stacks[id] {
		if fid < 0 || int(fid) >= len(a.frames) {
			continue
		}
		if a.frameFacts(fid, factsAnchor)&(factModuleOrBackward|factAutograd) != 0 || callsite.IsAutogradPython(a.frames[fid]) {
			c = 1
			break
		}
	}
	a.computes[id] = c
	return c > 0
}

// lastLoop looks, in a trace whose whole shows no repeating step, for a
// loop that ran to its end after a setup that made more allocations than
// the loop's passes (a model warmed up and a CUDA graph captured, then
// replayed 60 times with a new input each time): its passes span too
// little of the whole trace to mark iterations (minCover), though they
// are the run's steps. The same rules (iterationsIn) are applied to the
// trace's last half, then its last quarter, and so on while the stretch
// holds at least 4*minBoundaries entries; a loop found there marks the
// iterations when it runs to the end: the trace after its last pass is no
// longer than tailSteps median passes (a loop in the middle of the run,
// followed by other work, is a phase, not the run's steps). What the
// setup made is then made before the first iteration. nil when there is
// none.
func (a *LeakAnalyzer) lastLoop(d *deviceState, upto int, timed bool) *iterations {
	for from := upto / 2; upto-from >= 4*minBoundaries; from += (upto - from) / 2 {
		it := a.iterationsIn(d, from, upto, timed)
		if !it.usable() || it.anchor < 0 {
			continue
		}
		gaps := make([]int, len(it.pos)-1)
		for i := 1; i < len(it.pos); i++ {
			gaps[i-1] = (it.pos[i] - it.pos[i-1]) / max(it.ord[i]-it.ord[i-1], 1)
		}
		sort.Ints(gaps)
		if med := gaps[len(gaps)/2]; med > 0 && upto-it.pos[len(it.pos)-1] <= tailSteps*med {
			return it
		}
	}
	return nil
}

// findTail looks for a loop that ran after the last of it's iterations:
// a run that trains and then validates, or evaluates after its training
// loop, leaves the last iteration holding a loop of its own, whose passes
// are many but span too little of the trace to mark the run's iterations.
// When the trace from the last iteration's start on is longer than
// tailSteps median iterations, the same rules (iterationsIn) are applied to
// it alone; a loop found there with at least minBoundaries passes, marked by
// another stack, with as many other allocations as passes in that stretch
// (its work), is it.tail. Memory allocated in that stretch is then judged
// across the tail's passes, not as made in one unfinished iteration.
func (a *LeakAnalyzer) findTail(d *deviceState, it *iterations, upto int, timed bool) {
	if !it.usable() {
		return
	}
	last := it.pos[len(it.pos)-1]
	gaps := make([]int, len(it.pos)-1)
	for i := 1; i < len(it.pos); i++ {
		gaps[i-1] = (it.pos[i] - it.pos[i-1]) / max(it.ord[i]-it.ord[i-1], 1)
	}
	sort.Ints(gaps)
	if med := gaps[len(gaps)/2]; med <= 0 || upto-last <= tailSteps*med {
		return
	}
	t := a.iterationsIn(d, last+1, upto, timed)
	if !t.usable() || t.anchor == it.anchor {
		return
	}
	// A loop's passes do work besides the allocation that marks them (a
	// batch, then its forward); a burst of one stack's allocations at the
	// end (copies saved in a row) is no loop, and cannot mark its own
	// growth.
	other := 0
	log := d.log.keyIterFrom(last + 1)
	for i := last + 1; i < upto; i++ {
		if k := log.next(); k >= 0 && d.keys[k].stack != t.anchor {
			other++
		}
	}
	if other >= t.seen {
		it.tail, it.tailFrom = t, last
	}
}

// iterationsIn finds the iteration structure of the log positions from
// to upto of device d's trace; live bytes are replayed from the trace's
// start.
func (a *LeakAnalyzer) iterationsIn(d *deviceState, from, upto int, timed bool) *iterations {
	it := &iterations{anchor: -1, every: 1}
	// The stacks that may mark iterations, each once, and of each key the
	// index of its stack among them (-1: cannot mark iterations).
	var occs []anchorOcc
	slot := make([]int32, len(d.keys))
	slotOf := map[int32]int32{}
	for k, key := range d.keys {
		slot[k] = -1
		if key.stack < 0 || a.anchorClass(key.stack) == anchorNo {
			continue
		}
		j, ok := slotOf[key.stack]
		if !ok {
			j = int32(len(occs))
			slotOf[key.stack] = j
			occs = append(occs, anchorOcc{st: key.stack})
		}
		slot[k] = j
	}
	// The step's work before log position i counts the allocations made
	// inside a module call or by backward (or with no stack): the step's
	// compute, which cannot mark iterations itself but fills them. Every
	// allocation is counted too, for when the step's compute fills no
	// marker's gaps (a trace with no module call, or whose only ones came
	// before the loop: the model moved to the GPU). Both counts are kept
	// at each anchor's occurrences only (filled reads them there): a
	// count per log position cost 8 bytes a trace entry.
	var work, all int32
	for at, ks := range d.log.keyRuns(from, upto) {
		for e, k := range ks {
			if k < 0 {
				continue
			}
			if j := slot[k]; j >= 0 {
				o := &occs[j]
				o.pos = append(o.pos, at+e)
				o.counts = append(o.counts, work)
				o.allocs = append(o.allocs, all)
			} else {
				work++
			}
			all++
		}
	}
	// The stacks that occur, by id.
	seen := occs[:0]
	for _, o := range occs {
		if len(o.pos) > 0 {
			seen = append(seen, o)
		}
	}
	sort.Slice(seen, func(i, j int) bool { return seen[i].st < seen[j].st })
	// The program's own loops first; a library's only when the program
	// shows none.
	var best []int
	for _, class := range []int8{anchorOwn, anchorLibrary} {
		if len(best) >= minBoundaries {
			break
		}
		if b, anchor := a.bestAnchor(seen, class, upto-from, work > 0, &d.log); len(b) > len(best) {
			best, it.anchor = b, anchor
		}
	}
	// Without either, the calls of a module made from one line of the
	// program, when their allocations repeat pass after pass.
	if len(best) < minBoundaries {
		if ps, anchor, caller := a.callPasses(d, from, upto); len(ps) > len(best) {
			best, it.anchor, it.marker = ps, anchor, ""
			it.byCall, it.caller = true, caller
		}
	}
	if len(best) < minBoundaries && from == 0 {
		it.burst = a.burstOf(d, seen, upto)
	}
	a.fill(d, it, best, upto, timed)
	return it
}

// fill makes it's boundaries of best, the log positions at which the
// iterations start (ascending): every k-th when there are more than
// maxBoundaries, with their times (or positions, untimed), and replays the
// live bytes across them. With fewer than minBoundaries it only counts
// them (it.seen): too few to judge growth.
func (a *LeakAnalyzer) fill(d *deviceState, it *iterations, best []int, upto int, timed bool) {
	it.seen = len(best)
	if len(best) < minBoundaries {
		return
	}
	it.every = (len(best) + maxBoundaries - 1) / maxBoundaries
	at := d.log.timeReader()
	for i := 0; i < len(best); i += it.every {
		it.pos = append(it.pos, best[i])
		it.ord = append(it.ord, i)
		if timed {
			it.clock = append(it.clock, d.log.timeAt(at, best[i]))
		} else {
			it.clock = append(it.clock, int64(best[i]))
		}
	}
	it.replay(d, upto)
}

// replay records each key's live bytes at it's boundaries where they
// changed, and at log position upto (the end).
func (it *iterations) replay(d *deviceState, upto int) {
	it.upto = upto
	it.changes = make([][]change, len(d.keys))
	live := make([]int64, len(d.keys))
	block := make([]int64, len(d.keys))
	for k, key := range d.keys {
		block[k] = blockSize(key.size)
	}
	dirty := make([]bool, len(d.keys))
	var touched []int32
	// flush records, at boundary b, the keys changed since the one before.
	flush := func(b int) {
		for _, k := range touched {
			it.changes[k] = append(it.changes[k], change{b: int32(b), v: live[k]})
			dirty[k] = false
		}
		touched = touched[:0]
	}
	b, next := 0, it.pos[0] // the next boundary and its position
	for at, ks := range d.log.keyRuns(0, upto) {
		for e, k := range ks {
			if at+e == next {
				flush(b)
				b++
				next = -1
				if b < len(it.pos) {
					next = it.pos[b]
				}
			}
			if k >= 0 {
				live[k] = satAdd(live[k], block[k])
			} else {
				k = ^k
				live[k] -= block[k]
			}
			if !dirty[k] {
				dirty[k] = true
				touched = append(touched, k)
			}
		}
	}
	flush(len(it.pos)) // the end
}

// stepStarts returns the distinct log positions below upto at which the
// device's recorded steps (SetSteps) start, ascending; a step in which the
// log has no entry starts where the next does, and is one with it.
func (d *deviceState) stepStarts(upto int) []int {
	if d.steps == nil {
		return nil
	}
	var out []int
	for _, p := range d.steps.pos {
		if p >= upto {
			break
		}
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// anchorOcc is a stack that may mark iterations: the log positions of its
// allocations, and at each the step's work (counts) and every allocation
// (allocs) made before it (see iterationsIn).
type anchorOcc struct {
	st     int32
	pos    []int
	counts []int32
	allocs []int32
}

// bestAnchor returns the occurrences (iteration starts) and the stack of
// the best anchor of class among occs (sorted by stack id): recurring
// regularly through the trace (or its bursts do), the most frequent, and of
// stacks about as frequent (within 5%) the first in the step. An anchor
// must have some of the step's work in most of its gaps: a loop inside the
// step (one temporary per sample, a regulariser over a history, the
// matmuls of a fixed inner loop) recurs more often than the step and as
// regularly, but most of its gaps hold none of the step's work; the step's
// own marker, once per step, has it in every gap. The step's work is its
// compute (allocations in module calls or by backward) when the trace has
// some (hasWork) and it fills some anchor's gaps so; else (a trace without
// module calls, or whose only ones came before the loop, as moving the
// model to the GPU does) any other allocation. Only when no anchor
// qualifies either way is one of no other allocation taken (loneAnchor).
func (a *LeakAnalyzer) bestAnchor(occs []anchorOcc, class int8, n int, hasWork bool, log *replayLog) ([]int, int32) {
	if hasWork {
		if best, anchor := a.filledAnchor(occs, class, n, false); best != nil {
			return best, anchor
		}
	}
	if best, anchor := a.filledAnchor(occs, class, n, true); best != nil {
		return best, anchor
	}
	return a.loneAnchor(occs, class, n, log)
}

// filledAnchor returns the best anchor of class among occs whose
// occurrences (or their bursts) have the step's work in two thirds of
// their gaps (filled): the compute counted in counts, or, when
// ownInWork, every other allocation; nil when there is none.
func (a *LeakAnalyzer) filledAnchor(occs []anchorOcc, class int8, n int, ownInWork bool) ([]int, int32) {
	type cand struct {
		ps []int
		st int32
	}
	var good []cand
	for _, o := range occs {
		if len(o.pos) < 2 || a.anchorOK[o.st] != class {
			continue
		}
		st := o.st
		ps, counts, allocs := withoutRepeats(o.pos, o.counts, o.allocs)
		work := occCounts{pos: ps, n: counts}
		if ownInWork {
			work = occCounts{pos: ps, n: allocs, own: 1}
		}
		for _, c := range anchorCands(ps, n) {
			if filled(c, ps, work, ownInWork) {
				good = append(good, cand{c, st})
				break
			}
		}
	}
	// The most frequent first; a loop nested unevenly inside a less
	// frequent marker (innerLoop) is passed over.
	sort.SliceStable(good, func(i, j int) bool { return len(good[i].ps) > len(good[j].ps) })
	if len(good) > maxNestChecks {
		good = good[:maxNestChecks]
	}
	var best []int
	anchor := int32(-1)
	for i, c := range good {
		nested := false
		for _, o := range good[i+1:] {
			if len(o.ps) >= minBoundaries && len(o.ps) < len(c.ps) && innerLoop(c.ps, o.ps) {
				nested = true
				break
			}
		}
		if !nested && betterAnchor(c.ps, best) {
			best, anchor = c.ps, c.st
		}
	}
	return best, anchor
}

// anchorCands returns the ways the sorted log positions ps of one stack
// may mark iterations through a trace of n positions: ps itself when
// regular, the starts of its bursts when those are, or, when neither is,
// the bursts split at a break (breakStarts).
func anchorCands(ps []int, n int) [][]int {
	var cands [][]int
	if regular(ps, n) {
		cands = append(cands, ps)
	}
	// Allocations in bursts (one per parameter in each optimizer
	// step; a loop inside the step; training steps between long
	// evaluations) mark iterations by the start of each burst.
	if bs := burstStarts(ps); len(bs) >= 2 && len(bs) < len(ps) && regular(bs, n) {
		cands = append(cands, bs)
	}
	// A step whose allocations on this stack are many, at uneven
	// spacing (the statements of a step written on one line, on
	// batches of varying length), splits at twice the median gap into
	// bursts of uneven length; the gaps between steps stand apart
	// from those within by a clear break.
	if len(cands) == 0 {
		if bs := breakStarts(ps, n); bs != nil {
			cands = append(cands, bs)
		}
	}
	return cands
}

// withoutRepeats returns the occurrences of one stack (sorted log
// positions ps, with counts and allocs as anchorOcc holds them) less each
// that follows the one before by under a quarter of their median gap
// with nothing but allocations between: a stack that a step allocates on
// again just after (a reduction's second scalar, made only for some batch
// sizes) marks that step once, not two steps, one of them a few
// allocations long. A step, however short, frees something (the batch
// before, its temporaries) by the time the next begins. It returns its
// arguments when there is none, or fewer than minBoundaries gaps.
func withoutRepeats(ps []int, counts, allocs []int32) ([]int, []int32, []int32) {
	if len(ps) <= minBoundaries {
		return ps, counts, allocs
	}
	gaps := make([]int, len(ps)-1)
	for i := 1; i < len(ps); i++ {
		gaps[i-1] = ps[i] - ps[i-1]
	}
	slices.Sort(gaps)
	med := gaps[len(gaps)/2]
	var keep []int
	for i := 1; i < len(ps); i++ {
		g := ps[i] - ps[i-1]
		// allocs counts the allocations before each occurrence, its
		// predecessor's included: g entries of which that many allocate.
		if 4*g < med && g == int(allocs[i]-allocs[i-1]) {
			if keep == nil {
				keep = make([]int, 0, len(ps))
				for j := range i {
					keep = append(keep, j)
				}
			}
			continue
		}
		if keep != nil {
			keep = append(keep, i)
		}
	}
	if keep == nil {
		return ps, counts, allocs
	}
	p, c, a := make([]int, len(keep)), make([]int32, len(keep)), make([]int32, len(keep))
	for j, i := range keep {
		p[j], c[j], a[j] = ps[i], counts[i], allocs[i]
	}
	return p, c, a
}

// loneAnchor returns the anchor of class among occs for a trace in which
// no stack's gaps hold other allocations (filledAnchor found none): the
// most frequent regular one, as bestAnchor ranks them, of at least
// minBoundaries occurrences, else nil. Allocations of a stack made back to
// back, with no other allocation or free between them in the trace, are
// one operation and count once: the buffers of a list comprehension
// (`[torch.empty(n) for _ in range(16)]`), or a loop that only fills a
// list, are made in one burst, not in iterations of a step. A loop that
// replaces its tensor each pass frees the old one between (a CUDA graph's
// input refilled every replay), and marks its passes.
func (a *LeakAnalyzer) loneAnchor(occs []anchorOcc, class int8, n int, log *replayLog) ([]int, int32) {
	var best []int
	anchor := int32(-1)
	for _, o := range occs {
		if len(o.pos) < 2 || a.anchorOK[o.st] != class {
			continue
		}
		ps := runStarts(o.pos, log)
		if len(ps) < minBoundaries {
			continue
		}
		for _, c := range anchorCands(ps, n) {
			if len(c) >= minBoundaries && betterAnchor(c, best) {
				best, anchor = c, o.st
			}
		}
	}
	return best, anchor
}

// burstGapUs is the longest time between two allocations of one stack
// made back to back for them to count as one operation (runStarts). The
// elements of a list comprehension follow each other in microseconds: in
// a tester's recording of one on an H200, 3-78 µs apart, a new segment's
// cudaMalloc included, with one gap of 63 ms and one of 10.7 ms among
// 62; a run split at a few such gaps still gives fewer than
// minBoundaries starts. A loop whose only allocation on the GPU is the
// tensor it keeps does its other work (a batch loaded, a file read,
// Python) between them, commonly longer.
const burstGapUs = 10_000

// runStarts returns the sorted log positions ps less those that directly
// follow the one before (ps[i] == ps[i-1]+1) within burstGapUs of it
// (always, when log has no times): the first of each run of allocations
// made back to back. It returns ps itself when there is none.
func runStarts(ps []int, log *replayLog) []int {
	var r *timeReader
	if log != nil && log.timed {
		r = log.timeReader()
	}
	var out []int
	prevUs := int64(0)
	for i, p := range ps {
		var us int64
		if r != nil {
			us = log.timeAt(r, p)
		}
		run := i > 0 && p == ps[i-1]+1 && (r == nil || us-prevUs < burstGapUs)
		prevUs = us
		if run {
			if out == nil {
				out = append(make([]int, 0, len(ps)), ps[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, p)
		}
	}
	if out == nil {
		return ps
	}
	return out
}

// maxNestChecks bounds the candidate anchors compared pairwise by
// innerLoop.
const maxNestChecks = 16

// betterAnchor reports whether occurrences ps make a better anchor than
// cur: more of them (by over 5%), or about as many and earlier.
func betterAnchor(ps, cur []int) bool {
	more := len(ps)*100 > len(cur)*105
	same := len(ps)*100 >= len(cur)*95 && len(cur) > 0 && ps[0] < cur[0]
	return more || same
}

// innerLoop reports whether the sorted positions in (a loop's) recur inside
// the periods of the sorted positions out (a step's) unevenly: out occurs at
// most once between two of in (nine times in ten), in repeats within the
// periods of out it occurs in (a median of 2 or more), and its count per
// period of out varies (the commonest count covers under three quarters of
// the periods: a loop that runs only in a phase of the run, or over a
// history that grows). A loop with the same count every step (the samples
// of a fixed batch, the micro-batches of gradient accumulation) is not
// told from a step by this, nor are steps from the logging every k steps.
func innerLoop(in, out []int) bool {
	// out per gap of in.
	multi := 0
	j := sort.SearchInts(out, in[0]+1)
	for i := 1; i < len(in); i++ {
		c := 0
		for j < len(out) && out[j] < in[i] {
			c++
			j++
		}
		if c > 1 {
			multi++
		}
	}
	if multi*10 > len(in)-1 {
		return false
	}
	// in per gap of out.
	counts := make([]int, 0, len(out)-1)
	k := sort.SearchInts(in, out[0])
	for i := 1; i < len(out); i++ {
		c := 0
		for k < len(in) && in[k] < out[i] {
			c++
			k++
		}
		counts = append(counts, c)
	}
	var nonzero []int
	freq := map[int]int{}
	common := 0
	for _, c := range counts {
		if c > 0 {
			nonzero = append(nonzero, c)
		}
		freq[c]++
		common = max(common, freq[c])
	}
	if len(nonzero) == 0 {
		return false
	}
	sort.Ints(nonzero)
	return nonzero[len(nonzero)/2] >= 2 && common*4 < len(counts)*3
}

// filled reports whether two thirds of the gaps between the sorted log
// positions ps (a stack's occurrences own, or the starts of their bursts)
// hold some of the step's work, work being its running count by log
// position; when ownInWork, work counts every allocation, own included,
// and own's are subtracted.
func filled(ps, own []int, work stepWork, ownInWork bool) bool {
	n := 0
	for i := 1; i < len(ps); i++ {
		w := int(work.at(ps[i]) - work.at(ps[i-1]+1))
		if ownInWork {
			w -= sort.SearchInts(own, ps[i]) - sort.SearchInts(own, ps[i-1]+1)
		}
		if w > 0 {
			n++
		}
	}
	return n*3 >= 2*(len(ps)-1)
}

// stepWork is the running count of the step's work (see findIterations)
// by log position.
type stepWork interface {
	// at returns the count before log position p.
	at(p int) int32
}

// occCounts is the running count at a stack's occurrences: n[j] before
// pos[j], and just after it n[j] + own (1 when the count includes the
// occurrences themselves). at answers only those positions, all filled
// asks: an occurrence's, and the one after it.
type occCounts struct {
	pos []int
	n   []int32
	own int32
}

func (o occCounts) at(p int) int32 {
	j := sort.SearchInts(o.pos, p)
	if j < len(o.pos) && o.pos[j] == p {
		return o.n[j]
	}
	return o.n[j-1] + o.own // p is the position after occurrence j-1
}

// regular reports whether sorted log positions ps recur through a trace of
// n positions: their span covers at least minCover of the trace, and the
// gaps far longer (over 4 times) than the median of the gaps around them
// (localWindow on either side) hold less than half of it. Steps of varying
// length (a variable number of layers, sequences that grow, a phase with an
// extra loop) pass: their gaps differ, but none dwarfs its neighbours.
// Allocations clustered within a step (one per parameter, one per layer) do
// not: a long gap between clusters, among short ones, holds most of the span.
func regular(ps []int, n int) bool {
	span := ps[len(ps)-1] - ps[0]
	if span <= 0 || float64(span) < minCover*float64(n) {
		return false
	}
	gaps := make([]int, len(ps)-1)
	for i := 1; i < len(ps); i++ {
		gaps[i-1] = ps[i] - ps[i-1]
	}
	long := 0
	win := make([]int, 0, 2*localWindow+1)
	for i, g := range gaps {
		win = append(win[:0], gaps[max(i-localWindow, 0):min(i+localWindow+1, len(gaps))]...)
		// An insertion sort in place: sort.Ints costs twice as much on
		// 11 values.
		for x := 1; x < len(win); x++ {
			for y := x; y > 0 && win[y] < win[y-1]; y-- {
				win[y], win[y-1] = win[y-1], win[y]
			}
		}
		if g > 4*win[len(win)/2] {
			long += g
		}
	}
	return long*2 < span
}

// localWindow is how many gaps on either side of a gap regular compares it
// with.
const localWindow = 5

// burstStarts returns the first position of each burst of ps: the
// positions that follow a gap more than twice the median gap (and the
// first). It returns ps itself when there is no such gap.
func burstStarts(ps []int) []int {
	gaps := make([]int, len(ps)-1)
	for i := 1; i < len(ps); i++ {
		gaps[i-1] = ps[i] - ps[i-1]
	}
	sort.Ints(gaps)
	med := gaps[len(gaps)/2]
	out := []int{ps[0]}
	for i := 1; i < len(ps); i++ {
		if ps[i]-ps[i-1] > 2*med {
			out = append(out, ps[i])
		}
	}
	if len(out) == 1 {
		return ps
	}
	return out
}

// breakStarts returns the first position of each burst of ps when the
// gaps between bursts stand apart from the gaps within them: the sorted
// distinct gaps have a break, a gap more than 4 times the next shorter one
// (regular's "far longer"), and the positions that follow a gap above the
// break recur regularly (regular, over a trace of n positions). Of several
// breaks, the lowest whose bursts are regular is taken (a long evaluation
// between some steps makes a higher break, whose bursts are too few). It
// returns nil when there is none, or the bursts are fewer than
// minBoundaries. Allocations evenly spaced (one pass of a model's layers)
// have no break.
func breakStarts(ps []int, n int) []int {
	if len(ps) < 2 {
		return nil
	}
	gaps := make([]int, len(ps)-1)
	for i := 1; i < len(ps); i++ {
		gaps[i-1] = ps[i] - ps[i-1]
	}
	sort.Ints(gaps)
	for i := 1; i < len(gaps); i++ {
		lo := gaps[i-1]
		if gaps[i] <= 4*max(lo, 1) {
			continue
		}
		out := []int{ps[0]}
		for j := 1; j < len(ps); j++ {
			if ps[j]-ps[j-1] > lo {
				out = append(out, ps[j])
			}
		}
		if len(out) < minBoundaries {
			return nil // a higher break makes fewer bursts
		}
		if regular(out, n) {
			return out
		}
	}
	return nil
}

// blockSize is the size of the block the caching allocator gives a
// request of size bytes (round_size in CUDACachingAllocator.cpp: at least
// 512 bytes, a multiple of 512): the bytes a site holds, on the basis of
// the snapshot's blocks. A trace entry may give the requested size.
func blockSize(size int64) int64 {
	const minBlock = 512
	if size <= 0 || size > math.MaxInt64-minBlock {
		return size
	}
	if size < minBlock {
		return minBlock
	}
	return (size + minBlock - 1) / minBlock * minBlock
}

// trend is the verdict on one curve of live bytes at iteration boundaries.
type trend struct {
	grows bool
	// rises counts the measured intervals in which the bytes rose.
	rises int
	// from and to are the bytes at the first and last boundary, end at
	// the end of the trace (or the OOM).
	from, to, end int64
	// plateau is the first boundary from which the bytes stayed within
	// noise of their highest value.
	plateau int
	// floor is set when the verdict is on the curve's floor (see
	// verdict): rises, from and to are then the floor's.
	floor bool
	// firstMax and lastMax are the highest bytes at the boundaries of the
	// first and the second half of the iterations (the plateau rule
	// compares them); 0 with fewer than minBoundaries.
	firstMax, lastMax int64
}

// floorParts is how many windows of iterations windowMinima takes the
// minimum of.
const floorParts = 8

// windowMinima returns the lowest of v's boundary values in each of
// floorParts equal windows of the boundaries, followed by v's end value;
// nil when v has fewer than 2*floorParts boundaries.
func windowMinima(v []int64) []int64 {
	n := len(v) - 1
	if n < 2*floorParts {
		return nil
	}
	f := make([]int64, 0, floorParts+1)
	for w := 0; w < floorParts; w++ {
		lo, hi := w*n/floorParts, (w+1)*n/floorParts
		m := v[lo]
		for _, x := range v[lo+1 : hi] {
			m = min(m, x)
		}
		f = append(f, m)
	}
	return append(f, v[n])
}

// suffixMinima returns, for each boundary of v, the least v holds from
// there on (its end value included), followed by v's end value.
func suffixMinima(v []int64) []int64 {
	f := make([]int64, len(v))
	m := v[len(v)-1]
	for i := len(v) - 1; i >= 0; i-- {
		m = min(m, v[i])
		f[i] = m
	}
	return f
}

// verdict judges v (judge); a curve that does not grow is judged again by
// its floor: a sawtooth (a list cleared every k steps) whose minima rise
// leaks what survives each clear. The floor grows when both the least the
// curve holds from each boundary on (suffixMinima: the plateau rule
// applies to it at full resolution, so a cache that filled up stays
// bounded) and the lowest value of each eighth of the boundaries
// (windowMinima: noise does not lift them, as it lifts the last few
// suffix minima) grow by judge's rule.
func verdict(v []int64) trend {
	t := judge(v)
	if t.grows {
		return t
	}
	w := windowMinima(v)
	if w == nil || !judge(w).grows {
		return t
	}
	if ft := judge(suffixMinima(v)); ft.grows {
		ft.floor = true
		return ft
	}
	return t
}

// judge applies the growth rule to v, a site's live bytes at each
// iteration boundary followed by its live bytes at the end. The noise is
// the largest fall between two boundaries (a curve that goes up and down
// by that much is not growing). A leak's bytes rise in at least MinRises
// measured intervals; they end above where they started by at least half
// of all their rises (up and down does not add up); they reach, in the
// second half of the iterations, a level higher than anything in the first
// half by more than the noise (a curve that rose and then stayed flat for
// most of the iterations is bounded: a cache that filled up, a first step's
// gradients and optimizer state); and they are not released after the last
// boundary (at the end, within the noise and one rise of their highest,
// or holding three quarters of their growth: the last step's temporaries
// may be gone, half of the memory may not).
func judge(v []int64) trend {
	t := trend{}
	if len(v) < 2 {
		return t
	}
	n := len(v) - 1 // boundaries
	t.end = v[n]
	v = v[:n]
	t.from, t.to = v[0], v[n-1]
	var up, noise, step int64
	hi := v[0]
	for i := 1; i < n; i++ {
		if v[i] > v[i-1] {
			t.rises++
			up = satAdd(up, v[i]-v[i-1])
			step = max(step, v[i]-v[i-1])
		} else {
			noise = max(noise, v[i-1]-v[i])
		}
		hi = max(hi, v[i])
	}
	for t.plateau < n-1 && v[t.plateau] < hi-noise {
		t.plateau++
	}
	if n < minBoundaries {
		return t
	}
	mid := (n - 1) / 2
	firstMax, lastMax := v[0], v[mid+1]
	for i := 0; i <= mid; i++ {
		firstMax = max(firstMax, v[i])
	}
	for i := mid + 1; i < n; i++ {
		lastMax = max(lastMax, v[i])
	}
	t.firstMax, t.lastMax = firstMax, lastMax
	net := t.to - t.from
	kept := t.end >= lastMax-noise-step || (t.end-t.from)/3 >= (lastMax-t.from)/4
	t.grows = t.rises >= MinRises && net > 0 && net*2 >= up && lastMax-noise > firstMax && kept
	return t
}

// fitCurve fits v against the boundaries' clocks by least squares: bytes
// per second when timed (per trace position otherwise), and R².
func (it *iterations) fitCurve(v []int64, timed bool) (slope, r2 float64) {
	return fitClocks(it.clock, v, timed)
}

// fitClocks fits v (a value at each of clock's boundaries, then the end's)
// against clock by least squares, as fitCurve.
func fitClocks(clock, v []int64, timed bool) (slope, r2 float64) {
	if len(v) < 3 || len(clock) < 2 || len(v) < len(clock) || clock[len(clock)-1] == clock[0] {
		return 0, 0
	}
	v = v[:len(clock)]
	x := make([]float64, len(v))
	y := make([]float64, len(v))
	scale := 1.0
	if timed {
		scale = 1e6
	}
	for i := range v {
		x[i] = float64(clock[i]-clock[0]) / scale
		y[i] = float64(v[i])
	}
	alpha, beta := stat.LinearRegression(x, y, nil, false)
	r2 = stat.RSquared(x, y, nil, alpha, beta)
	if r2 != r2 { // NaN: a flat curve
		r2 = 0
	}
	return beta, r2
}

// why says why the trace cannot show growth across iterations.
func (it *iterations) why() string {
	by := ""
	if it != nil && it.marker != "" {
		by = " (" + it.marker + ")"
	}
	switch {
	case it != nil && it.seen == 0 && it.burst != nil:
		return "the trace shows no repeating step (" + it.burst.String() + ")"
	case it == nil || it.seen == 0:
		return "the trace shows no repeating step (one pass, or steps whose allocations are all made inside module calls or by backward)"
	case it.seen == 1:
		return "the trace covers 1 step" + by
	}
	return fmt.Sprintf("the trace covers %d steps%s, fewer than the %d needed", it.seen, by, minBoundaries)
}

// Burst is the evidence that a trace's steps could not be told from one
// statement: Count allocations at one line (one stack), made back to back (nothing else allocated or freed between two of them, and,
// in a timed trace, each within burstGapUs of the one before) in Runs
// runs. A list comprehension makes them so, and so does a loop whose only
// work on the GPU is the tensor it keeps, when its passes take less than
// burstGapUs: the trace holds nothing else that tells them apart (the
// stack, its line, the sizes are the same; a loop's other work leaves no
// trace entry).
type Burst struct {
	Count, Runs int
	// Sizes: the one size of the allocations (block bytes), 0 when they
	// differ; Bytes their sum.
	Size, Bytes int64
	// Timed: SpanUs is the time from the first to the last of them.
	Timed  bool
	SpanUs int64
	// Comprehension is the name of the comprehension's own frame
	// (<listcomp>, <genexpr>...) on their stack, "" when there is none
	// (Python 3.12 runs a list comprehension in its function's frame).
	Comprehension string
	stack         int32
}

// String says what b shows and what it does not, of "one line".
func (b *Burst) String() string { return b.At("at one line") }

// At says what b shows and what it does not, at says where ("at this
// line").
func (b *Burst) At(at string) string {
	what := fmt.Sprintf("%d allocations", b.Count)
	if b.Size > 0 {
		what += " of " + bytesText(b.Size)
	} else {
		what += fmt.Sprintf(" (%s)", bytesText(b.Bytes))
	}
	runs := ""
	if b.Runs > 1 {
		runs = fmt.Sprintf(" in %d runs", b.Runs)
	}
	within := ""
	if b.Timed {
		within = " within " + durationText(b.SpanUs)
	}
	if b.Comprehension != "" {
		return fmt.Sprintf("%s made back to back%s %s%s by a comprehension (its %s frame): one statement, not iterations", what, runs, at, within, b.Comprehension)
	}
	return fmt.Sprintf("%s made back to back%s %s%s, nothing else allocated or freed between them: one statement (a list comprehension) or a loop too fast to tell apart", what, runs, at, within)
}

// burstAt returns it.burst when no step was found and the burst's stack
// is among ids (a site's stacks), else nil.
func (it *iterations) burstAt(ids []int32) *Burst {
	if it == nil || it.burst == nil || it.seen > 0 || !containsID(ids, it.burst.stack) {
		return nil
	}
	return it.burst
}

// comprehensions are the names of the frames Python gives a
// comprehension's code.
var comprehensions = map[string]bool{"<listcomp>": true, "<genexpr>": true, "<dictcomp>": true, "<setcomp>": true}

// burstOf returns the Burst of the stack among occs (own code first) whose
// allocations recur regularly through a trace of n positions, at least
// minBoundaries of them, but would mark fewer than minBoundaries steps
// once those made back to back count once (runStarts): the most
// allocations of those; nil when there is none.
func (a *LeakAnalyzer) burstOf(d *deviceState, occs []anchorOcc, n int) *Burst {
	log := &d.log
	for _, class := range []int8{anchorOwn, anchorLibrary} {
		var best *anchorOcc
		runs := 0
		for i := range occs {
			o := &occs[i]
			if a.anchorOK[o.st] != class || len(o.pos) < minBoundaries || best != nil && len(o.pos) <= len(best.pos) {
				continue
			}
			rs := runStarts(o.pos, log)
			if len(rs) >= minBoundaries || len(anchorCands(o.pos, n)) == 0 {
				continue
			}
			best, runs = o, len(rs)
		}
		if best == nil {
			continue
		}
		b := &Burst{Count: len(best.pos), Runs: runs, stack: best.st, Timed: log.timed, Size: -1}
		j := 0
		keys := log.keyIter()
		for i := 0; i < n && j < len(best.pos); i++ {
			k := keys.next()
			if i != best.pos[j] {
				continue
			}
			j++
			size := blockSize(d.keys[k].size)
			b.Bytes = satAdd(b.Bytes, size)
			if b.Size == -1 || b.Size == size {
				b.Size = size
			} else {
				b.Size = 0
			}
		}
		if b.Timed {
			r := log.timeReader()
			first := log.timeAt(r, best.pos[0])
			b.SpanUs = log.timeAt(r, best.pos[len(best.pos)-1]) - first
		}
		for _, fid := range a.stacks[best.st] {
			if fid >= 0 && int(fid) < len(a.frames) && comprehensions[a.frames[fid].Name] && callsite.IsPython(a.frames[fid]) {
				b.Comprehension = a.frames[fid].Name
				break
			}
		}
		return b
	}
	return nil
}

// bytesText formats a size with IEC units ("4.0 MiB").
func bytesText(n int64) string { return humanize.IBytes(uint64(max(n, 0))) }

// durationText formats a time in µs with the precision its length needs
// ("37 µs", "4.7 ms", "52 ms", "1.25 s").
func durationText(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%d µs", us)
	case us < 10_000:
		return fmt.Sprintf("%.1f ms", float64(us)/1e3)
	case us < 1_000_000:
		return fmt.Sprintf("%.0f ms", float64(us)/1e3)
	}
	return fmt.Sprintf("%.2f s", float64(us)/1e6)
}
