package profiler

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestModuleClass(t *testing.T) {
	for in, want := range map[string]string{
		"Linear_110":            "Linear",
		"GELU_0":                "GELU",
		"MultiQueryAttention_9": "MultiQueryAttention",
		"Linear":                "Linear",  // no instance number
		"Conv_3d":               "Conv_3d", // a suffix that is no number
		"Block_":                "Block_",
		"_1":                    "_1", // nothing before the number
		"Layer_2_1":             "Layer_2",
	} {
		if got := moduleClass(in); got != want {
			t.Errorf("moduleClass(%q) = %q, want %q", in, got, want)
		}
	}
}

// A model with 4 instances of one module class (GELU_0 ... GELU_3), each
// called from the same line and keeping a 1 MiB tensor it makes through
// aten::gelu, and 2 instances of another (Linear_0, Linear_1) keeping 2
// MiB each through aten::linear: one site per op and class, "aten::gelu
// (nn.Module: GELU)" holding 4 allocations (4 MiB) and "aten::linear
// (nn.Module: Linear)" 2 (4 MiB); not one per instance (6 sites).
func TestKinetoSitesByModuleClass(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"profile_memory": 1, "traceEvents": [`)
	ev := func(s string, args ...any) {
		if b.Len() > 40 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, s, args...)
	}
	const base int64 = 1_700_000_000_000_000
	ev(`{"ph":"X","cat":"python_function","name":"model.py(1): <module>","pid":1,"tid":1,"ts":%d,"dur":%d}`, base, 1_000_000)
	call := func(k int, module, op string, bytes int64) {
		t0 := base + 1000 + int64(k)*10_000
		ev(`{"ph":"X","cat":"python_function","name":"model.py(20): forward","pid":1,"tid":1,"ts":%d,"dur":9000}`, t0)
		ev(`{"ph":"X","cat":"python_function","name":"nn.Module: %s","pid":1,"tid":1,"ts":%d,"dur":8000}`, module, t0+10)
		ev(`{"ph":"X","cat":"python_function","name":"layers.py(7): forward","pid":1,"tid":1,"ts":%d,"dur":7000}`, t0+20)
		ev(`{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%d,"dur":900}`, op, t0+30)
		ev(`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Addr":%d,"Bytes":%d,"Device Type":1,"Device Id":0}}`, t0+40, int64(1)<<32+int64(k)<<24, bytes)
	}
	for k := range 4 {
		call(k, fmt.Sprintf("GELU_%d", k), "aten::gelu", 1<<20)
	}
	for k := range 2 {
		call(4+k, fmt.Sprintf("Linear_%d", k), "aten::linear", 2<<20)
	}
	b.WriteString("]}")
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := kinetoResult(t, path)
	got := map[string][2]int64{}
	for _, s := range res.Leak.Sites {
		got[s.Frame.Name+" ("+s.Frame.Filename+")"] = [2]int64{int64(s.Count), s.Bytes}
		for _, f := range s.Stack {
			if instance.MatchString(f.Name) || instance.MatchString(f.Filename) {
				t.Errorf("site %v: frame %v names a module instance", s.Frame, f)
			}
		}
	}
	want := map[string][2]int64{"aten::gelu (nn.Module: GELU)": {4, 4 << 20}, "aten::linear (nn.Module: Linear)": {2, 4 << 20}}
	if len(got) != len(want) {
		t.Fatalf("sites %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v (sites %v)", k, got[k], v, got)
		}
	}
}

// instance matches a module instance's name: a class and its number.
var instance = regexp.MustCompile(`(^|: )[A-Za-z]\w*_\d+$`)
