package pytorchtext

import (
	"slices"
	"strings"
	"testing"
)

// llama.cpp's compute buffer reservation that failed with pipeline
// parallelism and was retried without it (ggml-org/llama.cpp PR #16748;
// ggmlretry.go). Before, every llama.cpp cudaMalloc failure was an OOM
// row at once, and --fail-on oom tripped on a server that loaded and ran.
//
//   - ggml-org/llama.cpp PR #26297's pasted log: the failure (line 2), its
//     chain, the retry (line 5), then "srv load_model: initializing,
//     n_slots = 1" (line 6): the retry succeeded, so no OOM row; one
//     warning among NotOOMs that names the retry's line and the line that
//     shows it succeeded.
//   - the same shape with llama-server's newer lines (synthetic, from a
//     public test fixture's lines): the compute buffer sizes after the
//     retry (line 6) are the success.
//   - PR #16748's own comment, cut at the retry line (LostRuins' log):
//     the text ends before the outcome: the OOM row stays (line 4), with
//     a warning that the outcome cannot be told.
//   - a retry that fails too (synthetic: the retry's own smaller
//     cudaMalloc failure on line 7, then "failed to allocate compute pp
//     buffers", as llama-context.cpp throws): both failures are OOM rows
//     (lines 3 and 7), and a warning says the retry failed too.
//   - gpustack/gpustack#1269's llama-server log: a KV cache allocation
//     that fails at load, no retry, the context not created: the OOM row
//     stays (line 4), no note.
func TestLlamaRetry(t *testing.T) {
	for _, c := range []struct {
		file   string
		lines  []int64 // of the OOM rows
		notOOM []string
		warn   string
	}{
		{"pastes/llamacpp_retry_recovered_llamacpp26297.txt", nil, []string{"an allocation failure (allocating 51748.72 MiB on device 1", "retried without pipeline parallelism (line 5)", "the retry succeeded (line 6:", "not counted"}, ""},
		{"pastes/synthetic_llamacpp_retry_recovered_server.txt", nil, []string{"(line 5)", "the retry succeeded (line 6:", "compute buffer size"}, ""},
		{"pastes/llamacpp_retry_cut_llamacpp16748.txt", []int64{4}, nil, "the text ends before any line that tells whether the retry succeeded"},
		{"pastes/llamacpp_kvcache_load_failed_gpustack1269.txt", []int64{4}, nil, ""},
		{"pastes/synthetic_llamacpp_retry_failed.txt", []int64{3, 7}, nil, "retried without pipeline parallelism (line 6) after an allocation failure (allocating 12710.31 MiB on device 0: cudaMalloc failed: out of memory), and the retry failed too (line 7"},
	} {
		rs := readFile(t, c.file, false)
		var lines []int64
		for _, m := range rs.msgs {
			lines = append(lines, m.line)
		}
		if !slices.Equal(lines, c.lines) {
			t.Errorf("%s: OOM rows on lines %v, want %v", c.file, lines, c.lines)
		}
		notes := rs.meta.NotOOMs.Strings()
		if (len(notes) == 1) != (c.notOOM != nil) || len(notes) > 1 {
			t.Errorf("%s: %d not-OOM notes, want %v: %.300q", c.file, len(notes), c.notOOM != nil, notes)
		}
		for _, w := range c.notOOM {
			if len(notes) == 1 && !strings.Contains(notes[0], w) {
				t.Errorf("%s: note lacks %q: %.300q", c.file, w, notes[0])
			}
		}
		if c.warn != "" && !strings.Contains(strings.Join(rs.meta.Warnings.Strings(), "\n"), c.warn) {
			t.Errorf("%s: no warning %q: %.300q", c.file, c.warn, rs.meta.Warnings.Strings())
		}
	}
}

// A llama.cpp failure's chain closed by its caller's line
// ("llama_kv_cache_update_impl: failed to allocate compute buffers") is
// the evidence that the next same failure is another call: the messages
// table's progress_line of each failure after the first is the caller's
// line of the one before (ggml-org/llama.cpp#11476: failures on lines 1,
// 4 and 7, callers on 3 and 6), and the first has none.
func TestLlamaProgressLine(t *testing.T) {
	rs := readFile(t, "pastes/llamacpp_kvupdate_three_llamacpp11476.txt", false)
	if len(rs.msgs) != 3 {
		t.Fatalf("%d messages, want 3", len(rs.msgs))
	}
	want := []int64{0, 3, 6}
	for i, m := range rs.msgs {
		if m.progress != want[i] {
			t.Errorf("message on line %d: progress_line %d, want %d", m.line, m.progress, want[i])
		}
	}
}

// llama-server's lines of a request served count as its progress too: a
// failure after "slot update_slots: id  0 | task 0 | ..." (line 2 of a
// synthetic log) has progress_line 2; in ggml-org/llama.cpp#11476's
// served-then-failed excerpt (its server's start and first request, lines
// 1 to 7, then its failure chains from line 8: the stored excerpts skip
// what came between), the failures on lines 9 and 12 have the callers'
// lines before them, 8 and 11.
func TestLlamaServerProgress(t *testing.T) {
	rs, err := readText(t, "served.txt", "slot launch_slot_: id  0 | task 3 | processing task\nslot update_slots: id  0 | task 3 | new prompt, n_ctx_slot = 4096\n"+
		"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 100.00 MiB on device 0: cudaMalloc failed: out of memory\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 || rs.msgs[0].progress != 2 {
		t.Errorf("messages %+v, want one with progress_line 2", rs.msgs)
	}
	rs = readFile(t, "pastes/llamacpp_served_then_failed_llamacpp11476.txt", false)
	if len(rs.msgs) != 2 || rs.msgs[0].line != 9 || rs.msgs[0].progress != 8 || rs.msgs[1].line != 12 || rs.msgs[1].progress != 11 {
		t.Errorf("messages %+v, want lines 9 and 12 with progress_line 8 and 11", rs.msgs)
	}
}

// Two Java exceptions' statuses on one line (a log that lost its line
// ends) are two messages, the first not lost when the second is held for
// its stack.
func TestJavaTwoOnALine(t *testing.T) {
	rs, err := readText(t, "two.txt", "jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY\n\tat jcuda.driver.JCudaDriver.cuMemAlloc(JCudaDriver.java:9)\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 2 {
		t.Errorf("%d messages, want 2: %+v", len(rs.msgs), rs.msgs)
	}
}
