// Package pickle decodes the data subset of Python's pickle format,
// protocols 0 to 5 (the format of Python's Lib/pickle.py and
// Modules/_pickle.c; protocol 5 is what Python 3.14 writes by default), as a
// stream, and runs nothing.
//
// Only opcodes that build plain data are accepted: None, bools, ints of any
// size, floats, str, bytes, bytearray, list, tuple, dict, set, frozenset,
// and the memo (PUT, GET, MEMOIZE) that lets one object appear in several
// places. Opcodes that would import or call Python code (GLOBAL,
// STACK_GLOBAL, REDUCE, INST, OBJ, NEWOBJ, NEWOBJ_EX, BUILD, PERSID,
// BINPERSID, EXT1, EXT2, EXT4) and out-of-band buffers (NEXT_BUFFER) are
// refused with an error that names the opcode and its byte offset. The
// refusal ends decoding: a pickle is never half accepted.
//
// Decoding streams: a Handler sees each element as it is added to a list
// and may consume it (convert it and let it go) instead of storing it, so a
// list of a million records need not be held in memory. A RecordScanner
// goes further: the flat dicts of the lists it names are read straight
// from the input bytes into typed fields, without a Value or a container
// being made for them (scan.go). Allocation is bounded by Limits, and a
// length field never makes the decoder allocate more than the input
// actually holds.
package pickle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/gpuleak/gpuleak/parse"
)

// Limits bound what one pickle may make the decoder allocate. A zero field
// takes the default.
type Limits struct {
	// MaxString is the longest str, bytes or bytearray, in bytes. Default 256 MiB.
	MaxString int64
	// MaxIntBytes is the longest LONG1/LONG4 integer, in bytes. Default 1024.
	MaxIntBytes int
	// MaxLine is the longest text argument of a protocol 0 opcode. Default 64 KiB.
	MaxLine int
	// MaxStack is the most values the stack may hold. Default 1<<22.
	MaxStack int
	// MaxItems is the most elements one stored (not consumed) container may hold. Default 1<<22.
	MaxItems int64
	// MaxValues is the most values all stored containers may hold
	// together (24 bytes each). Default 1<<22: real snapshots hold tens of
	// thousands, since their records stream. Consumed containers and those
	// a Handler released do not count.
	MaxValues int64
	// MaxStringBytes is the most bytes of str, bytes and bytearray the
	// pickle may create in all. Pickle writers memoize strings, so a real
	// file creates few. Default 1 GiB.
	MaxStringBytes int64
	// MaxMemo is the highest memo index accepted. Default 1<<32-1.
	MaxMemo int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxString <= 0 {
		l.MaxString = 256 << 20
	}
	if l.MaxIntBytes <= 0 {
		l.MaxIntBytes = 1024
	}
	if l.MaxLine <= 0 {
		l.MaxLine = 64 << 10
	}
	if l.MaxStack <= 0 {
		l.MaxStack = 1 << 22
	}
	if l.MaxItems <= 0 {
		l.MaxItems = 1 << 22
	}
	if l.MaxValues <= 0 {
		l.MaxValues = 1 << 22
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = 1 << 30
	}
	if l.MaxMemo <= 0 {
		l.MaxMemo = 1<<32 - 1
	}
	return l
}

// Handler watches containers being built.
type Handler interface {
	// Tag is called when a container is created, with the container it
	// will most likely be stored in, as far as the stack shows: parent is
	// nil when that cannot be told; key is its dict key when parent is a
	// dict; index is its position when parent is a list. Tag may set c.Tag.
	// The guess can be wrong for hand-made pickles, so a Handler must check
	// in Append that a container really is where it expected.
	Tag(c, parent *Container, key Value, index int64)
	// Append is called before item is stored at position index of a list
	// the Handler tagged (list.Tag != 0; APPEND, APPENDS, LIST, or, for a
	// dict element of a list marked Early, the EMPTY_DICT that begins the
	// next element: Decoder.appendEarly): untagged
	// lists, such as the frames list of each trace entry, are filled
	// without a call per element. Returning consume=true keeps the item out of
	// the list; later memo references to a consumed container yield a Ref
	// with the container's tag and id -1, unless the Handler called
	// Decoder.Replace. The decoder may reuse a consumed container once
	// Append returns, so a Handler must not keep it (containers inside it
	// are not reused). A non-nil error stops decoding.
	Append(list *Container, index int64, item Value) (consume bool, err error)
}

// PairHandler is a Handler that also sees the pairs stored in the dicts
// it tagged, as SETITEM and SETITEMS store them: a record can then be
// converted while its values are still in the CPU's cache, rather than
// when the list it belongs to receives it, up to a thousand records later
// (Python's pickler appends list elements in batches of 1000). The pairs
// are still stored in the dict, and more may follow; the Handler must
// check in Append that what it converted is the whole dict (say, by
// counting pairs), and must not report errors from SetItems, which may run
// for a dict that never reaches its list.
type PairHandler interface {
	Handler
	// SetItems is called after pairs (key, value, key, value, ...) were
	// stored at the end of dict.Items, when dict.Tag is not 0. pairs is
	// that part of dict.Items: SetItems may replace a value there with
	// what it converted it to (a Ref), say to Recycle the container.
	SetItems(dict *Container, pairs []Value)
}

// ErrCodeOpcode is wrapped by the error for an opcode that would run code.
var ErrCodeOpcode = parse.NewKind("opcode would import or call Python code")

// ErrTruncated is wrapped by the error for input that ends inside a pickle.
var ErrTruncated = parse.NewKind("unexpected end of input")

// Decoder decodes one pickle from a reader.
type Decoder struct {
	name string
	src  source
	h    Handler
	ph   PairHandler   // h, when it is one
	rs   RecordScanner // h, when it is one
	// noFill turns fillList off (SetListFill).
	noFill bool

	rec Record // scanRecord's
	sc  scanState
	// earlyDepth is len(marks) when appendEarly handed on an element
	// above the top MARK, 0 when it has not since that MARK came: only
	// APPENDS may then close it (dropMark).
	earlyDepth int
	lc         listCache // the record scan's lists, by their bytes
	memoGen    uint64    // counts memo indices set again (PUT), which invalidates a RecordPlan's keys
	lim        Limits

	stack []Value
	marks []int // stack length at each MARK

	memoIdx memoIndex        // memo index -> slot in vals, 0 when unset
	sparse  map[int64]uint32 // memo indices far beyond len(memoIdx)
	vals    []Value          // slot 0 unused, slot 1 the consumed marker
	free    []uint32
	// same maps a memoized scalar (a str, a Ref a Handler put in place of
	// a container) to the slot that already holds an equal one: PyTorch
	// memoizes a "N/A" str and a frames list in each trace entry, so
	// without sharing the memo holds a slot per entry. Shared slots are
	// never freed or overwritten.
	same        map[scalarKey]uint32
	sameStr     map[string]uint32 // strs, by text
	sameRef     map[refKey]uint32 // Refs
	sameID      map[uint64]uint32 // Refs with a small id (most), keyed by refID
	sameN       int               // entries of the three maps
	lastStr     string            // the str last found in sameStr, and its slot
	lastSlot    uint32
	lastWord    uint64 // lastStr's bytes as a little-endian word, when it has at most 8
	lastRef     Value  // the Ref last found in sameID or sameRef, and its slot
	lastRefSlot uint32
	// refSlots holds Refs found in sameID before and their slots, by
	// refSlot: a snapshot with many segments alternates a few Refs (each
	// block's converted frames list, each segment's blocks list replaced
	// by tagDone's Ref), which lastRef alone misses. Shared slots are
	// never freed, so an entry stays true.
	refSlots [refSlotsN]refSlotEntry

	spare spareStore // item storage of released containers, for reuse

	short [16]string // recent short strings, by a hash of their bytes (readStr)

	pool []*Container // consumed containers nothing else refers to, for reuse

	held        int64 // values stored in containers, against Limits.MaxValues
	stringBytes int64 // bytes of strings created, against Limits.MaxStringBytes

	proto  int
	op     int64 // offset of the opcode being run
	curOp  byte  // the opcode being run
	pause  bool
	done   bool
	result Value
}

const consumedSlot = 1

// Bounds of the pool of reusable containers.
const (
	maxPool        = 4096
	maxPooledItems = 256
)

// maxShortStr is the longest string readStr looks for among recent ones.
const maxShortStr = 32

// maxSame bounds the distinct scalars whose memo slots are shared: beyond
// it, a scalar takes a slot of its own, as it did before sharing.
const maxSame = 1 << 16

// scalarKey is a memoized scalar's identity: equal keys are equal values.
type scalarKey struct {
	kind Kind
	tag  uint16
	n    int64
	s    string
}

type refKey struct {
	tag uint16
	n   int64
}

// refID packs a Ref's tag and id into one word when the id is from -1 to
// 2^47-1 (a Handler's ids count up from 0; -1 says "none", as for a
// container read and done with): a map with a word key is about four
// times faster than one with a struct key. -1 takes the top bit, which no
// other id's word sets.
func refID(v Value) (uint64, bool) {
	if v.n == -1 {
		return 1<<63 | uint64(v.tag), true
	}
	if v.n < 0 || v.n >= 1<<47 {
		return 0, false
	}
	return uint64(v.n)<<16 | uint64(v.tag), true
}

// refSlotsN is the number of Decoder.refSlots entries.
const refSlotsN = 16

// refSlotEntry is a Ref's refID and the slot sameID holds for it; slot 0
// is no entry.
type refSlotEntry struct {
	id   uint64
	slot uint32
}

// refSlot returns the refSlots entry for refID id: its tag and the low
// bits of its id.
func refSlot(id uint64) int {
	return int((id ^ id>>16 ^ id>>19) & (refSlotsN - 1))
}

// shareable reports whether v is a scalar whose memo slot may be shared:
// immutable, compared by value.
func shareable(v Value) bool {
	return v.kind < List || v.kind == Ref
}

// NewDecoder returns a Decoder reading from r. name is the input's name for
// error messages; h may be nil.
func NewDecoder(r io.Reader, name string, h Handler, lim Limits) *Decoder {
	d := &Decoder{
		name: name,
		src:  newSource(r),
		h:    h,
		lim:  lim.withDefaults(),
		vals: make([]Value, 2, 1024),
	}
	d.ph, _ = h.(PairHandler)
	d.rs, _ = h.(RecordScanner)
	return d
}

// Protocol is the protocol named by the PROTO opcode (0 before one is seen).
func (d *Decoder) Protocol() int { return d.proto }

// SetListFill turns on or off (it is on) the reading of a list of memo
// gets at once, keyed by its elements (Container.ListKey), which a
// Decoder whose Handler is a RecordScanner does; off, each opcode runs
// on its own, for comparing the two.
func (d *Decoder) SetListFill(on bool) { d.noFill = !on }

// Offset is the byte offset of the opcode being run, or of the end of the
// pickle once decoding is done.
func (d *Decoder) Offset() int64 { return d.op }

// Pause asks Run to return after the current opcode. A Handler calls it
// when it has output ready.
func (d *Decoder) Pause() { d.pause = true }

// Replace makes later memo references to c yield v. A Handler uses it to
// swap a container it has converted for something small, such as a Ref
// holding an interned id, so that the container's memory can be released.
func (d *Decoder) Replace(c *Container, v Value) {
	if c.memo == 0 {
		return
	}
	slot := d.memoSlot(c.memo - 1)
	if slot <= consumedSlot || d.vals[slot].cont() != c {
		return
	}
	if shareable(v) {
		if s, ok := d.sameSlot(v); ok {
			// Many entries share this replacement (the frames list of
			// each trace entry becomes one of a few thousand stacks):
			// the container's own slot is given back.
			d.setMemoSlot(c.memo-1, s)
			d.vals[slot] = Value{}
			d.free = append(d.free, slot)
			return
		}
	}
	d.vals[slot] = v
}

// Release drops a container's items once a Handler has converted it, so
// that their memory no longer counts against Limits.MaxValues. The item
// storage serves later containers.
func (d *Decoder) Release(c *Container) {
	d.held -= int64(len(c.Items))
	d.spare.put(c.Items)
	c.Items = nil
}

// spareStore keeps the item storage of released containers by size
// class, class k holding capacities 2^k to 2^(k+1)-1, so that a container
// that needs room for n items (known at its first APPENDS or SETITEMS)
// gets storage that holds them. Handed out in release order instead, as
// it was, a frames list of 46 items mostly got a dict's 20 and grew by a
// new allocation: on a snapshot of many blocks (each with a frames list)
// that was 120 MB allocated per 36 MB read.
//
// Each class keeps at most maxSpareClass storages: with one bound for all
// (maxSpare), storage of sizes rarely asked for (a consumed dict's, kept
// with it in the pool, or a long list's) filled the store and a frames
// list's could no longer be kept.
type spareStore struct {
	by [spareClasses][][]Value
}

// spareClasses covers capacities up to maxPooledItems.
const spareClasses = 9 // bits.Len(maxPooledItems)

// maxSpareClass bounds the storages of one class. Python's pickler
// appends a list's elements 1,000 at a time, so a batch of segments
// (each a dict with a blocks list, block dicts and frames lists) releases
// 8,000 containers at once on a snapshot of many blocks; 512 a class kept
// too few of them. What the store holds never exceeds what the decoder
// held at once before (Limits.MaxValues bounds that).
const maxSpareClass = 4096

// put keeps s's storage, unless it is empty, too large or its class full.
func (p *spareStore) put(s []Value) {
	c := cap(s)
	if c == 0 || c > maxPooledItems {
		return
	}
	k := bits.Len(uint(c)) - 1
	if len(p.by[k]) >= maxSpareClass {
		return
	}
	p.by[k] = append(p.by[k], s[:0])
}

// take returns empty storage for at least need items (1 to
// maxPooledItems), nil when none is kept.
func (p *spareStore) take(need int) []Value {
	k := bits.Len(uint(need - 1)) // the class whose every capacity is at least need
	if k > 0 {
		// The class below holds some that fit: its latest is looked at.
		if b := p.by[k-1]; len(b) > 0 && cap(b[len(b)-1]) >= need {
			return p.pop(k - 1)
		}
	}
	for ; k < spareClasses; k++ {
		if len(p.by[k]) > 0 {
			return p.pop(k)
		}
	}
	return nil
}

// pop takes the storage class k kept last (it has one).
func (p *spareStore) pop(k int) []Value {
	b := p.by[k]
	p.by[k] = b[:len(b)-1]
	return b[len(b)-1]
}

// room makes c's storage hold n more items: from the spare store when it
// has storage that fits, else newly allocated with a power-of-two
// capacity (so that, released, it serves any container of its class).
// Past maxPooledItems append grows it as usual.
func (d *Decoder) room(c *Container, n int) {
	need := len(c.Items) + n
	if need > maxPooledItems || n <= 0 {
		return
	}
	s := d.spare.take(need)
	if s == nil {
		s = make([]Value, 0, 1<<bits.Len(uint(need-1)))
	}
	s = append(s, c.Items...)
	d.spare.put(c.Items)
	c.Items = s
}

// Recycle takes back a container a Handler has converted, released
// (Release) and replaced (Replace), and to which it holds no Value any
// more, for reuse by a later container: a snapshot makes a frames list
// per trace entry, a million allocations otherwise. A container that may
// be referenced elsewhere is left alone: one fetched from the memo or
// duplicated, one the memo still yields, one not released, or one already
// consumed or recycled.
func (d *Decoder) Recycle(c *Container) {
	if c.shared || c.consumed || c.Items != nil || len(d.pool) >= maxPool {
		return
	}
	if c.memo != 0 {
		if slot := d.memoSlot(c.memo - 1); slot > consumedSlot && d.vals[slot].cont() == c {
			return
		}
	}
	c.consumed = true
	d.pool = append(d.pool, c)
}

// strWord returns the bytes of t as a little-endian word, 0 when t has
// more than 8.
func strWord(t string) uint64 {
	if len(t) > 8 {
		return 0
	}
	var w uint64
	for i := len(t) - 1; i >= 0; i-- {
		w = w<<8 | uint64(t[i])
	}
	return w
}

// sameSlot returns the slot shared by scalars equal to v, making one when
// there is none yet and the table has room; ok is false when v must take
// a slot of its own.
func (d *Decoder) sameSlot(v Value) (uint32, bool) {
	// Strs and Refs, the scalars snapshots memoize by the million, have
	// maps of their own with cheaper keys; a str or a Ref repeated entry
	// after entry ("N/A", an empty frames list once converted) is found
	// without hashing.
	switch v.kind {
	case Str:
		t := v.str()
		if d.lastSlot != 0 && t == d.lastStr {
			return d.lastSlot, true
		}
		s, ok := sameIn(d, &d.sameStr, t, v)
		if ok {
			d.lastStr, d.lastSlot, d.lastWord = t, s, strWord(t)
		}
		return s, ok
	case Ref:
		if d.lastRefSlot != 0 && v == d.lastRef {
			return d.lastRefSlot, true
		}
		var s uint32
		var ok bool
		if id, small := refID(v); small {
			e := &d.refSlots[refSlot(id)]
			if e.slot != 0 && e.id == id {
				d.lastRef, d.lastRefSlot = v, e.slot
				return e.slot, true
			}
			if s, ok = sameIn(d, &d.sameID, id, v); ok {
				*e = refSlotEntry{id, s}
			}
		} else {
			s, ok = sameIn(d, &d.sameRef, refKey{v.tag, v.n}, v)
		}
		if ok {
			d.lastRef, d.lastRefSlot = v, s
		}
		return s, ok
	}
	return sameIn(d, &d.same, d.scalarKey(v), v)
}

// sameIn returns the slot that *m holds for key k of scalar v, making one
// (newSame) and the map when there is none yet.
func sameIn[K comparable](d *Decoder, m *map[K]uint32, k K, v Value) (uint32, bool) {
	if s, ok := (*m)[k]; ok {
		return s, true
	}
	s, ok := d.newSame(v)
	if ok {
		if *m == nil {
			*m = make(map[K]uint32)
		}
		(*m)[k] = s
	}
	return s, ok
}

// newSame makes a slot for v that equal scalars will share, when the
// tables have room.
func (d *Decoder) newSame(v Value) (uint32, bool) {
	if d.sameN >= maxSame || uint64(len(d.vals)) >= math.MaxUint32 {
		return 0, false
	}
	d.sameN++
	s := uint32(len(d.vals))
	d.vals = append(d.vals, v)
	return s, true
}

func (d *Decoder) scalarKey(v Value) scalarKey {
	k := scalarKey{kind: v.kind, tag: v.tag, n: v.n}
	if v.kind == Bytes || v.kind == BigInt {
		k.s = v.str()
	}
	return k
}

// hold counts n more stored values against Limits.MaxValues.
func (d *Decoder) hold(n int) error {
	d.held += int64(n)
	if d.held > d.lim.MaxValues {
		return d.Errorf("the pickle holds more than %d values in its lists and dicts (a limit that protects memory)", d.lim.MaxValues)
	}
	return nil
}

// Buffered is the number of bytes read from the input but not decoded:
// after the STOP opcode, what follows the pickle in the decoder's buffer.
func (d *Decoder) Buffered() int { return d.src.end - d.src.pos }

// Result returns the decoded object once Run has reported done.
func (d *Decoder) Result() Value { return d.result }

// Errorf returns a *parse.Error at the current opcode.
func (d *Decoder) Errorf(format string, args ...any) error {
	return parse.Errorf(d.name, d.op, format, args...)
}

// Decode runs the whole pickle and returns its object.
func Decode(r io.Reader, name string, h Handler, lim Limits) (Value, error) {
	d := NewDecoder(r, name, h, lim)
	for {
		done, err := d.Run()
		if err != nil {
			return Value{}, err
		}
		if done {
			return d.result, nil
		}
	}
}

// Run decodes until the pickle's STOP opcode (done), until a Handler calls
// Pause, or until an error. Errors are *parse.Error values naming the byte
// offset of the opcode at fault; they wrap ErrCodeOpcode for refused
// opcodes and ErrTruncated for input that ends too soon.
func (d *Decoder) Run() (done bool, err error) {
	if d.done {
		return true, nil
	}
	d.pause = false
	s := &d.src
	for !d.pause {
		// The opcodes that make up most of a large pickle (memo gets,
		// small ints, MARK, MEMOIZE) run here when their argument is
		// already buffered; everything else, and every check, in step.
		if s.end-s.pos >= 5 {
			var err error
			d.op = s.base + int64(s.pos)
			op := s.buf[s.pos]
			switch fastOps[op] {
			case fBINGET, fLONG_BINGET:
				d.curOp = op
				var idx int64
				if op == opBINGET {
					idx = int64(s.buf[s.pos+1])
					s.pos += 2
				} else {
					idx = int64(binary.LittleEndian.Uint32(s.buf[s.pos+1:]))
					s.pos += 5
				}
				// Most memo gets fetch a scalar (a dict key, an action
				// name) or a Ref a Handler put in place of a container (a
				// frame): push it here; containers go through get.
				if idx < d.memoIdx.n && len(d.stack) < d.lim.MaxStack {
					if slot := d.memoIdx.at(idx); slot > consumedSlot {
						if v := d.vals[slot]; v.kind < List || v.kind == Ref {
							d.stack = append(d.stack, v)
							continue
						}
					}
				}
				err = d.get(idx)
			case fBININT1:
				err = d.push(Value{kind: Int, n: int64(s.buf[s.pos+1])})
				s.pos += 2
			case fBININT:
				err = d.push(Value{kind: Int, n: int64(int32(binary.LittleEndian.Uint32(s.buf[s.pos+1:])))})
				s.pos += 5
			case fLONG1:
				// Addresses and timestamps: up to 8 bytes, decoded in place.
				n := int(s.buf[s.pos+1])
				if n > 8 || s.end-s.pos < 2+n {
					err = d.step()
					break
				}
				var u uint64
				if n > 0 && s.end-s.pos >= 10 {
					// One load of 8 bytes; the n that are the int's
					// are shifted to the top and back, sign-extending.
					shift := 64 - 8*uint(n)
					u = uint64(int64(binary.LittleEndian.Uint64(s.buf[s.pos+2:])<<shift) >> shift)
				} else {
					for i := n - 1; i >= 0; i-- {
						u = u<<8 | uint64(s.buf[s.pos+2+i])
					}
					if n > 0 {
						shift := 64 - 8*uint(n)
						u = uint64(int64(u<<shift) >> shift)
					}
				}
				err = d.push(Value{kind: Int, n: int64(u)})
				s.pos += 2 + n
			case fEMPTY_DICT, fEMPTY_LIST:
				// A record and its frames list, once per trace entry.
				d.curOp = op
				k := Dict
				if op == opEMPTY_LIST {
					k = List
				} else if err = d.appendEarly(); err != nil {
					break
				} else if d.rs != nil && d.sparse == nil {
					// A record of a stream, read straight from the
					// buffer when it is flat (RecordScanner).
					if parent, _, index := d.parentAt(len(d.stack)); parent != nil && parent.Kind == List && parent.Tag != 0 {
						if plan := d.rs.RecordPlan(parent); plan != nil {
							// A batch's records follow one another under
							// its MARK (EMPTY_DICT right after the last
							// dict): the next is the list's next element,
							// scanned here without the loop's dispatch and
							// parentAt.
							m := len(d.marks) - 1
							chain := m >= 0 && d.marks[m] >= 1 && d.stack[d.marks[m]-1].cont() == parent
							var taken, some bool
							for {
								if taken, err = d.scanRecord(plan, parent, index); !taken {
									break
								}
								some = true
								if err != nil || !chain || d.pause || s.end-s.pos < 5 || s.buf[s.pos] != opEMPTY_DICT {
									break
								}
								if plan = d.rs.RecordPlan(parent); plan == nil {
									break
								}
								index++
							}
							if some {
								break
							}
						}
					}
				}
				s.pos++
				if err = d.pushContainer(k, nil); err == nil && k == List && d.rs != nil && !d.noFill {
					d.fillList() // its memo gets at once, when that is all it holds
				}
			case fSETITEMS:
				d.curOp = op
				s.pos++
				err = d.setItemsOp()
			case fAPPEND:
				// A segment's one block into its blocks list.
				d.curOp = op
				s.pos++
				err = d.appendOp()
			case fNEWBOOL:
				// A segment's is_expandable.
				d.curOp = op
				s.pos++
				err = d.push(Value{kind: Bool, n: b2i(op == opNEWTRUE)})
			case fAPPENDS:
				d.curOp = op
				s.pos++
				err = d.appendsOp()
			case fSHORT_BINUNICODE:
				d.curOp = op
				n := int64(s.buf[s.pos+1])
				s.pos += 2
				err = d.readStr(op, n)
			case fMARK:
				if len(d.marks) < d.lim.MaxStack {
					d.marks = append(d.marks, len(d.stack))
					s.pos++
					continue
				}
				err = d.step()
			case fMEMOIZE:
				if n := len(d.stack); n > d.floor() {
					s.pos++
					v := d.stack[n-1]
					if v.kind == Str && d.lastSlot != 0 && d.sparse == nil && d.memoIdx.n <= d.lim.MaxMemo && v.str() == d.lastStr {
						// The str memoized last, again ("N/A" in every
						// trace entry): the slot put would find for it.
						d.memoIdx.add(d.lastSlot)
						break
					}
					err = d.put(d.memoIdx.n, v)
					break
				}
				err = d.step()
			default:
				err = d.step()
			}
			if err != nil {
				return false, err
			}
			if d.done {
				return true, nil
			}
			continue
		}
		if err := d.step(); err != nil {
			return false, err
		}
		if d.done {
			return true, nil
		}
	}
	return false, nil
}

// The opcodes Run's fast loop takes, numbered densely so that its switch
// compiles to a jump table (a switch on the opcodes' own values is a
// search of a dozen compares, mispredicted often on a record's varying
// opcodes); 0 is every other opcode.
const (
	fOther = iota
	fBINGET
	fLONG_BINGET
	fBININT1
	fBININT
	fLONG1
	fEMPTY_DICT
	fEMPTY_LIST
	fSETITEMS
	fAPPENDS
	fSHORT_BINUNICODE
	fMARK
	fMEMOIZE
	fAPPEND
	fNEWBOOL
)

var fastOps = [256]uint8{
	opBINGET:           fBINGET,
	opLONG_BINGET:      fLONG_BINGET,
	opBININT1:          fBININT1,
	opBININT:           fBININT,
	opLONG1:            fLONG1,
	opEMPTY_DICT:       fEMPTY_DICT,
	opEMPTY_LIST:       fEMPTY_LIST,
	opSETITEMS:         fSETITEMS,
	opAPPENDS:          fAPPENDS,
	opSHORT_BINUNICODE: fSHORT_BINUNICODE,
	opMARK:             fMARK,
	opMEMOIZE:          fMEMOIZE,
	opAPPEND:           fAPPEND,
	opNEWTRUE:          fNEWBOOL,
	opNEWFALSE:         fNEWBOOL,
}

// Opcodes (Lib/pickletools.py names them all).
const (
	opMARK             = '('
	opSTOP             = '.'
	opPOP              = '0'
	opPOP_MARK         = '1'
	opDUP              = '2'
	opFLOAT            = 'F'
	opINT              = 'I'
	opBININT           = 'J'
	opBININT1          = 'K'
	opLONG             = 'L'
	opBININT2          = 'M'
	opNONE             = 'N'
	opPERSID           = 'P'
	opBINPERSID        = 'Q'
	opREDUCE           = 'R'
	opSTRING           = 'S'
	opBINSTRING        = 'T'
	opSHORT_BINSTRING  = 'U'
	opUNICODE          = 'V'
	opBINUNICODE       = 'X'
	opAPPEND           = 'a'
	opBUILD            = 'b'
	opGLOBAL           = 'c'
	opDICT             = 'd'
	opEMPTY_DICT       = '}'
	opAPPENDS          = 'e'
	opGET              = 'g'
	opBINGET           = 'h'
	opINST             = 'i'
	opLONG_BINGET      = 'j'
	opLIST             = 'l'
	opEMPTY_LIST       = ']'
	opOBJ              = 'o'
	opPUT              = 'p'
	opBINPUT           = 'q'
	opLONG_BINPUT      = 'r'
	opSETITEM          = 's'
	opTUPLE            = 't'
	opEMPTY_TUPLE      = ')'
	opSETITEMS         = 'u'
	opBINFLOAT         = 'G'
	opPROTO            = 0x80
	opNEWOBJ           = 0x81
	opEXT1             = 0x82
	opEXT2             = 0x83
	opEXT4             = 0x84
	opTUPLE1           = 0x85
	opTUPLE2           = 0x86
	opTUPLE3           = 0x87
	opNEWTRUE          = 0x88
	opNEWFALSE         = 0x89
	opLONG1            = 0x8a
	opLONG4            = 0x8b
	opBINBYTES         = 'B'
	opSHORT_BINBYTES   = 'C'
	opSHORT_BINUNICODE = 0x8c
	opBINUNICODE8      = 0x8d
	opBINBYTES8        = 0x8e
	opEMPTY_SET        = 0x8f
	opADDITEMS         = 0x90
	opFROZENSET        = 0x91
	opNEWOBJ_EX        = 0x92
	opSTACK_GLOBAL     = 0x93
	opMEMOIZE          = 0x94
	opFRAME            = 0x95
	opBYTEARRAY8       = 0x96
	opNEXT_BUFFER      = 0x97
	opREADONLY_BUFFER  = 0x98
)

// codeOps are refused: each would import a global or call one.
var codeOps = map[byte]string{
	opGLOBAL: "GLOBAL", opSTACK_GLOBAL: "STACK_GLOBAL", opREDUCE: "REDUCE", opINST: "INST",
	opOBJ: "OBJ", opNEWOBJ: "NEWOBJ", opNEWOBJ_EX: "NEWOBJ_EX", opBUILD: "BUILD",
	opPERSID: "PERSID", opBINPERSID: "BINPERSID", opEXT1: "EXT1", opEXT2: "EXT2", opEXT4: "EXT4",
}

func (d *Decoder) step() error {
	s := &d.src
	if s.pos >= s.end && !s.ensure(1) {
		d.op = s.offset()
		if s.err != nil && !errors.Is(s.err, io.EOF) {
			return &parse.Error{File: d.name, Offset: d.op, Msg: "read error", Err: s.err}
		}
		if d.op == 0 {
			return &parse.Error{File: d.name, Offset: 0, Msg: "empty input", Err: ErrTruncated}
		}
		return &parse.Error{File: d.name, Offset: d.op, Msg: "input ends before the pickle's STOP opcode", Err: ErrTruncated}
	}
	d.op = s.offset()
	op := s.buf[s.pos]
	d.curOp = op
	s.pos++
	switch op {
	case opBINGET:
		b, err := d.fixed(1)
		if err != nil {
			return err
		}
		return d.get(int64(b[0]))
	case opLONG_BINGET:
		b, err := d.fixed(4)
		if err != nil {
			return err
		}
		return d.get(int64(binary.LittleEndian.Uint32(b)))
	case opMEMOIZE:
		if len(d.stack) <= d.floor() {
			return d.Errorf("MEMOIZE with an empty stack")
		}
		return d.put(d.memoIdx.n, d.stack[len(d.stack)-1])
	case opBINPUT:
		b, err := d.fixed(1)
		if err != nil {
			return err
		}
		return d.putTop(int64(b[0]))
	case opLONG_BINPUT:
		b, err := d.fixed(4)
		if err != nil {
			return err
		}
		return d.putTop(int64(binary.LittleEndian.Uint32(b)))
	case opBININT1:
		b, err := d.fixed(1)
		if err != nil {
			return err
		}
		return d.push(Value{kind: Int, n: int64(b[0])})
	case opBININT2:
		b, err := d.fixed(2)
		if err != nil {
			return err
		}
		return d.push(Value{kind: Int, n: int64(binary.LittleEndian.Uint16(b))})
	case opBININT:
		b, err := d.fixed(4)
		if err != nil {
			return err
		}
		return d.push(Value{kind: Int, n: int64(int32(binary.LittleEndian.Uint32(b)))})
	case opLONG1:
		b, err := d.fixed(1)
		if err != nil {
			return err
		}
		return d.readLong(int64(b[0]))
	case opLONG4:
		b, err := d.fixed(4)
		if err != nil {
			return err
		}
		n := int64(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 {
			return d.Errorf("LONG4 with negative length %d", n)
		}
		return d.readLong(n)
	case opSHORT_BINUNICODE, opSHORT_BINBYTES, opSHORT_BINSTRING:
		b, err := d.fixed(1)
		if err != nil {
			return err
		}
		return d.readStr(op, int64(b[0]))
	case opBINUNICODE, opBINBYTES:
		b, err := d.fixed(4)
		if err != nil {
			return err
		}
		return d.readStr(op, int64(binary.LittleEndian.Uint32(b)))
	case opBINSTRING:
		b, err := d.fixed(4)
		if err != nil {
			return err
		}
		n := int64(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 {
			return d.Errorf("BINSTRING with negative length %d", n)
		}
		return d.readStr(op, n)
	case opBINUNICODE8, opBINBYTES8, opBYTEARRAY8:
		b, err := d.fixed(8)
		if err != nil {
			return err
		}
		n := binary.LittleEndian.Uint64(b)
		if n > uint64(d.lim.MaxString) {
			return d.Errorf("%s of %d bytes is longer than the limit of %d bytes", opName(op), n, d.lim.MaxString)
		}
		return d.readStr(op, int64(n))
	case opBINFLOAT:
		b, err := d.fixed(8)
		if err != nil {
			return err
		}
		return d.push(Value{kind: Float, n: int64(binary.BigEndian.Uint64(b))})
	case opNONE:
		return d.push(Value{})
	case opNEWTRUE:
		return d.push(Value{kind: Bool, n: 1})
	case opNEWFALSE:
		return d.push(Value{kind: Bool})
	case opEMPTY_DICT:
		if err := d.appendEarly(); err != nil {
			return err
		}
		return d.pushContainer(Dict, nil)
	case opEMPTY_LIST:
		return d.pushContainer(List, nil)
	case opEMPTY_TUPLE:
		return d.pushContainer(Tuple, nil)
	case opEMPTY_SET:
		return d.pushContainer(Set, nil)
	case opMARK:
		if len(d.marks) >= d.lim.MaxStack {
			return d.Errorf("more than %d nested MARKs", d.lim.MaxStack)
		}
		d.marks = append(d.marks, len(d.stack))
		return nil
	case opAPPEND:
		return d.appendOp()
	case opAPPENDS:
		return d.appendsOp()
	case opSETITEM:
		return d.setItemOp()
	case opSETITEMS:
		return d.setItemsOp()
	case opADDITEMS:
		return d.addItemsOp()
	case opTUPLE1, opTUPLE2, opTUPLE3:
		n := int(op - opTUPLE1 + 1)
		base := d.floor()
		if len(d.stack)-base < n {
			return d.Errorf("%s needs %d items on the stack", opName(op), n)
		}
		items := make([]Value, n)
		copy(items, d.stack[len(d.stack)-n:])
		d.stack = d.stack[:len(d.stack)-n]
		return d.pushContainer(Tuple, items)
	case opTUPLE, opLIST, opDICT, opFROZENSET:
		items, err := d.popMark(op)
		if err != nil {
			return err
		}
		switch op {
		case opTUPLE:
			return d.pushContainer(Tuple, items)
		case opFROZENSET:
			return d.pushContainer(FrozenSet, items)
		case opLIST:
			if err := d.pushContainer(List, nil); err != nil {
				return err
			}
			l := d.stack[len(d.stack)-1].cont()
			for _, it := range items {
				if err := d.appendTo(l, it); err != nil {
					return err
				}
			}
			return nil
		default: // opDICT
			if len(items)%2 != 0 {
				return d.Errorf("DICT with an odd number of items")
			}
			return d.pushContainer(Dict, items)
		}
	case opPOP:
		if len(d.stack) > d.floor() {
			d.stack = d.stack[:len(d.stack)-1]
			return nil
		}
		if len(d.marks) == 0 {
			return d.Errorf("POP with an empty stack")
		}
		if err := d.dropMark(op); err != nil {
			return err
		}
		d.marks = d.marks[:len(d.marks)-1]
		return nil
	case opPOP_MARK:
		_, err := d.popMark(op)
		return err
	case opDUP:
		if len(d.stack) <= d.floor() {
			return d.Errorf("DUP with an empty stack")
		}
		top := d.stack[len(d.stack)-1]
		if c := top.cont(); c != nil {
			c.shared = true
		}
		return d.push(top)
	case opPROTO:
		b, err := d.fixed(1)
		if err != nil {
			return err
		}
		if b[0] > 5 {
			return d.Errorf("unsupported pickle protocol %d (0 to 5 are known)", b[0])
		}
		d.proto = int(b[0])
		return nil
	case opFRAME:
		// A FRAME only announces how many bytes the next opcodes take; the
		// decoder streams them anyway, so the length is read and ignored.
		_, err := d.fixed(8)
		return err
	case opREADONLY_BUFFER:
		if len(d.stack) <= d.floor() {
			return d.Errorf("READONLY_BUFFER with an empty stack")
		}
		return nil
	case opSTOP:
		if len(d.stack) == 0 {
			return d.Errorf("STOP with an empty stack")
		}
		d.result = d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		d.done = true
		d.op = s.offset()
		return nil
	case opINT, opLONG, opFLOAT, opSTRING, opUNICODE, opGET, opPUT:
		return d.textOp(op)
	case opNEXT_BUFFER:
		return &parse.Error{File: d.name, Offset: d.op, Msg: "refusing pickle opcode NEXT_BUFFER (0x97): it needs out-of-band buffers that a file does not carry"}
	}
	if name, ok := codeOps[op]; ok {
		return &parse.Error{File: d.name, Offset: d.op, Msg: fmt.Sprintf("refusing pickle opcode %s (0x%02x): it would import or call Python code, and gpuleak reads data only", name, op), Err: ErrCodeOpcode}
	}
	return d.Errorf("invalid pickle opcode 0x%02x", op)
}

// floor is the stack index above the innermost MARK.
func (d *Decoder) floor() int {
	if len(d.marks) == 0 {
		return 0
	}
	return d.marks[len(d.marks)-1]
}

// push is small enough to be inlined: it runs for most opcodes.
func (d *Decoder) push(v Value) error {
	if len(d.stack) >= d.lim.MaxStack {
		return d.stackFull()
	}
	d.stack = append(d.stack, v)
	return nil
}

func (d *Decoder) stackFull() error {
	return d.Errorf("more than %d values on the pickle stack", d.lim.MaxStack)
}

func (d *Decoder) pushContainer(k Kind, items []Value) error {
	var c *Container
	if n := len(d.pool); n > 0 && items == nil {
		// Reuse a consumed container and its item storage: a stream of a
		// million records then allocates almost nothing per record. (A
		// recycled container, Recycle, comes without storage: it gets
		// storage from the spare store when its first items come, room.)
		c = d.pool[n-1]
		d.pool = d.pool[:n-1]
		*c = Container{Kind: k, Items: c.Items[:0], Offset: d.op}
	} else if items == nil {
		c = &Container{Kind: k, Offset: d.op}
	} else {
		if err := d.hold(len(items)); err != nil {
			return err
		}
		c = &Container{Kind: k, Items: items, Offset: d.op, n: int64(len(items))}
	}
	if d.h != nil {
		parent, key, index := d.parentAt(len(d.stack))
		d.h.Tag(c, parent, key, index)
	}
	return d.push(containerValue(k, c))
}

// parentAt guesses which container a value at stack index p will be stored
// in, from the shapes pickle writers emit: "list MARK items APPENDS",
// "dict MARK key value ... SETITEMS", "list item APPEND", "dict key value
// SETITEM". The stack cannot always tell "list MARK x inner <new>" (new is
// an element of list) from the same stack before "APPEND" (new is inner's
// only element); the first reading is taken.
func (d *Decoder) parentAt(p int) (parent *Container, key Value, index int64) {
	if len(d.marks) > 0 {
		m := d.marks[len(d.marks)-1]
		if m >= 1 && m <= p {
			if under := d.stack[m-1]; under.cont() != nil {
				uc := under.cont()
				switch under.kind {
				case List, Set:
					return uc, Value{}, uc.n + int64(p-m)
				case Dict:
					if (p-m)%2 == 1 {
						return uc, d.stack[p-1], 0
					}
					// A key position: containers are not keys, so this
					// is most likely an element of a list just below
					// that gets a single APPEND.
				}
			}
		}
	}
	if p >= 1 && d.stack[p-1].kind == List {
		c := d.stack[p-1].cont()
		return c, Value{}, c.n
	}
	if p >= 2 && d.stack[p-2].kind == Dict {
		return d.stack[p-2].cont(), d.stack[p-1], 0
	}
	return nil, Value{}, 0
}

// popMark pops the values above the innermost MARK, and the MARK.
func (d *Decoder) popMark(op byte) ([]Value, error) {
	if len(d.marks) == 0 {
		return nil, d.Errorf("%s without a MARK", opName(op))
	}
	if err := d.dropMark(op); err != nil {
		return nil, err
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items := make([]Value, len(d.stack)-m)
	copy(items, d.stack[m:])
	clear(d.stack[m:])
	d.stack = d.stack[:m]
	return items, nil
}

// target returns the container below the items that APPENDS, SETITEMS and
// ADDITEMS add, checking its kind.
func (d *Decoder) target(op byte, m int, want Kind) (*Container, error) {
	if m < 1 || m > len(d.stack) {
		return nil, d.Errorf("%s with nothing to add to", opName(op))
	}
	t := d.stack[m-1]
	if t.kind != want {
		return nil, d.Errorf("%s on a %s; only a %s is supported", opName(op), t.kind, want)
	}
	return t.cont(), nil
}

func (d *Decoder) appendTo(l *Container, item Value) error {
	idx := l.n
	if d.h != nil && l.Tag != 0 {
		consume, err := d.h.Append(l, idx, item)
		if err != nil {
			return err
		}
		if consume {
			l.n++
			if c := item.cont(); c != nil {
				c.consumed = true
				if c.memo != 0 {
					if slot := d.memoSlot(c.memo - 1); slot > consumedSlot && d.vals[slot].cont() == c {
						d.setMemoSlot(c.memo-1, consumedSlot)
						d.vals[slot] = Value{}
						d.free = append(d.free, slot)
					}
				}
				// Nothing but the stack and the memo ever referred to an
				// unshared container, and neither does now.
				if !c.shared {
					d.held -= int64(len(c.Items))
					if len(d.pool) < maxPool && cap(c.Items) <= maxPooledItems {
						// Not cleared: reuse overwrites the items from the
						// first, and what stale ones point to is bounded.
						c.Items = c.Items[:0]
						d.pool = append(d.pool, c)
					}
				}
			}
			return nil
		}
	}
	if int64(len(l.Items)) >= d.lim.MaxItems {
		return d.Errorf("a list holds more than %d elements", d.lim.MaxItems)
	}
	if err := d.hold(1); err != nil {
		return err
	}
	l.n++
	if len(l.Items) == cap(l.Items) {
		d.room(l, 1)
	}
	l.Items = append(l.Items, item)
	return nil
}

func (d *Decoder) appendOp() error {
	if len(d.stack)-d.floor() < 2 {
		return d.Errorf("APPEND needs a list and an item on the stack")
	}
	item := d.stack[len(d.stack)-1]
	t := d.stack[len(d.stack)-2]
	if t.kind != List {
		return d.Errorf("APPEND on a %s; only a list is supported", t.kind)
	}
	d.stack = d.stack[:len(d.stack)-1]
	return d.appendTo(t.cont(), item)
}

// appendEarly hands a list its element as soon as the next one begins,
// rather than at the APPENDS that closes the batch: when an EMPTY_DICT
// starts while the stack holds, above the MARK of a list the Handler
// tagged and marked Early, one dict that the Handler tagged too (Python's
// picklers write a list's elements "list MARK elem elem ... APPENDS", one
// after the other, in batches of 1,000). The Handler then reads each
// element while its values are still in the CPU's cache, and a consumed
// element's values are no longer held (on a snapshot of 57,000 segments,
// a fifth of the CPU time and of the memory allocated). A MARK that two
// marks share (the list's and a tuple's, "list MARK MARK elem ... TUPLE")
// is left alone, and so is a second Early list while the first holds a
// MARK. Once an element is handed on, only APPENDS may close that MARK
// (dropMark): a hand-made pickle that closes it otherwise ("list MARK dict
// dict TUPLE APPEND", "list MARK dict dict POP_MARK", which Python reads
// as a list without those dicts) is refused rather than read with elements
// Python would not store. A memo get of a handed-on element yields what a
// consumed container's does (a Ref): a pickle that stores the same dict
// again after the next began ([s0, s1, s0]) or changes it then is refused
// by a Handler that checks what it receives, as across APPENDS batches.
func (d *Decoder) appendEarly() error {
	n := len(d.marks)
	if d.h == nil || n == 0 {
		return nil
	}
	m := d.marks[n-1]
	if m < 1 || len(d.stack) != m+1 || n >= 2 && d.marks[n-2] == m || d.earlyDepth != 0 && d.earlyDepth != n {
		return nil
	}
	l, x := d.stack[m-1], d.stack[m]
	if l.kind != List || x.kind != Dict {
		return nil
	}
	lc, xc := l.cont(), x.cont()
	if lc == nil || !lc.Early || lc.Tag == 0 || xc == nil || xc.Tag == 0 {
		return nil
	}
	if err := d.appendTo(lc, x); err != nil {
		return err
	}
	d.stack = d.stack[:m]
	d.earlyDepth = n
	return nil
}

// dropMark checks that op may close the top MARK: not when appendEarly
// handed on elements above it, which only APPENDS, storing the rest in the
// same list, may close (Python's picklers write nothing else there). A
// pickle that drops them or builds another container of them is refused,
// not read with elements Python would not store.
func (d *Decoder) dropMark(op byte) error {
	if d.earlyDepth == 0 || len(d.marks) != d.earlyDepth {
		return nil
	}
	if op != opAPPENDS {
		return d.Errorf("%s closes a MARK whose first elements were already stored in the list below it, as the APPENDS that Python's pickler writes there would store them", opName(op))
	}
	d.earlyDepth = 0
	return nil
}

func (d *Decoder) appendsOp() error {
	if len(d.marks) == 0 {
		return d.Errorf("APPENDS without a MARK")
	}
	m := d.marks[len(d.marks)-1]
	l, err := d.target(opAPPENDS, m, List)
	if err != nil {
		return err
	}
	items := d.stack[m:]
	if n := int64(len(items)); (d.h == nil || l.Tag == 0) && int64(len(l.Items))+n <= d.lim.MaxItems && d.held+n <= d.lim.MaxValues {
		// No Handler call and no limit reached: store them at once.
		d.held += n
		l.n += n
		if cap(l.Items)-len(l.Items) < len(items) {
			d.room(l, len(items))
		}
		l.Items = append(l.Items, items...)
	} else {
		for _, it := range items {
			if err := d.appendTo(l, it); err != nil {
				return err
			}
		}
	}
	// Popped slots are not cleared: the next pushes overwrite them, and
	// what they still point to is bounded by the stack's high-water mark.
	d.stack = d.stack[:m]
	d.dropMark(opAPPENDS) // nil: it only ends appendEarly's hold on the MARK
	d.marks = d.marks[:len(d.marks)-1]
	return nil
}

func (d *Decoder) setItemOp() error {
	if len(d.stack)-d.floor() < 3 {
		return d.Errorf("SETITEM needs a dict, a key and a value on the stack")
	}
	n := len(d.stack)
	t := d.stack[n-3]
	if t.kind != Dict {
		return d.Errorf("SETITEM on a %s; only a dict is supported", t.kind)
	}
	if err := d.addPairs(t.cont(), d.stack[n-2:n]); err != nil {
		return err
	}
	clear(d.stack[n-2:])
	d.stack = d.stack[:n-2]
	return nil
}

func (d *Decoder) setItemsOp() error {
	if len(d.marks) == 0 {
		return d.Errorf("SETITEMS without a MARK")
	}
	m := d.marks[len(d.marks)-1]
	t, err := d.target(opSETITEMS, m, Dict)
	if err != nil {
		return err
	}
	if (len(d.stack)-m)%2 != 0 {
		return d.Errorf("SETITEMS with an odd number of items")
	}
	if err := d.addPairs(t, d.stack[m:]); err != nil {
		return err
	}
	d.stack = d.stack[:m]
	d.marks = d.marks[:len(d.marks)-1]
	return nil
}

func (d *Decoder) addPairs(t *Container, kv []Value) error {
	if t.consumed {
		return d.Errorf("SETITEM on a dict that was already read")
	}
	if int64(len(t.Items)+len(kv)) > 2*d.lim.MaxItems {
		return d.Errorf("a dict holds more than %d items", d.lim.MaxItems)
	}
	if err := d.hold(len(kv)); err != nil {
		return err
	}
	if cap(t.Items)-len(t.Items) < len(kv) {
		d.room(t, len(kv))
	}
	t.Items = append(t.Items, kv...)
	if t.Tag != 0 && d.ph != nil {
		d.ph.SetItems(t, t.Items[len(t.Items)-len(kv):])
	}
	return nil
}

func (d *Decoder) addItemsOp() error {
	if len(d.marks) == 0 {
		return d.Errorf("ADDITEMS without a MARK")
	}
	m := d.marks[len(d.marks)-1]
	t, err := d.target(opADDITEMS, m, Set)
	if err != nil {
		return err
	}
	if int64(len(t.Items)+len(d.stack)-m) > d.lim.MaxItems {
		return d.Errorf("a set holds more than %d items", d.lim.MaxItems)
	}
	if err := d.hold(len(d.stack) - m); err != nil {
		return err
	}
	t.Items = append(t.Items, d.stack[m:]...)
	t.n = int64(len(t.Items))
	clear(d.stack[m:])
	d.stack = d.stack[:m]
	d.marks = d.marks[:len(d.marks)-1]
	return nil
}

// Memo: memoIdx maps a memo index to a slot of vals. Consumed containers
// share consumedSlot, so a million consumed records cost four bytes each.

func (d *Decoder) memoSlot(i int64) uint32 {
	if i < d.memoIdx.n {
		return d.memoIdx.at(i)
	}
	return d.sparse[i]
}

func (d *Decoder) setMemoSlot(i int64, slot uint32) {
	switch {
	case i < d.memoIdx.n:
		d.memoIdx.set(i, slot)
	case i < d.memoIdx.n+4096:
		// Python's picklers number the memo densely; a small gap is filled.
		for d.memoIdx.n < i {
			d.memoIdx.add(0)
		}
		d.memoIdx.add(slot)
	default:
		if d.sparse == nil {
			d.sparse = make(map[int64]uint32)
		}
		d.sparse[i] = slot
	}
}

func (d *Decoder) putTop(i int64) error {
	if len(d.stack) <= d.floor() {
		return d.Errorf("PUT with an empty stack")
	}
	return d.put(i, d.stack[len(d.stack)-1])
}

func (d *Decoder) put(i int64, v Value) error {
	if i < 0 || i > d.lim.MaxMemo {
		return d.Errorf("memo index %d out of range", i)
	}
	var old uint32
	if i != d.memoIdx.n || d.sparse != nil {
		// Else the index is the next one (MEMOIZE; Python's picklers
		// number densely): nothing is set there yet.
		if old = d.memoSlot(i); old != 0 {
			d.memoGen++
		}
	}
	if shareable(v) {
		if s, ok := d.sameSlot(v); ok {
			if old > consumedSlot && old != s && !d.isShared(old) {
				d.vals[old] = Value{}
				d.free = append(d.free, old)
			}
			d.setMemoNext(i, s)
			return nil
		}
	}
	if old > consumedSlot && !d.isShared(old) {
		// A PUT again at an index (hand-made pickles; Python's picklers
		// never do): the slot is this index's alone, overwrite it.
		d.vals[old] = v
		d.memoize(v, i)
		return nil
	}
	var slot uint32
	if n := len(d.free); n > 0 {
		slot = d.free[n-1]
		d.free = d.free[:n-1]
		d.vals[slot] = v
	} else {
		if uint64(len(d.vals)) >= math.MaxUint32 {
			return d.Errorf("too many memo entries")
		}
		slot = uint32(len(d.vals))
		d.vals = append(d.vals, v)
	}
	d.setMemoNext(i, slot)
	d.memoize(v, i)
	return nil
}

// memoize notes on a container v that memo index i yields it. One that
// another index yields as well is shared: Replace and Recycle see only the
// last index, so a Handler must not reuse it.
func (d *Decoder) memoize(v Value, i int64) {
	if c := v.cont(); c != nil {
		if c.memo != 0 && c.memo != i+1 {
			c.shared = true
		}
		c.memo = i + 1
	}
}

// setMemoNext is setMemoSlot, faster for the next index (MEMOIZE).
func (d *Decoder) setMemoNext(i int64, slot uint32) {
	if i == d.memoIdx.n {
		d.memoIdx.add(slot)
		return
	}
	d.setMemoSlot(i, slot)
}

// isShared reports whether slot is one that equal scalars share.
func (d *Decoder) isShared(slot uint32) bool {
	v := d.vals[slot]
	var s uint32
	var ok bool
	switch {
	case v.kind == Str:
		s, ok = d.sameStr[v.str()]
	case v.kind == Ref:
		if id, small := refID(v); small {
			s, ok = d.sameID[id]
		} else {
			s, ok = d.sameRef[refKey{v.tag, v.n}]
		}
	case shareable(v):
		s, ok = d.same[d.scalarKey(v)]
	}
	return ok && s == slot
}

func (d *Decoder) get(i int64) error {
	slot := d.memoSlot(i)
	switch slot {
	case 0:
		return d.Errorf("memo index %d was never set", i)
	case consumedSlot:
		return d.push(Value{kind: Ref, n: -1})
	}
	v := d.vals[slot]
	if c := v.cont(); c != nil {
		if c.consumed {
			return d.push(Value{kind: Ref, tag: c.Tag, n: -1})
		}
		c.shared = true
	}
	return d.push(v)
}

// fixed returns the next n bytes (n <= 8), consuming them.
func (d *Decoder) fixed(n int) ([]byte, error) {
	s := &d.src
	if s.end-s.pos < n && !s.ensure(n) {
		return nil, d.truncated()
	}
	b := s.buf[s.pos : s.pos+n]
	s.pos += n
	return b, nil
}

func (d *Decoder) truncated() error {
	if d.src.err != nil && !errors.Is(d.src.err, io.EOF) {
		return &parse.Error{File: d.name, Offset: d.op, Msg: "read error in " + opName(d.curOp), Err: d.src.err}
	}
	return &parse.Error{File: d.name, Offset: d.op, Msg: fmt.Sprintf("the file is cut short: it ends inside %s (at byte %d)", opName(d.curOp), d.src.offset()+int64(d.src.end-d.src.pos)), Err: ErrTruncated}
}

// readBytes reads n bytes. owned is true when b is a buffer of its own
// (a long string), false when it points into the read buffer and must be
// copied before the next read.
func (d *Decoder) readBytes(n int64) (b []byte, owned bool, err error) {
	if n > d.lim.MaxString {
		return nil, false, d.Errorf("string of %d bytes is longer than the limit of %d bytes", n, d.lim.MaxString)
	}
	s := &d.src
	if n <= ensureMax {
		if int64(s.end-s.pos) < n && !s.ensure(int(n)) {
			return nil, false, d.truncated()
		}
		b := s.buf[s.pos : s.pos+int(n)]
		s.pos += int(n)
		return b, false, nil
	}
	// A long string is read into a buffer of its own, which the string
	// then shares. The buffer grows fourfold from 1 MiB until the input has
	// shown a 64th of the string, then takes its exact size: a string
	// costs n bytes and at most a 16th more while it is read, as the
	// string budget counts it (a doubling buffer and a copy to a string
	// cost up to 2.9 times n), and a length that lies costs at most 64
	// times what the input really holds.
	buffered := s.end - s.pos
	out := make([]byte, buffered, min(n, max(int64(buffered), 1<<20)))
	copy(out, s.buf[s.pos:s.end])
	s.base += int64(s.end)
	s.pos, s.end = 0, 0
	for int64(len(out)) < n {
		if len(out) == cap(out) {
			next := 4 * int64(cap(out))
			if 64*int64(len(out)) >= n {
				next = n
			}
			grown := make([]byte, len(out), min(n, next))
			copy(grown, out)
			out = grown
		}
		m, err := s.read(out[len(out):cap(out)])
		out = out[:len(out)+m]
		s.base += int64(m)
		if err != nil && int64(len(out)) < n {
			if !errors.Is(err, io.EOF) {
				return nil, false, &parse.Error{File: d.name, Offset: d.op, Msg: "read error", Err: err}
			}
			s.err = io.EOF
			return nil, false, &parse.Error{File: d.name, Offset: d.op, Msg: fmt.Sprintf("the file is cut short: it ends inside %s of %d bytes (at byte %d)", opName(d.curOp), n, s.base), Err: ErrTruncated}
		}
	}
	return out, true, nil
}

func (d *Decoder) readStr(op byte, n int64) error {
	if d.stringBytes += n; d.stringBytes > d.lim.MaxStringBytes {
		return d.Errorf("the pickle creates more than %d bytes of strings (a limit that protects memory)", d.lim.MaxStringBytes)
	}
	b, owned, err := d.readBytes(n)
	if err != nil {
		return err
	}
	var text string
	switch {
	case owned:
		text = unsafe.String(unsafe.SliceData(b), len(b)) // b is never written again: no copy
	case len(b) > 0 && len(b) <= maxShortStr:
		// A short str written again and again rather than memoised
		// (PyTorch's "N/A" in every trace entry) is made once.
		h := (len(b) + 31*int(b[0]) + 7*int(b[len(b)-1])) & (len(d.short) - 1)
		if t := d.short[h]; t == string(b) {
			text = t
		} else {
			text = string(b)
			d.short[h] = text
		}
	default:
		text = string(b)
	}
	switch op {
	case opSHORT_BINBYTES, opBINBYTES, opBINBYTES8, opBYTEARRAY8:
		return d.push(strValue(Bytes, text))
	case opBINSTRING, opSHORT_BINSTRING:
		if isASCII(b) {
			return d.push(strValue(Str, text)) // latin-1 and UTF-8 agree
		}
		return d.push(strValue(Str, latin1(b)))
	}
	return d.push(strValue(Str, text))
}

func (d *Decoder) readLong(n int64) error {
	if n > int64(d.lim.MaxIntBytes) {
		return d.Errorf("integer of %d bytes is longer than the limit of %d bytes", n, d.lim.MaxIntBytes)
	}
	b, _, err := d.readBytes(n)
	if err != nil {
		return err
	}
	return d.push(decodeLong(b))
}

// decodeLong decodes a little-endian two's-complement integer (LONG1, LONG4).
func decodeLong(b []byte) Value {
	if len(b) == 0 {
		return Value{kind: Int}
	}
	if len(b) <= 8 {
		var u uint64
		for i := len(b) - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		shift := 64 - 8*uint(len(b))
		return Value{kind: Int, n: int64(u<<shift) >> shift}
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	x := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return bigValue(x)
}

func bigValue(x *big.Int) Value {
	switch {
	case x.IsInt64():
		return Value{kind: Int, n: x.Int64()}
	case x.IsUint64():
		return Value{kind: Uint, n: int64(x.Uint64())}
	}
	return strValue(BigInt, x.String())
}

// isASCII reports whether b holds only 7-bit bytes.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func latin1(b []byte) string {
	if isASCII(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// textOp runs the protocol 0 opcodes whose argument is a line of text.
func (d *Decoder) textOp(op byte) error {
	line, err := d.readLine()
	if err != nil {
		return err
	}
	switch op {
	case opINT:
		switch line {
		case "00":
			return d.push(Value{kind: Bool})
		case "01":
			return d.push(Value{kind: Bool, n: 1})
		}
		return d.pushDecimal(op, line)
	case opLONG:
		if n := len(line); n > 0 && line[n-1] == 'L' {
			line = line[:n-1]
		}
		return d.pushDecimal(op, line)
	case opFLOAT:
		f, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return d.Errorf("FLOAT with argument %q", line)
		}
		return d.push(FloatValue(f))
	case opSTRING:
		s, err := unquotePy2(line)
		if err != nil {
			return d.Errorf("STRING: %v", err)
		}
		return d.push(strValue(Str, s))
	case opUNICODE:
		s, err := rawUnicodeEscape(line)
		if err != nil {
			return d.Errorf("UNICODE: %v", err)
		}
		return d.push(strValue(Str, s))
	case opGET, opPUT:
		i, err := strconv.ParseInt(line, 10, 64)
		if err != nil || i < 0 {
			return d.Errorf("%s with memo index %q", opName(op), line)
		}
		if op == opGET {
			return d.get(i)
		}
		return d.putTop(i)
	}
	return d.Errorf("invalid opcode 0x%02x", op)
}

func (d *Decoder) pushDecimal(op byte, s string) error {
	if len(s) > 2*d.lim.MaxIntBytes+2 {
		return d.Errorf("%s argument of %d digits is longer than the limit", opName(op), len(s))
	}
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return d.Errorf("%s with argument %q", opName(op), s)
	}
	return d.push(bigValue(x))
}

// readLine reads a newline-terminated argument of at most MaxLine bytes.
func (d *Decoder) readLine() (string, error) {
	s := &d.src
	for {
		if i := bytes.IndexByte(s.buf[s.pos:s.end], '\n'); i >= 0 {
			line := string(s.buf[s.pos : s.pos+i])
			s.pos += i + 1
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		if s.end-s.pos > d.lim.MaxLine {
			return "", d.Errorf("%s argument longer than %d bytes", opName(d.curOp), d.lim.MaxLine)
		}
		if !s.ensure(s.end - s.pos + 1) {
			return "", d.truncated()
		}
	}
}

// opName names an opcode for messages.
func opName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("opcode 0x%02x", op)
}

var opNames = map[byte]string{
	opMARK: "MARK", opSTOP: "STOP", opPOP: "POP", opPOP_MARK: "POP_MARK", opDUP: "DUP", opFLOAT: "FLOAT",
	opINT: "INT", opBININT: "BININT", opBININT1: "BININT1", opLONG: "LONG", opBININT2: "BININT2", opNONE: "NONE",
	opSTRING: "STRING", opBINSTRING: "BINSTRING", opSHORT_BINSTRING: "SHORT_BINSTRING", opUNICODE: "UNICODE",
	opBINUNICODE: "BINUNICODE", opAPPEND: "APPEND", opDICT: "DICT", opEMPTY_DICT: "EMPTY_DICT", opAPPENDS: "APPENDS",
	opGET: "GET", opBINGET: "BINGET", opLONG_BINGET: "LONG_BINGET", opLIST: "LIST", opEMPTY_LIST: "EMPTY_LIST",
	opPUT: "PUT", opBINPUT: "BINPUT", opLONG_BINPUT: "LONG_BINPUT", opSETITEM: "SETITEM", opTUPLE: "TUPLE",
	opEMPTY_TUPLE: "EMPTY_TUPLE", opSETITEMS: "SETITEMS", opBINFLOAT: "BINFLOAT", opPROTO: "PROTO",
	opTUPLE1: "TUPLE1", opTUPLE2: "TUPLE2", opTUPLE3: "TUPLE3", opNEWTRUE: "NEWTRUE", opNEWFALSE: "NEWFALSE",
	opLONG1: "LONG1", opLONG4: "LONG4", opBINBYTES: "BINBYTES", opSHORT_BINBYTES: "SHORT_BINBYTES",
	opSHORT_BINUNICODE: "SHORT_BINUNICODE", opBINUNICODE8: "BINUNICODE8", opBINBYTES8: "BINBYTES8",
	opEMPTY_SET: "EMPTY_SET", opADDITEMS: "ADDITEMS", opFROZENSET: "FROZENSET", opMEMOIZE: "MEMOIZE",
	opFRAME: "FRAME", opBYTEARRAY8: "BYTEARRAY8", opNEXT_BUFFER: "NEXT_BUFFER", opREADONLY_BUFFER: "READONLY_BUFFER",
	opGLOBAL: "GLOBAL", opSTACK_GLOBAL: "STACK_GLOBAL", opREDUCE: "REDUCE", opINST: "INST", opOBJ: "OBJ",
	opNEWOBJ: "NEWOBJ", opNEWOBJ_EX: "NEWOBJ_EX", opBUILD: "BUILD", opPERSID: "PERSID", opBINPERSID: "BINPERSID",
	opEXT1: "EXT1", opEXT2: "EXT2", opEXT4: "EXT4",
}
