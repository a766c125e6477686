package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pt = td + "pytorch/"

// findings decodes a gpuleak.report/v1 document's findings as maps.
func findings(t *testing.T, out string) (inputs, fs []map[string]any) {
	t.Helper()
	decode(t, out) // the report's members
	var r struct {
		Inputs   []map[string]any `json:"inputs"`
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r.Inputs, r.Findings
}

func ofKind(fs []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, f := range fs {
		if f["kind"] == kind {
			out = append(out, f)
		}
	}
	return out
}

func num(t *testing.T, f map[string]any, key string) int64 {
	t.Helper()
	v, ok := f[key].(float64)
	if !ok {
		t.Fatalf("%s is %v (%T)", key, f[key], f[key])
	}
	return int64(v)
}

func causes(f map[string]any) []string {
	var out []string
	for _, c := range f["cause"].([]any) {
		out = append(out, c.(string))
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const MiB = 1 << 20

// Acceptance, through the command line (values from the fixtures README).
func TestOOMAcceptance(t *testing.T) {
	for _, cmd := range []string{"oom", "analyze"} {
		// oom_observer.pickle alone: one OOM, 64 MiB requested; 4288 MiB
		// reserved and allocated, 0 reserved-but-unallocated;
		// accumulation (oom.py:13 in grow, 66 blocks, 4224 MiB), not
		// fragmentation.
		code, out, errOut := run(t, nil, cmd, "--format", "json", pt+"oom_observer.pickle")
		if code != 0 {
			t.Fatalf("%s: exit %d %s", cmd, code, errOut)
		}
		_, fs := findings(t, out)
		ooms := ofKind(fs, "oom")
		if len(ooms) != 1 {
			t.Fatalf("%s: %d oom findings", cmd, len(ooms))
		}
		f := ooms[0]
		if num(t, f, "requested_bytes") != 64*MiB || num(t, f, "reserved_bytes") != 4288*MiB || num(t, f, "allocated_bytes") != 4288*MiB || num(t, f, "reserved_unallocated_bytes") != 0 {
			t.Errorf("%s: %v", cmd, f)
		}
		if c := causes(f); !has(c, "accumulation") || has(c, "fragmentation") {
			t.Errorf("%s: causes %v", cmd, c)
		}
		top := f["sites"].([]any)[0].(map[string]any)
		site := top["site"].(map[string]any)
		if num(t, top, "count") != 66 || num(t, top, "bytes") != 4224*MiB || site["function"] != "grow" || site["line"].(float64) != 13 || !strings.HasSuffix(site["file"].(string), "oom.py") {
			t.Errorf("%s: top site %v", cmd, top)
		}
		if f["advice"] == nil || len(f["advice"].([]any)) == 0 || f["device_free_bytes"] == nil || f["largest_free_block_bytes"] == nil {
			t.Errorf("%s: %v", cmd, f)
		}

		// With oom_error.txt: memory-limit (4.19 GiB allowed, 135.01 GiB free) joins.
		_, out, _ = run(t, nil, cmd, "--format", "json", pt+"oom_observer.pickle", pt+"oom_error.txt")
		_, fs = findings(t, out)
		ooms = ofKind(fs, "oom")
		if len(ooms) != 1 {
			t.Fatalf("%s: %d oom findings with the message", cmd, len(ooms))
		}
		f = ooms[0]
		if c := causes(f); !has(c, "memory-limit") || !has(c, "accumulation") {
			t.Errorf("%s: causes %v", cmd, c)
		}
		ev := f["cause_evidence"].([]any)
		var limit string
		for _, e := range ev {
			if m := e.(map[string]any); m["cause"] == "memory-limit" {
				limit = m["evidence"].(string)
			}
		}
		if !strings.Contains(limit, "4.19 GiB allowed") || !strings.Contains(limit, "135.01 GiB free") {
			t.Errorf("%s: memory-limit evidence %q", cmd, limit)
		}

		// fragmentation_oom.pickle + its message: the 512 MiB OOM is
		// fragmentation: 1565 MiB reserved-but-free, largest free block
		// 8 MiB, would have fit if contiguous.
		_, out, _ = run(t, nil, cmd, "--format", "json", pt+"fragmentation_oom.pickle", pt+"fragmentation_oom_error.txt")
		_, fs = findings(t, out)
		var big map[string]any
		for _, f := range ofKind(fs, "oom") {
			if num(t, f, "requested_bytes") == 512*MiB {
				big = f
			}
		}
		if big == nil || len(ofKind(fs, "oom")) != 2 {
			t.Fatalf("%s: %v", cmd, fs)
		}
		// Fragmentation first; the message's cap was reached as well
		// (2.77 GiB reserved + 512 MiB > 2.80 GiB allowed, 136 GiB free).
		if c := causes(big); len(c) != 2 || c[0] != "fragmentation" || c[1] != "memory-limit" {
			t.Errorf("%s: causes %v", cmd, c)
		}
		if num(t, big, "reserved_unallocated_bytes") != 1565*MiB || num(t, big, "largest_free_block_bytes") != 8*MiB || big["would_fit_if_contiguous"] != true {
			t.Errorf("%s: %v", cmd, big)
		}
		if fr := ofKind(fs, "fragmentation"); len(fr) != 1 || num(t, fr[0], "inactive_split_bytes") != 1565*MiB || fr[0]["at"] != "end" {
			t.Errorf("%s: fragmentation findings %v", cmd, fr)
		}
	}
}

// The message generations and the other real messages, alone: every file
// gives one OOM whose numbers are the message's.
func TestOOMMessagesAlone(t *testing.T) {
	cases := []struct {
		file  string
		cause string
		req   int64
	}{
		{"oom_error.txt", "memory-limit", 64 * MiB},
		{"oom_traceback.txt", "memory-limit", 64 * MiB},
		{"fragmentation_oom_error.txt", "fragmentation", 512 * MiB},
		{"oom_other_process_error.txt", "other-processes", 2048 * MiB},
		{"oom_other_process_traceback.txt", "other-processes", 2048 * MiB},
	}
	for _, c := range cases {
		code, out, errOut := run(t, nil, "oom", "--format", "json", pt+c.file)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", c.file, code, errOut)
		}
		ins, fs := findings(t, out)
		if len(fs) != 1 || ins[0]["format"] != "pytorch-oom-message" {
			t.Fatalf("%s: %v", c.file, fs)
		}
		if got := causes(fs[0]); len(got) == 0 || got[0] != c.cause || num(t, fs[0], "requested_bytes") != c.req || fs[0]["pools"] == nil {
			t.Errorf("%s: %v %v", c.file, got, fs[0])
		}
		if strings.Contains(c.file, "traceback") && fs[0]["exception"] != "torch.OutOfMemoryError" {
			t.Errorf("%s: exception %v", c.file, fs[0]["exception"])
		}
	}
	// oom_other_process: 127.79 GiB held by process 609.
	_, out, _ := run(t, nil, "oom", "--format", "json", pt+"oom_other_process_traceback.txt")
	_, fs := findings(t, out)
	p := fs[0]["other_processes"].([]any)[0].(map[string]any)
	if p["pid"].(float64) != 609 || fs[0]["site"].(map[string]any)["function"] != "load_shards" {
		t.Errorf("%v", fs[0])
	}
}

// Text inputs are recognised by content in "gpuleak analyze" too, also a
// log whose OOM comes after the first 64 KiB, and the allocator's numbers
// show in the inputs.
func TestAnalyzeRecognisesOOMText(t *testing.T) {
	dir := t.TempDir()
	msg, _ := os.ReadFile(pt + "oom_traceback.txt")
	log := strings.Repeat("epoch 1 step 17 loss 2.3017 lr 0.0003 tokens/s 41213\n", 3000) + string(msg)
	long := filepath.Join(dir, "train.log")
	os.WriteFile(long, []byte(log), 0o644)
	code, out, errOut := run(t, nil, "analyze", "--format", "json", long, pt+"memory_summary.txt", pt+"memory_stats_2.json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	ins, fs := findings(t, out)
	if ins[0]["format"] != "pytorch-oom-message" || ins[1]["format"] != "pytorch-memory-summary" || ins[2]["format"] != "pytorch-memory-stats" {
		t.Errorf("formats %v", ins)
	}
	if len(fs) != 1 || fs[0]["kind"] != "oom" || fs[0]["sources"].([]any)[0].(map[string]any)["line"].(float64) != 3007 {
		t.Errorf("findings %v", fs)
	}
	st := ins[1]["allocator_stats"].([]any)[0].(map[string]any)
	if num(t, st, "allocated_bytes") != 148480<<10 || num(t, st, "reserved_bytes") != 810*MiB {
		t.Errorf("summary stats %v", st)
	}
	// Text without an OOM and of no other format is still unrecognised
	// by "analyze" (it says what it is not) ...
	code, _, errOut = run(t, nil, "analyze", td+"logs/train_no_oom.log")
	if code != ExitInput || !strings.Contains(errOut, "unrecognised input format") {
		t.Errorf("README: exit %d %q", code, errOut)
	}
	// ... while "gpuleak oom" says that a log holds no OOM.
	code, out, _ = run(t, nil, "oom", td+"logs/train_no_oom.log")
	if code != 0 || !strings.Contains(out, "No out-of-memory error in the inputs.") || !strings.Contains(out, "no CUDA out-of-memory message in it") {
		t.Errorf("README with oom: exit %d\n%s", code, out)
	}
}

// A message cut short is reported as cut, with where it ends: only the
// request, printed whole before the cut, is read (64 MiB in oom_error.txt).
func TestDamagedMessage(t *testing.T) {
	dir := t.TempDir()
	msg, _ := os.ReadFile(pt + "oom_error.txt")
	path := filepath.Join(dir, "cut.log")
	os.WriteFile(path, append([]byte("starting\n"), msg[:150]...), 0o644)
	code, out, _ := run(t, nil, "oom", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	ins, fs := findings(t, out)
	if len(fs) != 1 || fs[0]["message_generation"] != "cut" || fs[0]["requested_bytes"] != float64(64<<20) || fs[0]["allocated_bytes"] != nil || len(fs[0]["cause"].([]any)) != 0 {
		t.Fatalf("%v", fs)
	}
	if r, _ := fs[0]["unparsed_reason"].(string); !strings.Contains(r, "ends at column") {
		t.Errorf("reason %q", r)
	}
	if w := ins[0]["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "line 2:") {
		t.Errorf("warnings %v", w)
	}
	_, out, _ = run(t, nil, "oom", path)
	if !strings.Contains(out, "64.00 MiB requested (a message cut short)") || !strings.Contains(out, "message:  cut short: the message ends at column 151") {
		t.Errorf("table:\n%s", out)
	}
}

func TestOOMFailOnAndUsage(t *testing.T) {
	if code, _, _ := run(t, nil, "analyze", "--fail-on", "oom", pt+"oom_error.txt"); code != ExitFindings {
		t.Errorf("--fail-on oom: exit %d", code)
	}
	// An OOM whose size no input gives (bytes 0) is not cut by --min-bytes.
	if code, out, _ := run(t, []byte("RuntimeError: CUDA error: out of memory\n"), "analyze", "--fail-on", "oom", "--min-bytes", "1GiB", "-"); code != ExitFindings || !strings.Contains(out, "CUDA error: out of memory") {
		t.Errorf("--min-bytes dropped an OOM: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, nil, "analyze", "--fail-on", "oom", pt+"leak_train_loop.pickle"); code != ExitOK {
		t.Errorf("--fail-on oom without OOM: exit %d", code)
	}
	if code, _, _ := run(t, nil, "analyze", "--fail-on", "fragmentation", pt+"fragmentation_oom.pickle"); code != ExitFindings {
		t.Errorf("--fail-on fragmentation: exit %d", code)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"oom"}, ExitInput, "needs at least one FILE"},
		{[]string{"oom", "--format", "xml", "x"}, ExitInput, `unknown format "xml"`},
		{[]string{"oom", "-", "-"}, ExitInput, "only once"},
		{[]string{"oom", "/nonexistent/x.log"}, ExitInput, "no such file"},
	} {
		code, out, errOut := run(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("%v: exit %d %q %q", c.args, code, out, errOut)
		}
	}
	// Standard input, a damaged snapshot.
	msg, _ := os.ReadFile(pt + "oom_error.txt")
	if code, out, _ := run(t, msg, "oom", "-"); code != 0 || !strings.Contains(out, "-: pytorch-oom-message") {
		t.Errorf("stdin: %d %s", code, out)
	}
	snap, _ := os.ReadFile(pt + "oom_observer.pickle")
	bad := filepath.Join(t.TempDir(), "cut.pickle")
	os.WriteFile(bad, snap[:len(snap)/2], 0o644)
	if code, out, errOut := run(t, nil, "oom", bad); code != ExitInput || out != "" || !strings.Contains(errOut, "byte offset") {
		t.Errorf("cut snapshot: %d %q %q", code, out, errOut)
	}
	_, out, _ := run(t, nil, "oom", "--help")
	for _, want := range []string{"Examples:", "fragmentation", "other-processes", "memory-limit", "capacity", "accumulation"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestOOMGoldens(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"oom_observer_error_traceback.table", []string{"oom", pt + "oom_observer.pickle", pt + "oom_error.txt", pt + "oom_traceback.txt"}},
		{"oom_fragmentation.table", []string{"oom", pt + "fragmentation_oom.pickle", pt + "fragmentation_oom_error.txt"}},
		{"oom_other_process.table", []string{"oom", pt + "oom_other_process.pickle", pt + "oom_other_process_traceback.txt"}},
		{"oom_summary_stats.table", []string{"oom", pt + "memory_summary.txt", pt + "memory_stats.json", pt + "leak_train_loop.pickle"}},
		{"oom_other_process.json", []string{"oom", "--format", "json", pt + "oom_other_process_error.txt"}},
		{"analyze_fragmentation_oom.table", []string{"analyze", pt + "fragmentation_oom.pickle", pt + "fragmentation_oom_error.txt"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			code, out, errOut := run(t, nil, c.args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, c.golden+".stdout", out)
		})
	}
}

// The H200 recording with a second process: the message lists process 771
// with 127.79 GiB; nvidia-smi --query-compute-apps taken in the except
// block names it (/opt/venv/bin/python3, 130860 MiB). The postmortem links
// the two.
func TestOOMNamesProcessesFromNVML(t *testing.T) {
	h := pt + "h200/oom_other_process"
	code, out, _ := run(t, nil, "oom", "--format", "json", h+".pickle", h+"_error.txt", h+"_nvidia_smi_apps.csv")
	ins, fs := findings(t, out)
	ooms := ofKind(fs, "oom")
	if code != 0 || len(ins) != 3 || ins[2]["format"] != "nvidia-smi-query-apps" || len(ooms) != 1 {
		t.Fatalf("exit %d, %d inputs, %d OOMs", code, len(ins), len(ooms))
	}
	procs := ooms[0]["other_processes"].([]any)
	p := procs[0].(map[string]any)
	if len(procs) != 1 || p["pid"] != float64(771) || p["name"] != "/opt/venv/bin/python3" {
		t.Errorf("other processes %v", procs)
	}
	if c := causes(ooms[0]); len(c) == 0 || c[0] != "other-processes" {
		t.Errorf("causes %v", c)
	}
	ev := ooms[0]["cause_evidence"].([]any)[0].(map[string]any)["evidence"].(string)
	if !strings.Contains(ev, "process 771, /opt/venv/bin/python3: 127.79 GiB, 127.79 GiB in ") {
		t.Errorf("evidence %q", ev)
	}
}

// oom reads NVML logs in --tz as trend and analyze do: a zone is accepted
// and the processes are still linked (the apps log's one tick is the
// nearest sample whatever its zone); a zone that is none is a usage error.
func TestOOMTimeZone(t *testing.T) {
	h := pt + "h200/oom_other_process"
	code, out, errOut := run(t, nil, "oom", "--tz", "+02:00", "--format", "json", h+"_error.txt", h+"_nvidia_smi_apps.csv")
	_, fs := findings(t, out)
	ooms := ofKind(fs, "oom")
	if code != 0 || len(ooms) != 1 {
		t.Fatalf("exit %d, %d OOMs, stderr %q", code, len(ooms), errOut)
	}
	if p := ooms[0]["other_processes"].([]any)[0].(map[string]any); p["name"] != "/opt/venv/bin/python3" {
		t.Errorf("process %v not named from the apps log", p)
	}
	code, _, errOut = run(t, nil, "oom", "--tz", "Mars/Olympus", h+"_error.txt")
	if code != 2 || !strings.Contains(errOut, "bad --tz") {
		t.Errorf("exit %d, stderr %q; want 2, bad --tz", code, errOut)
	}
}

// TestOOMSitesOlderThanTrace: oom_caught_retry.pickle (testdata/pytorch/h200)
// holds at its OOM six stack-less blocks: four older than the trace (the
// snapshot's own warning counts them) and the two 2 GiB allocations the
// trace makes with empty frames just before the OOM (entries 24 and 26).
// The JSON says how many of the site's blocks predate the trace, and the
// table says it beside the "live" row, which holds both kinds.
func TestOOMSitesOlderThanTrace(t *testing.T) {
	path := td + "pytorch/h200/oom_caught_retry.pickle"
	code, out, errOut := run(t, nil, "oom", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, fs := findings(t, out)
	var live map[string]any
	for _, f := range fs {
		sites, _ := f["sites"].([]any)
		for _, s := range sites {
			if m, _ := s.(map[string]any); m["kind"] == "live" {
				live = m
			}
		}
	}
	if live == nil || live["count"] != 6.0 || live["not_in_trace"] != 4.0 {
		t.Fatalf("live site %v, want 6 blocks, 4 older than the trace", live)
	}
	_, table, _ := run(t, nil, "oom", path)
	if !strings.Contains(table, "(4 of the 6 blocks older than the trace)") {
		t.Errorf("the table does not say how many blocks predate the trace:\n%s", table)
	}
}

// TestOOMReservedFitWording: the "would it fit if contiguous" clause is
// about PyTorch's reserved but unallocated memory. hip_comfyui9529's GPU
// had 7.12 GiB free for a 432 MiB request while PyTorch held 321.96 MiB
// reserved but unallocated: the clause must not read as the GPU's free
// memory being too little ("too little free memory" did).
func TestOOMReservedFitWording(t *testing.T) {
	code, out, errOut := run(t, nil, "oom", td+"pytorch/pastes/hip_comfyui9529.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "too little free memory") {
		t.Errorf("the GPU had 7.12 GiB free for the 432 MiB request:\n%s", out)
	}
	if !strings.Contains(out, "321.96 MiB reserved but unallocated; that reserved but unallocated memory could not have held the request even if contiguous") {
		t.Errorf("no clause on PyTorch's 321.96 MiB reserved but unallocated:\n%s", out)
	}
}

// TestNvidiaSmiXMLSaysSo: nvidia-smi -q -x output (CPU-X issue #115's
// paste) is read since session 42; this paste stops in GPU 0's section
// before its memory, and the error says so at its last line (22), not
// "unrecognised input format".
func TestNvidiaSmiXMLSaysSo(t *testing.T) {
	code, _, errOut := run(t, nil, "analyze", td+"nvml/field/cpux115_q_x_cut.txt")
	if code != 2 || !strings.Contains(errOut, "cpux115_q_x_cut.txt:22: no GPU memory in this nvidia-smi XML (nvidia-smi -q -x): the nvidia-smi XML document from line 1 stops at line 22 inside GPU 0's section") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
