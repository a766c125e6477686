package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// TestLeakGateStepsTooFew: torch.profiler's schedule(wait=1, warmup=1,
// active=3) records 3 ProfilerStep#N spans, too few to judge growth
// (testdata/README.md, kineto/hm_*). A run that kept 1 MiB a step shows it
// as retained only: --fail-on leak could not have tripped on it, so it is
// not judged (exit 2, the file and its 3 steps named), not passed. With a
// trace of 8 steps of the same leak beside it, the gate trips (exit 1:
// one input shows the leak); beside the clean 8-step run it still cannot
// pass (exit 2). The 8-step traces alone are judged: 1 and 0.
func TestLeakGateStepsTooFew(t *testing.T) {
	k := td + "kineto/"
	for _, c := range []struct {
		paths    []string
		code     int
		unjudged bool
	}{
		{[]string{k + "hm_train_s3_act.trace.json.gz"}, 2, true},
		{[]string{k + "hm_train_s3_clean.trace.json.gz"}, 2, true},
		{[]string{k + "hm_train_s3_act.trace.json.gz", k + "hm_train_s8_act.trace.json.gz"}, 1, false},
		{[]string{k + "hm_train_s3_act.trace.json.gz", k + "hm_train_s8_clean.trace.json.gz"}, 2, true},
		{[]string{k + "hm_train_s8_act.trace.json.gz"}, 1, false},
		{[]string{k + "hm_train_s8_clean.trace.json.gz"}, 0, false},
	} {
		args := append([]string{"analyze", "--format", "json", "--fail-on", "leak"}, c.paths...)
		code, out, errOut := run(t, nil, args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.paths, code, c.code, errOut)
			continue
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		g := r.Gates[0]
		if g.Unjudged != c.unjudged {
			t.Errorf("%v: gate %+v; want unjudged %v", c.paths, g, c.unjudged)
		}
		if c.unjudged && (!strings.Contains(errOut, "hm_train_s3_") || !strings.Contains(errOut, "3 steps") || !strings.Contains(g.Why, "3 steps")) {
			t.Errorf("%v: stderr %q, why %q; want the 3-step trace named", c.paths, errOut, g.Why)
		}
	}
}
