package nvml

import (
	"strconv"
	"strings"
	"testing"
)

// chatglm1121 (zai-org/ChatGLM-6B#1121, testdata/README.md): a Processes
// box pasted whole (lines 1-9: Xorg 9 MiB, gnome-shell 3 MiB, python
// 8715 MiB, all on GPU 0), a shell prompt (line 10), then a second
// nvidia-smi whose paste stops in its table's header (ctime at line 11,
// banner at 13, the header's last row at 17), before any GPU row. The box
// is whole, so its three processes are samples; the second output holds
// none, and says so at line 17 (the line it stops at), naming line 11
// where it starts. Before, the second output's "no GPU memory" ended the
// whole input (exit 2).
func TestH46fPasteWithCutSecondOutput(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/chatglm1121_procs_box_then_table_cut_in_header.txt")
	want := map[int64]int64{942: 9, 1182: 3, 4096: 8715}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (the box's processes)", len(rows))
	}
	for _, r := range rows {
		if r.PID == nil || r.Used == nil || *r.Used != want[*r.PID]*MiB {
			t.Errorf("row %+v: want pids 942, 1182, 4096 at 9, 3, 8715 MiB", r)
		}
	}
	const why = "the nvidia-smi output from line 11 stops at line 17, before its GPU rows"
	if !strings.HasPrefix(meta.Cut, why) {
		t.Errorf("Cut %q, want it to start %q", meta.Cut, why)
	}
	if w := meta.Warnings.Strings(); len(w) != 1 || !strings.HasPrefix(w[0], "line 17: "+why) {
		t.Errorf("warnings %q", w)
	}
}

// The same outputs the other way round (synthetic, from the same text):
// the cut output first, after its prompt, then a whole table after
// another. The whole table is read; the first output is said cut.
func TestH46fCutOutputBeforeWholeOne(t *testing.T) {
	const cut = "$ nvidia-smi\n" +
		"Fri May 26 15:24:44 2023\n" + // line 2
		"+-----------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n" +
		"|-------------------------------+----------------------+----------------------+\n" +
		"| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n" // line 6
	const whole = "$ nvidia-smi\n" + // line 7
		"Fri May 26 15:25:00 2023\n" +
		"+-----------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n" +
		"|-------------------------------+----------------------+----------------------+\n" +
		"|===============================+======================+======================|\n" +
		"|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |\n" +
		"| 30%   40C    P2    90W / 350W |   8727MiB / 24265MiB |     30%      Default |\n" +
		"+-------------------------------+----------------------+----------------------+\n" +
		"| Processes:                                                                  |\n" +
		"|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n" +
		"|=============================================================================|\n" +
		"|    0   N/A  N/A      4096      C   python                           8715MiB |\n" +
		"+-----------------------------------------------------------------------------+\n"
	rows, meta, err := readRows(t, "cutfirst.txt", cut+whole)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v, %d rows; want the whole table's GPU and process", err, len(rows))
	}
	if !strings.Contains(meta.Cut, "the output before line 7 was not read") || !strings.Contains(meta.Cut, "from line 2 stops at line 6, before its GPU rows") {
		t.Errorf("Cut %q", meta.Cut)
	}
	// Alone, the cut output is an error that says it is cut.
	_, _, err = readRows(t, "cutonly.txt", cut)
	if err == nil || !strings.Contains(err.Error(), "cutonly.txt:6: no GPU memory in this nvidia-smi output: the nvidia-smi output from line 2 stops at line 6, before its GPU rows") {
		t.Errorf("cut alone: %v", err)
	}
}

// An "nvidia-smi -l" log (one output, no prompts) whose last table stops
// in its header, as a log killed mid-print does: the two whole tables are
// read, and the third is said cut. Before, it was dropped in silence and
// the log looked whole.
func TestH46fLoggedTableCutInHeader(t *testing.T) {
	table := func(ts string, used int) string {
		return ts + "\n" +
			"+-----------------------------------------------------------------------------+\n" +
			"| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n" +
			"|===============================+======================+======================|\n" +
			"|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |\n" +
			"| 30%   40C    P2    90W / 350W |   " + strconv.Itoa(used) + "MiB / 24265MiB |     30%      Default |\n" +
			"+-------------------------------+----------------------+----------------------+\n" +
			"| Processes:                                                                  |\n" +
			"|=============================================================================|\n" +
			"|    0   N/A  N/A      4096      C   python                           " + strconv.Itoa(used-12) + "MiB |\n" +
			"+-----------------------------------------------------------------------------+\n"
	}
	// 11 lines a table: the third starts at line 23, its banner at 25.
	in := table("Fri May 26 15:24:44 2023", 8727) + table("Fri May 26 15:24:45 2023", 8827) +
		"Fri May 26 15:24:46 2023\n+-----------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n"
	rows, meta, err := readRows(t, "l1.txt", in)
	if err != nil || len(rows) != 4 || meta.Instants != 2 {
		t.Fatalf("%v, %d rows, %d instants; want 4 rows at 2 instants", err, len(rows), meta.Instants)
	}
	if !strings.HasPrefix(meta.Cut, "the nvidia-smi output from line 23 stops at line 25, before its GPU rows") {
		t.Errorf("Cut %q", meta.Cut)
	}
}

// gpustat130 (wookayin/gpustat#130): gpustat's four P100s of host
// gpu-a-11.extreme at 103 / 16384 MB (line 3-6), then, after the prompt
// "anamaria@gpu-a-11.extreme:~ $ nvidia-smi" (line 7), nvidia-smi's GPU 0
// at 0MiB / 16384MiB (driver 515; its memory row is line 17). The prompt
// names gpustat's host, and index 0, 16384 MiB and the name ("Tesla
// P100-PCIE..." is nvidia-smi's cut of "Tesla P100-PCIE-16GB") agree: one
// GPU. Its samples stay two series, the figures being two measures (103
// MiB with the driver's reservation, 0 without), and a warning says both.
// Before, nothing said the bare "gpu 0" was gpustat's GPU 0.
func TestH46fGpustatAndTableOneGPU(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/gpustat130_gpustat_then_table_cut_gpu_box.txt")
	if len(rows) != 5 || rows[4].Host != "" || rows[0].Host != "gpu-a-11.extreme" {
		t.Fatalf("%d rows; want gpustat's 4 (host gpu-a-11.extreme) and the table's 1 (no host)", len(rows))
	}
	const want = "line 17: GPU 0 at line 17 and GPU 0 of host gpu-a-11.extreme at line 3 are one GPU shown by two tools: the prompt at line 7 names that host"
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, want) || !strings.Contains(w, "gpustat's used memory (103 MiB) counts the driver's reservation and nvidia-smi's (0 MiB; driver R510 and later) leaves it out") {
		t.Errorf("warnings %q, want %q", w, want)
	}
}

// The same paste in other forms (synthetic): the table first (the
// gpustat header further on is read ahead, so the note is the same,
// at the line of the GPU without a host);
// a prompt that names no host (the doubt); a prompt that names another
// host (two machines: nothing to say).
func TestH46fGpustatAndTableForms(t *testing.T) {
	const gs = "me@node7:~$ gpustat\n" +
		"node7         Mon Aug 22 15:23:57 2022  470.82.01\n" +
		"[0] NVIDIA A100-SXM4-40GB | 27'C,   0 % |   3 / 40536 MB |\n" // line 3
	table := func(prompt string) string {
		return prompt + "\n" +
			"Mon Aug 22 15:24:23 2022\n" +
			"| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n" +
			"|===============================+======================+======================|\n" +
			"|   0  NVIDIA A100-SXM...  Off  | 00000000:07:00.0 Off |                    0 |\n" +
			"| N/A   27C    P0    52W / 400W |      3MiB / 40536MiB |      0%      Default |\n" + // 6th line
			"+-------------------------------+----------------------+----------------------+\n"
	}
	cases := []struct{ name, in, want string }{
		// Table at lines 1-7 (memory row 6), gpustat at 8-10 (GPU at 10).
		{"table first", table("me@node7:~$ nvidia-smi") + strings.Replace(gs, "15:23:57", "15:24:50", 1), "line 6: GPU 0 at line 6 and GPU 0 of host node7 at line 10 are one GPU shown by two tools: the prompt at line 1 names that host"},
		// gpustat 1-3, table 4-10 (memory row 9). Driver 470: no
		// reservation in either figure, so no word of one.
		{"no host", gs + table("$ nvidia-smi"), "line 9: GPU 0 at line 9 (its output names no host) matches GPU 0 of host node7 at line 3 by index, total memory (40536 MiB) and name, but no shell prompt names"},
		{"other host", gs + table("me@node8:~$ nvidia-smi"), ""},
	}
	for _, c := range cases {
		rows, meta, err := readRows(t, c.name, c.in)
		if err != nil || len(rows) != 2 || rows[0].Host == rows[1].Host {
			t.Errorf("%s: %v, %+v", c.name, err, rows)
			continue
		}
		w := strings.Join(meta.Warnings.Strings(), "\n")
		switch {
		case c.want == "" && strings.Contains(w, "GPU 0 at line"):
			t.Errorf("%s: %q, want no note (another host)", c.name, w)
		case c.want != "" && !strings.Contains(w, c.want):
			t.Errorf("%s: %q, want %q", c.name, w, c.want)
		case strings.Contains(w, "reservation"):
			t.Errorf("%s: %q speaks of a reservation under driver 470", c.name, w)
		}
	}
}

// promptHost reads the host of the prompts people paste: bash's default
// (gpustat#130), Red Hat's "[user@host dir]$" (m0nad/Diamorphine#13),
// after a conda env (ChatGLM-6B#1121), a container's root prompt; none
// from a bare "$" or PowerShell's.
func TestH46fPromptHost(t *testing.T) {
	for prompt, want := range map[string]string{
		"anamaria@gpu-a-11.extreme:~ $ nvidia-smi": "gpu-a-11.extreme",
		"[centos@wenyangmao01 ~]$ nvidia-smi":      "wenyangmao01",
		"(base) lan@lan:~$ nvidia-smi":             "lan",
		"root@4f3a2b1c9d0e:/workspace# nvidia-smi": "4f3a2b1c9d0e",
		"$ nvidia-smi":               "",
		`PS C:\Users\me> nvidia-smi`: "",
	} {
		if got := promptHost([]byte(prompt)); got != want {
			t.Errorf("promptHost(%q) = %q, want %q", prompt, got, want)
		}
	}
}

// A whole table (GPU 0 at 8727 MiB, python at 8715 MiB), then, after a
// prompt at line 20, an nvidia-smi -q report or -q -x document cut inside
// GPU 0's section before its memory (synthetic, in the layouts of driver
// 470). The table's samples are read and the input is read in part;
// before, the last output's error ended the whole input. The XML
// decoder's own cut note is not said twice.
func TestH46fPasteLastOutputCutQ(t *testing.T) {
	const table = "Fri May 26 15:24:44 2023\n" +
		"+-----------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n" +
		"|-------------------------------+----------------------+----------------------+\n" +
		"| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n" +
		"| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n" +
		"|                               |                      |               MIG M. |\n" +
		"|===============================+======================+======================|\n" +
		"|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |\n" +
		"| 30%   40C    P2    90W / 350W |   8727MiB / 24265MiB |     30%      Default |\n" +
		"|                               |                      |                  N/A |\n" +
		"+-------------------------------+----------------------+----------------------+\n" +
		"                                                                               \n" +
		"+-----------------------------------------------------------------------------+\n" +
		"| Processes:                                                                  |\n" +
		"|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n" +
		"|=============================================================================|\n" +
		"|    0   N/A  N/A      4096      C   python                           8715MiB |\n" +
		"+-----------------------------------------------------------------------------+\n" // line 19
	const q = "(base) lan@lan:~$ nvidia-smi -q\n" + // line 20
		"\n==============NVSMI LOG==============\n\n" +
		"Timestamp                                 : Fri May 26 15:25:44 2023\n" +
		"Driver Version                            : 470.182.03\n\n" +
		"Attached GPUs                             : 1\n" +
		"GPU 00000000:01:00.0\n" +
		"    Product Name                          : NVIDIA GeForce RTX 3090\n" // line 29
	const x = "(base) lan@lan:~$ nvidia-smi -q -x\n" + // line 20
		"<?xml version=\"1.0\" ?>\n" +
		"<nvidia_smi_log>\n" +
		"\t<timestamp>Fri May 26 15:25:44 2023</timestamp>\n" +
		"\t<driver_version>470.182.03</driver_version>\n" +
		"\t<attached_gpus>1</attached_gpus>\n" +
		"\t<gpu id=\"00000000:01:00.0\">\n" +
		"\t\t<product_name>NVIDIA GeForce RTX 3090</product_name>\n" // line 27
	// A --query-gpu output of its header only, its rows cut (was read
	// as nothing in silence, the earlier table's rows standing for the
	// input); --query-compute-apps with a header only is no process
	// running, not a cut.
	const csv = "(base) lan@lan:~$ nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv\n" +
		"timestamp, index, memory.used [MiB], memory.total [MiB]\n" // line 21
	const apps = "(base) lan@lan:~$ nvidia-smi --query-compute-apps=pid,used_memory --format=csv\n" +
		"pid, used_gpu_memory [MiB]\n"
	for _, c := range []struct{ name, in, cut string }{
		// Its GPU section has its Product Name, the whole report's: cut
		// before its FB Memory Usage (session 48), said as such.
		{"q", table + q, "the nvidia-smi -q report stops at line 29 inside GPU 0's section (from line 28), before its FB Memory Usage"},
		{"x", table + x, "the nvidia-smi XML document from line 21 stops at line 27"},
		{"csv", table + csv, "the last output (after the prompt at line 20) gave no sample (a header without rows), at line 21"},
		{"apps", table + apps, ""},
	} {
		rows, meta, err := readRows(t, c.name, c.in)
		if err != nil || len(rows) != 2 {
			t.Errorf("%s: %v, %d rows; want the table's GPU and process", c.name, err, len(rows))
			continue
		}
		if !strings.HasPrefix(meta.Cut, c.cut) || (c.cut == "") != (meta.Cut == "") || strings.Count(strings.Join(meta.Warnings.Strings(), "\n"), "stops at line 27") > 1 {
			t.Errorf("%s: cut %q, warnings %q", c.name, meta.Cut, meta.Warnings.Strings())
		}
		if c.name == "apps" && !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "no process rows: no compute process ran") {
			t.Errorf("apps: warnings %q, want no compute process said", meta.Warnings.Strings())
		}
	}
}
