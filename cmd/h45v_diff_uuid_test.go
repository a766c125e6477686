package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A diff across a DCGM exporter restart (testdata/README.md,
// h45v_dcgm_before_restart.txt and h45v_dcgm_after_restart.txt): the same
// two GPUs (UUIDs GPU-0aa4... and GPU-1aa4...), GPU 0 growing 60 MiB a
// scrape from 12000 MiB and GPU 1 flat at 8000 MiB in both runs, under a
// new Hostname label (the exporter's pod name) and a new container name.
// Each series is paired by its GPU's UUID with BASE's: 2 entries, both
// same, each with a note. Was 2 new and 2 fixed. With the UUIDs of NEW
// changed (other GPUs) nothing is paired: 2 new, 2 fixed.
func TestDiffPairsDCGMSeriesByUUID(t *testing.T) {
	base, cur := td+"nvml/h45v_dcgm_before_restart.txt", td+"nvml/h45v_dcgm_after_restart.txt"
	statuses := func(base, cur string) (map[string]int, []string) {
		t.Helper()
		code, out, errs := run(t, nil, "diff", "--format", "json", base, cur)
		if code != 0 {
			t.Fatalf("exit %d: %.200q", code, errs)
		}
		var d struct {
			Entries []struct {
				Status, Note string
			} `json:"entries"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		n, notes := map[string]int{}, []string(nil)
		for _, e := range d.Entries {
			n[e.Status]++
			notes = append(notes, e.Note)
		}
		return n, notes
	}
	n, notes := statuses(base, cur)
	if n["same"] != 2 || len(notes) != 2 {
		t.Fatalf("statuses %v, want 2 same", n)
	}
	for _, note := range notes {
		if !strings.Contains(note, "paired by its GPU's UUID: BASE named it GPU ") {
			t.Errorf("note %.200q", note)
		}
	}
	b, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other_gpus.txt")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(string(b), "aa494b9-", "bb594b9-")), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, _ := statuses(base, other); n["new"] != 2 || n["fixed"] != 2 {
		t.Errorf("other GPUs: statuses %v, want 2 new, 2 fixed", n)
	}
}
