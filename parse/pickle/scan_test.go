package pickle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// recordReader reads the dicts of the list tagged 1 (the root list's
// first element) into rows: with scan set, through a RecordPlan
// (RecordScanner); without, from the dicts Append receives.
type recordReader struct {
	plan *RecordPlan
	scan bool
	rows [][]any
	// pending holds the scanned records until Append takes them.
	pending [][]any
	// scanned counts the records the scan took.
	scanned int
	tagged  bool
	// unread: ScannedRecord reads no list's elements (ListLen only),
	// as a Handler taking known lists by their key does, and leaves
	// each list to be made as it is.
	unread bool
}

var recordKeys = []string{"a", "b", "s", "l", "x"}

func (r *recordReader) Tag(c, parent *Container, key Value, index int64) {
	if !r.tagged && parent != nil && parent.Kind == List && c.Kind == List {
		c.Tag, r.tagged = 1, true
	}
}

func (r *recordReader) Append(l *Container, index int64, item Value) (bool, error) {
	if l.Tag != 1 {
		return false, nil
	}
	if tag, id, ok := item.Ref(); ok && tag == 9 {
		if id < 0 || int(id) >= len(r.pending) || r.pending[id] == nil {
			return false, fmt.Errorf("record %d appended twice", id)
		}
		r.rows = append(r.rows, r.pending[id])
		r.pending[id] = nil
		return true, nil
	}
	if item.Kind() != Dict {
		r.rows = append(r.rows, []any{canon(item)})
		return true, nil
	}
	row := make([]any, len(recordKeys))
	for f, k := range recordKeys {
		if v, ok := item.Container().Get(k); ok {
			row[f] = canon(v)
		}
	}
	r.rows = append(r.rows, row)
	return true, nil
}

func (r *recordReader) RecordPlan(list *Container) *RecordPlan {
	if !r.scan {
		return nil
	}
	return r.plan
}

func (r *recordReader) ScannedRecord(list *Container, index int64, rec *Record) (Value, error) {
	row := make([]any, len(recordKeys))
	for _, f := range rec.Order[:rec.NOrder] {
		if rec.IsInt&(1<<f) != 0 {
			row[f] = canon(IntValue(rec.Int[f]))
		} else if n, ok := rec.ListLen(int(f)); ok && r.unread {
			row[f] = map[string]any{"unread list": n}
		} else if items, _, ok := rec.List(int(f)); ok {
			l := make([]any, len(items), len(items)+1)
			for i, it := range items {
				l[i] = canon(it)
			}
			row[f] = map[string]any{"list": l} // left as it is: the decoder makes the list
		} else {
			row[f] = canon(rec.Val[f])
		}
	}
	r.pending = append(r.pending, row)
	r.scanned++
	return RefValue(9, int64(len(r.pending)-1)), nil
}

// writeGet writes a memo get of index i as Python's pickler does:
// BINGET below 256, LONG_BINGET from there.
func writeGet(b *bytes.Buffer, i int) {
	if i < 256 {
		b.WriteByte(opBINGET)
		b.WriteByte(byte(i))
		return
	}
	b.WriteByte(opLONG_BINGET)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(i)))
}

// recordPickle writes [records, memo gets...] as Python's pickler would
// (protocol 4, MEMOIZE), with varied values: ints of every width, None,
// bools, floats, strs memoized and not, memo gets, empty lists and lists
// of memo gets, a key not in the plan; then memo gets of a str, a list, a
// record and an int made inside the records.
//
// Two shapes Python's picklers do not write but a hand-made pickle may:
// an int memoized (every 11th record), which the scan leaves to the
// general path; and strs repeated in runs of 50 records, some longer than
// 8 bytes, which the scan takes as the str memoized last, again, when
// short, and by scanPair when long.
func recordPickle(n int) []byte {
	var b bytes.Buffer
	memo := 0
	put := func() int { b.WriteByte(opMEMOIZE); memo++; return memo - 1 }
	get := func(i int) { writeGet(&b, i) }
	keys := map[string]int{}
	key := func(k string) {
		if i, ok := keys[k]; ok {
			get(i)
			return
		}
		b.WriteByte(opSHORT_BINUNICODE)
		b.WriteByte(byte(len(k)))
		b.WriteString(k)
		keys[k] = put()
	}
	long1 := func(x int64) {
		var le []byte
		for v := x; ; v >>= 8 {
			le = append(le, byte(v))
			if (v >= -128 && v < 128) && len(le) > 0 && (v < 0) == (le[len(le)-1]&0x80 != 0) {
				break
			}
		}
		b.WriteByte(opLONG1)
		b.WriteByte(byte(len(le)))
		b.Write(le)
	}
	b.WriteString("\x80\x04]")
	put()
	b.WriteByte(opMARK)
	b.WriteString("]") // the records
	put()
	b.WriteByte(opMARK)
	var strMemo, listMemo, dictMemo int
	intMemo := -1
	frame := -1
	for i := 0; i < n; i++ {
		b.WriteByte(opEMPTY_DICT)
		m := put()
		if i == n/2 {
			dictMemo = m
		}
		b.WriteByte(opMARK)
		key("a")
		switch i % 5 {
		case 0:
			b.WriteByte(opBININT1)
			b.WriteByte(byte(i))
		case 1:
			b.WriteByte(opBININT2)
			b.Write(binary.LittleEndian.AppendUint16(nil, uint16(i*37))) // 32768 and up too
		case 2:
			b.WriteByte(opBININT)
			b.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(-i))))
		case 3:
			long1(int64(i) << (i % 60))
		case 4:
			long1(-int64(i) << (i % 58))
		}
		if i%11 == 5 {
			if m := put(); intMemo < 0 {
				intMemo = m
			}
		}
		key("b")
		switch i % 4 {
		case 0:
			b.WriteByte(opNONE)
		case 1:
			b.WriteByte(opNEWTRUE)
		case 2:
			b.WriteByte(opBINFLOAT)
			b.Write(binary.BigEndian.AppendUint64(nil, math.Float64bits(float64(i)/3)))
		case 3:
			get(keys["a"]) // a str from the memo
		}
		key("s")
		b.WriteByte(opSHORT_BINUNICODE)
		s := fmt.Sprintf("v%d", (i/50)%7)
		if (i/50)%3 == 2 {
			s = fmt.Sprintf("value-longer-than-8-bytes-%d", (i/50)%7)
		}
		b.WriteByte(byte(len(s)))
		b.WriteString(s)
		if m := put(); i == n/3 {
			strMemo = m
		}
		if i%3 == 0 {
			key("x") // not in the plan
			b.WriteString("]")
			put()
		}
		key("l")
		b.WriteString("]")
		if m := put(); i == n/4 {
			listMemo = m
		}
		switch {
		case i%4 == 1 && frame >= 0:
			get(frame)
			b.WriteByte(opAPPEND)
		case i%8 == 2 && frame >= 0:
			b.WriteByte(opMARK)
			get(frame)
			get(keys["s"])
			get(frame)
			b.WriteByte(opAPPENDS)
		case i%8 == 6 && frame >= 0:
			// The list before (i%8 == 2) and one more element: its
			// bytes begin with that list's.
			b.WriteByte(opMARK)
			get(frame)
			get(keys["s"])
			get(frame)
			get(keys["a"])
			b.WriteByte(opAPPENDS)
		}
		b.WriteByte(opSETITEMS)
		if i == 0 {
			b.WriteString("\x8c\x05frame")
			frame = put()
			b.WriteByte('0') // POP
		}
		if i%1000 == 999 {
			b.WriteString("e(")
		}
	}
	b.WriteByte(opAPPENDS)
	get(strMemo)
	get(listMemo)
	get(dictMemo)
	get(intMemo)
	b.WriteString("e.")
	return b.Bytes()
}

// TestRecordScanMatchesGeneral decodes the same pickle with and without
// the record scan: the same rows, and the same values from memo gets of
// what the records memoized (a str, a list, a record).
func TestRecordScanMatchesGeneral(t *testing.T) {
	data := recordPickle(3000)
	read := func(scan bool) (*recordReader, Value) {
		r := &recordReader{plan: NewRecordPlan(recordKeys...), scan: scan}
		v, err := Decode(bytes.NewReader(data), "records", r, Limits{})
		if err != nil {
			t.Fatalf("scan %v: %v", scan, err)
		}
		return r, v
	}
	general, gv := read(false)
	scanned, sv := read(true)
	// All but the first record (its keys inline), the 273 with an int
	// memoized and a few cut by the read buffer's end.
	if scanned.scanned < 2700 {
		t.Errorf("the scan took %d of 3000 records", scanned.scanned)
	}
	if !reflect.DeepEqual(general.rows, scanned.rows) {
		for i := range general.rows {
			if i < len(scanned.rows) && !reflect.DeepEqual(general.rows[i], scanned.rows[i]) {
				t.Fatalf("row %d: general %v, scanned %v", i, general.rows[i], scanned.rows[i])
			}
		}
		t.Fatalf("%d rows, general %d", len(scanned.rows), len(general.rows))
	}
	gi, si := gv.Container().Items, sv.Container().Items
	if len(gi) != 5 || len(si) != 5 {
		t.Fatalf("results: %v, %v", gv, sv)
	}
	for i := 1; i < 5; i++ {
		if g, s := canon(gi[i]), canon(si[i]); !reflect.DeepEqual(g, s) {
			t.Errorf("memo get %d: general %v, scanned %v", i, g, s)
		}
	}
}

// fillHandler is a RecordScanner that tags nothing and plans nothing: the
// decoder then fills untagged lists of memo gets at once (fillList).
type fillHandler struct{}

func (fillHandler) Tag(c, parent *Container, key Value, index int64) {}
func (fillHandler) Append(*Container, int64, Value) (bool, error)    { return false, nil }
func (fillHandler) RecordPlan(*Container) *RecordPlan                { return nil }
func (fillHandler) ScannedRecord(*Container, int64, *Record) (Value, error) {
	return Value{}, ErrNotScanned
}

// TestFillList decodes, with fillList on and off, a list of lists Python's
// pickler writes ([a, b, a] twice, from memo gets), a list given another
// element after it was made (a memo get of it, then APPEND: hand-made) and
// a list that holds itself (its memo get comes before the memo has it, so
// fillList leaves it to the general path). The values are the same either
// way; with fillList on, the two equal lists share a nonzero ListKey, and
// the grown and the self-holding lists have none.
func TestFillList(t *testing.T) {
	var b bytes.Buffer
	b.Write([]byte{opPROTO, 4, opEMPTY_LIST, opMEMOIZE, opMARK}) // memo 0: the root
	for _, s := range []string{"a", "b", "c"} {                  // memo 1, 2, 3
		b.Write([]byte{opSHORT_BINUNICODE, 1, s[0], opMEMOIZE})
	}
	aba := []byte{opMARK, opBINGET, 1, opBINGET, 2, opBINGET, 1, opAPPENDS}
	b.Write(append([]byte{opEMPTY_LIST, opMEMOIZE}, aba...)) // memo 4: [a, b, a]
	b.Write(append([]byte{opEMPTY_LIST, opMEMOIZE}, aba...)) // memo 5: the same
	b.Write([]byte{opEMPTY_LIST, opMEMOIZE, opMARK, opBINGET, 2, opAPPENDS,
		opBINGET, 6, opBINGET, 3, opAPPEND}) // memo 6: [b], then c appended through a memo get
	b.Write([]byte{opEMPTY_LIST, opMEMOIZE, opMARK, opBINGET, 7, opAPPENDS}) // memo 7: [itself]
	b.Write([]byte{opAPPENDS, opSTOP})
	data := b.Bytes()

	read := func(fill bool) []*Container {
		d := NewDecoder(bytes.NewReader(data), "fill", fillHandler{}, Limits{})
		d.SetListFill(fill)
		for {
			done, err := d.Run()
			if err != nil {
				t.Fatalf("fill %v: %v", fill, err)
			}
			if done {
				break
			}
		}
		root := d.Result().Container()
		// a, b, c, [a b a], [a b a], [b c], [b c] (the memo get), [itself]
		if root == nil || len(root.Items) != 8 {
			t.Fatalf("fill %v: root %v", fill, d.Result())
		}
		var ls []*Container
		for _, it := range root.Items[3:] {
			ls = append(ls, it.Container())
		}
		return ls
	}
	on, off := read(true), read(false)
	for i := 0; i < 4; i++ { // the lists without the self-holding one
		if g, f := canon(containerValue(List, off[i])), canon(containerValue(List, on[i])); !reflect.DeepEqual(g, f) {
			t.Errorf("list %d: general %v, filled %v", i, g, f)
		}
	}
	for _, ls := range [][]*Container{on, off} {
		if self := ls[4]; len(self.Items) != 1 || self.Items[0].Container() != self {
			t.Errorf("the self-holding list: %v", self.Items)
		}
	}
	if k := on[0].ListKey(); k == 0 || on[1].ListKey() != k {
		t.Errorf("equal lists: keys %d and %d, want one nonzero key", k, on[1].ListKey())
	}
	if on[0] == on[1] {
		t.Error("the two equal lists are one container")
	}
	if k := on[2].ListKey(); k != 0 || len(on[2].Items) != 2 {
		t.Errorf("the list grown after it was keyed: key %d, items %v", k, on[2].Items)
	}
	if k := on[4].ListKey(); k != 0 {
		t.Errorf("the self-holding list: key %d", k)
	}
	for i, l := range off {
		if l.ListKey() != 0 {
			t.Errorf("list %d keyed with fillList off", i)
		}
	}
}

// headListsPickle writes a list of n records {"a": i, "x": [memo gets],
// "l": [memo gets]} whose lists are drawn from variants sharing their
// first 20 bytes (ten BINGETs of the same frames, as lists of stacks with
// the same innermost frames do), more variants than maxHeadLens lengths,
// one a prefix of the others, for l's, from 20,000 of 10 to 60 elements
// (so the cache starts over now and then); x's list is one of other
// frames (so it is known to the cache, its elements waiting to be copied
// when the cache starts over, and stored right after it did), but
// halfway, where it is the list before. Halfway, two of the
// frames' memo slots are set again (BINPUT), so that a list of the same
// bytes then yields other elements. The root list ends with memo gets of
// every 97th record's lists.
func headListsPickle(n int) []byte {
	var b bytes.Buffer
	memo := 0
	put := func() int { b.WriteByte(opMEMOIZE); memo++; return memo - 1 }
	str := func(s string) {
		b.WriteByte(opSHORT_BINUNICODE)
		b.WriteByte(byte(len(s)))
		b.WriteString(s)
	}
	get := func(i int) { writeGet(&b, i) }
	b.WriteString("\x80\x04]")
	put()
	b.WriteByte(opMARK)
	const frames = 40
	for k := 0; k < frames; k++ { // memo slots 1..frames
		str(fmt.Sprintf("frame-%d", k))
		put()
		b.WriteByte(opPOP)
	}
	keys := map[string]int{}
	for _, k := range []string{"a", "x", "l"} {
		str(k)
		keys[k] = put()
		b.WriteByte(opPOP)
	}
	b.WriteString("]") // the records
	put()
	b.WriteByte(opMARK)
	variant := func(v int) []int {
		l := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} // 20 bytes: one head slot
		if v == 0 {
			return l
		}
		l = append(l, 11+v%29, 11+(v/29)%29, 11+(v/841)%29, 11+v%7)
		for k := 0; k < (v/100)%47; k++ { // of many lengths
			l = append(l, 11+k%29)
		}
		return l
	}
	list := func(gets []int) int {
		b.WriteString("]")
		m := put()
		b.WriteByte(opMARK)
		for _, g := range gets {
			get(g)
		}
		b.WriteByte(opAPPENDS)
		return m
	}
	var lists []int
	x, last := uint32(12345), 0
	for i := 0; i < n; i++ {
		if i == n/2 {
			str("frame-2-again")
			b.WriteByte(opBINPUT)
			b.WriteByte(2)
			b.WriteByte(opPOP)
			str("frame-15-again")
			b.WriteByte(opBINPUT)
			b.WriteByte(15)
			b.WriteByte(opPOP)
		}
		b.WriteByte(opEMPTY_DICT)
		put()
		b.WriteByte(opMARK)
		get(keys["a"])
		b.WriteByte(opBININT2)
		b.Write(binary.LittleEndian.AppendUint16(nil, uint16(i)))
		xl := []int{30, 29, 28, 27, 26, 25, 24, 23, 22, 21}
		if i == n/2 {
			// The list before the memo slots were set: the cache's
			// last list, of the same bytes, another generation.
			xl = variant(last)
		}
		get(keys["x"])
		mx := list(xl)
		x = x*1103515245 + 12345
		last = int(x>>8) % 20000
		get(keys["l"])
		ml := list(variant(last))
		if i%97 == 0 {
			lists = append(lists, mx, ml)
		}
		b.WriteByte(opSETITEMS)
		if i%500 == 499 {
			b.WriteString("e(")
		}
	}
	b.WriteByte(opAPPENDS)
	for _, m := range lists {
		get(m)
	}
	b.WriteString("e.")
	return b.Bytes()
}

// TestRecordScanHeadSlots decodes headListsPickle with and without the
// record scan: the lists the scan finds among those of their head slot
// (knownList), or walks to, hold the same elements as the general
// path's, also after the memo slots of some of their elements are set
// again, and after the cache starts over with elements not yet copied.
// The same pickle's lists, made as they are by a Handler that reads
// none of them, are the same as the general path's too (the root's
// memo gets of them).
func TestRecordScanHeadSlots(t *testing.T) {
	const n = 6000
	data := headListsPickle(n)
	read := func(scan, unread bool) (*recordReader, Value) {
		r := &recordReader{plan: NewRecordPlan(recordKeys...), scan: scan, unread: unread}
		v, err := Decode(bytes.NewReader(data), "head lists", r, Limits{})
		if err != nil {
			t.Fatalf("scan %v: %v", scan, err)
		}
		return r, v
	}
	general, gv := read(false, false)
	scanned, sv := read(true, false)
	if scanned.scanned < n-100 {
		t.Errorf("the scan took %d of %d records", scanned.scanned, n)
	}
	if len(general.rows) != n || len(scanned.rows) != n {
		t.Fatalf("rows: general %d, scanned %d, want %d", len(general.rows), len(scanned.rows), n)
	}
	for i := range general.rows {
		if !reflect.DeepEqual(general.rows[i], scanned.rows[i]) {
			t.Fatalf("row %d: general %v, scanned %v", i, general.rows[i], scanned.rows[i])
		}
	}
	// The memo slots set again show in the rows after them.
	if got := fmt.Sprint(scanned.rows[n-1][3]); !strings.Contains(got, "frame-2-again") {
		t.Errorf("the last row's list %s lacks the frame set again", got)
	}
	// The root's memo gets of every 97th record's lists: 2 per record.
	want := canon(gv).(map[string]any)["list"].([]any)
	if len(want) != 1+2*((n+96)/97) {
		t.Fatalf("the root holds %d values", len(want))
	}
	for _, v := range []Value{sv, func() Value { _, v := read(true, true); return v }()} {
		if got := canon(v); !reflect.DeepEqual(got, canon(gv)) {
			t.Errorf("memo gets of the lists: scanned %v, general %v", got, want[1:])
		}
	}
}
