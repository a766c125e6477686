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
