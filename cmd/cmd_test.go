package cmd

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const td = "../testdata/"

// run runs gpuleak with args against buffers.
func run(t *testing.T, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IOStreams{In: bytes.NewReader(stdin), Out: &out, ErrOut: &errb}
	code = Main(args, ios, "test")
	return code, out.String(), errb.String()
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(td, "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -update to create it)", err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(g) || i < len(w); i++ {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Errorf("%s differs from the golden file (go test ./cmd -update rewrites it) at line %d:\n got: %q\nwant: %q", name, i+1, gl, wl)
				return
			}
		}
	}
}

func TestGoldens(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		{"analyze_leak_train_loop.table", []string{"analyze", td + "pytorch/leak_train_loop.pickle"}},
		{"analyze_leak_train_loop.json", []string{"analyze", "--format", "json", td + "pytorch/leak_train_loop.pickle"}},
		{"analyze_multi_gpu_top3.table", []string{"analyze", "--top", "3", td + "pytorch/multi_gpu_leak.pickle"}},
		{"analyze_wrapped_ring.table", []string{"analyze", td + "pytorch/wrapped_ring.pickle"}},
		{"analyze_two_inputs_min1MiB.table", []string{"analyze", "--min-bytes", "1MiB", td + "pytorch/model_reload.pickle", td + "pytorch/oom_observer.pickle"}},
		{"analyze_bounded_cache_leak.table", []string{"analyze", td + "pytorch/bounded_cache_leak.pickle"}},
		{"analyze_side_stream_pending.table", []string{"analyze", td + "pytorch/side_stream_pending.pickle"}},
		{"analyze_forward_many_layers.table", []string{"analyze", td + "pytorch/forward_many_layers.pickle"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			code, out, errOut := run(t, nil, c.args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, c.golden+".stdout", out)
		})
	}
}

// report is the part of gpuleak.report/v1 the tests read.
type jsonReport struct {
	Schema string `json:"schema"`
	Inputs []struct {
		Path     string   `json:"path"`
		Format   string   `json:"format"`
		Warnings []string `json:"warnings"`
	} `json:"inputs"`
	Findings []struct {
		Kind   string `json:"kind"`
		Path   string `json:"path"`
		Device *int   `json:"device"`
		Bytes  int64  `json:"bytes"`
		Count  int    `json:"count"`
		Site   struct {
			Function string `json:"function"`
			File     string `json:"file"`
			Line     int    `json:"line"`
		} `json:"site"`
		Stack   []map[string]any `json:"stack"`
		Message string           `json:"message"`
	} `json:"findings"`
	FindingsTotal int `json:"findings_total"`
}

func decode(t *testing.T, s string) jsonReport {
	t.Helper()
	var r jsonReport
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	for _, k := range []string{"schema", "tool", "inputs", "findings", "findings_total"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestJSONReport(t *testing.T) {
	code, out, _ := run(t, nil, "analyze", "--format", "json", td+"pytorch/leak_train_loop.pickle")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	r := decode(t, out)
	if r.Schema != "gpuleak.report/v1" || len(r.Inputs) != 1 || r.Inputs[0].Format != "pytorch-snapshot" || r.Inputs[0].Warnings == nil {
		t.Fatalf("header %+v", r)
	}
	f := r.Findings[0]
	// Acceptance: a leak on device 0 whose stack contains train in
	// leak_train_loop.py, of 80 to 113 MiB in at least 40 blocks.
	if f.Kind != "leak" || f.Device == nil || *f.Device != 0 || f.Bytes < 80<<20 || f.Bytes > 113<<20 || f.Count < 40 {
		t.Fatalf("first finding %+v", f)
	}
	var train bool
	for _, fr := range f.Stack {
		train = train || (fr["function"] == "train" && strings.HasSuffix(fr["file"].(string), "leak_train_loop.py"))
	}
	if !train || f.Site.Function != "forward" || f.Site.Line != 11 || f.Message == "" {
		t.Fatalf("site %+v, stack %v", f.Site, f.Stack)
	}
	if f.Path != td+"pytorch/leak_train_loop.pickle" {
		t.Errorf("path %q", f.Path)
	}
}

// TestEncodingsGiveSameJSON: one snapshot re-pickled with protocols 0-5 and
// gzip-compressed, and read from standard input, gives one report.
func TestEncodingsGiveSameJSON(t *testing.T) {
	normalise := func(s string) string {
		var v map[string]any
		json.Unmarshal([]byte(s), &v)
		for _, in := range v["inputs"].([]any) {
			in.(map[string]any)["path"] = ""
		}
		for _, f := range v["findings"].([]any) {
			f.(map[string]any)["path"] = ""
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, base := range []string{"model_reload", "multi_gpu_leak"} {
		_, want, _ := run(t, nil, "analyze", "--format", "json", "--top", "0", td+"pytorch/"+base+".pickle")
		variants, _ := filepath.Glob(td + "pytorch/repickled/" + base + ".*")
		if len(variants) < 3 {
			t.Fatalf("%d variants of %s", len(variants), base)
		}
		for _, v := range variants {
			code, got, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", v)
			if code != 0 || normalise(got) != normalise(want) {
				t.Errorf("%s: exit %d %s; report differs", v, code, errOut)
			}
		}
		raw, _ := os.ReadFile(variants[0])
		code, got, _ := run(t, raw, "analyze", "--format", "json", "--top", "0", "-")
		if code != 0 || normalise(got) != normalise(want) || !strings.Contains(got, `"path": "-"`) {
			t.Errorf("stdin: exit %d; report differs", code)
		}
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	real, _ := os.ReadFile(td + "pytorch/model_reload.pickle")
	rnd := make([]byte, 8192)
	rand.New(rand.NewSource(7)).Read(rnd)
	files := map[string][]byte{
		"empty.pickle":     {},
		"truncated.pickle": real[:len(real)/3],
		"random.bin":       rnd,
		"code.pickle":      append(append([]byte{}, real[:11]...), append([]byte("\x8c\x02os\x8c\x06system\x93"), real[11:]...)...),
		"pickle-random":    append([]byte{0x80, 4}, rnd...),
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, nil, "analyze", path)
			if code != ExitInput || out != "" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "gpuleak: "+path+": ") {
				t.Fatalf("stderr %q", errOut)
			}
			if name != "random.bin" && !strings.Contains(errOut, "byte offset") {
				t.Errorf("no offset in %q", errOut)
			}
		})
	}
	code, _, errOut := run(t, nil, "analyze", filepath.Join(dir, "code.pickle"))
	if code != ExitInput || !strings.Contains(errOut, "byte offset 23: refusing pickle opcode STACK_GLOBAL") {
		t.Fatalf("code opcode: %d %q", code, errOut)
	}
	// A bad input among good ones costs only itself (issue 10): the good
	// one is reported, the bad one is listed with its positioned error
	// (table and JSON), and the run exits 2 with that error on stderr.
	bad := filepath.Join(dir, "truncated.pickle")
	for _, cmd := range []string{"analyze", "oom"} {
		code, out, errOut := run(t, nil, cmd, "--format", "json", td+"pytorch/oom_observer.pickle", bad)
		ins, fs := findings(t, out)
		if code != ExitInput || len(ins) != 2 || ins[0]["error"] != nil || len(ofKind(fs, "oom")) != 1 {
			t.Fatalf("%s: exit %d, inputs %v", cmd, code, ins)
		}
		if e, _ := ins[1]["error"].(string); ins[1]["path"] != bad || !strings.Contains(e, "byte offset") ||
			!strings.HasPrefix(strings.TrimSpace(errOut), "gpuleak: "+bad+": byte offset") {
			t.Errorf("%s: bad input %v, stderr %q", cmd, ins[1], errOut)
		}
		code, out, _ = run(t, nil, cmd, td+"pytorch/oom_observer.pickle", bad)
		if code != ExitInput || !strings.Contains(out, bad+": NOT READ: ") || !strings.Contains(out, "oom") {
			t.Errorf("%s table: exit %d\n%s", cmd, code, out)
		}
	}
	code, _, errOut = run(t, nil, "analyze", filepath.Join(dir, "missing.pickle"))
	if code != ExitInput || !strings.Contains(errOut, "no such file") {
		t.Fatalf("missing file: %d %q", code, errOut)
	}
	code, _, errOut = run(t, nil, "analyze", dir)
	if code != ExitInput || !strings.Contains(errOut, "is a directory") {
		t.Fatalf("directory: %d %q", code, errOut)
	}
}

func TestFailOn(t *testing.T) {
	path := td + "pytorch/leak_train_loop.pickle"
	code, out, _ := run(t, nil, "analyze", "--fail-on", "leak", path)
	if code != ExitFindings || !strings.Contains(out, "leak") {
		t.Fatalf("--fail-on leak: exit %d", code)
	}
	if code, _, _ := run(t, nil, "analyze", "--fail-on", "leak", "--min-bytes", "100MiB", path); code != ExitOK {
		t.Fatalf("--min-bytes 100MiB: exit %d, want 0 (the leak is 80 MiB)", code)
	}
	if code, _, _ := run(t, nil, "analyze", "--fail-on", "leak", td+"pytorch/clean_train_loop.pickle"); code != ExitOK {
		t.Fatalf("clean run: exit %d", code)
	}
}

func TestTop(t *testing.T) {
	_, out, _ := run(t, nil, "analyze", "--format", "json", "--top", "1", td+"pytorch/leak_train_loop.pickle")
	r := decode(t, out)
	if len(r.Findings) != 1 || r.FindingsTotal != 3 {
		t.Fatalf("%d findings of %d", len(r.Findings), r.FindingsTotal)
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--version"}, ExitOK, "gpuleak test\n"},
		{[]string{"analyze"}, ExitInput, "needs at least one FILE"},
		{[]string{"analyze", "--format", "xml", "x"}, ExitInput, `unknown format "xml"`},
		{[]string{"analyze", "--bogus", "x"}, ExitInput, "unknown flag"},
		{[]string{"analyze", "--min-bytes", "lots", "x"}, ExitInput, "bad --min-bytes"},
		{[]string{"analyze", "--fail-on", "oops", "x"}, ExitInput, "bad --fail-on"},
		{[]string{"analyze", "--hide-frames", "(", "x"}, ExitInput, "bad --hide-frames"},
		{[]string{"analyze", "-", "-"}, ExitInput, "only once"},
		{[]string{"frobnicate"}, ExitInput, "unknown command"},
	}
	for _, c := range cases {
		code, out, errOut := run(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("%v: exit %d, output %q %q; want %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	_, out, _ := run(t, nil, "analyze", "--help")
	for _, want := range []string{"Examples:", "--fail-on", "--hide-frames", "gpuleak.report/v1"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestHostileText(t *testing.T) {
	// A function name holding a newline and a terminal escape cannot forge
	// a table row or colour the terminal.
	code, out, _ := run(t, nil, "analyze", td+"pytorch/synthetic/ansi.pickle")
	if code != ExitOK || strings.Contains(out, "\x1b") || strings.Contains(out, "\n 9  leak") {
		t.Fatalf("exit %d, raw control characters in:\n%s", code, out)
	}
	if !strings.Contains(out, `step\n 9  leak`) {
		t.Errorf("the name is not shown escaped:\n%s", out)
	}
	// Negative sizes are refused, not summed.
	code, _, errOut := run(t, nil, "analyze", td+"pytorch/synthetic/negsize.pickle")
	if code != ExitInput || !strings.Contains(errOut, "want 0 to 1 PiB") {
		t.Fatalf("negative size: exit %d %q", code, errOut)
	}
}

// TestReviewFixes: inputs an adversarial review found mishandled.
func TestReviewFixes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full, _ := os.ReadFile(td + "sanitizer/leak_full.txt")
	snap, _ := os.ReadFile(td + "pytorch/model_reload.pickle")

	// A byte order mark before a sanitizer log: all 8 leaks still found.
	_, out, _ := run(t, nil, "analyze", "--format", "json", write("bom.txt", append([]byte("\xef\xbb\xbf"), full...)))
	var count int
	for _, f := range decode(t, out).Findings {
		if f.Kind == "leak" {
			count += f.Count
		}
	}
	if count != 8 {
		t.Errorf("BOM: %d leaks, want 8", count)
	}

	// A CI log with more than 64 KiB of build output before the report.
	var ci bytes.Buffer
	for i := 0; ci.Len() < 100<<10; i++ {
		fmt.Fprintf(&ci, "[2026-11-30T10:00:00Z] Building CXX object file_%d.cu.o\n", i)
	}
	ci.Write(full)
	if code, out, errOut := run(t, nil, "analyze", write("ci.log", ci.Bytes())); code != ExitOK || !strings.Contains(out, "make_workspace") {
		t.Errorf("long preamble: exit %d %s %s", code, out, errOut)
	}

	// A gzip stream whose checksum is wrong is refused; bytes after the
	// pickle are reported.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(snap)
	zw.Close()
	bad := append([]byte{}, gz.Bytes()...)
	bad[len(bad)-6] ^= 0xff
	if code, _, errOut := run(t, nil, "analyze", write("bad.gz", bad)); code != ExitInput || !strings.Contains(errOut, "invalid checksum") {
		t.Errorf("bad checksum: exit %d %q", code, errOut)
	}
	if code, out, _ := run(t, nil, "analyze", write("two.pickle", append(append([]byte{}, snap...), snap...))); code != ExitOK || !strings.Contains(out, "bytes after the snapshot's end") {
		t.Errorf("trailing pickle: exit %d %s", code, out)
	}

	// A key given twice: CPython keeps the later value, which the stream
	// cannot honour, so the file is refused.
	dup := []byte("\x80\x02}(X\x08\x00\x00\x00segments]X\x08\x00\x00\x00segments]u.")
	if code, _, errOut := run(t, nil, "analyze", write("dup.pickle", dup)); code != ExitInput || !strings.Contains(errOut, `"segments" appears twice`) {
		t.Errorf("duplicate key: exit %d %q", code, errOut)
	}

	// An empty snapshot says so; --min-bytes that leaves nothing says so.
	if _, out, _ := run(t, nil, "analyze", td+"pytorch/synthetic/empty_snap.pickle"); !strings.Contains(out, "holds no segments and no trace entries") {
		t.Errorf("empty snapshot:\n%s", out)
	}
	if _, out, _ := run(t, nil, "analyze", "--min-bytes", "100GiB", td+"pytorch/multi_gpu_leak.pickle"); !strings.Contains(out, "smaller left out") {
		t.Errorf("--min-bytes:\n%s", out)
	}
}
