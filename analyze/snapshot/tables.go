package snapshot

import (
	"math/rand/v2"
	"slices"
)

// addrTable maps a block's address to a V: the replay's live allocations
// and pending frees, looked up, added or removed at every trace entry (and
// a stack id, as a uint64, to the largest allocation made with it).
// It replaces a Go map there (five map operations an allocation cost a
// third of the leak analysis): open addressing with linear probing,
// entries in the slots, deletion by shifting the entries after back (no
// tombstones), at most three quarters full.
//
// The hash mixes the address with a seed drawn at random for each table,
// so that no file can be made whose addresses all fall in one run of
// slots. The order of all is the slots' and varies from run to run, as a
// map's does: no result may depend on it.
type addrTable[V any] struct {
	slots []addrSlot[V] // len a power of 2, or 0
	n     int
	shift uint // 64 - log2(len(slots))
	seed  uint64
}

type addrSlot[V any] struct {
	addr uint64
	used bool
	v    V
}

const minAddrSlots = 16

// home is the first slot addr may sit in.
func (t *addrTable[V]) home(addr uint64) int {
	h := (addr ^ t.seed) * 0x9e3779b97f4a7c15
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return int(h >> t.shift)
}

// find returns the slot holding addr, or -1.
func (t *addrTable[V]) find(addr uint64) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(addr); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return -1
		}
		if s.addr == addr {
			return i
		}
	}
}

// len returns the number of entries.
func (t *addrTable[V]) len() int { return t.n }

// get returns addr's value and whether it is there.
func (t *addrTable[V]) get(addr uint64) (V, bool) {
	if i := t.find(addr); i >= 0 {
		return t.slots[i].v, true
	}
	var zero V
	return zero, false
}

// put sets addr's value; it reports whether addr was there already.
func (t *addrTable[V]) put(addr uint64, v V) (replaced bool) {
	_, replaced = t.swap(addr, v)
	return replaced
}

// swap is put that also returns the value addr held before (the zero
// value when it held none).
func (t *addrTable[V]) swap(addr uint64, v V) (old V, replaced bool) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(addr); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			*s = addrSlot[V]{addr: addr, used: true, v: v}
			t.n++
			return old, false
		}
		if s.addr == addr {
			old, s.v = s.v, v
			return old, true
		}
	}
}

// ptr returns where addr's value is, nil when addr is not there; it is
// valid until the next put.
func (t *addrTable[V]) ptr(addr uint64) *V {
	if i := t.find(addr); i >= 0 {
		return &t.slots[i].v
	}
	return nil
}

// take removes addr and returns its value, and whether it was there.
func (t *addrTable[V]) take(addr uint64) (V, bool) {
	i := t.find(addr)
	if i < 0 {
		var zero V
		return zero, false
	}
	v := t.slots[i].v
	t.removeAt(i)
	return v, true
}

// removeAt empties slot i and moves back the entries after it that would
// otherwise no longer be found from their home slot.
func (t *addrTable[V]) removeAt(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].used; j = (j + 1) & mask {
		// The entry at j may fill i when i lies on its probe path: from
		// its home to j.
		if (j-t.home(t.slots[j].addr))&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = addrSlot[V]{}
	t.n--
}

// grow doubles the slots (or makes the first ones) and places the entries
// again.
func (t *addrTable[V]) grow() {
	old := t.slots
	n := max(2*len(old), minAddrSlots)
	t.slots = make([]addrSlot[V], n)
	t.shift = 64
	for x := n; x > 1; x >>= 1 {
		t.shift--
	}
	if old == nil {
		t.seed = rand.Uint64()
	}
	t.n = 0
	mask := n - 1
	for k := range old {
		s := &old[k]
		if !s.used {
			continue
		}
		i := t.home(s.addr)
		for t.slots[i].used {
			i = (i + 1) & mask
		}
		t.slots[i] = *s
		t.n++
	}
}

// clone returns a copy of t.
func (t *addrTable[V]) clone() addrTable[V] {
	c := *t
	c.slots = append([]addrSlot[V](nil), t.slots...)
	return c
}

// all yields every entry, in no particular order.
func (t *addrTable[V]) all(yield func(uint64, V) bool) {
	for i := range t.slots {
		if s := &t.slots[i]; s.used && !yield(s.addr, s.v) {
			return
		}
	}
}

// addrFilter holds a bit for each address of an addrTable, set by a
// hash of it, so that most addresses not in the table are told apart
// with one load of a small array: groupSites asks the trace's live set
// for each of a snapshot's active blocks, most of which it does not hold
// (on a snapshot of 120,000 blocks and 1,253 live allocations, the
// table's probe of its 64-byte slots was a third of the grouping). A set
// bit says only "maybe": the table answers then.
type addrFilter struct {
	bits  []uint64 // len a power of 2
	shift uint     // 64 - log2(bits in all)
}

// filter returns t's filter: 16 bits or more for each entry (a false
// "maybe" for at most one address in 16 not in t), valid until t changes.
func (t *addrTable[V]) filter() addrFilter {
	nbits := 64
	for nbits < 16*t.n {
		nbits <<= 1
	}
	f := addrFilter{bits: make([]uint64, nbits/64), shift: 64}
	for x := nbits; x > 1; x >>= 1 {
		f.shift--
	}
	for i := range t.slots {
		if s := &t.slots[i]; s.used {
			h := f.hash(s.addr)
			f.bits[h>>6] |= 1 << (h & 63)
		}
	}
	return f
}

// hash is addr's bit: Fibonacci hashing, its product's top bits. No seed:
// addresses made to share bits only cost the table's lookup, as before.
func (f addrFilter) hash(addr uint64) uint64 { return (addr * 0x9e3779b97f4a7c15) >> f.shift }

// mayHold reports false when addr is surely not in the table.
func (f addrFilter) mayHold(addr uint64) bool {
	h := f.hash(addr)
	return f.bits[h>>6]&(1<<(h&63)) != 0
}

// keyIndex finds an allocKey in a device's key table (deviceState.keys),
// looked up at every allocation: open addressing over the table's
// indices, at most half full, hashed with a seed drawn at random for each
// index (as addrTable). Keys are only ever added.
type keyIndex struct {
	slots []int32 // a key's index + 1, 0 when empty; len a power of 2, or 0
	shift uint    // 64 - log2(len(slots))
	seed  uint64
}

// home is the first slot k may sit in.
func (x *keyIndex) home(k allocKey) int {
	h := (uint64(k.size) ^ x.seed) * 0x9e3779b97f4a7c15
	h = (h ^ uint64(uint32(k.stack))) * 0xbf58476d1ce4e5b9
	return int(h >> x.shift)
}

// index returns k's index in *keys, appending k when it is not there.
func (x *keyIndex) index(keys *[]allocKey, k allocKey) int32 {
	if (len(*keys)+1)*2 > len(x.slots) {
		x.grow(*keys)
	}
	mask := len(x.slots) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			n := int32(len(*keys))
			*keys = append(*keys, k)
			x.slots[i] = n + 1
			return n
		}
		if (*keys)[s-1] == k {
			return s - 1
		}
	}
}

// grow doubles the slots (or makes the first ones) and indexes keys again.
func (x *keyIndex) grow(keys []allocKey) {
	n := max(2*len(x.slots), minAddrSlots)
	x.slots = make([]int32, n)
	x.shift = 64
	for m := n; m > 1; m >>= 1 {
		x.shift--
	}
	if x.seed == 0 {
		x.seed = rand.Uint64() | 1
	}
	mask := n - 1
	for j, k := range keys {
		i := x.home(k)
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = int32(j) + 1
	}
}

// appendRow appends v to s, doubling s's capacity when it is full. append
// grows a slice past 256 elements by a quarter at a time, which allocates
// and copies each row about five times on the way to the hundreds of
// thousands of blocks a snapshot of many segments holds; doubling, about
// twice. (Below that append doubles too: small slices, such as a site's
// allocations, stay small.)
func appendRow[T any](s []T, v T) []T {
	if len(s) == cap(s) && len(s) >= 256 {
		s = slices.Grow(s, len(s))
	}
	return append(s, v)
}

// rowChunkBits sets the size of a rowList's chunks: 4,096 rows.
const rowChunkBits = 12

// rowList is a list of rows kept in chunks of 1<<rowChunkBits rows, so
// that appending never copies the rows already kept: a snapshot of many
// segments has hundreds of thousands of active blocks, which two analyses
// keep until Finalize, and growing one slice for them allocated and copied
// each row about twice (with doubling) and left up to half of the last
// slice unused. Only the first chunk grows (by appendRow), to a full
// chunk, so that a small snapshot allocates little. The zero value is an
// empty list.
type rowList[T any] struct {
	chunks [][]T
	n      int
}

func (l *rowList[T]) add(v T) {
	const size = 1 << rowChunkBits
	k := len(l.chunks) - 1
	switch {
	case k < 0:
		l.chunks = append(l.chunks, make([]T, 0, 16))
		k = 0
	case len(l.chunks[k]) == size:
		l.chunks = append(l.chunks, make([]T, 0, size))
		k++
	case len(l.chunks[k]) == cap(l.chunks[k]): // the first chunk, small
		l.chunks[k] = slices.Grow(l.chunks[k], min(len(l.chunks[k]), size-len(l.chunks[k])))
	}
	l.chunks[k] = append(l.chunks[k], v)
	l.n++
}

// len is the number of rows.
func (l *rowList[T]) len() int { return l.n }

// at returns row i (0 <= i < len).
func (l *rowList[T]) at(i int) *T {
	return &l.chunks[i>>rowChunkBits][i&(1<<rowChunkBits-1)]
}

// all yields the rows in the order they were added.
func (l *rowList[T]) all(yield func(T) bool) {
	for _, c := range l.chunks {
		for _, v := range c {
			if !yield(v) {
				return
			}
		}
	}
}
