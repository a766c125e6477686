package parse

import "github.com/apache/arrow-go/v18/arrow"

// BatchQueue holds the record batches a streaming reader has built but not
// yet handed out, and the one it handed out last. A reader keeps one as a
// field, fills it as its builders fill, and implements Next, Table and
// RecordBatch with it. T names the reader's tables.
type BatchQueue[T any] struct {
	ready []queued[T]
	cur   queued[T]
}

type queued[T any] struct {
	table T
	rec   arrow.RecordBatch
}

// Push queues rec, a batch of table t; the queue now owns it.
func (q *BatchQueue[T]) Push(t T, rec arrow.RecordBatch) {
	q.ready = append(q.ready, queued[T]{t, rec})
}

// Empty reports whether no batch waits.
func (q *BatchQueue[T]) Empty() bool { return len(q.ready) == 0 }

// ReleaseCurrent releases the batch handed out last.
func (q *BatchQueue[T]) ReleaseCurrent() {
	if q.cur.rec != nil {
		q.cur.rec.Release()
		q.cur.rec = nil
	}
}

// Pop releases the current batch and makes the next waiting one current;
// it returns false when none waits.
func (q *BatchQueue[T]) Pop() bool {
	q.ReleaseCurrent()
	if len(q.ready) == 0 {
		return false
	}
	q.cur = q.ready[0]
	q.ready[0] = queued[T]{}
	q.ready = q.ready[1:]
	return true
}

// Table is the table of the current batch.
func (q *BatchQueue[T]) Table() T { return q.cur.table }

// RecordBatch is the current batch, valid until the next Pop or Release.
func (q *BatchQueue[T]) RecordBatch() arrow.RecordBatch { return q.cur.rec }

// Release frees the current batch and every waiting one.
func (q *BatchQueue[T]) Release() {
	q.ReleaseCurrent()
	for _, b := range q.ready {
		b.rec.Release()
	}
	q.ready = nil
}
