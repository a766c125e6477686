package trend

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/nvml/h46b_ramp_final_jump_3.csv and h46b_ramp_late_jump_30.csv
// (synthetic, testdata/README.md): 720 samples 10 s apart of an A100-40GB
// (40960 MiB) rising from 10240 MiB by 2 MiB a sample (12 MiB/min, ±4 MiB
// of noise) for 2 h, the last 3 (or 30) samples 8192 MiB higher. Before,
// the 3-sample one was "step ... from 11 GiB to 19 GiB in 15.0 s": the 2 h
// of growth lost; the 30-sample one "growing ... from 11:55:00", fitted
// to the 5 min after the jump alone, with no time to OOM.
//
// Now both are growing at the ramp's 12 MiB/min (within 5%), fitted from
// the first sample to the last before the jump (sample 717 or 690: at
// 11:59:20 or 11:54:50), the jump named from the last sample before it to
// the first after it, with 3 or 30 samples from it to the end. The time
// to OOM is measured from the level after the jump: at the end the line
// stands at 10240 + 2·719 = 11678 MiB, plus the jump's 8192: 19870 MiB,
// so 40960 - 19870 = 21090 MiB of headroom at 12 MiB/min, 1757 min (29.3
// h), within 5%.
func TestH46bRampThenFinalJump(t *testing.T) {
	for _, tc := range []struct {
		file  string
		after int
	}{{"h46b_ramp_final_jump_3.csv", 3}, {"h46b_ramp_late_jump_30.csv", 30}} {
		got := trends(t, tc.file)
		if len(got) != 1 {
			t.Fatalf("%s: %d series, want 1", tc.file, len(got))
		}
		s := got[0]
		at := func(i int) int64 { return s.StartUs + int64(i)*10e6 }
		last := 720 - tc.after - 1 // the last sample before the jump
		if s.Class != Growing || !within(s.Slope*60, 12*mib, 0.05) {
			t.Errorf("%s: %s at %.2f MiB/min, want growing at 12", tc.file, s.Class, s.Slope*60/mib)
		}
		if s.WindowStartUs != s.StartUs || s.WindowEndUs != at(last) {
			t.Errorf("%s: window samples %d to %d, want 0 to %d", tc.file,
				(s.WindowStartUs-s.StartUs)/10e6, (s.WindowEndUs-s.StartUs)/10e6, last)
		}
		j := s.EndJump
		if j == nil || j.StartUs != at(last) || j.EndUs != at(last+1) || s.EndJumpSamples != tc.after {
			t.Fatalf("%s: end jump %+v with %d samples after, want from sample %d to %d with %d after", tc.file, j, s.EndJumpSamples, last, last+1, tc.after)
		}
		if d := float64(j.ToBytes-j.FromBytes) / mib; math.Abs(d-8192) > 20 {
			t.Errorf("%s: jump of %.0f MiB, want 8192 (± the noise)", tc.file, d)
		}
		if o := s.TimeToOOM; o == nil || !within(o.Seconds/3600, 1757.0/60, 0.05) {
			t.Errorf("%s: time to OOM %+v (%s), want about 29.3 h", tc.file, o, s.NoOOMReason)
		}
	}
}

// testdata/nvml/h46b_restart_then_end_spike.csv (synthetic,
// testdata/README.md): 400 samples 10 s apart rising from 2000 MiB by 5
// MiB a sample (30 MiB/min), 5 samples at 3 MiB (the process restarted),
// 300 samples rising again from 2000 MiB at 30 MiB/min, and the log ends
// 20 samples into a jump of 6000 MiB. Before, the last run's onset fit
// started at the jump: "growing ... from 11:57:30" over its 20 samples
// (3 min, no time to OOM). Now the last run is growing at 30 MiB/min
// (within 5%) from its first sample (405, 11:07:30) to the last before
// the jump (704), the jump named with 20 samples after it; the run did
// not come back to the baseline (ReleasedUs 0).
func TestH46bRestartThenEndSpike(t *testing.T) {
	got := trends(t, "h46b_restart_then_end_spike.csv")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	s := got[0]
	at := func(i int) int64 { return s.StartUs + int64(i)*10e6 }
	if s.Class != Growing || !within(s.Slope*60, 30*mib, 0.05) || s.ReleasedUs != 0 {
		t.Fatalf("%s at %.2f MiB/min (released %d), want growing at 30 to the end", s.Class, s.Slope*60/mib, s.ReleasedUs)
	}
	if s.WindowStartUs != at(405) || s.WindowEndUs != at(704) {
		t.Errorf("window samples %d to %d, want 405 to 704", (s.WindowStartUs-s.StartUs)/10e6, (s.WindowEndUs-s.StartUs)/10e6)
	}
	if j := s.EndJump; j == nil || j.EndUs != at(705) || s.EndJumpSamples != 20 {
		t.Errorf("end jump %+v with %d samples after, want at sample 705 with 20", j, s.EndJumpSamples)
	}
}

// A DCGM exporter whose Hostname is its own pod, restarted before every
// scrape of a long log: 1000 scrapes of one GPU (one UUID), each under
// another host name (exporter-0000 to exporter-0999). Before, the warning
// listed all 1000 names (some 20 KB in one line). Now it names the first
// five (the first host and maxHostsNamed renames), how many more between,
// and the last, with the count of all: 1000 hosts, 5 named + 994 + the
// last.
func TestH46bHostsWarningCapped(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-4c226d4d-8129-a7cf-fecd-daa9018b4b48\",modelName=\"Tesla T4\",Hostname=\"exporter-%04d\"} 2000 %d\n",
			i, 1764835200000+int64(i)*30000)
	}
	path := filepath.Join(t.TempDir(), "restarts.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a := NewAnalyzer(Options{})
	readNVML(t, a, path)
	res := a.Finalize()
	if len(res.Series) != 1 {
		t.Fatalf("%d series, want 1", len(res.Series))
	}
	var got []string
	for _, ws := range res.InputWarnings {
		for _, w := range ws {
			if strings.Contains(w, "hosts in turn") {
				got = append(got, w)
			}
		}
	}
	want := "its rows name 1000 hosts in turn (exporter-0000, exporter-0001, exporter-0002, exporter-0003, exporter-0004, then 994 more, the last exporter-0999)"
	if len(got) != 1 || !strings.Contains(got[0], want) || len(got[0]) > 600 {
		t.Errorf("warnings %.700q, want one with %q, under 600 bytes", got, want)
	}
}
