package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// TestRegistry: the families are asked in the order the registry
// documents (strongest test first, the OOM phrase last: parse/detect's
// order before the registry), and every format gpuleak reads belongs to
// exactly one family. Each family's package declares its own formats,
// so nothing but this test and register holds their string values
// apart: the parse.Format constants declared under parse/*/ (found in
// the source, so that a new family adds none here) are never
// FormatUnknown, distinct across the packages, and each read by a
// family; and a family reads only declared formats.
func TestRegistry(t *testing.T) {
	var names []string
	for _, f := range families {
		names = append(names, f.name)
		if f.sniff == nil || f.analyze == nil {
			t.Errorf("family %s lacks a sniff or an analyze function", f.name)
		}
	}
	want := "pytorch-snapshot pytorch-profiler-trace pytorch-memory-timeline compute-sanitizer nvml pytorch-text"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("families asked in order %q, want %q", got, want)
	}
	declared := declaredFormats(t)
	where := map[parse.Format]string{}
	for _, d := range declared {
		switch {
		case d.value == parse.FormatUnknown:
			t.Errorf("%s: %s is FormatUnknown", d.pos, d.name)
		case where[d.value] != "":
			t.Errorf("%s: %s is %q, as %s declares", d.pos, d.name, d.value, where[d.value])
		case byFormat[d.value] == nil:
			t.Errorf("%s: %s (%q) is read by no family", d.pos, d.name, d.value)
		}
		where[d.value] = d.pos + " " + d.name
	}
	n := 0
	for _, f := range families {
		n += len(f.formats)
		for _, ft := range f.formats {
			if where[ft] == "" {
				t.Errorf("family %s reads %q, which no parse/<family>/ package declares", f.name, ft)
			}
		}
	}
	if n != len(byFormat) || len(byFormat) != len(declared) || len(declared) < len(families) {
		t.Errorf("the families claim %d formats (%d distinct); the packages declare %d", n, len(byFormat), len(declared))
	}
}

// declaredFormat is a parse.Format constant of a family's package.
type declaredFormat struct {
	pos, name string
	value     parse.Format
}

// declaredFormats reads the constants of type parse.Format declared in
// the non-test Go files of ../parse/*/; each must be a string literal.
func declaredFormats(t *testing.T) []declaredFormat {
	t.Helper()
	files, err := filepath.Glob("../parse/*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no family packages under ../parse: %v", err)
	}
	var out []declaredFormat
	fset := token.NewFileSet()
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if !isParseFormat(v.Type) {
					continue
				}
				for i, n := range v.Names {
					pos := fset.Position(n.Pos()).String()
					var lit *ast.BasicLit
					if i < len(v.Values) {
						lit, _ = v.Values[i].(*ast.BasicLit)
					}
					if lit == nil || lit.Kind != token.STRING {
						t.Errorf("%s: %s is not a string literal", pos, n.Name)
						continue
					}
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, declaredFormat{pos, n.Name, parse.Format(s)})
				}
			}
		}
	}
	return out
}

// isParseFormat says whether a declared type is parse.Format.
func isParseFormat(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "parse" && sel.Sel.Name == "Format"
}

// TestRegisterClash: a family that claims a format another family
// already reads, or takes another's order, is refused at registration
// (a programming error, found before main runs), naming both families.
func TestRegisterClash(t *testing.T) {
	saved, savedBy := families, byFormat
	defer func() { families, byFormat = saved, savedBy }()
	for _, c := range []struct {
		f    *family
		want string
	}{
		{&family{name: "copy", order: 99, formats: []parse.Format{nvml.FormatDmon}}, "format nvidia-smi-dmon is claimed by nvml and copy"},
		{&family{name: "copy", order: 50, formats: []parse.Format{"new-format"}}, "families nvml and copy both have order 50"},
	} {
		families = append([]*family(nil), saved...)
		byFormat = map[parse.Format]*family{}
		for k, v := range savedBy {
			byFormat[k] = v
		}
		func() {
			defer func() {
				if got := fmt.Sprint(recover()); !strings.Contains(got, c.want) {
					t.Errorf("register(%s) panicked with %q, want %q", c.f.name, got, c.want)
				}
			}()
			register(c.f)
		}()
	}
}

// TestDetectOrder: where two families' tests both match, the one asked
// first wins. A compute-sanitizer log and nvidia-smi's table that go on
// to print an OOM message are theirs, not the OOM text family's (whose
// test, a phrase anywhere, would claim them if asked first).
func TestDetectOrder(t *testing.T) {
	oom := "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which 1.06 GiB is free.\n"
	for path, want := range map[string]parse.Format{
		"../testdata/sanitizer/leak_full.txt":                 sanitizer.FormatText,
		"../testdata/nvml/pub_pytorch910_nvidia_smi.txt":      nvml.FormatNvidiaSmiText,
		"../testdata/pytorch/memory_summary.txt":              pytorchtext.FormatMemorySummary,
		"../testdata/nvml/leak_exit_nvidia_smi_q_memory.txt":  nvml.FormatNvidiaSmiText,
		"../testdata/pytorch/oom_other_process_traceback.txt": pytorchtext.FormatOOMMessage,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		head := append(data[:min(len(data), 8<<10):min(len(data), 8<<10)], oom...)
		if got := Detect(head); got != want {
			t.Errorf("%s with an OOM message after it: %q, want %q", path, got, want)
		}
	}
}

func TestHeaderlessCSVNeedsFields(t *testing.T) {
	head := []byte("0, 1024, 81920\n1, 2048, 81920\n") // index, memory.used, memory.total: no timestamp to recognise
	var o Options
	if got := o.detect(head); got != parse.FormatUnknown {
		t.Errorf("header-less CSV without --fields: %q, want it unclaimed", got)
	}
	o.NVML.Fields = []string{"index", "memory.used", "memory.total"}
	if got := o.detect(head); got != nvml.FormatQueryGPU {
		t.Errorf("header-less CSV with --fields %v: %q, want %q", o.NVML.Fields, got, nvml.FormatQueryGPU)
	}
}

func testOptions(t *testing.T, use Use) Options {
	t.Helper()
	filter, err := callsite.NewFrameFilter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Use: use, Version: "test", Filter: filter, MinKept: 4}
}

// TestRunProgress: the injected progress callback starts once per input,
// with its name and size, and each start is stopped.
func TestRunProgress(t *testing.T) {
	paths := []string{"../testdata/pytorch/leak_train_loop.pickle", "../testdata/pytorch/oom_error.txt"}
	o := testOptions(t, Analyze)
	var started []string
	stopped := 0
	o.Progress = func(name string, size int64, read func() int64) func() {
		st, err := os.Stat(name)
		if err != nil || size != st.Size() {
			t.Errorf("progress of %s: size %d, want the file's (%v)", name, size, err)
		}
		started = append(started, name)
		return func() {
			if read() <= 0 {
				t.Errorf("%s: stopped with no byte read", name)
			}
			stopped++
		}
	}
	res, err := Run(context.Background(), o, paths)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(started, ",") != strings.Join(paths, ",") || stopped != len(paths) {
		t.Errorf("progress started for %q, stopped %d times: want each of %q once", started, stopped, paths)
	}
	if res.Unread != nil || len(res.Report.Inputs) != 2 || res.Report.FindingsTotal != len(res.Report.Findings) {
		t.Fatalf("unread %v, %d inputs, %d of %d findings", res.Unread, len(res.Report.Inputs), len(res.Report.Findings), res.Report.FindingsTotal)
	}
	// The OOM of oom_error.txt is a finding of the run, made from all
	// inputs after they are read (the cross-input state Run owns).
	oom := 0
	for _, f := range res.Report.Findings {
		if f.Kind == report.KindOOM {
			oom++
		}
	}
	if oom == 0 {
		t.Error("no oom finding from the log's out-of-memory message")
	}
}

// TestRunUnread: an input that cannot be read costs only itself when
// there are others, for every use (trend too: it stopped at the first);
// alone, or with every other also unread, it is an error and no result.
func TestRunUnread(t *testing.T) {
	missing := "../testdata/no-such-input"
	for use, good := range map[Use]string{Analyze: "../testdata/pytorch/oom_error.txt", Postmortem: "../testdata/pytorch/oom_error.txt",
		Trend: "../testdata/nvml/query_gpu.csv"} {
		res, err := Run(context.Background(), testOptions(t, use), []string{missing, good})
		var ie *InputError
		if err != nil || !errors.As(res.Unread, &ie) || len(res.Report.Inputs) != 2 || res.Report.Inputs[0].Error == "" || res.Report.Inputs[1].Error != "" {
			t.Fatalf("use %d: err %v, result %+v: want the good input reported and the missing one listed with its error", use, err, res)
		}
		for _, paths := range [][]string{{missing}, {missing, missing + "2"}} {
			res, err := Run(context.Background(), testOptions(t, use), paths)
			if res != nil || !errors.As(err, &ie) {
				t.Errorf("use %d, %q: result %v, error %v: want an InputError and no result", use, paths, res, err)
			}
		}
	}
}

// TestRunUses: one input, read for each use as its family says.
func TestRunUses(t *testing.T) {
	snap := "../testdata/pytorch/leak_train_loop.pickle"
	_, err := Run(context.Background(), testOptions(t, Trend), []string{snap})
	if err == nil || !strings.Contains(err.Error(), "not an NVML sample log: use gpuleak analyze") {
		t.Errorf("trend of a snapshot: %v, want it refused", err)
	}
	res, err := Run(context.Background(), testOptions(t, Trend), []string{"../testdata/nvml/query_gpu.csv"})
	if err != nil || len(res.Report.Findings) == 0 || res.Report.Findings[0].Kind != report.KindTrend {
		t.Fatalf("trend of an nvidia-smi log: %v, %+v: want trend findings", err, res)
	}
	// For the postmortem, an NVML log gives processes, not findings; the
	// snapshot's leak analysis gives no finding either, only OOMs do.
	res, err = Run(context.Background(), testOptions(t, Postmortem), []string{snap, "../testdata/nvml/query_apps.csv"})
	if err != nil || len(res.Report.Inputs) != 2 {
		t.Fatalf("postmortem: %v, %+v", err, res)
	}
	for _, f := range res.Report.Findings {
		if f.Kind != report.KindOOM && f.Kind != report.KindFragmentation {
			t.Errorf("postmortem finding of kind %s", f.Kind)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := testOptions(t, Analyze)
	o.Progress = func(string, int64, func() int64) func() {
		t.Error("an input was read after the context was done")
		return func() {}
	}
	if _, err := Run(ctx, o, []string{"../testdata/pytorch/oom_error.txt"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestRunXPUTrace: a profiler trace of an Intel GPU (Device Type 12) is
// analysed, not called all CPU memory: the leak of the CUDA original is
// reported, and a warning names the XPU.
func TestRunXPUTrace(t *testing.T) {
	res, err := Run(context.Background(), testOptions(t, Analyze), []string{"../testdata/kineto/s31_trace_xpu_devtype12.json.gz"})
	if err != nil {
		t.Fatal(err)
	}
	leaks := 0
	for _, f := range res.Report.Findings {
		if f.Kind == report.KindLeak {
			leaks++
		}
	}
	ws := strings.Join(res.Report.Inputs[0].Warnings, "\n")
	if leaks != 1 || strings.Contains(ws, "all of CPU memory") || !strings.Contains(ws, "XPU") {
		t.Errorf("%d leaks, warnings %q; want 1 leak, the XPU named, no claim of CPU memory only", leaks, ws)
	}
}

// TestRunUnknownTotals: a trace without Total Allocated and Total
// Reserved (PyTorch 1.8/1.9) gives null active and reserved bytes in
// the report, not 0; a snapshot's stay numbers.
func TestRunUnknownTotals(t *testing.T) {
	res, err := Run(context.Background(), testOptions(t, Analyze), []string{"../testdata/kineto/s31_trace_pt19_style.json.gz", "../testdata/pytorch/leak_train_loop.pickle"})
	if err != nil {
		t.Fatal(err)
	}
	old, snap := res.Report.Inputs[0].Devices[0], res.Report.Inputs[1].Devices[0]
	if old.ActiveBytes != nil || old.ReservedBytes != nil {
		t.Errorf("trace: active %v, reserved %v; want both unknown (nil)", old.ActiveBytes, old.ReservedBytes)
	}
	if snap.ActiveBytes == nil || snap.ReservedBytes == nil || *snap.ReservedBytes == 0 {
		t.Errorf("snapshot: active %v, reserved %v; want its segments' figures", snap.ActiveBytes, snap.ReservedBytes)
	}
}

// TestRunWindowsTrace: the fixture's trace as Kineto wrote it on Windows
// before mid-2023, its Python frames' paths with unescaped backslashes
// (pytorch/kineto#617), is the same run: it gives the same findings (kind,
// bytes, allocations, site function and base name), not an invalid-JSON
// error. The rewrite changes only the python_function names.
func TestRunWindowsTrace(t *testing.T) {
	src, err := os.ReadFile("../testdata/pytorch/kineto_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`"cat": "python_function", "name": "([^"(]*)\(`)
	n := 0
	win := name.ReplaceAllFunc(src, func(m []byte) []byte {
		n++
		path := name.FindSubmatch(m)[1]
		p := `C:\Users\me\train\` + strings.ReplaceAll(string(path), "/", `\`)
		if bytes.HasPrefix(path, []byte("torch/")) {
			p = `C:\Python310\lib\site-packages\` + strings.ReplaceAll(string(path), "/", `\`)
		}
		return []byte(`"cat": "python_function", "name": "` + p + `(`)
	})
	if n < 100 {
		t.Fatalf("%d python_function names rewritten; the fixture holds 1886", n)
	}
	path := filepath.Join(t.TempDir(), "win_trace.json")
	if err := os.WriteFile(path, win, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := func(p string) []string {
		res, err := Run(context.Background(), testOptions(t, Analyze), []string{p})
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Report.Inputs[0].Error; e != "" {
			t.Fatalf("%s not read: %s", p, e)
		}
		var out []string
		for _, f := range res.Report.Findings {
			out = append(out, fmt.Sprintf("%s %d %d %s %s", f.Kind, f.Bytes, f.Count, f.Site.Function, filepath.Base(strings.ReplaceAll(f.Site.File, `\`, "/"))))
		}
		return out
	}
	linux, windows := sum("../testdata/pytorch/kineto_trace.json"), sum(path)
	if len(linux) == 0 || strings.Join(linux, "\n") != strings.Join(windows, "\n") {
		t.Errorf("Windows trace's findings\n%s\nwant the Linux trace's\n%s", strings.Join(windows, "\n"), strings.Join(linux, "\n"))
	}
}
