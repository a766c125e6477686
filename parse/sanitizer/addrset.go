package sanitizer

import "strconv"

// maxLeakedAddrs is the most leaked addresses of one process kept to tell
// a new process by a repeated address: 65,536, a table of at most 1 MiB.
// A process that leaks more is told from the next one by a repeat of one
// of its first maxLeakedAddrs addresses (a second run of a program leaks
// at the addresses of the first, in the same order) or by program output
// between them; the Reader warns once when a process goes past it.
const maxLeakedAddrs = 1 << 16

// addrSet is a set of addresses: open addressing with linear probing, 8
// bytes a slot, at most half full; a zero slot is empty, and address 0 is
// kept apart. A Go map[uint64]bool costs about 4 times as much a leak.
type addrSet struct {
	slots []uint64 // len is 0 or a power of two
	n     int
	zero  bool
}

func (s *addrSet) Len() int {
	if s.zero {
		return s.n + 1
	}
	return s.n
}

// slot is where a is, or the empty slot where it would go.
func (s *addrSet) slot(a uint64) int {
	mask := len(s.slots) - 1
	// Fibonacci hashing: leak addresses share their low bits (alignment)
	// and their high bits (one address range).
	i := int((a*0x9E3779B97F4A7C15)>>32) & mask
	for s.slots[i] != 0 && s.slots[i] != a {
		i = (i + 1) & mask
	}
	return i
}

// Has reports whether a is in the set.
func (s *addrSet) Has(a uint64) bool {
	if a == 0 {
		return s.zero
	}
	if s.n == 0 {
		return false
	}
	return s.slots[s.slot(a)] == a
}

// Add puts a in the set.
func (s *addrSet) Add(a uint64) {
	if a == 0 {
		s.zero = true
		return
	}
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	if i := s.slot(a); s.slots[i] == 0 {
		s.slots[i] = a
		s.n++
	}
}

func (s *addrSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(2*len(old), 64))
	for _, a := range old {
		if a != 0 {
			s.slots[s.slot(a)] = a
		}
	}
}

// Reset empties the set, keeping its table for the next process.
func (s *addrSet) Reset() {
	clear(s.slots)
	s.n, s.zero = 0, false
}

// withCommas writes n with thousands separators: 262144 -> "262,144".
func withCommas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
