package profiler

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse"
)

// stepTrace writes a Chrome trace of n steps as torch.profiler records
// them with profile_memory=True and a schedule: each step a ProfilerStep#k
// span (when spans), a 4 KiB temporary (aten::empty) allocated and freed,
// and a 1 MiB aten::clone kept forever (a new address each step). With
// python, each step's work runs under "train.py(9): step" called from
// "train.py(20): <module>" (with_stack=True); without, no Python span.
// overlap makes each ProfilerStep span last 1.5 steps.
func stepTrace(t *testing.T, n int, spans, python, overlap bool) string {
	t.Helper()
	const t0 = 1790857026000000.0 // µs since the epoch
	w := &traceWriter{alloc: 160 << 20, reserved: 512 << 20}
	mem, span := w.mem, w.span
	if python {
		span("python_function", "train.py(20): <module>", t0-10, float64(n)*1000+20)
	}
	for k := 0; k < n; k++ {
		s := t0 + float64(k)*1000
		if spans {
			d := 900.0
			if overlap {
				d = 1500
			}
			span("user_annotation", fmt.Sprintf("ProfilerStep#%d", k+2), s, d)
		}
		if python {
			span("python_function", "train.py(9): step", s+50, 800)
		}
		span("cpu_op", "aten::empty", s+100, 20)
		mem(s+105, 0x7f0000000000, 4096)
		mem(s+200, 0x7f0000000000, -4096)
		span("cpu_op", "aten::clone", s+300, 100)
		mem(s+350, 0x7f1000000000+uint64(k)<<20, 1<<20)
	}
	p := w.write(t, "steps.trace.json")
	return p
}

// traceWriter builds a Kineto trace event by event: [memory] events whose
// Total Allocated follows their Bytes from alloc, under reserved bytes
// reserved, and spans.
type traceWriter struct {
	ev              []string
	alloc, reserved int64
}

func (w *traceWriter) mem(ts float64, addr uint64, b int64) {
	w.alloc += b
	w.ev = append(w.ev, fmt.Sprintf(`{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":%.3f,"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":%d,"Device Id":0,"Device Type":1,"Addr":%d}}`, ts, w.reserved, w.alloc, b, addr))
}

func (w *traceWriter) span(cat, name string, ts, dur float64) {
	w.ev = append(w.ev, fmt.Sprintf(`{"ph":"X","cat":%q,"name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":%.3f,"args":{}}`, cat, name, ts, dur))
}

// write writes the trace (profile_memory on) to a file named name in a
// temporary directory and returns its path.
func (w *traceWriter) write(t *testing.T, name string) string {
	t.Helper()
	doc := `{"schemaVersion": 1, "profile_memory": 1, "traceEvents": [` + strings.Join(w.ev, ",\n") + `]}`
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hasWarning(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// TestProfilerStepsMarkIterations: without Python frames no stack can mark
// a step, so the ten ProfilerStep#N spans are the iterations. The clone's
// live bytes at the ten step starts are 0, 1, ..., 9 MiB: it rose in each
// of the 9 measured iterations, +1 MiB per iteration, and all 10 blocks
// are held at the end: a leak by the same rules a stack-marked trace gets.
func TestProfilerStepsMarkIterations(t *testing.T) {
	res := kinetoResult(t, stepTrace(t, 10, true, false, false))
	ls := kinetoLeaks(res)
	if len(ls) != 1 {
		t.Fatalf("%d leaks, want 1: %+v (warnings %q)", len(ls), res.Leak.Sites, res.Leak.Warnings)
	}
	l := ls[0]
	if l.Frame.Name != "aten::clone" || l.Count != 10 || l.Bytes != 10<<20 {
		t.Errorf("leak %v: %d allocations, %d bytes; want aten::clone, 10, 10 MiB", l.Frame, l.Count, l.Bytes)
	}
	g := l.Growth
	if g == nil || g.Iterations != 10 || g.Measured != 9 || g.GrewIn != 9 || g.PerIteration != 1<<20 || g.Marker != "ProfilerStep#N spans" {
		t.Errorf("growth %+v; want 10 iterations, 9 measured, grew in 9, 1 MiB per iteration, marked by ProfilerStep#N spans", g)
	}
	if d := res.Leak.Devices[0]; d.Iterations != 10 || d.IterationMarker != "ProfilerStep#N spans" {
		t.Errorf("device iterations %d marked by %q; want 10, ProfilerStep#N spans", d.Iterations, d.IterationMarker)
	}
	if !hasWarning(res.Leak.Warnings, "these steps are the iterations") || hasWarning(res.Leak.Warnings, "no repeating step") ||
		hasWarning(res.Leak.Warnings, "iterations are found from the allocations' stacks") {
		t.Errorf("warnings %q: want the steps named as the iterations, and no contradiction", res.Leak.Warnings)
	}
}

// TestProfilerStepsTooFew: two steps measure one iteration, fewer than the
// 4 starts growth needs: the clone's blocks are retained and the warning
// says the trace covers 2 steps, counted from the ProfilerStep#N spans,
// and how to record enough.
func TestProfilerStepsTooFew(t *testing.T) {
	res := kinetoResult(t, stepTrace(t, 2, true, false, false))
	if ls := kinetoLeaks(res); len(ls) != 0 {
		t.Errorf("leaks %+v; want none from 2 steps", ls)
	}
	if !hasWarning(res.Leak.Warnings, "the trace covers 2 steps (ProfilerStep#N spans), fewer than the 4 needed") {
		t.Errorf("warnings %q: want the 2 steps said too few", res.Leak.Warnings)
	}
	// What to record instead, and no word that growth was judged.
	if !hasWarning(res.Leak.Warnings, "active=4") || hasWarning(res.Leak.Warnings, "growth is judged across") {
		t.Errorf("warnings %q: want how to record more steps, and no claim growth was judged", res.Leak.Warnings)
	}
}

// TestProfilerStepsAbsent: without ProfilerStep#N spans and without
// Python frames nothing marks a step: growth cannot be judged, and the
// warning says what to record.
func TestProfilerStepsAbsent(t *testing.T) {
	res := kinetoResult(t, stepTrace(t, 10, false, false, false))
	if ls := kinetoLeaks(res); len(ls) != 0 {
		t.Errorf("leaks %+v; want none without steps", ls)
	}
	if !hasWarning(res.Leak.Warnings, "no repeating step") || !hasWarning(res.Leak.Warnings, "nothing that marks its steps") {
		t.Errorf("warnings %q: want growth said not judged, with what to record", res.Leak.Warnings)
	}
}

// TestProfilerStepsOverlapping: spans that overlap are not one loop's
// steps (two processes' traces merged); they are not used, and say so.
func TestProfilerStepsOverlapping(t *testing.T) {
	res := kinetoResult(t, stepTrace(t, 10, true, false, true))
	if ls := kinetoLeaks(res); len(ls) != 0 {
		t.Errorf("leaks %+v; want none: overlapping steps mark nothing", ls)
	}
	if !hasWarning(res.Leak.Warnings, "overlapping") {
		t.Errorf("warnings %q: want the overlap said", res.Leak.Warnings)
	}
}

// TestProfilerStepsWithStacks: with Python frames too, the ProfilerStep#N
// spans are the iterations (the program's own steps), not a loop found
// from the stacks; the leak is the same, its iterations marked by the
// spans, and the warning says the steps are the iterations.
func TestProfilerStepsWithStacks(t *testing.T) {
	res := kinetoResult(t, stepTrace(t, 10, true, true, false))
	ls := kinetoLeaks(res)
	if len(ls) != 1 || ls[0].Growth == nil || ls[0].Growth.GrewIn != 9 || ls[0].Growth.Marker != "ProfilerStep#N spans" {
		t.Fatalf("leaks %+v; want 1, grown in 9 iterations marked by the ProfilerStep#N spans", ls)
	}
	d := res.Leak.Devices[0]
	if d.IterationMarker != "ProfilerStep#N spans" || d.Iterations != 10 {
		t.Errorf("device: %d iterations marked by %q; want 10, ProfilerStep#N spans", d.Iterations, d.IterationMarker)
	}
	if !hasWarning(res.Leak.Warnings, "these steps are the iterations") || hasWarning(res.Leak.Warnings, "found from the allocations' stacks") {
		t.Errorf("warnings %q: want the steps named as the iterations", res.Leak.Warnings)
	}
}

// TestKinetoNoStackSchedule: the tester's recording (s31) of a schedule
// with 10 active steps, profile_memory=True and with_stack left at its
// default (False), keeping y.detach().clone() (1 MiB) each step. The
// clone's live bytes at ProfilerStep#2..#11's starts are 0..9 MiB: a leak
// at aten::clone grown in 9 of 9 iterations, +1 MiB each, 10 blocks held.
func TestKinetoNoStackSchedule(t *testing.T) {
	res := kinetoResult(t, "../../testdata/kineto/s31_tb_nostack_sched.pt.trace.json.gz")
	ls := kinetoLeaks(res)
	if len(ls) != 1 {
		t.Fatalf("%d leaks, want 1: %+v", len(ls), res.Leak.Sites)
	}
	l := ls[0]
	if l.Frame.Name != "aten::clone" || l.Count != 10 || l.Bytes != 10<<20 {
		t.Errorf("leak %v: %d allocations, %d bytes; want aten::clone, 10, 10 MiB", l.Frame, l.Count, l.Bytes)
	}
	if g := l.Growth; g == nil || g.GrewIn != 9 || g.Measured != 9 || g.PerIteration != 1<<20 {
		t.Errorf("growth %+v; want grown in 9 of 9, 1 MiB per iteration", g)
	}
	if res.ProfilerSteps != 10 || res.WithPython {
		t.Errorf("ProfilerStep spans %d, Python %v; want 10, false", res.ProfilerSteps, res.WithPython)
	}
}

// retype rewrites the Device Type of every CUDA [memory] event of the
// trace at path to to.
func retype(t *testing.T, path string, to int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), `"Device Type":1,`, fmt.Sprintf(`"Device Type":%d,`, to))
	p := filepath.Join(t.TempDir(), "retyped.trace.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKinetoXPU: the same 10-step leak recorded on an Intel GPU carries
// Device Type 12 (c10's XPU): its events have the form of CUDA's, so the
// same leak is found (10 blocks, grown in 9 of 9 steps), and a warning
// names the device type; none says the events are all of CPU memory.
func TestKinetoXPU(t *testing.T) {
	res := kinetoResult(t, retype(t, stepTrace(t, 10, true, false, false), 12))
	ls := kinetoLeaks(res)
	if len(ls) != 1 || ls[0].Count != 10 || ls[0].Growth == nil || ls[0].Growth.GrewIn != 9 {
		t.Fatalf("leaks %+v; want the clone's, 10 blocks, grown in 9", ls)
	}
	// 10 steps x (a temporary's alloc and free, a clone's alloc) = 30.
	if res.DeviceType != 12 || res.DeviceEvents != 30 || res.CUDAEvents != 0 || res.OtherEvents != 0 {
		t.Errorf("type %d, %d device events, %d CUDA, %d other; want 12, 30, 0, 0", res.DeviceType, res.DeviceEvents, res.CUDAEvents, res.OtherEvents)
	}
	if !hasWarning(res.Leak.Warnings, "XPU's (c10 DeviceType 12): its 30 [memory] events are analysed") {
		t.Errorf("warnings %q: want the XPU named", res.Leak.Warnings)
	}
}

// TestKinetoTwoDeviceTypes: a trace with CUDA and XPU events analyses
// CUDA's (their device ids are another numbering) and says how many XPU
// events were not analysed. Here the temporaries are on the XPU (20
// events) and the clones on CUDA (10): the leak is still found.
func TestKinetoTwoDeviceTypes(t *testing.T) {
	b, err := os.ReadFile(stepTrace(t, 10, true, false, false))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), `"Bytes":4096,"Device Id":0,"Device Type":1,`, `"Bytes":4096,"Device Id":0,"Device Type":12,`)
	doc = strings.ReplaceAll(doc, `"Bytes":-4096,"Device Id":0,"Device Type":1,`, `"Bytes":-4096,"Device Id":0,"Device Type":12,`)
	p := filepath.Join(t.TempDir(), "mixed.trace.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, p)
	if res.DeviceType != 1 || res.DeviceEvents != 10 || res.OtherEvents != 20 {
		t.Errorf("type %d, %d device events, %d other; want 1, 10, 20", res.DeviceType, res.DeviceEvents, res.OtherEvents)
	}
	if ls := kinetoLeaks(res); len(ls) != 1 || ls[0].Count != 10 {
		t.Errorf("leaks %+v; want the clone's 10 blocks", ls)
	}
	if !hasWarning(res.Leak.Warnings, "20 [memory] events of devices other than CUDA not analysed (20 of XPU (c10 DeviceType 12))") {
		t.Errorf("warnings %q", res.Leak.Warnings)
	}
}

// TestKinetoXPUTester: the s31 tester's leak12 recording (12 steps, 1 MiB
// clone kept each) with its 564 GPU events set to Device Type 12: the
// leak found in the CUDA original (12 blocks, grown in 11 of 11) is found.
func TestKinetoXPUTester(t *testing.T) {
	res := kinetoResult(t, "../../testdata/kineto/s31_trace_xpu_devtype12.json.gz")
	ls := kinetoLeaks(res)
	if len(ls) != 1 || ls[0].Frame.Name != "aten::clone" || ls[0].Count != 12 || ls[0].Growth == nil || ls[0].Growth.GrewIn != 11 {
		t.Fatalf("leaks %+v; want aten::clone, 12 blocks, grown in 11", ls)
	}
	if res.DeviceType != 12 || res.DeviceEvents != 564 || res.CPUEvents != 72 {
		t.Errorf("type %d, %d device events, %d CPU; want 12, 564, 72", res.DeviceType, res.DeviceEvents, res.CPUEvents)
	}
}

// TestKinetoPT19: the tester's s31 rewrite of the no-stack schedule trace
// in PyTorch 1.8/1.9's layout ("Operator" spans, string tids, [memory]
// args without Total Allocated or Total Reserved). Its "Operator" ops
// name the site (aten::clone), its ProfilerStep#2..#11 mark the 10
// iterations (the leak: 10 blocks, grown in 9 of 9); the device's active
// and reserved bytes are unknown (-1), and a warning says so.
func TestKinetoPT19(t *testing.T) {
	res := kinetoResult(t, "../../testdata/kineto/s31_trace_pt19_style.json.gz")
	ls := kinetoLeaks(res)
	if len(ls) != 1 || ls[0].Frame.Name != "aten::clone" || ls[0].Count != 10 || ls[0].Growth == nil || ls[0].Growth.GrewIn != 9 {
		t.Fatalf("leaks %+v; want aten::clone, 10 blocks, grown in 9", ls)
	}
	if res.ProfilerSteps != 10 {
		t.Errorf("%d ProfilerStep spans, want 10", res.ProfilerSteps)
	}
	if d := res.Leak.Devices[0]; d.ActiveBytes != -1 || d.ReservedBytes != -1 || d.ActiveBlocks != 10 {
		t.Errorf("device: active %d in %d blocks, reserved %d; want unknown (-1) in 10, unknown", d.ActiveBytes, d.ActiveBlocks, d.ReservedBytes)
	}
	if !hasWarning(res.Leak.Warnings, "device 0: the trace's [memory] events carry no Total Allocated or Total Reserved") {
		t.Errorf("warnings %q", res.Leak.Warnings)
	}
}

// TestProfilerStepsContiguous: steps that end where the next begins, a
// nanosecond over from the rounding of ts and dur, are one loop's steps:
// they still mark the iterations (the leak, grown in 9 of 9).
func TestProfilerStepsContiguous(t *testing.T) {
	b, err := os.ReadFile(stepTrace(t, 10, true, false, false))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), `"dur":900.000`, `"dur":1000.001`)
	p := filepath.Join(t.TempDir(), "contiguous.trace.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, p)
	if ls := kinetoLeaks(res); len(ls) != 1 || ls[0].Growth == nil || ls[0].Growth.GrewIn != 9 {
		t.Errorf("leaks %+v, warnings %q; want the clone's, grown in 9", ls, res.Leak.Warnings)
	}
}

// Two processes' traces merged into one file (s32's twopid.json,
// synthetic: pid 100 keeps 1 MiB each of 10 steps, pid 200 allocates and
// frees 4 MiB each step, at the same times; the last [memory] event is
// pid 200's, Total Allocated 0). The spans of each pid do not overlap
// within that pid: each process is analysed on its own, across its own
// ProfilerStep#N spans, so pid 100's clone is a leak (grown in 9 of 9),
// not merely retained, and says it is pid 100's; each process's device
// has its own allocator's totals (pid 100: 10 MiB active in 10 blocks;
// pid 200: 0 B in 0), not the last event's.
func TestKinetoMergedProcesses(t *testing.T) {
	res := kinetoResult(t, "../../testdata/kineto/s32_twopid.json")
	if len(res.Leak.Devices) != 2 {
		t.Fatalf("devices %+v", res.Leak.Devices)
	}
	for i, want := range []struct {
		pid          int64
		active       int64
		blocks, iter int
	}{{100, 10 << 20, 10, 10}, {200, 0, 0, 10}} {
		d := res.Leak.Devices[i]
		if d.PID == nil || *d.PID != want.pid || d.ActiveBytes != want.active || d.ReservedBytes != 1<<30 || d.ActiveBlocks != want.blocks || d.Iterations != want.iter {
			t.Errorf("device %d: %+v (pid %v); want pid %d, %d active bytes in %d blocks, 1 GiB reserved, %d iterations", i, d, d.PID, want.pid, want.active, want.blocks, want.iter)
		}
	}
	ls := kinetoLeaks(res)
	if len(ls) != 1 || len(res.Leak.Sites) != 1 || ls[0].PID == nil || *ls[0].PID != 100 || ls[0].Frame.Name != "aten::clone" ||
		ls[0].Bytes != 10<<20 || ls[0].Growth == nil || ls[0].Growth.GrewIn != 9 || ls[0].Growth.Marker != stepLabel {
		t.Fatalf("sites %+v; want one leak, pid 100's clone, 10 MiB grown in 9 of 9 steps", res.Leak.Sites)
	}
	w := strings.Join(res.Leak.Warnings, "\n")
	if !strings.Contains(w, "come from 2 processes (pids 100, 200") || strings.Contains(w, "overlapping") ||
		!strings.Contains(w, "process 100: the trace marks 10 profiler steps") || !strings.Contains(w, "process 200: the trace marks 10 profiler steps") {
		t.Errorf("warnings %q", w)
	}
}

// A real trace (s31's tb_nostack_sched: 10 ProfilerStep#N spans, the
// clone keeping 1 MiB each step) merged with a leak-free copy of itself
// under another pid, at the same times (s32's real_twoproc.json: the copy
// frees each block it allocates 1 µs later). The original's process gets
// the verdict the trace gets alone, the copy none.
func TestKinetoMergedRealTrace(t *testing.T) {
	path := "../../testdata/kineto/s31_tb_nostack_sched.pt.trace.json.gz"
	alone := kinetoResult(t, path)
	in, err := parse.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	err = json.NewDecoder(in.Reader()).Decode(&doc)
	in.Close()
	if err != nil {
		t.Fatal(err)
	}
	events := doc["traceEvents"].([]any)
	const other = 1542
	// The allocations the trace leaves live (replayed in time order: the
	// allocator reuses addresses): the copy frees them.
	var mem []map[string]any
	for _, e := range events {
		if ev := e.(map[string]any); ev["name"] == "[memory]" {
			mem = append(mem, ev)
		}
	}
	sort.SliceStable(mem, func(i, j int) bool { return mem[i]["ts"].(float64) < mem[j]["ts"].(float64) })
	live := map[string]map[string]any{}
	for _, ev := range mem {
		args := ev["args"].(map[string]any)
		if addr := fmt.Sprint(args["Addr"]); args["Bytes"].(float64) > 0 {
			live[addr] = ev
		} else {
			delete(live, addr)
		}
	}
	key := func(ev map[string]any) string { return fmt.Sprint(ev["ts"], ev["args"].(map[string]any)["Addr"]) }
	leftLive := map[string]bool{}
	for _, ev := range live {
		leftLive[key(ev)] = true
	}
	var pid any
	for _, e := range events {
		ev := e.(map[string]any)
		if ev["name"] != "[memory]" && ev["cat"] != "cpu_op" && ev["cat"] != "user_annotation" {
			continue
		}
		pid = ev["pid"]
		cp := map[string]any{}
		for k, v := range ev {
			cp[k] = v
		}
		cp["pid"], cp["tid"] = other, other
		events = append(events, cp)
		args, _ := ev["args"].(map[string]any)
		if ev["name"] == "[memory]" && args["Device Type"].(float64) == 1 && leftLive[key(ev)] {
			free := map[string]any{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": other, "tid": other,
				"ts": ev["ts"].(float64) + 1, "args": map[string]any{"Addr": args["Addr"], "Bytes": -args["Bytes"].(float64),
					"Total Allocated": args["Total Allocated"].(float64) - args["Bytes"].(float64), "Total Reserved": args["Total Reserved"],
					"Device Type": 1, "Device Id": args["Device Id"]}}
			events = append(events, free)
		}
	}
	doc["traceEvents"] = events
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(t.TempDir(), "twoproc.json")
	if err := os.WriteFile(merged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, merged)
	want, got := kinetoLeaks(alone), kinetoLeaks(res)
	if len(want) != 1 || len(got) != 1 || got[0].PID == nil || fmt.Sprint(*got[0].PID) != fmt.Sprint(pid) ||
		got[0].Bytes != want[0].Bytes || got[0].Count != want[0].Count || got[0].Growth.GrewIn != want[0].Growth.GrewIn {
		t.Fatalf("leaks %+v; want the original's alone %+v, of pid %v", got, want, pid)
	}
	for _, s := range res.Leak.Sites {
		if *s.PID == other && s.Kind != callsite.Retained {
			t.Errorf("the leak-free copy has a %v site: %+v", s.Kind, s)
		}
	}
	if len(res.Leak.Devices) != 2 || res.Leak.Devices[0].ActiveBytes != alone.Leak.Devices[0].ActiveBytes || res.Leak.Devices[0].Iterations != 10 || res.Leak.Devices[1].Iterations != 10 {
		t.Errorf("devices %+v; want the original's %+v and the copy's, 10 iterations each", res.Leak.Devices, alone.Leak.Devices)
	}
}

// Another process's ProfilerStep#N spans in the trace (merged from one
// that recorded no memory) overlap this one's: each process's own steps
// are its iterations, so the leak is judged across pid 1's, and the other
// process's spans are not taken for overlap.
func TestProfilerStepsOfAnotherProcess(t *testing.T) {
	b, err := os.ReadFile(stepTrace(t, 10, true, false, false))
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for k := 0; k < 10; k++ {
		extra = append(extra, fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":2,"tid":2,"ts":%.3f,"dur":900,"args":{}}`, k, 1790857026000000.0+float64(k)*1000+450))
	}
	doc := strings.Replace(string(b), `"traceEvents": [`, `"traceEvents": [`+strings.Join(extra, ",")+",", 1)
	p := filepath.Join(t.TempDir(), "other.trace.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, p)
	if ls := kinetoLeaks(res); len(ls) != 1 || ls[0].PID != nil || ls[0].Growth == nil || ls[0].Growth.GrewIn != 9 || hasWarning(res.Leak.Warnings, "overlapping") {
		t.Errorf("leaks %+v, warnings %q; want the clone's, grown in 9, no overlap", ls, res.Leak.Warnings)
	}
}

// The devices of an XPU trace are named as PyTorch names them in the
// warnings ("device xpu:0:"), as the report's device lines do.
func TestXPUWarningsNameDevice(t *testing.T) {
	b, err := os.ReadFile(stepTrace(t, 10, true, false, false))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "xpu.trace.json")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), `"Device Type":1`, `"Device Type":12`)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, p)
	if res.DeviceType != 12 || !hasWarning(res.Leak.Warnings, "device xpu:0: 160 MiB was allocated before profiling") || hasWarning(res.Leak.Warnings, "device 0:") {
		t.Errorf("type %d, warnings %q", res.DeviceType, res.Leak.Warnings)
	}
}

// TestProfilerStepsAccumulation: gradient accumulation, prof.step() once an
// optimizer step of 4 micro-batches (with_stack=True), each micro-batch
// keeping a 1 MiB aten::clone: a stack marks the 40 micro-batches, the 10
// ProfilerStep#N spans the steps the program counts. The spans are the
// iterations: a leak of 40 blocks, +4 MiB in each of the 9 measured.
func TestProfilerStepsAccumulation(t *testing.T) {
	const t0 = 1790857026000000.0
	w := &traceWriter{alloc: 160 << 20, reserved: 1 << 30}
	mem, span := w.mem, w.span
	span("python_function", "train.py(20): <module>", t0-10, 10*4000+20)
	for k := 0; k < 10; k++ {
		s := t0 + float64(k)*4000
		span("user_annotation", fmt.Sprintf("ProfilerStep#%d", k+2), s, 3900)
		for m := 0; m < 4; m++ {
			u := s + float64(m)*900
			span("python_function", "train.py(9): micro_step", u+50, 800)
			span("cpu_op", "aten::empty", u+100, 20)
			mem(u+105, 0x7f0000000000, 4096)
			mem(u+200, 0x7f0000000000, -4096)
			span("cpu_op", "aten::clone", u+300, 100)
			mem(u+350, 0x7f1000000000+uint64(4*k+m)<<20, 1<<20)
		}
	}
	p := w.write(t, "accum.trace.json")
	res := kinetoResult(t, p)
	ls := kinetoLeaks(res)
	if len(ls) != 1 || ls[0].Count != 40 || ls[0].Bytes != 40<<20 {
		t.Fatalf("leaks %+v; want 1 of 40 blocks, 40 MiB", ls)
	}
	if g := ls[0].Growth; g == nil || g.Iterations != 10 || g.Measured != 9 || g.GrewIn != 9 || g.PerIteration != 4<<20 || g.Marker != stepLabel {
		t.Errorf("growth %+v; want 10 iterations (ProfilerStep#N spans), grown in 9 of 9, 4 MiB each", ls[0].Growth)
	}
}

// TestProfStepCallsMarkIterations: no schedule (no ProfilerStep#N span),
// with_stack=True, prof.step() called after each of 10 steps; each step
// makes a batch and a validation batch with the same op under the same
// function ("train.py(9): step": a trace names a function by its first
// line, so both have one stack), frees the first and keeps the second (1
// MiB). The prof.step() calls end the steps: 10 iterations, the leak grown
// in 9 of 9, +1 MiB each, not 20 iterations of +512 KiB.
func TestProfStepCallsMarkIterations(t *testing.T) {
	const t0 = 1790857026000000.0
	w := &traceWriter{alloc: 160 << 20, reserved: 1 << 30}
	mem, span := w.mem, w.span
	span("python_function", "train.py(20): <module>", t0-10, 10*1000+20)
	for k := 0; k < 10; k++ {
		s := t0 + float64(k)*1000
		span("python_function", "train.py(9): step", s+10, 800)
		span("cpu_op", "aten::randn", s+100, 20)
		mem(s+105, 0x7f0000000000, 1<<20)
		// The forward, inside a module call: no stack of it marks steps.
		span("python_function", "nn.Module: Linear_0", s+190, 40)
		span("cpu_op", "aten::mm", s+200, 20)
		mem(s+205, 0x7e0000000000, 4096)
		mem(s+250, 0x7e0000000000, -4096)
		mem(s+300, 0x7f0000000000, -(1 << 20))
		span("cpu_op", "aten::randn", s+400, 20)
		mem(s+405, 0x7f1000000000+uint64(k)<<20, 1<<20)
		span("python_function", "torch/profiler/profiler.py(812): step", s+900, 30)
	}
	p := w.write(t, "calls.trace.json")
	res := kinetoResult(t, p)
	ls := kinetoLeaks(res)
	if len(ls) != 1 || ls[0].Count != 10 || ls[0].Bytes != 10<<20 {
		t.Fatalf("leaks %+v; want 1 of 10 blocks, 10 MiB", ls)
	}
	if g := ls[0].Growth; g == nil || g.Iterations != 10 || g.Measured != 9 || g.GrewIn != 9 || g.PerIteration != 1<<20 || g.Marker != "prof.step() calls" {
		t.Errorf("growth %+v; want 10 iterations (prof.step() calls), grown in 9 of 9, 1 MiB each", ls[0].Growth)
	}
	if !hasWarning(res.Leak.Warnings, "each call ends a step") {
		t.Errorf("warnings %q: want the calls said to end the steps", res.Leak.Warnings)
	}
}
