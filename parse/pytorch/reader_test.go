package pytorch

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pickle"
)

const dir = "../../testdata/pytorch/"

// counts is what testdata/gen/snapshot_counts.py found with CPython's pickle.
type counts struct {
	Segments, Blocks, ActiveBlocks int
	ActiveBytes, ReservedBytes     int64
	TraceEntries                   []int64 `json:"trace_entries"`
	Actions                        map[string]int64
	Frames, Stacks, Protocol       int
}

func loadCounts(t *testing.T) map[string]counts {
	t.Helper()
	b, err := os.ReadFile(dir + "counts.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]struct {
		Segments      int              `json:"segments"`
		Blocks        int              `json:"blocks"`
		ActiveBlocks  int              `json:"active_blocks"`
		ActiveBytes   int64            `json:"active_bytes"`
		ReservedBytes int64            `json:"reserved_bytes"`
		TraceEntries  []int64          `json:"trace_entries"`
		Actions       map[string]int64 `json:"actions"`
		Frames        int              `json:"frames"`
		Stacks        int              `json:"stacks"`
		Protocol      int              `json:"protocol"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]counts{}
	for k, v := range raw {
		out[k] = counts{v.Segments, v.Blocks, v.ActiveBlocks, v.ActiveBytes, v.ReservedBytes, v.TraceEntries, v.Actions, v.Frames, v.Stacks, v.Protocol}
	}
	return out
}

func openFile(t testing.TB, path string) *parse.Input {
	t.Helper()
	in, err := parse.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

// TestAgainstCPython decodes every real snapshot in testdata and compares
// its tables with the counts CPython's pickle module gives for the file.
func TestAgainstCPython(t *testing.T) {
	want := loadCounts(t)
	if len(want) < 10 {
		t.Fatalf("counts.json lists %d snapshots", len(want))
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
			defer mem.AssertSize(t, 0)
			in := openFile(t, dir+name)
			s, err := ReadAll(in.Reader(), name, WithAllocator(mem), WithBatchSize(4096))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			if got := s.Segments.NumRows(); got != int64(w.Segments) {
				t.Errorf("segments: %d, want %d", got, w.Segments)
			}
			if got := s.Blocks.NumRows(); got != int64(w.Blocks) {
				t.Errorf("blocks: %d, want %d", got, w.Blocks)
			}
			var total int64
			for _, n := range w.TraceEntries {
				total += n
			}
			if got := s.Events.NumRows(); got != total {
				t.Errorf("events: %d, want %d", got, total)
			}
			if got := s.Metadata.TraceEntries; !equalInts(got, w.TraceEntries) {
				t.Errorf("trace entries per device: %v, want %v", got, w.TraceEntries)
			}
			if got := s.Frames.NumRows(); got != int64(w.Frames) {
				t.Errorf("distinct frames: %d, want %d", got, w.Frames)
			}
			if got := distinctStacks(t, s.Stacks); got != w.Stacks {
				t.Errorf("distinct stacks: %d, want %d", got, w.Stacks)
			}
			if got := actionCounts(s.Events); !equalMaps(got, w.Actions) {
				t.Errorf("actions: %v, want %v", got, w.Actions)
			}
			nActive, activeBytes, reserved := blockTotals(s)
			if nActive != w.ActiveBlocks || activeBytes != w.ActiveBytes || reserved != w.ReservedBytes {
				t.Errorf("active %d blocks %d bytes, reserved %d; want %d, %d, %d", nActive, activeBytes, reserved, w.ActiveBlocks, w.ActiveBytes, w.ReservedBytes)
			}
			if s.Metadata.Protocol != w.Protocol {
				t.Errorf("protocol %d, want %d", s.Metadata.Protocol, w.Protocol)
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func distinctStacks(t *testing.T, tbl arrow.Table) int {
	ids := map[int32]bool{}
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		col := tr.RecordBatch().Column(StID).(*array.Int32)
		for i := 0; i < col.Len(); i++ {
			ids[col.Value(i)] = true
		}
	}
	return len(ids)
}

func actionCounts(tbl arrow.Table) map[string]int64 {
	out := map[string]int64{}
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		col := tr.RecordBatch().Column(EvAction).(*array.Dictionary)
		dict := col.Dictionary().(*array.String)
		for i := 0; i < col.Len(); i++ {
			out[strings.Clone(dict.Value(col.GetValueIndex(i)))]++
		}
	}
	return out
}

func blockTotals(s *Snapshot) (n int, active, reserved int64) {
	tr := array.NewTableReader(s.Blocks, 0)
	for tr.Next() {
		rec := tr.RecordBatch()
		state := rec.Column(BlkState).(*array.Dictionary)
		dict := state.Dictionary().(*array.String)
		size := rec.Column(BlkSize).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			if dict.Value(state.GetValueIndex(i)) == StateActiveAllocated {
				n++
				active += size.Value(i)
			}
		}
	}
	tr.Release()
	tr = array.NewTableReader(s.Segments, 0)
	for tr.Next() {
		col := tr.RecordBatch().Column(SegTotalSize).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			reserved += col.Value(i)
		}
	}
	tr.Release()
	return
}

// TestStackInterning checks that events share stack rows: the stack table
// holds each distinct stack once, however many entries refer to it.
func TestStackInterning(t *testing.T) {
	in := openFile(t, dir+"leak_train_loop.pickle")
	s, err := ReadAll(in.Reader(), "leak")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	refs := map[int32]int{}
	tr := array.NewTableReader(s.Events, 0)
	for tr.Next() {
		col := tr.RecordBatch().Column(EvStackID).(*array.Int32)
		for i := 0; i < col.Len(); i++ {
			if col.IsValid(i) {
				refs[col.Value(i)]++
			}
		}
	}
	tr.Release()
	total := 0
	for _, n := range refs {
		total += n
	}
	// 8,571 of the 13,775 entries carry frames (CPython counts the same);
	// they refer to at most the snapshot's 15 distinct stacks.
	if total != 8571 || len(refs) > 15 {
		t.Fatalf("%d entries refer to %d stacks", total, len(refs))
	}
}

// TestStreamingBatches reads with a small batch size and checks that every
// batch is released and that batches respect the size.
func TestStreamingBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	in := openFile(t, dir+"multi_gpu_leak.pickle")
	r := NewReader(in.Reader(), "multi", WithAllocator(mem), WithBatchSize(1000))
	defer r.Release()
	var batches, events int
	devs := map[int32]bool{}
	for r.Next() {
		rec := r.RecordBatch()
		if rec.NumRows() > 1000 {
			t.Fatalf("batch of %d rows", rec.NumRows())
		}
		if r.Table() == TableEvents {
			batches++
			events += int(rec.NumRows())
			d := rec.Column(EvDevice).(*array.Int32)
			for i := 0; i < d.Len(); i++ {
				devs[d.Value(i)] = true
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if batches < 7 || events != 3605+3544 || len(devs) != 2 {
		t.Fatalf("%d event batches, %d events, devices %v", batches, events, devs)
	}
}

// TestReleaseDropsDecoder: Release lets go of what only decoding needs
// (pipeline.analyzeSnapshot releases before Finalize so that Finalize
// reuses that memory), keeps the metadata readable, and may be called twice.
func TestReleaseDropsDecoder(t *testing.T) {
	in := openFile(t, dir+"multi_gpu_leak.pickle")
	r := NewReader(in.Reader(), "multi", WithReadAhead())
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	before := *r.Metadata()
	if before.Protocol == 0 || len(r.frames) == 0 || len(r.stacks) == 0 {
		t.Fatalf("before Release: protocol %d, %d frames, %d stacks", before.Protocol, len(r.frames), len(r.stacks))
	}
	r.Release()
	if r.dec != nil || r.ra != nil || r.src != nil || r.frames != nil || r.stacks != nil || r.listStacks != nil || r.early != nil {
		t.Fatal("Release kept decoding state")
	}
	if m := r.Metadata(); m.Protocol != before.Protocol || m.Warnings.Len() != before.Warnings.Len() {
		t.Fatalf("metadata after Release: protocol %d warnings %d, before %d %d", m.Protocol, m.Warnings.Len(), before.Protocol, before.Warnings.Len())
	}
	r.Release()
	if r.Next() {
		t.Fatal("Next after Release")
	}
}

func TestOOMEntries(t *testing.T) {
	in := openFile(t, dir+"fragmentation_oom.pickle")
	s, err := ReadAll(in.Reader(), "frag")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var sizes []int64
	tr := array.NewTableReader(s.Events, 0)
	for tr.Next() {
		rec := tr.RecordBatch()
		act := rec.Column(EvAction).(*array.Dictionary)
		dict := act.Dictionary().(*array.String)
		free := rec.Column(EvDeviceFree).(*array.Int64)
		addr := rec.Column(EvAddr).(*array.Uint64)
		size := rec.Column(EvSize).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			if dict.Value(act.GetValueIndex(i)) == ActionOOM {
				if !free.IsValid(i) || addr.IsValid(i) {
					t.Errorf("oom entry %d: device_free valid %v, addr valid %v", i, free.IsValid(i), addr.IsValid(i))
				}
				sizes = append(sizes, size.Value(i))
			} else if free.IsValid(i) {
				t.Errorf("device_free set on a %s entry", dict.Value(act.GetValueIndex(i)))
			}
		}
	}
	tr.Release()
	// The fixture's two OOMs: 3 MiB while filling, then 512 MiB.
	if len(sizes) != 2 || sizes[0] != 3<<20 || sizes[1] != 512<<20 {
		t.Fatalf("oom sizes %v", sizes)
	}
}

func TestAllocatorSettingsAndPools(t *testing.T) {
	in := openFile(t, dir+"expandable_segments.pickle")
	s, err := ReadAll(in.Reader(), "exp")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if v, ok := s.Metadata.AllocatorSettings["expandable_segments"].(bool); !ok || !v {
		t.Fatalf("allocator_settings.expandable_segments = %v", s.Metadata.AllocatorSettings["expandable_segments"])
	}
	acts := actionCounts(s.Events)
	if acts[ActionSegmentMap] == 0 || acts[ActionSegmentUnmap] == 0 {
		t.Fatalf("expandable segments trace without map/unmap: %v", acts)
	}
	tr := array.NewTableReader(s.Segments, 0)
	defer tr.Release()
	for tr.Next() {
		col := tr.RecordBatch().Column(SegExpandable).(*array.Boolean)
		for i := 0; i < col.Len(); i++ {
			if !col.Value(i) {
				t.Fatal("segment not marked expandable")
			}
		}
	}

	in = openFile(t, dir+"cuda_graph_pool.pickle")
	g, err := ReadAll(in.Reader(), "graph")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	private := 0
	tr2 := array.NewTableReader(g.Segments, 0)
	defer tr2.Release()
	for tr2.Next() {
		col := tr2.RecordBatch().Column(SegPoolID).(*array.FixedSizeList)
		vals := col.ListValues().(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			if col.IsValid(i) && (vals.Value(2*i) != 0 || vals.Value(2*i+1) != 0) {
				private++
			}
		}
	}
	if private == 0 {
		t.Fatal("no segment of the CUDA graph's private pool")
	}
}

func TestLegacyAndNoTrace(t *testing.T) {
	in := openFile(t, dir+"memory_snapshot_list.pickle")
	s, err := ReadAll(in.Reader(), "list")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if !s.Metadata.Legacy || s.Events.NumRows() != 0 || s.Segments.NumRows() != 4 {
		t.Fatalf("legacy %v, %d events, %d segments", s.Metadata.Legacy, s.Events.NumRows(), s.Segments.NumRows())
	}
	if len(s.Metadata.Warnings.Strings()) == 0 || !strings.Contains(s.Metadata.Warnings.Strings()[0], "no allocation trace") {
		t.Fatalf("warnings %q", s.Metadata.Warnings.Strings())
	}
}

// TestHistoryBlocks reads a PyTorch 2.0 style snapshot (blocks with
// "history", entries without time_us), written here by hand from the
// layout torch.cuda._memory_viz reads.
func TestHistoryBlocks(t *testing.T) {
	frame := dict("filename", str("/u/train.py"), "line", i64(7), "name", str("step"))
	block := dict("size", i64(2<<20), "state", str("active_allocated"),
		"history", list(dict("addr", i64(4096), "real_size", i64(1000), "frames", list(frame))))
	seg := dict("device", i64(0), "address", i64(4096), "total_size", i64(2<<20),
		"allocated_size", i64(2<<20), "active_size", i64(2<<20), "stream", i64(0),
		"segment_type", str("large"), "blocks", list(block))
	ev := dict("action", str("alloc"), "addr", i64(4096), "size", i64(2<<20), "stream", i64(0), "frames", list(frame))
	snap := dict("segments", list(seg), "device_traces", list(list(ev)))
	data := pickleBytes(snap)
	s, err := ReadAll(bytes.NewReader(data), "hist")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	rec := firstBatch(t, s.Blocks)
	if got := rec.Column(BlkRequestedSize).(*array.Int64).Value(0); got != 1000 {
		t.Errorf("requested_size from history: %d", got)
	}
	if got := rec.Column(BlkAddress).(*array.Uint64).Value(0); got != 4096 {
		t.Errorf("address from the segment's start: %d", got)
	}
	if !rec.Column(BlkStackID).IsValid(0) {
		t.Error("block stack from history missing")
	}
	ev0 := firstBatch(t, s.Events)
	if ev0.Column(EvTimeUs).IsValid(0) {
		t.Error("time_us should be null when absent")
	}
	if s.Frames.NumRows() != 1 {
		t.Errorf("one shared frame interned %d times", s.Frames.NumRows())
	}
}

func firstBatch(t *testing.T, tbl arrow.Table) arrow.RecordBatch {
	tr := array.NewTableReader(tbl, 0)
	t.Cleanup(tr.Release)
	if !tr.Next() {
		t.Fatal("empty table")
	}
	return tr.RecordBatch()
}

// A tiny protocol 2 pickle writer for hand-made snapshots.
type pv func(*bytes.Buffer)

func str(s string) pv {
	return func(b *bytes.Buffer) {
		b.WriteByte('X')
		b.Write(le32(uint32(len(s))))
		b.WriteString(s)
	}
}
func i64(n int64) pv {
	return func(b *bytes.Buffer) {
		b.WriteByte(0x8a)
		b.WriteByte(8)
		for i := 0; i < 8; i++ {
			b.WriteByte(byte(n >> (8 * i)))
		}
	}
}
func list(items ...pv) pv {
	return func(b *bytes.Buffer) {
		b.WriteString("](")
		for _, it := range items {
			it(b)
		}
		b.WriteByte('e')
	}
}
func dict(kv ...any) pv {
	return func(b *bytes.Buffer) {
		b.WriteString("}(")
		for i := 0; i < len(kv); i += 2 {
			str(kv[i].(string))(b)
			kv[i+1].(pv)(b)
		}
		b.WriteByte('u')
	}
}
func le32(n uint32) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)} }
func pickleBytes(v pv) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x02")
	v(&b)
	b.WriteByte('.')
	return b.Bytes()
}

func TestBadInput(t *testing.T) {
	real, err := os.ReadFile(dir + "model_reload.pickle")
	if err != nil {
		t.Fatal(err)
	}
	rnd := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(rnd)
	rnd[0] = 0x80
	rnd[1] = 4
	// A real snapshot with a STACK_GLOBAL spliced in after its PROTO and
	// FRAME opcodes (11 bytes), and another just before its STOP.
	const code = "\x8c\x02os\x8c\x06system\x93"
	evil := append(append(append([]byte{}, real[:11]...), code...), real[11:]...)
	evilEnd := append(append(append([]byte{}, real[:len(real)-1]...), code...), '.')
	cases := []struct {
		name, want string
		data       []byte
		is         error
	}{
		{"empty", "empty input", nil, pickle.ErrTruncated},
		{"truncated", "the file is cut short", real[:len(real)/2], pickle.ErrTruncated},
		{"random", "byte offset", rnd, nil},
		{"code opcode", "byte offset 23: refusing pickle opcode STACK_GLOBAL", evil, pickle.ErrCodeOpcode},
		{"code opcode at end", "refusing pickle opcode STACK_GLOBAL", evilEnd, pickle.ErrCodeOpcode},
		{"not a snapshot", "not a PyTorch memory snapshot", pickleBytes(dict("weights", list(i64(1)))), parse.ErrNotMine},
		{"list of ints", "segments[0] is an int", pickleBytes(list(i64(1))), nil},
		// Another pickle's records, not segments: a list of dicts with
		// none of a segment's keys is no memory_snapshot(), and inside a
		// snapshot's "segments" it is no segment (no empty one judged).
		{"list of records", `byte offset 4: not a PyTorch memory snapshot: the pickle holds a list whose first item is a dict with keys ["image", "label"]`, pickleBytes(list(dict("image", str("a.jpg"), "label", i64(3)), dict("image", str("b.jpg"), "label", i64(1)))), parse.ErrNotMine},
		{"record among segments", `malformed snapshot: segments[1] is a dict with keys ["a"], none of a segment's`, pickleBytes(dict("segments", list(dict("device", i64(0), "address", i64(1<<20), "total_size", i64(2<<20), "blocks", list()), dict("a", i64(1))))), nil},
		{"bad entry", "device_traces[0][0] is a str", pickleBytes(dict("segments", list(), "device_traces", list(list(str("x"))))), nil},
		{"bad size", "\"size\" is \"big\", want an int", pickleBytes(dict("segments", list(), "device_traces", list(list(dict("action", str("alloc"), "size", str("big")))))), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
			defer mem.AssertSize(t, 0)
			_, err := ReadAll(bytes.NewReader(c.data), "bad.pickle", WithAllocator(mem))
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *parse.Error, got %v", err)
			}
			if !strings.HasPrefix(err.Error(), "bad.pickle: byte offset ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q lacks %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("error %q is not %v", err, c.is)
			}
		})
	}
}

// TestTruncatedEverywhere cuts a real snapshot at many offsets: each cut is
// an error naming an offset within the data, never a panic or a result.
func TestTruncatedEverywhere(t *testing.T) {
	real, err := os.ReadFile(dir + "oom_observer.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(real); n += 97 {
		_, err := ReadAll(bytes.NewReader(real[:n]), "cut")
		var pe *parse.Error
		if !errors.As(err, &pe) || pe.Offset > int64(n) {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

func TestGzipTransparent(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	raw, _ := os.ReadFile(dir + "model_reload.pickle")
	zw.Write(raw)
	zw.Close()
	tmp := filepath.Join(t.TempDir(), "snapshot.bin") // the name says nothing
	os.WriteFile(tmp, buf.Bytes(), 0o644)
	in := openFile(t, tmp)
	if !in.Gzip {
		t.Fatal("gzip not recognised by its magic bytes")
	}
	s, err := ReadAll(in.Reader(), tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if s.Events.NumRows() != 194 {
		t.Fatalf("%d events", s.Events.NumRows())
	}
	// A truncated gzip stream is an error, not a short snapshot.
	os.WriteFile(tmp, buf.Bytes()[:buf.Len()/2], 0o644)
	in2 := openFile(t, tmp)
	if _, err := ReadAll(in2.Reader(), tmp); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Fatalf("truncated gzip: %v", err)
	}
	// Cut in its 8-byte trailer, after the whole pickle: still an error
	// (the bytes cannot be verified), but one that says the pickle ended
	// and the checksum is what is missing, not a bare "unexpected EOF".
	os.WriteFile(tmp, buf.Bytes()[:buf.Len()-4], 0o644)
	in3 := openFile(t, tmp)
	if _, err := ReadAll(in3.Reader(), tmp); err == nil || !strings.Contains(err.Error(), "pickle ended, but its gzip stream is cut short after it (its checksum missing") {
		t.Fatalf("gzip cut in its trailer: %v", err)
	}
}

func TestSniff(t *testing.T) {
	yes := [][]byte{[]byte("\x80\x04\x95"), []byte("\x80\x02}q\x00"), []byte("(dp0\nS'segments'\n")}
	no := [][]byte{nil, []byte("{\"a\":1}"), []byte("========= COMPUTE-SANITIZER"), []byte("\x80\x09\x00"), []byte("(lp0\nI1\n")}
	for _, h := range yes {
		if !Sniff(h) {
			t.Errorf("Sniff(%q) = false", h)
		}
	}
	for _, h := range no {
		if Sniff(h) {
			t.Errorf("Sniff(%q) = true", h)
		}
	}
}

var _ = io.EOF
var _ = sort.Strings

// TestValueBudget: real snapshots hold few values at a time (segments and
// trace entries stream, converted frames are released), while a pickle
// that stores values in plain lists hits the budget with a clear error.
func TestValueBudget(t *testing.T) {
	for _, name := range []string{"leak_train_loop.pickle", "hf_gpt2_leak.pickle.gz", "stacks_all.pickle"} {
		in := openFile(t, dir+name)
		// 50,000 is 80 times below the default budget; without releasing
		// converted frames, hf_gpt2_leak's 27,742 entries with C++ stacks
		// of about 60 frames would hold over a million.
		s, err := ReadAll(in.Reader(), name, WithLimits(pickle.Limits{MaxValues: 50000}))
		if err != nil {
			t.Fatalf("%s within 50,000 held values: %v", name, err)
		}
		s.Release()
	}
	// {"weights": [0, 0, ...]}: 100,000 stored ints.
	var b bytes.Buffer
	b.WriteString("\x80\x02}(X\x07\x00\x00\x00weights](")
	for i := 0; i < 100000; i++ {
		b.WriteString("K\x00")
		if i%1000 == 999 {
			b.WriteString("e(")
		}
	}
	b.WriteString("eu.")
	_, err := ReadAll(&b, "bomb", WithLimits(pickle.Limits{MaxValues: 50000, MaxItems: 1 << 20}))
	if err == nil || !strings.Contains(err.Error(), "more than 50000 values") {
		t.Fatalf("want the value budget's error, got %v", err)
	}
}

// raw writes opcodes as they are.
func raw(s string) pv { return func(b *bytes.Buffer) { b.WriteString(s) } }

func seq(vs ...pv) pv {
	return func(b *bytes.Buffer) {
		for _, v := range vs {
			v(b)
		}
	}
}

// TestEarlyConversion: trace entries are converted as their dicts fill
// (SetItems) unless what fills them is not seen whole; either way each row
// is what Python's dict would hold when the list receives it.
func TestEarlyConversion(t *testing.T) {
	trace := seq(raw("]("),
		// Entry 0: SETITEMS, then the memoised dict gets a second SETITEMS
		// that sets "size" again: the later value wins.
		raw("}q\x05("), str("action"), str("alloc"), str("size"), i64(1), str("addr"), i64(4096), raw("u"),
		raw("h\x05("), str("size"), i64(77), raw("u0"),
		// Entry 1: built by DICT from its items, then one more SETITEMS.
		raw("("), str("action"), str("free_completed"), str("size"), i64(8), raw("d"),
		raw("("), str("addr"), i64(8192), raw("u"),
		// Entry 2: single SETITEMs, as protocol 0 writes them.
		raw("}"), str("action"), str("alloc"), raw("s"), str("size"), i64(5), raw("s"),
		raw("e"))
	data := pickleBytes(dict("segments", list(), "device_traces", list(trace)))
	s, err := ReadAll(bytes.NewReader(data), "early.pickle")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	rec := firstBatch(t, s.Events)
	act := rec.Column(EvAction).(*array.Dictionary)
	names := act.Dictionary().(*array.String)
	size := rec.Column(EvSize).(*array.Int64)
	addr := rec.Column(EvAddr).(*array.Uint64)
	want := []struct {
		action string
		size   int64
		addr   uint64 // 0: null
	}{{"alloc", 77, 4096}, {"free_completed", 8, 8192}, {"alloc", 5, 0}}
	if int(rec.NumRows()) != len(want) {
		t.Fatalf("%d rows, want %d", rec.NumRows(), len(want))
	}
	for i, w := range want {
		got := names.Value(act.GetValueIndex(i))
		a := uint64(0)
		if addr.IsValid(i) {
			a = addr.Value(i)
		}
		if got != w.action || size.Value(i) != w.size || a != w.addr {
			t.Errorf("row %d: %s size %d addr %d, want %+v", i, got, size.Value(i), a, w)
		}
	}
}

// The blocks' state and the segments' segment_type, dictionary columns
// whose indices wait in the Reader until a batch is built, read the same
// row by row whether a batch holds 7 rows (a new string, or none, at every
// batch boundary) or 4,096.
func TestDictColumnsAcrossBatches(t *testing.T) {
	strs := func(tab arrow.Table, col int) []string {
		var out []string
		for _, ch := range tab.Column(col).Data().Chunks() {
			d := ch.(*array.Dictionary)
			vals := d.Dictionary().(*array.String)
			for i := 0; i < d.Len(); i++ {
				out = append(out, strings.Clone(vals.Value(d.GetValueIndex(i)))) // the table is released
			}
		}
		return out
	}
	for _, name := range []string{"fragmentation_oom.pickle", "blockscan/segments_p4.pickle", "cuda_graph_pool.pickle"} {
		read := func(batch int) ([]string, []string) {
			mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
			defer mem.AssertSize(t, 0)
			s, err := ReadAll(openFile(t, dir+name).Reader(), name, WithAllocator(mem), WithBatchSize(batch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			return strs(s.Blocks, BlkState), strs(s.Segments, SegType)
		}
		states, types := read(4096)
		states7, types7 := read(7)
		if len(states) < 20 || !slices.Equal(states, states7) || !slices.Equal(types, types7) {
			t.Errorf("%s: %d states, %d types; with 7-row batches they differ", name, len(states), len(types))
		}
		seen := map[string]bool{}
		for _, s := range append(states, types...) {
			seen[s] = true
		}
		if !seen[StateActiveAllocated] || !seen["large"] && !seen["small"] {
			t.Errorf("%s: values %v", name, seen)
		}
	}
}

// PyTorch 2.0's blocks each carry their own frame dicts, in a history
// entry: the decoder reuses each frame dict's container once the frame
// is interned (Reader.recycleFrames), where the general path allocates
// one per frame. The pickle memoizes every container, as Python's
// pickler does (BINPUT after EMPTY_DICT and EMPTY_LIST), so the memo's
// hold on each dict is what the Reader must release first. The tables
// are the general path's.
func TestHistoryFramesReused(t *testing.T) {
	memo := 0
	put := func(b *bytes.Buffer) {
		b.WriteByte('r') // LONG_BINPUT
		b.Write(le32(uint32(memo)))
		memo++
	}
	mdict := func(kv ...any) pv {
		return func(b *bytes.Buffer) {
			b.WriteByte('}')
			put(b)
			b.WriteByte('(')
			for i := 0; i < len(kv); i += 2 {
				str(kv[i].(string))(b)
				kv[i+1].(pv)(b)
			}
			b.WriteByte('u')
		}
	}
	mlist := func(items ...pv) pv {
		return func(b *bytes.Buffer) {
			b.WriteByte(']')
			put(b)
			b.WriteByte('(')
			for _, it := range items {
				it(b)
			}
			b.WriteByte('e')
		}
	}
	// Blocks are converted with their segment, so the dicts of one
	// segment's blocks are all made before any is reused: many segments
	// of two blocks, as PyTorch's small-block pool holds them.
	const segments, perSeg, depth = 100, 2, 10
	var segs []pv
	for si := range segments {
		var bl []pv
		base := int64(4096 + si<<22)
		for bi := range perSeg {
			var frames []pv
			for d := range depth {
				frames = append(frames, mdict("filename", str("/u/model.py"), "line", i64(int64(10*d+bi)), "name", str("forward")))
			}
			bl = append(bl, mdict("size", i64(1<<20), "requested_size", i64(1000), "state", str("active_allocated"),
				"history", mlist(mdict("addr", i64(base+int64(bi)<<20), "real_size", i64(1000), "frames", mlist(frames...)))))
		}
		segs = append(segs, mdict("device", i64(0), "address", i64(base), "total_size", i64(perSeg<<20),
			"allocated_size", i64(perSeg<<20), "active_size", i64(perSeg<<20), "stream", i64(0),
			"segment_type", str("large"), "blocks", mlist(bl...)))
	}
	data := pickleBytes(mdict("segments", mlist(segs...), "device_traces", mlist()))

	read := func(opts ...Option) *Snapshot {
		s, err := ReadAll(bytes.NewReader(data), "hist", opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fast, general := read(), read(withGeneralPath())
	defer fast.Release()
	defer general.Release()
	for tb := Table(0); tb < numTables; tb++ {
		if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
			t.Errorf("table %v differs between the fast and the general path", tb)
		}
	}
	if n := general.Frames.NumRows(); n != perSeg*depth {
		t.Errorf("%d frames interned, want %d", n, perSeg*depth)
	}
	fastAllocs := testing.AllocsPerRun(5, func() { read().Release() })
	generalAllocs := testing.AllocsPerRun(5, func() { read(withGeneralPath()).Release() })
	// The frame dicts of every segment after the first are reused.
	if want := float64((segments - 1) * perSeg * depth); generalAllocs-fastAllocs < want {
		t.Errorf("fast path %.0f allocations, general %.0f: %.0f saved, want at least %.0f (a frame dict a frame after the first segment)",
			fastAllocs, generalAllocs, generalAllocs-fastAllocs, want)
	}
}

// The segments and blocks tables keep their integer columns' rows in
// columns of their own until a batch is built (segmentBuilders.flush): a
// null (no requested_size, no stack) and the values around it land in the
// same rows whether a batch holds 7 rows or 4,096, and a batch after one
// with nulls has none of its own unless its rows have them.
func TestSegmentBlockColumnsAcrossBatches(t *testing.T) {
	// cells returns each row's cells of tab, "null" or the value's text.
	cells := func(tab arrow.Table) []string {
		var out []string
		for c := 0; c < int(tab.NumCols()); c++ {
			row := 0
			for _, ch := range tab.Column(c).Data().Chunks() {
				for i := 0; i < ch.Len(); i, row = i+1, row+1 {
					v := "null"
					if ch.IsValid(i) {
						v = ch.ValueStr(i)
					}
					out = append(out, fmt.Sprintf("%s[%d]=%s", tab.Schema().Field(c).Name, row, v))
				}
			}
		}
		return out
	}
	nulls := 0
	for _, name := range []string{"fragmentation_oom.pickle", "blockscan/segments_p4.pickle", "cuda_graph_pool.pickle", "expandable_segments.pickle"} {
		read := func(batch int) (seg, blk []string) {
			mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
			defer mem.AssertSize(t, 0)
			s, err := ReadAll(openFile(t, dir+name).Reader(), name, WithAllocator(mem), WithBatchSize(batch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			return cells(s.Segments), cells(s.Blocks)
		}
		seg, blk := read(4096)
		seg7, blk7 := read(7)
		if len(seg) == 0 || len(blk) == 0 || !slices.Equal(seg, seg7) || !slices.Equal(blk, blk7) {
			t.Errorf("%s: %d segment and %d block cells; with 7-row batches they differ", name, len(seg), len(blk))
		}
		for _, c := range append(seg, blk...) {
			if strings.HasSuffix(c, "=null") {
				nulls++
			}
		}
	}
	if nulls == 0 {
		t.Error("no null cell: the nullable columns are not tested")
	}
}
