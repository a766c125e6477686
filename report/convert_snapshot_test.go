package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// TestLeakMessageSizes: a leak's growth curve counts the sizes the trace
// records (the requested sizes in PyTorch 2.x), its held bytes are the
// blocks': big_real's six kept allocations of 1,608,224 bytes (9.2 MiB)
// sit in 2 MiB blocks (12 MiB). Where the two differ the message says
// which is which; where they agree it says nothing of it.
func TestLeakMessageSizes(t *testing.T) {
	const MiB = 1 << 20
	s := snapshot.Site{Kind: callsite.Leak, Bytes: 6 * 2 * MiB, Count: 6,
		Frame:  callsite.Frame{Filename: "big_real.py", Line: 21, Name: "<module>"},
		Growth: &snapshot.Growth{Kept: 6, Allocations: 6, KeptTraceBytes: 6 * 1608224}}
	if m := siteMessage(s, false); !strings.Contains(m, "the growth above counts the 9.2 MiB the trace records for them, their blocks hold 12 MiB") {
		t.Errorf("sizes not told apart: %s", m)
	}
	s.Growth.KeptTraceBytes = s.Bytes
	if m := siteMessage(s, false); strings.Contains(m, "the trace records") {
		t.Errorf("sizes that agree told apart: %s", m)
	}
}
