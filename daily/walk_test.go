package daily

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
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
	w, err := Walk([]string{root, filepath.Join(root, "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	n := 0
	for _, g := range w.Groups {
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

// The reviewer's tree (issue 15, defects 1-3): a root that is a link to a
// directory, a linked subdirectory, a loop, a dangling link and a
// subdirectory without permission.
func TestWalkFollowsLinksAndListsSkips(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	for _, rel := range []string{"job1/a.txt", "other/b.txt", "locked/c.txt"} {
		p := filepath.Join(real, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(to, at string) {
		if err := os.Symlink(to, at); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(base, "elsewhere"), filepath.Join(real, "job1", "linked"))
	if err := os.MkdirAll(filepath.Join(base, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "elsewhere", "d.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link(real, filepath.Join(real, "other", "loop"))                   // back to the root
	link(filepath.Join(base, "gone"), filepath.Join(real, "dangling")) // nothing there
	link(filepath.Join(real, "job1"), filepath.Join(base, "root"))     // the root itself a link
	locked := filepath.Join(real, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	_, lockedErr := os.ReadDir(locked)
	if lockedErr == nil { // running as root: refuse it as the OS would
		lockedErr = &os.PathError{Op: "open", Path: locked, Err: fs.ErrPermission}
		readDir = func(p string) ([]os.DirEntry, error) {
			if p == locked {
				return nil, lockedErr
			}
			return os.ReadDir(p)
		}
		defer func() { readDir = os.ReadDir }()
	}

	// 1: a root that is a link to a directory is walked.
	w, err := Walk([]string{filepath.Join(base, "root")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, g := range w.Groups {
		files += len(g.Files)
	}
	if files != 2 { // a.txt and linked/d.txt
		t.Errorf("root through a link: %d files; want 2 (%+v)", files, w.Groups)
	}

	// 2 and 3: linked directories followed once, the loop, the dangling
	// link and the locked directory listed with their reasons.
	w, err = Walk([]string{real}, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, g := range w.Groups {
		for _, f := range g.Files {
			paths[f.Rel] = true
		}
	}
	want := []string{"job1/a.txt", "job1/linked/d.txt", "other/b.txt"}
	for _, p := range want {
		if !paths[p] {
			t.Errorf("%s not found; got %v", p, paths)
		}
	}
	if len(paths) != len(want) {
		t.Errorf("got %d files %v; want %d (each read once)", len(paths), paths, len(want))
	}
	reasons := map[string]Skip{}
	for _, s := range w.Skips {
		reasons[s.Path] = s
	}
	if s, ok := reasons[filepath.Join(real, "other", "loop")]; !ok || s.Unreadable || !strings.Contains(s.Reason, "already walked") {
		t.Errorf("the loop: %+v; want skipped as already walked", s)
	}
	if s, ok := reasons[filepath.Join(real, "dangling")]; !ok || !s.Unreadable || !strings.Contains(s.Reason, "symbolic link") {
		t.Errorf("the dangling link: %+v; want unreadable, named a symbolic link", s)
	}
	if s, ok := reasons[locked]; !ok || !s.Unreadable || !strings.Contains(s.Reason, "permission denied") {
		t.Errorf("the locked directory: %+v; want unreadable with its error", s)
	}
	if w.Skipped != len(w.Skips) {
		t.Errorf("Skipped %d, listed %d", w.Skipped, len(w.Skips))
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

// Issue 15, defect 7: two allocations in one function are two leak sites
// (their lines differ); one site on device 0 of a job and 1 of another is
// one site (a device index is its job's own).
func TestSiteKeyLineAndDevice(t *testing.T) {
	dev := func(n int) *int { return &n }
	at := func(line int64, device *int) *report.Finding {
		fr := report.Frame{Function: "step", File: "/a/train.py", Line: line}
		return &report.Finding{Kind: report.KindLeak, Site: fr, Stack: []report.Frame{fr, {Function: "main", File: "/a/train.py", Line: 40}}, Device: device}
	}
	if siteKey(at(12, nil), "j") == siteKey(at(14, nil), "j") {
		t.Error("lines 12 and 14 of step: one key; want two sites")
	}
	if siteKey(at(12, dev(0)), "j") != siteKey(at(12, dev(1)), "j") {
		t.Error("the same site on devices 0 and 1: two keys; want one")
	}
}

// A finding with no site (a LEAK SUMMARY alone) is one site within its job
// across the job's files (one a day: the same program), and apart from
// another job's: before, keyed by the file's path, a job's daily logs
// never recurred as one site.
func TestSiteKeyNoSiteByJob(t *testing.T) {
	at := func(path string) *report.Finding {
		return &report.Finding{Kind: report.KindLeak, Path: path, Bytes: 7536}
	}
	if siteKey(at("n1/san/2026-12-01.log"), "n1/san") != siteKey(at("n1/san/2026-12-02.log"), "n1/san") {
		t.Error("one job's two days: two keys; want one site")
	}
	if siteKey(at("n1/a/x.log"), "n1/a") == siteKey(at("n1/b/x.log"), "n1/b") {
		t.Error("two jobs: one key; want two sites")
	}
}

// TestWalkSecondNames: a file with a second name, a hard link in another
// job's directory (rsync --link-dest keeps a day's unchanged artifacts so)
// or a symbolic link given as a second root, is read once, by its first
// name: read twice, one run's findings would count twice. The second name
// is listed as skipped, saying which name was read; none is dropped
// silently.
func TestWalkSecondNames(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"job1", "job2"} {
		if err := os.MkdirAll(filepath.Join(base, "root", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(base, "root", "job1", "snap.pickle")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(base, "root", "job2", "snap.pickle")
	if err := os.Link(a, hard); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	link := filepath.Join(base, "again.pickle")
	if err := os.Symlink(a, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	w, err := Walk([]string{filepath.Join(base, "root"), link}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, g := range w.Groups {
		for _, f := range g.Files {
			read = append(read, f.Path)
		}
	}
	if len(read) != 1 || read[0] != a {
		t.Errorf("read %v; want %s alone", read, a)
	}
	skipped := map[string]string{}
	for _, s := range w.Skips {
		skipped[s.Path] = s.Reason
	}
	for _, second := range []string{hard, link} {
		if r, ok := skipped[second]; !ok || !strings.Contains(r, "second name") || !strings.Contains(r, a) {
			t.Errorf("%s: skipped %v (%q); want listed as a second name of %s", second, ok, r, a)
		}
	}
	if w.Skipped != 2 {
		t.Errorf("%d skipped; want 2", w.Skipped)
	}
}
