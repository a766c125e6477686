package cmd

import (
	"strings"
	"testing"
)

// Recordings of testdata/pytorch/s36b/, made on an H200 (PyTorch 2.11) by
// testdata/gen/s36b/rec.py, each case in its own process (testdata/README.md
// gives each case's truth). Lines are those of rec.py as it ran.

const s36bDir = td + "pytorch/s36b/"

// TestS36bCacheAtCapacity: 100 AdamW steps; each looks up a feature block
// (256 x 512 fp32 = 524,288 B, made at feat, rec.py:218) for a key drawn by
// random.Random(1).randrange. cache_lru_late is an LRU of 48 entries over
// 400 keys: replaying the draws in Python (the same generator, seed and
// calls) fills it at the 48th miss, in step 51 of 100 (0-based step 50),
// and then nearly every step misses and evicts the oldest entry: 44 of the
// 48 blocks held at the end were inserted after step 51. Its live memory
// rises for the first half of the run and is flat for the second while
// the line keeps allocating: a cache at its capacity, retained, not a
// leak (it had been called a leak that "stopped", by the plateau rule).
// cache_lru_early (8 entries over 24 keys, full in step 9) was already
// bounded; cache_dict_leak (a dict keyed by the step, never evicted: 100
// blocks) is the leak.
func TestS36bCacheAtCapacity(t *testing.T) {
	const block = 256 * 512 * 4
	r := analyzeJSON(t, s36bDir+"cache_lru_late.pickle.gz")
	noLeak(t, r)
	f := one(t, r, "retained", "rec.py", 218)
	if f.Count != 48 || f.Bytes != 48*block {
		t.Errorf("lru_late: retained %d blocks, %d bytes; want 48 blocks of %d", f.Count, f.Bytes, block)
	}
	if !strings.Contains(f.Message, "bounded") || !strings.Contains(f.Message, "44 of the 48 allocations") {
		t.Errorf("lru_late: the message should say it is bounded and that 44 of the 48 blocks were made at the plateau: %s", f.Message)
	}

	r = analyzeJSON(t, s36bDir+"cache_lru_early.pickle.gz")
	noLeak(t, r)
	if f := one(t, r, "retained", "rec.py", 218); f.Count != 8 {
		t.Errorf("lru_early: retained %d blocks, want 8", f.Count)
	}

	r = analyzeJSON(t, s36bDir+"cache_dict_leak.pickle.gz")
	if f := one(t, r, "leak", "rec.py", 218); f.Count != 100 || f.Bytes != 100*block {
		t.Errorf("dict_leak: leak of %d blocks, %d bytes; want 100 blocks of %d", f.Count, f.Bytes, block)
	}
}

// TestS36bLeaks: the planted leaks of the other cases, each the number of
// blocks the script's NOTE line counts (testdata/gen/s36b/driver.log).
// wrap_leak: max_entries=1500 over 400 steps, each keeping
// torch.cat([out, out], 1) (64 x 1024 fp32, rec.py:49): the trace holds the
// last 24 steps, the other blocks are older, and join the leak by their
// stack. ga_leak: 25 optimizer steps of 8 micro-batches, each micro-batch's
// 0-d loss kept (rec.py:75, 512 B blocks): 200. ctx_alloc_leak
// (context="alloc": frees have no frames) and stacks_all_amp_leak
// (stacks="all", bf16 autocast) keep each step's output (forward,
// rec.py:28): 50 x 131,072 B and 30 x 65,536 B.
func TestS36bLeaks(t *testing.T) {
	for _, c := range []struct {
		file  string
		line  int
		count int
		bytes int64
	}{
		{"wrap_leak", 49, 400, 400 * 262144},
		{"ga_leak", 75, 200, 200 * 512},
		{"ctx_alloc_leak", 28, 50, 50 * 131072},
		{"stacks_all_amp_leak", 28, 30, 30 * 65536},
	} {
		r := analyzeJSON(t, s36bDir+c.file+".pickle.gz")
		if f := one(t, r, "leak", "rec.py", c.line); f.Count != c.count || f.Bytes != c.bytes {
			t.Errorf("%s: leak of %d blocks, %d bytes at rec.py:%d; want %d, %d", c.file, f.Count, f.Bytes, c.line, c.count, c.bytes)
		}
	}
}

// TestS36bCleanRuns: runs that keep nothing across steps: the ring buffer
// wrapped, gradient accumulation with loss.item(), fp16 autocast with a
// GradScaler on a Transformer, activation checkpointing (reentrant and
// not), two models on two streams with a prefetch stream,
// torch.compile(mode="reduce-overhead"), a whole training step in a CUDA
// graph with a private pool, context="alloc".
func TestS36bCleanRuns(t *testing.T) {
	for _, c := range []string{"wrap_clean", "ga_clean", "amp_tx_clean", "ckpt_reentrant_clean",
		"ckpt_nonreentrant_clean", "streams_clean", "compile_ro_clean", "graph_step_clean", "ctx_alloc_clean"} {
		noLeak(t, analyzeJSON(t, s36bDir+c+".pickle.gz"))
	}
}

// TestS36bGraphReplayLoop: graph_step_clean warms a model up on a side
// stream and captures a whole training step in a CUDA graph (the capture's
// allocations carry no frames), then replays it 60 times, each time
// making a batch (batch, rec.py:31, from rec.py:190), copying it into the
// static input and dropping it. The 60 passes made 180 of the trace's 538
// entries, less than the share of the whole trace a marker must span, but
// they run to the trace's end: they are the run's 60 iterations (the
// trace showed "no repeating step"), and nothing grows across them.
func TestS36bGraphReplayLoop(t *testing.T) {
	r := analyzeJSON(t, s36bDir+"graph_step_clean.pickle.gz")
	noLeak(t, r)
	if n := r.Inputs[0].Devices[0].Iterations; n != 60 {
		t.Errorf("%d iterations, want the 60 replays", n)
	}
}
