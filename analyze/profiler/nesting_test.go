package profiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Spans of one thread with the same start and duration (a Python call and
// the op it made, timed to the same microsecond) nest in file order: the
// first in the file is the parent. 40 steps, each a python_function
// "train.py(10): step" span and, after it in the file, a cpu_op
// "aten::clone" span of exactly its time, around a kept 1 MiB allocation:
// every allocation's stack is aten::clone called from step, one site of
// 40 allocations. Sorted unstably (sort.Slice; pdqsort above 12 spans),
// some pairs swapped, the op became the step's parent, and its stack lost
// the op: the allocations split over two sites.
func TestEqualSpansNestInFileOrder(t *testing.T) {
	for _, opFirst := range []bool{false, true} {
		var b strings.Builder
		b.WriteString(`{"profile_memory": 1, "traceEvents": [`)
		ev := func(s string, args ...any) {
			if b.Len() > 40 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, s, args...)
		}
		const base int64 = 1_700_000_000_000_000
		ev(`{"ph":"X","cat":"python_function","name":"train.py(1): <module>","pid":1,"tid":1,"ts":%d,"dur":%d}`, base, 10_000_000)
		step := func(t0 int64) {
			ev(`{"ph":"X","cat":"python_function","name":"train.py(10): step","pid":1,"tid":1,"ts":%d,"dur":1000}`, t0)
		}
		op := func(t0 int64) {
			ev(`{"ph":"X","cat":"cpu_op","name":"aten::clone","pid":1,"tid":1,"ts":%d,"dur":1000}`, t0)
		}
		// Written latest first, as a trace need not be in time order:
		// the sort has work to do.
		for k := 39; k >= 0; k-- {
			t0 := base + 1000 + int64(k)*100_000
			if opFirst {
				op(t0)
				step(t0)
			} else {
				step(t0)
				op(t0)
			}
			ev(`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Addr":%d,"Bytes":1048576,"Device Type":1,"Device Id":0}}`, t0+500, int64(1)<<32+int64(k)<<21)
		}
		b.WriteString("]}")
		path := filepath.Join(t.TempDir(), "trace.json")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		res := kinetoResult(t, path)
		if len(res.Leak.Sites) != 1 {
			var s []string
			for _, x := range res.Leak.Sites {
				s = append(s, fmt.Sprintf("%v (%d)", x.Stack, x.Count))
			}
			t.Fatalf("op first %v: %d sites, want 1: %s", opFirst, len(res.Leak.Sites), strings.Join(s, "; "))
		}
		st := res.Leak.Sites[0].Stack
		// The step first in the file: the op inside it, called by step.
		// The op first: the step is inside the op, a Python frame under
		// the op, so the stack has no op the Python code called (stackOf
		// names only an op below the innermost Python frame): step.
		want := "aten::clone < step < <module>"
		if opFirst {
			want = "step < <module>"
		}
		var names []string
		for _, f := range st {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, " < "); got != want || res.Leak.Sites[0].Count != 40 {
			t.Errorf("op first %v: stack %q, %d allocations; want %q, 40", opFirst, got, res.Leak.Sites[0].Count, want)
		}
	}
}
