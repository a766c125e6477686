package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// --format pprof reads back with the pprof library: per the fixtures
// README the leak is 40 blocks of 2 MiB from forward (leak_train_loop.py:11)
// called from train, labelled kind=leak, device 0 and its input; and go
// tool pprof -top puts the leak site on top.
func TestPprof(t *testing.T) {
	leakRun := td + "pytorch/leak_train_loop.pickle"
	code, out, errOut := run(t, nil, "analyze", "--format", "pprof", "--top", "0", leakRun, td+"sanitizer/leak_full.txt")
	if code != ExitOK {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if !strings.HasPrefix(out, "\x1f\x8b") {
		t.Fatal("not gzipped")
	}
	p, err := profile.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[1].Type != "inuse_space" || p.SampleType[1].Unit != "bytes" || p.DefaultSampleType != "inuse_space" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	var leak *profile.Sample
	var total int64
	for _, s := range p.Sample {
		total += s.Value[1]
		if s.Label["kind"][0] == "leak" && s.Label["input"][0] == leakRun {
			leak = s
		}
	}
	if leak == nil {
		t.Fatal("no leak sample from leak_train_loop.pickle")
	}
	if leak.Value[0] != 40 || leak.Value[1] != 40<<21 || leak.Label["device"][0] != "0" {
		t.Errorf("leak sample: %v, labels %v", leak.Value, leak.Label)
	}
	if fn := leak.Location[0].Line[0]; fn.Function.Name != "forward" || fn.Line != 11 || !strings.HasSuffix(fn.Function.Filename, "leak_train_loop.py") {
		t.Errorf("innermost frame %s %s:%d", fn.Function.Name, fn.Function.Filename, fn.Line)
	}
	if caller := leak.Location[1].Line[0].Function.Name; caller != "train" {
		t.Errorf("caller %q", caller)
	}
	// pprof would show Python's <module> as <unknown>: it drops what
	// stands in angle brackets.
	if outer := leak.Location[2].Line[0].Function; outer.Name != "module@leak_train_loop.py" || outer.SystemName != "<module>" {
		t.Errorf("outermost frame %q (%q)", outer.Name, outer.SystemName)
	}
	// 145 MiB live in the snapshot (fixtures README) + 6,677,056 leaked
	// bytes in the sanitizer log.
	if total != 145<<20+6677056 {
		t.Errorf("total %d bytes", total)
	}

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool pprof: no go command on PATH")
	}
	file := filepath.Join(t.TempDir(), "gpu.pb.gz")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	// Plain -top (leak and retained memory of forward together, 113 MiB),
	// then only the leaks.
	for _, args := range [][]string{{"-top"}, {"-top", "-tagfocus", "kind=leak"}} {
		top, err := exec.Command(goBin, append(append([]string{"tool", "pprof"}, args...), file)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, top)
		}
		lines := strings.Split(string(top), "\n")
		first := ""
		for i, l := range lines {
			if strings.Contains(l, "flat%") && i+1 < len(lines) {
				first = lines[i+1]
				break
			}
		}
		if !strings.HasSuffix(strings.TrimSpace(first), " forward") {
			t.Errorf("go tool pprof %v: the first row is %q, want the leak site forward:\n%s", args, first, top)
		}
	}
}

// A profile says what it leaves out, in the comments pprof prints above
// its views: an NVML log's trends and an OOM are no memory at a call site,
// and an input not read holds none; the profile of them was empty and
// said nothing, as a run in which nothing held memory would.
func TestPprofSaysWhatItLeavesOut(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.pickle")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, nil, "analyze", "--format", "pprof", "--top", "0", nvmlData+"pmon.txt", td+"pytorch/oom_error.txt", empty)
	if code != ExitInput {
		t.Fatalf("exit %d, want %d (an input not read)", code, ExitInput)
	}
	p, err := profile.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 0 {
		t.Fatalf("%d samples, want none", len(p.Sample))
	}
	c := strings.Join(p.Comments, "\n")
	for _, want := range []string{
		"NOT READ: " + empty + ": byte offset 0: empty input",
		"not in this profile (not memory at a call site): ",
		"1 oom, ", " trend findings",
		"no finding holds memory at a call site",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("comments lack %q:\n%s", want, c)
		}
	}
}
