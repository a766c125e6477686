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
