package snapshot

import "testing"

// TestPeakWithinTrace: the most memory allocated at once during the trace
// is the end's plus what the trace allocated after that moment, less what
// it freed, frees of blocks older than the trace included. Worked by hand
// (no segments, so the end is what the trace leaves live):
//
//	before the trace: a 2 MiB block X is live               2 MiB
//	#0 alloc act 1 MiB                                       3 MiB
//	#1 alloc workspace 3 MiB                                 6 MiB  <- peak
//	#2 free X (never seen allocated)                         4 MiB
//	#3,#4 free_requested, free_completed workspace           1 MiB
//	#5 alloc act 1 MiB                                       2 MiB  (end)
//
// At the peak the trace's own allocations held 4 MiB: workspace 3 MiB,
// act 1 MiB; the other 2 MiB (X) were allocated before it.
func TestPeakWithinTrace(t *testing.T) {
	const t0 = int64(1_796_000_000_000_000) // µs since the epoch, in 2026
	res := analyzeEvents(t, []string{"act", "workspace"}, []ev{
		{"alloc", 0x1000, 1 * MiB, t0 + 1000, 0},
		{"alloc", 0x2000, 3 * MiB, t0 + 2000, 1},
		{"free_completed", 0x9000, 2 * MiB, t0 + 3000, -1},
		{"free_requested", 0x2000, 3 * MiB, t0 + 4000, 1},
		{"free_completed", 0x2000, 3 * MiB, t0 + 4000, 1},
		{"alloc", 0x3000, 1 * MiB, t0 + 5000, 0},
	})
	d := res.Devices[0]
	if d.PeakActiveBytes != 6*MiB || d.PeakAboveEndBytes != 4*MiB || d.PeakSeq != 1 || d.PeakUs != t0+2000 {
		t.Fatalf("peak %d (%d above the end) at entry %d, %d µs; want 6 MiB (4 MiB above) at entry 1, t0+2000",
			d.PeakActiveBytes, d.PeakAboveEndBytes, d.PeakSeq, d.PeakUs-t0)
	}
	if d.PeakTraceBytes != 4*MiB || len(d.PeakSites) != 2 ||
		d.PeakSites[0].Frame.Name != "workspace" || d.PeakSites[0].Bytes != 3*MiB || d.PeakSites[0].Count != 1 ||
		d.PeakSites[1].Frame.Name != "act" || d.PeakSites[1].Bytes != 1*MiB {
		t.Errorf("at the peak: %d bytes from the trace, sites %+v; want 4 MiB: workspace 3 MiB, act 1 MiB", d.PeakTraceBytes, d.PeakSites)
	}
}

// TestPeakAtTheEndOrStart: a trace that only grows has its peak at its
// end, which is not reported as a peak; one that only frees had its peak
// before its first entry: the trace's start, all of it older than the
// trace.
func TestPeakAtTheEndOrStart(t *testing.T) {
	grows := analyzeEvents(t, []string{"a"}, []ev{
		{"alloc", 0x1000, 1 * MiB, 0, 0},
		{"alloc", 0x2000, 1 * MiB, 0, 0},
	})
	if d := grows.Devices[0]; d.PeakActiveBytes != 0 || d.PeakSites != nil {
		t.Errorf("a trace that only grows: peak %d, sites %+v; want none", d.PeakActiveBytes, d.PeakSites)
	}
	frees := analyzeEvents(t, []string{"a"}, []ev{
		{"free_completed", 0x1000, 1 * MiB, 0, -1},
	})
	if d := frees.Devices[0]; d.PeakActiveBytes != 1*MiB || d.PeakSeq != -1 || d.PeakTraceBytes != 0 || len(d.PeakSites) != 0 {
		t.Errorf("a trace that only frees: peak %d at entry %d, %d from the trace, sites %+v; want 1 MiB at the start (-1), none from the trace",
			d.PeakActiveBytes, d.PeakSeq, d.PeakTraceBytes, d.PeakSites)
	}
}
