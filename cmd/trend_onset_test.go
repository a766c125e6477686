package cmd

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
)

// The tester's NVML logs (testdata/README.md, "NVML trend logs with a
// known answer"), through the command line: each verdict against the
// answer worked out from the generator's values.
func TestTrendKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		file, class string
		// rate in MiB/min (0: not checked); toOOM in minutes (0: none expected)
		rate, toOOM float64
		want        []string
		not         []string
	}{
		// Flat at 30000 MiB, then +450 MiB per 3-min sample over the last 12
		// samples (150 MiB/min), up to 34948 MiB of 81920: (81920 - 34948) /
		// 150 = 313 min.
		{file: "hunt_late_leak_last10pct.csv", class: "growing", rate: 150, toOOM: 313, not: []string{"then flat"}},
		// Flat, then +120 MiB per 3-min sample over the last 60 (40 MiB/min),
		// to 37078 MiB: (81920 - 37078) / 40 = 1121 min, fitted from 03:00.
		{file: "hunt_late_leak_last50pct.csv", class: "growing", rate: 40, toOOM: 1121, want: []string{"from 03:00:00 UTC"}},
		// +100 MiB every minute, 6 samples: growing, 100 MiB/min; 6 samples
		// give no time to OOM (8 needed).
		{file: "hunt_short_monotonic_100MiBpermin.csv", class: "growing", rate: 100, not: []string{"no growth"}},
		// An eval spike of 6 GiB every 20 min on a floor that rises 50 MiB a
		// cycle, 11 of 11 times: 2.5 MiB/min.
		{file: "hunt_sawtooth_floor_50MiB_per_cycle.csv", class: "growing", rate: 2.5, want: []string{"floor that rises"}},
		// The tester's correct cases stay so: a warm-up step then flat, a
		// sawtooth on a steady floor, a restart at the same level.
		{file: "hunt_warmup_flat.csv", class: "step", want: []string{"then flat"}},
		{file: "hunt_eval_sawtooth.csv", class: "sawtooth", want: []string{"not a leak"}},
		{file: "hunt_restart.csv", class: "sawtooth", want: []string{"none grew"}},
	} {
		code, out, errOut := runIO(t, "", false, "trend", "--format", "json", nvmlData+c.file)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.file, code, errOut)
		}
		f := decodeTrend(t, out).Findings[0]
		if f.Classification != c.class {
			t.Errorf("%s: %s, want %s: %s", c.file, f.Classification, c.class, f.Message)
			continue
		}
		if c.rate > 0 && (f.Slope == nil || math.Abs(*f.Slope*60/mib-c.rate) > 0.05*c.rate) {
			t.Errorf("%s: slope %v B/s, want %.1f MiB/min", c.file, f.Slope, c.rate)
		}
		var oom *float64
		json.Unmarshal(f.TimeToOOM, &oom)
		switch {
		case c.toOOM == 0 && oom != nil:
			t.Errorf("%s: time to OOM %.0f s, want none", c.file, *oom)
		case c.toOOM > 0 && (oom == nil || math.Abs(*oom/60-c.toOOM) > 0.02*c.toOOM):
			t.Errorf("%s: time to OOM %v s (%s), want %.0f min", c.file, oom, f.TimeToOOMReason, c.toOOM)
		}
		for _, w := range c.want {
			if !strings.Contains(f.Message, w) {
				t.Errorf("%s: message %q lacks %q", c.file, f.Message, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(f.Message, w) {
				t.Errorf("%s: message %q says %q", c.file, f.Message, w)
			}
		}
	}
}

// DCGM scrapes without times, 5 min apart in truth (FB_USED 12000 MiB +60
// a scrape, FB_FREE 10515 at first: 22515 MiB in all): placed 30 s apart
// by default, the verdict is per scrape, (22515 - 12660) / 60 = 164
// scrapes to OOM, and the minutes only as conditional on the assumed 30 s;
// with --interval 5m it is 12 MiB/min and 164 x 5 min = 13.7 h.
func TestTrendAssumedInterval(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "trend", nvmlData+"hunt_dcgm_no_times_5min.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"60 MiB per scrape", "164 scrapes", "only if they are 30 s apart", "+60 MiB/scrape", "30 s apart assumed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`iB/s\b`).MatchString(out) {
		t.Errorf("a rate per second from an assumed clock:\n%s", out)
	}
	code, out, errOut = runIO(t, "", false, "trend", "--interval", "5m", nvmlData+"hunt_dcgm_no_times_5min.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "12 MiB/min") || !strings.Contains(out, "13.7 h") || strings.Contains(out, "per scrape") {
		t.Errorf("--interval 5m:\n%s", out)
	}
}

// A "before" and an "after" --query-gpu of eight H200s
// (testdata/nvml/field/exp23_before_after_query_gpu.txt, cut from an
// experiment note: GPUs 2, 4, 5 and 6 released, 105851 -> 0, 106091 ->
// 244, 105851 -> 4 and 106139 -> 292 MiB; the others unchanged). Two
// samples: the release is between them and nothing follows it, so the
// verdict is a step up to the last samples, never "then flat" (was "step:
// GPU 2: a release, then flat", a flat part no sample shows); the
// unchanged GPUs are flat.
func TestTrendTwoSamplesStepAtEnd(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", nvmlData+"field/exp23_before_after_query_gpu.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	released := map[int]bool{2: true, 4: true, 5: true, 6: true}
	fs := decodeTrend(t, out).Findings
	if len(fs) != 8 {
		t.Fatalf("%d findings, want the 8 GPUs", len(fs))
	}
	for _, f := range fs {
		if f.GPU == nil {
			t.Fatalf("finding without a GPU: %s", f.Message)
		}
		switch {
		case released[*f.GPU]:
			if f.Classification != "step" || !strings.Contains(f.Message, "a release from") ||
				!strings.Contains(f.Message, "too few after the change") || strings.Contains(f.Message, "then flat") {
				t.Errorf("GPU %d: %s: %s; want a release at the last samples, no flat part", *f.GPU, f.Classification, f.Message)
			}
		case f.Classification != "flat":
			t.Errorf("GPU %d: %s, want flat: %s", *f.GPU, f.Classification, f.Message)
		}
	}
}
