// Command refactor rewrites Go sources after a package split: every
// reference to a name the split moved is pointed at its new package, and
// the import lines are fixed to match. It is re-runnable: a tree already
// rewritten is left as it is, so branches written against the old names
// can be rewritten when they are merged.
//
// Usage (from the repository root):
//
//	go run ./bench/refactor -map bench/refactor/analyze_split.map DIR...
//	    rewrites OLD.Name selectors (OLD: the map's "from" import path) in
//	    every .go file under each DIR (testdata and hidden folders skipped).
//	go build ./analyze/... 2>&1 | go run ./bench/refactor -map M -undefined
//	    qualifies the names that the compiler reports undefined
//	    ("FILE:LINE:COL: undefined: Name") in files moved into a new
//	    package, with the package the map gives the name.
//
// The map file holds "from IMPORTPATH" once, then one line per moved name:
// "OldName NEWIMPORTPATH [NewName]"; # starts a comment.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type target struct{ pkg, name string }

type mapping struct {
	from  string
	names map[string]target
}

func readMap(file string) (*mapping, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m := &mapping{names: map[string]target{}}
	for i, line := range strings.Split(string(b), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case f[0] == "from" && len(f) == 2:
			m.from = f[1]
		case len(f) == 2 || len(f) == 3:
			t := target{pkg: f[1], name: f[0]}
			if len(f) == 3 {
				t.name = f[2]
			}
			if _, dup := m.names[f[0]]; dup {
				return nil, fmt.Errorf("%s:%d: %s mapped twice", file, i+1, f[0])
			}
			m.names[f[0]] = t
		default:
			return nil, fmt.Errorf("%s:%d: want \"OldName IMPORTPATH [NewName]\" or \"from IMPORTPATH\"", file, i+1)
		}
	}
	if m.from == "" {
		return nil, fmt.Errorf("%s: no \"from IMPORTPATH\" line", file)
	}
	return m, nil
}

// edit replaces src[off:end] with text.
type edit struct {
	off, end int
	text     string
}

func main() {
	mapFile := flag.String("map", "bench/refactor/analyze_split.map", "the mapping file")
	undefined := flag.Bool("undefined", false, "read compiler errors on stdin and qualify the undefined names")
	flag.Parse()
	m, err := readMap(*mapFile)
	if err == nil {
		if *undefined {
			err = qualifyUndefined(m, os.Stdin)
		} else {
			err = rewriteTrees(m, flag.Args())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "refactor:", err)
		os.Exit(1)
	}
}

func rewriteTrees(m *mapping, dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("no directory given")
	}
	var failed []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			if err := rewriteFile(m, p, pkgNames(filepath.Dir(p))); err != nil {
				failed = append(failed, err.Error())
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	return nil
}

// rewriteFile points p's OLD.Name selectors at the new packages.
func rewriteFile(m *mapping, p string, pkgLevel map[string]bool) error {
	src, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
	if err != nil {
		return err
	}
	var old *ast.ImportSpec
	oldName := path.Base(m.from)
	for _, s := range f.Imports {
		if v, _ := strconv.Unquote(s.Path.Value); v == m.from {
			old = s
			if s.Name != nil {
				oldName = s.Name.Name
			}
		}
	}
	if old == nil {
		return nil
	}
	taken := namesIn(f, oldName)
	for n := range pkgLevel {
		taken[n] = true
	}
	local := map[string]string{} // new import path -> its name in this file
	var edits []edit
	var unmapped []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || x.Name != oldName || x.Obj != nil {
			return true
		}
		t, ok := m.names[sel.Sel.Name]
		if !ok {
			unmapped = append(unmapped, fmt.Sprintf("%s: %s.%s is not in the map", fset.Position(sel.Pos()), oldName, sel.Sel.Name))
			return false
		}
		name := localName(local, taken, t.pkg)
		edits = append(edits, edit{fset.Position(sel.Pos()).Offset, fset.Position(sel.End()).Offset, name + "." + t.name})
		return false
	})
	if len(unmapped) > 0 {
		return errors.New(strings.Join(unmapped, "\n"))
	}
	if len(edits) == 0 {
		return nil
	}
	// The old import goes: every use of it was rewritten.
	start := fset.Position(old.Pos()).Offset
	end := fset.Position(old.End()).Offset
	start = bytes.LastIndexByte(src[:start], '\n') + 1
	if nl := bytes.IndexByte(src[end:], '\n'); nl >= 0 {
		end += nl + 1
	}
	single := bytes.HasPrefix(bytes.TrimSpace(src[start:end]), []byte("import "))
	edits = append(edits, edit{start, end, importLines(local, single)})
	return writeEdited(p, src, edits)
}

// pkgNames is the names declared at the top level of the .go files in
// dir: a new package name in one file must not clash with them either.
func pkgNames(dir string) map[string]bool {
	names := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, p := range files {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// namesIn is every identifier in f other than the old package's
// qualifier, and the names of f's imports: a new package name must not
// shadow or be shadowed by one of them.
func namesIn(f *ast.File, oldName string) map[string]bool {
	taken := map[string]bool{}
	for _, s := range f.Imports {
		v, _ := strconv.Unquote(s.Path.Value)
		if s.Name != nil {
			taken[s.Name.Name] = true
		} else {
			taken[path.Base(v)] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == oldName && x.Obj == nil {
				return false
			}
		}
		if id, ok := n.(*ast.Ident); ok && id.Name != oldName {
			taken[id.Name] = true
		}
		return true
	})
	return taken
}

// localName is the name pkg is imported under in a file: its last path
// element, or "an"+that element where the file already uses the name.
func localName(local map[string]string, taken map[string]bool, pkg string) string {
	if n, ok := local[pkg]; ok {
		return n
	}
	n := path.Base(pkg)
	if taken[n] {
		n = "an" + n
	}
	local[pkg] = n
	taken[n] = true
	return n
}

func importLines(local map[string]string, single bool) string {
	var pkgs []string
	for p := range local {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var b strings.Builder
	for _, p := range pkgs {
		if single {
			b.WriteString("import ")
		} else {
			b.WriteString("\t")
		}
		if local[p] != path.Base(p) {
			b.WriteString(local[p] + " ")
		}
		b.WriteString(strconv.Quote(p) + "\n")
	}
	return b.String()
}

func writeEdited(p string, src []byte, edits []edit) error {
	sort.Slice(edits, func(i, j int) bool { return edits[i].off > edits[j].off })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.off], append([]byte(e.text), out[e.end:]...)...)
	}
	formatted, err := format.Source(out)
	if err != nil {
		return fmt.Errorf("%s: the rewritten file does not parse: %w", p, err)
	}
	return os.WriteFile(p, formatted, 0o644)
}

var undefinedRe = regexp.MustCompile(`^(.+\.go):(\d+):(\d+): undefined: (\w+)$`)

// qualifyUndefined reads compiler errors and qualifies each undefined
// name the map knows with its package, adding the import.
func qualifyUndefined(m *mapping, r io.Reader) error {
	type fix struct {
		line, col int
		name      string
	}
	byFile := map[string][]fix{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		g := undefinedRe.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if g == nil {
			continue
		}
		line, _ := strconv.Atoi(g[2])
		col, _ := strconv.Atoi(g[3])
		byFile[g[1]] = append(byFile[g[1]], fix{line, col, g[4]})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for file, fixes := range byFile {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, src, 0)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, s := range f.Imports {
			v, _ := strconv.Unquote(s.Path.Value)
			have[v] = true
		}
		tf := fset.File(f.Pos())
		var edits []edit
		add := map[string]string{}
		for _, x := range fixes {
			t, ok := m.names[x.name]
			if !ok {
				fmt.Fprintf(os.Stderr, "%s:%d:%d: %s is not in the map\n", file, x.line, x.col, x.name)
				continue
			}
			off := tf.Offset(tf.LineStart(x.line)) + x.col - 1
			if !bytes.HasPrefix(src[off:], []byte(x.name)) {
				return fmt.Errorf("%s:%d:%d: %s is not there", file, x.line, x.col, x.name)
			}
			edits = append(edits, edit{off, off + len(x.name), path.Base(t.pkg) + "." + t.name})
			if !have[t.pkg] {
				add[t.pkg] = path.Base(t.pkg)
			}
		}
		if len(add) > 0 {
			off, text := importInsert(fset, f, src)
			edits = append(edits, edit{off, off, text + importLines(add, singleImports(f))})
		}
		if err := writeEdited(file, src, edits); err != nil {
			return err
		}
	}
	return nil
}

// importInsert is where new imports go: after the last import, in its
// block, or after the package clause when there are none.
func importInsert(fset *token.FileSet, f *ast.File, src []byte) (int, string) {
	if len(f.Imports) == 0 {
		off := fset.Position(f.Name.End()).Offset
		return off, "\n\n"
	}
	last := f.Imports[len(f.Imports)-1]
	off := fset.Position(last.End()).Offset
	if nl := bytes.IndexByte(src[off:], '\n'); nl >= 0 {
		off += nl + 1
	}
	return off, ""
}

// singleImports says whether f's imports are "import x" lines rather
// than a parenthesized block (then new ones are lines of their own too).
func singleImports(f *ast.File) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && g.Lparen.IsValid() {
			return false
		}
	}
	return true
}
