package parse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// ReadAhead reads its source on a goroutine of its own, a few chunks
// ahead of its reader, so that the source's work (gzip's inflation, the
// read system calls) runs on another core beside the parser: a sixth of
// the work on a real gzip snapshot, about as much of the NVML parser's
// on a large --query-gpu log. Bytes and the source's error arrive in the
// source's order: the error is returned after every byte read before it,
// as from the source itself, and again on every later read. Close stops
// the goroutine and waits for it; it must be called before the source is
// closed, and may be called at any point, more than once. A read after
// Close returns io.ErrClosedPipe once the chunks already read are used.
//
// It lends whole chunks (NextChunk, a pickle.ChunkReader) rather than
// copying them out, and fills them through the source's WriteTo where it
// has one (a bufio.Reader's hands its buffered bytes, then the reader
// under it to the chunks' ReadFrom), else by Read: no copy through a
// bufio.Reader's buffer, and gzip (parse/gunzip) inflates straight into
// the chunk.
//
// A ReadAhead is read from one goroutine; Close is called from that
// goroutine too, or after it stops reading. Only for sources whose Read
// returns (a regular file, or gzip over one): Close cannot interrupt a
// Read blocked on a pipe.
type ReadAhead struct {
	src      io.Reader
	size     int // the bytes of a chunk, after its headroom
	chunks   int // the most chunks that exist at once
	headroom int // free bytes before each chunk's bytes
	full     chan readChunk
	empty    chan []byte
	done     chan struct{}
	wg       sync.WaitGroup
	started  bool
	// waited is set once the reader has waited for a chunk after its
	// first: the source is the slower side (gzip's inflation given a core
	// in bursts), and chunks beyond eagerChunks may then be made.
	waited atomic.Bool
	taken  bool         // a chunk was received
	made   atomic.Int32 // the chunks made (for tests)

	cur []byte // what is left of the chunk being read (by Read, Peek, ReadSlice)
	buf []byte // the chunk lent last, handed back on the next NextChunk
	err error  // the source's error, once every chunk before it is taken
}

type readChunk struct {
	b   []byte // the chunk's bytes follow its headroom
	err error
}

// NewReadAhead returns a ReadAhead of src in at most chunks chunks (at
// least 1) of size bytes (at least 1) each, each with headroom free bytes
// (at least 0) before its bytes; memory: chunks*(headroom+size) bytes.
// The goroutine starts at the first read.
func NewReadAhead(src io.Reader, size, chunks, headroom int) *ReadAhead {
	chunks = max(chunks, 1)
	return &ReadAhead{
		src:      src,
		size:     max(size, 1),
		chunks:   chunks,
		headroom: max(headroom, 0),
		full:     make(chan readChunk, chunks),
		empty:    make(chan []byte, chunks),
		done:     make(chan struct{}),
	}
}

// ChunkSize returns the bytes of a chunk, its headroom not counted.
func (r *ReadAhead) ChunkSize() int { return r.size }

// errStopped ends the source's WriteTo when Close is called.
var errStopped = errors.New("read-ahead stopped")

// filler is the writer the source's WriteTo writes into (and the
// ReaderFrom a bufio.Reader's WriteTo reads into): it fills chunks and
// queues each when full.
type filler struct {
	r    *ReadAhead
	b    []byte // the chunk being filled; its bytes are b[headroom:n]
	n    int
	made int
}

// eagerChunks is how many chunks a ReadAhead makes before its reader has
// had to wait for one: where the source keeps ahead (a file in the page
// cache), two chunks keep the reader fed, and each chunk more is memory
// the process touches for the first time, a page fault a page (a 2 MB
// snapshot read into eight chunks took 512 of its 4,800 faults).
const eagerChunks = 2

// take gets an empty chunk: one the reader has handed back, else a new
// one while fewer than eagerChunks exist, or fewer than r.chunks once the
// reader has waited for one. false: Close was called.
func (f *filler) take() bool {
	select {
	case b := <-f.r.empty:
		f.b = b
	case <-f.r.done:
		return false
	default:
		if f.made < min(f.r.chunks, eagerChunks) || f.made < f.r.chunks && f.r.waited.Load() {
			f.made++
			f.r.made.Add(1)
			f.b = make([]byte, f.r.headroom+f.r.size)
		} else {
			select {
			case b := <-f.r.empty:
				f.b = b
			case <-f.r.done:
				return false
			}
		}
	}
	f.n = f.r.headroom
	return true
}

// send queues the chunk being filled, with err.
func (f *filler) send(err error) bool {
	select {
	case f.r.full <- readChunk{f.b[:f.n], err}:
		f.b = nil
		return true
	case <-f.r.done:
		return false
	}
}

func (f *filler) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if f.b == nil && !f.take() {
			return written, errStopped
		}
		m := copy(f.b[f.n:], p)
		f.n += m
		p = p[m:]
		written += m
		if f.n == len(f.b) && !f.send(nil) {
			return written, errStopped
		}
	}
	return written, nil
}

// ReadFrom reads a source with no WriteTo (a plain file or gzip, through
// the bufio.Reader's WriteTo) straight into the chunks.
func (f *filler) ReadFrom(src io.Reader) (int64, error) {
	var total int64
	for {
		if f.b == nil && !f.take() {
			return total, errStopped
		}
		m, err := src.Read(f.b[f.n:])
		f.n += m
		total += int64(m)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return total, nil
			}
			return total, err
		}
		if f.n == len(f.b) && !f.send(nil) {
			return total, errStopped
		}
	}
}

func (r *ReadAhead) start() {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f := &filler{r: r}
		var err error
		if wt, ok := r.src.(io.WriterTo); ok {
			_, err = wt.WriteTo(f)
		} else {
			_, err = f.ReadFrom(r.src)
		}
		if errors.Is(err, errStopped) {
			return
		}
		if err == nil {
			err = io.EOF
		}
		if f.b == nil && !f.take() {
			return
		}
		f.send(err)
	}()
}

// release hands the chunk lent last back to be filled again.
func (r *ReadAhead) release() {
	if r.buf != nil {
		r.empty <- r.buf[:cap(r.buf)] // never blocks: at most r.chunks exist
		r.buf = nil
	}
}

// NextChunk implements pickle.ChunkReader: the next chunk, its bytes
// buf[from:] after from bytes of headroom (NewReadAhead's), and the
// source's error (io.EOF at its end) with the last chunk, then alone with
// no bytes on every later call. The chunk is the caller's to write until
// the next call, when it goes back to be filled again; what Read, Peek
// or ReadSlice had left of the chunk before is dropped.
func (r *ReadAhead) NextChunk() (buf []byte, from int, err error) {
	r.release()
	r.cur = nil
	if r.err != nil {
		return nil, 0, r.err
	}
	if !r.started {
		r.started = true
		select {
		case <-r.done: // Close before any read
			r.err = io.ErrClosedPipe
			return nil, 0, r.err
		default:
			r.start()
		}
	}
	if r.taken && !r.waited.Load() {
		select {
		case c := <-r.full:
			r.buf, r.err = c.b, c.err
			return c.b, r.headroom, c.err
		default:
			r.waited.Store(true)
		}
	}
	r.taken = true
	select {
	case c := <-r.full:
		r.buf, r.err = c.b, c.err
		return c.b, r.headroom, c.err
	case <-r.done:
		r.err = io.ErrClosedPipe // read after Close
		return nil, 0, r.err
	}
}

// next makes cur the next chunk's bytes; false, with cur empty, once the
// source's error was returned with a chunk before (r.err).
func (r *ReadAhead) next() bool {
	more := r.err == nil
	b, from, _ := r.NextChunk()
	r.cur = b[from:]
	return more
}

// Read is io.Reader's: it copies the chunks out, for a reader that is
// not the pickle decoder.
func (r *ReadAhead) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.cur) == 0 {
		if !r.next() {
			return 0, r.err
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it to end.
func (r *ReadAhead) Close() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.wg.Wait()
}

// LineReadAhead is a ReadAhead that also serves lines as a bufio.Reader
// does (Peek, ReadSlice), its chunks serving as the buffer: a line is
// copied only where it spans chunks. It is what nvml.NewReader reads
// lines from.
type LineReadAhead struct {
	*ReadAhead

	// Bytes of several chunks joined, what Peek shows (cur is then a
	// slice of joined), and a line across chunks.
	joined, line []byte
}

// NewLineReadAhead returns a LineReadAhead of src in chunks chunks of
// size bytes, with no headroom (see NewReadAhead). Peek serves at most
// size bytes, and ReadSlice returns bufio.ErrBufferFull after size bytes
// with no delimiter.
func NewLineReadAhead(src io.Reader, size, chunks int) *LineReadAhead {
	return &LineReadAhead{ReadAhead: NewReadAhead(src, size, chunks, 0)}
}

// ReadSlice is bufio.Reader's: the bytes up to and including the first
// delim, valid until the next read; with the source's error at the end,
// and bufio.ErrBufferFull after a chunk's size of bytes without delim.
func (r *LineReadAhead) ReadSlice(delim byte) ([]byte, error) {
	if i := bytes.IndexByte(r.cur, delim); i >= 0 {
		line := r.cur[:i+1]
		r.cur = r.cur[i+1:]
		return line, nil
	}
	r.line = append(r.line[:0], r.cur...)
	for r.next() {
		if i := bytes.IndexByte(r.cur, delim); i >= 0 {
			r.line = append(r.line, r.cur[:i+1]...)
			r.cur = r.cur[i+1:]
			return r.line, nil
		}
		r.line = append(r.line, r.cur...)
		if len(r.line) >= r.size {
			r.cur = r.cur[len(r.cur):]
			return r.line, bufio.ErrBufferFull
		}
	}
	return r.line, r.err
}

// Peek is bufio.Reader's: the next n bytes (at most a chunk's size), not
// consumed; fewer, with the source's error, at its end.
func (r *LineReadAhead) Peek(n int) ([]byte, error) {
	if n > r.size {
		return nil, bufio.ErrBufferFull
	}
	if len(r.cur) < n && r.err == nil {
		// Join what is left and the chunks after it into joined, which
		// is then read as a chunk is.
		j := append(r.joined[:0], r.cur...)
		for len(j) < n && r.next() {
			j = append(j, r.cur...)
		}
		r.release()
		r.joined, r.cur = j, j
	}
	if len(r.cur) < n {
		return r.cur, r.err
	}
	return r.cur[:n], nil
}
