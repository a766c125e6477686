package lazyre

import (
	"bytes"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A filter is a necessary condition of a match: an expression can match a
// string only if the string holds one of the filter's literals (compared
// with ASCII case folded where fold is set). The regexp package tries an
// unanchored expression at every position of its input (20 to 50 ns a byte
// for the frame rules' alternations on C++ names hundreds of bytes long),
// where strings.Contains finds or rules out a literal in a few ns: a
// string holding none of them is answered without running, or compiling,
// the expression. A nil filter lets every string through.
type filter struct {
	lits  []string // each non-empty
	blits [][]byte // lits as bytes, for Match
	fold  bool     // ASCII case folded: every literal is lower case
}

// maxFilterLits bounds a filter's literals: past it a string's test costs
// about what the expression would.
const maxFilterLits = 24

// newFilter derives expr's filter from its syntax tree, or nil where
// every match need not hold a literal (a leading `.*`, a class, an
// optional part) or the expression does not parse.
func newFilter(expr string) *filter {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if anchored(re) {
		// The regexp package tries such an expression at the start
		// alone, quicker than a search for the literals.
		return nil
	}
	lits, fold, ok := required(re)
	if !ok {
		return nil
	}
	f := &filter{fold: fold}
	for _, l := range lits {
		b := []byte(l)
		if fold {
			for i, c := range b {
				if 'A' <= c && c <= 'Z' {
					b[i] = c + 'a' - 'A'
				}
			}
		}
		f.lits, f.blits = append(f.lits, string(b)), append(f.blits, b)
	}
	return f
}

// required returns literals one of which every match of re holds, and
// whether any literal in them came from a case-folded part (then all are
// compared folded: a weaker test, never a wrong one). ok is false where no
// such set is known.
func required(re *syntax.Regexp) (lits []string, fold, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return nil, false, false
		}
		fold = re.Flags&syntax.FoldCase != 0
		for _, r := range re.Rune {
			// An invalid byte of the input reads as U+FFFD, which
			// strings.Contains would not see; folded, k and s also
			// match the Kelvin sign and the long s, and letters beyond
			// ASCII their own cases: not modelled.
			if r == utf8.RuneError || fold && (r >= utf8.RuneSelf || strings.ContainsRune("kKsS", r)) {
				return nil, false, false
			}
		}
		return []string{string(re.Rune)}, fold, true
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
		return nil, false, false
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, f, ok := required(sub)
			if !ok {
				return nil, false, false
			}
			lits, fold = append(lits, l...), fold || f
		}
		if len(lits) > maxFilterLits {
			return nil, false, false
		}
		return lits, fold, true
	case syntax.OpConcat:
		// Every part must match: the best part's literals will do. Best:
		// the longest shortest literal, then the fewest literals.
		for _, sub := range re.Sub {
			l, f, ok := required(sub)
			if !ok {
				continue
			}
			if lits == nil || better(l, lits) {
				lits, fold = l, f
			}
		}
		return lits, fold, lits != nil
	}
	return nil, false, false
}

// anchored says whether every match of re starts at the text's start.
func anchored(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginText:
		return true
	case syntax.OpConcat, syntax.OpCapture:
		return len(re.Sub) > 0 && anchored(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !anchored(sub) {
				return false
			}
		}
		return true
	}
	return false
}

func better(a, b []string) bool {
	ma, mb := shortest(a), shortest(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(l []string) int {
	m := len(l[0])
	for _, s := range l[1:] {
		m = min(m, len(s))
	}
	return m
}

// may says whether s holds one of f's literals: false means the
// expression cannot match s.
func (f *filter) may(s string) bool {
	if f == nil {
		return true
	}
	for _, l := range f.lits {
		if f.fold {
			if indexFold(s, l) >= 0 {
				return true
			}
		} else if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// mayBytes is may for a byte slice.
func (f *filter) mayBytes(b []byte) bool {
	if f == nil {
		return true
	}
	for i, l := range f.blits {
		if f.fold {
			if indexFold(string(b), f.lits[i]) >= 0 {
				return true
			}
		} else if bytes.Contains(b, l) {
			return true
		}
	}
	return false
}

// indexFold finds lower-case lit in s with ASCII letters of s folded.
func indexFold(s, lit string) int {
	n := len(lit)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lit[j] {
				break
			}
		}
		if j == n {
			return i
		}
	}
	return -1
}
