//go:build unix

package cmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An output FILE that is no regular file (a FIFO here; /dev/stdout in a
// CI step, "gpuleak analyze --write-baseline /dev/stdout") is written in
// place: a rename over it replaced it with a regular file, and as root
// replaced /dev/stdout itself. A symbolic link is written through and
// stays a link.
func TestWriteBaselineToFIFOAndLink(t *testing.T) {
	dir := t.TempDir()
	snap := "../testdata/pytorch/clean_train_loop.pickle"

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the writer opens it
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	code, _, errOut := runIO(t, "", false, "analyze", "-q", "--write-baseline", fifo, snap)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	select {
	case s := <-got:
		if !strings.Contains(s, `"schema": "gpuleak.baseline/v1"`) {
			t.Errorf("read from the FIFO: %q", s)
		}
	case <-time.After(10 * time.Second):
		// The FIFO was renamed over: its reader waits for a writer
		// that never comes.
		t.Fatal("nothing was written to the FIFO")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st.Mode(), err)
	}

	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(real, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Skip("no symlink:", err)
	}
	code, _, errOut = runIO(t, "", false, "analyze", "-q", "--write-baseline", link, snap)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "gpuleak.baseline/v1") {
		t.Errorf("the link's target holds %q", b)
	}

	code, _, errOut = runIO(t, "", false, "analyze", "--write-baseline", "-", snap)
	if code != ExitInput || !strings.Contains(errOut, "--write-baseline needs a FILE") {
		t.Errorf("--write-baseline -: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat("-"); err == nil {
		os.Remove("-")
		t.Errorf(`--write-baseline - wrote a file named "-"`)
	}
}

// One input named twice where it is no regular file: a FIFO given twice
// waited forever for a second writer, and "-" beside /dev/stdin (or the
// file standard input was redirected from) read the stream once and
// called the second name an empty input. Both are the usage error a
// regular file named twice is.
func TestSameStreamNamedTwice(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	// No writer: were the FIFO opened, the run would block.
	code, _, errOut := runIO(t, "", false, "analyze", fifo, fifo)
	if code != ExitInput || !strings.Contains(errOut, fifo+" is given twice") {
		t.Errorf("FIFO twice: exit %d, %q", code, errOut)
	}

	snap := "../testdata/pytorch/clean_train_loop.pickle"
	f, err := os.Open(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb strings.Builder
	code = Main([]string{"analyze", "-", snap}, &IOStreams{In: f, Out: &out, ErrOut: &errb}, "test")
	if code != ExitInput || !strings.Contains(errb.String(), "- and "+snap+" are the same file") {
		t.Errorf("- < FILE beside FILE: exit %d, %q", code, errb.String())
	}
}

// Only descriptors are written in place: a baseline under a directory
// that merely lives in /dev (tmpfs /dev/shm) is replaced whole, not
// appended to.
func TestDescriptorPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/dev/stdout": true, "/dev/stderr": true, "/dev/fd/3": true, "/proc/self/fd/1": true, "/proc/42/fd/1": true,
		"/dev/shm/base.json": false, "/proc/42/status": false, "base.json": false, "/dev/null": false,
	} {
		if got := descriptorPath(p); got != want {
			t.Errorf("descriptorPath(%q) = %v, want %v", p, got, want)
		}
	}
}
