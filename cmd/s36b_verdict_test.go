package cmd

import "testing"

// Recordings of testdata/pytorch/s36b/, made on an H200 (PyTorch 2.11) by
// testdata/gen/s36b/rec.py, each case in its own process (testdata/README.md
// gives each case's truth). Lines are those of rec.py as it ran.

const s36bDir = td + "pytorch/s36b/"

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
