package snapshot

import (
	"strings"
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

// TestH46cPrivatePoolRealGraph: hv/cudagraph_clean.pickle, recorded on an
// H200 (PyTorch 2.11) with a CUDA graph captured by torch.cuda.graph()
// without pool= and replayed 50 times. Walking its pickle in Python: the
// active blocks whose innermost rec.py frame is line 38 (the captured
// forward) are 34,734,080 bytes, all in segments of pool (1, 0), the id
// PyTorch 2.11 gives the pool a capture makes for itself; every other
// active block (the batch at :42, the 41 MiB with no stack, :127) is in
// (0, 0).
func TestH46cPrivatePoolRealGraph(t *testing.T) {
	res := analyzeSnapshot(t, "hv/cudagraph_clean.pickle", LeakOptions{})
	found := false
	for _, s := range res.Sites {
		if s.Frame.Line == 38 && strings.HasSuffix(s.Frame.Filename, "rec.py") {
			found = true
			if len(s.PrivatePools) != 1 || s.PrivatePools[0] != (PoolBytes{ID: [2]int64{1, 0}, Bytes: 34734080}) {
				t.Errorf("rec.py:38: private pools %+v, want 34734080 bytes in (1, 0)", s.PrivatePools)
			}
			continue
		}
		if len(s.PrivatePools) != 0 {
			t.Errorf("%s:%d: private pools %+v, want none", s.Frame.Filename, s.Frame.Line, s.PrivatePools)
		}
	}
	if !found {
		t.Error("no site at rec.py:38")
	}
}

// TestH46cPeakReserved: in h46c_cuda_graph_private_pools.pickle the peak
// is iteration 1's last allocation (weights 64 + batch 4 + graph output
// 32 + decode buffer 16 = 116 MiB, above the end's 112 MiB once the batch
// is freed); its three segments (128 + 256 + 64 MiB) were all reserved
// before it and none after, so 448 MiB were reserved at the peak.
func TestH46cPeakReserved(t *testing.T) {
	res := analyzeSnapshot(t, "h46c_cuda_graph_private_pools.pickle", LeakOptions{})
	if len(res.Devices) != 1 {
		t.Fatalf("%d devices", len(res.Devices))
	}
	if d := res.Devices[0]; d.PeakActiveBytes != 116<<20 || d.PeakReservedBytes != 448<<20 {
		t.Errorf("peak %d active, %d reserved; want %d and %d", d.PeakActiveBytes, d.PeakReservedBytes, 116<<20, 448<<20)
	}
}
