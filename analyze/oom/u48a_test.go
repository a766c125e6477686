package oom

import (
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
