package report

import (
	"strings"
	"testing"
)

// TestDescribePeak: a device's line names the trace's peak when it stood
// above the end by 1 MiB and 5% or more: when (time into the trace, the
// entry when untimed, the start when the trace only freed), how much of it
// the trace allocated, and its largest site.
func TestDescribePeak(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	const MiB = 1 << 20
	site := &Frame{Function: "forward", File: "/w/model.py", Line: 39}
	for _, c := range []struct {
		name string
		d    DeviceSummary
		want string
	}{
		{"timed", DeviceSummary{ActiveBytes: i64(100 * MiB), TraceEntries: 50, TraceStartUs: i64(1_000_000), TraceEndUs: i64(2_000_000),
			PeakActiveBytes: i64(300 * MiB), PeakSeq: i64(9), PeakUs: i64(1_138_000), PeakTraceBytes: 250 * MiB,
			PeakSites: []PeakSite{{Site: site, Bytes: 200 * MiB, Count: 2}}},
			", peak 300 MiB active at 138 ms into the trace (250 MiB of it allocated during the trace; largest site forward (model.py:39), 200 MiB)"},
		{"untimed", DeviceSummary{ActiveBytes: i64(100 * MiB), TraceEntries: 5000,
			PeakActiveBytes: i64(300 * MiB), PeakSeq: i64(1401), PeakTraceBytes: 250 * MiB, PeakSites: []PeakSite{{Bytes: 200 * MiB, Count: 2}}},
			", peak 300 MiB active at trace entry 1,402 of 5,000 (250 MiB of it allocated during the trace; largest site (no stack), 200 MiB)"},
		{"start", DeviceSummary{ActiveBytes: i64(100 * MiB), TraceEntries: 1, PeakActiveBytes: i64(110 * MiB), PeakSeq: i64(-1)},
			", peak 110 MiB active at the trace's start (0 B of it allocated during the trace)"},
		// 4 MiB above 100 MiB is under 5%: not shown, the two would read alike.
		{"near the end", DeviceSummary{ActiveBytes: i64(100 * MiB), TraceEntries: 50, PeakActiveBytes: i64(104 * MiB), PeakSeq: i64(3)}, ""},
		{"none", DeviceSummary{ActiveBytes: i64(100 * MiB), TraceEntries: 50}, ""},
	} {
		if got := describePeak(c.d); got != c.want {
			t.Errorf("%s: %.200q, want %.200q", c.name, got, c.want)
		}
	}
	in := Input{Format: "pytorch-snapshot", Devices: []DeviceSummary{{ActiveBytes: i64(100 * MiB), ReservedBytes: i64(400 * MiB), TraceEntries: 50,
		PeakActiveBytes: i64(300 * MiB), PeakSeq: i64(9), PeakTraceBytes: 250 * MiB}}}
	if got := describeInput(in); !strings.Contains(got, "50 trace entries, peak 300 MiB active at trace entry 10 of 50") {
		t.Errorf("input line %.200q", got)
	}
}
