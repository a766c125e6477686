package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// TensorFlow's and XLA's out-of-memory messages in the forms real pastes
// show them (testdata/README.md, "TensorFlow, XLA and other programs'
// OOMs as pasted"), each read as its framework's message, with what the
// message gives: XLA's exact bytes and device ordinal; TF's GPU index, or
// none.
func TestTFXLAPastes(t *testing.T) {
	for _, c := range []struct {
		file      string
		n         int    // messages
		gen       string // of each
		requested int64  // -1: none
		device    int32
		exception string // of the first
		text      string // of each: the message as read
	}{
		// TF 1.x's Session.run error: OpError.__str__ writes "%s (see
		// above for traceback): %s" after the op's creation stack. The
		// op's node on the next line names its device, "/gpu:0" (tfnode.go).
		{"tf1_see_above_tensorflow4735.txt", 1, "tensorflow", -1, 0, "ResourceExhaustedError", "OOM when allocating tensor with shape[256,112,112,64]"},
		// gpu_device.cc's MakeTensorFromProto: "of shape [S] and type T";
		// the device is on the node line below, "/device:GPU:0", not in
		// the message.
		{"tf1_see_above_of_shape_textclassification4.txt", 1, "tensorflow", -1, 0, "ResourceExhaustedError", "OOM when allocating tensor of shape [563354,256] and type float"},
		{"tf1_see_above_segan42.txt", 1, "tensorflow", -1, -1, "ResourceExhaustedError", "OOM when allocating tensor with shape[100,4096,32]"},
		// XLA's StreamExecutorMemoryAllocator: "Failed to allocate request
		// for %s (%uB) on device ordinal %d", in bold markdown after
		// "RuntimeError: Resource exhausted:" and in an E record: both
		// read the same (the "**" is not the message's).
		{"xla_failed_request_meshtransformer66.txt", 2, "xla", 33554432, 0, "RuntimeError", "Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0"},
		{"xla_failed_request_graphcast18.txt", 1, "xla", 3206250496, 0, "jaxlib.xla_extension.XlaRuntimeError", "Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0"},
		// PJRT's host buffers: "Out of memory allocating %d bytes." after
		// the status, not CuPy's OutOfMemoryError: XLA's, no device.
		{"xla_allocating_llnerf9.txt", 1, "xla", 20029400304, -1, "jaxlib.xla_extension.XlaRuntimeError", "Out of memory allocating 20029400304 bytes."},
		// TF 2's eager form: the op's name, no shape.
		{"tf2_eager_failed_to_allocate_kerasocr195.txt", 1, "tensorflow", -1, -1, "ResourceExhaustedError", "failed to allocate memory [Op:AddV2]"},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) != c.n {
			t.Errorf("%s: %d messages: %+v", c.file, len(rs.msgs), rs.msgs)
			continue
		}
		for i, m := range rs.msgs {
			req, ok := m.sizes["requested"]
			if !ok {
				req = -1
			}
			if m.gen != c.gen || req != c.requested || m.device != c.device || m.text != c.text || m.reason != "" || i == 0 && m.exception != c.exception {
				t.Errorf("%s: message %d: %+v", c.file, i, m)
			}
		}
		b, err := os.ReadFile(dir + "pastes/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !SniffOOM(b) {
			t.Errorf("%s: not sniffed as OOM text", c.file)
		}
	}
}

// The grammar of the sources, beyond the pastes: TF 2.11+'s
// function_node annotation (its device is the message's), HumanReadableNumBytes'
// one decimal for KiB, TF 1.x's "/gpu:d", a status in a log record; the
// words without their status are anybody's (the Linux crypto tests print
// "Failed to allocate request for %s", many programs "failed to allocate
// memory").
func TestTFXLAGrammar(t *testing.T) {
	for _, c := range []struct {
		line, gen, text string
		requested       int64
		device          int32
	}{
		{"ResourceExhaustedError: {{function_node __wrapped__Maximum_device_/job:localhost/replica:0/task:0/device:GPU:1}} failed to allocate memory [Op:Maximum] name: ", "tensorflow", "failed to allocate memory [Op:Maximum]", -1, 1},
		{"tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory [Op:Mul]", "tensorflow", "failed to allocate memory [Op:Mul]", -1, -1},
		{"XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 1.0KiB (1024B) on device ordinal 1", "xla", "Failed to allocate request for 1.0KiB (1024B) on device ordinal 1", 1024, 1},
		{"ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[5,4096,5,18]", "tensorflow", "OOM when allocating tensor with shape[5,4096,5,18]", -1, -1},
		{"ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[32,64,160,576] and type float on /job:localhost/replica:0/task:0/gpu:0 by allocator gpu_bfc", "tensorflow", "", -1, 0},
		{"2021-07-21 16:15:16.513776: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client.cc:1981] Execution of replica 0 failed: Resource exhausted: Out of memory allocating 8 bytes.", "xla", "Out of memory allocating 8 bytes.", 8, -1},
		// CuPy's words are still CuPy's after its exception.
		{"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes (allocated so far: 1,024 bytes).", "cupy", "", 512, -1},
	} {
		rs, err := readText(t, "x.log", c.line+"\n", false)
		if err != nil || len(rs.msgs) != 1 {
			t.Errorf("%q: %+v %v", c.line, rs, err)
			continue
		}
		m := rs.msgs[0]
		req, ok := m.sizes["requested"]
		if !ok {
			req = -1
		}
		if m.gen != c.gen || req != c.requested || m.device != c.device || c.text != "" && m.text != c.text {
			t.Errorf("%q: %+v", c.line, m)
		}
	}
	for _, line := range []string{
		`pr_err("alg: skcipher: Failed to allocate request for %s\n", algo);`,
		"alg: aead: Failed to allocate request for gcm(aes)",
		"I get failed to allocate memory when the batch is large",
		`snprintf(result->error_message, sizeof(result->error_message), "Failed to allocate memory");`,
		"| TF | `ResourceExhaustedError: failed to allocate memory [Op:AddV2]` | eager |",
		// RESOURCE_EXHAUSTED is gRPC's and absl's status for any
		// exhausted resource (hunt s35): only the frameworks' whole forms
		// are their OOMs.
		"RPC failed: RESOURCE_EXHAUSTED: Failed to allocate request for stream 7: too many pending streams",
		"grpc: RESOURCE_EXHAUSTED: Failed to allocate request for 4.00MiB (4194304B) in the receive buffer",
		"F1201 tpu_driver.cc:12] RESOURCE_EXHAUSTED: Failed to allocate request for 2.0KiB (2048B) on host",
		"RESOURCE_EXHAUSTED: Out of memory allocating 4096 bytes for the message buffer (grpc max receive size)",
		"redis: RESOURCE_EXHAUSTED: Out of memory allocating 4096 bytes",
		"RESOURCE_EXHAUSTED: failed to allocate memory for the sidecar cache",
	} {
		if rs, err := readText(t, "x.log", line+"\n", false); err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %+v %v", line, rs.msgs, err)
		}
	}
}

// A TensorFlow OOM whose device is the CPU (thtrieu/darkflow#873: "on
// /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu") ran out
// of host memory: no message is read (it is no GPU OOM, as PyTorch's
// DefaultCPUAllocator errors are none), each line gets a warning that
// says what it is, and the file is still sniffed as OOM text (read, not
// refused). The eager form's device is in its annotation.
func TestTFHostMemoryIsNoGPUOOM(t *testing.T) {
	rs := readFile(t, "pastes/tf_cpu_host_darkflow873.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("messages %+v", rs.msgs)
	}
	var lines []int
	for _, w := range rs.meta.Warnings.Diagnostics() {
		if strings.Contains(w.Msg, "in host memory") && strings.Contains(w.Msg, "/device:CPU:0") && strings.Contains(w.Msg, "not counted as a GPU OOM") {
			lines = append(lines, w.Line)
		}
	}
	if len(lines) != 2 || lines[0] != 1 || lines[1] != 5 || len(rs.meta.NotOOMs.Strings()) != 2 {
		t.Errorf("warnings %q", rs.meta.Warnings.Strings())
	}
	b, err := os.ReadFile(dir + "pastes/tf_cpu_host_darkflow873.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !SniffOOM(b) {
		t.Error("not sniffed as OOM text")
	}
	line := "ResourceExhaustedError: {{function_node __wrapped__Cast_device_/job:localhost/replica:0/task:0/device:CPU:0}} failed to allocate memory [Op:Cast]\n"
	if rs, err := readText(t, "x.log", line, false); err != nil || len(rs.msgs) != 0 || !strings.Contains(strings.Join(rs.meta.Warnings.Strings(), " "), "[Op:Cast], on /device:CPU:0") {
		t.Errorf("eager on the CPU: %+v %q %v", rs.msgs, rs.meta.Warnings.Strings(), err)
	}
}

// A message inside a quoted string ends with the string: cut short inside
// a JSON value (a KernelGym report: `"error_message": "CUDA out of memory.
// ... Process 2165460 has 448.00 MiB memory in use.",`), it is a cut
// message with every figure before the cut, as the same text at a line's
// end is; and a status token in a repr keeps no quote (numba's
// "exception=CudaAPIError(2, 'Call to cuMemAlloc results in
// CUDA_ERROR_OUT_OF_MEMORY')>)" in a tornado log line reads
// "CUDA_ERROR_OUT_OF_MEMORY", as its traceback's last line does).
func TestMessageEndsWithItsString(t *testing.T) {
	rs := readFile(t, "pastes/pt2.x_cut_in_json_string_kernelgym.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("messages %+v", rs.msgs)
	}
	m := rs.msgs[0]
	gib := func(h int64) int64 { return (h*(1<<30) + 50) / 100 }
	if m.gen != "cut" || m.line != 4 || m.device != 5 || m.sizes["requested"] != 8<<30 || m.sizes["total"] != gib(2352) || m.sizes["free"] != gib(662) ||
		m.sizes["process_in_use"] != gib(1644) || len(rs.procs[m.id]) != 1 || rs.procs[m.id][0] != (Process{2165460, 448 << 20}) || strings.Contains(m.text, `"`) {
		t.Errorf("%+v %+v", m, rs.procs)
	}
	msg := "CUDA out of memory. Tried to allocate 8.00 GiB. GPU 5 has a total capacity of 23.52 GiB of which 6.62 GiB is free."
	for _, line := range []string{
		`{"error_message": "` + msg + `", "x": 1}`,
		`{'error_message': '` + msg + `', 'x': 1}`,
		`  "error_message": "` + msg + `",`,
		`{"error_message": "` + msg + `\nTraceback", "x": 1}`,
	} {
		rs, err := readText(t, "x.log", line+"\n"+`  File "x.py", line 3, in f`+"\n", false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].gen != "cut" || rs.msgs[0].sizes["free"] != gib(662) {
			t.Errorf("%q: %+v %v", line, rs.msgs, err)
		}
	}
	rs = readFile(t, "pastes/numba_tornado_repr_daskcuda225.txt", false)
	if len(rs.msgs) != 2 || rs.msgs[0].text != "CUDA_ERROR_OUT_OF_MEMORY" || rs.msgs[1].text != "CUDA_ERROR_OUT_OF_MEMORY" || rs.msgs[0].line != 2 || rs.msgs[1].line != 12 {
		t.Errorf("numba: %+v", rs.msgs)
	}
}

// PyTorch's CPU allocator's errors ran out of host memory: no message is
// read (no GPU OOM), a warning gives the request, and the file is sniffed
// as OOM text (read, not refused as unrecognised). The real pastes:
// Fooocus#237, the Windows words of alloc_cpu.cpp ("not enough memory",
// 26214400 bytes = 25 MiB exactly, 25<<20); mxfold2#20, the Linux words
// ("can't allocate memory", 132426121216 bytes, error code 12). Then each
// generation's words from PyTorch's sources (see host.go): 1.2-1.12's
// Windows " Buy new RAM!", Android's CPUAllocator.cpp:73, 1.0-1.1's
// posix_memalign enforce (no size), TH's whole GiB (64GB: 64 to 65 GiB,
// since THAlloc divides by 2^30 rounding down; 0GB: under 1 GiB). Prose
// naming the allocator, or a message cut before its size, is no message.
func TestCPUAllocatorIsHostMemory(t *testing.T) {
	for _, c := range []struct {
		file, says string
	}{
		{"pastes/cpu_allocator_windows_fooocus237.txt", "could not allocate 26214400 bytes (25.00 MiB) of host memory"},
		{"pastes/cpu_allocator_linux_mxfold2_20.txt", "could not allocate 132426121216 bytes (123.33 GiB) of host memory"},
	} {
		rs := readFile(t, c.file, false)
		ws := rs.meta.Warnings.Diagnostics()
		if len(rs.msgs) != 0 || len(ws) == 0 || ws[0].Line != 1 || !strings.Contains(ws[0].Msg, c.says) || !strings.Contains(ws[0].Msg, "not counted as a GPU OOM") || len(rs.meta.NotOOMs.Strings()) != 1 {
			t.Errorf("%s: messages %+v, warnings %q", c.file, rs.msgs, rs.meta.Warnings.Strings())
		}
		b, err := os.ReadFile(dir + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !SniffOOM(b) {
			t.Errorf("%s: not sniffed as OOM text", c.file)
		}
	}
	for _, c := range []struct {
		line, says string // says is "" where no warning is due
	}{
		{`RuntimeError: [enforce fail at ..\c10\core\CPUAllocator.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 113246208 bytes. Buy new RAM!`, "113246208 bytes (108.00 MiB)"},
		{"`RuntimeError: [enforce fail at CPUAllocator.cpp:73] data. DefaultCPUAllocator: not enough memory: you tried to allocate 473909280 bytes. Buy new RAM!`", "473909280 bytes (451.96 MiB)"},
		{`RuntimeError:[enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 6576668672 bytes. Error code 12 (Cannot allocate memory)`, "6576668672 bytes (6.12 GiB)"}, // 6576668672 / 2^30 = 6.1249...,
		{`RuntimeError: [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0`, "could not allocate host memory (PyTorch 1.0-1.1 print the failed posix_memalign call, not the size), error code 12 (ENOMEM)"},
		{`RuntimeError: $ Torch: not enough memory: you tried to allocate 64GB. Buy new RAM! at /opt/conda/conda-bld/pytorch-nightly_1540719301766/work/aten/src/TH/THGeneral.cpp:204`, "could not allocate 64 to 65 GiB of host memory"},
		{`RuntimeError: $ Torch: not enough memory: you tried to allocate 0GB. Buy new RAM! at ..\aten\src\TH\THGeneral.cpp:204`, "could not allocate under 1 GiB of host memory"},
		// posix_memalign's EINVAL (22, a bad alignment) is no shortage:
		// still no GPU OOM, but the note must not say memory ran out.
		{`RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 4096 bytes. Error code 22 (Invalid argument)`, "not ENOMEM (12)"},
		{`[Bug]: DefaultCPUAllocator: not enough memory`, ""},
		{`I keep hitting DefaultCPUAllocator: not enough memory: you tried to allocate a lot`, ""},
		{`RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 1324`, ""},
	} {
		rs, err := readText(t, "x.log", c.line+"\n", false)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(rs.meta.Warnings.Strings(), " | ")
		if len(rs.msgs) != 0 || (c.says == "") != (len(rs.meta.NotOOMs.Strings()) == 0) || !strings.Contains(got, c.says) {
			t.Errorf("%s: messages %+v, warnings %q", c.line, rs.msgs, got)
		}
	}
}
