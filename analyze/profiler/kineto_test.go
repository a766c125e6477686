package profiler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
)

func kinetoResult(t *testing.T, path string) *KinetoResult {
	t.Helper()
	in, err := parse.Open(path, nil)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("%s is absent", path)
		}
		t.Fatal(err)
	}
	defer in.Close()
	r := kineto.NewReader(in.Reader(), path)
	defer r.Release()
	a := NewKinetoAnalyzer(snapshot.LeakOptions{})
	for r.Next() {
		if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// leaks returns the leak sites of a result.
func kinetoLeaks(res *KinetoResult) []snapshot.Site {
	var out []snapshot.Site
	for _, s := range res.Leak.Sites {
		if s.Kind == callsite.Leak {
			out = append(out, s)
		}
	}
	return out
}

// TestKinetoFixture: the shared fixture profiles 8 steps that each keep
// their output `out = model(x)` (../shared/fixturegen/profile_mem.py): a
// 512x1024 fp32 tensor (2 MiB) made by the last Linear of the Sequential
// (nn.Module Linear_1) through aten::linear. One leak there, named by
// the op and the module's class (Linear: Linear_0's allocations of the
// step are freed within it): 8 allocations, 16 MiB, +2 MiB per step,
// over the 8 steps.
func TestKinetoFixture(t *testing.T) {
	res := kinetoResult(t, "../../testdata/pytorch/kineto_trace.json")
	ls := kinetoLeaks(res)
	if len(ls) != 1 {
		t.Fatalf("%d leaks, want 1: %+v", len(ls), res.Leak.Sites)
	}
	l := ls[0]
	if l.Frame.Name != "aten::linear" || l.Frame.Filename != "nn.Module: Linear" || l.Count != 8 || l.Bytes != 8<<21 {
		t.Errorf("leak %v: %d allocations, %d bytes; want aten::linear in Linear, 8, 16 MiB", l.Frame, l.Count, l.Bytes)
	}
	if g := l.Growth; g == nil || g.Iterations != 8 || g.PerIteration != 2<<20 {
		t.Errorf("growth %+v; want 8 iterations, 2 MiB per iteration", l.Growth)
	}
	if !res.WithPython || res.CUDAEvents != 297 || res.CPUEvents != 32 {
		t.Errorf("python %v, cuda %d, cpu %d; want true, 297, 32", res.WithPython, res.CUDAEvents, res.CPUEvents)
	}
}

// TestKinetoH200: the H200 recording (testdata/gen/profile_keep_outputs.py)
// keeps out.detach().clone() each of 10 steps: 10 x 2 MiB through
// aten::clone, under the script's <module>. The trace cannot give line 21
// (a Python span carries where its function was entered, line 12 here,
// where profiling began), so the site is the op and the module frame.
func TestKinetoH200(t *testing.T) {
	res := kinetoResult(t, "../../testdata/kineto/profile_keep_outputs_trace.json.gz")
	ls := kinetoLeaks(res)
	if len(ls) != 1 {
		t.Fatalf("%d leaks, want 1: %+v", len(ls), res.Leak.Sites)
	}
	l := ls[0]
	if l.Frame.Name != "aten::clone" || l.Count != 10 || l.Bytes != 10<<21 {
		t.Errorf("leak %v: %d allocations, %d bytes; want aten::clone, 10, 20 MiB", l.Frame, l.Count, l.Bytes)
	}
	var file string
	for _, f := range l.Stack {
		if f.Filename != "" {
			file = f.Filename
		}
	}
	if file != "profile_keep_outputs.py" {
		t.Errorf("stack %v does not end in profile_keep_outputs.py", l.Stack)
	}
	if g := l.Growth; g == nil || g.Iterations != 10 || g.PerIteration != 2<<20 {
		t.Errorf("growth %+v; want 10 iterations, 2 MiB per iteration", l.Growth)
	}
	if res.StepCalls != 10 || res.ProfilerSteps != 0 {
		t.Errorf("prof.step() calls %d, ProfilerStep spans %d; want 10, 0", res.StepCalls, res.ProfilerSteps)
	}
	// The model was made before profiling (gen/profile_keep_outputs.py):
	// two 1024x4096 fp32 weights, 2 x 16 MiB, and 20 KiB of biases, held
	// to the end; no [memory] event allocates them.
	var before bool
	for _, w := range res.Leak.Warnings {
		before = before || strings.Contains(w, "device 0: 32 MiB was allocated before profiling began")
	}
	if !before {
		t.Errorf("no warning of the 32 MiB allocated before profiling: %q", res.Leak.Warnings)
	}
}

// TestKinetoField: the public traces are single passes, judged from their
// data: CodingPlatelets' two traces are one forward of a SwitchTransformer
// (1030 CUDA [memory] events, every one under "nn.Module: SwitchTransformer_0"
// once, no op outside a module call recurring); Gabriellanaro's is a
// ResNet forward on the CPU (Device Type 0 only: no CUDA memory at all).
// No leak may be reported: one pass cannot show growth across steps.
func TestKinetoField(t *testing.T) {
	for _, c := range []struct {
		name string
		cuda int64
	}{
		{"CodingPlatelets__trace.json", 1030},
		{"CodingPlatelets__trace_128token_100Kpar_4exp_4batch_128seq.json", 1030},
		{"Gabriellanaro__trace.json", 0},
	} {
		res := kinetoResult(t, "../../../shared/field/kineto/"+c.name)
		if ls := kinetoLeaks(res); len(ls) != 0 {
			t.Errorf("%s: %d leaks, want none (a single pass): %v", c.name, len(ls), ls[0].Frame)
		}
		if res.CUDAEvents != c.cuda {
			t.Errorf("%s: %d CUDA events, want %d", c.name, res.CUDAEvents, c.cuda)
		}
		// Sites are ops in module classes, never in each instance: the
		// SwitchTransformer's 24 GELU_N, 10 MultiQueryAttention_N, ...
		// gave 195 findings, each a layer's copy of a few sites. A
		// reader can take in 40 (fieldcheck.sh's bound).
		for _, s := range res.Leak.Sites {
			if instance.MatchString(s.Frame.Filename) {
				t.Errorf("%s: site %v names a module instance", c.name, s.Frame)
			}
		}
		if n := len(res.Leak.Sites); n > 40 {
			t.Errorf("%s: %d sites, more than a reader takes in", c.name, n)
		}
	}
}

// TestKinetoSynthetic: a hand-written trace of 6 steps on one thread; each
// step (a python_function "train.py(10): step" span) allocates a 1 MiB
// temporary in aten::empty under aten::zeros (freed in the step) and
// keeps a 4 MiB tensor from aten::clone (never freed). The clone is the
// leak, named by the op the Python code called (aten::clone, not the
// aten::empty_strided inside it), +4 MiB per step; the zeros are not.
// A [memory] event of another thread, with no span around it, still
// counts, with no stack.
func TestKinetoSynthetic(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"profile_memory": 1, "traceEvents": [`)
	ev := func(s string, args ...any) {
		if b.Len() > 40 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, s, args...)
	}
	const base int64 = 1_700_000_000_000_000
	ev(`{"ph":"X","cat":"python_function","name":"train.py(1): <module>","pid":1,"tid":1,"ts":%d,"dur":%d}`, base, 7_000_000)
	for k := 0; k < 6; k++ {
		t0 := base + 1000 + int64(k)*1_000_000
		ev(`{"ph":"X","cat":"python_function","name":"train.py(10): step","pid":1,"tid":1,"ts":%d,"dur":900000}`, t0)
		ev(`{"ph":"X","cat":"python_function","name":"<built-in method zeros of type object at 0x7f%d>","pid":1,"tid":1,"ts":%d,"dur":1000}`, k, t0+10)
		ev(`{"ph":"X","cat":"cpu_op","name":"aten::zeros","pid":1,"tid":1,"ts":%d,"dur":900}`, t0+20)
		ev(`{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":%d,"dur":100}`, t0+30)
		ev(`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Addr":%d,"Bytes":1048576,"Device Type":1,"Device Id":0}}`, t0+40, 1<<30)
		ev(`{"ph":"X","cat":"python_function","name":"<built-in method clone of Tensor object at 0x7f%d>","pid":1,"tid":1,"ts":%d,"dur":1000}`, k, t0+2000)
		ev(`{"ph":"X","cat":"cpu_op","name":"aten::clone","pid":1,"tid":1,"ts":%d,"dur":900}`, t0+2010)
		ev(`{"ph":"X","cat":"cpu_op","name":"aten::empty_strided","pid":1,"tid":1,"ts":%d,"dur":100}`, t0+2020)
		ev(`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Addr":%d,"Bytes":4194304,"Device Type":1,"Device Id":0}}`, t0+2030, int64(1)<<32+int64(k)<<23)
		ev(`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Addr":%d,"Bytes":-1048576,"Device Type":1,"Device Id":0}}`, t0+5000, 1<<30)
	}
	ev(`{"ph":"i","name":"[memory]","pid":1,"tid":99,"ts":%d,"args":{"Addr":%d,"Bytes":512,"Device Type":1,"Device Id":0}}`, base+6_500_000, int64(1)<<40)
	b.WriteString("]}")
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, path)
	ls := kinetoLeaks(res)
	if len(ls) != 1 {
		t.Fatalf("%d leaks, want 1: %+v", len(ls), res.Leak.Sites)
	}
	l := ls[0]
	if l.Frame.Name != "aten::clone" || l.Count != 6 || l.Bytes != 6<<22 {
		t.Errorf("leak at %v, %d allocations, %d bytes; want aten::clone, 6, 24 MiB", l.Frame, l.Count, l.Bytes)
	}
	if g := l.Growth; g == nil || g.PerIteration != 4<<20 {
		t.Errorf("growth %+v, want 4 MiB per iteration", l.Growth)
	}
	for _, s := range res.Leak.Sites {
		if s.Frame.Name == "aten::zeros" || s.Frame.Name == "aten::empty" {
			t.Errorf("the freed temporary is reported: %+v", s)
		}
	}
	if res.CUDAEvents != 6*3+1 {
		t.Errorf("%d CUDA events, want 19", res.CUDAEvents)
	}
}

// [OutOfMemory] events keep their device type; a negative Bytes is no
// size (Requested -1, BytesArg as written). Each event is an oom finding
// downstream, so the warnings add only why a request is unknown (s32:
// "0 B requested" beside an OOM of no size).
func TestKinetoOOMEvents(t *testing.T) {
	oom := func(bytes int64, dtype, dev int) string {
		return fmt.Sprintf(`{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[OutOfMemory]","pid":1,"tid":1,"ts":1790857026000900,"args":{"Total Reserved":174063616,"Total Allocated":168882176,"Bytes":%d,"Device Id":%d,"Device Type":%d}}`, bytes, dev, dtype)
	}
	doc := `{"traceEvents":[{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1790857026000000,"args":{"Total Reserved":2097152,"Total Allocated":512,"Bytes":512,"Device Id":0,"Device Type":1,"Addr":4096}},` +
		oom(1<<43, 1, 0) + "," + oom(-1, 1, 0) + "," + oom(1<<33, 0, -1) + "," + oom(-7, 12, 0) + `]}`
	p := filepath.Join(t.TempDir(), "oom.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, p)
	want := []KinetoOOM{
		{Device: 0, DeviceType: 1, Requested: 1 << 43, BytesArg: 1 << 43},
		{Device: 0, DeviceType: 1, Requested: -1, BytesArg: -1},
		{Device: -1, DeviceType: 0, Requested: 1 << 33, BytesArg: 1 << 33},
		{Device: 0, DeviceType: 12, Requested: -1, BytesArg: -7},
	}
	if len(res.OOMs) != len(want) {
		t.Fatalf("OOMs %+v", res.OOMs)
	}
	for i, w := range want {
		o := res.OOMs[i]
		if o.Device != w.Device || o.DeviceType != w.DeviceType || o.Requested != w.Requested || o.BytesArg != w.BytesArg || o.TotalAllocated != 168882176 {
			t.Errorf("OOM %d: %+v, want %+v", i, o, w)
		}
	}
	var about []string
	for _, w := range res.Leak.Warnings {
		if strings.Contains(w, "[OutOfMemory]") {
			about = append(about, w)
		}
	}
	if len(about) != 2 || about[0] != "device 0: an [OutOfMemory] event's Bytes is -1, not a size: the request that failed is unknown" ||
		about[1] != "device xpu:0: an [OutOfMemory] event's Bytes is -7, not a size: the request that failed is unknown" {
		t.Errorf("warnings about the events: %q", about)
	}
}
