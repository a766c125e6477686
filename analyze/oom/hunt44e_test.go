package oom

import (
	"os"
	"strings"
	"testing"
)

// Session 44, other allocators' and frameworks' forms (testdata/README.md,
// "OOM forms of other allocators, from the session-44 tester").

func hunt44eOOM(t *testing.T, path string) Report {
	t.Helper()
	b, err := os.ReadFile("../../testdata/" + path)
	if err != nil {
		t.Fatal(err)
	}
	pm := NewPostmortem([]Input{textInput(t, path, string(b))}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%s: %d OOMs, want 1", path, len(pm.OOMs))
	}
	return pm.OOMs[0]
}

// A request larger than the GPU's total is capacity, in any message that
// gives both: XLA's cudaMallocAsync failure of 1225195446464 bytes (1141
// GiB) on a GPU of 85095874560 (79.25 GiB) was "cause not determined".
// A request printed above the 4 EiB gpuleak reads (17179869184.00 GiB,
// synthetic) is more than any GPU too, as "more than 1EB" is: capacity,
// not "not determined".
func TestHunt44eRequestBeyondTheGPUIsCapacity(t *testing.T) {
	for _, p := range []string{"pytorch/pastes/h44e_xla_cumemallocasync_skyrl624.txt", "pytorch/synthetic/h44e_huge_request_16eib.txt"} {
		r := hunt44eOOM(t, p)
		if len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity {
			t.Errorf("%s: causes %v, want capacity", p, causeNames(r))
		}
	}
	r := hunt44eOOM(t, "pytorch/pastes/h44e_xla_cumemallocasync_skyrl624.txt")
	if r.DeviceTotalBytes != 85095874560 || r.DeviceFreeBytes != 22635544576 || r.RequestedBytes != 1225195446464 {
		t.Errorf("skyrl624: total %d free %d requested %d", r.DeviceTotalBytes, r.DeviceFreeBytes, r.RequestedBytes)
	}
}

// The XLA note gives the BufferAssignment stats' total allocation where
// XLA printed them, instead of "the message gives no other figures".
func TestHunt44eXLANoteGivesTotalAllocation(t *testing.T) {
	for p, want := range map[string]string{
		"pytorch/pastes/h44e_xla_bufferassignment_speedppi1.txt":  "total allocation, 11.62 GiB",
		"pytorch/pastes/h44e_xla_bufferassignment_afprofile8.txt": "total allocation, 14.44 GiB",
	} {
		r := hunt44eOOM(t, p)
		notes := strings.Join(r.Notes, " ")
		if !strings.Contains(notes, want) || strings.Contains(notes, "gives no other figures") {
			t.Errorf("%s notes: %.300q, want %q", p, notes, want)
		}
	}
}

// NCCL's failure on GPU 3 of 6 MiB, in process 3063028 on host ng30903
// (its line prefix ng30903:3063028:3066152 [3]), says so; it said "the
// message has no sizes" with no device.
func TestHunt44eNCCLNote(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/h44e_nccl_calloc_nccl1235.txt")
	notes := strings.Join(r.Notes, " ")
	if r.Device != 3 || r.RequestedBytes != 6291456 || !strings.Contains(notes, "6.00 MiB of GPU memory for its buffers on device 3") || !strings.Contains(notes, "in process 3063028 on host ng30903") || strings.Contains(notes, "has no sizes") {
		t.Errorf("device %d, requested %d, notes %.300q", r.Device, r.RequestedBytes, notes)
	}
}

// ROCm's "HIP error: out of memory" names ROCm's libraries, not cuBLAS and
// cuDNN.
func TestHunt44eHIPErrorNote(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/h44e_hip_error_oom.txt")
	notes := strings.Join(r.Notes, " ")
	if !strings.Contains(notes, "rocBLAS") || !strings.Contains(notes, "MIOpen") || strings.Contains(notes, "cuBLAS") || strings.Contains(notes, "cuDNN") {
		t.Errorf("notes %.300q, want ROCm's libraries", notes)
	}
}
