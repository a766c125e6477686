package nvml

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// A gpustat paste whose last GPU row stops after its name (gpustat#95:
// "[4] GeForce GTX 1080 Ti |", nothing after) holds GPUs 0-3 whole and GPU
// 4 without memory. Before, GPU 4 vanished without a word; now the row is
// named and the paste read in part, as a cut nvidia-smi table is.
func TestGpustatRowCut(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_gpustat95_cut_row.txt")
	// GPUs 0-3: 4 rows; their processes show "jfx(?M)" (no pid, memory
	// unknown), which gpustat's process pattern does not take.
	if len(rows) != 4 {
		t.Errorf("%d rows, want 4", len(rows))
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	// Line 6 is the cut row (line 1 is the host and time).
	if !strings.Contains(ws, "line 6: gpustat's row for GPU 4 stops before its memory") || !strings.Contains(meta.Cut, "GPU 4") {
		t.Errorf("warnings %q, cut %q: want GPU 4's row at line 6 named as cut", ws, meta.Cut)
	}
	// A whole row is no cut: gpustat#97's one line reads whole.
	_, meta = readFile(t, tdata+"leak_exit_nvidia_smi_default.txt")
	if meta.Cut != "" {
		t.Errorf("gpustat#97: cut %q, want none", meta.Cut)
	}
}

// An nvidia-smi -q report says how many GPUs are attached ("Attached GPUs
// : 4", line 8 of NordicHPC/sonar's test output) and then has one section
// per GPU shown. An excerpt with fewer sections (here 1 of 4) lacks the
// others' memory: cut, or run with -i, which the text cannot tell apart.
// Before, GPU 0 alone was read with no word about the other 3.
func TestQReportFewerGPUsThanAttached(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_sonar_q_one_of_four.txt")
	// GPU 0 and its two processes (pids 2620449, 3066537).
	if len(rows) != 3 {
		t.Errorf("%d rows, want 3", len(rows))
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "line 8: the nvidia-smi -q report says 4 GPUs are attached but holds 1 GPU's section") || !strings.Contains(ws, "the other 3 GPUs are not in it") {
		t.Errorf("warnings %q: want the 3 missing GPUs named", ws)
	}
	// A report with every attached GPU's section says nothing of it.
	whole := strings.Replace(readString(t, tdata+"pub_sonar_q_one_of_four.txt"), "Attached GPUs                             : 4", "Attached GPUs                             : 1", 1)
	_, meta, err := readRows(t, "whole", whole)
	if err != nil {
		t.Fatal(err)
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); strings.Contains(ws, "attached") {
		t.Errorf("whole report: warnings %q", ws)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A pmon or dmon header followed, before any row, by another of other
// columns: the second names the rows. NordicHPC/sonar's pmon -c 1 -s mu
// text (driver 545) prints pmon's header without fb, then with it, then
// 10 process rows; read by the first header, it was "no fb column". The
// rows are those of sonar-pmon-545 (the same text from its second header
// on), which read right: 10 processes, pid 2233095 on GPU 1 at 24395 MiB.
func TestMonHeaderReplacedBeforeRows(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_sonar_pmon_two_headers.txt")
	if len(rows) != 10 {
		t.Fatalf("%d rows, want 10", len(rows))
	}
	found := false
	for _, r := range rows {
		if r.PID != nil && *r.PID == 2233095 {
			found = r.Used != nil && *r.Used == 24395*MiB && r.GPU != nil && *r.GPU == 1
		}
	}
	if !found {
		t.Errorf("pid 2233095 not read at 24395 MiB on GPU 1: %+v", rows)
	}
	if !slices.Contains(meta.Fields, "fb") {
		t.Errorf("fields %v: want the second header's", meta.Fields)
	}
	// dmon alike (synthetic): -s pu's header, then -s m's, then its rows.
	const dmon = "# gpu   pwr  gtemp  mtemp    sm   mem   enc   dec\n" +
		"# Idx     W      C      C     %     %     %     %\n" +
		"# gpu    fb  bar1\n" +
		"# Idx    MB    MB\n" +
		"    0  4907     5\n" +
		"    0  4910     5\n"
	rows, _, err := readRows(t, "dmon", dmon)
	if err != nil || len(rows) != 2 || *rows[1].Used != 4910*MiB {
		t.Errorf("dmon: %d rows, %v", len(rows), err)
	}
	// A header without fb whose rows follow is still refused, at its line.
	_, _, err = readRows(t, "dmon", dmon[:100]+"    0    60     5     -    10     2     0     0\n")
	if err == nil || !strings.Contains(err.Error(), "dmon:1: the dmon log has no fb column") {
		t.Errorf("dmon without fb: %v", err)
	}
	// And so is one alone.
	_, _, err = readRows(t, "dmon", dmon[:100])
	if err == nil || !strings.Contains(err.Error(), "dmon:1: the dmon log has no fb column") {
		t.Errorf("dmon header alone without fb: %v", err)
	}
}

// An nvidia-smi -q -x excerpt that starts inside a <gpu> child gpuleak
// does not name (influxdata/telegraf#5546: inside <clocks_event_reasons>,
// then <sparse_operation_mode>, <fb_memory_usage> with 205 MiB used of
// 5120, 73 reserved, <bar1_memory_usage>; cut there). Its siblings say
// where it sits: <fb_memory_usage> is a <gpu>'s child, so the excerpt is
// inside a <gpu>, and its memory is that GPU's (index not known). Was: "no
// GPU memory in this nvidia-smi XML".
func TestXMLExcerptInsideUnnamedElement(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_telegraf5546_xml_excerpt.xml")
	if len(rows) != 1 || rows[0].Used == nil || *rows[0].Used != 205*MiB || rows[0].Reserved == nil || *rows[0].Reserved != 73*MiB || rows[0].GPU != nil {
		t.Fatalf("rows %+v; want one GPU at 205 MiB used, 73 reserved, index unknown", rows)
	}
	if !strings.Contains(meta.Cut, "starts inside <clocks_event_reasons>") {
		t.Errorf("cut %q", meta.Cut)
	}
	// The same with no end tag first: an excerpt that starts at a <gpu>
	// child gpuleak does not name (h200_q_x_process.xml's <pci>, lines
	// 74-555: GPU 0's children from <pci> to its </processes>, 6671 MiB
	// used, pid 614 at 6662 MiB).
	b, err := os.ReadFile(fixtures + "h200_q_x_process.xml")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.SplitAfter(string(b), "\n")
	rows, _, err = readRows(t, "pci.xml", strings.Join(all[73:555], ""))
	if err != nil || len(rows) != 2 || *rows[0].Used != 6671*MiB || *rows[1].PID != 614 {
		t.Errorf("from <pci>: %v, rows %+v", err, rows)
	}
}

// A Markdown doc quotes an nvidia-smi --query-gpu command with
// --format=csv,noheader, closes the code block, writes a label
// ("**输出**:", "Output:") and opens another with the rows (notes after
// "←" on each). The command names the columns; the label is no row. Was
// "not an NVML sample log" (the label ended the command's reach).
func TestCommandLabelThenRows(t *testing.T) {
	rows, meta := readFile(t, tdata+"field/wings_noheader_command_label_rows.txt")
	// GPU 0 (A100, 4 of 40960 MiB) and GPU 1 (L20, 41993 of 46068).
	if len(rows) != 2 || *rows[1].GPU != 1 || *rows[1].Used != 41993*MiB || *rows[1].Total != 46068*MiB {
		t.Fatalf("rows %+v", rows)
	}
	if meta.SkippedLines != 0 || meta.Cut != "" {
		t.Errorf("%d lines skipped (%v), cut %q: the label is no row", meta.SkippedLines, meta.SkippedAt, meta.Cut)
	}
	for _, l := range []string{"Output:", "**输出**:", "### Result：", "**Output:**", "> Output:"} {
		if !isOutputLabel([]byte(l)) {
			t.Errorf("%q: not a label", l)
		}
	}
	// A row, a -q key with its value, a table's title, a prompt are not.
	for _, l := range []string{"0, 4 MiB", "Used : 5 MiB", "| Processes: |", "$ nvidia-smi:", "12:", "Traceback (most recent call last):", "GPU 0: NVIDIA A10G (UUID: GPU-4aa)"} {
		if isOutputLabel([]byte(l)) {
			t.Errorf("%q: a label", l)
		}
	}
}

// date -Iseconds' line ("2026-09-17T00:00:00+08:00") is a date line, as
// date's default output is: a loop of date and a header-less query prints
// one before its rows.
func TestISODateLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64 // µs; 0: not a date line
	}{
		// 00:00 at +08:00 is 16:00 UTC the day before.
		{"2026-09-17T00:00:00+08:00", time.Date(2026, 9, 16, 16, 0, 0, 0, time.UTC).UnixMicro()},
		{"2026-09-17 00:00:00.500000000Z", time.Date(2026, 9, 17, 0, 0, 0, 5e8, time.UTC).UnixMicro()},
		{"2024-01-01T00:00:00.0000000Z", 0}, // a GitHub Actions stamp alone
		{"2026-09-17T00:00:00+0800", time.Date(2026, 9, 16, 16, 0, 0, 0, time.UTC).UnixMicro()},
		{"2026-09-17T00:00:00", 0}, // no zone: not date's -I output
		{"2026/09/17 00:00:00.000, 0, 5", 0},
	} {
		got, ok := isoDate([]byte(c.in))
		if ok != (c.want != 0) || got != c.want {
			t.Errorf("%q: %d %v, want %d", c.in, got, ok, c.want)
		}
	}
}

// QTextExcerpt names an -q excerpt without its GPU line, and only that.
func TestQTextExcerptKinds(t *testing.T) {
	const fb = "    FB Memory Usage\n        Total                             : 24268 MiB\n        Used                              : 19147 MiB\n        Free                              : 5121 MiB\n"
	// The title is there: which memory is known, which GPU is not.
	n, msg, ok := QTextExcerpt([]byte(fb))
	if !ok || n != 3 || !strings.Contains(msg, `"Used : 19147 MiB"`) || strings.Contains(msg, "FB Memory Usage") {
		t.Errorf("fb section: %d %q %v", n, msg, ok)
	}
	// With its GPU line it is a report the reader reads: not an excerpt.
	if _, _, ok := QTextExcerpt([]byte("GPU 00000000:61:00.0\n" + fb)); ok {
		t.Error("a report with its GPU line called an excerpt")
	}
	// Two aligned lines are not enough to call text a report.
	if _, _, ok := QTextExcerpt([]byte("    Epoch        : 3\n    Loss         : 0.5\n")); ok {
		t.Error("two key-value lines called an -q excerpt")
	}
	// Nor are three of a training script's config, with neither used
	// memory nor a process.
	if _, _, ok := QTextExcerpt([]byte("    Batch size          : 32\n    Learning rate       : 0.001\n    Epochs              : 10\n")); ok {
		t.Error("a training config's key-value lines called an -q excerpt")
	}
}

// A log of one sampling instant without times (code search id
// 60642794504's --query-gpu output: GPUs 0 and 1, no timestamp column)
// computes no rate: the warning says the rows are placed by order, and
// not that "every rate (bytes/s) and time to OOM rests on" a period it
// assumed. Two instants keep that warning.
func TestRowOrderOneInstant(t *testing.T) {
	const one = "index, memory.used [MiB], memory.total [MiB]\n0, 103 MiB, 16303 MiB\n1, 8311 MiB, 16303 MiB\n"
	_, meta, err := readRows(t, "one.csv", one)
	if err != nil {
		t.Fatal(err)
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if meta.Instants != 1 || strings.Contains(ws, "every rate") || !strings.Contains(ws, "one sampling instant: no rate") {
		t.Errorf("%d instants, warnings %q", meta.Instants, ws)
	}
	_, meta, err = readRows(t, "two.csv", one+"0, 104 MiB, 16303 MiB\n1, 8312 MiB, 16303 MiB\n")
	if err != nil {
		t.Fatal(err)
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); meta.Instants != 2 || !strings.Contains(ws, "every rate (bytes/s) and time to OOM rests on it") {
		t.Errorf("%d instants, warnings %q", meta.Instants, ws)
	}
}

// XuehaiPan/nvitop#8's Processes box: GPU 0 without MIG (GI N/A), GPU 1's
// processes in GPU instances 3 and 5, GPU 2's in 3, GPU 3's in 4. The
// warning says which instances the box named (was: nothing; every
// process of GPU 1 read as "GPU 1"), and Metadata.MIGProcesses places
// each process (session 48). 7 processes, all read.
func TestProcessesBoxMIGInstances(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_nvitop8_procs_mig_instances.txt")
	if len(rows) != 7 {
		t.Errorf("%d rows, want 7", len(rows))
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "line 8: nvidia-smi's Processes list processes of MIG GPU instances (GPU 1 GI 3, GPU 1 GI 5, GPU 2 GI 3, GPU 3 GI 4)") {
		t.Errorf("warnings %q", ws)
	}
	if got := fmt.Sprint(meta.MIGProcesses); got != "[{1 34965 3 0} {1 42152 3 0} {1 46505 5 0} {2 26294 3 0} {3 46064 4 0}]" {
		t.Errorf("MIG processes %s", got)
	}
	// A box without MIG (GI and CI N/A) says nothing of instances.
	_, meta = readFile(t, tdata+"leak_exit_nvidia_smi_default.txt")
	if strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "MIG GPU instances") {
		t.Error("MIG warning without MIG")
	}
}
