package pipeline

import (
	"runtime/debug"
	"testing"
)

func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestKeepHeapGoal: the percentage is raised so that the goal is the one
// asked for (goal = live * (1 + percent/100)), never lowered by a second
// holder, and restored only when the last holder ends; nothing is done
// where the goal is not above twice live or the collector is off.
func TestKeepHeapGoal(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	r1 := keepHeapGoal(600, 100) // (600-100)/100 = 500%
	if p := gcPercent(); p != 500 {
		t.Fatalf("percent %d with one holder, want 500", p)
	}
	r2 := keepHeapGoal(300, 100) // 200%: below the 500 in force
	if p := gcPercent(); p != 500 {
		t.Fatalf("percent %d after a smaller second holder, want 500", p)
	}
	r1()
	if p := gcPercent(); p != 500 {
		t.Fatalf("percent %d with one holder left, want 500", p)
	}
	r2()
	r2() // a second call does nothing
	if p := gcPercent(); p != 100 {
		t.Fatalf("percent %d after the last holder, want 100 restored", p)
	}
	keepHeapGoal(150, 100)() // goal under twice live: nothing to keep
	if p := gcPercent(); p != 100 {
		t.Fatalf("percent %d, want 100 untouched", p)
	}
	debug.SetGCPercent(-1)
	r := keepHeapGoal(600, 100)
	if p := gcPercent(); p != -1 {
		t.Fatalf("percent %d with GOGC=off, want -1 untouched", p)
	}
	r()
	if p := gcPercent(); p != -1 {
		t.Fatalf("percent %d after restore with GOGC=off, want -1", p)
	}
}
