package snapshot

import (
	"encoding/binary"
	"math/rand"
	"testing"
)

// checkAddrTable runs the operations ops encodes (3 bytes each: an
// operation, an address index and a value) on an addrTable and on a Go map
// side by side, and fails at the first answer where they differ. Addresses come
// from a small set (many collisions, runs that wrap past the last slot,
// deletions inside runs) spread over 64 bits, 0 and the largest included.
func checkAddrTable(t *testing.T, ops []byte) {
	t.Helper()
	addrs := []uint64{0, 1, 512, 1 << 20, 0x7f00_0000_0000, 0x7f00_0000_0200, 1<<63 + 512, ^uint64(0)}
	for i := uint64(0); len(addrs) < 256; i++ {
		addrs = append(addrs, 0x7f00_0000_0000+i*0x200) // a GPU's block addresses
	}
	var tab addrTable[int]
	want := map[uint64]int{}
	var snap addrTable[int]
	var snapWant map[uint64]int
	for i := 0; i+2 < len(ops); i += 3 {
		op, a, v := ops[i]%6, addrs[ops[i+1]], int(ops[i+2])
		switch op {
		case 0, 1: // put (twice as often, so that the table fills)
			_, had := want[a]
			if got := tab.put(a, v); got != had {
				t.Fatalf("op %d: put(%#x) replaced %v, want %v", i/3, a, got, had)
			}
			want[a] = v
		case 2: // take
			w, had := want[a]
			got, ok := tab.take(a)
			if ok != had || got != w {
				t.Fatalf("op %d: take(%#x) = %d, %v, want %d, %v", i/3, a, got, ok, w, had)
			}
			delete(want, a)
		case 3: // get
			w, had := want[a]
			if got, ok := tab.get(a); ok != had || got != w {
				t.Fatalf("op %d: get(%#x) = %d, %v, want %d, %v", i/3, a, got, ok, w, had)
			}
		case 5: // ptr, and a change through it
			w, had := want[a]
			p := tab.ptr(a)
			if (p != nil) != had || p != nil && *p != w {
				t.Fatalf("op %d: ptr(%#x) = %v, want %d, %v", i/3, a, p, w, had)
			}
			if p != nil {
				*p += v
				want[a] += v
			}
		case 4: // clone, as at an OOM
			snap, snapWant = tab.clone(), map[uint64]int{}
			for k, x := range want {
				snapWant[k] = x
			}
		}
		if tab.len() != len(want) {
			t.Fatalf("op %d: len %d, want %d", i/3, tab.len(), len(want))
		}
	}
	for _, c := range []struct {
		tab  *addrTable[int]
		want map[uint64]int
	}{{&tab, want}, {&snap, snapWant}} {
		seen := map[uint64]int{}
		for a, v := range c.tab.all {
			if _, dup := seen[a]; dup {
				t.Fatalf("all yields %#x twice", a)
			}
			seen[a] = v
		}
		if len(seen) != len(c.want) {
			t.Fatalf("all yields %d entries, want %d", len(seen), len(c.want))
		}
		for a, v := range c.want {
			if got, ok := seen[a]; !ok || got != v {
				t.Fatalf("all: %#x = %d, %v, want %d", a, got, ok, v)
			}
			if got, ok := c.tab.get(a); !ok || got != v {
				t.Fatalf("get(%#x) = %d, %v at the end, want %d", a, got, ok, v)
			}
		}
	}
}

// TestAddrTableLikeMap: long random runs of puts, takes, gets and clones
// answer as a Go map does; the table grows past many sizes and shrinks
// to nothing on the way.
func TestAddrTableLikeMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for run := 0; run < 20; run++ {
		ops := make([]byte, 3*20000)
		rng.Read(ops)
		// Phases: fill (no takes), then drain (takes only), then mixed.
		for i := 0; i < len(ops); i += 3 {
			switch {
			case i < len(ops)/3:
				ops[i] %= 2
			case i < 2*len(ops)/3:
				ops[i] = 2
			}
		}
		checkAddrTable(t, ops)
	}
}

// FuzzAddrTable: any sequence of operations answers as a Go map does.
func FuzzAddrTable(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 6, 2, 1, 0, 3, 2, 0, 4, 0, 0})
	seed := make([]byte, 3*300)
	for i := range 300 {
		binary.LittleEndian.PutUint16(seed[3*i:], uint16(i%2)|uint16(i%40)<<8)
	}
	f.Add(seed)
	f.Fuzz(checkAddrTable)
}

// TestKeyIndexLikeMap: keyIndex gives each allocKey the index a Go map
// handing out indices in order of first sight gives it, across growth,
// for keys that differ only in stack, only in size, or only in the sign
// or high bits of either.
func TestKeyIndexLikeMap(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var x keyIndex
	var keys []allocKey
	want := map[allocKey]int32{}
	stacks := []int32{-1, 0, 1, 2, 1 << 20, -1 << 31, 1<<31 - 1}
	sizes := []int64{0, 512, 1 << 20, -512, 1 << 62, -1 << 63}
	for i := 0; i < 50000; i++ {
		k := allocKey{stack: stacks[rng.Intn(len(stacks))], size: sizes[rng.Intn(len(sizes))]}
		if rng.Intn(2) == 0 {
			k = allocKey{stack: int32(rng.Intn(300)), size: int64(rng.Intn(40)) * 512}
		}
		w, ok := want[k]
		if !ok {
			w = int32(len(want))
			want[k] = w
		}
		if got := x.index(&keys, k); got != w {
			t.Fatalf("step %d: %+v has index %d, want %d", i, k, got, w)
		}
		if len(keys) != len(want) || keys[w] != k {
			t.Fatalf("step %d: %d keys, want %d; keys[%d] = %+v, want %+v", i, len(keys), len(want), w, keys[w], k)
		}
	}
}

// A rowList gives back every row, by index and in order, across the
// first chunk's growth and the chunk boundaries, and no chunk but the
// last is short (at's index arithmetic relies on it).
func TestRowList(t *testing.T) {
	const size = 1 << rowChunkBits
	for _, n := range []int{0, 1, 16, 17, size - 1, size, size + 1, 3*size + 5} {
		var l rowList[blockInfo]
		for i := 0; i < n; i++ {
			l.add(blockInfo{addr: uint64(i), size: int64(2 * i)})
		}
		if l.len() != n {
			t.Fatalf("n %d: len %d", n, l.len())
		}
		for k, c := range l.chunks {
			if k < len(l.chunks)-1 && len(c) != size {
				t.Errorf("n %d: chunk %d of %d holds %d rows", n, k, len(l.chunks), len(c))
			}
		}
		for i := 0; i < n; i++ {
			if b := l.at(i); b.addr != uint64(i) || b.size != int64(2*i) {
				t.Fatalf("n %d: at(%d) = %+v", n, i, *b)
			}
		}
		i := 0
		for b := range l.all {
			if b.addr != uint64(i) {
				t.Fatalf("n %d: row %d is %+v", n, i, b)
			}
			i++
		}
		if i != n {
			t.Errorf("n %d: all yielded %d rows", n, i)
		}
	}
}

// TestAddrFilterNeverMisses: an addrTable's filter says "maybe" for every
// address the table holds (groupSites skips the table's lookup on "no",
// so a wrong "no" would drop a block from the trace's live set), and "no"
// for most others: with at least 16 bits an entry, about one in 16 or
// fewer of the absent addresses gets a "maybe" (the bound below, one in
// 8, leaves room for chance).
func TestAddrFilterNeverMisses(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 5, 100, 1253, 20000} {
		var tab addrTable[int]
		for tab.len() < n {
			// GPU block addresses: 512-byte aligned, in a few regions,
			// the odd unaligned or extreme one.
			a := 0x7f00_0000_0000 + uint64(rng.Intn(1<<24))*512
			switch rng.Intn(50) {
			case 0:
				a = rng.Uint64()
			case 1:
				a = ^uint64(0) - uint64(rng.Intn(4))
			}
			tab.put(a, 1)
		}
		f := tab.filter()
		for a := range tab.all {
			if !f.mayHold(a) {
				t.Fatalf("n=%d: filter says %#x is not in the table, which holds it", n, a)
			}
		}
		maybe, tries := 0, 20000
		for range tries {
			a := 0x6f00_0000_0000 + uint64(rng.Intn(1<<24))*512 // a region the table does not use
			if f.mayHold(a) {
				maybe++
			}
		}
		if maybe*8 > tries {
			t.Errorf("n=%d: %d of %d absent addresses get a maybe", n, maybe, tries)
		}
	}
}
