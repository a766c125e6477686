package snapshot

import (
	"slices"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// callFrames are the frames of the stacks TestCallInfo and TestPassesOf
// build: an evaluation loop's line, module.py's call, and the forwards of
// the modules called.
var callFrames = []callsite.Frame{
	{Filename: "/home/u/eval.py", Line: 50, Name: "evaluate"},                                                               // 0
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1773, Name: "_wrapped_call_impl"}, // 1
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1784, Name: "_call_impl"},         // 2
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/container.py", Line: 250, Name: "forward"},          // 3
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", Line: 125, Name: "forward"},             // 4
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/activation.py", Line: 144, Name: "forward"},         // 5
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1343, Name: "cuda"},               // 6
	{Filename: "/opt/venv/lib/python3.12/site-packages/torch/autograd/graph.py", Line: 829, Name: "_engine_run_backward"},   // 7
	{Filename: "/opt/venv/lib/python3.12/site-packages/transformers/generation/utils.py", Line: 2500, Name: "_sample"},      // 8
	{Filename: "/home/u/model.py", Line: 30, Name: "forward"},                                                               // 9
	{Filename: "/home/u/model.py", Line: 12, Name: "forward"},                                                               // 10
}

// callStacks, innermost first: 0 a Linear in a Sequential called at
// eval.py:50; 1 a ReLU in it; 2 a Linear called directly; 3 .cuda(), a
// method of module.py but no call; 4 backward; 5 a call by a library
// (generate); 6 no module call; 7 a block of a user model (model.py:30
// calls each block, whose forward is model.py:12) called from eval.py:50;
// 8 stack 0 with forward hooks (module.py's inner between the call and the
// forward).
var callStacks = [][]int32{
	{4, 2, 1, 3, 2, 1, 0},
	{5, 2, 1, 3, 2, 1, 0},
	{4, 2, 1, 0},
	{6, 0},
	{4, 7, 0},
	{4, 2, 1, 8, 0},
	{0},
	{4, 2, 1, 10, 2, 1, 9, 2, 1, 0},
	{4, 11, 2, 1, 3, 11, 2, 1, 0},
}

// TestCallInfo: a stack can mark the calls of a module when it shows the
// call (module.py's _call_impl, not any method there), no backward, and
// the program's line outside it; the forward its outer module called is
// its child when it was made inside that.
func TestCallInfo(t *testing.T) {
	a := NewLeakAnalyzer(LeakOptions{})
	a.frames, a.stacks = callFrames, callStacks
	linear, relu := callFrames[4].Filename+"\x00forward", callFrames[5].Filename+"\x00forward"
	block := callFrames[10].Filename + "\x00forward"
	for id, want := range []struct {
		ok    bool
		child string
	}{{true, linear}, {true, relu}, {true, ""}, {false, ""}, {false, ""}, {false, ""}, {false, ""}, {true, block}, {true, linear}} {
		c := a.callInfoOf(int32(id))
		if (c.group >= 0) != want.ok || c.child != want.child {
			t.Errorf("stack %d: %+v, want marking %v, child %q", id, c, want.ok, want.child)
		}
		if c.group >= 0 && c.caller != 0 {
			t.Errorf("stack %d: caller frame %d, want 0 (eval.py:50)", id, c.caller)
		}
	}
	if a.callInfoOf(0).group != a.callInfoOf(1).group || a.callInfoOf(0).group != a.callInfoOf(2).group {
		t.Error("calls from one line are in different groups")
	}
}

// TestPassesOf: the passes of the calls from one line are the starts of
// the repeats of their (stack, size) sequence, which must repeat whole.
func TestPassesOf(t *testing.T) {
	a := NewLeakAnalyzer(LeakOptions{})
	a.frames, a.stacks = callFrames, callStacks
	d := &deviceState{keys: []allocKey{
		{0, 2 << 20},   // 0 Linear's output in a Sequential
		{1, 2 << 20},   // 1 ReLU's
		{0, 512 << 10}, // 2 the last Linear's
		{0, 32 << 20},  // 3 a cuBLAS workspace, made once
		{2, 8 << 20},   // 4 a Linear called directly: a temporary
		{2, 1 << 20},   // 5 and its output
		{7, 2 << 20},   // 6 a block's allocation
		{7, 4 << 20},   // 7 another
	}}
	seq := func(pass []int32, n int, extra ...int32) []int32 {
		var s []int32
		for i := 0; i < n; i++ {
			s = append(s, pass...)
			if i == 0 {
				s = append(s, extra...)
			}
		}
		return s
	}
	pos := func(n int) []int {
		p := make([]int, n)
		for i := range p {
			p[i] = 3 * i
		}
		return p
	}
	for _, c := range []struct {
		name string
		keys []int32
		want int // passes; 0 none
	}{
		// Sequential(Linear, ReLU, Linear), 6 passes.
		{"sequential", seq([]int32{0, 1, 2}, 6), 6},
		// The same with a workspace made in the first pass only.
		{"first pass's workspace", seq([]int32{0, 1, 2}, 6, 3), 6},
		// The workspace made before the first pass's first allocation.
		{"workspace first", append([]int32{3}, seq([]int32{0, 1, 2}, 6)...), 6},
		// One forward whose first layer is made once (an embedding) and
		// whose last is a head of its own size: the head breaks the
		// repetition.
		{"one forward after a one-off", append(append([]int32{3}, seq([]int32{0, 1}, 8)...), 2), 0},
		// A pass cut short at the end: not taken.
		{"last pass cut", append(seq([]int32{0, 1, 2}, 6), 0, 1), 0},
		// One forward of a model: layers between an embedding-like first
		// allocation and a head of its own size do not repeat whole.
		{"one forward", append(append([]int32{2}, seq([]int32{0, 1}, 8)...), 2), 0},
		// Too few passes.
		{"3 passes", seq([]int32{0, 1, 2}, 3), 0},
		// A Linear called directly, temporary and output, 5 passes.
		{"direct", seq([]int32{4, 5}, 5), 5},
		// Blocks of one class (a trace that lost its start): every
		// allocation is in the same child, so no pass.
		{"blocks", seq([]int32{6, 7}, 12), 0},
	} {
		got, _, _ := a.passesOf(d, pos(len(c.keys)), c.keys)
		if len(got) != c.want {
			t.Errorf("%s: %d passes %v, want %d", c.name, len(got), got, c.want)
		}
	}
	// The passes start at the first allocation of each: with the
	// workspace (index 3, position 9) left out, at indices 0, 4, 7, 10.
	got, first, _ := a.passesOf(d, pos(13), seq([]int32{0, 1, 2}, 4, 3))
	if want := []int{0, 12, 21, 30}; !slices.Equal(got, want) || first != 0 {
		t.Errorf("passes at %v (first key %d), want %v (key 0)", got, first, want)
	}
}

// TestBurstText: what a burst of allocations shows, and what not: a
// comprehension's own frame makes it one statement; without one, a loop
// too fast to tell from one statement.
func TestBurstText(t *testing.T) {
	for _, c := range []struct {
		b    Burst
		want string
	}{
		{Burst{Count: 24, Runs: 1, Size: 4 << 20, Bytes: 96 << 20, Timed: true, SpanUs: 180},
			"24 allocations of 4.0 MiB made back to back at one line within 180 µs, nothing else allocated or freed between them: one statement (a list comprehension) or a loop too fast to tell apart"},
		{Burst{Count: 20, Runs: 3, Bytes: 37 << 20},
			"20 allocations (37 MiB) made back to back in 3 runs at one line, nothing else allocated or freed between them: one statement (a list comprehension) or a loop too fast to tell apart"},
		{Burst{Count: 16, Runs: 1, Size: 1 << 20, Timed: true, SpanUs: 4700, Comprehension: "<genexpr>"},
			"16 allocations of 1.0 MiB made back to back at one line within 4.7 ms by a comprehension (its <genexpr> frame): one statement, not iterations"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// TestFreesInEach: passes are taken only when each frees an allocation
// between its boundary and the next. A log of three passes of
// "allocate key 0, allocate key 1, free the first" (boundaries at 0, 3, 6)
// frees in each; the same without the frees (one training-mode forward of
// a Sequential keeping every layer's output) frees in none; a free only
// in the first pass is not enough; a free in the last pass (after the last
// boundary) is not asked for.
func TestFreesInEach(t *testing.T) {
	logOf := func(keys ...int32) *deviceState {
		d := &deviceState{}
		for i, k := range keys {
			d.log.add(k, int64(i))
		}
		return d
	}
	for _, c := range []struct {
		name string
		keys []int32
		ps   []int
		want bool
	}{
		{"a free in each", []int32{0, 1, ^0, 0, 1, ^0, 0, 1, ^0}, []int{0, 3, 6}, true},
		{"no frees", []int32{0, 1, 0, 1, 0, 1}, []int{0, 2, 4}, false},
		{"the first pass only", []int32{0, 1, ^0, 0, 1, 0, 1}, []int{0, 3, 5}, false},
		{"none in the last", []int32{0, ^0, 0, ^0, 0, 1}, []int{0, 2, 4}, true},
	} {
		if got := freesInEach(logOf(c.keys...), c.ps); got != c.want {
			t.Errorf("%s: freesInEach = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLastGroups: lastGroups keeps the last positions of the two groups
// seen last, so that outside(g) is the last entry of any other group: a
// loop of group 0 whose program ran (group -1) at position 4 and again
// at 9, with group 1 at 7 and group 0 up to 12: outside(0) is 9,
// outside(-1) 12, outside(1) 12.
func TestLastGroups(t *testing.T) {
	l := lastGroups{{-2, -1}, {-2, -1}}
	if got := l.outside(0); got != -1 {
		t.Errorf("empty: outside(0) = %d, want -1", got)
	}
	for _, e := range []groupPos{{0, 0}, {0, 1}, {-1, 4}, {0, 5}, {1, 7}, {-1, 9}, {0, 10}, {0, 12}} {
		l.note(e.group, e.pos)
	}
	for _, c := range []struct {
		g    int32
		want int
	}{{0, 9}, {-1, 12}, {1, 12}} {
		if got := l.outside(c.g); got != c.want {
			t.Errorf("outside(%d) = %d, want %d", c.g, got, c.want)
		}
	}
}

// TestStackPasses: passes whose allocations repeat in stack but not in
// size (batches of different sizes: Linear, ReLU, Linear, each the size
// of its batch), the first pass with a workspace made once between its
// first two allocations, are found by their stacks: 5 passes, starting at
// the first allocation of each. A pass cut short at the end is not taken,
// nor a sequence whose first pass lacks a stack of the others'.
func TestStackPasses(t *testing.T) {
	a := NewLeakAnalyzer(LeakOptions{})
	a.frames, a.stacks = callFrames, callStacks
	d := &deviceState{}
	var keys []int32
	key := func(stack int32, size int64) int32 { return d.key(allocKey{stack: stack, size: size}) }
	pass := func(rows int64, first bool) {
		keys = append(keys, key(0, rows<<12))
		if first {
			keys = append(keys, key(0, 32<<20))
		}
		keys = append(keys, key(1, rows<<12), key(0, rows<<12))
	}
	for i, rows := range []int64{64, 16, 128, 40, 96} {
		pass(rows, i == 0)
	}
	pos := make([]int, len(keys))
	for i := range pos {
		pos[i] = 3 * i
	}
	got, _, _ := a.passesOf(d, pos, keys)
	if want := []int{0, 12, 21, 30, 39}; !slices.Equal(got, want) {
		t.Errorf("passes at %v, want %v", got, want)
	}
	cut := append(slices.Clone(keys), key(0, 8<<12))
	if got, _, _ := a.passesOf(d, append(pos, 48), cut); got != nil {
		t.Errorf("a pass cut short: passes at %v, want none", got)
	}
	lack := append(slices.Clone(keys[:2]), keys[3:]...) // the first ReLU's left out
	if got, _, _ := a.passesOf(d, pos[1:], lack); got != nil {
		t.Errorf("a first pass without the ReLU: passes at %v, want none", got)
	}
}
