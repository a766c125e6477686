package cmd_test

import (
	"bytes"
	"strings"
	"testing"
)

// A file of one 5 MiB line without a line end: analyze and oom agree on
// it. With an OOM message 4 MiB in, both read the message (exit 0; a gate
// on oom trips, 1): before h43b analyze stopped with "line longer than
// 4 MiB: not a text log" (exit 2, the compute-sanitizer reader's error)
// and oom read the first 1 MiB and said "No out-of-memory error" (exit
// 0). Without one (garbage), the README's codes hold: analyze 2
// (unrecognised input), oom 0 and analyze --fail-on oom 0, each read as a
// log of a run without an OOM; analyze --fail-on oom was 2 before.
func TestOneLongLineSameExitInAnalyzeAndOOM(t *testing.T) {
	const msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Process 1234 has 77.90 GiB memory in use. Of the allocated memory 75.12 GiB is allocated by PyTorch, and 1.55 GiB is reserved by PyTorch but unallocated."
	padded := writeTemp(t, "padded.txt", append(bytes.Repeat([]byte("x"), 4<<20), " "+msg+" "+strings.Repeat("y", 1<<20)...))
	garbage := writeTemp(t, "garbage.txt", bytes.Repeat([]byte("0123456789;=abc "), 5<<20/16))
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"analyze", padded}, 0, "2.00 GiB requested on GPU 0", ""},
		{[]string{"oom", padded}, 0, "OOM 1 of 1: GPU 0, 2.00 GiB requested", ""},
		{[]string{"analyze", "--fail-on", "oom", padded}, 1, "2.00 GiB requested on GPU 0", "--fail-on oom tripped"},
		{[]string{"analyze", garbage}, 2, "", "garbage.txt: byte offset 0: unrecognised input format"},
		{[]string{"oom", garbage}, 0, "no CUDA out-of-memory message in it", ""},
		{[]string{"analyze", "--fail-on", "oom", garbage}, 0, "read as a log of a run without an OOM", ""},
	} {
		code, out, errOut := run(t, "", c.args...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%s %s: exit %d (want %d), stdout %.200q, stderr %.200q", c.args[0], c.args[len(c.args)-1], code, c.code, out, errOut)
		}
	}
}
