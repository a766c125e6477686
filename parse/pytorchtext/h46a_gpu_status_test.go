package pytorchtext

import (
	"strings"
	"testing"
)

// Session 46, helper h46a (testdata/README.md, "Session 46, h46a").

// Other runtimes' out-of-memory statuses, each a line that was "no CUDA
// out-of-memory message in it" (so --fail-on oom passed on the log of a
// crashed run): the HIP runtime's error name (hipGetErrorName) in three
// programs' checks, Intel's oneAPI statuses in SYCL's exceptions (each
// after "returns:N (" or "error: N ("), MLX's "Insufficient Memory"
// without its Metal status, ONNX Runtime's failed CUDA call, Vulkan's
// VK_ERROR_OUT_OF_DEVICE_MEMORY and Vulkan-Hpp's word for it
// (ErrorOutOfDeviceMemory, after "vk::Device::allocateMemory: "). Each is one
// cuda-error message naming its runtime (Library), on the backend the
// status belongs to; ONNX Runtime's names its GPU ("GPU=0").
func TestH46aGPUStatusNamesAreRead(t *testing.T) {
	for _, c := range []struct {
		file, lib, backend string
		line               int64
		device             int32
	}{
		{"pastes/h46a_hip_amrex_warpx3398.txt", "the HIP runtime", "HIP", 1, -1},
		{"pastes/h46a_hip_amdgpujl591.txt", "the HIP runtime", "HIP", 1, -1},
		{"pastes/h46a_hip_check_rocmhip2132.txt", "the HIP runtime", "HIP", 1, -1},
		{"pastes/h46a_xpu_ur_resources_ipex838.txt", LibraryUR, "XPU", 5, -1},
		// The status is printed twice, the second on the logger's
		// wrapped line: one message.
		{"pastes/h46a_sycl_pi_resources_sdnext1526.txt", LibraryPI, "XPU", 2, -1},
		{"pastes/h46a_sycl_ur_resources_ggml1072.txt", LibraryUR, "XPU", 2, -1},
		{"pastes/h46a_xpu_level_zero_title_torchxpuops5061.txt", LibraryUR, "XPU", 1, -1},
		{"synthetic/h46a_sycl_out_of_device_memory.txt", LibraryUR, "XPU", 4, -1},
		{"pastes/h46a_mlx_insufficient_memory_vmlx58.txt", "Metal", "MPS", 1, -1},
		{"pastes/h46a_ort_cuda_failure_deeplivecam584.txt", "ONNX Runtime", "CUDA", 1, 0},
		{"pastes/h46a_vulkan_mlcllm974.txt", "Vulkan", "Vulkan", 1, -1},
		// The size line before it makes it llama.cpp's (session 47,
		// TestU47aVulkanSize), on the Vulkan backend still.
		{"pastes/h46a_vulkan_ggml_llamacpp8492.txt", "llama.cpp (ggml)", "Vulkan", 2, -1},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Errorf("%s: %d messages, want 1; warnings %.300q", c.file, len(rs.msgs), rs.meta.Warnings.Strings())
			continue
		}
		m := rs.msgs[0]
		if m.gen != string(GenCUDAError) || m.line != c.line || m.device != c.device || Library(m.text) != c.lib {
			t.Errorf("%s: %s at line %d device %d library %q (%q), want cuda-error at %d device %d library %q", c.file, m.gen, m.line, m.device, Library(m.text), m.text, c.line, c.device, c.lib)
		}
		if m.backend != c.backend {
			t.Errorf("%s: backend %q, want %q", c.file, m.backend, c.backend)
		}
	}
}

// MLX's words with Metal's status after them are one message, not two.
func TestH46aMetalWordsWithStatusAreOne(t *testing.T) {
	rs, err := readText(t, "mlx", "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 || !strings.HasSuffix(rs.msgs[0].text, "OutOfMemory)") {
		t.Errorf("%d messages (%v), want 1 that ends with the status", len(rs.msgs), rs.msgs)
	}
}

// The same names in source listings, an enum, a grep line and prose are
// not errors: no message.
func TestH46aGPUStatusNamesInProseAreNot(t *testing.T) {
	rs := readFile(t, "synthetic/h46a_gpu_status_names_not_errors.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("%d messages, want none: %v", len(rs.msgs), rs.msgs)
	}
}
