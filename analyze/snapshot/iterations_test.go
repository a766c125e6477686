package snapshot

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"regexp"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// curve builds boundary values f(i) for n iteration starts, then the end.
func curve(n int, f func(i int) int64, end int64) []int64 {
	v := make([]int64, n+1)
	for i := 0; i < n; i++ {
		v[i] = f(i)
	}
	v[n] = end
	return v
}

// TestJudge: the growth rule on the curves the issue describes. Values
// are a site's live bytes at each iteration start, then at the end.
func TestJudge(t *testing.T) {
	const mib = 1 << 20
	rng := rand.New(rand.NewSource(1))
	noisy := make([]int64, 200)
	for i := range noisy {
		noisy[i] = 40*mib + int64(rng.Intn(8))*mib // a full cache whose entries vary in size
	}
	cases := []struct {
		name  string
		v     []int64
		grows bool
	}{
		// A tensor kept every 5th of 200 steps.
		{"leak every 5 steps", curve(200, func(i int) int64 { return int64(i/5) * 2 * mib }, 80*mib), true},
		// 1 MiB every step beside a 33 MiB workspace made in step 1.
		{"leak beside a first-step workspace", curve(30, func(i int) int64 { return min(int64(i), 1)*33*mib + int64(i)*mib }, 62*mib), true},
		// An LRU cache of 40 filled in the first 40 of 200 steps.
		{"bounded cache", curve(200, func(i int) int64 { return int64(min(i, 40)) * mib }, 40*mib), false},
		// The same cache with entries of varying size: noise around a plateau.
		{"noisy plateau", curve(200, func(i int) int64 {
			if i < 40 {
				return int64(i) * mib
			}
			return noisy[i]
		}, noisy[199]), false},
		// Adam state and gradients made in the first step.
		{"first-step growth", curve(60, func(i int) int64 { return min(int64(i), 1) * 64 * mib }, 64*mib), false},
		// Filled in a loop, then half freed before the snapshot.
		{"released at the end", curve(100, func(i int) int64 { return int64(i) * 3 * mib }, 150*mib), false},
		// The last step's temporaries gone at the end: still a leak.
		{"leak, last step's output freed", curve(50, func(i int) int64 { return int64(i+1) * mib }, 49*mib), true},
		// Fewer than 4 iteration starts.
		{"3 steps", curve(3, func(i int) int64 { return int64(i) * mib }, 3*mib), false},
		// Ups and downs of one tensor per step that adds up to nothing.
		{"random walk", curve(200, func(i int) int64 { return int64(rng.Intn(20)) * mib }, 10*mib), false},
		// A leak that starts halfway.
		{"leak from the middle", curve(100, func(i int) int64 { return int64(max(i-50, 0)) * mib }, 50*mib), true},
		// Two rises only.
		{"two steps up", curve(100, func(i int) int64 { return int64(i/40) * mib }, 2*mib), false},
	}
	for _, c := range cases {
		if got := judge(c.v); got.grows != c.grows {
			t.Errorf("%s: grows = %v (%+v), want %v", c.name, got.grows, got, c.grows)
		}
	}
	// The plateau of the bounded cache starts at iteration start 40.
	if tr := judge(cases[2].v); tr.plateau != 40 || tr.rises != 40 {
		t.Errorf("bounded cache: %+v", tr)
	}
}

// TestRegular: allocations once per step mark iterations; one per
// parameter, clustered within each step, do not; nor does a loop that
// covers a small part of the trace.
func TestRegular(t *testing.T) {
	var steps, params []int
	for s := 0; s < 50; s++ {
		steps = append(steps, 10+s*100+s%3) // a few entries more or less each step
		for p := 0; p < 8; p++ {
			params = append(params, 10+s*100+80+p)
		}
	}
	if !regular(steps, 5000) {
		t.Error("one allocation per step not evenly spaced")
	}
	if regular(params, 5000) {
		t.Error("clustered per-parameter allocations taken as iterations")
	}
	if regular(steps[:5], 5000) {
		t.Error("a loop over a tenth of the trace taken as its iterations")
	}
}

// addStack adds frames to a's frames and a stack of them (innermost
// first) to its stacks, as a snapshot's frames and stacks tables would,
// and returns the stack's id.
func addStack(a *LeakAnalyzer, frames []callsite.Frame) int32 {
	ids := make([]int32, len(frames))
	for i, f := range frames {
		ids[i] = int32(len(a.frames))
		a.frames = append(a.frames, f)
	}
	a.stacks = append(a.stacks, ids)
	return int32(len(a.stacks) - 1)
}

// TestSiteNames: code torch.compile generated is grouped under the user
// frame that called it; backward's allocations are "autograd backward"
// unless a workspace names them; library frames do not split a site.
func TestSiteNames(t *testing.T) {
	a := NewLeakAnalyzer(LeakOptions{})
	user := callsite.Frame{Filename: "/home/u/train.py", Line: 30, Name: "step"}
	compiled := []callsite.Frame{
		{Filename: "/tmp/torchinductor_u/ab/cab.py", Line: 88, Name: "call"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py", Line: 600, Name: "_fn"},
		user,
	}
	if st := a.userStack(addStack(a, compiled)); len(st) != 1 || st[0] != user {
		t.Errorf("compiled code: %+v", st)
	}
	backward := []callsite.Frame{
		{Filename: "", Line: 0, Name: "at::native::empty_strided_cuda(c10::ArrayRef<long>)"},
		{Filename: "", Line: 0, Name: "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"},
		{Filename: "thread.cc", Line: 82, Name: "execute_native_thread_routine"},
		{Filename: "??", Line: 0, Name: "clone"},
	}
	if st := a.userStack(addStack(a, backward)); len(st) != 1 || st[0] != autogradBackward {
		t.Errorf("backward: %+v", st)
	}
	ws := append([]callsite.Frame{{Filename: "", Line: 0, Name: "at::cuda::getNewWorkspace()"}}, backward...)
	if st := a.userStack(addStack(a, ws)); len(st) == 0 || st[0].Name != "at::cuda::getNewWorkspace()" {
		t.Errorf("workspace: %+v", st)
	}
	lib := func(line int64) []callsite.Frame {
		return []callsite.Frame{{Filename: "/opt/venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py", Line: line, Name: "forward"}, user}
	}
	if siteKey(lib(100)) != siteKey(lib(200)) {
		t.Error("two library paths from one user line are two sites")
	}
}

// TestAnchorable: allocations inside an nn.Module call or made by backward
// never mark iterations; the program's step-level code does, and a
// library's loop (generate) only when the program shows none.
func TestAnchorable(t *testing.T) {
	a := NewLeakAnalyzer(LeakOptions{})
	a.frames = []callsite.Frame{
		{Filename: "/home/u/train.py", Line: 20, Name: "train"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1762, Name: "_call_impl"},
		{Filename: "/home/u/model.py", Line: 8, Name: "forward"},
		{Filename: `C:\venv\Lib\site-packages\torch\nn\modules\module.py`, Line: 1762, Name: "_call_impl"},
		{Filename: "", Line: 0, Name: "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/transformers/generation/utils.py", Line: 2500, Name: "_sample"},
		{Filename: "/home/u/rmsnorm.py", Line: 22, Name: "forward"},
		{Filename: "/home/u/block.py", Line: 26, Name: "forward"},
	}
	// Stacks 5 and 6 have no frame of module.py's call (as a field
	// snapshot recorded them): a forward within a forward is a layer of
	// one model call (5); the model's own forward, called from the loop, may
	// mark steps (6).
	a.stacks = [][]int32{{0}, {2, 1, 0}, {2, 3, 0}, {4}, {5, 0}, {6, 7, 2, 0}, {2, 0}}
	for id, want := range []int8{anchorOwn, anchorNo, anchorNo, anchorNo, anchorLibrary, anchorNo, anchorOwn} {
		if got := a.anchorClass(int32(id)); got != want {
			t.Errorf("stack %d: anchor class %d, want %d", id, got, want)
		}
	}
}

// TestIterationsInBursts: a leak every step is found when its steps are
// interleaved with long evaluations (every 10th step runs 60 allocations
// of its own), and when the only step-level allocations come in bursts
// (8 per optimizer step, one per parameter): the first of each burst
// starts an iteration.
func TestIterationsInBursts(t *testing.T) {
	for _, c := range []struct {
		name        string
		perStep     int // step-level allocations (stack 1) per step
		evalEvery   int
		wantKept    int
		wantIterMin int
	}{
		{"long evaluations", 1, 10, 100, 10},
		{"one per parameter", 8, 0, 100, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			a := NewLeakAnalyzer(LeakOptions{})
			framesAndStacks(t, mem, a)
			var evs []ev
			addr := uint64(0x10000)
			next := func() uint64 { addr += 0x1000; return addr }
			for step := 0; step < 100; step++ {
				for p := 0; p < c.perStep; p++ {
					x := next()
					evs = append(evs, ev{"alloc", x, 4096, 0, 1}, ev{"free_requested", x, 4096, 0, 1}, ev{"free_completed", x, 4096, 0, 1})
				}
				for i := 0; i < 20; i++ { // the step's own work, without a stack
					x := next()
					evs = append(evs, ev{"alloc", x, 512, 0, -1}, ev{"free_completed", x, 512, 0, -1})
				}
				evs = append(evs, ev{"alloc", next(), 1024, 0, 0}) // kept every step
				if c.evalEvery > 0 && step%c.evalEvery == c.evalEvery-1 {
					for i := 0; i < 600; i++ {
						x := next()
						evs = append(evs, ev{"alloc", x, 512, 0, -1}, ev{"free_completed", x, 512, 0, -1})
					}
				}
			}
			rec := eventsBatch(t, mem, 0, evs)
			if err := a.Add(pytorch.TableEvents, rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			res := a.Finalize()
			if res.Devices[0].Iterations < c.wantIterMin {
				t.Errorf("%d iterations, want at least %d", res.Devices[0].Iterations, c.wantIterMin)
			}
			l := sitesOf(res, callsite.Leak, 0)
			if len(l) != 1 || l[0].Count != c.wantKept || l[0].Frame.Name != "leaky" {
				t.Fatalf("leaks %+v (warnings %q)", l, res.Warnings)
			}
		})
	}
}

// TestRegularUnevenSteps: a marker once per step is regular when steps
// vary in length (2 to 16 layers at random, or growing 5x through the run,
// or 8 times longer in a first phase with an extra loop); the allocations
// of a loop clustered at the end of each step are not.
func TestRegularUnevenSteps(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var random, growing, phase, cluster []int
	p, q, r, c := 0, 0, 0, 0
	for s := 0; s < 100; s++ {
		random = append(random, p)
		p += 4 + 3*(2+rng.Intn(15))
		growing = append(growing, q)
		q += 10 + s/2
		phase = append(phase, r)
		r += 18
		if s < 46 {
			r += 120
		}
		for k := 0; k < 10; k++ {
			cluster = append(cluster, c+100+k*3)
		}
		c += 140
	}
	for name, ps := range map[string][]int{"random": random, "growing": growing, "phase": phase} {
		if !regular(ps, ps[len(ps)-1]+10) {
			t.Errorf("%s: once per step not regular", name)
		}
	}
	if regular(cluster, c) {
		t.Error("a loop clustered at each step's end taken as regular")
	}
}

// TestFilled: a loop of temporaries inside the step (40 per step, nothing
// else between them) has the step's work in 1 gap of 40; the step's marker
// in every gap, and so do the starts of the inner loop's bursts. With every
// allocation counted as work (a trace without module calls), the inner
// loop's own allocations do not fill its gaps.
func TestFilled(t *testing.T) {
	var steps, inner []int
	work := make([]int32, 1)
	pos := 0
	add := func(isWork bool) {
		w := work[len(work)-1]
		if isWork {
			w++
		}
		work = append(work, w)
		pos++
	}
	for s := 0; s < 50; s++ {
		steps = append(steps, pos)
		add(false)
		for l := 0; l < 4; l++ { // layers: work
			add(true)
		}
		for k := 0; k < 40; k++ {
			inner = append(inner, pos)
			add(false)
		}
	}
	if !filled(steps, steps, denseWork(work), false) {
		t.Error("the step's marker: gaps not filled")
	}
	if filled(inner, inner, denseWork(work), false) {
		t.Error("an inner loop's gaps taken as filled")
	}
	if bs := burstStarts(inner); len(bs) != 50 || !filled(bs, inner, denseWork(work), false) {
		t.Errorf("the inner loop's bursts: %d starts", len(bs))
	}
	all := make([]int32, len(work))
	for i := range all {
		all[i] = int32(i)
	}
	if filled(inner, inner, denseWork(all), true) || !filled(steps, steps, denseWork(all), true) {
		t.Error("every allocation as work: the inner loop filled, or the step not")
	}
}

// denseWork is a running count at every log position.
type denseWork []int32

func (w denseWork) at(p int) int32 { return w[p] }

// TestOccCounts: the running count kept at a stack's occurrences answers
// what the dense count does at each occurrence and the position after it.
func TestOccCounts(t *testing.T) {
	// Positions 0..29: every third is the anchor's; of the others, those
	// at even positions are work.
	var dense, denseAll []int32
	var pos []int
	var n, nAll []int32
	var w, all int32
	for i := 0; i < 30; i++ {
		dense, denseAll = append(dense, w), append(denseAll, all)
		if i%3 == 0 {
			pos, n, nAll = append(pos, i), append(n, w), append(nAll, all)
		} else if i%2 == 0 {
			w++
		}
		all++
	}
	dense, denseAll = append(dense, w), append(denseAll, all)
	o, oAll := occCounts{pos: pos, n: n}, occCounts{pos: pos, n: nAll, own: 1}
	for _, p := range pos {
		for _, q := range []int{p, p + 1} {
			if o.at(q) != dense[q] || oAll.at(q) != denseAll[q] {
				t.Errorf("at %d: %d and %d, want %d and %d", q, o.at(q), oAll.at(q), dense[q], denseAll[q])
			}
		}
	}
}

// TestVerdictFloor: a sawtooth whose minima rise 1 MiB per tooth (cleared
// every 10 iterations but for one block) grows by its floor; a plain
// sawtooth, a cache that filled up by iteration 40, and a flat curve with
// random noise (whose last few suffix minima rise) do not.
func TestVerdictFloor(t *testing.T) {
	const mib = 1 << 20
	rng := rand.New(rand.NewSource(3))
	noise := curve(100, func(int) int64 { return int64(rng.Intn(10)) * mib }, 5*mib)
	cases := []struct {
		name  string
		v     []int64
		grows bool
	}{
		{"rising floor", curve(100, func(i int) int64 { return int64(i/10+i%10) * mib }, 10*mib), true},
		{"sawtooth", curve(100, func(i int) int64 { return int64(i%10) * mib }, 0), false},
		{"filled cache", curve(100, func(i int) int64 { return int64(min(i, 40)) * mib }, 40*mib), false},
		{"noise", noise, false},
	}
	for _, c := range cases {
		if got := verdict(c.v); got.grows != c.grows || got.grows && !got.floor {
			t.Errorf("%s: %+v, want grows %v", c.name, got, c.grows)
		}
	}
	if judge(cases[0].v).grows {
		t.Error("the rising floor grows by judge alone: the case tests nothing")
	}
}

// TestBlockSize: PyTorch's round_size.
func TestBlockSize(t *testing.T) {
	for in, want := range map[int64]int64{1: 512, 4: 512, 512: 512, 513: 1024, 1 << 20: 1 << 20, 0: 0} {
		if got := blockSize(in); got != want {
			t.Errorf("blockSize(%d) = %d, want %d", in, got, want)
		}
	}
}

// TestReplayLog: the varint log gives back every key and time it was
// given, across chunks, with times going back, untimed entries, keys
// negative (frees) and large, and times far apart; timeAt(i) is t0 plus the
// float32 offset, as the 8-byte entries kept it.
func TestReplayLog(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var l replayLog
	type entry struct {
		key int32
		t   int64
	}
	var want []entry
	t0 := int64(0)
	now := int64(1_764_000_000_000_000)
	for i := 0; i < 3*logChunk+17; i++ {
		k := int32(rng.Intn(1 << 20))
		switch rng.Intn(4) {
		case 0:
			k = ^k
		case 1:
			k %= 64 // one byte
		case 2:
			k = []int32{-1 << 31, 1<<31 - 1, 63, -64, 64, -65, 8191, -8192, 8192}[rng.Intn(9)]
		}
		var tu int64
		switch rng.Intn(10) {
		case 0: // untimed
		case 1:
			now -= int64(rng.Intn(1000)) // back
			tu = now
		case 2:
			now += rng.Int63n(1 << 40) // far
			tu = now
		default:
			now += int64(rng.Intn(100))
			tu = now
		}
		if tu != 0 && t0 == 0 {
			t0 = tu
		}
		l.add(k, tu)
		want = append(want, entry{k, tu})
	}
	if l.n != len(want) {
		t.Fatalf("n %d, want %d", l.n, len(want))
	}
	clockOf := func(tu int64) int64 {
		var dt float32
		if tu != 0 {
			dt = float32(tu - t0)
		}
		return t0 + int64(dt)
	}
	it, every := l.keyIter(), l.timeReader()
	for i, w := range want {
		if k := it.next(); k != w.key {
			t.Fatalf("entry %d: key %d, want %d", i, k, w.key)
		}
		if got := l.timeAt(every, i); got != clockOf(w.t) {
			t.Fatalf("timeAt(%d) = %d, want %d", i, got, clockOf(w.t))
		}
		if i%97 == 0 || i%logChunk == logChunk-1 {
			if got := l.timeAt(l.timeReader(), i); got != clockOf(w.t) {
				t.Fatalf("timeAt(%d) read afresh = %d, want %d", i, got, clockOf(w.t))
			}
		}
	}
	for _, i := range []int{0, 1, logChunk - 1, logChunk, logChunk + 1, 2*logChunk + 5, len(want) - 1, len(want)} {
		it := l.keyIterFrom(i)
		for j := i; j < min(i+3, len(want)); j++ {
			if k := it.next(); k != want[j].key {
				t.Fatalf("from %d: entry %d: key %d, want %d", i, j, k, want[j].key)
			}
		}
		// The rest, a chunk at a time.
		j := min(i+3, len(want))
		for ks := it.nextKeys(); ks != nil; ks = it.nextKeys() {
			for _, k := range ks {
				if j >= len(want) || k != want[j].key {
					t.Fatalf("from %d: nextKeys gives entry %d as %d", i, j, k)
				}
				j++
			}
		}
		if j != len(want) {
			t.Fatalf("from %d: nextKeys stops at entry %d of %d", i, j, len(want))
		}
	}
	// Ascending positions read on with one reader, as findIterations
	// reads its boundaries' times.
	at := l.timeReader()
	for i := 3; i < len(want); i += 1 + rng.Intn(3*logChunk/4) {
		if got := l.timeAt(at, i); got != clockOf(want[i].t) {
			t.Fatalf("timeAt(%d) read on = %d, want %d", i, got, clockOf(want[i].t))
		}
	}
	if bytesPer := float64(len(l.keys[0])+len(l.times[0])) / logChunk; bytesPer > 12 {
		t.Errorf("%.1f bytes an entry for keys below 2^20 and times mostly close", bytesPer)
	}
}

// TestZigzag: appendZigzag writes what binary.AppendVarint writes, and
// zigzagAt reads it back, for values of every length.
func TestZigzag(t *testing.T) {
	vals := []int64{0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, -8193, 1 << 20, -1 << 40, 1<<63 - 1, -1 << 63}
	for s := 0; s < 63; s++ {
		vals = append(vals, 1<<s, -(1 << s), 1<<s-1)
	}
	for _, v := range vals {
		got, want := appendZigzag([]byte{9}, v), binary.AppendVarint([]byte{9}, v)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendZigzag(%d) = %x, want %x", v, got, want)
		}
		if back, n := zigzagAt(append(got, 0x7f), 1); back != v || n != len(got) {
			t.Fatalf("zigzagAt(%x, 1) = %d, %d, want %d, %d", got, back, n, v, len(got))
		}
	}
}

// TestFrameFacts: each fact frameFacts caches is what the predicate it
// stands for says of the frame, asked in any order of groups, and asked
// twice.
func TestFrameFacts(t *testing.T) {
	frames := []callsite.Frame{
		{Filename: "/home/u/train.py", Line: 30, Name: "step"},
		{Filename: "/home/u/model.py", Line: 12, Name: "forward"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Line: 1736, Name: "_call_impl"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/transformers/trainer.py", Line: 2200, Name: "training_step"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/torch/autograd/__init__.py", Line: 200, Name: "backward"},
		{Name: "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"},
		{Name: "torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)"},
		{Filename: "thread.cc", Line: 82, Name: "execute_native_thread_routine"},
		{Name: "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)"},
		{Name: "at::cuda::getNewWorkspace()"},
		{Filename: "??", Name: "_PyEval_EvalFrameDefault"},
		{Filename: "/tmp/torchinductor_u/ab/cab.py", Line: 88, Name: "call"},
		{Name: "torch::autograd::EngineX"}, // contains Engine: a substring test says autograd too
	}
	for _, order := range [][]uint16{
		{factsAnchor, factsHidden, factsUser, factsMachinery},
		{factsMachinery, factsUser, factsHidden, factsAnchor},
	} {
		a := NewLeakAnalyzer(LeakOptions{})
		id := addStack(a, frames)
		for range 2 {
			for _, g := range order {
				for i, f := range frames {
					ff := a.frameFacts(a.stacks[id][i], g)
					check := func(name string, bit uint16, want bool) {
						if got := ff&bit != 0; got != want {
							t.Errorf("frame %d (%s): %s = %v, want %v", i, f.Name, name, got, want)
						}
					}
					switch g {
					case factsAnchor:
						check("forward", factForward, f.Name == "forward" && callsite.IsPython(f))
						check("module or backward", factModuleOrBackward, callsite.IsModuleOrBackward(f))
						check("autograd", factAutograd, regexp.MustCompile(`torch::autograd::(Engine|python::PythonEngine)|execute_native_thread_routine`).MatchString(f.Name))
					case factsHidden:
						check("hidden", factHidden, a.opt.Filter.Hidden(f))
					case factsUser:
						check("user python", factUserPython, callsite.IsPython(f) && !a.opt.Filter.Hidden(f) && callsite.ClassOf(f) == callsite.User)
						check("library", factLibrary, callsite.IsLibrary(f))
					case factsMachinery:
						check("machinery", factMachinery, callsite.IsMachinery(f))
					}
				}
			}
		}
	}
}

// TestBreakStarts: a step written on one line allocates many times at
// uneven spacing (gaps 1 to 4 within a step, about 30 between steps, as
// testdata/pytorch/snap/varlen_oneline.pickle.gz's line 9): twice the
// median gap (1) splits each step into uneven bursts, but the gaps between
// steps stand apart by a break, and the bursts above it are the steps.
// One pass of evenly spaced layers has no break; a long evaluation every
// 10 steps makes a higher break, passed over for the steps' own.
func TestBreakStarts(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	within := []int{4, 1, 2, 2, 1, 1, 1}
	var oneLine, steps []int
	p := 0
	for s := 0; s < 120; s++ {
		steps = append(steps, p)
		oneLine = append(oneLine, p)
		for _, g := range within {
			p += g
			oneLine = append(oneLine, p)
		}
		p += 28 + rng.Intn(9) // the step's compute, longer with longer sequences
		if s%10 == 9 {
			p += 200 // an evaluation
		}
	}
	if burstStarts(oneLine) != nil && regular(burstStarts(oneLine), p) {
		t.Fatal("the test's steps split regularly at twice the median gap: it tests nothing")
	}
	got := breakStarts(oneLine, p)
	if len(got) != len(steps) {
		t.Fatalf("%d bursts, want %d", len(got), len(steps))
	}
	for i := range got {
		if got[i] != steps[i] {
			t.Fatalf("burst %d starts at %d, want %d", i, got[i], steps[i])
		}
	}
	var layers []int
	for l := 0; l < 48; l++ {
		layers = append(layers, 10+l*25+rng.Intn(3))
	}
	if bs := breakStarts(layers, layers[len(layers)-1]+10); bs != nil {
		t.Errorf("one pass of layers split into %d bursts", len(bs))
	}
}

// namedStacks adds one frame and a one-frame stack per name (stack i is
// names[i], at /u/app.py line 10+i), as framesAndStacks does for two.
func namedStacks(t *testing.T, mem memory.Allocator, a *LeakAnalyzer, names ...string) {
	fb := array.NewRecordBuilder(mem, pytorch.FramesSchema)
	defer fb.Release()
	sb := array.NewRecordBuilder(mem, pytorch.StacksSchema)
	defer sb.Release()
	for i, name := range names {
		fb.Field(0).(*array.Int32Builder).Append(int32(i))
		fb.Field(1).(*array.StringBuilder).Append("/u/app.py")
		fb.Field(2).(*array.Int64Builder).Append(int64(10 + i))
		fb.Field(3).(*array.StringBuilder).Append(name)
		sb.Field(0).(*array.Int32Builder).Append(int32(i))
		sb.Field(1).(*array.Int32Builder).Append(0)
		sb.Field(2).(*array.Int32Builder).Append(int32(i))
	}
	for _, x := range []struct {
		t pytorch.Table
		b *array.RecordBuilder
	}{{pytorch.TableFrames, fb}, {pytorch.TableStacks, sb}} {
		rec := x.b.NewRecordBatch()
		if err := a.Add(x.t, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
}

// analyzeEvents runs a LeakAnalyzer with stacks names over evs.
func analyzeEvents(t *testing.T, names []string, evs []ev) *LeakResult {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := NewLeakAnalyzer(LeakOptions{})
	namedStacks(t, mem, a, names...)
	rec := eventsBatch(t, mem, 0, evs)
	if err := a.Add(pytorch.TableEvents, rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	return a.Finalize()
}

// TestInnerLoopAfterSetup: the only allocations made inside module calls
// (no stack here) are the model's, moved to the GPU before the loop; the
// loop (s33's stp.pickle) allocates x, runs 8 matmuls whose outputs are
// dropped at once (an inner loop with nothing between its allocations),
// makes y, and keeps one tensor a step. The step's compute fills no
// marker's gaps, so any other allocation counts: x marks the 40 steps,
// not the 320 matmuls, and the kept tensor leaks across them.
func TestInnerLoopAfterSetup(t *testing.T) {
	var evs []ev
	addr := uint64(0x10000)
	next := func() uint64 { addr += 0x1000; return addr }
	for i := 0; i < 4; i++ { // model.to("cuda")
		evs = append(evs, ev{"alloc", next(), 4 << 20, 0, -1})
	}
	for step := 0; step < 40; step++ {
		x := next()
		evs = append(evs, ev{"alloc", x, 4 << 20, 0, 1})
		for m := 0; m < 8; m++ {
			w := next()
			evs = append(evs, ev{"alloc", w, 64 << 20, 0, 2}, ev{"free_requested", w, 64 << 20, 0, 2}, ev{"free_completed", w, 64 << 20, 0, 2})
		}
		y := next()
		evs = append(evs, ev{"alloc", y, 4 << 20, 0, 3}, ev{"alloc", next(), 1 << 20, 0, 0})
		evs = append(evs, ev{"free_completed", y, 4 << 20, 0, 3}, ev{"free_completed", x, 4 << 20, 0, 1})
	}
	res := analyzeEvents(t, []string{"leaky", "loadx", "matmul", "double"}, evs)
	if d := res.Devices[0]; d.Iterations != 40 || d.IterationSite.Name != "loadx" {
		t.Errorf("%d iterations at %+v, want 40 at loadx", d.Iterations, d.IterationSite)
	}
	if l := sitesOf(res, callsite.Leak, 0); len(l) != 1 || l[0].Count != 40 || l[0].Frame.Name != "leaky" {
		t.Errorf("leaks %+v (warnings %q)", l, res.Warnings)
	}
}

// TestBurstIsOneOperation: buffers made in one statement, back to back
// with nothing else between them (`A = [torch.empty(n) for _ in
// range(16)]`, half of them kept; s33's fbm.pickle), after a model moved
// to the GPU, are one operation: the trace shows no repeating step, and
// what is kept is retained, not a leak. A loop that frees its tensor each
// pass (the free comes between) still marks its passes.
func TestBurstIsOneOperation(t *testing.T) {
	var evs []ev
	addr := uint64(0x10000)
	next := func() uint64 { addr += 0x1000; return addr }
	for i := 0; i < 4; i++ {
		evs = append(evs, ev{"alloc", next(), 4 << 20, 0, -1})
	}
	big := next()
	evs = append(evs, ev{"alloc", big, 512 << 20, 0, 0}, ev{"free_completed", big, 512 << 20, 0, 0})
	var made []uint64
	for i := 0; i < 16; i++ {
		made = append(made, next())
		evs = append(evs, ev{"alloc", made[i], 32 << 20, 0, 0})
	}
	for i := 1; i < 16; i += 2 {
		evs = append(evs, ev{"free_completed", made[i], 32 << 20, 0, 0})
	}
	evs = append(evs, ev{"alloc", next(), 128 << 20, 0, 0})
	res := analyzeEvents(t, []string{"E"}, evs)
	if d := res.Devices[0]; d.Iterations != 0 {
		t.Errorf("%d iterations at %+v, want none", d.Iterations, d.IterationSite)
	}
	if l := sitesOf(res, callsite.Leak, 0); len(l) != 0 {
		t.Errorf("leaks %+v", l)
	}
	if r := sitesOf(res, callsite.Retained, 0); len(r) == 0 || r[0].Frame.Name != "E" {
		t.Errorf("retained %+v", r)
	}

	// The same model, then 60 passes that each make an input, copy it
	// into a CUDA graph's static input and drop it (s33's cgc.pickle:
	// the replay allocates nothing).
	evs = evs[:4]
	for step := 0; step < 60; step++ {
		x := next()
		evs = append(evs, ev{"alloc", x, 1 << 20, 0, 0}, ev{"free_completed", x, 1 << 20, 0, 0})
	}
	res = analyzeEvents(t, []string{"refill"}, evs)
	if d := res.Devices[0]; d.Iterations != 60 || d.IterationSite.Name != "refill" {
		t.Errorf("%d iterations at %+v, want 60 at refill", d.Iterations, d.IterationSite)
	}
}

// TestRunStarts: the first of each run of consecutive positions.
func TestRunStarts(t *testing.T) {
	for _, c := range []struct{ in, want []int }{
		{[]int{1, 3, 5}, []int{1, 3, 5}},
		{[]int{1, 2, 3, 7, 8, 10}, []int{1, 7, 10}},
		{[]int{4, 5}, []int{4}},
	} {
		if got := runStarts(c.in, nil); !slices.Equal(got, c.want) {
			t.Errorf("runStarts(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestRunStartsTimed: with times, positions back to back stay one run
// only while they follow within burstGapUs: a burst 20 µs apart, then
// three 50 ms apart (a loop doing other work between).
func TestRunStartsTimed(t *testing.T) {
	var l replayLog
	for _, us := range []int64{1_000_000, 1_000_020, 1_000_040, 1_050_040, 1_100_040, 1_150_040} {
		l.add(0, us)
	}
	if got, want := runStarts([]int{0, 1, 2, 3, 4, 5}, &l), []int{0, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("runStarts = %v, want %v", got, want)
	}
}

// TestLoopAfterALongerSetup: a run warms a model up and captures a CUDA
// graph (200 allocations made and freed, without frames: s36b's
// graph_step_clean.pickle.gz), then replays it 60 times, each pass making
// an input, copying it in and dropping it, and keeping a 512 B result at
// "keep". The passes are 180 of the trace's 580 entries: too little of the
// whole trace to mark iterations, but they run to its end: they are the
// iterations, and the kept results leak across them (60 blocks). The same
// 60 passes followed by as much work again (a phase in the middle of the
// run) mark nothing: no leak is claimed from a loop that is not the run's
// steps.
func TestLoopAfterALongerSetup(t *testing.T) {
	for _, after := range []bool{false, true} {
		var evs []ev
		addr := uint64(0x10000)
		next := func() uint64 { addr += 0x100000; return addr }
		setup := func() {
			for i := 0; i < 200; i++ {
				a := next()
				evs = append(evs, ev{"alloc", a, 1 << 20, 0, -1}, ev{"free_completed", a, 1 << 20, 0, -1})
			}
		}
		setup()
		for step := 0; step < 60; step++ {
			x := next()
			evs = append(evs, ev{"alloc", x, 4096, 0, 1}, ev{"free_completed", x, 4096, 0, 1})
			evs = append(evs, ev{"alloc", next(), 512, 0, 0})
		}
		if after {
			setup()
		}
		res := analyzeEvents(t, []string{"keep", "batch"}, evs)
		l := sitesOf(res, callsite.Leak, 0)
		if d := res.Devices[0]; after {
			if d.Iterations != 0 || len(l) != 0 {
				t.Errorf("a phase in the middle: %d iterations at %+v, leaks %+v; want none", d.Iterations, d.IterationSite, l)
			}
			continue
		} else if d.Iterations != 60 || d.IterationSite.Name != "batch" {
			t.Errorf("%d iterations at %+v, want 60 at batch", d.Iterations, d.IterationSite)
		}
		if len(l) != 1 || l[0].Count != 60 || l[0].Frame.Name != "keep" {
			t.Errorf("leaks %+v, want 60 blocks at keep", l)
		}
	}
}

// TestLoopBeforeATeardown: a setup of 100 allocations made by compute (no
// stack, as backward's), then 30 passes each making an input (batch,
// freed) and keeping a 512 B result (keep), then six statements of the
// program at six lines, each making 50 buffers back to back and freeing
// them (a teardown): the passes are 90 of the trace's 790 entries, and
// the teardown, longer than the loop, follows them. It does no compute and leaves nothing held, so the loop is the
// run's last work: its 30 passes are the iterations and keep leaks across
// them (30 blocks). Not so when what follows computes (allocations by
// backward) or leaves memory held (4 buffers of the last statement kept):
// a phase in the middle, no iterations. Nor when the teardown frees the
// kept results: the loop then leaves nothing held either, and cannot be
// told from the teardown; no iterations, and nothing leaks.
func TestLoopBeforeATeardown(t *testing.T) {
	for _, c := range []string{"teardown", "compute after", "held after", "frees the kept"} {
		var evs []ev
		addr := uint64(0x10000)
		next := func() uint64 { addr += 0x100000; return addr }
		for i := 0; i < 50; i++ {
			a := next()
			evs = append(evs, ev{"alloc", a, 1 << 20, 0, -1}, ev{"free_completed", a, 1 << 20, 0, -1})
		}
		var kept []uint64
		for step := 0; step < 30; step++ {
			x := next()
			evs = append(evs, ev{"alloc", x, 4096, 0, 1}, ev{"free_completed", x, 4096, 0, 1})
			k := next()
			kept = append(kept, k)
			evs = append(evs, ev{"alloc", k, 512, 0, 0})
		}
		for line := int32(2); line < 8; line++ { // six statements
			st := line
			if c == "compute after" {
				st = -1
			}
			var made []uint64
			for i := 0; i < 50; i++ {
				a := next()
				made = append(made, a)
				evs = append(evs, ev{"alloc", a, 1 << 20, 0, st})
			}
			if c == "held after" && line == 7 {
				made = made[4:]
			}
			for _, a := range made {
				evs = append(evs, ev{"free_completed", a, 1 << 20, 0, st})
			}
		}
		if c == "frees the kept" {
			for _, k := range kept {
				evs = append(evs, ev{"free_completed", k, 512, 0, 0})
			}
		}
		res := analyzeEvents(t, []string{"keep", "batch", "sd", "del_a", "b", "del_b", "c", "del_c"}, evs)
		l := sitesOf(res, callsite.Leak, 0)
		d := res.Devices[0]
		switch c {
		case "teardown":
			if d.Iterations != 30 || d.IterationSite.Name != "batch" {
				t.Errorf("%s: %d iterations at %+v, want 30 at batch", c, d.Iterations, d.IterationSite)
			}
			if len(l) != 1 || l[0].Count != 30 || l[0].Frame.Name != "keep" {
				t.Errorf("%s: leaks %+v, want 30 blocks at keep", c, l)
			}
		default:
			if d.Iterations != 0 || len(l) != 0 {
				t.Errorf("%s: %d iterations at %+v, leaks %+v; want none", c, d.Iterations, d.IterationSite, l)
			}
		}
	}
}

// TestCharge: blocks older than the trace held by a key until the trace
// frees them. Boundaries at log positions 0, 10, 20, 30, the end at 40;
// the key holds 0, 1, 2, 2 MiB at them and 2 at the end; with frees of
// two older 1 MiB blocks before positions 15 and 25 it held 2, 3, 3, 2
// and 2; a free past the end counts nowhere.
func TestCharge(t *testing.T) {
	const mib = 1 << 20
	it := &iterations{pos: []int{0, 10, 20, 30}, upto: 40,
		changes: [][]change{{{b: 1, v: mib}, {b: 2, v: 2 * mib}}}}
	it.charge(0, []int{15, 25, 41}, mib)
	if got, want := it.curve([]int32{0}), []int64{2 * mib, 3 * mib, 3 * mib, 2 * mib, 2 * mib}; !slices.Equal(got, want) {
		t.Errorf("curve %v, want %v", got, want)
	}
}
