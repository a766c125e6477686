package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// TestH46cPoolNote: a retained site whose blocks lie in private pools
// names them and says why the memory stays. The kind of pool comes from
// PyTorch's numbering (snapshot.PoolBytes): (3, 0) only a CUDA graph's own
// capture makes, so the message says the graph keeps it until freed; (0,
// 2) may be graph_pool_handle()'s or a MemPool's, so it names both; part
// of a site's bytes in a pool are given as a part ("16 MiB of it").
// Without private pools nothing is added.
func TestH46cPoolNote(t *testing.T) {
	s := snapshot.Site{Kind: callsite.Retained, Bytes: 48 << 20, Count: 2,
		PrivatePools: []snapshot.PoolBytes{{ID: [2]int64{3, 0}, Bytes: 32 << 20}, {ID: [2]int64{0, 2}, Bytes: 16 << 20}}}
	m := siteMessage(s, false)
	for _, want := range []string{
		"32 MiB of it in the private pool a CUDA graph's capture made for itself (segment_pool_id (3, 0))",
		"16 MiB of it in a private pool from torch.cuda.graph_pool_handle()",
		"or a torch.cuda.MemPool (segment_pool_id (0, 2))",
		"when every CUDA graph captured into it is freed, or the MemPool is deleted",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("message lacks %q:\n%s", want, m)
		}
	}
	s.PrivatePools = []snapshot.PoolBytes{{ID: [2]int64{3, 0}, Bytes: 48 << 20}}
	if m := siteMessage(s, false); !strings.Contains(m, "; in the private pool a CUDA graph's capture made for itself (segment_pool_id (3, 0)): a CUDA graph keeps its private pool") || !strings.Contains(m, "until the graph is freed") {
		t.Errorf("graph pool: %s", m)
	}
	// One pool per captured graph (s38/graph_recapture_leak's shape: a
	// graph captured again each step and kept): the pools are counted
	// and their ids' range given, not each named.
	s.PrivatePools = nil
	for i := int64(1); i <= 30; i++ {
		s.PrivatePools = append(s.PrivatePools, snapshot.PoolBytes{ID: [2]int64{31 - i, 0}, Bytes: 1 << 20})
	}
	s.Bytes = 30 << 20
	m = siteMessage(s, false)
	if !strings.Contains(m, "in 30 private pools, one per CUDA graph's capture, each made for that graph (segment_pool_id (1, 0) to (30, 0))") || !strings.Contains(m, "30 graphs' pools hold them") || strings.Contains(m, "(7, 0)") {
		t.Errorf("30 graph pools: %s", m)
	}
	s.PrivatePools = nil
	if m := siteMessage(s, false); strings.Contains(m, "pool") {
		t.Errorf("default pool named: %s", m)
	}
}

// TestH46cFragmentationPrivatePools: split memory in private pools is
// said to be theirs (testdata/pytorch/h46c_cuda_graph_private_pools.pickle's
// shape: 64 MiB split in the default pool's segment, 224 MiB in a CUDA
// graph's pool (1, 0), 48 MiB in pool (0, 1)): 224 + 48 = 272 MiB of the
// 336 MiB serve only those pools. With the default pool's alone, no note.
func TestH46cFragmentationPrivatePools(t *testing.T) {
	pool := func(id [2]int64, split int64) snapshot.PoolState {
		return snapshot.PoolState{PoolKey: snapshot.PoolKey{PoolID: id}, InactiveSplitBytes: split, LargestSplitBytes: split, InactiveSplitBlocks: 1}
	}
	fr := oom.FragmentationReport{Path: "x.pickle", Device: 0, At: "end", Shape: oom.ShapePinned,
		State: snapshot.PoolState{ReservedBytes: 448 << 20, InactiveSplitBytes: 336 << 20, LargestSplitBytes: 224 << 20, InactiveSplitBlocks: 3, LargestFreeBytes: -1},
		Pools: []snapshot.PoolState{pool([2]int64{}, 64<<20), pool([2]int64{1, 0}, 224<<20), pool([2]int64{0, 1}, 48<<20)}}
	if m := fragmentationFinding(fr).Message; !strings.Contains(m, "(272 MiB of it lies in private pools") {
		t.Errorf("private pools' split memory not named: %s", m)
	}
	fr.Pools = fr.Pools[:1]
	if m := fragmentationFinding(fr).Message; strings.Contains(m, "private pools") {
		t.Errorf("default pool only, yet: %s", m)
	}
}
