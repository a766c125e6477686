package report

import (
	"strings"
	"testing"
)

// oom>SIZE measures the OOMs' requests, not what was allocated at them
// (session 44, branch h44d). A 16 GiB request with 0 bytes allocated
// (ROCm/TheRock#1054) passed oom>1GiB, saying "with no allocated memory
// given"; a 512 MiB request with 10 GiB allocated tripped it. An OOM whose
// request is unknown trips plain oom and is named, not measured, by
// oom>1GiB.
func TestHunt44dOOMGateMeasuresRequests(t *testing.T) {
	unknown := findingsOf(KindOOM, 1, 0)
	unknown[0].OOMDetail = &OOMDetail{}
	for _, c := range []struct {
		gate    string
		fs      []Finding
		tripped bool
		want    string
	}{
		{"oom>1GiB", oomsOf(1, 16<<30, 0), true, "1 OOM requesting 16 GiB"},
		{"oom>1GiB", oomsOf(1, 512<<20, 10<<30), false, "1 OOM requesting 512 MiB"},
		// Two of 600 MiB: 1200 MiB asked for together, over 1 GiB.
		{"oom>1GiB", oomsOf(2, 600<<20, 0), true, "2 OOMs requesting 1.2 GiB"},
		{"oom", unknown, true, "1 OOM, of no known request"},
		{"oom>1GiB", unknown, false, "1 OOM, of no known request"},
		{"oom>1GiB", append(oomsOf(1, 2<<30, 0), unknown...), true, "2 OOMs requesting 2.0 GiB (2,147,483,648 bytes) (1 of them of no known request"},
	} {
		gs, err := ParseGates([]string{c.gate})
		if err != nil {
			t.Fatal(err)
		}
		res := Evaluate(gs, GateInput{Findings: c.fs})
		if len(res) != 1 || res[0].Tripped != c.tripped || !strings.HasPrefix(res[0].Why, c.want) || strings.Contains(res[0].Why, "allocated memory") {
			t.Errorf("--fail-on %s: %+v, want tripped %v and %q", c.gate, res, c.tripped, c.want)
		}
	}
}

// A finding with neither stack nor site is told apart in SARIF by its
// input (relative to --source-root), an OOM's request and form, and a
// fragmentation finding's "at": two fragmentation findings of GPU 0 from
// two inputs had one fingerprint ("fragmentation|dev0"). An input under
// two checkouts' roots keeps its fingerprint; a finding with a site keeps
// SiteKey's alone.
func TestHunt44dSitelessFingerprint(t *testing.T) {
	dev := 0
	frag := func(path string) *Finding {
		return &Finding{Kind: KindFragmentation, Path: path, Device: &dev, FragmentationDetail: &FragmentationDetail{At: "memory_summary"}}
	}
	fp := func(f *Finding, root string) string { return fingerprint(SiteKey(f) + siteless(f, root)) }
	if fp(frag("a/summary.txt"), "") == fp(frag("b/summary.txt"), "") {
		t.Error("two inputs' fragmentation findings: one fingerprint")
	}
	if fp(frag("/ci/1/logs/summary.txt"), "/ci/1/") != fp(frag("/ci/2/logs/summary.txt"), "/ci/2/") {
		t.Error("one input under two roots: two fingerprints")
	}
	sited := &Finding{Kind: KindOOM, Path: "x.log", Device: &dev, Site: Frame{Function: "forward", File: "model.py", Line: 3}}
	if siteless(sited, "") != "" {
		t.Errorf("an OOM with a site: %q added to its key", siteless(sited, ""))
	}
}
