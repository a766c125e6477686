package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// The session-43 tester's logs through the command line: a leak that ran
// the GPU out of memory and restarted 4 times (4 runs of 10240 to 40000
// MiB of 40960 at 24 MiB/s, each falling to 0 MiB: restarted 3 times in
// the log), and a leak of 2 MiB/min under 20 MiB spikes, both let through
// `--fail-on growing` before session 43 (exit 0: "sawtooth ... allocation
// churn, not a leak", "flat ... no growth"). Now both trip the gate
// (ExitFindings), the crash loop saying its evidence: the runs, their
// rate, the peak against the total, and that memory fell to 0 B.
func TestHunt43GateTrips(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"s43_n09_leak_oom_restart_cycles.csv", []string{"growing, restarted 3 times", "4 runs rose steadily (24 MiB/s)",
			"of 40 GiB, 98%", "fell to 0 B", "crash loop", "not allocation churn", "the samples cannot tell an OOM"}},
		{"s43_n11_leak_with_20MiB_transients.csv", []string{"growing: ", "grows 2.0 MiB/min"}},
	} {
		code, out, errOut := runIO(t, "", false, "analyze", "--fail-on", "growing", nvmlData+c.file)
		if code != ExitFindings {
			t.Errorf("%s: exit %d, want %d (the gate): %.200q", c.file, code, ExitFindings, out+errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q: %.200q", c.file, w, out)
			}
		}
	}
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", nvmlData+"s43_n09_leak_oom_restart_cycles.csv")
	if code != ExitOK {
		t.Fatalf("exit %d: %.200q", code, errOut)
	}
	var r struct {
		Findings []struct {
			Classification string `json:"classification"`
			OOMExits       int    `json:"oom_exits"`
			Runs           []struct {
				OOMExit bool `json:"oom_exit"`
			} `json:"runs"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 {
		t.Fatalf("%v, %d findings", err, len(r.Findings))
	}
	f := r.Findings[0]
	if f.Classification != "growing" || f.OOMExits != 4 || len(f.Runs) != 4 || !f.Runs[0].OOMExit {
		t.Errorf("%s, %d OOM exits, %d runs; want growing, 4 of 4", f.Classification, f.OOMExits, len(f.Runs))
	}
}
