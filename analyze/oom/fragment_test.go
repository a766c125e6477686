package oom

import (
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

const MiB = 1 << 20

// readSnapshotBatches streams a real snapshot into fn, batch by batch.
func readSnapshotBatches(t *testing.T, name string, mem memory.Allocator, fn func(pytorch.Table, arrow.RecordBatch)) {
	t.Helper()
	in, err := parse.Open("../../testdata/pytorch/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := pytorch.NewReader(in.Reader(), name, pytorch.WithAllocator(mem))
	defer r.Release()
	for r.Next() {
		fn(r.Table(), r.RecordBatch())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// The final state, measured from the blocks, agrees with each segment's
// own totals (allocated_size, active_size, requested_size, total_size) on
// every real snapshot.
func TestEndStateMatchesSegmentTotals(t *testing.T) {
	names, _ := os.ReadDir("../../testdata/pytorch")
	n := 0
	for _, e := range names {
		name := e.Name()
		if !strings.Contains(name, ".pickle") || e.IsDir() {
			continue
		}
		n++
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		a := snapshot.NewFragmentAnalyzer()
		want := map[int32][4]int64{}
		readSnapshotBatches(t, name, mem, func(tb pytorch.Table, rec arrow.RecordBatch) {
			if err := a.Add(tb, rec); err != nil {
				t.Fatal(err)
			}
			if tb != pytorch.TableSegments {
				return
			}
			dev := rec.Column(pytorch.SegDevice).(*array.Int32)
			for i := 0; i < int(rec.NumRows()); i++ {
				w := want[dev.Value(i)]
				for k, col := range []int{pytorch.SegTotalSize, pytorch.SegAllocatedSize, pytorch.SegActiveSize, pytorch.SegRequestedSize} {
					w[k] += rec.Column(col).(*array.Int64).Value(i)
				}
				want[dev.Value(i)] = w
			}
		})
		mem.AssertSize(t, 0)
		res := a.Finalize()
		for _, dm := range res.End {
			w := want[int32(dm.Device)]
			tot := dm.Total
			got := [4]int64{tot.ReservedBytes, tot.AllocatedBytes, tot.ActiveBytes, tot.RequestedBytes}
			// requested_size of a segment counts pending-free blocks too.
			if got[0] != w[0] || got[1] != w[1] || got[2] != w[2] || (got[3] != w[3] && tot.ActiveBytes == tot.AllocatedBytes) {
				t.Errorf("%s device %d: reserved/allocated/active/requested %v, segments say %v", name, dm.Device, got, w)
			}
			if tot.FreeBytes != tot.ReservedBytes-tot.ActiveBytes || tot.LargestFreeBytes > tot.FreeBytes {
				t.Errorf("%s: free %d largest %d", name, tot.FreeBytes, tot.LargestFreeBytes)
			}
		}
	}
	if n < 15 {
		t.Fatalf("%d snapshots", n)
	}
}

// Expandable segments are understood: their free memory is split only
// where it shares a page (20 MiB in the large pool) with a live block, and
// 18 MiB of it is too little for a fragmentation finding.
func TestExpandableSegmentsSmallSplit(t *testing.T) {
	in := oomInput(t, "expandable_segments.pickle")
	end := in.Snapshot.Fragment.End[0]
	// Two mapped ranges of one expandable segment, one page each: 40 MiB
	// reserved, 22 MiB allocated, 18 MiB free, in both pages beside live
	// blocks (4 and 14 MiB: the snapshot's blocks).
	if end.Total.ReservedBytes != 40*MiB || end.Total.AllocatedBytes != 22*MiB || end.Total.FreeBytes != 18*MiB ||
		end.Total.InactiveSplitBytes != 18*MiB || end.Total.WholeFreeBlocks != 0 {
		t.Errorf("total %+v", end.Total)
	}
	if end.Fixed.ReservedBytes != 0 || end.Fixed.FreeBytes != 0 || len(end.Pools) != 1 || !end.Pools[0].Expandable {
		t.Errorf("fixed %+v pools %+v", end.Fixed, end.Pools)
	}
	pm := NewPostmortem([]Input{in}, PostmortemOptions{})
	if len(pm.Fragmentation) != 0 || len(pm.OOMs) != 0 {
		t.Errorf("%+v", pm)
	}
}

// A CUDA graph's private pool and a side stream's segments are pools of
// their own.
func TestPrivatePoolsAndStreams(t *testing.T) {
	end := oomInput(t, "cuda_graph_pool.pickle").Snapshot.Fragment.End[0]
	var private, streams int
	seen := map[int64]bool{}
	for _, p := range end.Pools {
		if p.Private() {
			private++
			if p.PoolID != [2]int64{1, 0} {
				t.Errorf("pool id %v", p.PoolID)
			}
		}
		seen[p.Stream] = true
	}
	streams = len(seen)
	// fixtures: segment_pool_id (1, 0) for the graph's large and small
	// segments; three streams (default, the warm-up side stream, capture).
	if private != 2 || streams != 3 || len(end.Pools) != 7 || end.Total.Segments != 8 {
		t.Errorf("%d private pools, %d streams, %d pools: %+v", private, streams, len(end.Pools), end.Pools)
	}
}

// A wrapped ring buffer keeps the newest entries: dropping the trace's
// first 900 entries (as a ring of max_entries=971 would have) leaves the
// state at the OOM at seq 1001 unchanged, since only later entries are
// undone.
func TestReplayWithWrappedRing(t *testing.T) {
	state := func(drop int64) snapshot.OOMState {
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		defer mem.AssertSize(t, 0)
		a := snapshot.NewFragmentAnalyzer()
		readSnapshotBatches(t, "fragmentation_oom.pickle", mem, func(tb pytorch.Table, rec arrow.RecordBatch) {
			if tb == pytorch.TableEvents {
				seq := rec.Column(pytorch.EvSeq).(*array.Int64)
				first := 0
				for first < int(rec.NumRows()) && seq.Value(first) < drop {
					first++
				}
				rec = rec.NewSlice(int64(first), rec.NumRows())
				defer rec.Release()
			}
			if err := a.Add(tb, rec); err != nil {
				t.Fatal(err)
			}
		})
		res := a.Finalize()
		if len(res.OOMs) != 2 || len(res.Warnings) != 0 {
			t.Fatalf("drop %d: %d OOMs, %q", drop, len(res.OOMs), res.Warnings)
		}
		return res.OOMs[0]
	}
	full, wrapped := state(0), state(900)
	if full.Seq != 1001 || wrapped.Seq != 1001 || full.Memory.Total != wrapped.Memory.Total || len(full.Memory.Blocks) != len(wrapped.Memory.Blocks) {
		t.Errorf("full %+v\nwrapped %+v", full.Memory.Total, wrapped.Memory.Total)
	}
}

// seg, blk and fev describe a synthetic snapshot.
type seg struct {
	addr       uint64
	size       int64
	small      bool
	stream     int64
	expandable bool
}

type blk struct {
	seg, addr uint64
	size      int64
	state     string
}

type fev struct {
	action     string
	addr       uint64
	size       int64
	stream     int64
	deviceFree int64 // -1: none
}

func syntheticSnapshot(t *testing.T, segs []seg, blks []blk, evs []fev) *snapshot.Result {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	a := snapshot.NewAnalyzer(snapshot.LeakOptions{})
	sb := array.NewRecordBuilder(mem, pytorch.SegmentsSchema)
	defer sb.Release()
	for _, s := range segs {
		sb.Field(pytorch.SegDevice).(*array.Int32Builder).Append(0)
		sb.Field(pytorch.SegAddress).(*array.Uint64Builder).Append(s.addr)
		for _, c := range []int{pytorch.SegTotalSize, pytorch.SegAllocatedSize, pytorch.SegActiveSize, pytorch.SegRequestedSize} {
			sb.Field(c).(*array.Int64Builder).Append(s.size)
		}
		sb.Field(pytorch.SegStream).(*array.Int64Builder).Append(s.stream)
		typ := "large"
		if s.small {
			typ = "small"
		}
		sb.Field(pytorch.SegType).(*array.BinaryDictionaryBuilder).AppendString(typ)
		sb.Field(pytorch.SegPoolID).AppendNull()
		sb.Field(pytorch.SegExpandable).(*array.BooleanBuilder).Append(s.expandable)
		sb.Field(pytorch.SegStackID).AppendNull()
	}
	bb := array.NewRecordBuilder(mem, pytorch.BlocksSchema)
	defer bb.Release()
	for _, b := range blks {
		bb.Field(pytorch.BlkDevice).(*array.Int32Builder).Append(0)
		bb.Field(pytorch.BlkSegmentAddress).(*array.Uint64Builder).Append(b.seg)
		bb.Field(pytorch.BlkAddress).(*array.Uint64Builder).Append(b.addr)
		bb.Field(pytorch.BlkSize).(*array.Int64Builder).Append(b.size)
		bb.Field(pytorch.BlkRequestedSize).(*array.Int64Builder).Append(b.size)
		bb.Field(pytorch.BlkState).(*array.BinaryDictionaryBuilder).AppendString(b.state)
		bb.Field(pytorch.BlkStackID).AppendNull()
	}
	eb := array.NewRecordBuilder(mem, pytorch.EventsSchema)
	defer eb.Release()
	for i, e := range evs {
		eb.Field(pytorch.EvDevice).(*array.Int32Builder).Append(0)
		eb.Field(pytorch.EvSeq).(*array.Int64Builder).Append(int64(i))
		eb.Field(pytorch.EvTimeUs).(*array.Int64Builder).Append(int64(1000 * (i + 1)))
		eb.Field(pytorch.EvAction).(*array.BinaryDictionaryBuilder).AppendString(e.action)
		if e.action == "oom" {
			eb.Field(pytorch.EvAddr).AppendNull()
		} else {
			eb.Field(pytorch.EvAddr).(*array.Uint64Builder).Append(e.addr)
		}
		eb.Field(pytorch.EvSize).(*array.Int64Builder).Append(e.size)
		eb.Field(pytorch.EvStream).(*array.Int64Builder).Append(e.stream)
		eb.Field(pytorch.EvStackID).AppendNull()
		if e.deviceFree >= 0 {
			eb.Field(pytorch.EvDeviceFree).(*array.Int64Builder).Append(e.deviceFree)
		} else {
			eb.Field(pytorch.EvDeviceFree).AppendNull()
		}
	}
	for _, x := range []struct {
		t pytorch.Table
		b *array.RecordBuilder
	}{{pytorch.TableEvents, eb}, {pytorch.TableBlocks, bb}, {pytorch.TableSegments, sb}} {
		rec := x.b.NewRecordBatch()
		if err := a.Add(x.t, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	return a.Finalize()
}

// Undoing segment_map and segment_unmap: an expandable segment that grew
// and shrank after the OOM is rebuilt as it was. At the OOM, 4 MiB were
// free in two 2 MiB holes and 3 MiB were asked for while the GPU had 1 MiB
// free: the holes between mapped pages are fragmentation inside expandable
// segments (issue 10), and the postmortem says they were already on.
func TestUndoExpandable(t *testing.T) {
	const B = 0x10000000
	res := syntheticSnapshot(t,
		[]seg{{addr: B, size: 20 * MiB, expandable: true}},
		[]blk{{B, B, 2 * MiB, "active_allocated"}, {B, B + 4*MiB, 2 * MiB, "active_allocated"}},
		[]fev{
			{"segment_map", B, 8 * MiB, 0, -1},
			{"alloc", B, 2 * MiB, 0, -1},
			{"alloc", B + 4*MiB, 2 * MiB, 0, -1},
			{"oom", 0, 3 * MiB, 0, 1 << 20}, // the GPU had 1 MiB free
			{"segment_map", B + 8*MiB, 12 * MiB, 0, -1},
			{"alloc", B + 6*MiB, 13 * MiB, 0, -1},
			{"free_requested", B + 6*MiB, 13 * MiB, 0, -1},
			{"free_completed", B + 6*MiB, 13 * MiB, 0, -1},
			{"segment_unmap", B + 10*MiB, 10 * MiB, 0, -1},
			{"segment_map", B + 10*MiB, 10 * MiB, 0, -1},
		})
	if len(res.OOMs) != 1 || len(res.Fragment.Warnings) != 0 {
		t.Fatalf("%+v %q", res.OOMs, res.Fragment.Warnings)
	}
	o := res.OOMs[0]
	tot := o.Memory.Total
	if tot.Segments != 1 || tot.ReservedBytes != 8*MiB || tot.AllocatedBytes != 4*MiB || tot.FreeBytes != 4*MiB || tot.FreeBlocks != 2 || tot.LargestFreeBytes != 2*MiB || o.Mismatches != 0 {
		t.Fatalf("state at the OOM %+v", tot)
	}
	pm := NewPostmortem([]Input{{Path: "x", Snapshot: res}}, PostmortemOptions{})
	r := pm.OOMs[0]
	c := hasCause(r, CauseFragmentation)
	if c == nil || causeNames(r)[0] != CauseFragmentation || !*r.WouldFitIfContiguous || !strings.Contains(c.Evidence, "expandable segments were already on") ||
		c.Numbers["reserved_free_bytes"] != 4*MiB || c.Numbers["largest_free_block_bytes"] != 2*MiB || !strings.Contains(c.Advice, "already on") {
		t.Errorf("causes %v %+v notes %q", causeNames(r), r.Causes, r.Notes)
	}
}

// Undoing segment_free and frees on a side stream's small pool; the same
// trace with fixed segments is fragmentation.
func TestUndoSegmentFree(t *testing.T) {
	const L, S = 0x20000000, 0x30000000
	res := syntheticSnapshot(t,
		[]seg{{addr: L, size: 20 * MiB}},
		[]blk{{L, L, 3 * MiB, "active_allocated"}, {L, L + 6*MiB, 3 * MiB, "active_allocated"}, {L, L + 12*MiB, 3 * MiB, "active_allocated"}},
		[]fev{
			{"segment_alloc", L, 20 * MiB, 0, -1},
			{"alloc", L, 3 * MiB, 0, -1},
			{"alloc", L + 6*MiB, 3 * MiB, 0, -1},
			{"alloc", L + 12*MiB, 3 * MiB, 0, -1},
			{"segment_alloc", S, 2 * MiB, 7, -1},
			{"alloc", S, 1000, 7, -1},
			{"oom", 0, 6 * MiB, 0, 64 << 30},
			{"free_requested", S, 1000, 7, -1},
			{"free_completed", S, 1000, 7, -1},
			{"segment_free", S, 2 * MiB, 7, -1},
		})
	o := res.OOMs[0]
	if len(o.Memory.Pools) != 2 || o.Mismatches != 0 {
		t.Fatalf("pools %+v", o.Memory.Pools)
	}
	small := o.Memory.Pools[1]
	// The small block was 1000 bytes requested: a 1024-byte block (round
	// up to 512), pending its free... undone to allocated.
	if !small.Small || small.Stream != 7 || small.AllocatedBytes != 1024 || small.EstimatedBlocks != 1 || small.Segments != 1 {
		t.Errorf("small pool %+v", small)
	}
	large := o.Memory.Pools[0]
	// Free: 3 MiB holes at 3 and 9 MiB, 5 MiB at 15: 11 MiB, largest 5 MiB.
	if large.FreeBytes != 11*MiB || large.LargestFreeBytes != 5*MiB || large.InactiveSplitBytes != 11*MiB {
		t.Errorf("large pool %+v", large)
	}
	pm := NewPostmortem([]Input{{Path: "x", Snapshot: res}}, PostmortemOptions{})
	r := pm.OOMs[0]
	if c := hasCause(r, CauseFragmentation); c == nil || !*r.WouldFitIfContiguous || r.LargestFreeBlockBytes != 5*MiB {
		t.Errorf("causes %v", r.Causes)
	}
	// The GPU had 64 GiB free: a per-process limit refused a new segment.
	if !strings.Contains(r.Causes[0].Evidence, "per-process limit") || hasCause(r, CauseMemoryLimit) != nil {
		t.Errorf("%+v", r.Causes)
	}
}

// A later entry the final state contradicts is counted, not trusted.
func TestUndoMismatch(t *testing.T) {
	res := syntheticSnapshot(t, []seg{{addr: 0x1000, size: 2 * MiB, small: true}}, nil,
		[]fev{{"oom", 0, 4096, 0, 0}, {"free_requested", 0x1000, 512, 0, -1}})
	if res.OOMs[0].Mismatches != 1 || len(res.Fragment.Warnings) != 1 {
		t.Errorf("%+v %q", res.OOMs[0], res.Fragment.Warnings)
	}
}

func TestAllocSizes(t *testing.T) {
	for _, c := range []struct{ req, block, segment int64 }{
		{1, 512, 2 * MiB}, {512, 512, 2 * MiB}, {513, 1024, 2 * MiB}, {MiB, MiB, 2 * MiB},
		{MiB + 1, MiB + 512, 20 * MiB}, {3 * MiB, 3 * MiB, 20 * MiB}, {10 * MiB, 10 * MiB, 10 * MiB},
		{11*MiB + 1, 11*MiB + 512, 12 * MiB}, {512 * MiB, 512 * MiB, 512 * MiB},
	} {
		if b, s := snapshot.AllocRoundSize(c.req), snapshot.AllocSegmentSize(c.req); b != c.block || s != c.segment {
			t.Errorf("%d: block %d segment %d, want %d %d", c.req, b, s, c.block, c.segment)
		}
	}
}

// The end state does not depend on the order the segments and blocks
// come in (PyTorch writes them by address; a hand-made or merged file
// need not), and a block whose segment is missing is counted, not
// placed. Segment A (4 MiB, large) holds 1 MiB blocks at A and A+2 MiB,
// segment B (2 MiB, small) a 512 KiB block at B: 2.5 MiB allocated, and
// free gaps of 1 MiB, 1 MiB (A) and 1.5 MiB (B), each beside a block.
func TestEndStateInAnyOrder(t *testing.T) {
	const A, B, C = 0x10000000, 0x30000000, 0x50000000
	segs := []seg{{addr: A, size: 4 * MiB}, {addr: B, size: 2 * MiB, small: true}}
	blks := []blk{{A, A, MiB, "active_allocated"}, {A, A + 2*MiB, MiB, "active_allocated"},
		{B, B, 512 << 10, "active_allocated"}, {C, C, MiB, "active_allocated"}}
	inOrder := syntheticSnapshot(t, segs, blks, nil)
	shuffled := syntheticSnapshot(t, []seg{segs[1], segs[0]}, []blk{blks[3], blks[1], blks[2], blks[0]}, nil)
	for name, res := range map[string]*snapshot.Result{"in order": inOrder, "shuffled": shuffled} {
		if len(res.Fragment.End) != 1 {
			t.Fatalf("%s: %d devices", name, len(res.Fragment.End))
		}
		tot := res.Fragment.End[0].Total
		if tot.Segments != 2 || tot.ReservedBytes != 6*MiB || tot.AllocatedBytes != 5*MiB/2 || tot.AllocatedBlocks != 3 ||
			tot.FreeBytes != 7*MiB/2 || tot.FreeBlocks != 3 || tot.LargestFreeBytes != 3*MiB/2 || tot.InactiveSplitBlocks != 3 {
			t.Errorf("%s: %+v", name, tot)
		}
		if len(res.Fragment.End[0].Pools) != 2 {
			t.Errorf("%s: pools %+v", name, res.Fragment.End[0].Pools)
		}
		if w := res.Fragment.Warnings; len(w) != 1 || !strings.HasPrefix(w[0], "1 block names a segment the snapshot does not have") {
			t.Errorf("%s: warnings %q", name, w)
		}
	}
}
