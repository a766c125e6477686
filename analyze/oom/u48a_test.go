package oom

import (
	"os"
	"strings"
	"testing"
)

// Session 48, u48a (testdata/README.md, "OOM text logs: printers of CUDA
// checks, ... (session 48, u48a)").

// A client that raises the error string another process sent it, made
// as Python prints it (synthetic): the worker's traceback as the
// exception's text ("RuntimeError: Traceback (most recent call last):"
// and its frames) is the worker's, not called from the client's frames
// (it was: predict (worker.py:50) < call_server (client.py:8) < <module>
// (client.py:12)); and a client line that builds the exception from the
// value received ("raise RuntimeError(resp[\"error\"])") is not where the
// allocation failed (it was the site: call_server (client.py:8)).
func TestU48aReraisedElsewhere(t *testing.T) {
	r := hunt44eOOM(t, "pytorch/pastes/synthetic_reraise_embedded_traceback.txt")
	if r.Frame.Name != "predict" || !strings.HasSuffix(r.Frame.Filename, "worker.py") {
		t.Errorf("embedded: site %+v, want predict (worker.py:50)", r.Frame)
	}
	for _, f := range r.Stack {
		if strings.HasSuffix(f.Filename, "client.py") {
			t.Errorf("embedded: stack %v holds the client's frames", r.Stack)
		}
	}
	r = hunt44eOOM(t, "pytorch/pastes/synthetic_reraise_value_client.txt")
	if r.Frame.Filename != "" || len(r.Stack) != 0 {
		t.Errorf("value: site %+v stack %v, want none", r.Frame, r.Stack)
	}
	if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, "call_server (client.py:8), raises a new exception built from a value") {
		t.Errorf("value: notes %q, want the raise line named", r.Notes)
	}
	if r.RequestedBytes != 2<<30 {
		t.Errorf("value: request %d, want 2 GiB (the words are still read)", r.RequestedBytes)
	}
}

// A message printed again after another OOM, with no line counting
// progress after that other one, is not shown to be a new failure: the
// progress before the other OOM shows the run went on after the first,
// which the other failure explains; a summary or an echo of the first
// failure prints it the same way (synthetic, as a training loop that
// skips a batch on OOM and a wrapper's summary print them: A on line 2, B
// uncaught on line 9, A again in the summary on line 10). It was three
// OOMs; two, with a note. With progress after B (a third failure logged
// after the run went on again) it stays three.
func TestU48aEchoAfterOtherOOM(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/synthetic_summary_echo_after_other_oom.txt")
	if err != nil {
		t.Fatal(err)
	}
	pm := NewPostmortem([]Input{textInput(t, "echo.txt", string(b))}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs, want 2 (A, B; A's summary is A)", len(pm.OOMs))
	}
	if notes := strings.Join(pm.OOMs[0].Notes, " "); !strings.Contains(notes, "echo.txt:10 prints this message again") || !strings.Contains(notes, "counted once") {
		t.Errorf("notes %q, want line 10 read as A printed again, counted once", pm.OOMs[0].Notes)
	}
	lines := strings.Split(string(b), "\n")
	text := strings.Join(lines[:8], "\n") + "\nWARNING:root:skipping batch 21: " + strings.TrimPrefix(lines[8], "RuntimeError: ") + "\nEpoch 1:  30%|███       | 30/100 [00:30<01:10,  1.00it/s]\n" + strings.Replace(lines[9], "Run summary: first error was: ", "WARNING:root:skipping batch 31: ", 1) + "\n"
	pm = NewPostmortem([]Input{textInput(t, "again.txt", text)}, PostmortemOptions{})
	if len(pm.OOMs) != 3 {
		t.Errorf("progress after the other OOM: %d OOMs, want 3", len(pm.OOMs))
	}
}
