package report

import "testing"

// A slope's 95% interval and least-squares slope are read against the
// slope: in its units. 0.99 MiB/s is 59.4 MiB/min, which rate renders
// "59 MiB/min" beside a slope of 1.0 MiB/s; before session 44 the
// interval read "60 MiB/min to 1.0 MiB/s" (the session-44 tester's
// leak_no_spikes.csv). In the slope's MiB/s it is 0.99 → "1.0 MiB/s".
func TestHunt44gRateLikeSharesUnits(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		bps, like float64
		want      string
	}{
		{0.99 * mib, 1.0 * mib, "1.0 MiB/s"},
		{0.5 * mib, 1.0 * mib, "0.5 MiB/s"},
		{59 * mib / 60.0, 60 * mib / 60.0, "1.0 MiB/s"}, // 60 MiB/min is 1 MiB/s: per second
		{2 * mib / 60.0, 2.1 * mib / 60.0, "2.0 MiB/min"},
		{30 * mib / 3600.0, 40 * mib / 3600.0, "30 MiB/h"},
	} {
		if got := rateLike(c.bps, c.like); got != c.want {
			t.Errorf("rateLike(%.0f, %.0f) = %q, want %q", c.bps, c.like, got, c.want)
		}
	}
}
