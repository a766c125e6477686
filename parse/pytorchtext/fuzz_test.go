package pytorchtext

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// checkBatches reads a Reader to its end and checks what a consumer
// relies on: schemas, non-negative sizes, and that a message with
// generation "unparsed" carries no size, one with "cuda-error" none but
// the request, free and total memory its surrounding words give.
func checkBatches(t *testing.T, r *Reader) {
	for r.Next() {
		rec := r.RecordBatch()
		if !rec.Schema().Equal(r.Table().Schema()) {
			t.Fatalf("%s batch with schema %s", r.Table(), rec.Schema())
		}
		if r.Table() != TableMessages {
			continue
		}
		gen := rec.Column(MsgGeneration).(*array.Dictionary)
		for i := 0; i < int(rec.NumRows()); i++ {
			g := Generation(gen.Dictionary().(*array.String).Value(gen.GetValueIndex(i)))
			for col := MsgRequested; col <= MsgReserved; col++ {
				c := rec.Column(col).(*array.Int64)
				// A driver or library status has no sizes of its own; the
				// words around it may give the request and the GPU's free
				// and total memory (see GenCUDAError), nothing else.
				around := col == MsgRequested || col == MsgTotal || col == MsgFree
				if c.IsValid(i) && (c.Value(i) < 0 || g == GenUnparsed || g == GenCUDAError && !around) {
					t.Fatalf("%s message with %s = %d", g, rec.Schema().Field(col).Name, c.Value(i))
				}
			}
			if g == Gen2 || g == Gen1 {
				// A message read from its GPU on (its first words cut
				// off, see bodyOnly) has no request.
				text := rec.Column(MsgText).(*array.String).Value(i)
				bodyOnly := strings.HasPrefix(text, "GPU ") || strings.HasPrefix(text, "(GPU ")
				for _, col := range []int{MsgRequested, MsgTotal, MsgFree, MsgAllocated, MsgDevice} {
					if rec.Column(col).IsNull(i) && !(col == MsgRequested && bodyOnly) {
						t.Fatalf("%s message without %s", g, rec.Schema().Field(col).Name)
					}
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		var pe *parse.Error
		if !errors.As(err, &pe) || (pe.Line <= 0 && pe.Offset < 0) {
			t.Fatalf("error without a position: %v", err)
		}
	}
}

// FuzzReader reads arbitrary text as a log: rows or a positioned
// *parse.Error, never a panic, and Arrow memory always released.
func FuzzReader(f *testing.F) {
	f.Add([]byte("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 1.00 GiB total capacity; 512 bytes already allocated; 0 bytes free; 3.00 KiB cached)\n"))
	f.Add([]byte("Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n    g()\nRuntimeError: CUDA error: out of memory\n"))
	f.Add([]byte("x: ╭── Traceback (most recent call last) ──╮\nx: │ C:\\p\\a.py:3 in │\nx: │ f │\nx: │ ❱ 3 g() │\nx: ╰─────╯\nx: RuntimeError: CUDA error: out of memory\n"))
	f.Add([]byte("RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 132426121216 bytes. Error code 12 (Cannot allocate memory)\n"))
	f.Add([]byte("|===|\n|  PyTorch CUDA memory summary, device ID 0  |\n| CUDA OOMs: 1 | cudaMalloc retries: 2 |\n| Metric | Cur Usage | Peak Usage | Tot Alloc | Tot Freed |\n| Allocations | 4 | 5 | 6 | 7 |\n|===|\n"))
	// A page's HTML around a message with a coarse total, web spaces.
	f.Add([]byte("<p>(<a href=\"x\">CUDA out of memory</a>)</p>\n<p>RuntimeError: CUDA out of memory. Tried to allocate 4.06 GiB (GPU 0; 24 GiB total capacity; 4.37 GiB already allocated; 2.42 GiB free;<br>\n4.51\u00a0GiB reserved in total by PyTorch) &gt;&gt;</p>\n"))
	f.Add([]byte("CUDA out of memory. Tried to allocate 270.00 MiB. GPU 0 has a total capacity of 21.97 GiB\nProcess 1185086 has 21.77 GiB memory in use\n"))
	// A Jupyter notebook: a stream, a markdown cell, an error output.
	f.Add([]byte(`{"cells": [{"cell_type": "markdown", "source": ["a\n"]}, {"cell_type": "code", "outputs": [{"output_type": "stream", "text": ["x", "y\n"]}, {"output_type": "error", "ename": "OutOfMemoryError", "evalue": "v", "traceback": ["\u001b[0;31mOutOfMemoryError\u001b[0m   Traceback (most recent call last)", "Cell \u001b[0;32mIn[2], line 1\u001b[0m\n----> 1 f()\n", "\u001b[0;31mOutOfMemoryError\u001b[0m: CUDA out of memory. Tried to allocate 2 GiB (GPU 0; 24 GiB total capacity; 20 GiB already allocated; 1 GiB free; 21 GiB reserved in total by PyTorch)"]}]}], "nbformat": 4}`))
	// llama.cpp's failure, its chain and its retry (ggmlretry.go); a
	// Java exception's stack (javastack.go).
	f.Add([]byte("E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc failed: out of memory\nE graph_reserve: failed to allocate compute buffers\nW sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism\nI srv    load_model: initializing, n_slots = 1\n"))
	f.Add([]byte("jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY\n\tat jcuda.driver.JCudaDriver.checkResult(JCudaDriver.java:337)\n\tat jcuda.driver.JCudaDriver.cuCtxCreate(JCudaDriver.java:1514)\nCaused by: x\n\t... 3 more\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		defer mem.AssertSize(t, 0)
		r := NewReader(bytes.NewReader(data), "fuzz", WithAllocator(mem), WithBatchSize(16))
		defer r.Release()
		checkBatches(t, r)
	})
}

// FuzzStatsReader reads arbitrary bytes as memory_stats() JSON.
func FuzzStatsReader(f *testing.F) {
	f.Add([]byte(`{"num_ooms": 1, "allocated_bytes.all.current": 512}`))
	f.Add([]byte(`[{"allocated_bytes": {"all": {"current": 1}}}, {"num_alloc_retries": 2.0}]`))
	f.Add([]byte("{\"0\": {\"num_ooms\": 3},\n\"1\": {\"num_ooms\": \"x\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		defer mem.AssertSize(t, 0)
		r := NewStatsReader(bytes.NewReader(data), "fuzz", WithAllocator(mem), WithBatchSize(16))
		defer r.Release()
		checkBatches(t, r)
	})
}

// FuzzParseMessage: a message either parses into consistent numbers that
// print back as they were written, or is unparsed with a reason.
func FuzzParseMessage(f *testing.F) {
	f.Add("CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 135.01 GiB is free. Process 9 has 1.00 GiB memory in use. Including non-PyTorch memory, this process has 4.78 GiB memory in use. 4.19 GiB allowed; Of the allocated memory 4.19 GiB is allocated by PyTorch, with 1.00 KiB allocated in private pools (e.g., CUDA Graphs), and 0 bytes is reserved by PyTorch but unallocated.")
	f.Add("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 7.93 GiB total capacity; 6.84 GiB already allocated; 15.69 MiB free; 6.89 GiB reserved in total by PyTorch)")
	f.Add("Allocation on device 0 would exceed allowed memory. (out of memory) Currently allocated : 12.20 GiB Requested : 1.88 GiB Device limit : 16.00 GiB Free (according to CUDA): 0 bytes PyTorch limit (set by user-supplied memory fraction) : 17179869184.00 GiB")
	f.Add("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory")
	f.Add("MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0")
	f.Add("XPU out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 15.11 GiB. Of the allocated memory 8.32 GiB is allocated by PyTorch, and 4.87 GiB is reserved by PyTorch but unallocated.")
	f.Add("XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; 176.00 MiB already allocated; 176.00 MiB reserved in total by PyTorch)")
	// Other frameworks' forms and a message inside a JSON string.
	f.Add("XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0")
	f.Add("ResourceExhaustedError: {{function_node __wrapped__Cast_device_/job:localhost/replica:0/task:0/device:CPU:0}} failed to allocate memory [Op:Cast]")
	f.Add("ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[16,19,19,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
	f.Add(`"error_message": "CUDA out of memory. Tried to allocate 8.00 GiB. GPU 5 has a total capacity of 23.52 GiB of which 6.62 GiB is free.",`)
	f.Add("exception=CudaAPIError(2, 'Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY')>)")
	f.Add("RuntimeError: $ Torch: not enough memory: you tried to allocate 64GB. Buy new RAM! at THGeneral.cpp:204")
	f.Add("RuntimeError: CUDA out of memory. Tried to allocate 2 GiB (GPU 0; 24 GiB total capacity; 20 GiB already allocated; 1 GiB free; 21.5 GiB reserved in total by PyTorch)")
	f.Add("CUDA out of memory. Tried to allocate 270.00 MiB. GPU 0 has a total capacity of 21.97 GiB Process 1185086 has 21.77 GiB memory in use")
	// ONNX Runtime's BFC arena, both forms.
	f.Add("Status Message: bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool) Failed to allocate memory for requested buffer of size 8388608000")
	f.Add("onnxruntime::BFCArena::AllocateRawInternal Available memory of 0 is smaller than requested bytes of 135383040")
	f.Fuzz(func(t *testing.T, line string) {
		at := findOOM(line, 0)
		if at < 0 {
			return
		}
		m, end := ParseMessage(line, at)
		if end < at || end > len(line) {
			t.Fatalf("end %d outside [%d, %d]", end, at, len(line))
		}
		switch m.Generation {
		case GenUnparsed:
			if m.Reason == "" || m.Requested != -1 {
				t.Fatalf("unparsed: %+v", m)
			}
		case Gen1, Gen2:
			// A figure of 1 PiB or more is unknown, with a warning.
			// Intel's XPU forms before 2.7 print no free memory.
			if (m.Requested < 0 || m.Total < 0 || m.Free < 0 && m.Backend != "XPU" || m.Allocated < 0) && len(m.Warnings) == 0 || m.Device < 0 {
				t.Fatalf("parsed without a field: %+v", m)
			}
			// FormatSize and the size grammar agree: a size printed
			// and read again is within SizeTolerance.
			for _, v := range []int64{m.Requested, m.Total, m.Free, m.Allocated} {
				if v < 0 {
					continue
				}
				sc := &scanner{s: FormatSize(v)}
				back, err := sc.size()
				if d := back - v; err != nil || d > SizeTolerance(v)+1 || -d > SizeTolerance(v)+1 {
					t.Fatalf("%d prints as %q, read back as %d (%v)", v, FormatSize(v), back, err)
				}
			}
		case GenMPS:
			// No device, total or free memory; this process's Metal
			// memory is PyTorch's heaps and more; no request only when cut
			// before it.
			if m.Device != -1 || m.Total != -1 || m.Free != -1 || m.Allocated != -1 || m.Requested < 0 && len(m.Warnings) == 0 && m.Reason == "" ||
				m.ProcessInUse >= 0 && m.ProcessInUse < m.Reserved {
				t.Fatalf("mps: %+v", m)
			}
		}
	})
}
