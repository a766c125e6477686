package oom

import (
	"strings"
	"testing"
)

// The postmortems of other programs' OOMs pasted into public bug reports
// (testdata/README.md, "TensorFlow, XLA and other programs' OOMs as
// pasted"): one OOM per failure, read in the words of the program that
// printed it; PyTorch's snapshot and memory_summary() and JAX's GPU
// preallocation are named only where they apply.
func TestOtherProgramsPastes(t *testing.T) {
	notes := func(r Report) string { return strings.Join(r.Notes, " ") }
	one := func(file string) Report {
		t.Helper()
		pm := NewPostmortem([]Input{oomInput(t, "pastes/"+file)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%s: %d OOMs: %+v", file, len(pm.OOMs), pm.OOMs)
		}
		return pm.OOMs[0]
	}
	// A tornado log line with the exception's repr, then the traceback
	// of the same exception: one OOM, numba's, its driver call named.
	r := one("numba_tornado_repr_daskcuda225.txt")
	if len(r.Sources) != 2 || r.Sources[0].Line != 2 || r.Sources[1].Line != 12 || r.Text != "CUDA_ERROR_OUT_OF_MEMORY" || r.Caller() != "numba" ||
		!strings.Contains(notes(r), "numba's call to cuMemAlloc (an allocation)") || strings.Contains(notes(r), "PyTorch held") || strings.Contains(notes(r), "memory_summary") {
		t.Errorf("numba: %+v %q", r.Sources, r.Notes)
	}
	// JCuda's CudaException at cuCtxCreate (in the Java frames, not the
	// message): the note names the call from the frame (session 46,
	// h46e; before, "an allocation, or creating a context ... the message
	// does not say which") and does not call it an allocation.
	r = one("jcuda_driver_osprey67.txt")
	if r.Caller() != "JCuda" || !strings.Contains(notes(r), "call to cuCtxCreate (creating a context, which needs memory of its own; named by the stack's frame jcuda.driver.JCudaDriver.cuCtxCreate (JCudaDriver.java:1514))") ||
		strings.Contains(notes(r), "does not say which") || strings.Contains(notes(r), "PyTorch held") {
		t.Errorf("jcuda: %q", r.Notes)
	}
	// XLA's StreamExecutor allocator, printed in bold and in an E record:
	// one OOM of 33554432 bytes on device ordinal 0.
	r = one("xla_failed_request_meshtransformer66.txt")
	if len(r.Sources) != 2 || r.Occurrences != 2 || r.RequestedBytes != 33554432 || r.Device != 0 || !strings.Contains(notes(r), "from device 0") || !strings.Contains(notes(r), "StreamExecutor allocator") {
		t.Errorf("mesh-transformer: %+v %q", r.Sources, r.Notes)
	}
	r = one("xla_failed_request_graphcast18.txt")
	if r.RequestedBytes != 3206250496 || r.Device != 0 || r.Generation != "xla" {
		t.Errorf("graphcast: %+v", r)
	}
	// PJRT's host buffers' words: the note says the device is not named
	// and what it is if JAX ran on the CPU.
	r = one("xla_allocating_llnerf9.txt")
	if r.RequestedBytes != 20029400304 || r.Device != -1 || !strings.Contains(notes(r), "XLA's CPU client") || !strings.Contains(notes(r), "not a GPU's") {
		t.Errorf("llnerf: %+v %q", r, r.Notes)
	}
	r = one("tf2_eager_failed_to_allocate_kerasocr195.txt")
	if r.Generation != "tensorflow" || !strings.Contains(notes(r), "eager mode") || !strings.Contains(notes(r), "[Op:AddV2]") {
		t.Errorf("keras-ocr: %q", r.Notes)
	}
	for _, f := range []string{"tf1_see_above_tensorflow4735.txt", "tf1_see_above_of_shape_textclassification4.txt", "tf1_see_above_segan42.txt"} {
		if r := one(f); r.Generation != "tensorflow" || r.Exception != "ResourceExhaustedError" {
			t.Errorf("%s: %+v", f, r)
		}
	}
	// An issue title without a log level: not "an ERROR record" (TF logs
	// these words at INFO level too).
	r = one("tf_driver_title_no_level_pixor31.txt")
	if r.RequestedBytes != 19104890880 || strings.Contains(notes(r), "ERROR record") || !strings.Contains(notes(r), "no log level") {
		t.Errorf("pixor: %q", r.Notes)
	}
	// An E record with a Windows path (TF's Windows builds) is one.
	pm := NewPostmortem([]Input{textInput(t, "win.log", `2017-11-03 11:34:31.216421: E C:\tf_jenkins\home\workspace\rel-win\M\windows-gpu\PY\35\tensorflow\stream_executor\cuda\cuda_driver.cc:924] failed to allocate 2.44G (2617515264 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY`+"\n")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || !strings.Contains(notes(pm.OOMs[0]), "in an ERROR record") {
		t.Errorf("windows E record: %+v", pm.OOMs)
	}
	// Cut short inside a JSON string: the figures before the cut.
	r = one("pt2.x_cut_in_json_string_kernelgym.txt")
	if r.Generation != "cut" || r.Device != 5 || r.RequestedBytes != 8<<30 || r.DeviceFreeBytes != gib(662) || r.ProcessInUseBytes != gib(1644) || len(r.OtherProcesses) != 1 || r.OtherProcesses[0].PID != 2165460 {
		t.Errorf("kernelgym: %+v", r)
	}
	// A TensorFlow OOM on the CPU is no GPU OOM.
	in := oomInput(t, "pastes/tf_cpu_host_darkflow873.txt")
	if pm := NewPostmortem([]Input{in}, PostmortemOptions{}); len(in.Text.Messages) != 0 || len(pm.OOMs) != 0 {
		t.Errorf("darkflow: %+v", pm.OOMs)
	}
}

// jax-ml/jax#4994: ten pytest FAILED lines of ten tests, each
// "RuntimeError: Resource exhausted: Out of memory while trying to
// allocate N bytes." with N of 24, 16 or 4: ten failures (two tests are
// not one OOM however alike their words), each of a request too small to
// tell anything, without JAX's GPU preallocation advice (CPU tests on an
// ARM build; the message names no device).
func TestSmallXLARequestsOfManyTests(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/xla_pytest_small_requests_jax4994.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 10 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	for i, r := range pm.OOMs {
		n := strings.Join(r.Notes, " ")
		if len(r.Sources) != 1 || r.Sources[0].Line != int64(i+1) || r.RequestedBytes > 24 || r.Exception != "RuntimeError" ||
			strings.Contains(n, "75%") || !strings.Contains(n, "a request this small") {
			t.Errorf("OOM %d: %+v %q", i, r.Sources, r.Notes)
		}
	}
	// The same test's message printed twice is one OOM.
	line := "FAILED tests/core_test.py::CoreTest::test_jit_42 - RuntimeError: Resource exhausted: Out of memory while trying to allocate 24 bytes.\n"
	if pm := NewPostmortem([]Input{textInput(t, "x.log", line+line)}, PostmortemOptions{}); len(pm.OOMs) != 1 || pm.OOMs[0].Occurrences != 2 {
		t.Errorf("same test: %+v", pm.OOMs)
	}
}
