package parse

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countingSource yields n one-row batches whose value is their number,
// then ends with err.
type countingSource struct {
	mem    memory.Allocator
	n, i   int
	err    error
	cur    arrow.RecordBatch
	schema *arrow.Schema
	nexts  int
}

func (s *countingSource) Next() bool {
	s.nexts++
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.i >= s.n {
		return false
	}
	b := array.NewRecordBuilder(s.mem, s.schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(int64(s.i))
	s.cur = b.NewRecordBatch()
	s.i++
	return true
}
func (s *countingSource) Table() int                     { return s.i - 1 }
func (s *countingSource) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *countingSource) Err() error                     { return s.err }

func newCountingSource(mem memory.Allocator, n int, err error) *countingSource {
	return &countingSource{mem: mem, n: n, err: err,
		schema: arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)}
}

func TestPrefetchOrderAndError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	want := errors.New("broken at the end")
	src := newCountingSource(mem, 50, want)
	p := NewPrefetch[int](src, 2)
	got := 0
	for p.Next() {
		v := p.RecordBatch().Column(0).(*array.Int64).Value(0)
		if p.Table() != got || v != int64(got) {
			t.Fatalf("batch %d: table %d, value %d", got, p.Table(), v)
		}
		got++
	}
	if got != 50 || !errors.Is(p.Err(), want) {
		t.Fatalf("%d batches, err %v; want 50 and %v", got, p.Err(), want)
	}
	p.Close()
	p.Close()
}

// Closing early releases what was read ahead and stops the source: it is
// not read to its end.
func TestPrefetchCloseEarly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	src := newCountingSource(mem, 1000, nil)
	p := NewPrefetch[int](src, 3)
	for i := 0; i < 5 && p.Next(); i++ {
	}
	p.Close()
	if src.i >= 1000 {
		t.Fatalf("the source was read to its end (%d batches) after Close", src.i)
	}
	if src.cur != nil {
		src.cur.Release()
	}
}
