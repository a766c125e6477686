package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A log without times (dmon without -o DT) placed with --start has times,
// not offsets from the epoch: its line gives them, its JSON input says
// start_given, and its warning no longer asks for the --start it was
// given. Without --start the warning asks for it by the command that
// takes it (analyze has no --start: only gpuleak trend places such logs).
func TestRowOrderLogWithStart(t *testing.T) {
	const log = nvmlData + "dmon_mu.txt" // 64 rows, no times
	code, out, stderr := runIO(t, "", false, "trend", "--start", "2026-11-30 09:08:02", "--interval", "5s", log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 64 samples 5 s apart: the last is 63 x 5 s = 315 s after the first.
	if want := "64 samples from 2026-11-30 09:08:02 to 09:13:17 UTC (5 min; no times in the log: placed by row order from --start)"; !strings.Contains(out, want) {
		t.Errorf("input line: want %q in\n%s", want, out)
	}

	code, out, stderr = runIO(t, "", false, "trend", "--format", "json", "--start", "2026-11-30 09:08:02", "--interval", "5s", log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Inputs []struct {
			StartUs    int64    `json:"start_us"`
			Clock      string   `json:"clock"`
			StartGiven bool     `json:"start_given"`
			Warnings   []string `json:"warnings"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Inputs) != 1 {
		t.Fatalf("bad JSON (%v): %s", err, out)
	}
	in := doc.Inputs[0]
	start := time.Date(2026, 11, 30, 9, 8, 2, 0, time.UTC).UnixMicro()
	if in.Clock != "row-order" || !in.StartGiven || in.StartUs != start {
		t.Errorf("input: clock %q start_given %v start_us %d, want row-order true %d", in.Clock, in.StartGiven, in.StartUs, start)
	}
	for _, w := range in.Warnings {
		if strings.Contains(w, "--start") {
			t.Errorf("warning asks for --start, which was given: %s", w)
		}
	}

	// Without --start: times are relative, and the warning names the
	// command that takes the flag, whichever command read the log.
	code, out, stderr = runIO(t, "", false, "analyze", "--format", "json", log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc.Inputs = nil
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Inputs) != 1 {
		t.Fatalf("bad JSON (%v): %s", err, out)
	}
	in = doc.Inputs[0]
	if in.StartGiven || in.StartUs != 0 {
		t.Errorf("without --start: start_given %v start_us %d, want false 0", in.StartGiven, in.StartUs)
	}
	if w := strings.Join(in.Warnings, "\n"); !strings.Contains(w, "with gpuleak trend --start") {
		t.Errorf("warning does not say which command takes --start:\n%s", w)
	}
}

// trend --fail-on writes its gates into the JSON report, as analyze
// --fail-on does (README: "With --fail-on, gates lists every gate"), so
// that a CI job reading trend.json sees what tripped and what passed.
func TestTrendFailOnGatesInJSON(t *testing.T) {
	// The capture's GPU and its one process both grow at 128 MiB/s
	// (README, Live capture); no series is flat.
	code, out, stderr := runIO(t, "", false, "trend", "--format", "json", "--fail-on", "growing", "--fail-on", "flat", nvmlData+"capture_h200_100ms.jsonl")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, stderr)
	}
	var doc struct {
		Gates []struct {
			Gate    string `json:"gate"`
			Tripped bool   `json:"tripped"`
			Why     string `json:"why"`
		} `json:"gates"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Gates) != 2 || doc.Gates[0].Gate != "growing" || !doc.Gates[0].Tripped || doc.Gates[1].Gate != "flat" || doc.Gates[1].Tripped {
		t.Fatalf("gates: %+v", doc.Gates)
	}
	if !strings.Contains(doc.Gates[0].Why, "2 growing NVML series") || !strings.Contains(stderr, "--fail-on growing tripped: 2 growing NVML series") {
		t.Errorf("why %q; stderr %q", doc.Gates[0].Why, stderr)
	}
	if strings.Contains(stderr, "flat tripped") {
		t.Errorf("flat tripped: %s", stderr)
	}
}
