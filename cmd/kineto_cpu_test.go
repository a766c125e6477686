package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cpuOnlyTrace is testdata's trace with each of its 297 CUDA [memory]
// events made one of the CPU (Device Type 0, Device Id -1): a trace that
// recorded host memory only.
func cpuOnlyTrace(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(td + "pytorch/kineto_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const cuda = `"Device Id": 0, "Device Type": 1,`
	if n := strings.Count(s, cuda); n != 297 {
		t.Fatalf("%d CUDA [memory] events, want 297", n)
	}
	p := filepath.Join(t.TempDir(), "cpu_trace.json")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(s, cuda, `"Device Id": -1, "Device Type": 0,`)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A trace whose [memory] events are all of CPU memory recorded no GPU
// allocation: it can say nothing of a GPU's memory, like a trace without
// [memory] events. It is an input not read (exit 2, its file named with
// why), not "No findings": --fail-on leak does not pass on it, a report of
// other inputs lists it, and diff does not call every site of the other
// run new.
func TestTraceOfCPUMemoryOnly(t *testing.T) {
	trace := cpuOnlyTrace(t)
	for _, args := range [][]string{
		{"analyze", trace},
		{"analyze", "--fail-on", "leak", "--format", "markdown", trace},
		{"oom", trace},
		{"diff", trace, td + "pytorch/kineto_trace.json"},
	} {
		code, out, errOut := run(t, nil, args...)
		if code != ExitInput || !strings.Contains(errOut, trace+": ") || !strings.Contains(errOut, "329 [memory] events are all of CPU memory") ||
			strings.Contains(out, "No findings") || strings.Contains(out, "passed") {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", args, code, errOut, out)
		}
	}
	code, out, _ := run(t, nil, "analyze", trace, td+"pytorch/kineto_trace.json")
	if code != ExitInput || !strings.Contains(out, "NOT READ") || !strings.Contains(out, " 1  leak ") {
		t.Errorf("with a GPU trace beside it: exit %d:\n%s", code, out)
	}
}
