package pytorchtext

import (
	"strings"
	"testing"
)

// CUDA's out-of-memory status in libraries' own words: tensorview's
// (spconv 2, cumm) "cuda failed with error 2 out of memory" and spconv 1's
// "cuda execution failed with error 2" (2 is cudaErrorMemoryAllocation),
// each on the line after the exception's first ("RuntimeError: FILE LINE").
// Before: no message ("no CUDA out-of-memory message in it"; analyze said
// "unrecognised input format"). Now: a cuda-error message of the CUDA
// runtime, with the frames of the traceback that the exception's line
// ended (spconv 1's paste: get_indice_pairs innermost). Other codes are
// other errors (98 invalid device function, 222, 500, 700): no message.
func TestLibraryStatusLines(t *testing.T) {
	rs := readFile(t, "pastes/spconv2_tensorview_error2_cmt15.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenCUDAError) || rs.msgs[0].line != 2 || Library(rs.msgs[0].text) != "the CUDA runtime" {
		t.Errorf("tensorview: %+v", rs.msgs)
	}
	rs = readFile(t, "pastes/spconv1_exec_error2_mmdet3d80.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenCUDAError) || rs.msgs[0].line != 13 {
		t.Fatalf("spconv 1: %+v", rs.msgs)
	}
	if f := rs.frames[rs.msgs[0].id]; len(f) != 4 || f[0] != (tbFrame{"/work/mmdet3d/ops/spconv/ops.py", 94, "get_indice_pairs"}) {
		t.Errorf("spconv 1 frames %+v", f)
	}
	rs = readFile(t, "pastes/spconv_other_errors_not_oom.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("other CUDA errors read as OOMs: %+v", rs.msgs)
	}
	// The frames go only to an OOM that starts the very next line: not
	// to one a line later, nor to another program's line after a blank.
	text := "Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n    g()\nRuntimeError: /io/include/tensorview/tensor.h 168\n\ncuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.\n"
	rs, err := readText(t, "gap", text, false)
	if err != nil || len(rs.msgs) != 1 || len(rs.frames[rs.msgs[0].id]) != 0 {
		t.Errorf("a line apart: %+v %v, %v", rs.msgs, rs.frames, err)
	}
}

// StreamExecutor's "failed to alloc N bytes on host:
// CUDA_ERROR_OUT_OF_MEMORY" (cuda_driver.cc: cuMemHostAlloc, pinned host
// memory; here XLA's in JAX, craiyon-low-vram-easy issue 1) is the
// machine's memory: no GPU OOM (it was one, "the GPU had no room for it"),
// a warning per line naming the bytes, counted among NotOOMs.
func TestPinnedHostMemory(t *testing.T) {
	rs := readFile(t, "pastes/tf_pinned_host_craiyon1.txt", false)
	if len(rs.msgs) != 0 {
		t.Fatalf("%+v", rs.msgs)
	}
	w := rs.meta.NotOOMs.Strings()
	if len(w) != 2 || !strings.Contains(w[0], "line 2: ") || !strings.Contains(w[0], "could not allocate 1073741824 bytes (1024.00 MiB) of page-locked (pinned) host memory") {
		t.Errorf("%q", w)
	}
	// From a device it stays the GPU's.
	line := "2021-09-24 16:22:13.020179: E tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
	rs, err := readText(t, "device", line, false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].sizes["requested"] != 8387559424 {
		t.Errorf("%+v %v", rs.msgs, err)
	}
}
