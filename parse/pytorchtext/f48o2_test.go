package pytorchtext

import (
	"strings"
	"testing"
)

// Session 48, f48o2 (testdata/README.md, "OOM text: other frameworks'
// forms and figures (session 48, f48o2)"): real pastes the session-48
// tester (t48a) found read as no OOM, or read without the figures they
// print.

// Other frameworks' and libraries' out-of-memory forms, each as its
// source prints it, were "No out-of-memory error in the inputs": CatBoost's
// pool (MiB, with and without the unit), MXNet's storage CHECK, thrust's
// parallel_for, Boost.Compute's OpenCL failure, PaddlePaddle's start-up
// check (bytes), the spill manager on RMM (a WARNING record, its
// traceback pasted flat onto its line), torch_memory_saver's CUresult 2.
// Each is one message with its figures and its printer.
func TestF48o2OtherFrameworksForms(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		file             string
		line             int64
		printer, backend string
		requested, free  int64
		textPrefix       string
	}{
		{"f48o2_catboost_2750_toutofmemory.txt", 1, "CatBoost", "CUDA", 8880 * MiB, 6188759961, "/src/catboost/"},
		{"f48o2_catboost_302_no_units_cli.txt", 2, "CatBoost", "CUDA", 1122549248, 1060060416, "catboost/cuda/"},
		{"f48o2_catboost_1347_two_gpus_nvsmi.txt", 14, "CatBoost", "CUDA", 11032 * MiB, 8661245440, "catboost/cuda/"},
		{"f48o2_mxnet_2778_windows_gpu_device_storage.txt", 3, "CUDA runtime", "CUDA", -1, -1, "Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading"},
		{"f48o2_mxnet_2913_memory_allocation_failed_v07.txt", 2, "CUDA runtime", "CUDA", -1, -1, "pooled_storage_manager.h:62: Memory allocation failed"},
		{"f48o2_nccl_33_legacy_core_cu_malloc.txt", 2, "NCCL", "CUDA", 2101248, -1, "WARN src/core.cu:225 failed to allocate"},
		{"f48o2_xgboost_6388_thrust_parallel_for.txt", 5, "CUDA runtime", "CUDA", -1, -1, "parallel_for failed: out of memory"},
		{"f48o2_lightgbm_4480_opencl_mem_object_alloc.txt", 4, "OpenCL", "OpenCL", -1, -1, "Memory Object Allocation Failure"},
		{"f48o2_paddle_8992_enforce_allocating.txt", 7, "PaddlePaddle", "CUDA", 10513462067, 1369702144, "enforce allocating <= available failed"},
		{"f48o2_dask_cuda_855_spill_on_demand.txt", 1, "RMM", "CUDA", 634776453, -1, "RMM allocation of 605.37 MiB failed"},
		{"f48o2_torch_memory_saver_4_curesult2.txt", 2, "CUDA driver", "CUDA", -1, -1, "[torch_memory_saver.cpp] CUresult error"},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		// CatBoost's what() line repeats its message: the same OOM
		// printed twice (the analysis merges them).
		if len(rs.msgs) == 0 || len(rs.msgs) > 2 || rs.msgs[len(rs.msgs)-1].text != rs.msgs[0].text {
			t.Errorf("%s: %d messages %+v, want 1 (or the same twice)", c.file, len(rs.msgs), rs.msgs)
			continue
		}
		m := rs.msgs[0]
		req, ok := m.sizes["requested"]
		if !ok {
			req = -1
		}
		free, ok := m.sizes["free"]
		if !ok {
			free = -1
		}
		p := Printer(Message{Generation: Generation(m.gen), Text: m.text, Backend: m.backend, Exception: m.exception, Prefix: m.prefix})
		if m.line != c.line || m.gen != string(GenCUDAError) || p != c.printer || m.backend != c.backend || !strings.HasPrefix(m.text, c.textPrefix) {
			t.Errorf("%s: line %d %s printer %q backend %q text %q; want line %d, %q, %q, text from %q", c.file, m.line, m.gen, p, m.backend, m.text, c.line, c.printer, c.backend, c.textPrefix)
		}
		if req != c.requested || free != c.free {
			t.Errorf("%s: requested %d free %d, want %d and %d", c.file, req, free, c.requested, c.free)
		}
	}
	// Not the forms: prose, code, another error code.
	for _, text := range []string{
		"We saw parallel_for failed: out of memory in the logs yesterday and it went away\n",
		"    cuda_cub::throw_on_error(status, \"parallel_for failed\");\n",
		"[torch_memory_saver.cpp] CUresult error  result=1 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103\n",
		"[E] [virtualMemoryBuffer.cpp::resizePhysical::154] Error Code 9: OutOfMemory (Requested size was 10 bytes.)\n",
		"distributed.worker - WARNING - RMM allocation of 605.37 MiB succeeded after spilling\n",
		"[19:03:47] src/io/image_io.cc:62: Memory allocation failed.\n",
		"Copied 512 bytes into 1024 byte device buffer\n",
	} {
		rs, err := readText(t, "x.txt", text, false)
		if err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %v %+v, want no message", text, err, rs.msgs)
		}
	}
}

// Figures printed but not read. XGBoost 2.1 and later print its free
// memory and request through HumanMemUnit ("53.1098GB": 1024^3 bytes,
// six significant digits), here in an escaped repr on the message's own
// line; RMM's "CUDA error (failed to allocate N bytes) at:" wrapped onto
// the line before its status; TensorRT's "Error Code 2: OutOfMemory
// (Requested size was N bytes.)" (was not read at all); PyTorch's message
// with no GPU index ("GPU  has a total capacity": was "does not parse");
// messages cut to a markdown table cell's width (were "does not parse",
// and a cell cut held for a next line that was the table's next row,
// which dropped four of the six rows' OOMs).
func TestF48o2FiguresRead(t *testing.T) {
	rs := readFile(t, "pastes/f48o2_xgboost_11684_dask_escaped_repr.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].sizes["requested"] != 64<<30 || !within(rs.msgs[0].sizes["free"], 57026728673) {
		t.Errorf("xgboost 11684: %+v, want 64 GiB requested, 53.1098 GiB free", rs.msgs)
	}
	rs = readFile(t, "pastes/f48o2_ray_rankactor_rmm_async_wrapped.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 3 || rs.msgs[0].sizes["requested"] != 368974272 {
		t.Errorf("RMM wrapped: %+v, want 368974272 bytes requested at line 3", rs.msgs)
	}
	rs, err := readText(t, "rmm.txt", "what(): std::bad_alloc: out_of_memory: CUDA error (failed to allocate 1024 bytes) at: /rmm/cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory\n", false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].sizes["requested"] != 1024 {
		t.Errorf("RMM on one line: %v %+v, want 1024 bytes requested", err, rs.msgs)
	}
	rs = readFile(t, "pastes/f48o2_tensorrt_4254_virtualmemorybuffer.txt", false)
	var trt []int64
	for _, m := range rs.msgs {
		trt = append(trt, m.sizes["requested"])
	}
	if len(rs.msgs) != 3 || trt[0] != 16581132288 || trt[1] != 16157507584 || rs.msgs[0].line != 7 || rs.msgs[2].line != 11 {
		t.Errorf("TensorRT: %+v, want lines 7 and 9 with their requests, then line 11", rs.msgs)
	}
	rs = readFile(t, "pastes/f48o2_tgi_2246_blank_gpu_index.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(Gen2) || rs.msgs[0].device != -1 || rs.msgs[0].sizes["total"] != 47813723423 || rs.msgs[0].sizes["requested"] != 2<<20 {
		t.Errorf("TGI 2246: %+v, want a 2.x message read whole, device unknown", rs.msgs)
	}
	rs = readFile(t, "pastes/f48o2_memopro_t4_results_table_cells.md", false)
	var lines []int64
	for _, m := range rs.msgs {
		lines = append(lines, m.line)
		if m.gen == string(GenCut) && (m.device != 0 || m.sizes["requested"] <= 0) {
			t.Errorf("table cell line %d: %+v, want device 0 and the request", m.line, m)
		}
	}
	if len(lines) != 6 {
		t.Errorf("table cells: messages on lines %v, want 9, 12, 13, 14, 16, 18", lines)
	}
}

// llama.cpp's ggml_cuda_error prints, after its device line, the call
// whose status it checked: it is read (hipMalloc and cuMemCreate
// allocate; cudaGraphLaunch, cudaStreamSynchronize and ollama's
// cudaMemcpyAsyncReserve do not), with the device and the place
// (ggml-cuda.cu:L) the device line gives. Real pastes: ollama#3765 (a HIP
// build), ik_llama.cpp, llama.cpp on device 2, LM Studio on Windows,
// LightRAG over ollama (after a runner's words on the status's line).
func TestF48o2GGMLCall(t *testing.T) {
	for _, c := range []struct {
		file   string
		line   int64
		device int32
		call   string
		fn     string
		at     int64
	}{
		{"f48o2_ollama_3765_rocm_hipmalloc.txt", 3, 0, "hipMalloc", "alloc", 233},
		{"f48o2_ik_llama_cpp_cumemcreate_device0.md", 3, 0, "cuMemCreate", "alloc", 384},
		{"f48o2_llamacpp_device2_cudagraphlaunch_decode.md", 5, 2, "cudaGraphLaunch", "ggml_cuda_graph_evaluate_and_capture", 4581},
		{"f48o2_lmstudio_windows_ggml_set_tensor_sync.txt", 3, 0, "cudaStreamSynchronize", "ggml_backend_cuda_buffer_set_tensor", 610},
		{"f48o2_lightrag_ollama_runner_cuda_error.txt", 1, 0, "cudaMemcpyAsyncReserve", "ggml_backend_cuda_buffer_set_tensor", 743},
	} {
		rs := readFile(t, "pastes/"+c.file, false)
		if len(rs.msgs) != 1 {
			t.Errorf("%s: %+v, want one message", c.file, rs.msgs)
			continue
		}
		m := rs.msgs[0]
		if m.line != c.line || m.device != c.device || m.call != c.call || m.printer != GGMLPrinter {
			t.Errorf("%s: line %d device %d call %q printer %q, want line %d device %d call %q by ggml", c.file, m.line, m.device, m.call, m.printer, c.line, c.device, c.call)
		}
		if fr := rs.frames[m.id]; len(fr) == 0 || fr[len(fr)-1].name != c.fn || fr[len(fr)-1].line != c.at {
			t.Errorf("%s: frames %+v, want %s at line %d", c.file, fr, c.fn, c.at)
		}
	}
	// No call line after the device line: none read, the message kept.
	rs, err := readText(t, "g.txt", "CUDA error: out of memory\n  current device: 1, in function alloc at ggml-cuda.cu:648\nGGML_ASSERT: ggml-cuda.cu:60: !\"CUDA error\"\n", false)
	if err != nil || len(rs.msgs) != 1 || rs.msgs[0].call != "" || rs.msgs[0].device != 1 {
		t.Errorf("no call line: %v %+v, want one message on device 1, no call", err, rs.msgs)
	}
}
