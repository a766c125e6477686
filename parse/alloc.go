package parse

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RecyclingAllocator is an Arrow memory.Allocator that keeps buffers freed
// by released record batches and hands them out again, zeroed. A parser
// streaming a large input fills batch after batch of the same sizes, so
// after the first few batches it allocates nothing: no garbage to collect
// and no fresh pages to fault in. Buffers are 64-byte aligned, like
// memory.GoAllocator's. It is safe for concurrent use.
//
// A kept buffer is zeroed when it is freed, not when it is handed out
// again: a record batch is released by its consumer (an analysis on its
// own goroutine), so the producer, the one goroutine every batch waits on,
// does not pay for the clearing. Every buffer on a free list is zeroed.
type RecyclingAllocator struct {
	mu      sync.Mutex
	free    map[int][][]byte // by capacity, a power of two
	held    int
	maxHeld int
}

var _ memory.Allocator = (*RecyclingAllocator)(nil)

// NewRecyclingAllocator returns an allocator that keeps at most maxHeld
// bytes of freed buffers for reuse.
func NewRecyclingAllocator(maxHeld int) *RecyclingAllocator {
	return &RecyclingAllocator{free: map[int][][]byte{}, maxHeld: maxHeld}
}

func sizeClass(size int) int {
	if size <= 64 {
		return 64
	}
	return 1 << bits.Len(uint(size-1))
}

// Allocate returns a zeroed buffer of length size.
func (a *RecyclingAllocator) Allocate(size int) []byte {
	c := sizeClass(size)
	a.mu.Lock()
	if list := a.free[c]; len(list) > 0 {
		b := list[len(list)-1]
		a.free[c] = list[:len(list)-1]
		a.held -= c
		a.mu.Unlock()
		return b[:size] // zeroed by Free

	}
	a.mu.Unlock()
	buf := make([]byte, c+64)
	shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & 63)
	return buf[shift : shift+size : shift+c]
}

// Reallocate grows or shrinks b to size, in place when its capacity allows.
func (a *RecyclingAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Purge drops the buffers kept for reuse, for the garbage collector to
// reclaim: for when no more batches will be built. Allocate still works
// after it.
func (a *RecyclingAllocator) Purge() {
	a.mu.Lock()
	clear(a.free)
	a.held = 0
	a.mu.Unlock()
}

// Free keeps b for reuse when it is one of this allocator's buffers and the
// pool has room.
func (a *RecyclingAllocator) Free(b []byte) {
	c := cap(b)
	if c < 64 || c&(c-1) != 0 {
		return
	}
	a.mu.Lock()
	keep := a.held+c <= a.maxHeld
	if keep {
		a.held += c // reserved now, so that concurrent Frees stay under maxHeld
	}
	a.mu.Unlock()
	if !keep {
		return
	}
	clear(b[:c]) // outside the lock: Allocate on another goroutine need not wait
	a.mu.Lock()
	a.free[c] = append(a.free[c], b[:c])
	a.mu.Unlock()
}
