package oom

import (
	"strings"
	"testing"
)

// Session 45, helper f45b (testdata/README.md, "OOM text fixes (session
// 45, f45b)"). The inputs are synthetic.

// "Used 15.75G of 15.75G hbm. Exceeded hbm capacity by 1.52M.": U and C
// round to the same figure, so U over C shows nothing, but the compiler
// states the shortfall (1.52M = 1.52*2^20 = 1593835.52, read to the
// byte as 1593836): capacity, with that figure as evidence. The old code
// read the excess and dropped it: no cause.
func TestF45bTPUExceededBy(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/synthetic_xla_tpu_hbm_exceeded_tiny.txt")
	if len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity {
		t.Fatalf("causes %v, want capacity", causeNames(r))
	}
	c := r.Causes[0]
	if c.Numbers["excess_bytes"] != 1593836 || !strings.Contains(c.Evidence, "Exceeded hbm capacity by") {
		t.Errorf("excess %d, evidence %.200q; want 1593836 and the compiler's figure named", c.Numbers["excess_bytes"], c.Evidence)
	}
}

// vLLM's start-up refusal with 0.5 of 79.19 GiB free (0.6%): the note
// advised "Lower gpu_memory_utilization to what is free (at most 0.00",
// a setting that starts nothing. Under 5% free the advice is to free the
// GPU, with no setting; the 19.77 of 22.05 GiB case keeps its 0.89
// (TestHunt45VLLMStartupFreeNote).
func TestF45bVLLMNothingFree(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/synthetic_vllm_startup_free_nearly_none.txt")
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "vLLM refused to start") || strings.Contains(notes, "Lower gpu_memory_utilization") || strings.Contains(notes, "at most 0.00") ||
		!strings.Contains(notes, "free the GPU") || !strings.Contains(notes, "0.6% of the GPU") {
		t.Errorf("notes %.300q, want only freeing the GPU, 0.6%% free", notes)
	}
}

// One crash printed twice with a progress line between, which the old
// code split into two OOMs ("the run went on after the first"):
//   - stdout_flushed: the traceback at line 4 reached <module>, so its
//     process ended; "step 98/99" (lines 5-6) are its stdout flushed at
//     exit, then a logger's copy (line 7).
//   - unmarked_tqdm: a logger's copy (line 2), an unmarked tqdm tick
//     (line 3, 55 -> 56), the traceback (line 9); the message names GPU 1,
//     so the tick may be rank 0's.
//
// Each is one OOM with both copies as sources and a note that it may be
// two.
func TestF45bFatalCopy(t *testing.T) {
	for p, lines := range map[string][2]int64{
		"pytorch/pastes/synthetic_oom_stdout_flushed_after_traceback.txt":      {4, 7},
		"pytorch/pastes/synthetic_oom_logger_then_traceback_unmarked_tqdm.txt": {2, 9},
	} {
		r := hunt44eOOM(t, p)
		notes := strings.Join(r.Notes, "\n")
		if r.Occurrences != 2 || len(r.Sources) < 2 || r.Sources[0].Line != lines[0] || r.Sources[1].Line != lines[1] ||
			!strings.Contains(notes, "two OOMs, or one reported twice") {
			t.Errorf("%s: %d occurrences, sources %v, notes %.200q; want lines %v, 'two OOMs, or one reported twice'", p, r.Occurrences, r.Sources, notes, lines)
		}
	}
}
