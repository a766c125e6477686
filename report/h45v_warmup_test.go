package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A growing series whose window starts after a warm-up says so: the rise
// from its first sample (2 GiB) to the warm-up's end (29 GiB at 10:02:00
// UTC, 120 s after the first sample's 10:00:00) is not in the rate. Before, the message gave
// the window alone, and the 27 GiB before it went unexplained.
func TestTrendMessageWarmUp(t *testing.T) {
	s := growingGPU()
	s.FirstBytes, s.WarmUpToBytes = 2<<30, 29<<30
	s.WarmUpEndUs = s.StartUs + 120e6
	s.WindowStartUs = s.WarmUpEndUs
	_, fs := FromTrends([]TrendInput{{Path: "gpu.csv", Format: "nvidia-smi-query-gpu", Samples: 600, StartUs: 1, EndUs: 2, Clock: "absolute"}},
		&trend.Result{Series: []trend.SeriesTrend{s}})
	want := "after a warm-up that rose from 2.0 GiB to 29 GiB by 10:02:00 UTC (not in the rate)"
	if len(fs) != 1 || !strings.Contains(fs[0].Message, want) {
		t.Fatalf("%d findings, message %.200q, want %q", len(fs), fs[0].Message, want)
	}
	if f := fs[0]; f.WarmUpEndUs == nil || *f.WarmUpEndUs != s.StartUs+120e6 || f.WarmUpToBytes == nil || *f.WarmUpToBytes != 29<<30 {
		t.Errorf("warm_up_end_us %v, warm_up_to_bytes %v; want %d, %d", f.WarmUpEndUs, f.WarmUpToBytes, s.StartUs+120e6, int64(29<<30))
	}
}
