package pytorchtext

import "testing"

// cudaMallocAsync's message prints what PyTorch allocated, not what its
// pool reserved (testdata/README.md, "OOM pastes hunted in session 42"):
// the reserved column is null. ComfyUI 5886's copy, in markdown bold,
// reads whole: the "**" after the unset limit (2^64 bytes) is no cut and
// no figure.
func TestHunt42AsyncReserved(t *testing.T) {
	for _, c := range []struct {
		file             string
		line             int64
		requested, alloc int64
		total, free      int64
	}{
		{"pastes/async_bold_room_comfyui5886.txt", 4, 1250 * MiB / 100, gib(596), 12 * GiB, 5 * GiB},
		{"pastes/async_chattts9.txt", 1, 320 * MiB, gib(689), gib(2369), 294 * MiB / 100},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages", c.file, len(rs.msgs))
		}
		m := rs.msgs[0]
		if _, ok := m.sizes["reserved"]; ok {
			t.Errorf("%s: reserved %d, want null (the pool's reserved memory is not printed)", c.file, m.sizes["reserved"])
		}
		if _, ok := m.sizes["allowed"]; ok || m.reason != "" {
			t.Errorf("%s: allowed %d, reason %q: the 2^64-byte limit is none, the message whole", c.file, m.sizes["allowed"], m.reason)
		}
		if m.gen != "async" || m.line != c.line || m.device != 0 || !within(m.sizes["requested"], c.requested) || !within(m.sizes["allocated"], c.alloc) || !within(m.sizes["total"], c.total) || !within(m.sizes["free"], c.free) {
			t.Errorf("%s: %+v", c.file, m)
		}
	}
}

// within says a printed size (two decimals of its unit) is want.
func within(got, want int64) bool {
	d := got - want
	return d >= -SizeTolerance(want) && d <= SizeTolerance(want)
}
