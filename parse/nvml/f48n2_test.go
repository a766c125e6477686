package nvml

import (
	"github.com/gpuleak/gpuleak/parse"
	"strings"
	"testing"
)

// A line of prose before an output (a paste's "Here is my log:", the
// Markdown list item that introduces a fenced dmon log in an HPC
// tutorial, a docstring's "Layout (...):") made the whole input
// unrecognised, where nvidia-smi's table tolerates it. Now the first
// lines of text (up to maxLead) are skipped with a warning when the rest
// opens in a layout whose first line says so.
func TestProseBeforeOutput(t *testing.T) {
	// The tutorial's log: 2 GPUs, fb 4 -> 452 -> 916 MiB on GPU 0 and
	// 4 -> 24 MiB on GPU 1; its two "." lines elide rows.
	rows, meta := readFile(t, tdata+"pub_ddp_tutorial_dmon_pucm_yaml_indented.txt")
	if meta.Format != FormatDmon || len(rows) != 5 {
		t.Fatalf("ddp tutorial: %s, %d rows, want dmon, 5", meta.Format, len(rows))
	}
	if got := *rows[4].Used; got != 916*MiB || *rows[4].GPU != 0 {
		t.Errorf("last row GPU %d used %d, want GPU 0 916 MiB", *rows[4].GPU, got)
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, `line 1: the text before the first output ("- GPU utilization is recorded in`) {
		t.Errorf("warnings %q: want line 1 named as not read", ws)
	}
	// Its "." lines are a vertical ellipsis: rows left out, not damaged.
	if meta.SkippedLines != 0 || !strings.Contains(ws, `line 10: "." stands for lines left out of the paste`) {
		t.Errorf("%d lines skipped as damaged, warnings %q", meta.SkippedLines, ws)
	}
	// A docstring's dcgmi dmon layout: one row, FBUSD 500 MiB.
	rows, meta = readFile(t, tdata+"pub_dcgm_parse_docstring_dmon_indented.txt")
	if meta.Format != FormatDcgmiDmon || len(rows) != 1 || *rows[0].Used != 500*MiB {
		t.Errorf("dcgmi docstring: %s, %+v", meta.Format, rows)
	}
	// A line of text before a --query-gpu CSV, a pmon log and a fenced
	// pmon log (real logs with the line put before them).
	for _, c := range []struct {
		file string
		f    parse.Format
		rows int
	}{
		{"leak_exit_query_gpu.csv", FormatQueryGPU, 0},
		{"pub_sonar_pmon_two_headers.txt", FormatPmon, 0},
	} {
		body := readString(t, tdata+c.file)
		plainRows, _ := readFile(t, tdata+c.file)
		for _, in := range []string{"Here is my log:\n" + body, "Here is my log:\n\n```\n" + body + "```\n", "```\nHere is my log:\n" + body + "```\n"} {
			if f := Sniff([]byte(in)); f != c.f {
				t.Errorf("%s after a line of text: sniffed %q, want %q", c.file, f, c.f)
				continue
			}
			rows, meta, err := readRows(t, c.file, in)
			if err != nil || len(rows) != len(plainRows) {
				t.Errorf("%s after a line of text: %d rows (%v), want %d", c.file, len(rows), err, len(plainRows))
			}
			if ws := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(ws, `: the text before the first output ("Here is my log:") is not read`) {
				t.Errorf("%s: warnings %q", c.file, ws)
			}
		}
	}
	// A fence before the text opens the block the output is in: text
	// after its closing fence is prose, not a damaged row.
	_, meta, err := readRows(t, "fenced", "```\nHere is my log:\n"+readString(t, tdata+"pub_sonar_pmon_two_headers.txt")+"```\nThat is all.\n")
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); err != nil || meta.SkippedLines != 0 || !strings.Contains(ws, `text outside the Markdown code blocks ("That is all.") is not read`) {
		t.Errorf("fence first: %v, %d lines skipped, warnings %q", err, meta.SkippedLines, ws)
	}
	// More text than a paste's introduction, or a command gpuleak does
	// not know before it, is not skipped: the text is not a log.
	body := readString(t, tdata+"pub_sonar_pmon_two_headers.txt")
	for _, lead := range []string{"One.\nTwo lines.\nThree lines.\nFour lines.\n", "$ go build && ./dmon\n"} {
		if f := Sniff([]byte(lead + body)); f != "" {
			t.Errorf("%q before pmon: sniffed %q, want none", lead, f)
		}
	}
}

// SkyPilot (and Ray) put the worker's tag before every line it printed:
// "(simple-workload, pid=4150) | NVIDIA-SMI 570.172.08 ...". The table
// behind it was unrecognised; it is read as one H100 at 0 of 81559 MiB.
func TestWorkerTagWrap(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_skypilot_pool_job_log_prefix_h100.txt")
	if meta.Format != FormatNvidiaSmiText {
		t.Fatalf("format %q", meta.Format)
	}
	checkGPUs(t, "skypilot", rows, 0, []gpuWant{{0, "NVIDIA H100 80GB HBM3", 0, 81559}})
	// Ray's forms, its colours included.
	for _, l := range []string{"(RayTrainWorker pid=1234, ip=10.0.0.5) x", "(pid=1234) x", "  (head, rank=0, pid=2481) x", "\x1b[36m(pid=1234)\x1b[0m x"} {
		if got := string(stripPIDTag(stripANSI(nil, []byte(l)))); got != "x" {
			t.Errorf("stripPIDTag(%q) = %q", l, got)
		}
	}
	// Not a tag: a process name in parentheses, a gpustat row.
	for _, l := range []string{"(python) x", "(pid 1234) x", "[0] NVIDIA H200"} {
		if got := string(stripPIDTag([]byte(l))); got != l {
			t.Errorf("stripPIDTag(%q) = %q", l, got)
		}
	}
}

// nvidia-smi's output pasted as comments: under the command that printed
// it (nvtop#432: "# NVIDIA GeForce RTX 4070 Ti SUPER, 16376, 14360"),
// or at the top of a Python script (d2l's gpu.py, a Windows table). The
// first was "no samples: nvidia-smi printed only messages (see the
// warnings)" with no warning shown, the second unrecognised.
func TestHashCommentedOutputs(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_nvtop432_wsl2_hash_prefixed_outputs.txt")
	if meta.Format != FormatQueryGPU {
		t.Fatalf("nvtop#432: format %q", meta.Format)
	}
	var gpu, procs int
	for _, r := range rows {
		if r.PID == nil {
			gpu++
			if r.GPUName != "NVIDIA GeForce RTX 4070 Ti SUPER" || *r.Used != 14360*MiB || *r.Total != 16376*MiB {
				t.Errorf("GPU row %+v", r)
			}
		} else {
			procs++
			if *r.PID != 79 || r.Used != nil {
				t.Errorf("process row %+v, want pid 79, memory unknown", r)
			}
		}
	}
	if gpu != 1 || procs != 1 {
		t.Errorf("%d GPU rows, %d process rows, want 1, 1", gpu, procs)
	}
	rows, meta = readFile(t, tdata+"pub_d2l_gpu_py_hash_commented_win_table_552.py")
	if meta.Format != FormatNvidiaSmiText {
		t.Fatalf("d2l: format %q", meta.Format)
	}
	var n int
	for _, r := range rows {
		if r.PID == nil {
			n++
			if r.GPUName != "NVIDIA GeForce RTX 4080" || *r.Used != 873*MiB || *r.Total != 16376*MiB {
				t.Errorf("d2l GPU row %+v", r)
			}
		}
	}
	if n != 1 || len(rows) != 23 {
		t.Errorf("d2l: %d GPU rows of %d, want 1 of 23 (22 processes)", n, len(rows))
	}
	// A comment before a paste's first prompt is no output pasted as
	// comments: a dmon output later keeps its "#" header.
	notes := "# my notes\n$ nvidia-smi --query-gpu=index,memory.used --format=csv\nindex, memory.used [MiB]\n0, 100 MiB\n$ nvidia-smi dmon -s m -c 1\n# gpu     fb   bar1\n# Idx     MB     MB\n    0    100      2\n"
	if rows, _, err := readRows(t, "notes", notes); err != nil || len(rows) != 2 {
		t.Errorf("notes then two outputs: %d rows, %v; want 2", len(rows), err)
	}
	// A log's own comment before its rows is skipped, as before; an
	// output of comments only says what its lines were.
	_, _, err := readRows(t, "comments", "index, memory.used [MiB]\n# no GPU today\n")
	if err == nil || !strings.Contains(err.Error(), `line 2: "# no GPU today"`) {
		t.Errorf("comments only: %v", err)
	}
}

// A prompt without a space ("$nvidia-smi ...") and a command piped on
// ("| tee gpu-log.csv"): the line is the command of the CSV after it,
// not text. The A10's log (4 rows, 21 then 7 MiB) was unrecognised.
func TestPromptPipedCommand(t *testing.T) {
	for _, l := range []string{
		"$nvidia-smi -lms --query-gpu=timestamp,memory.used --format=csv | tee gpu-log.csv ",
		"$ nvidia-smi | grep MiB",
		"user@host:~$ nvidia-smi --query-gpu=memory.used --format=csv | tee log.csv",
	} {
		if !isPromptLine([]byte(l)) {
			t.Errorf("isPromptLine(%q) = false", l)
		}
	}
	for _, l := range []string{"| 0 N/A N/A 1234 C python 500MiB |", "# gpu | python", "> | nvidia-smi"} {
		if isPromptLine([]byte(l)) {
			t.Errorf("isPromptLine(%q) = true", l)
		}
	}
	rows, meta := readFile(t, tdata+"pub_cnnotes_lms_query_gpu_nospace_prompt_a10.txt")
	if meta.Format != FormatQueryGPU || len(rows) != 5 {
		t.Fatalf("format %q, %d rows, want query-gpu, 5", meta.Format, len(rows))
	}
	if *rows[0].Used != 21*MiB || *rows[0].Total != 23028*MiB {
		t.Errorf("first row %+v", rows[0])
	}
}

// nvidia-smi -q excerpts cut before their FB Memory Usage: one quoted from
// its "Attached GPUs : 4" line on (nvidia-docker#617, a Tesla K80) was
// unrecognised; one with its header (sysmon#12, a GTX 780, driver 450.66)
// was "no GPU memory in this output", as if the report had none. Both are
// a GPU section with its Product Name (the whole report's) stopping before
// the section that holds the memory: the error says so.
func TestQReportCutBeforeFB(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"pub_nvdocker617_k80_q_attached4_cut_before_fb.txt", "the nvidia-smi -q report stops at line 33 inside GPU 0's section (from line 2), before its FB Memory Usage: the excerpt is cut there"},
		{"field/sysmon12_q_cut_before_memory.txt", "the nvidia-smi -q report stops at line 33 inside GPU 0's section (from line 10), before its FB Memory Usage: the excerpt is cut there"},
	} {
		b := readString(t, tdata+c.file)
		if f := Sniff([]byte(b)); f != FormatNvidiaSmiText {
			t.Errorf("%s: sniffed %q", c.file, f)
		}
		_, _, err := readRows(t, c.file, b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", c.file, err, c.want)
		}
	}
	// A -q -d PIDS report has no FB Memory Usage and no Product Name: no
	// cut is claimed.
	pids := "==============NVSMI LOG==============\n\nTimestamp                                 : Sat Oct 10 17:02:53 2020\nDriver Version                            : 450.66\n\nAttached GPUs                             : 1\nGPU 00000000:01:00.0\n    Processes                             : None\n"
	if _, _, err := readRows(t, "pids", pids); err == nil || strings.Contains(err.Error(), "cut") {
		t.Errorf("-q -d PIDS: %v", err)
	}
}

// telegraf#12996: a Windows -q -x excerpt of <process_info> entries only
// (their <used_memory> N/A), no <gpu> element. It was "unrecognised input
// format"; XMLExcerpt names what it is and lacks.
func TestXMLExcerptOfProcesses(t *testing.T) {
	b := []byte(readString(t, tdata+"pub_telegraf12996_windows_xml_procs_na_excerpt.txt"))
	if f := Sniff(b); f != "" {
		t.Fatalf("sniffed %q: the excerpt holds no memory of a GPU", f)
	}
	n, msg, ok := XMLExcerpt(b)
	if !ok || n != 3 || !strings.Contains(msg, "without the <gpu> element") || !strings.Contains(msg, "<used_memory> is N/A") {
		t.Errorf("XMLExcerpt = %d, %q, %v", n, msg, ok)
	}
	// XML of another program, and text, are not.
	for _, in := range []string{"<html>\n<body>\n<p>x</p>\n</body>\n", "Some text\n<pid>1</pid>\n<used_memory>1 MiB</used_memory>\n<type>C</type>\n"} {
		if _, _, ok := XMLExcerpt([]byte(in)); ok {
			t.Errorf("XMLExcerpt(%q) ok", in)
		}
	}
}

// YOLOX#1429: two Quadro RTX 5000 under WDDM, whose --query-gpu gives
// [N/A] for total and used and whose table (banner NVIDIA-SMI 512.15,
// Driver Version 460.89) shows "**Not Supported**". The error blamed
// unified memory (GB10, Jetson), wrong for these discrete GPUs; the table
// alone advised logging memory.used, which is [N/A] too. Now it names the
// GPU as one with memory of its own and the banner's version mismatch.
func TestDiscreteGPUNoMemoryFigure(t *testing.T) {
	b := readString(t, tdata+"pub_yolox1429_windows_not_supported_bold.txt")
	table := b[strings.Index(b, "C:\\Windows"):]
	for _, in := range []struct{ name, text, count string }{{"paste", b, "4 rows read, of 2 GPUs"}, {"table", table, "2 rows read, of 2 GPUs"}} {
		_, _, err := readRows(t, in.name, in.text)
		if err == nil {
			t.Fatalf("%s: no error", in.name)
		}
		e := err.Error()
		for _, w := range []string{in.count, "on the Quadro RTX 5000, a GPU with memory of its own", "gives NVIDIA-SMI 512.15 but Driver Version 460.89 on Windows", "make the driver and nvidia-smi one release"} {
			if !strings.Contains(e, w) {
				t.Errorf("%s: %s\nlacks %q", in.name, e, w)
			}
		}
		for _, w := range []string{"unified memory (NVIDIA GB10", "log memory.used, dmon's fb", "**Not Supported**"} {
			if strings.Contains(e, w) {
				t.Errorf("%s: %s\nsays %q", in.name, e, w)
			}
		}
	}
	// The same table with one version in its banner names no mismatch.
	same := strings.Replace(table, "Driver Version: 460.89", "Driver Version: 512.15", 1)
	if _, _, err := readRows(t, "same", same); err == nil || strings.Contains(err.Error(), "Driver Version") || !strings.Contains(err.Error(), "a GPU with memory of its own") {
		t.Errorf("one version: %v", err)
	}
}

// NVIDIA/dcgm-exporter#250: a V100 scrape excerpt with power, PCIe and
// utilisation metrics and no framebuffer metric, its last line cut in its
// labels. The error blamed the cut line (GPU_UTIL's); the cause is that no
// DCGM_FI_DEV_FB_* is in it.
func TestDCGMNoFBMetrics(t *testing.T) {
	_, _, err := readRows(t, "x", readString(t, tdata+"pub_dcgmexporter250_v100_excerpt_no_fb_metrics.txt"))
	if err == nil || !strings.Contains(err.Error(), "no DCGM_FI_DEV_FB_USED, _FREE or _TOTAL in these metrics") || !strings.Contains(err.Error(), "line 13, which could not be read, is not one either") {
		t.Errorf("%v", err)
	}
}

// A dmon paste whose rows are behind "#" too ("#   0     21     37 ...
// 433 ..."), as its header is: "a header without rows". The rows are
// read (GPU 0, fb 433 MiB twice), with a warning.
func TestDmonRowsBehindHash(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_adamu_dmon_pucm_rows_commented.txt")
	if meta.Format != FormatDmon || len(rows) != 2 {
		t.Fatalf("%s, %d rows, want dmon, 2", meta.Format, len(rows))
	}
	for _, r := range rows {
		if *r.GPU != 0 || *r.Used != 433*MiB {
			t.Errorf("row %+v, want GPU 0, 433 MiB", r)
		}
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(ws, `line 5: rows behind "#"`) {
		t.Errorf("warnings %q", ws)
	}
	// A comment after the header is still a comment.
	rows, _, err := readRows(t, "c", "# gpu   fb\n# Idx   MB\n    0   100\n# a note, 2 words\n    0   200\n")
	if err != nil || len(rows) != 2 {
		t.Errorf("%d rows, %v", len(rows), err)
	}
}
