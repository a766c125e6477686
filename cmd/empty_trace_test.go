package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A profiler output of no event is read and judges nothing (h43b): a
// trace whose traceEvents is [] (the profiler stopped before its first
// step), the .raw.json of export_memory_timeline_raw with no event of the
// device ([], its empty list of events) and the .json of one ([[], []]).
// analyze exits 0 and its warning says nothing can be judged; a gate is
// not judged on it (exit 2, as a leak gate over a snapshot without a
// trace is); oom lists it among the inputs that cannot show an OOM.
// Before, the trace was refused (exit 2, "holds no events", no gate
// result), [] was an unrecognised input, and on [[], []] --fail-on
// retained and --fail-on oom passed (exit 0).
func TestEmptyTraceJudgesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, doc string }{
		{"trace.json", `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320}], "traceEvents": []}`},
		{"alone.pt.trace.json", `{"traceEvents": []}`},
		{"mem.raw.json", "[]\n"},
		{"mem.json", `[[], []]`},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, nil, "analyze", p)
		if code != ExitOK || !strings.Contains(out, "holds no events") || !strings.Contains(out, "nothing can be judged from it") {
			t.Errorf("%s: analyze exit %d, stdout %.200q, stderr %.200q", c.name, code, out, errOut)
		}
		for _, gate := range []string{"leak", "retained", "oom"} {
			code, _, errOut = run(t, nil, "analyze", "--fail-on", gate, p)
			if code != ExitInput || !strings.Contains(errOut, "--fail-on "+gate+" could not be judged: no input given could judge") {
				t.Errorf("%s: --fail-on %s exit %d, stderr %.200q; want 2, not judged", c.name, gate, code, errOut)
			}
		}
		code, out, _ = run(t, nil, "oom", p)
		if code != ExitOK || !strings.Contains(out, "No out-of-memory error can be told from these inputs") {
			t.Errorf("%s: oom exit %d, stdout %.200q", c.name, code, out)
		}
	}
	// Beside an input that judges, the gate is judged on that one and
	// names the empty one: leak_train_loop.pickle's leak trips it.
	p := filepath.Join(dir, "trace.json")
	code, _, errOut := run(t, nil, "analyze", "--fail-on", "leak", td+"pytorch/leak_train_loop.pickle", p)
	if code != ExitFindings || !strings.Contains(errOut, "judged on 1 input only, not on "+p+": the trace holds no events") {
		t.Errorf("with a snapshot: exit %d, stderr %.200q", code, errOut)
	}
}
