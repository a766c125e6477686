package pipeline

import (
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

	cur []byte // what is left of the chunk being read
	buf []byte // that chunk's buffer, handed back once read
	err error  // the source's error, returned once cur is empty
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
	r := &byteReadAhead{
		src:   src,
		full:  make(chan readChunk, readAheadChunks),
		empty: make(chan []byte, readAheadChunks),
		done:  make(chan struct{}),
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
			b = make([]byte, readAheadChunk)
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

// Read is io.Reader's.
func (r *byteReadAhead) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.cur) == 0 {
		if r.buf != nil {
			r.empty <- r.buf[:cap(r.buf)] // never blocks: at most readAheadChunks exist
			r.buf = nil
		}
		if r.err != nil {
			return 0, r.err
		}
		select {
		case c := <-r.full:
			r.cur, r.buf, r.err = c.b, c.b, c.err
		case <-r.done:
			return 0, io.ErrClosedPipe // read after Close
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it.
func (r *byteReadAhead) Close() {
	r.once.Do(func() {
		close(r.done)
		r.wg.Wait()
	})
}
