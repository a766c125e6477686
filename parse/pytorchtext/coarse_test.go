package pytorchtext

import (
	"reflect"
	"testing"
)

// Users retype and shorten messages: "Tried to allocate 2 GiB (GPU 0; 24
// GiB total capacity; ...)". format_size() always prints two decimals, so
// such a figure is the user's rounding, and its allowance is half a unit
// of its last digit: ±0.5 GiB for "2 GiB", ±0.05 GiB for "7.8 GiB".
func TestCoarseSizes(t *testing.T) {
	for _, c := range []struct {
		text     string
		want, to int64
	}{
		{"12 MiB", 12 * MiB, MiB / 2},
		{"1.5 MiB", 3 * MiB / 2, MiB / 20},
		{"2 GiB", 2 * GiB, GiB / 2},
		{"7.8 GiB", 7*GiB + (8*GiB+5)/10, GiB / 20},
		{"1.000 GiB", GiB, 0}, // finer than format_size(): SizeTolerance holds
		{"1.50 GiB", 3 * GiB / 2, 0},
	} {
		s := &scanner{s: c.text}
		got, err := s.size()
		if err != nil || got != c.want || s.tol != c.to || s.i != len(c.text) {
			t.Errorf("%q: %d (tol %d), %v; want %d (tol %d)", c.text, got, s.tol, err, c.want, c.to)
		}
	}
}

// The tester's message, every figure in whole GiB: it parses (it did
// not: "want \" bytes\" or two decimals"), and every figure is marked
// coarse with ±0.5 GiB.
func TestCoarseMessage(t *testing.T) {
	line := "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB (GPU 0; 24 GiB total capacity; 20 GiB already allocated; 1 GiB free; 21 GiB reserved in total by PyTorch)"
	m, _ := ParseMessage(line, findOOM(line, 0))
	if m.Generation != Gen1 || m.Requested != 2*GiB || m.Total != 24*GiB || m.Allocated != 20*GiB || m.Free != GiB || m.Reserved != 21*GiB {
		t.Fatalf("%+v", m)
	}
	want := []CoarseFigure{{"requested", GiB / 2}, {"total", GiB / 2}, {"allocated", GiB / 2}, {"free", GiB / 2}, {"reserved", GiB / 2}}
	if !reflect.DeepEqual(m.Coarse, want) {
		t.Errorf("coarse %v, want %v", m.Coarse, want)
	}
	if got := ParseCoarse(FormatCoarse(want)); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip %v", got)
	}
	// 2.x, a hand-shortened paste: only the typed-short figures are coarse;
	// the process line's is numbered.
	line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.6 GiB of which 100.00 MiB is free. Process 77 has 3 GiB memory in use. Of the allocated memory 19.50 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated."
	m, _ = ParseMessage(line, findOOM(line, 0))
	want = []CoarseFigure{{"total", GiB / 20}, {"process 0", GiB / 2}}
	if m.Generation != Gen2 || !reflect.DeepEqual(m.Coarse, want) || len(m.Processes) != 1 || m.Processes[0].Bytes != 3*GiB {
		t.Errorf("%s %v %v", m.Generation, m.Coarse, m.Processes)
	}
	// As PyTorch prints it: nothing coarse.
	line = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 20.00 GiB already allocated; 1.00 GiB free; 21.00 GiB reserved in total by PyTorch)"
	if m, _ = ParseMessage(line, findOOM(line, 0)); m.Generation != Gen1 || m.Coarse != nil {
		t.Errorf("%s %v", m.Generation, m.Coarse)
	}
}
