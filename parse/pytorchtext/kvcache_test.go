package pytorchtext

import (
	"strings"
	"testing"
	"time"
)

// LLM serving engines' KV cache failures at start-up (GenKVCache): vLLM's
// "No available memory for the cache blocks" behind docker compose's and
// vLLM's log prefixes (vllm issue 10439), V1's "To serve at least one
// request ..." with its figures (tpu-inference pull request 223) and wrapped
// mid-word by a terminal (intel-arc-pro-b70-inference-cookbook issue 4),
// SGLang's "Not enough memory" (sglang issue 4330). Before: no message
// ("no CUDA out-of-memory message in it"). The source line quoting the
// words in vLLM's traceback, and prose naming them, are not messages.
func TestKVCacheFailures(t *testing.T) {
	for _, c := range []struct {
		file  string
		lines []int64
	}{
		{"pastes/kvcache_vllm_compose_10439.txt", []int64{4, 17}},
		{"pastes/kvcache_vllm_v1_tpu223.txt", []int64{5}},
		{"pastes/kvcache_vllm_v1_wrapped_b70cookbook4.txt", []int64{18}},
		{"pastes/kvcache_sglang_between_errors_sglang4330.txt", []int64{3}},
		// TGI's warmup failure in an issue title, inside a code span in
		// the router's Debug form (`Error: Warmup(Generation("...`"))`),
		// and LoRAX's three lines of it: the exception, the router's
		// "Server error: " record, the Debug form.
		{"pastes/tgi_warmup_prefill_title_tgi755.txt", []int64{1}},
		{"pastes/tgi_warmup_prefill_lorax354.txt", []int64{2, 3, 4}},
		// vLLM V1's sampler warmup that met a CUDA OOM, behind two
		// workers' prefixes (the source line between is not read), and
		// wrapped by the reporter after its request count.
		{"pastes/vllm_sampler_warmup_ranks_vllm14452.txt", []int64{1, 3}},
		{"pastes/vllm_sampler_warmup_wrapped_llmd787.txt", []int64{4}},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != len(c.lines) {
			t.Fatalf("%s: %+v", c.file, rs.msgs)
		}
		for i, m := range rs.msgs {
			if m.gen != string(GenKVCache) || m.line != c.lines[i] {
				t.Errorf("%s: %+v", c.file, m)
			}
		}
	}
	// V1's figures: 131072 tokens need 16.00 GiB, 0.71 GiB left (0.71 x 2^30
	// = 762356695 bytes, rounded), 5632
	// estimated; V0's: the max seq len and the tokens the cache holds.
	maxLen, needed, available, estimated := KVCacheFigures("To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (0.71 GiB). Based on the available memory, the estimated maximum model length is 5632. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
	if maxLen != 131072 || needed != 16<<30 || available != 762356695 || estimated != 5632 {
		t.Errorf("V1 figures %d %d %d %d", maxLen, needed, available, estimated)
	}
	maxLen, needed, available, estimated = KVCacheFigures("The model's max seq len (163840) is larger than the maximum number of tokens that can be stored in KV cache (13360). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
	if maxLen != 163840 || needed != -1 || available != -1 || estimated != 13360 {
		t.Errorf("V0 figures %d %d %d %d", maxLen, needed, available, estimated)
	}
	// vLLM's sampler warmup: the dummy requests, whole or before a wrap.
	for text, want := range map[string]int64{
		"CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.": 1024,
		"CUDA out of memory occurred when warming up sampler with 256": 256,
		"CUDA out of memory occurred when warming up sampler wi":       -1,
	} {
		if n, ok := VLLMSamplerRequests(text); !ok || n != want {
			t.Errorf("%q: %d %v, want %d", text, n, ok, want)
		}
	}
	// TGI's two forms: 1.0's names the KV cache's tokens before the
	// prefill batch's; later releases name the prefill batch's alone.
	if p, tot := TGIWarmupTokens("Not enough memory to handle 16000 total tokens with 2 prefill tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`"); p != 2 || tot != 16000 {
		t.Errorf("TGI 1.0 figures %d %d", p, tot)
	}
	if p, tot := TGIWarmupTokens("Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"); p != 4096 || tot != -1 {
		t.Errorf("TGI figures %d %d", p, tot)
	}
	for text, want := range map[string]bool{
		"ValueError: The model's max seq len (163840) is larger than the maximum number of tokens that can be stored in KV cache (13360).\n": true,
		"No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n":                  true,
		"    raise ValueError(\"No available memory for the cache blocks. \"\n":                                                              false,
		"If you see `No available memory for the cache blocks`, raise gpu_memory_utilization.\n":                                             false,
		"vLLM said No available memory for the cache blocks when I started it\n":                                                             false,
		"SGLang printed Not enough memory. Please try to increase --mem-fraction-static and stopped\n":                                       false,
		"RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n":                 true,
		"Error: Warmup(Generation(\"Not enough memory to handle 16000 total tokens with 2 prefill tokens.\"))\n":                             true,
		"RuntimeError('Not enough memory to handle 256 prefill tokens.')\n":                                                                  true,
		"TGI said Not enough memory to handle 4096 prefill tokens when I started it\n":                                                       false,
		"            f\"Not enough memory to handle {num_tokens} prefill tokens. \"\n":                                                       false,
		"print(\"Not enough memory to handle 4096 prefill tokens\")\n":                                                                       false,
		// The words alone are English, not TGI's failure, and a call of
		// a function is code (the review of session 42).
		"ERROR: Not enough memory to handle this file\n":                              false,
		"2024-01-01 WARNING: Not enough memory to handle 3 textures\n":                false,
		"RuntimeError: Not enough memory to handle the request\n":                     false,
		"logger.error(Exception(\"Not enough memory to handle 8 prefill tokens\"))\n": false,
		// Cut by the line's end after its number: kept.
		"RuntimeError: Not enough memory to handle 4096\n": true,
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || (len(rs.msgs) == 1) != want || len(rs.msgs) > 1 {
			t.Errorf("%q: %+v %v, want a message %v", text, rs.msgs, err, want)
		}
	}
}

// Accelerate's batch size finder that reached zero is read where it is
// an error (after an exception's or an issue form's colon, at a line's
// start, in its repr), not in prose or source (session 41: uniem issue
// 136's paste was "unrecognised input format").
func TestBatchFinderReachedZero(t *testing.T) {
	rs := readFile(t, "pastes/accelerate_no_batch_size_uniem136.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenBatchFinder) || rs.msgs[0].line != 1 || rs.msgs[0].text != "No executable batch size found, reached zero." {
		t.Fatalf("%+v", rs.msgs)
	}
	for text, want := range map[string]bool{
		"[Bug]: No executable batch size found, reached zero.\n":                                  true,
		"No executable batch size found, reached zero.\n":                                         true,
		"RuntimeError('No executable batch size found, reached zero.')\n":                         true,
		"                raise RuntimeError(\"No executable batch size found, reached zero.\")\n": false,
		"the finder says No executable batch size found, reached zero when the batch is 1\n":      false,
		"I got `No executable batch size found, reached zero.` after an hour\n":                   false,
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || (len(rs.msgs) == 1) != want || len(rs.msgs) > 1 {
			t.Errorf("%q: %+v %v, want a message %v", text, rs.msgs, err, want)
		}
	}
}

// A line of surplus closing parentheses after a KV cache failure is read
// in linear time: trimQuoteClose counted the whole text for each one it
// trimmed (a million took 12 s in the review of session 42). Eight
// times the parentheses must take well under 64 times as long, what a
// quadratic trim takes (a bound of wall time alone passed the quadratic
// trim at 200,000); the best of three runs of each is compared. The
// quadratic trim took about 2 s at 400,000 (12 s at a million), the
// linear one a few ms: a floor of 200 ms keeps a loaded machine's
// pauses from failing it.
func TestTrimQuoteCloseLinear(t *testing.T) {
	const msg = "Not enough memory to handle 4096 prefill tokens"
	best := func(n int) time.Duration {
		text := msg + strings.Repeat(")", n)
		var b time.Duration
		for i := 0; i < 3; i++ {
			start := time.Now()
			if got := trimQuoteClose(text); got != msg {
				t.Fatalf("trimmed to %.80q", got)
			}
			if d := time.Since(start); i == 0 || d < b {
				b = d
			}
		}
		return b
	}
	small, large := best(50000), best(400000)
	if large > 24*small && large > 200*time.Millisecond {
		t.Errorf("50,000 parentheses %v, 400,000 %v: not linear", small, large)
	}
	if got := trimQuoteClose(`f(x) (a "b")'`); got != `f(x) (a "b")` {
		t.Errorf("balanced parentheses trimmed: %q", got)
	}
}
