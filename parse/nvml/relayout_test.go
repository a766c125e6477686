package nvml

import (
	"strings"
	"testing"
)

// A header with other fields mid-log (a logger restarted with another
// --query-gpu list, appended to the same file) is read as the new layout
// from its line on and noted once per change, saying how a GPU is matched
// across it; a header repeated unchanged is no note; a --query-compute-apps
// header among --query-gpu rows is said to be another query's.
func TestLayoutChangeNoted(t *testing.T) {
	const (
		idx  = "timestamp, index, name, memory.used [MiB]\n"
		uuid = "timestamp, index, uuid, name, memory.total [MiB], memory.used [MiB]\n"
		apps = "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n"
		r1   = "2026/12/02 10:00:00.000, 0, H100, 10 MiB\n"
		r2   = "2026/12/02 10:00:01.000, 0, GPU-a, H100, 81559 MiB, 20 MiB\n"
		r3   = "2026/12/02 10:00:01.500, GPU-a, 4242, python3, 8 MiB\n"
	)
	for _, c := range []struct {
		name, log   string
		rows, notes int      // rows read; layout notes
		want        []string // in the warnings, in order
	}{
		{"index and name, then uuid too", idx + r1 + uuid + r2, 2, 1,
			[]string{"line 3: a header with other fields (timestamp,index,uuid,name,memory.total,memory.used; before: timestamp,index,name,memory.used)",
				"a GPU is one series across the change by its index and name"}},
		{"repeated header", uuid + r2 + uuid + r2, 2, 0, nil},
		// Two loggers alternating: each change noted once.
		{"gpu and apps alternating", uuid + r2 + apps + r3 + uuid + r2 + apps + r3, 4, 2,
			[]string{"line 3: a header of --query-compute-apps fields", "line 5: a header of --query-gpu fields"}},
	} {
		rows, meta, err := readRows(t, "gpu.csv", c.log)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rows) != c.rows {
			t.Errorf("%s: %d rows, want %d", c.name, len(rows), c.rows)
		}
		ws := strings.Join(meta.Warnings.Strings(), "\n")
		if n := strings.Count(ws, "a header"); n != c.notes {
			t.Errorf("%s: %d layout notes, want %d: %q", c.name, n, c.notes, ws)
		}
		at := 0
		for _, w := range c.want {
			i := strings.Index(ws[at:], w)
			if i < 0 {
				t.Errorf("%s: warnings %q lack %q (in order)", c.name, ws, w)
				break
			}
			at += i + len(w)
		}
	}
}
