package parse

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// This file is the shell every streaming reader of an input family shares:
// its options, the record builders of its tables, the batches built and
// not yet handed out, and the error that ended the stream. A family's
// Reader embeds a TableReader (what its users call: Next, Table,
// RecordBatch, Err, Release) and fills it through the TableBuilder view of
// the same value (Builder, Full, Flush, Push, End), which its users cannot
// reach. Rows are appended by the family to its own typed builders: no
// per-row work goes through this shell but Full.

// Table is what a family's table enumeration must be: small integers from
// 0, each with a name ("segments") and an Arrow schema.
type Table interface {
	~int
	fmt.Stringer
	Schema() *arrow.Schema
}

// TableName is the name of table t among names (indexed by table), or
// "table?" for a value out of range; a family's Table.String uses it.
func TableName[T ~int](names []string, t T) string {
	if t >= 0 && int(t) < len(names) {
		return names[t]
	}
	return "table?"
}

// TableSchema is the schema of table t among schemas (indexed by table), or
// nil for a value out of range; a family's Table.Schema uses it.
func TableSchema[T ~int](schemas []*arrow.Schema, t T) *arrow.Schema {
	if t >= 0 && int(t) < len(schemas) {
		return schemas[t]
	}
	return nil
}

// DictString is the Arrow type of the families' text columns that take few
// distinct values (kinds, actions, states): dictionary<int16, utf8>.
var DictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}

// DictRowCodes returns, for each row of a dictionary column, codes[its
// dictionary index], in buf's storage (buf may be nil): one pass over the
// column's typed indices (DictString's are int16) rather than a
// GetValueIndex per row, which switches on the index type each time. A
// null row gets the code of the index its slot holds; codes must cover
// the column's dictionary.
func DictRowCodes[T any](col *array.Dictionary, codes []T, buf []T) []T {
	buf = buf[:0]
	if ix, ok := col.Indices().(*array.Int16); ok {
		for _, k := range ix.Int16Values() {
			buf = append(buf, codes[k])
		}
		return buf
	}
	for i := 0; i < col.Len(); i++ {
		buf = append(buf, codes[col.GetValueIndex(i)])
	}
	return buf
}

// ReaderOptions are the options every streaming reader takes. A family's
// options struct embeds it, which lets WithAllocator and WithBatchSize set
// it.
type ReaderOptions struct {
	// Allocator allocates the record batches' buffers.
	Allocator memory.Allocator
	// BatchSize is the most rows of one table in one record batch.
	BatchSize int
}

// DefaultReaderOptions are memory.DefaultAllocator and batchSize rows a
// batch.
func DefaultReaderOptions(batchSize int) ReaderOptions {
	return ReaderOptions{Allocator: memory.DefaultAllocator, BatchSize: batchSize}
}

func (o *ReaderOptions) readerOptions() *ReaderOptions { return o }

// withReaderOptions is satisfied by a pointer to a struct that embeds
// ReaderOptions.
type withReaderOptions[O any] interface {
	*O
	readerOptions() *ReaderOptions
}

// WithAllocator returns the option, for a family whose options struct O
// embeds ReaderOptions, that sets the Arrow allocator of the record
// batches. A family exports it as its own WithAllocator:
//
//	func WithAllocator(mem memory.Allocator) Option { return parse.WithAllocator[options](mem) }
func WithAllocator[O any, P withReaderOptions[O]](mem memory.Allocator) func(P) {
	return func(o P) { o.readerOptions().Allocator = mem }
}

// WithBatchSize returns the option that sets the most rows of one table in
// one record batch; n <= 0 keeps the family's default.
func WithBatchSize[O any, P withReaderOptions[O]](n int) func(P) {
	return func(o P) {
		if n > 0 {
			o.readerOptions().BatchSize = n
		}
	}
}

// TableReader is the part of a streaming reader its users call: a family's
// Reader embeds it, so that
//
//	defer r.Release()
//	for r.Next() {
//		switch r.Table() { ... use(r.RecordBatch()) }
//	}
//	if err := r.Err(); err != nil { ... }
//
// reads every family alike. Its zero value reads nothing; StartTables
// readies it.
type TableReader[T Table] struct {
	opt      ReaderOptions
	builders []*array.RecordBuilder // by table
	q        batchQueue[T]
	step     func() error
	err      error
	done     bool
}

// TableBuilder is the same value as a TableReader seen from the parser
// filling it: its methods are kept off the Reader that embeds the
// TableReader. Get it from StartTables.
type TableBuilder[T Table] TableReader[T]

// StartTables readies r to read tables 0 to n-1 (n is a family's table
// count; 0 for a family that builds its batches without RecordBuilders),
// and returns r's builder view. Next calls step until a batch is ready:
// step reads some of the input and flushes or pushes batches as they fill;
// it calls End at the end of the input, and returns an error, which ends
// the stream, when the input is broken.
func StartTables[T Table](r *TableReader[T], opt ReaderOptions, n T, step func() error) *TableBuilder[T] {
	r.opt = opt
	r.step = step
	r.builders = make([]*array.RecordBuilder, n)
	for t := T(0); t < n; t++ {
		r.builders[t] = array.NewRecordBuilder(opt.Allocator, t.Schema())
	}
	return (*TableBuilder[T])(r)
}

// Next advances to the next record batch, releasing the previous one. It
// returns false at the end of the input or on error (see Err).
func (r *TableReader[T]) Next() bool {
	r.q.releaseCurrent()
	for r.q.empty() {
		if r.err != nil || r.done || r.step == nil {
			return false
		}
		if err := r.step(); err != nil {
			(*TableBuilder[T])(r).Fail(err)
			return false
		}
	}
	return r.q.pop()
}

// Table is the table of the current record batch.
func (r *TableReader[T]) Table() T { return r.q.cur.table }

// RecordBatch is the current record batch, valid until the next call of
// Next or Release; Retain it to keep it longer.
func (r *TableReader[T]) RecordBatch() arrow.RecordBatch { return r.q.cur.rec }

// Err is the error that ended the stream, or nil at a clean end.
func (r *TableReader[T]) Err() error { return r.err }

// Release frees the current batch, batches not yet read, and the builders.
// Next returns false after it.
func (r *TableReader[T]) Release() {
	r.q.release()
	for t, b := range r.builders {
		if b != nil {
			b.Release()
			r.builders[t] = nil
		}
	}
	r.done = true
}

// Options are the reader's options.
func (b *TableBuilder[T]) Options() ReaderOptions { return b.opt }

// Builder is table t's record builder.
func (b *TableBuilder[T]) Builder(t T) *array.RecordBuilder { return b.builders[t] }

// Full reports whether table t holds a batch's worth of rows.
func (b *TableBuilder[T]) Full(t T) bool { return b.builders[t].Field(0).Len() >= b.opt.BatchSize }

// Flush makes table t's rows a record batch, queued for Next, and reports
// whether there were any.
func (b *TableBuilder[T]) Flush(t T) bool {
	rb := b.builders[t]
	if rb == nil || rb.Field(0).Len() == 0 {
		return false
	}
	b.q.push(t, rb.NewRecordBatch())
	return true
}

// Push queues rec, a batch of table t built otherwise; the reader now owns
// it.
func (b *TableBuilder[T]) Push(t T, rec arrow.RecordBatch) { b.q.push(t, rec) }

// End flushes every table in table order and ends the stream after the
// batches queued.
func (b *TableBuilder[T]) End() {
	for t := range b.builders {
		b.Flush(T(t))
	}
	b.done = true
}

// Ended reports whether End was called (or the reader released).
func (b *TableBuilder[T]) Ended() bool { return b.done }

// Fail ends the stream with err, releasing the batches not yet read: they
// must not be taken for a whole input.
func (b *TableBuilder[T]) Fail(err error) {
	b.err = err
	b.q.release()
}
