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
		ooms int // 0: 1
	}{
		{"pastes/kvcache_vllm_compose_10439.txt", []string{"vLLM found no memory left for its KV cache", "no allocation failed", "gpu_memory_utilization"}, 0},
		{"pastes/kvcache_vllm_v1_tpu223.txt", []string{"(131072 tokens) needs 16.00 GiB of KV cache, and 0.71 GiB was left", "lower max_model_len (vLLM estimated that 5632 tokens fit)"}, 0},
		{"pastes/kvcache_vllm_v1_wrapped_b70cookbook4.txt", []string{"the message was cut before its figures", "lower max_model_len"}, 0},
		{"pastes/kvcache_sglang_between_errors_sglang4330.txt", []string{"SGLang could not size its KV cache pool", "--mem-fraction-static"}, 0},
		// TGI's warmup: the prefill batch's tokens as printed (4096; LoRAX's
		// 1024 on three lines, one OOM), its setting, no cause.
		{"pastes/tgi_warmup_prefill_title_tgi755.txt", []string{"TGI", "warmup", "one prefill batch of 4096 tokens", "lower --max-batch-prefill-tokens"}, 0},
		{"pastes/tgi_warmup_prefill_lorax354.txt", []string{"LoRAX", "one prefill batch of 1024 tokens", "lower --max-batch-prefill-tokens"}, 0},
		// vLLM's sampler warmup: an OOM met and re-raised, the requests
		// as printed (1024, also before the reporter's wrap), its settings.
		// Two workers' (rank 7, rank 0): two OOMs since session 42 (see
		// hunt42_test.go); the first is asserted here.
		{"pastes/vllm_sampler_warmup_ranks_vllm14452.txt", []string{"warming up its sampler with 1024 dummy requests", "lower max_num_seqs"}, 2},
		{"pastes/vllm_sampler_warmup_wrapped_llmd787.txt", []string{"warming up its sampler with 1024 dummy requests", "gpu_memory_utilization"}, 0},
	} {
		pm := NewPostmortem([]Input{oomInput(t, c.file)}, PostmortemOptions{})
		if len(pm.OOMs) != max(c.ooms, 1) {
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

// The MPS allocator's refusal of one buffer over Metal's maxBufferLength
// ("Invalid buffer size: 19.45 GB") is an OOM whose cause it states: one
// report of two lines (the sentence quoting it, the traceback's), cause
// allocation-limit, no other figure made up.
func TestMPSInvalidBufferSize(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/mps_invalid_buffer_bmm_pytorch141909.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if len(r.Sources) != 2 || r.RequestedBytes != 20884278477 || len(r.Causes) != 1 || r.Causes[0].Name != CauseAllocationLimit ||
		r.ReservedBytes != -1 || r.AllowedBytes != -1 || !strings.Contains(r.Causes[0].Evidence, "maxBufferLength") || !strings.Contains(r.Causes[0].Advice, "PYTORCH_MPS_HIGH_WATERMARK_RATIO is another limit") {
		t.Errorf("%d sources, %d bytes, causes %+v, reserved %d", len(r.Sources), r.RequestedBytes, r.Causes, r.ReservedBytes)
	}
}

// Accelerate's batch size finder that reached zero: an OOM with no figure,
// device or cause made up; the note says what the words mean (every size
// down to 1 ran out of memory, or the start was 0) and that the OOMs it
// caught are not in the message.
func TestBatchFinderNote(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/accelerate_no_batch_size_uniem136.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	notes := strings.Join(r.Notes, " ")
	if len(r.Causes) != 0 || r.RequestedBytes != -1 || r.Device != -1 || r.DeviceTotalBytes != -1 {
		t.Errorf("causes %v, requested %d, device %d, total %d", causeNames(r), r.RequestedBytes, r.Device, r.DeviceTotalBytes)
	}
	for _, w := range []string{"find_executable_batch_size", "halves the batch size", "even with a batch of 1", "starting batch size was 0", "not in this message"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q: %q", w, notes)
		}
	}
}

// vLLM's sampler warm-up words read as one failure with the CUDA OOM they
// re-raise (printed before it, as f48o1_vllm_19445's paste has them): the
// figures are the CUDA message's, and the engine's phase and settings
// (max_num_seqs, gpu_memory_utilization) are still said.
func TestVLLMSamplerReraiseKeepsAdvice(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/f48o1_vllm_19445_sampler_warmup_wrapped_sentences.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	notes := strings.Join(pm.OOMs[0].Notes, " ")
	for _, w := range []string{"warming up its sampler with 256 dummy requests", "lower max_num_seqs", "gpu_memory_utilization"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q: %q", w, notes)
		}
	}
	if pm.OOMs[0].RequestedBytes != 252<<20 {
		t.Errorf("requested %d", pm.OOMs[0].RequestedBytes)
	}
}
