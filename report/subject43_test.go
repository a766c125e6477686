package report

import (
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
