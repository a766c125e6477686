package pickle

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
	"unsafe"
)

// A RecordScanner is a Handler that takes the dicts of some lists, the
// records of a stream, straight from the input bytes. At an EMPTY_DICT
// that the stack shows will be an element of a list for which the
// scanner gives a plan (RecordPlan), the decoder reads ahead in its
// buffer for the dict's whole making, in the shape Python's picklers
// write a record of scalars:
//
//	EMPTY_DICT [memo put] MARK (key value [memo put])... SETITEMS
//
// with each key a str (SHORT_BINUNICODE, or a memo get of a str) and each
// value a scalar (None, a bool, an int of up to 8 bytes, a float, a short
// str, a memo get of a scalar or a Ref), a memo get of a list not
// consumed (the list itself: Val holds it) or a list of memo gets of
// scalars and Refs (EMPTY_LIST [memo put] [MARK gets APPENDS | get
// APPEND]), each memo put numbered next in turn, no key twice, and followed by an opcode
// that cannot add to the dict (EMPTY_DICT, APPEND, APPENDS). When all of
// that is buffered, the plan's keys are read into a Record without any
// Value or container being made for the dict, ScannedRecord converts it,
// the decoder memoizes what the general path would, and the Value
// ScannedRecord returns is pushed in the dict's place: Append later
// receives it as the list's element. Anything else (a nested dict, a long
// str, a second SETITEMS, a memo get of a container not consumed other
// than a list under a key, a FRAME opcode inside the dict, a dict cut by
// the end of the buffer, one past a Limit, which the general path then
// reports) is left to the general path, the same pickle giving the same
// tables either way.
//
// A scanned dict counts as consumed from the start: a memo get of it
// yields a Ref with tag 0 and id -1, and what the stack holds in its
// place is the scanner's Value. So a pickle that uses a record again
// after making it, other than by storing it in its list (a memo get or a
// DUP of it, a SETITEM into it before its list takes it), which Python's
// picklers never write, may be refused where the general path reads it;
// and where both refuse a pickle, a message may name that Value's kind
// where the general path names a dict. A pickle the general path refuses
// is refused.
//
// A scanned dict's lists are not passed to Tag: a list under a plan's key
// is memoized as the Value ScannedRecord leaves in the Record's field (see
// Record.List), one under another key as a real list.
type RecordScanner interface {
	Handler
	// RecordPlan returns the plan by which dicts about to be stored in
	// list are read, or nil to leave them to the general path. It is
	// asked at each EMPTY_DICT whose parent is a tagged list, before the
	// decoder reads ahead.
	RecordPlan(list *Container) *RecordPlan
	// ScannedRecord converts rec, a dict the stack shows will be element
	// index of list, and returns the Value to push in the dict's place.
	// rec is the decoder's, valid until ScannedRecord returns. A non-nil
	// error stops decoding at once; a Handler that reports errors in the
	// dict's values when Append receives it, as the general path would,
	// keeps them until then. Append must consume the Value (and call
	// ReleaseRecord), as the general path consumes the dict, or a Handler
	// that has Append keep it in its list must, when it takes it from
	// there. ErrNotScanned leaves the dict to the general path instead, as
	// if no plan had been given: ScannedRecord must then have changed
	// nothing, rec included.
	ScannedRecord(list *Container, index int64, rec *Record) (Value, error)
}

// ErrNotScanned is what ScannedRecord returns to leave a dict to the
// general path (a value it would rather the general path judged).
var ErrNotScanned = errors.New("pickle: record left to the general path")

// MaxRecordFields is the most keys a RecordPlan may name.
const MaxRecordFields = 16

// maxScanPairs bounds the pairs of a scanned dict, and maxScanItems the
// elements of its lists, all together; a dict with more is read by the
// general path.
const (
	maxScanPairs = 64
	maxScanItems = 1024
)

// RecordPlan names the keys a scan reads into a Record: field f is the
// f-th key given to NewRecordPlan. A plan remembers where it found each
// key in the last record, so it belongs to one Decoder.
type RecordPlan struct {
	keys []string
	at   [maxScanPairs]planKey
	// gen is the Decoder's memo generation for which at holds: a PUT at
	// an index already set (hand-made pickles) rebinds it, and the keys
	// are forgotten at the next record.
	gen uint64
}

// planKey is the key a plan found at one pair position of the last
// record: the bytes of its memo get (raw, the get's len bytes, read as a
// little-endian word under mask) and its field (-1 for a key not in the
// plan). A position with no key has mask 0 and raw 1, which no word
// matches.
type planKey struct {
	raw, mask uint64
	bit       uint32 // 1 << field, 0 for a key not in the plan
	len       uint8
	field     int8
	_         [10]byte // 32 bytes: plan.at[i] is a shift away
}

// noKey is a planKey that matches no bytes.
var noKey = planKey{raw: 1, field: -1}

// keyWord returns the planKey of the memo get at b[p:] (a BINGET or
// LONG_BINGET, whole), for field f.
func keyWord(b []byte, p int, f int8) planKey {
	var bit uint32
	if f >= 0 {
		bit = 1 << f
	}
	if b[p] == opBINGET {
		return planKey{raw: uint64(b[p]) | uint64(b[p+1])<<8, mask: 1<<16 - 1, bit: bit, len: 2, field: f}
	}
	return planKey{raw: uint64(b[p]) | uint64(binary.LittleEndian.Uint32(b[p+1:]))<<8, mask: 1<<40 - 1, bit: bit, len: 5, field: f}
}

// forget makes the plan match no key until it learns them again.
func (p *RecordPlan) forget(gen uint64) {
	for i := range p.at {
		p.at[i] = noKey
	}
	p.gen = gen
}

// NewRecordPlan returns a plan for the given keys (at most
// MaxRecordFields, else it panics: a programming error).
func NewRecordPlan(keys ...string) *RecordPlan {
	if len(keys) > MaxRecordFields {
		panic("pickle: too many record fields")
	}
	p := &RecordPlan{keys: keys}
	p.forget(0)
	return p
}

// field returns the field of key k, -1 when k is not in the plan.
func (p *RecordPlan) field(k string) int8 {
	for f, key := range p.keys {
		if key == k {
			return int8(f)
		}
	}
	return -1
}

// Record is a dict read by a scan: for each field f of its plan, whether
// the dict has the key (Set), and its value, as an int (Int, when IsInt)
// or as a Value (Val) otherwise.
type Record struct {
	// Offset is the byte offset of the dict's EMPTY_DICT opcode.
	Offset int64
	// Pairs is the number of the dict's pairs, keys not in the plan
	// included.
	Pairs int
	// Set and IsInt have bit f for field f.
	Set, IsInt uint32
	// Order lists the fields set, in the order of their keys in the
	// dict; NOrder is their number.
	Order  [MaxRecordFields]int8
	NOrder int
	// Int holds the value of a field whose value is an int that fits 64
	// bits (a BININT, BININT1, BININT2 or LONG1 of up to 8 bytes).
	Int [MaxRecordFields]int64
	// Val holds the value of the other fields, as a memo get pushes it:
	// a scalar, a Ref, or a list (see List).
	Val [MaxRecordFields]Value

	items   []Value // the elements of the lists, one list after another
	listOff [MaxRecordFields]int64
	listKey [MaxRecordFields]uint64
	keep    uint32 // bit f: field f's list stays held (KeepHeld)
	// converted: the Value ScannedRecord returned stands for the dict
	// (Converted).
	converted bool
	// pend holds the elements of lists the list cache gave, not yet
	// copied to their place in items: most Handlers take a known list's
	// key and never read its elements. Copied when read (List) or made
	// (a list not converted), by fillPending.
	pend []pendingItems
}

// pendingItems is a run of a Record's items still to be copied: src to
// items[at:].
type pendingItems struct {
	at  int
	src []Value
}

// fillPending copies the pending elements to items, the Record's items
// or the scan's being gathered (the same array).
func (r *Record) fillPending(items []Value) {
	for _, p := range r.pend {
		copy(items[p.at:p.at+len(p.src)], p.src)
	}
	r.pend = r.pend[:0]
}

// KeepHeld keeps the elements of field f's list (see List), which
// ScannedRecord replaced by a Value of its own, counted against
// Limits.MaxValues as the general path's list would be until its Handler
// converted it: the Handler releases them later with ReleaseItems. A
// Handler that converts a list at once, where the general path's Handler
// would convert it only when the record is consumed, so holds what the
// general path holds.
func (r *Record) KeepHeld(f int) { r.keep |= 1 << f }

// Converted, called by ScannedRecord, says that the Value it returns
// stands for the whole dict wherever the pickle names it again (a Ref
// the Handler takes as the dict, as Decoder.Replace would make it): later
// memo gets of the dict yield that Value instead of a consumed Ref, and
// the dict's pairs are not held (nothing is kept of them), so that no
// ReleaseRecord follows. Lists among its values are held as usual.
func (r *Record) Converted() { r.converted = true }

// List returns the elements of field f's value and the byte offset of
// its EMPTY_LIST, when that value is a list the scan read; ok is false
// otherwise. Such a list has no container: ScannedRecord must set Val[f]
// to what the memo is to yield in the list's place (say, a Ref to what it
// converted it to); if it leaves Val[f] as it is, the list is made and
// memoized as it is.
func (r *Record) List(f int) (items []Value, off int64, ok bool) {
	v := r.Val[f]
	if r.Set&(1<<f) == 0 || r.IsInt&(1<<f) != 0 || v.kind != List || v.p != nil {
		return nil, 0, false
	}
	if len(r.pend) > 0 {
		r.fillPending(r.items)
	}
	return r.items[int(uint32(v.n)):int(v.n>>32)], r.listOff[f], true
}

// ListLen is the number of elements of field f's list, when List's ok
// would be true; ok is false otherwise. It reads no element.
func (r *Record) ListLen(f int) (n int, ok bool) {
	v := r.Val[f]
	if r.Set&(1<<f) == 0 || r.IsInt&(1<<f) != 0 || v.kind != List || v.p != nil {
		return 0, false
	}
	return int(v.n>>32) - int(uint32(v.n)), true
}

// ListKey identifies the elements of field f's list (see List): two lists
// of one Decoder with the same nonzero key hold the same elements, so what
// a Handler made of one it may take for the other. It is 0 for a list the
// decoder does not key (an empty one, one of elements not all found in
// the memo, one past the cache's bounds) and for a field that is not such
// a list.
func (r *Record) ListKey(f int) uint64 {
	v := r.Val[f]
	if r.Set&(1<<f) == 0 || r.IsInt&(1<<f) != 0 || v.kind != List || v.p != nil || int(v.n>>32) == int(uint32(v.n)) {
		return 0
	}
	return r.listKey[f]
}

// listCache remembers the elements of the lists the record scan read, by
// their bytes: a snapshot's trace entries carry a new frames list each,
// but the lists are memo gets of the same frames, so few byte strings
// recur (45 among big_real's 270 thousand lists). A list whose bytes are
// known gets its elements by one copy and its key, instead of a memo
// lookup per element. Sound because an element kept here was a memo get
// of a live slot holding a scalar or a Ref, and what a memo index yields
// then changes only when an index is set again (PUT), which moves
// memoGen: an entry of another generation is made again. Bounded: past
// maxListCacheLists lists or maxListCacheItems elements the cache starts
// over (keys are never reused).
type listCache struct {
	index map[string]int32 // by the bytes between MARK and APPENDS
	lists []cachedList
	// items is the chunk the elements of the lists stored last are in,
	// nitems the elements stored since the cache started over. A list's
	// elements stay where they were put, so a chunk fills without the
	// copies of a growing slice (each a page first touched, a fault a
	// page in a small run).
	items  []Value
	nitems int
	bytes  int    // of the index's keys
	key    uint64 // the last key given
	// last is the index in lists of the list last given: a list is
	// often the last one again (two of three frames lists in big_real),
	// found by comparing its bytes, without a walk to its APPENDS or a
	// hash. (After the cache starts over it may name another list,
	// which is then just the one compared.)
	last int32
	// prev is the list last was before it changed: a segment's frames
	// list comes between its blocks' lists, which last alone misses.
	prev int32
	// head and lens give the lengths of the bodies stored that begin
	// alike: head holds, by a hash of the headBytes bytes a body begins
	// with (headSlot), 1 + the index in lens of the length stored last
	// in that slot, 0 for none; its prev names the one before it. A
	// list that is not the last one is most often one given before
	// (99% of big_real's and of deep stacks'), and lists of many stacks
	// begin alike (their innermost frames) but have few lengths: where
	// the byte after a length's bytes is APPENDS, the index is asked for
	// those bytes, without walking the gets one by one. Cleared when
	// the cache starts over.
	head [headSlots]int32
	lens []headLen
}

// setLast makes list i the last one given, the one before it prev.
func (c *listCache) setLast(i int32) {
	if i != c.last {
		c.prev, c.last = c.last, i
	}
}

// headLen is a body length of a listCache.head slot.
type headLen struct {
	n, prev int32 // prev: 1 + the index in lens of the slot's length before it; 0 for none
}

const (
	headSlotBits = 12
	headSlots    = 1 << headSlotBits // listCache.head's slots
	headBytes    = 16                // the bytes of a body hashed for its slot
	// maxHeadLens is the most lengths of one slot tried, or kept, the
	// first ones stored: a slot may hold a hundred (the deep stacks of
	// cranberrii's trace, one innermost frame, 94 to 685 bytes), and a
	// length tried costs a byte's compare.
	maxHeadLens = 128
	// maxHeadAsks is the most lengths of a slot whose bytes are looked
	// up in the index for one list.
	maxHeadAsks = 4
)

// headSlot returns the head slot of the list whose body begins at
// b[start:], when headBytes bytes are there; ok is false otherwise.
// Only a body of headBytes or more is stored by its slot: the slot of a
// shorter one would hash what follows its APPENDS, and its walk is short.
func headSlot(b []byte, start int) (slot int, ok bool) {
	if start < 0 || start+headBytes > len(b) {
		return 0, false
	}
	x := (binary.LittleEndian.Uint64(b[start:]) * 0x9E3779B97F4A7C15) ^ binary.LittleEndian.Uint64(b[start+8:])
	return int((x * 0x9E3779B97F4A7C15) >> (64 - headSlotBits)), true
}

type cachedList struct {
	gen   uint64  // memoGen when made
	items []Value // its elements, in one of the cache's chunks (cap = len)
	key   uint64
	body  string // its key in index
}

const (
	maxListCacheLists = 4096
	maxListCacheItems = 1 << 16 // 1.5 MiB of Values
	maxListCacheBytes = 1 << 20
	listCacheChunk    = 4096 // Values a chunk of listCache.items holds, unless a list needs more
)

// scanListItems appends the elements of the list whose gets are body (a
// run of whole BINGETs and LONG_BINGETs) to d.sc.items and returns the
// list's key (0: none); ok is false when the record must go to the
// general path, as when an element is not in the memo or too many are.
func (d *Decoder) scanListItems(body []byte) (key uint64, ok bool) {
	c := &d.lc
	// The last two lists given, compared before the index is asked (a
	// hash of body): a segment's frames list comes between two blocks'.
	for _, i := range [2]int32{c.last, c.prev} {
		if uint(i) < uint(len(c.lists)) {
			if l := &c.lists[i]; l.gen == d.memoGen && l.body == string(body) {
				if len(d.sc.items)+len(l.items) > maxScanItems {
					return 0, false
				}
				d.sc.items = append(d.sc.items, l.items...)
				c.setLast(i)
				return l.key, true
			}
		}
	}
	if i, hit := c.index[string(body)]; hit {
		if l := &c.lists[i]; l.gen == d.memoGen {
			if len(d.sc.items)+len(l.items) > maxScanItems {
				return 0, false
			}
			d.sc.items = append(d.sc.items, l.items...)
			c.setLast(i)
			return l.key, true
		}
	}
	from := len(d.sc.items)
	cacheable := true
	for p := 0; p < len(body); {
		i, m := getArg(body, p)
		p += m
		if len(d.sc.items) >= maxScanItems {
			return 0, false
		}
		it, ok := d.liveGet(i)
		if !ok {
			cacheable = false // what it yields may change (a record consumed)
			if it, ok = d.scanGet(i); !ok {
				return 0, false
			}
		}
		d.sc.items = append(d.sc.items, it)
	}
	n := len(d.sc.items) - from
	if !cacheable || n == 0 || n > maxListCacheItems {
		return 0, true
	}
	if c.index == nil || len(c.lists) >= maxListCacheLists || c.nitems+n > maxListCacheItems || c.bytes+len(body) > maxListCacheBytes {
		c.index = make(map[string]int32)
		c.lists = c.lists[:0]
		// A new chunk: the record's pending elements (Record.pend) may
		// be the old one's.
		c.items = nil
		c.nitems = 0
		c.bytes = 0
		c.head = [headSlots]int32{}
		c.lens = c.lens[:0]
	}
	c.key++
	if cap(c.items)-len(c.items) < n {
		c.items = make([]Value, 0, max(listCacheChunk, n))
	}
	at := len(c.items)
	c.items = append(c.items, d.sc.items[from:]...)
	c.nitems += n
	l := cachedList{gen: d.memoGen, items: c.items[at:len(c.items):len(c.items)], key: c.key}
	if i, hit := c.index[string(body)]; hit { // of another generation
		l.body = c.lists[i].body
		c.lists[i] = l
		c.setLast(i)
	} else {
		l.body = string(body)
		i = int32(len(c.lists))
		c.addLen(body)
		c.index[l.body] = i
		c.setLast(i)
		c.lists = append(c.lists, l)
		c.bytes += len(body)
	}
	return c.key, true
}

// knownList finds the list at b[start:] among those the cache holds, the
// last one given or one of its head slot's: the same bytes, then APPENDS,
// in the same memo generation. Those bytes being whole gets, a walk from
// start would stop at the same APPENDS. It returns the offset of that
// APPENDS, the list's elements (the cache's: a copy must be made before
// the cache starts over) and its key; ok is false otherwise.
func (d *Decoder) knownList(b []byte, start int) (end int, items []Value, key uint64, ok bool) {
	c := &d.lc
	if end, items, key, ok = d.cachedListAt(b, start, c.last); ok {
		return end, items, key, ok
	}
	if c.prev != c.last {
		if end, items, key, ok = d.cachedListAt(b, start, c.prev); ok {
			c.setLast(c.prev)
			return end, items, key, ok
		}
	}
	slot, ok := headSlot(b, start)
	if !ok {
		return 0, nil, 0, false
	}
	j, asked := c.head[slot]-1, 0
	for n := 0; j >= 0 && n < maxHeadLens; n++ {
		h := c.lens[j]
		if end = start + int(h.n); end < len(b) && b[end] == opAPPENDS {
			// An APPENDS byte may be an argument's: the index is asked
			// at most maxHeadAsks times (each hashes the bytes), so
			// that a list costs a few walks' time at most.
			if asked++; asked > maxHeadAsks {
				break
			}
			if i, hit := c.index[string(b[start:end])]; hit && i != c.last {
				// The same bytes: only the generation and the count
				// are left to check.
				if l := &c.lists[i]; l.gen == d.memoGen && len(d.sc.items)+len(l.items) <= maxScanItems {
					c.setLast(i)
					return end, l.items, l.key, true
				}
				return 0, nil, 0, false
			}
		}
		j = h.prev - 1
	}
	return 0, nil, 0, false
}

// addLen adds the length of body, a list's stored in the cache, to its
// head slot's, unless the slot has it or holds maxHeadLens.
func (c *listCache) addLen(body []byte) {
	slot, ok := headSlot(body, 0)
	if !ok {
		return
	}
	j := c.head[slot] - 1
	for n := 0; j >= 0; n++ {
		if int(c.lens[j].n) == len(body) || n >= maxHeadLens-1 {
			return
		}
		j = c.lens[j].prev - 1
	}
	c.lens = append(c.lens, headLen{n: int32(len(body)), prev: c.head[slot]})
	c.head[slot] = int32(len(c.lens))
}

// cachedListAt is knownList for the cache's list i.
func (d *Decoder) cachedListAt(b []byte, start int, i int32) (end int, items []Value, key uint64, ok bool) {
	c := &d.lc
	if uint(i) >= uint(len(c.lists)) {
		return 0, nil, 0, false
	}
	l := &c.lists[i]
	end = start + len(l.body)
	if end >= len(b) || b[end] != opAPPENDS || l.gen != d.memoGen || string(b[start:end]) != l.body ||
		len(d.sc.items)+len(l.items) > maxScanItems {
		return 0, nil, 0, false
	}
	return end, l.items, l.key, true
}

// scanState is scanRecord's state besides its position.
type scanState struct {
	plan  *RecordPlan
	items []Value // the elements of the lists, one after another
	lists uint32  // the fields (bit f) whose value is a list with elements
	// put holds the memo puts, in order; nput, their number. An array
	// whose fields are set one by one: appending a struct literal
	// copies it through the stack, a store the CPU cannot forward, which
	// took 6% of big_real's decoding.
	put  [2*maxScanPairs + 1]scanPut
	nput int
	next int64 // the memo index of the next put
	strs int64 // bytes of strs made
	// longest is the length of the longest str read, checked against
	// Limits.MaxString as readStr checks each.
	longest int
}

// scanPut is a memo put a scan found, done when the scan is taken.
type scanPut struct {
	what     uint8 // putDict, putValue, putList
	field    int8  // putList: the field the list is the value of, -1 for none
	from, to int32 // putList: its elements in Record.items
	off      int64 // putList: the offset of its EMPTY_LIST
	v        Value // putValue
}

const (
	putDict = iota
	putValue
	putList
	putLast // the str memoized last (Decoder.lastStr) again
)

// memoPut reads an optional memo put at b[p:] numbered next: n is the
// bytes it takes (0 when there is none), ok false when it is a put a scan
// does not take (another index, or cut by the buffer's end).
func memoPut(b []byte, p int, next int64) (n int, ok bool) {
	if p >= len(b) {
		return 0, false
	}
	switch b[p] {
	case opMEMOIZE:
		return 1, true
	case opBINPUT:
		if p+2 > len(b) || int64(b[p+1]) != next {
			return 0, false
		}
		return 2, true
	case opLONG_BINPUT:
		if p+5 > len(b) || int64(binary.LittleEndian.Uint32(b[p+1:])) != next {
			return 0, false
		}
		return 5, true
	}
	return 0, true
}

// scanShortStr reads the SHORT_BINUNICODE at b[p:] for scanPair: its
// text, the offset after it, and its bytes counted against the limits the
// record is checked against; ok is false when it is cut by the buffer.
func (d *Decoder) scanShortStr(b []byte, p int) (text []byte, next int, ok bool) {
	if p+2 > len(b) || p+2+int(b[p+1]) > len(b) {
		return nil, p, false
	}
	text = b[p+2 : p+2+int(b[p+1])]
	d.sc.strs += int64(len(text))
	d.sc.longest = max(d.sc.longest, len(text))
	return text, p + 2 + len(text), true
}

// liveGet is scanGet's common case, small enough to be inlined: what memo
// index i yields when its slot is live and holds a scalar or a Ref.
func (d *Decoder) liveGet(i int64) (Value, bool) {
	if i < d.memoIdx.n {
		if slot := d.memoIdx.at(i); slot > consumedSlot {
			v := d.vals[slot]
			return v, v.kind < List || v.kind == Ref
		}
	}
	return Value{}, false
}

// scanGet returns memo entry i as a memo get would push it, when it is a
// scalar or a Ref set before the dict being scanned.
func (d *Decoder) scanGet(i int64) (Value, bool) {
	if i >= d.memoIdx.n {
		return Value{}, false
	}
	slot := d.memoIdx.at(i)
	if slot <= consumedSlot {
		return Value{kind: Ref, n: -1}, slot == consumedSlot
	}
	v := d.vals[slot]
	if v.kind < List || v.kind == Ref {
		return v, true
	}
	if c := v.cont(); c != nil && c.consumed {
		return Value{kind: Ref, tag: c.Tag, n: -1}, true
	}
	return Value{}, false
}

// listGet returns memo entry i when it is a list not consumed (a frames
// list that a dict made before refers to again), marked shared as a memo
// get marks it: the general path, if the record goes there after all,
// gets it again and marks it the same.
func (d *Decoder) listGet(i int64) (Value, bool) {
	if i >= d.memoIdx.n {
		return Value{}, false
	}
	if slot := d.memoIdx.at(i); slot > consumedSlot {
		if v := d.vals[slot]; v.kind == List {
			if c := v.cont(); c != nil && !c.consumed {
				c.shared = true
				return v, true
			}
		}
	}
	return Value{}, false
}

// getArg reads the memo index of a memo get at b[p:]: n is the bytes
// the get takes, 0 when there is none whole.
func getArg(b []byte, p int) (i int64, n int) {
	switch {
	case b[p] == opLONG_BINGET && p+5 <= len(b):
		return int64(binary.LittleEndian.Uint32(b[p+1:])), 5
	case b[p] == opBINGET && p+2 <= len(b):
		return int64(b[p+1]), 2
	}
	return 0, 0
}

// scanRecord tries to read the dict whose EMPTY_DICT is at the buffer's
// pos, as RecordScanner describes. taken is false when the general path
// must run it; nothing has changed then.
func (d *Decoder) scanRecord(plan *RecordPlan, parent *Container, index int64) (taken bool, err error) {
	s := &d.src
	b := s.buf[s.pos:s.end] // b[0] is the EMPTY_DICT
	// The pair loop keeps d, b, p, plan and its counts in registers;
	// the rest is reached through d (a pointer apiece would be spilled
	// and reloaded).
	if d.sc.plan != plan {
		d.sc.plan = plan
	}
	if plan.gen != d.memoGen {
		plan.forget(d.memoGen)
	}
	// The counts and masks the loop carries stay in registers (through
	// d they would wait on the store of the last pair) until the end.
	var pairs, norder int
	var set, isInts uint32
	d.sc.items = d.sc.items[:0]
	d.rec.pend = d.rec.pend[:0]
	d.sc.lists = 0
	d.rec.keep = 0
	d.sc.put[0].what = putDict
	d.sc.nput = 1
	d.sc.next = d.memoIdx.n
	d.sc.strs = 0
	d.sc.longest = 0
	p := 1
	n, ok := memoPut(b, p, d.sc.next)
	if !ok || n == 0 {
		return false, nil
	}
	p += n
	d.sc.next++
	if p >= len(b) || b[p] != opMARK {
		return false, nil
	}
	p++
	for {
		// Most pairs: the key found at this position in the last record
		// (a memo get, recognised by its bytes), and an int, a memo get
		// of a scalar, the str memoized last again (PyTorch's "N/A") or
		// an empty list before SETITEMS (no frames). Taken here with few
		// checks; scanPair reads every other pair, and these too near
		// the buffer's end.
		// A loop of its own with no call in it, so that the compiler
		// keeps its values in registers (scanPair's call would spill
		// them at every pair).
		for p+24 <= len(b) && pairs < maxScanPairs {
			// w: the pair's first 24 bytes, enough for all but a str; its
			// fixed offsets need no bounds checks. (Made by pointer
			// arithmetic: the condition above is the bounds check,
			// which the compiler would repeat on a slice expression.)
			w := (*[24]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), p))
			k := &plan.at[pairs&(maxScanPairs-1)]
			if binary.LittleEndian.Uint64(w[0:8])&k.mask != k.raw {
				// SETITEMS matches no key.
				if w[0] == opSETITEMS {
					p++
					goto end
				}
				goto general
			}
			bit := k.bit // 0 for a key not in the plan
			if set&bit != 0 {
				goto general
			}
			// x: the value's first 16 bytes (k.len is 2 or 5).
			o := int(k.len & 7)
			x := (*[16]byte)(w[o : o+16])
			// A value's memo put is taken only where Python's picklers
			// write one (the "N/A" str, a list); any other put follows
			// an int or a memo get, where the next pair's key is to be,
			// and sends the record to the general path there.
			var n int64 // an int's value
			var m int   // the value's bytes
			switch x[0] {
			case opLONG1:
				l := uint(x[1])
				if l-1 >= 8 { // 0 or above 8
					goto general
				}
				shift := 64 - 8*l
				n = int64(binary.LittleEndian.Uint64(x[2:10])<<shift) >> shift
				m = 2 + int(l)
			case opBININT1:
				n, m = int64(x[1]), 2
			case opBININT2:
				n, m = int64(binary.LittleEndian.Uint16(x[1:3])), 3
			case opBININT:
				n, m = int64(int32(binary.LittleEndian.Uint32(x[1:5]))), 5
			default:
				goto other
			}
			if bit != 0 {
				set |= bit
				isInts |= bit
				f := k.field & (MaxRecordFields - 1)
				d.rec.Order[norder&(MaxRecordFields-1)] = f
				norder++
				d.rec.Int[f] = n
			}
			pairs++
			p += o + m
			continue
		other:
			var v Value
			switch x[0] {
			case opLONG_BINGET, opBINGET:
				i, m := int64(binary.LittleEndian.Uint32(x[1:5])), 5
				if x[0] == opBINGET {
					i, m = int64(x[1]), 2
				}
				if i >= d.memoIdx.n {
					goto general
				}
				// memoIndex.at, but a packed chunk (a call) is left
				// to scanPair.
				c := d.memoIdx.chunks[i>>memoChunkBits]
				if c == nil {
					goto general
				}
				slot := c[uint16(i)]
				if slot <= consumedSlot {
					goto general
				}
				if v = d.vals[slot]; v.kind >= List && v.kind != Ref {
					goto general
				}
				p += o + m
			case opSHORT_BINUNICODE:
				// The str memoized last, again, compared as a word (x
				// holds its 8 bytes and the put after); a longer one
				// is left to scanPair.
				n := int(x[1])
				if d.lastSlot == 0 || n != len(d.lastStr) || n > 8 ||
					binary.LittleEndian.Uint64(x[2:10])&(1<<(8*uint(n))-1) != d.lastWord || x[(2+n)&15] != opMEMOIZE {
					goto general
				}
				v = strValue(Str, d.lastStr)
				d.sc.strs += int64(n)
				d.sc.longest = max(d.sc.longest, n)
				d.sc.next++
				p += o + 3 + n
				d.sc.put[d.sc.nput].what = putLast
				d.sc.nput++
			case opEMPTY_LIST:
				if x[1] != opMEMOIZE || x[2] != opSETITEMS {
					goto general
				}
				from := len(d.sc.items)
				off := s.base + int64(s.pos+p+o)
				v = Value{kind: List, n: int64(from) | int64(from)<<32}
				d.sc.next++
				p += o + 2
				pt := &d.sc.put[d.sc.nput]
				d.sc.nput++
				pt.what, pt.field, pt.from, pt.to, pt.off = putList, k.field, int32(from), int32(from), off
				if bit != 0 {
					d.rec.listOff[k.field&(MaxRecordFields-1)] = off
				}
			default:
				goto general
			}
			if bit != 0 {
				set |= bit
				f := k.field & (MaxRecordFields - 1)
				d.rec.Order[norder&(MaxRecordFields-1)] = f
				norder++
				d.rec.Val[f] = v
			}
			pairs++
		}
		if p >= len(b) {
			return false, nil
		}
		if b[p] == opSETITEMS {
			p++
			break
		}
		if pairs >= maxScanPairs {
			return false, nil
		}
	general:
		var ok bool
		var st pairState
		if p, st, ok = d.scanPair(b, p, pairState{pairs, norder, set, isInts}); !ok {
			return false, nil
		}
		pairs, norder, set, isInts = st.pairs, st.norder, st.set, st.isInts
	}
end:
	d.rec.Pairs, d.rec.Set, d.rec.IsInt, d.rec.NOrder = pairs, set, isInts, norder
	if pairs == 0 || p >= len(b) {
		return false, nil
	}
	switch b[p] {
	case opEMPTY_DICT, opAPPEND, opAPPENDS:
	default:
		return false, nil
	}
	// The general path's stack would hold the dict, its pairs and a
	// list's elements, under two MARKs.
	// Its dict would hold 2*Pairs values and its lists their elements
	// against MaxValues, and each str would be checked against MaxString.
	if len(d.stack)+2*d.rec.Pairs+len(d.sc.items)+2 > d.lim.MaxStack || len(d.marks)+2 > d.lim.MaxStack || d.sc.next-1 > d.lim.MaxMemo || d.stringBytes+d.sc.strs > d.lim.MaxStringBytes ||
		int64(len(d.sc.items)) > d.lim.MaxItems || int64(d.rec.Pairs) > d.lim.MaxItems || int64(d.sc.longest) > d.lim.MaxString ||
		d.held+int64(len(d.sc.items))+2*int64(d.rec.Pairs) > d.lim.MaxValues {
		return false, nil // the general path reports it
	}
	// Taken, unless ScannedRecord declines it.
	d.op = s.base + int64(s.pos)
	d.curOp = opEMPTY_DICT
	d.rec.Offset = d.op
	d.rec.items = d.sc.items
	// The lists under the plan's keys, which ScannedRecord may convert:
	// their elements, by field (only when there are any).
	var lists [MaxRecordFields]int32
	for m := d.sc.lists; m != 0; m &= m - 1 {
		f := bits.TrailingZeros32(m)
		v := d.rec.Val[f]
		lists[f] = int32(v.n>>32) - int32(uint32(v.n))
	}
	v, err := d.rs.ScannedRecord(parent, index, &d.rec)
	if err != nil {
		d.rec.converted = false
		if err == ErrNotScanned {
			return false, nil
		}
		return true, err
	}
	d.stringBytes += d.sc.strs
	// What the general path's dict and lists would hold until the dict
	// is consumed (ReleaseRecord): its pairs, and the elements of its
	// lists but those a Handler converted (and so released).
	held := 2*int64(d.rec.Pairs) + int64(len(d.sc.items))
	for m := d.sc.lists; m != 0; m &= m - 1 {
		f := bits.TrailingZeros32(m)
		if d.rec.Val[f].kind != List && d.rec.keep&(1<<f) == 0 { // made as it is, or by ListContainer, or kept (KeepHeld): held
			held -= int64(lists[f])
		}
	}
	d.held += held
	idx := d.memoIdx.n
	// The memo puts, in order at the next indices. The common ones add
	// their slot to the memo index here (memoIndex.add, written out:
	// scanRecord is too large for the compiler to inline it).
	m := &d.memoIdx
	for i := range d.sc.put[:d.sc.nput] {
		pt := &d.sc.put[i]
		var slot uint32
		switch pt.what {
		case putDict:
			if !d.rec.converted {
				slot = consumedSlot
				break
			}
			// Converted: the memo yields v, and the pairs are not held
			// (added to held above).
			d.rec.converted = false
			d.held -= 2 * int64(d.rec.Pairs)
			if err := d.put(idx, v); err != nil {
				return true, err
			}
		case putLast:
			slot = d.lastSlot // as Run's MEMOIZE
		case putValue:
			if pt.v.kind == Str && d.lastSlot != 0 && pt.v.str() == d.lastStr {
				slot = d.lastSlot // as Run's MEMOIZE
			} else if err := d.put(idx, pt.v); err != nil {
				return true, err
			}
		case putList:
			lv := Value{kind: List, n: -1}
			if pt.field >= 0 {
				lv = d.rec.Val[pt.field]
			}
			if lv.kind == List && lv.p == nil {
				// Not converted: the list itself (held above).
				if len(d.rec.pend) > 0 {
					d.rec.fillPending(d.sc.items)
				}
				lv = d.scannedList(pt.off, d.sc.items[pt.from:pt.to])
			}
			if lv.kind == Ref && d.lastRefSlot != 0 && lv == d.lastRef {
				// What a converted list became, again (the frames
				// list's stack): the slot put would find for it, idx
				// being the next index (the scan runs on a dense memo).
				slot = d.lastRefSlot
			} else if err := d.put(idx, lv); err != nil {
				return true, err
			}
		}
		if slot != 0 {
			if c, j := m.cur, uint64(m.n-m.curBase); j < uint64(len(c)) {
				c[j] = slot
				m.n++
			} else {
				m.grow(slot)
			}
		}
		idx++
	}
	s.pos += p
	d.stack = append(d.stack, v)
	return true, nil
}

// ListContainer makes field f's list, one the scan read (Record.List), as
// the container the general path would have made and sets rec.Val[f] to
// it, for a Handler that keeps it to convert later, as the general path's
// dict would hold it: the memo yields it, and its elements count against
// Limits.MaxValues until the Handler releases it (Release). ok is false
// when f holds no such list. Only ScannedRecord may call it, with its
// Record.
func (d *Decoder) ListContainer(rec *Record, f int) (v Value, ok bool) {
	items, off, ok := rec.List(f)
	if !ok {
		return Value{}, false
	}
	v = d.scannedList(off, items)
	rec.Val[f] = v
	return v, true
}

// scannedList makes a list the scan read, of items, whose EMPTY_LIST is
// at off, as the container the general path makes (its elements are
// counted as held by the scan).
func (d *Decoder) scannedList(off int64, items []Value) Value {
	c := d.newContainer(List)
	c.Offset = off
	if cap(c.Items) < len(items) {
		d.room(c, len(items))
	}
	c.Items = append(c.Items, items...)
	c.n = int64(len(items))
	return containerValue(List, c)
}

// ReleaseRecord is Release for a dict a scan read (RecordScanner): a
// Handler calls it with the Record's Pairs when Append consumes the Value
// ScannedRecord returned, as the general path releases a consumed dict's
// pairs, so that they no longer count against Limits.MaxValues.
func (d *Decoder) ReleaseRecord(pairs int) {
	d.held -= 2 * int64(pairs)
}

// ReleaseItems releases n elements of a scanned record's list kept held
// (Record.KeepHeld), as Release would the list's container.
func (d *Decoder) ReleaseItems(n int) {
	d.held -= int64(n)
}

// newContainer makes an empty container, reusing a consumed one as
// pushContainer does, without a Tag call.
func (d *Decoder) newContainer(k Kind) *Container {
	if n := len(d.pool); n > 0 {
		c := d.pool[n-1]
		d.pool = d.pool[:n-1]
		*c = Container{Kind: k, Items: c.Items[:0], Offset: d.op}
		return c
	}
	return &Container{Kind: k, Offset: d.op}
}

// shortStr returns b as a string, made once for a short str seen again
// (readStr's cache of recent short strings).
func (d *Decoder) shortStr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxShortStr {
		return string(b)
	}
	h := (len(b) + 31*int(b[0]) + 7*int(b[len(b)-1])) & (len(d.short) - 1)
	if t := d.short[h]; t == unsafe.String(unsafe.SliceData(b), len(b)) {
		return t
	}
	t := string(b)
	d.short[h] = t
	return t
}

// pairState is what scanRecord's loop carries from pair to pair: the pairs
// read, the fields in order, the fields set and those that are ints.
type pairState struct {
	pairs, norder int
	set, isInts   uint32
}

// scanPair reads the pair at b[p:] that scanRecord's short path did not
// take: any key (a memo get or a str) and any value the scan reads. It
// returns the offset after the pair and the updated state, ok false when
// the record must go to the general path. It is out of line so that
// scanRecord keeps fewer values live across calls (-0.6% of the
// instructions of analysing big_real when it was made so).
func (d *Decoder) scanPair(b []byte, p int, st pairState) (int, pairState, bool) {
	s := &d.src
	op := b[p]
	var n int
	var ok bool
	// The key: a memo get, mostly of the index found at this
	// position in the last record, or a str.
	var f int8
	switch op {
	case opBINGET, opLONG_BINGET:
		i, m := getArg(b, p)
		if m == 0 {
			return p, st, false
		}
		if k := &d.sc.plan.at[st.pairs]; k.len == uint8(m) && k.raw == keyWord(b, p, 0).raw {
			f = k.field
		} else {
			kv, ok := d.scanGet(i)
			if !ok || kv.kind != Str {
				return p, st, false
			}
			f = d.sc.plan.field(kv.str())
			*k = keyWord(b, p, f)
		}
		p += m
	case opSHORT_BINUNICODE:
		var text []byte
		if text, p, ok = d.scanShortStr(b, p); !ok {
			return p, st, false
		}
		f = d.sc.plan.field(unsafe.String(unsafe.SliceData(text), len(text)))
		if n, ok = memoPut(b, p, d.sc.next); !ok {
			return p, st, false
		} else if n > 0 {
			p += n
			d.sc.next++
			pt := &d.sc.put[d.sc.nput]
			d.sc.nput++
			pt.what, pt.v = putValue, strValue(Str, d.shortStr(text))
		}
	default:
		return p, st, false
	}
	bit := uint32(1) << (uint(f) & 31)
	if f >= 0 && st.set&bit != 0 {
		return p, st, false // a key twice: the general path keeps the later
	}
	if p >= len(b) {
		return p, st, false
	}
	// The value.
	var v Value
	isInt := false
	switch op = b[p]; op {
	case opBININT1:
		if p+2 > len(b) {
			return p, st, false
		}
		v, isInt = Value{kind: Int, n: int64(b[p+1])}, true
		p += 2
	case opBININT2:
		if p+3 > len(b) {
			return p, st, false
		}
		v, isInt = Value{kind: Int, n: int64(binary.LittleEndian.Uint16(b[p+1:]))}, true
		p += 3
	case opBININT:
		if p+5 > len(b) {
			return p, st, false
		}
		v, isInt = Value{kind: Int, n: int64(int32(binary.LittleEndian.Uint32(b[p+1:])))}, true
		p += 5
	case opLONG1:
		if p+2 > len(b) {
			return p, st, false
		}
		n := int(b[p+1])
		if n > 8 || p+2+n > len(b) {
			return p, st, false
		}
		var u uint64
		if n > 0 && p+10 <= len(b) {
			shift := 64 - 8*uint(n)
			u = uint64(int64(binary.LittleEndian.Uint64(b[p+2:])<<shift) >> shift)
		} else if n > 0 {
			for i := n - 1; i >= 0; i-- {
				u = u<<8 | uint64(b[p+2+i])
			}
			shift := 64 - 8*uint(n)
			u = uint64(int64(u<<shift) >> shift)
		}
		v, isInt = Value{kind: Int, n: int64(u)}, true
		p += 2 + n
	case opBINGET, opLONG_BINGET:
		i, m := getArg(b, p)
		if m == 0 {
			return p, st, false
		}
		p += m
		if v, ok = d.liveGet(i); !ok {
			if v, ok = d.scanGet(i); !ok {
				if v, ok = d.listGet(i); !ok {
					return p, st, false
				}
			}
		}
	case opNONE:
		p++
	case opNEWTRUE, opNEWFALSE:
		v = Value{kind: Bool, n: b2i(op == opNEWTRUE)}
		p++
	case opBINFLOAT:
		if p+9 > len(b) {
			return p, st, false
		}
		v = Value{kind: Float, n: int64(binary.BigEndian.Uint64(b[p+1:]))}
		p += 9
	case opSHORT_BINUNICODE:
		var text []byte
		if text, p, ok = d.scanShortStr(b, p); !ok {
			return p, st, false
		}
		v = strValue(Str, d.shortStr(text))
	case opEMPTY_LIST:
		// Its elements follow (MARK gets APPENDS, or get APPEND);
		// then a key or SETITEMS, which the loop checks, so nothing
		// more is added.
		off := s.base + int64(s.pos+p)
		p++
		if n, ok = memoPut(b, p, d.sc.next); !ok {
			return p, st, false
		}
		p += n
		from := len(d.sc.items)
		var key uint64
		if p < len(b) && b[p] == opMARK {
			p++
			start := p
			if end, items, k, hit := d.knownList(b, start); hit {
				key, p = k, end
				if f >= 0 {
					// Room for them, copied if they are read.
					at := len(d.sc.items)
					d.sc.items = slices.Grow(d.sc.items, len(items))[:at+len(items)]
					d.rec.pend = append(d.rec.pend, pendingItems{at, items})
				} else {
					d.sc.items = append(d.sc.items, items...)
				}
			}
			for p < len(b) && b[p] != opAPPENDS {
				_, m := getArg(b, p)
				if m == 0 || p-start >= 5*maxScanItems {
					return p, st, false
				}
				p += m
			}
			if p >= len(b) {
				return p, st, false
			}
			if key == 0 {
				if key, ok = d.scanListItems(b[start:p]); !ok {
					return p, st, false
				}
			}
			p++
		} else if p < len(b) {
			// An element and APPEND, or the d.sc.next key.
			if i, m := getArg(b, p); m > 0 && p+m < len(b) && b[p+m] == opAPPEND {
				it, ok := d.scanGet(i)
				if !ok {
					return p, st, false
				}
				d.sc.items = append(d.sc.items, it)
				p += m + 1
			}
		}
		if len(d.sc.items) > maxScanItems {
			return p, st, false
		}
		v = Value{kind: List, n: int64(from) | int64(len(d.sc.items))<<32}
		if n > 0 {
			d.sc.next++
			pt := &d.sc.put[d.sc.nput]
			d.sc.nput++
			pt.what, pt.field, pt.from, pt.to, pt.off = putList, f, int32(from), int32(len(d.sc.items)), off
		}
		if f >= 0 {
			d.rec.listOff[f] = off
			d.rec.listKey[f] = key
			if len(d.sc.items) > from {
				d.sc.lists |= 1 << f
			}
		}
		n = 0 // memoized above
	default:
		return p, st, false
	}
	if op != opEMPTY_LIST {
		if n, ok = memoPut(b, p, d.sc.next); !ok {
			return p, st, false
		} else if n > 0 {
			p += n
			d.sc.next++
			pt := &d.sc.put[d.sc.nput]
			d.sc.nput++
			pt.what, pt.v = putValue, v
		}
	}
	if f >= 0 {
		st.set |= bit
		d.rec.Order[st.norder&(MaxRecordFields-1)] = f
		st.norder++
		if isInt {
			d.rec.Int[f] = v.n
			st.isInts |= bit
		} else {
			d.rec.Val[f] = v
		}
	}
	st.pairs++
	return p, st, true
}

// fillList reads, when it is all buffered, the rest of the making of the
// untagged list the general path has just pushed (its EMPTY_LIST at the
// buffer's pos-1) in the shape Python's picklers write a list of memo gets
// of scalars and Refs (a frames list of frame Refs, outside the records a
// scan takes: a segment's, say):
//
//	[memo put] MARK (BINGET | LONG_BINGET)... APPENDS
//
// It does what those opcodes would one by one (the memo put, the elements
// stored at once as appendsOp stores a MARK's items in an untagged list,
// counted as held), without pushing them, and keys the list by its
// elements' bytes as the scan's lists are keyed (Container.ListKey), so
// that a Handler converting it takes what it made of the same elements
// before. Anything else, or a limit the general path would report, is left
// to the general path: nothing has changed then.
func (d *Decoder) fillList() {
	s := &d.src
	c := d.stack[len(d.stack)-1].cont()
	if c == nil || c.Tag != 0 || d.sparse != nil || d.memoIdx.n > d.lim.MaxMemo {
		return
	}
	b := s.buf[s.pos:s.end]
	p, ok := memoPut(b, 0, d.memoIdx.n)
	if !ok || p == 0 || p >= len(b) || b[p] != opMARK || len(d.marks) >= d.lim.MaxStack {
		return
	}
	p++
	start, n := p, 0
	d.sc.items = d.sc.items[:0]
	d.rec.pend = d.rec.pend[:0]
	var key uint64
	var items []Value
	if end, known, k, hit := d.knownList(b, start); hit {
		// A list given before (each segment's frames list, between its
		// blocks' lists): its end, elements and key without a walk of
		// its gets, which would stop at the same APPENDS.
		p, n, key, items = end, len(known), k, known
	} else {
		for p < len(b) && b[p] != opAPPENDS {
			_, m := getArg(b, p)
			if m == 0 || n >= maxScanItems {
				return
			}
			p += m
			n++
		}
	}
	if p >= len(b) || n == 0 || len(d.stack)+n > d.lim.MaxStack ||
		int64(len(c.Items)+n) > d.lim.MaxItems || d.held+int64(n) > d.lim.MaxValues {
		return
	}
	if items == nil {
		if key, ok = d.scanListItems(b[start:p]); !ok {
			return
		}
		items = d.sc.items
	}
	// Taken: the memo put, then the elements.
	d.op, d.curOp = s.base+int64(s.pos), b[0]
	if err := d.put(d.memoIdx.n, d.stack[len(d.stack)-1]); err != nil {
		return // not reached: the index was checked; the general path reports it
	}
	d.held += int64(n)
	c.n += int64(n)
	if cap(c.Items)-len(c.Items) < n {
		d.room(c, n)
	}
	c.Items = append(c.Items, items...)
	c.key, c.keyN = key, c.n
	s.pos += p + 1
}
