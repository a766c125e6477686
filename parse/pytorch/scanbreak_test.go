package pytorch

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse/pickle"
)

// shortReader returns at most n bytes a Read: records then straddle the
// decoder's buffer wherever the reads end.
type shortReader struct {
	b []byte
	n int
}

func (s *shortReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	m := min(len(p), s.n, len(s.b))
	copy(p, s.b[:m])
	s.b = s.b[m:]
	return m, nil
}

// diffScan reads data with the record scan and without it; it reports
// whether the scan took any record, and fails t on any difference.
func diffScan(t *testing.T, data []byte, lim pickle.Limits, chunk int) (scanned int64) {
	t.Helper()
	read := func(opts ...Option) (*Snapshot, error, int64) {
		var in = bytes.NewReader(data)
		var src interface{ Read([]byte) (int, error) } = in
		if chunk > 0 {
			src = &shortReader{b: data, n: chunk}
		}
		r := NewReader(src, "x", append(opts, WithAllocator(memory.NewGoAllocator()), WithBatchSize(64), WithLimits(lim))...)
		s, err := readAllFrom(r)
		return s, err, r.serial
	}
	fast, errFast, n := read()
	general, errGeneral, _ := read(withGeneralPath())
	if (errFast == nil) != (errGeneral == nil) || errFast != nil && errFast.Error() != errGeneral.Error() {
		t.Fatalf("record scan (%d scanned): %v\ngeneral path: %v", n, errFast, errGeneral)
	}
	if errFast != nil {
		return n
	}
	defer fast.Release()
	defer general.Release()
	for tb := Table(0); tb < numTables; tb++ {
		if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
			t.Fatalf("table %v differs (%d scanned):\nfast %v\ngeneral %v", tb, n, fast.Table(tb), general.Table(tb))
		}
	}
	if !equalInts(fast.Metadata.TraceEntries, general.Metadata.TraceEntries) || fast.Metadata.TimedEntries != general.Metadata.TimedEntries {
		t.Fatalf("metadata differs: %+v, %+v", fast.Metadata, general.Metadata)
	}
	return n
}

// readAllFrom is ReadAll on a Reader made by the caller.
func readAllFrom(rd *Reader) (*Snapshot, error) {
	defer rd.Release()
	var recs [numTables][]arrow.RecordBatch
	defer func() {
		for _, rs := range recs {
			for _, rec := range rs {
				rec.Release()
			}
		}
	}()
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		recs[rd.Table()] = append(recs[rd.Table()], rec)
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	s := &Snapshot{Metadata: *rd.Metadata()}
	s.Segments = array.NewTableFromRecords(SegmentsSchema, recs[TableSegments])
	s.Blocks = array.NewTableFromRecords(BlocksSchema, recs[TableBlocks])
	s.Events = array.NewTableFromRecords(EventsSchema, recs[TableEvents])
	s.Frames = array.NewTableFromRecords(FramesSchema, recs[TableFrames])
	s.Stacks = array.NewTableFromRecords(StacksSchema, recs[TableStacks])
	return s, nil
}

// Hand-made protocol 4 pieces. snap wraps trace entries (their bytes,
// then what ends the batch) as {"device_traces": [[...]]}; the memo
// holds 0 the root, 1 its key, 2 device_traces, 3 the device's list.
func snap(entries ...string) []byte {
	return []byte("\x80\x04}\x94(\x8c\x0ddevice_traces\x94]\x94(]\x94(" + join(entries) + "ee" + "u.")
}

func join(s []string) string {
	var b bytes.Buffer
	for _, x := range s {
		b.WriteString(x)
	}
	return b.String()
}

// sstr is a SHORT_BINUNICODE.
func sstr(s string) string { return "\x8c" + string(rune(len(s)))[:1] + s }

// entry is a flat trace entry, its keys inline and memoized, frames an
// empty list: the memo takes 1 (dict) + 2 (action) + 1 (addr) + 1
// (size) + 2 (frames) indices.
func entry(action string, addr, size byte) string {
	return "}\x94(" + sstr("action") + "\x94" + sstr(action) + "\x94" + sstr("addr") + "\x94K" + string([]byte{addr}) +
		sstr("size") + "\x94K" + string([]byte{size}) + sstr("frames") + "\x94]\x94u"
}

// TestScanLimits holds the record scan to the general path where a Limit
// is reached: the scan must leave such a dict to the general path, which
// reports it, and count what the general path's dict would hold.
func TestScanLimits(t *testing.T) {
	e := entry("alloc", 1, 2)
	cases := []struct {
		name string
		data []byte
		lim  pickle.Limits
	}{
		{"plain", snap(e, e, e), pickle.Limits{}},
		// "device_traces" is 13 bytes; the record's other key 20.
		{"MaxString", snap(e, "}\x94("+sstr("a_twenty_byte_key_xx")+"N"+sstr("action")+sstr("free")+"u"), pickle.Limits{MaxString: 13}},
		// A list under a key not in the plan: held until the end.
		{"MaxValues and lists", snap(e, "}\x94("+sstr("z")+"](K\x01K\x02K\x03e"+e[3:], e, e), pickle.Limits{MaxValues: 24}},
		{"MaxItems", snap(e, e), pickle.Limits{MaxItems: 3}},
		{"MaxValues", snap(e, e, e, e), pickle.Limits{MaxValues: 20}},
		{"MaxIntBytes", snap(e), pickle.Limits{MaxIntBytes: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := diffScan(t, c.data, c.lim, 0)
			t.Logf("%d scanned", n)
		})
	}
}
