package cmd

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An archive of a job's artifacts is named as one, with what to do: a
// .tar.gz of an OOM log and a pmon log was read as one text, reported the
// OOM alone and dropped the pmon log without a word (exit 0). gpuleak
// report lists such a file as skipped with the same reason.
func TestArchiveIsNamed(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"oom_error.txt": mustRead(t, td+"pytorch/oom_error.txt"),
		"pmon.txt":      mustRead(t, nvmlData+"pmon.txt"),
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, name := range []string{"oom_error.txt", "pmon.txt"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name]))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[name])
	}
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tb.Bytes())
	zw.Close()
	var zb bytes.Buffer
	zipw := zip.NewWriter(&zb)
	w, _ := zipw.Create("oom_error.txt")
	w.Write(files["oom_error.txt"])
	zipw.Close()

	arts := filepath.Join(dir, "arts")
	if err := os.Mkdir(arts, 0o755); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(arts, "job.tar.gz")
	zipped := filepath.Join(arts, "job.zip")
	os.WriteFile(tgz, gz.Bytes(), 0o644)
	os.WriteFile(zipped, zb.Bytes(), 0o644)
	os.WriteFile(filepath.Join(arts, "pmon.txt"), files["pmon.txt"], 0o644)

	for _, c := range []struct{ cmd, path, want string }{
		{"analyze", tgz, tgz + ": byte offset 0: a tar archive, not an input: extract it (tar xf)"},
		{"oom", tgz, "a tar archive, not an input"},
		{"trend", tgz, "a tar archive, not an input"},
		{"analyze", zipped, zipped + ": byte offset 0: a zip archive, not an input: extract it (unzip)"},
	} {
		code, _, errOut := run(t, nil, c.cmd, c.path)
		if code != ExitInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%s %s: exit %d, stderr %q", c.cmd, filepath.Base(c.path), code, errOut)
		}
	}
	// Piped, the tar inside the gzip stream is seen too.
	if code, _, errOut := run(t, gz.Bytes(), "analyze", "-"); code != ExitInput || !strings.Contains(errOut, "-: byte offset 0: a tar archive") {
		t.Errorf("analyze - < job.tar.gz: exit %d, %q", code, errOut)
	}

	code, out, errOut := run(t, nil, "report", arts, "--format", "json", "-o", "-")
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var day struct {
		Skipped []struct{ Path, Reason string } `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(out), &day); err != nil {
		t.Fatal(err)
	}
	if len(day.Skipped) != 2 {
		t.Fatalf("skipped %+v, want the two archives", day.Skipped)
	}
	for _, s := range day.Skipped {
		if !strings.Contains(s.Reason, "archive, not an input: extract it") {
			t.Errorf("%s skipped because %q", s.Path, s.Reason)
		}
	}

	// export lists skipped files by count only: an archive, which may
	// hold inputs, is named as an input not read.
	code, _, errOut = run(t, nil, "export", arts, "-o", filepath.Join(dir, "fleet"))
	if code != ExitOK || !strings.Contains(errOut, "1 exported, 0 skipped (no artifact), 2 unreadable") ||
		!strings.Contains(errOut, "not read: "+tgz+": byte offset 0: a tar archive, not an input") {
		t.Errorf("export: exit %d, stderr %q", code, errOut)
	}
}
