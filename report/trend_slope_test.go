package report

import "testing"

// TestTrendSlopeOnlyForGrowing: the trend table and the daily report show a
// series' slope only when it is growing. The reviewer of the daily report
// saw pid 469 of ../shared/fixtures/nvml (a step from 32 MiB to 1.5 GiB in
// 9 s, then flat) with "+197 GiB/h" beside "step": a least-squares line
// through a step, which reads as growth.
func TestTrendSlopeOnlyForGrowing(t *testing.T) {
	s := 1.5 * (1 << 30) / 9.0 // the step's bytes over its seconds
	for _, c := range []struct {
		class string
		slope *float64
		want  bool
	}{
		{"growing", &s, true},
		{"step", &s, false},
		{"sawtooth", &s, false},
		{"flat", &s, false},
		{"growing", nil, false},
	} {
		f := &Finding{Classification: c.class, SlopeBytesPerS: c.slope}
		got, ok := trendSlope(f)
		if ok != c.want || (ok && got != s) {
			t.Errorf("%s (slope given: %v): trendSlope = %v, %v; want shown: %v", c.class, c.slope != nil, got, ok, c.want)
		}
	}
}
