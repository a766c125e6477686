package pytorchtext

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const (
	KiB = 1 << 10
	MiB = 1 << 20
	GiB = 1 << 30
)

// gib converts a size printed with two decimals of GiB to bytes, as
// ParseMessage does: hundredths * 2^30 / 100, rounded.
func gib(hundredths int64) int64 { return hundredths/100*GiB + (hundredths%100*GiB+50)/100 }

// The same OOM, written in every form PyTorch has printed: each must
// parse into the same fields. The 2.x form is oom_error.txt (PyTorch
// 2.11, a real run); the others are written from PyTorch's sources
// (c10/cuda/CUDACachingAllocator.cpp of each release) with the same
// numbers.
func TestMessageGenerations(t *testing.T) {
	const tail = " If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
	gen2 := "CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 135.01 GiB is free. Including non-PyTorch memory, this process has 4.78 GiB memory in use. 4.19 GiB allowed; Of the allocated memory 4.19 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated." + tail
	want := Message{Generation: Gen2, Backend: "CUDA", Device: 0, Requested: 64 * MiB, Total: gib(13980), Free: gib(13501),
		ProcessInUse: gib(478), Allowed: gib(419), Allocated: gib(419), PrivatePools: -1, ReservedUnallocated: 0, Reserved: -1, Inactive: -1}

	cases := []struct {
		name, line string
		edit       func(m *Message)
	}{
		{"2.x bare (str(e), oom_error.txt)", gen2, nil},
		{"2.x torch.OutOfMemoryError (2.5+)", "torch.OutOfMemoryError: " + gen2, func(m *Message) { m.Exception = "torch.OutOfMemoryError" }},
		{"2.x torch.cuda.OutOfMemoryError (2.1-2.4)", "torch.cuda.OutOfMemoryError: " + gen2, func(m *Message) { m.Exception = "torch.cuda.OutOfMemoryError" }},
		{"2.x RuntimeError, launcher prefix", "[rank3]: RuntimeError: " + gen2, func(m *Message) { m.Exception, m.Prefix = "RuntimeError", "[rank3]:" }},
		{"2.1 capacty", strings.Replace(gen2, "capacity", "capacty", 1), func(m *Message) { m.Typo = true }},
		{"2.x private pools", strings.Replace(gen2, "is allocated by PyTorch, and", "is allocated by PyTorch, with 1.50 GiB allocated in private pools (e.g., CUDA Graphs), and", 1),
			func(m *Message) { m.PrivatePools = gib(150) }},
		{"2.x without process info or limit (no NVML, no fraction)",
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 135.01 GiB is free. Of the allocated memory 4.19 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.",
			func(m *Message) { m.Exception, m.ProcessInUse, m.Allowed = "torch.OutOfMemoryError", -1, -1 }},
		{"2.x HIP", strings.Replace(gen2, "CUDA", "HIP", 1), func(m *Message) { m.Backend = "HIP" }},
		{"1.x with allowed (1.8-2.0)", "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 139.80 GiB total capacity; 4.19 GiB already allocated; 135.01 GiB free; 4.19 GiB allowed; 4.19 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
			func(m *Message) {
				m.Generation, m.Exception, m.ProcessInUse, m.ReservedUnallocated, m.Reserved = Gen1, "RuntimeError", -1, -1, gib(419)
			}},
		{"1.x torch.cuda.OutOfMemoryError (2.0)", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 139.80 GiB total capacity; 4.19 GiB already allocated; 135.01 GiB free; 4.19 GiB allowed; 4.19 GiB reserved in total by PyTorch)",
			func(m *Message) {
				m.Generation, m.Exception, m.ProcessInUse, m.ReservedUnallocated, m.Reserved = Gen1, "torch.cuda.OutOfMemoryError", -1, -1, gib(419)
			}},
		// Before 1.4 "cached" is reserved minus allocated (PR pytorch#13751:
		// "memory held by the allocator but not used by the program").
		{"1.0-1.3 cached", "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 139.80 GiB total capacity; 4.19 GiB already allocated; 135.01 GiB free; 4.19 GiB cached)",
			func(m *Message) {
				m.Generation, m.Exception, m.ProcessInUse, m.Allowed, m.ReservedUnallocated, m.Reserved = Gen1, "RuntimeError", -1, -1, gib(419), 2*gib(419)
				m.Cached = true
			}},
		{"1.x cached with inactive", "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 139.80 GiB total capacity; 4.19 GiB already allocated; 135.01 GiB free; 4.19 GiB cached; 2.00 MiB inactive)",
			func(m *Message) {
				m.Generation, m.Exception, m.ProcessInUse, m.Allowed, m.ReservedUnallocated, m.Reserved = Gen1, "RuntimeError", -1, -1, gib(419), 2*gib(419)
				m.Cached, m.Inactive = true, 2*MiB
			}},
		{"2.x HIP graphs", strings.Replace(strings.Replace(gen2, "CUDA", "HIP", 1), "is allocated by PyTorch, and", "is allocated by PyTorch, with 1.50 GiB allocated in private pools (e.g., HIP Graphs), and", 1),
			func(m *Message) { m.Backend, m.PrivatePools = "HIP", gib(150) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at := findOOM(c.line, 0)
			if at < 0 {
				t.Fatal("not found")
			}
			got, _ := ParseMessage(c.line, at)
			w := want
			if c.edit != nil {
				c.edit(&w)
			}
			got.Text, w.Text = "", ""
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
		})
	}
}

// Several "Process P has M memory in use" parts, before and after this
// process's own, as NVML lists them.
func TestMessageProcesses(t *testing.T) {
	line := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.06 GiB is free. Process 4012 has 40.00 GiB memory in use. Including non-PyTorch memory, this process has 30.05 GiB memory in use. Process 4100 has 8.00 GiB memory in use. Process 77 has 512.00 MiB memory in use. Of the allocated memory 28.50 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated."
	m, _ := ParseMessage(line, findOOM(line, 0))
	if m.Generation != Gen2 || m.Device != 1 || m.ProcessInUse != gib(3005) || m.ReservedUnallocated != gib(102) {
		t.Fatalf("%+v", m)
	}
	want := []Process{{4012, 40 * GiB}, {4100, 8 * GiB}, {77, 512 * MiB}}
	if !reflect.DeepEqual(m.Processes, want) {
		t.Errorf("processes %+v, want %+v", m.Processes, want)
	}
	// oom_other_process_error.txt (real): another process holds 127.79 GiB.
	line = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 1.49 GiB is free. Process 609 has 127.79 GiB memory in use. Including non-PyTorch memory, this process has 10.51 GiB memory in use. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated."
	m, _ = ParseMessage(line, 0)
	if len(m.Processes) != 1 || m.Processes[0] != (Process{609, gib(12779)}) || m.Allowed != -1 {
		t.Errorf("%+v", m)
	}
}

// A real 1 PiB request (PyTorch 2.11, torch.empty(1<<50) on an H200, s31)
// is read as the 2^50 bytes printed, with no warning; the counters beside
// it are read as ever.
func TestMessageHugeRequest(t *testing.T) {
	line := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1048576.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 137.72 GiB is free. Including non-PyTorch memory, this process has 2.07 GiB memory in use. 1.40 GiB allowed; Of the allocated memory 1.32 GiB is allocated by PyTorch, and 17.00 MiB is reserved by PyTorch but unallocated."
	m, _ := ParseMessage(line, findOOM(line, 0))
	if m.Generation != Gen2 || m.Requested != 1<<50 || m.Total != gib(13980) || m.Allowed != gib(140) || len(m.Warnings) != 0 {
		t.Errorf("%+v", m)
	}
	// cudaMallocAsync's "Requested :" line is a request too; its unset
	// limit (2^64 bytes) stays a counter read as unknown, with no warning.
	async := "Allocation on device 0 would exceed allowed memory. (out of memory) Currently allocated : 1.00 GiB Requested : 1048576.00 GiB Device limit : 139.80 GiB Free (according to CUDA): 137.00 GiB PyTorch limit (set by user-supplied memory fraction) : 17179869184.00 GiB"
	m, _ = ParseMessage(async, 0)
	if m.Generation != GenAsync || m.Requested != 1<<50 || m.Allowed != -1 || len(m.Warnings) != 0 {
		t.Errorf("async: %+v", m)
	}
}

func TestMessageSizes(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
	}{
		{"0 bytes", 0}, {"512 bytes", 512}, {"1024 bytes", 1024}, {"1.00 KiB", 1024}, {"1.50 KiB", 1536},
		{"1024.00 KiB", MiB}, {"20.00 MiB", 20 * MiB}, {"1.53 GiB", gib(153)}, {"1536.00 GiB", 1536 * GiB},
		{"1048575.99 GiB", gib(104857599)},
	} {
		s := &scanner{s: c.text}
		got, err := s.size()
		if err != nil || got != c.want || s.i != len(c.text) {
			t.Errorf("%q: %d, %v; want %d", c.text, got, err, c.want)
		}
		// FormatSize prints what PyTorch would.
		if c.want <= 1<<40 && FormatSize(got) != c.text && c.text != "1.00 KiB" && c.text != "1024.00 KiB" {
			t.Errorf("FormatSize(%d) = %q, want %q", got, FormatSize(got), c.text)
		}
	}
	// At 1 PiB and over no GPU has it: NVML's 2^64 bytes overflow
	// (17179869184.00 GiB) is unknown, with a warning, not an error.
	for _, huge := range []string{"1048576.00 GiB", "17179869184.00 GiB", "999999999999999.99 GiB"} {
		s := &scanner{s: huge}
		if v, err := s.size(); err != nil || v != -1 || len(s.huge) != 1 || s.i != len(huge) {
			t.Errorf("%q: %d, %v, %q", huge, v, err, s.huge)
		}
	}
	// A request is read as printed, however large: PyTorch's
	// format_size() prints every size in GiB (torch.empty(1<<50) prints
	// 1048576.00 GiB). allocate() refuses 1 EB (2^60 bytes) and more with
	// "more than 1EB", but raw_alloc() (caching_allocator_alloc, library
	// workspaces) skips that check, so any size_t prints, up to 2^64
	// bytes: 17179869184.00 GiB. Up to 4 EiB it is read as printed; above,
	// unknown with a warning that PyTorch can print it; above 2^64 bytes
	// (s32's oom/s8, 1099511627776.00 GiB, is 2^70), unknown with a
	// warning that no PyTorch prints it. 2^60 - 1 bytes prints
	// 1073741824.00 GiB (s32's oom/s7), as does every size within 5.4 MB
	// below 2^60.
	for _, c := range []struct {
		text      string
		want      int64
		printable bool // the warning, when want is -1
	}{
		{"8192.00 GiB", 1 << 43, true}, {"1048576.00 GiB", 1 << 50, true}, {"1073741824.00 GiB", 1 << 60, true},
		{"1073741824.01 GiB", 1<<60 + (1<<30+50)/100, true}, {"4294967296.00 GiB", 1 << 62, true},
		{"4294967296.01 GiB", -1, true}, {"17179869184.00 GiB", -1, true},
		{"17179869184.01 GiB", -1, false}, {"1099511627776.00 GiB", -1, false}, {"999999999999999.99 GiB", -1, false},
	} {
		s := &scanner{s: c.text}
		got, err := s.request()
		if err != nil || got != c.want || s.i != len(c.text) || (len(s.huge) == 1) != (c.want < 0) {
			t.Errorf("request %q: %d, %v, %q; want %d", c.text, got, err, s.huge, c.want)
			continue
		}
		if c.want < 0 && strings.Contains(s.huge[0], "no request PyTorch prints") == c.printable {
			t.Errorf("request %q: %q", c.text, s.huge[0])
		}
	}
	// Sizes with fewer decimals than format_size() prints ("12 MiB") are
	// read, with their allowance (see TestCoarseSizes).
	for _, bad := range []string{"1.00 TiB", "12. MiB", "x", "9999999999999999.00 GiB"} {
		s := &scanner{s: bad}
		if v, err := s.size(); err == nil {
			t.Errorf("%q read as %d", bad, v)
		}
	}
	if SizeTolerance(0) != 0 || SizeTolerance(64*MiB) != MiB/200 || SizeTolerance(4*GiB) != GiB/200 {
		t.Error("SizeTolerance")
	}
}

// Damaged messages are unparsed, with a reason, and nothing else.
func TestMessageDamaged(t *testing.T) {
	good := "CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 135.01 GiB is free. Of the allocated memory 4.19 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated."
	for _, c := range []struct{ line, reason string }{
		{good[:80], "ends at column 81"},
		// "135.0" is read as a size typed with one decimal; its unit is
		// not there.
		{strings.Replace(good, "135.01 GiB", "135.0l GiB", 1), `want " KiB", " MiB" or " GiB"`},
		{strings.Replace(good, "total capacity", "capacity", 1), "total capacity"},
		{strings.Replace(good, "and 0 bytes", "and zero bytes", 1), "a size"},
		{"CUDA out of memory", "ends at column 19"},
		{good[:150], "ends at column 151"},
		{good[:strings.Index(good, "Of the")] + "Including non-PyTorch memory, this process has 4.78 GiB memory in use. Process 12 has 1.5", "inside a size"},
		{good[:strings.Index(good, "Of the")] + "Including non-PyTorch me", `inside "Including non-PyTorch`},
		{strings.Replace(good, "Of the", "Process 12 has 1.50 GiB memory in use. Of the", 1), ""}, // fine: a Process part
		{strings.Replace(good, "4.19 GiB", "4.19 GB", 1), `want " KiB", " MiB" or " GiB"`},
		{"retrying after CUDA out of memory with batch 16", `found " with batch 16"`},
		{"RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 139.80 GiB total capacity; 4.19 GiB already allocated; 135.01 GiB free; 4.19 GiB reserved", "ends at"},
	} {
		m, _ := ParseMessage(c.line, findOOM(c.line, 0))
		if c.reason == "" {
			if m.Generation != Gen2 || len(m.Processes) != 1 {
				t.Errorf("%q: %+v", c.line, m)
			}
			continue
		}
		// A message cut short after its request keeps the request (64 MiB
		// in every case here), and nothing else.
		wantGen, wantReq := GenUnparsed, int64(-1)
		if strings.Contains(c.reason, "ends at") || strings.Contains(c.reason, "inside") {
			if strings.Contains(c.line, "Tried to allocate 64.00 MiB") {
				wantGen, wantReq = GenCut, 64*MiB
			}
		}
		if m.Generation != wantGen || !strings.Contains(m.Reason, c.reason) {
			t.Errorf("%q: %s %q, want %s %q", c.line, m.Generation, m.Reason, wantGen, c.reason)
		}
		if m.Requested != wantReq {
			t.Errorf("%q: request %d", c.line, m.Requested)
		}
		// A cut message keeps the figures printed whole before the cut,
		// and only those: each is in the text as PyTorch prints it.
		for _, v := range []int64{m.Total, m.Free, m.Allocated, m.ProcessInUse, m.Allowed, m.Reserved, m.ReservedUnallocated, m.PrivatePools} {
			if v >= 0 && (wantGen != GenCut || !strings.Contains(c.line, FormatSize(v))) {
				t.Errorf("%q: numbers guessed: %+v", c.line, m)
			}
		}
		if m.Device >= 0 && (wantGen != GenCut || !strings.Contains(c.line, fmt.Sprintf("GPU %d", m.Device))) || (m.Processes != nil && wantGen != GenCut) {
			t.Errorf("%q: numbers guessed: %+v", c.line, m)
		}
	}
	m, _ := ParseMessage("RuntimeError: CUDA error: out of memory", 14)
	if m.Generation != GenCUDAError || m.Exception != "RuntimeError" || m.Requested != -1 {
		t.Errorf("%+v", m)
	}
}

// NVML's overflow (2^64 bytes for this process) is unknown, with a
// warning; the rest of the message is read (testdata/pytorch/pastes/
// pt2.x_2pow64_allowed.txt). A cudaMallocAsync limit printed as 2^64 is
// no cap and no warning.
func TestHugeFigures(t *testing.T) {
	line := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.98 GiB. GPU 0 has a total capacity of 31.84 GiB of which 16.30 GiB is free. Including non-PyTorch memory, this process has 17179869184.00 GiB memory in use. 17.51 GiB allowed; Of the allocated memory 6.74 GiB is allocated by PyTorch, and 7.02 GiB is reserved by PyTorch but unallocated."
	m, _ := ParseMessage(line, strings.Index(line, "CUDA"))
	if m.Generation != Gen2 || m.ProcessInUse != -1 || m.Allowed != gib(1751) || m.ReservedUnallocated != gib(702) || len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "17179869184.00 GiB") {
		t.Errorf("%+v", m)
	}
	line = "Allocation on device 0 would exceed allowed memory. (out of memory) Currently allocated : 12.20 GiB Requested : 1.88 GiB Device limit : 16.00 GiB Free (according to CUDA): 0 bytes PyTorch limit (set by user-supplied memory fraction) : 17179869184.00 GiB"
	m, _ = ParseMessage(line, 0)
	if m.Generation != GenAsync || m.Reason != "" || m.Allowed != -1 || m.Allocated != gib(1220) || m.Reserved != -1 || m.Requested != gib(188) || m.Total != 16*GiB || m.Free != 0 || len(m.Warnings) != 0 {
		t.Errorf("%+v", m)
	}
	// A limit below the device's memory is a cap.
	m, _ = ParseMessage(strings.Replace(line, "17179869184.00 GiB", "8.00 GiB", 1), 0)
	if m.Allowed != 8*GiB {
		t.Errorf("%+v", m)
	}
}

// What is a message and what is prose naming one (see classify).
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		line string
		want int
	}{
		{"RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB", message},
		{"I keep getting CUDA out of memory errors when training", notMessage},
		{"Is CUDA out of memory. a known issue?", notMessage},
		{"the CUDA out of memory error persists", notMessage},
		{"# CUDA out of memory", weakMessage},
		{"RuntimeError: CUDA out of memory", message},
		// Cut inside "Tried to allocate": the message's words, not a
		// sentence's (it read as prose, the log as one without an OOM).
		{"torch.OutOfMemoryError: CUDA out of memory. Tri", message},
		{"CUDA out of memory. Tried to a", message},
		{"CUDA out of memory. The model is too large", notMessage},
		// An ellipsis right after the phrase stands for the rest: a
		// message after an exception type, as at the line's end.
		{"torch.OutOfMemoryError: CUDA out of memory. ...", message},
		{"torch.OutOfMemoryError: CUDA out of memory. …", message},
		{"I keep seeing CUDA out of memory. ...", weakMessage},
		{"x = f() # fails w/ RuntimeError: CUDA out of memory", weakMessage},
		{"without \"CUDA out of memory.\" before it", notMessage},
		{"Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity", weakMessage},
		{"| PyTorch 0.4 `cuda runtime error (2) : out of memory at x.cu:25` |", weakMessage},
		{"RuntimeError('CUDA error: out of memory')", message},
		{`{"error": "CUDA out of memory. Tried to allocate 2.00 MiB"}`, message},
		{"RuntimeError: CUDA error:out of memory", message},
		{"the `Allocation on device 0 would exceed allowed memory` line", notMessage},
		{"Allocation on device 0 would exceed allowed memory. (out of memory)", message},
		{"THCudaCheck FAIL file=a.cu line=58 error=2 : out of memory", message},
		{"THCudaCheck FAIL file=a.cu line=58 error=77 : an illegal memory access", notMessage},
	} {
		i := findOOM(c.line, 0)
		if got := classify(c.line, i); i < 0 || got != c.want {
			t.Errorf("%q: %d, want %d", c.line, got, c.want)
		}
	}
}

// The forms of the other backends' allocators, written from their sources
// (the numbers are the real pastes' of testdata/pytorch/pastes): Intel
// XPU (c10/xpu/XPUCachingAllocator.cpp: 2.7+ prints the free memory, 2.5
// and 2.6 do not; Intel's extension IPEX prints the 1.x form without
// "free"), and Apple MPS (aten/src/ATen/mps/MPSAllocator.mm: "KB", "MB",
// "GB" up to 2.3, "KiB", "MiB", "GiB" after; without "max allowed" when
// PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0).
func TestMessageOtherBackends(t *testing.T) {
	none := Message{Device: -1, Requested: -1, Total: -1, Free: -1, ProcessInUse: -1, Allowed: -1,
		Allocated: -1, PrivatePools: -1, ReservedUnallocated: -1, Reserved: -1, Inactive: -1}
	with := func(f func(m *Message)) Message { m := none; f(&m); return m }
	for _, c := range []struct {
		name, line string
		want       Message
	}{
		{"XPU 2.7+", "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 8.11 GiB. GPU 0 has a total capacity of 16.54 GiB of which 16.54 GiB is free. 8.27 GiB allowed; Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Exception, m.Device, m.Requested, m.Total, m.Free = Gen2, "XPU", "torch.OutOfMemoryError", 0, gib(811), gib(1654), gib(1654)
				m.Allowed, m.Allocated, m.ReservedUnallocated = gib(827), 0, 0
			})},
		{"XPU 2.5-2.6, no free memory", "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 15.11 GiB. Of the allocated memory 8.32 GiB is allocated by PyTorch, and 4.87 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Exception, m.Device, m.Requested, m.Total = Gen2, "XPU", "torch.OutOfMemoryError", 0, 4*GiB, gib(1511)
				m.Allocated, m.ReservedUnallocated = gib(832), gib(487)
			})},
		{"IPEX, 1.x form without free", "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; 176.00 MiB already allocated; 176.00 MiB reserved in total by PyTorch)",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Exception, m.Device, m.Requested, m.Total = Gen1, "XPU", "RuntimeError", 0, gib(171), gib(1556)
				m.Allocated, m.Reserved = 176*MiB, 176*MiB
			})},
		{"MPS, GB units (up to 2.3)", "RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Exception, m.Requested, m.Reserved, m.Allowed = GenMPS, "MPS", "RuntimeError", 6553600, gib(889), gib(907)
				m.ProcessInUse = gib(889) + (17298*MiB+50)/100
			})},
		{"MPS, GiB units, shared pool, bytes", "MPS backend out of memory (MPS allocated: 16.00 GiB, other allocations: 3.31 GiB, max allowed: 18.13 GiB). Tried to allocate 256 bytes on shared pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Requested, m.Reserved, m.Allowed, m.ProcessInUse = GenMPS, "MPS", 256, 16*GiB, gib(1813), 16*GiB+gib(331)
			})},
		{"MPS without a limit (ratio 0.0)", "RuntimeError: MPS backend out of memory (MPS allocated: 30.10 GiB, other allocations: 1.20 GiB). Tried to allocate 4.00 GiB on private pool.",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Exception, m.Requested, m.Reserved, m.ProcessInUse = GenMPS, "MPS", "RuntimeError", 4*GiB, gib(3010), gib(3010)+gib(120)
			})},
		{"MPS cut after the request", "RuntimeError: MPS backend out of memory (MPS allocated: 5.56 GB, other allocations: 1.10 GB, max allowed: 6.80 GB). Tried to allocate 768.00 MB",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Exception, m.Requested, m.Reserved, m.Allowed, m.ProcessInUse = GenMPS, "MPS", "RuntimeError", 768*MiB, gib(556), gib(680), gib(556)+gib(110)
			})},
		{"MPS cut before the request (an issue title)", "MPS backend out of memory (MPS allocated: 39.50 GiB, other allocations: 141.24 GiB, max allowed: 182.78 GiB).",
			with(func(m *Message) {
				m.Generation, m.Backend, m.Reserved, m.Allowed, m.ProcessInUse = GenMPS, "MPS", gib(3950), gib(18278), gib(3950)+gib(14124)
				m.Reason = `the message ends at column 110, where " Tried to allocate " should follow`
			})},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := findOOM(c.line, 0)
			if at < 0 || classify(c.line, at) != message {
				t.Fatalf("not found as a message (at %d)", at)
			}
			got, _ := ParseMessage(c.line, at)
			got.Text = ""
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	// "GB" is MPS's unit only: a CUDA message with it departs from the form.
	if m, _ := ParseMessage("CUDA out of memory. Tried to allocate 6.25 MB (GPU 0; ", 0); m.Generation != GenUnparsed {
		t.Errorf("CUDA with MB: %+v", m)
	}
	// Titles and sentences naming the MPS error are no messages.
	for _, prose := range []string{"# MPS backend out of memory OSX", "MPS backend out of memory with SD3.5",
		"MPS memory issue, MPS backend out of memory, but works if I empty the MPS cache", "# Error MPS backend out of memory"} {
		if at := findOOM(prose, 0); at < 0 || classify(prose, at) != notMessage && classify(prose, at) != weakMessage {
			t.Errorf("%q: read as a message", prose)
		}
	}
}
