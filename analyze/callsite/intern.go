package callsite

import "strings"

// Interner keeps one Go-owned copy of each distinct string read from an
// Arrow array. array.String.Value (and a dictionary's values) return strings
// that point into the record batch's buffers; the recycling allocator the
// program reads with (parse.RecyclingAllocator) zeroes and reuses those
// buffers once the batch is released, so every string an analyzer keeps
// past its batch (a frame's name, a map key, a message) goes through an
// Interner or strings.Clone. A repeated name costs one copy.
type Interner map[string]string

// get returns a copy of s that does not share memory with s, the same copy
// for equal strings. Looking up an existing string allocates nothing.
func (in Interner) Get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	v := strings.Clone(s)
	in[v] = v
	return v
}
