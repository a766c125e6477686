package report

import "testing"

// Session 44: a log with PyTorch's OOM message beside another
// framework's is format oom-log (pytorchtext.FormatOOMLog); its OOM's
// allocated memory is printed as PyTorch's format_size() rounds it, so a
// snapshot of the same OOM that differs by that rounding is the same
// site, as for pytorch-oom-message. 4.19 GiB printed (4498978243 bytes,
// 4.19 * 2^30 rounded) and the snapshot's 1 MiB more are within the
// half-unit of the last printed digit (0.005 GiB, about 5 MiB): same.
// Before, only pytorch-oom-message had the allowance, so this was
// "grown".
func TestHunt44OOMLogSizesArePrinted(t *testing.T) {
	b := &BaselineSite{Key: "k", Kind: KindOOM, Site: "f (a.py:1)", Bytes: 4498978243, Count: 1, Source: "oom-log"}
	a := &BaselineSite{Key: "k", Kind: KindOOM, Site: "f (a.py:1)", Bytes: 4498978243 + 1<<20, Count: 1, Source: "pytorch-snapshot"}
	if e := pairEntry(b, a, Tolerance{}); e.Status != StatusSame {
		t.Errorf("oom-log 4.19 GiB -> snapshot 1 MiB more: %s; want %s", e.Status, StatusSame)
	}
}
