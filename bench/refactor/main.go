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
// "OldName NEWIMPORTPATH [NewName]"; # starts a comment. Two optional
// lines change how the rest is read:
//
//	keep-rest     the names the map does not list stay in the old package
//	              (a partial move: they are left as they are, and the old
//	              import goes only from a file that no longer uses it);
//	              without it, such a name is an error
//	alias PREFIX  a new package whose name a file already uses is imported
//	              as PREFIX+name (default "an")
//
// A name moved into the package of the file that uses it becomes a bare
// name, with no import. A file that already imports the new package keeps
// its name for it. References in comments (OLD.Name, [OLD.Name]) are
// rewritten too, so that doc links follow the names.
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
	from     string
	names    map[string]target
	keepRest bool   // unlisted names stay in the old package
	alias    string // prefix of a new package's name where the name is taken
}

func readMap(file string) (*mapping, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m := &mapping{names: map[string]target{}, alias: "an"}
	for i, line := range strings.Split(string(b), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case f[0] == "from" || f[0] == "keep-rest" || f[0] == "alias":
			switch {
			case f[0] == "from" && len(f) == 2:
				m.from = f[1]
			case f[0] == "keep-rest" && len(f) == 1:
				m.keepRest = true
			case f[0] == "alias" && len(f) == 2:
				m.alias = f[1]
			default:
				return nil, fmt.Errorf("%s:%d: want \"from IMPORTPATH\", \"keep-rest\" or \"alias PREFIX\"", file, i+1)
			}
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
			return nil, fmt.Errorf("%s:%d: want \"OldName IMPORTPATH [NewName]\", \"from IMPORTPATH\", \"keep-rest\" or \"alias PREFIX\"", file, i+1)
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
			if err := rewriteFile(m, p, pkgNames(filepath.Dir(p)), importPath(filepath.Dir(p))); err != nil {
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

// importPath is the import path of the package in dir, from the module
// line of the nearest go.mod above it; "" when there is none.
func importPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			g := moduleRe.FindSubmatch(b)
			if g == nil {
				return ""
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return ""
			}
			return path.Join(string(g[1]), filepath.ToSlash(rel))
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

var moduleRe = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?\s*$`)

// rewriteFile points p's OLD.Name selectors, and the OLD.Name references
// in its comments, at the new packages. pkgLevel is the names declared at
// the top level of p's package; own is its import path, where a moved
// name becomes bare.
func rewriteFile(m *mapping, p string, pkgLevel map[string]bool, own string) error {
	src, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
	if err != nil {
		return err
	}
	if strings.HasSuffix(f.Name.Name, "_test") {
		own = "" // an external test package imports its package as any other
	}
	var old *ast.ImportSpec
	oldName := path.Base(m.from)
	local := map[string]string{} // import path -> its name in this file
	for _, s := range f.Imports {
		v, _ := strconv.Unquote(s.Path.Value)
		name := path.Base(v)
		if s.Name != nil {
			name = s.Name.Name
		}
		if v == m.from {
			old, oldName = s, name
		} else if name != "_" && name != "." {
			local[v] = name
		}
	}
	imported := map[string]bool{}
	for v := range local {
		imported[v] = true
	}
	taken := namesIn(f, oldName)
	for n := range pkgLevel {
		taken[n] = true
	}
	var edits []edit
	var unmapped []string
	kept := 0 // OLD.Name selectors left: the old import stays
	if old != nil {
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
			switch {
			case !ok && m.keepRest:
				kept++
			case !ok:
				unmapped = append(unmapped, fmt.Sprintf("%s: %s.%s is not in the map", fset.Position(sel.Pos()), oldName, sel.Sel.Name))
			case t.pkg == own:
				edits = append(edits, edit{fset.Position(sel.Pos()).Offset, fset.Position(sel.End()).Offset, t.name})
			default:
				name := localName(local, taken, t.pkg, m.alias)
				edits = append(edits, edit{fset.Position(sel.Pos()).Offset, fset.Position(sel.End()).Offset, name + "." + t.name})
			}
			return false
		})
	}
	if len(unmapped) > 0 {
		return errors.New(strings.Join(unmapped, "\n"))
	}
	code := len(edits)
	edits = append(edits, commentEdits(m, fset, f, oldName, own, local)...)
	if len(edits) == 0 {
		return nil
	}
	added := map[string]string{}
	for v, n := range local {
		if !imported[v] && v != own {
			added[v] = n
		}
	}
	if code > 0 {
		start := fset.Position(old.Pos()).Offset
		end := fset.Position(old.End()).Offset
		start = bytes.LastIndexByte(src[:start], '\n') + 1
		if nl := bytes.IndexByte(src[end:], '\n'); nl >= 0 {
			end += nl + 1
		}
		single := bytes.HasPrefix(bytes.TrimSpace(src[start:end]), []byte("import "))
		if kept == 0 {
			// The old import goes: every use of it was rewritten.
			edits = append(edits, edit{start, end, importLines(added, single)})
		} else if len(added) > 0 {
			edits = append(edits, edit{end, end, importLines(added, single)})
		}
	}
	return writeEdited(p, src, edits)
}

// commentEdits rewrites OLD.Name in f's comments, for the names the map
// moved, to the qualifier the code uses (bare in the name's own package;
// the package's last path element where the file does not import it).
func commentEdits(m *mapping, fset *token.FileSet, f *ast.File, oldName, own string, local map[string]string) []edit {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(oldName) + `\.(\w+)\b`)
	var edits []edit
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			base := fset.Position(c.Slash).Offset
			for _, g := range re.FindAllStringSubmatchIndex(c.Text, -1) {
				if g[0] > 0 && c.Text[g[0]-1] == '.' {
					continue // x.parse.Name: another selector
				}
				t, ok := m.names[c.Text[g[2]:g[3]]]
				if !ok {
					continue
				}
				text := t.name
				if t.pkg != own {
					q, ok := local[t.pkg]
					if !ok {
						q = path.Base(t.pkg)
					}
					text = q + "." + t.name
				}
				edits = append(edits, edit{base + g[0], base + g[1], text})
			}
		}
	}
	return edits
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

// localName is the name pkg is imported under in a file: the name of
// its import, or its last path element, or alias+that element where the
// file already uses the name.
func localName(local map[string]string, taken map[string]bool, pkg, alias string) string {
	if n, ok := local[pkg]; ok {
		return n
	}
	n := path.Base(pkg)
	if taken[n] {
		n = alias + n
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
