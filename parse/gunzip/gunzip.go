// Package gunzip reads gzip files (RFC 1952): one member or several
// concatenated, each a DEFLATE stream (RFC 1951) with its CRC-32 and size
// checked. It inflates straight into the caller's buffer, keeping only the
// last 32 KiB of output for back-references, with libdeflate's methods:
// 64-bit bit-buffer refills from memory, 11-bit first-level decode tables
// and matches copied a word at a time. On a real PyTorch snapshot it takes
// 0.59-0.66 times the CPU time of github.com/klauspost/compress/gzip's
// reader (BenchmarkInflateBigReal), whose inflation and copy out of its
// window were a third of gpuleak's time on one.
//
// Errors: ErrHeader for a damaged member header, ErrChecksum for a CRC-32
// or size that does not match the data, a CorruptInputError (the byte
// offset in the compressed file, its headers counted) for an invalid
// DEFLATE stream, io.ErrUnexpectedEOF for a stream cut short (a later
// member's header too), and the source's own read errors. Zero bytes after
// a member are padding, skipped (ZeroPadding). After an error
// every later Read returns it again. A header's file name and comment may
// be of any length: they are read through, not kept.
//
// Reads of 32 KiB or more are the fast case: the last 266 bytes of each
// Read, and matches reaching back before it, are decoded with every check,
// a byte at a time (with 512-byte reads about 0.6 times klauspost's speed).
package gunzip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// ErrHeader is returned for a member whose header is not gzip's (also for
// bytes after a member that do not begin another one).
var ErrHeader = errors.New("gzip: invalid header")

// ErrChecksum is returned when a member's CRC-32 or length does not match
// the data inflated.
var ErrChecksum = errors.New("gzip: invalid checksum")

// CorruptInputError is an invalid DEFLATE stream, at the byte offset (of
// the compressed input) where it was found.
type CorruptInputError int64

func (e CorruptInputError) Error() string {
	return fmt.Sprintf("flate: corrupt input before offset %d", int64(e))
}

const (
	windowSize = 32 << 10
	inBufSize  = 128 << 10
	// fastOut is the output room the fast loop needs per symbol: the
	// longest match and the 8 bytes its word copy may write past it.
	fastOut = 258 + 8
)

type state uint8

const (
	stMember  state = iota // a member header is next (or the end)
	stBlock                // a block header is next
	stStored               // inside a stored block
	stHuffman              // inside a Huffman-coded block
	stTrailer              // the member's trailer is next
	stEnd                  // the last member ended at the input's end
)

// Reader inflates a gzip stream read from an io.Reader.
type Reader struct {
	r      io.Reader
	in     []byte // in[ip:iend] are read and not yet taken
	ip     int
	iend   int
	inBase int64 // compressed bytes before in[0]
	eof    bool  // r has no more bytes (or failed: srcErr)
	srcErr error

	bits uint64 // bit buffer: the next nb bits of the stream, LSB first
	nb   uint

	st       state
	final    bool // the current block is the member's last
	stored   int  // bytes left in the stored block
	pendLen  int  // bytes of a match not yet written (the caller's buffer was full)
	pendDist int

	hist []byte // the last (up to) windowSize bytes of output, in a 2*windowSize buffer
	crc  uint32 // of the member's output so far
	size uint32 // its length, modulo 2^32
	err  error

	// started: the first member's header was read; ZeroPadding counts the
	// zero bytes skipped after a member (see header).
	started     bool
	ZeroPadding int64
	// MemberEnd is the byte offset of the input just after the last
	// member read whole (its trailer checked); 0 before the first ends.
	// After ErrHeader from Read, what follows it is not gzip (trailing
	// garbage, as gzip -d calls it).
	MemberEnd int64

	lit, dist           []uint32 // the current block's tables
	dynLit              [litTableSize]uint32
	dynDist             [distTableSize]uint32
	fixedLit, fixedDist []uint32
	lens                [numLitLen + numDist]uint8
}

// NewReader returns a Reader of r, having read the first member's header
// (ErrHeader when it is not one; io.ErrUnexpectedEOF when r ends inside
// it, io.EOF when r is empty).
func NewReader(r io.Reader) (*Reader, error) {
	z := &Reader{r: r, in: make([]byte, inBufSize), hist: make([]byte, 0, 2*windowSize)}
	if err := z.header(); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	return z, nil
}

// InputOffset returns the compressed bytes consumed so far.
func (z *Reader) InputOffset() int64 { return z.inBase + int64(z.ip) - int64(z.nb>>3) }

// Read inflates up to len(p) bytes into p. It returns io.EOF after the
// last member's trailer, when the input ends there.
func (z *Reader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	n := 0
	if z.pendLen > 0 {
		n = z.copyMatch(p, 0, z.pendDist, z.pendLen)
	}
	var err error
	from := 0 // p[from:n]: bytes not yet in the member's CRC-32
loop:
	for n < len(p) && err == nil {
		switch z.st {
		case stMember:
			if err = z.header(); err == io.EOF {
				z.st = stEnd
			}
		case stBlock:
			err = z.blockHeader()
		case stStored:
			n, err = z.storedData(p, n)
		case stHuffman:
			n, err = z.huffman(p, n)
		case stTrailer:
			z.crc = crc32.Update(z.crc, crc32.IEEETable, p[from:n])
			z.size += uint32(n - from)
			from = n
			if err = z.trailer(); err == nil && n > 0 {
				// The next member starts in the next Read, with no
				// window: its matches cannot reach these bytes.
				break loop
			}
		case stEnd:
			err = io.EOF
		}
	}
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p[from:n])
	z.size += uint32(n - from)
	z.remember(p[:n])
	if err != nil {
		z.err = err
		if n > 0 && err == io.EOF {
			// io.EOF with the last bytes is allowed; keep it for the next
			// Read too.
			return n, nil
		}
	}
	return n, err
}

// remember keeps the last windowSize bytes of output, b being the newest.
func (z *Reader) remember(b []byte) {
	if len(b) >= windowSize {
		z.hist = append(z.hist[:0], b[len(b)-windowSize:]...)
		return
	}
	if len(z.hist)+len(b) > cap(z.hist) {
		keep := windowSize - len(b)
		copy(z.hist, z.hist[len(z.hist)-keep:])
		z.hist = z.hist[:keep]
	}
	z.hist = append(z.hist, b...)
}

// fill reads more input into in, keeping in[ip:iend]. It returns false at
// the input's end (or on the source's error, in srcErr).
func (z *Reader) fill() bool {
	if z.eof {
		return false
	}
	if z.ip > 0 && z.iend-z.ip < len(z.in)/2 {
		copy(z.in, z.in[z.ip:z.iend])
		z.inBase += int64(z.ip)
		z.iend -= z.ip
		z.ip = 0
	}
	for tries := 0; ; tries++ {
		m, err := z.r.Read(z.in[z.iend:])
		z.iend += m
		if err != nil {
			z.eof = true
			if err != io.EOF {
				z.srcErr = err
			}
			return m > 0
		}
		if m > 0 {
			return true
		}
		if tries == 100 {
			z.eof, z.srcErr = true, io.ErrNoProgress
			return false
		}
	}
}

// eofErr is the error for input that ended where more was needed.
func (z *Reader) eofErr() error {
	if z.srcErr != nil {
		return z.srcErr
	}
	return io.ErrUnexpectedEOF
}

// corrupt is a CorruptInputError at the current input offset.
func (z *Reader) corrupt() error { return CorruptInputError(z.InputOffset()) }

// refillSlow tops the bit buffer up to at least 49 bits a byte at a time,
// reading more input as needed; at the input's end it stops short.
func (z *Reader) refillSlow() {
	z.bits &= 1<<z.nb - 1 // drop bits a word refill loaded ahead
	for z.nb <= 48 {
		if z.ip >= z.iend && !z.fill() {
			return
		}
		z.bits |= uint64(z.in[z.ip]) << z.nb
		z.ip++
		z.nb += 8
	}
}

// need makes n (at most 49) bits available, or returns the end-of-input error.
func (z *Reader) need(n uint) error {
	if z.nb < n {
		z.refillSlow()
		if z.nb < n {
			return z.eofErr()
		}
	}
	return nil
}

// take consumes and returns n bits (n at most 32, and available).
func (z *Reader) take(n uint) uint32 {
	v := uint32(z.bits & (1<<n - 1))
	z.bits >>= n
	z.nb -= n
	return v
}

// byteAligned drops the bits up to the next byte boundary.
func (z *Reader) byteAligned() {
	z.take(z.nb & 7)
}

// readByte reads a whole byte once the bit buffer is byte-aligned.
func (z *Reader) readByte() (byte, error) {
	if z.nb >= 8 {
		return byte(z.take(8)), nil
	}
	z.bits = 0
	if z.ip >= z.iend && !z.fill() {
		return 0, z.eofErr()
	}
	b := z.in[z.ip]
	z.ip++
	return b, nil
}

// readFull fills b with whole bytes (readByte), for the fixed fields of
// headers and trailers.
func (z *Reader) readFull(b []byte) error {
	for i := range b {
		c, err := z.readByte()
		if err != nil {
			return err
		}
		b[i] = c
	}
	return nil
}

// header reads a member header (RFC 1952, 2.3.1). io.EOF: no byte at all.
// After a member, zero bytes are skipped (ZeroPadding counts them) before
// the next header or the end, as Python's gzip module skips them (a file
// padded to a block size by the tool that copied or stored it): a snapshot
// PyTorch users load so is read, not refused; any other byte after a
// member must begin another.
func (z *Reader) header() error {
	z.byteAligned()
	b, err := z.readByte()
	for err == nil && b == 0 && z.started {
		z.ZeroPadding++
		b, err = z.readByte()
	}
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			return io.EOF
		}
		return err
	}
	z.started = true
	if b != 0x1f {
		return ErrHeader // not a member, however few bytes follow
	}
	var h [10]byte
	h[0] = b
	if err := z.readFull(h[1:]); err != nil {
		return err
	}
	if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 {
		return ErrHeader
	}
	flg := h[3]
	if flg&0xe0 != 0 { // reserved flags
		return ErrHeader
	}
	crc := crc32.Update(0, crc32.IEEETable, h[:])
	read := func(n int) error {
		for range n {
			c, err := z.readByte()
			if err != nil {
				return err
			}
			crc = crc32.Update(crc, crc32.IEEETable, []byte{c})
		}
		return nil
	}
	if flg&4 != 0 { // FEXTRA
		var x [2]byte
		if err := z.readFull(x[:]); err != nil {
			return err
		}
		crc = crc32.Update(crc, crc32.IEEETable, x[:])
		if err := read(int(binary.LittleEndian.Uint16(x[:]))); err != nil {
			return err
		}
	}
	for _, f := range []byte{8, 16} { // FNAME, FCOMMENT: zero-terminated
		if flg&f == 0 {
			continue
		}
		for {
			c, err := z.readByte()
			if err != nil {
				return err
			}
			crc = crc32.Update(crc, crc32.IEEETable, []byte{c})
			if c == 0 {
				break
			}
		}
	}
	if flg&2 != 0 { // FHCRC: the header's CRC-32, low 16 bits
		var x [2]byte
		if err := z.readFull(x[:]); err != nil {
			return err
		}
		if binary.LittleEndian.Uint16(x[:]) != uint16(crc) {
			return ErrHeader
		}
	}
	z.crc, z.size = 0, 0
	z.hist = z.hist[:0]
	z.st = stBlock
	return nil
}

// trailer reads a member's CRC-32 and size and checks them.
func (z *Reader) trailer() error {
	z.byteAligned()
	var t [8]byte
	if err := z.readFull(t[:]); err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(t[:4]) != z.crc || binary.LittleEndian.Uint32(t[4:]) != z.size {
		return ErrChecksum
	}
	z.st = stMember
	z.MemberEnd = z.InputOffset()
	return nil
}

// blockHeader reads a block's header and, for a Huffman block, its codes.
func (z *Reader) blockHeader() error {
	if err := z.need(3); err != nil {
		return err
	}
	h := z.take(3)
	z.final = h&1 != 0
	switch h >> 1 {
	case 0: // stored
		z.byteAligned()
		var b [4]byte
		if err := z.readFull(b[:]); err != nil {
			return err
		}
		n, nn := binary.LittleEndian.Uint16(b[:2]), binary.LittleEndian.Uint16(b[2:])
		if n != ^nn {
			return z.corrupt()
		}
		z.stored = int(n)
		z.st = stStored
	case 1: // fixed Huffman codes
		if z.fixedLit == nil {
			z.buildFixed()
		}
		z.lit, z.dist = z.fixedLit, z.fixedDist
		z.st = stHuffman
	case 2:
		if err := z.dynamicCodes(); err != nil {
			return err
		}
		z.lit, z.dist = z.dynLit[:], z.dynDist[:]
		z.st = stHuffman
	default:
		return z.corrupt()
	}
	return nil
}

func (z *Reader) buildFixed() {
	var lens [numLitLen]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	z.fixedLit = make([]uint32, litTableSize)
	buildTable(z.fixedLit, lens[:], litBits, litEntry, false)
	var dl [numDist]uint8
	for i := range dl {
		dl[i] = 5
	}
	z.fixedDist = make([]uint32, distTableSize)
	buildTable(z.fixedDist, dl[:], distBits, distEntry, false)
}

// The order code length code lengths are sent in (RFC 1951, 3.2.7).
var clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

func clEntry(sym, n int) uint32 { return uint32(sym)<<16 | uint32(n) }

// dynamicCodes reads a dynamic block's code lengths and builds its tables.
func (z *Reader) dynamicCodes() error {
	if err := z.need(14); err != nil {
		return err
	}
	nlit := int(z.take(5)) + 257
	ndist := int(z.take(5)) + 1
	nclen := int(z.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return z.corrupt()
	}
	var cl [19]uint8
	for i := range nclen {
		if err := z.need(3); err != nil {
			return err
		}
		cl[clOrder[i]] = uint8(z.take(3))
	}
	var clTable [1 << 7]uint32
	if !buildTable(clTable[:], cl[:], 7, clEntry, false) {
		return z.corrupt()
	}
	lens := z.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if err := z.need(7); err != nil && z.nb == 0 {
			return err
		}
		e := clTable[z.bits&(1<<7-1)]
		l := uint(e & 0xff)
		if l == 0 || l > z.nb {
			if l == 0 {
				return z.corrupt()
			}
			return z.eofErr()
		}
		z.take(l)
		sym := int(e >> 16)
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return z.corrupt()
			}
			if err := z.need(2); err != nil {
				return err
			}
			rep, val = 3+int(z.take(2)), lens[i-1]
		case 17:
			if err := z.need(3); err != nil {
				return err
			}
			rep = 3 + int(z.take(3))
		default:
			if err := z.need(7); err != nil {
				return err
			}
			rep = 11 + int(z.take(7))
		}
		if i+rep > len(lens) {
			return z.corrupt()
		}
		for range rep {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return z.corrupt() // no end of block
	}
	var ll [numLitLen]uint8
	copy(ll[:], lens[:nlit])
	var dl [numDist]uint8
	copy(dl[:], lens[nlit:])
	if !buildTable(z.dynLit[:], ll[:], litBits, litEntry, false) ||
		!buildTable(z.dynDist[:], dl[:], distBits, distEntry, true) {
		return z.corrupt()
	}
	return nil
}

// storedData copies a stored block's bytes into p[n:].
func (z *Reader) storedData(p []byte, n int) (int, error) {
	for z.stored > 0 && n < len(p) {
		if z.nb >= 8 { // whole bytes the bit buffer holds come first
			p[n] = byte(z.take(8))
			n++
			z.stored--
			continue
		}
		z.bits = 0
		if z.ip >= z.iend && !z.fill() {
			return n, z.eofErr()
		}
		m := copy(p[n:min(len(p), n+z.stored)], z.in[z.ip:z.iend])
		z.ip += m
		n += m
		z.stored -= m
	}
	if z.stored == 0 {
		z.endBlock()
	}
	return n, nil
}

func (z *Reader) endBlock() {
	if z.final {
		z.st = stTrailer
	} else {
		z.st = stBlock
	}
}

// copyMatch writes up to length bytes of a match at distance dist into
// p[n:], from p's bytes before n and the window before them; what does not
// fit is left pending for the next Read. It returns the new n.
func (z *Reader) copyMatch(p []byte, n, dist, length int) int {
	h := len(z.hist)
	for length > 0 && n < len(p) {
		if s := n - dist; s >= 0 {
			p[n] = p[s]
		} else {
			p[n] = z.hist[h+s]
		}
		n++
		length--
	}
	z.pendLen, z.pendDist = length, dist
	return n
}

// lookup returns the entry of table (primary index bits wide) for the
// code at the bottom of bits, through its subtable when it is longer.
func lookup(table []uint32, bits uint64, primary uint) uint32 {
	e := table[bits&(1<<primary-1)]
	if e&entrySub != 0 {
		e = table[(e>>16)+uint32(bits>>primary)&(1<<((e>>8)&0x1f)-1)]
	}
	return e
}

// invalidCode is the error for bits that no code of the table starts:
// the input's end when fewer than a code's bits are left, else corrupt.
func (z *Reader) invalidCode() error {
	if z.nb < maxCodeLen && z.eof {
		return z.eofErr()
	}
	return z.corrupt()
}

// huffman decodes a Huffman block's symbols into p[n:] until the block
// ends or p is full.
func (z *Reader) huffman(p []byte, n int) (int, error) {
	n, done, err := z.fast(p, n)
	if err != nil || done {
		return n, err
	}
	return z.slow(p, n)
}

// fast is the decode loop for the common case: at least 8 bytes of input
// and fastOut bytes of room in p. One 64-bit refill per symbol gives the
// 48 bits the longest length and distance need. done: the block ended.
func (z *Reader) fast(p []byte, n int) (int, bool, error) {
	bits, nb := z.bits, z.nb
	in := z.in[:z.iend]
	ip := z.ip
	lit, dist := z.lit[:litTableSize], z.dist
	histLen := len(z.hist)
	for ip+8 <= len(in) && n <= len(p)-fastOut {
		// Refill to at least 56 bits (libdeflate's branchless refill).
		bits |= binary.LittleEndian.Uint64(in[ip:]) << nb
		ip += int((63 - nb) >> 3)
		nb |= 56
		e := lookup(lit, bits, litBits)
		l := uint(e & 0xff)
		bits >>= l
		nb -= l
		if e&entryLiteral != 0 {
			p[n] = byte(e >> 16)
			n++
			continue
		}
		if e&entryEOB != 0 {
			z.bits, z.nb, z.ip = bits, nb, ip
			z.endBlock()
			return n, true, nil
		}
		if l == 0 { // an invalid code
			z.bits, z.nb, z.ip = bits, nb, ip
			return n, false, z.corrupt()
		}
		x := uint((e >> 8) & 0x1f)
		length := int(e>>16) + int(bits&(1<<x-1))
		bits >>= x
		nb -= x
		d := lookup(dist, bits, distBits)
		dl := uint(d & 0xff)
		if dl == 0 {
			z.bits, z.nb, z.ip = bits, nb, ip
			return n, false, z.corrupt()
		}
		bits >>= dl
		nb -= dl
		x = uint((d >> 8) & 0x1f)
		off := int(d>>16) + int(bits&(1<<x-1))
		bits >>= x
		nb -= x
		if off > n {
			if off > n+histLen {
				z.bits, z.nb, z.ip = bits, nb, ip
				return n, false, z.corrupt()
			}
			n = z.copyMatch(p, n, off, length) // from the window: rare
			continue
		}
		src := n - off
		if off >= length && length >= 32 {
			copy(p[n:n+length], p[src:src+length])
		} else if off >= 8 {
			// Word copies: each reads bytes already final, since the
			// source is at least 8 behind; may write up to 7 bytes past
			// the match, inside p (fastOut).
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(p[n+i:], binary.LittleEndian.Uint64(p[src+i:]))
			}
		} else if off == 1 {
			c := p[src]
			for i := range length {
				p[n+i] = c
			}
		} else {
			for i := range length {
				p[n+i] = p[src+i]
			}
		}
		n += length
	}
	z.bits, z.nb, z.ip = bits, nb, ip
	return n, false, nil
}

// slow decodes one symbol at a time with every check, near the end of the
// input buffer or of p.
func (z *Reader) slow(p []byte, n int) (int, error) {
	for n < len(p) {
		if z.ip+8 <= z.iend && n <= len(p)-fastOut {
			var done bool
			var err error
			if n, done, err = z.fast(p, n); err != nil || done {
				return n, err
			}
			continue
		}
		if z.nb < 48 {
			z.refillSlow()
		}
		e := lookup(z.lit, z.bits, litBits)
		l := uint(e & 0xff)
		if l == 0 {
			return n, z.invalidCode()
		}
		if l > z.nb {
			return n, z.eofErr()
		}
		if e&entryLiteral != 0 {
			z.take(l)
			p[n] = byte(e >> 16)
			n++
			continue
		}
		if e&entryEOB != 0 {
			z.take(l)
			z.endBlock()
			return n, nil
		}
		x := uint((e >> 8) & 0x1f)
		if l+x > z.nb {
			return n, z.eofErr()
		}
		z.take(l)
		length := int(e>>16) + int(z.take(x))
		d := lookup(z.dist, z.bits, distBits)
		dl := uint(d & 0xff)
		if dl == 0 {
			return n, z.invalidCode()
		}
		x = uint((d >> 8) & 0x1f)
		if dl+x > z.nb {
			return n, z.eofErr()
		}
		z.take(dl)
		off := int(d>>16) + int(z.take(x))
		if off > n+len(z.hist) {
			return n, z.corrupt()
		}
		n = z.copyMatch(p, n, off, length)
	}
	return n, nil
}
