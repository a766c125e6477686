package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewrite rewrites a file written against the old flat package: each
// analyze.X goes to its new package under its new name, a package name
// the file already uses (here the parse package "sanitizer" and a
// function "run" declared in another file of the package) is imported
// under an "an" alias, the old import goes, and a second run changes
// nothing.
func TestRewrite(t *testing.T) {
	m, err := readMap("analyze_split.map")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := `package cmd

import (
	"fmt"

	"github.com/gpuleak/gpuleak/analyze"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
)

func f() {
	var k analyze.SiteKind = analyze.Leak
	a := analyze.NewSanitizerAnalyzer(analyze.SanitizerOptions{})
	n, _ := analyze.JoinRun(analyze.ReservedSeries{}, "", nil)
	fmt.Println(k, a, n, sanitizer.FramePython)
}
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package cmd\n\nfunc run() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteTrees(m, []string{dir}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.go"))
	for _, want := range []string{
		`var k callsite.Kind = callsite.Leak`,
		`a := ansanitizer.NewAnalyzer(ansanitizer.Options{})`,
		`n, _ := anrun.Join(anrun.ReservedSeries{}, "", nil)`,
		`sanitizer.FramePython`,
		`"github.com/gpuleak/gpuleak/analyze/callsite"`,
		`ansanitizer "github.com/gpuleak/gpuleak/analyze/sanitizer"`,
		`anrun "github.com/gpuleak/gpuleak/analyze/run"`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), `"github.com/gpuleak/gpuleak/analyze"`) {
		t.Errorf("the old import is still there:\n%s", got)
	}
	if err := rewriteTrees(m, []string{dir}); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "a.go"))
	if string(again) != string(got) {
		t.Errorf("a second run changed the file:\n%s", again)
	}
}

// TestRewriteUnmapped: a name the map does not know is an error that
// names the file, line and name, and the file is left as it was.
func TestRewriteUnmapped(t *testing.T) {
	m, err := readMap("analyze_split.map")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := "package x\n\nimport \"github.com/gpuleak/gpuleak/analyze\"\n\nvar _ = analyze.NoSuchName\n"
	p := filepath.Join(dir, "a.go")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	err = rewriteTrees(m, []string{dir})
	if err == nil || !strings.Contains(err.Error(), "a.go:5:9: analyze.NoSuchName is not in the map") {
		t.Errorf("error = %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != src {
		t.Errorf("the file changed:\n%s", got)
	}
}

// TestRewritePartial rewrites files written against the central list of
// formats in parse with parse_formats.map, a partial move (keep-rest):
// the moved names go to their families' packages, a name the map does
// not list (parse.FormatUnknown, parse.Open) stays, and so does the
// parse import while one is left; an import the file already has is
// reused under its name; a package name the file uses otherwise is
// imported under the map's alias ("p"); comments follow the names.
// Inside a family's own package a moved name becomes bare, while its
// external test package imports it. A second run changes nothing.
func TestRewritePartial(t *testing.T) {
	m, err := readMap("parse_formats.map")
	if err != nil {
		t.Fatal(err)
	}
	if !m.keepRest || m.alias != "p" {
		t.Fatalf("keep-rest %v, alias %q: want true, \"p\"", m.keepRest, m.alias)
	}
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module github.com/gpuleak/gpuleak\n",
		"pipeline/a.go": `package pipeline

import (
	"github.com/gpuleak/gpuleak/parse"
	sanitizer "github.com/gpuleak/gpuleak/parse/sanitizer"
)

// f reads parse.FormatPynvmlJSONL logs; parse.Format stays.
func f(kineto int) []parse.Format {
	_ = sanitizer.Sniff
	return []parse.Format{parse.FormatUnknown, parse.FormatNvidiaSmiDmon, parse.FormatSanitizer, parse.FormatKinetoTrace}
}
`,
		"pipeline/b.go": `package pipeline

import "github.com/gpuleak/gpuleak/parse"

var g = parse.FormatOOMText
`,
		"parse/nvml/c.go": `package nvml

import "github.com/gpuleak/gpuleak/parse"

// h is parse.FormatNvidiaSmiPmon or parse.FormatUnknown.
func h(ok bool) parse.Format {
	if ok {
		return parse.FormatNvidiaSmiPmon
	}
	return parse.FormatUnknown
}
`,
		"parse/nvml/c_test.go": `package nvml_test

import "github.com/gpuleak/gpuleak/parse"

var _ = parse.FormatGpustatText
`,
	}
	for name, src := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{filepath.Join(root, "pipeline"), filepath.Join(root, "parse")}
	if err := rewriteTrees(m, dirs); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"pipeline/a.go": {
			`// f reads nvml.FormatPynvmlJSONL logs; parse.Format stays.`,
			`[]parse.Format{parse.FormatUnknown, nvml.FormatDmon, sanitizer.FormatText, pkineto.FormatTrace}`,
			`"github.com/gpuleak/gpuleak/parse"`,
			`"github.com/gpuleak/gpuleak/parse/nvml"`,
			`pkineto "github.com/gpuleak/gpuleak/parse/kineto"`,
		},
		"pipeline/b.go": {
			`import "github.com/gpuleak/gpuleak/parse/pytorchtext"`,
			`var g = pytorchtext.FormatOOMMessage`,
		},
		"parse/nvml/c.go": {
			`// h is FormatPmon or parse.FormatUnknown.`,
			`return FormatPmon`,
			`return parse.FormatUnknown`,
		},
		"parse/nvml/c_test.go": {
			`import "github.com/gpuleak/gpuleak/parse/nvml"`,
			`var _ = nvml.FormatGpustatText`,
		},
	}
	notWant := map[string][]string{
		"pipeline/a.go":        {`parse/sanitizer"` + "\n\t" + `"github.com/gpuleak/gpuleak/parse/sanitizer"`},
		"pipeline/b.go":        {`"github.com/gpuleak/gpuleak/parse"`},
		"parse/nvml/c.go":      {`parse/nvml"`, `nvml.`},
		"parse/nvml/c_test.go": {`"github.com/gpuleak/gpuleak/parse"`},
	}
	got := map[string]string{}
	for name, subs := range want {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(b)
		for _, s := range subs {
			if !strings.Contains(got[name], s) {
				t.Errorf("%s lacks %q:\n%s", name, s, b)
			}
		}
		for _, s := range notWant[name] {
			if strings.Contains(got[name], s) {
				t.Errorf("%s holds %q:\n%s", name, s, b)
			}
		}
	}
	if n := strings.Count(got["pipeline/a.go"], `"github.com/gpuleak/gpuleak/parse/sanitizer"`); n != 1 {
		t.Errorf("pipeline/a.go imports parse/sanitizer %d times, want once (its own import reused):\n%s", n, got["pipeline/a.go"])
	}
	if err := rewriteTrees(m, dirs); err != nil {
		t.Fatal(err)
	}
	for name, before := range got {
		if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != before {
			t.Errorf("a second run changed %s:\n%s", name, b)
		}
	}
}

// TestReadMapDirectives: keep-rest and alias are read; a malformed line
// is an error naming the file and line.
func TestReadMapDirectives(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.map")
	if err := os.WriteFile(p, []byte("from x/old\nalias q\nA x/new B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := readMap(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.keepRest || m.alias != "q" || m.names["A"] != (target{"x/new", "B"}) {
		t.Errorf("map = %+v", m)
	}
	if err := os.WriteFile(p, []byte("from x/old\nkeep-rest now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readMap(p); err == nil || !strings.Contains(err.Error(), "m.map:2:") {
		t.Errorf("error = %v, want one at m.map:2", err)
	}
}
