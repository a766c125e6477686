package lazyre

import (
	"fmt"
	"regexp"
	"testing"
)

func TestCompilesOnFirstUse(t *testing.T) {
	l := New(`a(b+)c`)
	if l.re != nil {
		t.Fatal("compiled before use")
	}
	if m := l.FindStringSubmatch("xabbbcx"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("FindStringSubmatch: %q", m)
	}
	if !l.MatchString("abc") || l.Match([]byte("ac")) || l.String() != `a(b+)c` {
		t.Fatal("MatchString, Match or String wrong")
	}
	if got := Of(regexp.MustCompile(`x+`)).ReplaceAllString("axxb", "-"); got != "a-b" {
		t.Fatalf("Of: %q", got)
	}
}

func TestCheckAllFindsABadExpression(t *testing.T) {
	if err := CheckAll(); err != nil {
		t.Fatalf("before: %v", err)
	}
	New(`(unclosed`)
	if err := CheckAll(); err == nil {
		t.Fatal("a bad expression passed")
	}
	mu.Lock()
	made = made[:len(made)-1]
	mu.Unlock()
}

// TestMemoMatchesAsRegexp: a memoising expression answers as the
// compiled one, the first time and from its memo, and remembers no more
// than maxMemo strings.
func TestMemoMatchesAsRegexp(t *testing.T) {
	const expr = `(^|/)torch/|^_?Py[A-Z]`
	m, re := NewMemo(expr), regexp.MustCompile(expr)
	for _, s := range []string{"/opt/venv/torch/nn/module.py", "train.py", "PyObject_Call", "_PyEval", "xtorch/a", ""} {
		for round := 0; round < 2; round++ {
			if got, want := m.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("round %d: MatchString(%q) = %v, want %v", round, s, got, want)
			}
		}
	}
	for i := 0; i < maxMemo+10; i++ {
		m.MatchString(fmt.Sprint("Py", i)) // holds a literal, so the memo is asked
	}
	if n := len(m.memo.m); n != maxMemo {
		t.Errorf("memo holds %d strings, want the bound %d", n, maxMemo)
	}
	if !m.MatchString("/torch/x") || m.MatchString("f1torch/") {
		t.Error("wrong answer past the bound")
	}
}
