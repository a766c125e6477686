package cmd

import (
	"strings"
	"testing"
)

// A Jupyter notebook saved with its OOM (an error output whose traceback
// is IPython's ANSI-coloured list) gives the postmortem the plain paste of
// the same traceback gives: where it was asked (the cell's <module> at
// 2211991504.py:43 down to forward at 350219730.py:350), from one source,
// the traceback's last string on line 26 (before: no stack, and the
// output's "evalue" on line 11 as a second source).
func TestOOMNotebook(t *testing.T) {
	code, out, errOut := run(t, nil, "oom", pt+"pastes/jupyter_ipynb_ipykernel7_kaggle.ipynb")
	if code != 0 || !strings.Contains(out, "OOM 1 of 1: GPU 0, 44.00 MiB requested at forward (350219730.py:350)\n") ||
		!strings.Contains(out, "  from:     ../testdata/pytorch/pastes/jupyter_ipynb_ipykernel7_kaggle.ipynb:26 (OutOfMemoryError)\n") ||
		!strings.Contains(out, "< <module> (2211991504.py:43)\n") || !strings.Contains(out, "fragmentation: ") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, paste, _ := run(t, nil, "oom", pt+"pastes/jupyter_ipykernel_old_tb_kaggle.txt")
	cut := func(s string) string { return s[strings.Index(s, "  stack:"):] }
	if cut(out) != cut(paste) {
		t.Errorf("the notebook's postmortem differs from the paste's:\n%s\n---\n%s", cut(out), cut(paste))
	}
}

// A library's status line (spconv's "cuda execution failed with error 2")
// is an OOM for --fail-on oom (before: none, and tensorview's paste was
// "unrecognised input format", exit 2); pinned host memory
// (StreamExecutor's "failed to alloc N bytes on host") is not (before:
// tripped).
func TestLibraryStatusFailOn(t *testing.T) {
	for _, c := range []struct {
		file string
		code int
	}{
		{"spconv2_tensorview_error2_cmt15.txt", ExitFindings},
		{"spconv1_exec_error2_mmdet3d80.txt", ExitFindings},
		{"tf_pinned_host_craiyon1.txt", ExitOK},
		// Other CUDA errors, no OOM: the oom gate passes (session 42:
		// a log in which nothing gpuleak reads is found is read, with
		// --fail-on oom, as a run without an OOM; it was exit 2).
		{"spconv_other_errors_not_oom.txt", ExitOK},
		// Joined into one line in a code span (branch hK: was exit 2).
		{"spconv1_backtick_path_det3d155.txt", ExitFindings},
		// An engine's KV cache that did not fit at start-up ends the run
		// as an OOM does (branch hK: was "unrecognised input format").
		{"kvcache_vllm_compose_10439.txt", ExitFindings},
		{"kvcache_sglang_between_errors_sglang4330.txt", ExitFindings},
		// TGI's (and LoRAX's) warmup out of memory (session 41: was
		// "unrecognised input format").
		{"tgi_warmup_prefill_title_tgi755.txt", ExitFindings},
		{"tgi_warmup_prefill_lorax354.txt", ExitFindings},
		// Accelerate's batch size finder that reached zero (session 41:
		// was "unrecognised input format").
		{"accelerate_no_batch_size_uniem136.txt", ExitFindings},
		// The CPU allocator's failure inside a DataLoader worker (its
		// "Caught RuntimeError in DataLoader worker process 0" around
		// it): host memory, no GPU OOM (session 41, read right).
		{"cpu_allocator_dataloader_worker_arcgis743.txt", ExitOK},
		// Other programs' cudaMalloc failures: llama.cpp's and TensorRT's
		// (session 41: each was "unrecognised input format").
		{"llamacpp_cudamalloc_docker_llamacpp11476.txt", ExitFindings},
		{"llamacpp_cudamalloc_load_llamacpp20431.txt", ExitFindings},
		{"trt_default_allocator_trtexec_tensorrt4258.txt", ExitFindings},
		{"trt7_safe_runtime_tensorrtinference155.txt", ExitFindings},
		// TensorRT's builder skipped the tactics whose memory failed
		// and went on (branch h43a: each was an OOM, exit 1); a build
		// that then failed, or a text that ends at the failure, stays
		// one.
		{"trt7_skipped_tactics_excerpt_tensorrt840.txt", ExitOK},
		{"synthetic_trt10_tactic_skipped_built.txt", ExitOK},
		{"synthetic_trt10_tactic_cut_after_error.txt", ExitFindings},
		{"trt7_tkdnn_build_failed_tkdnn42.txt", ExitFindings},
		{"trt7_windows_allocator_tensorrt477.txt", ExitFindings},
		{"mxnet_cudamalloc_backtick_mxnet675.txt", ExitFindings},
		{"tf1_ran_out_of_gpu_memory_bytes_transformer77.txt", ExitFindings},
		{"paddle_title_paddleocr7091.txt", ExitFindings},
		{"paddle_double_backtick_paddlegan587.txt", ExitFindings},
		{"paddle_badalloc_no_allocated_pgl26.txt", ExitFindings},
		{"paddle_wrapped_zh_colon_paddle26892.txt", ExitFindings},
		// vLLM's sampler warmup out of memory (was "unrecognised input
		// format").
		{"vllm_sampler_warmup_ranks_vllm14452.txt", ExitFindings},
		{"vllm_sampler_warmup_wrapped_llmd787.txt", ExitFindings},
		// ONNX Runtime's BFC arena (session 42: each was "unrecognised
		// input format").
		{"ort_bfc_backtick_v100_onnxruntime9939.txt", ExitFindings},
		{"ort_bfc_status_newline_exa_onnxruntime22702.txt", ExitFindings},
		{"ort_bfc_available0_title_ragflow10295.txt", ExitFindings},
		{"ort_bfc_cpu_nchwc_chineseocr355.txt", ExitFindings},
		{"ort_bfc_triton_escaped_onnxruntime20038.txt", ExitFindings},
	} {
		code, out, errOut := run(t, nil, "analyze", "--fail-on", "oom", pt+"pastes/"+c.file)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s\n%s", c.file, code, c.code, out, errOut)
		}
	}
}
