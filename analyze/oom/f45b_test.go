package oom

import (
	"strings"
	"testing"
)

// Session 45, helper f45b (testdata/README.md, "OOM text fixes (session
// 45, f45b)"). The inputs are synthetic.

// "Used 15.75G of 15.75G hbm. Exceeded hbm capacity by 1.52M.": U and C
// round to the same figure, so U over C shows nothing, but the compiler
// states the shortfall (1.52M = 1.52*2^20 = 1593835.52, read to the
// byte as 1593836): capacity, with that figure as evidence. The old code
// read the excess and dropped it: no cause.
func TestF45bTPUExceededBy(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/synthetic_xla_tpu_hbm_exceeded_tiny.txt")
	if len(r.Causes) != 1 || r.Causes[0].Name != CauseCapacity {
		t.Fatalf("causes %v, want capacity", causeNames(r))
	}
	c := r.Causes[0]
	if c.Numbers["excess_bytes"] != 1593836 || !strings.Contains(c.Evidence, "Exceeded hbm capacity by") {
		t.Errorf("excess %d, evidence %.200q; want 1593836 and the compiler's figure named", c.Numbers["excess_bytes"], c.Evidence)
	}
}
