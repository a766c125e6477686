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
