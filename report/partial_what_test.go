package report

import (
	"strings"
	"testing"
)

// A partial set says what broke off: a memory_summary() table, or a
// memory_stats() dict printed in a log (cut there). Before, both were "the
// table", though a dict has no table.
func TestPartialSetNamesWhatBrokeOff(t *testing.T) {
	for source, want := range map[string]string{"memory_stats": "partial: the dict broke off at line 6", "memory_summary": "partial: the table broke off at line 6"} {
		got := strings.Join(describeAllocatorStats(Input{AllocatorStats: []AllocatorStats{{Source: source, PartialAtLine: 6}}}), "\n")
		if !strings.Contains(got, want) {
			t.Errorf("%s: %.200q, want %q", source, got, want)
		}
	}
}
