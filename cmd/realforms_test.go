package cmd_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// paste is a file of testdata/pytorch/pastes.
func paste(name string) string { return filepath.Join("..", "testdata", "pytorch", "pastes", name) }

// TensorFlow's and XLA's OOMs in the forms real pastes show (TF 1.x's
// "ResourceExhaustedError (see above for traceback): OOM when allocating
// tensor", XLA's "Failed to allocate request for ... on device ordinal
// 0", PJRT's "Out of memory allocating N bytes.", TF 2's "failed to
// allocate memory [Op:AddV2]") are oom findings: --fail-on oom trips on
// a CI log that holds one. A TensorFlow OOM on /device:CPU:0 ran out of
// host memory: no finding, --fail-on oom passes, and a warning says what
// it is (the file is read, not refused).
func TestAnalyzeTFXLAPastesFailOn(t *testing.T) {
	for _, c := range []struct{ file, says string }{
		{"tf1_see_above_tensorflow4735.txt", "TensorFlow's allocator could not allocate a tensor"},
		{"xla_failed_request_graphcast18.txt", "oom: 2.99 GiB requested on device 0"},
		{"xla_allocating_llnerf9.txt", "oom: 18.65 GiB requested"},
		{"tf2_eager_failed_to_allocate_kerasocr195.txt", "[Op:AddV2]"},
	} {
		_, ooms := analyzeOOMFailOn(t, paste(c.file))
		if len(ooms) != 1 || !strings.Contains(ooms[0].Message, c.says) || strings.Contains(ooms[0].Message, "PyTorch") {
			t.Errorf("%s: %+v", c.file, ooms)
		}
	}
	code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", paste("tf_cpu_host_darkflow873.txt"))
	if code != 0 || !strings.Contains(out, "No findings") || !strings.Contains(out, "line 1: TensorFlow could not allocate a tensor in host memory") {
		t.Errorf("darkflow: exit %d\n%s\n%s", code, out, errOut)
	}
}

// numba's OOM printed by tornado's logger and by its traceback is one
// finding, in numba's words: no garbled status token, no PyTorch.
func TestAnalyzeNumbaOOMOnce(t *testing.T) {
	_, ooms := analyzeOOMFailOn(t, paste("numba_tornado_repr_daskcuda225.txt"))
	if len(ooms) != 1 || ooms[0].Message != "oom: the CUDA driver ran out of memory in numba (CUDA_ERROR_OUT_OF_MEMORY); the message has no sizes" {
		t.Errorf("%+v", ooms)
	}
}

// PyTorch's CPU allocator's errors (Fooocus#237's Windows words, mxfold2#20's
// Linux words) are host memory: the file is read, not refused as
// unrecognised (exit 0, not 2), no finding, --fail-on oom passes, and a
// warning gives the request in bytes (26214400, 132426121216 as printed).
func TestAnalyzeCPUAllocatorIsHostMemory(t *testing.T) {
	for _, c := range []struct{ file, says string }{
		{"cpu_allocator_windows_fooocus237.txt", "line 1: PyTorch's CPU allocator (DefaultCPUAllocator) could not allocate 26214400 bytes"},
		{"cpu_allocator_linux_mxfold2_20.txt", "line 1: PyTorch's CPU allocator (DefaultCPUAllocator) could not allocate 132426121216 bytes"},
	} {
		code, out, errOut := run(t, "", "analyze", "--fail-on", "oom", paste(c.file))
		if code != 0 || !strings.Contains(out, "No findings") || !strings.Contains(out, c.says) || !strings.Contains(out, "of host memory") {
			t.Errorf("%s: exit %d\n%s\n%s", c.file, code, out, errOut)
		}
	}
}

// A Rich traceback's frame names the OOM's site (maybleMyers/H1111#23: the
// panel's last frame, C:\H1111\modules\custom_offloading_utils.py:105 in
// weighs_to_device, before "RuntimeError: CUDA error: out of memory"), as
// a Python traceback's "File ..., line 105, in weighs_to_device" would.
func TestAnalyzeRichTracebackSite(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", paste("rich_square_windows_subprocess_h1111_23.txt"))
	if code != 0 || !strings.Contains(out, "weighs_to_device (custom_offloading_utils.py:105)") || strings.Contains(out, "where it was asked is not known") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// "X of Y" never reads as 100% when X < Y: gnome-shell-system-monitor-
// applet#356's nvidia-smi -q shows 1934 of 1995 MiB used (97%), which
// one decimal of GiB prints as "1.9 GiB of 1.9 GiB"; two decimals tell
// them apart: 1934/1024 = 1.889 -> 1.89, 1995/1024 = 1.948 -> 1.95.
func TestAnalyzeUsedOfCapacityNotRoundedAlike(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", filepath.Join("..", "testdata", "nvml", "field", "gnomeapplet356_q_d_memory_2017.txt"))
	if code != 0 || !strings.Contains(out, "GPU 0: 1.89 GiB of 1.95 GiB used") || strings.Contains(out, "1.9 GiB of 1.9 GiB") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}
