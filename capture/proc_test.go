package capture

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// A process tree follows children and grandchildren started after it was
// made, and leaves out processes outside it.
func TestProcessTree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	// sh starts sleep as its child (a grandchild of the test): sh waits, so
	// sleep is not exec'd in sh's place.
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	tree := NewProcessTree(int64(cmd.Process.Pid))
	var grandchild int64
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	for _, c := range buf[:n] {
		if c >= '0' && c <= '9' {
			grandchild = grandchild*10 + int64(c-'0')
		}
	}
	defer func() {
		if p, err := os.FindProcess(int(grandchild)); err == nil {
			p.Kill()
		}
	}()
	if grandchild == 0 || !tree.Contains(grandchild) {
		t.Errorf("the grandchild %d is not in the tree of %d", grandchild, cmd.Process.Pid)
	}
	if !tree.Contains(int64(cmd.Process.Pid)) {
		t.Error("the root is not in its tree")
	}
	if tree.Contains(int64(os.Getpid())) || tree.Contains(1) {
		t.Error("the parent or init is in the tree")
	}
	if !Exists(int64(os.Getpid())) || Exists(2147483000) {
		t.Error("Exists")
	}
}

// readPPID reads the parent past a command name holding spaces and ')'.
func TestReadPPID(t *testing.T) {
	dir := t.TempDir()
	old := procRoot
	procRoot = dir
	defer func() { procRoot = old }()
	if err := os.MkdirAll(dir+"/77", 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/77/stat", []byte("77 (a) b (c)) S 42 77 77 0 -1 4194560\n"), 0o644)
	os.WriteFile(dir+"/77/comm", []byte("a) b (c)\n"), 0o644)
	if pp, ok := readPPID(77); !ok || pp != 42 {
		t.Errorf("ppid %d %v, want 42", pp, ok)
	}
	if c := procComm(77); c != "a) b (c)" {
		t.Errorf("comm %q", c)
	}
	if _, ok := readPPID(78); ok {
		t.Error("a missing process has a parent")
	}
}
