package pytorch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pickle"
)

// fieldSnapshots is where the snapshots collected from public repositories
// are kept, outside the repository (not copied in: see testdata/README.md).
const fieldSnapshots = "../../../shared/field/snapshots"

// TestFastPathsDifferential reads every snapshot of testdata/pytorch (and
// of the field collection when it is here) with the fast paths and
// without them (withGeneralPath): the tables, row for row, the metadata
// and the error must be the same. A fast path that changed anything a
// real snapshot holds fails here.
func TestFastPathsDifferential(t *testing.T) {
	var paths []string
	for _, pat := range []string{dir + "*.pickle", dir + "*.pickle.gz", dir + "repickled/*", dir + "h200/*.pickle", dir + "blockscan/*.pickle"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 20 {
		t.Fatalf("%d snapshots in testdata, want the 20 or more it holds", len(paths))
	}
	if m, _ := filepath.Glob(fieldSnapshots + "/*"); len(m) > 0 {
		paths = append(paths, m...)
	} else {
		t.Logf("%s is absent: the field snapshots are not compared", fieldSnapshots)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			fast, errFast := readBoth(t, path)
			general, errGeneral := readBoth(t, path, withGeneralPath())
			if fast != nil {
				defer fast.Release()
			}
			if general != nil {
				defer general.Release()
			}
			if (errFast == nil) != (errGeneral == nil) || errFast != nil && errFast.Error() != errGeneral.Error() {
				t.Fatalf("fast path: %v; general path: %v", errFast, errGeneral)
			}
			if errFast != nil {
				var pe *parse.Error
				if !errors.As(errFast, &pe) {
					t.Errorf("error %v is not a *parse.Error", errFast)
				}
				return
			}
			for tb := Table(0); tb < numTables; tb++ {
				if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
					t.Errorf("table %v differs between the fast and the general path", tb)
				}
			}
			if fast.Metadata.TimedEntries != general.Metadata.TimedEntries || !equalInts(fast.Metadata.TraceEntries, general.Metadata.TraceEntries) ||
				fast.Metadata.Protocol != general.Metadata.Protocol || fast.Metadata.Legacy != general.Metadata.Legacy {
				t.Errorf("metadata differs: fast %+v, general %+v", fast.Metadata, general.Metadata)
			}
		})
	}
}

func readBoth(t *testing.T, path string, opts ...Option) (*Snapshot, error) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	in := openFile(t, path)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return ReadAll(in.Reader(), filepath.Base(path), append(opts, WithAllocator(mem), WithBatchSize(4096))...)
}

// TestRecordScanTaken checks that the record scan (pickle.RecordScanner),
// which TestFastPathsDifferential holds to the general path, really reads
// the trace entries of snapshots PyTorch wrote: else the differential
// test would compare the general path with itself.
func TestRecordScanTaken(t *testing.T) {
	for _, name := range []string{"leak_train_loop.pickle", "stacks_all.pickle", "hf_gpt2_leak.pickle.gz", "protocol5.pickle.gz", "oom_other_process.pickle", "scanseeds/entries_p4.pickle", "scanseeds/entries_p2.pickle"} {
		t.Run(name, func(t *testing.T) {
			in := openFile(t, dir+name)
			r := NewReader(in.Reader(), name, WithAllocator(memory.NewGoAllocator()))
			defer r.Release()
			for r.Next() {
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			var entries int64
			for _, n := range r.Metadata().TraceEntries {
				entries += n
			}
			// The first entry defines the keys inline, a record cut by
			// the read buffer's end or holding a new frame goes the
			// general way: most are scanned.
			scanned := r.serial - r.blocksScanned
			if entries < 10 || scanned < entries*7/10 {
				t.Errorf("%d of %d trace entries scanned, want 70%% or more", scanned, entries)
			}
			t.Logf("%d of %d trace entries scanned", scanned, entries)
		})
	}
}

// TestBlockScanTaken checks that the record scan reads the block dicts of
// snapshots PyTorch wrote, so that the differential test compares the
// block scan with the general path: 90% or more of them (a block that
// brings frames not converted yet goes the general way; since each segment
// is read when the next begins, the frames an earlier segment of the same
// pickler batch brought are converted by then, where before only about
// half of segments_p4's were).
func TestBlockScanTaken(t *testing.T) {
	for _, name := range []string{"fragmentation_oom.pickle", "forward_many_layers.pickle", "blockscan/segments_p4.pickle"} {
		t.Run(name, func(t *testing.T) {
			in := openFile(t, dir+name)
			r := NewReader(in.Reader(), name, WithAllocator(memory.NewGoAllocator()))
			defer r.Release()
			blocks := 0
			for r.Next() {
				if r.Table() == TableBlocks {
					blocks += int(r.RecordBatch().NumRows())
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if blocks < 10 || r.blocksScanned < int64(blocks)*9/10 {
				t.Errorf("%d of %d blocks scanned, want 90%% or more", r.blocksScanned, blocks)
			}
			t.Logf("%d of %d blocks scanned", r.blocksScanned, blocks)
		})
	}
}

// TestBlockScanEdges reads, with the record scan and without it, pickles
// where the block scan once differed from the general path (a tester's
// reproducers, blockscan/gen.py): a block's empty frames list that the next
// segment has as its blocks, and a block's frames list that the next
// segment has as its device, the same segment dict stored twice apart
// ([s0, s1, s0]) and two segments sharing one blocks list (all refused
// either way, with the same message: a segment is read, and released,
// when the next begins, its blocks' frames lists then converted,
// whichever batch of the pickler's each segment is in), and a
// segment whose blocks' frames lists pass a low MaxValues while it is read
// (refused either way: the lists are held until the segment is appended,
// as the general path holds them), also where the scan converts them at
// once, their stacks interned from the segment before.
func TestBlockScanEdges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lim     pickle.Limits
		wantErr string
	}{
		{"edge_empty_frames_as_blocks.pickle", pickle.Limits{}, `"blocks" is a frames list already read as a stack, want a list`},
		{"edge_list_as_device.pickle", pickle.Limits{}, `"device" is a frames list already read as a stack, want an int`},
		{"edge_segment_twice.pickle", pickle.Limits{}, "segments[2] is a reference to a dict already read and released"},
		{"edge_shared_blocks.pickle", pickle.Limits{}, `"blocks" is a reference to a list already read and released`},
		// Two devices' traces one list (a memo reference): said so, not
		// "is a list, want a list".
		{"edge_shared_trace.pickle", pickle.Limits{}, "device_traces[1] is a list that is not its own"},
		{"edge_values_held.pickle", pickle.Limits{}, ""},
		{"edge_values_held.pickle", pickle.Limits{MaxValues: 300}, "more than 300 values"},
		{"edge_values_held_again.pickle", pickle.Limits{}, ""},
		{"edge_values_held_again.pickle", pickle.Limits{MaxValues: 300}, "more than 300 values"},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.name, tc.lim.MaxValues), func(t *testing.T) {
			path := dir + "blockscan/" + tc.name
			fast, errFast := readBoth(t, path, WithLimits(tc.lim))
			general, errGeneral := readBoth(t, path, WithLimits(tc.lim), withGeneralPath())
			for _, s := range []*Snapshot{fast, general} {
				if s != nil {
					defer s.Release()
				}
			}
			for _, err := range []error{errFast, errGeneral} {
				if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("fast path: %v; general path: %v; want %q either way", errFast, errGeneral, tc.wantErr)
				}
			}
			if errFast != nil {
				if errFast.Error() != errGeneral.Error() {
					t.Fatalf("fast path: %v; general path: %v", errFast, errGeneral)
				}
				return
			}
			for tb := Table(0); tb < numTables; tb++ {
				if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
					t.Errorf("table %v differs between the fast and the general path", tb)
				}
			}
		})
	}
}

// FuzzRecordScanDifferential reads arbitrary bytes with the record scan
// and without it (withGeneralPath): the same tables and the same error,
// or none, either way. Seeds are real snapshots (whose records the scan
// takes) and mutations of one that the scan must leave to the general
// path or take with care: a memo index set again, a DUP of a record, a
// memo get of a record, a key twice, a record with a nested dict.
func FuzzRecordScanDifferential(f *testing.F) {
	// Small seeds fuzz fastest: snapshot-shaped pickles Python's pickler
	// wrote (scanseeds/gen.py), and one snapshot PyTorch wrote.
	seeds, _ := filepath.Glob(dir + "scanseeds/*.pickle")
	for _, name := range append(seeds, dir+"oom_other_process.pickle") {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, m := range append(recordMutations(b), recordTouches(b)...) {
			f.Add(m)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := pickle.Limits{MaxStack: 1 << 12, MaxItems: 1 << 14, MaxString: 1 << 16}
		read := func(opts ...Option) (*Snapshot, error) {
			return ReadAll(bytes.NewReader(data), "fuzz", append(opts, WithAllocator(memory.NewGoAllocator()), WithBatchSize(64), WithLimits(lim))...)
		}
		fast, errFast := read()
		general, errGeneral := read(withGeneralPath())
		switch {
		case errGeneral != nil && errFast == nil:
			t.Fatalf("the general path refuses the input (%v); the record scan reads it", errGeneral)
		case errGeneral != nil:
			// Both refuse it. The messages may differ where the scan's
			// placeholder (a Ref) stands for a dict the general path
			// made.
			return
		case errFast != nil:
			// The scan refuses what the general path reads only for a
			// pickle that uses a record again after making it (a memo
			// get of it, a DUP, a SETITEM into it before its list takes
			// it), which Python's picklers never write: see
			// pickle.RecordScanner. TestRecordScanMutations holds that
			// on known shapes; here the error must still be positioned.
			var pe *parse.Error
			if !errors.As(errFast, &pe) {
				t.Fatalf("error is not a *parse.Error: %v", errFast)
			}
			return
		}
		defer fast.Release()
		defer general.Release()
		for tb := Table(0); tb < numTables; tb++ {
			if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
				t.Fatalf("table %v differs between the record scan and the general path", tb)
			}
		}
		if !equalInts(fast.Metadata.TraceEntries, general.Metadata.TraceEntries) || fast.Metadata.TimedEntries != general.Metadata.TimedEntries {
			t.Fatalf("metadata differs: %+v, %+v", fast.Metadata, general.Metadata)
		}
	})
}

// recordMutations returns copies of a snapshot with one record changed
// at the opcode level, each a case the scan must get right.
func recordMutations(b []byte) [][]byte {
	return mutateRecords(b, false)
}

// recordTouches returns copies of a snapshot in which opcodes after a
// trace entry touch it once a dict after it is made (a SETITEM on it, an
// APPEND onto it, a SETITEMS on it, a TUPLE1 of it): the general path sees
// the dict, the scan its Value. pickle.RecordScanner allows the scan to
// refuse such a pickle where the general path reads it (r18's review
// found these shapes).
func recordTouches(b []byte) [][]byte { return mutateRecords(b, true) }

func mutateRecords(b []byte, touch bool) [][]byte {
	var out [][]byte
	// The trace entries' dicts: "}\x94(" (EMPTY_DICT MEMOIZE MARK) after
	// the key "device_traces" (the first such dict of a file is the
	// root's), each ended by a SETITEMS the next dict follows
	// ("u}\x94("). (r18's review: the first "}\x94(" and the first 'u'
	// after it were the root dict's and a key's.)
	dt := bytes.Index(b, []byte("device_traces"))
	if dt < 0 {
		return nil
	}
	at := bytes.Index(b[dt:], []byte("}\x94("))
	if at >= 0 {
		at += dt
	}
	for i := 0; i < 3 && at >= 0; i++ {
		end := bytes.Index(b[at:], []byte("u}\x94(")) // its SETITEMS
		if end < 0 {
			break
		}
		end += at
		with := func(pos int, ins string) {
			m := append(append(append([]byte{}, b[:pos]...), ins...), b[pos:]...)
			out = append(out, m)
		}
		if touch {
			with(end+1, "}K\x01s")        // a SETITEM on it
			with(end+1, "}a")             // an APPEND onto it
			with(end+1, "}0(K\x01K\x02u") // a SETITEMS on it
			with(end+1, "}0\x85")         // a TUPLE1 of it
		} else {
			with(end+1, "2")                    // DUP the record
			with(end+1, "0")                    // POP it: never reaches its list
			with(end+1, "h\x01")                // a memo get after it
			with(at+1, "\x94")                  // memoized twice
			with(at+3, "\x8c\x04size\x4b\x07")  // a key twice
			with(at+3, "\x8c\x01x}\x94")        // a nested dict
			with(at+3, "\x8c\x01x]\x94(h\x02e") // a list under another key
			with(at+3, "q\x02")                 // a PUT at a set index
			with(at+3, "\x8c\x04size\x8c\x01s") // a size that is a str
		}
		next := bytes.Index(b[end:], []byte("}\x94("))
		if next < 0 {
			break
		}
		at = end + next
	}
	return out
}

// shape is one changed copy of a seed snapshot.
type shape struct {
	name string // the seed's file
	i    int    // its index among the seed's shapes
	data []byte
}

// seedShapes returns gen's shapes of each small seed snapshot
// (scanseeds and oom_other_process.pickle).
func seedShapes(t *testing.T, gen func([]byte) [][]byte) []shape {
	t.Helper()
	seeds, _ := filepath.Glob(dir + "scanseeds/*.pickle")
	var out []shape
	for _, name := range append(seeds, dir+"oom_other_process.pickle") {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range gen(b) {
			out = append(out, shape{name, i, m})
		}
	}
	return out
}

// readBothWays reads data with the record scan and without it.
func readBothWays(data []byte) (fast *Snapshot, errFast error, general *Snapshot, errGeneral error) {
	read := func(opts ...Option) (*Snapshot, error) {
		return ReadAll(bytes.NewReader(data), "m", append(opts, WithAllocator(memory.NewGoAllocator()), WithBatchSize(64))...)
	}
	fast, errFast = read()
	general, errGeneral = read(withGeneralPath())
	return
}

// TestRecordScanMutations reads each of recordMutations' shapes with the
// record scan and without: none uses a record again after making it, so
// the two must agree exactly, errors word for word.
func TestRecordScanMutations(t *testing.T) {
	n := 0
	for _, sh := range seedShapes(t, recordMutations) {
		name, i := sh.name, sh.i
		n++
		fast, errFast, general, errGeneral := readBothWays(sh.data)
		if (errFast == nil) != (errGeneral == nil) || errFast != nil && errFast.Error() != errGeneral.Error() {
			t.Errorf("%s, mutation %d: record scan: %v; general path: %v", name, i, errFast, errGeneral)
			continue
		}
		if errFast != nil {
			continue
		}
		for tb := Table(0); tb < numTables; tb++ {
			if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
				t.Errorf("%s, mutation %d: table %v differs", name, i, tb)
			}
		}
		fast.Release()
		general.Release()
	}
	if n < 50 {
		t.Errorf("%d mutations, want 50 or more", n)
	}
}

// TestRecordScanTouches reads recordTouches' shapes both ways and holds
// them to what pickle.RecordScanner promises for a pickle that uses a
// record again: what the general path refuses, the scan refuses; what
// the scan reads, the general path reads to the same tables; the scan
// may refuse, with a positioned error, what the general path reads.
func TestRecordScanTouches(t *testing.T) {
	var n, refused int
	for _, sh := range seedShapes(t, recordTouches) {
		name, i := sh.name, sh.i
		n++
		fast, errFast, general, errGeneral := readBothWays(sh.data)
		switch {
		case errGeneral != nil && errFast == nil:
			t.Errorf("%s, touch %d: the general path refuses it (%v), the scan reads it", name, i, errGeneral)
		case errFast != nil && errGeneral == nil:
			refused++
			var pe *parse.Error
			if !errors.As(errFast, &pe) {
				t.Errorf("%s, touch %d: %v is not a *parse.Error", name, i, errFast)
			}
		case errFast == nil:
			for tb := Table(0); tb < numTables; tb++ {
				if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
					t.Errorf("%s, touch %d: table %v differs", name, i, tb)
				}
			}
		}
		if fast != nil {
			fast.Release()
		}
		if general != nil {
			general.Release()
		}
	}
	if n < 12 {
		t.Errorf("%d touches, want 12 or more", n)
	}
	t.Logf("%d touches; the scan refused %d the general path read", n, refused)
}

// TestSegmentShapes reads blockscan/segments_shapes_p4.pickle and _p2
// (synthetic, gen.py: every shape of segment dict PyTorch writes), whose
// tables TestFastPathsDifferential holds to the general path's, and checks
// what both paths share against gen.py's rules, i in 0..1299: the
// is_expandable bools (NEWTRUE where i%4 == 0: 325), the segments without
// requested_size (i%10 == 3: 130 nulls), the blocks (none where i%7 == 0,
// one where i%3 == 0, else 2+i%4: 2,967) and those without requested_size
// and without a history to take it from (93).
func TestSegmentShapes(t *testing.T) {
	for _, name := range []string{"segments_shapes_p4.pickle", "segments_shapes_p2.pickle"} {
		t.Run(name, func(t *testing.T) {
			s, err := readBoth(t, dir+"blockscan/"+name)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			expandable := 0
			for _, ch := range s.Segments.Column(SegExpandable).Data().Chunks() {
				b := ch.(*array.Boolean)
				for i := 0; i < b.Len(); i++ {
					if b.Value(i) {
						expandable++
					}
				}
			}
			segNulls := s.Segments.Column(SegRequestedSize).NullN()
			blkNulls := s.Blocks.Column(BlkRequestedSize).NullN()
			if s.Segments.NumRows() != 1300 || expandable != 325 || segNulls != 130 || s.Blocks.NumRows() != 2967 || blkNulls != 93 {
				t.Errorf("%d segments, %d expandable, %d without requested_size; %d blocks, %d without; want 1300, 325, 130; 2967, 93",
					s.Segments.NumRows(), expandable, segNulls, s.Blocks.NumRows(), blkNulls)
			}
		})
	}
}
