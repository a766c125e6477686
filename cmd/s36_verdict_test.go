package cmd

import (
	"strconv"
	"strings"
	"testing"
)

// An evaluation loop that keeps its outputs (`outs.append(model(x))`)
// over batches already on the GPU makes every allocation inside the
// model's call: no stack of the program's own marks its steps. Its passes
// are the calls from one line whose allocations repeat whole, when the
// program is seen outside those calls after the first (s36's real
// eval_keep_outputs returns and frees its locals: a leak,
// TestS36EvalLoopStacksAll). h_eval_outputs_N.pickle (the tester's
// cases2.py): N passes, each an 8 MiB temporary (freed) and a 1 MiB
// output (kept), both at forward (linear.py:125) < _call_impl < evaluate
// (train.py:50), and nothing else: no entry outside the calls, one
// module. One call whose forward makes N temporaries and N results at
// that line leaves the same trace, as one forward of repeating layers cut
// by an OOM does (TestS40OneForwardCutIsNoLoop): no repeating step, the N
// outputs retained, N MiB (until s40 a leak across N passes).
func TestEvalLoopKeepingOutputs(t *testing.T) {
	for _, n := range []int{5, 20} {
		path := td + "pytorch/s35/h_eval_outputs_" + strconv.Itoa(n) + ".pickle"
		r := analyzeJSON(t, path)
		noLeak(t, r)
		f := one(t, r, "retained", "train.py", 50)
		if f.Count != n || f.Bytes != int64(n)<<20 {
			t.Errorf("%s: retained %d blocks, %d bytes; want %d, %d MiB", path, f.Count, f.Bytes, n, n)
		}
		if it := r.Inputs[0].Devices[0].Iterations; it != 0 {
			t.Errorf("%s: %d iterations, want none", path, it)
		}
		if len(r.Inputs[0].Warnings) == 0 || !strings.Contains(r.Inputs[0].Warnings[0], "no repeating step") {
			t.Errorf("%s: warnings %q, want that the trace shows no repeating step", path, r.Inputs[0].Warnings)
		}
	}
}

// One forward pass of a 48-layer Sequential of one Block class
// (forward_many_layers.pickle, recorded on an H200: every ReLU output is
// saved for backward, so memory rises layer by layer) repeats exactly
// block after block, every allocation inside the same child forward: no
// pass of the model, and no leak.
func TestOneForwardOfRepeatedBlocks(t *testing.T) {
	r := analyzeJSON(t, td+"pytorch/forward_many_layers.pickle")
	if l := leaks(r); len(l) != 0 {
		t.Errorf("leaks %+v", l)
	}
}

// A loop whose only allocation is the tensor it keeps, fast, and a list
// comprehension leave the same trace: allocations at one line, back to
// back, microseconds apart. fragmentation_oom.pickle (the shared fixture,
// recorded on an H200: `while True: blocks.append(torch.empty(3 MiB))`)
// made its 858 allocations 2-121 µs apart (median 4 µs), 11 ms in all;
// append_burst_37us.pickle (tester s35) 20 of 1 MiB 37 µs apart. Neither
// can be judged: retained, and the finding says why, with the count, the
// size and the time, and that a loop and one statement cannot be told
// apart.
func TestFastLoopSaysItCannotTell(t *testing.T) {
	for _, c := range []struct {
		path, file string
		line       int
		want       string
	}{
		{td + "pytorch/fragmentation_oom.pickle", "fragmentation.py", 12, "858 allocations of 3.0 MiB made back to back at this line within 11 ms"},
		{td + "pytorch/s35/append_burst_37us.pickle", "train.py", 30, "20 allocations of 1.0 MiB made back to back at this line within 703 µs"},
	} {
		r := analyzeJSON(t, c.path)
		f := one(t, r, "retained", c.file, c.line)
		if !strings.Contains(f.Message, c.want) || !strings.Contains(f.Message, "one statement (a list comprehension) or a loop too fast to tell apart") {
			t.Errorf("%s: %q, want %q and that the two cannot be told apart", c.path, f.Message, c.want)
		}
	}
}
