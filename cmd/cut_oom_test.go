package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// oomFindings runs analyze --format json on text given on standard input
// and returns the exit code and the oom findings' warnings of the input.
func oomFindings(t *testing.T, text string) (code, ooms int, warnings []string) {
	t.Helper()
	code, out, _ := run(t, []byte(text), "analyze", "--format", "json", "-")
	if code != ExitOK {
		return code, 0, nil
	}
	var doc struct {
		Inputs []struct {
			Warnings []string `json:"warnings"`
		} `json:"inputs"`
		Findings []struct {
			Kind string `json:"kind"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Findings {
		if f.Kind == "oom" {
			ooms++
		}
	}
	if len(doc.Inputs) > 0 {
		warnings = doc.Inputs[0].Warnings
	}
	return code, ooms, warnings
}

// A line of only "CUDA out of memory." (PyTorch's first sentence, the
// rest cut by a collector) is an OOM whose figures are missing, as
// "RuntimeError: CUDA out of memory." is, with the warning that nothing
// could be read from it; before, gpuleak oom labelled it an OOM message
// and reported no OOM, and analyze called it no format. Without the
// period, or with words before it, it is a title or a sentence: not one.
func TestOOMFirstSentenceOnly(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--format", "json", td+"pytorch/oom_first_sentence_only.log")
	if code != ExitOK || !strings.Contains(out, `"kind": "oom"`) || !strings.Contains(out, "nothing was read from it") {
		t.Errorf("oom_first_sentence_only.log: exit %d, stderr %q, report %s", code, errOut, out)
	}
	code, out, _ = run(t, nil, "oom", td+"pytorch/oom_first_sentence_only.log")
	if code != ExitOK || strings.Contains(out, "No out-of-memory error") || !strings.Contains(out, "OOM 1 of 1") {
		t.Errorf("gpuleak oom: exit %d, %s", code, out)
	}
	for _, c := range []struct {
		text string
		ooms int
	}{
		{"CUDA out of memory.\n", 1},
		{"  HIP out of memory.\n", 1},
		{"RuntimeError: CUDA out of memory.\n", 1},
		{"CUDA out of memory\n", 0},                        // a title
		{"training stopped with CUDA out of memory.\n", 0}, // a sentence
	} {
		code, n, ws := oomFindings(t, c.text)
		if c.ooms == 0 {
			if code != ExitInput {
				t.Errorf("%q: exit %d, want %d (no format)", c.text, code, ExitInput)
			}
			continue
		}
		if code != ExitOK || n != c.ooms || !strings.Contains(strings.Join(ws, "\n"), "nothing was read from it") {
			t.Errorf("%q: exit %d, %d OOMs, warnings %q; want %d OOM whose figures are missing", c.text, code, n, ws, c.ooms)
		}
	}
}

// A log shipper's truncation mark ("[truncated]", "...[truncated]",
// "<truncated N bytes>", "(truncated)") cuts an OOM message as an
// ellipsis does: the figures before it are read, the message is cut
// short there (not a message that does not parse, with nothing read),
// and it does not take the next line in.
func TestOOMShipperTruncationMark(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--format", "json", td+"pytorch/oom_shipper_truncated.log")
	if code != ExitOK || !strings.Contains(out, "where a truncation mark stands for the rest") || !strings.Contains(out, `"requested_bytes": 20971520`) {
		t.Errorf("oom_shipper_truncated.log: exit %d, stderr %q, report %s", code, errOut, out)
	}
	const head = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 10.2"
	for _, mark := range []string{"...", "[truncated]", "...[truncated]", "<truncated 2048 bytes>", "(truncated)", " [TRUNCATED]"} {
		code, n, ws := oomFindings(t, head+mark+"\n")
		w := strings.Join(ws, "\n")
		if code != ExitOK || n != 1 || !strings.Contains(w, "cut short") || !strings.Contains(w, "inside a size") || strings.Contains(w, "does not parse") {
			t.Errorf("%q: exit %d, %d OOMs, warnings %q; want one OOM cut short inside a size", mark, code, n, ws)
		}
	}
}
