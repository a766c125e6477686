package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// initLine is one line of GODEBUG=inittrace=1: a package whose
// initialisation ran, its clock, and the bytes and allocations it made.
var initLine = regexp.MustCompile(`(?m)^init (\S+) @\S+ \S+, \S+ \S+ clock, (\d+) bytes, (\d+) allocs$`)

// startupInits runs this test binary, which links every package gpuleak
// links (and testing's), to its start and no test, and returns the bytes
// each package's initialisation allocated, by import path.
func startupInits(t *testing.T) map[string]int {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	inits := map[string]int{}
	for _, m := range initLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[2])
		inits[m[1]] = n
	}
	if len(inits) < 50 {
		t.Fatalf("read %d package initialisations from GODEBUG=inittrace=1, want the linked libraries' (over 100):\n%s", len(inits), out)
	}
	return inits
}

// TestStartupSkipsWorkFewRunsNeed holds the start-up work that every run,
// however small its input, paid for a few: each is linked or built only
// where it is used.
func TestStartupSkipsWorkFewRunsNeed(t *testing.T) {
	inits := startupInits(t)
	// runtime/metrics formats a description of every GODEBUG setting at
	// its initialisation (about 1 M instructions); the snapshot pipeline
	// read two heap figures with it, which runtime.ReadMemStats gives.
	if _, ok := inits["runtime/metrics"]; ok {
		t.Error("runtime/metrics is linked and initialised at every start")
	}
	// The text-log reader's index of the words of its OOM phrases (a map
	// of about 300 three-byte keys, 34 KB) was built at start, for text
	// logs only; what remains is its ~110 lazy expressions' structs (about
	// 30 KB: lazyre.New makes one each, compiled on first use).
	const pkg = "github.com/gpuleak/gpuleak/parse/pytorchtext"
	if b, ok := inits[pkg]; !ok {
		t.Errorf("no initialisation of %s found", pkg)
	} else if b > 48<<10 {
		t.Errorf("%s allocates %d bytes at start, want under 48 KiB: a table built there that only text logs need?", pkg, b)
	}
}
