package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A series whose GPU the input names by neither index nor UUID (an
// nvidia-smi -q -x excerpt cut after its uuid line) is named so; it read
// "GPU :" (the session-43 regression tester's find). One with a UUID
// keeps it.
func TestTrendSubjectOfAnUnnamedGPU(t *testing.T) {
	if got := trendSubject(trend.SeriesTrend{}); got != "a GPU named by neither index nor UUID" {
		t.Errorf("unnamed: %q", got)
	}
	if got := trendSubject(trend.SeriesTrend{UUID: "GPU-1234abcd-0000"}); got == "a GPU named by neither index nor UUID" {
		t.Errorf("with a UUID: %q", got)
	}
}

// The oom gate adds up the OOMs allocators counted beyond those described
// over devices (num_ooms is a device's counter): 2 on device 0 and 2 on
// device 1 are 4; a set printed twice on one device counts once (its
// largest); sets that name no device may be one process's or several's,
// so their largest is "at least" what they say (the session-43 regression
// tester found two ranks' 2 and 2 counted as 2, without "at least").
func TestOOMGateAddsDevicesCounts(t *testing.T) {
	dev := func(d int) *int { return &d }
	gs, err := ParseGates([]string{"oom"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sets []AllocatorStats
		want string
	}{
		{"two devices", []AllocatorStats{{Line: 1, Device: dev(0), UndescribedOOMs: 2}, {Line: 9, Device: dev(1), UndescribedOOMs: 2}}, "4 out-of-memory errors more"},
		{"one device twice", []AllocatorStats{{Line: 1, Device: dev(0), UndescribedOOMs: 1}, {Line: 9, Device: dev(0), UndescribedOOMs: 2}}, "2 out-of-memory errors more"},
		{"no device", []AllocatorStats{{Line: 1, UndescribedOOMs: 2}, {Line: 9, UndescribedOOMs: 2}}, "at least 2 out-of-memory errors more"},
	} {
		res := Evaluate(gs, GateInput{Inputs: []Input{{Path: "log", AllocatorStats: c.sets}}})
		if len(res) != 1 || !res[0].Tripped || !strings.HasPrefix(res[0].Why, c.want) {
			t.Errorf("%s: %+v, want %q", c.name, res, c.want)
		}
	}
}
