package oom

import (
	"os"
	"strings"
	"testing"
)

// Session 48, f48o1 (testdata/README.md, "OOM counting, causes and
// wording (session 48, f48o1)"): real pastes found by tester t48a.

func f48o1Postmortem(t *testing.T, name string) *Postmortem {
	t.Helper()
	path := "pytorch/pastes/f48o1_" + name
	b, err := os.ReadFile("../../testdata/" + path)
	if err != nil {
		t.Fatal(err)
	}
	return NewPostmortem([]Input{textInput(t, path, string(b))}, PostmortemOptions{})
}

// One failure printed in two or more places is one OOM: vLLM's sampler
// warmup words printed before the CUDA message they re-raise (was 2
// OOMs, the engine's without figures); a comment's quote of the first
// half of the message in backticks (was 2: the closing backtick kept the
// quote from matching the message's start); a retry chain's last record
// cut mid-status, "CUDA_ERROR_OUT_OF_MEMORY: out" (was 2).
func TestF48o1OneFailureOnce(t *testing.T) {
	pm := f48o1Postmortem(t, "vllm_19445_sampler_warmup_wrapped_sentences.txt")
	if len(pm.OOMs) != 1 {
		t.Fatalf("vllm: %d OOMs, want 1", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.RequestedBytes != 252<<20 || len(r.Sources) != 2 || r.Sources[0].Line != 2 || r.Sources[1].Line != 5 {
		t.Errorf("vllm: request %d sources %+v, want 252 MiB from lines 2 and 5", r.RequestedBytes, r.Sources)
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "line 2 is the same failure") {
		t.Errorf("vllm: notes %q, want line 2 named the same failure", r.Notes)
	}
	pm = f48o1Postmortem(t, "therock_4598_gfx1151_free_above_total.txt")
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Sources) != 2 {
		t.Fatalf("therock: %d OOMs, want 1 from lines 8 and 13", len(pm.OOMs))
	}
	pm = f48o1Postmortem(t, "horovod_1350_mpirun_tf_cuda_driver.txt")
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Sources) != 7 {
		t.Fatalf("horovod: %d OOMs, want 1 from 7 lines", len(pm.OOMs))
	}
}

// More free memory than total (ROCm on gfx1151, an APU) is no discrete
// GPU's report: the total is not the limit, so a request above it is no
// capacity cause (was: capacity, "the 16.00 GiB request alone is more
// than the GPU's 15.49 GiB total ... the GPU had 84.98 GiB free").
func TestF48o1FreeAboveTotal(t *testing.T) {
	r := f48o1Postmortem(t, "therock_4598_gfx1151_free_above_total.txt").OOMs[0]
	for _, c := range r.Causes {
		if c.Name == CauseCapacity {
			t.Errorf("cause %s: %s; want none drawn from the total", c.Name, c.Evidence)
		}
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "84.98 GiB free of a 15.49 GiB total: more free than the total") {
		t.Errorf("notes %q, want the figures said", r.Notes)
	}
}

// A message cut after its list of processes: whichever listed process is
// this one, the others hold at least 8.23 GiB for a request 440.94 MiB
// short of the free memory (was: "PyTorch's memory is not among them, so
// the cause cannot be told").
func TestF48o1CutAfterProcesses(t *testing.T) {
	r := f48o1Postmortem(t, "verl_gdpo_wrapped_cut_message_and_smi_csv.md").OOMs[0]
	if len(r.Causes) != 1 || r.Causes[0].Name != CauseOtherProcesses {
		t.Fatalf("causes %+v, want other-processes", r.Causes)
	}
	if n := r.Causes[0].Numbers["other_processes_at_least_bytes"]; n < 8<<30 || n > 9<<30 {
		t.Errorf("others at least %d, want 8.23 GiB (all listed but the largest)", n)
	}
}

// Other processes that hold alike small amounts on the GPU (four of
// 398.00 MiB with consecutive PIDs; fifteen of 1.19 GiB) look like the
// job's own workers each making a context on GPU 0: the cause says so and
// the advice names per-rank device selection first (was: only "free the
// GPU from the other processes").
func TestF48o1SiblingWorkers(t *testing.T) {
	for _, name := range []string{"llamafactory_1936_capacty_five_processes.txt", "returnn_1469_every_worker_every_gpu.md"} {
		r := f48o1Postmortem(t, name).OOMs[0]
		var c *Cause
		for i := range r.Causes {
			if r.Causes[i].Name == CauseOtherProcesses {
				c = &r.Causes[i]
			}
		}
		if c == nil {
			t.Fatalf("%s: causes %+v, want other-processes", name, r.Causes)
		}
		if !strings.Contains(c.Evidence, "alike small amounts") || !strings.Contains(c.Evidence, "consecutive") {
			t.Errorf("%s: evidence %q, want the workers' pattern said", name, c.Evidence)
		}
		if !strings.HasPrefix(c.Advice, "if they are this job's workers") || !strings.Contains(c.Advice, "torch.cuda.set_device(local_rank)") {
			t.Errorf("%s: advice %q, want per-rank device selection", name, c.Advice)
		}
	}
}

// XLA quotes NCCL's last warning "(may be unrelated)" after the failed
// operation's own error ("unhandled cuda error"): the OOM is counted, and
// the note keeps the hedge (was: a definite NCCL OOM).
func TestF48o1NCCLMayBeUnrelated(t *testing.T) {
	r := f48o1Postmortem(t, "xla_7201_nccl_last_warning_may_be_unrelated.txt").OOMs[0]
	if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, `"may be unrelated"`) || !strings.Contains(notes, "if it is this failure's, NCCL could not allocate") {
		t.Errorf("notes %q, want the hedge kept", r.Notes)
	}
}

// Ollama's runner logs each load request it is sent ("msg=load
// request=\"{Operation:alloc ... GPULayers:37[...]"); after a failed load
// it retries with fewer layers: the same llama.cpp failure after such a
// line is another attempt (was: lines 2 and 5 merged, "no line of
// llama.cpp's between that shows it went on"; 2 OOMs, now 3).
func TestF48o1OllamaLoadRequests(t *testing.T) {
	pm := f48o1Postmortem(t, "ollama_13303_retry_chain_8mib.txt")
	if len(pm.OOMs) != 3 {
		t.Fatalf("%d OOMs, want 3 (lines 2, 5, 8)", len(pm.OOMs))
	}
	for i, line := range []int64{2, 5, 8} {
		if s := pm.OOMs[i].Sources; len(s) != 1 || s[0].Line != line {
			t.Errorf("OOM %d: sources %+v, want line %d", i+1, s, line)
		}
	}
}

// A results table's rows are runs: rows 9, 13 and 16 (hf_ckpt at full
// and 50% capacity, plain_amp) hold the same message cut at the cell's
// width, and are three OOMs (was: one, "from: :9, :13, :16").
func TestF48o1TableRowsAreRuns(t *testing.T) {
	pm := f48o1Postmortem(t, "memopro_t4_results_table_cells.md")
	var rows []int64
	for _, r := range pm.OOMs {
		for _, s := range r.Sources {
			if s.Line == 9 || s.Line == 13 || s.Line == 16 {
				if len(r.Sources) != 1 {
					t.Errorf("sources %+v, want line %d alone", r.Sources, s.Line)
				}
				rows = append(rows, s.Line)
				if !strings.Contains(strings.Join(r.Notes, " "), "3 rows of a table whose other cells differ hold this same message") {
					t.Errorf("line %d: notes %q, want the rows said", s.Line, r.Notes)
				}
			}
		}
	}
	if len(rows) != 3 {
		t.Errorf("rows %v, want 9, 13 and 16 each an OOM", rows)
	}
}

// The site is the allocation, not where its error surfaced: PyTorch's
// "CUDA error: out of memory" raised from torch.cuda.set_stream (through
// vLLM's _patched_set_stream), which allocates nothing, has no site and a
// note (was: site _patched_set_stream (utils.py:928)); numba's error
// helpers (_check_error, safe_cuda_api_call) over the cuMemAlloc call
// give the call's frame (was: _check_error (driver.py:323)).
func TestF48o1ReportedNotAllocated(t *testing.T) {
	r := f48o1Postmortem(t, "sglang_4547_cuda_error_set_stream.txt").OOMs[0]
	if r.Frame.Name != "" || len(r.Stack) != 0 {
		t.Errorf("sglang: site %+v, want none", r.Frame)
	}
	if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, "allocates no GPU memory of its own") || !strings.Contains(notes, "CUDA_LAUNCH_BLOCKING=1") {
		t.Errorf("sglang: notes %q, want where it was reported said", r.Notes)
	}
	r = f48o1Postmortem(t, "cudf_185_ipython_numba_chained.txt").OOMs[0]
	if r.Frame.Name != "allocator" || r.Frame.Line != 671 {
		t.Errorf("cudf: site %+v, want allocator (driver.py:671)", r.Frame)
	}
}
