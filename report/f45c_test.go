package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A flat GPU (10 GiB for 2 h) with one sample kept as the GPU full
// (trend.SeriesTrend.FullSamples: f45c_flat_one_full_mid.csv's 80598 of
// 81920 MiB at 10:58:20, 98%) names it: its time, its bytes of the
// capacity, and that one sample cannot tell an OOM's mark from a
// misreading; JSON carries full_samples and its time and bytes. Before,
// the message read "flat: ...: no growth" and nothing else, JSON nothing.
func TestF45cFullSampleInMessage(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMicro()
	at := time.Date(2026, 12, 1, 10, 58, 20, 0, time.UTC).UnixMicro()
	s := trend.SeriesTrend{Class: trend.Flat, HasGPU: true, GPU: 0, Samples: 1500,
		StartUs: start, EndUs: start + 7495e6, WindowStartUs: start, WindowEndUs: start + 7495e6,
		LastBytes: 10000 << 20, PeakBytes: 80598 << 20, CapacityBytes: 81920 << 20,
		FullSamples: 1, FullSampleAt: []trend.Sample{{Us: at, Bytes: 80598 << 20}}}
	f := trendFinding(s, logClock{clock: "absolute"})
	for _, want := range []string{"flat: ", "at 10:58:20 UTC", "79 GiB of 80 GiB (98%)", "one sample cannot tell"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %.400q", want, f.Message)
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"full_samples":1,"full_sample_at":[{"us":1796122700000000,"bytes":84513128448}]`; !strings.Contains(string(b), want) {
		t.Errorf("JSON lacks %s", want)
	}
}
