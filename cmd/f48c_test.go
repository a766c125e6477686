package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeF48c writes data to a file of the test's own.
func writeF48c(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A protocol 0 or 1 pickle (no PROTO header) that imports a callable is
// refused as the README's Safety promises, naming the opcode and its
// offset, by analyze and oom alike: before, it was "unrecognised input
// format" (analyze) or "log without an out-of-memory message", exit 0
// (oom). The pickles are built here, as Python's pickler writes them for
// an object whose __reduce__ returns (os.system, ("true",)) (t48c's
// crafted_reduce_os_system.pickle is the first). Text that merely starts
// with two one-word lines is still unrecognised.
func TestCodePickleWithoutProto(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"protocol 0 GLOBAL first", "cos\nsystem\n(S'true'\ntR.", "byte offset 0: refusing pickle opcode GLOBAL"},
		{"protocol 0 pickler", "cposix\nsystem\np0\n(Vtrue\np1\ntp2\nRp3\n.", "byte offset 0: refusing pickle opcode GLOBAL"},
		{"protocol 0 in a list", "(lp0\nI1\naVa\np1\nacposix\nsystem\np2\n(Vtrue\np3\ntp4\nRp5\na.", "byte offset 16: refusing pickle opcode GLOBAL"},
		{"protocol 0 INST", "(S'true'\nios\nsystem\n.", "byte offset 9: refusing pickle opcode INST"},
		{"protocol 1", "cposix\nsystem\nq\x00(X\x04\x00\x00\x00trueq\x01tq\x02Rq\x03.", "byte offset 0: refusing pickle opcode GLOBAL"},
	}
	for _, c := range cases {
		p := writeF48c(t, "x.pickle", []byte(c.data))
		for _, use := range []string{"analyze", "oom"} {
			code, _, stderr := run(t, nil, use, p)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s, %s: exit %d, stderr %q; want 2 and %q", c.name, use, code, stderr, c.want)
			}
		}
	}
	for _, text := range []string{"cat\ndog\n", "config\nloaded\n(step 1)\n"} {
		p := writeF48c(t, "x.txt", []byte(text))
		if code, _, stderr := run(t, nil, "analyze", p); code != 2 || !strings.Contains(stderr, "unrecognised input format") {
			t.Errorf("text %q: exit %d, %q", text, code, stderr)
		}
	}
}
