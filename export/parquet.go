package export

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// Parquet layout of a part. Arrow types map to Parquet as Arrow's own
// Parquet writer maps them, so that a reader sees the same columns:
//
//	Boolean                     BOOLEAN
//	Int8, Int16, Int32, Int64   INT32 or INT64, INT(bits, signed)
//	Uint8 ... Uint64            INT32 or INT64, INT(bits, unsigned)
//	Float32, Float64            FLOAT, DOUBLE
//	String, Dictionary(->String) BYTE_ARRAY, STRING, dictionary-encoded
//	Timestamp(ms|us|ns, tz)     INT64, TIMESTAMP(unit, isAdjustedToUTC: tz != "")
//	FixedSizeList(n, T)         LIST of T (3-level: repeated group list, element)
//
// A nullable Arrow field is an OPTIONAL column (nulls written as nulls), a
// non-nullable one REQUIRED. Columns keep the Arrow schema's order. The
// Arrow schema itself is kept in the key-value metadata under
// "ARROW:schema" (base64 of an Arrow IPC stream holding only the schema),
// as Arrow's writer stores it, so that Arrow readers get the dictionary
// and timestamp types back.
const (
	// parquetRowGroupRows: a row group is closed once it holds this many
	// rows, at the end of the batch that reaches it: parquet-go keeps a
	// row group's encoded pages in memory until it is closed.
	parquetRowGroupRows = 1 << 20
	// parquetDictionaryMaxBytes: a column whose dictionary outgrows this
	// writes its later pages PLAIN (Arrow's writer's default limit).
	parquetDictionaryMaxBytes = 1 << 20
	// parquetChunk: values handed to a column writer at a time; pages are
	// cut at parquet-go's page buffer size (256 KiB) between chunks.
	parquetChunk = 4096
)

// parquetWriter writes record batches of one Arrow schema to a Parquet
// file with parquet-go, column by column.
type parquetWriter struct {
	schema *arrow.Schema
	w      *parquet.Writer
	cols   []*parquet.ColumnWriter
	// maxDef: each column's maximum definition level.
	maxDef []int
	rows   int64 // rows in the current row group
	vals   []parquet.Value
	// groupRows and chunk: parquetRowGroupRows and parquetChunk (tests
	// set them small to cross the boundaries).
	groupRows int64
	chunk     int
}

// newParquetWriter starts a Parquet file of schema on out. Errors: a
// column of a type the export does not map (named with its type).
func newParquetWriter(out io.Writer, schema *arrow.Schema) (_ *parquetWriter, err error) {
	defer recoverParquet(&err)
	fields := make([]parquet.Field, schema.NumFields())
	maxDef := make([]int, schema.NumFields())
	for i, f := range schema.Fields() {
		n, def, err := parquetNode(f)
		if err != nil {
			return nil, err
		}
		fields[i] = orderedField{Node: n, name: f.Name}
		maxDef[i] = def
	}
	meta, err := arrowSchemaMetadata(schema)
	if err != nil {
		return nil, err
	}
	opts := []parquet.WriterOption{
		parquet.NewSchema("schema", orderedGroup(fields)),
		parquet.Compression(&parquet.Zstd),
		parquet.DictionaryMaxBytes(parquetDictionaryMaxBytes),
		// Version 1 data pages, as Arrow's writer writes by default
		// (parquet-go's default is 2, which fewer readers support).
		parquet.DataPageVersion(1),
		parquet.KeyValueMetadata("ARROW:schema", meta),
	}
	// The schema's own metadata (ReadInPartKey) is key-value metadata of
	// the file too, for readers that do not decode ARROW:schema (DuckDB's
	// parquet_kv_metadata, Spark).
	md := schema.Metadata()
	for i, k := range md.Keys() {
		opts = append(opts, parquet.KeyValueMetadata(k, md.Values()[i]))
	}
	w := parquet.NewWriter(out, opts...)
	return &parquetWriter{schema: schema, w: w, cols: w.ColumnWriters(), maxDef: maxDef,
		groupRows: parquetRowGroupRows, chunk: parquetChunk}, nil
}

// parquetNode is a field's Parquet node and its column's maximum
// definition level.
func parquetNode(f arrow.Field) (parquet.Node, int, error) {
	n, err := parquetLeaf(f.Type)
	def := 0
	if err == nil && f.Type.ID() == arrow.FIXED_SIZE_LIST {
		lt := f.Type.(*arrow.FixedSizeListType)
		if n, err = parquetLeaf(lt.Elem()); err == nil && n == nil {
			err = fmt.Errorf("type %s has no Parquet mapping in the export", f.Type) // a list of lists
		}
		def = 1 // the repeated group
		if err == nil && lt.ElemField().Nullable {
			n = parquet.Optional(n)
			def++
		}
		n = parquet.List(n)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("column %s: %w", f.Name, err)
	}
	if f.Nullable {
		n = parquet.Optional(n)
		def++
	}
	return n, def, nil
}

// parquetLeaf is the Parquet node of a primitive Arrow type.
func parquetLeaf(t arrow.DataType) (parquet.Node, error) {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return parquet.Leaf(parquet.BooleanType), nil
	case *arrow.Int8Type:
		return parquet.Int(8), nil
	case *arrow.Int16Type:
		return parquet.Int(16), nil
	case *arrow.Int32Type:
		return parquet.Int(32), nil
	case *arrow.Int64Type:
		return parquet.Int(64), nil
	case *arrow.Uint8Type:
		return parquet.Uint(8), nil
	case *arrow.Uint16Type:
		return parquet.Uint(16), nil
	case *arrow.Uint32Type:
		return parquet.Uint(32), nil
	case *arrow.Uint64Type:
		return parquet.Uint(64), nil
	case *arrow.Float32Type:
		return parquet.Leaf(parquet.FloatType), nil
	case *arrow.Float64Type:
		return parquet.Leaf(parquet.DoubleType), nil
	case *arrow.StringType:
		return parquet.Encoded(parquet.String(), &parquet.RLEDictionary), nil
	case *arrow.DictionaryType:
		if _, ok := t.ValueType.(*arrow.StringType); ok && arrow.IsInteger(t.IndexType.ID()) {
			return parquet.Encoded(parquet.String(), &parquet.RLEDictionary), nil
		}
	case *arrow.TimestampType:
		adjusted := t.TimeZone != ""
		switch t.Unit {
		case arrow.Millisecond:
			return parquet.TimestampAdjusted(parquet.Millisecond, adjusted), nil
		case arrow.Microsecond:
			return parquet.TimestampAdjusted(parquet.Microsecond, adjusted), nil
		case arrow.Nanosecond:
			return parquet.TimestampAdjusted(parquet.Nanosecond, adjusted), nil
		}
	case *arrow.FixedSizeListType:
		return nil, nil // parquetNode builds the list from its element
	}
	return nil, fmt.Errorf("type %s has no Parquet mapping in the export", t)
}

// arrowSchemaMetadata is the "ARROW:schema" value: base64 of an Arrow IPC
// stream that holds the schema message only (what Arrow's Parquet writer
// stores, and its reader decodes).
func arrowSchemaMetadata(s *arrow.Schema) (string, error) {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// write appends rec's rows (rec has the writer's schema). Errors: a
// schema other than the writer's, a null in a non-nullable column, the
// file's write errors.
func (p *parquetWriter) write(rec arrow.RecordBatch) (err error) {
	defer recoverParquet(&err)
	if !rec.Schema().Equal(p.schema) {
		return fmt.Errorf("record batch schema %s differs from the part's %s", rec.Schema(), p.schema)
	}
	for i, col := range rec.Columns() {
		if err := p.writeColumn(i, col); err != nil {
			return fmt.Errorf("column %s: %w", p.schema.Field(i).Name, err)
		}
	}
	p.rows += rec.NumRows()
	if p.rows >= p.groupRows {
		p.rows = 0
		return p.w.Flush()
	}
	return nil
}

// writeColumn writes one column of a batch, parquetChunk rows at a time.
func (p *parquetWriter) writeColumn(ix int, col arrow.Array) error {
	nullable := p.schema.Field(ix).Nullable
	if !nullable && col.NullN() > 0 {
		return fmt.Errorf("%d nulls in a non-nullable column", col.NullN())
	}
	if list, ok := col.(*array.FixedSizeList); ok {
		return p.writeList(ix, list, nullable)
	}
	value, err := valueFunc(col)
	if err != nil {
		return err
	}
	maxDef := p.maxDef[ix]
	n := col.Len()
	for start := 0; start < n; start += p.chunk {
		end := min(start+p.chunk, n)
		vs := p.vals[:0]
		for i := start; i < end; i++ {
			if col.IsNull(i) {
				vs = append(vs, parquet.NullValue().Level(0, 0, ix))
			} else {
				vs = append(vs, value(i).Level(0, maxDef, ix))
			}
		}
		p.vals = vs
		if _, err := p.cols[ix].WriteRowValues(vs); err != nil {
			return err
		}
	}
	clear(p.vals) // drop references to the batch's buffers
	return nil
}

// writeList writes a FixedSizeList column: a row's elements, the first
// at repetition level 0 and the others at 1; a null list is one value at
// definition level 0, a null element one at the list's own level.
func (p *parquetWriter) writeList(ix int, list *array.FixedSizeList, nullable bool) error {
	size := int(list.DataType().(*arrow.FixedSizeListType).Len())
	elems := list.ListValues()
	if !list.DataType().(*arrow.FixedSizeListType).ElemField().Nullable && elems.NullN() > 0 {
		return fmt.Errorf("%d nulls among non-nullable list elements", elems.NullN())
	}
	value, err := valueFunc(elems)
	if err != nil {
		return err
	}
	maxDef := p.maxDef[ix]
	present := 1 // a list that is there: its repeated group entered
	if nullable {
		present++
	}
	rowsPerChunk := max(p.chunk/max(size, 1), 1)
	n := list.Len()
	for start := 0; start < n; start += rowsPerChunk {
		end := min(start+rowsPerChunk, n)
		vs := p.vals[:0]
		for i := start; i < end; i++ {
			switch {
			case list.IsNull(i):
				vs = append(vs, parquet.NullValue().Level(0, 0, ix))
				continue
			case size == 0: // an empty list: its group, no element
				vs = append(vs, parquet.NullValue().Level(0, present-1, ix))
				continue
			}
			lo, _ := list.ValueOffsets(i)
			for k := range size {
				rep, j := min(k, 1), int(lo)+k
				if elems.IsNull(j) {
					vs = append(vs, parquet.NullValue().Level(rep, present, ix))
				} else {
					vs = append(vs, value(j).Level(rep, maxDef, ix))
				}
			}
		}
		p.vals = vs
		if _, err := p.cols[ix].WriteRowValues(vs); err != nil {
			return err
		}
	}
	clear(p.vals)
	return nil
}

// valueFunc is a function giving the Parquet value of a non-null element
// of col (its levels not set). Byte arrays point into col's buffers:
// parquet-go copies them when it writes them.
func valueFunc(col arrow.Array) (func(int) parquet.Value, error) {
	switch a := col.(type) {
	case *array.Boolean:
		return func(i int) parquet.Value { return parquet.BooleanValue(a.Value(i)) }, nil
	case *array.Int8:
		return func(i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) }, nil
	case *array.Int16:
		return func(i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) }, nil
	case *array.Int32:
		return func(i int) parquet.Value { return parquet.Int32Value(a.Value(i)) }, nil
	case *array.Int64:
		return func(i int) parquet.Value { return parquet.Int64Value(a.Value(i)) }, nil
	case *array.Uint8:
		return func(i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) }, nil
	case *array.Uint16:
		return func(i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) }, nil
	case *array.Uint32:
		// The bits as Parquet stores UINT_32 in an INT32.
		return func(i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) }, nil
	case *array.Uint64:
		return func(i int) parquet.Value { return parquet.Int64Value(int64(a.Value(i))) }, nil
	case *array.Float32:
		return func(i int) parquet.Value { return parquet.FloatValue(a.Value(i)) }, nil
	case *array.Float64:
		return func(i int) parquet.Value { return parquet.DoubleValue(a.Value(i)) }, nil
	case *array.String:
		return func(i int) parquet.Value { return stringValue(a.Value(i)) }, nil
	case *array.Timestamp:
		return func(i int) parquet.Value { return parquet.Int64Value(int64(a.Value(i))) }, nil
	case *array.Dictionary:
		dict, ok := a.Dictionary().(*array.String)
		if !ok {
			break
		}
		return func(i int) parquet.Value { return stringValue(dict.Value(a.GetValueIndex(i))) }, nil
	}
	return nil, fmt.Errorf("type %s has no Parquet mapping in the export", col.DataType())
}

// stringValue is a BYTE_ARRAY value that points at s's bytes (no copy).
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// close writes the last row group and the footer; it does not close the
// underlying file.
func (p *parquetWriter) close() (err error) {
	defer recoverParquet(&err)
	return p.w.Close()
}

// recoverParquet turns a panic of parquet-go (which panics on some
// invalid input, where an error would do: a configuration it rejects, a
// dictionary over 4 GiB) into an error, so that an export fails with a
// message rather than a crash.
func recoverParquet(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("parquet writer: %v", r)
	}
}

// orderedGroup is a Parquet group whose fields keep the order given
// (parquet.Group is a map, and lists its fields sorted by name).
type orderedGroup []parquet.Field

// orderedField names a node in an orderedGroup.
type orderedField struct {
	parquet.Node
	name string
}

func (f orderedField) Name() string { return f.name }

// Value is for parquet-go's mapping of Go values to rows, which the
// export does not use: it writes columns from Arrow arrays.
func (f orderedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

func (g orderedGroup) ID() int { return 0 }
func (g orderedGroup) String() string {
	var b strings.Builder
	parquet.PrintSchema(&b, "", g)
	return b.String()
}
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []parquet.Field     { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }

// GoType is a struct of the fields (as parquet.Group gives it); the
// export does not map Go values.
func (g orderedGroup) GoType() reflect.Type {
	m := parquet.Group{}
	for _, f := range g {
		m[f.Name()] = f
	}
	return m.GoType()
}
