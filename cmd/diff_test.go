package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

func diffJSON(t *testing.T, base, run2 string, args ...string) *report.DiffReport {
	t.Helper()
	code, out, errOut := run(t, nil, append(append([]string{"diff", "--format", "json"}, args...), base, run2)...)
	if code != ExitOK {
		t.Fatalf("diff %s %s: exit %d, stderr %q", base, run2, code, errOut)
	}
	var d report.DiffReport
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// The leak vs the clean run of the same script (fixtures README): the leak
// site, forward (leak_train_loop.py:11), is new with its 40 blocks of
// 2 MiB; what both runs hold from the start is not.
func TestDiffLeakVsClean(t *testing.T) {
	d := diffJSON(t, td+"pytorch/clean_train_loop.pickle", td+"pytorch/leak_train_loop.pickle")
	var news []report.DiffEntry
	for _, e := range d.Entries {
		if e.Status == report.StatusNew {
			news = append(news, e)
		}
	}
	if len(news) != 1 {
		t.Fatalf("new sites: %+v", news)
	}
	e := news[0]
	if e.Kind != report.KindLeak || e.Site != "forward (leak_train_loop.py:11)" || e.AfterBytes != 40<<21 || e.AfterCount != 40 ||
		e.BeforeBytes != 0 || e.BeforeCount != 0 || e.DeltaBytes != 40<<21 {
		t.Errorf("new site: %+v", e)
	}
	if d.Totals["new"].AfterBytes != 40<<21 || d.Totals["fixed"].Sites != 0 || d.Totals["grown"].Sites != 0 {
		t.Errorf("totals: %+v", d.Totals)
	}
	// The text says the same.
	_, out, _ := run(t, nil, "diff", td+"pytorch/clean_train_loop.pickle", td+"pytorch/leak_train_loop.pickle")
	if !strings.Contains(out, "new    leak          forward (leak_train_loop.py:11) [device 0]\n       0 B in 0 allocations -> 80 MiB in 40 allocations\n       stack: forward (leak_train_loop.py:11) < train (leak_train_loop.py:24) < <module> (leak_train_loop.py:41)\n") {
		t.Errorf("text diff:\n%s", out)
	}
	// The other way round the leak is fixed.
	back := diffJSON(t, td+"pytorch/leak_train_loop.pickle", td+"pytorch/clean_train_loop.pickle")
	if back.Totals["fixed"].Sites != 1 || back.Totals["fixed"].BeforeBytes != 40<<21 || back.Totals["new"].Sites != 0 {
		t.Errorf("reverse totals: %+v", back.Totals)
	}
}

// A sanitizer log before and after the fix: every site is fixed, and the
// LEAK SUMMARY totals go from 6,677,056 bytes in 8 allocations (fixtures
// README) to 0; a log that has only the summaries says the same from them.
func TestDiffSanitizerFixed(t *testing.T) {
	fixed := td + "sanitizer/leak_fixed.txt"
	d := diffJSON(t, td+"sanitizer/leak_full.txt", fixed)
	for _, e := range d.Entries {
		if e.Status != report.StatusFixed || e.AfterBytes != 0 {
			t.Errorf("entry %+v, want fixed", e)
		}
	}
	if tf := d.Totals["fixed"]; tf.BeforeBytes != 6677056 || tf.BeforeCount != 8 || d.Totals["all"].AfterBytes != 0 {
		t.Errorf("fixed totals %+v", tf)
	}
	if d.LeakSummaryStatus != report.StatusFixed || *d.LeakSummaryBefore.Bytes != 6677056 || *d.LeakSummaryBefore.Allocations != 8 ||
		*d.LeakSummaryAfter.Bytes != 0 || *d.LeakSummaryAfter.Errors != 0 {
		t.Errorf("summaries: %s, %+v -> %+v", d.LeakSummaryStatus, d.LeakSummaryBefore, d.LeakSummaryAfter)
	}
	// Summary lines only (the records cut away, or --print-limit).
	summaryOnly := filepath.Join(t.TempDir(), "summary_only.txt")
	if err := os.WriteFile(summaryOnly, []byte("========= COMPUTE-SANITIZER\n========= LEAK SUMMARY: 6677056 bytes leaked in 8 allocations\n========= ERROR SUMMARY: 8 errors\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = diffJSON(t, summaryOnly, fixed)
	// The summary's leak is a finding of unknown site (the records were not
	// printed): fixed too, with the summary's bytes.
	if d.LeakSummaryStatus != report.StatusFixed || *d.LeakSummaryBefore.Bytes != 6677056 || d.Totals["fixed"].BeforeBytes != 6677056 || len(d.Entries) != 1 || d.Entries[0].Status != report.StatusFixed {
		t.Errorf("summary-only: %s, %d entries, fixed totals %+v", d.LeakSummaryStatus, len(d.Entries), d.Totals["fixed"])
	}
	_, out, _ := run(t, nil, "diff", summaryOnly, fixed)
	if !strings.Contains(out, "by the summaries, the leak is fixed") {
		t.Errorf("summary-only text:\n%s", out)
	}
	// Without a backtrace the records are one site per allocator class:
	// fixed too.
	d = diffJSON(t, td+"sanitizer/leak_nobacktrace.txt", fixed)
	if d.Totals["fixed"].BeforeBytes != 5890624 || d.Totals["fixed"].BeforeCount != 5 {
		t.Errorf("no backtrace: %+v", d.Totals)
	}
}

// The same sites are found from a text log and an XML log of the same
// program (one records directories, the other not), and from saved JSON
// reports and baselines as from the inputs themselves.
func TestDiffSavedRuns(t *testing.T) {
	d := diffJSON(t, td+"sanitizer/leak_save.xml", td+"sanitizer/leak_full.txt")
	got := map[string]int{}
	for _, e := range d.Entries {
		got[e.Status]++
	}
	// leaky 2 -> leaky 5: only the per-call step buffer grows (fixtures README).
	if !reflect.DeepEqual(got, map[string]int{"grown": 1, "same": 3}) {
		t.Errorf("xml -> text: %v", got)
	}

	dir := t.TempDir()
	var saved []string
	for i, in := range []string{td + "pytorch/clean_train_loop.pickle", td + "pytorch/leak_train_loop.pickle"} {
		code, out, _ := run(t, nil, "analyze", "--format", "json", "--top", "0", in)
		if code != ExitOK {
			t.Fatal(code)
		}
		p := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		saved = append(saved, p)
	}
	base := filepath.Join(dir, "base.json")
	if code, _, _ := run(t, nil, "analyze", "-q", "--write-baseline", base, td+"pytorch/clean_train_loop.pickle"); code != ExitOK {
		t.Fatal(code)
	}
	want := diffJSON(t, td+"pytorch/clean_train_loop.pickle", td+"pytorch/leak_train_loop.pickle")
	for _, pair := range [][2]string{{saved[0], saved[1]}, {base, saved[1]}, {base, td + "pytorch/leak_train_loop.pickle"}} {
		got := diffJSON(t, pair[0], pair[1])
		if !reflect.DeepEqual(got.Entries, want.Entries) {
			t.Errorf("%s -> %s: entries differ from the inputs' diff", filepath.Base(pair[0]), filepath.Base(pair[1]))
		}
	}
	// Members in another order (jq -S) are read the same.
	var doc map[string]any
	raw, _ := os.ReadFile(saved[1])
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	sorted, _ := json.Marshal(doc) // encoding/json sorts map keys: "findings" comes before "schema"
	resorted := filepath.Join(dir, "sorted.json")
	if err := os.WriteFile(resorted, sorted, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := diffJSON(t, saved[0], resorted); !reflect.DeepEqual(got.Entries, want.Entries) {
		t.Error("a report with its members sorted: entries differ")
	}
	// A report cut by --top warns that the diff sees only what it lists.
	code, out, _ := run(t, nil, "analyze", "--format", "json", "--top", "1", td+"pytorch/leak_train_loop.pickle")
	if code != ExitOK {
		t.Fatal(code)
	}
	cut := filepath.Join(dir, "cut.json")
	if err := os.WriteFile(cut, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := diffJSON(t, cut, saved[1]); len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "--top") {
		t.Errorf("warnings %q", d.Warnings)
	}
}

// Bad usage and bad saved files are errors with exit code 2, positioned.
func TestDiffErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema": "gpuleak.baseline/v1", "sites": [{"key": 7}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	future := filepath.Join(dir, "future.json")
	if err := os.WriteFile(future, []byte(`{"schema": "gpuleak.report/v9", "findings": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", td + "pytorch/clean_train_loop.pickle"}, "diff needs two inputs"},
		{[]string{"diff", "-", "-"}, "standard input"},
		{[]string{"diff", "--format", "sarif", bad, bad}, `unknown format "sarif" for diff`},
		{[]string{"diff", bad, td + "pytorch/clean_train_loop.pickle"}, bad + ":"},
		{[]string{"analyze", "--baseline", bad, td + "pytorch/clean_train_loop.pickle"}, bad + ":"},
		{[]string{"analyze", "--baseline", td + "pytorch/clean_train_loop.pickle", td + "pytorch/clean_train_loop.pickle"}, "not a baseline"},
		{[]string{"diff", future, future}, `schema "gpuleak.report/v9"`},
	} {
		code, _, errOut := run(t, nil, c.args...)
		if code != ExitInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}
