package pickle

import "io"

// source is a refillable window on the input that knows the byte offset
// of every byte it holds.
type source struct {
	r        io.Reader
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	base     int64 // input offset of buf[0]
	err      error // first error from r (io.EOF at the end)
}

// offset is the input offset of the next unread byte.
func (s *source) offset() int64 { return s.base + int64(s.pos) }

// ensure makes at least n <= len(buf) unread bytes available, reading as
// needed; false means the input ended (or failed) first.
func (s *source) ensure(n int) bool {
	if s.end-s.pos >= n {
		return true
	}
	if s.pos > 0 {
		copy(s.buf, s.buf[s.pos:s.end])
		s.end -= s.pos
		s.base += int64(s.pos)
		s.pos = 0
	}
	for s.end < n && s.err == nil {
		m, err := s.r.Read(s.buf[s.end:])
		s.end += m
		if err != nil {
			s.err = err
		} else if m == 0 {
			// A reader that returns nothing and no error repeatedly would
			// spin; io.Reader allows it rarely, so keep trying.
			continue
		}
	}
	return s.end-s.pos >= n
}
