package sanitizer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestAddrSet checks the set against a map on random addresses of a few
// address ranges (so that slots collide), 0 among them, across Resets.
func TestAddrSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s addrSet
	for round := 0; round < 3; round++ {
		want := map[uint64]bool{}
		for i := 0; i < 20000; i++ {
			a := uint64(rng.IntN(4))<<40 | uint64(rng.IntN(1<<16))<<9
			if i%1000 == 0 {
				a = 0
			}
			if s.Has(a) != want[a] {
				t.Fatalf("round %d: Has(%#x) = %v before Add, want %v", round, a, s.Has(a), want[a])
			}
			s.Add(a)
			want[a] = true
			if !s.Has(a) || s.Len() != len(want) {
				t.Fatalf("round %d: after Add(%#x): Has %v, Len %d, want true, %d", round, a, s.Has(a), s.Len(), len(want))
			}
		}
		s.Reset()
		if s.Len() != 0 || s.Has(0) {
			t.Fatalf("Reset left %d addresses", s.Len())
		}
	}
}

// TestLeakedAddrsBound checks that the Reader keeps at most maxLeakedAddrs
// addresses of one process: a log of maxLeakedAddrs+2 leaks at distinct
// addresses, then a leak at the first address again (a new process: told,
// the address is among the first kept), then in that process a repeat of
// its own last address (one the set still had room for). It warns once
// that the first process went past the bound.
func TestLeakedAddrsBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("========= COMPUTE-SANITIZER\n")
	addr := func(i int) uint64 { return 0x7f0000000000 + uint64(i)*0x200 }
	n := maxLeakedAddrs + 2
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "========= Leaked 512 bytes at 0x%x\n", addr(i))
	}
	fmt.Fprintf(&b, "========= Leaked 512 bytes at 0x%x\n", addr(0))
	fmt.Fprintf(&b, "========= Leaked 512 bytes at 0x%x\n", addr(7))
	fmt.Fprintf(&b, "========= Leaked 512 bytes at 0x%x\n", addr(7))
	b.WriteString("========= ERROR SUMMARY: 0 errors\n")

	r := NewReader(bytes.NewReader([]byte(b.String())), "big.txt")
	defer r.Release()
	var procs []int32
	for r.Next() {
		if r.Table() != TableRecords {
			continue
		}
		c := r.RecordBatch().Column(RecProcess).(*array.Int32)
		procs = append(procs, c.Int32Values()...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(procs) != n+3 {
		t.Fatalf("%d records, want %d", len(procs), n+3)
	}
	if procs[n-1] != 0 || procs[n] != 1 || procs[n+1] != 1 || procs[n+2] != 2 {
		t.Errorf("processes of the last 4 records %v, want [0 1 1 2]", procs[n-1:])
	}
	if l := len(r.src.(*textSource).allRuns[0].leaked.slots); l > 2*maxLeakedAddrs {
		t.Errorf("the set of leaked addresses has %d slots, more than the bound needs (%d)", l, 2*maxLeakedAddrs)
	}
	warned := 0
	for _, w := range r.Metadata().Warnings.Strings() {
		if strings.Contains(w, "leaked more than "+withCommas(maxLeakedAddrs)+" allocations") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("warnings %q: want one about the bound", r.Metadata().Warnings.Strings())
	}
}
