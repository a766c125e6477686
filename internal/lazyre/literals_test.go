package lazyre

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The literals derived for expressions of each shape: a concatenation's
// longest literal, an alternation's union, none where a branch or the
// whole may match without a literal, none for an expression anchored at
// the start (the regexp package tries it at one position only), folded
// literals lower-cased, and none for folded k or s (the Kelvin sign and
// the long s fold to them) or U+FFFD (what an invalid byte reads as).
func TestFilterLiterals(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string // nil: no filter
		fold bool
	}{
		{`[/\\]torch[/\\]nn[/\\]modules[/\\]module\.py$`, []string{"module.py"}, false},
		{`(^|/)(torch|c10|aten)/`, []string{"torch", "c10", "aten"}, false},
		{`foo|bar|baz`, []string{"foo", "ba"}, false}, // the parser factors ba(r|z)
		{`(abc)+x`, []string{"abc"}, false},
		{`x(abc)*`, []string{"x"}, false},
		{`(abc)?`, nil, false},
		{`a|.*`, nil, false},
		{`\d+ MiB`, []string{" MiB"}, false},
		{`^PyTorch`, nil, false},
		{`^a|^b`, nil, false},
		{`(?i)python3`, []string{"python3"}, true},
		{`(?i)LIB/x`, []string{"lib/x"}, true},
		{`(?i)ask`, nil, false},
		{`a\x{FFFD}b`, nil, false},
		{`[ab]`, nil, false},
	} {
		l := New(c.expr)
		f := l.filter()
		var got []string
		if f != nil {
			got = f.lits
		}
		if !slices.Equal(got, c.want) || f != nil && f.fold != c.fold {
			t.Errorf("%s: literals %q (filter %v), want %q fold %v", c.expr, got, f, c.want, c.fold)
		}
	}
}

// A filter never turns a match away: random strings built from pieces of
// each expression's literals (and their case changes, the Kelvin sign, the
// long s, an invalid byte) give the compiled expression's answer through
// every method.
func TestFilterNeverRejectsAMatch(t *testing.T) {
	cases := []struct {
		expr  string
		seeds []string // strings that match
	}{
		{`(^|[/\\])(torch|functorch|c10|aten)[/\\]`, []string{"/x/torch/nn.py", `C:\aten\x`}},
		{`[/\\]lib[/\\]python3\.[0-9]+t?[/\\]|(?i)[/\\]python3[0-9]*[/\\]lib[/\\]|(?i)[/\\]cpython-3\.[0-9]+[^/\\]*[/\\]lib[/\\]`,
			[]string{"/usr/lib/python3.12/x.py", `C:\Python312\Lib\x.py`, "/u/cpython-3.12.1-linux/lib/x.py"}},
		{`(torch::unwind::|CapturedTraceback|CUDACachingAllocator|CachingAllocator::|^_?Py[A-Z_]|^(__libc_|_start$|clone3?$))`,
			[]string{"torch::unwind::x", "_PyEval", "clone3", "a CachingAllocator::b"}},
		{`(\d{1,12})\s*MiB\s*/\s*(\d{1,12})\s*MiB`, []string{"| 12MiB / 80MiB |"}},
		{`(?i)</?(?:p|br|code)\b[^>]*>`, []string{"<BR/>", "</code>"}},
		{`(?i)mask|STACK`, []string{"MASK", "stack"}},
		{`(a|bc)+(d|e)`, []string{"abcd"}},
		{`x{2,4}y`, []string{"xxxy"}},
	}
	pieces := []string{"/", "\\", "torch", "TORCH", "c10", "lib", "LIB", "python3", "Python3", ".1", "1", "t",
		"cpython-3.", "::", "CachingAllocator", "::unwind", "_Py", "Py", "A", "clone", "3", "_start", "MiB", " ",
		"<", ">", "p", "P", "br", "code", "ma", "sk", "\u212a", "\u017f", "tac", "\xff", "a", "bc", "d", "e", "x", "y"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		l, re := New(c.expr), regexp.MustCompile(c.expr)
		matched, unmatched := 0, 0
		for i := range 20000 {
			var b strings.Builder
			if i%2 == 0 { // a seed, edited
				seed := []byte(c.seeds[rng.IntN(len(c.seeds))])
				for range rng.IntN(3) {
					k := rng.IntN(len(seed) + 1)
					switch rng.IntN(3) {
					case 0: // cut a byte
						if k < len(seed) {
							seed = append(seed[:k], seed[k+1:]...)
						}
					case 1: // change a letter's case
						if k < len(seed) {
							seed[k] ^= 0x20
						}
					case 2: // insert a piece
						seed = append(seed[:k], append([]byte(pieces[rng.IntN(len(pieces))]), seed[k:]...)...)
					}
				}
				b.Write(seed)
			} else {
				for range 1 + rng.IntN(6) {
					b.WriteString(pieces[rng.IntN(len(pieces))])
				}
			}
			s := b.String()
			want := re.MatchString(s)
			if want {
				matched++
			} else {
				unmatched++
			}
			if l.MatchString(s) != want || l.Match([]byte(s)) != want ||
				(l.FindStringSubmatch(s) != nil) != want || (l.FindSubmatch([]byte(s)) != nil) != want ||
				(l.FindStringSubmatchIndex(s) != nil) != want || (l.FindAllSubmatch([]byte(s), -1) != nil) != want ||
				l.ReplaceAllString(s, "#") != re.ReplaceAllString(s, "#") {
				t.Fatalf("%s on %q: the filtered methods disagree with regexp (match %v)", c.expr, s, want)
			}
		}
		if matched < 1000 || unmatched < 1000 {
			t.Errorf("%s: %d strings matched, %d did not: the test shows little", c.expr, matched, unmatched)
		}
	}
}

// The folded comparison folds ASCII letters of the input only.
func TestIndexFold(t *testing.T) {
	for _, c := range []struct {
		s, lit string
		want   int
	}{{"x/LIB/y", "/lib/", 1}, {"libx", "lib", 0}, {"li", "lib", -1}, {"", "a", -1}, {"ÄLIB", "lib", 2}} {
		if got := indexFold(c.s, c.lit); got != c.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", c.s, c.lit, got, c.want)
		}
	}
}
