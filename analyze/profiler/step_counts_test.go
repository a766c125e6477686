package profiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The warnings count one in the singular: a trace of one ProfilerStep#1
// span "marks 1 profiler step", and one whose only prof.step() call shows
// (no schedule) says it "was called 1 time", that its one allocation has
// no stack and that its one Python span does not enclose it (they said
// "1 times", "1 of 1 live allocations have", "1 Python function spans").
func TestStepWarningCountsOne(t *testing.T) {
	const base int64 = 1_700_000_000_000_000
	mem := fmt.Sprintf(`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Addr":4294967296,"Bytes":1048576,"Device Type":1,"Device Id":0}}`, base+500)
	for _, c := range []struct {
		span, want string
	}{
		{fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":%d,"dur":1000}`, base), "the trace marks 1 profiler step (ProfilerStep#N)"},
		{fmt.Sprintf(`{"ph":"X","cat":"python_function","name":"torch/profiler/profiler.py(700): step","pid":1,"tid":1,"ts":%d,"dur":10}`, base+900), "prof.step() was called 1 time:"},
		// The same trace: its one allocation has no stack, and its one
		// Python span does not enclose it.
		{fmt.Sprintf(`{"ph":"X","cat":"python_function","name":"torch/profiler/profiler.py(700): step","pid":1,"tid":1,"ts":%d,"dur":10}`, base+900), "device 0: the 1 live allocation has no stack;"},
		{fmt.Sprintf(`{"ph":"X","cat":"python_function","name":"torch/profiler/profiler.py(700): step","pid":1,"tid":1,"ts":%d,"dur":10}`, base+900), "the trace has 1 Python function span, but it does not enclose an allocation"},
	} {
		path := filepath.Join(t.TempDir(), "trace.json")
		if err := os.WriteFile(path, []byte(`{"profile_memory": 1, "traceEvents": [`+c.span+",\n"+mem+"]}"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := kinetoResult(t, path)
		if ws := strings.Join(res.Leak.Warnings, "\n"); !strings.Contains(ws, c.want) {
			t.Errorf("warnings %q, want %q", ws, c.want)
		}
	}
}
