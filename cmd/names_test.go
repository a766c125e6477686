package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A snapshot with more distinct frames than one record batch of the frames
// table holds: the names of the top sites must be their own. Before the
// analyzer copied names out of released batches (issue 8, item 1), past
// 65,536 frames the recycling allocator's reused buffers showed through as
// "\x01\x00\x01 (\x00\x00...:1)" or as another frame's name, with exit 0.
func TestManyFramesKeepTheirNames(t *testing.T) {
	const n = 135_000
	w := newPickleWriter()
	// Allocation i is n-i KiB from its own frame, file_%06d.py line i+1
	// in function_%06d: ranked by bytes, site k of the report is
	// allocation k, whose frame was in the first, long released, batches.
	w.dict("segments", func() { w.list(0, nil) }, "device_traces", func() {
		w.list(1, func(int) {
			w.list(n, func(i int) {
				w.dict("action", "alloc", "addr", int64(1<<40)+int64(i)<<20, "size", (n-i)<<10, "stream", 0,
					"time_us", int64(1_700_000_000_000_000)+int64(i)*1000, "frames", func() {
						w.list(1, func(int) {
							w.dict("filename", fmt.Sprintf("file_%06d.py", i), "line", i+1, "name", fmt.Sprintf("function_%06d", i))
						})
					})
			})
		})
	})
	code, out, errs := run(t, w.stop(), "analyze", "--format", "json", "--top", "50", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep := decodeNames(t, out)
	if len(rep.Findings) != 50 {
		t.Fatalf("%d findings, want 50 (--top 50)", len(rep.Findings))
	}
	for k, f := range rep.Findings {
		i := k
		want := fmt.Sprintf("function_%06d (file_%06d.py:%d)", i, i, i+1)
		got := fmt.Sprintf("%s (%s:%d)", f.Site.Function, f.Site.File, f.Site.Line)
		if got != want || f.Bytes != int64(n-i)<<10 {
			t.Errorf("finding %d: %q %d bytes, want %q %d bytes", k, got, f.Bytes, want, (n-i)<<10)
		}
	}
}

// 200 OOM tracebacks of 30 frames each in one log: every frame of every
// postmortem must be the one its traceback names (before the fix, 4,110 of
// the 6,000 frames came back garbled).
func TestManyTracebacksKeepTheirFrames(t *testing.T) {
	const ooms, depth = 200, 30
	var log strings.Builder
	for k := 0; k < ooms; k++ {
		fmt.Fprintf(&log, "step %d\nTraceback (most recent call last):\n", k)
		for d := 0; d < depth; d++ {
			fmt.Fprintf(&log, "  File \"/home/user/train/mod_%03d_%02d.py\", line %d, in func_%03d_%02d\n    x = f()\n", k, d, d+1, k, d)
		}
		// Each OOM asks for a different size, so that none is folded into another.
		fmt.Fprintf(&log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 10.00 MiB is free. Including non-PyTorch memory, this process has 79.13 GiB memory in use. Of the allocated memory 78.50 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n", k+1)
	}
	code, out, errs := run(t, []byte(log.String()), "oom", "--format", "json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep := decodeNames(t, out)
	seen := map[int64]bool{}
	bad := 0
	for _, f := range rep.Findings {
		if f.Kind != "oom" || f.RequestedBytes == nil {
			continue
		}
		k := int(*f.RequestedBytes>>20) - 1
		seen[int64(k)] = true
		want := map[string]bool{}
		for d := 0; d < depth; d++ {
			want[fmt.Sprintf("func_%03d_%02d (/home/user/train/mod_%03d_%02d.py:%d)", k, d, k, d, d+1)] = true
		}
		if len(f.Stack) != depth {
			t.Errorf("OOM %d: %d frames, want %d", k, len(f.Stack), depth)
		}
		for _, fr := range f.Stack {
			if s := fmt.Sprintf("%s (%s:%d)", fr.Function, fr.File, fr.Line); !want[s] {
				bad++
				if bad < 5 {
					t.Errorf("OOM %d: frame %q is not one of its traceback", k, s)
				}
			}
		}
	}
	if len(seen) != ooms || bad > 0 {
		t.Errorf("%d of %d OOMs reported, %d frames wrong", len(seen), ooms, bad)
	}
}

type namesReport struct {
	Findings []struct {
		Kind  string      `json:"kind"`
		Bytes int64       `json:"bytes"`
		Site  jsonFrame   `json:"site"`
		Stack []jsonFrame `json:"stack"`
		// RequestedBytes is the OOM detail's, inlined in an oom finding.
		RequestedBytes *int64 `json:"requested_bytes"`
	} `json:"findings"`
}

type jsonFrame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int64  `json:"line"`
}

func decodeNames(t *testing.T, s string) namesReport {
	t.Helper()
	var r namesReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("%v in %.200s", err, s)
	}
	return r
}
