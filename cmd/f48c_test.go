package cmd

import (
	"bytes"
	"fmt"
	"math/rand"
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

// twoOOMLog is a training log of two out-of-memory errors, the first
// half-way, the second at its end (after t48c's crafted_two_oom_*.log.gz).
func twoOOMLog() []byte {
	var b bytes.Buffer
	oom := func(gib int) {
		fmt.Fprintf(&b, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.50 GiB is free. Including non-PyTorch memory, this process has 77.64 GiB memory in use. Of the allocated memory 75.00 GiB is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated.\n", gib)
	}
	rng := rand.New(rand.NewSource(48))
	for i := range 20000 {
		fmt.Fprintf(&b, "step %d loss %.6f lr %.3e\n", i, rng.Float64(), rng.Float64())
	}
	oom(2)
	for i := range 20000 {
		fmt.Fprintf(&b, "step %d loss %.6f lr %.3e\n", 20000+i, rng.Float64(), rng.Float64())
	}
	oom(4)
	return b.Bytes()
}

// A gzip-compressed log cut short (an upload stopped) after its first OOM
// is read up to the cut and marked read in part, as an NVML log is; bytes
// after a whole gzip stream that begin no member (trailing garbage) are
// ignored with a warning, as gzip -d does, the stream kept whole. Before,
// both were "read error: gzip: ..." and exit 2, no report.
func TestGzipDamagedLogKeepsWhatWasRead(t *testing.T) {
	z := gzipped(t, twoOOMLog())
	cut := writeF48c(t, "cut.log.gz", z[:len(z)*9/10])
	for _, use := range []string{"analyze", "oom"} {
		code, out, stderr := run(t, nil, use, cut)
		if code != 0 || !strings.Contains(out, "READ IN PART: the gzip stream is cut short at byte offset") ||
			!strings.Contains(out, "2.00 GiB requested") || strings.Contains(out, "4.00 GiB requested") {
			t.Errorf("cut, %s: exit %d\n%s\n%s", use, code, out, stderr)
		}
	}
	code, out, stderr := run(t, nil, "analyze", "--format", "json", cut)
	if code != 0 || !strings.Contains(out, `"cut": "the gzip stream is cut short at byte offset`) {
		t.Errorf("cut, JSON: exit %d, no \"cut\":\n%s\n%s", code, out, stderr)
	}
	garbage := writeF48c(t, "garbage.log.gz", append(append([]byte{}, z...), "\x00\x00not gzip\n"...))
	for _, use := range []string{"analyze", "oom"} {
		code, out, stderr := run(t, nil, use, garbage)
		want := fmt.Sprintf("the bytes of the compressed file after its last whole gzip member, which ends at byte offset %d, begin no member (trailing garbage", len(z))
		if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "READ IN PART") ||
			!strings.Contains(out, "2.00 GiB requested") || !strings.Contains(out, "4.00 GiB requested") {
			t.Errorf("trailing garbage, %s: exit %d\n%s\n%s", use, code, out, stderr)
		}
	}
	// A log without an OOM, cut so, read for --fail-on oom as the log of
	// a run without one: read in part, never as whole.
	steps := twoOOMLog()
	zp := gzipped(t, steps[:bytes.Index(steps, []byte("torch.OutOfMemoryError"))])
	code, out, stderr = run(t, nil, "analyze", "--fail-on", "oom", writeF48c(t, "plain.log.gz", zp[:len(zp)/2]))
	if code != 0 || !strings.Contains(out, "log without an out-of-memory message; READ IN PART: the gzip stream is cut short") {
		t.Errorf("cut log without an OOM, --fail-on oom: exit %d\n%s\n%s", code, out, stderr)
	}
	// A compute-sanitizer log cut so is read as the same log cut short
	// uncompressed is, marked read in part.
	san, err := os.ReadFile(td + "sanitizer/leak_full.txt")
	if err != nil {
		t.Fatal(err)
	}
	zsan := gzipped(t, san)
	code, out, stderr = run(t, nil, "analyze", writeF48c(t, "san.txt.gz", zsan[:len(zsan)*2/3]))
	if code != 0 || !strings.Contains(out, "compute-sanitizer; READ IN PART: the gzip stream is cut short") || !strings.Contains(out, "make_workspace (leaky.cu:14)") {
		t.Errorf("cut sanitizer log: exit %d\n%s\n%s", code, out, stderr)
	}
	// A cut snapshot is still an error: a pickle cut short cannot be
	// shown as whole, nor in part.
	snap, err := os.ReadFile(td + "pytorch/leak_train_loop.pickle")
	if err != nil {
		t.Fatal(err)
	}
	zs := gzipped(t, snap)
	if code, _, stderr := run(t, nil, "analyze", writeF48c(t, "s.pickle.gz", zs[:len(zs)/2])); code != 2 || !strings.Contains(stderr, "gzip: unexpected EOF") {
		t.Errorf("cut snapshot: exit %d, %q", code, stderr)
	}
}

// A log whose text ends in binary data (a pickle, a core dump appended; a
// log rotated mid-write) is read up to the binary data, marked read in
// part with its offset: before, the whole input was "unrecognised input
// format" at byte offset 0 and its OOM passed over (after t48c's crafted
// crafted_mixed_oom_pickle.log: an OOM line, then a snapshot pickle).
func TestTextThenBinary(t *testing.T) {
	text := "epoch 3 step 120\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.50 GiB is free. Including non-PyTorch memory, this process has 77.64 GiB memory in use. Of the allocated memory 75.00 GiB is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated.\n"
	bin := make([]byte, 600)
	rand.New(rand.NewSource(48)).Read(bin)
	bin = append([]byte("\x80\x04\x95"), bin...)
	p := writeF48c(t, "mixed.log", append([]byte(text), bin...))
	want := fmt.Sprintf("READ IN PART: binary data from byte offset %d on", len(text))
	for _, use := range []string{"analyze", "oom"} {
		code, out, stderr := run(t, nil, use, p)
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "2.00 GiB requested") {
			t.Errorf("%s: exit %d\n%s\n%s", use, code, out, stderr)
		}
	}
	// Text without anything gpuleak reads, then binary: an error at the
	// binary data's offset, not at 0.
	plain := "epoch 3 step 120\nloss 0.25\n"
	p = writeF48c(t, "plain.log", append([]byte(plain), bin...))
	wantErr := fmt.Sprintf("byte offset %d: unrecognised input format: lines of text without an out-of-memory message", len(plain))
	if code, _, stderr := run(t, nil, "analyze", p); code != 2 || !strings.Contains(stderr, wantErr) {
		t.Errorf("plain then binary: exit %d, %q", code, stderr)
	}
	// Binary alone is unrecognised, as before.
	if code, _, stderr := run(t, nil, "analyze", writeF48c(t, "b.bin", bin[3:])); code != 2 || !strings.Contains(stderr, "byte offset 0: unrecognised input format: not a PyTorch") {
		t.Errorf("binary: exit %d, %q", code, stderr)
	}
}
