package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A GPU whose samples stop 10 min before the end of its log (rows of
// [GPU is lost] after an Xid 79: t45b_gpu_lost_xid79.csv) is not "now" at
// its last reading: the finding gives that reading as the last sample's,
// says when the samples stop and where the log ends, and JSON says
// stopped_before_end. Before, the message read "now 8.2 GiB" with no word
// of the 10 min after.
func TestHunt45bGPUStoppedBeforeEndMessage(t *testing.T) {
	last := time.Date(2026, 9, 14, 1, 8, 45, 0, time.UTC).UnixMicro()
	end := last + 600e6
	s := trend.SeriesTrend{Class: trend.Growing, HasGPU: true, GPU: 0, Slope: 1 << 20, SlopeLow: 1 << 20, SlopeHigh: 1 << 20,
		StartUs: last - 2370e6, EndUs: last, WindowStartUs: last - 2370e6, WindowEndUs: last, LastBytes: 8365 << 20,
		LogEndUs: end, StoppedBeforeEnd: true, NoOOMReason: "the GPU's samples stop before the end of the log"}
	f := trendFinding(s, logClock{clock: "absolute"})
	for _, want := range []string{"8.2 GiB at its last sample", "its samples stop at 01:08:45 UTC, 10 min before the end of the log (01:18:45 UTC)"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %.300q", want, f.Message)
		}
	}
	if strings.Contains(f.Message, "now 8.2 GiB") || !f.StoppedBeforeEnd {
		t.Errorf("stopped_before_end %v, message %.200q", f.StoppedBeforeEnd, f.Message)
	}
	s.StoppedBeforeEnd, s.LogEndUs, s.NoOOMReason = false, last, "the trend fits poorly"
	if f = trendFinding(s, logClock{clock: "absolute"}); !strings.Contains(f.Message, "now 8.2 GiB") || strings.Contains(f.Message, "samples stop") {
		t.Errorf("sampled to the end: %.200q", f.Message)
	}
}
