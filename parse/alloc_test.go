package parse

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestRecyclingAllocator(t *testing.T) {
	a := NewRecyclingAllocator(1 << 20)
	b := a.Allocate(1000)
	if len(b) != 1000 || cap(b) != 1024 || uintptr(unsafe.Pointer(&b[0]))%64 != 0 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	for i := range b {
		b[i] = 0xff
	}
	a.Free(b)
	c := a.Allocate(900)
	if &c[0] != &b[0] {
		t.Fatal("freed buffer not reused")
	}
	for i, v := range c[:cap(c)] {
		if v != 0 {
			t.Fatalf("reused buffer not zeroed at %d", i)
		}
	}
	a.Free(make([]byte, 100)) // not ours: ignored
	if a.held != 0 {
		t.Fatalf("held %d", a.held)
	}
	// Builders work on it: nulls rely on zeroed bitmaps.
	mem := memory.NewCheckedAllocator(a)
	defer mem.AssertSize(t, 0)
	for round := 0; round < 3; round++ {
		bld := array.NewInt64Builder(mem)
		bld.Reserve(100)
		for i := 0; i < 100; i++ {
			if i%3 == 0 {
				bld.UnsafeAppendBoolToBitmap(false)
			} else {
				bld.UnsafeAppend(int64(i))
			}
		}
		arr := bld.NewInt64Array()
		if arr.NullN() != 34 || arr.IsValid(0) || !arr.IsValid(1) || arr.Value(1) != 1 {
			t.Fatalf("round %d: %v", round, arr)
		}
		arr.Release()
		bld.Release()
	}
}

// TestRecyclingAllocatorPurge: after Purge the pool holds nothing, so a
// freed buffer is not handed out again (the GC may reclaim it) and the
// pool's count of held bytes starts again from zero.
func TestRecyclingAllocatorPurge(t *testing.T) {
	a := NewRecyclingAllocator(1 << 20)
	b := a.Allocate(4096)
	a.Free(b)
	if a.held != 4096 {
		t.Fatalf("held %d after one free of 4096", a.held)
	}
	a.Purge()
	if a.held != 0 || len(a.free[4096]) != 0 {
		t.Fatalf("after Purge: held %d, %d pooled", a.held, len(a.free[4096]))
	}
	c := a.Allocate(4096)
	if &c[0] == &b[0] {
		t.Fatal("a purged buffer was handed out again")
	}
	a.Free(c) // the pool still works
	if d := a.Allocate(4000); &d[0] != &c[0] {
		t.Fatal("buffer freed after Purge not reused")
	}
}

func TestBatchQueue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batch := func(n int) arrow.RecordBatch {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := 0; i < n; i++ {
			b.Append(int64(i))
		}
		arr := b.NewArray()
		defer arr.Release()
		return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{arr}, int64(n))
	}
	var q batchQueue[string]
	if !q.empty() || q.pop() {
		t.Fatal("new queue not empty")
	}
	q.push("a", batch(1))
	q.push("b", batch(2))
	if !q.pop() || q.cur.table != "a" || q.cur.rec.NumRows() != 1 {
		t.Fatal("first batch")
	}
	if !q.pop() || q.cur.table != "b" || q.cur.rec.NumRows() != 2 || !q.empty() {
		t.Fatal("second batch")
	}
	q.push("c", batch(3))
	q.release() // the current one and the waiting one: AssertSize checks both went
}
