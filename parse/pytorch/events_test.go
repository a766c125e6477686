package pytorch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// TestEventColumnsMatchBuilders holds eventColumns' batches to what Arrow's
// builders make of the same rows: every value and every null, batch after
// batch, with columns null in some batches only, in none and in all, and
// a last batch cut short. Buffers come from a recycling allocator, so a
// batch's buffers are those of an earlier one: a stale value or validity
// bit would show. The checked allocator catches a buffer not handed back.
func TestEventColumnsMatchBuilders(t *testing.T) {
	// A batch of 5 rows has a one-byte bitmap; one of 20 a three-byte
	// one, of which a short last batch (5 rows) uses one byte only.
	for _, sz := range []struct{ rows, batch int }{{23, 5}, {45, 20}} {
		t.Run(fmt.Sprintf("%d_rows_by_%d", sz.rows, sz.batch), func(t *testing.T) { eventColumnsMatch(t, sz.rows, sz.batch) })
	}
}

func eventColumnsMatch(t *testing.T, rows, batch int) {
	type row struct {
		dev int32
		seq int64
		e   eventRow
	}
	var in []row
	for i := range rows {
		e := eventRow{action: []string{"alloc", "free_requested", "free_completed"}[i%3], size: int64(512 * i), stream: int64(i % 2), stack: -1, hasAction: true}
		if i%13 < 11 { // rows 11, 12, 24, 25...: no time, the first after 11 rows with one
			e.timeUs, e.hasTime = int64(1000+i), true
		}
		if i >= 10 && i < 20 { // addr: null in batches 0, 1 and 4, and none in 2 and 3
			e.addr, e.hasAddr = 0x7f00_0000_0000+uint64(i)*4096, true
		}
		if i%7 == 3 {
			e.stack = int32(i)
		}
		// device_free: null in every row but 22 (the short last batch)
		if i == 22 {
			e.devFree, e.hasFree = 1<<30, true
		}
		in = append(in, row{int32(i % 2), int64(i), e})
	}

	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	rb := array.NewRecordBuilder(mem, EventsSchema)
	defer rb.Release()
	var c eventColumns
	c.init(rb, mem, batch)
	defer c.release()

	want := array.NewRecordBuilder(memory.NewGoAllocator(), EventsSchema)
	defer want.Release()
	batches := 0
	for k, r := range in {
		if c.device == nil {
			c.alloc()
		}
		i := c.n
		c.device[i], c.seq[i], c.size[i], c.stream[i] = r.dev, r.seq, r.e.size, r.e.stream
		want.Field(EvDevice).(*array.Int32Builder).Append(r.dev)
		want.Field(EvSeq).(*array.Int64Builder).Append(r.seq)
		want.Field(EvSize).(*array.Int64Builder).Append(r.e.size)
		want.Field(EvStream).(*array.Int64Builder).Append(r.e.stream)
		if err := c.action.append(i, r.e.action); err != nil {
			t.Fatal(err)
		}
		if err := want.Field(EvAction).(*array.BinaryDictionaryBuilder).AppendString(r.e.action); err != nil {
			t.Fatal(err)
		}
		nullable := func(ok bool, k int, set func(), b interface{ AppendNull() }, add func()) {
			if ok {
				set()
				c.setValid(k, i)
				add()
			} else {
				c.setNull(k, i)
				b.AppendNull()
			}
		}
		tb := want.Field(EvTimeUs).(*array.Int64Builder)
		nullable(r.e.hasTime, evNullTime, func() { c.timeUs[i] = r.e.timeUs }, tb, func() { tb.Append(r.e.timeUs) })
		ab := want.Field(EvAddr).(*array.Uint64Builder)
		nullable(r.e.hasAddr, evNullAddr, func() { c.addr[i] = r.e.addr }, ab, func() { ab.Append(r.e.addr) })
		sb := want.Field(EvStackID).(*array.Int32Builder)
		nullable(r.e.stack >= 0, evNullStack, func() { c.stack[i] = r.e.stack }, sb, func() { sb.Append(r.e.stack) })
		fb := want.Field(EvDeviceFree).(*array.Int64Builder)
		nullable(r.e.hasFree, evNullFree, func() { c.deviceFree[i] = r.e.devFree }, fb, func() { fb.Append(r.e.devFree) })
		c.n = i + 1
		if c.n == batch || k == len(in)-1 {
			g, w := c.batch(), want.NewRecordBatch()
			checkEventBatch(t, batches, g, w)
			g.Release() // the next batch reuses its buffers
			w.Release()
			batches++
		}
	}
	if batches != (rows+batch-1)/batch {
		t.Fatalf("%d batches, want %d", batches, (rows+batch-1)/batch)
	}
	if c.batch() != nil {
		t.Fatal("a batch of no rows")
	}
}

// checkEventBatch compares batch b of eventColumns with the builders' w:
// equal arrays, the same null counts, the value slots of nulls zero in
// both, and no validity bitmap where a column has no nulls.
func checkEventBatch(t *testing.T, b int, g, w arrow.RecordBatch) {
	t.Helper()
	if g == nil || g.NumRows() != w.NumRows() || !g.Schema().Equal(w.Schema()) {
		t.Fatalf("batch %d: %v, want %d rows", b, g, w.NumRows())
	}
	for col := range w.NumCols() {
		ga, wa := g.Column(int(col)), w.Column(int(col))
		name := fmt.Sprintf("batch %d column %s", b, w.ColumnName(int(col)))
		if !array.Equal(ga, wa) {
			t.Errorf("%s: %v, want %v", name, ga, wa)
		}
		if ga.NullN() != wa.NullN() {
			t.Errorf("%s: %d nulls, want %d", name, ga.NullN(), wa.NullN())
		}
		if ga.NullN() == 0 && ga.Data().Buffers()[0] != nil && col != EvAction {
			t.Errorf("%s: a validity bitmap with no nulls", name)
		}
		if ga.NullN() > 0 && col != EvAction {
			// The bitmap's bytes, the bits past the last row included (a
			// writer may copy them): the builder leaves those zero.
			gv, wv := ga.Data().Buffers()[0].Bytes(), wa.Data().Buffers()[0].Bytes()
			used := int(bitutil.BytesForBits(int64(ga.Len())))
			if len(gv) < used || len(wv) < used || string(gv[:used]) != string(wv[:used]) {
				t.Errorf("%s: validity bytes %x, want %x", name, gv, wv[:min(used, len(wv))])
			}
			if g := gv[:cap(gv)]; len(g) > used && strings.Trim(string(g[used:]), "\x00") != "" {
				t.Errorf("%s: validity bytes past the last row %x, want zero", name, g[used:])
			}
		}
		if col == EvAction {
			continue
		}
		// Raw value bytes, null slots included: a stale value from a
		// recycled buffer would differ from the builder's zero.
		gb, wb := ga.Data().Buffers()[1].Bytes(), wa.Data().Buffers()[1].Bytes()
		if string(gb) != string(wb) {
			t.Errorf("%s: value bytes %x, want %x", name, gb, wb)
		}
	}
}
