package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	// A report written while an input could not be read (exit 2), or from
	// one read in part, warns that it holds none or only some of that
	// input's sites; it used to compare as a whole run, silently.
	empty := filepath.Join(dir, "empty.pickle")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inputs []string
		code   int
		want   string
	}{
		{[]string{td + "pytorch/leak_train_loop.pickle", empty}, ExitInput, "was written while an input could not be read (" + empty + ": byte offset 0: empty input)"},
		{[]string{td + "nvml/pynvml_cut_record_mid_log.jsonl"}, ExitOK, "pynvml_cut_record_mid_log.jsonl read in part (1 line could not be read and was skipped (line 13))"},
	} {
		code, out, _ := run(t, nil, append([]string{"analyze", "--format", "json", "--top", "0"}, c.inputs...)...)
		if code != c.code {
			t.Fatalf("%v: exit %d", c.inputs, code)
		}
		p := filepath.Join(dir, "partial.json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if d := diffJSON(t, p, p); !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, c.want) }) {
			t.Errorf("%v: warnings %q, want one saying %q", c.inputs, d.Warnings, c.want)
		}
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

// lookalikeEntries fails the test for entries a user cannot tell apart:
// the same kind, device, allocator, site and shown stack frames, and no
// Differs saying what sets them apart.
func lookalikeEntries(t *testing.T, name string, d *report.DiffReport) {
	t.Helper()
	seen := map[string]string{}
	for _, e := range d.Entries {
		st := e.Stack[:min(len(e.Stack), 6)]
		k := fmt.Sprint(e.Kind, e.Device != nil && *e.Device >= 0, e.Allocator, e.Site, st, len(e.Stack) > 6, e.Differs)
		if e.Device != nil {
			k += fmt.Sprint(*e.Device)
		}
		if prev, ok := seen[k]; ok {
			t.Errorf("%s: %s and %s entries both show %s %s %q with nothing telling them apart", name, prev, e.Status, e.Kind, e.Allocator, e.Site)
		}
		seen[k] = e.Status
	}
}

// The cuBLAS workspace (at::cuda::setWorkspaceForHandle, 32 MiB, kept
// by the handle: retained) is allocated at a run's first GEMM; in the
// GPT-2 leak run that GEMM is reached from mm_mat2_backward, in
// stacks_all from mm_mat1_backward (both stacks read with Python's
// pickle). The two stacks differ at frame 7, past the six frames the
// table shows: the diff lists one site new and one fixed, and must say
// which frame tells them apart.
func TestDiffLookalikeCppStacks(t *testing.T) {
	base, next := td+"pytorch/hf_gpt2_leak.pickle.gz", td+"pytorch/stacks_all.pickle"
	d := diffJSON(t, base, next)
	lookalikeEntries(t, "hf_gpt2_leak -> stacks_all", d)
	var got []string
	for _, e := range d.Entries {
		if e.Site == "at::cuda::setWorkspaceForHandle" {
			got = append(got, e.Status+" "+e.Differs)
		}
	}
	want := []string{"new frame 7: torch::autograd::generated::details::mm_mat1_backward", "fixed frame 7: torch::autograd::generated::details::mm_mat2_backward"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("workspace entries %q, want %q", got, want)
	}
	_, out, _ := run(t, nil, "diff", base, next)
	if !strings.Contains(out, "differs from the entry shown the same by its frame 7: torch::autograd::generated::details::mm_mat2_backward\n") {
		t.Errorf("table:\n%s", out)
	}
}

// Sites that differ by a part of their key the site text did not show:
// NVML series of GPU 0 on the host "vm" (the H200 capture) and of GPU 0
// of a log that names no host are two GPUs; compute-sanitizer leaks
// without a backtrace from cudaMallocHost (pinned, in the cut CuPy log)
// and from unknown allocators are two sites. Each shows what it is.
func TestDiffLookalikeKeyParts(t *testing.T) {
	for _, c := range []struct{ base, next, want string }{
		{td + "nvml/query_gpu.csv", td + "nvml/capture_h200_100ms.jsonl", "GPU 0 on vm"},
		{td + "sanitizer/leak_nobacktrace.txt", td + "sanitizer/pub_cupy8904_static_cut.txt", "(no stack) [pinned memory]"},
	} {
		d := diffJSON(t, c.base, c.next)
		lookalikeEntries(t, filepath.Base(c.base)+" -> "+filepath.Base(c.next), d)
		if _, out, _ := run(t, nil, "diff", c.base, c.next); !strings.Contains(out, c.want) {
			t.Errorf("%s -> %s: want %q in\n%s", c.base, c.next, c.want, out)
		}
	}
	// Within one run too: san_torch.txt keeps 2 MiB of device memory and
	// 4 bytes of pinned memory at the same Python line.
	d := diffJSON(t, td+"sanitizer/san_torch.txt", td+"sanitizer/san_torch.txt", "--all")
	lookalikeEntries(t, "san_torch", d)
}

// Every pair of real inputs that make sense together: no two entries a
// user cannot tell apart, in either direction.
func TestDiffLookalikePairs(t *testing.T) {
	pairs := [][2]string{
		{td + "pytorch/clean_train_loop.pickle", td + "pytorch/leak_train_loop.pickle"},
		{td + "pytorch/hf_gpt2_leak.pickle.gz", td + "pytorch/stacks_all.pickle"},
		{td + "pytorch/slow_leak_every_k.pickle", td + "pytorch/first_step_growth.pickle"},
		{td + "pytorch/side_stream.pickle", td + "pytorch/side_stream_synced.pickle"},
		{td + "sanitizer/leak_full.txt", td + "sanitizer/leak_with_oob.txt"},
		{td + "sanitizer/leak_save.xml", td + "sanitizer/leak_long_backtrace.txt"},
		{td + "nvml/pynvml.jsonl", td + "nvml/capture_h200_1s.jsonl"},
	}
	field := fieldSnapshots + "/"
	if _, err := os.Stat(field); err == nil {
		for _, p := range [][2]string{{"ZijianDu__memory.pickle", "ZijianDu__memory__a632ffb.pickle"},
			{"Maphsge4__snapshot.pickle", "Maphsge4__snapshot__ec5be11.pickle"},
			{"notHanmin__memory_snapshot_forward.pickle", "notHanmin__memory_snapshot_forward_without_mixed.pickle"}} {
			pairs = append(pairs, [2]string{field + p[0], field + p[1]})
		}
	} else {
		t.Logf("%s absent: field pairs not checked", field)
	}
	for _, p := range pairs {
		for _, dir := range [][2]string{p, {p[1], p[0]}} {
			lookalikeEntries(t, filepath.Base(dir[0])+" -> "+filepath.Base(dir[1]), diffJSON(t, dir[0], dir[1], "--all"))
		}
	}
}

// writeBaseline writes a gpuleak.baseline/v1 file of the given sites
// (JSON objects) into dir.
func writeBaseline(t *testing.T, dir, name string, sites ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(`{"schema": "gpuleak.baseline/v1", "sites": [`+strings.Join(sites, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// site is a baseline site of key "leak|dev0|forward @ m.py|train @ m.py"
// (or kind) at the given lines of forward and train.
func site(kind string, line, caller int, bytes int64, count int, extra string) string {
	return fmt.Sprintf(`{"key": "%s|dev0|forward @ m.py|train @ m.py", "kind": %q, "device": 0, "site": "forward (m.py:%d)",
		"stack": ["forward (m.py:%d)", "train (m.py:%d)"], "lines": "%d,%d", "bytes": %d, "count": %d%s}`,
		kind, kind, line, line, caller, line, caller, bytes, count, extra)
}

// Sites match by their functions and files; lines tell apart two
// statements of one function in a run. One site in each run at other
// lines is the same code moved (no other candidate), shown with where it
// was; several are new and fixed, each shown by its line with a note. A
// baseline without lines compares a key's sites added up.
func TestDiffLines(t *testing.T) {
	dir := t.TempDir()
	statuses := func(d *report.DiffReport) []string {
		var s []string
		for _, e := range d.Entries {
			s = append(s, fmt.Sprintf("%s %s %d->%d", e.Status, e.Site, e.BeforeBytes, e.AfterBytes))
		}
		return s
	}
	// Moved: line 11 -> 14 (an edit above it), the caller 24 -> 27.
	d := diffJSON(t, writeBaseline(t, dir, "a.json", site("leak", 11, 24, 1<<20, 4, "")), writeBaseline(t, dir, "b.json", site("leak", 14, 27, 1<<20, 4, "")))
	if got := statuses(d); !reflect.DeepEqual(got, []string{"same forward (m.py:14) 1048576->1048576"}) ||
		d.Entries[0].BeforeSite != "forward (m.py:11)" || !strings.Contains(d.Entries[0].Note, "no other site") {
		t.Errorf("moved: %q, %+v", got, d.Entries)
	}
	// Two statements in BASE (11: 1 MiB, 15: 2 MiB), one of them again in
	// NEW with 3 MiB, the other at 20: one site each run at lines the
	// other has not, paired as moved (15 -> 20).
	d = diffJSON(t, writeBaseline(t, dir, "c.json", site("leak", 11, 24, 1<<20, 4, ""), site("leak", 15, 24, 2<<20, 4, "")),
		writeBaseline(t, dir, "d.json", site("leak", 11, 24, 3<<20, 4, ""), site("leak", 20, 24, 1<<20, 1, "")))
	want := []string{"grown forward (m.py:11) 1048576->3145728", "shrunk forward (m.py:20) 2097152->1048576"}
	if got := statuses(d); !reflect.DeepEqual(got, want) || d.Entries[1].BeforeSite != "forward (m.py:15)" || d.Entries[0].BeforeSite != "" {
		t.Errorf("two statements: %q, want %q", got, want)
	}
	// Several moved in order (an edit of 3 lines above both, the caller
	// too): paired in line order.
	d = diffJSON(t, writeBaseline(t, dir, "c.json", site("leak", 11, 24, 1<<20, 4, ""), site("leak", 15, 24, 2<<20, 4, "")),
		writeBaseline(t, dir, "d.json", site("leak", 14, 27, 1<<20, 4, ""), site("leak", 18, 27, 2<<20, 4, "")))
	want = []string{"same forward (m.py:18) 2097152->2097152", "same forward (m.py:14) 1048576->1048576"}
	if got := statuses(d); !reflect.DeepEqual(got, want) || d.Entries[0].BeforeSite != "forward (m.py:15)" || !strings.Contains(d.Entries[0].Note, "2 sites") {
		t.Errorf("moved in order: %q, want %q (%+v)", got, want, d.Entries)
	}
	// Not as many (a statement added), or not in the same order in every
	// frame (forward's lines in one order, their callers' in the other):
	// new and fixed, each naming the other run's sites.
	for _, next := range [][]string{
		{site("leak", 11, 24, 1<<20, 4, ""), site("leak", 20, 24, 1<<20, 1, ""), site("leak", 25, 24, 1<<20, 1, "")},
		{site("leak", 12, 30, 1<<20, 4, ""), site("leak", 16, 24, 2<<20, 4, "")},
	} {
		d = diffJSON(t, writeBaseline(t, dir, "c.json", site("leak", 11, 24, 1<<20, 4, ""), site("leak", 15, 30, 2<<20, 4, "")),
			writeBaseline(t, dir, "d.json", next...))
		n := map[string]int{}
		for _, e := range d.Entries {
			n[e.Status]++
			if (e.Status == report.StatusNew || e.Status == report.StatusFixed) && !strings.Contains(e.Note, "which one is not known") {
				t.Errorf("%s %s: note %q", e.Status, e.Site, e.Note)
			}
			if e.BeforeSite != "" {
				t.Errorf("%s paired as moved", e.Site)
			}
		}
		if n[report.StatusNew] == 0 || n[report.StatusFixed] == 0 {
			t.Errorf("statuses %v", n)
		}
	}
	// A baseline written before lines were recorded: the key's sites,
	// added up (4 MiB), against its one site.
	old := `{"key": "leak|dev0|forward @ m.py|train @ m.py", "kind": "leak", "device": 0, "site": "forward (m.py:11)", "bytes": 3145728, "count": 8}`
	d = diffJSON(t, writeBaseline(t, dir, "e.json", old), writeBaseline(t, dir, "f.json", site("leak", 11, 24, 3<<20, 4, ""), site("leak", 20, 24, 1<<20, 1, "")))
	if got := statuses(d); !reflect.DeepEqual(got, []string{"grown forward (m.py:11) 3145728->4194304"}) || !strings.Contains(d.Entries[0].Note, "2 sites of these functions and files at other lines, added up") {
		t.Errorf("old baseline: %q", got)
	}
}

// Real runs whose sites are statements of one function: multi_gpu_leak
// keeps memory at several lines under <module> (multi_gpu_leak.py); a
// baseline of the run has a site for each, and the run against it is the
// same throughout, every finding left out as in the baseline.
func TestBaselineLinesSameRun(t *testing.T) {
	in := td + "pytorch/multi_gpu_leak.pickle"
	base := filepath.Join(t.TempDir(), "base.json")
	code, out, errOut := run(t, nil, "analyze", "--write-baseline", base, "--format", "json", "--top", "0", in)
	if code != ExitOK {
		t.Fatalf("exit %d %q", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for i := range r.Findings {
		keys[report.SiteKey(&r.Findings[i])]++
	}
	split := false
	for _, n := range keys {
		split = split || n > 1
	}
	if !split {
		t.Fatal("no key with two findings: the input no longer tests lines")
	}
	code, out, errOut = run(t, nil, "analyze", "--baseline", base, "--format", "json", "--top", "0", in)
	if code != ExitOK {
		t.Fatalf("exit %d %q", code, errOut)
	}
	var again report.Report
	if err := json.Unmarshal([]byte(out), &again); err != nil {
		t.Fatal(err)
	}
	if len(again.Findings) != 0 || again.Baseline.LeftOut != len(r.Findings) || again.Baseline.Totals["same"].Sites != again.Baseline.Totals["all"].Sites {
		t.Errorf("the run against its own baseline: %d findings, %+v", len(again.Findings), again.Baseline)
	}
	d := diffJSON(t, base, in, "--all")
	for _, e := range d.Entries {
		if e.Status != report.StatusSame || e.Note != "" {
			t.Errorf("entry %+v", e)
		}
	}
}

// A leak whose runs' traces show different iterations is judged per
// iteration: 80 MiB over 200 iterations and 40 MiB over 100 keep the
// same 409.6 KiB per iteration, the same leak run for fewer iterations,
// not a shrunk one; 120 MiB over 100 is grown (3x per iteration).
func TestDiffIterations(t *testing.T) {
	dir := t.TempDir()
	base := writeBaseline(t, dir, "a.json", site("leak", 11, 24, 80<<20, 40, `, "iterations": 200`))
	for _, c := range []struct {
		bytes int64
		want  string
	}{{40 << 20, report.StatusSame}, {120 << 20, report.StatusGrown}, {20 << 20, report.StatusShrunk}} {
		d := diffJSON(t, base, writeBaseline(t, dir, "b.json", site("leak", 11, 24, c.bytes, 20, `, "iterations": 100`)))
		if len(d.Entries) != 1 || d.Entries[0].Status != c.want || !strings.Contains(d.Entries[0].Note, "200 iterations, NEW's 100") {
			t.Errorf("%d bytes over 100 iterations: %+v, want %s", c.bytes, d.Entries, c.want)
		}
	}
}

// A site that held memory as retained in BASE and as a leak in NEW is
// new and fixed by kind, and each says what the other run held there.
func TestDiffKindChange(t *testing.T) {
	dir := t.TempDir()
	d := diffJSON(t, writeBaseline(t, dir, "a.json", site("retained", 11, 24, 32<<20, 1, "")), writeBaseline(t, dir, "b.json", site("leak", 11, 24, 80<<20, 40, "")))
	if len(d.Entries) != 2 || !strings.Contains(d.Entries[0].Note, "held 32 MiB in 1 allocation in BASE as retained") ||
		!strings.Contains(d.Entries[1].Note, "holds 80 MiB in 40 allocations in NEW as leak") {
		t.Errorf("%+v", d.Entries)
	}
}

// The same script on another GPU: its sites are other sites (the device
// is part of the key), and each says what the other run held there.
func TestDiffDeviceChange(t *testing.T) {
	dir := t.TempDir()
	dev1 := strings.NewReplacer("|dev0|", "|dev1|", `"device": 0`, `"device": 1`).Replace(site("leak", 11, 24, 80<<20, 40, ""))
	d := diffJSON(t, writeBaseline(t, dir, "a.json", site("leak", 11, 24, 80<<20, 40, "")), writeBaseline(t, dir, "b.json", dev1))
	if len(d.Entries) != 2 || !strings.Contains(d.Entries[0].Note, "held 80 MiB in 40 allocations in BASE on device 0 (listed as fixed): new on device 1 only") {
		t.Errorf("%+v", d.Entries)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "BASE held memory on device 0 and NEW on device 1, none in common") {
		t.Errorf("warnings %q", d.Warnings)
	}
	// With a device in common, no warning.
	d = diffJSON(t, writeBaseline(t, dir, "c.json", site("leak", 11, 24, 80<<20, 40, ""), dev1), writeBaseline(t, dir, "d.json", dev1))
	if len(d.Warnings) != 0 {
		t.Errorf("warnings %q", d.Warnings)
	}
}

// Two field snapshots of one commit (notHanmin/assignment2-systems
// bbd29721256d, ../shared/field/README.md): forward and
// forward_without_mixed were recorded by two versions of
// benchmarking_script.py (its frames' lines differ) calling the same
// adapters.py. Sites paired as moved must be so consistently: each
// (file, line) of BASE goes to one line of NEW in every pair (an edit
// moves a line one way), and adapters.py, the same file in both, does not
// move at all.
func TestDiffMovedFieldPair(t *testing.T) {
	dir := fieldSnapshots + "/"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/field/snapshots is absent: field inputs not checked")
	}
	d := diffJSON(t, dir+"notHanmin__memory_snapshot_forward.pickle", dir+"notHanmin__memory_snapshot_forward_without_mixed.pickle", "--all")
	fileLine := func(fr string) (string, string) {
		i, j := strings.LastIndex(fr, " ("), strings.LastIndex(fr, ":")
		if i < 0 || j < i {
			return fr, ""
		}
		return fr[i+2 : j], strings.TrimSuffix(fr[j+1:], ")")
	}
	moves := map[string]string{}
	paired := 0
	for _, e := range d.Entries {
		if e.BeforeStack == nil {
			continue
		}
		paired++
		if len(e.BeforeStack) != len(e.Stack) || !strings.Contains(e.Note, "edit") {
			t.Errorf("%s: %d frames before, %d after; note %q", e.Site, len(e.BeforeStack), len(e.Stack), e.Note)
			continue
		}
		for i := range e.Stack {
			bf, bl := fileLine(e.BeforeStack[i])
			af, al := fileLine(e.Stack[i])
			if bf != af {
				t.Errorf("%s: frame %d is %s in BASE, %s in NEW", e.Site, i+1, bf, af)
			}
			if bf == "adapters.py" && bl != al {
				t.Errorf("%s: adapters.py:%s paired with adapters.py:%s", e.Site, bl, al)
			}
			if prev, ok := moves[bf+":"+bl]; ok && prev != al {
				t.Errorf("%s:%s goes to line %s and to line %s", bf, bl, prev, al)
			}
			moves[bf+":"+bl] = al
		}
	}
	if paired == 0 {
		t.Error("no site paired as moved: benchmarking_script.py's lines differ between the two")
	}
	lookalikeEntries(t, "notHanmin", d)
}

// analyze --baseline compares as diff does: a leak the baseline held as
// another kind at the same site (live: a snapshot without a trace cannot
// judge growth) is reported new with what the baseline held. The run
// also keeps 2 retained allocations at that site (forward, line 11):
// only the leak's site changes kind.
func TestBaselineKindChangeNote(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", td+"pytorch/leak_train_loop.pickle")
	if code != ExitOK {
		t.Fatalf("exit %d %q", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	// The baseline: the run's leak as live, 32 MiB.
	var sites []string
	for i := range r.Findings {
		f := r.Findings[i]
		if f.Kind != report.KindLeak {
			continue
		}
		f.Kind, f.Bytes, f.Count = report.KindLive, 32<<20, 16
		b := report.NewBaseline([]report.Finding{f}, nil, nil)
		raw, _ := json.Marshal(b.Sites[0])
		sites = append(sites, string(raw))
	}
	if len(sites) != 1 {
		t.Fatalf("%d leaks, want 1 (fixtures README)", len(sites))
	}
	base := writeBaseline(t, dir, "base.json", sites...)
	code, out, _ = run(t, nil, "analyze", "--baseline", base, td+"pytorch/leak_train_loop.pickle")
	if code != ExitOK || !strings.Contains(out, "new (not in the baseline); this site held 32 MiB in 16 allocations in the baseline as live") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// A baseline is untrusted: many sites of one key, or that show alike,
// and long lines lists are compared in bounded time. 3000 sites of one
// key at lines each run has not (not paired: more than 64), one site of
// another key in each run with 100,001 frames (paired: the only one), and
// 3000 entries shown alike (h at m.py:1): 6000 new, 3000 fixed, 1 same.
func TestDiffBoundedBaseline(t *testing.T) {
	dir := t.TempDir()
	var a, b []string
	for i := range 3000 {
		a = append(a, site("leak", 10+i, 24, 1<<20, 1, ""))
		b = append(b, site("leak", 20000+i, 24, 1<<20, 1, ""))
	}
	long := strings.Repeat("1,", 100000) + "1"
	a = append(a, fmt.Sprintf(`{"key": "leak|dev0|g @ m.py", "kind": "leak", "device": 0, "site": "g (m.py:1)", "lines": %q, "bytes": 1, "count": 1}`, long))
	b = append(b, fmt.Sprintf(`{"key": "leak|dev0|g @ m.py", "kind": "leak", "device": 0, "site": "g (m.py:1)", "lines": %q, "bytes": 1, "count": 1}`, long+",2"))
	for i := range 3000 {
		b = append(b, fmt.Sprintf(`{"key": "leak|dev0|h%d @ m.py", "kind": "leak", "device": 0, "site": "h (m.py:1)", "bytes": 1, "count": 1}`, i))
	}
	d := diffJSON(t, writeBaseline(t, dir, "a.json", a...), writeBaseline(t, dir, "b.json", b...))
	if d.Totals["new"].Sites != 6000 || d.Totals["fixed"].Sites != 3000 || d.Totals["shrunk"].Sites+d.Totals["grown"].Sites+d.Totals["same"].Sites != 1 {
		t.Errorf("totals %+v", d.Totals)
	}
}

// The diff table, as people read it: sites told apart by a frame past the
// six shown (the cuBLAS workspace), and compute-sanitizer sites with
// their allocator.
func TestDiffGolden(t *testing.T) {
	for _, c := range []struct{ golden, base, next string }{
		{"diff_hf_gpt2_leak_stacks_all.table", td + "pytorch/hf_gpt2_leak.pickle.gz", td + "pytorch/stacks_all.pickle"},
		{"diff_leak_full_leak_with_oob.table", td + "sanitizer/leak_full.txt", td + "sanitizer/leak_with_oob.txt"},
	} {
		code, out, errOut := run(t, nil, "diff", c.base, c.next)
		if code != ExitOK {
			t.Fatalf("%s: exit %d %q", c.golden, code, errOut)
		}
		golden(t, c.golden+".stdout", out)
	}
}

// The same program run with and without --show-backtrace no (fixtures
// README: 6,677,056 and 5,890,624 bytes leaked, by the same statements):
// NEW holds its 5.6 MiB with no stack, so BASE's stacked sites may be
// among it and are not fixed, and NEW's stack-less memory is not new;
// every entry is unmatched and --fail-on new does not trip. A snapshot
// recorded without stacks (Muduard's 6241 live allocations) does the
// same to the other run's sites.
func TestDiffStacklessRun(t *testing.T) {
	full, nobt := td+"sanitizer/leak_full.txt", td+"sanitizer/leak_nobacktrace.txt"
	for _, pair := range [][2]string{{full, nobt}, {nobt, full}} {
		d := diffJSON(t, pair[0], pair[1])
		if len(d.Entries) != 5 {
			t.Errorf("%s -> %s: %d entries, want BASE's 4 sites and 1 stack-less: %+v", pair[0], pair[1], len(d.Entries), d.Entries)
		}
		for _, e := range d.Entries {
			if e.Status != report.StatusUnmatched || !strings.Contains(e.Note, "recorded no stacks") {
				t.Errorf("%s -> %s: entry %s %s, note %q; want unmatched with a note", pair[0], pair[1], e.Status, e.Site, e.Note)
			}
		}
		if u := d.Totals[report.StatusUnmatched]; u.Sites != 5 || u.BeforeBytes+u.AfterBytes != 2*6677056-786432 {
			// 6,677,056 bytes with stacks, 5,890,624 without (fixtures
			// README; the run without leaks 3 of step's 262,144 fewer).
			t.Errorf("unmatched totals %+v", u)
		}
	}
	dir := t.TempDir()
	b := filepath.Join(dir, "b.json")
	if code, _, errOut := run(t, nil, "analyze", "--write-baseline", b, full); code != ExitOK && code != ExitFindings {
		t.Fatalf("write baseline: exit %d %s", code, errOut)
	}
	code, out, errOut := run(t, nil, "analyze", "--baseline", b, "--fail-on", "new", "-q", nobt)
	if code != ExitOK {
		t.Errorf("--fail-on new on the same leaks without stacks: exit %d, %s %s", code, out, errOut)
	}
	dirF := fieldSnapshots + "/"
	if _, err := os.Stat(dirF); err != nil {
		t.Skip("../shared/field/snapshots is absent: field inputs not checked")
	}
	d := diffJSON(t, dirF+"Muduard__dump_snapshot__3f83a65.pickle", dirF+"Muduard__dump_snapshot.pickle")
	for _, e := range d.Entries {
		if e.Status == report.StatusNew || e.Status == report.StatusFixed {
			t.Errorf("Muduard: %s %s %s, want unmatched: BASE has no stacks", e.Status, e.Kind, e.Site)
		}
	}
	if d.Totals[report.StatusUnmatched].Sites == 0 {
		t.Errorf("Muduard totals %+v", d.Totals)
	}
}

// grad_accum_clean calls case_grad_accum_leak's code through one more
// frame (rec.py:67-68: case_grad_accum_clean calls it), so its sites have
// the same innermost frames and other outer frames: each is one site
// called through another path, not a fixed and a new one that look alike.
// What the leak adds (rec.py:61, kept every step) stays new.
func TestDiffOtherPath(t *testing.T) {
	d := diffJSON(t, td+"pytorch/hv/grad_accum_clean.pickle", td+"pytorch/hv/grad_accum_leak.pickle", "--all")
	seen := map[string]string{}
	for _, e := range d.Entries {
		if e.Status == report.StatusNew || e.Status == report.StatusFixed {
			if s, ok := seen[string(e.Kind)+e.Site]; ok && s != e.Status {
				t.Errorf("%s %s is both new and fixed", e.Kind, e.Site)
			}
			seen[string(e.Kind)+e.Site] = e.Status
		}
		if e.Site == "forward (rec.py:38)" {
			if e.Status != report.StatusSame || e.BeforeBytes != e.AfterBytes || e.BeforeBytes == 0 ||
				!strings.Contains(e.Note, "another path") || !strings.Contains(e.Note, "case_grad_accum_clean (rec.py:68) in BASE") ||
				len(e.BeforeStack) != len(e.Stack)+1 {
				t.Errorf("forward (rec.py:38): %+v", e)
			}
		}
	}
	if n := d.Totals[report.StatusNew]; n.Sites != 1 || d.Entries[0].Site != "case_grad_accum_leak (rec.py:61)" || d.Totals[report.StatusFixed].Sites != 0 {
		t.Errorf("totals %+v, first %+v", d.Totals, d.Entries[0])
	}
	// Two fixed sites and one new with the same innermost frame: which
	// was which is not known, so none is merged.
	dir := t.TempDir()
	other := func(caller string, line int, bytes int64) string {
		return fmt.Sprintf(`{"key": "leak|dev0|forward @ m.py|%s @ m.py", "kind": "leak", "device": 0, "site": "forward (m.py:11)",
		"stack": ["forward (m.py:11)", "%s (m.py:%d)"], "lines": "11,%d", "bytes": %d, "count": 1}`, caller, caller, line, line, bytes)
	}
	d = diffJSON(t, writeBaseline(t, dir, "a.json", other("a", 5, 1<<20), other("b", 7, 1<<20)), writeBaseline(t, dir, "b.json", other("c", 9, 1<<20)))
	if d.Totals[report.StatusNew].Sites != 1 || d.Totals[report.StatusFixed].Sites != 2 {
		t.Errorf("ambiguous: %+v", d.Totals)
	}
	// One each, another caller in place of a: other code, not merged.
	d = diffJSON(t, writeBaseline(t, dir, "c.json", other("a", 5, 1<<20)), writeBaseline(t, dir, "d.json", other("c", 9, 1<<20)), "--all")
	if len(d.Entries) != 2 {
		t.Errorf("replaced caller: %+v", d.Entries)
	}
	// One each, a wrapper w between forward and a: merged, the same bytes.
	wrapped := `{"key": "leak|dev0|forward @ m.py|w @ m.py|a @ m.py", "kind": "leak", "device": 0, "site": "forward (m.py:11)",
		"stack": ["forward (m.py:11)", "w (m.py:3)", "a (m.py:5)"], "lines": "11,3,5", "bytes": 1048576, "count": 1}`
	d = diffJSON(t, writeBaseline(t, dir, "e.json", other("a", 5, 1<<20)), writeBaseline(t, dir, "f.json", wrapped), "--all")
	if len(d.Entries) != 1 || d.Entries[0].Status != report.StatusSame || !strings.Contains(d.Entries[0].Note, "frame 2, a (m.py:5) in BASE, w (m.py:3) in NEW") {
		t.Errorf("wrapper: %+v", d.Entries)
	}
}

// leak_with_oob.txt is the program of leak_full.txt with an out-of-bounds
// write (fixtures README): after the fault cudaMallocHost at main
// (leaky.cu:41) fails with cudaErrorLaunchFailure, so the 1 MiB of pinned
// memory leak_full.txt leaks there was never allocated: unreached, not
// fixed. A baseline records where each error happened ("at").
func TestDiffUnreached(t *testing.T) {
	d := diffJSON(t, td+"sanitizer/leak_full.txt", td+"sanitizer/leak_with_oob.txt")
	found := false
	for _, e := range d.Entries {
		if e.Site == "main (leaky.cu:41)" && e.Kind == report.KindLeak {
			found = true
			if e.Status != report.StatusUnreached || e.BeforeBytes != 1<<20 || !strings.Contains(e.Note, "cudaMallocHost failed with cudaErrorLaunchFailure") {
				t.Errorf("pinned site: %+v", e)
			}
		}
	}
	if !found || d.Totals[report.StatusFixed].Sites != 0 {
		t.Errorf("found %v, totals %+v", found, d.Totals)
	}
	// A failed call at another site, with an error a kernel fault leaves
	// behind: the site stays fixed, with a note that the run may have
	// stopped before it.
	dir := t.TempDir()
	leak := `{"key": "leak|device|k @ x.cu", "kind": "leak", "device": null, "site": "k (x.cu:5)", "stack": ["k (x.cu:5)"], "lines": "5", "allocator": "device", "bytes": 4096, "count": 1}`
	failed := `{"key": "sanitizer-error|api|cudaFree|cudaErrorLaunchFailure||main @ x.cu", "kind": "sanitizer-error", "device": null, "site": "cudaFree failed", "at": "main (x.cu:9)", "bytes": 0, "count": 1}`
	d = diffJSON(t, writeBaseline(t, dir, "a.json", leak), writeBaseline(t, dir, "n.json", failed))
	if d.Totals[report.StatusFixed].Sites != 1 {
		t.Errorf("after a kernel fault: totals %+v", d.Totals)
	}
	for _, e := range d.Entries {
		if e.Kind == report.KindLeak && (e.Status != report.StatusFixed || !strings.Contains(e.Note, "may have stopped before this site")) {
			t.Errorf("after a kernel fault: %+v", e)
		}
	}
	b := filepath.Join(dir, "b.json")
	run(t, nil, "analyze", "--write-baseline", b, td+"sanitizer/leak_with_oob.txt")
	raw, err := os.ReadFile(b)
	if err != nil || !strings.Contains(string(raw), `"at": "main (leaky.cu:41)"`) {
		t.Errorf("baseline (%v):\n%s", err, raw)
	}
}

// A profiler trace and the memory timeline of the same run (testdata's
// profile_keep_outputs) hold sites keyed differently: ops with stacks and
// categories. Diffing them claims nothing fixed or new: every memory entry
// is unmatched, with a note, and a warning says why. A timeline category
// records no allocations: its count stays 0 (as in the JSON report) and
// the table says its bytes alone, never "in 1 allocation". The same
// timeline against itself still compares (all same): only mixed inputs
// are left unmatched.
func TestDiffAcrossInputKinds(t *testing.T) {
	trace := td + "kineto/profile_keep_outputs_trace.json.gz"
	timeline := td + "kineto/profile_keep_outputs_memory_timeline.json"
	code, out, errOut := run(t, nil, "diff", "--format", "json", trace, timeline)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d report.DiffReport
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) == 0 {
		t.Fatal("no entries")
	}
	sawTimeline := false
	for _, e := range d.Entries {
		if e.Status != report.StatusUnmatched || !strings.Contains(e.Note, "cannot match it") {
			t.Errorf("%s %s: status %s note %q; want unmatched, saying why", e.Kind, e.Site, e.Status, e.Note)
		}
		if e.Device == nil { // a timeline category: no device
			sawTimeline = true
			if e.AfterCount != 0 || e.AfterBytes == 0 {
				t.Errorf("timeline %s: %d bytes in %d; want its bytes in count 0", e.Site, e.AfterBytes, e.AfterCount)
			}
		}
	}
	if !sawTimeline {
		t.Error("no timeline category among the entries")
	}
	if len(d.Warnings) == 0 || !strings.Contains(strings.Join(d.Warnings, "\n"), "BASE is read from a PyTorch profiler trace and NEW from a PyTorch memory timeline") {
		t.Errorf("warnings %q; want one saying the inputs' sites cannot be matched", d.Warnings)
	}
	if d.Totals[report.StatusNew].Sites != 0 || d.Totals[report.StatusFixed].Sites != 0 {
		t.Errorf("totals %+v; want no new, no fixed", d.Totals)
	}

	_, table, _ := run(t, nil, "diff", trace, timeline)
	if strings.Contains(table, "-> 65 MiB in 1 allocation") || !strings.Contains(table, "0 B in 0 allocations -> 65 MiB\n") {
		t.Errorf("the timeline's 65 MiB of unknown: want its bytes alone\n%s", table)
	}

	code, out, errOut = run(t, nil, "diff", "--format", "json", timeline, timeline)
	if code != ExitOK {
		t.Fatalf("timeline against itself: exit %d: %s", code, errOut)
	}
	d = report.DiffReport{}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if all := d.Totals["all"].Sites; all == 0 || d.Totals[report.StatusSame].Sites != all {
		t.Errorf("timeline against itself: totals %+v; want every site same", d.Totals)
	}
}

// A memory_summary() against a profiler trace (s32): the summary's
// fragmentation cannot be "fixed" by a run that read only a trace, which
// gives no fragmentation finding, and the trace's leak is not "new" to a
// run that read only a summary, which gives no sites: both unmatched,
// saying why.
func TestDiffSummaryAgainstTrace(t *testing.T) {
	summary := td + "pytorch/s31/summary_dev1_frag.txt"
	trace := td + "kineto/profile_keep_outputs_trace.json.gz"
	code, out, errOut := run(t, nil, "diff", "--format", "json", summary, trace)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d report.DiffReport
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	sawFrag, sawLeak := false, false
	for _, e := range d.Entries {
		if e.Status != report.StatusUnmatched || !strings.Contains(e.Note, "cannot match it") {
			t.Errorf("%s %s: status %s note %q; want unmatched, saying why", e.Kind, e.Site, e.Status, e.Note)
		}
		sawFrag = sawFrag || e.Kind == report.KindFragmentation
		sawLeak = sawLeak || e.Kind == report.KindLeak
	}
	if !sawFrag || !sawLeak {
		t.Errorf("entries %+v: want the summary's fragmentation and the trace's leak", d.Entries)
	}
	if d.Totals[report.StatusNew].Sites != 0 || d.Totals[report.StatusFixed].Sites != 0 {
		t.Errorf("totals %+v; want no new, no fixed", d.Totals)
	}
}

// An OOM message without its traceback against the snapshot, or the
// traceback, of the same OOM (the fixtures' oom_error.txt,
// oom_traceback.txt and oom_observer.pickle; s32 diffed s31's 1 PiB
// message against its snapshot): the message's OOM has no stack, so its
// key is the device alone, and was "fixed" beside a "new" OOM at grow
// (oom.py:12). Which of the other run's OOMs it is, the inputs do not
// tell: both unmatched. The traceback and the snapshot match by stack,
// and the message's rounding of PyTorch's allocated memory (4.19 GiB) is
// no "shrunk".
func TestDiffOOMMessageAgainstSnapshot(t *testing.T) {
	msg, tb, snap := td+"pytorch/oom_error.txt", td+"pytorch/oom_traceback.txt", td+"pytorch/oom_observer.pickle"
	for _, c := range [][2]string{{msg, snap}, {snap, msg}, {msg, tb}, {td + "pytorch/fragmentation_oom_error.txt", td + "pytorch/fragmentation_oom.pickle"}} {
		d := diffJSON(t, c[0], c[1])
		ooms := 0
		for _, e := range d.Entries {
			if e.Kind != report.KindOOM {
				continue
			}
			ooms++
			if e.Status != report.StatusUnmatched || !strings.Contains(e.Note, "without a stack") && !strings.Contains(e.Note, "has no stack") {
				t.Errorf("%s -> %s: oom %s %s, note %q; want unmatched, saying why", c[0], c[1], e.Site, e.Status, e.Note)
			}
			if strings.Contains(e.Note, "as live") || strings.Contains(e.Note, "as oom") {
				t.Errorf("%s -> %s: oom %s: note %q pairs an OOM with memory", c[0], c[1], e.Site, e.Note)
			}
		}
		if ooms < 2 || d.Totals[report.StatusNew].Sites != 0 || d.Totals[report.StatusFixed].Sites != 0 {
			t.Errorf("%s -> %s: %d OOM entries, totals %+v; want both OOMs, no new, no fixed", c[0], c[1], ooms, d.Totals)
		}
	}
	d := diffJSON(t, tb, snap)
	for _, e := range d.Entries {
		if e.Kind == report.KindOOM && (e.Status != report.StatusSame || e.Site != "grow (oom.py:12)" || !strings.Contains(e.Note, "rounding")) {
			t.Errorf("traceback -> snapshot: oom %s %s, note %q; want same, within the message's rounding", e.Site, e.Status, e.Note)
		}
	}
	if d.Totals[report.StatusSame].Sites != 1 {
		t.Errorf("traceback -> snapshot: totals %+v; want the OOM same", d.Totals)
	}
}

// The same leak recorded with with_stack=False and with_stack=True (s32:
// s31's nostack_leak and leak12 traces): without Python stacks the sites
// are the ops alone, so the keys differ. Matched by op: a leak at
// aten::clone in both (the schedule's ProfilerStep#N spans let the
// nostack trace judge growth) is one entry, same per iteration; a trace
// without stacks or steps calls it retained, and then both are
// unmatched, never "fixed retained" beside "new leak".
func TestDiffTraceWithAndWithoutStacks(t *testing.T) {
	stacked := td + "kineto/s31_trace_big_distinfo.json.gz"
	for _, c := range []struct {
		nostack string
		same    bool // a leak in both: one entry
	}{
		{td + "kineto/s31_tb_nostack_sched.pt.trace.json.gz", true},
		{td + "kineto/s32_nostack_leak.trace.json.gz", false},
	} {
		for _, pair := range [][2]string{{c.nostack, stacked}, {stacked, c.nostack}} {
			d := diffJSON(t, pair[0], pair[1])
			if d.Totals[report.StatusNew].Sites != 0 || d.Totals[report.StatusFixed].Sites != 0 {
				t.Errorf("%s -> %s: totals %+v; want no new, no fixed", pair[0], pair[1], d.Totals)
			}
			if c.same {
				if len(d.Entries) != 1 || d.Entries[0].Status != report.StatusSame || d.Entries[0].Kind != report.KindLeak ||
					!strings.Contains(d.Entries[0].Note, "matched by the op that allocated, aten::clone") || len(d.Entries[0].Stack) < 3 {
					t.Errorf("%s -> %s: %+v; want one leak, same, matched by op, with the Python stack", pair[0], pair[1], d.Entries)
				}
				continue
			}
			if len(d.Entries) != 2 {
				t.Fatalf("%s -> %s: %+v; want the leak and the retained", pair[0], pair[1], d.Entries)
			}
			for _, e := range d.Entries {
				if e.Status != report.StatusUnmatched || e.Site != "aten::clone" || !strings.Contains(e.Note, "no Python stacks (recorded without with_stack=True)") {
					t.Errorf("%s -> %s: %s %s %s, note %q; want unmatched, saying why", pair[0], pair[1], e.Kind, e.Site, e.Status, e.Note)
				}
			}
		}
	}
}

// gpuleak's own JSON output given as an input (a CI artifact directory
// holds gpuleak.json beside the logs): an error that says what it is and
// where it goes, for every command. gpuleak oom read an OOM report as a
// log and said "No out-of-memory error in the inputs", exit 0; analyze
// called it an unrecognised format.
func TestOwnDocumentNotAnInput(t *testing.T) {
	dir := t.TempDir()
	code, rep, _ := run(t, nil, "analyze", "--format", "json", td+"pytorch/oom_traceback.txt")
	if code != ExitOK {
		t.Fatal(code)
	}
	reportPath := filepath.Join(dir, "gpuleak.json")
	if err := os.WriteFile(reportPath, []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base.json")
	if code, _, _ := run(t, nil, "analyze", "-q", "--write-baseline", base, td+"pytorch/leak_train_loop.pickle"); code != ExitOK {
		t.Fatal(code)
	}
	for _, c := range []struct{ path, schema string }{{reportPath, "gpuleak.report/v1"}, {base, "gpuleak.baseline/v1"}} {
		for _, cmd := range []string{"analyze", "oom", "trend"} {
			code, _, stderr := run(t, nil, cmd, c.path)
			if code != ExitInput || !strings.Contains(stderr, c.path+": byte offset 0: a "+c.schema+" document, gpuleak's own output, not an input") {
				t.Errorf("%s %s: exit %d, stderr %q", cmd, filepath.Base(c.path), code, stderr)
			}
		}
	}
	// gpuleak report skips them, and says what they are: it said "named
	// like an input (.json): if it is a profiler trace, memory timeline,
	// snapshot or memory_stats(), gpuleak did not recognise its layout".
	if err := os.WriteFile(filepath.Join(dir, "apps.csv"), mustRead(t, td+"nvml/query_apps.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, nil, "report", dir, "--format", "json", "-o", "-")
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var day struct {
		Skipped []struct{ Path, Reason string } `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(out), &day); err != nil {
		t.Fatal(err)
	}
	if len(day.Skipped) != 2 {
		t.Fatalf("skipped: %+v", day.Skipped)
	}
	for _, s := range day.Skipped {
		if !strings.Contains(s.Reason, "document, gpuleak's own output, not an input") || strings.Contains(s.Reason, "did not recognise") {
			t.Errorf("%s skipped because %q", s.Path, s.Reason)
		}
	}
}
