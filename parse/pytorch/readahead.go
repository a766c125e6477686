package pytorch

import (
	"errors"
	"io"
	"sync"

	"github.com/gpuleak/gpuleak/parse/pickle"
)

// readAhead reads its source on a goroutine of its own, a few chunks ahead
// of the decoder, so that inflating a gzip snapshot (a sixth of the work on
// a real one) runs on another core beside the pickle decoder. Bytes and
// the source's error arrive in the source's order: an error is returned
// after every byte read before it, as from the source itself. Close stops
// the goroutine and waits for it.
//
// It lends its chunks to the decoder (pickle.ChunkReader) rather than
// copying them into the decoder's buffer, and fills them through the
// source's WriteTo where it has one: gzip's writes straight from its
// window, where a Read would go through the bufio.Reader's buffer. Each
// of those copies cost 1.5-2.5% of analyze's CPU time on big_real.
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
	b   []byte // the chunk's bytes follow its headroom
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
	headroom        = pickle.ChunkHeadroom
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

// errStopped ends the source's WriteTo when Close is called.
var errStopped = errors.New("read-ahead stopped")

// filler is the writer the source's WriteTo writes into: it fills chunks
// and queues each when full.
type filler struct {
	r    *readAhead
	b    []byte // the chunk being filled; its bytes are b[headroom:n]
	n    int
	made int
}

// take gets an empty chunk: a new one while fewer than readAheadChunks
// exist, else one the reader has handed back. false: Close was called.
func (f *filler) take() bool {
	select {
	case b := <-f.r.empty:
		f.b = b
	case <-f.r.done:
		return false
	default:
		if f.made < readAheadChunks {
			f.made++
			f.b = make([]byte, headroom+readAheadChunk)
		} else {
			select {
			case b := <-f.r.empty:
				f.b = b
			case <-f.r.done:
				return false
			}
		}
	}
	f.n = headroom
	return true
}

// send queues the chunk being filled, with err.
func (f *filler) send(err error) bool {
	select {
	case f.r.full <- chunk{f.b[:f.n], err}:
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

// ReadFrom reads a source with no WriteTo (a plain file, through the
// bufio.Reader's WriteTo) straight into the chunks.
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

func (r *readAhead) start() {
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

// NextChunk implements pickle.ChunkReader: the chunk handed out before
// goes back to be filled again.
func (r *readAhead) NextChunk() ([]byte, int, error) {
	r.once.Do(r.start)
	if r.buf != nil {
		r.empty <- r.buf[:cap(r.buf)] // room for every chunk made
		r.buf, r.cur = nil, nil
	}
	if r.last {
		return nil, 0, r.err
	}
	c := <-r.full
	r.buf = c.b
	if c.err != nil {
		r.err, r.last = c.err, true
	}
	return c.b, headroom, c.err
}

// Read copies the chunks out, for a reader that is not the decoder.
func (r *readAhead) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.cur) == 0 {
		if r.last {
			return 0, r.err
		}
		b, from, _ := r.NextChunk()
		r.cur = b[from:]
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
