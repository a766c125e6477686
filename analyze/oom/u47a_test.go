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
// whose note says device memory ran out, names the place the check
// gives, and says that the driver gives the same status to one allocation
// over the device's maxMemAllocSize (intel/compute-runtime#984), which the
// text cannot tell apart. Before, it was not read ("No out-of-memory error").
func TestU47aLevelZeroNote(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/level_zero_device_chipstar612.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs, want 1", len(pm.OOMs))
	}
	notes := strings.Join(pm.OOMs[0].Notes, "\n")
	for _, w := range []string{"Intel's Level Zero driver reported that device memory ran out (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)", "CHIPBackendLevel0.cc:1374:enqueueBarrierImpl", "no sizes", "maxMemAllocSize", "cannot tell the two apart"} {
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

// MFC/MFC#989: NVHPC's OpenACC error (line 3) is followed by its place,
// " File: .../m_rhs.fpp", " Function: s_initialize_rhs_module:172" (the
// routine and the line it starts on) and " Line: 249" (the statement's):
// the OOM's frame is s_initialize_rhs_module at m_rhs.fpp:249 (it had
// none), and the lines after the place (mpirun's) are not taken.
func TestU47aNVHPCPlace(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/cudacheck_nvhpc_openacc_mfc989.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs, want 1", len(pm.OOMs))
	}
	f := pm.OOMs[0].Frame
	if f.Name != "s_initialize_rhs_module" || f.Line != 249 || f.Filename != "/home/azureuser/GitHub/MFC/src/simulation/m_rhs.fpp" {
		t.Errorf("frame %+v, want s_initialize_rhs_module at .../m_rhs.fpp:249", f)
	}
	// Cut after its File line: the file, no line; a line that is no
	// place line right after the error: no frame.
	for _, c := range []struct {
		text, name string
		line       int64
	}{
		{"Accelerator Fatal Error: call to cuMemAlloc returned error 2 (CUDA_ERROR_OUT_OF_MEMORY): Out of memory\n File: /a/b.f90\n", "", 0},
		{"Accelerator Fatal Error: call to cuMemAlloc returned error 2 (CUDA_ERROR_OUT_OF_MEMORY): Out of memory\nmpirun detected that one or more processes exited\n File: /a/b.f90\n", "", -1},
	} {
		pm := NewPostmortem([]Input{textInput(t, "acc.log", c.text)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Errorf("%q: %d OOMs, want 1", c.text, len(pm.OOMs))
			continue
		}
		f := pm.OOMs[0].Frame
		if c.line < 0 && f.Filename != "" || c.line >= 0 && (f.Filename != "/a/b.f90" || f.Line != c.line || f.Name != c.name) {
			t.Errorf("%q: frame %+v", c.text, f)
		}
	}
}
