package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

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

// A growing GPU whose processes were logged beside it, one of them
// growing: the advice names that pid rather than asking for the
// processes' log that was given (the session-44 tester's pmon.txt +
// gpu40.csv). Without growing processes (GrowingPIDs nil) the advice to
// log them stays.
func TestHunt44gGPUAdviceNamesGrowingPID(t *testing.T) {
	s := trend.SeriesTrend{Class: trend.Growing, HasGPU: true, GPU: 0, Slope: 1 << 20, SlopeLow: 1 << 20, SlopeHigh: 1 << 20,
		StartUs: 1, EndUs: 600e6, WindowStartUs: 1, WindowEndUs: 600e6, LastBytes: 1 << 30, GrowingPIDs: []int64{1111}}
	msg := trendMessage(s, logClock{clock: "absolute"})
	if !strings.Contains(msg, "pid 1111") || strings.Contains(msg, "or pmon beside it") {
		t.Errorf("with a growing pid logged: %.200q", msg)
	}
	s.GrowingPIDs = nil
	if msg = trendMessage(s, logClock{clock: "absolute"}); !strings.Contains(msg, "or pmon beside it") {
		t.Errorf("with none logged: %.200q", msg)
	}
}
