package cmd

import (
	"strings"
	"testing"
)

// Session 47, u47a: OOM text logs (testdata/README.md, "OOM text logs:
// host statuses, Level Zero, llama.cpp's Vulkan backend, check macros
// (session 47, u47a)").

// An input whose only out-of-memory errors are not counted (a llama.cpp
// allocation recovered by its retry, ggml-org/llama.cpp PR #26297's log;
// a TensorFlow op on the CPU, thtrieu/darkflow#873) has one warning per
// error saying why; the generic "no CUDA out-of-memory message in it"
// printed beside it repeated that there is no OOM, so it is gone there.
// A log with no out-of-memory error at all keeps it.
func TestU47aNoGenericWarningBesideNotOOM(t *testing.T) {
	const generic = "no CUDA out-of-memory message in it"
	for _, c := range []struct {
		file     string
		warnings int // of the lines under "Warnings:" that name the file
		generic  bool
	}{
		// The recovered failure: one warning (line 2), nothing else.
		{"pytorch/pastes/llamacpp_retry_recovered_llamacpp26297.txt", 1, false},
		// The op on the CPU, printed twice (lines 1 and 5): two.
		{"pytorch/pastes/tf_cpu_host_darkflow873.txt", 2, false},
		// A training log without any error: the generic note alone.
		{"logs/train_no_oom.log", 1, true},
	} {
		code, out, errOut := run(t, nil, "oom", td+c.file)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.file, code, errOut)
		}
		_, warn, _ := strings.Cut(out, "Warnings:")
		n := strings.Count(warn, td+c.file+":")
		if n != c.warnings || strings.Contains(warn, generic) != c.generic {
			t.Errorf("%s: %d warnings (generic %v), want %d (generic %v):\n%s", c.file, n, strings.Contains(warn, generic), c.warnings, c.generic, warn)
		}
	}
}

// The gate: host memory (a runtime's host status, a failed cudaMallocHost,
// std::bad_alloc, a TF op on the CPU) and a recovered llama.cpp Vulkan
// allocation pass --fail-on oom (the pinned-host paste tripped it, as a
// GPU OOM); Level Zero's device status, the check macros and llama.cpp's
// Vulkan failure trip it (each exited 0, "no CUDA out-of-memory message").
func TestU47aGate(t *testing.T) {
	for _, c := range []struct {
		file string
		code int
	}{
		{"host_status_vulkan_dota2vulkan355.txt", 0},
		{"pinned_host_cudamallochost_ninfer25.txt", 0},
		{"host_bad_alloc_adaptivecpp768.txt", 0},
		{"tf1_node_device_cpu_tfmodels1993.txt", 0},
		{"synthetic_llamacpp_vulkan_retry_recovered.txt", 0},
		{"level_zero_device_chipstar612.txt", 1},
		{"cudacheck_gpuassert_nvwavenet87.txt", 1},
		{"cudacheck_darknet_layer_darknet304.txt", 1},
		{"llamacpp_vulkan_size_llamacpp15256.txt", 1},
	} {
		code, out, errOut := run(t, nil, "analyze", "-q", "--fail-on", "oom", td+"pytorch/pastes/"+c.file)
		if code != c.code {
			t.Errorf("%s --fail-on oom: exit %d, want %d: %.300q", c.file, code, c.code, out+errOut)
		}
	}
}
