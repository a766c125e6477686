package snapshot

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

const MiB = 1 << 20

// analyzeSnapshot streams a real snapshot through the analyzer.
func analyzeSnapshot(t *testing.T, name string, opt LeakOptions) *LeakResult {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	in, err := parse.Open("../../testdata/pytorch/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := pytorch.NewReader(in.Reader(), name, pytorch.WithAllocator(mem), pytorch.WithBatchSize(2048))
	defer r.Release()
	a := NewLeakAnalyzer(opt)
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return a.Finalize()
}

func stackHas(st []callsite.Frame, file, fn string) bool {
	for _, f := range st {
		if strings.HasSuffix(f.Filename, file) && f.Name == fn {
			return true
		}
	}
	return false
}

func sitesOf(res *LeakResult, kind callsite.Kind, dev int) []Site {
	var out []Site
	for _, s := range res.Sites {
		if s.Kind == kind && s.Device == dev {
			out = append(out, s)
		}
	}
	return out
}

// The expected values below are those of ../shared/fixtures/README.md.

func TestLeakTrainLoop(t *testing.T) {
	res := analyzeSnapshot(t, "leak_train_loop.pickle", LeakOptions{})
	first := res.Sites[0]
	if first.Kind != callsite.Leak || first.Device != 0 || !stackHas(first.Stack, "leak_train_loop.py", "train") {
		t.Fatalf("first site: %+v", first)
	}
	// "40 blocks of 2 MiB (80 MiB) allocated under forward (leak_train_loop.py:11) called from train".
	if first.Bytes < 80*MiB || first.Bytes > 113*MiB || first.Count < 40 {
		t.Fatalf("leak of %d bytes in %d blocks", first.Bytes, first.Count)
	}
	if first.Frame.Name != "forward" || first.Frame.Line != 11 {
		t.Errorf("site named %+v, want forward at line 11", first.Frame)
	}
	g := first.Growth
	if g == nil || !g.Timed || g.Slope <= 0 || g.Kept != first.Count || g.Allocations < g.Kept {
		t.Fatalf("growth evidence %+v", g)
	}
	// The same stack's 32 MiB + 1 MiB workspace, made once in the first step, is retained.
	var ws int64
	for _, s := range sitesOf(res, callsite.Retained, 0) {
		if stackHas(s.Stack, "leak_train_loop.py", "train") {
			ws += s.Bytes
		}
	}
	if ws != 33*MiB {
		t.Errorf("retained at the leaking stack: %d bytes, want 33 MiB", ws)
	}
	// "145 MiB active in 43 blocks; 810 MiB reserved in 16 segments".
	d := res.Devices[0]
	if d.ActiveBytes != 145*MiB || d.ActiveBlocks != 43 || d.ReservedBytes != 810*MiB || d.Segments != 16 {
		t.Errorf("device summary %+v", d)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("unexpected warnings %q", res.Warnings)
	}
}

func TestCleanTrainLoop(t *testing.T) {
	res := analyzeSnapshot(t, "clean_train_loop.pickle", LeakOptions{})
	for _, s := range res.Sites {
		if s.Kind == callsite.Leak && s.Bytes >= 4*MiB {
			t.Fatalf("leak in a clean run: %+v", s)
		}
	}
	// "65 MiB active in 3 blocks ... never growing": the 33 MiB workspace is retained.
	var retained int64
	for _, s := range sitesOf(res, callsite.Retained, 0) {
		retained += s.Bytes
	}
	if retained != 65*MiB {
		t.Fatalf("retained %d bytes, want 65 MiB", retained)
	}
}

func TestModelReload(t *testing.T) {
	res := analyzeSnapshot(t, "model_reload.pickle", LeakOptions{})
	first := res.Sites[0]
	if first.Kind != callsite.Leak || first.Frame.Name != "build" || first.Frame.Line != 5 || !strings.HasSuffix(first.Frame.Filename, "model_reload.py") {
		t.Fatalf("first site %+v", first)
	}
	if first.Bytes < 768*MiB {
		t.Fatalf("leak of %d bytes, want at least 768 MiB (6 extra copies)", first.Bytes)
	}
}

func TestMultiGPU(t *testing.T) {
	res := analyzeSnapshot(t, "multi_gpu_leak.pickle", LeakOptions{})
	if l := sitesOf(res, callsite.Leak, 0); len(l) != 0 {
		t.Fatalf("leak on device 0: %+v", l)
	}
	l := sitesOf(res, callsite.Leak, 1)
	// "30 blocks of 2 MiB (60 MiB) from multi_gpu_leak.py:12"; the last
	// step's output, still referenced, is a 31st block of the same site.
	if len(l) != 1 || l[0].Bytes < 58*MiB || l[0].Bytes > 64*MiB || l[0].Frame.Line != 12 {
		t.Fatalf("device 1 leaks %+v", l)
	}
	// That 31st block, made in the last iteration (which had not ended),
	// is told apart: the rest are the README's 30 blocks (60 MiB).
	if g := l[0].Growth; g == nil || g.InLastStep != 1 || g.InLastStepBytes != 2*MiB || l[0].Count-g.InLastStep != 30 || l[0].Bytes-g.InLastStepBytes != 60*MiB {
		t.Errorf("device 1 leak: %d blocks, %d bytes, growth %+v", l[0].Count, l[0].Bytes, l[0].Growth)
	}
	if len(res.Devices) != 2 {
		t.Fatalf("%d devices", len(res.Devices))
	}
}

func TestOOMObserver(t *testing.T) {
	res := analyzeSnapshot(t, "oom_observer.pickle", LeakOptions{})
	// "66 blocks, 4224 MiB, live from oom.py:13 in grow".
	first := res.Sites[0]
	if first.Kind != callsite.Leak || first.Count != 66 || first.Bytes != 4224*MiB || first.Frame.Name != "grow" || first.Frame.Line != 13 {
		t.Fatalf("first site %+v", first)
	}
	if len(res.OOMs) != 1 || res.OOMs[0].Requested != 64*MiB {
		t.Fatalf("ooms %+v", res.OOMs)
	}
}

// TestUnseenRealSnapshots runs snapshots made for this project (testdata/gen):
// each has a planted leak of known shape, recorded in ways the shared
// fixtures were not.
func TestUnseenRealSnapshots(t *testing.T) {
	cases := []struct {
		file      string
		site      string // innermost user function
		count     int    // allocations kept by the planted leak
		sizeBytes int64
	}{
		{"stacks_all.pickle", "loop", 6, 256 << 10},             // C++ frames; every 5th of 30 steps
		{"protocol5.pickle.gz", "loop", 10, 256 << 10},          // protocol 5, gzip; every 3rd of 30
		{"side_stream.pickle", "side_stream", 5, 1 << 20},       // every 4th of 20 on a side stream (+1 live at the end)
		{"expandable_segments.pickle", "<module>", 10, 2 << 20}, // expandable segments; every 4th of 40 (+1)
		{"hf_gpt2_leak.pickle.gz", "train", 15, 4000 << 10},     // transformers; every 3rd of 45
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			res := analyzeSnapshot(t, c.file, LeakOptions{})
			first := res.Sites[0]
			if first.Kind != callsite.Leak || first.Frame.Name != c.site {
				t.Fatalf("first site %s %+v", first.Kind, first.Frame)
			}
			if first.Count < c.count || first.Count > c.count+1 {
				t.Errorf("%d allocations, want %d (or one more still referenced)", first.Count, c.count)
			}
			if first.Sizes[0] < c.sizeBytes || first.Sizes[0] > c.sizeBytes*11/10 {
				t.Errorf("sizes %v, want about %d", first.Sizes, c.sizeBytes)
			}
			for _, f := range first.Stack {
				if callsite.DefaultFrameFilter().Hidden(f) {
					t.Errorf("a framework frame stayed in the stack: %+v", f)
				}
			}
		})
	}
}

func TestWrappedRingBuffer(t *testing.T) {
	res := analyzeSnapshot(t, "wrapped_ring.pickle", LeakOptions{})
	if res.Devices[0].UnmatchedFrees == 0 {
		t.Error("frees of allocations older than the trace not counted")
	}
	var warned bool
	for _, w := range res.Warnings {
		warned = warned || strings.Contains(w, "ring buffer wrapped")
	}
	if !warned {
		t.Errorf("no ring buffer warning in %q", res.Warnings)
	}
	// The 20 kept 256 KiB outputs predate the 400-entry window: live, and
	// flagged as the pattern of a leak.
	var found bool
	for _, s := range res.Sites {
		if s.Kind == callsite.Live && s.Frame.Name == "loop" && s.Count == 20 && s.Repeated {
			found = true
		}
		if s.Kind == callsite.Leak {
			t.Errorf("a leak claimed without trace evidence: %+v", s)
		}
	}
	if !found {
		t.Errorf("kept outputs not reported as repeated live memory: %+v", res.Sites)
	}
}

func TestNoTraceIsLive(t *testing.T) {
	for _, name := range []string{"no_trace.pickle", "memory_snapshot_list.pickle", "state_only.pickle"} {
		res := analyzeSnapshot(t, name, LeakOptions{})
		for _, s := range res.Sites {
			if s.Kind != callsite.Live {
				t.Errorf("%s: %s site without a trace: %+v", name, s.Kind, s.Frame)
			}
		}
		if len(res.Sites) == 0 {
			t.Errorf("%s: no sites", name)
		}
	}
}

// TestTraceWithoutStacks: a snapshot recorded with context="state" (s33
// kcl) has a trace whose entries carry no stack and blocks that carry
// theirs: the blocks name the trace's live allocations (70 at step
// (g.py:26), 4 at <module> (g.py:19); only the backward thread's 32 MiB
// workspace has none). With context=None (knl) neither has one. Each
// warning says the trace has no stacks and advises context="all", never
// stacks="python" (set in both runs).
func TestTraceWithoutStacks(t *testing.T) {
	res := analyzeSnapshot(t, "s33/kcl.pickle.gz", LeakOptions{})
	byLine := map[int64]int{}
	for _, s := range res.Sites {
		if s.Kind != callsite.Retained {
			t.Errorf("%s at %v: growth cannot be judged without the trace's stacks", s.Kind, s.Frame)
		}
		byLine[s.Frame.Line] += s.Count
	}
	if byLine[26] != 70 || byLine[19] != 4 || byLine[0] != 1 {
		t.Errorf("allocations by line %v; want 70 at 26, 4 at 19, 1 without a stack", byLine)
	}
	for name, want := range map[string]string{"s33/kcl.pickle.gz": "they name the sites", "s33/knl.pickle.gz": "75 of 75 live allocations have no stack: neither the trace nor the snapshot's blocks"} {
		w := strings.Join(analyzeSnapshot(t, name, LeakOptions{}).Warnings, "\n")
		if !strings.Contains(w, want) || !strings.Contains(w, "the trace's allocations carry no stacks") || strings.Contains(w, `stacks="python"`) {
			t.Errorf("%s: warnings %q", name, w)
		}
	}
}

// TestActiveParts: the tenths of the span from the first kept allocation
// to the end of the trace that hold one.
func TestActiveParts(t *testing.T) {
	cases := []struct {
		ts   []int64
		end  int64
		want int
	}{
		{[]int64{0, 101, 202, 303, 404, 505, 606, 707, 808, 909}, 1000, 10}, // one in each tenth
		{[]int64{0, 1, 2, 3}, 1000, 1},
		{[]int64{500, 999}, 1000, 2},
		{nil, 1000, 0},
		{[]int64{1000}, 1000, 1},
	}
	for _, c := range cases {
		if got := activeParts(c.ts, c.end); got != c.want {
			t.Errorf("activeParts(%v, %d) = %d, want %d", c.ts, c.end, got, c.want)
		}
	}
}

func TestFrameFilter(t *testing.T) {
	f := callsite.DefaultFrameFilter()
	hidden := []callsite.Frame{
		{Filename: "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", Line: 134, Name: "forward"},
		{Filename: "/usr/lib/python3.11/threading.py", Line: 1045, Name: "_bootstrap_inner"},
		{Filename: "<frozen importlib._bootstrap>", Line: 1, Name: "_find_and_load"},
		{Filename: "??", Line: 0, Name: "torch::unwind::unwind()"},
		{Filename: "RegisterCUDA_0.cpp", Line: 0, Name: "at::(anonymous namespace)::create_out(c10::ArrayRef<long>)"},
		{Filename: "", Line: 0, Name: "void torch::autograd::validate_outputs_impl<torch::autograd::Edge>(std::vector<torch::autograd::Edge>&)"},
		{Filename: "", Line: 0, Name: "at::Tensor at::_sum_to<c10::SymInt>(at::Tensor, c10::ArrayRef<c10::SymInt>, bool)"},
		{Filename: "??", Line: 0, Name: "_PyEval_EvalFrameDefault"},
		{Filename: "??", Line: 0, Name: "pthread_condattr_setpshared"},
		{Filename: "python_variable.cpp", Line: 0, Name: "THPVariable_dealloc(_object*)"},
	}
	kept := []callsite.Frame{
		{Filename: "/home/user/train/leak_train_loop.py", Line: 11, Name: "forward"},
		{Filename: "/opt/venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py", Line: 697, Name: "forward"},
		{Filename: "/home/user/ext/kernels.cu", Line: 12, Name: "my_ext::launch(at::Tensor const&)"},
		{Filename: "train.py", Line: 3, Name: "step"},
	}
	// THPVariable_* is a CPython binding of PyTorch in a bare .cpp file: the
	// default rules do not know it, so it is kept; the test pins that.
	hidden = hidden[:len(hidden)-1]
	kept = append(kept, callsite.Frame{Filename: "python_variable.cpp", Line: 0, Name: "THPVariable_dealloc(_object*)"})
	for _, fr := range hidden {
		if !f.Hidden(fr) {
			t.Errorf("not hidden: %+v", fr)
		}
	}
	for _, fr := range kept {
		if f.Hidden(fr) {
			t.Errorf("hidden: %+v", fr)
		}
	}
	user, err := callsite.NewFrameFilter([]string{"transformers/"}, []string{`torch/nn/modules/linear\.py`})
	if err != nil {
		t.Fatal(err)
	}
	if !user.Hidden(kept[1]) || user.Hidden(hidden[0]) {
		t.Error("--hide-frames / --keep-frames not applied")
	}
	if _, err := callsite.NewFrameFilter([]string{"("}, nil); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

// Synthetic traces, built as Arrow batches.

type ev struct {
	action string
	addr   uint64
	size   int64
	timeUs int64 // 0: no timestamp
	stack  int32 // -1: none
}

func eventsBatch(t *testing.T, mem memory.Allocator, dev int32, evs []ev) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, pytorch.EventsSchema)
	defer b.Release()
	for i, e := range evs {
		b.Field(pytorch.EvDevice).(*array.Int32Builder).Append(dev)
		b.Field(pytorch.EvSeq).(*array.Int64Builder).Append(int64(i))
		if e.timeUs > 0 {
			b.Field(pytorch.EvTimeUs).(*array.Int64Builder).Append(e.timeUs)
		} else {
			b.Field(pytorch.EvTimeUs).(*array.Int64Builder).AppendNull()
		}
		if err := b.Field(pytorch.EvAction).(*array.BinaryDictionaryBuilder).AppendString(e.action); err != nil {
			t.Fatal(err)
		}
		b.Field(pytorch.EvAddr).(*array.Uint64Builder).Append(e.addr)
		b.Field(pytorch.EvSize).(*array.Int64Builder).Append(e.size)
		b.Field(pytorch.EvStream).(*array.Int64Builder).Append(0)
		if e.stack >= 0 {
			b.Field(pytorch.EvStackID).(*array.Int32Builder).Append(e.stack)
		} else {
			b.Field(pytorch.EvStackID).(*array.Int32Builder).AppendNull()
		}
		b.Field(pytorch.EvDeviceFree).(*array.Int64Builder).AppendNull()
	}
	return b.NewRecordBatch()
}

func framesAndStacks(t *testing.T, mem memory.Allocator, a *LeakAnalyzer) {
	namedStacks(t, mem, a, "leaky", "steady")
}

// TestSyntheticTrace: stack 0 keeps one allocation every tenth step of 100;
// stack 1 allocates and frees every step; a free of an address never
// allocated (the ring buffer wrapped) is counted and reported once.
func TestSyntheticTrace(t *testing.T) {
	for _, timed := range []bool{true, false} {
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		a := NewLeakAnalyzer(LeakOptions{})
		framesAndStacks(t, mem, a)
		evs := []ev{{action: "free_completed", addr: 999, size: 8, stack: -1}}
		clock := int64(1_796_000_000_000_000) // µs since the epoch, in 2026
		for step := 0; step < 100; step++ {
			clock += 10_000 // 10 ms a step
			tu := int64(0)
			if timed {
				tu = clock
			}
			addr := uint64(0x1000 + step*0x100)
			evs = append(evs, ev{"alloc", addr, 512, tu, 1}, ev{"free_requested", addr, 512, tu, 1}, ev{"free_completed", addr, 512, tu, 1})
			if step%10 == 0 {
				evs = append(evs, ev{"alloc", uint64(0x100000 + step), 1024, tu, 0})
			}
		}
		rec := eventsBatch(t, mem, 0, evs)
		if err := a.Add(pytorch.TableEvents, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		res := a.Finalize()
		mem.AssertSize(t, 0)
		if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Leak || res.Sites[0].Count != 10 || res.Sites[0].Frame.Name != "leaky" {
			t.Fatalf("timed=%v: sites %+v", timed, res.Sites)
		}
		g := res.Sites[0].Growth
		if g.Timed != timed || g.Kept != 10 || g.Allocations != 10 {
			t.Fatalf("timed=%v: growth %+v", timed, g)
		}
		if timed {
			// 1024 bytes every 100 ms: 10,240 bytes per second.
			if g.Slope < 10240*0.99 || g.Slope > 10240*1.01 || g.R2 < 0.99 {
				t.Errorf("slope %.1f B/s, R2 %.3f", g.Slope, g.R2)
			}
		}
		if res.Devices[0].UnmatchedFrees != 1 {
			t.Errorf("unmatched frees %d", res.Devices[0].UnmatchedFrees)
		}
		var ring, untimed bool
		for _, w := range res.Warnings {
			ring = ring || strings.Contains(w, "1 free of addresses never seen")
			untimed = untimed || strings.Contains(w, "no timestamps")
		}
		if !ring || untimed == timed {
			t.Errorf("timed=%v: warnings %q", timed, res.Warnings)
		}
	}
}

// TestBlocksTheTraceMisses: an active block the trace never allocated is
// reported from the snapshot's blocks as live; an allocation the trace
// leaves live but the segments do not hold is dropped with a warning.
func TestBlocksTheTraceMisses(t *testing.T) {
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	a := NewLeakAnalyzer(LeakOptions{})
	framesAndStacks(t, mem, a)
	rec := eventsBatch(t, mem, 0, []ev{{"alloc", 0x2000, 4096, 1, 1}, {"alloc", 0x3000, 4096, 2, 1}})
	a.Add(pytorch.TableEvents, rec)
	rec.Release()
	sb := array.NewRecordBuilder(mem, pytorch.SegmentsSchema)
	defer sb.Release()
	bb := array.NewRecordBuilder(mem, pytorch.BlocksSchema)
	defer bb.Release()
	sb.Field(pytorch.SegDevice).(*array.Int32Builder).Append(0)
	sb.Field(pytorch.SegAddress).(*array.Uint64Builder).Append(0x1000)
	for _, c := range []int{pytorch.SegTotalSize, pytorch.SegAllocatedSize, pytorch.SegActiveSize, pytorch.SegRequestedSize, pytorch.SegStream} {
		sb.Field(c).(*array.Int64Builder).Append(1 << 20)
	}
	sb.Field(pytorch.SegType).(*array.BinaryDictionaryBuilder).AppendString("large")
	sb.Field(pytorch.SegPoolID).AppendNull()
	sb.Field(pytorch.SegExpandable).(*array.BooleanBuilder).Append(false)
	sb.Field(pytorch.SegStackID).AppendNull()
	for _, blk := range []struct {
		addr  uint64
		stack int32
	}{{0x1000, 0}, {0x2000, 1}} { // 0x1000: not in the trace; 0x3000: not a block
		bb.Field(pytorch.BlkDevice).(*array.Int32Builder).Append(0)
		bb.Field(pytorch.BlkSegmentAddress).(*array.Uint64Builder).Append(0x1000)
		bb.Field(pytorch.BlkAddress).(*array.Uint64Builder).Append(blk.addr)
		bb.Field(pytorch.BlkSize).(*array.Int64Builder).Append(4096)
		bb.Field(pytorch.BlkRequestedSize).(*array.Int64Builder).Append(4000)
		bb.Field(pytorch.BlkState).(*array.BinaryDictionaryBuilder).AppendString("active_allocated")
		bb.Field(pytorch.BlkStackID).(*array.Int32Builder).Append(blk.stack)
	}
	for _, x := range []struct {
		t pytorch.Table
		b *array.RecordBuilder
	}{{pytorch.TableSegments, sb}, {pytorch.TableBlocks, bb}} {
		rec := x.b.NewRecordBatch()
		if err := a.Add(x.t, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	res := a.Finalize()
	var live, retained int
	for _, s := range res.Sites {
		switch {
		case s.Kind == callsite.Live && s.Frame.Name == "leaky" && s.NotInTrace == 1:
			live++
		case s.Kind == callsite.Retained && s.Frame.Name == "steady" && s.Count == 1:
			retained++
		default:
			t.Errorf("unexpected site %+v", s)
		}
	}
	if live != 1 || retained != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	joined := strings.Join(res.Warnings, "\n")
	if !strings.Contains(joined, "active blocks allocated before the trace began: 1 (4.0 KiB)") ||
		!strings.Contains(joined, "not active blocks in the snapshot's segments: 1") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestAddRejectsWrongSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	rec := eventsBatch(t, mem, 0, nil)
	defer rec.Release()
	if err := NewLeakAnalyzer(LeakOptions{}).Add(pytorch.TableBlocks, rec); err == nil {
		t.Fatal("an events batch was accepted as blocks")
	}
}

// TestHandMadeCases: snapshots from testdata/gen/synthetic.py, each a way
// the growth test was once fooled.
func TestHandMadeCases(t *testing.T) {
	// A prefetch queue keeps the last 4 of 1,000 batches: live at the
	// end, never growing.
	res := analyzeSnapshot(t, "synthetic/ring4.pickle", LeakOptions{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Retained || res.Sites[0].Count != 4 {
		t.Errorf("ring4: %+v", res.Sites)
	}
	// Six allocations in the last millisecond of a 10 s trace: one burst.
	res = analyzeSnapshot(t, "synthetic/burst_at_end.pickle", LeakOptions{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Retained || res.Sites[0].Count != 6 {
		t.Errorf("burst_at_end: %+v", res.Sites)
	}
	// Every 5th of 200 steps kept, each allocation of another size: one
	// leak of 40, nothing peeled off as a workspace.
	res = analyzeSnapshot(t, "synthetic/varsize_leak.pickle", LeakOptions{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Leak || res.Sites[0].Count != 40 {
		t.Errorf("varsize_leak: %+v", res.Sites)
	}
	// Every timestamp equal: judged by trace position, with a warning.
	res = analyzeSnapshot(t, "synthetic/sametime.pickle", LeakOptions{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Leak || res.Sites[0].Growth.Timed {
		t.Errorf("sametime: %+v", res.Sites)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "timestamps cannot be trusted") {
		t.Errorf("sametime warnings %q", res.Warnings)
	}
}

// TestMadeOnceInFirstStep: every step keeps one 1 MiB tensor at the
// leaking line; the first step's first call through it also made a 1 MiB
// buffer of the same stack and size, held to the end (s33's esl.pickle,
// finding 8). The leak is the 40 kept tensors; the buffer is retained. A
// leak every other step, with the same buffer, peels nothing: its count
// per step varies.
func TestMadeOnceInFirstStep(t *testing.T) {
	for _, every := range []int{1, 2} {
		var evs []ev
		addr := uint64(0x10000)
		next := func() uint64 { addr += 0x1000; return addr }
		for step := 0; step < 40; step++ {
			x := next()
			evs = append(evs, ev{"alloc", x, 4096, 0, 1})
			for i := 0; i < 5; i++ { // the step's compute
				w := next()
				evs = append(evs, ev{"alloc", w, 512, 0, -1}, ev{"free_completed", w, 512, 0, -1})
			}
			if step == 0 {
				evs = append(evs, ev{"alloc", next(), 1 << 20, 0, 0})
			}
			if step%every == 0 {
				evs = append(evs, ev{"alloc", next(), 1 << 20, 0, 0})
			}
			evs = append(evs, ev{"free_completed", x, 4096, 0, 1})
		}
		res := analyzeEvents(t, []string{"leaky", "steady"}, evs)
		l, r := sitesOf(res, callsite.Leak, 0), sitesOf(res, callsite.Retained, 0)
		wantLeak, wantHeld := 40, 1
		if every > 1 {
			wantLeak, wantHeld = 21, 0
		}
		if len(l) != 1 || l[0].Count != wantLeak || len(r) != wantHeld || wantHeld == 1 && (r[0].Count != 1 || r[0].Frame.Name != "leaky") {
			t.Fatalf("every %d: leaks %+v, retained %+v", every, l, r)
		}
		if g := l[0].Growth; every == 1 && (g.FromBytes != 0 || g.ToBytes != 39<<20) {
			t.Errorf("leak from %d to %d, want 0 to 39 MiB", g.FromBytes, g.ToBytes)
		}
	}
}

// TestRepeated: a site's allocations are the pattern a leak leaves when
// one size has at least MinKept of them and three quarters of all (s33's
// ksl.pickle: 61 of 70 at a step written on one line), not when sizes are
// mixed evenly (weights and biases) or the size is rare.
func TestRepeated(t *testing.T) {
	const mib = 1 << 20
	many := func(n int, size int64) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = size
		}
		return v
	}
	ksl := append(append(append(many(61, mib), 32*mib), many(4, 4*mib)...), many(4, 4096)...)
	for _, c := range []struct {
		name   string
		blocks []int64
		count  int
		size   int64
	}{
		{"one size", many(20, 256<<10), 20, 256 << 10},
		{"a step on one line", ksl, 61, mib},
		{"weights and biases", append(many(8, 4*mib), many(8, 4096)...), 0, 0},
		{"too few", many(3, mib), 0, 0},
	} {
		var s Site
		s.repeated(c.blocks, 4)
		if s.Repeated != (c.count > 0) || s.RepeatedCount != c.count || s.RepeatedSize != c.size {
			t.Errorf("%s: %v %d of %d", c.name, s.Repeated, s.RepeatedCount, s.RepeatedSize)
		}
	}
}

// TestCacheAtCapacityAgainstStoppedLeak: 60 steps, each marked by a
// temporary at "step"; "cache" keeps a 1 MiB block a step for the first
// 32 steps (its live memory rises through the first half and stops in
// the second: the plateau rule alone calls it a leak that stopped). Then:
//   - evict: each later step adds a block and frees the oldest (an LRU at
//     its capacity): the live memory reaches 32 MiB at the start of
//     iteration 33 (after 32 steps of 1 MiB) and stays there; the 32
//     blocks held at the end are the last 32 made, 27 of them in complete
//     iterations since (33 to 59; 60 is unfinished): bounded, retained;
//   - stop: the site makes nothing more: a leak that stopped;
//   - consolidate: in step 50 the 32 blocks are replaced by one 32 MiB
//     block (torch.cat of the list): the same bytes, made in one
//     iteration, not a cache turning over: still a leak;
//   - ring: the site also keeps a 512 B block a step in a window of the
//     last 8 (survivors of 7 complete iterations, 3.5 KiB against 32 MiB
//     of growth): still a leak;
//   - window: the site also keeps an 8 MiB block a step in a window of the
//     last 8, full from the eighth step (64 MiB, turning over every step):
//     the size that rose in the second half (1 MiB) replaced nothing, so
//     still a leak.
func TestCacheAtCapacityAgainstStoppedLeak(t *testing.T) {
	for _, c := range []struct {
		name      string
		leak      bool
		replaced  int
		plateauAt int
	}{{"evict", false, 27, 33}, {"stop", true, 0, 0}, {"consolidate", true, 0, 0}, {"ring", true, 0, 0}, {"window", true, 0, 0}} {
		var evs []ev
		addr := uint64(0x10000)
		next := func() uint64 { addr += 0x100000; return addr }
		var held, ring []uint64
		for step := 0; step < 60; step++ {
			x := next()
			evs = append(evs, ev{"alloc", x, 4096, 0, 1})
			if step < 32 || c.name == "evict" {
				b := next()
				evs = append(evs, ev{"alloc", b, 1 << 20, 0, 0})
				held = append(held, b)
				if len(held) > 32 {
					evs = append(evs, ev{"free_completed", held[0], 1 << 20, 0, 0})
					held = held[1:]
				}
			}
			if c.name == "consolidate" && step == 50 {
				evs = append(evs, ev{"alloc", next(), 32 << 20, 0, 0})
				for _, b := range held {
					evs = append(evs, ev{"free_completed", b, 1 << 20, 0, 0})
				}
				held = nil
			}
			if c.name == "ring" || c.name == "window" {
				size := int64(512)
				if c.name == "window" {
					size = 8 << 20
				}
				r := next()
				evs = append(evs, ev{"alloc", r, size, 0, 0})
				if ring = append(ring, r); len(ring) > 8 {
					evs = append(evs, ev{"free_completed", ring[0], size, 0, 0})
					ring = ring[1:]
				}
			}
			evs = append(evs, ev{"free_completed", x, 4096, 0, 1})
		}
		res := analyzeEvents(t, []string{"cache", "step"}, evs)
		l, r := sitesOf(res, callsite.Leak, 0), sitesOf(res, callsite.Retained, 0)
		if c.leak {
			if len(l) != 1 || l[0].Frame.Name != "cache" || l[0].Growth.Replaced != 0 {
				t.Errorf("%s: want a leak at cache; leaks %+v, retained %+v", c.name, l, r)
			}
			continue
		}
		if len(l) != 0 || len(r) != 1 || r[0].Count != 32 {
			t.Fatalf("%s: want 32 blocks retained at cache; leaks %+v, retained %+v", c.name, l, r)
		}
		if g := r[0].Growth; g.Replaced != c.replaced || g.ReplacedIn != c.replaced || g.CapStep != c.plateauAt || g.PlateauStep != c.plateauAt {
			t.Errorf("%s: replaced %d in %d iterations since %d (plateau %d); want %d in %d since %d", c.name, g.Replaced, g.ReplacedIn, g.CapStep, g.PlateauStep, c.replaced, c.replaced, c.plateauAt)
		}
	}
}

// TestLeakOfVaryingSizes: every step keeps one tensor whose size follows
// the step's batch (4 KiB times a length that differs from step to step:
// every size comes once, so each rose in one iteration only); the first
// call through the line also made a 32 MiB workspace before it. The sizes
// together grow across the 40 iterations: a leak of the 40 kept tensors,
// the workspace retained (the count tells it apart: the first step keeps
// 2, every later one 1). Kept every other step, the count varies and
// cannot tell the workspace from the first kept tensor: the site is one
// leak, as before sizes were peeled off (21 blocks: 20 kept tensors and
// the workspace). With one repeated size among them (lengths 1..20 twice,
// so each size rises twice and grows by itself), the other sizes rose once
// each and were peeled off as bursts: the same leak.
func TestLeakOfVaryingSizes(t *testing.T) {
	for _, c := range []struct {
		name             string
		every            int
		length           func(step int) int64
		wantLeak, wantWS int
	}{
		{"distinct", 1, func(s int) int64 { return int64(s*7%40 + 1) }, 40, 1},
		{"distinct every other", 2, func(s int) int64 { return int64(s*7%40 + 1) }, 21, 0},
		{"one repeated", 1, func(s int) int64 {
			if s%4 == 0 {
				return 100
			}
			return int64(s*7%40 + 1)
		}, 40, 1},
	} {
		var evs []ev
		addr := uint64(0x10000)
		next := func(size int64) uint64 { a := addr; addr += uint64(size) + 0x1000; return a }
		for step := 0; step < 40; step++ {
			x := next(4096)
			evs = append(evs, ev{"alloc", x, 4096, 0, 1})
			for i := 0; i < 5; i++ { // the step's compute
				w := next(512)
				evs = append(evs, ev{"alloc", w, 512, 0, -1}, ev{"free_completed", w, 512, 0, -1})
			}
			if step == 0 {
				evs = append(evs, ev{"alloc", next(32 << 20), 32 << 20, 0, 0})
			}
			if step%c.every == 0 {
				n := 4096 * c.length(step)
				evs = append(evs, ev{"alloc", next(n), n, 0, 0})
			}
			evs = append(evs, ev{"free_completed", x, 4096, 0, 1})
		}
		res := analyzeEvents(t, []string{"leaky", "steady"}, evs)
		l, r := sitesOf(res, callsite.Leak, 0), sitesOf(res, callsite.Retained, 0)
		if len(l) != 1 || l[0].Count != c.wantLeak || len(r) != c.wantWS || c.wantWS == 1 && (r[0].Count != 1 || r[0].Bytes != 32<<20) {
			t.Errorf("%s: leaks %+v, retained %+v", c.name, l, r)
		}
	}
}

// TestAddGroupLikeAddAndRepeated: addGroup makes the site that adding
// each allocation (add) and then repeated on their block sizes made:
// bytes, count, allocations outside the trace, sizes (once done sorts
// them), and the repeated size, with ties of counts (the larger size
// wins), sizes 0 and negative (a hostile file's), and groups of a size
// or none.
func TestAddGroupLikeAddAndRepeated(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	sizes := []int64{0, -512, 512, 1024, 4096, 8192, 1 << 20, 65011712, math.MaxInt64 / 2} // more than maxSizesPerResult
	for run := 0; run < 3000; run++ {
		g := &siteGroup{}
		nsizes := 1 + rng.Intn(len(sizes))
		pick := func() int64 { return sizes[rng.Intn(nsizes)] }
		for range rng.Intn(12) {
			z := pick()
			g.allocs = append(g.allocs, keptAlloc{size: z, block: z, inTrace: rng.Intn(5) > 0})
		}
		for range rng.Intn(12) {
			g.outside = append(g.outside, pick())
		}
		minKept := 1 + rng.Intn(4)
		var want Site
		g.each(want.add)
		var blocks []int64
		g.each(func(k keptAlloc) { blocks = append(blocks, k.block) })
		want.repeated(blocks, minKept)
		var got Site
		got.addGroup(g, minKept)
		if w, s := want.done(), got.done(); !reflect.DeepEqual(w, s) {
			t.Fatalf("allocs %v outside %v minKept %d: addGroup gives %+v, add and repeated %+v", g.allocs, g.outside, minKept, s, w)
		}
	}
}

// TestAnalyzerLeakLikeLeakAnalyzer: the combined Analyzer (both analyses,
// their Finalize on two goroutines, or in turn with the OOMs' sites) gives
// the leak result a LeakAnalyzer fed every batch alone gives: snapshots
// with blocks in state active_pending_free (their sites and the streams
// of their segments, kept as rows since this session), two devices, OOMs,
// and many segments. Batches of 100 rows split a segment's blocks.
func TestAnalyzerLeakLikeLeakAnalyzer(t *testing.T) {
	for _, name := range []string{"side_stream_pending.pickle", "side_stream.pickle", "multi_gpu_leak.pickle",
		"fragmentation_oom.pickle", "oom_observer.pickle", "blockscan/segments_shapes_p2.pickle",
		"hv/two_streams_clean.pickle", "leak_train_loop.pickle", "no_trace.pickle"} {
		t.Run(name, func(t *testing.T) {
			feed := func(add func(pytorch.Table, arrow.RecordBatch) error) {
				in, err := parse.Open("../../testdata/pytorch/"+name, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				r := pytorch.NewReader(in.Reader(), name, pytorch.WithBatchSize(100))
				defer r.Release()
				for r.Next() {
					if err := add(r.Table(), r.RecordBatch()); err != nil {
						t.Fatal(err)
					}
				}
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
			}
			alone := NewLeakAnalyzer(LeakOptions{})
			feed(alone.Add)
			want := alone.Finalize()
			both := NewAnalyzer(LeakOptions{})
			feed(both.Add)
			got := both.Finalize().Leak
			if len(want.Sites) == 0 && len(want.Devices) == 0 {
				t.Fatalf("no sites and no devices: the test reads nothing")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Analyzer's leak result differs from LeakAnalyzer's:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestBlockSumsOutOfOrder: the per-segment sums of block bytes (kept as
// rows in the order fed, sorted by Finalize when they are not) find each
// segment's blocks when segments and blocks come in no address order and
// a segment's blocks come in two runs: the segment whose blocks add up
// past its total_size (two runs of 3 KiB, 6 KiB in a 4 KiB segment) is
// named, the ones that fit (4 KiB in 4 KiB) are not.
func TestBlockSumsOutOfOrder(t *testing.T) {
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	a := NewFragmentAnalyzer()
	sb := array.NewRecordBuilder(mem, pytorch.SegmentsSchema)
	defer sb.Release()
	for _, addr := range []uint64{0x30000, 0x10000, 0x20000} {
		sb.Field(pytorch.SegDevice).(*array.Int32Builder).Append(0)
		sb.Field(pytorch.SegAddress).(*array.Uint64Builder).Append(addr)
		for _, c := range []int{pytorch.SegTotalSize, pytorch.SegAllocatedSize, pytorch.SegActiveSize, pytorch.SegRequestedSize} {
			sb.Field(c).(*array.Int64Builder).Append(4096)
		}
		sb.Field(pytorch.SegStream).(*array.Int64Builder).Append(0)
		sb.Field(pytorch.SegType).(*array.BinaryDictionaryBuilder).AppendString("large")
		sb.Field(pytorch.SegPoolID).AppendNull()
		sb.Field(pytorch.SegExpandable).(*array.BooleanBuilder).Append(false)
		sb.Field(pytorch.SegStackID).AppendNull()
	}
	rec := sb.NewRecordBatch()
	a.Add(pytorch.TableSegments, rec)
	rec.Release()
	// Blocks: 0x30000's 3 KiB, 0x10000's 4 KiB, 0x20000's 4 KiB, then
	// 0x30000's other 3 KiB: four runs, not in address order.
	bb := array.NewRecordBuilder(mem, pytorch.BlocksSchema)
	defer bb.Release()
	for _, blk := range []struct{ seg, addr uint64 }{{0x30000, 0x30000}, {0x10000, 0x10000}, {0x20000, 0x20000}, {0x30000, 0x30c00}} {
		size := int64(4096)
		if blk.seg == 0x30000 {
			size = 3072
		}
		bb.Field(pytorch.BlkDevice).(*array.Int32Builder).Append(0)
		bb.Field(pytorch.BlkSegmentAddress).(*array.Uint64Builder).Append(blk.seg)
		bb.Field(pytorch.BlkAddress).(*array.Uint64Builder).Append(blk.addr)
		bb.Field(pytorch.BlkSize).(*array.Int64Builder).Append(size)
		bb.Field(pytorch.BlkRequestedSize).(*array.Int64Builder).Append(size)
		bb.Field(pytorch.BlkState).(*array.BinaryDictionaryBuilder).AppendString("inactive")
		bb.Field(pytorch.BlkStackID).AppendNull()
	}
	rec = bb.NewRecordBatch()
	a.Add(pytorch.TableBlocks, rec)
	rec.Release()
	res := a.Finalize()
	var named []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "segment at 0x") {
			named = append(named, w)
		}
	}
	if len(named) != 1 || !strings.Contains(named[0], "segment at 0x30000") || !strings.Contains(named[0], "add up to 6144 bytes") {
		t.Errorf("warnings naming segments: %q, want one for 0x30000's 6144 bytes", named)
	}
}
