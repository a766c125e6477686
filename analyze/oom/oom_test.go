package oom

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

const GiB = 1 << 30

// oomInput reads a real input: a snapshot through snapshot.Analyzer, text
// through pytorchtext (JSON when the name ends in .json).
func oomInput(t *testing.T, name string) Input {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	in, err := parse.Open("../../testdata/pytorch/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if strings.Contains(name, ".pickle") {
		r := pytorch.NewReader(in.Reader(), name, pytorch.WithAllocator(mem), pytorch.WithBatchSize(512))
		defer r.Release()
		a := snapshot.NewAnalyzer(snapshot.LeakOptions{})
		for r.Next() {
			if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return Input{Path: name, Format: string(pytorch.FormatSnapshot), Snapshot: a.Finalize()}
	}
	var r *pytorchtext.Reader
	format := pytorchtext.FormatOOMMessage
	if strings.HasSuffix(name, ".json") {
		r, format = pytorchtext.NewStatsReader(in.Reader(), name, pytorchtext.WithAllocator(mem)), pytorchtext.FormatMemoryStats
	} else {
		r = pytorchtext.NewReader(in.Reader(), name, pytorchtext.WithAllocator(mem))
	}
	defer r.Release()
	a := NewTextAnalyzer()
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	res := a.Finalize()
	res.UnifiedMemory = r.Metadata().UnifiedMemory // as the pipeline does
	return Input{Path: name, Format: string(format), Text: res}
}

func postmortem(t *testing.T, names ...string) *Postmortem {
	t.Helper()
	var ins []Input
	for _, n := range names {
		ins = append(ins, oomInput(t, n))
	}
	return NewPostmortem(ins, PostmortemOptions{})
}

func causeNames(r Report) []string {
	var out []string
	for _, c := range r.Causes {
		out = append(out, c.Name)
	}
	return out
}

func hasCause(r Report, name string) *Cause {
	for i := range r.Causes {
		if r.Causes[i].Name == name {
			return &r.Causes[i]
		}
	}
	return nil
}

// Acceptance (fixtures README): oom_observer.pickle has one OOM, 64 MiB
// requested; at that moment 4288 MiB reserved and allocated, 0
// reserved-but-unallocated; accumulation (66 blocks, 4224 MiB, from
// oom.py:13 in grow), not fragmentation. With oom_error.txt, memory-limit
// with 4.19 GiB allowed and 135.01 GiB free.
func TestOOMObserverPostmortem(t *testing.T) {
	pm := postmortem(t, "oom_observer.pickle")
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.RequestedBytes != 64*MiB || r.ReservedBytes != 4288*MiB || r.AllocatedBytes != 4288*MiB || r.ReservedUnallocatedBytes != 0 || r.Device != 0 {
		t.Errorf("numbers: %+v", r)
	}
	// device_free 138249 MiB (README), as the trace entry gives it.
	if r.DeviceFreeBytes>>20 != 138249 || r.LiveBlocks != 67 || r.LargestFreeBlockBytes != 0 || *r.WouldFitIfContiguous {
		t.Errorf("free %d, blocks %d, largest %d", r.DeviceFreeBytes, r.LiveBlocks, r.LargestFreeBlockBytes)
	}
	if hasCause(r, CauseFragmentation) != nil || hasCause(r, CauseAccumulation) == nil {
		t.Fatalf("causes %v", causeNames(r))
	}
	top := r.Sites[0]
	if top.Kind != callsite.Leak || top.Count != 66 || top.Bytes != 4224*MiB || top.Frame.Name != "grow" || top.Frame.Line != 13 || !strings.HasSuffix(top.Frame.Filename, "oom.py") {
		t.Errorf("top site %+v", top)
	}
	if c := hasCause(r, CauseAccumulation); c.Numbers["accumulated_bytes"] != 4224*MiB || !strings.Contains(c.Evidence, "grow (oom.py:13)") || !strings.Contains(c.Advice, "grow (oom.py:13)") {
		t.Errorf("accumulation %+v", c)
	}
	// The request was made at oom.py:12 (a = torch.randn(...)), from the
	// trace entry's own stack.
	if r.Frame.Name != "grow" || r.Frame.Line != 12 {
		t.Errorf("asked at %+v", r.Frame)
	}
	// Alone, the snapshot shows the GPU had room while PyTorch could not
	// grow: a per-process limit, without its value.
	if c := hasCause(r, CauseMemoryLimit); c == nil || r.AllowedBytes != -1 || !strings.Contains(c.Evidence, "135.01 GiB free") {
		t.Errorf("inferred limit: %+v", r.Causes)
	}

	for _, set := range [][]string{{"oom_observer.pickle", "oom_error.txt"}, {"oom_error.txt", "oom_traceback.txt", "oom_observer.pickle"}} {
		pm = postmortem(t, set...)
		if len(pm.OOMs) != 1 {
			t.Fatalf("%v: %d OOMs: one OOM in three files is one OOM", set, len(pm.OOMs))
		}
		r = pm.OOMs[0]
		c := hasCause(r, CauseMemoryLimit)
		if c == nil || hasCause(r, CauseAccumulation) == nil || hasCause(r, CauseFragmentation) != nil {
			t.Fatalf("%v: causes %v", set, causeNames(r))
		}
		if r.AllowedBytes != gib(419) || r.DeviceTotalBytes != gib(13980) || !strings.Contains(c.Evidence, "4.19 GiB allowed") || !strings.Contains(c.Evidence, "135.01 GiB free") {
			t.Errorf("%v: memory-limit %+v, allowed %d", set, c, r.AllowedBytes)
		}
		// The snapshot's exact numbers win over the message's rounded ones.
		if r.ReservedBytes != 4288*MiB || r.DeviceFreeBytes>>20 != 138249 || len(r.Sources) != len(set) || len(r.Notes) != 0 {
			t.Errorf("%v: %+v", set, r)
		}
	}
}

func gib(hundredths int64) int64 { return hundredths/100*GiB + (hundredths%100*GiB+50)/100 }

// Acceptance: the 512 MiB OOM of fragmentation_oom.pickle is
// fragmentation: 1565 MiB reserved-but-free, largest free block 8 MiB,
// would have fit if contiguous.
func TestFragmentationPostmortem(t *testing.T) {
	for _, set := range [][]string{{"fragmentation_oom.pickle"}, {"fragmentation_oom.pickle", "fragmentation_oom_error.txt"}} {
		pm := postmortem(t, set...)
		// Two OOM entries: 3 MiB while filling, then 512 MiB.
		if len(pm.OOMs) != 2 {
			t.Fatalf("%v: %d OOMs", set, len(pm.OOMs))
		}
		r := pm.OOMs[1]
		if r.RequestedBytes != 512*MiB || r.ReservedUnallocatedBytes != 1565*MiB || r.LargestFreeBlockBytes != 8*MiB || !*r.WouldFitIfContiguous {
			t.Errorf("%v: %+v", set, r)
		}
		if r.ReservedBytes != 2840*MiB || r.AllocatedBytes != 1275*MiB || r.Memory.Total.Segments != 142 {
			t.Errorf("%v: reserved %d allocated %d", set, r.ReservedBytes, r.AllocatedBytes)
		}
		// Fragmentation first; the message's 2.80 GiB cap was reached
		// too (2.78 GiB reserved + 512 MiB > 2.80 GiB with 136 GiB free),
		// so memory-limit follows when the message is given.
		if names := causeNames(r); len(names) == 0 || names[0] != CauseFragmentation || (len(set) == 2) != (hasCause(r, CauseMemoryLimit) != nil) {
			t.Errorf("%v: causes %v", set, names)
		}
		c := r.Causes[0]
		if c.Numbers["reserved_free_bytes"] != 1565*MiB || c.Numbers["largest_free_block_bytes"] != 8*MiB || !strings.Contains(c.Advice, "expandable_segments:True") {
			t.Errorf("%v: %+v", set, c)
		}
		// 425 blocks from fragmentation.py:12, allocated in a burst and
		// held: not growing up to the OOM.
		if s := r.Sites[0]; s.Count != 425 || s.Bytes != 1275*MiB || s.Kind == callsite.Leak {
			t.Errorf("%v: site %+v", set, s)
		}
		if len(set) == 2 && (r.AllowedBytes != gib(280) || !strings.Contains(c.Evidence, "2.80 GiB limit")) {
			t.Errorf("%v: allowed %d, %s", set, r.AllowedBytes, c.Evidence)
		}
		// The end of the run: free memory split around live blocks.
		if len(pm.Fragmentation) != 1 || pm.Fragmentation[0].State.InactiveSplitBytes != 1565*MiB || pm.Fragmentation[0].State.LargestFreeBytes != 8*MiB {
			t.Errorf("%v: end fragmentation %+v", set, pm.Fragmentation)
		}
	}
}

// The 3 MiB OOM while filling the cap (seq 1001) lies 870 trace entries
// before the end. Its state, rebuilt backwards from the end, is what a
// forward replay of the complete trace gives (recording started before
// any allocation): 143 segments, 2860 MiB reserved, 858 blocks of 3 MiB.
func TestStateAtEarlierOOM(t *testing.T) {
	pm := postmortem(t, "fragmentation_oom.pickle")
	r := pm.OOMs[0]
	if r.Sources[0].Seq != 1001 || r.RequestedBytes != 3*MiB || r.SegmentBytes != 20*MiB {
		t.Fatalf("%+v", r)
	}
	if r.Memory.Total.Segments != 143 || r.ReservedBytes != 2860*MiB || r.AllocatedBytes != 2574*MiB || r.LiveBlocks != 858 {
		t.Errorf("segments %d reserved %d allocated %d blocks %d", r.Memory.Total.Segments, r.ReservedBytes, r.AllocatedBytes, r.LiveBlocks)
	}
	// Each 20 MiB segment holds six 3 MiB blocks and a 2 MiB tail that no
	// 3 MiB block fits: fragmentation. The fill loop made its blocks back
	// to back, with nothing else between them: one operation, not growth
	// across the iterations of a step, so not accumulation.
	if r.LargestFreeBlockBytes != 2*MiB || r.Memory.Fixed.FreeBytes != 286*MiB || hasCause(r, CauseFragmentation) == nil || hasCause(r, CauseAccumulation) != nil {
		t.Errorf("largest %d free %d causes %v", r.LargestFreeBlockBytes, r.Memory.Fixed.FreeBytes, causeNames(r))
	}
	if r.Sites[0].Count != 858 || r.Sites[0].Frame.Line != 12 {
		t.Errorf("site %+v", r.Sites[0])
	}
}

// oom_other_process: another process holds 127.79 GiB. The message says
// so; the snapshot alone cannot (it does not know the GPU's total).
func TestOtherProcessPostmortem(t *testing.T) {
	pm := postmortem(t, "oom_other_process.pickle", "oom_other_process_traceback.txt", "oom_other_process_error.txt")
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	names := causeNames(r)
	if len(names) == 0 || names[0] != CauseOtherProcesses || hasCause(r, CauseCapacity) != nil || hasCause(r, CauseMemoryLimit) != nil || hasCause(r, CauseFragmentation) != nil {
		t.Fatalf("causes %v", names)
	}
	c := r.Causes[0]
	if c.Numbers["other_processes_bytes"] != gib(12779) || !strings.Contains(c.Evidence, "process 609: 127.79 GiB") || r.OtherProcesses[0].PID != 609 {
		t.Errorf("%+v", c)
	}
	if r.Frame.Name != "load_shards" || r.Frame.Line != 22 || r.Exception != "torch.OutOfMemoryError" || r.Occurrences != 2 {
		t.Errorf("frame %+v exception %q occurrences %d", r.Frame, r.Exception, r.Occurrences)
	}
	alone := postmortem(t, "oom_other_process.pickle").OOMs[0]
	if hasCause(alone, CauseOtherProcesses) != nil || hasCause(alone, CauseCapacity) != nil || len(alone.Notes) != 1 || !strings.Contains(alone.Notes[0], "OOM message gives") {
		t.Errorf("snapshot alone: %v %q", causeNames(alone), alone.Notes)
	}
}

// Text alone: each message is its own postmortem, with the causes its
// numbers show.
func TestMessageOnlyPostmortems(t *testing.T) {
	r := postmortem(t, "oom_error.txt").OOMs[0]
	if names := causeNames(r); len(names) != 1 || names[0] != CauseMemoryLimit || r.Sites != nil || r.LargestFreeBlockBytes != -1 {
		t.Errorf("oom_error.txt: %v %+v", names, r)
	}
	r = postmortem(t, "fragmentation_oom_error.txt").OOMs[0]
	if names := causeNames(r); len(names) != 2 || names[0] != CauseFragmentation || names[1] != CauseMemoryLimit || !*r.WouldFitIfContiguous || r.ReservedUnallocatedBytes != gib(153) {
		t.Errorf("fragmentation_oom_error.txt: %v %+v", names, r)
	}
	r = postmortem(t, "oom_other_process_error.txt").OOMs[0]
	if names := causeNames(r); len(names) != 1 || names[0] != CauseOtherProcesses {
		t.Errorf("oom_other_process_error.txt: %v", names)
	}
}

// memory_summary.txt and memory_stats.json were taken at the end of the
// leaking training run: one moment, the snapshot's end.
func TestStatsAtSnapshotEnd(t *testing.T) {
	pm := postmortem(t, "memory_summary.txt", "memory_stats.json", "leak_train_loop.pickle")
	if len(pm.OOMs) != 0 || len(pm.Fragmentation) != 0 || len(pm.Stats) != 1 {
		t.Fatalf("%+v", pm)
	}
	s := pm.Stats[0]
	if s.Path != "memory_stats.json" || !s.SnapshotEnd || len(s.SameAs) != 2 || s.SameAs[0] != "memory_summary.txt" {
		t.Errorf("%+v", s)
	}
	if v, _ := s.Stats.Get("allocated_bytes.all.current"); v != 148480<<10 {
		t.Errorf("allocated %d", v)
	}
	// The snapshot's replay agrees with the allocator's own count of
	// inactive split bytes (25 MiB).
	end := oomInput(t, "leak_train_loop.pickle").Snapshot.Fragment.End[0]
	if v, _ := s.Stats.Get("inactive_split_bytes.all.current"); end.Total.InactiveSplitBytes != v || end.Total.ReservedBytes != 810*MiB {
		t.Errorf("inactive split: replay %d, stats %d", end.Total.InactiveSplitBytes, v)
	}
	if len(pm.Notes) != 0 || len(pm.WithoutOOM) != 1 || pm.WithoutOOM[0] != "leak_train_loop.pickle" {
		t.Errorf("notes %q, without OOM %q", pm.Notes, pm.WithoutOOM)
	}
}

// textInput reads a log given as a string.
func textInput(t *testing.T, name, text string) Input {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	var r *pytorchtext.Reader
	format := pytorchtext.FormatOOMMessage
	if strings.HasSuffix(name, ".json") {
		r, format = pytorchtext.NewStatsReader(strings.NewReader(text), name, pytorchtext.WithAllocator(mem)), pytorchtext.FormatMemoryStats
	} else {
		r = pytorchtext.NewReader(strings.NewReader(text), name, pytorchtext.WithAllocator(mem))
	}
	defer r.Release()
	a := NewTextAnalyzer()
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	res := a.Finalize()
	res.UnifiedMemory = r.Metadata().UnifiedMemory // as the pipeline does
	return Input{Path: name, Format: string(format), Text: res}
}

const capacityMsg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.15 GiB of which 500.00 MiB is free. Including non-PyTorch memory, this process has 78.64 GiB memory in use. Of the allocated memory 76.20 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated."

// Causes from messages alone, written from the formats PyTorch prints:
// the GPU full with this process alone (capacity); a 1.x message with
// much memory outside PyTorch (other processes, estimated); a CUDA error
// without sizes (no cause, a note).
func TestMessageCauses(t *testing.T) {
	pm := NewPostmortem([]Input{textInput(t, "a.log", capacityMsg+"\n")}, PostmortemOptions{})
	r := pm.OOMs[0]
	// 1.10 GiB free in PyTorch's segments < 1.50 GiB: not fragmentation;
	// no other process: capacity.
	if names := causeNames(r); len(names) != 1 || names[0] != CauseCapacity || !strings.Contains(r.Causes[0].Advice, "checkpoint") {
		t.Errorf("capacity: %v %+v", names, r.Causes)
	}

	gen1 := "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 5.10 GiB already allocated; 1.20 GiB free; 5.50 GiB reserved in total by PyTorch)\n"
	r = NewPostmortem([]Input{textInput(t, "b.log", gen1)}, PostmortemOptions{}).OOMs[0]
	// 15.78 - 1.20 - 5.50 = 9.08 GiB used outside PyTorch's allocator.
	if c := hasCause(r, CauseOtherProcesses); c == nil || !strings.Contains(c.Evidence, "outside PyTorch's allocator") || hasCause(r, CauseCapacity) != nil {
		t.Errorf("1.x: %v", r.Causes)
	}
	if r.ReservedBytes != gib(550) || r.ReservedUnallocatedBytes != gib(550)-gib(510) {
		t.Errorf("1.x reserved %d unallocated %d", r.ReservedBytes, r.ReservedUnallocatedBytes)
	}

	r = NewPostmortem([]Input{textInput(t, "c.log", "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported\n")}, PostmortemOptions{}).OOMs[0]
	if len(r.Causes) != 0 || r.Generation != pytorchtext.GenCUDAError || len(r.Notes) != 1 || r.RequestedBytes != -1 {
		t.Errorf("cuda error: %+v", r)
	}
}

// One OOM printed twice in a log (the traceback, then a launcher's
// summary) is one report; another rank's OOM is another.
func TestMessagesFoldAndSeparate(t *testing.T) {
	other := strings.Replace(capacityMsg, "GPU 0", "GPU 1", 1)
	log := "[rank0]: " + capacityMsg + "\n[rank1]: " + other + "\nChildFailedError: " + capacityMsg + "\n"
	pm := NewPostmortem([]Input{textInput(t, "run.log", log)}, PostmortemOptions{})
	if len(pm.OOMs) != 2 || pm.OOMs[0].Occurrences != 2 || pm.OOMs[0].Device != 0 || pm.OOMs[1].Device != 1 || len(pm.OOMs[0].Sources) != 2 {
		t.Fatalf("%d OOMs: %+v", len(pm.OOMs), pm.OOMs)
	}
	// No OOM in a log: a note, no report.
	pm = NewPostmortem([]Input{textInput(t, "clean.log", "epoch 1\nepoch 2\n")}, PostmortemOptions{})
	if len(pm.OOMs) != 0 || len(pm.Notes) != 1 || !strings.Contains(pm.Notes[0].Note, "no CUDA out-of-memory message") {
		t.Errorf("%+v", pm)
	}
}

// memory_stats() taken in the except block, at the OOM: it is folded into
// that OOM; a count of OOMs the inputs do not describe is noted.
func TestStatsAtOOM(t *testing.T) {
	stats := `{"num_ooms": 1, "num_alloc_retries": 3, "allocated_bytes.all.current": 81819308032, "reserved_bytes.all.current": 82996410368, "inactive_split_bytes.all.current": 1073741824}`
	pm := NewPostmortem([]Input{textInput(t, "a.log", capacityMsg+"\n"), textInput(t, "s.json", stats)}, PostmortemOptions{})
	r := pm.OOMs[0]
	if r.Stats == nil || len(pm.Stats) != 0 || len(r.Sources) != 2 {
		t.Fatalf("stats not at the OOM: %+v %+v", r, pm.Stats)
	}
	pm = NewPostmortem([]Input{textInput(t, "s.json", strings.Replace(stats, `"num_ooms": 1`, `"num_ooms": 4`, 1))}, PostmortemOptions{})
	if len(pm.Stats) != 1 || len(pm.Notes) != 1 || !strings.Contains(pm.Notes[0].Note, "counted 4 out-of-memory errors") {
		t.Errorf("%+v", pm)
	}
	// 1 GiB of 77.3 GiB reserved split: under the 20% share and 2 GiB: no finding.
	if len(pm.Fragmentation) != 0 {
		t.Errorf("%+v", pm.Fragmentation)
	}
	// 20 GiB split needs at least that much reserved but not allocated
	// (Inconsistent): 77.3 GiB reserved, 55 GiB allocated.
	big := strings.Replace(stats, `"inactive_split_bytes.all.current": 1073741824`, `"inactive_split_bytes.all.current": 21474836480`, 1)
	big = strings.Replace(big, `"allocated_bytes.all.current": 81819308032`, `"allocated_bytes.all.current": 59055800320`, 1)
	pm = NewPostmortem([]Input{textInput(t, "s.json", big)}, PostmortemOptions{})
	if len(pm.Fragmentation) != 1 || pm.Fragmentation[0].At != "memory_stats" || pm.Fragmentation[0].State.InactiveSplitBytes != 20*GiB {
		t.Errorf("%+v", pm.Fragmentation)
	}
}

// PyTorch prints the segment it needed, not the request: the 3 MiB OOM of
// fragmentation_oom.pickle (seq 1001) printed "Tried to allocate 20.00
// MiB" with the GPU's free memory of its trace entry (136.49 GiB). That
// message is this OOM's, not the 512 MiB one's.
func TestMessageMatchesBySegmentSize(t *testing.T) {
	msg := "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 136.49 GiB is free. Including non-PyTorch memory, this process has 3.29 GiB memory in use. 2.80 GiB allowed; Of the allocated memory 2.51 GiB is allocated by PyTorch, and 286.00 MiB is reserved by PyTorch but unallocated.\n"
	pm := NewPostmortem([]Input{oomInput(t, "fragmentation_oom.pickle"), textInput(t, "fill.log", msg)}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	// Notes: the estimated block sizes, and that the fill's OOM was
	// survived (the program went on to free and to the 512 MiB OOM).
	if len(r.Sources) != 2 || r.Sources[1].Path != "fill.log" || r.AllowedBytes != gib(280) || len(r.Notes) != 2 || r.Survived == nil || r.Survived.LaterOOMs != 1 {
		t.Errorf("3 MiB OOM: sources %+v, allowed %d, notes %q", r.Sources, r.AllowedBytes, r.Notes)
	}
	// The request stays the trace entry's exact 3 MiB.
	if r.RequestedBytes != 3*MiB || r.SegmentBytes != 20*MiB || len(pm.OOMs[1].Sources) != 1 {
		t.Errorf("%+v", r)
	}
	// A message from another run (other free memory) matches nothing.
	other := strings.Replace(msg, "136.49 GiB is free", "100.00 GiB is free", 1)
	if pm := NewPostmortem([]Input{oomInput(t, "fragmentation_oom.pickle"), textInput(t, "other.log", other)}, PostmortemOptions{}); len(pm.OOMs) != 3 {
		t.Errorf("%d OOMs: a message of another run was merged", len(pm.OOMs))
	}
}

// The frame that asked is the traceback's innermost user frame: PyTorch's
// own frames (torch/nn/modules/...) are hidden.
func TestTracebackUserFrame(t *testing.T) {
	log := "Traceback (most recent call last):\n" +
		"  File \"/home/user/train/train.py\", line 40, in <module>\n    main()\n" +
		"  File \"/home/user/train/model.py\", line 12, in forward\n    h = self.proj(x)\n" +
		"  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1751, in _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n" +
		"  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py\", line 125, in forward\n    return F.linear(input, self.weight, self.bias)\n" +
		capacityMsg + "\n"
	r := NewPostmortem([]Input{textInput(t, "tb.log", log)}, PostmortemOptions{}).OOMs[0]
	if r.Frame.Name != "forward" || r.Frame.Line != 12 || len(r.Stack) != 2 || r.Stack[1].Name != "<module>" || r.Exception != "torch.OutOfMemoryError" {
		t.Errorf("frame %+v stack %+v", r.Frame, r.Stack)
	}
}
