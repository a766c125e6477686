package pickle

import "math/bits"

// memoIndex maps dense memo indices to slots, in chunks of memoChunk: a
// pickle of a million records numbers millions of memo entries, and one
// slice would be copied each time it grew (up to 2.25 times its size held
// at once).
//
// The index grows with the pickle (a snapshot numbers two or three memo
// entries per trace entry), so a chunk that two newer ones follow is
// packed (packedChunk) when that makes it smaller: most of its entries
// hold one of two slots (a consumed record's, a shared str's), the rest
// are kept in order. Python's picklers write each memo entry once and
// fetch it later; the decoder changes an entry after the fact only when a
// Handler consumes or replaces what it holds, within a few thousand
// entries of its making. A change to a packed chunk unpacks it.
type memoIndex struct {
	chunks [][]uint32     // nil where packed
	packed []*packedChunk // by chunk; nil where not packed
	n      int64
	// cur is the last chunk, whole (the first chunk: as far as it has
	// grown); its entries from n on are not set yet. curBase is the index
	// of cur[0].
	cur     []uint32
	curBase int64
	rest    []uint32 // pack's scratch
	spare   []uint32 // the entries of the chunk packed last, for the next chunk
}

const memoChunkBits = 16
const memoChunk = 1 << memoChunkBits

// at and set index a chunk with uint16(i): memoChunkBits must be 16.
var _ [memoChunkBits - 16]struct{}
var _ [16 - memoChunkBits]struct{}

func (m *memoIndex) at(i int64) uint32 {
	// Small enough to be inlined: it runs for every memo get.
	if c := m.chunks[i>>memoChunkBits]; c != nil {
		return c[uint16(i)]
	}
	return m.packedAt(i)
}

// maxPackedReads is how many reads a packed chunk takes before it is
// unpacked for good: the chunk that holds a snapshot's dict keys is read
// a dozen times per trace entry, and reading packed entries costs about
// three times as much.
const maxPackedReads = memoChunk / 4

func (m *memoIndex) packedAt(i int64) uint32 {
	k := i >> memoChunkBits
	p := m.packed[k]
	if p.reads++; p.reads > maxPackedReads {
		m.chunks[k], m.packed[k] = p.unpack(), nil
		return m.chunks[k][uint16(i)]
	}
	return p.at(int(uint16(i)))
}

func (m *memoIndex) set(i int64, slot uint32) {
	k := i >> memoChunkBits
	if m.chunks[k] == nil {
		m.chunks[k], m.packed[k] = m.packed[k].unpack(), nil
	}
	m.chunks[k][uint16(i)] = slot
}

func (m *memoIndex) add(slot uint32) {
	// Small enough to be inlined: it runs for every memo put.
	if c, j := m.cur, uint64(m.n-m.curBase); j < uint64(len(c)) {
		c[j] = slot
		m.n++
		return
	}
	m.grow(slot)
}

// grow makes room in cur for entry n and adds slot there. The first chunk
// doubles from 64 entries, so that small pickles (and fuzz inputs) do not
// each take 256 KiB; later chunks are made whole.
func (m *memoIndex) grow(slot uint32) {
	switch {
	case len(m.chunks) == 0:
		m.cur = make([]uint32, 64)
		m.chunks = append(m.chunks, m.cur)
		m.packed = append(m.packed, nil)
	case len(m.cur) < memoChunk: // the first chunk
		c := make([]uint32, 2*len(m.cur))
		copy(c, m.cur)
		m.cur, m.chunks[0] = c, c
	default:
		m.newChunk()
		m.cur, m.curBase = m.chunks[len(m.chunks)-1], m.n
	}
	m.cur[m.n-m.curBase] = slot
	m.n++
}

// newChunk starts a chunk, and packs the one two before it. The packed
// chunk's entries become the new chunk's: a chunk a time, they were a
// third of what decoding a snapshot allocated (big_real: 12.7 of 38.5 MB),
// garbage that made the collector run more often.
func (m *memoIndex) newChunk() {
	if k := len(m.chunks) - 2; k >= 0 && m.chunks[k] != nil {
		var p *packedChunk
		if p, m.rest = pack(m.chunks[k], m.rest[:0]); p != nil {
			m.spare = m.chunks[k]
			m.chunks[k], m.packed[k] = nil, p
		}
	}
	c := m.spare
	m.spare = nil
	if c == nil {
		c = make([]uint32, memoChunk)
	} else {
		clear(c) // entries from n on read 0, as in a new chunk
	}
	m.chunks = append(m.chunks, c)
	m.packed = append(m.packed, nil)
}

// packedChunk is a full chunk of memo entries, 2 bits an entry: code 0
// and 1 are the chunk's two commonest slots, code 2 an entry of rest.
type packedChunk struct {
	common [2]uint32
	codes  []uint64 // 32 entries a word
	rank   []uint32 // entries of rest before each word
	rest   []uint32 // the other entries' slots, in index order
	reads  int
}

const (
	codeRest  = 2
	lowBits64 = 0x5555555555555555
)

// pack returns c (a full chunk) packed, or nil when that would not make
// it smaller; rest is scratch, returned for the next call.
func pack(c []uint32, rest []uint32) (*packedChunk, []uint32) {
	// The two commonest slots, from a sample: an exact count would cost a
	// map operation per entry.
	freq := make(map[uint32]int, 64)
	for j := 0; j < len(c); j += 64 {
		freq[c[j]]++
	}
	var top [2]uint32
	var topN [2]int
	for v, n := range freq {
		switch {
		case n > topN[0] || n == topN[0] && v < top[0]:
			top[1], topN[1] = top[0], topN[0]
			top[0], topN[0] = v, n
		case n > topN[1] || n == topN[1] && v < top[1]:
			top[1], topN[1] = v, n
		}
	}
	if len(freq) == 1 {
		top[1] = top[0]
	}
	p := &packedChunk{common: top, codes: make([]uint64, len(c)/32), rank: make([]uint32, len(c)/32)}
	for w := range p.codes {
		p.rank[w] = uint32(len(rest))
		var word uint64
		for j, v := range c[32*w : 32*w+32] {
			code := uint64(codeRest)
			if v == top[0] {
				code = 0
			} else if v == top[1] {
				code = 1
			} else {
				rest = append(rest, v)
			}
			word |= code << (uint(j) * 2)
		}
		p.codes[w] = word
	}
	// Packed: 2 bits and a 32nd of a rank an entry, and 4 bytes each
	// of rest.
	if 4*len(rest)+len(c)/4+len(c)/8 >= 4*len(c) {
		return nil, rest
	}
	p.rest = append([]uint32(nil), rest...)
	return p, rest
}

func (p *packedChunk) at(j int) uint32 {
	w := p.codes[j>>5]
	sh := uint(j&31) * 2
	code := (w >> sh) & 3
	if code < codeRest {
		return p.common[code]
	}
	// One bit, at each code's low bit, for the codes of rest (binary 10)
	// before j in this word.
	e := (w >> 1) &^ w & lowBits64 & (1<<sh - 1)
	return p.rest[p.rank[j>>5]+uint32(bits.OnesCount64(e))]
}

func (p *packedChunk) unpack() []uint32 {
	c := make([]uint32, memoChunk)
	for j := range c {
		c[j] = p.at(j)
	}
	return c
}
