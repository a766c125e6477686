package oom

import (
	"os"
	"strings"
	"testing"
)

// cudaMallocAsync's pool is this process's (testdata/README.md, "OOM
// pastes hunted in session 42"): PyTorch's CUDAMallocAsyncAllocator.cpp
// keeps every freed block in CUDA's default pool (release threshold
// UINT64_MAX) and prints only what it allocated, so the GPU's memory
// beyond that is the pool, the CUDA context and other processes, which
// the message does not split. 2 GiB (otherEstimatedMin) is what a
// context and libraries may hold: beyond it, no cause; below, capacity.
func TestHunt42AsyncPool(t *testing.T) {
	const MiB = 1 << 20
	mib := func(hundredths int64) int64 { return (hundredths*MiB + 50) / 100 }
	for _, c := range []struct {
		file                    string
		req, free, total, alloc int64
		first                   string // "" for no cause
		note                    string // a note that must be there
		beyond                  string // the size beyond PyTorch's allocations, as printed
	}{
		// 12.50 MiB asked, 5.00 GiB free: room, no limit (2^64): the
		// note for room without a limit, no cause.
		{"async_bold_room_comfyui5886.txt", mib(1250), gib(500), gib(1200), gib(596), "", "enough for the 12.50 MiB request", ""},
		// 23.69 - 2.94 MiB - 6.89 = 16.80 GiB beyond, over 2 GiB.
		{"async_chattts9.txt", mib(32000), mib(294), gib(2369), gib(689), "", "cudaMallocAsync pool", "16.80 GiB"},
		// 16.00 - 0 - 12.20 = 3.80 GiB beyond, over 2 GiB.
		{"async_animatediff320_oneline.txt", gib(188), 0, gib(1600), gib(1220), "", "cudaMallocAsync pool", "3.80 GiB"},
		// 22.20 - 11.12 MiB - 16.08 = 6.11 GiB beyond, over 2 GiB.
		{"async_rust_debug_escaped_tgi563.txt", gib(483), mib(1112), gib(2220), gib(1608), "", "cudaMallocAsync pool", "6.11 GiB"},
		// 15.99 - 0 - 15.16 = 0.83 GiB (849.92 MiB) beyond, under 2 GiB:
		// the allocations filled the GPU.
		{"async_slk28.txt", 512 << 10, 0, gib(1599), gib(1516), CauseCapacity, "", "849.92 MiB"},
	} {
		t.Run(c.file, func(t *testing.T) {
			pm := NewPostmortem([]Input{oomInput(t, "pastes/"+c.file)}, PostmortemOptions{})
			if len(pm.OOMs) != 1 {
				t.Fatalf("%d OOMs", len(pm.OOMs))
			}
			r := pm.OOMs[0]
			if r.Generation != "async" || r.Device != 0 || !near(r.RequestedBytes, c.req) || !near(r.DeviceFreeBytes, c.free) || !near(r.DeviceTotalBytes, c.total) || !near(r.AllocatedBytes, c.alloc) {
				t.Errorf("gen %s device %d req %d free %d total %d allocated %d", r.Generation, r.Device, r.RequestedBytes, r.DeviceFreeBytes, r.DeviceTotalBytes, r.AllocatedBytes)
			}
			// The pool's reserved memory is not in the message.
			if r.ReservedBytes != -1 || r.ReservedUnallocatedBytes != -1 || r.WouldFitIfContiguous != nil {
				t.Errorf("reserved %d, reserved but unallocated %d, fit %v: the message prints neither", r.ReservedBytes, r.ReservedUnallocatedBytes, r.WouldFitIfContiguous)
			}
			if hasCause(r, CauseOtherProcesses) != nil || hasCause(r, CauseUnifiedMemory) != nil {
				t.Errorf("causes %v: the memory beyond PyTorch's allocations includes this process's pool", causeNames(r))
			}
			names := causeNames(r)
			if (c.first == "") != (len(names) == 0) || (len(names) > 0 && names[0] != c.first) {
				t.Errorf("causes %v, want %q first; notes %q", names, c.first, r.Notes)
			}
			all := strings.Join(r.Notes, " ")
			for _, cs := range r.Causes {
				all += " " + cs.Evidence
			}
			if c.note != "" && !strings.Contains(strings.Join(r.Notes, " "), c.note) {
				t.Errorf("no note with %q: %q", c.note, r.Notes)
			}
			if c.beyond != "" && (!strings.Contains(all, c.beyond) || !strings.Contains(all, "cudaMallocAsync pool")) {
				t.Errorf("%s beyond PyTorch's allocations, naming the pool, not said: %s", c.beyond, all)
			}
			if strings.Contains(all, "no cache of its own") {
				t.Errorf("says the allocator keeps no cache: %s", all)
			}
		})
	}
}

// ONNX Runtime's BFC arena (testdata/README.md, "OOM pastes hunted in
// session 42"): the request as the arena printed it (exact bytes), no
// device; the limit form is memory-limit (0 left under the arena's limit
// for 135383040 bytes), a request of 2^60 bytes or more capacity (a size
// computed wrong: 4585490524328388608 > 1152921504606846976), the
// device allocator's failure no cause with the note naming both devices.
func TestHunt42ORTArena(t *testing.T) {
	for _, c := range []struct {
		file  string
		req   int64
		first string
		note  string
	}{
		{"ort_bfc_backtick_v100_onnxruntime9939.txt", 8388608000, "", "does not say which"},
		{"ort_bfc_status_newline_exa_onnxruntime22702.txt", 4585490524328388608, CauseCapacity, "computed wrong"},
		{"ort_bfc_available0_title_ragflow10295.txt", 135383040, CauseMemoryLimit, ""},
		{"ort_bfc_cpu_nchwc_chineseocr355.txt", 285081600, "", "does not say which"},
		{"ort_bfc_triton_escaped_onnxruntime20038.txt", 2830172160, "", "does not say which"},
	} {
		t.Run(c.file, func(t *testing.T) {
			pm := NewPostmortem([]Input{oomInput(t, "pastes/"+c.file)}, PostmortemOptions{})
			if len(pm.OOMs) != 1 {
				t.Fatalf("%d OOMs", len(pm.OOMs))
			}
			r := pm.OOMs[0]
			if r.Generation != "onnxruntime" || r.Device != -1 || r.RequestedBytes != c.req || r.DeviceTotalBytes != -1 || r.DeviceFreeBytes != -1 || r.ReservedBytes != -1 {
				t.Errorf("gen %s device %d req %d total %d free %d reserved %d", r.Generation, r.Device, r.RequestedBytes, r.DeviceTotalBytes, r.DeviceFreeBytes, r.ReservedBytes)
			}
			names := causeNames(r)
			if (c.first == "") != (len(names) == 0) || (len(names) > 0 && names[0] != c.first) {
				t.Errorf("causes %v, want %q first; notes %q", names, c.first, r.Notes)
			}
			if c.note != "" && !strings.Contains(strings.Join(r.Notes, " "), c.note) {
				t.Errorf("no note with %q: %q", c.note, r.Notes)
			}
			if cs := hasCause(r, CauseMemoryLimit); cs != nil && (cs.Numbers["arena_available_bytes"] != 0 || !strings.Contains(cs.Evidence, "gpu_mem_limit")) {
				t.Errorf("memory-limit: %+v", cs)
			}
		})
	}
}

// One message printed by several worker processes is one OOM per process
// (testdata/README.md, "OOM pastes hunted in session 42"): vLLM's workers
// (rank 7 on line 1, rank 0 on line 3 of vllm14452) each ran out of their
// own GPU's memory; each OOM's note names both. The same process's lines
// (its log record and the traceback's last line), and a line without a
// process label, stay one OOM with it; torchrun's "[rankN]:" ranks are
// processes too.
func TestHunt42WorkerOrigins(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/vllm_sampler_warmup_ranks_vllm14452.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs, want one per worker", len(pm.OOMs))
	}
	for i, line := range []int64{1, 3} {
		r := pm.OOMs[i]
		notes := strings.Join(r.Notes, " ")
		if len(r.Sources) != 1 || r.Sources[0].Line != line || !strings.Contains(notes, "2 worker processes printed this same message (VllmWorker rank=7 pid=10948; VllmWorker rank=0 pid=10672)") ||
			!strings.Contains(notes, "1024 dummy requests") {
			t.Errorf("OOM %d: sources %+v, notes %q", i+1, r.Sources, r.Notes)
		}
	}
	const kv = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n"
	const gen2 = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 22.48 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n"
	for _, c := range []struct {
		name, text string
		ooms       int
	}{
		{"one worker, its record and its traceback's line", "(EngineCore_DP0 pid=374) ERROR 05-25 15:29:28 [core.py:1140] " + kv + "(EngineCore_DP0 pid=374) " + kv, 1},
		{"V0 workers", "(VllmWorkerProcess pid=479247) ERROR 10-28 11:14:52 multiproc_worker_utils.py:229] " + kv + "(VllmWorkerProcess pid=479248) ERROR 10-28 11:14:52 multiproc_worker_utils.py:229] " + kv, 2},
		{"Ray workers", "(RayWorkerWrapper pid=38, ip=10.0.0.2) " + kv + "(RayWorkerWrapper pid=39, ip=10.0.0.3) " + kv, 2},
		{"a worker and an unlabelled line", "(VllmWorker rank=1 pid=9) ERROR 03-16 06:12:38 [multiproc_executor.py:375] " + kv + kv, 1},
		{"torchrun's ranks, the same figures", "[rank0]: " + gen2 + "[rank1]: " + gen2, 2},
	} {
		pm := NewPostmortem([]Input{textInput(t, "log.txt", c.text)}, PostmortemOptions{})
		if len(pm.OOMs) != c.ooms {
			t.Errorf("%s: %d OOMs, want %d", c.name, len(pm.OOMs), c.ooms)
			continue
		}
		worker := strings.Contains(strings.Join(pm.OOMs[0].Notes, " "), "worker processes printed this same message")
		if worker != (c.ooms > 1) {
			t.Errorf("%s: the note on the workers: %q", c.name, pm.OOMs[0].Notes)
		}
	}
}

// A ROCm OOM with room (free above the request, no limit printed) on an
// APU (testdata/README.md, "OOM pastes hunted in session 42"): vllmrocm5's
// 18.55 GiB free for 12.95 GiB on a 127.00 GiB device. Alone, the message
// cannot tell an APU from a discrete GPU: no cause, the note says what
// free means on an APU. With a log line naming gfx1151 (Strix Halo), the
// free figure is the driver's GTT/TTM pool, not the RAM the OS can give:
// unified-memory. A device that may share memory (GH200) gets the note's
// "if", and a CUDA device with room neither.
func TestHunt42APURoom(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/hip_apu_twice_prefixed_vllmrocm5.txt")
	if err != nil {
		t.Fatal(err)
	}
	const room = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 10.06 GiB is free. Of the allocated memory 11.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n"
	for _, c := range []struct {
		name, text string
		first      string
		want       string // in the first cause's evidence, else in the notes
		not        string // in neither
	}{
		{"alone", string(b), "", "on ROCm the device may be an APU", "names gfx1151"},
		{"gfx1151 named", "rocminfo: Name: gfx1151\n" + string(b), CauseUnifiedMemory, "GTT/TTM pool", "may be an APU"},
		{"GH200 named", "GPU 0: NVIDIA GH200 480GB\n" + room, "", "if the OS uses the GPU's memory as system RAM", "GTT"},
		{"CUDA, nothing named", room, "", "the allocation failed for a reason the message does not show", "APU"},
	} {
		pm := NewPostmortem([]Input{textInput(t, "log.txt", c.text)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%s: %d OOMs", c.name, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		names := causeNames(r)
		if (c.first == "") != (len(names) == 0) || (len(names) > 0 && names[0] != c.first) {
			t.Errorf("%s: causes %v, want %q first; notes %q", c.name, names, c.first, r.Notes)
			continue
		}
		all := strings.Join(r.Notes, " ")
		where := all
		if len(r.Causes) > 0 {
			where = r.Causes[0].Evidence
			all += " " + r.Causes[0].Evidence + " " + r.Causes[0].Advice
		}
		if !strings.Contains(where, c.want) || (c.not != "" && strings.Contains(all, c.not)) {
			t.Errorf("%s: want %q, not %q: %s", c.name, c.want, c.not, all)
		}
	}
}
