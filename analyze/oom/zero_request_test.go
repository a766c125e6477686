package oom

import (
	"strings"
	"testing"
)

// "Tried to allocate 0 bytes" (s32's oom/s19 and s19_cap, edits of the
// s31 H200 message) is no request PyTorch fails: allocate() and
// raw_alloc() return a null pointer for size 0 without calling malloc,
// and the caching allocator prints the segment it needed (2 MiB at the
// least). With the 1.40 GiB cap, the 17 MiB reserved but unallocated used
// to be "fragmentation ... would have held the 0 bytes request ... kept
// PyTorch from reserving a new 0 bytes segment": no cause rests on a 0
// request; a note says why.
func TestZeroByteRequest(t *testing.T) {
	const msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 0 bytes. GPU 0 has a total capacity of 139.80 GiB of which 137.72 GiB is free. Including non-PyTorch memory, this process has 2.07 GiB memory in use. %sOf the allocated memory 1.32 GiB is allocated by PyTorch, and 17.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
	for _, allowed := range []string{"", "1.40 GiB allowed; "} {
		text := strings.Replace(msg, "%s", allowed, 1)
		pm := NewPostmortem([]Input{textInput(t, "s19.txt", text)}, PostmortemOptions{})
		if len(pm.OOMs) != 1 {
			t.Fatalf("%q: %d OOMs", allowed, len(pm.OOMs))
		}
		r := pm.OOMs[0]
		all := allText(r)
		if r.RequestedBytes != 0 || len(r.Causes) != 0 || r.WouldFitIfContiguous != nil ||
			!strings.Contains(all, `"Tried to allocate 0 bytes", a request PyTorch never fails`) ||
			strings.Contains(all, "would have held") || strings.Contains(all, "0 bytes segment") {
			t.Errorf("%q: requested %d, causes %v, fit %v; %q", allowed, r.RequestedBytes, causeNames(r), r.WouldFitIfContiguous, all)
		}
	}
	// A profiler trace's [OutOfMemory] event of 0 bytes alike.
	in := Input{Path: "t.json", Format: "pytorch-profiler-trace",
		TraceOOMs: []TraceOOM{{Device: 0, TimeUs: 1, Requested: 0, Allocated: 1 << 30, Reserved: 1 << 31, Total: 150109880320}}}
	r := NewPostmortem([]Input{in}, PostmortemOptions{}).OOMs[0]
	if len(r.Causes) != 0 || !strings.Contains(allText(r), "the [OutOfMemory] event gives 0 bytes requested") {
		t.Errorf("event: causes %v; %q", causeNames(r), allText(r))
	}
}
