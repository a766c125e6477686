package cmd_test

// Regression tests for inputs a hostile-input audit found mishandled
// (issue 8): each builds its reproducer here and runs it through the CLI.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/cmd"
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
	// Standard error says only which gate tripped.
	if code != 1 || !strings.HasPrefix(errOut, "gpuleak: --fail-on leak tripped: ") || strings.Count(errOut, "\n") != 1 {
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

// peakMemory runs f and returns the peak of the memory the Go runtime
// maps less what it returned to the OS (near the process's RSS), sampled
// every millisecond, above what it held before.
func peakMemory(f func()) uint64 {
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	used := func() uint64 {
		metrics.Read(samples)
		return samples[0].Value.Uint64() - samples[1].Value.Uint64()
	}
	base := used()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if u := used(); u > peak.Load() {
				peak.Store(u)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// gzipFile writes head, n copies of fill and tail, gzip-compressed, to a
// temporary file.
func gzipFile(t *testing.T, name, head string, fill []byte, n int, tail string) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	zw.Write([]byte(head))
	for i := 0; i < n; i++ {
		zw.Write(fill)
	}
	zw.Write([]byte(tail))
	zw.Close()
	return writeTemp(t, name, b.Bytes())
}

// A compute-sanitizer XML file whose <text> is 256 MiB long (a 256 KiB
// gzip) is refused at its offset once one token passes 4 MiB, without
// holding the text: before, encoding/xml buffered the whole node (a 1 GiB
// one took 6.3 GB) and the run exited 0.
func TestSanitizerXMLTokenBound(t *testing.T) {
	const head = `<?xml version="1.0" encoding="utf-8"?>` + "\n<ComputeSanitizerOutput>\n<record><kind>Leak</kind><what><text>"
	p := gzipFile(t, "huge_text.xml.gz", head, bytes.Repeat([]byte("A"), 1<<20), 256,
		"</text><size>4</size></what></record>\n</ComputeSanitizerOutput>\n")
	var code int
	var out, errOut string
	peak := peakMemory(func() { code, out, errOut = run(t, "", "analyze", p) })
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q: want exit 2 and no report", code, out)
	}
	// The token starts after the head's "<text>", in the decompressed
	// content (the file is gzipped).
	want := fmt.Sprintf("%s: byte offset %d of the decompressed content: an XML token (text, tag or comment) of 4 MiB or more", p, len(head))
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// The token bound is 4 MiB; the decoder, its buffers and a copy or two
	// of the token stay well under 64 MiB. The 256 MiB text would not.
	if peak > 64<<20 {
		t.Errorf("peak memory %d MiB while refusing, want under 64 MiB", peak>>20)
	}
	t.Logf("peak memory above the start: %.1f MiB", float64(peak)/(1<<20))

	// A record of 100,000 elements passes the 65,536 a record may hold.
	p = gzipFile(t, "many_elements.xml.gz", `<ComputeSanitizerOutput><record><kind>Leak</kind>`, []byte("<x/>"), 100000,
		"</record></ComputeSanitizerOutput>")
	code, _, errOut = run(t, "", "analyze", p)
	if code != 2 || !strings.Contains(errOut, "byte offset 24 of the decompressed content: a <record> of more than 65536 elements") {
		t.Errorf("exit %d, stderr %q: want exit 2 at the record's offset, 24", code, errOut)
	}
}

// An XML record of elements this reader does not know is named by them,
// not shown as an empty error.
func TestSanitizerXMLUnknownRecord(t *testing.T) {
	p := writeTemp(t, "unknown.xml", []byte(`<?xml version="1.0"?>
<ComputeSanitizerOutput>
<record><newThing><a>1</a></newThing><other>2</other><newThing/></record>
</ComputeSanitizerOutput>
`))
	code, out, errOut := run(t, "", "analyze", "--format", "json", p)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	r := decode(t, out)
	if len(r.Errors) != 1 || r.Errors[0].Message != "a record of unknown elements: <newThing>, <other>" {
		t.Errorf("errors %+v: want one named by its elements <newThing>, <other>", r.Errors)
	}
}

// Usage errors end with gpuleak's hint on a line of its own, not a
// literal "\n" (the cleaner escaped the newline it was joined with).
func TestUsageHintOnItsOwnLine(t *testing.T) {
	code, _, errOut := run(t, "", "analyze")
	want := "gpuleak: analyze needs at least one FILE (\"-\" reads standard input)\nRun 'gpuleak analyze --help' for usage.\n"
	if code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q, want 2, %q", code, errOut, want)
	}
	code, _, errOut = run(t, "", "analyze", "--bogus", "x")
	if code != 2 || strings.Contains(errOut, `\n`) || !strings.HasSuffix(errOut, "\nRun 'gpuleak analyze --help' for usage.\n") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// --fail-on names every kind it takes, in its help and its errors.
func TestFailOnListsAllKinds(t *testing.T) {
	const kinds = "leak, pending-free, live, retained, oom, fragmentation, non-pytorch"
	_, help, _ := run(t, "", "analyze", "--help")
	code, _, errOut := run(t, "", "analyze", "--fail-on=", san("leak_full.txt"))
	if !strings.Contains(help, kinds) || code != 2 || !strings.Contains(errOut, "--fail-on needs a kind ("+kinds+")") {
		t.Errorf("help has the kinds: %v; exit %d, stderr %q", strings.Contains(help, kinds), code, errOut)
	}
}

// Bytes that are not UTF-8 are escaped like control characters: a raw
// 0x9b is a terminal's one-byte CSI.
func TestCleanerEscapesC1Bytes(t *testing.T) {
	code, _, errOut := run(t, "", "analyze", "no-such-\x9b[2J-file")
	if code != 2 || strings.Contains(errOut, "\x9b") || !strings.Contains(errOut, `no-such-\x9b[2J-file`) {
		t.Errorf("exit %d, stderr %q: want the byte escaped", code, errOut)
	}
	log, err := os.ReadFile(san("leak_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, "c1.txt", bytes.ReplaceAll(log, []byte("make_workspace"), []byte("make_\x9b[2Jworkspace")))
	code, out, errOut := run(t, "", "analyze", p)
	if code != 0 || strings.Contains(out, "\x9b") || !strings.Contains(out, `make_\x9b[2Jworkspace (leaky.cu:14)`) {
		t.Errorf("exit %d, stderr %q; the table shows the byte raw or not at all:\n%s", code, errOut, out)
	}
}

// An OOM log behind the NUL bytes logrotate's copytruncate leaves (here
// 200 KB, more than detection's 64 KiB) is read as the log itself.
func TestOOMLogBehindNULPadding(t *testing.T) {
	code, want, errOut := run(t, "", "analyze", "--format", "json", "--fail-on", "oom", "../testdata/pytorch/oom_error.txt")
	if code != 1 {
		t.Fatalf("intact log: exit %d, stderr %q", code, errOut)
	}
	log, err := os.ReadFile("../testdata/pytorch/oom_error.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"leading-200KB": append(make([]byte, 200_000), log...),
		"leading-10":    append(make([]byte, 10), log...),
	} {
		p := writeTemp(t, name+".txt", data)
		code, out, errOut := run(t, "", "analyze", "--format", "json", "--fail-on", "oom", p)
		if code != 1 {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
			continue
		}
		r, w := decode(t, out), decode(t, want)
		if len(r.Findings) != len(w.Findings) || r.Findings[0].Kind != "oom" || r.Findings[0].Bytes != w.Findings[0].Bytes || r.Inputs[0].Format != w.Inputs[0].Format {
			t.Errorf("%s: findings %+v, want those of the intact log", name, r.Findings)
		}
	}
	p := writeTemp(t, "zeros", make([]byte, 1000))
	if code, _, errOut := run(t, "", "analyze", p); code != 2 || !strings.Contains(errOut, "empty input: only 1000 NUL bytes") {
		t.Errorf("only NULs: exit %d, stderr %q", code, errOut)
	}
}

// One file named twice (or by a link) is refused, naming both: its
// findings would count twice.
func TestSameFileTwice(t *testing.T) {
	f := san("leak_full.txt")
	code, out, errOut := run(t, "", "analyze", f, f)
	if code != 2 || out != "" || !strings.Contains(errOut, f+" is given twice") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	link := filepath.Join(t.TempDir(), "link.txt")
	abs, _ := filepath.Abs(f)
	if err := os.Symlink(abs, link); err != nil {
		t.Skip(err)
	}
	for _, c := range []string{"analyze", "oom", "trend"} {
		code, _, errOut = run(t, "", c, f, link)
		if code != 2 || !strings.Contains(errOut, f+" and "+link+" are the same file") {
			t.Errorf("%s: exit %d, stderr %q", c, code, errOut)
		}
	}
}

// A line cut at 1 MiB in an OOM log says so: 1 MiB is a multiple of the
// read buffer, so the cut was never noticed.
func TestLongLineWarning(t *testing.T) {
	log, err := os.ReadFile("../testdata/pytorch/oom_error.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(log, []byte("\n"))
	data := append(append(log, bytes.Repeat([]byte("x"), 2<<20)...), "\nend\n"...)
	code, out, errOut := run(t, "", "analyze", "--format", "json", writeTemp(t, "long.txt", data))
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := fmt.Sprintf("line %d is longer than 1048576 bytes; it was read in pieces", lines+1)
	if w := decode(t, out).Inputs[0].Warnings; !strings.Contains(strings.Join(w, "\n"), want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
}

// epipeWriter is standard output after its reader went away.
type epipeWriter struct{}

func (epipeWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// A reader that leaves early (| head) fails nothing, but it does not
// decide the outcome either: a tripped gate is still exit 1 and an
// unreadable input still exit 2, each named on standard error. Before, the
// report's EPIPE was returned before the gates and the unread inputs were
// looked at, and Main mapped it to exit 0 in silence.
func TestClosedStdoutKeepsOutcome(t *testing.T) {
	empty := writeTemp(t, "empty.txt", nil)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		// leak_full.txt: 8 leaks (../shared/fixtures/README.md): the gate trips.
		{[]string{"analyze", "--fail-on", "leak", san("leak_full.txt")}, 1, "--fail-on leak tripped"},
		{[]string{"analyze", "-q", "--fail-on", "leak", san("leak_full.txt")}, 1, ""},
		// An empty file is unreadable for every command (README, Exit codes).
		{[]string{"analyze", san("leak_full.txt"), empty}, 2, "empty.txt: byte offset 0: empty input"},
		{[]string{"analyze", "--fail-on", "leak", san("leak_full.txt"), empty}, 2, "empty.txt: byte offset 0: empty input"},
		{[]string{"oom", "../testdata/pytorch/oom_error.txt", empty}, 2, "empty.txt: byte offset 0: empty input"},
		// query_apps.csv: pid 538 climbs to 4.8 GiB, then stays flat: a step.
		{[]string{"trend", "--fail-on", "step", "../testdata/nvml/query_apps.csv"}, 1, "--fail-on step tripped"},
	} {
		var errOut bytes.Buffer
		code := cmd.Main(c.args, &cmd.IOStreams{In: strings.NewReader(""), Out: epipeWriter{}, ErrOut: &errOut}, "test")
		if code != c.code || !strings.Contains(errOut.String(), c.stderr) {
			t.Errorf("%q with its standard output closed: exit %d, stderr %q; want exit %d naming %q", c.args, code, errOut.String(), c.code, c.stderr)
		}
	}
}

// A closed standard output (| head) ends the run quietly with exit 0, in
// process and in a real pipe (before: killed by SIGPIPE, exit 141).
func TestClosedStdout(t *testing.T) {
	var errOut bytes.Buffer
	code := cmd.Main([]string{"analyze", san("leak_full.txt")}, &cmd.IOStreams{In: strings.NewReader(""), Out: epipeWriter{}, ErrOut: &errOut}, "test")
	if code != 0 || errOut.Len() != 0 {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	if testing.Short() {
		t.Skip("builds gpuleak")
	}
	bin := filepath.Join(t.TempDir(), "gpuleak")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := exec.Command(bin, "analyze", "--top", "0", san("leak_full.txt"))
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the reader leaves before anything is written
	err = c.Wait()
	if code := c.ProcessState.ExitCode(); code != 0 || stderr.Len() != 0 {
		t.Errorf("exit %d (%v), stderr %q: want 0 and nothing", code, err, stderr.String())
	}
}
