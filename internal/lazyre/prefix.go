package lazyre

import "regexp/syntax"

// StartsMatch reports whether s is the start of a text that the
// expression matches from its first byte on (an expression anchored with
// ^): some text s + t matches, s alone maybe not. A line cut before a
// form's end asks it ("Cannot allocate" of "Cannot allocate [0-9.]+GB").
// Empty-width assertions other than ^ (\b, $) are taken as met: the
// answer may be true for a text no completion matches, never false for
// one that a completion does.
func (l *Regexp) StartsMatch(s string) bool {
	l.progOnce.Do(func() {
		re, err := syntax.Parse(l.expr, syntax.Perl)
		if err != nil {
			panic(err) // as Re would
		}
		l.prog, err = syntax.Compile(re.Simplify())
		if err != nil {
			panic(err)
		}
	})
	return startsMatch(l.prog, s)
}

// startsMatch runs prog over s as a set of threads (Thompson's
// simulation) and reports whether one is still alive at s's end.
func startsMatch(prog *syntax.Prog, s string) bool {
	seen := make([]bool, len(prog.Inst))
	var add func(list []uint32, pc uint32) []uint32
	add = func(list []uint32, pc uint32) []uint32 {
		if seen[pc] {
			return list
		}
		seen[pc] = true
		switch i := &prog.Inst[pc]; i.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			return add(add(list, i.Out), i.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			return add(list, i.Out)
		case syntax.InstFail:
			return list
		}
		return append(list, pc)
	}
	threads := add(nil, uint32(prog.Start))
	for _, r := range s {
		clear(seen)
		var next []uint32
		for _, pc := range threads {
			if consumes(&prog.Inst[pc], r) {
				next = add(next, prog.Inst[pc].Out)
			}
		}
		if len(next) == 0 {
			return false
		}
		threads = next
	}
	return true
}

// consumes reports whether instruction i matches the rune r.
func consumes(i *syntax.Inst, r rune) bool {
	switch i.Op {
	case syntax.InstRune, syntax.InstRune1:
		return i.MatchRune(r)
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}
