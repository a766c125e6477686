package cmd

import (
	"testing"
)

// Inputs of testdata/pytorch/s40/ (testdata/README.md gives each one's
// truth): cuts of real recordings made by testdata/gen/cut/cut_trace.py,
// and recordings of testdata/gen/s40/record.py (H200, PyTorch
// 2.11.0+cu130).

const s40Dir = td + "pytorch/s40/"

// TestS40OneForwardCutIsNoLoop: s36/mlp_forward.pickle is one
// training-mode forward of 12 (Linear(1024, 1024), ReLU) pairs called at
// record.py:102; each ReLU output (1 MiB) is saved for the next Linear's
// backward, each Linear output freed once the ReLU made its own. Cut at a
// pair's end (83%, 90%, 98% of its trace, the blocks as they were then:
// an OOM inside that forward), the trace repeats pair after pair, as a
// loop of calls of a (Linear, ReLU) model would; it was read as passes
// of line 102 and the saved outputs as a leak. Every entry of the trace
// is inside that one call: nothing shows the program between or after
// the "passes", so none are taken: no iterations, no leak. The 90% cut
// (54 entries: 24 allocations, 11 frees) holds 13 of the trace's blocks
// at line 102: the 32 MiB cuBLAS workspace and 12 of 1 MiB.
func TestS40OneForwardCutIsNoLoop(t *testing.T) {
	for _, name := range []string{"mlp_forward_tail83", "mlp_forward_tail90", "mlp_forward_tail98"} {
		r := analyzeJSON(t, s40Dir+name+".pickle")
		noLeak(t, r)
		if n := r.Inputs[0].Devices[0].Iterations; n != 0 {
			t.Errorf("%s: %d iterations, want none (one forward)", name, n)
		}
	}
	r := analyzeJSON(t, s40Dir+"mlp_forward_tail90.pickle")
	if f := one(t, r, "retained", "record.py", 102); f.Count != 13 || f.Bytes != 32<<20+12<<20 {
		t.Errorf("retained %d blocks, %d bytes; want 13, 44 MiB", f.Count, f.Bytes)
	}
}

// TestS40WrappedCacheIsNoLeak: s38/lru_late_rare.pickle (an LRU of 16
// feature blocks of 1 MiB at record.py:45, full in step 18 of 30, then
// missing only in steps 22 and 26, each miss evicting the oldest entry)
// with the first 10% or 30% of its trace dropped, as a ring buffer that
// wrapped would lose them; the snapshot's blocks are unchanged. The two
// late misses free blocks made before the trace's first entry: counted by
// the trace's allocations alone, the site rose at each of them and was
// "a leak that keeps growing". A site that holds blocks older than the
// trace made such blocks before it, so the frees of older blocks of its
// size are its own: its live memory is flat after step 18, and its 16
// blocks (some older than the trace) are live, not a leak.
func TestS40WrappedCacheIsNoLeak(t *testing.T) {
	for _, name := range []string{"lru_late_rare_head10", "lru_late_rare_head30"} {
		r := analyzeJSON(t, s40Dir+name+".pickle")
		noLeak(t, r)
		if f := one(t, r, "live", "record.py", 45); f.Count != 16 || f.Bytes != 16<<20 {
			t.Errorf("%s: live %d blocks, %d bytes; want 16 of 1 MiB", name, f.Count, f.Bytes)
		}
	}
}

// TestS40EvalVaryingBatches: gen/s40/record.py and record_gpu.py, an
// evaluation (eval(), no_grad) of Linear(1024, 1024), ReLU, Linear(1024,
// 1024) over 24 batches of 24 different sizes (8-128 rows of 1024 fp32,
// 1,544 rows in all). eval_varbatch makes each batch at record.py:24 (a
// stack of the program's own marks the steps); eval_gpu_varbatch has
// them on the GPU before recording, so every allocation of a pass is made
// inside the model's call and the passes differ in size: their stacks
// repeat pass after pass, their sizes do not, and they were "no
// repeating step" (the kept outputs retained). Keeping each output is a
// leak of 24 blocks of 24 sizes, 1,544 x 4 KiB = 6,324,224 B, one a
// pass (the last pass's still in use: a rise in each of the 23 measured);
// replacing it (record_gpu.py:26) or reading its sum is no leak.
func TestS40EvalVaryingBatches(t *testing.T) {
	const kept = 1544 * 4096
	for _, c := range []struct {
		name, file string
		line       int
	}{{"eval_varbatch_leak", "record.py", 26}, {"eval_gpu_varbatch_leak", "record_gpu.py", 24}} {
		r := analyzeJSON(t, s40Dir+c.name+".pickle")
		if n := r.Inputs[0].Devices[0].Iterations; n != 24 {
			t.Errorf("%s: %d iterations, want the 24 batches", c.name, n)
		}
		f := one(t, r, "leak", c.file, c.line)
		if f.Count != 24 || f.Bytes != kept {
			t.Errorf("%s: leak of %d blocks, %d bytes; want 24, %d", c.name, f.Count, f.Bytes, kept)
		}
		if g := f.Growth; g == nil || g.GrewIn != 23 {
			t.Errorf("%s: growth %+v, want a rise in 23", c.name, f.Growth)
		}
		if l := leaks(r); len(l) != 1 {
			t.Errorf("%s: %d leaks, want 1", c.name, len(l))
		}
	}
	for _, name := range []string{"eval_varbatch_clean", "eval_gpu_varbatch_clean"} {
		r := analyzeJSON(t, s40Dir+name+".pickle")
		noLeak(t, r)
		// The sum read each step (record.py:28) makes one scalar, and two
		// just after each other for some batch sizes: those steps are one
		// each, not two (26 iterations were counted).
		if n := r.Inputs[0].Devices[0].Iterations; n != 24 {
			t.Errorf("%s: %d iterations, want the 24 batches", name, n)
		}
	}
}

// TestRepeatedAnchorCountsOnce: testdata/gen/snap/g2.py's kv_clean runs
// 12 sequences of 32 tokens through 4 layers, each layer's attention
// allocating at g2.py:92 once: 1,536 passes. One allocation there came
// right after another in one pass, and was counted as a pass of its own
// (1,537).
func TestRepeatedAnchorCountsOnce(t *testing.T) {
	r := analyzeJSON(t, "../testdata/pytorch/snap/kv_clean.pickle.gz")
	if n := r.Inputs[0].Devices[0].Iterations; n != 12*32*4 {
		t.Errorf("%d iterations, want %d", n, 12*32*4)
	}
}

// TestS40VaryingSizesBesideWorkspace: s39/compile_dyn_leak.pickle.gz (30
// steps of a torch.compile'd MLP on batches of 8 x L x 256, L varying,
// each keeping out.detach() made at record.py:124, a size per step) cut
// at 75% of its trace, the blocks as they were then. The compile phase
// before the first optimizer step is long, and the iterations are marked
// from opt.step (record.py:128): the cuBLAS workspaces the first matmul
// made at line 124 (32 MiB and 1 MiB) come before the first iteration and
// stay the same to the end. No size of the kept outputs grows by itself
// (each came once or twice), so the site grows as a whole; the
// workspaces, held unchanged from before the first iteration, were taken
// into the leak as sizes seen once (40 MiB). They are retained; the leak
// is the 17 outputs the steps kept and the 3 blocks the step in flight at
// the cut had made at that line: 20.
func TestS40VaryingSizesBesideWorkspace(t *testing.T) {
	r := analyzeJSON(t, s40Dir+"compile_dyn_leak_tail75.pickle.gz")
	f := one(t, r, "leak", "record.py", 124)
	if f.Count != 20 || f.Bytes >= 32<<20 {
		t.Errorf("leak of %d blocks, %d bytes; want 20, without the workspaces", f.Count, f.Bytes)
	}
	if w := one(t, r, "retained", "record.py", 124); w.Count != 2 || w.Bytes != 32<<20+1<<20 {
		t.Errorf("retained %d blocks, %d bytes; want the 2 workspaces, 33 MiB", w.Count, w.Bytes)
	}
}

// TestS40LostFreesAreNoGrowth: s38/lru_late_rare.pickle with the frees of
// its two late evictions (record.py:37, steps 22 and 26) left out of the
// trace, as a recording that lost them would have it. Each new feature
// block (record.py:45) then lands at an address the trace still holds
// live: the block there was freed. Counted as held, the site rose in the
// second half and was a leak; counted freed, it is the cache of 16 blocks
// of 1 MiB it was, bounded: retained.
func TestS40LostFreesAreNoGrowth(t *testing.T) {
	r := analyzeJSON(t, s40Dir+"lru_late_rare_lostfrees.pickle")
	noLeak(t, r)
	if f := one(t, r, "retained", "record.py", 45); f.Count != 16 || f.Bytes != 16<<20 {
		t.Errorf("retained %d blocks, %d bytes; want 16 of 1 MiB", f.Count, f.Bytes)
	}
}
