package trend

import (
	"testing"
	"time"
)

// The session-45 tester's logs (testdata/README.md, synthetic): an 80 GiB
// (81920 MiB) GPU sampled every 5 s, flat at 10 GiB (±3 MiB) or 20 GiB for
// 1500 samples with one sample, the 701st at 10:58:20, reading 80598 MiB
// (98% of it) or 81920 MiB (used == total); and 302 samples at 10 GiB
// whose last-but-one, 10:25:00, reads 80500 MiB. 9bac750 keeps such a
// sample in the fit as a possible out-of-memory crash's mark, but said
// nothing of it: the flat logs read "flat: no growth" beside a peak of
// 79 GiB. The series now counts it in FullSamples, with its time and
// bytes as read; the flat logs stay flat (one sample makes no growth).
// Session 46 (h46b): so does the 302-sample one, which was a "sawtooth ...
// in 1 run" (one sample, not binned away as in the 1500-sample logs): one
// reading classes no series (see TestReview45bFullSampleIsNoGlitch).
func TestF45cFullSampleNamed(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		file  string
		class Class
		at    time.Duration
		mib   int64
	}{
		{"f45c_flat_one_full_mid.csv", Flat, 10*time.Hour + 58*time.Minute + 20*time.Second, 80598},
		{"f45c_one_row_used_eq_total.csv", Flat, 10*time.Hour + 58*time.Minute + 20*time.Second, 81920},
		{"f45c_one_full_last_but_one.csv", Flat, 10*time.Hour + 25*time.Minute, 80500},
	} {
		got := trends(t, c.file)
		if len(got) != 1 {
			t.Fatalf("%s: %d series, want 1", c.file, len(got))
		}
		s := got[0]
		if c.class != "" && s.Class != c.class {
			t.Errorf("%s: %s, want %s", c.file, s.Class, c.class)
		}
		want := Sample{Us: day.Add(c.at).UnixMicro(), Bytes: c.mib << 20}
		if s.FullSamples != 1 || len(s.FullSampleAt) != 1 || s.FullSampleAt[0] != want || s.SetAside != 0 {
			t.Errorf("%s: %d full samples %v, %d set aside; want 1 at %v", c.file, s.FullSamples, s.FullSampleAt, s.SetAside, want)
		}
	}
}
