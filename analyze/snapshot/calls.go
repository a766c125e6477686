package snapshot

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// A loop whose every allocation is made inside a call of an nn.Module (an
// evaluation over batches already on the GPU: `outs.append(model(x))`)
// has no stack of its own to mark its steps: anchorClass refuses stacks
// under a module call, since the layers of one forward pass recur evenly
// too. Its passes are still seen in the trace as the calls made from one
// line of the program: the allocations made under calls from that line
// repeat, exactly, one call's sequence after another. callPasses finds
// them so, with these limits:
//
//   - the stack must show the call (a frame of module.py's call between
//     the program's line and the module's forward) and no backward;
//   - the line that makes the call must be the program's own code;
//   - the sequence of (stack, size) of the allocations made under calls
//     from that line must repeat exactly, from its first allocation to its
//     last, at least minBoundaries times: one forward pass of a model has
//     allocations before and after its layers (embeddings, a head, a last
//     layer of another width), which break the repetition, and a pass cut
//     short at the end is not taken as one (so a snapshot taken in the
//     middle of a forward pass is not cut into its layers); allocations
//     made once, in the first pass only (a cuBLAS workspace made by the
//     first matmul, a buffer a module makes on its first call), are left
//     out; when the sizes differ from pass to pass (an evaluation over
//     batches of different sizes), the sequence of stacks must repeat so
//     (stackPasses);
//   - when every allocation of a pass is made in a module called within
//     the outer one, the pass must call at least two distinct modules'
//     forward there: the blocks of a model (a ModuleList, a Sequential of
//     one block class) each call the same forward, and a trace that lost
//     its start (the ring buffer wrapped) repeats exactly over them.
//
//   - each pass frees something the trace saw allocated: an evaluation
//     frees a pass's intermediate results (or the last pass's output it
//     replaced), where one forward pass in training mode keeps what its
//     layers save for backward, so that a Sequential of repeating layers
//     that each save their input (Linear, Linear...) is not cut into
//     passes. It does not stop pairs whose second layer saves its output
//     instead (Linear, ReLU: the Linear's output is freed once the ReLU
//     made its own); the last rule does. The cost: a loop that keeps the whole
//     graph of each pass (model(x) kept with grad enabled, freeing
//     nothing) is not seen either, and its memory is reported as retained.
//
//   - the program is seen outside the calls once the first pass began: a
//     pass calls two outermost modules from the line (crit(model(x), y):
//     the line runs between the two calls), or the trace holds an
//     allocation, or a free with a stack, whose stack is not under a
//     module call from that line, after the first pass's start (between
//     passes, or after the last: the loop ended and the program went on).
//     A Sequential of repeating different layers (Linear, ReLU, Linear,
//     ReLU...) whose trace holds one forward pass that ends with a whole
//     repeat is otherwise indistinguishable from as many passes of a
//     model of those two layers: a snapshot taken during such a forward
//     (an OOM in it) ends with a whole repeat whenever it is cut at a
//     pair's end (s40/mlp_forward_tail90.pickle), and the pairs' saved
//     ReLU outputs were a "leak" of 1 MiB an iteration at the model's
//     call. What happened before the first pass does not count: an OOM in
//     a step's forward follows the step's input. The cost: a loop of calls
//     that is all the trace holds from its first pass to the snapshot is
//     not seen (its outputs are retained), and one whole forward of such
//     pairs followed by other work is still taken for passes.

// callInfo is what callPasses needs of one stack.
type callInfo struct {
	// group is the index of the caller (the stack from the program's line
	// that makes the outermost module call outward) in
	// LeakAnalyzer.callGroups; -1 when the stack cannot mark calls.
	group int32
	// caller is the frame id of that line.
	caller int32
	// child names the forward that the outermost module's forward called
	// through a module call, when the allocation was made inside one
	// (nested); "" when the outermost module's own code made it.
	child string
	// outer numbers the outermost module's forward (its file and
	// function, in LeakAnalyzer.callOuters); -1 when the stack has none.
	outer int32
}

// callInfoOf returns stack id's callInfo (cached).
func (a *LeakAnalyzer) callInfoOf(id int32) callInfo {
	if c, ok := a.callOK[id]; ok {
		return c
	}
	c := callInfo{group: -1, caller: -1, outer: -1}
	defer func() { a.callOK[id] = c }()
	if id < 0 || int(id) >= len(a.stacks) {
		return c
	}
	st := a.stacks[id] // innermost first
	// The Python frames, outermost first, and their indices in st.
	var py []int
	for i := len(st) - 1; i >= 0; i-- {
		fid := st[i]
		if fid < 0 || int(fid) >= len(a.frames) {
			continue
		}
		if a.frameFacts(fid, factsAnchor)&factAutograd != 0 || callsite.IsAutogradPython(a.frames[fid]) {
			return c // backward
		}
		if callsite.IsPython(a.frames[fid]) {
			py = append(py, i)
		}
	}
	// The entries of module calls: runs of module.py frames among the
	// Python frames.
	entries := 0
	first := -1
	for j := 0; j < len(py); j++ {
		if !callsite.IsModuleCall(a.frames[st[py[j]]]) {
			continue
		}
		if j > 0 && callsite.IsModuleCall(a.frames[st[py[j-1]]]) {
			continue // the same call's next frame
		}
		entries++
		switch entries {
		case 1:
			first = j
			for k := j + 1; k < len(py); k++ {
				if f := a.frames[st[py[k]]]; !callsite.InModuleFile(f) {
					o := f.Filename + "\x00" + f.Name
					id, ok := a.callOuters[o]
					if !ok {
						id = int32(len(a.callOuters))
						a.callOuters[o] = id
					}
					c.outer = id
					break
				}
			}
		case 2:
			// The forward the outermost module's code called: the
			// first Python frame inside this call not of module.py
			// (whose inner runs a module's hooks).
			for k := j + 1; k < len(py); k++ {
				if f := a.frames[st[py[k]]]; !callsite.InModuleFile(f) {
					c.child = f.Filename + "\x00" + f.Name
					break
				}
			}
		}
	}
	if first <= 0 {
		return c // no module call, or no Python frame outside it
	}
	caller := st[py[first-1]]
	if ff := a.frameFacts(caller, factsUser); ff&factUserPython == 0 || ff&factLibrary != 0 {
		return c // called by a library (a trainer, generate) or by torch
	}
	// The caller is known by its Python frames from the program's line
	// outward. A recording with C++ frames (stacks="all") places the
	// Python frames among the interpreter's by counting its evaluation
	// frames, and puts those it could not place at the end of the
	// stack: the same line's calls then carry the interpreter's frames in
	// one place on one allocation and in another on the next (one
	// operator reached through another C entry point), and keyed with
	// them they would split one loop into a group per entry point.
	var key strings.Builder
	for _, j := range py[:first] {
		key.WriteString(strconv.Itoa(int(st[j])))
		key.WriteByte(',')
	}
	g, ok := a.callGroups[key.String()]
	if !ok {
		g = int32(len(a.callGroups))
		a.callGroups[key.String()] = g
	}
	c.group, c.caller = g, caller
	return c
}

// callPasses returns the log positions at which the passes of the best
// loop of module calls start (see above) in the log positions from to
// upto of device d's trace, with the stack of each pass's first
// allocation and the frame of the line that makes the calls; nil when
// there is none.
func (a *LeakAnalyzer) callPasses(d *deviceState, from, upto int) ([]int, int32, int32) {
	var best []int
	anchor, caller := int32(-1), int32(-1)
	runs := a.callRuns(d)
	for gi, g := range runs {
		lo, _ := slices.BinarySearch(g.pos, from)
		hi, _ := slices.BinarySearch(g.pos, upto)
		ps, at, calls := a.passesOf(d, g.pos[lo:hi], g.keys[lo:hi])
		if len(ps) < minBoundaries || !regular(ps, upto-from) || !freesInEach(d, ps) {
			continue
		}
		if !calls && d.lastOut.outside(int32(gi)) <= ps[0] {
			continue // nothing shows the program between or after them
		}
		if len(ps) > len(best) || len(ps) == len(best) && ps[0] < best[0] {
			best, anchor = ps, d.keys[at].stack
			caller = a.callInfoOf(anchor).caller
		}
	}
	return best, anchor, caller
}

// callRun is the allocations of device d's whole trace made under the
// calls of one caller (callInfo.group): their log positions, in order,
// and their keys.
type callRun struct {
	pos  []int
	keys []int32
}

// callRuns returns device d's callRuns, by caller group, made once: the
// search for iterations asks callPasses for many stretches of one trace
// (its whole, then its last half, last quarter..., then again before a
// teardown), and each stretch's are the positions of the whole's that lie
// in it. The caller's group is found once a key, not once an allocation.
// findIterations drops them when it is done (d.calls = nil).
func (a *LeakAnalyzer) callRuns(d *deviceState) []callRun {
	if d.calls != nil {
		return d.calls
	}
	groupOf := make([]int32, len(d.keys)) // of each key; -2 not yet asked
	for k := range groupOf {
		groupOf[k] = -2
	}
	runs := []callRun{}
	d.lastOut = lastGroups{{-2, -1}, {-2, -1}}
	for at, ks := range d.log.keyRuns(0, d.log.n) {
		for j, k := range ks {
			if k < 0 {
				continue
			}
			g := groupOf[k]
			if g == -2 {
				g = a.callInfoOf(d.keys[k].stack).group
				groupOf[k] = g
			}
			if d.keys[k].stack >= 0 {
				d.lastOut.note(g, at+j)
			}
			if g < 0 {
				continue
			}
			for int(g) >= len(runs) {
				runs = append(runs, callRun{})
			}
			r := &runs[g]
			r.pos = append(r.pos, at+j)
			r.keys = append(r.keys, k)
		}
	}
	for st, p := range d.freedAt {
		if p > 0 {
			d.lastOut.note(a.callInfoOf(int32(st)).group, int(p)-1)
		}
	}
	d.calls = runs
	return runs
}

// note records that group g made an entry at log position p.
func (l *lastGroups) note(g int32, p int) {
	switch {
	case l[0].group == g:
		l[0].pos = max(l[0].pos, p)
	case l[1].group == g:
		l[1].pos = max(l[1].pos, p)
	default:
		if p <= l[1].pos {
			return
		}
		l[1] = groupPos{g, p}
	}
	if l[1].pos > l[0].pos {
		l[0], l[1] = l[1], l[0]
	}
}

// outside returns the last log position of an entry of l's trace that is
// not of caller group g (-1 when none).
func (l *lastGroups) outside(g int32) int {
	if l[0].group != g {
		return l[0].pos
	}
	return l[1].pos
}

// passesOf returns the starts of the passes of one caller's allocations
// (log positions pos, keys keys), the key of each pass's first
// allocation, and whether a pass calls more than one module from the line
// (two outermost forwards: the line runs between them); nil when they do
// not repeat as callPasses requires.
func (a *LeakAnalyzer) passesOf(d *deviceState, pos []int, keys []int32) ([]int, int32, bool) {
	if len(keys) < minBoundaries {
		return nil, -1, false
	}
	// How often each key occurs among keys, in a slice by key kept for
	// the next call and cleared after this one: the search asks passesOf
	// for every caller group in every stretch it tries, and a map here
	// was a fifth of the module-call rule's instructions.
	if len(d.keyCount) < len(d.keys) {
		d.keyCount = make([]int32, len(d.keys))
	}
	count := d.keyCount
	for _, k := range keys {
		count[k]++
	}
	defer func() {
		for _, k := range keys {
			count[k] = 0
		}
	}()
	if ps, first, calls := a.keyPasses(d, pos, keys, count); ps != nil {
		return ps, first, calls
	}
	return a.stackPasses(d, pos, keys, count)
}

// passBuf holds keyPasses' and stackPasses' slices between calls: the
// search for iterations asks them for every caller group in every
// stretch of the trace it tries, and their slices made anew each time
// were most of a small snapshot's analysis memory, each byte a page the
// process touched for the first time.
type passBuf struct {
	pos   []int
	seq   []int32
	pi    []int32
	cands []passCand
}

// passCand is a period of a suffix of stackPasses' sequence with the
// length of the longest suffix it holds.
type passCand struct{ per, length int }

// prefix returns a slice of n elements, to be overwritten, for a prefix
// function (each element below n, so an int32).
func (b *passBuf) prefix(n int) []int32 {
	b.pi = slices.Grow(b.pi[:0], n)[:n]
	if n > 0 {
		b.pi[0] = 0
	}
	return b.pi
}

// keyPasses is passesOf for passes whose allocations repeat in stack and
// size; count holds how often each key occurs among keys.
func (a *LeakAnalyzer) keyPasses(d *deviceState, pos []int, keys []int32, count []int32) ([]int, int32, bool) {
	// Leave out the allocations made once within the first pass: those
	// before the first allocation of a key that recurs, and those between
	// it and that key's next allocation.
	start := 0
	for start < len(keys) && count[keys[start]] < 2 {
		start++
	}
	if start == len(keys) {
		return nil, -1, false
	}
	second := start + 1
	for keys[second] != keys[start] {
		second++
	}
	buf := &d.passBuf
	p, s := buf.pos[:0], buf.seq[:0]
	for i, k := range keys {
		if i < second && i != start && count[k] == 1 {
			continue
		}
		p = append(p, pos[i])
		s = append(s, k)
	}
	buf.pos, buf.seq = p, s
	n := len(s)
	// The shortest period of s (the prefix function's): s repeats whole
	// when it divides n.
	pi := buf.prefix(n)
	for i := 1; i < n; i++ {
		j := int(pi[i-1])
		for j > 0 && s[i] != s[j] {
			j = int(pi[j-1])
		}
		if s[i] == s[j] {
			j++
		}
		pi[i] = int32(j)
	}
	per := n - int(pi[n-1])
	if n%per != 0 || n/per < minBoundaries {
		return nil, -1, false
	}
	out := make([]int, 0, n/per)
	for i := 0; i < n; i += per {
		out = append(out, p[i])
	}
	calls, ok := a.passCalls(d, s[:per])
	if !ok {
		return nil, -1, false
	}
	return out, s[0], calls
}

// stackPasses is passesOf for passes whose allocations repeat in stack
// but not in size: an evaluation over batches of different sizes makes
// each pass's allocations the size of its batch. The stacks of the
// allocations repeat exactly, pass after pass, from some pass to the
// last (whole: the last ends the sequence); what comes before them is
// the first pass, which holds the same stacks in the same order beside
// allocations made once (their stack and size seen nowhere else: a
// cuBLAS workspace the first matmul made). Of the periods that do so,
// the shortest.
func (a *LeakAnalyzer) stackPasses(d *deviceState, pos []int, keys []int32, count []int32) ([]int, int32, bool) {
	n := len(keys)
	buf := &d.passBuf
	st := slices.Grow(buf.seq[:0], n)[:n]
	buf.seq = st
	ones := 0 // allocations made once: a first pass holds at most these beside its own
	for i, k := range keys {
		st[i] = d.keys[k].stack
		if count[k] == 1 {
			ones++
		}
	}
	// The periods of the sequence's suffixes, from the prefix function
	// of the reversed sequence: the shortest period of a suffix does not
	// shrink as the suffix grows, so each period comes with the longest
	// suffix it holds (O(n), where trying every period would be O(n²)).
	pi := buf.prefix(n)
	for i := 1; i < n; i++ {
		j := int(pi[i-1])
		for j > 0 && st[n-1-i] != st[n-1-j] {
			j = int(pi[j-1])
		}
		if st[n-1-i] == st[n-1-j] {
			j++
		}
		pi[i] = int32(j)
	}
	cands := buf.cands[:0]
	defer func() { buf.cands = cands }()
	for l := 1; l <= n; l++ {
		per := l - int(pi[l-1])
		if len(cands) > 0 && cands[len(cands)-1].per == per {
			cands[len(cands)-1].length = l
		} else {
			cands = append(cands, passCand{per, l})
		}
	}
	for _, c := range cands {
		per, lo := c.per, n-c.length
		if per*(minBoundaries-1) > c.length {
			continue
		}
		// h: where the whole passes start (n - m*per, m passes, at or
		// after lo); st[:h] is the first pass. The first pass's extra
		// allocations can repeat the stacks of its own (a workspace made
		// by a layer): the most passes whose head is a first pass.
		m := (n - lo) / per
		h := n - m*per
		for h > 0 && m > 0 && h <= per+ones && !firstPass(st[:h], st[h:h+per], keys[:h], count) {
			m--
			h += per
		}
		if m == 0 || h > per+ones || h > 0 && !firstPass(st[:h], st[h:h+per], keys[:h], count) {
			continue
		}
		np := m
		if h > 0 {
			np++
		}
		if np < minBoundaries {
			continue
		}
		calls, ok := a.passCalls(d, keys[h:h+per])
		if !ok {
			continue
		}
		out := make([]int, 0, np)
		if h > 0 {
			out = append(out, pos[0])
		}
		for i := h; i < n; i += per {
			out = append(out, pos[i])
		}
		return out, keys[0], calls
	}
	return nil, -1, false
}

// firstPass reports whether head (the stacks of a first pass, hk their
// keys) holds the stacks of pass, in order, from its first, and beside
// them only allocations whose key occurs once (count).
func firstPass(head, pass []int32, hk []int32, count []int32) bool {
	if len(head) < len(pass) || head[0] != pass[0] {
		return false
	}
	j := 0
	for i, x := range head {
		if j < len(pass) && x == pass[j] {
			j++
			continue
		}
		if count[hk[i]] != 1 {
			return false
		}
	}
	return j == len(pass)
}

// passCalls checks the keys of one pass (ks): when every allocation is
// made in a module called within the outer one, the pass must call more
// than one module's forward (ok). calls reports whether it calls more
// than one outermost module from the line.
func (a *LeakAnalyzer) passCalls(d *deviceState, ks []int32) (calls, ok bool) {
	// A pass wholly inside modules called by the outer one must call more
	// than one module's forward.
	children := map[string]bool{}
	direct := false
	outer := a.callInfoOf(d.keys[ks[0]].stack).outer
	for _, k := range ks {
		c := a.callInfoOf(d.keys[k].stack)
		calls = calls || c.outer != outer
		if c.child == "" {
			direct = true
		} else {
			children[c.child] = true
		}
	}
	return calls, direct || len(children) >= 2
}

// freesInEach reports whether the log frees an allocation between each
// pass boundary and the next (ps: the boundaries' log positions, in
// order).
func freesInEach(d *deviceState, ps []int) bool {
	log := d.log.keyIterFrom(ps[0])
	i := ps[0]
	for _, end := range ps[1:] { // a pass: i up to end
		freed := false
		for ; i < end; i++ {
			freed = log.next() < 0 || freed
		}
		if !freed {
			return false
		}
	}
	return true
}
