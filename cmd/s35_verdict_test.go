package cmd

import "testing"

// A loop whose only allocation on the GPU is the tensor it keeps, and a
// list comprehension, are the same in a trace's order: one allocation at
// one line after another, nothing between. A tester (s35) made both as
// snapshots of 50 and 20 allocations of 4 MiB and 1 MiB at collect
// (train.py:30), never freed: append_loop_50ms.pickle 50 ms apart (a loop
// that loads a batch between), append_burst_37us.pickle 37 µs apart (as
// fast as the allocator: one statement). The first is the textbook
// list.append leak (leak, and --fail-on leak trips); 312c987 had made it
// retained with "no repeating step". The second is one operation:
// retained, as a list comprehension run once (s33's fbm) is.
func TestAppendLoopAgainstBurst(t *testing.T) {
	r := analyzeJSON(t, td+"pytorch/s35/append_loop_50ms.pickle")
	if f := one(t, r, "leak", "train.py", 30); f.Count != 50 || f.Bytes != 50*4<<20 {
		t.Errorf("append loop: leak of %d blocks, %d bytes; want 50, 200 MiB", f.Count, f.Bytes)
	}
	r = analyzeJSON(t, td+"pytorch/s35/append_burst_37us.pickle")
	if f := one(t, r, "retained", "train.py", 30); f.Count != 20 {
		t.Errorf("burst: retained %d blocks, want 20", f.Count)
	}
}
