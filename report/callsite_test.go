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
