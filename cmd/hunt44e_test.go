package cmd

import (
	"strings"
	"testing"
)

// Session 44, other allocators' and frameworks' forms (testdata/README.md,
// "OOM forms of other allocators, from the session-44 tester").

// ComfyUI's "torch.OutOfMemoryError: Allocation on device " (PyTorch's
// cudaMallocAsync message cut at device 0's NUL byte) is an OOM: the gate
// trips (it exited 0, "No out-of-memory error").
func TestHunt44eAsyncDeviceZeroTripsTheGate(t *testing.T) {
	for _, p := range []string{"pytorch/pastes/h44e_async_device0_cut_comfy4934.txt", "pytorch/pastes/h44e_async_device0_cut_min.txt"} {
		code, out, errOut := run(t, nil, "analyze", "-q", "--fail-on", "oom", td+p)
		if code != 1 {
			t.Errorf("%s --fail-on oom: exit %d, output %.200q; want 1", p, code, out+errOut)
		}
	}
}

// PyTorch's message says "X is allocated by PyTorch, with Y allocated in
// private pools": Y is part of the allocated memory, and is printed
// beside it, not after the reserved but unallocated figure (vLLM's
// engine log: 71.52 GiB allocated, 1.05 GiB of it in private pools, 4.92
// GiB reserved but unallocated).
func TestHunt44ePrivatePoolsBesideAllocated(t *testing.T) {
	_, out, _ := run(t, nil, "oom", td+"pytorch/pastes/h44e_private_pools_vllm_engine.txt")
	want := "71.52 GiB allocated (1.05 GiB of it in private pools), 4.92 GiB reserved but unallocated"
	if !strings.Contains(out, want) {
		t.Errorf("output %.300q, want %q", out, want)
	}
}

// A TensorFlow log whose BFC allocator failed (tensorflow#60401: its
// run then ended with "Dst tensor is not initialized") trips --fail-on
// oom; it exited 0 with "No out-of-memory error".
func TestHunt44eTFBFCFailureTripsTheGate(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "-q", "--fail-on", "oom", td+"pytorch/pastes/h44e_tf_bfc_ranout_tf60401.txt")
	if code != 1 {
		t.Errorf("exit %d, output %.200q; want 1", code, out+errOut)
	}
}
