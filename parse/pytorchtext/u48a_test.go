package pytorchtext

import (
	"slices"
	"strings"
	"testing"
)

// Session 48, u48a (testdata/README.md, "OOM text logs: printers of CUDA
// checks, ... (session 48, u48a)").

// "CUDA Error: out of memory" is darknet's check_error's words and other
// programs' checks' alike (vLLM's CuMemAllocator's "CUDA Error: %s at
// %s:%d", imageutilities' IuException): darknet is the printer only where
// the text says so, by its layer number before the words, its assertion
// after them ("darknet: ./src/cuda.c:36: check_error"), its perror line
// ("CUDA Error: out of memory: File exists") or its dark_cuda.c before
// them. Before, every one was darknet's. Real pastes; the lines are
// theirs.
func TestU48aCheckPrinter(t *testing.T) {
	for _, c := range []struct {
		file    string
		lines   []int64
		lib     string
		program string // a prefix of the printer named, for every message
	}{
		{"cudacheck_darknet_assert_alexeyab827.txt", []int64{6}, "the CUDA runtime", "darknet"},
		{"cudacheck_darknet_darkcuda_alexeyab4533.txt", []int64{5, 6}, "the CUDA runtime", "darknet"},
		{"cudacheck_darknet_perror_darknetros239.txt", []int64{2, 3}, "the CUDA runtime", "darknet"},
		{"cudacheck_darknet_perror_alexeyab514.txt", []int64{3, 4}, "the CUDA runtime", "darknet"},
		{"cudacheck_words_alone_iucuda_cnncrfstereo4.txt", []int64{3}, "the CUDA runtime", "a program's own CUDA check"},
		{"cudacheck_cumem_vllm13941.txt", []int64{15}, "the CUDA driver", "vLLM's CuMemAllocator"},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		var lines []int64
		for _, m := range rs.msgs {
			lines = append(lines, m.line)
			who, _ := CheckProgram(m.prefix, m.text)
			if m.printer != "" {
				who = m.printer
			}
			if m.gen != string(GenCUDAError) || Library(m.text) != c.lib || !strings.HasPrefix(who, c.program) {
				t.Errorf("%s: line %d %s of %q by %q (%q), want cuda-error of %q by %q", c.file, m.line, m.gen, Library(m.text), who, m.text, c.lib, c.program)
			}
		}
		if !slices.Equal(lines, c.lines) {
			t.Errorf("%s: messages on lines %v, want %v", c.file, lines, c.lines)
		}
	}
	for _, c := range []struct {
		text    string
		printer string
	}{
		// darknet's lines far from the words name nothing.
		{"darknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\n\n\n\n\nRuntimeError: CUDA Error: out of memory\n", ""},
		// Blank lines between the words and the assertion.
		{"CUDA Error: out of memory\n\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\n", DarknetPrinter},
		// Another program's line after them.
		{"CUDA Error: out of memory\nSegmentation fault\n", ""},
	} {
		rs, err := readText(t, "p.txt", c.text, false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].printer != c.printer {
			t.Errorf("%q: %v %+v, want one message printed by %q", c.text, err, rs.msgs, c.printer)
		}
	}
	// vLLM's words quoted in source code (a test's fake) are no message.
	rs, err := readText(t, "t.py", "            raise RuntimeError(\n                \"CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:139\"\n            )\n", false)
	if err != nil || len(rs.msgs) != 0 {
		t.Errorf("%v %+v, want no message", err, rs.msgs)
	}
}

// CNTK's CudaCall prints "CUDA failure 2: out of memory ; GPU=0 ;
// hostname=H ; expr=E", whose words ONNX Runtime's took: ONNX Runtime's
// go on after the expression ("expr=E; MSG", and from 1.10 "; file=F ;
// line=N" before it). CNTK's were ONNX Runtime's (microsoft/CNTK#1193,
// #480: real; the rest from the two programs' format strings, synthetic).
func TestU48aCNTKNotORT(t *testing.T) {
	for _, c := range []struct {
		file, lib string
		line      int64
	}{
		{"cntk_cuda_failure_cntk1193.txt", LibraryCNTK, 5},
		{"cntk_cuda_failure_callstack_cntk480.txt", LibraryCNTK, 2},
		{"h46a_ort_cuda_failure_deeplivecam584.txt", "ONNX Runtime", 1},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) == 0 || rs.msgs[0].line != c.line || Library(rs.msgs[0].text) != c.lib || rs.msgs[0].device != 0 {
			t.Errorf("%s: %+v, want a message of %s on line %d, GPU 0", c.file, rs.msgs, c.lib, c.line)
		}
	}
	for _, c := range []struct{ text, lib string }{
		// ONNX Runtime before 1.10, an empty message after the expression.
		{"CUDA failure 2: out of memory ; GPU=1 ; hostname=h ; expr=cudaMalloc((void**)&p, bytes); ", "ONNX Runtime"},
		{"CUDA failure 2: out of memory ; GPU=1 ; hostname=h ; expr=cudaMalloc((void**)&p, bytes); arena extend", "ONNX Runtime"},
		// Cut before the expression: the words alone do not tell.
		{"CUDA failure 2: out of memory ; GPU=1 ; hostname=h", "ONNX Runtime"},
		// CNTK's, its expression wrapped by the paste (microsoft/CNTK#1591).
		{"CUDA failure 2: out of memory ; GPU=1 ; hostname=********* ; expr=cudaMalloc((void**) &deviceBufferPtr, sizeof(All", LibraryCNTK},
	} {
		if got := Library(c.text); got != c.lib {
			t.Errorf("Library(%q) = %q, want %q", c.text, got, c.lib)
		}
	}
}

// A C++ exception that ends the process prints its type on the
// terminate handler's line and its what() on the next: the type names the
// thrower (thrust, PyTorch's c10), which the what() line's words alone do
// not. The message on the what() line takes it as its exception; thrust's
// bad_alloc of a device allocation, "std::bad_alloc: out of memory", is
// read (it was not: "no CUDA out-of-memory message"). Real pastes:
// NVIDIA/MinkowskiEngine#357, NVIDIA/cccl#2092,
// OrangeOwlSolutions/Thrust#1 (a blank line between the two),
// TuSimple/mx-maskrcnn#98 (its what() wrapped mid-word).
func TestU48aTerminateType(t *testing.T) {
	for _, c := range []struct {
		file, exception, program string
		line                     int64
	}{
		{"terminate_thrust_parallel_for_minkowski357.txt", "thrust::system::system_error", "thrust (a thrust::system_error)", 5},
		{"terminate_thrust_bad_alloc_cccl2092.txt", "thrust::THRUST_200400_860_NS::system::detail::bad_alloc", "thrust (its bad_alloc", 2},
		{"terminate_thrust_bad_alloc_old_orangeowl1.txt", "thrust::system::detail::bad_alloc", "thrust (its bad_alloc", 3},
		{"terminate_dmlc_pooled_storage_mxmaskrcnn98.txt", "dmlc::Error", "MXNet", 3},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) != 1 {
			t.Errorf("%s: %d messages, want 1: %+v", c.file, len(rs.msgs), rs.msgs)
			continue
		}
		m := rs.msgs[0]
		who, _ := CheckProgram(m.exception+" "+m.prefix, m.text)
		if m.line != c.line || m.exception != c.exception || m.gen != string(GenCUDAError) || !strings.HasPrefix(who, c.program) {
			t.Errorf("%s: %+v by %q, want line %d, exception %q, by %q", c.file, m, who, c.line, c.exception, c.program)
		}
	}
	for _, c := range []struct{ text, exception string }{
		// PyTorch's C++ check, thrown out of a thread.
		{"terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: out of memory\n", "c10::Error"},
		// The type three lines before: another failure's.
		{"terminate called after throwing an instance of 'c10::Error'\n\n\nRuntimeError: CUDA error: out of memory\n", "RuntimeError"},
		// Not on a what() line.
		{"terminate called after throwing an instance of 'c10::Error'\nCUDA error: out of memory\n", ""},
	} {
		rs, err := readText(t, "t.txt", c.text, false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].exception != c.exception {
			t.Errorf("%q: %v %+v, want one message of exception %q", c.text, err, rs.msgs, c.exception)
		}
	}
	if p := Printer(Message{Generation: GenCUDAError, Exception: "c10::Error", Text: "CUDA error: out of memory"}); p != "PyTorch" {
		t.Errorf("c10::Error's printer %q, want PyTorch", p)
	}
}

// llama.cpp's ggml error function prints the runtime's string, then the
// device current at the check and its place ("  current device: 0, in
// function ggml_cuda_pool_malloc_vmm at ...ggml-cuda.cu:8658") and the
// call: the device and the place are read, and the printer is llama.cpp's
// (the status alone was PyTorch's "CUDA error: out of memory", device
// unknown, with PyTorch's advice). ollama/ollama#3237, real; the same
// with device 1 and a logger's timestamps before each line (synthetic,
// as ggml's logger prints them), and a PyTorch status with no device line
// after it.
func TestU48aGGMLDeviceLine(t *testing.T) {
	rs := readFile(t, "pastes/ggml_cuda_error_device_ollama3237.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 2 || rs.msgs[0].device != 0 || rs.msgs[0].printer != GGMLPrinter {
		t.Fatalf("%+v, want one message on line 2, device 0, printed by ggml", rs.msgs)
	}
	if fr := rs.frames[rs.msgs[0].id]; len(fr) != 1 || fr[0].name != "ggml_cuda_pool_malloc_vmm" || fr[0].line != 8658 || !strings.HasSuffix(fr[0].file, "ggml-cuda.cu") {
		t.Errorf("frames %+v, want ggml_cuda_pool_malloc_vmm at ggml-cuda.cu:8658", fr)
	}
	if p := Printer(Message{Generation: GenCUDAError, Printer: GGMLPrinter, Text: "CUDA error: out of memory"}); p != "llama.cpp" {
		t.Errorf("printer %q, want llama.cpp", p)
	}
	for _, c := range []struct {
		text    string
		device  int32
		printer string
	}{
		{"3.00.676.288 E CUDA error: out of memory\n3.00.676.294 E   current device: 1, in function alloc at /src/ggml/src/ggml-cuda/ggml-cuda.cu:648\n3.00.676.294 E   cuMemSetAccess(start_ptr, reserve_size, &access, 1)\n", 1, GGMLPrinter},
		{"CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call\n", -1, ""},
		{"RuntimeError: CUDA error: out of memory\n  current device: 1, in function alloc at ggml-cuda.cu:648\n", -1, ""},
		// A HIP build's words (GGML_CUDA_NAME "ROCm"): the HIP runtime's
		// status, read (it was not), with and without the device line.
		{"ROCm error: out of memory\n  current device: 1, in function alloc at /llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:480\n  hipMalloc((void **) &ptr, look_ahead_size)\n", 1, GGMLPrinter},
		{"ROCm error: out of memory\n  hipStreamCreateWithFlags\n", -1, ""},
	} {
		rs, err := readText(t, "g.txt", c.text, false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].device != c.device || rs.msgs[0].printer != c.printer {
			t.Errorf("%q: %v %+v, want one message on device %d by %q", c.text, err, rs.msgs, c.device, c.printer)
		}
	}
}

// Telling code from a log both ways (synthetic lines, as a log and a
// pasted script hold them): "and", "or", "not" and "in" before a quoted
// message join a log's sentence as well as an expression, so they make it
// code only on a statement's line ("if ... and '...' in msg:", "ok = x
// and '...'"); a log line that quotes the error after them is an OOM (it
// was dropped). Ray's "ray.exceptions.OutOfMemoryError: " after "except"
// is code that catches it, not Ray's memory monitor (it was a host-memory
// warning).
func TestU48aCodeOrLog(t *testing.T) {
	const msg = "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 20.10 GiB already allocated; 1.20 GiB free; 21.00 GiB reserved in total by PyTorch)"
	for _, c := range []struct {
		line string
		oom  bool
	}{
		{"2024-05-01 12:00:03 ERROR job 17 failed and '" + msg + "' was logged", true},
		{"worker 3: step skipped, not '" + msg + "' but a retry", true},
		{"batch 9 ran out in '" + msg + "' (retrying with half)", true},
		{"    if 'x' in s and '" + msg + "' in s:", false},
		{"ok = x and '" + msg + "'", false},
		{"    return not '" + msg + "'", false},
		{"    elif err or '" + msg + "' == last:", false},
	} {
		rs, err := readText(t, "c.txt", c.line+"\n", false)
		if err != nil || (len(rs.msgs) == 1) != c.oom {
			t.Errorf("%q: %v %d messages, want OOM %v", c.line, err, len(rs.msgs), c.oom)
		}
	}
	for _, c := range []struct {
		text string
		host bool
	}{
		{"try:\n    ray.get(refs)\nexcept ray.exceptions.OutOfMemoryError: pass\n", false},
		{"    except(ray.exceptions.OutOfMemoryError): continue\n", false},
		{"ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n", true},
	} {
		rs, err := readText(t, "r.txt", c.text, false)
		if err != nil || (len(rs.meta.NotOOMs.Strings()) == 1) != c.host {
			t.Errorf("%q: %v host warnings %q, want %v", c.text, err, rs.meta.NotOOMs.Strings(), c.host)
		}
	}
}

// xmr-stak's CUDA_CHECK ("[CUDA] Error: %s"), thrown as a
// std::runtime_error (fireice-uk/xmr-stak PR #399's example output, real):
// its what() line is read as the CUDA runtime's OOM, exception
// std::runtime_error (it was "no CUDA out-of-memory message"); the words
// in a sentence are not.
func TestU48aCUDATagCheck(t *testing.T) {
	rs := readFile(t, "pastes/terminate_cuda_tag_xmrstak399.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 4 || rs.msgs[0].exception != "std::runtime_error" || Library(rs.msgs[0].text) != "the CUDA runtime" {
		t.Errorf("%+v, want one CUDA runtime OOM on line 4 of std::runtime_error", rs.msgs)
	}
	rs, err := readText(t, "s.txt", "I get [CUDA] Error: out of memory when mining\n", false)
	if err != nil || len(rs.msgs) != 0 {
		t.Errorf("%v %+v, want no message in a sentence", err, rs.msgs)
	}
}
