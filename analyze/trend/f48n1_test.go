package trend

import (
	"testing"
)

// minimax_test_gpu_summary_cut_last.csv (testdata/README.md, a public
// repository's test fixture of nvidia-smi --query-gpu, its last row cut):
// GPU 0 reads 999, 100, 200 MiB. The old code estimated the noise from
// the two differences (-899, +100 MiB), whose deviation from their median
// is half of what tells them apart (σ ≈ 524 MiB), so the drop of 899 MiB
// lay within the noise and the series read "flat: 200 MiB for 2 s".
func TestF48n1ThreeSamplesWithAChangeAreNotFlat(t *testing.T) {
	for _, s := range trends(t, "minimax_test_gpu_summary_cut_last.csv") {
		if s.GPU != 0 {
			continue
		}
		if s.Samples != 3 || s.PeakBytes != 999*mib || s.LastBytes != 200*mib {
			t.Fatalf("%d samples, peak %d, last %d; want 3, 999 MiB, 200 MiB", s.Samples, s.PeakBytes, s.LastBytes)
		}
		if s.Class != Step || !s.StepAtEnd || len(s.ChangePoints) == 0 || s.ChangePoints[0].FromBytes != 999*mib {
			t.Errorf("%s (at end %v, changes %+v); want a step from 999 MiB, too near the end to tell where it stays",
				s.Class, s.StepAtEnd, s.ChangePoints)
		}
		return
	}
	t.Fatal("no series of GPU 0")
}

// One change among 3, 4 or 5 samples (a step, a one-sample spike) is a
// change whatever the count: with fewer than 5 differences the change
// moves half of them or more, and noise cannot be told from it.
func TestF48n1FewSamplesChangeIsNotFlat(t *testing.T) {
	for _, y := range [][]float64{
		{100, 5000, 5000}, {5000, 100, 100}, {100, 100, 5000}, {100, 5000, 100},
		{40000, 40000, 100}, {4, 38803, 39671},
		{100, 5000, 100, 100}, {100, 100, 5000, 100, 100},
	} {
		ts := make([]int64, len(y))
		for i := range y {
			ts[i] = int64(i) * 1_000_000
			y[i] *= mib
		}
		if f := fitSeries(ts, y); f.class == Flat {
			t.Errorf("%v MiB: flat; want a change", mibs(y))
		}
	}
	// Three samples within the flat band stay flat.
	if f := fitSeries([]int64{0, 1e6, 2e6}, []float64{1000 * mib, 1010 * mib, 1020 * mib}); f.class != Flat {
		t.Errorf("1000, 1010, 1020 MiB: %s; want flat", f.class)
	}
}

func mibs(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v / mib
	}
	return out
}

// cnnotes_dmon_TD_blank_line_fb_churn.txt (testdata/README.md): dmon -o TD,
// fb 239, 74, 7, 478, 67, 7 MiB at 1 s. From its 5 differences the noise
// read 103 MiB, the rises and falls within 4 times that, and the series
// "flat: 7.0 MiB for 5 s". Memory held twice and given back is churn.
func TestF48n1DmonChurnSixSamples(t *testing.T) {
	got := trends(t, "cnnotes_dmon_TD_blank_line_fb_churn.txt")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	if s := got[0]; s.Samples != 6 || s.PeakBytes != 478*mib || s.Class != Sawtooth {
		t.Errorf("%d samples, peak %d, %s; want 6, 478 MiB, sawtooth", s.Samples, s.PeakBytes, s.Class)
	}
}

// The reason a step down at the end gives no time to OOM names it down
// (the daily report's column showed minimax's 999 -> 200 MiB as "a step
// up to the last samples").
func TestF48n1StepDownReason(t *testing.T) {
	for _, s := range trends(t, "minimax_test_gpu_summary_cut_last.csv") {
		if s.GPU == 0 && s.NoOOMReason != "a step down to the last samples: too few after it for a trend" {
			t.Errorf("reason %q; want a step down", s.NoOOMReason)
		}
	}
}
