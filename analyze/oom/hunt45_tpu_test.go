package oom

import (
	"strings"
	"testing"
)

// The TPU compiler's "Ran out of memory in memory space hbm. Used U of C
// hbm." was "No out-of-memory error in the inputs". It is one OOM whose
// cause is capacity: the compiled program needs U, more than a core's C
// (21.90G of 7.48G; 21.95G of 15.48G, the paste wrapped before
// "Exceeded"; 63.80G of 30.75G), with no GPU advice (nvidia-smi, other
// processes) in the note, which names the TPU compiler.
func TestHunt45XLATPUHBMIsCapacity(t *testing.T) {
	for _, p := range []string{
		"pytorch/pastes/xla_tpu_hbm_compile_easydel78.txt",
		"pytorch/pastes/xla_tpu_hbm_wrapped_lwm60.txt",
		"pytorch/pastes/xla_tpu_hbm_allocations_easydel166.txt",
	} {
		r := hunt44eOOM(t, p)
		if len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity || r.Causes[0].Numbers["device_total_bytes"] != r.DeviceTotalBytes || r.RequestedBytes <= r.DeviceTotalBytes {
			t.Errorf("%s: causes %v, requested %d, total %d; want capacity, over the total", p, causeNames(r), r.RequestedBytes, r.DeviceTotalBytes)
		}
		notes := strings.Join(r.Notes, "\n")
		if !strings.Contains(notes, "TPU compiler") || strings.Contains(notes, "nvidia-smi") || strings.Contains(notes, "XLA_PYTHON_CLIENT_MEM_FRACTION") {
			t.Errorf("%s: notes %.200q, want the TPU compiler's, no GPU advice", p, notes)
		}
	}
	// Figures within the sizes' rounding of each other (an edited
	// paste; synthetic) show no shortage: no cause.
	pm := NewPostmortem([]Input{textInput(t, "edited", "XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 15.48G of 15.48G hbm.\n")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Causes) != 0 {
		t.Errorf("used = capacity: %d OOMs or a cause; want 1 OOM, no cause", len(pm.OOMs))
	}
}
