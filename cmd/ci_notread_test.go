package cmd

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// notReadInputs writes two inputs that cannot be read into a temporary
// directory: a memory timeline cut in half (a truncated upload) and an
// empty file (a failed redirect). It returns them after a snapshot that is
// read, as a CI job would pass its artifacts.
func notReadInputs(t *testing.T) (read, cut, empty string) {
	t.Helper()
	dir := t.TempDir()
	whole, err := os.ReadFile(td + "kineto/profile_keep_outputs_memory_timeline.json")
	if err != nil {
		t.Fatal(err)
	}
	cut = filepath.Join(dir, "timeline_cut.json")
	empty = filepath.Join(dir, "empty.json")
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return td + "pytorch/leak_train_loop.pickle", cut, empty
}

// JUnit: an input that could not be read is a test case with <error> (the
// test could not run), never a passing case; the suites count it in
// errors, not failures (no gate tripped on it). The snapshot's leak trips
// --fail-on leak: one failure in each suite. Exit 2: the unread inputs
// outrank the gate.
func TestJUnitInputsNotRead(t *testing.T) {
	read, cut, empty := notReadInputs(t)
	code, out, _ := run(t, nil, "analyze", "--format", "junit", "--fail-on", "leak", read, cut, empty)
	if code != ExitInput {
		t.Fatalf("exit %d, want %d", code, ExitInput)
	}
	type junitElem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Cases    []struct {
				Classname string     `xml:"classname,attr"`
				Name      string     `xml:"name,attr"`
				Failure   *junitElem `xml:"failure"`
				Error     *junitElem `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JUnit XML: %v\n%s", err, out)
	}
	// 1 gate + 3 inputs; failures: the gate and the snapshot it counted;
	// errors: the two inputs not read.
	if doc.Tests != 4 || doc.Failures != 2 || doc.Errors != 2 {
		t.Errorf("testsuites tests=%d failures=%d errors=%d, want 4, 2, 2\n%s", doc.Tests, doc.Failures, doc.Errors, out)
	}
	if len(doc.Suites) != 2 || doc.Suites[1].Name != "gpuleak inputs" {
		t.Fatalf("suites %+v, want gates then inputs", doc.Suites)
	}
	in := doc.Suites[1]
	if in.Tests != 3 || in.Failures != 1 || in.Errors != 2 {
		t.Errorf("inputs suite tests=%d failures=%d errors=%d, want 3, 1, 2", in.Tests, in.Failures, in.Errors)
	}
	for _, c := range in.Cases {
		switch c.Name {
		case read:
			if c.Classname != "gpuleak.inputs.pytorch-snapshot" || c.Failure == nil || c.Error != nil {
				t.Errorf("%s: classname %q failure %v error %v; want pytorch-snapshot, failing on the leak", c.Name, c.Classname, c.Failure, c.Error)
			}
		case cut, empty:
			if c.Classname != "gpuleak.inputs.not-read" || c.Failure != nil || c.Error == nil {
				t.Fatalf("%s: classname %q failure %v error %v; want not-read with an <error>", c.Name, c.Classname, c.Failure, c.Error)
			}
			// The message names the file and the byte offset (0 for the
			// empty file; the cut timeline breaks off near its end).
			if want := "NOT READ: " + c.Name + ": byte offset "; !strings.HasPrefix(c.Error.Message, want) || c.Error.Type != "not-read" || strings.TrimSpace(c.Error.Body) == "" {
				t.Errorf("%s: error %+v, want a message starting %q, type not-read, and a body", c.Name, c.Error, want)
			}
		default:
			t.Errorf("unexpected test case %q", c.Name)
		}
	}
}

// SARIF: a run with inputs not read says so in its invocation
// (executionSuccessful false, an error notification per input naming it
// and the byte offset) and still validates against the 2.1.0 schema; a
// run that read everything says executionSuccessful true, with no
// notifications.
func TestSARIFInputsNotRead(t *testing.T) {
	schema := sarifSchema(t)
	read, cut, empty := notReadInputs(t)
	type invocation struct {
		ExecutionSuccessful *bool `json:"executionSuccessful"`
		Notifications       []struct {
			Descriptor struct{ ID string }   `json:"descriptor"`
			Level      string                `json:"level"`
			Message    struct{ Text string } `json:"message"`
			Locations  []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string } `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"toolExecutionNotifications"`
	}
	sarif := func(want int, args ...string) invocation {
		t.Helper()
		code, out, _ := run(t, nil, append([]string{"analyze", "--format", "sarif"}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d", args, code, want)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Fatalf("%v: does not validate against SARIF 2.1.0: %v", args, err)
		}
		var d struct {
			Runs []struct {
				Invocations []invocation `json:"invocations"`
				Results     []json.RawMessage
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Runs) != 1 || len(d.Runs[0].Invocations) != 1 {
			t.Fatalf("%v: %d runs, want 1 with 1 invocation", args, len(d.Runs))
		}
		if len(d.Runs[0].Results) == 0 {
			t.Errorf("%v: no results; the snapshot's leak must still be reported", args)
		}
		return d.Runs[0].Invocations[0]
	}

	inv := sarif(ExitInput, read, cut, empty)
	if inv.ExecutionSuccessful == nil || *inv.ExecutionSuccessful {
		t.Errorf("executionSuccessful %v, want false", inv.ExecutionSuccessful)
	}
	if len(inv.Notifications) != 2 {
		t.Fatalf("%d notifications, want one per input not read (2)", len(inv.Notifications))
	}
	for i, path := range []string{cut, empty} {
		n := inv.Notifications[i]
		if n.Level != "error" || n.Descriptor.ID != "gpuleak/input-not-read" ||
			!strings.HasPrefix(n.Message.Text, "NOT READ: "+path+": byte offset ") {
			t.Errorf("notification %d: %+v, want an error naming %s and its byte offset", i, n, path)
		}
		if len(n.Locations) != 1 || !strings.HasSuffix(n.Locations[0].PhysicalLocation.ArtifactLocation.URI, filepath.Base(path)) {
			t.Errorf("notification %d: locations %+v, want the input %s", i, n.Locations, path)
		}
	}

	inv = sarif(ExitOK, read)
	if inv.ExecutionSuccessful == nil || !*inv.ExecutionSuccessful || len(inv.Notifications) != 0 {
		t.Errorf("all inputs read: %+v, want executionSuccessful true and no notifications", inv)
	}
	// An input read in part (a line skipped): a warning notification
	// naming it and the line, so that its results are not taken for the
	// whole log's (it had none; JSON, table, Markdown and JUnit said so).
	partial := td + "nvml/pynvml_cut_record_mid_log.jsonl"
	inv = sarif(ExitOK, read, partial)
	if inv.ExecutionSuccessful == nil || !*inv.ExecutionSuccessful || len(inv.Notifications) != 1 {
		t.Fatalf("an input read in part: %+v, want executionSuccessful true and one notification", inv)
	}
	if n := inv.Notifications[0]; n.Level != "warning" || n.Descriptor.ID != "gpuleak/input-read-in-part" ||
		!strings.HasPrefix(n.Message.Text, "READ IN PART: "+partial+": 1 line could not be read and was skipped (line 13)") ||
		len(n.Locations) != 1 || !strings.HasSuffix(n.Locations[0].PhysicalLocation.ArtifactLocation.URI, filepath.Base(partial)) {
		t.Errorf("notification %+v, want a warning naming %s and line 13", n, partial)
	}
}

// Markdown: the headline, the one line a PR reader sees, says how many
// inputs were not read, before the gates (exit 2 whatever they say).
func TestMarkdownHeadlineInputsNotRead(t *testing.T) {
	read, cut, empty := notReadInputs(t)
	code, out, _ := run(t, nil, "analyze", "--format", "markdown", "--fail-on", "leak", read, cut, empty)
	if code != ExitInput {
		t.Fatalf("exit %d, want %d", code, ExitInput)
	}
	head, _, _ := strings.Cut(out, "\n")
	if want := "### gpuleak: **2 of 3 inputs not read**; **failed**: 1 of 1 gates tripped;"; !strings.HasPrefix(head, want) {
		t.Errorf("headline %q, want it to start %q", head, want)
	}
	// All read: no such clause.
	_, out, _ = run(t, nil, "analyze", "--format", "markdown", read)
	if strings.Contains(out, "not read") {
		t.Errorf("all inputs read, yet the summary says %q", out)
	}
}

// --write-baseline with an input not read writes nothing: the committed
// baseline (here a stand-in holding "committed") is left byte for byte, the
// run exits 2, and standard error says why and how to write one without
// the input. The same command without the unread inputs writes it.
func TestWriteBaselineRefusesInputsNotRead(t *testing.T) {
	read, cut, empty := notReadInputs(t)
	base := filepath.Join(t.TempDir(), "base.json")
	committed := []byte(`"committed"`)
	if err := os.WriteFile(base, committed, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "analyze", "-q", "--write-baseline", base, read, cut, empty)
	if code != ExitInput {
		t.Errorf("exit %d, want %d", code, ExitInput)
	}
	if out != "" {
		t.Errorf("-q printed %q", out)
	}
	got, err := os.ReadFile(base)
	if err != nil || string(got) != string(committed) {
		t.Errorf("baseline now %q (%v), want it left as %q", got, err, committed)
	}
	want := "--write-baseline " + base + " not written (left as it was): 2 inputs were not read (" + cut + ", " + empty + ")"
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "leave it out of the command line") {
		t.Errorf("stderr %q, want it to contain %q and how to write one without them", errOut, want)
	}

	if code, _, errOut := run(t, nil, "analyze", "-q", "--write-baseline", base, read); code != ExitOK {
		t.Fatalf("all read: exit %d %q", code, errOut)
	}
	if got, _ := os.ReadFile(base); !strings.Contains(string(got), `"schema": "gpuleak.baseline/v1"`) {
		t.Errorf("all read: baseline %.80q, want one written", got)
	}
}
