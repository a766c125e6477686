package pytorchtext

import "testing"

// TensorRT-LLM's and FasterTransformer's CUDA checks throw the runtime's
// error string after the call: "[TensorRT-LLM][ERROR] CUDA runtime error
// in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (...)"
// (TensorRT-LLM#1556), "[FT][ERROR] CUDA runtime error: out of memory
// /workspace/.../allocator.h:220" (fastertransformer_backend#157). Both
// were "no CUDA out-of-memory message in it"; each is now a cuda-error
// message of the CUDA runtime. The same check with another error (#1556's
// title, "invalid device ordinal") is no message, not an unparsed one.
func TestHunt45CUDARuntimeCheck(t *testing.T) {
	for _, c := range []struct {
		file string
		line int64
	}{
		{"pastes/trtllm_cuda_runtime_check_oom_trtllm1556.txt", 3},
		{"pastes/ft_cuda_runtime_check_oom_ftbackend157.txt", 2},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1; warnings %.200q", c.file, len(rs.msgs), rs.meta.Warnings.Strings())
		}
		if m := rs.msgs[0]; m.line != c.line || m.gen != string(GenCUDAError) || Library(m.text) != "the CUDA runtime" {
			t.Errorf("%s: %+v, want line %d, cuda-error of the CUDA runtime", c.file, m, c.line)
		}
	}
	if rs := readFile(t, "pastes/trtllm_cuda_runtime_check_other_error_trtllm1556.txt", false); len(rs.msgs) != 0 {
		t.Errorf("invalid device ordinal: %+v, want no message", rs.msgs)
	}
}
