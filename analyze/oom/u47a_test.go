package oom

import (
	"strings"
	"testing"
)

// Session 47, u47a (testdata/README.md, "OOM text logs: host statuses,
// Level Zero, llama.cpp's Vulkan backend, check macros (session 47,
// u47a)").

// CHIP-SPV/chipStar#612: Level Zero's ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
// printed twice by chipStar's check (lines 2 and 5, the same words: one
// OOM printed twice), is an OOM of Intel's Level Zero driver on an XPU,
// whose note says device memory ran out and names the place the check
// gives. Before, it was not read ("No out-of-memory error").
func TestU47aLevelZeroNote(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/level_zero_device_chipstar612.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs, want 1", len(pm.OOMs))
	}
	notes := strings.Join(pm.OOMs[0].Notes, "\n")
	for _, w := range []string{"Intel's Level Zero driver reported that device memory ran out (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)", "CHIPBackendLevel0.cc:1374:enqueueBarrierImpl", "no sizes"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q: %q", w, notes)
		}
	}
}

// AlexeyAB/darknet#514: darknet's check_error prints its error (line 3)
// and then its perror line (line 4, "...: No error"): one failure, so one
// OOM with both lines as its sources, named as darknet's.
func TestU47aDarknetOneOOM(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/cudacheck_darknet_perror_alexeyab514.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Sources) != 2 || pm.OOMs[0].CheckProgram() != "darknet (its check_error)" {
		t.Fatalf("%d OOMs %+v, want 1 from lines 3 and 4 by darknet", len(pm.OOMs), pm.OOMs)
	}
}

// llama.cpp's Vulkan backend: the size line's bytes are the request, the
// note is the Vulkan backend's (not "could not cudaMalloc"), and its
// refusal of a buffer over the device's one-allocation limit
// (synthetic, the words of ggml_vk_create_buffer's check) is the cause
// allocation-limit, no memory having run out.
func TestU47aVulkanNotes(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/llamacpp_vulkan_size_llamacpp15256.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || pm.OOMs[0].RequestedBytes != 118497280 || !strings.Contains(strings.Join(pm.OOMs[0].Notes, "\n"), "llama.cpp's ggml Vulkan backend could not allocate a buffer of 113.01 MiB") {
		t.Errorf("%+v, want one OOM of 118497280 bytes with the Vulkan backend's note", pm.OOMs)
	}
	pm = NewPostmortem([]Input{oomInput(t, "pastes/synthetic_llamacpp_vulkan_alloc_limit.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Causes) != 1 || pm.OOMs[0].Causes[0].Name != CauseAllocationLimit {
		t.Errorf("%+v, want one OOM whose cause is allocation-limit", pm.OOMs)
	}
}
