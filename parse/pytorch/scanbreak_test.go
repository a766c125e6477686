package pytorch

import (
	"bytes"
	"io"
	"strings"
	"testing"

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
		{"MaxStack", snap(e, e), pickle.Limits{MaxStack: 12}},
		{"MaxMemo", snap(e, e), pickle.Limits{MaxMemo: 12}},
		{"MaxStringBytes", snap(e, e), pickle.Limits{MaxStringBytes: 40}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := diffScan(t, c.data, c.lim, 0)
			t.Logf("%d scanned", n)
		})
	}
}

// TestScanValues holds the record scan to the general path on values at
// the edges of what it reads: LONG1 of 0 and 8 bytes, negative ints, a
// BININT2 of 32768 and more, a size above 1 PiB, a negative addr, a bool
// for an int, None for time_us, keys not in the plan, a key twice.
func TestScanValues(t *testing.T) {
	pair := func(k, v string) string { return sstr(k) + "\x94" + v }
	rec := func(pairs ...string) string { return "}\x94(" + join(pairs) + "u" }
	long1 := func(b ...byte) string { return "\x8a" + string([]byte{byte(len(b))}) + string(b) }
	act := pair("action", sstr("alloc")+"\x94")
	cases := map[string][]string{
		"LONG1 of 0 bytes": {rec(act, pair("addr", long1()), pair("size", long1()))},
		"LONG1 of 8 bytes": {rec(act, pair("addr", long1(1, 2, 3, 4, 5, 6, 7, 0x7f)), pair("time_us", long1(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)))},
		"negative addr":    {rec(act, pair("addr", long1(0xff)), pair("size", "K\x01"))},
		"negative size":    {rec(act, pair("size", "J\xff\xff\xff\xff"))},
		"size above 1 PiB": {rec(act, pair("size", long1(0, 0, 0, 0, 0, 0, 5)))},
		"BININT2 of 40000": {rec(act, pair("stream", "M\x40\x9c"), pair("size", "M\x00\x80"))},
		"bools for ints":   {rec(act, pair("addr", "\x88"), pair("size", "\x89"), pair("stream", "\x88"), pair("time_us", "\x88"))},
		"None for time_us": {rec(act, pair("time_us", "N"))},
		"device_free":      {rec(act, pair("device_free", "K\x05")), rec(act, pair("device_free", "N"))},
		"keys not in plan": {rec(act, pair("zz", "K\x01"), pair("frames_x", "]\x94(h\x01e"))},
		"a key twice":      {rec(act, pair("size", "K\x01"), pair("size", "K\x02"))},
		"action an int":    {rec(pair("action", "K\x01"))},
		"frames an int":    {rec(act, pair("frames", "K\x01"))},
		// Memo 1 is the str "device_traces": frames of strs.
		"frames of strs":     {rec(act, pair("frames", "]\x94(h\x01h\x01e"))},
		"frames get APPEND":  {rec(act, pair("frames", "]\x94h\x01a"))},
		"error after frames": {rec(act, pair("frames", "]\x94"), pair("size", "\x8c\x01s"))},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			two := append(append([]string{}, entries...), entries...)
			for _, chunk := range []int{0, 5} {
				n := diffScan(t, snap(two...), pickle.Limits{}, chunk)
				// Whole in the buffer, each is scanned but the dict with
				// a key twice (the general path keeps the later value).
				if chunk == 0 && name != "a key twice" && n != int64(len(two)) {
					t.Errorf("%d of %d scanned: the scan is not what is compared", n, len(two))
				}
			}
		})
	}
}

// TestScanLongBatches reads batches longer than the decoder's buffer,
// and one of more trace entries than early rows: the scan and the
// general path agree, and the scan still takes most entries of a batch
// that fits.
func TestScanLongBatches(t *testing.T) {
	e := entry("alloc", 1, 2)
	for _, n := range []int{4000, 6000, maxEarly + 100} {
		entries := make([]string, n)
		for i := range entries {
			entries[i] = e
		}
		data := snap(entries...)
		for _, chunk := range []int{0, 4096} {
			scanned := diffScan(t, data, pickle.Limits{}, chunk)
			// A batch of 4000 (50 bytes each: 200 KB) fits the 256 KiB
			// buffer once it is filled from its first dict; one of 6000
			// does not, and its first dicts go the general way.
			if n == 4000 && scanned < int64(n)*9/10 {
				t.Errorf("%d entries, reads of %d bytes: %d scanned, want 90%% or more", n, chunk, scanned)
			}
			t.Logf("%d entries (%d bytes), reads of %d: %d scanned", n, len(data), chunk, scanned)
		}
	}
}

// TestScanSmallBatches reads a device's trace stored one entry a batch
// (a MARK, an entry, APPENDS): the same tables either way, nearly every
// entry scanned.
func TestScanSmallBatches(t *testing.T) {
	e := entry("alloc", 1, 2)
	data := []byte("\x80\x04}\x94(\x8c\x0ddevice_traces\x94]\x94(]\x94(" + e + "e" + strings.Repeat("("+e+"e", 20000) + "eu.")
	for _, chunk := range []int{0, 4096} {
		// All but the few cut by the read buffer's end.
		if n := diffScan(t, data, pickle.Limits{}, chunk); chunk == 0 && n < 20001*99/100 {
			t.Errorf("%d of 20001 entries scanned", n)
		}
	}
}

// TestScanMemo holds the record scan to the general path where the memo
// changes under it: a key's memo index bound again between batches (the
// plan remembers keys by index), protocol 2's BINPUT, and an empty list
// followed by a key fetched from the memo.
func TestScanMemo(t *testing.T) {
	e := entry("alloc", 1, 2)
	// The memo after e: 4 the dict, 5 "action", 6 "alloc", 7 "addr",
	// 8 "size", 9 "frames", 10 its list.
	get := "}\x94(h\x05h\x06h\x07K\x01h\x08K\x02h\x09]\x94u"
	framesFirst := "}\x94(h\x05h\x06h\x09]\x94h\x07K\x03h\x08K\x04u"
	head := "\x80\x04}\x94(\x8c\x0ddevice_traces\x94]\x94(]\x94("
	// Protocol 2: BINPUT at each next index, from 0.
	p2 := "\x80\x02}q\x00(\x8c\x0ddevice_traces" + "q\x01]q\x02(]q\x03(" +
		"}q\x04(" + sstr("action") + "q\x05" + sstr("alloc") + "q\x06" + sstr("size") + "q\x07K\x05u" +
		"}q\x08(h\x05h\x06h\x07K\x06ueeu."
	cases := map[string][]byte{
		// "size" (8) bound again to "stream" between two batches.
		"a key rebound":      []byte(head + e + get + get + "e" + sstr("stream") + "q\x080(" + get + get + "eeu."),
		"protocol 2":         []byte(p2),
		"a key after a list": snap(e, framesFirst, framesFirst),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			for _, chunk := range []int{0, 3} {
				if n := diffScan(t, data, pickle.Limits{}, chunk); chunk == 0 && n < 2 {
					t.Errorf("%d scanned: the scan is not what is compared", n)
				}
			}
		})
	}
}

// TestScannedEntryTwice appends one scanned trace entry twice (a DUP of
// its Ref, which the scan pushed in the dict's place): the second Append
// must be refused, with a positioned error, as pickle.RecordScanner allows,
// and not taken for another entry from the freed row. The general path
// reads the dict twice. The third entry is followed by a POP, so that it
// goes the general way, and the DUP after it copies the second's Ref.
func TestScannedEntryTwice(t *testing.T) {
	e := entry("alloc", 1, 2)
	data := snap(e, e, e+"0", "2")
	read := func(opts ...Option) (*Snapshot, error, int64) {
		r := NewReader(bytes.NewReader(data), "x", append(opts, WithAllocator(memory.NewGoAllocator()))...)
		s, err := readAllFrom(r)
		return s, err, r.serial
	}
	general, err, _ := read(withGeneralPath())
	if err != nil {
		t.Fatalf("general path: %v", err)
	}
	if n := general.Table(TableEvents).NumRows(); n != 3 {
		t.Errorf("general path: %d trace entries, want 3 (the second twice)", n)
	}
	general.Release()
	fast, err, scanned := read()
	if fast != nil {
		fast.Release()
	}
	if scanned < 2 {
		t.Fatalf("%d entries scanned, want the first two", scanned)
	}
	if err == nil || !strings.Contains(err.Error(), "device_traces[0][2] is a trace entry already stored before") {
		t.Errorf("record scan: %v, want the third entry refused", err)
	}
}
