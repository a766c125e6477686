package parse

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testTable is a family of two tables of one int64 column each.
type testTable int

const (
	tabA testTable = iota
	tabB
	numTestTables
)

var testSchemas = [...]*arrow.Schema{
	arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil),
	arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.PrimitiveTypes.Int64}}, nil),
}

func (t testTable) String() string        { return TableName([]string{"a", "b"}, t) }
func (t testTable) Schema() *arrow.Schema { return TableSchema(testSchemas[:], t) }

type testOptions struct {
	ReaderOptions
	other bool
}

// testReader appends row i to table a, and every third row to table b as
// well, until rows rows; failAt > 0 makes step fail at that row.
type testReader struct {
	TableReader[testTable]
	out          *TableBuilder[testTable]
	i, rows      int
	failAt       int
	endedWithout bool
}

func newTestReader(mem memory.Allocator, batch, rows, failAt int) *testReader {
	o := testOptions{ReaderOptions: DefaultReaderOptions(1 << 16)}
	for _, f := range []func(*testOptions){WithAllocator[testOptions](mem), WithBatchSize[testOptions](batch), WithBatchSize[testOptions](0)} {
		f(&o)
	}
	r := &testReader{rows: rows, failAt: failAt}
	r.out = StartTables(&r.TableReader, o.ReaderOptions, numTestTables, r.step)
	return r
}

func (r *testReader) step() error {
	if r.i == r.rows {
		r.out.End()
		return nil
	}
	if r.failAt > 0 && r.i == r.failAt {
		return errors.New("broken")
	}
	r.out.Builder(tabA).Field(0).(*array.Int64Builder).Append(int64(r.i))
	if r.i%3 == 0 {
		r.out.Builder(tabB).Field(0).(*array.Int64Builder).Append(int64(r.i))
	}
	r.i++
	for _, t := range []testTable{tabA, tabB} {
		if r.out.Full(t) {
			r.out.Flush(t)
		}
	}
	return nil
}

func TestTableReader(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// 10 rows in batches of 4: table a fills at rows 4 and 8, table b (rows
	// 0, 3, 6, 9) at row 9 (its fourth row); the rest comes at the end, in
	// table order: a's last 2 rows.
	r := newTestReader(mem, 4, 10, 0)
	var got []string
	for r.Next() {
		rec := r.RecordBatch()
		if !rec.Schema().Equal(r.Table().Schema()) {
			t.Fatalf("batch of %s has schema %s", r.Table(), rec.Schema())
		}
		got = append(got, fmt.Sprintf("%s%d", r.Table(), rec.NumRows()))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "[a4 a4 b4 a2]"; fmt.Sprint(got) != want {
		t.Errorf("batches %v, want %s", got, want)
	}
	if r.Next() {
		t.Error("Next after the end")
	}
	r.Release()
}

func TestTableReaderFail(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Fails at row 9: the batches a4 a4 are handed out, b (3 rows) never is.
	r := newTestReader(mem, 4, 100, 9)
	n := 0
	for r.Next() {
		n++
	}
	if n != 2 || r.Err() == nil || r.Err().Error() != "broken" {
		t.Errorf("%d batches, err %v; want 2 and broken", n, r.Err())
	}
	r.Release()
}

func TestTableReaderRelease(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newTestReader(mem, 2, 100, 0)
	if !r.Next() {
		t.Fatal(r.Err())
	}
	r.Release() // the current batch, the builders' rows
	if r.Next() {
		t.Error("Next after Release")
	}
	var zero TableReader[testTable]
	if zero.Next() || zero.Err() != nil {
		t.Error("a zero TableReader reads")
	}
	zero.Release()
}

func TestTableNames(t *testing.T) {
	if tabB.String() != "b" || testTable(7).String() != "table?" || testTable(-1).Schema() != nil {
		t.Error("out-of-range tables")
	}
}

// TestDictRowCodes maps rows of dictionary columns to codes: int16
// indices (DictString's) through the typed fast path, other index types
// through GetValueIndex, and a sliced column from its offset.
func TestDictRowCodes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rows := []string{"alloc", "free", "alloc", "oom", "free", "free"}
	for _, idx := range []arrow.DataType{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint8} {
		b := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: idx, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
		for _, r := range rows {
			if err := b.AppendString(r); err != nil {
				t.Fatal(err)
			}
		}
		col := b.NewDictionaryArray()
		b.Release()
		dict := col.Dictionary().(*array.String)
		codes := make([]string, dict.Len())
		for k := range codes {
			codes[k] = "<" + dict.Value(k) + ">"
		}
		got := DictRowCodes(col, codes, nil)
		for i, r := range rows {
			if got[i] != "<"+r+">" {
				t.Errorf("%v indices: row %d is %q, want <%s>", idx, i, got[i], r)
			}
		}
		sliced := array.NewSlice(col, 2, 5).(*array.Dictionary)
		got = DictRowCodes(sliced, codes, got)
		if len(got) != 3 || got[0] != "<alloc>" || got[1] != "<oom>" || got[2] != "<free>" {
			t.Errorf("%v indices, rows 2 to 4: %q", idx, got)
		}
		sliced.Release()
		col.Release()
	}
}
