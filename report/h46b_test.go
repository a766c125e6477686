package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

// A step within one of IBytes' display bins: 20500 to 20990 MiB (20.02
// and 20.50 GiB), which IBytes prints "20 GiB" both. Before, the finding
// read "growth from 20 GiB to 20 GiB"; a release the other way read "a
// release from 20 GiB to 20 GiB". Now the ends get the decimals that tell
// them apart (sizes.Of, one decimal: 20.0 and 20.5 GiB), and the size at
// the end the same decimals ("20.5 GiB at the end", not "20 GiB"); two
// steps read from the first's start to the last's end likewise. A step
// IBytes already tells apart (2 GiB to 5.0 GiB) is printed as before.
func TestH46bStepEndsDiffer(t *testing.T) {
	const m = 1 << 20
	step := func(from, to int64) trend.ChangePoint {
		return trend.ChangePoint{StartUs: 1_700_000_000_000_000, EndUs: 1_700_000_010_000_000, FromBytes: from * m, ToBytes: to * m}
	}
	for _, tc := range []struct {
		changes []trend.ChangePoint
		last    int64
		want    []string
	}{
		{[]trend.ChangePoint{step(20500, 20990)}, 20990, []string{"growth from 20.0 GiB to 20.5 GiB in", "; 20.5 GiB at the end"}},
		{[]trend.ChangePoint{step(20990, 20500)}, 20500, []string{"a release from 20.5 GiB to 20.0 GiB in", "; 20.0 GiB at the end"}},
		{[]trend.ChangePoint{step(20500, 20700), step(20700, 20990)}, 20990, []string{"growth from 20.0 GiB to 20.5 GiB in 2 steps", "; 20.5 GiB at the end"}},
		{[]trend.ChangePoint{step(2048, 5120)}, 5120, []string{"growth from 2.0 GiB to 5.0 GiB in", "; 5.0 GiB at the end"}},
	} {
		s := trend.SeriesTrend{Class: trend.Step, GPU: 0, HasGPU: true, Samples: 200,
			StartUs: 1_699_999_000_000_000, EndUs: 1_700_001_000_000_000,
			FirstBytes: tc.changes[0].FromBytes, LastBytes: tc.last * m, ChangePoints: tc.changes}
		msg := trendMessage(s, logClock{clock: "absolute"})
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
	}
}
