package oom

import (
	"os"
	"strings"
	"testing"
)

// Session 48, f48o2 (testdata/README.md, "OOM text: other frameworks'
// forms and figures (session 48, f48o2)"): the notes of the forms the
// reader now reads say whose memory ran out in their terms, with the
// figures the text printed, and where the call allocates nothing, that
// the error was reported there asynchronously.
func TestF48o2FormNotes(t *testing.T) {
	for _, c := range []struct {
		file     string
		want     []string
		not      []string
		freeKnow bool
	}{
		// CatBoost's free figure is its pool's: not shown as the GPU's.
		{"f48o2_catboost_2750_toutofmemory.txt", []string{"CatBoost's GPU memory pool", "it asked for 8.67 GiB and the pool's last free block held 5.76 GiB", "2.91 GiB short", "gpu_ram_part", "no CUDA call failed"}, []string{"pinned", "ALLOC_FAILED"}, false},
		{"f48o2_paddle_8992_enforce_allocating.txt", []string{"FLAGS_fraction_of_gpu_memory_to_use", "it wanted 9.79 GiB and the GPU had 1.28 GiB free"}, []string{"ALLOC_FAILED"}, true},
		{"f48o2_xgboost_6388_thrust_parallel_for.txt", []string{"parallel_for", "reported there asynchronously", "CUDA_LAUNCH_BLOCKING=1"}, []string{"pinned", "the GPU had no room for it"}, false},
		{"f48o2_dask_cuda_855_spill_on_demand.txt", []string{"spill-on-demand", "605.37 MiB", "device_memory_limit"}, []string{"pinned"}, false},
		{"f48o2_torch_memory_saver_4_curesult2.txt", []string{"torch_memory_saver", "cuMemCreate", "CUDA_ERROR_OUT_OF_MEMORY"}, []string{"pinned"}, false},
		{"f48o2_lightgbm_4480_opencl_mem_object_alloc.txt", []string{"CL_MEM_OBJECT_ALLOCATION_FAILURE", "Boost.Compute"}, []string{"cudaMalloc", "nvidia-smi"}, false},
		{"f48o2_mxnet_2913_memory_allocation_failed_v07.txt", []string{"MXNet (its pooled storage manager", "an allocation (cudaMalloc)"}, []string{"pinned"}, false},
		{"f48o2_nccl_33_legacy_core_cu_malloc.txt", []string{"NCCL 1.x's allocDevMem", "2.00 MiB"}, []string{"Failed to CUDA calloc", "pinned"}, false},
		{"f48o2_mxnet_2778_windows_gpu_device_storage.txt", []string{"MXNet", "an allocation (cudaMalloc)"}, []string{"pinned"}, false},
	} {
		r := hunt44eOOM(t, "pytorch/pastes/"+c.file)
		notes := strings.Join(r.Notes, " ")
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s: notes %q, want %q", c.file, r.Notes, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(notes, w) {
				t.Errorf("%s: notes %q, want no %q", c.file, r.Notes, w)
			}
		}
		if r.known(r.DeviceFreeBytes) != c.freeKnow {
			t.Errorf("%s: GPU free %d, known %v", c.file, r.DeviceFreeBytes, c.freeKnow)
		}
	}
}

// TensorRT's "Error Code 2: OutOfMemory (Requested size was N bytes.)"
// is its virtual memory buffer's (cuMemCreate), not the default
// allocator's cudaMalloc; its bytes are the request.
func TestF48o2TensorRTOutOfMemoryCode(t *testing.T) {
	const path = "pytorch/pastes/f48o2_tensorrt_4254_virtualmemorybuffer.txt"
	b, err := os.ReadFile("../../testdata/" + path)
	if err != nil {
		t.Fatal(err)
	}
	pm := NewPostmortem([]Input{textInput(t, path, string(b))}, PostmortemOptions{})
	if len(pm.OOMs) != 3 {
		t.Fatalf("%d OOMs, want 3 (lines 7, 9, 11)", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	notes := strings.Join(r.Notes, " ")
	if r.RequestedBytes != 16581132288 || !strings.Contains(notes, "Error Code 2: OutOfMemory") || !strings.Contains(notes, "15.44 GiB of physical memory") || strings.Contains(notes, "default allocator") {
		t.Errorf("requested %d notes %q, want 16581132288 bytes and the buffer's note", r.RequestedBytes, r.Notes)
	}
}

// llama.cpp's ggml_cuda_error: a call that allocates (hipMalloc,
// cuMemCreate) is named as the allocation that found no room; one that
// does not (cudaGraphLaunch, cudaStreamSynchronize, a copy) gets the note
// that the error was reported there asynchronously, an earlier
// allocation or launch having failed. None gets PyTorch's pinned-memory
// note (these were PyTorch's "CUDA error: out of memory" before
// session 48).
func TestF48o2GGMLCallNotes(t *testing.T) {
	for _, c := range []struct {
		file  string
		async bool
		call  string
	}{
		{"f48o2_ollama_3765_rocm_hipmalloc.txt", false, "hipMalloc"},
		{"f48o2_ik_llama_cpp_cumemcreate_device0.md", false, "cuMemCreate"},
		{"f48o2_llamacpp_device2_cudagraphlaunch_decode.md", true, "cudaGraphLaunch"},
		{"f48o2_lmstudio_windows_ggml_set_tensor_sync.txt", true, "cudaStreamSynchronize"},
		{"f48o2_lightrag_ollama_runner_cuda_error.txt", true, "cudaMemcpyAsyncReserve"},
	} {
		r := hunt44eOOM(t, "pytorch/pastes/"+c.file)
		notes := strings.Join(r.Notes, " ")
		if !strings.Contains(notes, "its call "+c.call) || strings.Contains(notes, "reported there asynchronously") != c.async ||
			strings.Contains(notes, "most likely reported there asynchronously") != c.async || // a launch may fail for its local memory itself (r48b)

			strings.Contains(notes, "pin_memory") || !strings.Contains(notes, "llama.cpp's ggml backend") {
			t.Errorf("%s: notes %q, want the call %s named, asynchronous %v, no pinned-memory note", c.file, r.Notes, c.call, c.async)
		}
	}
}
