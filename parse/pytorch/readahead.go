package pytorch

import (
	"io"
	"sync"
)

// readAhead reads its source on a goroutine of its own, a few chunks ahead
// of the decoder, so that inflating a gzip snapshot (a sixth of the work on
// a real one) runs on another core beside the pickle decoder. Bytes and
// the source's error arrive in the source's order: an error is returned
// after every byte read before it, as from the source itself. Close stops
// the goroutine and waits for it.
type readAhead struct {
	src   io.Reader
	full  chan chunk
	empty chan []byte
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	cur  []byte // what is left of the chunk being read
	buf  []byte // the chunk's buffer, handed back once read
	err  error  // the source's error, once every chunk before it is read
	last bool   // err is final
}

type chunk struct {
	b   []byte
	err error
}

// Eight chunks (2 MiB) rather than three: with the analysis also busy, the
// inflating goroutine gets a core in bursts, and the deeper queue lets it
// fill more in each, so the decoder waits on it less. On big_real, 2 cores
// of the device host, 30 interleaved rounds: 0.425 s against 0.474 s for
// three chunks (and -10% and -16% in two shorter runs), for 2-4 MB more RSS.
const (
	readAheadChunk  = 256 << 10
	readAheadChunks = 8
)

func newReadAhead(src io.Reader) *readAhead {
	r := &readAhead{
		src:   src,
		full:  make(chan chunk, readAheadChunks),
		empty: make(chan []byte, readAheadChunks),
		done:  make(chan struct{}),
	}
	return r
}

func (r *readAhead) start() {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		made := 0
		for {
			var b []byte
			select {
			case b = <-r.empty:
			case <-r.done:
				return
			default:
				if made < readAheadChunks {
					made++
					b = make([]byte, readAheadChunk)
				} else {
					select {
					case b = <-r.empty:
					case <-r.done:
						return
					}
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
			case r.full <- chunk{b[:n], err}:
			case <-r.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
}

func (r *readAhead) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.once.Do(r.start)
	for len(r.cur) == 0 {
		if r.last {
			return 0, r.err
		}
		if r.buf != nil {
			r.empty <- r.buf[:cap(r.buf)] // room for every chunk made
			r.buf = nil
		}
		c := <-r.full
		r.cur, r.buf = c.b, c.b
		if c.err != nil {
			r.err, r.last = c.err, true
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it to end.
func (r *readAhead) Close() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.wg.Wait()
}
