package oom

import (
	"math"
	"strings"
	"testing"
)

// From the review of session 41's OOM readers: PaddlePaddle's size with a
// space before its unit ("56.000000 MB", which the message's form
// accepted) lost the request and the note said "-1 bytes"; a size in PB
// was not read; TensorFlow's "0 bytes" (dropped as no request) gave
// "could not allocate -1 bytes". The request is read, or the note says it
// was not; never -1.
func TestRequestNeverMinusOne(t *testing.T) {
	const paddle = "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 56.000000 MB memory on GPU 0, 15.71 GB memory has been allocated and available memory is only 7.56 MB.\n"
	for _, c := range []struct {
		text string
		req  int64
	}{
		{paddle, 56 << 20},
		{strings.Replace(paddle, "56.000000 MB", "2.000000PB", 1), 2 << 50},
		{strings.Replace(paddle, "56.000000 MB", "99999.000000EB", 1), math.MaxInt64},
		{"ResourceExhaustedError: Ran out of GPU memory when allocating 0 bytes for\n", -1},
	} {
		pm := textPostmortem(t, c.text)
		if len(pm.OOMs) != 1 {
			t.Fatalf("%.60q: %d reports", c.text, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		if c.req >= 0 && r.RequestedBytes != c.req {
			t.Errorf("%.60q: request %d, want %d", c.text, r.RequestedBytes, c.req)
		}
		for _, n := range r.Notes {
			if strings.Contains(n, "-1 bytes") {
				t.Errorf("%.60q: note %q", c.text, n)
			}
		}
	}
}

// vLLM's sampler warmup catches the CUDA OOM and raises it again in its
// words ("The above exception was the direct cause of the following
// exception"): one failure, read with the CUDA message's figures, the
// engine's words in a note (the review of session 42: "OOM 1 of 2", and
// --fail-on oom counted two). The same words with no CUDA OOM before them
// stay an OOM of their own.
func TestEngineReraiseIsOneOOM(t *testing.T) {
	const cuda = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.22 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n"
	const reraise = "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n"
	chained := cuda + "\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n" +
		"  File \"/vllm/v1/worker/gpu_model_runner.py\", line 1500, in _dummy_sampler_run\n    raise RuntimeError(\n" + reraise
	pm := textPostmortem(t, chained)
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs, want 1", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.RequestedBytes < 1<<30 || r.RequestedBytes > 2<<30 {
		t.Errorf("request %d, want the CUDA message's 1.95 GiB", r.RequestedBytes)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "raised again by the engine") {
		t.Errorf("notes %q: want the engine's re-raise named", r.Notes)
	}
	if pm := textPostmortem(t, reraise); len(pm.OOMs) != 1 {
		t.Errorf("the re-raise alone: %d OOMs, want 1", len(pm.OOMs))
	}
}

// A small-pool request (a 2 MiB segment): whether the reserved but
// unallocated memory, which may all be the large pool's, would have held
// it cannot be told, and the report must not say it would (the
// session-42 tester: "would have held the request had it been
// contiguous" beside the note that fragmentation cannot be told).
func TestSmallPoolRequestFitUnknown(t *testing.T) {
	pm := textPostmortem(t, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 1.12 MiB is free. Including non-PyTorch memory, this process has 15.76 GiB memory in use. Of the allocated memory 14.41 GiB is allocated by PyTorch, and 990.95 MiB is reserved by PyTorch but unallocated.\n")
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.WouldFitIfContiguous != nil {
		t.Errorf("would fit if contiguous: %v, want unknown (nil)", *r.WouldFitIfContiguous)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "small pool") {
		t.Errorf("notes %q: want the small pool named", r.Notes)
	}
}
