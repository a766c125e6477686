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
	want := []CoarseFigure{{"requested", GiB / 2, "2 GiB"}, {"total", GiB / 2, "24 GiB"}, {"allocated", GiB / 2, "20 GiB"}, {"free", GiB / 2, "1 GiB"}, {"reserved", GiB / 2, "21 GiB"}}
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
	want = []CoarseFigure{{"total", GiB / 20, "23.6 GiB"}, {"process 0", GiB / 2, "3 GiB"}}
	if m.Generation != Gen2 || !reflect.DeepEqual(m.Coarse, want) || len(m.Processes) != 1 || m.Processes[0].Bytes != 3*GiB {
		t.Errorf("%s %v %v", m.Generation, m.Coarse, m.Processes)
	}
	// As PyTorch prints it: nothing coarse.
	line = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 20.00 GiB already allocated; 1.00 GiB free; 21.00 GiB reserved in total by PyTorch)"
	if m, _ = ParseMessage(line, findOOM(line, 0)); m.Generation != Gen1 || m.Coarse != nil {
		t.Errorf("%s %v", m.Generation, m.Coarse)
	}
}

// A coarse figure keeps its text as typed, for the report to print back
// ("24 GiB", not "24.00 GiB"); MPS's "GB" (powers of 1024 up to 2.3) is
// kept under its IEC name. The coarse column carries the text, and a
// column from before the text (two fields) still reads.
func TestCoarseTyped(t *testing.T) {
	line := "RuntimeError: MPS backend out of memory (MPS allocated: 17 GB, other allocations: 1.38 GB, max allowed: 18.1 GB). Tried to allocate 256.00 MB on private pool."
	m, _ := ParseMessage(line, findOOM(line, 0))
	// process_in_use is summed, not typed: 17 GiB ±0.5 GiB and 1.38 GiB
	// ±SizeTolerance.
	want := []CoarseFigure{{"reserved", GiB / 2, "17 GiB"}, {"process_in_use", GiB/2 + GiB/200, ""}, {"allowed", GiB / 20, "18.1 GiB"}}
	if m.Generation != GenMPS || !reflect.DeepEqual(m.Coarse, want) {
		t.Fatalf("%s %+v", m.Generation, m.Coarse)
	}
	col := FormatCoarse(want)
	if col != "reserved=536870912=17 GiB;process_in_use=542239621;allowed=53687091=18.1 GiB" {
		t.Errorf("column %q", col)
	}
	if got := ParseCoarse(col); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip %+v", got)
	}
	if got := ParseCoarse("total=536870912;free=bad;requested=53687091=2.5 GiB"); !reflect.DeepEqual(got, []CoarseFigure{{"total", GiB / 2, ""}, {"requested", GiB / 20, "2.5 GiB"}}) {
		t.Errorf("old column %+v", got)
	}
}

// FormatWithin prints a decimal place only where the allowance is less
// than one of its units, and moves to the next unit where even the
// whole figure is not known; FormatTolerance gives the allowance in the
// figure's unit.
func TestFormatWithin(t *testing.T) {
	for _, c := range []struct {
		size, tol int64
		want      string
	}{
		{17*GiB + 77*GiB/1000, GiB / 2, "17 GiB"},               // 24 GiB typed less 6.93 GiB
		{19*GiB + GiB/2 + 10*MiB, GiB/20 + MiB/200, "19.5 GiB"}, // 19.5 GiB typed + 10.00 MiB
		{GiB, GiB, "1 GiB"},                                     // 21 GiB - 20 GiB, both typed whole: not "1024 MiB"
		{GiB / 2, GiB / 20, "0.5 GiB"},                          // 512 MiB ±51 MiB
		{300 * MiB, MiB / 2, "300 MiB"},
		{3 * GiB / 2, GiB / 200, "1.50 GiB"}, // within SizeTolerance: FormatSize
		{512, 1000, "512 bytes"},
	} {
		if got := FormatWithin(c.size, c.tol); got != c.want {
			t.Errorf("FormatWithin(%d, %d) = %q, want %q", c.size, c.tol, got, c.want)
		}
	}
	for _, c := range []struct {
		tol    int64
		figure string
		want   string
	}{
		{GiB / 2, "24 GiB", "0.5 GiB"},
		{GiB / 20, "7.8 GiB", "0.05 GiB"}, // 53687091 bytes, not 0.0499999998
		{MiB / 2, "1024 MiB", "0.5 MiB"},
		{GiB / 2, "1 GiB", "0.5 GiB"},
		{0, "3 bytes", "0 bytes"},
	} {
		if got := FormatTolerance(c.tol, c.figure); got != c.want {
			t.Errorf("FormatTolerance(%d, %q) = %q, want %q", c.tol, c.figure, got, c.want)
		}
	}
}
