package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// The session-44 tester: a baseline of a GPU that was a step (5000 MiB
// rising to 10800 MiB, then level), and a run where it grows (1000 to
// 3900 MiB, 100 MiB a minute, then back to 1000 MiB). `--fail-on
// 'new,grown>10%'`, which the README says fails on any change, passed
// (exit 0): its status was "shrunk", as the released run's peak (3.8 GiB)
// is below the step's 11 GiB, though the run's own note called it a leak
// suspect. A series that grows now and did not is grown, whatever its
// bytes: the gate trips, and gpuleak diff counts it grown.
func TestHunt44gNewlyGrowingSeriesTripsGrown(t *testing.T) {
	base, grew := td+"nvml/s43_t6_plateau.csv", td+"nvml/s43_grow_then_release.csv"
	b := filepath.Join(t.TempDir(), "b.json")
	if code, _, errs := run(t, nil, "analyze", "-q", "--write-baseline", b, base); code != 0 {
		t.Fatalf("--write-baseline: exit %d: %.200q", code, errs)
	}
	for _, gate := range []string{"new,grown>10%", "grown", "grown>1GiB"} {
		code, out, errs := run(t, nil, "analyze", "--baseline", b, "--fail-on", gate, grew)
		if code != 1 || !strings.Contains(errs, "grows in this run and did not in the baseline") {
			t.Errorf("--fail-on %s: exit %d, %.200q; want 1, tripped by the series that grows now", gate, code, out+errs)
		}
	}
	if _, out, _ := run(t, nil, "diff", base, grew); !strings.Contains(out, "0 new, 1 grown, 0 shrunk") {
		t.Errorf("diff: %.200q; want 1 grown", out)
	}
}
