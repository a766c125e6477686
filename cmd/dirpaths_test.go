package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory where a file is expected is named as one, with what to give
// instead: an input (analyze, oom, diff), --baseline, --write-baseline and
// report's -o. An output FILE that is a directory used to fail in the
// rename, naming the temporary file ("rename /tmp/.gpuleak-1.tmp DIR:
// file exists"), and report's only after walking every root.
func TestDirectoryWhereAFileIsExpected(t *testing.T) {
	dir := t.TempDir()
	snap := "../testdata/pytorch/clean_train_loop.pickle"

	for _, args := range [][]string{{"analyze", dir}, {"oom", dir}, {"diff", dir, snap}} {
		code, _, errOut := runIO(t, "", false, args...)
		if code != ExitInput || !strings.Contains(errOut, dir+": is a directory: give the files in it") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}

	code, _, errOut := runIO(t, "", false, "analyze", "--baseline", dir, snap)
	if code != ExitInput || !strings.Contains(errOut, dir+": is a directory: --baseline takes a file") {
		t.Errorf("--baseline DIR: exit %d, stderr %q", code, errOut)
	}

	code, _, errOut = runIO(t, "", false, "analyze", "--write-baseline", dir, snap)
	if code != ExitInternal || !strings.Contains(errOut, "--write-baseline: writing "+dir+": is a directory") || strings.Contains(errOut, ".tmp") {
		t.Errorf("--write-baseline DIR: exit %d, stderr %q", code, errOut)
	}

	// The root does not exist: had report walked it first, it would
	// have failed on the root (exit 2), not on -o (exit 3).
	code, _, errOut = runIO(t, "", false, "report", filepath.Join(dir, "no-such-root"), "--format", "md", "-o", dir)
	if code != ExitInternal || !strings.Contains(errOut, "writing "+dir+": is a directory") {
		t.Errorf("report -o DIR: exit %d, stderr %q", code, errOut)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("left in %s: %v (%v)", dir, ents, err)
	}
}

// report --baseline names the file first, as every input error does (it
// said "open FILE: ..."), and a directory as one.
func TestReportBaselineErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "yesterday.json")
	code, _, errOut := runIO(t, "", false, "report", "../testdata/nvml/pmon.txt", "--baseline", missing, "--format", "md", "-o", "-")
	if code != ExitInput || !strings.Contains(errOut, "gpuleak: "+missing+": no such file") {
		t.Errorf("missing baseline: exit %d, %q", code, errOut)
	}
	code, _, errOut = runIO(t, "", false, "report", "../testdata/nvml/pmon.txt", "--baseline", dir, "--format", "md", "-o", "-")
	if code != ExitInput || !strings.Contains(errOut, dir+": is a directory: --baseline takes") {
		t.Errorf("directory baseline: exit %d, %q", code, errOut)
	}
}
