package snapshot

import (
	"testing"
)

// TestH46cPrivatePoolSites: testdata/pytorch/h46c_cuda_graph_private_pools.pickle
// (synthetic, testdata/gen/h46c_cuda_graph_pool.py) holds three live
// blocks: weights (64 MiB) in the default pool's segment, a graph's static
// output (32 MiB) in a 256 MiB segment of pool (1, 0), a decode buffer
// (16 MiB) in a 64 MiB segment of pool (0, 1). Each site's blocks lie in
// the segment that contains their address, so: __init__ no private pool,
// capture_graph 32 MiB in (1, 0), decode_buffers 16 MiB in (0, 1).
func TestH46cPrivatePoolSites(t *testing.T) {
	res := analyzeSnapshot(t, "h46c_cuda_graph_private_pools.pickle", LeakOptions{})
	want := map[string][]PoolBytes{
		"__init__":       nil,
		"capture_graph":  {{ID: [2]int64{1, 0}, Bytes: 32 << 20}},
		"decode_buffers": {{ID: [2]int64{0, 1}, Bytes: 16 << 20}},
	}
	seen := 0
	for _, s := range res.Sites {
		w, ok := want[s.Frame.Name]
		if !ok {
			t.Errorf("unexpected site %s", s.Frame.Name)
			continue
		}
		seen++
		if len(s.PrivatePools) != len(w) || (len(w) == 1 && s.PrivatePools[0] != w[0]) {
			t.Errorf("%s: private pools %+v, want %+v", s.Frame.Name, s.PrivatePools, w)
		}
	}
	if seen != 3 {
		t.Errorf("%d sites, want 3", seen)
	}
}
