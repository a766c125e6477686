package cmd

import (
	"strings"
	"testing"
)

// Recordings of testdata/pytorch/s39/, made on an H200 (PyTorch
// 2.11.0+cu130, transformers 5.17.0) by testdata/gen/s39/record.py, each
// case in its own process; lines are the script's, and the expected counts
// are the script's NOTE lines (the distinct storages the kept tensors hold,
// and their bytes), or worked out from its shapes below.

const s39Dir = td + "pytorch/s39/"

// TestS39LeakOfVaryingSizes: a tensor kept every step whose shape follows
// the step's batch. server_leak (and the same run recorded with the legacy
// _record_memory_history(True, trace_alloc_max_entries=N,
// trace_alloc_record_context=True)) keeps every response of 60 batches of
// 1..32 requests; each response is a view of its batch's output made at
// record.py:215 (bs x 512 fp32), so all 60 output blocks stay: NOTE "holding
// 60 1888256". compile_dyn_leak keeps out.detach() of 30 compiled steps on
// batches of 8 x L x 256 fp32, L drawn from 8..64 and 96 once (8,192 L
// bytes, a multiple of 512: the block is the tensor): NOTE "kept 30
// 9551872", made at record.py:124. The first matmul through each line
// also made cuBLAS's workspaces there (32 MiB + 1 MiB), retained. Sizes
// that come once each rose in one iteration only, and were peeled off as
// "made in one burst": the leak was 54 of 60 blocks and 9 of 30 (the other
// 21 outputs retained beside the workspaces).
func TestS39LeakOfVaryingSizes(t *testing.T) {
	const workspaces = 32<<20 + 1<<20
	for _, c := range []struct {
		name  string
		line  int
		count int
		bytes int64
	}{
		{"server_leak.pickle", 215, 60, 1888256},
		{"legacy_ctx_server_leak.pickle", 215, 60, 1888256},
		{"compile_dyn_leak.pickle.gz", 124, 30, 9551872},
	} {
		r := analyzeJSON(t, s39Dir+c.name)
		f := one(t, r, "leak", "record.py", c.line)
		if f.Count != c.count || f.Bytes != c.bytes {
			t.Errorf("%s: leak of %d blocks, %d bytes; want %d, %d", c.name, f.Count, f.Bytes, c.count, c.bytes)
		}
		h := one(t, r, "retained", "record.py", c.line)
		if h.Count != 2 || h.Bytes != workspaces {
			t.Errorf("%s: retained %d blocks, %d bytes at :%d; want the 2 workspaces, %d", c.name, h.Count, h.Bytes, c.line, workspaces)
		}
	}
}

// TestS39OtherLeaks: varlen_leak (and its stacks="all" twin) keeps the last
// position's logits, 16 x 1000 fp32 = 64,000 B, of each of 40 steps
// (record.py:85); hf_trainer_leak's TrainerCallback keeps a clone of the
// token embedding, 1000 x 64 fp32 = 256,000 B, at each of 40 steps
// (record.py:171).
func TestS39OtherLeaks(t *testing.T) {
	for _, c := range []struct {
		name  string
		line  int
		bytes int64
	}{
		{"varlen_leak.pickle.gz", 85, 40 * 64000},
		{"all_varlen_leak.pickle.gz", 85, 40 * 64000},
		{"hf_trainer_leak.pickle.gz", 171, 40 * 256000},
	} {
		r := analyzeJSON(t, s39Dir+c.name)
		if f := one(t, r, "leak", "record.py", c.line); f.Count != 40 || f.Bytes != c.bytes {
			t.Errorf("%s: leak of %d blocks, %d bytes; want 40, %d", c.name, f.Count, f.Bytes, c.bytes)
		}
		if n := len(leaks(r)); n != 1 {
			t.Errorf("%s: %d leaks, want 1", c.name, n)
		}
	}
}

// TestS39NoLeak: padded batches whose longest sequence grows late (step 30
// at 320 tokens, all before at most 128), torch.compile recompiling for
// dynamic shapes, a transformers Trainer, a server whose response cache
// evicts all but the last 96 requests (7 blocks held at the end, NOTE), and
// cudnn.benchmark autotuning 4 input shapes: none keeps anything across
// steps.
func TestS39NoLeak(t *testing.T) {
	for _, name := range []string{"varlen_clean.pickle.gz", "compile_dyn_clean.pickle.gz",
		"hf_trainer_clean.pickle.gz", "server_bounded.pickle", "alloc_server_bounded.pickle",
		"cudnn_bench_clean.pickle.gz", "state_varlen_clean.pickle.gz"} {
		noLeak(t, analyzeJSON(t, s39Dir+name))
	}
}

// TestS39TraceWithoutStacks: server_leak recorded with context="state" and
// with the legacy _record_memory_history(True, trace_alloc_max_entries=N)
// (trace_alloc_record_context off): the blocks name their site, the trace's
// entries carry no stack, so no iteration can be found and growth cannot
// be judged: no leak is claimed, the warning says so, and no finding may
// say its memory is "not growing" (the 60 kept outputs were growing).
func TestS39TraceWithoutStacks(t *testing.T) {
	for _, name := range []string{"state_server_leak.pickle", "legacy_server_leak.pickle"} {
		r := analyzeJSON(t, s39Dir+name)
		noLeak(t, r)
		w := strings.Join(r.Inputs[0].Warnings, "\n")
		if !strings.Contains(w, "growth across iterations cannot be judged") {
			t.Errorf("%s: warnings %q", name, w)
		}
		for _, f := range r.Findings {
			if strings.Contains(f.Message, "not growing") {
				t.Errorf("%s: %s", name, f.Message)
			}
			// The trace may have had a repeating step: its entries have
			// no stack to find one by.
			if f.Kind == "retained" && (strings.Contains(f.Message, "no repeating step") || !strings.Contains(f.Message, "carry no stacks")) {
				t.Errorf("%s: %s", name, f.Message)
			}
		}
		// The table's GROWTH cell (fields: #, KIND, DEVICE, BYTES as number
		// and unit, BLOCKS, GROWTH): "?" (cannot tell), never "none".
		code, out, _ := run(t, nil, "analyze", s39Dir+name)
		if code != 0 {
			t.Fatalf("%s: exit %d", name, code)
		}
		for _, line := range strings.Split(out, "\n") {
			if fs := strings.Fields(line); len(fs) > 6 && fs[1] == "retained" && fs[6] != "?" {
				t.Errorf("%s: GROWTH %q in %q, want ?", name, fs[6], line)
			}
		}
	}
}
