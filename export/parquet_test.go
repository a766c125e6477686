package export

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The files are read back with arrow-go's Parquet reader (pqarrow), a
// reader independent of the writer (parquet-go).

var (
	dict8  = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dict16 = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	dict32 = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tsUTC  = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// allTypes: every Arrow type that reaches the export (the parsers'
// schemas, FindingsSchema), nullable and not, in an order that is not the
// names' (the file must keep it).
var allTypes = arrow.NewSchema([]arrow.Field{
	{Name: "time", Type: tsUTC, Nullable: true},
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String},
	{Name: "sn", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "d8", Type: dict8},
	{Name: "d16", Type: dict16, Nullable: true},
	{Name: "d32", Type: dict32, Nullable: true},
	{Name: "pool", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

// allTypesBatch: five rows of allTypes, with each type's extremes and
// nulls (a null string distinct from an empty one).
func allTypesBatch(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, allTypes)
	defer b.Release()
	ts := b.Field(0).(*array.TimestampBuilder)
	ts.AppendValues([]arrow.Timestamp{1_764_547_200_000_000, 0, -1, 1}, nil) // 2025-12-01T00:00:00Z, the epoch, before it
	ts.AppendNull()
	b.Field(1).(*array.Int8Builder).AppendValues([]int8{math.MinInt8, math.MaxInt8, 0, -1, 5}, nil)
	b.Field(2).(*array.Int16Builder).AppendValues([]int16{math.MinInt16, 0, math.MaxInt16, 1, 0}, []bool{true, false, true, true, false})
	b.Field(3).(*array.Int32Builder).AppendValues([]int32{math.MinInt32, math.MaxInt32, 0, 7, -7}, nil)
	b.Field(4).(*array.Int64Builder).AppendValues([]int64{math.MinInt64, math.MaxInt64, 0, 0, 42}, []bool{true, true, false, true, true})
	b.Field(5).(*array.Uint8Builder).AppendValues([]uint8{0, math.MaxUint8, 128, 1, 2}, nil)
	b.Field(6).(*array.Uint64Builder).AppendValues([]uint64{math.MaxUint64, 1 << 63, 0, 0, 3}, []bool{true, true, false, true, true})
	b.Field(7).(*array.Float32Builder).AppendValues([]float32{1.5, -0.25, 0, math.MaxFloat32, 0}, []bool{true, true, false, true, true})
	b.Field(8).(*array.Float64Builder).AppendValues([]float64{1e-300, -2.5, 0, math.Inf(1), 6.25}, nil)
	b.Field(9).(*array.BooleanBuilder).AppendValues([]bool{true, false, false, true, false}, []bool{true, true, false, true, true})
	b.Field(10).(*array.StringBuilder).AppendValues([]string{"", "a", "héllo", "x\x00y", "a"}, nil)
	b.Field(11).(*array.StringBuilder).AppendValues([]string{"", "b", "", "", "b"}, []bool{false, true, false, true, true})
	dict := func(i int, vs []string, valid []bool) {
		d := b.Field(i).(*array.BinaryDictionaryBuilder)
		for k, v := range vs {
			if valid != nil && !valid[k] {
				d.AppendNull()
			} else if err := d.AppendString(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	dict(12, []string{"host-a", "host-b", "host-a", "host-a", "host-c"}, nil)
	dict(13, []string{"alloc", "", "free_requested", "alloc", ""}, []bool{true, false, true, true, false})
	dict(14, []string{"", "GPU-1", "GPU-1", "", "GPU-2"}, []bool{false, true, true, false, true})
	pool := b.Field(15).(*array.FixedSizeListBuilder)
	elems := pool.ValueBuilder().(*array.Int64Builder)
	for _, row := range [][]*int64{{ptr(1), ptr(2)}, nil, {ptr(0), ptr(-1)}, {nil, ptr(5)}, {ptr(7), ptr(8)}} {
		if row == nil {
			pool.AppendNull()
			continue
		}
		pool.Append(true)
		for _, e := range row {
			if e == nil {
				elems.AppendNull()
			} else {
				elems.Append(*e)
			}
		}
	}
	return b.NewRecordBatch()
}

func ptr(v int64) *int64 { return &v }

// cell renders row i of a column with what a query engine would see:
// dictionary values resolved, list elements listed, nulls as "null".
func cell(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "null"
	}
	switch a := a.(type) {
	case *array.Dictionary:
		return fmt.Sprintf("%q", a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
	case *array.String:
		return fmt.Sprintf("%q", a.Value(i))
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		var es []string
		for j := lo; j < hi; j++ {
			es = append(es, cell(a.ListValues(), int(j)))
		}
		return "[" + strings.Join(es, " ") + "]"
	case *array.Timestamp:
		return fmt.Sprint(int64(a.Value(i)))
	}
	return a.ValueStr(i)
}

// readParquet reads a whole Parquet file with pqarrow; rows are rendered
// by cell, one slice per column.
func readParquet(t *testing.T, data []byte) (*arrow.Schema, [][]string, *file.Reader) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	cols := make([][]string, tbl.NumCols())
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for c, col := range rec.Columns() {
			for i := 0; i < col.Len(); i++ {
				cols[c] = append(cols[c], cell(col, i))
			}
		}
	}
	return tbl.Schema(), cols, pf
}

// TestParquetRoundTrip writes a batch and a slice of it (rows 1 to 4: an
// array offset other than 0) in row groups of at least 3 rows, 2 values
// to a column writer at a time, and reads back exactly those 9 rows,
// column by column, with the Arrow schema it was written with.
func TestParquetRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := allTypesBatch(t, mem)
	defer rec.Release()
	tail := rec.NewSlice(1, 5)
	defer tail.Release()

	var buf bytes.Buffer
	w, err := newParquetWriter(&buf, allTypes)
	if err != nil {
		t.Fatal(err)
	}
	w.groupRows, w.chunk = 3, 2
	for _, r := range []arrow.RecordBatch{rec, tail} {
		if err := w.write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}

	got, cols, pf := readParquet(t, buf.Bytes())
	defer pf.Close()
	// The reader adds field ids to the fields' metadata and names a
	// list's element "element" (Parquet's name) where Arrow says "item".
	for i, f := range allTypes.Fields() {
		if i >= got.NumFields() {
			t.Fatalf("%d columns read back; want %d", got.NumFields(), allTypes.NumFields())
		}
		g := got.Field(i)
		same := arrow.TypeEqual(g.Type, f.Type)
		if fl, ok := f.Type.(*arrow.FixedSizeListType); ok {
			gl, ok := g.Type.(*arrow.FixedSizeListType)
			same = ok && gl.Len() == fl.Len() && arrow.TypeEqual(gl.Elem(), fl.Elem()) && gl.ElemField().Nullable == fl.ElemField().Nullable
		}
		if g.Name != f.Name || g.Nullable != f.Nullable || !same {
			t.Errorf("column %d read back as %s %s nullable=%v; want %s %s nullable=%v", i, g.Name, g.Type, g.Nullable, f.Name, f.Type, f.Nullable)
		}
	}
	// Each batch reaches 3 rows (5, then 4): a row group each.
	if n := pf.NumRowGroups(); n != 2 {
		t.Errorf("%d row groups; want 2", n)
	}
	for c := range allTypes.NumFields() {
		var want []string
		for _, r := range []arrow.RecordBatch{rec, tail} {
			for i := range int(r.NumRows()) {
				want = append(want, cell(r.Column(c), i))
			}
		}
		if c >= len(cols) || strings.Join(cols[c], ",") != strings.Join(want, ",") {
			t.Errorf("column %s read back %v; want %v", allTypes.Field(c).Name, cols[min(c, len(cols)-1)], want)
		}
	}
	// Spot checks of what the rendering above could hide.
	if len(cols) == allTypes.NumFields() {
		for _, c := range []struct {
			col, row int
			want     string
		}{
			{6, 0, "18446744073709551615"}, // u64 above MaxInt64
			{11, 0, "null"},                // sn: null, not ""
			{11, 3, `""`},                  // sn: "", not null
			{15, 3, "[null 5]"},            // a null list element
			{15, 1, "null"},                // a null list
			{0, 0, "1764547200000000"},     // 2025-12-01T00:00:00Z in µs
		} {
			if g := cols[c.col][c.row]; g != c.want {
				t.Errorf("%s row %d = %s; want %s", allTypes.Field(c.col).Name, c.row, g, c.want)
			}
		}
	}
}

// TestParquetColumnTypes: the Parquet schema itself (what DuckDB, Spark
// and Trino read, without the stored Arrow schema): columns in the Arrow
// order, OPTIONAL where nullable, the logical types of the mapping in
// parquet.go, Zstd everywhere, a dictionary page for every string column.
func TestParquetColumnTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := allTypesBatch(t, mem)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := newParquetWriter(&buf, allTypes)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	want := []struct {
		name, rep string
		phys      parquet.Type
		logical   string // arrow-go's rendering of the logical type
		dict      bool
	}{
		{"time", "optional", parquet.Types.Int64, "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)", false},
		{"i8", "required", parquet.Types.Int32, "Int(bitWidth=8, isSigned=true)", false},
		{"i16", "optional", parquet.Types.Int32, "Int(bitWidth=16, isSigned=true)", false},
		{"i32", "required", parquet.Types.Int32, "Int(bitWidth=32, isSigned=true)", false},
		{"i64", "optional", parquet.Types.Int64, "Int(bitWidth=64, isSigned=true)", false},
		{"u8", "required", parquet.Types.Int32, "Int(bitWidth=8, isSigned=false)", false},
		{"u64", "optional", parquet.Types.Int64, "Int(bitWidth=64, isSigned=false)", false},
		{"f32", "optional", parquet.Types.Float, "None", false},
		{"f64", "required", parquet.Types.Double, "None", false},
		{"ok", "optional", parquet.Types.Boolean, "None", false},
		{"s", "required", parquet.Types.ByteArray, "String", true},
		{"sn", "optional", parquet.Types.ByteArray, "String", true},
		{"d8", "required", parquet.Types.ByteArray, "String", true},
		{"d16", "optional", parquet.Types.ByteArray, "String", true},
		{"d32", "optional", parquet.Types.ByteArray, "String", true},
		{"pool", "optional", parquet.Types.Int64, "Int(bitWidth=64, isSigned=true)", false},
	}
	root := pf.MetaData().Schema.Root()
	if root.NumFields() != len(want) {
		t.Fatalf("%d columns; want %d", root.NumFields(), len(want))
	}
	rg := pf.RowGroup(0).MetaData()
	for i, w := range want {
		top := root.Field(i)
		leaf := pf.MetaData().Schema.Column(i)
		rep := strings.ToLower(top.RepetitionType().String())
		if top.Name() != w.name || rep != w.rep || leaf.PhysicalType() != w.phys || leaf.LogicalType().String() != w.logical {
			t.Errorf("column %d: %s %s %s %s; want %s %s %s %s", i, top.Name(), rep, leaf.PhysicalType(), leaf.LogicalType(), w.name, w.rep, w.phys, w.logical)
		}
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if cc.Compression() != compress.Codecs.Zstd {
			t.Errorf("column %s: %s; want ZSTD", w.name, cc.Compression())
		}
		if cc.HasDictionaryPage() != w.dict {
			t.Errorf("column %s: dictionary page %v; want %v", w.name, cc.HasDictionaryPage(), w.dict)
		}
	}
	// pool: a 3-level LIST (optional group (LIST), repeated group list,
	// optional element), as Arrow's writer writes a list.
	pool := root.Field(15).(*schema.GroupNode)
	if pool.LogicalType().String() != "List" || pool.NumFields() != 1 || pool.Field(0).RepetitionType() != parquet.Repetitions.Repeated {
		t.Errorf("pool: %s with %d fields; want a LIST of one repeated group", pool.LogicalType(), pool.NumFields())
	}
	if c := pf.MetaData().Schema.Column(15); c.MaxDefinitionLevel() != 3 || c.MaxRepetitionLevel() != 1 {
		t.Errorf("pool element: levels def %d rep %d; want 3 and 1", c.MaxDefinitionLevel(), c.MaxRepetitionLevel())
	}
}

// TestParquetRefuses: a type without a mapping is refused when the part
// starts, naming its column; a null in a non-nullable column when written.
func TestParquetRefuses(t *testing.T) {
	for _, f := range []arrow.Field{
		{Name: "blob", Type: arrow.BinaryTypes.Binary},
		{Name: "nested", Type: arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64))},
	} {
		_, err := newParquetWriter(&bytes.Buffer{}, arrow.NewSchema([]arrow.Field{f}, nil))
		if want := "column " + f.Name + ": type " + f.Type.String(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s column: %v; want an error containing %q", f.Type, err, want)
		}
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	req := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{1, 0}, []bool{true, false})
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(req, []arrow.Array{col}, 2)
	col.Release()
	defer rec.Release()
	w, err := newParquetWriter(&bytes.Buffer{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.write(rec); err == nil || !strings.Contains(err.Error(), "column n: 1 nulls in a non-nullable column") {
		t.Errorf("null in a required column: %v", err)
	}
}
