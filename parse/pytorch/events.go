package pytorch

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// eventColumns holds the trace entries of the events batch being built, a
// column apiece, in buffers from the reader's allocator that become the
// batch's arrays as they are (batch). Appending an entry stores one value
// per column: through Arrow builders each value cost a call, a length
// update and a validity bit, about 8% of the decoder's time on a real
// snapshot, on the goroutine every batch waits for. The action column stays
// a dictionary builder (dictColumn).
//
// A nullable column keeps a validity bitmap and a null count; in a batch
// where it has no nulls its array gets no bitmap (Arrow's form for "all
// valid"). While a column's rows of the batch are all valid or all null
// its bitmap is not written (setValid, setNull): all zero, it is what
// the second needs. The first row that breaks the run "mixes" the
// column: after a run of valid rows their bits are set at once, and from
// then on each valid row sets its own. So a column that does not mix
// (most: no time_us, addr always there; device_free never) costs a
// compare a row. A null's value slot is left zero, as a builder leaves
// it: the allocator hands out zeroed buffers.
type eventColumns struct {
	mem  memory.Allocator
	rows int // the rows of a whole batch
	n    int // the rows appended so far

	device, stack                         []int32
	seq, timeUs, size, stream, deviceFree []int64
	addr                                  []uint64
	// at holds the columns' first values, by schema index: set puts a
	// row's value through it without a bounds check per column.
	at [EvDeviceFree + 1]unsafe.Pointer
	// valid: the bitmaps of the nullable columns, by nullable index
	// (evNullTime...); nulls, their null counts.
	valid [evNullable][]byte
	nulls [evNullable]int
	mixed [evNullable]bool
	// bufs: the allocator's buffers behind the value columns, by schema
	// index (EvAction's unused); nil between batches.
	bufs [EvDeviceFree + 1][]byte

	action dictColumn
}

// The nullable columns, as indices of eventColumns.valid and nulls.
const (
	evNullTime = iota
	evNullAddr
	evNullStack
	evNullFree
	evNullable
)

// evValue are the value columns, in schema order, with their widths and
// nullable index (-1: not nullable).
var evValue = [...]struct {
	col, width, null int
}{
	{EvDevice, 4, -1},
	{EvSeq, 8, -1},
	{EvTimeUs, 8, evNullTime},
	{EvAddr, 8, evNullAddr},
	{EvSize, 8, -1},
	{EvStream, 8, -1},
	{EvStackID, 4, evNullStack},
	{EvDeviceFree, 8, evNullFree},
}

func (c *eventColumns) init(b *array.RecordBuilder, mem memory.Allocator, rows int) {
	c.mem, c.rows = mem, rows
	c.action = newDictColumn(b.Field(EvAction).(*array.BinaryDictionaryBuilder), rows)
	c.action.b.Reserve(rows)
}

// alloc readies the buffers of a new batch (zeroed: see
// parse.RecyclingAllocator).
func (c *eventColumns) alloc() {
	for _, v := range evValue {
		c.bufs[v.col] = c.mem.Allocate(c.rows * v.width)
	}
	c.device = viewAs[int32](c.bufs[EvDevice], c.rows)
	c.seq = viewAs[int64](c.bufs[EvSeq], c.rows)
	c.timeUs = viewAs[int64](c.bufs[EvTimeUs], c.rows)
	c.addr = viewAs[uint64](c.bufs[EvAddr], c.rows)
	c.size = viewAs[int64](c.bufs[EvSize], c.rows)
	c.stream = viewAs[int64](c.bufs[EvStream], c.rows)
	c.stack = viewAs[int32](c.bufs[EvStackID], c.rows)
	c.deviceFree = viewAs[int64](c.bufs[EvDeviceFree], c.rows)
	for _, v := range evValue {
		c.at[v.col] = unsafe.Pointer(unsafe.SliceData(c.bufs[v.col]))
	}
	for k := range c.valid {
		if c.valid[k] == nil { // else kept from the last batch, unused, zero
			c.valid[k] = c.mem.Allocate(int(bitutil.BytesForBits(int64(c.rows))))
		}
		c.nulls[k], c.mixed[k] = 0, false
	}
}

// viewAs views the first n values of buf, an allocator's buffer (64-byte
// aligned, at least n values long), as a []T.
func viewAs[T int32 | int64 | uint64](buf []byte, n int) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(buf))), n)
}

// set stores v in row i of column col, whose values are T: i must be
// below c.rows, which commitEvent checks once for all its columns.
func set[T int32 | int64 | uint64](c *eventColumns, col, i int, v T) {
	*(*T)(unsafe.Add(c.at[col], uintptr(i)*unsafe.Sizeof(v))) = v
}

// setValid marks row i of nullable column k valid.
func (c *eventColumns) setValid(k, i int) {
	if c.nulls[k] != 0 { // a null before: the column is mixed
		c.mixed[k] = true
		c.valid[k][i>>3] |= 1 << (uint(i) & 7)
	}
}

// setNull marks row i of nullable column k null.
func (c *eventColumns) setNull(k, i int) {
	n := c.nulls[k]
	c.nulls[k] = n + 1
	if n != i && !c.mixed[k] {
		// The first null after valid rows (n is 0): their bits are set.
		b := c.valid[k]
		for j := range b[:i>>3] {
			b[j] = 0xff
		}
		b[i>>3] = 1<<(uint(i)&7) - 1
		c.mixed[k] = true
	}
}

// batch makes the rows appended so far a record batch of EventsSchema and
// readies the columns for the next; nil when there are none.
func (c *eventColumns) batch() arrow.RecordBatch {
	c.action.flush(c.n)
	c.action.given = 0
	if c.n == 0 {
		return nil
	}
	n := c.n
	cols := make([]arrow.Array, len(EventsSchema.Fields()))
	cols[EvAction] = c.action.b.NewArray()
	c.action.b.Reserve(c.rows)
	for _, v := range evValue {
		data := memory.NewBufferWithAllocator(c.bufs[v.col], c.mem)
		data.ResizeNoShrink(n * v.width)
		c.bufs[v.col] = nil
		var valid *memory.Buffer
		nulls := 0
		if v.null >= 0 {
			if nulls = c.nulls[v.null]; nulls > 0 {
				// Only rows' bits were set: the bitmap is a
				// builder's, byte for byte.
				valid = memory.NewBufferWithAllocator(c.valid[v.null], c.mem)
				valid.ResizeNoShrink(int(bitutil.BytesForBits(int64(n))))
				c.valid[v.null] = nil
			} // else unused and still zero: kept for the next batch
		}
		d := array.NewData(EventsSchema.Field(v.col).Type, n, []*memory.Buffer{valid, data}, nil, nulls, 0)
		cols[v.col] = array.MakeFromData(d)
		d.Release()
		data.Release()
		if valid != nil {
			valid.Release()
		}
	}
	rec := array.NewRecordBatch(EventsSchema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	c.n = 0
	c.device, c.seq, c.timeUs, c.addr, c.size, c.stream, c.stack, c.deviceFree = nil, nil, nil, nil, nil, nil, nil, nil
	c.at = [len(c.at)]unsafe.Pointer{}
	return rec
}

// release hands back the buffers the columns hold.
func (c *eventColumns) release() {
	for i, b := range c.bufs {
		if b != nil {
			c.mem.Free(b)
			c.bufs[i] = nil
		}
	}
	for k, b := range c.valid {
		if b != nil {
			c.mem.Free(b)
			c.valid[k] = nil
		}
	}
	c.n = 0
}
