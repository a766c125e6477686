package pytorchtext

import (
	"strings"
	"testing"
)

// The CUDA runtime's or driver's out-of-memory error (error 2) printed by
// a program's own check macro was "no CUDA out-of-memory message in it",
// so `analyze --fail-on oom` passed a crashed run. Each paste (real, from
// the issue its name gives; testdata/README.md) is now one cuda-error
// message of the CUDA runtime or driver (or RMM's pool), on the line that
// holds the error (PMacc's what() line for its two-line form), whose
// printer CheckProgram names from the words. The line numbers are the
// pastes' own: a code fence or a log line before the error moves it.
func TestH46dCUDACheckForms(t *testing.T) {
	for _, c := range []struct {
		file    string
		line    int64
		lib     string
		program string // a prefix of CheckProgram's name
		call    string
	}{
		{"cudacheck_nvhpc_openacc_mfc989.txt", 3, "the CUDA driver", "NVHPC's OpenACC runtime", "cuMemAlloc"},
		{"cudacheck_cuda_rt_call_mgpm14.txt", 2, "the CUDA runtime", "the program's CUDA_RT_CALL", "cudaMalloc"},
		{"cudacheck_amrex_arena_amrex3189.txt", 1, "the CUDA runtime", "AMReX", ""},
		{"cudacheck_amrex_last_error_castro3344.txt", 3, "the CUDA runtime", "AMReX", ""},
		{"cudacheck_pmacc_what_twoline_picongpu3064.txt", 3, "the CUDA runtime", "mallocMC", ""},
		{"cudacheck_thrust_what_xgboost2874.txt", 1, "the CUDA runtime", "XGBoost", ""},
		{"cudacheck_codespan_xgboost2019.txt", 2, "the CUDA runtime", "XGBoost", ""},
		{"cudacheck_rmm_cuda_error_at_cudf6773.txt", 1, "the CUDA runtime", "RMM", ""},
		{"cudacheck_rmm_pool_max_cupoch98.txt", 4, "RMM", "RMM's pool", ""},
		{"cudacheck_rmm_pool_out_of_memory_rmm1421.txt", 3, "RMM", "RMM's pool", ""},
		{"cudacheck_dlib_face_recognition_dlib2340.txt", 1, "the CUDA runtime", "dlib", "cudaMalloc"},
		{"cudacheck_caffe_check_failed_rtpose53.txt", 1, "the CUDA runtime", "Caffe", ""},
		{"cudacheck_caffe_syncedmem_dss25.txt", 1, "the CUDA runtime", "Caffe (", ""},
		{"cudacheck_caffe2_enforce_synthetic.txt", 1, "the CUDA runtime", "Caffe2", ""},
		{"cudacheck_paddle_cudastat_paddle8949.txt", 1, "the CUDA runtime", "PaddlePaddle", ""},
		{"cudacheck_tinycudann_instantngp488.txt", 1, "the CUDA runtime", "tiny-cuda-nn", "cudaMalloc"},
		{"cudacheck_optix_title_tetranerf12.txt", 1, "the CUDA runtime", "the program's CUDA_CHECK", ""},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) != 1 {
			t.Errorf("%s: %d messages, want 1; warnings %.300q", c.file, len(rs.msgs), rs.meta.Warnings.Strings())
			continue
		}
		m := rs.msgs[0]
		who, call := CheckProgram(m.prefix, m.text)
		if m.line != c.line || m.gen != string(GenCUDAError) || Library(m.text) != c.lib || !strings.HasPrefix(who, c.program) || call != c.call {
			t.Errorf("%s: line %d %s %q by %q call %q (text %q); want line %d, cuda-error of %q by %q call %q",
				c.file, m.line, m.gen, Library(m.text), who, call, m.text, c.line, c.lib, c.program, c.call)
		}
	}
}

// The same macros with another error (invalid argument, an illegal
// address: error 1, 700), their format strings in source code, a
// compiler's "file(line): error: out of memory" diagnostic and a sentence
// naming the form are no message (synthetic lines in the forms above).
func TestH46dCUDACheckNotOOM(t *testing.T) {
	rs := readFile(t, "pastes/cudacheck_not_oom.txt", false)
	for _, m := range rs.msgs {
		t.Errorf("line %d: %s %q, want no message", m.line, m.gen, m.text)
	}
}

// XGBoost logs the GPU's free memory and its request on the two lines
// after its allocation error (dmlc/xgboost#8484): "- Free memory:
// 8126464" and "- Requested memory: 33554432" are read as Free and
// Requested, exact bytes (7.75 MiB = 8126464 / 2^20, 32 MiB = 33554432 /
// 2^20).
func TestH46dXGBoostFigures(t *testing.T) {
	rs := readFile(t, "pastes/cudacheck_xgboost_figures_xgboost8484.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(rs.msgs))
	}
	m := rs.msgs[0]
	if m.sizes["requested"] != 33554432 || m.sizes["free"] != 8126464 || m.line != 2 {
		t.Errorf("line %d, sizes %v; want line 2, requested 33554432, free 8126464", m.line, m.sizes)
	}
	if who, _ := CheckProgram(m.prefix, m.text); who != "XGBoost" {
		t.Errorf("program %q, want XGBoost (its words before the error)", who)
	}
}
