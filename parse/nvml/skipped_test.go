package nvml

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A row or record that cannot be read among rows that can (a line pasted
// in the middle, a truncated last row or record, a value that is no size)
// is skipped, block by block: counted in SkippedLines, its first line in
// SkippedAt, and named in a "read in part" warning; the rows around it
// are read. It used to end the whole log with an error.
func TestSkippedRows(t *testing.T) {
	const csvHead = "timestamp, index, memory.used [MiB]\n"
	good := func(sec int) string { return "2026/01/02 03:04:0" + string(rune('0'+sec)) + ".000, 0, 1 MiB\n" }
	const js1 = `{"ts": 1, "gpu": 0, "used": 1}` + "\n"
	const js3 = `{"ts": 3, "gpu": 0, "used": 1}` + "\n"
	gpustat := func(at string) string {
		return "{\n \"query_time\": \"" + at + "\",\n \"gpus\": [{\"index\": 0, \"memory.used\": 5, \"memory.total\": 10}]\n}\n"
	}
	for _, c := range []struct {
		name string
		in   string
		// rows read; lines skipped; the first line of each skipped row
		rows, lines int
		at          []int
		why         string
	}{
		// Header (line 1), a row (2), a row cut after its index (3).
		{"csv truncated last row", csvHead + good(5) + "2026/01/02 03:04:06.000, 0", 1, 1, []int{3}, "2 fields, but the header names 3"},
		// A row (2), a line another program printed (3), a row (4).
		{"csv pasted line", csvHead + good(5) + "Segmentation fault (core dumped)\n" + good(6), 2, 1, []int{3}, "1 fields, but the header names 3"},
		{"csv truncated value", csvHead + good(5) + "2026/01/02 03:04:06.000, 0, 1 Mi", 1, 1, []int{3}, `memory.used: "1 Mi" is not a size`},
		// Rows at 2, 4 and 6; bad lines at 3 and 5: two skipped.
		{"csv two bad lines", csvHead + good(1) + "oops\n" + good(2) + "2026/01/02 03:04:0\n" + good(3), 3, 2, []int{3, 5}, "1 fields"},
		// dmon: two header lines, a row (3), a row cut (4).
		{"dmon truncated", "# gpu fb bar1\n# Idx MB MB\n 0 1 2\n 0 1", 1, 1, []int{4}, "2 columns, but the header names 3"},
		{"dmon pasted line", "# gpu fb\n# Idx MB\n 0 1\nKilled\n 0 2\n", 2, 1, []int{4}, "1 columns"},
		// pynvml: a record (1), one cut at the end of the log (2).
		{"json truncated", js1 + `{"ts": 2, "gpu": 0,` + "\n", 1, 1, []int{2}, "does not end"},
		{"json bad type", js1 + `{"ts": 2, "gpu": "zero", "used": 1}` + "\n" + js3, 2, 1, []int{2}, "not a pynvml sample record"},
		// A record without a time: skipped whole.
		{"json record without a time", js1 + `{"gpu": 0, "used": 1}` + "\n" + js3, 2, 1, []int{2}, "a record without a time"},
		// A record cut among whole ones (a writer killed mid-line, then
		// restarted): it never closes, and used to swallow every record
		// after it, the log read as its first lines only.
		{"json record cut inside a string", js1 + `{"ts": 2, "gpu": 0, "uu` + "\n" + js3 + js3, 3, 1, []int{2}, "cut inside a string"},
		{"json record cut after a key", js1 + `{"ts": 2, "gpu":` + "\n" + js3 + js3, 3, 1, []int{2}, "is cut at the end of line 2"},
		{"json record cut after a value", js1 + `{"ts": 2, "gpu": 0` + "\n" + js3 + js3, 3, 1, []int{2}, "is cut at the end of line 2"},
		{"json record cut before a pasted line", js1 + `{"ts": 2, "gpu": 0` + "\nKilled\n" + js3, 2, 2, []int{2, 3}, "is cut at the end of line 2"},
		{"json pasted line", js1 + "Traceback (most recent call last):\n" + js3, 2, 1, []int{2}, "expected a JSON object"},
		// A record over lines 2 and 3 with a value of the wrong type: both
		// of its lines are skipped, the record counted once, at line 2.
		{"json record over two lines", js1 + `{"ts": 2,` + "\n" + `"gpu": "x", "used": 1}` + "\n" + js3, 2, 2, []int{2}, "not a pynvml sample record"},
		// gpustat --json, pretty: a document (lines 1-4), one without
		// query_time (5-8: its 4 lines skipped, counted once at 5), one more
		// (9-12).
		{"gpustat document without a time", gpustat("2026-01-01T00:00:00") + "{\n \"hostname\": \"h\",\n \"gpus\": []\n}\n" + gpustat("2026-01-01T00:00:01"), 2, 4, []int{5}, "without query_time"},
		// A gpustat document cut after a whole line ending in ','
		// (lines 5-6), the next document at line 7: its '{' at the start
		// of a line, after indented lines, starts a document.
		{"gpustat document cut", gpustat("2026-01-01T00:00:00") + "{\n \"query_time\": \"2026-01-01T00:00:01\",\n" + gpustat("2026-01-01T00:00:02"), 2, 2, []int{5}, "is cut at the end of line 6"},
		{"dcgm bad value", "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\nDCGM_FI_DEV_FB_USED{gpu=\"1\"} lots\n", 1, 1, []int{2}, `"lots" is not a number`},
		{"dcgmi truncated", "#Entity   FBUSD\nID\nGPU 0     10\nGPU 1\n", 1, 1, []int{4}, "values, but the header names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, meta, err := readRows(t, "in", c.in)
			if err != nil {
				t.Fatalf("error %v, want the log read in part", err)
			}
			if len(rows) != c.rows || meta.SkippedLines != c.lines || !slices.Equal(meta.SkippedAt, c.at) {
				t.Errorf("%d rows, %d lines skipped at %v; want %d, %d at %v", len(rows), meta.SkippedLines, meta.SkippedAt, c.rows, c.lines, c.at)
			}
			ws := strings.Join(meta.Warnings.Strings(), "\n")
			where := "line " + strconv.Itoa(c.at[0])
			if len(c.at) > 1 {
				var s []string
				for _, n := range c.at {
					s = append(s, strconv.Itoa(n))
				}
				where = "lines " + strings.Join(s, ", ")
			}
			if !strings.Contains(ws, "read in part") || !strings.Contains(ws, "("+where+"; the first: ") || !strings.Contains(ws, c.why) {
				t.Errorf("warnings %q: want one saying the log was read in part, at %s, why: %q", ws, where, c.why)
			}
		})
	}
}

// A log whose every row is skipped is no log read in part: it fails with
// the first row's error, at its line.
func TestAllRowsSkippedIsAnError(t *testing.T) {
	_, _, err := readRows(t, "in", "timestamp, index, memory.used [MiB]\nnot a row\n2026/01/02 03:04:0\n")
	if err == nil || !strings.HasPrefix(err.Error(), "in:2: 1 fields, but the header names 3") {
		t.Errorf("error %v, want in:2's", err)
	}
}

// More skipped rows than SkippedAt keeps: the warning names the first
// MaxSkippedAt and says there are more; SkippedLines counts them all.
func TestManySkippedRows(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp, index, memory.used [MiB]\n2026/01/02 03:04:05.000, 0, 1 MiB\n")
	for range MaxSkippedAt + 5 {
		b.WriteString("garbage\n") // lines 3 to MaxSkippedAt+7
	}
	_, meta, err := readRows(t, "in", b.String())
	if err != nil {
		t.Fatal(err)
	}
	if meta.SkippedLines != MaxSkippedAt+5 || len(meta.SkippedAt) != MaxSkippedAt || meta.SkippedAt[0] != 3 {
		t.Errorf("%d lines skipped at %v", meta.SkippedLines, meta.SkippedAt)
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(ws, "15 lines that could not be read as samples were skipped (lines 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ...;") {
		t.Errorf("warnings %q", ws)
	}
}
