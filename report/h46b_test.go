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

// The SLOPE column of a trend table: one time unit for its rates, that of
// its fastest (rate's choice for it). Two GPUs growing 12 MiB/min (0.2
// MiB/s: rate's minutes) and 30 MiB/h (8738 B/s, under 1 MiB/min: rate's
// hours) read "+12 MiB/min" and "+30 MiB/h" before: a column whose
// figures do not compare at a glance. Now the slower reads in minutes too:
// 30 MiB/h is 0.5 MiB/min, which IBytes prints "512 KiB" ("+512
// KiB/min"). A table whose rates all fall in one unit is as before.
func TestH46bTrendTableOneRateUnit(t *testing.T) {
	finding := func(gpu int, bps float64) Finding {
		g, slope, r2 := gpu, bps, 0.99
		return Finding{Kind: KindTrend, Path: "gpu.csv", GPU: &g, Classification: string(trend.Growing),
			SlopeBytesPerS: &slope, R2: &r2, Samples: 100, Bytes: 1 << 30}
	}
	for _, tc := range []struct {
		slopes []float64
		want   []string
	}{
		{[]float64{12 << 20 / 60.0, 30 << 20 / 3600.0}, []string{"+12 MiB/min", "+512 KiB/min"}},
		{[]float64{20 << 20 / 3600.0, 40 << 20 / 3600.0}, []string{"+20 MiB/h", "+40 MiB/h"}},
	} {
		r := &Report{Inputs: []Input{{Path: "gpu.csv"}}}
		for i, s := range tc.slopes {
			r.Findings = append(r.Findings, finding(i, s))
		}
		var b strings.Builder
		if err := trendTable(&b, r, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("table lacks %q:\n%s", w, b.String())
			}
		}
		if tc.slopes[0] > 1<<20/60.0 && strings.Contains(b.String(), "/h") {
			t.Errorf("table mixes units:\n%s", b.String())
		}
	}
}

// replacedGPUs: of two GPU series at one key with other UUIDs, the one
// whose samples all end before the other's begin is a replaced GPU (left
// out of the baseline's sum); two that overlap in time (a MIG GPU's
// instances, which share the index) both count, as do a GPU series and a
// process's.
func TestH46bReplacedGPUs(t *testing.T) {
	at := func(v int64) *int64 { return &v }
	g := 0
	pid := int64(7)
	series := func(uuid string, from, to int64) Finding {
		return Finding{Kind: KindTrend, GPU: &g, GPUUUID: uuid, SeriesStartUs: at(from), SeriesEndUs: at(to), Bytes: 1 << 30}
	}
	fs := []Finding{series("GPU-a", 0, 100), series("GPU-b", 200, 300)}
	if got := replacedGPUs(fs, SiteKeys(fs)); !got[0] || got[1] {
		t.Errorf("swap: replaced %v, want only the first", got)
	}
	b := NewBaseline(fs, nil, nil)
	if len(b.Sites) != 1 || b.Sites[0].Bytes != 1<<30 || b.Sites[0].GPUUUID != "GPU-b" || len(b.Sites[0].ReplacedUUIDs) != 1 {
		t.Errorf("swap: baseline %+v, want one site of 1 GiB, GPU-b, GPU-a replaced", b.Sites)
	}
	fs = []Finding{series("GPU-a/1/0", 0, 200), series("GPU-a/2/0", 100, 300)}
	if got := replacedGPUs(fs, SiteKeys(fs)); len(got) != 0 {
		t.Errorf("overlapping: replaced %v, want none", got)
	}
	p := series("GPU-b", 200, 300)
	p.PID = &pid
	fs = []Finding{series("GPU-a", 0, 100), p}
	if got := replacedGPUs(fs, SiteKeys(fs)); len(got) != 0 {
		t.Errorf("GPU and process: replaced %v, want none", got)
	}
}
