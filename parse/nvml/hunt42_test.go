package nvml

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Session 42 (testdata/README.md, "NVML pastes hunted in session 42"):
// nvidia-smi prints its Processes box after the GPU rows of every table,
// so a pasted table whose box is missing, or stops before its bottom
// border, was cut: the GPU rows are read, the output is read in part
// (Metadata.Cut, a warning at the table's last line) and its time is one
// whose process list is partial (ProcessesPartialUs), never one that lists
// every process (ProcessesListedUs). Each case failed before: no warning,
// Cut did not exist.
func TestHunt42TableCutBeforeProcessesEnd(t *testing.T) {
	for _, tc := range []struct {
		file string
		at   time.Time
		// cut: the start of the warning, with the line it names.
		cut  string
		gpus []gpuWant
		// procs: process rows read (pid -> MiB).
		procs map[int64]int64
	}{
		// numba#5392: driver 418.74, the box (title at line 14) cut in
		// pid 8433's row at line 19; the two whole rows above it read.
		{"numba5392_table_418_procs_row_cut.txt", time.Date(2020, 3, 16, 22, 20, 25, 0, time.UTC),
			"line 19: the nvidia-smi table's Processes box (from line 14) stops at line 19 without its bottom border",
			[]gpuWant{{0, "GeForce GTX 105...", 782, 4039}}, map[int64]int64{785: 162, 8427: 1}},
		// nvMolKit#28: driver 581.42 under WSL, the box cut in its column
		// header (line 17) after its title at line 16.
		{"nvmolkit28_wsl_table_581_procs_header_cut.txt", time.Date(2025, 10, 21, 3, 25, 6, 0, time.UTC),
			"line 17: the nvidia-smi table's Processes box (from line 16) stops at line 17 without its bottom border",
			[]gpuWant{{0, "NVIDIA RTX A4500 Laptop GPU", 0, 16384}}, nil},
		// nvidia-docker#759 (session 41's file): the box's title is the
		// last line (17), itself cut.
		{"nvdocker759_table_390_two_m40_cut.txt", time.Date(2018, 6, 8, 7, 42, 8, 0, time.UTC),
			"line 17: the nvidia-smi table stops at line 17, at its Processes box's title",
			[]gpuWant{{0, "Tesla M40 24GB", 814, 22945}, {1, "Tesla M40 24GB", 558, 22945}}, nil},
		// microsoft/WSL#9134 (session 41's file): no box at all, the paste
		// stops in GPU 1's second row (line 14).
		{"wsl9134_win_wddm_517_two_gpus_indented_cut.txt", time.Date(2022, 11, 9, 21, 31, 58, 0, time.UTC),
			"line 14: the nvidia-smi table ends at line 14 before its Processes box",
			[]gpuWant{{0, "NVIDIA GeForce ...", 576, 11264}, {1, "NVIDIA GeForce ...", 2152, 11264}}, nil},
	} {
		rows, meta := readFile(t, fixtures+"field/"+tc.file)
		var gpus []row
		procs := map[int64]int64{}
		for _, r := range rows {
			if r.PID == nil {
				gpus = append(gpus, r)
				continue
			}
			procs[*r.PID] = *r.Used / MiB
		}
		checkGPUs(t, tc.file, gpus, tc.at.UnixMicro(), tc.gpus)
		if len(procs) != len(tc.procs) {
			t.Errorf("%s: processes %v, want %v", tc.file, procs, tc.procs)
		}
		for pid, mib := range tc.procs {
			if procs[pid] != mib {
				t.Errorf("%s: pid %d at %d MiB, want %d", tc.file, pid, procs[pid], mib)
			}
		}
		w := strings.Join(meta.Warnings.Strings(), "\n")
		if !strings.Contains(w, tc.cut) {
			t.Errorf("%s: warnings %q, want %q", tc.file, w, tc.cut)
		}
		// The Cut note is the warning's words without the line prefix.
		if _, words, _ := strings.Cut(tc.cut, ": "); !strings.HasPrefix(meta.Cut, words) {
			t.Errorf("%s: Cut %q, want it to start %q", tc.file, meta.Cut, words)
		}
		if len(meta.ProcessesListedUs) != 0 || len(meta.ProcessesPartialUs) != 1 || meta.ProcessesPartialUs[0] != tc.at.UnixMicro() {
			t.Errorf("%s: listed at %v, partial at %v; want partial at %d only", tc.file, meta.ProcessesListedUs, meta.ProcessesPartialUs, tc.at.UnixMicro())
		}
	}
}

// gpustat#130: gpustat's text (four P100s at 103 of 16384 MiB, 15:23:57),
// then nvidia-smi's table at 15:24:23 cut at the GPU box's border (line
// 19): the table is cut before its Processes box, gpustat's output is
// whole (it has no Processes box to miss).
func TestHunt42GpustatThenCutTable(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/gpustat130_gpustat_then_table_cut_gpu_box.txt")
	var smi, gs []row
	for _, r := range rows {
		if r.Source == string(FormatNvidiaSmiText) {
			smi = append(smi, r)
		} else {
			gs = append(gs, r)
		}
	}
	checkGPUs(t, "gpustat130 table", smi, time.Date(2022, 8, 22, 15, 24, 23, 0, time.UTC).UnixMicro(),
		[]gpuWant{{0, "Tesla P100-PCIE...", 0, 16384}})
	checkGPUs(t, "gpustat130 gpustat", gs, time.Date(2022, 8, 22, 15, 23, 57, 0, time.UTC).UnixMicro(), []gpuWant{
		{0, "Tesla P100-PCIE-16GB", 103, 16384}, {1, "Tesla P100-PCIE-16GB", 103, 16384},
		{2, "Tesla P100-PCIE-16GB", 103, 16384}, {3, "Tesla P100-PCIE-16GB", 103, 16384}})
	if !strings.HasPrefix(meta.Cut, "the nvidia-smi table ends at line 19 before its Processes box") || strings.Contains(meta.Cut, "more outputs") {
		t.Errorf("Cut %q", meta.Cut)
	}
}

// A whole table (its Processes box closed by its bottom border) is not
// cut; two cut tables are counted in one note, the first named (the
// second is cut another way, before its Processes box: "cut", not "cut
// the same way"); a Processes box pasted alone and whole lists every process.
func TestHunt42WholeAndRepeatedTables(t *testing.T) {
	const head = "+------+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n+------+\n" +
		"|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |\n" +
		"| N/A   42C    P0            127W /  700W |  134473MiB / 143771MiB |      5%      Default |\n" +
		"+-----------------------------------------+------------------------+----------------------+\n"
	const box = "| Processes:                                                                              |\n" +
		"|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n" +
		"|=========================================================================================|\n" +
		"|    0   N/A  N/A       571      C   python3                                    134464MiB |\n"
	const bottom = "+-----------------------------------------------------------------------------------------+\n"
	_, meta, err := readRows(t, "whole.txt", head+box+bottom)
	if err != nil || meta.Cut != "" || meta.Warnings.Len() != 0 || len(meta.ProcessesListedUs) != 1 || len(meta.ProcessesPartialUs) != 0 {
		t.Errorf("whole: %v, cut %q, warnings %q, listed %v, partial %v", err, meta.Cut, meta.Warnings.Strings(), meta.ProcessesListedUs, meta.ProcessesPartialUs)
	}
	// As nvidia-smi -l prints them, each table after its ctime line: the
	// first cut in its box (lines 8-11), the second before it (line 18),
	// the third whole.
	_, meta, err = readRows(t, "two.txt", "Tue Dec  1 02:00:58 2026\n"+head+box+"Tue Dec  1 02:00:59 2026\n"+head+"Tue Dec  1 02:01:00 2026\n"+head+box+bottom)
	if err != nil || meta.Cut != "the nvidia-smi table's Processes box (from line 8) stops at line 11 without its bottom border: the excerpt is cut there, so processes the box listed after it may be missing (and 1 more output cut)" ||
		len(meta.ProcessesListedUs) != 1 || len(meta.ProcessesPartialUs) != 2 {
		t.Errorf("two cut, one whole: %v, cut %q, listed %v, partial %v", err, meta.Cut, meta.ProcessesListedUs, meta.ProcessesPartialUs)
	}
	_, meta, err = readRows(t, "box.txt", box+bottom)
	if err != nil || meta.Cut != "" || len(meta.ProcessesListedUs) != 1 {
		t.Errorf("box alone: %v, cut %q, listed %v", err, meta.Cut, meta.ProcessesListedUs)
	}
}

// nvidia-smi -q -x on an H200 (driver 580.159.04, nvsmi_device_v13.dtd),
// recorded in session 42 while a Python process held a 6 GiB tensor:
// fb_memory_usage 143771 MiB total, 616 reserved, 6671 used, 136486 free
// (143771 - 6671 - 136486 = 614 MiB besides used and free: the
// reservation, so used excludes it), pid 614 python3 at 6662 MiB, at
// 05:48:55 UTC. The same moment's -q text (h200_q_process.txt) gives the
// same rows: the two readers agree. Both documents list every process
// (a whole <processes> element). Was: refused ("is not read").
func TestHunt42XMLH200(t *testing.T) {
	at := time.Date(2026, 12, 4, 5, 48, 55, 0, time.UTC).UnixMicro()
	x, xmeta := readFile(t, fixtures+"h200_q_x_process.xml")
	q, _ := readFile(t, fixtures+"h200_q_process.txt")
	if xmeta.Format != FormatNvidiaSmiXML || len(x) != 2 || len(q) != 2 {
		t.Fatalf("format %q, %d XML rows, %d -q rows", xmeta.Format, len(x), len(q))
	}
	g, p := x[0], x[1]
	if g.TimeUs != at || *g.GPU != 0 || g.GPUName != "NVIDIA H200" || g.UUID != "GPU-7b130ffe-6804-aa30-f01f-380426f2db00" ||
		*g.Used != 6671*MiB || *g.Total != 143771*MiB || *g.Free != 136486*MiB || *g.Reserved != 616*MiB || g.Convention != "excludes-reserved" {
		t.Errorf("GPU row %+v", g)
	}
	if p.TimeUs != at || *p.GPU != 0 || *p.PID != 614 || p.Process != "python3" || *p.Used != 6662*MiB || p.UUID != g.UUID {
		t.Errorf("process row %+v", p)
	}
	for i := range q {
		a, b := x[i], q[i]
		if a.TimeUs != b.TimeUs || *a.GPU != *b.GPU || *a.Used != *b.Used || a.UUID != b.UUID || a.GPUName != b.GPUName || a.Process != b.Process {
			t.Errorf("row %d: XML %+v, -q %+v", i, a, b)
		}
	}
	if len(xmeta.ProcessesListedUs) != 1 || xmeta.ProcessesListedUs[0] != at || xmeta.Cut != "" || xmeta.Warnings.Len() != 0 {
		t.Errorf("listed %v, cut %q, warnings %q", xmeta.ProcessesListedUs, xmeta.Cut, xmeta.Warnings.Strings())
	}
	// Idle (six seconds before): 0 of 143771 MiB, no process, listed.
	idle, meta := readFile(t, fixtures+"h200_q_x_idle.xml")
	if len(idle) != 1 || *idle[0].Used != 0 || *idle[0].Total != 143771*MiB || len(meta.ProcessesListedUs) != 1 {
		t.Errorf("idle: %+v, listed %v", idle, meta.ProcessesListedUs)
	}
	// nvidia-smi -q -x -l 1 repeats the document: one instant each.
	a, _ := os.ReadFile(fixtures + "h200_q_x_idle.xml")
	b, _ := os.ReadFile(fixtures + "h200_q_x_process.xml")
	rows, meta, err := readRows(t, "l1.xml", string(a)+string(b))
	if err != nil || len(rows) != 3 || meta.Instants != 2 || len(meta.ProcessesListedUs) != 2 {
		t.Errorf("two documents: %v, %d rows, %d instants, listed %v", err, len(rows), meta.Instants, meta.ProcessesListedUs)
	}
}

// -q -x cut: a document that stops after GPU 0's memory but in its
// processes keeps GPU 0, is read in part, and does not list every
// process; one that stops before any GPU's memory is an error naming the
// cut line (the field pastes: CPU-X#115 at line 22, telegraf#5812 inside
// an A100's MIG devices at line 28, 1Panel#9504 in a Markdown fence with
// driver 390's v9 DTD at line 28). Malformed XML is an error naming its
// line, never a panic.
func TestHunt42XMLCut(t *testing.T) {
	b, err := os.ReadFile(fixtures + "h200_q_x_process.xml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	cut := s[:strings.Index(s, "<process_name>python3")]
	rows, meta, err := readRows(t, "cut.xml", cut)
	if err != nil || len(rows) != 1 || *rows[0].Used != 6671*MiB || len(meta.ProcessesListedUs) != 0 || len(meta.ProcessesPartialUs) != 1 ||
		!strings.HasPrefix(meta.Cut, "the nvidia-smi XML document from line 1 stops at line 547 before its end") {
		t.Errorf("cut in processes: %v, %+v, listed %v, cut %q", err, rows, meta.ProcessesListedUs, meta.Cut)
	}
	for _, c := range []struct{ file, want string }{
		{"cpux115_q_x_cut.txt", ":22: no GPU memory in this nvidia-smi XML (nvidia-smi -q -x): the nvidia-smi XML document from line 1 stops at line 22 inside GPU 0's section"},
		{"telegraf5812_q_x_a100_mig_cut.txt", ":28: no GPU memory in this nvidia-smi XML (nvidia-smi -q -x): the nvidia-smi XML document from line 2 stops at line 28 inside GPU 0's section"},
		{"onepanel9504_q_x_390_fenced_cut.txt", ":28: no GPU memory in this nvidia-smi XML (nvidia-smi -q -x): the nvidia-smi XML document from line 3 stops at line 28 inside GPU 0's section"},
	} {
		in, err := os.ReadFile(fixtures + "field/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if f := Sniff(in); f != FormatNvidiaSmiXML {
			t.Errorf("%s: sniffed %q", c.file, f)
		}
		if _, _, err := readRows(t, c.file, string(in)); err == nil || !strings.Contains(err.Error(), c.file+c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<gpu id=\"0\">\n<fb_memory_usage>\n<total>1 MiB</total>\n</gpu>\n</nvidia_smi_log>\n", "bad.xml:6: nvidia-smi XML:"},
		{"<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<timestamp>x</timestamp>\n<gpu id=\"0\"><fb_memory_usage><used>&bogus;</used></fb_memory_usage></gpu>\n</nvidia_smi_log>\n", "bad.xml:4: nvidia-smi XML:"},
		{"<nvidia_smi_log>\n<gpu>\n<fb_memory_usage><used>N/A</used><total>N/A</total></fb_memory_usage>\n</gpu>\n</nvidia_smi_log>\n", "no sample holds a used-memory value"},
		{"<nvidia_smi_log>\n" + strings.Repeat("<a>", 100) + "\n</nvidia_smi_log>\n", "bad.xml:2: nvidia-smi XML: elements nested deeper than 64"},
	} {
		if _, _, err := readRows(t, "bad.xml", c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// Fleet logs (testdata/README.md, session 42; written from the tools'
// source, no field paste found). parallel-ssh -i prints a host's standard
// error after "Stderr: " to the next header, over as many lines as it
// has: node02's two lines (the first with commas, read before as a
// damaged row, the input marked read in part; the second named as
// something node02 "printed instead of samples"), and a CSV-looking line
// after them, are skipped, not samples: node02 keeps its 3 samples at
// 5000 MiB, node01 its 3 (1000, 2000, 3000 MiB). ansible -o puts each
// host's output on one line with its newlines escaped: node01's GPUs 0
// and 1 at 1000 and 70000 of 81920 MiB, node02's at 5000 and 0 (its
// \r\n escapes too, its "(stderr)" skipped), node03 unreachable and
// node04's driver failure named; was "unrecognised input format".
func TestHunt42FleetStderrAndAnsibleOneLine(t *testing.T) {
	rows, meta := readFile(t, fixtures+"fleet_pssh_i_stderr_lines.txt")
	used := map[string][]int64{}
	for _, r := range rows {
		used[r.Host] = append(used[r.Host], *r.Used/MiB)
	}
	if fmt.Sprint(used["node02"]) != "[5000 5000 5000]" || fmt.Sprint(used["node01"]) != "[1000 2000 3000]" || len(used) != 2 {
		t.Errorf("pssh: %v", used)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if meta.SkippedLines != 0 || !strings.Contains(w, "line 6: host node02's standard error (after parallel-ssh's Stderr:) is not its samples") ||
		!strings.Contains(w, "line 15: host node03's standard error") || strings.Contains(w, "instead of samples") {
		t.Errorf("pssh: %d lines skipped as damaged, warnings %q", meta.SkippedLines, w)
	}
	rows, meta = readFile(t, fixtures+"fleet_ansible_o_query_gpu.txt")
	type key struct {
		host string
		gpu  int32
	}
	got := map[key]int64{}
	for _, r := range rows {
		if *r.Total != 81920*MiB || r.TimeUs == 0 {
			t.Errorf("ansible row %+v", r)
		}
		got[key{r.Host, *r.GPU}] = *r.Used / MiB
	}
	want := map[key]int64{{"node01", 0}: 1000, {"node01", 1}: 70000, {"node02", 0}: 5000, {"node02", 1}: 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ansible -o: %v, want %v", got, want)
	}
	w = strings.Join(meta.Warnings.Strings(), "\n")
	for _, s := range []string{"line 3: host node02's standard error (after ansible -o's (stderr))", "line 4: host node03 failed (ansible says \"unreachable:",
		"line 5: host node04 failed (ansible says \"failed, rc=9\"): no sample of node04 was read", "line 5: host node04 printed \"NVIDIA-SMI has failed"} {
		if !strings.Contains(w, s) {
			t.Errorf("ansible -o warnings %q lack %q", w, s)
		}
	}
	// A host whose output has no memory column (found by the fuzzer in
	// session 42: it dropped the whole log's decoder, leaving rows in no
	// instant) is skipped alone, the other hosts read.
	rows, meta, err := readRows(t, "pdsh.txt", "$ pdsh -w n[0-1] nvidia-smi\nn0: timestamp, index, memory.used [MiB]\nn0: 2024/05/01 10:00:00.101, 0, 1000 MiB\nn1: index\nn1: 0\nn0: 2024/05/01 10:00:01.101, 0, 1100 MiB\n")
	if err != nil || len(rows) != 2 || meta.Instants != 2 || !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "line 4: host n1: the log has no memory.used column") {
		t.Errorf("a host without memory: %v, %d rows, %d instants, %q", err, len(rows), meta.Instants, meta.Warnings.Strings())
	}
	// A row that cannot be read is skipped within the line, the rest read.
	rows, meta, err = readRows(t, "o.txt", `node01 | CHANGED | rc=0 | (stdout) timestamp, index, memory.used [MiB]\n2024/05/01 10:00:00.101, 0\n2024/05/01 10:00:01.101, 0, 7 MiB`+"\n")
	if err != nil || len(rows) != 1 || *rows[0].Used != 7*MiB || meta.SkippedLines != 1 {
		t.Errorf("a damaged row in the line: %v, %+v, %d skipped", err, rows, meta.SkippedLines)
	}
}

// A document cut short and followed by another (a paste of two -q -x
// outputs, the first stopped in its processes): the cut is named at the
// first document's last line, not at the next one's declaration, and the
// second document is read whole.
func TestHunt42XMLCutThenWhole(t *testing.T) {
	b, err := os.ReadFile(fixtures + "h200_q_x_process.xml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	cut := s[:strings.Index(s, "<process_name>python3")]
	rows, meta, err := readRows(t, "two.xml", cut+"\n"+s)
	if err != nil || len(rows) != 3 || meta.Instants != 2 || len(meta.ProcessesListedUs) != 1 ||
		!strings.HasPrefix(meta.Cut, "the nvidia-smi XML document from line 1 stops at line 547 before its end") {
		t.Errorf("%v, %d rows, %d instants, listed %v, cut %q", err, len(rows), meta.Instants, meta.ProcessesListedUs, meta.Cut)
	}
}

// nvidia-smi -q's text cut short, made from the H200's report: a second
// GPU section (the first's, copied) that stops before its FB Memory Usage,
// and a report that stops in pid 614's entry before its Used GPU Memory.
// Both read GPU 0 and are read in part, naming the line; neither lists
// every process. Before, both read as whole.
func TestHunt42QTextCut(t *testing.T) {
	b, err := os.ReadFile(fixtures + "h200_q_process.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	gpu := s[strings.Index(s, "GPU 00000000:00:06.0"):]
	twoCut := s + gpu[:strings.Index(gpu, "    FB Memory Usage")]
	lines := strings.Count(twoCut, "\n")
	rows, meta, err := readRows(t, "two.txt", twoCut)
	if err != nil || len(rows) != 2 || len(meta.ProcessesListedUs) != 0 ||
		meta.Cut != fmt.Sprintf("the nvidia-smi -q report stops at line %d inside GPU 1's section (from line %d), before its FB Memory Usage: the excerpt is cut there, so GPU 1 and what follows are missing", lines, strings.Count(s, "\n")+1) {
		t.Errorf("second GPU cut: %v, %d rows, listed %v, cut %q", err, len(rows), meta.ProcessesListedUs, meta.Cut)
	}
	procCut := s[:strings.Index(s, "            Used GPU Memory")]
	rows, meta, err = readRows(t, "proc.txt", procCut)
	if err != nil || len(rows) != 1 || len(meta.ProcessesListedUs) != 0 || len(meta.ProcessesPartialUs) != 1 ||
		!strings.HasPrefix(meta.Cut, "the nvidia-smi -q report stops at line 259 inside pid 614's entry of GPU 0's Processes") {
		t.Errorf("process cut: %v, %d rows, listed %v, cut %q", err, len(rows), meta.ProcessesListedUs, meta.Cut)
	}
	// Whole: not cut.
	if _, meta := readFile(t, fixtures+"h200_q_process.txt"); meta.Cut != "" {
		t.Errorf("whole -q: cut %q", meta.Cut)
	}
	// -q -d PIDS has no FB Memory Usage in any section: not a cut.
	pids := "==============NVSMI LOG==============\n\nTimestamp                                 : Fri Dec  4 05:48:55 2026\n" +
		"Attached GPUs                             : 2\nGPU 00000000:00:06.0\n    Processes\n" +
		"        Process ID                        : 614\n            Type                          : C\n" +
		"            Name                          : python3\n            Used GPU Memory               : 6662 MiB\n" +
		"GPU 00000000:00:07.0\n    Processes                             : None\n"
	if rows, meta, err := readRows(t, "pids.txt", pids); err != nil || len(rows) != 1 || meta.Cut != "" {
		t.Errorf("-q -d PIDS: %v, %+v, cut %q", err, rows, meta.Cut)
	}
}
