package nvml

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Session 44, helper h44f (testdata/README.md, "Session 44, helper h44f").

// wrapLines puts prefix before every line of text that is not empty.
func wrapLines(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i := range lines {
		if lines[i] != "" {
			lines[i] = prefix + lines[i]
		}
	}
	return strings.Join(lines, "")
}

// Every NVML layout reads the same behind the wrappers a paste or a log
// puts around it: a Markdown fence (opening and closing), "> " quote
// marks, a GitHub Actions stamp, a Metaflow job log's stamp and tags.
// Before, all of these but nvidia-smi's text were refused (exit 2, "not
// an NVML sample log ... needs --fields") and a closing fence after rows
// was a skipped row ("READ IN PART"). The samples must be those read flush
// left, with no line skipped: dmon and pmon logged with -o T start their
// rows with a time of day, which a quote must not take for a log stamp.
func TestHunt44fEveryLayoutBehindWrappers(t *testing.T) {
	wrappers := map[string]func(string) string{
		"fence":      func(s string) string { return "```\n" + s + "```\n" },
		"fence text": func(s string) string { return "```text\n" + s + "```\n\nThe log above ends here.\n" },
		"quote":      func(s string) string { return wrapLines(s, "> ") },
		"gha":        func(s string) string { return wrapLines(s, "2024-05-01T10:00:01.1234567Z ") },
		"metaflow": func(s string) string {
			return wrapLines(s, "2021-03-12 05:02:18.125 [129/start/1341 (pid 5161)] [931bbcf6-5fa2-4661-83df-1d82d52b6226] ")
		},
		"quoted gha": func(s string) string { return wrapLines(s, "> 2024-05-01T10:00:01Z ") },
	}
	for _, name := range []string{
		"query_gpu.csv", "query_apps.csv", "dmon.txt", "pmon_mu_T.txt", "dmon_mu.txt",
		"pynvml_2.jsonl", "dcgm_date_curl_loop_5min.txt", "pub_gpustat97_line.txt",
	} {
		path := "../../testdata/nvml/" + name
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wmeta := readFile(t, path)
		if len(want) == 0 {
			t.Fatalf("%s: no samples flush left", name)
		}
		for wname, w := range wrappers {
			got, meta, err := readRows(t, name, w(string(b)))
			switch {
			case err != nil:
				t.Errorf("%s in %s: %.200v", name, wname, err)
			case meta.Format != wmeta.Format || !reflect.DeepEqual(got, want):
				t.Errorf("%s in %s: %s, %d samples; want %s, %d as flush left", name, wname, meta.Format, len(got), wmeta.Format, len(want))
			case meta.SkippedLines != 0:
				t.Errorf("%s in %s: %d lines skipped; want none (a fence is no row)", name, wname, meta.SkippedLines)
			}
			if f := Sniff([]byte(w(string(b)))); f != wmeta.Format {
				t.Errorf("Sniff of %s in %s = %s; want %s", name, wname, f, wmeta.Format)
			}
		}
	}
}

// The real pastes: a dmon excerpt in a project report's fence, read
// before only because a comment line came first, and then with its closing
// fence as a damaged row; a Metaflow job log, refused before (its lines'
// "[129/start/1341 (pid 5161)] [uuid]" tags were not taken for a stamp).
func TestHunt44fRealWrappedPastes(t *testing.T) {
	rows, meta := readFile(t, "../../testdata/nvml/pub_nsa_fsdp_dmon_fenced.txt")
	if meta.SkippedLines != 0 || len(rows) != 2 || val(rows[0].Used) != mib(1031) || val(rows[1].Used) != mib(1031) {
		t.Errorf("fenced dmon: %d rows, %d lines skipped; want GPUs 0 and 1 at 1031 MiB, none skipped", len(rows), meta.SkippedLines)
	}
	rows, meta = readFile(t, "../../testdata/nvml/pub_metaflow_gpu_job_log.txt")
	// "|      0MiB / 16160MiB |" under "Fri Mar 12 05:02:15 2021".
	if len(rows) != 1 || val(rows[0].Used) != 0 || val(rows[0].Total) != mib(16160) || rows[0].TimeUs != utc(2021, 3, 12, 5, 2, 15, 0) {
		t.Errorf("Metaflow log: %d rows %+v; want one at 05:02:15, 0 of 16160 MiB", len(rows), rows)
	}
	// The --query-gpu CSV the job printed after the table (line 25, its
	// header) is not read, and must be said: it was dropped unseen.
	said := false
	for _, w := range meta.Warnings.Strings() {
		said = said || strings.Contains(w, "line 25: a --query-gpu/--query-compute-apps CSV output starts here")
	}
	if !said {
		t.Errorf("Metaflow log: no warning that the CSV at line 25 is not read: %.200q", meta.Warnings.Strings())
	}
}

// A tag is not a stamp: gpustat's "[0]" row behind a stamp keeps its
// index, and a stamp's time alone in a dmon -o T row is kept when the
// log's first line carries no stamp.
func TestHunt44fWrapKeepsRows(t *testing.T) {
	if got := string(stripStamp([]byte("2024-01-01T00:00:00Z [0] NVIDIA H200 | 30°C"))); got != "[0] NVIDIA H200 | 30°C" {
		t.Errorf("stripStamp kept %q; want gpustat's [0] kept", got)
	}
	if w := wrapOf([]byte("```\n> #Time gpu fb\n> 10:00:01 0 1031\n")); w != (wrap{quote: true}) {
		t.Errorf("wrapOf(quoted dmon -o T) = %+v; want quote marks only", w)
	}
	for _, s := range []string{"```", "```json", "~~~", "> ```", "  ```text  "} {
		if !isFence([]byte(s)) {
			t.Errorf("isFence(%q) = false", s)
		}
	}
	for _, s := range []string{"``", "```a b", "`x`"} {
		if isFence([]byte(s)) {
			t.Errorf("isFence(%q) = true", s)
		}
	}
}

// noIndexLog writes a synthetic --query-gpu log without index or uuid:
// every tick, a period apart from start, one row per GPU, each stamped
// gap later than the one before (nvidia-smi stamps each GPU's row as it
// queries it); used(g, k) is GPU g's memory at tick k, in MiB.
func noIndexLog(gpus, ticks int, start time.Time, period func(k int) time.Duration, gap time.Duration, used func(g, k int) int) string {
	var b strings.Builder
	b.WriteString("timestamp, name, memory.used [MiB], memory.total [MiB]\n")
	t := start
	for k := range ticks {
		for g := range gpus {
			fmt.Fprintf(&b, "%s, NVIDIA A100-SXM4-40GB, %d MiB, 40960 MiB\n", t.Add(time.Duration(g)*gap).Format("2006/01/02 15:04:05.000"), used(g, k))
		}
		t = t.Add(period(k))
	}
	return b.String()
}

// A --query-gpu log without index or uuid whose rows each carry their own
// time, a few ms apart within a tick, holds one GPU per place in a tick.
// Before, a tick was only rows of the very same time: two GPUs 4 ms apart
// (one growing 3 MiB/s from 3000 MiB, one flat at 5000 MiB) were one
// series of 600 samples growing 1.5 MiB/s, with no warning. Here each GPU
// must come back whole: GPU 0 the growing one, GPU 1 the flat one, also
// when the period changes (-l 1 then -l 5, then -lms 500), the logger
// pauses for 10 min, and with 8 GPUs 15 ms apart.
func TestHunt44fNoIndexRowsMsApart(t *testing.T) {
	start := time.Date(2024, 5, 1, 10, 0, 0, 100e6, time.UTC)
	second := func(int) time.Duration { return time.Second }
	varied := func(k int) time.Duration {
		switch {
		case k == 50:
			return 10 * time.Minute
		case k < 100:
			return time.Second
		case k < 150:
			return 5 * time.Second
		}
		return 500 * time.Millisecond
	}
	for _, c := range []struct {
		name   string
		gpus   int
		period func(int) time.Duration
		gap    time.Duration
	}{
		{"2 GPUs 4 ms apart, -l 1", 2, second, 4 * time.Millisecond},
		{"2 GPUs 4 ms apart, varied period", 2, varied, 4 * time.Millisecond},
		{"8 GPUs 15 ms apart, varied period", 8, varied, 15 * time.Millisecond},
		{"1 GPU, -l 1", 1, second, 0},
	} {
		used := func(g, k int) int {
			if g == 0 {
				return 3000 + 3*k
			}
			return 5000 + 1000*g
		}
		const ticks = 200
		rows, meta, err := readRows(t, "noindex.csv", noIndexLog(c.gpus, ticks, start, c.period, c.gap, used))
		if err != nil {
			t.Fatalf("%s: %.200v", c.name, err)
		}
		if len(rows) != c.gpus*ticks {
			t.Fatalf("%s: %d rows; want %d", c.name, len(rows), c.gpus*ticks)
		}
		per := map[int32]int{}
		for _, r := range rows {
			if r.GPU == nil {
				t.Fatalf("%s: a row without a GPU", c.name)
			}
			g := int(*r.GPU)
			k := per[*r.GPU]
			per[*r.GPU]++
			if want := mib(int64(used(g, k))); val(r.Used) != want {
				t.Fatalf("%s: GPU %d's sample %d is %d MiB; want %d MiB (another GPU's row)", c.name, g, k, val(r.Used)/MiB, want/MiB)
			}
		}
		if len(per) != c.gpus {
			t.Errorf("%s: %d GPUs; want %d", c.name, len(per), c.gpus)
		}
		for _, w := range meta.Warnings.Strings() {
			if strings.Contains(w, "do not all have the same number of rows") {
				t.Errorf("%s: %.200q; ticks are even", c.name, w)
			}
		}
	}
}

// Where the ticks of a log without index or uuid do not all hold the
// same number of rows (a GPU's row missing from one), the places cannot
// be trusted there: a warning says so, naming the line.
func TestHunt44fNoIndexUnevenTicksWarn(t *testing.T) {
	start := time.Date(2024, 5, 1, 10, 0, 0, 100e6, time.UTC)
	log := noIndexLog(2, 10, start, func(int) time.Duration { return time.Second }, 4*time.Millisecond, func(g, k int) int { return 3000 + 2000*g })
	lines := strings.SplitAfter(log, "\n")
	// Line 1 is the header; tick 4's rows are lines 10 and 11: drop GPU 1's.
	log = strings.Join(append(lines[:10:10], lines[11:]...), "")
	_, meta, err := readRows(t, "uneven.csv", log)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range meta.Warnings.Strings() {
		found = found || strings.Contains(w, "do not all have the same number of rows (2 rows in the first tick, 1 in")
	}
	if !found {
		t.Errorf("no warning that the ticks are uneven: %d warnings", meta.Warnings.Len())
	}
}

// A header-less --query-gpu log that nothing names the columns of is read
// in DefaultQueryGPUFields' order, and says so: memory.free logged before
// memory.used (gen/nohdr7_swapped.csv of the session-44 tester) was read
// as used memory falling, a leak as a release, with no warning. Where a
// row shows the order wrong (a "total" below another size), the log is
// refused at that line rather than read wrong.
func TestHunt44fHeaderlessOrderAssumed(t *testing.T) {
	// Synthetic: total, free, used of a GPU whose used grows 30 MiB a second.
	var b strings.Builder
	for k := range 5 {
		fmt.Fprintf(&b, "2024/05/01 10:00:%02d.000, 0, GPU-4b1f5b6e-8c1d-2f3a-9e7d-0a1b2c3d4e5f, NVIDIA A100-SXM4-40GB, 40960 MiB, %d MiB, %d MiB\n", k, 37960-30*k, 3000+30*k)
	}
	_, meta, err := readRows(t, "nohdr.csv", b.String())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range meta.Warnings.Strings() {
		found = found || strings.Contains(w, "line 1: the log has no header") && strings.Contains(w, "timestamp,index,uuid,name,memory.total,memory.used,memory.free")
	}
	if !found {
		t.Errorf("no warning naming the assumed field order: %.200q", meta.Warnings.Strings())
	}
	// With --fields, or a header, nothing is assumed.
	_, meta, err = readRows(t, "nohdr.csv", b.String(), WithFields([]string{"timestamp", "index", "uuid", "name", "memory.total", "memory.free", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range meta.Warnings.Strings() {
		if strings.Contains(w, "no header") {
			t.Errorf("--fields given, yet %.200q", w)
		}
	}
	// used, total, free: the column read as total is below the one read
	// as used on line 1 (3000 < 40960): refused there, naming --fields.
	_, _, err = readRows(t, "nohdr.csv", "2024/05/01 10:00:00.000, 0, GPU-1, A100, 3000 MiB, 40960 MiB, 37960 MiB\n")
	if err == nil || !strings.Contains(err.Error(), "nohdr.csv:1:") || !strings.Contains(err.Error(), "--fields") {
		t.Errorf("swapped total read: err %.200v; want an error at line 1 naming --fields", err)
	}
}

// An nvidia-smi -q excerpt quoted from inside the report, without the
// report's header and its "GPU 00000000:..." line (shkhln/libc6-shim#14),
// is refused with what it lacks; before, the error said a header-less
// CSV needs --fields, which points the wrong way. A header-less CSV still
// gets the --fields hint, and other text neither.
func TestHunt44fQExcerptWithoutGPULine(t *testing.T) {
	b, err := os.ReadFile("../../testdata/nvml/pub_libc6shim14_q_excerpt_no_gpu_line.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readRows(t, "q.txt", string(b))
	if err == nil || !strings.Contains(err.Error(), `without the report's header ("Attached GPUs") and the "GPU 00000000:..." line`) || strings.Contains(err.Error(), "--fields") {
		t.Errorf("-q excerpt: %.300v; want the GPU line named as missing, no --fields", err)
	}
	_, _, err = readRows(t, "x.csv", "0, 100, 2026/11/30 10:00:00.000\n")
	if err == nil || !strings.Contains(err.Error(), "needs --fields") {
		t.Errorf("header-less CSV: %.300v; want the --fields hint", err)
	}
	_, _, err = readRows(t, "notes.md", "# Notes\n\nNothing here is a log.\n")
	if err == nil || strings.Contains(err.Error(), "--fields") || strings.Contains(err.Error(), "GPU 00000000") {
		t.Errorf("prose: %.300v; want no hint", err)
	}
}

// A shell loop that runs nvidia-smi and sleeps gives the period of the
// rows it printed: "while true; do nvidia-smi --query-gpu=... ; sleep 60;
// done" (the tester's nvml/loop_noheader.txt) was placed 1 s apart
// ("60 samples over 59 s", "no command in the input gives the period").
func TestHunt44fLoopSleepPeriod(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want time.Duration
	}{
		{"$ while true; do nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader; sleep 60; done", time.Minute},
		{"user@h:~$ while sleep 0.5; do nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader; done", 500 * time.Millisecond},
		{"$ while :; do nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader; sleep 2m; done", 2 * time.Minute},
	} {
		log := c.cmd + "\n1000 MiB, 24576 MiB\n1100 MiB, 24576 MiB\n1200 MiB, 24576 MiB\n"
		rows, meta, err := readRows(t, "loop.txt", log)
		if err != nil {
			t.Fatalf("%.80s: %.200v", c.cmd, err)
		}
		if len(rows) != 3 || rows[2].TimeUs-rows[0].TimeUs != 2*c.want.Microseconds() || meta.Interval != c.want {
			t.Errorf("%.80s: %d rows, span %d µs, interval %v; want 3 rows %v apart", c.cmd, len(rows), rows[len(rows)-1].TimeUs-rows[0].TimeUs, meta.Interval, c.want)
		}
	}
	// A loop without nvidia-smi in it gives no period.
	if d, _ := commandInterval([]byte("$ while true; do date; sleep 60; done\n")); d != 0 {
		t.Errorf("a loop without nvidia-smi gave %v", d)
	}
}

// A paste that opens with a fence is Markdown: the prose after the code
// block is no damaged row ("READ IN PART"), and is said not to be read.
func TestHunt44fProseAfterFence(t *testing.T) {
	md := "```\ntimestamp, index, memory.used [MiB], memory.total [MiB]\n2024/01/01 10:00:00.000, 0, 1000 MiB, 16384 MiB\n" +
		"2024/01/01 10:00:01.000, 0, 1100 MiB, 16384 MiB\n```\n\nAnd then it crashed. Any idea?\n"
	rows, meta, err := readRows(t, "issue.md", md)
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, w := range meta.Warnings.Strings() {
		said = said || strings.Contains(w, "line 7: text outside the Markdown code blocks")
	}
	if len(rows) != 2 || meta.SkippedLines != 0 || !said {
		t.Errorf("%d rows, %d lines skipped as damaged, prose said %v; want 2, 0, true", len(rows), meta.SkippedLines, said)
	}
}
