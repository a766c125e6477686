package sanitizer

import (
	"strings"
	"testing"
)

// xmrig-nvidia#199 (testdata/README.md): "Before fix" (lines 3-4: LEAK
// SUMMARY 1006959488 bytes in 10 allocations, ERROR SUMMARY 10 errors)
// and "After fix" (lines 9-10: 0 bytes in 0 allocations, 0 errors), no
// banners. Two runs: run 1 leaked 1006959488 bytes (960 MiB) in 10
// allocations that no record shows, run 2 leaked nothing. Each run is
// judged on its own, so run 1's leak stays a finding (a log's runs may be
// different programs); the warning lists both runs, the clean one
// included. Before, one run held both summaries and run 2 was never
// named.
func TestH46fBeforeAfterRuns(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/xmrig199_before_after_summaries_fenced.txt", Options{})
	if len(res.Runs) != 2 || res.Runs[0].StartLine != 3 || res.Runs[1].StartLine != 9 ||
		res.Runs[1].SummaryBytes != 0 || !res.Runs[1].HasLeakSummary {
		t.Fatalf("runs %+v: want run 1 from line 3, run 2 from line 9 with a LEAK SUMMARY of 0 bytes", res.Runs)
	}
	if len(res.Sites) != 1 || res.Sites[0].Bytes != 1006959488 || res.Sites[0].Count != 10 ||
		!strings.Contains(res.Sites[0].Unknown, "LEAK SUMMARY of run 1 (from line 3, no banner)") {
		t.Errorf("sites %+v: want run 1's 1006959488 bytes in 10 allocations", res.Sites)
	}
	w := strings.Join(res.Warnings, "\n")
	for _, s := range []string{
		"the log holds 2 runs of the tool",
		"run 2 (from line 9, no banner): LEAK SUMMARY 0 bytes in 0 allocations, ERROR SUMMARY 0 errors",
		"Each run is judged on its own",
	} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}
	// Run 2 agrees with its records (none): nothing about it but the list.
	if strings.Contains(w, "run 2 (from line 9, no banner): LEAK SUMMARY says") {
		t.Errorf("run 2 said not to add up: %q", w)
	}
}

// runsNote says nothing of runs with banners that agree (all leaked, or
// none did): their existing per-run warnings say what needs saying.
func TestH46fRunsNoteQuiet(t *testing.T) {
	both := []Run{{Tool: "compute-sanitizer", Line: 1, StartLine: 1, HasLeakSummary: true, SummaryBytes: 8},
		{Tool: "compute-sanitizer", Line: 9, StartLine: 9, HasLeakSummary: true, SummaryBytes: 16}}
	if n := runsNote(both); n != "" {
		t.Errorf("note %q for two banner runs that both leaked", n)
	}
	both[1].SummaryBytes = 0
	if n := runsNote(both); !strings.Contains(n, "run 2 (line 9): LEAK SUMMARY 0 bytes in 0 allocations") {
		t.Errorf("note %q for a leaking and a clean run", n)
	}
}
