package report

import (
	"strings"
	"testing"
)

// TestLockstepOnlySameIterations: leaks kept in the same iterations (first
// 1, last 8, grown in 7 of 8) on one device name each other; one that
// began in iteration 3, one on another device, one retained and one kept
// in one iteration only are named by none and get no note.
func TestLockstepOnlySameIterations(t *testing.T) {
	d0, d1 := 0, 1
	mk := func(fn string, kind Kind, dev *int, first, grew int) Finding {
		return Finding{Kind: kind, Device: dev, Site: Frame{Function: fn}, Message: "m",
			Growth: &Growth{Kept: 8, Iterations: 8, GrewIn: grew, FirstIteration: first, LastIteration: 8}}
	}
	fs := []Finding{
		mk("a", KindLeak, &d0, 1, 7), mk("b", KindLeak, &d0, 1, 7),
		mk("late", KindLeak, &d0, 3, 7), mk("other", KindLeak, &d1, 1, 7),
		mk("kept", KindRetained, &d0, 1, 7), mk("once", KindLeak, &d0, 1, 1),
	}
	lockstep(fs)
	if !strings.Contains(fs[0].Message, "as the leak at b:") || !strings.Contains(fs[1].Message, "as the leak at a:") {
		t.Errorf("a: %q, b: %q; want each to name the other", fs[0].Message, fs[1].Message)
	}
	for _, f := range fs[2:] {
		if f.Message != "m" {
			t.Errorf("%s: %q; want no note", f.Site.Function, f.Message)
		}
	}
}

// TestLockstepNamesEachSiteOnce: three leaks of one line from different
// callers, kept in the same iterations, name that line once with how many
// other callers, not the same name over and over.
func TestLockstepNamesEachSiteOnce(t *testing.T) {
	d0 := 0
	mk := func(fn string) Finding {
		return Finding{Kind: KindLeak, Device: &d0, Site: Frame{Function: fn, File: "train.py", Line: 10}, Message: "m",
			Growth: &Growth{Kept: 8, Iterations: 8, GrewIn: 7, FirstIteration: 1, LastIteration: 8}}
	}
	fs := []Finding{mk("step"), mk("step"), mk("step"), mk("fwd")}
	lockstep(fs)
	if want := "as the leaks at step (train.py:10) from 2 other callers, fwd (train.py:10):"; !strings.Contains(fs[0].Message, want) {
		t.Errorf("%q; want %q", fs[0].Message, want)
	}
	if want := "as the leaks at step (train.py:10) (3 callers):"; !strings.Contains(fs[3].Message, want) {
		t.Errorf("%q; want %q", fs[3].Message, want)
	}
}
