package oom

import (
	"strings"
	"testing"
)

// jax-ml/jax#13428: a 6 MiB request failed while the compiled program's
// BufferAssignment total was 12.00 MiB (12582912 bytes), less than any
// GPU holds: the note said a GPU with less memory "cannot run it as
// compiled". The program alone did not fill the GPU, so the note says
// the memory was held outside it (live arrays, XLA's preallocation,
// other processes). A program of 14.44 GiB (jax afprofile#8) keeps the
// old words: its total alone may exceed a GPU.
func TestH46dXLASmallProgram(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/xla_small_program_total_jax13428.txt")
	notes := strings.Join(r.Notes, "\n")
	for _, w := range []string{"12.00 MiB", "did not fill the GPU", "preallocation", "jax.live_arrays()"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %.500q; want %q", notes, w)
		}
	}
	if strings.Contains(notes, "cannot run it as compiled") {
		t.Errorf("notes %.500q; a 12 MiB program fits any GPU", notes)
	}
	big := hunt44eOOM(t, "pytorch/pastes/h44e_xla_bufferassignment_afprofile8.txt")
	if n := strings.Join(big.Notes, "\n"); !strings.Contains(n, "14.44 GiB") || strings.Contains(n, "did not fill the GPU") {
		t.Errorf("14.44 GiB program: notes %.400q; want the capacity words", n)
	}
}

// TF 1.x's EigenAllocator failure of 0 bytes (FastMaskRCNN#129) is one OOM
// whose note says the 0-byte request tells nothing, not "the request's
// size was not read".
func TestH46dTFEigenNote(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/tf1_eigen_allocator_zero_fastmaskrcnn129.txt")
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "EigenAllocator") || !strings.Contains(notes, "0 bytes (a request of nothing") || strings.Contains(notes, "was not read") {
		t.Errorf("notes %.400q; want the EigenAllocator's 0-byte note", notes)
	}
}
