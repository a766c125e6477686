package gunzip

// Decode tables for DEFLATE's canonical Huffman codes (RFC 1951, 3.2.2),
// built as in libdeflate: a primary table indexed by the next tableBits
// bits of the stream (codes are stored bit-reversed, least significant bit
// first), whose entries either resolve a code of at most tableBits bits or
// point to a subtable for the longer codes sharing those first bits.
//
// An entry is a uint32:
//
//	bits 0-7    bits to consume: the code's whole length (a subtable
//	            pointer's: 0, nothing is consumed by the primary lookup)
//	bits 8-12   extra bits after the code (a length's or a distance's), or
//	            a subtable's index bits
//	bit 13      subtable pointer
//	bit 14      end of block
//	bit 15      literal
//	bits 16-31  the value: a literal byte, a length or distance base, or a
//	            subtable's offset in the table
//
// An entry of 0 (no code maps there) is an invalid code.

const (
	entrySub     = 1 << 13
	entryEOB     = 1 << 14
	entryLiteral = 1 << 15

	litBits  = 11 // primary index bits of the literal/length table
	distBits = 8  // and of the distance table

	maxCodeLen = 15
	numLitLen  = 288 // symbols 286 and 287 exist in the fixed code but are invalid
	numDist    = 32  // 30 and 31 likewise

	// Table sizes: the primary table and every subtable a complete code
	// can need (libdeflate's bounds, from zlib's enough: 2342 for 288
	// symbols, 11 bits; 402 for 32 symbols, 8 bits), rounded up.
	litTableSize  = 2400
	distTableSize = 420
)

// Length symbols 257-285: base length and extra bits (RFC 1951, 3.2.5).
var lengthBase = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
var lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}

// Distance symbols 0-29.
var distBase = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

// litEntry is the decode entry of literal/length symbol sym, whose code is
// n bits long.
func litEntry(sym int, n int) uint32 {
	switch {
	case sym < 256:
		return entryLiteral | uint32(sym)<<16 | uint32(n)
	case sym == 256:
		return entryEOB | uint32(n)
	case sym < 286:
		i := sym - 257
		return uint32(lengthBase[i])<<16 | uint32(lengthExtra[i])<<8 | uint32(n)
	}
	return 0 // 286, 287: invalid
}

// distEntry is the decode entry of distance symbol sym, n bits long.
func distEntry(sym int, n int) uint32 {
	if sym < 30 {
		return uint32(distBase[sym])<<16 | uint32(distExtra[sym])<<8 | uint32(n)
	}
	return 0 // 30, 31: invalid
}

// buildTable fills table for the code whose lengths are lens (0: symbol
// unused), with a primary table of 1<<bits entries. It returns false for
// lengths no decoder accepts: an over-subscribed code, or an incomplete one
// other than a single code of length 1 (as zlib and Go's compress/flate).
// A code with no symbol at all is accepted when allowEmpty (a block with
// no distances); every lookup in its table is then invalid.
func buildTable(table []uint32, lens []uint8, bits uint, entry func(sym, n int) uint32, allowEmpty bool) bool {
	var count [maxCodeLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	// Kraft: the codes left at each length.
	left := 1
	used := 0
	for l := 1; l <= maxCodeLen; l++ {
		left <<= 1
		left -= count[l]
		if left < 0 {
			return false // over-subscribed
		}
		used += count[l]
	}
	primary := table[:1<<bits]
	clear(table)
	if used == 0 {
		return allowEmpty
	}
	if left > 0 && !(used == 1 && count[1] == 1) {
		return false // incomplete
	}
	// Symbols sorted by (length, symbol): canonical order.
	var offs [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [numLitLen]uint16
	for sym, l := range lens {
		if l != 0 {
			sorted[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	// Walk the codes in canonical order: code is the next code, MSB first.
	code := 0
	i := 0
	remaining := count // codes not yet placed, by length
	end := 1 << bits   // where the next subtable goes
	subPrefix := -1
	subStart, subBits := 0, uint(0)
	for l := 1; l <= maxCodeLen; l++ {
		for n := 0; n < count[l]; n++ {
			sym := int(sorted[i])
			i++
			rev := reverse(code, l)
			e := entry(sym, l)
			if uint(l) <= bits {
				for j := rev; j < len(primary); j += 1 << l {
					primary[j] = e
				}
			} else {
				prefix := rev & (1<<bits - 1)
				if prefix != subPrefix {
					// A new subtable for the codes whose first bits
					// are prefix: as wide as the longest of them
					// needs (libdeflate's count of the codes left).
					subPrefix = prefix
					subBits = uint(l) - bits
					room := 1 << subBits
					for room > remaining[bits+subBits] {
						room -= remaining[bits+subBits]
						subBits++
						room <<= 1
						if bits+subBits > maxCodeLen {
							return false
						}
					}
					subStart = end
					end += 1 << subBits
					if end > len(table) {
						return false
					}
					primary[prefix] = entrySub | uint32(subStart)<<16 | uint32(subBits)<<8
				}
				step := 1 << (uint(l) - bits)
				for j := rev >> bits; j < 1<<subBits; j += step {
					table[subStart+j] = e
				}
			}
			remaining[l]--
			code++
		}
		code <<= 1
	}
	return true
}

// reverse returns the low n bits of code in reverse order.
func reverse(code, n int) int {
	r := 0
	for range n {
		r = r<<1 | code&1
		code >>= 1
	}
	return r
}
