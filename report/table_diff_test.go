package report

import (
	"strings"
	"testing"
)

// TestChangeLineSmallDelta: a change under 0.05% printed "+0.0%" beside
// "grown" (rohanbansal12's ctx128 -> ctx512 forward snapshots: 13 GiB,
// +147,456 B); the bytes say how much. Larger changes keep the percentage.
func TestChangeLineSmallDelta(t *testing.T) {
	before := int64(13) << 30
	for _, c := range []struct {
		after int64
		want  string
	}{
		{before + 147456, "(+144 KiB, under 0.1%)"},
		{before - 147456, "(-144 KiB, under 0.1%)"},
		{before + before/10, "(+10.0%)"},
	} {
		p := float64(c.after-before) / float64(before) * 100
		e := DiffEntry{BeforeBytes: before, AfterBytes: c.after, BeforeCount: 295, AfterCount: 295, DeltaBytes: c.after - before, DeltaPercent: &p}
		if got := changeLine(e); !strings.HasSuffix(got, c.want) {
			t.Errorf("after %d: %q, want it to end %q", c.after, got, c.want)
		}
	}
}
