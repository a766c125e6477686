package nvml

import (
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// row is one samples row as Go values, for assertions; nil pointers are nulls.
type row struct {
	TimeUs                      int64
	Host, UUID, GPUName         string
	GPU                         *int32
	PID                         *int64
	Process                     string
	Used, Total, Free, Reserved *int64
	Pod, Namespace, Container   string
	Source, Convention          string
}

// readRows reads input with a checked allocator, converts every row and
// checks that no Arrow memory is left allocated.
func readRows(t *testing.T, name, input string, opts ...Option) ([]row, *Metadata, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rd := NewReader(strings.NewReader(input), name, append([]Option{WithAllocator(mem), WithBatchSize(100)}, opts...)...)
	defer rd.Release()
	var rows []row
	for rd.Next() {
		rows = append(rows, toRows(rd.RecordBatch())...)
	}
	return rows, rd.Metadata(), rd.Err()
}

func readFile(t *testing.T, path string, opts ...Option) ([]row, *Metadata) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, meta, err := readRows(t, path, string(b), opts...)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows, meta
}

func toRows(rec arrow.RecordBatch) []row {
	str := func(c int, i int) string {
		d := rec.Column(c).(*array.Dictionary)
		if d.IsNull(i) {
			return ""
		}
		return d.Dictionary().(*array.String).Value(d.GetValueIndex(i))
	}
	i64 := func(c int, i int) *int64 {
		a := rec.Column(c).(*array.Int64)
		if a.IsNull(i) {
			return nil
		}
		v := a.Value(i)
		return &v
	}
	var out []row
	for i := 0; i < int(rec.NumRows()); i++ {
		r := row{
			TimeUs: int64(rec.Column(ColTime).(*array.Timestamp).Value(i)),
			Host:   str(ColHost, i), UUID: str(ColUUID, i), GPUName: str(ColGPUName, i),
			PID: i64(ColPID, i), Process: str(ColProcess, i),
			Used: i64(ColUsed, i), Total: i64(ColTotal, i), Free: i64(ColFree, i), Reserved: i64(ColReserved, i),
			Pod: str(ColPod, i), Namespace: str(ColNamespace, i), Container: str(ColContainer, i),
			Source: str(ColSource, i), Convention: str(ColConvention, i),
		}
		if g := rec.Column(ColGPU).(*array.Int32); g.IsValid(i) {
			v := g.Value(i)
			r.GPU = &v
		}
		out = append(out, r)
	}
	return out
}
