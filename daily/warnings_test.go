package daily

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Each input's warnings reach the page, per input: the first
// report.DailyMaxInputWarnings of them, in the analysis' order, with the
// count of all; an input without warnings is not listed; the inputs are
// in path order whichever group finished first.
func TestInputWarningsPerInput(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"b/snap.pickle", "a/log.csv", "a/clean.pickle"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var many []string
	for i := range 9 {
		many = append(many, fmt.Sprintf("warning %d", i+1))
	}
	warns := map[string][]string{
		"snap.pickle":  many,
		"log.csv":      {"read in part: line 7 skipped"},
		"clean.pickle": nil,
	}
	analyze := func(_ context.Context, paths []string) (*Analysis, error) {
		r := &report.Report{}
		for _, p := range paths {
			r.Inputs = append(r.Inputs, report.Input{Path: p, Format: "pytorch-snapshot", Warnings: warns[filepath.Base(p)]})
		}
		return &Analysis{Report: r}, nil
	}
	d, err := Run(context.Background(), Options{Roots: []string{root}, Workers: 2}, analyze)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary.InputsWithWarnings != 2 || len(d.InputWarnings) != 2 {
		t.Fatalf("inputs with warnings %d, listed %+v; want 2", d.Summary.InputsWithWarnings, d.InputWarnings)
	}
	log, snap := d.InputWarnings[0], d.InputWarnings[1]
	if filepath.Base(log.Path) != "log.csv" || log.Job != "a" || len(log.Warnings) != 1 || log.WarningsTotal != 1 || log.Warnings[0] != warns["log.csv"][0] {
		t.Errorf("first listed: %+v; want a/log.csv with its one warning", log)
	}
	if filepath.Base(snap.Path) != "snap.pickle" || snap.WarningsTotal != 9 || len(snap.Warnings) != report.DailyMaxInputWarnings ||
		snap.Warnings[0] != "warning 1" || snap.Warnings[report.DailyMaxInputWarnings-1] != fmt.Sprintf("warning %d", report.DailyMaxInputWarnings) {
		t.Errorf("second listed: %+v; want b/snap.pickle, its first %d of 9 warnings", snap, report.DailyMaxInputWarnings)
	}
}
