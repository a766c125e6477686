package cmd

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// analyzeReport runs analyze --format json --top 0 and decodes the report.
func analyzeReport(t *testing.T, args ...string) *report.Report {
	t.Helper()
	code, out, errOut := run(t, nil, append([]string{"analyze", "--format", "json", "--top", "0"}, args...)...)
	if code != ExitOK {
		t.Fatalf("analyze %v: exit %d, stderr %q", args, code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func sumBytes(r *report.Report, match func(*report.Finding) bool) int64 {
	var n int64
	for i := range r.Findings {
		if match(&r.Findings[i]) {
			n += r.Findings[i].Bytes
		}
	}
	return n
}

// Every gate trips exactly at its threshold, through the CLI: the value a
// gate measures comes from the report of the same input (or, for the leak,
// from the fixtures' README: 40 blocks of 2 MiB), and the gate is run at
// that value (">" passes, ">=" trips) and one byte or unit under it (">"
// trips).
func TestGatesTripAtThreshold(t *testing.T) {
	leakRun := td + "pytorch/leak_train_loop.pickle"
	oomText := td + "pytorch/oom_error.txt"
	oob := td + "sanitizer/leak_with_oob.txt"
	apps := td + "nvml/query_apps.csv"

	oomRep := analyzeReport(t, oomText)
	var nonPyTorch int64 = -1
	for _, f := range oomRep.Findings {
		if f.Kind == report.KindOOM && f.OOMDetail != nil && f.ProcessInUseBytes != nil && f.AllocatorMemory != nil && f.AllocatorMemory.ReservedBytes != nil {
			nonPyTorch = *f.ProcessInUseBytes - *f.AllocatorMemory.ReservedBytes
		}
	}
	if nonPyTorch <= 0 {
		t.Fatalf("oom_error.txt: no in-use and reserved bytes in the report")
	}
	// pid 538 and others step once (fixtures README): the trend gate
	// takes the used memory of all step series at their last sample.
	step := sumBytes(analyzeReport(t, apps), func(f *report.Finding) bool { return f.Classification == "step" })
	if step == 0 {
		t.Fatal("query_apps.csv: no step series")
	}
	// The leak site: 40 blocks of 2 MiB; the retained pair 32 MiB + 1 MiB
	// and the 32 MiB block without frames.
	const leak = 40 << 21
	const retained = 33<<20 + 32<<20
	cases := []struct {
		path string
		v    int64 // the measure; 4 for leak_with_oob's errors (1 write + 3 API errors)
		name string
	}{
		{leakRun, leak, "leak"},
		{leakRun, retained, "retained"},
		{oomText, nonPyTorch, "non-pytorch"},
		{oob, 4, "sanitizer-errors"},
		{apps, step, "step"},
	}
	for _, c := range cases {
		at := fmt.Sprintf("%s>%d", c.name, c.v)
		under := fmt.Sprintf("%s>%d", c.name, c.v-1)
		atGE := fmt.Sprintf("%s>=%d", c.name, c.v)
		overGE := fmt.Sprintf("%s>=%d", c.name, c.v+1)
		for _, g := range []struct {
			gate string
			want int
		}{{at, ExitOK}, {under, ExitFindings}, {atGE, ExitFindings}, {overGE, ExitOK}} {
			code, out, errOut := run(t, nil, "analyze", "--quiet", "--fail-on", g.gate, c.path)
			if code != g.want {
				t.Errorf("%s on %s: exit %d, want %d; stdout %q stderr %q", g.gate, c.path, code, g.want, out, errOut)
			}
			if code == ExitFindings && !strings.HasPrefix(out, "gpuleak: --fail-on "+g.gate+" tripped: ") {
				t.Errorf("%s: --quiet output %q", g.gate, out)
			}
			if code == ExitOK && out != "" {
				t.Errorf("%s: --quiet printed %q when nothing tripped", g.gate, out)
			}
		}
	}
	// Sizes with units: 80 MiB is exactly the leak.
	if code, _, _ := run(t, nil, "analyze", "-q", "--fail-on", "leak>80MiB", leakRun); code != ExitOK {
		t.Errorf("leak>80MiB: exit %d", code)
	}
	if code, _, _ := run(t, nil, "analyze", "-q", "--fail-on", "leak>79.99MiB", leakRun); code != ExitFindings {
		t.Errorf("leak>79.99MiB: exit %d", code)
	}
	// Plain kinds keep their meaning: any finding of the kind.
	// sanitizer-errors over a snapshot alone could not be judged: exit 2.
	for gate, want := range map[string]int{"leak": ExitFindings, "oom": ExitOK, "sanitizer-errors": ExitInput, "oom,leak": ExitFindings} {
		if code, _, _ := run(t, nil, "analyze", "-q", "--fail-on", gate, leakRun); code != want {
			t.Errorf("%s on the leaking run: exit %d, want %d", gate, code, want)
		}
	}
	if code, _, _ := run(t, nil, "analyze", "-q", "--fail-on", "leak", td+"pytorch/clean_train_loop.pickle"); code != ExitOK {
		t.Errorf("leak on the clean run: exit %d", code)
	}
}

// trend is every NVML series' finding kind, so "any trend finding" would
// trip on every log. The gate counts the leak suspects, growing series,
// as the growing gate does: the fixture query_gpu.csv is a sawtooth that
// ends at 0 B ("allocation churn, not a leak": fixtures README), a
// one-sample log is undetermined, and neither trips; the H200 capture has
// growing series, which trip, and trend>SIZE takes their used memory.
func TestTrendGateTripsOnGrowingSeriesOnly(t *testing.T) {
	one := filepath.Join(t.TempDir(), "one.csv")
	if err := os.WriteFile(one, []byte("timestamp, index, memory.used [MiB], memory.total [MiB]\n2024/01/01 00:00:00.000, 0, 1000 MiB, 80000 MiB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{td + "nvml/query_gpu.csv", td + "nvml/pmon.txt", one} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fail-on", "trend", path)
		if code != ExitOK {
			t.Errorf("trend on %s: exit %d, stderr %q", path, code, errOut)
			continue
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		trends := 0
		for _, f := range r.Findings {
			if f.Kind == report.KindTrend {
				trends++
			}
		}
		if trends == 0 || len(r.Gates) != 1 || r.Gates[0].Tripped || !strings.Contains(r.Gates[0].Why, "no growing NVML series") {
			t.Errorf("trend on %s: %d trend findings, gates %+v", path, trends, r.Gates)
		}
	}
	grow := nvmlData + "capture_h200_1s.jsonl"
	growing := sumBytes(analyzeReport(t, grow), func(f *report.Finding) bool { return f.Classification == "growing" })
	if growing == 0 {
		t.Fatal("capture_h200_1s.jsonl: no growing series")
	}
	for gate, want := range map[string]int{
		"trend": ExitFindings, fmt.Sprintf("trend>%d", growing-1): ExitFindings, fmt.Sprintf("trend>%d", growing): ExitOK,
	} {
		code, out, _ := run(t, nil, "analyze", "-q", "--fail-on", gate, grow)
		if code != want {
			t.Errorf("%s on %s: exit %d, want %d", gate, grow, code, want)
		}
		if code == ExitFindings && !strings.Contains(out, " growing NVML series holding ") {
			t.Errorf("%s: %q does not name the growing series", gate, out)
		}
	}
}

// new and grown against a baseline trip at their thresholds: the step
// site of leaky grows from 2 x 256 KiB (leak_save.xml, "leaky 2") to
// 5 x 256 KiB (leak_full.txt, "leaky 5"): +786,432 bytes, +150%; the leak
// site of leak_train_loop (80 MiB) is new against the clean run.
func TestBaselineGatesTripAtThreshold(t *testing.T) {
	dir := t.TempDir()
	xmlBase := filepath.Join(dir, "xml.json")
	cleanBase := filepath.Join(dir, "clean.json")
	if code, _, errOut := run(t, nil, "analyze", "--write-baseline", xmlBase, "-q", td+"sanitizer/leak_save.xml"); code != ExitOK {
		t.Fatalf("write-baseline: exit %d %q", code, errOut)
	}
	if code, _, errOut := run(t, nil, "analyze", "--write-baseline", cleanBase, "-q", td+"pytorch/clean_train_loop.pickle"); code != ExitOK {
		t.Fatalf("write-baseline: exit %d %q", code, errOut)
	}
	full := td + "sanitizer/leak_full.txt"
	leakRun := td + "pytorch/leak_train_loop.pickle"
	for _, c := range []struct {
		base, path, gate string
		want             int
	}{
		{xmlBase, full, "grown>150%", ExitOK},
		{xmlBase, full, "grown>=150%", ExitFindings},
		{xmlBase, full, "grown>149.99%", ExitFindings},
		{xmlBase, full, "grown>786432", ExitOK},
		{xmlBase, full, "grown>786431", ExitFindings},
		{xmlBase, full, "grown", ExitFindings},
		{xmlBase, full, "new", ExitOK},
		{xmlBase, td + "sanitizer/leak_save.xml", "grown,new", ExitOK},
		{cleanBase, leakRun, "new>83886080", ExitOK},
		{cleanBase, leakRun, "new>83886079", ExitFindings},
		{cleanBase, leakRun, "new", ExitFindings},
		{cleanBase, leakRun, "grown", ExitOK},
	} {
		code, out, errOut := run(t, nil, "analyze", "-q", "--baseline", c.base, "--fail-on", c.gate, c.path)
		if code != c.want {
			t.Errorf("%s against %s on %s: exit %d, want %d (%q %q)", c.gate, filepath.Base(c.base), c.path, code, c.want, out, errOut)
		}
	}
	// Plain grown obeys --tolerance: +150% is within 150%, not within 149%.
	if code, _, _ := run(t, nil, "analyze", "-q", "--baseline", xmlBase, "--tolerance", "150%", "--fail-on", "grown", full); code != ExitOK {
		t.Errorf("grown within --tolerance 150%%: exit %d", code)
	}
	if code, _, _ := run(t, nil, "analyze", "-q", "--baseline", xmlBase, "--tolerance", "149%", "--fail-on", "grown", full); code != ExitFindings {
		t.Errorf("grown beyond --tolerance 149%%: exit %d", code)
	}
}

// A bad expression is a usage error naming its column in the argument.
func TestGateErrorsNamePosition(t *testing.T) {
	for expr, want := range map[string]string{
		"leak>>64MiB":        `bad --fail-on "leak>>64MiB" at column 6: want a size`,
		"leak,,oom":          `bad --fail-on "leak,,oom" at column 6: empty expression`,
		"oom, lek":           `bad --fail-on "oom, lek" at column 6: unknown name "lek"`,
		"leak>10%":           `bad --fail-on "leak>10%" at column 6: a percent compares growth`,
		"leak<4MiB":          `bad --fail-on "leak<4MiB" at column 5: want > or >=`,
		"sanitizer-errors>x": `bad --fail-on "sanitizer-errors>x" at column 18: want a count`,
		"oom,grown>":         `bad --fail-on "oom,grown>" at column 11: want a value`,
		"Leak":               `bad --fail-on "Leak" at column 1: want a name`,
	} {
		code, _, errOut := run(t, nil, "analyze", "--fail-on", expr, td+"pytorch/clean_train_loop.pickle")
		if code != ExitInput || !strings.HasPrefix(errOut, "gpuleak: "+want) {
			t.Errorf("%s: exit %d, stderr %q, want it to start with %q", expr, code, errOut, want)
		}
	}
	// new and grown need a baseline to compare with.
	code, _, errOut := run(t, nil, "analyze", "--fail-on", "new", td+"pytorch/clean_train_loop.pickle")
	if code != ExitInput || !strings.Contains(errOut, "--baseline") {
		t.Errorf("new without --baseline: exit %d, %q", code, errOut)
	}
	// The help documents the expressions with examples.
	_, help, _ := run(t, nil, "analyze", "--help")
	for _, s := range []string{"leak>64MiB", "grown>10%", "non-pytorch>1GiB", "sanitizer-errors>0", "--quiet", "--baseline", "--write-baseline"} {
		if !strings.Contains(help, s) {
			t.Errorf("analyze --help does not mention %s", s)
		}
	}
}

// A baseline written from the leaking run makes the same run pass, and a
// run with one more leaking site (model_reload.pickle's reload leak as a
// second input) fail, naming only that site, as new.
func TestBaselineOfLeakingRun(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "gpuleak-baseline.json")
	leakRun := td + "pytorch/leak_train_loop.pickle"
	if code, out, errOut := run(t, nil, "analyze", "--write-baseline", base, "--fail-on", "leak", "-q", leakRun); code != ExitFindings || !strings.Contains(out, "leak tripped") {
		t.Fatalf("write-baseline with --fail-on leak: exit %d %q %q", code, out, errOut)
	}
	first, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	// Stable: the same run writes the same bytes.
	if code, _, _ := run(t, nil, "analyze", "--write-baseline", base, "-q", leakRun); code != ExitOK {
		t.Fatalf("second write: exit %d", code)
	}
	if second, _ := os.ReadFile(base); string(second) != string(first) {
		t.Errorf("the baseline changed between two writes of the same run")
	}
	var b report.Baseline
	if err := json.Unmarshal(first, &b); err != nil || b.Schema != report.BaselineSchema {
		t.Fatalf("baseline: %v, schema %q", err, b.Schema)
	}
	for i := 1; i < len(b.Sites); i++ {
		if b.Sites[i-1].Key >= b.Sites[i].Key {
			t.Errorf("sites not sorted: %q before %q", b.Sites[i-1].Key, b.Sites[i].Key)
		}
	}
	for _, s := range b.Sites {
		if strings.Contains(s.Key, "/home/") || strings.Contains(s.Key, "0x") {
			t.Errorf("key %q holds a machine's path or an address", s.Key)
		}
	}

	code, out, errOut := run(t, nil, "analyze", "--baseline", base, "--fail-on", "leak,new,grown", "--format", "json", leakRun)
	if code != ExitOK {
		t.Fatalf("the same run against its baseline: exit %d, stderr %q", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || r.Baseline == nil || r.Baseline.LeftOut != 3 || r.Baseline.Totals["same"].Sites != 3 {
		t.Errorf("same run: %d findings, baseline %+v", len(r.Findings), r.Baseline)
	}

	code, out, errOut = run(t, nil, "analyze", "--baseline", base, "--fail-on", "leak", "--format", "json", leakRun, td+"pytorch/model_reload.pickle")
	if code != ExitFindings || !strings.Contains(errOut, "--fail-on leak tripped: 1 leak holding 768 MiB") {
		t.Fatalf("one more leaking site: exit %d, stderr %q", code, errOut)
	}
	r = report.Report{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Path != td+"pytorch/model_reload.pickle" || f.Baseline == nil || f.Baseline.Status != report.StatusNew {
			t.Errorf("finding %s %s at %s: baseline %+v; want only model_reload's sites, new", f.Kind, f.Path, f.Site, f.Baseline)
		}
	}
}

// Markdown and JUnit: golden files of a run with two inputs and two gates,
// one tripped (the leaks hold 85 MiB together), one not (no OOM); and of
// a run against a baseline (a grown site).
func TestCIFormatGoldens(t *testing.T) {
	leakRun := td + "pytorch/leak_train_loop.pickle"
	oob := td + "sanitizer/leak_with_oob.txt"
	base := filepath.Join(t.TempDir(), "base.json")
	if code, _, _ := run(t, nil, "analyze", "-q", "--write-baseline", base, td+"sanitizer/leak_save.xml"); code != ExitOK {
		t.Fatal(code)
	}
	for _, c := range []struct {
		golden string
		code   int
		args   []string
	}{
		{"analyze_leak_oob_failon.markdown", ExitFindings, []string{"analyze", "--format", "markdown", "--fail-on", "leak>64MiB,oom", leakRun, oob}},
		{"analyze_leak_oob_failon.junit", ExitFindings, []string{"analyze", "--format", "junit", "--fail-on", "leak>64MiB,oom", leakRun, oob}},
		{"analyze_leak_oob.junit", ExitOK, []string{"analyze", "--format", "junit", leakRun, oob}},
		{"analyze_grown_baseline.markdown", ExitFindings, []string{"analyze", "--format", "markdown", "--baseline", base, "--fail-on", "grown>100%", td + "sanitizer/leak_full.txt"}},
	} {
		code, out, _ := run(t, nil, c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d", c.golden, code, c.code)
		}
		// The baseline's temporary path changes from run to run.
		out = strings.ReplaceAll(out, base, "BASELINE")
		golden(t, c.golden+".stdout", out)
		if strings.HasSuffix(c.golden, ".junit") {
			// With the gates: the tripped gate and both inputs, whose leaks
			// it counted; without: both inputs, which hold leaks.
			checkJUnit(t, out, map[bool]int{true: 3, false: 2}[c.code == ExitFindings])
		}
	}
}

// checkJUnit reads a JUnit report back: every test case has a classname
// and a name, every failure a message and a body; failed is how many
// cases must fail.
func checkJUnit(t *testing.T, out string, failed int) {
	t.Helper()
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Classname string `xml:"classname,attr"`
				Name      string `xml:"name,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JUnit XML: %v", err)
	}
	fails := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Classname == "" || c.Name == "" {
				t.Errorf("test case %+v without classname or name", c)
			}
			if c.Failure != nil {
				fails++
				if c.Failure.Message == "" || strings.TrimSpace(c.Failure.Body) == "" {
					t.Errorf("failure of %s without message or body", c.Name)
				}
			}
		}
	}
	if fails != doc.Failures || fails != failed {
		t.Errorf("%d failed cases, failures=%d, want %d", fails, doc.Failures, failed)
	}
}

// The Markdown report stays under GitHub's 1 MiB step-summary limit
// however many findings there are, and says what it left out; text from
// inputs cannot open HTML or break the table.
func TestMarkdownBounded(t *testing.T) {
	var r report.Report
	r.Schema = report.Schema
	r.Inputs = []report.Input{{Path: "run|<script>.pickle", Format: "pytorch-snapshot"}}
	long := strings.Repeat("x", 2000)
	for i := 0; i < 5000; i++ {
		r.Findings = append(r.Findings, report.Finding{Kind: report.KindLeak, Path: r.Inputs[0].Path, Bytes: int64(i),
			Message: fmt.Sprintf("leak %d <module> | %s", i, long), Site: report.Frame{Function: "<module>", File: "a|b.py", Line: 1}})
	}
	r.FindingsTotal = len(r.Findings)
	var b strings.Builder
	if err := report.Write(&b, report.Document{Kind: report.DocAnalysis, Report: &r}, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if len(out) >= 1<<20 {
		t.Errorf("%d bytes, over 1 MiB", len(out))
	}
	if !strings.Contains(out, "more items left out to stay under GitHub's 1 MiB") {
		t.Error("no note of what was left out")
	}
	if strings.Contains(out, "<script>") || strings.Contains(out, "<module>") || strings.Contains(out, "run|") {
		t.Error("input text not escaped")
	}
}

// A gate whose findings no input given could produce (sanitizer-errors
// over a snapshot, leak over an NVML log, trend over a snapshot: a CI job
// pointed at the wrong artifacts) is not a pass: it is named on standard
// error and the run exits 2, as for an input not read; the JSON report
// marks it unjudged. With an input that can answer it, it is judged.
func TestGateNoInputCanAnswer(t *testing.T) {
	const td = "../testdata/"
	snap, nvmlLog, san := td+"pytorch/clean_train_loop.pickle", td+"nvml/dmon.txt", td+"sanitizer/leak_full.txt"
	for _, c := range []struct {
		gate, path, want string
	}{
		{"sanitizer-errors>0", snap, "compute-sanitizer report"},
		{"leak", nvmlLog, "PyTorch memory snapshot"},
		{"trend", snap, "NVML sample log"},
		{"growing", san, "NVML sample log"},
		// Kinds only PyTorch's allocator state gives (the session-42
		// tester: fragmentation over an NVML log passed, "nothing to
		// measure"). compute-sanitizer's records are leaks only, and an
		// OOM message holds no segments.
		{"fragmentation", nvmlLog, "memory_summary() table"},
		{"fragmentation", td + "pytorch/oom_error.txt", "PyTorch memory snapshot"},
		{"retained", san, "profiler trace or memory timeline"},
		{"live", nvmlLog, "PyTorch memory snapshot"},
		{"pending-free", san, "PyTorch memory snapshot"},
	} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fail-on", "oom,"+c.gate, c.path)
		if code != ExitInput {
			t.Errorf("%s on %s: exit %d, want %d; stderr %q", c.gate, c.path, code, ExitInput, errOut)
		}
		if !strings.Contains(errOut, "--fail-on "+c.gate+" could not be judged: no input is") || !strings.Contains(errOut, c.want) {
			t.Errorf("%s on %s: stderr %q does not name the gate and the input it needs", c.gate, c.path, errOut)
		}
		if !strings.Contains(out, `"unjudged": true`) {
			t.Errorf("%s on %s: JSON report does not mark the gate unjudged", c.gate, c.path)
		}
	}
	// The same gates, given an input that can answer them, are judged.
	for _, c := range []struct{ gate, path string }{
		{"sanitizer-errors>0", san}, {"leak>1TiB", snap}, {"trend>1TiB", nvmlLog},
		{"fragmentation>1TiB", snap}, {"fragmentation>1TiB", td + "pytorch/memory_summary.txt"}, {"retained>1TiB", snap},
	} {
		if code, _, errOut := run(t, nil, "analyze", "-q", "--fail-on", c.gate, c.path); code != ExitOK {
			t.Errorf("%s on %s: exit %d, want 0; stderr %q", c.gate, c.path, code, errOut)
		}
	}
}

// An unjudged gate is not shown as passed in the Markdown summary or the
// JUnit report: "not judged", and a JUnit error.
func TestGateNotJudgedInCIFormats(t *testing.T) {
	snap := "../testdata/pytorch/clean_train_loop.pickle"
	code, out, _ := run(t, nil, "analyze", "--format", "markdown", "--fail-on", "sanitizer-errors>0", snap)
	if code != ExitInput || !strings.Contains(out, "gate `sanitizer-errors>0` **not judged**") || strings.Contains(out, "passed 1 gate") {
		t.Errorf("markdown: exit %d, %s", code, out)
	}
	code, out, _ = run(t, nil, "analyze", "--format", "junit", "--fail-on", "sanitizer-errors>0", snap)
	if code != ExitInput || !strings.Contains(out, `type="not-judged"`) {
		t.Errorf("junit: exit %d, %s", code, out)
	}
}

// The leak gate needs an input that can judge leaks as it was recorded: a
// snapshot without a trace, or whose trace's allocations carry no stacks
// (context="state"), a profiler trace with neither Python frames nor
// ProfilerStep#N spans, a memory timeline too short to cut into windows,
// a compute-sanitizer log of a run without the leak check: none can hold
// a leak finding, so "no leak" from them is no verdict. Alone, each makes
// the gate not judged (exit 2); beside an input that can judge, the gate
// is judged on that one, names the other (JSON not_judged_on, standard
// error, Markdown, a skipped JUnit case) and exits as that one's verdict.
// A snapshot whose trace was judged clean passes, as before.
func TestLeakGateNeedsInputThatCanJudge(t *testing.T) {
	dir := t.TempDir()
	// The first 10 points of a real memory timeline: too few for the 4
	// windows of 4 points that growth is judged across.
	var tl [2][]json.RawMessage
	data, err := os.ReadFile(td + "kineto/profile_keep_outputs_memory_timeline.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &tl); err != nil {
		t.Fatal(err)
	}
	short, err := json.Marshal([2][]json.RawMessage{tl[0][:10], tl[1][:10]})
	if err != nil {
		t.Fatal(err)
	}
	shortTL := filepath.Join(dir, "short_memory_timeline.json")
	if err := os.WriteFile(shortTL, short, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, why string }{
		{td + "pytorch/s39/state_server_leak.pickle", `context=\"state\"`},
		{td + "pytorch/s33/kcl.pickle.gz", `context=\"state\"`},
		{td + "pytorch/no_trace.pickle", "it has no trace"},
		{td + "pytorch/memory_snapshot_list.pickle", "it has no trace"},
		{td + "pytorch/state_only.pickle", "records no allocations"},
		{td + "kineto/s32_nostack_leak.trace.json.gz", "with_stack=True"},
		{shortTL, "10 points, too few"},
		{td + "sanitizer/field/cudf23900_racecheck_excerpt.txt", "--leak-check full"},
	} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fail-on", "leak", c.path)
		if code != ExitInput {
			t.Errorf("%s: exit %d, want %d; stderr %q", c.path, code, ExitInput, errOut)
		}
		if !strings.Contains(errOut, "--fail-on leak could not be judged: no input given could judge leaks: "+c.path) {
			t.Errorf("%s: stderr %q does not name the input that could not judge", c.path, errOut)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Gates) != 1 || !r.Gates[0].Unjudged || r.Gates[0].Tripped || len(r.Gates[0].NotJudgedOn) != 1 {
			t.Errorf("%s: gates %+v: want leak unjudged, naming the input", c.path, r.Gates)
		}
		if len(r.Inputs) != 1 || !strings.Contains(r.Inputs[0].LeaksUnjudged, strings.ReplaceAll(c.why, `\"`, `"`)) {
			t.Errorf("%s: leaks_unjudged %q, want %q", c.path, r.Inputs[0].LeaksUnjudged, c.why)
		}
	}

	clean, leaky, state := td+"pytorch/clean_train_loop.pickle", td+"pytorch/leak_train_loop.pickle", td+"pytorch/s39/state_server_leak.pickle"
	// Judged on the one that can: passed, or tripped, naming the other.
	for _, c := range []struct {
		paths []string
		code  int
	}{
		{[]string{clean, state}, ExitOK},
		{[]string{state, leaky}, ExitFindings},
	} {
		code, out, errOut := run(t, nil, append([]string{"analyze", "--format", "json", "--fail-on", "leak"}, c.paths...)...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d; stderr %q", c.paths, code, c.code, errOut)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		g := r.Gates[0]
		if g.Unjudged || len(g.NotJudgedOn) != 1 || g.NotJudgedOn[0].Path != state || !strings.Contains(g.Why, "judged on 1 input only, not on "+state) {
			t.Errorf("%v: gate %+v: want judged on one input, not on %s", c.paths, g, state)
		}
		if c.code == ExitOK && !strings.Contains(errOut, "warning: --fail-on leak was not judged on "+state) {
			t.Errorf("%v: stderr %q: want a warning naming %s", c.paths, errOut, state)
		}
	}
	code, out, _ := run(t, nil, "analyze", "--format", "markdown", "--fail-on", "leak", clean, state)
	if code != ExitOK || !strings.Contains(out, "passed, **not judged on 1 input**") || !strings.Contains(out, "1 gate not judged on every input") {
		t.Errorf("markdown: exit %d, %s", code, out)
	}
	code, out, _ = run(t, nil, "analyze", "--format", "junit", "--fail-on", "leak", clean, state)
	var doc struct {
		Suites []struct {
			Skipped int `xml:"skipped,attr"`
			Cases   []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || len(doc.Suites) != 2 {
		t.Fatalf("junit: exit %d, %v, %s", code, err, out)
	}
	for _, c := range doc.Suites[1].Cases {
		if (c.Skipped != nil) != (c.Name == state) {
			t.Errorf("junit: input %s skipped %+v; want only %s skipped", c.Name, c.Skipped, state)
		}
	}
	// Inputs that could judge, clean (or under the threshold: san_oob.xml
	// leaks 4.9 MiB): passed, as before; an XML report has no summary,
	// so one is taken as a leak check.
	for _, p := range []string{clean, td + "sanitizer/leak_fixed.txt", td + "sanitizer/san_oob.xml"} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fail-on", "leak>1TiB", p)
		if code != ExitOK || strings.Contains(out, "leaks_unjudged") || strings.Contains(out, "not_judged_on") || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q; want a pass, judged", p, code, errOut)
		}
	}
}

// A snapshot without a trace says so in its live sites' verdicts: its
// history was not recorded, not begun late or wrapped (the words for a
// trace that lost its start).
func TestLiveWithoutTraceSaysNotRecorded(t *testing.T) {
	r := analyzeJSON(t, td+"pytorch/no_trace.pickle")
	n := 0
	for _, f := range r.Findings {
		if f.Kind != "live" {
			continue
		}
		n++
		if !strings.Contains(f.Message, "the snapshot has no trace (history was not recorded") || strings.Contains(f.Message, "ring buffer") {
			t.Errorf("live finding %q: want 'no trace (history was not recorded', no ring buffer", f.Message)
		}
	}
	if n == 0 {
		t.Error("no live finding")
	}
}

// A baseline report that left findings out (--min-bytes, --top) cannot
// say a site is new: the session-42 tester's report written with
// --min-bytes 40MiB made the same run's two smaller sites "new", and
// --fail-on new tripped on an unchanged run. They are unmatched now, with
// a warning; a baseline written whole still finds the leak new in a run
// whose baseline is the clean loop.
func TestBaselineThatLeftFindingsOut(t *testing.T) {
	dir := t.TempDir()
	leak, clean := td+"pytorch/leak_train_loop.pickle", td+"pytorch/clean_train_loop.pickle"
	for _, c := range []struct{ name, flag, val string }{{"minbytes.json", "--min-bytes", "40MiB"}, {"top1.json", "--top", "1"}} {
		code, out, _ := run(t, nil, "analyze", "--format", "json", c.flag, c.val, leak)
		if code != ExitOK {
			t.Fatalf("%s %s: exit %d", c.flag, c.val, code)
		}
		base := filepath.Join(dir, c.name)
		if err := os.WriteFile(base, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, nil, "analyze", "-q", "--baseline", base, "--fail-on", "new", leak)
		if code != ExitOK || out != "" {
			t.Errorf("the same run against its %s report: exit %d, %q", c.flag, code, out)
		}
		if !strings.Contains(errOut, "are not taken for new or fixed") {
			t.Errorf("%s: stderr %q does not warn", c.flag, errOut)
		}
	}
	code, out, _ := run(t, nil, "analyze", "--format", "json", "--top", "0", clean)
	if code != ExitOK {
		t.Fatal(code)
	}
	base := filepath.Join(dir, "clean.json")
	if err := os.WriteFile(base, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := run(t, nil, "analyze", "-q", "--baseline", base, "--fail-on", "new", leak); code != ExitFindings {
		t.Errorf("the leaking run against the clean run's whole report: exit %d, want %d", code, ExitFindings)
	}
}

// gpuleak oom --help sends CI jobs to analyze --fail-on oom, which a log
// of a run without an OOM must pass: it was "unrecognised input format",
// exit 2, on every successful run (session-42 tester). With an oom gate,
// a text log in which nothing gpuleak reads is found passes with a
// warning; a gate a text log cannot answer stays unjudged, a binary file
// stays unrecognised, and without the gate nothing changes.
func TestFailOnOOMPassesAPlainLog(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "train.log")
	if err := os.WriteFile(plain, []byte("epoch 1 loss 0.5\nepoch 2 loss 0.4\ndone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(bin, []byte{0x00, 0x01, 0xfe, 0xff, 0x00, 0x10, 0x80, 0x81}, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int
		err  string
	}{
		{[]string{"--fail-on", "oom", plain}, ExitOK, "read as a log of a run without an OOM"},
		{[]string{"--fail-on", "oom", plain, td + "pytorch/oom_error.txt"}, ExitFindings, "--fail-on oom tripped"},
		{[]string{"--fail-on", "oom,leak", plain}, ExitInput, "--fail-on leak could not be judged"},
		{[]string{"--fail-on", "oom", bin}, ExitInput, "unrecognised input format"},
		{[]string{plain}, ExitInput, "unrecognised input format"},
	} {
		code, out, errOut := run(t, nil, append([]string{"analyze"}, c.args...)...)
		if code != c.want || !strings.Contains(out+errOut, c.err) {
			t.Errorf("analyze %v: exit %d, want %d with %q; stdout %q stderr %q", c.args, code, c.want, c.err, out, errOut)
		}
	}
}

// A growing site that --min-kept alone keeps from being a leak says so:
// the fixture's leak (40 blocks from forward, growing in 41 of 199
// iterations, fixtures README) under --min-kept 43 was explained as "a
// plateau" (session-42 tester), which the data does not show.
func TestMinKeptNamedAsTheReason(t *testing.T) {
	r := analyzeReport(t, "--min-kept", "43", td+"pytorch/leak_train_loop.pickle")
	found := false
	for _, f := range r.Findings {
		if f.Site.Line == 11 && strings.HasSuffix(f.Site.File, "leak_train_loop.py") {
			found = true
			if f.Kind != report.KindRetained || !strings.Contains(f.Message, "fewer than --min-kept 43") || strings.Contains(f.Message, "plateau") {
				t.Errorf("%s: %q", f.Kind, f.Message)
			}
		}
	}
	if !found {
		t.Error("no finding at leak_train_loop.py:11")
	}
}

// --quiet writes no report, only text lines of the gates that tripped:
// with --format json they stood where a JSON consumer expects a document
// (session-42 tester). It is a usage error with any format but the table.
func TestQuietTakesNoFormat(t *testing.T) {
	for _, f := range []string{"json", "junit", "markdown"} {
		code, out, errOut := run(t, nil, "analyze", "-q", "--format", f, "--fail-on", "leak", td+"pytorch/leak_train_loop.pickle")
		if code != ExitInput || out != "" || !strings.Contains(errOut, "--quiet writes no report") {
			t.Errorf("-q --format %s: exit %d, stdout %q, stderr %q", f, code, out, errOut)
		}
	}
	if code, out, _ := run(t, nil, "analyze", "-q", "--fail-on", "leak", td+"pytorch/leak_train_loop.pickle"); code != ExitFindings || !strings.HasPrefix(out, "gpuleak: --fail-on leak tripped") {
		t.Errorf("-q: exit %d, %q", code, out)
	}
}
