package cmd_test

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/cmd"
)

// --top cuts the list a report shows, never what the run is judged on: the
// gates see every finding, and so must JUnit's input cases and Markdown's
// totals. Both fixtures hold a leak (../shared/fixtures/README.md:
// leak_train_loop 80 MiB in 40 blocks, model_reload at least 768 MiB), so
// --fail-on leak trips on both inputs; --top 1 keeps only model_reload's,
// the larger. Before, the JUnit case of leak_train_loop passed and the
// Markdown summary counted one leak of 768 MiB, saying the cut finding was
// "in the details" where it was not.
func TestTopCutsTheListNotTheVerdict(t *testing.T) {
	leak, reload := "../testdata/pytorch/leak_train_loop.pickle", "../testdata/pytorch/model_reload.pickle"

	code, out, errOut := run(t, "", "analyze", "--format", "junit", "--top", "1", "--fail-on", "leak", leak, reload)
	if code != 1 {
		t.Fatalf("junit: exit %d, stderr %q; want 1 (the leak gate trips)", code, errOut)
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Name == leak || c.Name == reload {
				seen++
				if c.Failure == nil {
					t.Errorf("junit: input %s passed; its leak tripped --fail-on leak", c.Name)
				}
			}
		}
	}
	if seen != 2 {
		t.Errorf("junit: %d input cases, want 2:\n%s", seen, out)
	}

	code, out, errOut = run(t, "", "analyze", "--format", "markdown", "--top", "1", "--fail-on", "leak", leak, reload)
	if code != 1 {
		t.Fatalf("markdown: exit %d, stderr %q", code, errOut)
	}
	first, _, _ := strings.Cut(out, "\n")
	// 80 MiB + 768 MiB = 848 MiB.
	if !strings.Contains(first, "2 leaks (848 MiB)") {
		t.Errorf("markdown summary %q: want the run's totals, 2 leaks (848 MiB)", first)
	}
	if strings.Contains(out, "in the details") || !strings.Contains(out, "left out by --top (--top 0 lists them)") {
		t.Errorf("markdown: the finding --top cut is not in the details; want it said so:\n%s", out)
	}
}

// A gate on an NVML class names what it counted in words: "series" is its
// own plural (it read "5 step NVML seriess"). query_apps.csv: pid 538
// climbs to 4.8 GiB and stays flat, a step (../shared/fixtures/README.md).
func TestGateNamesSeries(t *testing.T) {
	code, out, errOut := run(t, "", "analyze", "-q", "--fail-on", "step", "../testdata/nvml/query_apps.csv")
	if code != 1 || !strings.Contains(out, "step NVML series holding ") || strings.Contains(out, "seriess") {
		t.Errorf("exit %d, stdout %q, stderr %q: want 1 and the step series named", code, out, errOut)
	}
}

// Every command says its exit codes in --help, as the README's table
// does: each of 0, 2 (bad usage, at least) and 3 (an internal error, at
// least) after "Exit codes:". The commands are the root's, so a command
// added later is held to it too. trend (with its --fail-on) and oom did
// not say theirs, nor did watch and capture (s37).
func TestHelpNamesExitCodes(t *testing.T) {
	root := cmd.NewCmdRoot(&cmd.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, "test")
	if len(root.Commands()) < 8 {
		t.Fatalf("%d commands, want analyze, trend, oom, capture, watch, diff, report, export at least", len(root.Commands()))
	}
	for _, c := range root.Commands() {
		code, out, _ := run(t, "", c.Name(), "--help")
		_, codes, ok := strings.Cut(strings.Join(strings.Fields(out), " "), "Exit codes: ")
		if code != 0 || !ok || !strings.HasPrefix(codes, "0 ") || !strings.Contains(codes, "; 2 ") || !strings.Contains(codes, "; 3 ") {
			t.Errorf("gpuleak %s --help: exit %d, no \"Exit codes: 0 ...; 2 ...; 3 ...\" in\n%s", c.Name(), code, out)
		}
	}
}
