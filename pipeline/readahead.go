package pipeline

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// byteReadAhead reads its source on a goroutine of its own, a few chunks
// ahead of the reader, so that the read system calls (and gzip's
// inflation, for a compressed input) run beside the parser rather than
// on its goroutine: on the 154.7 MB --query-gpu log they are about a
// sixth of the parser goroutine's time, on this 2-core machine's page
// cache copy. Bytes and the source's error arrive in the source's order:
// the error is returned after every byte read before it, as from the
// source itself. Close stops the goroutine and waits for it; it must be
// called before the source is closed.
//
// Only for sources whose Read returns (a regular file, or gzip over
// one): Close cannot interrupt a Read blocked on a pipe.
type byteReadAhead struct {
	src   io.Reader
	full  chan readChunk
	empty chan []byte
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	cur []byte // what is left of the chunk being read (or of joined)
	buf []byte // that chunk's buffer, handed back once read
	err error  // the source's error, returned once cur is empty

	// For Peek and ReadSlice: bytes of several chunks joined, what Peek
	// shows (cur is then a slice of joined) and a line across chunks.
	joined, line []byte
	size         int // the chunks' size (readAheadChunk; tests make it small)
}

type readChunk struct {
	b   []byte
	err error
}

// Four chunks of 512 KiB: bufio.Reader reads a chunk of at least its own
// buffer's size (parse.Open's 256 KiB) straight from the file, without
// copying it through its buffer.
const (
	readAheadChunk  = 512 << 10
	readAheadChunks = 4
)

func newByteReadAhead(src io.Reader) *byteReadAhead {
	return newByteReadAheadSize(src, readAheadChunk)
}

// newByteReadAheadSize is newByteReadAhead with chunks of size bytes.
func newByteReadAheadSize(src io.Reader, size int) *byteReadAhead {
	r := &byteReadAhead{
		src:   src,
		full:  make(chan readChunk, readAheadChunks),
		empty: make(chan []byte, readAheadChunks),
		done:  make(chan struct{}),
		size:  max(size, 1),
	}
	r.wg.Add(1)
	go r.run()
	return r
}

func (r *byteReadAhead) run() {
	defer r.wg.Done()
	made := 0
	for {
		var b []byte
		if made < readAheadChunks {
			b = make([]byte, r.size)
			made++
		} else {
			select {
			case b = <-r.empty:
			case <-r.done:
				return
			}
		}
		n := 0
		var err error
		for n < len(b) && err == nil {
			var m int
			m, err = r.src.Read(b[n:])
			n += m
		}
		select {
		case r.full <- readChunk{b[:n], err}:
		case <-r.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// next makes cur the next chunk, handing the last one's buffer back;
// false, with cur empty, once the source's error is reached (r.err).
func (r *byteReadAhead) next() bool {
	if r.buf != nil {
		r.empty <- r.buf[:cap(r.buf)] // never blocks: at most readAheadChunks exist
		r.buf = nil
	}
	r.cur = nil
	if r.err != nil {
		return false
	}
	select {
	case c := <-r.full:
		r.cur, r.buf, r.err = c.b, c.b, c.err
	case <-r.done:
		r.err = io.ErrClosedPipe // read after Close
	}
	return true
}

// Read is io.Reader's.
func (r *byteReadAhead) Read(p []byte) (int, error) {
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

// ReadSlice is bufio.Reader's, the chunks serving as its buffer (no copy
// but of a line across two chunks): the bytes up to and including the
// first delim, valid until the next read; with the source's error at the
// end, and bufio.ErrBufferFull after a chunk's size of bytes without
// delim.
func (r *byteReadAhead) ReadSlice(delim byte) ([]byte, error) {
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

// Peek is bufio.Reader's: the next n bytes (at most a chunk's size),
// not consumed; fewer, with the source's error, at its end.
func (r *byteReadAhead) Peek(n int) ([]byte, error) {
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
		if r.buf != nil {
			r.empty <- r.buf[:cap(r.buf)]
			r.buf = nil
		}
		r.joined, r.cur = j, j
	}
	if len(r.cur) < n {
		return r.cur, r.err
	}
	return r.cur[:n], nil
}

// Close stops the goroutine and waits for it.
func (r *byteReadAhead) Close() {
	r.once.Do(func() {
		close(r.done)
		r.wg.Wait()
	})
}
