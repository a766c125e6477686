package pytorchtext

import (
	"strings"
	"testing"
)

// Session 45, tester t45a (testdata/README.md, "Session 45, tester t45a").

// StreamExecutor's ROCm build (TensorFlow's and XLA's rocm_driver.cc)
// logs the same ERROR record as its CUDA build, "failed to allocate 7.35G
// (7889485824 bytes) from device: ", with the HIP status in the words of
// its ToString(hipError_t): "HIP_ERROR_OutOfMemory", or for HIP's old
// hipErrorMemoryAllocation = 1002 its number, "hipError_t(1002)". Both
// files were "no CUDA out-of-memory message in it". Each record is now a
// cuda-error message on the HIP backend with the record's bytes as its
// request (the numbers in parentheses on each line).
func TestHunt45ROCmStreamExecutorStatus(t *testing.T) {
	for _, c := range []struct {
		file  string
		first int64
		bytes []int64
	}{
		{"pastes/rocm_tf_hip_error_oom_keras13889.txt", 2, []int64{140729850295296, 126656857505792, 113991166722048, 102592046694400, 92332837830656}},
		{"pastes/rocm_tf_hiperror1002_tfupstream82.txt", 2, []int64{7889485824, 7100536832, 6390482944}},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != len(c.bytes) {
			t.Fatalf("%s: %d messages, want %d; warnings %.200q", c.file, len(rs.msgs), len(c.bytes), rs.meta.Warnings.Strings())
		}
		for i, m := range rs.msgs {
			if m.line != c.first+int64(i) || m.gen != string(GenCUDAError) || m.sizes["requested"] != c.bytes[i] {
				t.Errorf("%s: message %d: line %d gen %s requested %d, want line %d cuda-error %d", c.file, i, m.line, m.gen, m.sizes["requested"], c.first+int64(i), c.bytes[i])
			}
			if lib := Library(m.text); lib != "the HIP runtime" {
				t.Errorf("%s: line %d: library %q, want the HIP runtime", c.file, m.line, lib)
			}
		}
	}
}

// The ROCm build's pinned host allocation ("failed to alloc N bytes on
// host: HIP_ERROR_OutOfMemory", rocm_driver.cc's HostAllocate, the same
// words as cuda_driver.cc's) is the machine's memory, as the CUDA build's
// is: no GPU OOM, and the warning names hipHostMalloc, not the CUDA
// driver. Synthetic line, in the form of the CUDA build's.
func TestHunt45ROCmHostAllocIsNoGPUOOM(t *testing.T) {
	rs, err := readText(t, "host", "2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to alloc 1024 bytes on host: HIP_ERROR_OutOfMemory\n", false)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if len(rs.msgs) != 0 || !strings.Contains(w, "hipHostMalloc") || strings.Contains(w, "CUDA driver") {
		t.Errorf("%d messages, warnings %.200q; want none, a warning naming hipHostMalloc", len(rs.msgs), w)
	}
}
