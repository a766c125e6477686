package cmd

import (
	"os"
	"strings"
	"testing"
)

// gpuleak diff - NEW reads standard input as any side of a diff: a JSON
// report piped from gpuleak analyze (which it refused as "gpuleak's own
// output, not an input: give it to gpuleak diff", from gpuleak diff), and
// still a snapshot to analyse, whose bytes the look for a report read
// first. Both give the diff the files give.
func TestDiffStdinReportOrInput(t *testing.T) {
	const clean, leak = "../testdata/pytorch/clean_train_loop.pickle", "../testdata/pytorch/leak_train_loop.pickle"
	code, want, errOut := run(t, nil, "diff", clean, leak)
	if code != 0 {
		t.Fatalf("files: exit %d: %s", code, errOut)
	}
	// The clean run holds 2 sites the leaking one holds too; the leak is new.
	if !strings.Contains(want, "1 new, 0 grown, 0 shrunk, 0 fixed, 2 same") {
		t.Fatalf("files: %s", want)
	}
	lastLine := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		return l[len(l)-1]
	}

	code, rep, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", clean)
	if code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, errOut)
	}
	snap, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	for name, stdin := range map[string][]byte{"report": []byte(rep), "snapshot": snap} {
		code, got, errOut := run(t, stdin, "diff", "-", leak)
		if code != 0 {
			t.Errorf("%s on stdin: exit %d: %s", name, code, errOut)
			continue
		}
		if lastLine(got) != lastLine(want) {
			t.Errorf("%s on stdin: %q, want %q", name, lastLine(got), lastLine(want))
		}
	}
}

// A mistyped command gets cobra's suggestion as a line of its own: it was
// printed inside the error line with its newlines escaped
// ("...\n\nDid you mean this?\n\tanalyze\n").
func TestUnknownCommandSuggestion(t *testing.T) {
	code, out, errOut := run(t, nil, "analyse", "x.pickle")
	if code != ExitInput || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	want := "gpuleak: unknown command \"analyse\" for \"gpuleak\"\nDid you mean this? analyze\nRun 'gpuleak --help' for the commands.\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

// A flag that acts only beside another says so when given alone: a CI
// line with --tolerance but no --baseline, or --source-root without
// --format sarif, believed it did something. The run is otherwise
// unchanged.
func TestFlagsThatNeedAnother(t *testing.T) {
	snap := "../testdata/pytorch/clean_train_loop.pickle"
	code, _, errOut := run(t, nil, "analyze", "--tolerance", "10%", "--source-root", "/work", snap)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"gpuleak: warning: --tolerance 10% does nothing without --baseline\n",
		"gpuleak: warning: --source-root does nothing with --format table",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %q", want, errOut)
		}
	}
	if _, _, errOut = run(t, nil, "analyze", "--format", "sarif", "--source-root", "/work", snap); strings.Contains(errOut, "warning") {
		t.Errorf("--source-root with sarif warned: %q", errOut)
	}
}
