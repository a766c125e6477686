package daily

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, rel string
		host, job    string
		ok           bool
	}{
		{"{host}/{job}/...", "node7/run-42/snap.pickle", "node7", "run-42", true},
		{"{host}/{job}/...", "node7/run-42/deep/er/snap.pickle", "node7", "run-42", true},
		{"{host}/{job}/...", "node7/snap.pickle", "", "", false}, // one directory: no job
		{"{host}/{job}", "node7/run-42/snap.pickle", "node7", "run-42", true},
		{"{host}/{job}", "node7/run-42/x/snap.pickle", "", "", false},
		{"artifacts/*/{host}/...", "artifacts/2026-11-30/node7/a/b/s.pickle", "node7", "a/b", true},
		{"artifacts/*/{host}/...", "logs/2026-11-30/node7/s.pickle", "", "", false},
		{"{job}/...", "train-3/s.pickle", "", "train-3", true},
	} {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		h, j, ok := p.Match(c.rel)
		if ok != c.ok || h != c.host || j != c.job {
			t.Errorf("%s on %s: %q %q %v; want %q %q %v", c.pattern, c.rel, h, j, ok, c.host, c.job, c.ok)
		}
	}
	for _, bad := range []string{"", "  ", "{rack}/...", ".../{host}", "*/...", "x{host}/..."} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q): want an error", bad)
		}
	}
}

func TestWalkGroupsAndDedupes(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/1.txt")
	mk("a/2.txt")
	mk("b/c/3.txt")
	mk(".git/objects/4")
	mk("top.txt")
	if err := os.Symlink(filepath.Join(root, "a/1.txt"), filepath.Join(root, "b/link.txt")); err != nil {
		t.Fatal(err)
	}
	gs, err := Walk([]string{root, filepath.Join(root, "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	n := 0
	for _, g := range gs {
		got[g.Job] += len(g.Files)
		n += len(g.Files)
	}
	// a/1.txt reached three times (twice by walking, once by the link),
	// .git skipped, top.txt in the root's own job.
	if n != 4 || got["a"] != 2 || got["b/c"] != 1 || got[filepath.Base(root)] != 1 {
		t.Errorf("groups %v (%d files); want a:2, b/c:1, %s:1", got, n, filepath.Base(root))
	}
	if _, err := Walk([]string{filepath.Join(root, "absent")}, nil); err == nil {
		t.Error("an absent root: want an error")
	}
}

func TestPersistence(t *testing.T) {
	days := []string{"2026-11-28", "2026-11-29", "2026-11-30"}
	for _, c := range []struct {
		site              []string
		persisted, cameBk bool
	}{
		{[]string{"2026-11-28", "2026-11-29", "2026-11-30"}, true, false},
		{[]string{"2026-11-29", "2026-11-30"}, true, false},
		{[]string{"2026-11-28", "2026-11-30"}, false, true},
		{[]string{"2026-11-28"}, false, false},
		{[]string{"2026-11-30"}, false, false},
	} {
		p, cb := persistence(c.site, days)
		if p != c.persisted || cb != c.cameBk {
			t.Errorf("%v: persisted %v came back %v; want %v %v", c.site, p, cb, c.persisted, c.cameBk)
		}
	}
	if c := creep(map[string]int64{"2026-11-28": 1 << 30, "2026-11-29": 2 << 30, "2026-11-30": 3 << 30}); c == nil || *c != 1<<30 {
		t.Errorf("creep of +1 GiB a day: %v", c)
	}
	if creep(map[string]int64{"2026-11-28": 5}) != nil {
		t.Error("creep of one day: want none")
	}
}
