package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Session 44, branch h44d (testdata/README.md, "CI gates and sniffing
// from the session-44 tester").

// A training log whose first line is a tqdm bar with commas
// (jzhang38/EasyContext#11: DeepSpeed warnings behind the bars) was taken
// for nvidia-smi CSV without a header: --fail-on oom exited 2 and JUnit
// listed it NOT READ. A log without an OOM passes with a warning, as the
// README says; so does a Python logging log ("date,ms - INFO - a, b, c"),
// which was read as --query-gpu samples and failed on its field count.
// Rows of numbers still get the header-less CSV hint (exit 2).
func TestHunt44dLogWithCommasIsALog(t *testing.T) {
	for _, path := range []string{td + "logs/easycontext11_tqdm_deepspeed.txt", td + "logs/python_logging_commas.log"} {
		code, out, errOut := run(t, nil, "analyze", "--format", "junit", "--fail-on", "oom", path)
		if code != 0 || strings.Contains(out, "NOT READ") || !strings.Contains(errOut+out, "read as a log of a run without an OOM") {
			t.Errorf("%s --fail-on oom: exit %d, output %.200q; want 0, a log without an OOM", path, code, errOut+out)
		}
	}
	rows := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(rows, []byte("0, 1024, 81920\n1, 2048, 81920\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, nil, "analyze", "--fail-on", "oom", rows); code != 2 || !strings.Contains(errOut, "--fields") {
		t.Errorf("header-less rows: exit %d, stderr %.200q; want 2 and the --fields hint", code, errOut)
	}
}
