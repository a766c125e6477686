package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A sawtooth whose one run is one sample (f45c_one_full_last_but_one.csv:
// 80500 MiB at 10:25:00, the last-but-one sample, 10 GiB either side)
// says that sample's time once, not as a span "10:25:00 UTC to 10:25:00
// UTC" with a trend ("undetermined") of one sample.
func TestF45cOneSampleRunSaidOnce(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMicro()
	at := time.Date(2026, 12, 1, 10, 25, 0, 0, time.UTC).UnixMicro()
	s := trend.SeriesTrend{Class: trend.Sawtooth, HasGPU: true, GPU: 0, Samples: 302,
		StartUs: start, EndUs: at + 5e6, WindowStartUs: start, WindowEndUs: at + 5e6,
		LastBytes: 10 << 30, PeakBytes: 80500 << 20, CapacityBytes: 81920 << 20, BaselineBytes: 10 << 30,
		Runs: []trend.Run{{StartUs: at, EndUs: at, Samples: 1, FirstBytes: 80500 << 20, PeakBytes: 80500 << 20,
			LastBytes: 80500 << 20, Class: trend.Undetermined, ReleasedUs: at + 5e6}},
		FullSamples: 1, FullSampleAt: []trend.Sample{{Us: at, Bytes: 80500 << 20}}}
	f := trendFinding(s, logClock{clock: "absolute"})
	if n := strings.Count(f.Message, "10:25:00 UTC"); n != 1 || strings.Contains(f.Message, "undetermined") || !strings.Contains(f.Message, "(98%)") {
		t.Errorf("10:25:00 UTC said %d times (want once, with 98%%, no undetermined): %.400q", n, f.Message)
	}
}
