package report

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseGates: any --fail-on argument parses or fails with a GateError
// whose column lies within the argument; never a panic.
func FuzzParseGates(f *testing.F) {
	for _, s := range []string{"leak", "leak>64MiB", "oom, grown>10%", "non-pytorch>=1GiB", "sanitizer-errors>0", ",", "leak>>", "grown>1e400%", "new>18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		gs, err := ParseGates([]string{arg})
		if err != nil {
			var ge *GateError
			if !errors.As(err, &ge) || ge.Column < 1 || ge.Column > len(arg)+1 {
				t.Fatalf("%q: %v", arg, err)
			}
			return
		}
		if len(gs) != strings.Count(arg, ",")+1 {
			t.Fatalf("%q: %d gates", arg, len(gs))
		}
		Evaluate(gs, GateInput{Findings: []Finding{{Kind: KindLeak, Bytes: 1}}, Diff: []DiffEntry{{Status: StatusGrown, BeforeBytes: 1, AfterBytes: 2}}})
	})
}

// FuzzSuppressionRules: any file parses or fails naming its line.
func FuzzSuppressionRules(f *testing.F) {
	for _, s := range []string{"kind=leak function=^f name=x", "kind=retained min-bytes=1GiB expires=2027-01-01 reason=\"a b\"", "reason=\"unterminated", "\nkind=leek"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		rules, err := ParseSuppressionRules("s", []byte(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "s:") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for i := range rules {
			rules[i].Matches(&Finding{Kind: KindLeak, Stack: []Frame{{Function: "f", File: "a.py"}}})
		}
	})
}

// An unknown gate's error lists each name it takes once (it listed
// non-pytorch twice: among the kinds, and again after the NVML classes).
func TestUnknownGateListsEachNameOnce(t *testing.T) {
	_, err := ParseGates([]string{"bogus"})
	if err == nil {
		t.Fatal("bogus parsed")
	}
	for _, name := range []string{"non-pytorch", "sanitizer-errors", "pending-free", "sawtooth"} {
		if n := strings.Count(err.Error(), name); n != 1 {
			t.Errorf("%q names %s %d times, want once", err, name, n)
		}
	}
}
