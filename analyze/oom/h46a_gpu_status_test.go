package oom

import (
	"strings"
	"testing"
)

// Session 46, helper h46a (testdata/README.md, "Session 46, h46a").

// Each runtime's status is one OOM with no cause (no sizes), and a note in
// that runtime's terms that says what the status does not: Intel's "out
// of resources" is not proof that memory ran out (it covers a kernel's
// launch resources too), while UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY is
// device memory; the HIP error name is the program's own check, not
// TensorFlow's ROCm build (whose words "HIP_ERROR_OutOfMemory" the old
// note described); ONNX Runtime's names the call that failed, from its
// "expr=".
func TestH46aGPUStatusNotes(t *testing.T) {
	for _, c := range []struct {
		path      string
		want, not []string
	}{
		{"pytorch/pastes/h46a_xpu_ur_resources_ipex838.txt", []string{"out of resources", "does not prove", "xpu-smi"}, []string{"nvidia-smi", "ALLOC_FAILED"}},
		{"pytorch/pastes/h46a_sycl_pi_resources_sdnext1526.txt", []string{"out of resources", "does not prove"}, []string{"nvidia-smi"}},
		{"pytorch/synthetic/h46a_sycl_out_of_device_memory.txt", []string{"ran out of device memory", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"}, []string{"does not prove", "nvidia-smi"}},
		{"pytorch/pastes/h46a_hip_amrex_warpx3398.txt", []string{"hipErrorOutOfMemory", "rocm-smi"}, []string{"TensorFlow", "nvidia-smi"}},
		{"pytorch/pastes/h46a_ort_cuda_failure_deeplivecam584.txt", []string{"ONNX Runtime's cudaStreamCreateWithFlags failed", "on GPU 0"}, []string{"ALLOC_FAILED"}},
		{"pytorch/pastes/h46a_vulkan_ggml_llamacpp8492.txt", []string{"VK_ERROR_OUT_OF_DEVICE_MEMORY", "Device memory allocation of size N failed"}, []string{"ALLOC_FAILED", "cudaMalloc"}},
		{"pytorch/pastes/h46a_mlx_insufficient_memory_vmlx58.txt", []string{"Insufficient Memory", "unified memory"}, []string{"nvidia-smi"}},
	} {
		r := hunt44eOOM(t, c.path)
		notes := strings.Join(r.Notes, "\n")
		if len(r.Causes) != 0 {
			t.Errorf("%s: causes %v, want none (no sizes)", c.path, causeNames(r))
		}
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s: notes %.300q, want %q", c.path, notes, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(notes, w) {
				t.Errorf("%s: notes %.300q, want no %q", c.path, notes, w)
			}
		}
	}
}

// The HIP error name raised through PyTorch (ROCm's build: an extension's
// own check, a torch frame in the traceback) is a HIP allocation outside
// the caching allocator, not a CUDA one. Synthetic.
func TestH46aHIPNameThroughPyTorch(t *testing.T) {
	text := "Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1, in f\n    x()\nRuntimeError: my_ext.cpp:12: hipErrorOutOfMemory: out of memory\n"
	pm := NewPostmortem([]Input{textInput(t, "hip.log", text)}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs, want 1", len(pm.OOMs))
	}
	notes := strings.Join(pm.OOMs[0].Notes, "\n")
	if !strings.Contains(notes, "a HIP allocation outside PyTorch's caching allocator") || strings.Contains(notes, "CUDA") {
		t.Errorf("notes %.300q, want a HIP allocation, no CUDA", notes)
	}
}
