package pickle

import (
	"math/rand"
	"testing"
)

// TestMemoIndexPacked: a memo index of five chunks, filled as a snapshot
// fills it (consumed records, a shared str, and distinct slots between)
// and in other mixes, gives back every slot after its older chunks were
// packed, is smaller, and takes a change to a packed chunk.
func TestMemoIndexPacked(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	mixes := map[string]func(i int) uint32{
		"snapshot": func(i int) uint32 { // record, "N/A", frames list, repeated
			switch i % 3 {
			case 0:
				return consumedSlot
			case 1:
				return 7
			}
			return uint32(100 + rng.Intn(5000))
		},
		"one slot":   func(int) uint32 { return consumedSlot },
		"all differ": func(i int) uint32 { return uint32(i + 2) },
		"random":     func(int) uint32 { return uint32(rng.Intn(4)) },
		"unset gaps": func(i int) uint32 {
			if rng.Intn(3) == 0 {
				return 0
			}
			return uint32(2 + rng.Intn(1<<30))
		},
	}
	for name, slot := range mixes {
		t.Run(name, func(t *testing.T) {
			var m memoIndex
			want := make([]uint32, 5*memoChunk+123)
			for i := range want {
				want[i] = slot(i)
				m.add(want[i])
			}
			if m.n != int64(len(want)) {
				t.Fatalf("n %d, want %d", m.n, len(want))
			}
			packed := 0
			for k, p := range m.packed {
				if p != nil {
					packed++
					if m.chunks[k] != nil || k >= len(m.chunks)-2 {
						t.Fatalf("chunk %d both packed and not, or packed too soon", k)
					}
				}
			}
			if name != "all differ" && packed != 4 || name == "all differ" && packed != 0 {
				t.Errorf("%d chunks packed", packed)
			}
			for i, w := range want {
				if got := m.at(int64(i)); got != w {
					t.Fatalf("at(%d) = %d, want %d", i, got, w)
				}
			}
			// A change in a packed chunk, to a slot it does not hold.
			m.set(3, 1<<31)
			want[3] = 1 << 31
			m.set(memoChunk+5, consumedSlot)
			want[memoChunk+5] = consumedSlot
			for i, w := range want {
				if got := m.at(int64(i)); got != w {
					t.Fatalf("after set: at(%d) = %d, want %d", i, got, w)
				}
			}
		})
	}
}

// TestMemoIndexPackedSize: the snapshot mix packs to under half.
func TestMemoIndexPackedSize(t *testing.T) {
	c := make([]uint32, memoChunk)
	for j := range c {
		c[j] = [3]uint32{consumedSlot, 7, uint32(100 + j)}[j%3]
	}
	p, _ := pack(c, nil)
	if p == nil {
		t.Fatal("not packed")
	}
	size := 8*len(p.codes) + 4*len(p.rank) + 4*len(p.rest)
	if size*2 >= 4*len(c) {
		t.Errorf("packed to %d bytes, from %d", size, 4*len(c))
	}
}
