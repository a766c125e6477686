package report

import (
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// TestStackKeyIsCallsites: findings are ordered by the same key the
// analyses order their sites by.
func TestStackKeyIsCallsites(t *testing.T) {
	st := []Frame{{Function: "train", File: "train.py", Line: 24}, {Function: "<module>", File: "train.py", Line: 41}}
	cs := []callsite.Frame{{Filename: "train.py", Line: 24, Name: "train"}, {Filename: "train.py", Line: 41, Name: "<module>"}}
	if stackKey(st) != callsite.StackKey(cs) {
		t.Errorf("report key %q, callsite key %q", stackKey(st), callsite.StackKey(cs))
	}
}

// TestShortFuncIsShortName: the frames a report shows are shortened by the
// one C++ shortener; names without "::" (Python functions, profiler ops
// such as "autograd backward") are shown whole, spaces and all.
func TestShortFuncIsShortName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Where the report's own shortener was wrong (analyze/callsite/name_test.go says why).
		{"void torch::autograd::Node::operator()(int)", "torch::autograd::Node::operator()"},
		{"ns::f [clone .isra.0]", "ns::f"},
		{"int *ns::make(int)", "ns::make"},
		{"bool ns::Ptr::operator->() const", "ns::Ptr::operator->"},
		// Not C++: kept whole.
		{"autograd backward", "autograd backward"},
		{"cudaMalloc<float>(float**, unsigned long)", "cudaMalloc<float>(float**, unsigned long)"},
		{"forward", "forward"},
	} {
		if got := shortFunc(c.in); got != c.want {
			t.Errorf("shortFunc(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
