package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gpuleak/gpuleak/parse/gunzip"
)

// SniffLen is how many leading bytes of an input detection looks at.
const SniffLen = 64 << 10

var gzipMagic = []byte{0x1f, 0x8b}

// IsGzip reports whether head, an input's first bytes, begins a gzip
// stream (RFC 1952's magic bytes), as Open recognises one.
func IsGzip(head []byte) bool { return bytes.HasPrefix(head, gzipMagic) }

// Input is an opened input: a buffered reader over its (decompressed)
// bytes, able to show its first SniffLen bytes without consuming them.
type Input struct {
	// Name is the path as the user gave it ("-" for standard input).
	Name string
	// Size is the size in bytes of the file on disk, or -1 when unknown
	// (standard input, pipes). For gzip input it is the compressed size.
	Size int64
	// Gzip is true when the input was gzip-compressed.
	Gzip bool
	// LeadingNULs counts the NUL bytes skipped before the content; byte
	// offsets in errors count from after them (and after a UTF-8 byte
	// order mark).
	LeadingNULs int64
	// Regular is true for a regular file, which can be opened and read
	// again; false for standard input, a pipe, a FIFO or a device, whose
	// bytes come once.
	Regular bool
	// UTF16 is "UTF-16LE" or "UTF-16BE" for text that began with a UTF-16
	// byte order mark, or whose every other byte is NUL (UTF-16 without
	// one), decoded to UTF-8 as it is read; "" otherwise.
	UTF16 string
	// Embedded is true when the input is a page of torch.cuda._memory_viz
	// (trace_plot, segment_plot) and its bytes are the snapshot the page
	// embeds, base64-decoded (embeddedSnapshot); offsets in errors count
	// the decoded bytes.
	Embedded bool
	// JSON is true when the input is a snapshot saved as JSON
	// (json.dump) and its bytes are the pickle of it, transcoded as it is
	// read (jsonSnapshot); offsets in errors count the pickle's bytes.
	JSON bool

	r      *bufio.Reader
	closer []io.Closer
	count  *countingReader
	// gzipCut is set once the gzip stream was found cut short (its
	// reader's io.ErrUnexpectedEOF), for Locate: a parser may report the
	// cut as its own "unexpected EOF" without the gzip in the chain.
	gzipCut atomic.Bool
	// trailing: see TrailingGarbage (nil for an input not gzip).
	trailing *atomic.Int64
	// readToCut: see ReadToCut.
	readToCut atomic.Pointer[GzipCut]
}

// Open opens the file at path, or stdin when path is "-", and removes gzip
// compression when the content starts with the gzip magic bytes (the name
// does not matter). The caller must Close the Input.
//
// Errors: an *Error naming path first (path: no such file or directory,
// as every other input error reads; it wraps the system's error, so
// errors.Is(err, fs.ErrNotExist) holds) for a file that cannot be opened,
// or an *Error when a gzip header is damaged.
func Open(path string, stdin io.Reader) (*Input, error) {
	in := &Input{Name: path, Size: -1}
	var raw io.Reader
	if path == "-" {
		if stdin == nil {
			return nil, errors.New("-: no standard input")
		}
		raw = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			// Not the *os.PathError's "open PATH: ...": the file first.
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, &Error{File: path, Offset: -1, Err: err}
		}
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				f.Close()
				return nil, &Error{File: path, Offset: -1, Msg: "is a directory: give the files in it (gpuleak report and gpuleak export walk directories)", Err: ErrIsDirectory}
			}
			in.Size = st.Size()
			in.Regular = st.Mode().IsRegular()
		}
		in.closer = append(in.closer, f)
		raw = f
	}
	in.count = &countingReader{r: raw}
	br := bufio.NewReaderSize(in.count, 256<<10)
	head, _ := br.Peek(len(gzipMagic))
	if IsGzip(head) {
		zr, err := gunzip.NewReader(br)
		if err != nil {
			in.Close()
			return nil, &Error{File: path, Offset: 0, Msg: "damaged gzip header", Err: err}
		}
		in.Gzip = true // zr holds no resource: nothing to close
		in.trailing = new(atomic.Int64)
		in.trailing.Store(-1)
		br = bufio.NewReaderSize(gzipErrReader{zr: zr, cut: &in.gzipCut, trailing: in.trailing}, 256<<10)
	}
	// A UTF-8 byte order mark, which some editors and Windows tools put
	// before text, is not part of any format: drop it. Offsets in errors
	// count from after it.
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	// UTF-16 with a byte order mark is what Windows PowerShell 5's ">"
	// and Out-File write: decode it to UTF-8 so that every text format
	// reads it. Offsets in errors then count bytes of the UTF-8 text.
	if head, _ := br.Peek(2); len(head) == 2 && (head[0] == 0xff && head[1] == 0xfe || head[0] == 0xfe && head[1] == 0xff) {
		in.UTF16 = "UTF-16LE"
		if head[0] == 0xfe {
			in.UTF16 = "UTF-16BE"
		}
		br.Discard(2)
		br = bufio.NewReaderSize(&utf16Reader{r: br, be: head[0] == 0xfe, lineStart: true}, 256<<10)
	}
	// UTF-16 without a byte order mark (Out-File -Encoding Unicode piped
	// on, a tool that drops it): text whose every other byte is NUL. Read
	// as text it is no format's (an nvidia-smi CSV would be "needs
	// --fields"): decode it as the marked form is.
	if in.UTF16 == "" {
		if head, _ := br.Peek(512); len(head) >= 8 {
			if enc := utf16NoBOM(head); enc != "" {
				in.UTF16 = enc
				br = bufio.NewReaderSize(&utf16Reader{r: br, be: enc == "UTF-16BE"}, 256<<10)
			}
		}
	}
	// NUL bytes before the content are the hole logrotate's copytruncate
	// leaves when the writer goes on at its old offset (often megabytes):
	// no format starts with one, so skip them too, counted in LeadingNULs.
	for {
		b, _ := br.Peek(64 << 10)
		n := 0
		for n < len(b) && b[n] == 0 {
			n++
		}
		if n == 0 {
			break
		}
		br.Discard(n)
		in.LeadingNULs += int64(n)
		if n < len(b) {
			break
		}
	}
	if r, ok := embeddedSnapshot(br); ok {
		in.Embedded = true
		br = r
	} else if r, ok := jsonSnapshot(br); ok {
		in.JSON = true
		br = r
	}
	in.r = br
	return in, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// Reader returns the reader of the input's decompressed bytes.
func (in *Input) Reader() *bufio.Reader { return in.r }

// Head returns up to SniffLen leading bytes without consuming them. A short
// result means the input is shorter; a read error other than io.EOF is
// returned with the byte offset where reading stopped (a gzip stream cut
// short: "byte offset N of the decompressed content ...: gzip: unexpected
// EOF").
func (in *Input) Head() ([]byte, error) {
	b, err := in.r.Peek(SniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		// Where reading stopped: the content's bytes before the error
		// (after the skipped NULs), and for gzip the compressed bytes read.
		off := in.LeadingNULs + int64(len(b))
		if in.Gzip {
			return b, fmt.Errorf("byte offset %d of the decompressed content (compressed bytes read: %d): %w", off, in.count.n.Load(), err)
		}
		if in.Embedded {
			return b, fmt.Errorf("byte offset %d of the snapshot the page embeds (base64-decoded): %w", off, err)
		}
		if in.JSON {
			return b, err // it names the offset in the JSON
		}
		return b, fmt.Errorf("byte offset %d: %w", off, err)
	}
	return b, nil
}

// GzipCut reads an input's bytes up to where its gzip stream is cut short,
// and ends there as at the end of the input (io.EOF), for a log read line
// by line whose lines before the cut are whole; Cut says then where the
// cut came. Other errors are passed on.
type GzipCut struct {
	in *Input
	r  io.Reader
	n  int64
	// Cut is true once the stream was found cut short.
	Cut bool
	// At is the byte offset of the decompressed content where inflation
	// stopped (after leading NULs); Compressed, the compressed bytes read.
	At, Compressed int64
}

// UpToGzipCut returns a GzipCut over the input's reader.
func (in *Input) UpToGzipCut() *GzipCut { return &GzipCut{in: in, r: in.r} }

func (c *GzipCut) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && c.in.Gzip && errors.Is(err, io.ErrUnexpectedEOF) && strings.HasPrefix(err.Error(), "gzip: ") {
		c.Cut, c.At, c.Compressed = true, c.in.LeadingNULs+c.n, c.in.count.n.Load()
		c.in.readToCut.Store(c)
		err = io.EOF
	}
	return n, err
}

// ReadToCut returns the GzipCut through which the input was read up to
// where its gzip stream is cut short, once such a reading reached the cut
// (whichever reading of the input did: a first pass that found nothing
// leaves it for the next); nil otherwise.
func (in *Input) ReadToCut() *GzipCut { return in.readToCut.Load() }

// String says where the stream was cut, for a warning.
func (c *GzipCut) String() string {
	return fmt.Sprintf("the gzip stream is cut short at byte offset %d of the decompressed content (compressed bytes read: %d)", c.At, c.Compressed)
}

// Locate marks the *Error in err's chain, when in is gzip-compressed and
// the error is at a byte offset, as placed in the decompressed content
// (Error.Gzip), with the compressed bytes read when the gzip stream was cut
// short. It returns err. Every error of a family's reader of in goes
// through it, so that every offset of a gzipped input says what it counts.
func (in *Input) Locate(err error) error {
	var pe *Error
	if err == nil || !(in.Gzip || in.Embedded || in.JSON) || !errors.As(err, &pe) || pe.Offset < 0 || pe.Line > 0 {
		return err
	}
	pe.Embedded = in.Embedded
	pe.JSON = in.JSON
	if !in.Gzip {
		return err
	}
	pe.Gzip = true
	if in.gzipCut.Load() {
		pe.Compressed = in.count.n.Load()
		if pe.Err == io.ErrUnexpectedEOF {
			// The parser's own "unexpected EOF" was the stream's cut.
			pe.Err = gzipErr(pe.Err)
		}
	}
	return err
}

// IsGzipCut reports whether err, from Head, is a gzip stream cut short.
func IsGzipCut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) && strings.Contains(err.Error(), "gzip: ")
}

// Tee makes every byte read from now on (the bytes Head shows included)
// also be written to w, for an input that must be read twice but can be
// read only once (see Regular). A write error of w ends reading with it.
func (in *Input) Tee(w io.Writer) {
	in.r = bufio.NewReaderSize(io.TeeReader(in.r, w), 256<<10)
}

// RawBytesRead reports how many bytes of the file (compressed, for gzip
// input) have been read so far; for progress display.
func (in *Input) RawBytesRead() int64 { return in.count.n.Load() }

// Close closes the decompressor and the file.
func (in *Input) Close() error {
	var first error
	for i := len(in.closer) - 1; i >= 0; i-- {
		if err := in.closer[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	in.closer = nil
	return first
}

// gzipErrReader says "gzip" in decompression errors, so that a parser's
// positioned error tells a damaged compressed stream from a damaged
// payload. A truncated gzip stream is io.ErrUnexpectedEOF, kept in the chain.
// It has no WriteTo: a read-ahead's chunks are filled by Read, which
// inflates straight into them.
type gzipErrReader struct {
	zr  *gunzip.Reader
	cut *atomic.Bool // set when the stream is cut short
	// trailing is set to the compressed offset where bytes that begin no
	// gzip member follow a whole one (-1 until then).
	trailing *atomic.Int64
}

func (g gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		g.cut.Store(true)
	}
	if errors.Is(err, gunzip.ErrHeader) && g.zr.MemberEnd > 0 {
		// Bytes after a whole member that begin no other (an upload
		// padded, a file appended to, a copy onto an older larger one):
		// gzip -d warns of "trailing garbage" and keeps the members, and
		// so does the input; TrailingGarbage says where, for a warning.
		g.trailing.Store(g.zr.MemberEnd)
		return n, io.EOF
	}
	return n, gzipErr(err)
}

// TrailingGarbage returns, for a gzip input whose bytes after a whole
// member begin no other member (gzip -d's "trailing garbage ignored"),
// the byte offset of the compressed file where the last whole member
// ends (zero bytes of padding may follow it before them); -1 when
// there are none, or none was reached yet. The input ends, as gzip -d's
// output, at the end of the last whole member: what was read is every
// whole member, and the caller warns that the rest was ignored
// (TrailingGarbageNote).
func (in *Input) TrailingGarbage() int64 {
	if in.trailing == nil {
		return -1
	}
	return in.trailing.Load()
}

// TrailingGarbageNote is the warning for an input with trailing garbage
// at off (TrailingGarbage).
func TrailingGarbageNote(off int64) string {
	return fmt.Sprintf("the bytes of the compressed file after its last whole gzip member, which ends at byte offset %d, begin no member (trailing garbage, which gzip -d also ignores with a warning): they were not read; what was read is the whole gzip stream before them, its checksums verified (had they been another member, damaged, its content is missing)", off)
}

func gzipErr(err error) error {
	if err != nil && !errors.Is(err, io.EOF) && !strings.HasPrefix(err.Error(), "gzip: ") {
		err = fmt.Errorf("gzip: %w", err) // io.ErrUnexpectedEOF: a truncated stream
	}
	return err
}

// utf16NoBOM returns "UTF-16LE" or "UTF-16BE" when head reads as UTF-16
// text without a byte order mark: its first character and at least 9 in
// 10 of its others ASCII text (printable, tab, line ends) with the other
// byte of each NUL; "" otherwise (binary data, NULs of a hole, UTF-8).
func utf16NoBOM(head []byte) string {
	isText := func(c byte) bool { return c >= 0x20 && c < 0x7f || c == '\t' || c == '\r' || c == '\n' }
	pairs := len(head) / 2
	for _, be := range []bool{false, true} {
		lo, hi := 0, 1 // the byte of the character, and the NUL beside it
		if be {
			lo, hi = 1, 0
		}
		if head[hi] != 0 || !isText(head[lo]) {
			continue
		}
		n := 0
		for i := 0; i < pairs; i++ {
			if head[2*i+hi] == 0 && isText(head[2*i+lo]) {
				n++
			}
		}
		if n*10 >= pairs*9 {
			if be {
				return "UTF-16BE"
			}
			return "UTF-16LE"
		}
	}
	return ""
}

// utf16Reader decodes UTF-16 (without its byte order mark) to UTF-8. An
// unpaired surrogate becomes U+FFFD, as does an odd last byte.
//
// A file that PowerShell 5 began in UTF-16 and another program went on
// in 8-bit text (cmd's ">>", Python's logging appending UTF-8, a BOM
// left by an empty Out-File) changes encoding at a line's start: where
// the bytes after a decoded line end (or after the byte order mark) are
// 8-bit text (see goesOn8Bit), the rest is passed on as it is.
type utf16Reader struct {
	r   *bufio.Reader
	be  bool
	out []byte // decoded bytes not yet returned
	err error
	// lineStart: the next unit starts a line (after a decoded "\n", or
	// the byte order mark), where the text may go on in 8-bit.
	lineStart bool
	// bytes: the text went on in 8-bit; bytes are passed on undecoded.
	bytes bool
}

// goesOn8Bit reports whether the bytes ahead (up to 256, at least 8) are
// 8-bit text: no NUL, no control byte but tab and line ends, valid UTF-8
// (a character cut at the window's end aside). UTF-16 of ASCII has a NUL
// beside each character, of Cyrillic or Greek a control byte; of CJK,
// bytes 0x80-0x9F where UTF-8 cannot have them, within a few characters.
func (u *utf16Reader) goesOn8Bit() bool {
	b, _ := u.r.Peek(256)
	if len(b) < 8 {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		// A character the window cut: drop up to three bytes of it.
		if utf8.Valid(b[:len(b)-i]) {
			return true
		}
	}
	return false
}

func (u *utf16Reader) unit() (uint16, error) {
	var b [2]byte
	n, err := io.ReadFull(u.r, b[:])
	if n == 1 {
		return 0xfffd, nil // an odd last byte
	}
	if err != nil {
		return 0, err
	}
	if u.be {
		return uint16(b[0])<<8 | uint16(b[1]), nil
	}
	return uint16(b[1])<<8 | uint16(b[0]), nil
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) < len(p) && u.err == nil && len(u.out) < 4096 {
		if u.lineStart {
			u.lineStart = false
			u.bytes = u.bytes || u.goesOn8Bit()
		}
		if u.bytes {
			if len(u.out) > 0 {
				break // the decoded text first
			}
			return u.r.Read(p)
		}
		c, err := u.unit()
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			u.err = err
			break
		}
		r := rune(c)
		if utf16.IsSurrogate(r) {
			if c >= 0xdc00 {
				r = utf8.RuneError
			} else if b, _ := u.r.Peek(2); len(b) == 2 {
				lo := uint16(b[1])<<8 | uint16(b[0])
				if u.be {
					lo = uint16(b[0])<<8 | uint16(b[1])
				}
				if lo >= 0xdc00 && lo < 0xe000 {
					u.r.Discard(2)
					r = utf16.DecodeRune(r, rune(lo))
				} else {
					r = utf8.RuneError
				}
			} else {
				r = utf8.RuneError
			}
		}
		u.out = utf8.AppendRune(u.out, r)
		u.lineStart = r == '\n'
	}
	if len(u.out) == 0 {
		return 0, u.err
	}
	n := copy(p, u.out)
	u.out = u.out[:copy(u.out, u.out[n:])]
	return n, nil
}
