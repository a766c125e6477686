package cmd_test

// Regression tests for inputs a hostile-input audit found mishandled
// (issue 8): each builds its reproducer here and runs it through the CLI.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// findingKeys lists what identifies each finding of a JSON report.
func findingKeys(t *testing.T, out string) []string {
	t.Helper()
	var keys []string
	for _, f := range decode(t, out).Findings {
		keys = append(keys, fmt.Sprintf("%s %s %d bytes in %d", f.Kind, f.Site.Function, f.Bytes, f.Count))
	}
	return keys
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A damaged copy of a sanitizer log must give the findings of the intact
// log: the damage is outside the records. Before the fix the prefix was
// learned with the junk, every record was read as program output, and the
// log read as clean (exit 0 with --fail-on leak).
func TestSanitizerDamagedPrefix(t *testing.T) {
	log, err := os.ReadFile(san("leak_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code, want, errOut := run(t, "", "analyze", "--format", "json", "--top", "0", "--fail-on", "leak", san("leak_full.txt"))
	if code != 1 || errOut != "" {
		t.Fatalf("intact log: exit %d, stderr %q", code, errOut)
	}
	wantKeys := findingKeys(t, want)
	if len(wantKeys) == 0 {
		t.Fatal("the intact log has no findings")
	}
	cases := map[string][]byte{
		// logrotate copytruncate: the writer goes on at its offset, the
		// file starts with a hole of NUL bytes.
		"nul-padding": append(bytes.Repeat([]byte{0}, 100), log...),
		// program output without a line ending before the banner.
		"glued-text": append([]byte("step 41 done"), log...),
		// an escape sequence's remains before the banner.
		"ansi": append([]byte("\x1b[0m"), log...),
		// lines ended by CR only.
		"cr-only": bytes.ReplaceAll(log, []byte("\n"), []byte("\r")),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := writeTemp(t, name+".txt", data)
			code, out, errOut := run(t, "", "analyze", "--format", "json", "--top", "0", "--fail-on", "leak", p)
			if code != 1 {
				t.Fatalf("exit %d (want 1: leaks matched --fail-on), stderr %q", code, errOut)
			}
			if got := findingKeys(t, out); strings.Join(got, "\n") != strings.Join(wantKeys, "\n") {
				t.Errorf("findings\n%s\nwant those of the intact log\n%s", strings.Join(got, "\n"), strings.Join(wantKeys, "\n"))
			}
		})
	}
}

// Records under another prefix than the banner's can never read as clean:
// with no tool line matching the banner's prefix the input is refused
// (exit 2) at the first such record; beside records that matched, they are
// a warning.
func TestSanitizerUnmatchedRecords(t *testing.T) {
	log, err := os.ReadFile(san("leak_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.ReplaceAll(log, []byte("========= "), []byte("######### "))
	body = bytes.Replace(body, []byte("######### COMPUTE-SANITIZER"), []byte("========= COMPUTE-SANITIZER"), 1)
	p := writeTemp(t, "mixed.txt", body)
	code, out, errOut := run(t, "", "analyze", "--fail-on", "leak", p)
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q: want exit 2 and no report", code, out)
	}
	if !strings.Contains(errOut, p+":2:") || !strings.Contains(errOut, `prefix "========="`) {
		t.Errorf("stderr %q: want the line of the first unmatched record and the prefix", errOut)
	}

	// Half the records under the banner's prefix: read, with a warning.
	lines := strings.SplitAfter(string(log), "\n")
	for i := len(lines) / 2; i < len(lines); i++ {
		lines[i] = strings.Replace(lines[i], "========= ", "######### ", 1)
	}
	p = writeTemp(t, "half.txt", []byte(strings.Join(lines, "")))
	code, out, errOut = run(t, "", "analyze", "--format", "json", "--fail-on", "leak", p)
	if code != 1 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	r := decode(t, out)
	if len(r.Inputs) != 1 || !strings.Contains(strings.Join(r.Inputs[0].Warnings, "\n"), "do not start with the prefix") {
		t.Errorf("warnings %q: want one about records that do not match the prefix", r.Inputs[0].Warnings)
	}
}

// programOutput is n bytes of a program's own output, which no format
// claims: a sanitizer report after it is past the 64 KiB detection sees.
func programOutput(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "step %d: loss 0.%04d, 812.5 samples/s\n", i, i%10000)
	}
	return b.Bytes()
}

// A compute-sanitizer report after 64 KiB of program output, through
// standard input and through a FIFO, is read once: before, "-" gave
// "unrecognised" and a FIFO hung on the second open of its path.
func TestUnrecognisedTextReadOnce(t *testing.T) {
	log, err := os.ReadFile(san("leak_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := run(t, "", "analyze", "--format", "json", "--top", "0", san("leak_full.txt"))
	wantKeys := strings.Join(findingKeys(t, want), "\n")
	data := append(programOutput(80<<10), log...)

	t.Run("stdin", func(t *testing.T) {
		code, out, errOut := run(t, string(data), "analyze", "--format", "json", "--top", "0", "--fail-on", "leak", "-")
		if code != 1 {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if got := strings.Join(findingKeys(t, out), "\n"); got != wantKeys {
			t.Errorf("findings\n%s\nwant\n%s", got, wantKeys)
		}
	})
	fifo := func(t *testing.T, data []byte) string {
		p := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			w.Write(data)
			w.Close()
		}()
		return p
	}
	// runOrHang runs gpuleak, failing the test if it takes a minute.
	runOrHang := func(t *testing.T, args ...string) (int, string, string) {
		type result struct {
			code     int
			out, err string
		}
		done := make(chan result, 1)
		go func() {
			code, out, errOut := run(t, "", args...)
			done <- result{code, out, errOut}
		}()
		select {
		case r := <-done:
			return r.code, r.out, r.err
		case <-time.After(time.Minute):
			t.Fatal("gpuleak hangs on a FIFO")
		}
		return 0, "", ""
	}
	t.Run("fifo", func(t *testing.T) {
		code, out, errOut := runOrHang(t, "analyze", "--format", "json", "--top", "0", "--fail-on", "leak", fifo(t, data))
		if code != 1 {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if got := strings.Join(findingKeys(t, out), "\n"); got != wantKeys {
			t.Errorf("findings\n%s\nwant\n%s", got, wantKeys)
		}
	})
	t.Run("fifo-unrecognised", func(t *testing.T) {
		p := fifo(t, programOutput(200<<10))
		code, out, errOut := runOrHang(t, "analyze", p)
		if code != 2 || out != "" || !strings.Contains(errOut, p+": byte offset 0: unrecognised input format") {
			t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2, unrecognised", code, out, errOut)
		}
	})
}
