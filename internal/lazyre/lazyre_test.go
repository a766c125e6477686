package lazyre

import (
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
