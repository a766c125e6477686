package pickle

import "io"

// ChunkReader is a reader that lends its buffers instead of copying into
// the caller's: a read-ahead that fills whole buffers on another
// goroutine (parse/pytorch). The Decoder reads from one when its reader
// implements it, and copies only the few bytes of an opcode cut by a
// buffer's end.
type ChunkReader interface {
	// NextChunk returns the next buffer: its bytes are buf[from:], and
	// buf[:from], at least ChunkHeadroom bytes, is free for the caller to
	// write. The buffer is the caller's until its next call of NextChunk,
	// which takes it back. err is the source's error (io.EOF at the end),
	// returned with or after the last bytes before it; once it is
	// returned, NextChunk returns it again with no bytes.
	NextChunk() (buf []byte, from int, err error)
}

// ChunkHeadroom is the free room a ChunkReader leaves before each
// buffer's bytes: the rest of an opcode cut by the last buffer's end
// goes there, so that the opcode reads whole with no copy of the rest.
const ChunkHeadroom = 4 << 10

// ensureMax is the most bytes ensure can make available at once: reads
// longer than that go through a buffer of their own (readBytes).
const ensureMax = 256 << 10

// source is a refillable window on the input that knows the byte offset
// of every byte it holds. Its window is its own buffer, or the buffer a
// ChunkReader lent; slices of the window are good until the next read
// (ensure).
type source struct {
	r        io.Reader
	cr       ChunkReader // when set, read instead of r
	buf      []byte      // the window: own or a lent chunk
	own      []byte      // the source's own buffer (ensureMax bytes), nil until needed
	pend     []byte      // a lent chunk's bytes not yet copied into own
	lent     bool        // buf is a lent chunk
	pos, end int         // unread bytes are buf[pos:end]
	base     int64       // input offset of buf[0]
	err      error       // first error from r (io.EOF at the end)
}

func newSource(r io.Reader) source {
	s := source{r: r}
	if s.cr, _ = r.(ChunkReader); s.cr == nil {
		s.own = make([]byte, ensureMax)
		s.buf = s.own
	}
	return s
}

// offset is the input offset of the next unread byte.
func (s *source) offset() int64 { return s.base + int64(s.pos) }

// ensure makes at least n <= ensureMax unread bytes available, reading as
// needed; false means the input ended (or failed) first.
func (s *source) ensure(n int) bool {
	if s.end-s.pos >= n {
		return true
	}
	if s.cr != nil {
		return s.ensureChunks(n)
	}
	s.compact()
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

// compact moves the unread bytes to the start of the own buffer, which
// becomes the window (made now if it was not).
func (s *source) compact() {
	if s.own == nil {
		s.own = make([]byte, ensureMax) // lent chunks seldom need it
	}
	if s.lent || len(s.buf) == 0 {
		s.base += int64(s.pos)
		s.end = copy(s.own, s.buf[s.pos:s.end])
		s.pos, s.buf, s.lent = 0, s.own, false
		return
	}
	if s.pos > 0 {
		copy(s.buf, s.buf[s.pos:s.end])
		s.end -= s.pos
		s.base += int64(s.pos)
		s.pos = 0
	}
}

// ensureChunks is ensure for a ChunkReader. A lent chunk becomes the
// window when the unread bytes fit in its headroom; otherwise (a read of
// more than a chunk's bytes, a short chunk) the bytes are copied into the
// own buffer, until its unread bytes fit in a headroom again.
func (s *source) ensureChunks(n int) bool {
	for s.end-s.pos < n {
		left := s.end - s.pos
		if len(s.pend) == 0 {
			if s.err != nil {
				return false
			}
			if left <= ChunkHeadroom {
				// The unread bytes go before the next chunk's: the chunk
				// in hand may be the window, and goes back.
				var tmp [ChunkHeadroom]byte
				copy(tmp[:], s.buf[s.pos:s.end])
				b, from, err := s.cr.NextChunk()
				if err != nil {
					s.err = err
				}
				if from >= left && from < len(b) {
					at := from - left
					copy(b[at:from], tmp[:left])
					s.base += int64(s.pos) - int64(at)
					s.buf, s.pos, s.end, s.lent = b, at, len(b), true
					continue
				}
				// No bytes, or no headroom (a broken ChunkReader): copy,
				// as below.
				if s.own == nil {
					s.own = make([]byte, ensureMax)
				}
				s.base += int64(s.pos)
				s.end = copy(s.own, tmp[:left])
				s.pos, s.buf, s.lent = 0, s.own, false
				if from >= 0 && from <= len(b) {
					s.pend = b[from:]
				}
				continue
			}
			s.compact() // before the chunk in hand goes back
			b, from, err := s.cr.NextChunk()
			if err != nil {
				s.err = err
			}
			if from >= 0 && from <= len(b) {
				s.pend = b[from:]
			}
			if len(s.pend) == 0 && s.err == nil {
				continue
			}
		}
		s.compact()
		m := copy(s.buf[s.end:], s.pend)
		s.end += m
		s.pend = s.pend[m:]
		if m == 0 && len(s.pend) > 0 {
			return false // n > ensureMax
		}
	}
	return true
}

// read reads into p, past the window, which must be empty (a long string,
// readBytes): an io.Reader's Read.
func (s *source) read(p []byte) (int, error) {
	if s.cr == nil {
		return s.r.Read(p)
	}
	if len(s.pend) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.buf, s.lent = s.own, false // the window's chunk goes back
		b, from, err := s.cr.NextChunk()
		if from >= 0 && from <= len(b) {
			s.pend = b[from:]
		}
		s.err = err
		if len(s.pend) == 0 {
			return 0, err
		}
	}
	m := copy(p, s.pend)
	s.pend = s.pend[m:]
	return m, nil
}
