package report

import "testing"

// TestDailyLeakCardCounts: the leaks card counts its sites in words that
// agree with the number ("1 at 1 site", "3 at 2 sites"), as the tester
// found "1 at 1 sites".
func TestDailyLeakCardCounts(t *testing.T) {
	for _, c := range []struct {
		leaks, sites int
		want         string
	}{{1, 1, "1 at 1 site"}, {3, 2, "3 at 2 sites"}} {
		d := &Daily{}
		d.Summary.Leaks, d.Summary.LeakSites = c.leaks, c.sites
		v := newDailyView(d)
		got := ""
		for _, cd := range v.Cards {
			if cd.Label == "leaks" {
				got = cd.Value
			}
		}
		if got != c.want {
			t.Errorf("leaks card = %q, want %q", got, c.want)
		}
	}
}
