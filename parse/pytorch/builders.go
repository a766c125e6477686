package pytorch

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// Typed views of each table's RecordBuilder fields, so that appending a row
// does no type assertions.

// The segments and blocks tables keep their integer columns' rows of the
// batch being built in columns of their own (column, nullColumn), given
// to the builders at once when the batch is flushed: a snapshot of many
// segments appends a row of each per segment and block, and a builder's
// Append (a capacity check, a validity bit, a length update per value)
// cost 10% of the decoder's time on one of 57k segments and 128k blocks.
// rows counts the batch's rows (its device column's); the builders'
// lengths lag until flush.

type segmentBuilders struct {
	device                   column[int32, *array.Int32Builder]
	address                  column[uint64, *array.Uint64Builder]
	total, allocated, active column[int64, *array.Int64Builder]
	requested                nullColumn[int64, *array.Int64Builder]
	stream                   column[int64, *array.Int64Builder]
	segType                  dictColumn
	pool                     *array.FixedSizeListBuilder
	poolValues               *array.Int64Builder
	expandable               *array.BooleanBuilder
	stack                    nullColumn[int32, *array.Int32Builder]
}

func (s *segmentBuilders) init(b *array.RecordBuilder, rows int) {
	s.device.b = b.Field(SegDevice).(*array.Int32Builder)
	s.address.b = b.Field(SegAddress).(*array.Uint64Builder)
	s.total.b = b.Field(SegTotalSize).(*array.Int64Builder)
	s.allocated.b = b.Field(SegAllocatedSize).(*array.Int64Builder)
	s.active.b = b.Field(SegActiveSize).(*array.Int64Builder)
	s.requested.b = b.Field(SegRequestedSize).(*array.Int64Builder)
	s.stream.b = b.Field(SegStream).(*array.Int64Builder)
	s.segType = newDictColumn(b.Field(SegType).(*array.BinaryDictionaryBuilder), rows)
	s.pool = b.Field(SegPoolID).(*array.FixedSizeListBuilder)
	s.poolValues = s.pool.ValueBuilder().(*array.Int64Builder)
	s.expandable = b.Field(SegExpandable).(*array.BooleanBuilder)
	s.stack.b = b.Field(SegStackID).(*array.Int32Builder)
}

// flush gives the builders the batch's rows.
func (s *segmentBuilders) flush() {
	s.segType.flushBatch(s.rows())
	s.device.flush()
	s.address.flush()
	s.total.flush()
	s.allocated.flush()
	s.active.flush()
	s.requested.flush()
	s.stream.flush()
	s.stack.flush()
}

// rows is the batch's rows.
func (s *segmentBuilders) rows() int { return len(s.device.v) }

type blockBuilders struct {
	device           column[int32, *array.Int32Builder]
	segment, address column[uint64, *array.Uint64Builder]
	size             column[int64, *array.Int64Builder]
	requested        nullColumn[int64, *array.Int64Builder]
	state            dictColumn
	stack            nullColumn[int32, *array.Int32Builder]
}

func (s *blockBuilders) init(b *array.RecordBuilder, rows int) {
	s.device.b = b.Field(BlkDevice).(*array.Int32Builder)
	s.segment.b = b.Field(BlkSegmentAddress).(*array.Uint64Builder)
	s.address.b = b.Field(BlkAddress).(*array.Uint64Builder)
	s.size.b = b.Field(BlkSize).(*array.Int64Builder)
	s.requested.b = b.Field(BlkRequestedSize).(*array.Int64Builder)
	s.state = newDictColumn(b.Field(BlkState).(*array.BinaryDictionaryBuilder), rows)
	s.stack.b = b.Field(BlkStackID).(*array.Int32Builder)
}

// flush gives the builders the batch's rows.
func (s *blockBuilders) flush() {
	s.state.flushBatch(s.rows())
	s.device.flush()
	s.segment.flush()
	s.address.flush()
	s.size.flush()
	s.requested.flush()
	s.stack.flush()
}

// rows is the batch's rows.
func (s *blockBuilders) rows() int { return len(s.device.v) }

// valueAppender is an Arrow builder of values of type T.
type valueAppender[T any] interface {
	AppendValues(v []T, valid []bool)
}

// column holds a column's values of the batch being built until flush
// gives them to its builder, b.
type column[T any, B valueAppender[T]] struct {
	b B
	v []T
}

func (c *column[T, B]) append(x T) { c.v = append(c.v, x) }

func (c *column[T, B]) flush() {
	c.b.AppendValues(c.v, nil)
	c.v = c.v[:0]
}

// nullColumn is column for a nullable column: valid says which rows have
// a value (a null's value is the zero value, as a builder leaves it from
// a zeroed buffer), and is given to the builder only when some row is
// null (nil is all valid).
type nullColumn[T any, B valueAppender[T]] struct {
	b     B
	v     []T
	valid []bool
	nulls bool
}

func (c *nullColumn[T, B]) append(x T) {
	c.v = append(c.v, x)
	c.valid = append(c.valid, true)
}

func (c *nullColumn[T, B]) appendNull() {
	var zero T
	c.v = append(c.v, zero)
	c.valid = append(c.valid, false)
	c.nulls = true
}

// appendIf appends x when ok, else a null.
func (c *nullColumn[T, B]) appendIf(x T, ok bool) {
	if ok {
		c.append(x)
	} else {
		c.appendNull()
	}
}

func (c *nullColumn[T, B]) flush() {
	valid := c.valid
	if !c.nulls {
		valid = nil
	}
	c.b.AppendValues(c.v, valid)
	c.v, c.valid, c.nulls = c.v[:0], c.valid[:0], false
}

type frameBuilders struct {
	id             *array.Int32Builder
	filename, name *array.StringBuilder
	line           *array.Int64Builder
}

func (s *frameBuilders) init(b *array.RecordBuilder) {
	s.id = b.Field(FrID).(*array.Int32Builder)
	s.filename = b.Field(FrFilename).(*array.StringBuilder)
	s.line = b.Field(FrLine).(*array.Int64Builder)
	s.name = b.Field(FrName).(*array.StringBuilder)
}

type stackBuilders struct {
	id, depth, frame *array.Int32Builder
}

func (s *stackBuilders) init(b *array.RecordBuilder) {
	s.id = b.Field(StID).(*array.Int32Builder)
	s.depth = b.Field(StDepth).(*array.Int32Builder)
	s.frame = b.Field(StFrameID).(*array.Int32Builder)
}

// dictColumn appends strings to a dictionary column by index: a string
// seen before costs a map lookup, not a hash-table insert and a copy. The
// builder's dictionary persists across batches, so an index stays valid.
// A row's index is set in codes, by row; the rows from given on wait
// there for the builder until flush, which must run before the batch is
// built.
type dictColumn struct {
	b     *array.BinaryDictionaryBuilder
	index map[string]int
	codes []int // a batch's worth
	given int
	// recent holds the strings last found, by the address of their
	// bytes: a snapshot's actions are memoized strs, the same few
	// strings entry after entry, so most are found without hashing. A
	// held pointer keeps its bytes, which never change: equal address and
	// length mean equal text.
	recent [4]recentString
	next   int
}

type recentString struct {
	p *byte
	n int
	i int // the dictionary index
}

// maxDictIndex bounds the strings remembered; more distinct ones (only a
// hand-made file has them) go through the builder directly.
const maxDictIndex = 1024

func newDictColumn(b *array.BinaryDictionaryBuilder, rows int) dictColumn {
	d := dictColumn{b: b, index: map[string]int{}, codes: make([]int, rows)}
	for k := range d.recent {
		d.recent[k].n = -1
	}
	return d
}

// append sets row, the batch's next, to s.
func (d *dictColumn) append(row int, s string) error {
	if k := d.recentAt(s); k < len(d.recent) {
		d.codes[row] = d.recent[k].i
		return nil
	}
	return d.appendSlow(row, s)
}

// recentAt returns the index in recent of s, found by the address and
// length of its bytes; len(recent) when s is not there.
func (d *dictColumn) recentAt(s string) int {
	p, n := unsafe.StringData(s), len(s)
	k := 0
	for k < len(d.recent) && (d.recent[k].p != p || d.recent[k].n != n) { // an unused one's n is -1
		k++
	}
	return k
}

// appendSlow is append for a string not among recent.
func (d *dictColumn) appendSlow(row int, s string) error {
	if i, ok := d.index[s]; ok {
		d.codes[row] = i
		if p := unsafe.StringData(s); p != nil {
			d.recent[d.next] = recentString{p, len(s), i}
			d.next = (d.next + 1) % len(d.recent)
		}
		return nil
	}
	d.flush(row)
	if err := d.b.AppendString(s); err != nil {
		return err
	}
	d.given = row + 1
	if len(d.index) < maxDictIndex {
		d.index[s] = d.b.GetValueIndex(d.b.Len() - 1)
	}
	return nil
}

// appendRow sets the next row of the table whose dictionary column this is
// to s, row being the table's row count before the row (a table whose
// RecordBuilder flushes at a batch's worth of rows).
func (d *dictColumn) appendRow(row int, s string) error {
	if row >= len(d.codes) { // never: the table is flushed when full
		d.codes = append(d.codes, make([]int, row+1-len(d.codes))...)
	}
	return d.append(row, s)
}

// flushBatch gives the builder the indices of a batch of n rows, before
// the batch is built, and starts the next at row 0.
func (d *dictColumn) flushBatch(n int) {
	d.flush(n)
	d.given = 0
}

// flush gives the builder the indices of the rows before n.
func (d *dictColumn) flush(n int) {
	if n > d.given {
		d.b.AppendIndices(d.codes[d.given:n], nil)
		d.given = n
	}
}
