package oom

import (
	"os"
	"strings"
	"testing"
)

// allText is every sentence a report says: notes, evidence, advice.
func allText(r Report) string {
	s := strings.Join(r.Notes, "\n")
	for _, c := range r.Causes {
		s += "\n" + c.Evidence + "\n" + c.Advice
	}
	return s
}

// Huge requests recorded with PyTorch 2.11 on an H200 (testdata/pytorch/
// s31, a tester's, finding 1 and 12). PyTorch prints every request below
// 1 EB, so "1048576.00 GiB" is 2^50 bytes asked for, not an overflowed
// counter; each is more than the 139.80 GiB GPU by itself, so no free
// memory, release or cap explains it: capacity, with the advice that the
// size was computed wrong (both are beyond any GPU's 268 GiB), never
// fragmentation, never "-1 bytes", never "would have held".
func TestHugeRequests(t *testing.T) {
	total := gib(13980)
	for _, c := range []struct {
		file  string
		req   int64
		times string // the request over the GPU's total, whole
	}{
		// 2^50 / (139.80 GiB) = 1048576 / 139.80 = 7500.5.
		{"s31/oom_1pib_request.txt", 1 << 50, "(7500 times it)"},
		// The same with "1.40 GiB allowed": 17 MiB reserved but
		// unallocated cannot hold 1 PiB, so the cap makes no
		// fragmentation of it.
		{"s31/oom_1pib_request_allowed.txt", 1 << 50, "(7500 times it)"},
		// 8192 / 139.80 = 58.6.
		{"s31/oom_8tib_request.txt", 1 << 43, "(58 times it)"},
	} {
		pm := NewPostmortem([]Input{oomInput(t, c.file)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%s: %d OOMs", c.file, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		if r.RequestedBytes != c.req || r.DeviceTotalBytes != total {
			t.Errorf("%s: requested %d, total %d", c.file, r.RequestedBytes, r.DeviceTotalBytes)
		}
		if names := causeNames(r); len(names) != 1 || names[0] != CauseCapacity {
			t.Errorf("%s: causes %v, want [capacity]; %q", c.file, names, allText(r))
			continue
		}
		if r.WouldFitIfContiguous == nil || *r.WouldFitIfContiguous {
			t.Errorf("%s: would fit if contiguous: %v", c.file, r.WouldFitIfContiguous)
		}
		cz := r.Causes[0]
		if !strings.Contains(cz.Evidence, "request alone is more than the GPU's 139.80 GiB total "+c.times) ||
			!strings.Contains(cz.Advice, "most likely computed wrong") || strings.Contains(cz.Advice, "smaller batch,") ||
			cz.Numbers["requested_bytes"] != c.req {
			t.Errorf("%s: %+v", c.file, cz)
		}
		if s := allText(r); strings.Contains(s, "-1 bytes") || strings.Contains(s, "would have held") {
			t.Errorf("%s: %q", c.file, s)
		}
	}
}

// A request larger than this GPU but not than every GPU may be meant: the
// advice asks to check the size, then to split the tensor, and does not
// say it was computed wrong. 150 GiB on a 139.80 GiB GPU, nothing else
// allocated.
func TestRequestLargerThanTheGPU(t *testing.T) {
	msg := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 150.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 138.89 GiB is free. Including non-PyTorch memory, this process has 920.00 MiB memory in use. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n"
	r := NewPostmortem([]Input{textInput(t, "a.log", msg)}, PostmortemOptions{}).OOMs[0]
	if names := causeNames(r); len(names) != 1 || names[0] != CauseCapacity {
		t.Fatalf("causes %v; %q", names, allText(r))
	}
	cz := r.Causes[0]
	// 150 / 139.80 < 2: no "times it".
	if !strings.Contains(cz.Evidence, "the 150.00 GiB request alone is more than the GPU's 139.80 GiB total:") ||
		strings.Contains(cz.Advice, "most likely computed wrong") || !strings.Contains(cz.Advice, "if it is meant") {
		t.Errorf("%+v", cz)
	}
}

// A request whose size is not known (a figure above 2^64 bytes, which
// PyTorch never prints: an edited message) makes no claim that compares
// it: no cause, no "would fit", a note that says why; with a cap too, not
// fragmentation. One above 4 EiB that PyTorch can print (a raw
// allocation's, which gpuleak does not read as a size) is more than any
// GPU whatever its size: capacity, as "more than 1EB" is, and still no
// "would fit".
func TestUnknownRequest(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/pytorch/s31/oom_1pib_request_allowed.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text, req string
		capacity  bool
	}{
		{string(raw), "20000000000.00 GiB", false}, {strings.Replace(string(raw), "1.40 GiB allowed; ", "", 1), "20000000000.00 GiB", false},
		{string(raw), "5000000000.00 GiB", true},
	} {
		text := strings.Replace(c.text, "Tried to allocate 1048576.00 GiB", "Tried to allocate "+c.req, 1)
		in := textInput(t, "edited.txt", text)
		r := NewPostmortem([]Input{in}, PostmortemOptions{}).OOMs[0]
		if c.capacity {
			if r.RequestedBytes != -1 || len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity || r.WouldFitIfContiguous != nil {
				t.Errorf("%s: requested %d, causes %v, fit %v; want capacity alone", c.req, r.RequestedBytes, causeNames(r), r.WouldFitIfContiguous)
			}
			continue
		}
		if r.RequestedBytes != -1 || len(r.Causes) != 0 || r.WouldFitIfContiguous != nil {
			t.Errorf("requested %d, causes %v, fit %v", r.RequestedBytes, causeNames(r), r.WouldFitIfContiguous)
		}
		s := allText(r)
		if strings.Contains(s, "-1 bytes") || !strings.Contains(s, "no size for the request") {
			t.Errorf("%q", s)
		}
	}
}

// A snapshot gives no GPU total: its 1 PiB OOM (the first of
// s31/oom_1pib_then_fraction.pickle) is more than any GPU holds, so
// capacity, not memory "held outside this process"; the second, 3 GiB
// under a 1.40 GiB cap with 137.72 GiB free, stays memory-limit.
func TestHugeRequestInSnapshot(t *testing.T) {
	pm := postmortem(t, "s31/oom_1pib_then_fraction.pickle", "s31/oom_1pib_then_fraction.txt")
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.RequestedBytes != 1<<50 || len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity ||
		!strings.Contains(r.Causes[0].Evidence, "more than any GPU holds") || !strings.Contains(r.Causes[0].Advice, "most likely computed wrong") {
		t.Errorf("OOM 1: requested %d, %+v", r.RequestedBytes, r.Causes)
	}
	if names := causeNames(pm.OOMs[1]); len(names) != 1 || names[0] != CauseMemoryLimit {
		t.Errorf("OOM 2: %v", names)
	}
}

// A profiler trace's [OutOfMemory] event is an OOM. Its numbers are those
// of s31's trace (testdata/pytorch/s31/oom_8tib_request_trace.json.gz:
// 2^43 bytes requested, 161.06 MiB allocated, 166 MiB reserved, device 0).
// Alone it gives no GPU total or free memory: a request beyond any GPU is
// capacity, a small one gets no cause (a note says why, and nothing is
// said of reserved-but-unallocated memory it cannot place); with the
// message of the same OOM it is one OOM with both sources.
func TestTraceOOMEvent(t *testing.T) {
	ev := func(req int64) Input {
		return Input{Path: "t.json", Format: "pytorch-profiler-trace",
			TraceOOMs: []TraceOOM{{Device: 0, TimeUs: 1, Requested: req, Allocated: 168882176, Reserved: 174063616}}}
	}
	r := NewPostmortem([]Input{ev(1 << 43)}, PostmortemOptions{}).OOMs[0]
	if names := causeNames(r); len(names) != 1 || names[0] != CauseCapacity || !strings.Contains(r.Causes[0].Evidence, "more than any GPU holds") {
		t.Errorf("8 TiB alone: %v %q", names, allText(r))
	}
	r = NewPostmortem([]Input{ev(64 << 20)}, PostmortemOptions{}).OOMs[0]
	if len(r.Causes) != 0 || r.WouldFitIfContiguous != nil || !strings.Contains(allText(r), "[OutOfMemory] event alone") {
		t.Errorf("64 MiB alone: %v %v %q", causeNames(r), r.WouldFitIfContiguous, allText(r))
	}
	pm := NewPostmortem([]Input{ev(1 << 43), oomInput(t, "s31/oom_8tib_request.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 || len(pm.OOMs[0].Sources) != 2 || pm.OOMs[0].DeviceTotalBytes != gib(13980) || causeNames(pm.OOMs[0])[0] != CauseCapacity {
		t.Errorf("with the message: %d OOMs, %+v", len(pm.OOMs), pm.OOMs)
	}
	// Another request is another OOM.
	if pm := NewPostmortem([]Input{ev(1 << 30), oomInput(t, "s31/oom_8tib_request.txt")}, PostmortemOptions{}); len(pm.OOMs) != 2 {
		t.Errorf("different requests: %d OOMs", len(pm.OOMs))
	}
}

// A trace's deviceProperties give the GPU's total (totalGlobalMem): the
// event alone then judges a request larger than that GPU (s32: 200 GiB on
// an H200's 150,109,880,320 bytes, 139.80 GiB), which without the total
// it could not (below any GPU's size); a request that fits the GPU still
// gets no cause, the free memory being unknown.
func TestTraceOOMEventWithGPUTotal(t *testing.T) {
	ev := func(req int64) Input {
		return Input{Path: "t.json", Format: "pytorch-profiler-trace",
			TraceOOMs: []TraceOOM{{Device: 0, TimeUs: 1, Requested: req, Allocated: 168882176, Reserved: 174063616, Total: 150109880320}}}
	}
	r := NewPostmortem([]Input{ev(200 << 30)}, PostmortemOptions{}).OOMs[0]
	if names := causeNames(r); len(names) != 1 || names[0] != CauseCapacity || !strings.Contains(r.Causes[0].Evidence, "more than the GPU's 139.80 GiB total") || r.DeviceTotalBytes != 150109880320 {
		t.Errorf("200 GiB on 139.80 GiB: %v %q", names, allText(r))
	}
	r = NewPostmortem([]Input{ev(64 << 30)}, PostmortemOptions{}).OOMs[0]
	if len(r.Causes) != 0 || !strings.Contains(allText(r), "the trace the GPU's total") {
		t.Errorf("64 GiB on 139.80 GiB: %v %q", causeNames(r), allText(r))
	}
	// Without the total (0: not given), 200 GiB is below any GPU's size.
	in := ev(200 << 30)
	in.TraceOOMs[0].Total = 0
	if r := NewPostmortem([]Input{in}, PostmortemOptions{}).OOMs[0]; len(r.Causes) != 0 {
		t.Errorf("200 GiB, no total: %v", causeNames(r))
	}
}

// An [OutOfMemory] event of the CPU (s32's oom_cpu: Device Type 0, Device
// Id -1) is host memory, the CPU allocator's failure: no device, no GPU
// total (even one given), no GPU cause (not capacity, however large the
// request), a note saying what it is; a CUDA message of the same request
// is not folded into it, nor are memory_stats() of the same numbers. An
// event of an XPU keeps its type and device, in XPU's words.
func TestTraceOOMEventOfHostMemory(t *testing.T) {
	host := Input{Path: "t.json", Format: "pytorch-profiler-trace",
		TraceOOMs: []TraceOOM{{Device: -1, DeviceType: "cpu", TimeUs: 1, Requested: 1 << 43, Allocated: 168882176, Reserved: 0, Total: 150109880320}}}
	pm := NewPostmortem([]Input{host, oomInput(t, "s31/oom_8tib_request.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs, want the host's and the message's", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if !r.Host() || r.Device != -1 || len(r.Causes) != 0 || r.DeviceTotalBytes != -1 || r.ReservedBytes != -1 || len(r.Sources) != 1 ||
		!strings.Contains(allText(r), "host-memory allocation failure") || strings.Contains(allText(r), "any GPU") {
		t.Errorf("host OOM: %+v %q", r, allText(r))
	}
	xpu := host
	xpu.TraceOOMs = []TraceOOM{{Device: 0, DeviceType: "xpu", TimeUs: 1, Requested: 1 << 43, Allocated: 168882176, Reserved: 174063616}}
	r = NewPostmortem([]Input{xpu}, PostmortemOptions{}).OOMs[0]
	if r.Host() || r.DeviceType != "xpu" || r.Device != 0 || causeNames(r)[0] != CauseCapacity {
		t.Errorf("XPU OOM: %+v", r)
	}
	// An unknown request (a negative Bytes) is said to be the event's.
	neg := host
	neg.TraceOOMs = []TraceOOM{{Device: 0, TimeUs: 1, Requested: -1, Allocated: 168882176, Reserved: 174063616}}
	r = NewPostmortem([]Input{neg}, PostmortemOptions{}).OOMs[0]
	if len(r.Causes) != 0 || !strings.Contains(allText(r), "the [OutOfMemory] event gives no size") || strings.Contains(allText(r), "the message gives no size") {
		t.Errorf("unknown request: %q", allText(r))
	}
}
