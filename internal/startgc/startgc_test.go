package startgc

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestSettle: init raised the percentage (GOGC unset), the first Settle
// decides, and a later one changes nothing.
func TestSettle(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: start-up leaves the percentage alone")
	}
	cur := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	if !raised || cur() != Percent {
		t.Fatalf("after init: raised %v, percentage %d, want %d", raised, cur(), Percent)
	}
	Settle(false)
	if cur() != orig {
		t.Fatalf("after Settle(false): percentage %d, want the one before start-up, %d", cur(), orig)
	}
	debug.SetGCPercent(Percent)
	Settle(false) // decided already: no change
	if cur() != Percent {
		t.Fatalf("a second Settle changed the percentage to %d", cur())
	}
	debug.SetGCPercent(orig)
}
