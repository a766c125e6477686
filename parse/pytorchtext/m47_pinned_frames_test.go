package pytorchtext

import (
	"strings"
	"testing"
)

// Session 47, lead's device recordings (testdata/README.md, "session 47,
// m47b"): CuPy 14.2.0 on an H200. cupy.cuda.alloc_pinned_memory(2**43)
// fails in cupy_backends.cuda.api.runtime.hostAlloc (cudaHostAlloc: pinned
// host memory) with "CUDARuntimeError: cudaErrorMemoryAllocation: out of
// memory", printed twice (the exception chained to a second traceback
// that ends in the same call). The line names no call; the traceback's
// innermost frames do, so it is the machine's memory: no GPU OOM, a host
// warning naming cudaHostAlloc. The controls, CuPy's device pool
// (cupy.empty(2**41): 2,199,023,255,552 bytes, "Out of memory allocating")
// and numba's cuMemAlloc (CUDA_ERROR_OUT_OF_MEMORY), stay GPU OOMs.
func TestM47PinnedFramesAreHost(t *testing.T) {
	rs := readFile(t, "pastes/dev47_cupy_pinned_fail.txt", false)
	if len(rs.msgs) != 0 {
		t.Errorf("pinned: %d GPU messages, want 0", len(rs.msgs))
	}
	ws := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "cudaHostAlloc (in cupy_backends.cuda.api.runtime.hostAlloc), which allocates page-locked (pinned) host memory") {
		t.Errorf("pinned: no host warning naming cudaHostAlloc:\n%s", ws)
	}
	for _, c := range []struct {
		file string
		req  int64
	}{
		{"pastes/dev47_cupy_device_oom.txt", 2199023255552},
		{"pastes/dev47_numba_device_oom.txt", -1},
	} {
		rs := readFile(t, c.file, false)
		// (numba's chained exception prints the status twice: two rows
		// here, one OOM once the analysis joins them.)
		if len(rs.msgs) == 0 || strings.Contains(strings.Join(rs.meta.Warnings.Strings(), "\n"), "pinned") {
			t.Errorf("%s: %d messages, want a GPU OOM; warnings %q", c.file, len(rs.msgs), rs.meta.Warnings.Strings())
			continue
		}
		if got, ok := rs.msgs[0].sizes["requested"]; c.req >= 0 && got != c.req || c.req < 0 && ok {
			t.Errorf("%s: requested %d (%v), want %d", c.file, got, ok, c.req)
		}
	}
}

// pinnedFrameCall looks at the three innermost frames only: a pinned
// allocation further out (a pinned buffer's setup that then called a
// device allocation) is not the call that failed.
func TestPinnedFrameCallInnermostOnly(t *testing.T) {
	f := func(names ...string) []tbFrame {
		var fs []tbFrame
		for _, n := range names {
			fs = append(fs, tbFrame{name: n})
		}
		return fs
	}
	for _, c := range []struct {
		frames []tbFrame
		want   string
	}{
		{f("main", "cupy.cuda.pinned_memory._malloc", "cupy_backends.cuda.api.runtime.hostAlloc", "cupy_backends.cuda.api.runtime.check_status"), "cudaHostAlloc (in cupy_backends.cuda.api.runtime.hostAlloc)"},
		{f("main", "cuda.cudart.cudaMallocHost"), "cudaMallocHost (in cuda.cudart.cudaMallocHost)"},
		{f("cupy_backends.cuda.api.runtime.hostAlloc", "a", "b", "cupy_backends.cuda.api.runtime.malloc", "check_status"), ""},
		{f("cupy.cuda.memory.SingleDeviceMemoryPool._try_malloc"), ""},
		{nil, ""},
	} {
		if got := pinnedFrameCall(c.frames); got != c.want {
			t.Errorf("%v: %q, want %q", c.frames, got, c.want)
		}
	}
}

// Merging f47c's parenthesis rule with u47a's Level Zero place: a
// message quoted in a title's parentheses ends where they close, but a
// status name in parentheses (chipStar's "hipErrorTbd
// (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ) in FILE:LINE:FUNC") is the
// runtime's annotation, whose place follows: not cut there.
func TestParenEndKeepsStatusAnnotation(t *testing.T) {
	title := "YOLO runs out of memory (CUDA out of memory. Tried to allocate 3.22 GiB) on epoch 2"
	at := strings.Index(title, "CUDA out")
	if got, want := parenEnd(title, at), strings.Index(title, ") on"); got != want {
		t.Errorf("title: %d, want %d", got, want)
	}
	ze := "hipErrorTbd (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ) in /chipStar/src/backend/Level0/CHIPBackendLevel0.cc:1374:enqueueBarrierImpl"
	if got := parenEnd(ze, strings.Index(ze, "ZE_")); got != len(ze) {
		t.Errorf("status annotation cut at %d of %d", got, len(ze))
	}
}

// processMark's word test before its expression changes no answer: on
// each form of mark, and on lines without one, it returns what the
// expression alone finds.
func TestProcessMarkWordsLikeExpression(t *testing.T) {
	for _, l := range []string{
		"[rank1]: Traceback (most recent call last):",
		"[default3]: step 12 loss 0.5",
		"(VllmWorker rank=7 pid=10948) INFO step 3",
		"(pid=45601, ip=10.0.0.2) epoch 2",
		"(RayWorkerWrapper pid=12) iter 4",
		"2026-12-01 10:00:00 INFO step 5 loss 0.1",
		"pid=12 without parentheses step 3",
		"",
	} {
		want := processMarkRe.Re().FindString(l[:min(len(l), maxPrefix)])
		if got := processMark(l); got != want {
			t.Errorf("%q: %q, the expression finds %q", l, got, want)
		}
	}
}
