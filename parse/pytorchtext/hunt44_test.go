package pytorchtext

import "testing"

// Who printed a message (Printer), and the label of a log (LogFormat):
// PyTorch's forms keep pytorch-oom-message; another framework's, or
// only CUDA errors that name no program, make oom-log; a CUDA library's
// status beside PyTorch's message does not.
func TestHunt44PrinterAndLogFormat(t *testing.T) {
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{Generation: Gen2, Backend: "HIP"}, "PyTorch"},
		{Message{Generation: GenTF}, "TensorFlow"},
		{Message{Generation: GenCUDAError, Backend: "CUDA", Text: "CUDA error: out of memory"}, "CUDA"},
		{Message{Generation: GenCUDAError, Backend: "CUDA", Text: "CUDA error: out of memory", Exception: "torch.AcceleratorError"}, "PyTorch"},
		{Message{Generation: GenCUDAError, Text: "CUDA_ERROR_OUT_OF_MEMORY: out of memory", Prefix: "RuntimeError: gpudata_alloc: cuMemAlloc:"}, "Theano"},
		{Message{Generation: GenCUDAError, Text: "CUDA_ERROR_OUT_OF_MEMORY: out of memory"}, "CUDA driver"},
		{Message{Generation: GenCUDAError, Text: "[defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)"}, "TensorRT"},
		{Message{Generation: GenKVCache, Text: "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."}, "vLLM"},
	} {
		if got := Printer(c.m); got != c.want {
			t.Errorf("Printer(%s %q): %q; want %q", c.m.Generation, c.m.Text, got, c.want)
		}
	}
	for _, c := range []struct {
		printers []string
		want     string
	}{
		{nil, "pytorch-oom-message"},
		{[]string{"PyTorch"}, "pytorch-oom-message"},
		{[]string{"PyTorch", "cuBLAS", "NCCL"}, "pytorch-oom-message"},
		{[]string{"CUDA"}, "oom-log"},
		{[]string{"TensorFlow"}, "oom-log"},
		{[]string{"PyTorch", "XLA"}, "oom-log"},
	} {
		if got := LogFormat(c.printers); string(got) != c.want {
			t.Errorf("LogFormat(%q): %q; want %q", c.printers, got, c.want)
		}
	}
}
