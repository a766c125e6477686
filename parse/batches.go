package parse

import "github.com/apache/arrow-go/v18/arrow"

// batchQueue holds the record batches a TableReader has built but not yet
// handed out, and the one it handed out last.
type batchQueue[T any] struct {
	ready []queued[T]
	cur   queued[T]
}

type queued[T any] struct {
	table T
	rec   arrow.RecordBatch
}

// push queues rec, a batch of table t; the queue now owns it.
func (q *batchQueue[T]) push(t T, rec arrow.RecordBatch) {
	q.ready = append(q.ready, queued[T]{t, rec})
}

// empty reports whether no batch waits.
func (q *batchQueue[T]) empty() bool { return len(q.ready) == 0 }

// releaseCurrent releases the batch handed out last.
func (q *batchQueue[T]) releaseCurrent() {
	if q.cur.rec != nil {
		q.cur.rec.Release()
		q.cur.rec = nil
	}
}

// pop releases the current batch and makes the next waiting one current;
// it returns false when none waits.
func (q *batchQueue[T]) pop() bool {
	q.releaseCurrent()
	if len(q.ready) == 0 {
		return false
	}
	q.cur = q.ready[0]
	q.ready[0] = queued[T]{}
	q.ready = q.ready[1:]
	return true
}

// release frees the current batch and every waiting one.
func (q *batchQueue[T]) release() {
	q.releaseCurrent()
	for _, b := range q.ready {
		b.rec.Release()
	}
	q.ready = nil
}
