package pytorchtext

import "testing"

// Session 44, other allocators' and frameworks' forms (testdata/README.md,
// "OOM forms of other allocators, from the session-44 tester").

// PyTorch's cudaMallocAsync message on device 0 is "Allocation on device "
// alone: the index, an int8_t streamed as a character, is a NUL byte that
// ends the exception's text (pytorch/pytorch#168369). After
// torch.OutOfMemoryError it is an OOM on device 0 with no figures (it was
// no message at all: gpuleak said "No out-of-memory error"). ComfyUI's
// "!!! Exception during processing !!! Allocation on device " is str(ex)
// of the same message, as ComfyUI logs an exception it caught: a message
// too (session 47, f47c: in comfy4934 it is the next prompt's OOM, after
// "got prompt" at line 6, its progress line; whether a second print is a
// second OOM is the analysis's to tell). On device 1 the index is the
// byte 0x01 and the figures follow.
func TestHunt44eAsyncDeviceZeroCut(t *testing.T) {
	for _, c := range []struct {
		file     string
		lines    []int64
		progress []int64
	}{
		{"pastes/h44e_async_device0_cut_comfy4934.txt", []int64{2, 7}, []int64{0, 6}},
		{"pastes/h44e_async_device0_cut_min.txt", []int64{1}, []int64{0}},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != len(c.lines) {
			t.Fatalf("%s: %d messages %+v, want %d", c.file, len(rs.msgs), rs.msgs, len(c.lines))
		}
		for i, m := range rs.msgs {
			if m.line != c.lines[i] || m.progress != c.progress[i] || m.gen != string(GenAsync) || m.device != 0 || m.reason != AsyncDeviceZeroCut || len(m.sizes) != 0 {
				t.Errorf("%s: %+v, want line %d (progress line %d), async on device 0, no sizes, the NUL cut", c.file, m, c.lines[i], c.progress[i])
			}
		}
	}
	text := "torch.OutOfMemoryError: Allocation on device \x01 would exceed allowed memory. (out of memory)\nCurrently allocated     : 10.00 GiB\nRequested               : 2.00 GiB\nDevice limit            : 11.00 GiB\nFree (according to CUDA): 512.00 MiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB\n"
	rs, err := readText(t, "dev1", text, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 || rs.msgs[0].device != 1 || rs.msgs[0].sizes["requested"] != 2<<30 || rs.msgs[0].sizes["total"] != 11<<30 || rs.msgs[0].reason != "" {
		t.Errorf("device byte 0x01: %+v, want device 1, 2 GiB of 11 GiB", rs.msgs)
	}
}

// torch.OutOfMemoryError (and torch.cuda.OutOfMemoryError) makes its
// line an OOM whatever words follow: a form gpuleak does not know is an
// unparsed message, counted, not "No out-of-memory error". Python's
// "except torch.OutOfMemoryError:" is code, and the exception's name with
// nothing after it is no message.
func TestHunt44eTorchOOMExceptionAlone(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
	}{
		{"torch.OutOfMemoryError: some allocator's words gpuleak has never seen\n", 1},
		{"[rank3]: torch.cuda.OutOfMemoryError: another backend ran out\n", 1},
		{"    except torch.OutOfMemoryError: pass\n", 0},
		{"torch.OutOfMemoryError: \n", 0},
	} {
		rs, err := readText(t, "exc", c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != c.n || c.n == 1 && rs.msgs[0].gen != string(GenUnparsed) {
			t.Errorf("%.200q: %+v, want %d unparsed message(s)", c.text, rs.msgs, c.n)
		}
	}
}

// XLA's cudaMallocAsync allocator logs the bytes it failed to get before
// the driver's CUDA_ERROR_OUT_OF_MEMORY, and cuMemGetInfo's free and total
// bytes on the next line (NovaSky-AI/SkyRL#624: 1225195446464 bytes,
// 22635544576 free of 85095874560). All three were dropped ("the message
// has no sizes"). Releases before 2.12 print "N: " and "Free
// memory/Total memory:" without "Reported by CUDA: " (the same source's
// older form, synthetic); without the next line the request stays.
func TestHunt44eXLAAsyncSizes(t *testing.T) {
	rs := readFile(t, "pastes/h44e_xla_cumemallocasync_skyrl624.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("skyrl624: %d messages, want 1", len(rs.msgs))
	}
	if m := rs.msgs[0]; m.line != 1 || m.sizes["requested"] != 1225195446464 || m.sizes["free"] != 22635544576 || m.sizes["total"] != 85095874560 {
		t.Errorf("skyrl624: %+v, want line 1, 1225195446464 requested, 22635544576 free of 85095874560", m)
	}
	for _, c := range []struct {
		name, text       string
		req, free, total int64
	}{
		{"older form", "E0101 00:00:00.000000 1 gpu_cudamallocasync_allocator.cc:200] gpu_async_0 cuMemAllocAsync failed to allocate 2147483648: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n Free memory/Total memory: 1048576/8589934592\n", 2147483648, 1048576, 8589934592},
		{"no next line", "E0101 00:00:00.000000 1 gpu_cudamallocasync_allocator.cc:361] gpu_async_0 cuMemAllocAsync failed to allocate 4096 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\nsomething else\n", 4096, -1, -1},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		get := func(k string) int64 {
			if v, ok := rs.msgs[0].sizes[k]; ok {
				return v
			}
			return -1
		}
		if len(rs.msgs) != 1 || get("requested") != c.req || get("free") != c.free || get("total") != c.total {
			t.Errorf("%s: %+v, want %d requested, %d free of %d", c.name, rs.msgs, c.req, c.free, c.total)
		}
	}
}

// XLA prints its BufferAssignment stats after the out-of-memory message:
// their "total allocation" (HumanReadableNumBytes) is what the compiled
// program needs at once, 11.62 GiB in patrickbryant1/SpeedPPI#1 and 14.44
// GiB in AFProfile#8. It was ignored ("the message gives no other
// figures"). The stats lines are no message; an OOM line right after them
// is still read.
func TestHunt44eXLABufferAssignmentTotal(t *testing.T) {
	for _, c := range []struct {
		file    string
		line    int64
		request int64
		total   int64 // hundredths of GiB
	}{
		{"pastes/h44e_xla_bufferassignment_speedppi1.txt", 8, 9031036208, 1162},
		{"pastes/h44e_xla_bufferassignment_afprofile8.txt", 1, 4770354232, 1444},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1", c.file, len(rs.msgs))
		}
		m := rs.msgs[0]
		want := c.total * (1 << 30) / 100
		if got := XLATotalAllocation(m.text); m.line != c.line || m.sizes["requested"] != c.request || got < want-(1<<30)/200 || got > want+(1<<30)/200 {
			t.Errorf("%s: line %d, requested %d, total allocation %d; want line %d, %d, about %d", c.file, m.line, m.sizes["requested"], got, c.line, c.request, want)
		}
	}
	text := "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 100 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:    2.78GiB\nXlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 200 bytes.\n"
	rs, err := readText(t, "two", text, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 2 || XLATotalAllocation(rs.msgs[0].text) != -1 {
		t.Errorf("stats cut, then an OOM: %+v, want 2 messages, no total allocation", rs.msgs)
	}
}

// TensorFlow's BFC allocator logs its failure at WARNING level ("Allocator
// (GPU_0_bfc) ran out of memory trying to allocate 560.44MiB (rounded to
// 587661312)requested by op _EagerConst", then its chunk dump): an OOM on
// GPU 0 of the rounded bytes, where TensorFlow's own error does not say
// OOM (tensorflow#60401 ends with "Dst tensor is not initialized") or is
// not in the text (tensorflow#47820). Both were "No out-of-memory
// error". The record of an allocation "the caller indicates ... is not
// a failure" is no OOM; a BFC failure followed by TensorFlow's "OOM when
// allocating tensor" is one OOM, TensorFlow's.
func TestHunt44eTFBFCFailure(t *testing.T) {
	for _, c := range []struct {
		file string
		line int64
		req  int64
	}{
		{"pastes/h44e_tf_bfc_ranout_tf60401.txt", 8, 587661312},
		{"pastes/h44e_tf_bfc_ranout_tf47820.txt", 1, 18874368},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 || rs.msgs[0].line != c.line || rs.msgs[0].gen != string(GenTF) || rs.msgs[0].device != 0 || rs.msgs[0].sizes["requested"] != c.req {
			t.Errorf("%s: %+v, want one tensorflow message at line %d, GPU 0, %d bytes", c.file, rs.msgs, c.line, c.req)
		}
	}
	const w = "2021-09-24 16:22:56.271936: W tensorflow/core/common_runtime/bfc_allocator.cc:243] "
	for _, c := range []struct {
		name, text string
		n          int
		line       int64
		req        int64
	}{
		{"retry record", w + "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.60GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\n", 0, 0, 0},
		// TF's message names a shape; its size is the BFC record's
		// rounded bytes (session 46, h46a).
		{"then TF's OOM", w + "Allocator (GPU_0_bfc) ran out of memory trying to allocate 18.00MiB (rounded to 18874368)requested by op Mul\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[1024,4608] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:Mul]\n", 1, 2, 18874368},
		{"TF 1.x", "W tensorflow/core/common_runtime/bfc_allocator.cc:217] Ran out of memory trying to allocate 1.18GiB.  See logs for memory state.\n", 1, 1, 118 << 30 / 100}, // 1.18 GiB: 1267015352,
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != c.n {
			t.Errorf("%s: %+v, want %d message(s)", c.name, rs.msgs, c.n)
			continue
		}
		if c.n == 1 {
			req, ok := rs.msgs[0].sizes["requested"]
			if !ok {
				req = -1
			}
			if rs.msgs[0].line != c.line || req != c.req {
				t.Errorf("%s: %+v, want line %d, %d requested", c.name, rs.msgs[0], c.line, c.req)
			}
		}
	}
}

// NCCL's line prefix "host:pid:tid [cudaDev]" names the device of its
// "Cuda failure 'out of memory'", and its next line of the same prefix
// may give the bytes ("Failed to CUDA calloc 6291456 bytes": NVIDIA/nccl
// #1235, GPU 3; TensorRT-LLM#1670, GPU 2, no size). Both were dropped
// (device null, "the message has no sizes"). Another process's calloc
// line is not this failure's size.
func TestHunt44eNCCLDeviceAndSize(t *testing.T) {
	rs := readFile(t, "pastes/h44e_nccl_calloc_nccl1235.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 14 || rs.msgs[0].device != 3 || rs.msgs[0].sizes["requested"] != 6291456 {
		t.Errorf("nccl1235: %+v, want line 14, GPU 3, 6291456 bytes", rs.msgs)
	}
	rs = readFile(t, "pastes/h44e_nccl_enqueue_trtllm1670.txt", false)
	if len(rs.msgs) != 3 {
		t.Fatalf("trtllm1670: %d messages, want 3", len(rs.msgs))
	}
	for _, m := range rs.msgs {
		if _, ok := m.sizes["requested"]; m.device != 2 || ok {
			t.Errorf("trtllm1670: %+v, want GPU 2, no size", m)
		}
	}
	text := "h:10:11 [1] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\nh:20:21 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 4096 bytes\n"
	rs, err := readText(t, "other", text, false)
	if err != nil {
		t.Fatal(err)
	}
	// (Since session 45u the calloc line is its own process's OOM, its
	// failure line not in the text: see TestHunt45uNCCLCallocAlone.)
	if _, ok := rs.msgs[0].sizes["requested"]; len(rs.msgs) != 2 || rs.msgs[0].device != 1 || ok || rs.msgs[1].device != 0 || rs.msgs[1].sizes["requested"] != 4096 {
		t.Errorf("another process's calloc: %+v, want GPU 1, no size, then GPU 0's 4096 bytes", rs.msgs)
	}
}
