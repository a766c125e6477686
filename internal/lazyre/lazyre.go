// Package lazyre holds regular expressions that compile on first use, not
// at program start: gpuleak's parsers and analyses declare some eighty at
// package level, and compiling them all in every run cost about 3 ms of
// each start (GODEBUG=inittrace=1), though one input family uses a few.
package lazyre

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync"
)

// Regexp is a regexp.Regexp compiled by its first method call. Its
// methods are those of regexp.Regexp of the same names; an expression that
// does not compile panics there, as regexp.MustCompile would at start
// (each package's tests run its expressions).
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
	memo *memo // MatchString's results, when made by NewMemo

	filtOnce sync.Once
	filt     *filter // literals a match must hold (literals.go); nil: none known

	progOnce sync.Once
	prog     *syntax.Prog // for StartsMatch (prefix.go)
}

// memo remembers MatchString's result for up to maxMemo distinct strings.
type memo struct {
	mu sync.RWMutex
	m  map[string]bool
}

// maxMemo bounds the strings a memoising Regexp remembers (about 6 MB of
// keys at 100 bytes each); past it, strings are matched each time.
const maxMemo = 1 << 16

// New returns the Regexp of expr (RE2 syntax, as regexp.Compile).
func New(expr string) *Regexp {
	l := &Regexp{expr: expr}
	mu.Lock()
	made = append(made, l)
	mu.Unlock()
	return l
}

// NewMemo is New for an expression matched many times against a few
// distinct strings (the file and function names of stack frames: a
// snapshot's 100,000 stacks share a few hundred of each): MatchString
// remembers each string's result, so the expression runs once per
// distinct string. It is safe for concurrent use.
func NewMemo(expr string) *Regexp {
	l := New(expr)
	l.memo = &memo{m: map[string]bool{}}
	return l
}

var (
	mu   sync.Mutex
	made []*Regexp // every New, for CheckAll
)

// CheckAll compiles every expression New has made so far and returns the
// first error: a test of a program that links all its packages runs it,
// so that an expression used only on a rare input cannot panic there.
func CheckAll() error {
	mu.Lock()
	all := append([]*Regexp(nil), made...)
	mu.Unlock()
	for _, l := range all {
		if _, err := regexp.Compile(l.expr); err != nil {
			return err
		}
	}
	return nil
}

// Count is how many expressions New has made.
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return len(made)
}

// Re returns the compiled expression.
func (l *Regexp) Re() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// filter returns the expression's filter, derived on first use.
func (l *Regexp) filter() *filter {
	l.filtOnce.Do(func() { l.filt = newFilter(l.expr) })
	return l.filt
}

// String returns the source text of the expression.
func (l *Regexp) String() string { return l.expr }

// The methods below first ask the filter: a string holding none of the
// literals every match needs has no match, whatever the method.

func (l *Regexp) Match(b []byte) bool { return l.filter().mayBytes(b) && l.Re().Match(b) }
func (l *Regexp) MatchString(s string) bool {
	if !l.filter().may(s) {
		return false
	}
	m := l.memo
	if m == nil {
		return l.Re().MatchString(s)
	}
	m.mu.RLock()
	v, ok := m.m[s]
	m.mu.RUnlock()
	if ok {
		return v
	}
	v = l.Re().MatchString(s)
	m.mu.Lock()
	if len(m.m) < maxMemo {
		m.m[s] = v
	}
	m.mu.Unlock()
	return v
}
func (l *Regexp) FindSubmatch(b []byte) [][]byte {
	if !l.filter().mayBytes(b) {
		return nil
	}
	return l.Re().FindSubmatch(b)
}
func (l *Regexp) FindStringSubmatch(s string) []string {
	if !l.filter().may(s) {
		return nil
	}
	return l.Re().FindStringSubmatch(s)
}
func (l *Regexp) FindStringSubmatchIndex(s string) []int {
	if !l.filter().may(s) {
		return nil
	}
	return l.Re().FindStringSubmatchIndex(s)
}
func (l *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte {
	if !l.filter().mayBytes(b) {
		return nil
	}
	return l.Re().FindAllSubmatch(b, n)
}
func (l *Regexp) ReplaceAllString(src, repl string) string {
	if !l.filter().may(src) {
		return src
	}
	return l.Re().ReplaceAllString(src, repl)
}

// Of wraps an expression compiled already (a user's pattern, whose error
// was reported when it was compiled).
func Of(re *regexp.Regexp) *Regexp {
	l := &Regexp{expr: re.String(), re: re}
	l.once.Do(func() {})
	return l
}

// CheckFilter returns an error naming the first expression New has made
// that matches s though s holds none of the literals its filter asks for:
// a filter that would have answered s wrongly (a test runs it over the
// inputs in testdata).
func CheckFilter(s string) error {
	mu.Lock()
	all := append([]*Regexp(nil), made...)
	mu.Unlock()
	for _, l := range all {
		f := l.filter()
		if f != nil && !f.may(s) && l.Re().MatchString(s) {
			return fmt.Errorf("%q matches %q, which holds none of its filter's literals %q", l.expr, s, f.lits)
		}
	}
	return nil
}
