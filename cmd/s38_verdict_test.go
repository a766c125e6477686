package cmd

import (
	"strings"
	"testing"
)

// Recordings of testdata/pytorch/s36/ and testdata/pytorch/s38/, made on an
// H200 (PyTorch 2.11.0+cu130) by testdata/gen/s36/record.py and
// testdata/gen/s38/record.py, each case in its own process; lines are
// those of the scripts as they ran (testdata/README.md gives each case's
// truth).

const s36Dir = td + "pytorch/s36/"
const s38Dir = td + "pytorch/s38/"

// TestS36EvalLoopStacksAll: an evaluation loop over 24 batches already on
// the GPU, `outs.append(model(data[i]))` (record.py:19) under no_grad,
// with model Linear(1024, 2048), ReLU, Linear(2048, 512): each pass keeps
// its 256 x 512 fp32 output (524,288 B) and frees the rest. Recorded with
// stacks="python" and with stacks="all"; the C++ frames of the second put
// the program's frames in one place on the addmm allocations and at the
// stack's end on the relu's, so the calls from line 19 were split in two
// callers, neither calling two distinct modules, and the loop was not
// seen ("no repeating step", the outputs retained). Both are the same
// leak: 24 blocks, 12 MiB, over 24 passes, rising in all 23 measured.
func TestS36EvalLoopStacksAll(t *testing.T) {
	const out = 256 * 512 * 4
	for _, name := range []string{"eval_keep_outputs.pickle", "eval_keep_outputs_all.pickle"} {
		r := analyzeJSON(t, s36Dir+name)
		f := one(t, r, "leak", "record.py", 19)
		if f.Count != 24 || f.Bytes != 24*out {
			t.Errorf("%s: leak of %d blocks, %d bytes; want 24 of %d", name, f.Count, f.Bytes, out)
		}
		if g := f.Growth; g == nil || g.Iterations != 24 || g.GrewIn != 23 {
			t.Errorf("%s: growth %+v, want 24 iterations, rising in 23", name, f.Growth)
		}
	}
}

// TestS36OtherLoops: the script's other cases. eval_keep_cpu keeps host
// copies: no leak. append_tight, listcomp and genexpr make 24 tensors of
// 4 MiB at one line back to back: nothing tells a loop from one statement,
// no leak, the 24 blocks retained. mlp_forward is one training-mode
// forward of 12 identical (Linear, ReLU) pairs: no leak. eval_keep_graph
// (no no_grad, each loss kept with its graph) keeps per pass the ReLU
// output the second Linear saved (256 x 2048 fp32, 2 MiB), that Linear's
// output mse_loss saved (512 KiB) and a 524,288 B block mse_loss makes
// (the trace, read in plain Python, shows one a pass under mse_loss never
// freed): its passes free the first Linear's output, so the loop is seen,
// and it is a leak of 72 blocks, 72 MiB. train_keep_loss keeps each
// loss; backward frees the saved activations, and what stays is the
// 524,288 B block mse_loss made at record.py:59 each step: a leak of 24.
func TestS36OtherLoops(t *testing.T) {
	for _, name := range []string{"eval_keep_cpu", "append_tight", "listcomp", "genexpr", "mlp_forward"} {
		noLeak(t, analyzeJSON(t, s36Dir+name+".pickle"))
	}
	for _, c := range []struct {
		name string
		line int
	}{{"append_tight", 72}, {"listcomp", 79}, {"genexpr", 86}} {
		r := analyzeJSON(t, s36Dir+c.name+".pickle")
		if f := one(t, r, "retained", "record.py", c.line); f.Count != 24 || f.Bytes != 24<<22 {
			t.Errorf("%s: retained %d blocks, %d bytes; want 24 of 4 MiB", c.name, f.Count, f.Bytes)
		}
	}
	r := analyzeJSON(t, s36Dir+"eval_keep_graph.pickle")
	if f := one(t, r, "leak", "record.py", 42); f.Count != 72 || f.Bytes != 72<<20 {
		t.Errorf("eval_keep_graph: leak of %d blocks, %d bytes; want 72, 72 MiB", f.Count, f.Bytes)
	}
	r = analyzeJSON(t, s36Dir+"train_keep_loss.pickle")
	if f := one(t, r, "leak", "record.py", 59); f.Count != 24 || f.Bytes != 24*524288 {
		t.Errorf("train_keep_loss: leak of %d blocks, %d bytes; want 24 of 524,288", f.Count, f.Bytes)
	}
}

// TestS38CacheFullLateRareMisses: 30 steps, each reading a 1 MiB feature
// block (feature, record.py:45) through an LRU of 16. The script's keys
// miss in steps 0-18 except 4, 9 and 14 (16 misses: full in step 18,
// 0-based) and afterwards only in steps 22 and 26, each evicting the
// least recently used entry. Its live memory rises 16 times, the last in
// step 18, and stays at 16 MiB while two of the blocks it holds at the
// end are made after that, in two iterations, neither the last ones: a
// cache at its capacity, retained, not a leak that stopped (it was one:
// the rule asked for replacements in 4 iterations holding a quarter of
// the growth, which a cache that rarely misses never makes).
func TestS38CacheFullLateRareMisses(t *testing.T) {
	r := analyzeJSON(t, s38Dir+"lru_late_rare.pickle")
	noLeak(t, r)
	f := one(t, r, "retained", "record.py", 45)
	if f.Count != 16 || f.Bytes != 16<<20 {
		t.Errorf("retained %d blocks, %d bytes; want 16 of 1 MiB", f.Count, f.Bytes)
	}
	if !strings.Contains(f.Message, "bounded") || !strings.Contains(f.Message, "2 of the 16 allocations") {
		t.Errorf("the message should say it is bounded and that 2 of the 16 blocks were made at the plateau: %s", f.Message)
	}
}

// TestS38GraphReplayThenTeardown: a 16-layer MLP's inference captured in
// a CUDA graph, replayed 30 times with a new 256 x 512 batch copied in
// (record.py:84), then a teardown longer than the loop in trace entries
// (the graph deleted, the state dict cloned, the model deleted,
// empty_cache, 64 buffers made and freed, a concatenation made and
// freed). The 30 replays are the run's iterations; with leak, each keeps
// sy.clone() (record.py:88, 512 KiB): 30 blocks, 15 MiB; without, no leak.
func TestS38GraphReplayThenTeardown(t *testing.T) {
	r := analyzeJSON(t, s38Dir+"graph_teardown_leak.pickle")
	if n := r.Inputs[0].Devices[0].Iterations; n != 30 {
		t.Errorf("leak: %d iterations, want the 30 replays", n)
	}
	if f := one(t, r, "leak", "record.py", 88); f.Count != 30 || f.Bytes != 30*524288 {
		t.Errorf("leak of %d blocks, %d bytes; want 30 of 524,288", f.Count, f.Bytes)
	}
	r = analyzeJSON(t, s38Dir+"graph_teardown_clean.pickle")
	noLeak(t, r)
	if n := r.Inputs[0].Devices[0].Iterations; n != 30 {
		t.Errorf("clean: %d iterations, want the 30 replays", n)
	}
}

// TestS38GraphRecapture: each of 30 steps captures a new CUDA graph of
// relu(sx @ W) (record.py:133, 256 x 1024 fp32) and keeps it with its
// output: the relu's 1 MiB block stays in each graph's private pool.
// PyTorch 2.11 gives allocations made while capturing the Python frames
// of the line that made them, so the leak has its line: 30 blocks, 30 MiB.
func TestS38GraphRecapture(t *testing.T) {
	r := analyzeJSON(t, s38Dir+"graph_recapture_leak.pickle")
	if f := one(t, r, "leak", "record.py", 133); f.Count != 30 || f.Bytes != 30<<20 {
		t.Errorf("leak of %d blocks, %d bytes; want 30 of 1 MiB", f.Count, f.Bytes)
	}
}

// TestS38GraphReplayThenLongTeardown: the same replay loop (30 passes, a
// batch copied in at teardown_long.py:31) followed by a teardown about
// three times as long in trace entries (the loop's passes span 27% of
// the trace, less than a marker must, and do not run to its end): the
// graph and the model deleted, the state dict cloned, four statements of
// 64 buffers each made and freed, a concatenation made and freed. The
// teardown does no compute and leaves nothing held, so the loop before it
// is the run's repeating step; with leak each replay keeps sy.clone()
// (teardown_long.py:35, 512 KiB): 30 blocks, 15 MiB, which had been
// retained with "no repeating step". Without the clone, no leak.
func TestS38GraphReplayThenLongTeardown(t *testing.T) {
	r := analyzeJSON(t, s38Dir+"graph_teardown_long_leak.pickle")
	if n := r.Inputs[0].Devices[0].Iterations; n != 30 {
		t.Errorf("leak: %d iterations, want the 30 replays", n)
	}
	if f := one(t, r, "leak", "teardown_long.py", 35); f.Count != 30 || f.Bytes != 30*524288 {
		t.Errorf("leak of %d blocks, %d bytes; want 30 of 524,288", f.Count, f.Bytes)
	}
	noLeak(t, analyzeJSON(t, s38Dir+"graph_teardown_long_clean.pickle"))
}
