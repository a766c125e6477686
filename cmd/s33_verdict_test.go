package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Recordings of testdata/pytorch/s33/, made by a tester (s33) with PyTorch
// 2.11 on an H200 by testdata/gen/s33/g.py (testdata/README.md). Each
// run keeps y.detach() (1 MiB) in each of 60 steps at step (g.py:26).

const s33Dir = td + "pytorch/s33/"

// TestContextStateBlockStacks: _record_memory_history(stacks="python",
// context="state") records no stack in the trace's entries and keeps each
// live block's (s33 finding 3). The blocks name the sites: 70 blocks
// (114,311,168 B) at step (g.py:26), 4 (8,396,800 B) at <module>
// (g.py:19), and the one block without a stack, the 32 MiB workspace the
// backward thread made. Main ignored the blocks' stacks, reported all 75
// "(no stack)" and advised stacks="python", which was set.
func TestContextStateBlockStacks(t *testing.T) {
	r := analyzeJSON(t, s33Dir+"kcl.pickle.gz")
	step := one(t, r, "retained", "g.py", 26)
	if step.Count != 70 || step.Bytes != 114311168 || step.Site.Function != "step" {
		t.Errorf("step (g.py:26): %d blocks, %d bytes", step.Count, step.Bytes)
	}
	if m := one(t, r, "retained", "g.py", 19); m.Count != 4 || m.Bytes != 8396800 {
		t.Errorf("<module> (g.py:19): %d blocks, %d bytes", m.Count, m.Bytes)
	}
	noStack := 0
	for _, f := range r.Findings {
		if f.Site.Function == "" {
			noStack += f.Count
		}
	}
	if noStack != 1 {
		t.Errorf("%d allocations without a stack, want 1; findings %+v", noStack, r.Findings)
	}
	w := strings.Join(r.Inputs[0].Warnings, "\n")
	if strings.Contains(w, "have no stack") || strings.Contains(w, `stacks=\"python\"`) || strings.Contains(w, `stacks="python"`) ||
		!strings.Contains(w, "the trace's allocations carry no stacks") || !strings.Contains(w, `context="all"`) ||
		!strings.Contains(w, "trace_alloc_record_context=True") {
		t.Errorf("warnings %q: want the trace's missing stacks named, and context=\"all\" advised", w)
	}
}

// TestContextNoneAdvice: context=None records no stack anywhere (s33
// finding 3): the advice names context, not stacks="python", which was
// set.
func TestContextNoneAdvice(t *testing.T) {
	r := analyzeJSON(t, s33Dir+"knl.pickle.gz")
	w := strings.Join(r.Inputs[0].Warnings, "\n")
	if strings.Contains(w, `stacks="python"`) || !strings.Contains(w, "75 of 75 live allocations have no stack") ||
		!strings.Contains(w, "context=None") || !strings.Contains(w, `context="all"`) {
		t.Errorf("warnings %q: want context=None named and context=\"all\" advised", w)
	}
}

// TestDiffContextStateAgainstAll: the context="state" run against the same
// script recorded with stacks="all" (kal): the sites match by the blocks'
// stacks. Main made all 5 entries unmatched, saying that BASE recorded no
// stacks.
func TestDiffContextStateAgainstAll(t *testing.T) {
	d := diffJSON(t, s33Dir+"kcl.pickle.gz", s33Dir+"kal.pickle.gz")
	same, step := false, false
	for _, e := range d.Entries {
		if strings.Contains(e.Note, "BASE recorded no stacks") && e.Site != "(no stack)" && e.Site != "at::cuda::setWorkspaceForHandle" {
			t.Errorf("%s %s: %q", e.Status, e.Site, e.Note)
		}
		same = same || e.Status == report.StatusSame && e.Site == "<module> (g.py:19)"
		step = step || e.Status != report.StatusUnmatched && e.Site == "step (g.py:26)"
	}
	if !same || !step || d.Totals[report.StatusUnmatched].Sites > 3 {
		t.Errorf("entries %+v totals %+v: want <module> (g.py:19) same, step (g.py:26) matched", d.Entries, d.Totals)
	}
}

// TestDiffUnjudgedGrowth: BASE (context="state") could not judge growth,
// so its leak at step (g.py:26) is retained; NEW (context="all") calls
// it a leak. The leak is unmatched, not new, with a note naming why, in
// both directions (not fixed either), and the retained part compares
// with the leak added: the same. A baseline written from BASE records
// the device, so analyze --baseline does not call the leak new either;
// one written before that member cannot tell, and compares as before.
func TestDiffUnjudgedGrowth(t *testing.T) {
	check := func(base, head, mine string) {
		t.Helper()
		d := diffJSON(t, base, head)
		leak, retained := false, false
		for _, e := range d.Entries {
			if e.Site != "step (g.py:26)" {
				continue
			}
			switch e.Kind {
			case report.KindLeak:
				leak = e.Status == report.StatusUnmatched && strings.Contains(e.Note, "could not judge growth on device 0: its trace's allocations carry no stacks") &&
					strings.Contains(e.Note, "not called "+mine)
			case report.KindRetained:
				retained = e.Status == report.StatusSame && strings.Contains(e.Note, "with it added, 109 MiB -> 109 MiB, same")
			}
		}
		if !leak || !retained || d.Totals[report.StatusNew].Sites+d.Totals[report.StatusFixed].Sites+d.Totals[report.StatusGrown].Sites+d.Totals[report.StatusShrunk].Sites > 0 {
			t.Errorf("%s -> %s: entries %+v: want the leak unmatched (not %s) and the retained part the same", base, head, d.Entries, mine)
		}
	}
	check(s33Dir+"kcl.pickle.gz", s33Dir+"kal.pickle.gz", "new")
	check(s33Dir+"kal.pickle.gz", s33Dir+"kcl.pickle.gz", "fixed")

	dir := t.TempDir()
	bl := filepath.Join(dir, "kcl.json")
	if code, _, errOut := run(t, nil, "analyze", "-q", "--write-baseline", bl, s33Dir+"kcl.pickle.gz"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(bl)
	if err != nil || !strings.Contains(string(data), `"growth_unjudged"`) {
		t.Fatalf("baseline %s (%v): want growth_unjudged", data, err)
	}
	check(bl, s33Dir+"kal.pickle.gz", "new")
	if code, out, errOut := run(t, nil, "analyze", "-q", "--baseline", bl, "--fail-on", "new", s33Dir+"kal.pickle.gz"); code != ExitOK {
		t.Errorf("--baseline --fail-on new: exit %d: %s%s", code, out, errOut)
	}
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	delete(b, "growth_unjudged")
	old, _ := json.Marshal(b)
	oldPath := filepath.Join(dir, "old.json")
	if err := os.WriteFile(oldPath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	d := diffJSON(t, oldPath, s33Dir+"kal.pickle.gz")
	if d.Totals[report.StatusNew].Sites != 1 {
		t.Errorf("a baseline without growth_unjudged: totals %+v: want the leak new, as before", d.Totals)
	}
}

// TestOOMInTwoSnapshots: the OOM observer's snapshot and the one dumped
// after the except block hold the same "oom" trace entry (s33 finding
// 4): one OOM, from both, with the message and the summary; --fail-on oom
// counts one. Main made two.
func TestOOMInTwoSnapshots(t *testing.T) {
	code, out, errOut := run(t, nil, "oom", s33Dir+"eso_oom.pickle.gz", s33Dir+"eso.pickle.gz", s33Dir+"eso_error.txt", s33Dir+"eso_memory_summary.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "OOM 1 of 1:") || strings.Contains(out, "of 2") ||
		!strings.Contains(out, "from:     "+s33Dir+"eso_oom.pickle.gz (trace entry 2239), "+s33Dir+"eso.pickle.gz (trace entry 2239), "+s33Dir+"eso_error.txt:1, "+s33Dir+"eso_memory_summary.txt:2") {
		t.Errorf("want one OOM from both snapshots, the message and the summary:\n%s", out)
	}
	code, out, errOut = run(t, nil, "analyze", "-q", "--fail-on", "oom", s33Dir+"eso_oom.pickle.gz", s33Dir+"eso.pickle.gz")
	if code != ExitFindings || !strings.Contains(out+errOut, "1 OOM requesting") {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
}

// TestHugeRequestSnapshotAlone: a 300 GiB request on a 139.80 GiB GPU, the
// snapshot alone (s33 finding 7): the snapshot does not record the GPU's
// total, so the cause is not determined, no other process is blamed and
// no smaller batch advised; with the message, capacity.
func TestHugeRequestSnapshotAlone(t *testing.T) {
	r := analyzeJSON(t, s33Dir+"hg_oom.pickle.gz")
	var msg string
	for _, f := range r.Findings {
		if f.Kind == "oom" {
			msg = f.Message
		}
	}
	if !strings.Contains(msg, "cause not determined") || !strings.Contains(msg, "does not record the GPU's total memory") ||
		strings.Contains(msg, "outside-process") || strings.Contains(msg, "smaller batch") {
		t.Errorf("oom: %q", msg)
	}
	code, out, errOut := run(t, nil, "oom", s33Dir+"hg_oom.pickle.gz", s33Dir+"hg_error.txt")
	if code != ExitOK || !strings.Contains(out, "capacity: the 300.00 GiB request alone is more than the GPU's 139.80 GiB total") {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
}
