package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// misfitSnapshot is a snapshot of one 1 GiB segment at 1<<40 holding an
// active 16 MiB block at its start, then the active blocks at offsets
// (bytes from the segment's start) of size 512 each, and one inactive
// block of the given size after the 16 MiB one. s35's generator placed
// blocks so, past the segment (c_train_keep_loss.pickle: 1003 blocks of
// 35 GiB in a 1 GiB segment).
func misfitSnapshot(t *testing.T, offsets []int64, inactive int64) string {
	t.Helper()
	const seg, mib = int64(1) << 40, int64(1) << 20
	w := newPickleWriter()
	block := func(addr, size int64, state string) {
		w.dict("address", addr, "size", size, "requested_size", size, "state", state, "frames", func() {
			w.list(1, func(int) { w.dict("filename", "/home/user/proj/train.py", "line", 41, "name", "train") })
		})
	}
	active := 16*mib + 512*int64(len(offsets))
	w.dict("segments", func() {
		w.list(1, func(int) {
			w.dict("device", 0, "address", seg, "total_size", 1<<30, "allocated_size", active, "active_size", active,
				"requested_size", active, "stream", 0, "segment_type", "large", "blocks", func() {
					w.list(2+len(offsets), func(i int) {
						switch {
						case i == 0:
							block(seg, 16*mib, "active_allocated")
						case i == 1:
							block(seg+16*mib, inactive, "inactive")
						default:
							block(seg+offsets[i-2], 512, "active_allocated")
						}
					})
				})
		})
	}, "device_traces", func() { w.list(1, func(int) { w.list(0, nil) }) })
	path := filepath.Join(t.TempDir(), "snap.pickle")
	if err := os.WriteFile(path, w.stop(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Blocks placed past their segment (s35 REPORT section 4: "1.4 GiB of
// PyTorch's 1.0 GiB reserved is free"): the free figure counts only what
// the active blocks leave within the segment, never more than reserved,
// and a warning names the segment. A segment whose blocks all lie inside
// it but add up past its total_size is inconsistent too. A consistent
// segment gets no warning.
func TestSnapshotBlocksPastSegment(t *testing.T) {
	const mib = int64(1) << 20
	type report struct {
		Inputs []struct {
			Warnings []string `json:"warnings"`
		} `json:"inputs"`
		Findings []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
			// A fragmentation finding's own members (flattened in JSON).
			FreeBytes      int64 `json:"free_bytes"`
			ReservedBytes  int64 `json:"reserved_bytes"`
			MisfitSegments int   `json:"misfit_segments"`
		} `json:"findings"`
	}
	for _, c := range []struct {
		name     string
		offsets  []int64
		inactive int64
		// free: the segment's free bytes as counted; warn: a warning
		// naming the segment is expected.
		free int64
		warn string
	}{
		// The 512 B block 2 GiB from the start, past the 1 GiB segment:
		// clipped to the segment's end, the free memory is the segment
		// less the 16 MiB block, 1008 MiB (was 2 GiB - 16 MiB, 2032 MiB,
		// more than the 1 GiB reserved). The inactive block (72 MiB) fits.
		{"past the end", []int64{2 << 30}, 72 * mib, 1024*mib - 16*mib, "1 active blocks lie outside it (the first at 0x10080000000, 512 bytes)"},
		// All inside (the 512 B block at 512 MiB) but the inactive block
		// says 2 GiB: 16 MiB + 2 GiB + 512 B > 1 GiB. Free: the segment
		// less the two active blocks, 1024 MiB - 16 MiB - 512 B.
		{"sum past total_size", []int64{512 * mib}, 2 << 30, 1024*mib - 16*mib - 512, "its blocks add up to 2164261376 bytes (2.0 GiB), more than its total_size"},
		// Consistent: 16 MiB + 72 MiB + 512 B within 1 GiB.
		{"consistent", []int64{512 * mib}, 72 * mib, 1024*mib - 16*mib - 512, ""},
	} {
		path := misfitSnapshot(t, c.offsets, c.inactive)
		code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", "--top", "0", path)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := strings.Join(r.Inputs[0].Warnings, "\n")
		named := strings.Contains(w, "segment at 0x10000000000 (total_size 1073741824 bytes, 1.0 GiB)")
		if c.warn != "" && (!named || !strings.Contains(w, c.warn) || !strings.Contains(w, "the snapshot is inconsistent")) {
			t.Errorf("%s: warnings %q, want the segment named and %q", c.name, w, c.warn)
		}
		if c.warn == "" && named {
			t.Errorf("%s: a consistent segment warned about: %q", c.name, w)
		}
		found := false
		for _, f := range r.Findings {
			if f.Kind != "fragmentation" {
				continue
			}
			found = true
			free, reserved := f.FreeBytes, f.ReservedBytes
			if free != c.free || free > reserved || free < 0 {
				t.Errorf("%s: free %d of %d reserved, want %d", c.name, free, reserved, c.free)
			}
			if want := map[bool]int{true: 1}[c.warn != ""]; f.MisfitSegments != want {
				t.Errorf("%s: misfit_segments %d, want %d", c.name, f.MisfitSegments, want)
			}
			if inconsistent := strings.Contains(f.Message, "the snapshot is inconsistent"); inconsistent != (c.warn != "") {
				t.Errorf("%s: message %q", c.name, f.Message)
			}
		}
		if !found {
			t.Errorf("%s: no fragmentation finding", c.name)
		}
	}
}
