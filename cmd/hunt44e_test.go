package cmd

import "testing"

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
