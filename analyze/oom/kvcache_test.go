package oom

import (
	"strings"
	"testing"
)

// An engine's KV cache failure at start-up is no allocation's failure:
// the note says so, names the engine and its setting, gives V1's figures
// as printed (16.00 GiB needed, 0.71 GiB left, 5632 tokens estimated),
// and no cause is made up (the message has none of the GPU's figures).
func TestKVCacheNotes(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"pastes/kvcache_vllm_compose_10439.txt", []string{"vLLM found no memory left for its KV cache", "no allocation failed", "gpu_memory_utilization"}},
		{"pastes/kvcache_vllm_v1_tpu223.txt", []string{"(131072 tokens) needs 16.00 GiB of KV cache, and 0.71 GiB was left", "lower max_model_len (vLLM estimated that 5632 tokens fit)"}},
		{"pastes/kvcache_vllm_v1_wrapped_b70cookbook4.txt", []string{"the message was cut before its figures", "lower max_model_len"}},
		{"pastes/kvcache_sglang_between_errors_sglang4330.txt", []string{"SGLang could not size its KV cache pool", "--mem-fraction-static"}},
	} {
		pm := NewPostmortem([]Input{oomInput(t, c.file)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%s: %d OOMs", c.file, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		notes := strings.Join(r.Notes, " ")
		if len(r.Causes) != 0 || r.RequestedBytes != -1 || r.Device != -1 || strings.Contains(notes, "CUDA call") {
			t.Errorf("%s: causes %v, requested %d, device %d, notes %q", c.file, causeNames(r), r.RequestedBytes, r.Device, notes)
		}
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s: notes lack %q: %q", c.file, w, notes)
			}
		}
	}
}
