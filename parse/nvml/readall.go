package nvml

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ReadAll reads a whole log into one samples table (Schema). The caller
// must Release the table. Errors are those of Reader.
func ReadAll(r io.Reader, name string, opts ...Option) (arrow.Table, *Metadata, error) {
	rd := NewReader(r, name, opts...)
	defer rd.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rd.Err(); err != nil {
		return nil, nil, err
	}
	meta := *rd.Metadata()
	return array.NewTableFromRecords(Schema, recs), &meta, nil
}
