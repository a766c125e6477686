package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// TestLeakGateStepsTooFew: torch.profiler's schedule(wait=1, warmup=1,
// active=3) records 3 ProfilerStep#N spans, too few to judge growth
// (testdata/README.md, kineto/hm_*). A run that kept 1 MiB a step shows it
// as retained only: --fail-on leak could not have tripped on it, so alone
// it is not judged (exit 2, the file and its 3 steps named), not passed.
// With a trace of 8 steps of the same leak beside it, the gate trips (exit
// 1: one input shows the leak); beside the clean 8-step run it is judged
// on that one (exit 0) and names the 3-step trace as not judged on, on
// standard error and in the gate's not_judged_on. The 8-step traces alone
// are judged: 1 and 0.
func TestLeakGateStepsTooFew(t *testing.T) {
	k := td + "kineto/"
	for _, c := range []struct {
		paths      []string
		code       int
		unjudged   bool
		notJudgeOn bool // the 3-step trace named in not_judged_on
	}{
		{[]string{k + "hm_train_s3_act.trace.json.gz"}, 2, true, true},
		{[]string{k + "hm_train_s3_clean.trace.json.gz"}, 2, true, true},
		{[]string{k + "hm_train_s3_act.trace.json.gz", k + "hm_train_s8_act.trace.json.gz"}, 1, false, true},
		{[]string{k + "hm_train_s3_act.trace.json.gz", k + "hm_train_s8_clean.trace.json.gz"}, 0, false, true},
		{[]string{k + "hm_train_s8_act.trace.json.gz"}, 1, false, false},
		{[]string{k + "hm_train_s8_clean.trace.json.gz"}, 0, false, false},
	} {
		args := append([]string{"analyze", "--format", "json", "--fail-on", "leak"}, c.paths...)
		code, out, errOut := run(t, nil, args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.paths, code, c.code, errOut)
			continue
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		g := r.Gates[0]
		if g.Unjudged != c.unjudged {
			t.Errorf("%v: gate %+v; want unjudged %v", c.paths, g, c.unjudged)
		}
		named := len(g.NotJudgedOn) == 1 && strings.Contains(g.NotJudgedOn[0].Path, "hm_train_s3_") && strings.Contains(g.NotJudgedOn[0].Why, "3 steps")
		if named != c.notJudgeOn || c.notJudgeOn && (!strings.Contains(errOut, "hm_train_s3_") || !strings.Contains(errOut, "3 steps")) {
			t.Errorf("%v: stderr %q, not judged on %+v; want the 3-step trace named: %v", c.paths, errOut, g.NotJudgedOn, c.notJudgeOn)
		}
	}
}

// TestKinetoNoAllocationInSteps: a training step captured in a CUDA graph
// and replayed in 8 profiled steps (hm_cudagraph_s8_clean, profile_memory
// on, its input copied from batches made before profiling) allocates and
// frees nothing: the trace has no [memory] event. That is what a clean
// replay looks like, not a trace recorded without profile_memory: it is
// read, with no finding, the leak gate judged and passed (exit 0), and a
// warning says what the 8 steps show and what a trace cannot. The same
// trace cut to 2 steps is too few to show it: exit 2, saying so.
func TestKinetoNoAllocationInSteps(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fail-on", "leak", td+"kineto/hm_cudagraph_s8_clean.trace.json.gz")
	if code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	ws := strings.Join(r.Inputs[0].Warnings, "\n")
	if len(r.Findings) != 0 || r.Gates[0].Unjudged || r.Gates[0].Tripped || !strings.Contains(ws, "8 profiler steps") || !strings.Contains(ws, "allocated and freed nothing") {
		t.Errorf("findings %+v, gate %+v, warnings %q; want none, a passed gate, the 8 steps said", r.Findings, r.Gates[0], ws)
	}
	two := filepath.Join(t.TempDir(), "two.json")
	doc := `{"schemaVersion":1,"profile_memory":1,"traceEvents":[` +
		`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10,"dur":5},` +
		`{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":11,"dur":2},` +
		`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":20,"dur":5}]}`
	if err := os.WriteFile(two, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run(t, nil, "analyze", two)
	if code != 2 || !strings.Contains(errOut, "2 profiler steps are too few") || strings.Contains(errOut, "recorded without profile_memory") {
		t.Errorf("2 steps: exit %d, %q; want 2, the steps said too few", code, errOut)
	}
}

// TestRecordedKinetoVerdicts: every hm_* recording (testdata/README.md) gets
// the verdict its program earns, exit code of --fail-on leak included.
// Sizes from the model: an output or input 256x1024 fp32 = 1 MiB, the
// hidden 2 MiB, a 0-dim loss one 512 B block; the 8-step traces keep one
// of each a step (the runs' logs: memory_allocated +1,048,576, +512 and
// +4,194,816 B a step). The timelines' parameters are the two Linears'
// weights and biases (8 MiB + 8 KiB + 8 MiB + 4 KiB = 16,789,504 B),
// Adam's state twice that. A clean run has no finding; a 3-step trace is
// not judged (exit 2), its kept blocks retained.
func TestRecordedKinetoVerdicts(t *testing.T) {
	type f struct {
		kind, site   string
		bytes, count int64
	}
	const mib = 1 << 20
	for _, c := range []struct {
		file string
		code int
		want []f
	}{
		{"hm_train_s8_clean.trace.json.gz", 0, nil},
		{"hm_train_s8_act.trace.json.gz", 1, []f{{"leak", "aten::linear", 8 * mib, 8}}},
		{"hm_train_s8_loss.trace.json.gz", 1, []f{{"leak", "aten::mean", 8 * 512, 8}}},
		{"hm_train_s8_valloss_stack.trace.json.gz", 1, []f{{"leak", "aten::relu", 16 * mib, 8}, {"leak", "aten::randn", 8 * mib, 8}, {"leak", "aten::linear", 8 * mib, 8}, {"leak", "aten::mean", 8 * 512, 8}}},
		{"hm_train_s3_clean.trace.json.gz", 2, nil},
		{"hm_train_s3_act.trace.json.gz", 2, []f{{"retained", "aten::linear", 3 * mib, 3}}},
		{"hm_eval_s8_keep.trace.json.gz", 1, []f{{"leak", "aten::linear", 8 * mib, 8}}},
		{"hm_eval_s8_clean.trace.json.gz", 0, nil},
		{"hm_compile_s8_clean.trace.json.gz", 0, nil},
		{"hm_cudagraph_s8_clean.trace.json.gz", 0, nil},
		{"hm_cudagraph_s8_randn_clean.trace.json.gz", 0, nil},
		{"hm_timeline_keep.timeline.json.gz", 1, []f{{"leak", "activation", 6 * mib, 0}, {"retained", "optimizer_state", 2 * 16789504, 0}, {"retained", "parameter", 16789504, 0}}},
		{"hm_timeline_clean.timeline.json.gz", 0, []f{{"retained", "optimizer_state", 2 * 16789504, 0}, {"retained", "parameter", 16789504, 0}}},
	} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fail-on", "leak", td+"kineto/"+c.file)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.file, code, c.code, errOut)
			continue
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var got []f
		for _, x := range r.Findings {
			got = append(got, f{string(x.Kind), x.Site.Function, x.Bytes, int64(x.Count)})
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: findings %v, want %v", c.file, got, c.want)
		}
		for _, x := range r.Findings {
			// A ProfilerStep#N span ends at prof.step(): the last step
			// recorded had ended, unlike a snapshot's last iteration.
			if strings.Contains(x.Message, "had not ended") {
				t.Errorf("%s: %q: the last ProfilerStep#N step ended", c.file, x.Message)
			}
		}
	}
}

// TestKinetoCleanDeviceLine: a clean run's trace frees all it allocated;
// the device line says the 113 MiB active were all allocated before
// profiling, not "0 B of it in the 0 allocations the trace left live".
func TestKinetoCleanDeviceLine(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", td+"kineto/hm_train_s8_clean.trace.json.gz")
	if code != 0 || !strings.Contains(out, "device 0: 113 MiB active (none of it allocated while profiling: the trace left no allocation live), 172 MiB reserved") || strings.Contains(out, "0 B of it") {
		t.Errorf("exit %d, %q (%s); want the clean device line", code, out, errOut)
	}
}

// TestDiffStackedModuleOpAgainstOpOnly: the same 1 MiB-a-step leak at the
// second Linear's output, recorded with with_stack=True (the validation
// graph run, whose trace names the op "aten::linear (nn.Module: Linear)")
// and without (the activation run: "aten::linear" alone), is one site
// matched by the op that allocated: same (8 MiB in 8 blocks on both
// sides), not fixed in one and new in the other. The stacked run's other
// leaks (relu, randn, mean) are fixed: the other run has no such op held.
func TestDiffStackedModuleOpAgainstOpOnly(t *testing.T) {
	code, out, errOut := run(t, nil, "diff", "--all", "--format", "json", td+"kineto/hm_train_s8_valloss_stack.trace.json.gz", td+"kineto/hm_train_s8_act.trace.json.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d report.DiffReport
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range d.Entries {
		got[e.Site] = e.Status
		if e.Status == report.StatusSame && (e.BeforeBytes != 8<<20 || e.AfterBytes != 8<<20) {
			t.Errorf("%s: %d -> %d B; want 8 MiB on both sides", e.Site, e.BeforeBytes, e.AfterBytes)
		}
	}
	want := map[string]string{"aten::linear (nn.Module: Linear)": report.StatusSame, "aten::relu (nn.Module: ReLU)": report.StatusFixed,
		"aten::randn": report.StatusFixed, "aten::mean": report.StatusFixed}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries %v; want %v", got, want)
	}
}

// TestLockstepLeaksNamed: a loss kept with its graph leaks from every op
// whose output the graph saved, each a site of its own. The validation
// graph trace's four leaks (input, ReLU output, output, loss; all 8 kept
// in iterations 1 to 8) and the snapshot's (g2.py's validation graph and
// its input, kept every 5th step) each name the others kept in the same
// iterations; a run keeping one activation a step has one leak and no
// such note.
func TestLockstepLeaksNamed(t *testing.T) {
	for _, c := range []struct {
		path  string
		leaks int
		note  string
	}{
		{td + "kineto/hm_train_s8_valloss_stack.trace.json.gz", 4, "in the same iterations (1 to 8) as the leaks at"},
		{td + "pytorch/snap/val_graph.pickle.gz", 2, "in the same iterations"},
		{td + "kineto/hm_train_s8_act.trace.json.gz", 1, ""},
	} {
		_, out, errOut := run(t, nil, "analyze", "--format", "json", c.path)
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v (%s)", c.path, err, errOut)
		}
		n := 0
		for _, f := range r.Findings {
			if f.Kind != report.KindLeak {
				continue
			}
			n++
			has := strings.Contains(f.Message, "same iterations")
			if c.note == "" && has || c.note != "" && (!strings.Contains(f.Message, c.note) || !strings.Contains(f.Message, "loss kept without .item()")) {
				t.Errorf("%s: %s: %q; want note %q", c.path, f.Site.Function, f.Message, c.note)
			}
		}
		if n != c.leaks {
			t.Errorf("%s: %d leaks, want %d", c.path, n, c.leaks)
		}
	}
}

// TestTooFewStepsKeptOneEach: the 3-step trace of a run that kept 1 MiB a
// step holds 3 blocks at aten::linear, as many as its ProfilerStep#N
// steps: the retained verdict says so (what a leak leaves, which more
// steps would tell), beside the 3 steps being too few.
func TestTooFewStepsKeptOneEach(t *testing.T) {
	_, out, errOut := run(t, nil, "analyze", "--format", "json", td+"kineto/hm_train_s3_act.trace.json.gz")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v (%s)", err, errOut)
	}
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Message, "too few to judge") || !strings.Contains(r.Findings[0].Message, "3 of its allocations kept, as many as the steps") {
		t.Errorf("findings %+v; want the retained blocks said as many as the steps", r.Findings)
	}
}

// TestDiffActiveBeyondSites: two traces of one run, each of one cycle of
// schedule(wait=1, warmup=1, active=3, repeat=2), the run keeping 1 MiB a
// step (testdata/README.md, kineto/hm_cycles_rep2.*): each trace's site
// holds its own 3 steps' 3 MiB, so no site changed, but the device's
// active memory at the end rose 5 MiB (steps 5-9): the diff says that
// memory no compared site holds grew by 5 MiB, from before the trace.
// Two snapshots whose sites account for their change say nothing.
func TestDiffActiveBeyondSites(t *testing.T) {
	k := td + "kineto/hm_cycles_rep2."
	code, out, errOut := run(t, nil, "diff", "--format", "json", k+"c1.trace.json.gz", k+"c2.trace.json.gz")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d report.DiffReport
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Totals["same"].Sites != 1 || d.Totals["all"].Sites != 1 {
		t.Errorf("totals %+v, want one site, the same", d.Totals)
	}
	want := "device 0 (pytorch-profiler-trace): active memory at the end 118 MiB -> 123 MiB (+5.0 MiB), of which the sites compared account for +0 B: 5.0 MiB more is held from before the trace began"
	if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("warnings %q, want %q", d.Warnings, want)
	}
	_, out, _ = run(t, nil, "diff", "--format", "json", td+"pytorch/clean_train_loop.pickle", td+"pytorch/leak_train_loop.pickle")
	if strings.Contains(out, "active memory at the end") {
		t.Errorf("snapshots whose sites account for the change: %s", out)
	}
}
