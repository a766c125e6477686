package snapshot

import (
	"strings"
	"testing"
)

// TestDev46MemPoolReal: testdata/pytorch/dev46_mempool_keep3.pickle,
// recorded on an H200 (PyTorch 2.11.0+cu130, testdata/gen/dev46_rec.py):
// a training step captured in a CUDA graph (no pool=, so PyTorch gives its
// capture pool (1, 0)), then six 64 MiB tensors made under
// torch.cuda.use_mem_pool(torch.cuda.MemPool()) at rec.py:107, three of
// them kept, then 32 MiB outside the pool at rec.py:111. Summing the
// active blocks of its pickle in Python by each block's innermost rec.py
// frame and its segment's segment_pool_id: rec.py:107 201,326,592 bytes,
// all in (0, 1) (the MemPool); rec.py:90 (the graph's captured loss)
// 34,603,520 in (1, 0); the blocks with no stack 100,696,064 in (1, 0)
// and 101,711,872 in (0, 0); rec.py:12, :82, :86, :111 in (0, 0) only.
func TestDev46MemPoolReal(t *testing.T) {
	res := analyzeSnapshot(t, "dev46_mempool_keep3.pickle", LeakOptions{})
	want := map[int64]PoolBytes{
		107: {ID: [2]int64{0, 1}, Bytes: 201326592},
		90:  {ID: [2]int64{1, 0}, Bytes: 34603520},
		-1:  {ID: [2]int64{1, 0}, Bytes: 100696064},
	}
	seen := map[int64]bool{}
	for _, s := range res.Sites {
		line := s.Frame.Line
		if !strings.HasSuffix(s.Frame.Filename, "rec.py") {
			line = -1 // the no-stack site
		}
		seen[line] = true
		w, ok := want[line]
		switch {
		case !ok && len(s.PrivatePools) != 0:
			t.Errorf("%s:%d: private pools %+v, want none", s.Frame.Filename, s.Frame.Line, s.PrivatePools)
		case ok && (len(s.PrivatePools) != 1 || s.PrivatePools[0] != w):
			t.Errorf("%s:%d: private pools %+v, want [%+v]", s.Frame.Filename, s.Frame.Line, s.PrivatePools, w)
		}
	}
	for l := range want {
		if !seen[l] {
			t.Errorf("no site for line %d", l)
		}
	}
}
