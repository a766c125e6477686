package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// Other frameworks' out-of-memory messages, in the words of their sources
// (see frameworkOOMs): what each reads. Sizes: CuPy prints bytes with
// thousands separators ("{:,}"), so 25,600,000 is 25600000;
// tf_allocator_adapter.cc prints plain bytes; PJRT's "16.00GiB" is 16 *
// 2^30. The TF message gives a shape, not bytes: no request; its device is
// the index after "/device:GPU:".
func TestFrameworkMessages(t *testing.T) {
	for _, c := range []struct {
		line, gen           string
		requested, reserved int64
		allowed             int64
		device              int32
	}{
		// cupy/cupy#2537.
		{"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).", "cupy", 25600000, 3635267072, -1, -1},
		// memory.pyx with a limit (MemoryPool.set_limit).
		{"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,024 bytes (allocated so far: 2,048 bytes, limit set to: 2,560 bytes).", "cupy", 1024, 2048, 2560, -1},
		// CuPy 13, the pool's total unknown (total == -1): no "(allocated so far".
		{"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes", "cupy", 512, -1, -1, -1},
		// CuPy before 5 (cupy/cupy#1912).
		{"cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)", "cupy", 1073741824, 12373894656, -1, -1},
		// patrickbryant1/AFProfile#8.
		{"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.", "xla", 4770354232, -1, -1, -1},
		{"XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 16.00GiB.", "xla", 16 << 30, -1, -1, -1},
		// op_kernel.cc's words, as TF 2.x raises them.
		{"tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc", "tensorflow", -1, -1, -1, 1},
		// TF 1.x's status text.
		{"  (0) Resource exhausted: OOM when allocating tensor with shape[1,512,64,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", "tensorflow", -1, -1, -1, 0},
		// TF 1.x's form with the bytes (Kyubyong/transformer#77, session
		// 41: was no message): the op's node follows on the next line, so
		// no device index.
		{"tensorflow.python.framework.errors_impl.ResourceExhaustedError: Ran out of GPU memory when allocating 1294336000 bytes for ", "tensorflow", 1294336000, -1, -1, -1},
	} {
		rs, err := readText(t, "x.log", c.line+"\n", false)
		if err != nil || len(rs.msgs) != 1 {
			t.Errorf("%q: %+v %v", c.line, rs, err)
			continue
		}
		m := rs.msgs[0]
		get := func(k string) int64 {
			if v, ok := m.sizes[k]; ok {
				return v
			}
			return -1
		}
		if m.gen != c.gen || get("requested") != c.requested || get("reserved") != c.reserved || get("allowed") != c.allowed || m.device != c.device || m.reason != "" {
			t.Errorf("%q: %+v", c.line, m)
		}
		if Framework(Generation(m.gen)) == "" {
			t.Errorf("%q: no framework named", c.line)
		}
	}
}

// The frameworks' words without their exception or status before them are
// prose or another program's ("Out of memory while trying to allocate" is
// also a C program's malloc failure): nothing is read.
func TestFrameworkWordsAlone(t *testing.T) {
	for _, line := range []string{
		`fprintf (stderr, "Out of memory while trying to allocate %u bytes", size);`,
		"I get Out of memory allocating 25,600,000 bytes with cupy",
		"W0924 warning: OOM when allocating tensor is printed",
		// Quoted in markdown (a README's table): a code span is prose.
		"| CuPy | `cupy.cuda.memory.OutOfMemoryError: Out of memory allocating N bytes` | ... |",
	} {
		rs, err := readText(t, "x.log", line+"\n", false)
		if err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %+v %v", line, rs.msgs, err)
		}
	}
}

// A CUDA out-of-memory error inside a framework's own log record at INFO
// or WARNING level is not an OOM: the program logged it and went on
// (tensorflow/tensorflow#52123: TF's start-up probe "failed to allocate
// 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY", then
// "Successfully opened dynamic library"). The file is still read (sniffed
// as OOM text) and each line gets a warning naming its level and size. The
// same words at ERROR level are an OOM, whose request is the line's bytes.
func TestLoggedOOMIsNotACrash(t *testing.T) {
	rs := readFile(t, "pastes/tf52123_info_cuda_driver_oom.log", false)
	if len(rs.msgs) != 0 {
		t.Errorf("messages %+v", rs.msgs)
	}
	ws := rs.meta.Warnings.Diagnostics()
	n := 0
	for _, w := range ws {
		if strings.Contains(w.Msg, "at INFO level") && strings.Contains(w.Msg, "8387559424 bytes") {
			n++
			if w.Line != n {
				t.Errorf("warning at line %d, want %d", w.Line, n)
			}
		}
	}
	if n != 2 {
		t.Errorf("warnings %q", rs.meta.Warnings.Strings())
	}
	for _, line := range []string{
		"2021-09-24 16:22:13.020179: W tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
		"I0924 16:22:13.020179 12345 cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
		// (op_kernel.cc's WARNING record of an op's failure is no probe:
		// the op failed, and with no exception after it, it is counted:
		// see TestH46aTFOpFailureAloneIsAnOOM.)
	} {
		if rs, err := readText(t, "x.log", line+"\n", false); err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %+v %v", line, rs.msgs, err)
		}
	}
	if !SniffOOM([]byte("2021-09-24 16:22:13.020179: I tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n")) {
		t.Error("an INFO record of an OOM is not sniffed as OOM text: the file would be refused rather than read")
	}
	line := "2021-09-24 16:22:13.020179: E tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"
	rs, err := readText(t, "x.log", line+"\n", false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenCUDAError) || rs.msgs[0].sizes["requested"] != 8387559424 {
		t.Errorf("ERROR record: %+v %v", rs.msgs, err)
	}
}

// The traceback-only pastes of CuPy and JAX are sniffed as OOM text.
func TestFrameworkPastesSniffed(t *testing.T) {
	for _, f := range []string{"pastes/cupy2537_oom_traceback.log", "pastes/jax_afprofile8_resource_exhausted.log"} {
		rs := readFile(t, f, false)
		if len(rs.msgs) != 1 {
			t.Errorf("%s: %+v", f, rs.msgs)
		}
		b, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		if !SniffOOM(b) {
			t.Errorf("%s: not sniffed as OOM text", f)
		}
	}
}

// HAMi-core's refusal of an allocation over a pod's memory limit
// (pastes/hami_greedy_kubectl_logs.txt: a HAMi tutorial's `kubectl logs
// greedy`, verbatim): "[HAMI-core ERROR (pid:1 thread=...
// allocator.c:52)]: Device 0 OOM 4401922048 / 4294967296", twice, then the
// program's own line (it caught PyTorch's OutOfMemoryError). HAMi-core's
// allocator.c prints LOG_ERROR("Device %d OOM %lu / %lu", d,
// new_allocated, limit): device 0, the pod's usage with the request
// 4401922048 bytes, its limit 4294967296 bytes (4 GiB, read as allowed).
// Was: no OOM at all. The same words without HAMi-core's ERROR prefix, or
// other text after "]: Device", are not a message.
func TestHAMiCoreOOM(t *testing.T) {
	rs := readFile(t, "pastes/hami_greedy_kubectl_logs.txt", false)
	if len(rs.msgs) != 2 {
		t.Fatalf("%d messages, want HAMi-core's 2: %+v", len(rs.msgs), rs.msgs)
	}
	for _, m := range rs.msgs {
		if m.gen != string(GenHAMi) || m.device != 0 || m.sizes["allowed"] != 4294967296 || m.reason != "" {
			t.Errorf("%+v: want hami, device 0, 4294967296 allowed", m)
		}
		if u := HAMiWouldUse(m.text); u != 4401922048 {
			t.Errorf("%q: would use %d, want 4401922048", m.text, u)
		}
	}
	b, err := os.ReadFile(dir + "pastes/hami_greedy_kubectl_logs.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !SniffOOM(b) {
		t.Error("not sniffed as OOM text")
	}
	for _, line := range []string{
		"[INFO]: Device 0 OOM 4401922048 / 4294967296",
		"[HAMI-core Msg(62:132856292957248:multiprocess_memory_limit.c:862)]: Device 0 ready",
		"[HAMI-core ERROR (pid:1 thread=1 allocator.c:52)]: Device 0 OOM 4401922048 of 4294967296",
	} {
		if rs, err := readText(t, "x.log", line+"\n", false); err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %+v %v; want no message", line, rs.msgs, err)
		}
	}
}

// PaddlePaddle's allocator (session 41; each was "unrecognised input
// format"): its whole form read anywhere (an issue title, a line of its
// own after BadAlloc, a double-backtick code span, after a full-width
// colon), sizes "%f" with MB/GB of 1024, rounded to the byte: 56.000000MB
// is 56 x 2^20, 7.782776GB 7.782776 x 2^30 = 8356692098, 12.750000MB
// 13369344, 6.933594GB 7444889868; a paste wrapped after "available
// memory is only" keeps its request (1.531250GB = 1644167168) and device.
func TestPaddleMessages(t *testing.T) {
	for _, c := range []struct {
		file                      string
		line                      int64
		requested, reserved, free int64
		cut                       bool
	}{
		{"pastes/paddle_title_paddleocr7091.txt", 1, 56 << 20, 8356692098, 13369344, false},
		{"pastes/paddle_double_backtick_paddlegan587.txt", 1, 3888906055, 22747020825, 3022126894, false},
		{"pastes/paddle_badalloc_no_allocated_pgl26.txt", 3, 7444889868, -1, 762052608, false},
		// Wrapped after "available memory is only": the figure on the
		// next line is joined (session 42; was cut, free unknown).
		{"pastes/paddle_wrapped_zh_colon_paddle26892.txt", 2, 1644167168, -1, 436862976, false},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %+v", c.file, rs.msgs)
		}
		m := rs.msgs[0]
		get := func(k string) int64 {
			if v, ok := m.sizes[k]; ok {
				return v
			}
			return -1
		}
		if m.gen != string(GenPaddle) || m.line != c.line || m.device != 0 || get("requested") != c.requested || get("reserved") != c.reserved || get("free") != c.free || (m.reason != "") != c.cut {
			t.Errorf("%s: %+v", c.file, m)
		}
	}
	for text, want := range map[string]bool{
		"Out of memory error on GPU 0 again, as yesterday\n":                                                                       false,
		"I got Out of memory error on GPU 0. Cannot allocate 56.000000MB memory on GPU 0, available memory is only 12.750000MB.\n": true,
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || (len(rs.msgs) == 1) != want || len(rs.msgs) > 1 {
			t.Errorf("%q: %+v %v, want a message %v", text, rs.msgs, err, want)
		}
	}
}
