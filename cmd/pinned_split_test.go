package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// A snapshot whose one segment holds one live block of 512 MiB and one
// free split block of 2.8 GiB (synthetic/pinned_split.pickle, by
// gen/pinned_split.py) holds free memory that empty_cache() cannot return,
// but in one piece: requests up to 2.8 GiB fit in it. Before h43b it was
// called fragmentation, which is free memory in many small pieces that a
// large request does not fit; the shared fixture fragmentation_oom.pickle
// (567 split blocks, the largest 8 MiB of 1.5 GiB) still is.
func TestPinnedSplitIsNotFragmentation(t *testing.T) {
	type frag struct {
		Kind       string `json:"kind"`
		Bytes      int64  `json:"bytes"`
		Message    string `json:"message"`
		SplitShape string `json:"split_shape"`
	}
	find := func(path string) frag {
		t.Helper()
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %.200q", path, code, errOut)
		}
		var r struct{ Findings []frag }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			if f.Kind == "fragmentation" {
				return f
			}
		}
		t.Fatalf("%s: no finding of kind fragmentation", path)
		return frag{}
	}
	f := find(td + "pytorch/synthetic/pinned_split.pickle")
	// 1433 x 2 MiB: the generator's free block.
	if f.Bytes != 1433*2<<20 || f.SplitShape != "pinned" {
		t.Errorf("pinned: %d bytes, shape %q; want %d, pinned", f.Bytes, f.SplitShape, int64(1433*2<<20))
	}
	if !strings.HasPrefix(f.Message, "pinned free memory: ") || !strings.Contains(f.Message, "in one free split block") ||
		!strings.Contains(f.Message, "not fragmented: requests up to 2.8 GiB fit in it") {
		t.Errorf("pinned: message %.200q", f.Message)
	}
	f = find(td + "pytorch/fragmentation_oom.pickle")
	if f.SplitShape != "scattered" || !strings.HasPrefix(f.Message, "fragmentation: ") {
		t.Errorf("fragmentation_oom: shape %q, message %.200q", f.SplitShape, f.Message)
	}
}
