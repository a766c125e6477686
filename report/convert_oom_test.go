package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// The OOM and fragmentation members are embedded structs: a name used
// twice at one depth would make encoding/json drop both silently. Every
// documented member must come out, and none on other kinds.
func TestOOMFindingMembers(t *testing.T) {
	fit := true
	pool := snapshot.PoolKey{Device: 0}
	r := anoom.Report{Device: 0, Sources: []anoom.Source{{Path: "a.pickle", Format: "pytorch-snapshot", Seq: 3}, {Path: "a.log", Line: 7, Seq: -1}},
		RequestedBytes: 1, SegmentBytes: 2, DeviceFreeBytes: 3, DeviceTotalBytes: 4, ProcessInUseBytes: 5, UnlistedBytes: 6,
		AllowedBytes: 7, AllocatedBytes: 8, ReservedBytes: 9, ReservedUnallocatedBytes: 1, ActiveBytes: 8, PrivatePoolBytes: 0,
		LargestFreeBlockBytes: 1, WouldFitIfContiguous: &fit, RequestPool: &pool, LiveBlocks: 2, TimeUs: 5,
		Memory: &snapshot.DeviceMemory{Pools: []snapshot.PoolState{{RequestedKnown: true}}},
		Causes: []anoom.Cause{{Name: anoom.CauseCapacity, Evidence: "e", Advice: "a", Numbers: map[string]int64{"x_bytes": 1}}}}
	fr := anoom.FragmentationReport{Path: "a.pickle", At: "end", State: snapshot.PoolState{RequestedKnown: true, LargestFreeBytes: 1}}
	fs := []Finding{oomFinding(r), fragmentationFinding(fr), {Kind: KindLeak}}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &Report{Findings: fs}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	shared := []string{"allocated_bytes", "reserved_bytes", "reserved_unallocated_bytes", "active_bytes", "largest_free_block_bytes", "pools", "advice"}
	oom := append([]string{"requested_bytes", "segment_bytes", "device_free_bytes", "device_total_bytes", "process_in_use_bytes",
		"other_processes", "unlisted_bytes", "allowed_bytes", "private_pool_bytes", "would_fit_if_contiguous", "request_pool", "cause",
		"cause_evidence", "sites", "sites_total", "live_blocks", "time_us", "message_generation", "exception", "unparsed_reason",
		"sources", "occurrences", "notes", "stats_at_oom"}, shared...)
	frag := append([]string{"at", "segments", "free_bytes", "free_blocks", "inactive_split_bytes", "inactive_split_blocks",
		"block_requested_bytes", "internal_fragmentation_bytes", "fragmentation_ratio"}, shared...)
	for i, want := range [][]string{oom, frag} {
		for _, k := range want {
			if _, ok := out.Findings[i][k]; !ok {
				t.Errorf("%s finding lacks %q", fs[i].Kind, k)
			}
		}
	}
	for _, k := range append(oom, frag...) {
		if _, ok := out.Findings[2][k]; ok {
			t.Errorf("leak finding has %q", k)
		}
	}
	if c := out.Findings[0]["cause"].([]any); len(c) != 1 || c[0] != "capacity" {
		t.Errorf("cause %v", c)
	}
	if src := out.Findings[0]["sources"].([]any); src[0].(map[string]any)["trace_seq"].(float64) != 3 || src[1].(map[string]any)["line"].(float64) != 7 {
		t.Errorf("sources %v", src)
	}
}

// Times are shown with the precision their span needs, and the wall-clock
// start when the trace's clock is a date.
func TestSpanString(t *testing.T) {
	const start = 1796090393671000 // 2026-12-01 01:59:53.671 UTC
	for _, c := range []struct {
		d    int64
		want string
	}{
		{750, "750 µs"},
		{4_700, "4.7 ms"},
		{12_000, "12 ms"},
		{1_404_000, "1.40 s"},
		{17_512_000, "17.5 s"},
		{185_000_000, "3m5s"},
	} {
		if got := spanString(start, start+c.d); got != c.want+", from 2026-12-01 01:59:53.671 UTC" {
			t.Errorf("%d µs: %q", c.d, got)
		}
	}
	if got := spanString(0, 52_000); got != "52 ms" {
		t.Errorf("clock from 0: %q", got)
	}
}

// TestSplitBlocks: the fragmentation finding names the largest split block
// (what the split memory can serve) and, apart, the segments with no live
// block (which empty_cache() returns and which take requests up to the
// largest free block). The numbers: 1,024 + 992 MiB split around live
// blocks (as at oom_caught_retry.pickle's end) and 1,536 MiB in two
// segments with no live block, the largest free block first 1 GiB (a
// split one), then 1.5 GiB (a free segment).
func TestSplitBlocks(t *testing.T) {
	const MiB = 1 << 20
	s := snapshot.PoolState{FreeBytes: 2016*MiB + 1536*MiB, FreeBlocks: 2 + 2, InactiveSplitBytes: 2016 * MiB, InactiveSplitBlocks: 2,
		WholeFreeBlocks: 2, LargestSplitBytes: 1024 * MiB, LargestFreeBytes: 1024 * MiB}
	got := splitBlocks(s, false, nil)
	for _, want := range []string{"the largest split block 1.0 GiB", "1.5 GiB more is free in 2 segments with no live block", "and larger requests need new segments"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	s.LargestFreeBytes = 1536 * MiB // one free segment larger than any split block
	if got := splitBlocks(s, false, nil); !strings.Contains(got, "requests larger than 1.5 GiB (the largest free block) need new segments") {
		t.Errorf("%q", got)
	}
	s = snapshot.PoolState{FreeBytes: 8 * MiB, FreeBlocks: 3, InactiveSplitBytes: 8 * MiB, InactiveSplitBlocks: 3, LargestSplitBytes: 4 * MiB, LargestFreeBytes: 4 * MiB}
	if got := splitBlocks(s, false, nil); strings.Contains(got, "no live block") || !strings.Contains(got, "largest split block 4.0 MiB") {
		t.Errorf("all free memory split: %q", got)
	}
	s = snapshot.PoolState{InactiveSplitBytes: 8 * MiB, LargestFreeBytes: -1, LargestSplitBytes: -1} // stats: no blocks
	if got := splitBlocks(s, false, nil); strings.Contains(got, "largest") {
		t.Errorf("stats: %q", got)
	}
	// Expandable segments: the split memory is the free part of pages
	// shared with live blocks; beside it, 60 MiB in one run of whole free
	// pages (one free block that also has a split piece at its start:
	// counted by WholeFreeBlocks, not FreeBlocks - InactiveSplitBlocks).
	s = snapshot.PoolState{PoolKey: snapshot.PoolKey{Expandable: true}, FreeBytes: 80 * MiB, FreeBlocks: 2, InactiveSplitBytes: 20 * MiB,
		InactiveSplitBlocks: 2, WholeFreeBlocks: 1, LargestSplitBytes: 12 * MiB, LargestFreeBytes: 68 * MiB}
	got = splitBlocks(s, true, []snapshot.PoolState{s})
	for _, want := range []string{"(it unmaps only whole free pages)", "60 MiB more is free in 1 run of whole pages with no live block", "need more pages mapped"} {
		if !strings.Contains(got, want) {
			t.Errorf("expandable: %q lacks %q", got, want)
		}
	}
}
