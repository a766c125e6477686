package pytorchtext

import (
	"strings"
	"testing"
)

// A line longer than maxLine (1 MiB) is read whole, in pieces: an OOM
// message 4 MiB into a 5 MiB line without a line end was not read before
// h43b (only the line's first 1 MiB was), and one that starts just before
// a cut is read whole, from the next piece. The message is 2.3+'s form
// (as in the fixtures' oom_error.txt); its sizes are the ones typed here.
func TestLongLineReadInPieces(t *testing.T) {
	const msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Process 1234 has 77.90 GiB memory in use. Of the allocated memory 75.12 GiB is allocated by PyTorch, and 1.55 GiB is reserved by PyTorch but unallocated."
	pad := func(n int) string { return strings.Repeat("x", n) }
	for _, c := range []struct {
		name, text string
		msgs       int
	}{
		{"after 4 MiB", pad(4<<20) + " " + msg + " " + pad(1<<20), 1},
		// The message starts 100 bytes before the first cut: the first
		// piece ends before it.
		{"across the cut", pad(maxLine-100) + " " + msg + " " + pad(1<<20), 1},
		{"at its start", msg + " " + pad(5<<20), 1},
		{"no message", pad(5 << 20), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := readText(t, c.name, c.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs.msgs) != c.msgs {
				t.Fatalf("%d messages, want %d; warnings %.200q", len(rs.msgs), c.msgs, rs.meta.Warnings.Strings())
			}
			if c.msgs == 1 {
				m := rs.msgs[0]
				if m.line != 1 || m.sizes["requested"] != 2<<30 || m.device != 0 || m.exception != "torch.OutOfMemoryError" {
					t.Errorf("line %d, requested %d, device %d, exception %q; want 1, 2 GiB, 0, torch.OutOfMemoryError", m.line, m.sizes["requested"], m.device, m.exception)
				}
			}
			if rs.meta.Lines != 1 {
				t.Errorf("%d lines, want 1", rs.meta.Lines)
			}
			if ws := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(ws, "line 1 is longer than 1048576 bytes; it was read in pieces") {
				t.Errorf("warnings %.200q", ws)
			}
		})
	}
}
