package trend

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// dictRows reads each row's index as GetValueIndex does, -1 for nulls,
// whatever the index type, and in a slice of a column (an offset).
func TestDictRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64} {
		typ := &arrow.DictionaryType{IndexType: it, ValueType: arrow.BinaryTypes.String}
		b := array.NewDictionaryBuilder(mem, typ).(*array.BinaryDictionaryBuilder)
		for i := 0; i < 40; i++ {
			if i%7 == 3 {
				b.AppendNull()
				continue
			}
			if err := b.AppendString(string(rune('a' + i%5))); err != nil {
				t.Fatal(err)
			}
		}
		whole := b.NewArray().(*array.Dictionary)
		b.Release()
		part := array.NewSlice(whole, 5, 33).(*array.Dictionary)
		for _, d := range []*array.Dictionary{whole, part} {
			rows := dictRows(d)
			if len(rows) != d.Len() {
				t.Fatalf("%s: %d rows, want %d", it, len(rows), d.Len())
			}
			for i, got := range rows {
				want := int32(-1)
				if d.IsValid(i) {
					want = int32(d.GetValueIndex(i))
				}
				if got != want {
					t.Errorf("%s, offset %d, row %d: %d, want %d", it, d.Data().Offset(), i, got, want)
				}
			}
		}
		part.Release()
		whole.Release()
	}
}
