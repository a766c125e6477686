package parse

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// BatchSource is a streaming reader of record batches: Next advances
// (releasing the batch before), Table and RecordBatch describe the current
// batch, and Err is the error that ended the stream. T names the reader's
// tables.
type BatchSource[T any] interface {
	Next() bool
	Table() T
	RecordBatch() arrow.RecordBatch
	Err() error
}

// Prefetch runs a BatchSource on a goroutine of its own, at most depth
// batches ahead of its consumer, so that parsing and analysing a large
// input run on two cores at once. It is itself a BatchSource, read from
// one goroutine:
//
//	p := parse.NewPrefetch(r, 2)
//	defer p.Close() // before r.Release
//	for p.Next() { use(p.Table(), p.RecordBatch()) }
//	if err := p.Err(); err != nil { ... }
//
// Once Next has returned false, the source's goroutine has ended and its
// other state (a reader's metadata and warnings) may be read. Close stops
// the goroutine and waits for it; a source blocked in a read that never
// ends (a pipe) would make Close wait, so use it for regular files.
type Prefetch[T any] struct {
	src  BatchSource[T]
	ch   chan queued[T]
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	cur    queued[T]
	srcErr error // written by the goroutine before it closes ch
	err    error
}

// NewPrefetch starts reading src ahead, depth batches at most (1 when
// depth is smaller).
func NewPrefetch[T any](src BatchSource[T], depth int) *Prefetch[T] {
	p := &Prefetch[T]{src: src, ch: make(chan queued[T], max(depth, 1)), done: make(chan struct{})}
	p.wg.Add(1)
	go p.run()
	return p
}

func (p *Prefetch[T]) run() {
	defer p.wg.Done()
	defer close(p.ch)
	for {
		select {
		case <-p.done:
			return
		default:
		}
		if !p.src.Next() {
			break
		}
		rec := p.src.RecordBatch()
		rec.Retain() // the source releases it at its next Next
		select {
		case p.ch <- queued[T]{p.src.Table(), rec}:
		case <-p.done:
			rec.Release()
			return
		}
	}
	p.srcErr = p.src.Err()
}

// Next releases the current batch and waits for the next one; false at
// the end of the stream or on error (see Err).
func (p *Prefetch[T]) Next() bool {
	p.releaseCurrent()
	q, ok := <-p.ch
	if !ok {
		p.err = p.srcErr
		return false
	}
	p.cur = q
	return true
}

func (p *Prefetch[T]) releaseCurrent() {
	if p.cur.rec != nil {
		p.cur.rec.Release()
		p.cur = queued[T]{}
	}
}

// Table is the table of the current batch.
func (p *Prefetch[T]) Table() T { return p.cur.table }

// RecordBatch is the current batch, valid until the next Next or Close.
func (p *Prefetch[T]) RecordBatch() arrow.RecordBatch { return p.cur.rec }

// Err is the error that ended the source's stream, nil at a clean end;
// valid once Next has returned false.
func (p *Prefetch[T]) Err() error { return p.err }

// Close stops reading ahead, releases the batches read ahead and the
// current one, and waits for the goroutine to end. It may be called more
// than once.
func (p *Prefetch[T]) Close() {
	p.once.Do(func() {
		close(p.done)
		for q := range p.ch {
			q.rec.Release()
		}
		p.wg.Wait()
		p.releaseCurrent()
	})
}
