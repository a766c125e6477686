package oom

import (
	"strings"
	"testing"
)

// A program's own CUDA check names its printer in the note, not "numba,
// CuPy, PyCUDA", and gives the sizes the text printed and no others.
// XGBoost (dmlc/xgboost#8484) printed its request, 33554432 bytes (32.00
// MiB), and the GPU's free memory, 8126464 bytes (7.75 MiB): the note
// says both, that the request was 24.25 MiB (33554432 - 8126464 =
// 25427968 bytes) more than was free, and never "has no sizes".
func TestH46dCheckNotes(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
		not  []string
	}{
		{"cudacheck_xgboost_figures_xgboost8484.txt",
			[]string{"XGBoost reported the CUDA runtime's out-of-memory error", "32.00 MiB", "7.75 MiB", "24.25 MiB more than was free"},
			[]string{"numba", "has no sizes", "StreamExecutor"}},
		{"cudacheck_amrex_arena_amrex3189.txt",
			[]string{"AMReX", "amrex.the_arena_init_size", "the message has no sizes"},
			[]string{"numba"}},
		{"cudacheck_nvhpc_openacc_mfc989.txt",
			[]string{"NVHPC's OpenACC runtime", "CUDA_ERROR_OUT_OF_MEMORY", "(cuMemAlloc)"},
			[]string{"numba"}},
		{"cudacheck_rmm_pool_max_cupoch98.txt",
			[]string{"maximum_pool_size", "no CUDA allocation failed"},
			[]string{"numba", "ALLOC_FAILED"}},
	} {
		r := hunt44eOOM(t, "pytorch/pastes/"+c.file)
		notes := strings.Join(r.Notes, "\n")
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s: notes %.400q; want %q", c.file, notes, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(notes, w) {
				t.Errorf("%s: notes %.400q; want no %q", c.file, notes, w)
			}
		}
		if r.known(r.RequestedBytes) != strings.Contains(c.file, "8484") {
			t.Errorf("%s: requested %d; a size only where printed", c.file, r.RequestedBytes)
		}
	}
}
