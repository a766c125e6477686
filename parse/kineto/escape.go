package kineto

import (
	"bytes"
	"io"
	"strconv"
)

// rawStrings repairs the JSON strings a trace writer left unescaped, byte
// for byte (the length never changes, so offsets in errors stay the
// file's):
//
//   - Kineto before mid-2023 (pytorch/kineto#617, fixed by #754; PyTorch
//     1.8 to 2.0) wrote event names as they came, so a Windows trace
//     recorded with with_stack=True names its Python functions
//     "C:\Users\me\train.py(12): step", which is no JSON: "\U" and "\w"
//     are no escapes, and "torch\nn\functional.py(2233): linear" reads as
//     a newline and a form feed. Later Kineto writes every backslash as
//     '/' (ChromeTraceLogger::sanitizeStrForJSON); a string written raw
//     is read so too: every backslash but one before a quote becomes '/'.
//     A string was written raw when it holds a backslash that starts no
//     JSON escape, or holds a backslash and ".py(" (a python_function
//     name: no file name holds a tab or a newline).
//   - a control character inside a string (a raw tab or newline in a
//     name) is no JSON either: it becomes a space.
//
// A string is held until it ends to decide; one longer than maxRawString
// is passed on as it is. Strings that are valid JSON with escapes of
// their own (\u00e9, \n in a re-saved trace) are left alone.
type rawStrings struct {
	r    io.Reader
	buf  []byte // bytes read from r; buf[head:] not yet returned
	head int
	out  int // buf[head:out] are decided and may be returned
	// scan state over buf[out:]
	inString bool
	start    int  // offset in buf of the open string's first byte (after '"')
	pos      int  // offset in buf where the open string's scan goes on
	long     bool // the open string is longer than maxRawString: passed on
	// Repaired counts the strings that were written raw; Controls the
	// control characters replaced.
	Repaired, Controls int64
	err                error
}

const maxRawString = 1 << 20

func newRawStrings(r io.Reader) *rawStrings { return &rawStrings{r: r} }

func (s *rawStrings) Read(p []byte) (int, error) {
	for s.out == s.head {
		if s.err != nil {
			if len(s.buf) == s.head {
				return 0, s.err
			}
			// The input ended inside a string: pass it on as it is, for
			// the decoder to say where.
			s.inString, s.out = false, len(s.buf)
			break
		}
		if len(s.buf) == cap(s.buf) {
			// Move what is left to the front, or grow.
			if s.head > 0 {
				n := copy(s.buf, s.buf[s.head:])
				s.out -= s.head
				s.start -= s.head
				s.pos -= s.head
				s.buf, s.head = s.buf[:n], 0
			} else {
				nb := make([]byte, len(s.buf), max(2*cap(s.buf), 64<<10))
				copy(nb, s.buf)
				s.buf = nb
			}
		}
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		from := len(s.buf)
		s.buf = s.buf[:from+n]
		if err != nil {
			s.err = err
		}
		s.scan(from)
	}
	n := copy(p, s.buf[s.head:s.out])
	s.head += n
	return n, nil
}

// scan decides the bytes of buf from offset from on: outside a string
// every byte is decided at once; a string when its closing quote comes.
func (s *rawStrings) scan(from int) {
	i := from
	for i < len(s.buf) {
		if !s.inString {
			j := bytes.IndexByte(s.buf[i:], '"')
			if j < 0 {
				s.out = len(s.buf)
				return
			}
			i += j + 1
			s.inString, s.start, s.pos = true, i, i
			s.out = i
			continue
		}
		// Inside a string: find its end, skipping escaped bytes.
		end := -1
		k := s.pos
		for ; k < len(s.buf) && end < 0; k++ {
			switch s.buf[k] {
			case '\\':
				if k+1 == len(s.buf) {
					s.pos = k // look at it again with the next byte
					goto more
				}
				k++
			case '"':
				end = k
			}
		}
		if end < 0 {
			s.pos = k
			goto more
		}
		if !s.long {
			s.fix(s.buf[s.start:end])
		}
		s.inString, s.long = false, false
		i = end + 1
		s.out = i
		continue
	more:
		if s.long || len(s.buf)-s.start > maxRawString {
			// Too long to hold: pass it on as it is, still looking for
			// its end.
			s.long = true
			s.out = s.pos
		}
		return
	}
	if !s.inString {
		s.out = len(s.buf)
	}
}

// fix rewrites one string's bytes (without its quotes) in place.
func (s *rawStrings) fix(b []byte) {
	raw := false
	hasBackslash := false
	for k := 0; k < len(b); k++ {
		c := b[k]
		if c < 0x20 {
			b[k] = ' '
			s.Controls++
			continue
		}
		if c != '\\' {
			continue
		}
		hasBackslash = true
		if k+1 >= len(b) {
			raw = true
			break
		}
		switch b[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			k++
		case 'u':
			if k+5 < len(b) && isHex4(b[k+2:k+6]) {
				k += 5
			} else {
				raw = true
			}
		default:
			raw = true
		}
	}
	if !raw && !(hasBackslash && bytes.Contains(b, []byte(".py("))) {
		return
	}
	if !raw && escapedBackslashesOnly(b) {
		// Written by a JSON writer (a trace saved again by Python's json
		// module): each escaped backslash (a backslash pair) is one
		// backslash, read as '/' too, through the escape of '/' (a
		// backslash and '/'), of the same length.
		for k := 0; k+1 < len(b); k++ {
			if b[k] == '\\' {
				b[k+1] = '/'
				k++
			}
		}
		return
	}
	s.Repaired++
	for k := 0; k < len(b); k++ {
		if b[k] == '\\' && (k+1 >= len(b) || b[k+1] != '"') {
			b[k] = '/'
		}
	}
}

// escapedBackslashesOnly reports whether every backslash of b is one of
// a pair, an escaped backslash.
func escapedBackslashesOnly(b []byte) bool {
	for k := 0; k < len(b); k++ {
		if b[k] == '\\' {
			if k+1 >= len(b) || b[k+1] != '\\' {
				return false
			}
			k++
		}
	}
	return true
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// plural says n things, with the noun in the number's form.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
