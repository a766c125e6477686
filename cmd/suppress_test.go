package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// One suppressions file for every source: a snapshot's findings and a
// compute-sanitizer log's, by kind, frame, min-bytes and expiry; what is
// left out is counted in the report, an expired rule applies no more.
func TestSuppressionsEverySource(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gpuleak.supp")
	rules := `# the cuBLAS workspace of leak_train_loop (fixtures README: 32 MiB + 1 MiB, retained)
kind=retained file=leak_train_loop\.py$ reason="cuBLAS workspace" expires=2999-12-31
# leaky's 4 MiB workspace; min-bytes one byte over it would keep it
kind=leak function=^make_workspace min-bytes=4MiB name=workspace
kind=leak function=^step min-bytes=1310721 name=step-too-small
# expired: the 80 MiB leak is reported again
kind=leak function=^forward$ expires=2000-01-01 name=old
`
	if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	r := analyzeReport(t, "--suppressions", file, td+"pytorch/leak_train_loop.pickle", td+"sanitizer/leak_full.txt")
	got := map[string]report.SuppressedFindings{}
	for _, s := range r.Suppressed {
		got[s.Rule] = s
	}
	if s := got[file+":2"]; s.Findings != 1 || s.Bytes != 33<<20 || s.Reason != "cuBLAS workspace" {
		t.Errorf("retained rule: %+v", s)
	}
	if s := got["workspace"]; s.Findings != 1 || s.Bytes != 4194304 {
		t.Errorf("workspace rule: %+v", s)
	}
	if _, ok := got["step-too-small"]; ok {
		t.Error("a rule whose min-bytes is one byte over the site left it out")
	}
	if s := got["old"]; !s.Expired || s.Findings != 0 {
		t.Errorf("expired rule: %+v", s)
	}
	for _, f := range r.Findings {
		if f.Site.Function == "make_workspace" || (f.Kind == report.KindRetained && len(f.Stack) > 0) {
			t.Errorf("finding %s at %s not suppressed", f.Kind, f.Site)
		}
	}
	leaks := 0
	for _, f := range r.Findings {
		if f.Kind == report.KindLeak {
			leaks++
		}
	}
	// forward (expired rule) + step, pinned and async main of leaky.
	if leaks != 4 {
		t.Errorf("%d leaks left, want 4", leaks)
	}
	// Errors name the line.
	for text, want := range map[string]string{
		"kind=leak expires=31/12/2027\n": ":1: bad expires",
		"\nkind=leek\n":                  ":2: unknown kind",
		"min-bytes=lots\n":               ":1: bad min-bytes",
		"reason=\"only a reason\"\n":     ":1: a rule needs at least one",
		"kind=leak colour=red\n":         ":1: unknown key",
	} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := run(t, nil, "analyze", "--suppressions", file, td+"pytorch/clean_train_loop.pickle")
		if code != ExitInput || !strings.Contains(errOut, file+want) {
			t.Errorf("%q: exit %d, %q, want %q", text, code, errOut, want)
		}
	}
}
