package oom

import (
	"os"
	"strings"
	"testing"
)

// Session 43 (testdata/README.md, "Found by the session-43 tester").

// Two pytest failures with the same HIP OOM message (ROCm/TheRock#2118:
// the int32 and int64 variants of one test, one after the other) are two
// OOMs, but not two "worker processes": pytest names tests, which run in
// one process unless a plugin spreads them. The note says what the log
// cannot tell. torchrun's ranks keep the workers' note.
func TestHunt43SameMessageInTwoTests(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pytorch/pastes/hip_two_tests_same_message_therock2118.txt")
	if err != nil {
		t.Fatal(err)
	}
	pm := NewPostmortem([]Input{textInput(t, "therock.txt", string(b))}, PostmortemOptions{})
	if len(pm.OOMs) != 2 {
		t.Fatalf("%d OOMs, want 2", len(pm.OOMs))
	}
	for i, r := range pm.OOMs {
		notes := strings.Join(r.Notes, " ")
		if strings.Contains(notes, "worker processes") || !strings.Contains(notes, "2 tests failed with this same message") || !strings.Contains(notes, "_cuda_int64") {
			t.Errorf("OOM %d notes: %.300q", i+1, notes)
		}
	}
}
