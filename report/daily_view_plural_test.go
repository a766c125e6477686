package report

import "testing"

// TestDailyLeakCardCounts: the leaks card counts its sites in words that
// agree with the number ("1 leak at 1 site", "3 leaks at 2 sites"), as the
// tester found "1 at 1 sites"; no leak is "0 leaks", not "0 at 0 sites"
// (s39t). The count is the card's value and the sites are in its label, so
// that Markdown reads "**3** leaks at 2 sites" (it read "**3 at 2 sites**
// leaks", the session-43 tester's find).
func TestDailyLeakCardCounts(t *testing.T) {
	for _, c := range []struct {
		leaks, sites int
		label, value string
	}{{1, 1, "leak at 1 site", "1"}, {3, 2, "leaks at 2 sites", "3"}, {0, 0, "leaks", "0"}} {
		d := &Daily{}
		d.Summary.Leaks, d.Summary.LeakSites = c.leaks, c.sites
		v := newDailyView(d)
		found := false
		for _, cd := range v.Cards {
			if cd.Label == c.label && cd.Value == c.value {
				found = true
			}
		}
		if !found {
			t.Errorf("no card %q %q in %+v", c.value, c.label, v.Cards)
		}
	}
}

// TestDailyLeakSiteCounts: a leak site's line on the daily page counts
// in words that agree with the numbers, where it said "from 1 finding(s)
// in 1 job(s)" and "1 allocations" (s37: counts read in English).
func TestDailyLeakSiteCounts(t *testing.T) {
	for _, c := range []struct {
		count, findings, jobs int
		want                  string
	}{
		{1, 1, 1, "80 MiB in 1 allocation held at the end, from 1 finding in 1 job"},
		{40, 4, 2, "80 MiB in 40 allocations held at the end, from 4 findings in 2 jobs"},
		// A memory timeline's growing category: bytes, no allocations.
		{0, 1, 1, "80 MiB held at the end, from 1 finding in 1 job"},
	} {
		d := &Daily{LeakSites: []DailyLeakSite{{Bytes: 80 << 20, Count: c.count, Findings: c.findings, JobCount: c.jobs}}}
		v := newDailyView(d)
		if len(v.Leaks) != 1 || len(v.Leaks[0].Lines) == 0 || v.Leaks[0].Lines[0] != c.want {
			t.Errorf("leak site lines %+v, want the first %q", v.Leaks, c.want)
		}
	}
}

// TestDailyCardLabelsAgree: a card's label agrees with its count, as the
// Markdown page prints it ("- **1** jobs" was the tester's s40 find).
func TestDailyCardLabelsAgree(t *testing.T) {
	d := &Daily{}
	d.Summary = DailySummary{Jobs: 1, Hosts: 1, GPUs: 1, Leaks: 1, LeakSites: 1, OOMs: 1, Growing: 1}
	want := map[string]string{"job": "1", "host": "1", "GPU sampled by NVML": "1", "leak at 1 site": "1", "OOM": "1", "growing GPU or process": "1"}
	got := map[string]string{}
	for _, c := range newDailyView(d).Cards {
		got[c.Label] = c.Value
	}
	for l, v := range want {
		if got[l] != v {
			t.Errorf("card %q = %q, want %q (cards %v)", l, got[l], v, got)
		}
	}
	d.Summary = DailySummary{Jobs: 2, Hosts: 3, GPUs: 0, OOMs: 2}
	got = map[string]string{}
	for _, c := range newDailyView(d).Cards {
		got[c.Label] = c.Value
	}
	for l, v := range map[string]string{"jobs": "2", "hosts": "3", "GPUs sampled by NVML": "0", "OOMs": "2", "leaks": "0"} {
		if got[l] != v {
			t.Errorf("card %q = %q, want %q (cards %v)", l, got[l], v, got)
		}
	}
}
