package cmd

import (
	"strings"
	"testing"
)

// Recordings of testdata/pytorch/hv/, made on an H200 by
// testdata/gen/hv/rec.py (testdata/README.md). Each test asserts the truth
// the script planted: the blocks a "# LEAK" line keeps (the script's NOTE
// lines in testdata/gen/hv/driver.log count them) and, for the clean runs,
// that nothing is called a leak. Lines are those of rec.py.

const hvDir = td + "pytorch/hv/"

// noLeak fails when r holds a leak finding.
func noLeak(t *testing.T, r verdictReport) {
	t.Helper()
	for _, f := range leaks(r) {
		t.Errorf("leak on a clean run: %d blocks, %d bytes at %s (%s:%d): %s", f.Count, f.Bytes, f.Site.Function, f.Site.File, f.Site.Line, f.Message)
	}
}

// TestHVGradAccumLeak: 30 optimizer steps of 4 micro-batches; the last
// micro-batch's output is kept once per optimizer step (rec.py:61,
// 30 x 131,072 B). The micro-batch loop runs 4 times every step, so by
// the README's rule it is taken as the step: 120 iterations, the leak
// growing in one of every 4 (29 of the 119 measured: the 30th block is
// made in the last, unfinished, iteration).
func TestHVGradAccumLeak(t *testing.T) {
	r := analyzeJSON(t, hvDir+"grad_accum_leak.pickle")
	leak := one(t, r, "leak", "rec.py", 61)
	if leak.Count != 30 || leak.Bytes != 30*131072 {
		t.Errorf("leak %d blocks, %d bytes", leak.Count, leak.Bytes)
	}
	if g := leak.Growth; g == nil || g.Iterations != 120 || g.GrewIn != 29 {
		t.Errorf("leak growth %+v", leak.Growth)
	}
	if len(leaks(r)) != 1 {
		t.Errorf("leaks %+v", leaks(r))
	}
	// AdamW's state: 2 tensors per parameter (4 parameters), made by the
	// first opt.step() (rec.py:58), after the first 4 micro-batches.
	adam := one(t, r, "retained", "rec.py", 58)
	if adam.Count != 8 || adam.Growth == nil || adam.Growth.FirstIteration != 4 {
		t.Errorf("adam state %+v", adam)
	}
}

// TestHVGradAccumClean: the same run keeping nothing.
func TestHVGradAccumClean(t *testing.T) {
	noLeak(t, analyzeJSON(t, hvDir+"grad_accum_clean.pickle"))
}

// TestHVEvalLeak: 40 clean training steps; after every 10th an evaluation
// of 5 batches under no_grad appends its outputs to a list never cleared:
// 20 blocks of 131,072 B allocated at the model's forward (rec.py:38)
// called from evaluate (rec.py:78). Only the evaluation leaks.
func TestHVEvalLeak(t *testing.T) {
	r := analyzeJSON(t, hvDir+"eval_leak.pickle")
	ls := leaks(r)
	if len(ls) != 1 {
		t.Fatalf("leaks %+v", ls)
	}
	leak := ls[0]
	if leak.Count != 20 || leak.Bytes != 20*131072 || leak.Site.Line != 38 || len(leak.Stack) < 2 || leak.Stack[1].Function != "evaluate" || leak.Stack[1].Line != 78 {
		t.Errorf("leak %d blocks, %d bytes at line %d, stack %+v", leak.Count, leak.Bytes, leak.Site.Line, leak.Stack)
	}
	if g := leak.Growth; g == nil || g.Iterations != 40 || g.GrewIn != 3 {
		t.Errorf("leak growth %+v", leak.Growth)
	}
}

// TestHVWrappedLeak: max_entries=2000 over 300 steps each keeping 65,536 B
// (rec.py:191): all 300 blocks are held, only the last 39 steps are in the
// trace; the older 261 blocks join the leak by their site.
func TestHVWrappedLeak(t *testing.T) {
	r := analyzeJSON(t, hvDir+"wrapped_leak.pickle")
	leak := one(t, r, "leak", "rec.py", 191)
	if leak.Count != 300 || leak.Bytes != 300*65536 || !strings.Contains(leak.Message, "261 older than the trace") {
		t.Errorf("leak %d blocks, %d bytes: %s", leak.Count, leak.Bytes, leak.Message)
	}
	if len(leaks(r)) != 1 {
		t.Errorf("leaks %+v", leaks(r))
	}
}

// TestHVExpandableLeak: expandable_segments:True; 40 steps each keep a
// 4 MiB activation (rec.py:148).
func TestHVExpandableLeak(t *testing.T) {
	r := analyzeJSON(t, hvDir+"expandable_leak.pickle")
	leak := one(t, r, "leak", "rec.py", 148)
	if leak.Count != 40 || leak.Bytes != 40<<22 {
		t.Errorf("leak %d blocks, %d bytes", leak.Count, leak.Bytes)
	}
	if g := leak.Growth; g == nil || g.Iterations != 40 || g.GrewIn != 39 {
		t.Errorf("leak growth %+v", leak.Growth)
	}
	if len(leaks(r)) != 1 {
		t.Errorf("leaks %+v", leaks(r))
	}
}

// TestHVHookLeak: a tensor hook keeps the gradient of the hidden
// activation each of 30 steps (64 x 2048 fp32 = 524,288 B). Autograd's
// engine allocates it on its own thread, which has no Python frame: with
// stacks="python" the site has no stack.
func TestHVHookLeak(t *testing.T) {
	r := analyzeJSON(t, hvDir+"hook_leak.pickle")
	ls := leaks(r)
	if len(ls) != 1 || ls[0].Count != 30 || ls[0].Bytes != 30*524288 {
		t.Fatalf("leaks %+v", ls)
	}
	if g := ls[0].Growth; g == nil || g.Iterations != 30 || g.GrewIn != 29 {
		t.Errorf("leak growth %+v", ls[0].Growth)
	}
}

// TestHVCleanRuns: compiled, CUDA-graph, two-stream and autocast runs that
// keep nothing: no leak. The two-stream run's last step leaves its input
// and side output pending (record_stream), bounded to that step.
func TestHVCleanRuns(t *testing.T) {
	for _, name := range []string{"compile_clean", "cudagraph_clean", "two_streams_clean", "amp_clean"} {
		t.Run(name, func(t *testing.T) {
			r := analyzeJSON(t, hvDir+name+".pickle")
			noLeak(t, r)
			for _, f := range r.Findings {
				if f.Kind == "pending-free" && !strings.Contains(f.Message, "bounded") {
					t.Errorf("pending-free not bounded: %s", f.Message)
				}
			}
		})
	}
}

// oneOOM runs gpuleak oom --format json on files, which must hold one OOM,
// and returns its finding.
func oneOOM(t *testing.T, files []string) map[string]any {
	t.Helper()
	code, out, errOut := run(t, nil, append([]string{"oom", "--format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d %s", files, code, errOut)
	}
	_, fs := findings(t, out)
	ooms := ofKind(fs, "oom")
	if len(ooms) != 1 {
		t.Fatalf("%v: %d oom findings", files, len(ooms))
	}
	return ooms[0]
}

// TestHVOOMPeak: under set_per_process_memory_fraction (2 GiB allowed),
// a batch-size search (2048 more rows a step) runs out at step 7 asking
// for 128 MiB (16384 x 2048 fp32: a hidden activation); the OOM is caught
// and the snapshot dumped in the except block. The cap, not the GPU (137
// GiB free), refused it: memory-limit, and never fragmentation (48 MiB
// was the largest free block, 81 MiB free in all, less than asked). The
// snapshot, the message alone and the training log that printed it among
// its step lines (line 8) all say so.
func TestHVOOMPeak(t *testing.T) {
	for _, files := range [][]string{
		{hvDir + "oom_peak.pickle", hvDir + "oom_peak_error.txt", hvDir + "oom_peak_memory_summary.txt"},
		{hvDir + "oom_peak_train.log"},
	} {
		oom := oneOOM(t, files)
		if c := causes(oom); !has(c, "memory-limit") || has(c, "fragmentation") || has(c, "other-process") {
			t.Errorf("%v: causes %v", files, c)
		}
		if !strings.Contains(oom["message"].(string), "128.00 MiB requested") {
			t.Errorf("%v: %s", files, oom["message"])
		}
	}
}

// TestHVValidationLoopAfterTraining: 10 training steps, then 30
// validation batches run without no_grad whose losses are kept with their
// graphs (rec.py:170-174). Per batch the graph keeps the input (batch
// rec.py:42 called from :172, 131,072 B), three activations (forward
// rec.py:38 called from :173, 524,288 + 524,288 + 131,072 B) and the loss
// (:173, one 512 B block): a leak of 30 passes of the loop that ran after
// the training loop. That loop spans too little of the trace to mark the
// run's iterations (the 10 training steps do), so main counted all of it
// as made in the last, unfinished, training step: three "retained"
// findings, no leak.
func TestHVValidationLoopAfterTraining(t *testing.T) {
	r := analyzeJSON(t, hvDir+"val_graph_stacks_all.pickle")
	if d := r.Inputs[0].Devices[0]; d.Iterations != 10 {
		t.Errorf("device iterations %d, want the 10 training steps", d.Iterations)
	}
	for _, w := range []struct {
		line, count int
		bytes       int64
	}{{42, 30, 30 * 131072}, {38, 90, 30 * (524288 + 524288 + 131072)}, {173, 30, 30 * 512}} {
		var f *verdictFinding
		for _, l := range leaks(r) {
			if l.Site.Line == w.line && len(l.Stack) > 1 && (l.Stack[1].Line == 172 || l.Stack[1].Line == 173 || w.line == 173) {
				f = &l
			}
		}
		if f == nil {
			t.Errorf("no leak at rec.py:%d; leaks %+v", w.line, leaks(r))
			continue
		}
		if f.Count != w.count || f.Bytes != w.bytes {
			t.Errorf("rec.py:%d: %d blocks, %d bytes", w.line, f.Count, f.Bytes)
		}
		// Measured across the validation loop's 30 passes, the last not
		// ended: 29 rises; the message says which loop.
		if g := f.Growth; g == nil || g.Iterations != 30 || g.GrewIn != 29 || !strings.Contains(f.Message, "of the loop that ran after the run's 10 iterations (its passes start at case_val_graph_stacks_all (rec.py:172))") {
			t.Errorf("rec.py:%d growth %+v: %s", w.line, f.Growth, f.Message)
		}
	}
	if len(leaks(r)) != 3 {
		t.Errorf("%d leaks, want 3", len(leaks(r)))
	}
	// The training's memory is still judged against the training steps.
	adam := one(t, r, "retained", "rec.py", 169)
	if adam.Count != 8 || adam.Growth == nil || adam.Growth.Iterations != 10 {
		t.Errorf("adam state %+v", adam)
	}
}

// TestHVNoStackAdvice: the advice about allocations with no stack must fit
// why they have none. These runs were recorded with stacks="python": in
// two_streams_clean and cudagraph_clean the stackless blocks are the
// weights made before recording started (8 and 7 blocks, their own
// warning says so), which stacks="python" would not name; in hook_leak 31
// of the 44 allocations the trace made and left live have no Python frame
// (the gradients autograd's engine made on its own thread; the other 13
// have stacks), which only stacks="all" names. main advised
// stacks="python" for all three.
func TestHVNoStackAdvice(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"two_streams_clean", ""},
		{"cudagraph_clean", ""},
		{"hook_leak", `31 of the 44 live allocations made during the trace have no stack while the others have one`},
	} {
		r := analyzeJSON(t, hvDir+c.name+".pickle")
		got := ""
		for _, w := range r.Inputs[0].Warnings {
			if strings.Contains(w, "no stack") {
				got = w
			}
		}
		if strings.Contains(got, `stacks=\"python\"`) || strings.Contains(got, `stacks="python"`) {
			t.Errorf("%s: advises stacks=\"python\", which the run used: %s", c.name, got)
		}
		if c.want == "" && got != "" || c.want != "" && (!strings.Contains(got, c.want) || !strings.Contains(got, `stacks="all"`)) {
			t.Errorf("%s: no-stack warning %q, want %q", c.name, got, c.want)
		}
	}
}

// TestInputOfAGrowingStep: the counterpart of TestBufferReplacedByBiggerOne.
// Each step allocates its input, (i+1) MiB at :33, freeing the previous
// one, and its 4 layer activations grow with it (2(i+1) MiB each, a batch
// made bigger every step: a batch-size search, a sequence-length
// curriculum): the rest of the step allocates 8 MiB more every step, more
// than the input's 1 MiB. One block held, the step's latest input:
// retained, not a leak. In TestBufferReplacedByBiggerOne the rest of the
// step stays the same size, and the buffer is a leak.
func TestInputOfAGrowingStep(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	prev := int64(-1)
	for i := 0; i < 100; i++ {
		b := s.alloc(1<<20, userAt(20))
		n := s.alloc(int64(i+1)<<20, userAt(33))
		if prev >= 0 {
			s.free(prev)
		}
		prev = n
		var acts []int64
		for l := 0; l < 4; l++ {
			acts = append(acts, s.alloc(int64(i+1)<<21, append(append([]snapFrame{}, moduleFrames...), userAt(22)...)))
		}
		for _, a := range acts {
			s.free(a)
		}
		s.free(b)
	}
	r := analyzeJSON(t, s.write(t, 0))
	if ls := leaks(r); len(ls) != 0 {
		t.Errorf("leaks %+v", ls)
	}
	f := one(t, r, "retained", "train.py", 33)
	if f.Bytes != 100<<20 || !strings.Contains(f.Message, "the step itself grew") {
		t.Errorf("%d bytes: %s", f.Bytes, f.Message)
	}
}

// TestHVOOMPeakNoLeak: the batch-size search of oom_peak holds one input
// block (x, rec.py:273: 16384 x 1024 fp32 = 64 MiB, the failed step's),
// replaced by a bigger one each step as the whole step grew; main called
// it a leak (+8 MiB per iteration) beside the OOM. Nothing was kept.
func TestHVOOMPeakNoLeak(t *testing.T) {
	r := analyzeJSON(t, hvDir+"oom_peak.pickle")
	noLeak(t, r)
	x := one(t, r, "retained", "rec.py", 273)
	if x.Count != 1 || x.Bytes != 64<<20 || !strings.Contains(x.Message, "the step itself grew") {
		t.Errorf("input %d blocks, %d bytes: %s", x.Count, x.Bytes, x.Message)
	}
}

// TestLoopAfterTheIterations: 60 training steps (the batch at :20 and 8
// layers' activations, all freed), then a validation loop of 30 passes:
// a batch at :40 and 2 layers' activations (2 MiB each, in module calls
// called from :42), about a tenth of the trace, too little to mark the
// run's iterations. When keep is set, each pass keeps its last activation
// (a list of outputs never cleared: 30 x 2 MiB, a leak across the
// validation loop's 30 passes); when not, everything is freed but the
// last pass's batch, which the loop's variable still holds (retained,
// made in the last pass). The run's iterations stay the 60 training steps
// either way.
func TestLoopAfterTheIterations(t *testing.T) {
	for _, keep := range []bool{true, false} {
		s := newSnapBuilder()
		s.weights()
		for i := 0; i < 60; i++ {
			s.step(8)
		}
		valAct := func() []snapFrame {
			return append(append([]snapFrame{}, moduleFrames...), snapFrame{"validate", "/home/user/train.py", 42}, snapFrame{"<module>", "/home/user/train.py", 99})
		}
		prevBatch := int64(-1)
		for i := 0; i < 30; i++ {
			b := s.alloc(1<<20, []snapFrame{{"validate", "/home/user/train.py", 40}, {"<module>", "/home/user/train.py", 99}})
			if prevBatch >= 0 {
				s.free(prevBatch)
			}
			prevBatch = b
			var acts []int64
			for l := 0; l < 2; l++ {
				acts = append(acts, s.alloc(2<<20, valAct()))
			}
			for j, a := range acts {
				if keep && j == len(acts)-1 {
					continue
				}
				s.free(a)
			}
		}
		r := analyzeJSON(t, s.write(t, 0))
		if d := r.Inputs[0].Devices[0]; d.Iterations != 60 {
			t.Errorf("keep=%v: %d iterations, want the 60 training steps", keep, d.Iterations)
		}
		ls := leaks(r)
		if !keep {
			if len(ls) != 0 {
				t.Errorf("clean validation: leaks %+v", ls)
			}
			b := one(t, r, "retained", "train.py", 40)
			if b.Count != 1 || b.Growth == nil || b.Growth.FirstIteration != 30 {
				t.Errorf("clean validation: batch %+v", b)
			}
			continue
		}
		if len(ls) != 1 || ls[0].Count != 30 || ls[0].Bytes != 30*2<<20 {
			t.Fatalf("leaks %+v", ls)
		}
		if g := ls[0].Growth; g == nil || g.Iterations != 30 || g.GrewIn != 29 || !strings.Contains(ls[0].Message, "of the loop that ran after the run's 60 iterations (its passes start at validate (train.py:40))") {
			t.Errorf("growth %+v: %s", ls[0].Growth, ls[0].Message)
		}
	}
}

// TestHVOOMPeakLastStep: at rec.py:38 oom_peak holds 4 blocks, 1.03 GiB:
// two of 512 MiB (16384 x 8192 x 4 B, the activations of the step that hit
// the OOM, made in its last, unfinished iteration and kept by the caught
// exception) beside 33 MiB held from iteration 2 on. The plateau, measured
// at iteration starts, is 33 MiB: the message must not leave the 1 GiB
// unexplained behind "bounded ... a plateau of 33 MiB".
func TestHVOOMPeakLastStep(t *testing.T) {
	r := analyzeJSON(t, hvDir+"oom_peak.pickle")
	f := one(t, r, "retained", "rec.py", 38)
	if !strings.Contains(f.Message, "plateau of 33 MiB") || !strings.Contains(f.Message, "2 of the 4 allocations (1.0 GiB) were made in iteration 8, the last, which had not ended") {
		t.Errorf("message: %s", f.Message)
	}
}

// TestGrowingStepChecksBounded: the growing-step rule replays the log once
// per site it is asked about, so a device answers at most 64 such checks.
// 70 sites each replaced by a bigger block every iteration, beside a step
// whose activations grow: the first 64 asked are its inputs (retained), the
// other 6 stay leaks, as before the rule.
func TestGrowingStepChecksBounded(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	prev := make([]int64, 70)
	for i := range prev {
		prev[i] = -1
	}
	for i := 0; i < 40; i++ {
		b := s.alloc(1<<20, userAt(20))
		for j := range prev {
			n := s.alloc(int64(i+1)<<16, userAt(100+j))
			if prev[j] >= 0 {
				s.free(prev[j])
			}
			prev[j] = n
		}
		var acts []int64
		for l := 0; l < 4; l++ {
			acts = append(acts, s.alloc(int64(i+1)<<22, append(append([]snapFrame{}, moduleFrames...), userAt(22)...)))
		}
		for _, a := range acts {
			s.free(a)
		}
		s.free(b)
	}
	r := analyzeJSON(t, s.write(t, 0))
	grew := 0
	for _, f := range r.Findings {
		if f.Kind == "retained" && strings.Contains(f.Message, "the step itself grew") {
			grew++
		}
	}
	if grew != 64 || len(leaks(r)) != 6 {
		t.Errorf("%d sites judged inputs of the growing step, %d leaks; want 64 and 6", grew, len(leaks(r)))
	}
}
