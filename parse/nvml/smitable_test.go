package nvml

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

const tdata = "../../testdata/nvml/"

// The H200 recording (testdata/README.md): plain nvidia-smi and
// nvidia-smi -q -d MEMORY at 02:00:58 UTC while pid 878 held 3684 MiB:
// the table says 3693MiB / 143771MiB; -q says Total 143771, Reserved 616,
// Used 3693, Free 139464 MiB.
func TestSmiTextRecorded(t *testing.T) {
	at := time.Date(2026, 12, 1, 2, 0, 58, 0, time.UTC).UnixMicro()
	rows, meta := readFile(t, tdata+"leak_exit_nvidia_smi_default.txt")
	if meta.Format != FormatNvidiaSmiText || meta.Clock != ClockAbsolute || len(rows) != 2 {
		t.Fatalf("format %s clock %s, %d rows", meta.Format, meta.Clock, len(rows))
	}
	g, p := rows[0], rows[1]
	if g.TimeUs != at || *g.GPU != 0 || *g.Used != 3693*MiB || *g.Total != 143771*MiB || g.PID != nil || g.GPUName != "NVIDIA H200" {
		t.Errorf("GPU row %+v", g)
	}
	if p.TimeUs != at || *p.GPU != 0 || *p.PID != 878 || *p.Used != 3684*MiB || p.Process != "python3" {
		t.Errorf("process row %+v", p)
	}

	rows, meta = readFile(t, tdata+"leak_exit_nvidia_smi_q_memory.txt")
	if meta.Format != FormatNvidiaSmiText || len(rows) != 1 {
		t.Fatalf("-q: format %s, %d rows", meta.Format, len(rows))
	}
	// 143771 = 616 + 3693 + 139464 - 2: used leaves the reservation out.
	q := rows[0]
	if q.TimeUs != at || *q.GPU != 0 || *q.Used != 3693*MiB || *q.Total != 143771*MiB || *q.Free != 139464*MiB ||
		*q.Reserved != 616*MiB || q.Convention != string(ExcludesReserved) {
		t.Errorf("-q row %+v", q)
	}
}

// Two outputs pasted one after the other, each after its shell prompt.
func TestSmiTextWithPrompts(t *testing.T) {
	a, _ := os.ReadFile(tdata + "leak_exit_nvidia_smi_default.txt")
	b, _ := os.ReadFile(tdata + "leak_exit_nvidia_smi_q_memory.txt")
	in := "user@host:~$ nvidia-smi\n" + string(a) + "user@host:~$ nvidia-smi -q -d MEMORY\n" + string(b)
	rows, meta, err := readRows(t, "two.txt", in)
	if err != nil || meta.Format != FormatNvidiaSmiText || len(rows) != 3 {
		t.Fatalf("%v: %s, %d rows", err, meta.Format, len(rows))
	}
	if *rows[0].Used != 3693*MiB || *rows[1].PID != 878 || *rows[2].Reserved != 616*MiB {
		t.Errorf("rows %+v", rows)
	}
}

// Public pastes of the table by older drivers (375, 387): truncated GPU
// names, no GI/CI columns, a prompt line first, the paste cut mid-row.
func TestSmiTextPublicPastes(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_pytorch910_nvidia_smi.txt")
	if meta.Format != FormatNvidiaSmiText || len(rows) != 2 {
		t.Fatalf("pytorch#910: %s, %d rows", meta.Format, len(rows))
	}
	at := time.Date(2017, 3, 3, 11, 52, 29, 0, time.UTC).UnixMicro()
	for i, want := range [][2]int64{{11409, 12207}, {698, 12204}} {
		r := rows[i]
		if r.TimeUs != at || *r.GPU != int32(i) || *r.Used != want[0]*MiB || *r.Total != want[1]*MiB || r.GPUName != "GeForce GTX TIT..." {
			t.Errorf("pytorch#910 GPU %d: %+v", i, r)
		}
	}
	rows, _ = readFile(t, tdata+"pub_sublime2184_nvidia_smi.txt")
	if len(rows) != 1 || *rows[0].Used != 3723*MiB || *rows[0].Total != 12189*MiB || rows[0].GPUName != "TITAN Xp" {
		t.Errorf("sublime#2184: %+v", rows)
	}
}

// A paste cut inside a GPU's rows (NVIDIA/gpu-operator#348: the second
// A100's memory cell stops at "0MiB / 81920Mi", its figures whole) reads
// both GPUs and names the cut line; a Processes box cut before its rows
// (pytorch#910) says its processes are not read.
func TestSmiTextCutRowsWarn(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_gpuoperator348_cut_gpu_row.txt")
	at := time.Date(2022, 4, 26, 15, 29, 49, 0, time.UTC).UnixMicro()
	if len(rows) != 2 || meta.Instants != 1 {
		t.Fatalf("gpu-operator#348: %d instants, %+v", meta.Instants, rows)
	}
	for i, r := range rows {
		if r.TimeUs != at || *r.GPU != int32(i) || *r.Used != 0 || *r.Total != 81920*MiB {
			t.Errorf("gpu-operator#348 GPU %d: %+v", i, r)
		}
	}
	// The second warning (session 42): the table stops before its
	// Processes box.
	if w := meta.Warnings.Strings(); len(w) != 2 || !strings.Contains(w[0], `line 16: GPU 1's memory cell is cut ("0MiB / 81920Mi"): its figures are whole: 0 MiB used of 81920 MiB`) ||
		!strings.HasPrefix(w[1], "line 16: the nvidia-smi table ends at line 16 before its Processes box") {
		t.Errorf("gpu-operator#348 warnings %q: want line 16 and GPU 1 named", w)
	}
	_, meta = readFile(t, tdata+"pub_pytorch910_nvidia_smi.txt")
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 18:") || !strings.Contains(w, "processes are not read") {
		t.Errorf("pytorch#910 warnings %q", meta.Warnings.Strings())
	}
	// A process row cut short, and a table whose last GPU row ends the input.
	table := "Tue Apr 26 15:29:49 2022\n" +
		"| NVIDIA-SMI 510.47.03    Driver Version: 510.47.03    CUDA Version: 11.6     |\n" +
		"+-------------------------------+----------------------+----------------------+\n" +
		"|   0  NVIDIA A100-SXM...  On   | 00000000:54:00.0 Off |                    0 |\n" +
		"| N/A   33C    P0    67W / 400W |    900MiB / 81920MiB |      0%      Default |\n" +
		"| Processes:                                                                  |\n" +
		"|    0   N/A  N/A      4242      C   python                            890MiB |\n" +
		"|    0   N/A  N/A      4243      C   pyth\n"
	rows, meta, err := readRows(t, "p.txt", table)
	if err != nil || len(rows) != 2 || !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "line 8: a row of the Processes box is cut short") {
		t.Errorf("%v: %d rows, warnings %q", err, len(rows), meta.Warnings.Strings())
	}
	_, meta, err = readRows(t, "g.txt", table[:strings.Index(table, "| N/A")])
	if err == nil {
		t.Errorf("a table with no memory row read as samples: %q", meta.Warnings.Strings())
	}
}

// Outputs without a ctime line are placed by row order, one tick apart; a
// table without a memory row is an error, not an empty log.
func TestSmiTextNoTimeAndErrors(t *testing.T) {
	a, _ := os.ReadFile(tdata + "leak_exit_nvidia_smi_default.txt")
	table := string(a[strings.IndexByte(string(a), '\n')+1:]) // without its ctime line
	rows, meta, err := readRows(t, "l.txt", table+table)
	if err != nil || meta.Clock != ClockRowOrder || len(rows) != 4 || rows[2].TimeUs-rows[0].TimeUs != 1e6 {
		t.Fatalf("%v: clock %s, %d rows %+v", err, meta.Clock, len(rows), rows)
	}
	_, _, err = readRows(t, "empty.txt", "+------+\n| NVIDIA-SMI 580.1  Driver Version: 580.1 |\n+------+\n")
	if err == nil || !strings.Contains(err.Error(), "empty.txt:") || !strings.Contains(err.Error(), "no GPU memory") {
		t.Errorf("err %v", err)
	}
}

// wookayin/gpustat#130: gpustat's text and nvidia-smi's table pasted one
// after the other, each after its shell prompt. gpustat's four GPUs at
// 15:23:57 (103 / 16384 MB, carrying the host of its header), then
// nvidia-smi's GPU 0 at 15:24:23 (0MiB / 16384MiB, no host: its own series).
func TestGpustatAndTableTogether(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_gpustat130_two_outputs.txt")
	if meta.Format != FormatGpustatText || len(rows) != 5 {
		t.Fatalf("%s, %d rows", meta.Format, len(rows))
	}
	for i, r := range rows {
		want := string(FormatGpustatText)
		if i == 4 {
			want = string(FormatNvidiaSmiText)
		}
		if r.Source != want {
			t.Errorf("row %d source %q, want %q", i, r.Source, want)
		}
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 7: another output (nvidia-smi-text)") {
		t.Errorf("warnings %q", w)
	}
	g := time.Date(2022, 8, 22, 15, 23, 57, 0, time.UTC).UnixMicro()
	for i, r := range rows[:4] {
		if r.TimeUs != g || *r.GPU != int32(i) || *r.Used != 103*MiB || *r.Total != 16384*MiB || r.Host != "gpu-a-11.extreme" ||
			r.Convention != string(IncludesReservedUnknown) {
			t.Errorf("gpustat GPU %d: %+v", i, r)
		}
	}
	s := rows[4]
	if s.TimeUs != time.Date(2022, 8, 22, 15, 24, 23, 0, time.UTC).UnixMicro() || *s.GPU != 0 || *s.Used != 0 || s.Host != "" {
		t.Errorf("nvidia-smi row %+v", s)
	}
}

// wookayin/gpustat#97: one line of gpustat, with a process; no header, so
// no time.
func TestGpustatLine(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_gpustat97_line.txt")
	if meta.Format != FormatGpustatText || meta.Clock != ClockRowOrder || len(rows) != 2 {
		t.Fatalf("%s %s, %d rows", meta.Format, meta.Clock, len(rows))
	}
	if *rows[0].Used != 11848*MiB || *rows[0].Total != 12287*MiB || rows[0].GPUName != "GeForce GTX Titan X" {
		t.Errorf("GPU %+v", rows[0])
	}
	if *rows[1].PID != 52046 || rows[1].Process != "python" || *rows[1].Used != 11821*MiB {
		t.Errorf("process %+v", rows[1])
	}
}

// "watch nvidia-smi" saved: each table after watch's header line, whose
// end is the ctime ("Every 2.0s: nvidia-smi   gpu01: Tue Dec  1 02:00:58
// 2026"). Built from the recorded table with the used memory changed per
// copy.
func TestSmiTextWatch(t *testing.T) {
	a, _ := os.ReadFile(tdata + "leak_exit_nvidia_smi_default.txt")
	table := string(a[strings.IndexByte(string(a), '\n')+1:])
	var b strings.Builder
	for i, used := range []string{"3693MiB", "4205MiB", "4717MiB"} {
		fmt.Fprintf(&b, "Every 2.0s: nvidia-smi                     gpu01: Tue Dec  1 02:01:0%d 2026\n\n%s", 2*i, strings.Replace(table, "3693MiB", used, 1))
	}
	rows, meta, err := readRows(t, "watch.txt", b.String())
	if err != nil || meta.Clock != ClockAbsolute || len(rows) != 6 {
		t.Fatalf("%v: %s, %d rows", err, meta.Clock, len(rows))
	}
	t0 := time.Date(2026, 12, 1, 2, 1, 0, 0, time.UTC).UnixMicro()
	for i, want := range []int64{3693, 4205, 4717} {
		g := rows[2*i]
		if g.TimeUs != t0+int64(i)*2e6 || *g.Used != want*MiB || g.PID != nil {
			t.Errorf("snapshot %d: %+v", i, g)
		}
	}
}

// A full "nvidia-smi -q" with its Processes section (written in the
// layout of the recorded -q -d MEMORY, with the process section nvidia-smi
// prints; values from the recording), two GPUs, and a MIG device's FB
// Memory Usage nested deeper, which is not the GPU's.
func TestSmiQProcesses(t *testing.T) {
	q := `==============NVSMI LOG==============

Timestamp                                              : Tue Dec  1 02:00:58 2026
Driver Version                                         : 580.159.04
CUDA Version                                           : 13.0

Attached GPUs                                          : 2
GPU 00000000:00:06.0
    Product Name                                       : NVIDIA H200
    GPU UUID                                           : GPU-ec9f5ca2-9eeb-1b06-4ea7-f3ec716ded8a
    MIG Devices
        MIG Device
            FB Memory Usage
                Total                                  : 16128 MiB
                Used                                   : 11 MiB
    FB Memory Usage
        Total                                          : 143771 MiB
        Reserved                                       : 616 MiB
        Used                                           : 3693 MiB
        Free                                           : 139464 MiB
    BAR1 Memory Usage
        Total                                          : 262144 MiB
        Used                                           : 3694 MiB
        Free                                           : 258450 MiB
    Processes
        GPU instance ID                                : N/A
        Compute instance ID                            : N/A
        Process ID                                     : 878
            Type                                       : C
            Name                                       : python3
            Used GPU Memory                            : 3684 MiB
GPU 00000000:00:07.0
    Product Name                                       : NVIDIA H200
    FB Memory Usage
        Total                                          : 143771 MiB
        Reserved                                       : 616 MiB
        Used                                           : 0 MiB
        Free                                           : 143156 MiB
    Processes                                          : None
`
	rows, meta, err := readRows(t, "q.txt", q)
	if err != nil || meta.Format != FormatNvidiaSmiText || len(rows) != 3 {
		t.Fatalf("%v: %s, %d rows %+v", err, meta.Format, len(rows), rows)
	}
	g0, p, g1 := rows[0], rows[1], rows[2]
	if *g0.GPU != 0 || *g0.Used != 3693*MiB || g0.UUID != "GPU-ec9f5ca2-9eeb-1b06-4ea7-f3ec716ded8a" || g0.GPUName != "NVIDIA H200" {
		t.Errorf("GPU 0 %+v", g0)
	}
	if *p.GPU != 0 || *p.PID != 878 || p.Process != "python3" || *p.Used != 3684*MiB {
		t.Errorf("process %+v", p)
	}
	if *g1.GPU != 1 || *g1.Used != 0 || *g1.Free != 143156*MiB {
		t.Errorf("GPU 1 %+v", g1)
	}
}

// aristocratos/bpytop#26: a --query-gpu paste with neither index nor uuid
// nor timestamp, of a GTX 1080 Ti and a GTX 1060, after a prompt running
// "time nvidia-smi ..." and followed by time's report. The two rows are
// two GPUs (nvidia-smi prints one row per GPU per tick, in index order),
// not one GPU that went from 2856 to 4 MiB.
func TestQueryGPUWithoutIndex(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_bpytop26_query_gpu_no_index.txt")
	want := []struct {
		name        string
		used, total int64
	}{{"GeForce GTX 1080 Ti", 2856, 11175}, {"GeForce GTX 1060 6GB", 4, 6078}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows %+v", len(rows), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.GPU == nil || *r.GPU != int32(i) || r.GPUName != w.name || *r.Used != w.used*MiB || *r.Total != w.total*MiB || r.TimeUs != rows[0].TimeUs {
			t.Errorf("row %d: %+v, want GPU %d %+v", i, r, i, w)
		}
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "no index or uuid column") {
		t.Errorf("warnings %q", meta.Warnings.Strings())
	}
	// With timestamps, the rows of one time are one tick, whatever the
	// GPUs' names: two H200s over three ticks are GPUs 0 and 1.
	in := "timestamp, name, memory.used [MiB], memory.total [MiB]\n"
	for _, ts := range []string{"10:00:00.000", "10:00:01.000", "10:00:02.000"} {
		in += "2026/12/01 " + ts + ", NVIDIA H200, 100 MiB, 143771 MiB\n2026/12/01 " + ts + ", NVIDIA H200, 900 MiB, 143771 MiB\n"
	}
	rows, _, err := readRows(t, "ts.csv", in)
	if err != nil || len(rows) != 6 {
		t.Fatalf("%v: %d rows", err, len(rows))
	}
	for i, r := range rows {
		if r.GPU == nil || *r.GPU != int32(i%2) || *r.Used != int64(100+800*(i%2))*MiB {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	// Without times, a row whose name and total repeat one of its tick
	// starts the next tick.
	in = "name, memory.used [MiB], memory.total [MiB]\n"
	for range 3 {
		in += "A, 1 MiB, 100 MiB\nB, 2 MiB, 200 MiB\n"
	}
	rows, _, err = readRows(t, "nots.csv", in)
	if err != nil || len(rows) != 6 {
		t.Fatalf("%v: %d rows", err, len(rows))
	}
	for i, r := range rows {
		if *r.GPU != int32(i%2) || r.TimeUs != int64(i/2)*1_000_000 {
			t.Errorf("row %d: GPU %d at %d", i, *r.GPU, r.TimeUs)
		}
	}
}

// Windows tables (testdata/README.md, field pastes): the first cell ends in
// the driver model (TCC/WDDM), not the persistence mode, so the name is
// what comes before it. Driver 537.34: "NVIDIA GeForce RTX 3060 Ti", 1489
// of 8192 MiB, no ctime line. Driver 512.78, indented by 4 spaces: the
// name cut to "NVIDIA GeForce ...", 3320 of 8192 MiB at the ctime line
// (2023-01-11 17:54:04, UTC by default), and six process rows (lines
// 19-24) whose memory is N/A: each a row of GPU 0 with its memory null
// (unknown, not 0), and a warning that counts them.
func TestSmiTextWindowsWDDM(t *testing.T) {
	rows, meta := readFile(t, tdata+"field/mineru_win_wddm_537_table.txt")
	if len(rows) != 1 || rows[0].GPUName != "NVIDIA GeForce RTX 3060 Ti" || *rows[0].Used != 1489*MiB || *rows[0].Total != 8192*MiB {
		t.Errorf("537: %+v", rows)
	}
	// The paste stops at the GPU box's border (line 11), before the
	// Processes box: read in part (session 42).
	if w := meta.Warnings.Strings(); len(w) != 1 || !strings.HasPrefix(w[0], "line 11: the nvidia-smi table ends at line 11 before its Processes box") {
		t.Errorf("537: warnings %q", w)
	}
	rows, meta = readFile(t, tdata+"field/cadesign_win_wddm_512_table_indented.txt")
	if len(rows) != 7 || rows[0].GPUName != "NVIDIA GeForce ..." || *rows[0].Used != 3320*MiB || *rows[0].Total != 8192*MiB ||
		rows[0].TimeUs != utc(2023, 1, 11, 17, 54, 4, 0) {
		t.Errorf("512: %+v", rows)
	}
	for _, r := range rows[1:] {
		if r.PID == nil || r.Used != nil || r.GPU == nil || *r.GPU != 0 {
			t.Errorf("512: process row %+v, want a pid on GPU 0 with used null", r)
		}
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "6 processes listed (the first at line 19) show their GPU memory as N/A") || !strings.Contains(w, "WDDM") {
		t.Errorf("512: warnings %q", w)
	}
}

// A TCC GPU's row, and an N/A process row where no GPU row says WDDM: the
// warning gives WDDM only as an example of why. The N/A process is a row
// with its memory null (unknown, not 0).
func TestSmiTextTCCAndNAProcess(t *testing.T) {
	in := "+------+\n| NVIDIA-SMI 472.12  Driver Version: 472.12  CUDA Version: 11.4 |\n+------+\n" +
		"|   0  Tesla T4            TCC  | 00000000:01:00.0 Off |                    0 |\n" +
		"| N/A   40C    P8    10W /  70W |    100MiB / 15360MiB |      0%      Default |\n" +
		"+------+\n| Processes: |\n|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n" +
		"|    0   N/A  N/A      4242      C   python.exe                    N/A      |\n" +
		"|    0   N/A  N/A      4243      C   train.exe                      90MiB   |\n+------+\n"
	rows, meta, err := readRows(t, "tcc.txt", in)
	if err != nil || len(rows) != 3 || rows[0].GPUName != "Tesla T4" || *rows[0].Used != 100*MiB ||
		*rows[1].PID != 4242 || rows[1].Used != nil || *rows[2].PID != 4243 || *rows[2].Used != 90*MiB {
		t.Fatalf("%v: %+v", err, rows)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "1 process listed (at line 9) shows its GPU memory as N/A (pid 4242)") || !strings.Contains(w, "as under Windows' WDDM") {
		t.Errorf("warnings %q", w)
	}
}

// nvidia-smi cuts a cell too long for its column with "...": on the
// tester's H200 (s31, driver 580) the long name of pid 571 pushed its
// memory to "12339..." (it held 120.51 GiB, the OOM message says). The
// process is kept, name as shown and memory unknown (nil, not 0), with a
// warning naming its line; pid 542's whole row reads as before (11060
// MiB). The other cut forms, a memory cut to "..." alone and a unicode
// ellipsis, are kept the same way.
func TestSmiTextCutMemory(t *testing.T) {
	rows, meta := readFile(t, tdata+"s31_nvidia_smi_truncated_proc.txt")
	if len(rows) != 3 || *rows[1].PID != 542 || *rows[1].Used != 11060*MiB || *rows[2].PID != 571 || rows[2].Used != nil || rows[2].Process != "/opt/torch/.venv/bin/python3" {
		t.Fatalf("%+v", rows)
	}
	if w := meta.Warnings.Strings(); len(w) != 1 || !strings.Contains(w[0], `line 20: pid 571's memory "12339..." is cut by nvidia-smi`) || meta.Cut != "" {
		t.Errorf("warnings %q", w)
	}
	for _, cell := range []string{"...", "12339…"} {
		in := "+------+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n+------+\n" +
			"|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |\n" +
			"| N/A   42C    P0            127W /  700W |  134473MiB / 143771MiB |      5%      Default |\n" +
			"| Processes:                                                                              |\n" +
			"|    0   N/A  N/A             571      C   /opt/torch/.venv/bin/python3          " + cell + " |\n"
		rows, meta, err := readRows(t, "c.txt", in)
		// Two warnings: the cut memory, and the box without its bottom
		// border (session 42).
		if err != nil || len(rows) != 2 || *rows[1].PID != 571 || rows[1].Used != nil || len(meta.Warnings.Strings()) != 2 || meta.Cut == "" {
			t.Errorf("%q: %v %+v %q", cell, err, rows, meta.Warnings.Strings())
		}
	}
}

// A GPU's two-line box with one cell cut (s32: the tester's cut_total and
// cut_used, made from s31's table): the row is there, so the GPU is kept
// with what is whole and the rest unknown (nil, not 0), and a warning
// names the line and what is cut; never "the used / total MiB row is
// missing". The neighbours of the fault: a line that stops inside the
// memory cell or before it, GB10's "Not Supported", a name cut (by
// nvidia-smi, or by the paste inside the first cell), a cut bus id or
// utilisation cell (not read: no warning).
func TestSmiTextCutGPUCells(t *testing.T) {
	b, err := os.ReadFile(tdata + "s31_nvidia_smi_truncated_proc.txt")
	if err != nil {
		t.Fatal(err)
	}
	base := string(b)
	const row1 = "|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |"
	const row2 = "| N/A   42C    P0            127W /  700W |  134473MiB / 143771MiB |      5%      Default |"
	if !strings.Contains(base, row1+"\n"+row2+"\n") {
		t.Fatal("s31's GPU rows changed")
	}
	n := func(v int64) *int64 { return &v }
	tests := []struct {
		name, row1, row2 string
		used, total      *int64 // MiB; nil: unknown
		gpuName          string
		warn             string // in the warning of line 9 or 10; "" none
	}{
		{"cut_total", row1, "| N/A   42C    P0            127W /  700W |  134473MiB / 1437... |      5%      Default |",
			n(134473), nil, "NVIDIA H200", `line 10: GPU 0's memory cell is cut ("134473MiB / 1437..."): its used memory, 134473 MiB, is read; its total is unknown`},
		{"cut_used", row1, "| N/A   42C    P0            127W /  700W |  1344...   / 143771MiB |      5%      Default |",
			nil, n(143771), "NVIDIA H200", `line 10: GPU 0's memory cell is cut ("1344...   / 143771MiB"): its used memory is unknown (not 0) in this output; its total is 143771 MiB`},
		{"both cut", row1, "| N/A   42C    P0            127W /  700W |  1344...   / 1437...   |      5%      Default |",
			nil, nil, "NVIDIA H200", `line 10: GPU 0's memory cell is cut ("1344...   / 1437..."): its used and total memory are unknown`},
		{"unicode ellipsis", row1, "| N/A   42C    P0            127W /  700W |  134473MiB / 1437…   |      5%      Default |",
			n(134473), nil, "NVIDIA H200", `its used memory, 134473 MiB, is read; its total is unknown`},
		{"unit cut", row1, "| N/A   42C    P0            127W /  700W |  134473MiB / 143771M... |      5%      Default |",
			n(134473), n(143771), "NVIDIA H200", `its figures are whole: 134473 MiB used of 143771 MiB`},
		{"line stops in the total", row1, "| N/A   42C    P0            127W /  700W |  134473MiB / 1437",
			n(134473), nil, "NVIDIA H200", `line 10: GPU 0's memory cell is cut ("134473MiB / 1437"): its used memory, 134473 MiB, is read`},
		{"line stops in the used", row1, "| N/A   42C    P0            127W /  700W |  1344",
			nil, nil, "NVIDIA H200", `line 10: GPU 0's memory cell is cut ("1344"): its used and total memory are unknown`},
		{"line stops before the memory", row1, "| N/A   42C    P0            127W /  7",
			nil, nil, "NVIDIA H200", `line 10: GPU 0's second row is cut short before its memory cell`},
		{"line stops at the memory", row1, "| N/A   42C    P0            127W /  700W |",
			nil, nil, "NVIDIA H200", `line 10: GPU 0's second row is cut short before its memory cell`},
		{"utilisation cut", row1, "| N/A   42C    P0            127W /  700W |  134473MiB / 143771MiB |      5",
			n(134473), n(143771), "NVIDIA H200", ""},
		{"bus id cut", "|   0  NVIDIA H200                    On  |   00000000:0... |                    0 |", row2,
			n(134473), n(143771), "NVIDIA H200", ""},
		{"line stops in the bus id", "|   0  NVIDIA H200                    On  |   00000000:0", row2,
			n(134473), n(143771), "NVIDIA H200", ""},
		{"name cut by nvidia-smi", "|   0  NVIDIA H2...                 |   00000000:00:06.0 Off |                    0 |", row2,
			n(134473), n(143771), "NVIDIA H2...", ""},
		{"line stops in the name", "|   0  NVIDIA H2", row2,
			n(134473), n(143771), "NVIDIA H2", `line 9: GPU 0's first row is cut short ("|   0  NVIDIA H2"): its name is read as "NVIDIA H2"`},
	}
	for _, tt := range tests {
		in := strings.Replace(base, row1+"\n"+row2+"\n", tt.row1+"\n"+tt.row2+"\n", 1)
		rows, meta, err := readRows(t, "c.txt", in)
		if err != nil || len(rows) != 3 || meta.Instants != 1 {
			t.Errorf("%s: %v, %d instants, %+v", tt.name, err, meta.Instants, rows)
			continue
		}
		g := rows[0]
		mib := func(p *int64) *int64 {
			if p == nil {
				return nil
			}
			v := *p / MiB
			return &v
		}
		if *g.GPU != 0 || g.PID != nil || g.GPUName != tt.gpuName || !sameInt(mib(g.Used), tt.used) || !sameInt(mib(g.Total), tt.total) {
			t.Errorf("%s: GPU row %+v (used %v, total %v MiB)", tt.name, g, show(mib(g.Used)), show(mib(g.Total)))
		}
		if *rows[1].PID != 542 || *rows[1].Used != 11060*MiB || *rows[2].PID != 571 || rows[2].Used != nil {
			t.Errorf("%s: process rows %+v", tt.name, rows[1:])
		}
		var ours []string // the warnings besides s31's on pid 571
		for _, w := range meta.Warnings.Strings() {
			if !strings.Contains(w, "pid 571") {
				ours = append(ours, w)
			}
		}
		switch {
		case tt.warn == "" && len(ours) > 0:
			t.Errorf("%s: warnings %q, want none", tt.name, ours)
		case tt.warn != "" && (len(ours) != 1 || !strings.Contains(ours[0], tt.warn)):
			t.Errorf("%s: warnings %q, want one with %q", tt.name, ours, tt.warn)
		case tt.warn != "" && strings.Contains(ours[0], "missing"):
			t.Errorf("%s: %q calls the row missing", tt.name, ours[0])
		}
	}
}

func sameInt(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// DGX Spark's GB10 (unified memory) prints "Not Supported" in the memory
// cell (driver 580.95.05, NVIDIA/k8s-device-plugin#1482): the GPU is kept
// with its memory unknown, its processes are read, and the warning says
// what the cell reads rather than calling the table cut, and why: the
// GPU has unified memory.
func TestSmiTextMemoryNotSupported(t *testing.T) {
	in := "Mon Oct 27 10:00:00 2025\n" +
		"+-----------------------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |\n" +
		"+-----------------------------------------+------------------------+----------------------+\n" +
		"| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n" +
		"| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n" +
		"|                                         |                        |               MIG M. |\n" +
		"|=========================================+========================+======================|\n" +
		"|   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |\n" +
		"| N/A   40C    P8              4W /  N/A  | Not Supported          |      0%      Default |\n" +
		"|                                         |                        |                  N/A |\n" +
		"+-----------------------------------------+------------------------+----------------------+\n" +
		"| Processes:                                                                              |\n" +
		"|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n" +
		"|        ID   ID                                                               Usage      |\n" +
		"|=========================================================================================|\n" +
		"|    0   N/A  N/A            4242      C   python3                               63931MiB |\n" +
		"+-----------------------------------------------------------------------------------------+\n"
	rows, meta, err := readRows(t, "gb10.txt", in)
	if err != nil || len(rows) != 2 || rows[0].Used != nil || rows[0].Total != nil || rows[0].GPUName != "NVIDIA GB10" || *rows[1].Used != 63931*MiB {
		t.Fatalf("%v: %+v", err, rows)
	}
	// The second warning says why, as the error of a log without the
	// processes does (TestUnifiedMemoryAcrossLayouts).
	if w := meta.Warnings.Strings(); len(w) != 2 || !strings.Contains(w[0], `line 10: GPU 0's memory cell reads "Not Supported"`) || strings.Contains(w[0], "cut") ||
		!strings.Contains(w[1], "the NVIDIA GB10 has unified memory") || !strings.Contains(w[1], "its processes' memory is read") {
		t.Errorf("warnings %q", w)
	}

}

// Several tables, each one sampling instant whatever its GPUs and
// processes: the s32 tester's four tables of one GPU and two processes
// are 4 instants (12 rows), and two tables with the same ctime are two.
func TestSmiTextInstants(t *testing.T) {
	b, err := os.ReadFile(tdata + "s31_nvidia_smi_truncated_proc.txt")
	if err != nil {
		t.Fatal(err)
	}
	one := string(b)
	var four strings.Builder
	for i := 0; i < 4; i++ {
		four.WriteString(strings.Replace(one, "08:59:58", fmt.Sprintf("09:0%d:58", i), 1))
	}
	for _, tt := range []struct {
		name           string
		in             string
		rows, instants int64
	}{
		{"one", one, 3, 1},
		{"four", four.String(), 12, 4},
		{"same ctime", one + one, 6, 2},
	} {
		rows, meta, err := readRows(t, tt.name, tt.in)
		if err != nil || int64(len(rows)) != tt.rows || meta.Rows != tt.rows || meta.Instants != tt.instants {
			t.Errorf("%s: %v, %d rows (meta %d), %d instants; want %d rows, %d instants", tt.name, err, len(rows), meta.Rows, meta.Instants, tt.rows, tt.instants)
		}
	}
}

// TestSmiTextProcessesListed: a table whose Processes box is read whole,
// rows or none, records its time; one with a row not read does not. A row
// whose memory is N/A (WDDM, vGPU, some containers) still lists its
// process: the box lists every process nvidia-smi saw, one of them with
// its memory unknown.
func TestSmiTextProcessesListed(t *testing.T) {
	table := func(rows ...string) string {
		s := "+-----------------------------------------------------------------------------+\n" +
			"| NVIDIA-SMI 410.48                 Driver Version: 410.48                    |\n" +
			"|-------------------------------+----------------------+----------------------+\n" +
			"| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n" +
			"| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n" +
			"|===============================+======================+======================|\n" +
			"|   0  Tesla P100-SXM2...  Off  | 00000000:05:00.0 Off |                    0 |\n" +
			"| N/A   36C    P0    41W / 300W |  12799MiB / 16280MiB |      0%      Default |\n" +
			"+-------------------------------+----------------------+----------------------+\n" +
			"\n" +
			"+-----------------------------------------------------------------------------+\n" +
			"| Processes:                                                       GPU Memory |\n" +
			"|  GPU       PID   Type   Process name                             Usage      |\n" +
			"|=============================================================================|\n"
		for _, r := range rows {
			s += r + "\n"
		}
		return s + "+-----------------------------------------------------------------------------+\n"
	}
	for _, c := range []struct {
		name, in string
		listed   int
	}{
		{"empty", table(), 1},
		{"no running", table("|  No running processes found                                                 |"), 1},
		{"one row", table("|    0     12345      C   python                                        20MiB |"), 1},
		{"N/A row", table("|    0     12345      C   python                                        N/A   |"), 1},
		{"row not read", table("|  something else                                                             |"), 0},
		{"box not closed", strings.TrimSuffix(table(), "+-----------------------------------------------------------------------------+\n"), 0},
	} {
		_, meta, err := readRows(t, "t.txt", c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(meta.ProcessesListedUs) != c.listed {
			t.Errorf("%s: ProcessesListedUs = %v, want %d", c.name, meta.ProcessesListedUs, c.listed)
		}
	}
}

// TestSmiTextNAProcessKept: s35's table of four GPUs whose two process
// rows show their memory as N/A (/work/hunt/s35/smi/na.txt, kept as
// testdata/nvml/s35_nvidia_smi_na_procs.txt). Each process is a row of its
// GPU with its memory null (unknown, never 0), the box still lists every
// process (its time recorded: GPU 3, without a row, has none listed), and
// a warning names the N/A rows.
func TestSmiTextNAProcessKept(t *testing.T) {
	rows, meta := readFile(t, tdata+"s35_nvidia_smi_na_procs.txt")
	// 4 GPU rows + 2 process rows.
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	want := map[int64]int32{12345: 0, 12346: 2}
	for _, r := range rows {
		if r.PID == nil {
			if r.Used == nil {
				t.Errorf("GPU %d: used null", *r.GPU)
			}
			continue
		}
		g, ok := want[*r.PID]
		if !ok || r.GPU == nil || *r.GPU != g {
			t.Errorf("pid %d on GPU %v, want GPU %d", *r.PID, r.GPU, g)
		}
		if r.Used != nil {
			t.Errorf("pid %d: used %d, want null (N/A is unknown, not 0)", *r.PID, *r.Used)
		}
		if r.Process != "python" {
			t.Errorf("pid %d: process %q", *r.PID, r.Process)
		}
		delete(want, *r.PID)
	}
	if len(want) != 0 {
		t.Errorf("missing pids %v", want)
	}
	if len(meta.ProcessesListedUs) != 1 {
		t.Errorf("ProcessesListedUs = %v, want the table's time", meta.ProcessesListedUs)
	}
	if !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "2 processes listed (the first at line 31) show their GPU memory as N/A (pids 12345, 12346)") {
		t.Errorf("warnings %q", meta.Warnings.Strings())
	}
}

// TestSmiQProcessesListed: "nvidia-smi -q" says per GPU whether it saw a
// process. The H100 NVL report of thamada/nvidia-smi (two GPUs, each
// "Processes : None"; testdata/README.md) lists them all: its time is
// recorded, as a table's empty Processes box is. "-q -d MEMORY" (the gnome
// applet paste, no Processes section) says nothing: no time. A process
// whose "Used GPU Memory" is N/A is a row with its memory null; a list cut
// before a process's memory line is not whole.
func TestSmiQProcessesListed(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/thamada_h100nvl_q_processes_none.txt")
	// Two GPUs, 0 MiB used each (FB Memory Usage: Used 0 MiB).
	if len(rows) != 2 || rows[0].Used == nil || *rows[0].Used != 0 {
		t.Fatalf("rows %+v", rows)
	}
	// Timestamp : Thu Nov 14 15:35:07 2024, read as UTC.
	at := time.Date(2024, 11, 14, 15, 35, 7, 0, time.UTC).UnixMicro()
	if len(meta.ProcessesListedUs) != 1 || meta.ProcessesListedUs[0] != at {
		t.Errorf("ProcessesListedUs = %v, want [%d]", meta.ProcessesListedUs, at)
	}
	_, meta = readFile(t, fixtures+"field/gnomeapplet356_q_d_memory_2017.txt")
	if len(meta.ProcessesListedUs) != 0 {
		t.Errorf("-q -d MEMORY: ProcessesListedUs = %v, want none (no Processes section: not known)", meta.ProcessesListedUs)
	}

	q := func(procs string) string {
		return "==============NVSMI LOG==============\n\n" +
			"Timestamp                                 : Thu Nov 14 15:35:07 2024\n" +
			"Driver Version                            : 550.54.14\n\n" +
			"Attached GPUs                             : 1\n" +
			"GPU 00000000:AD:00.0\n" +
			"    Product Name                          : NVIDIA H100 NVL\n" +
			"    FB Memory Usage\n" +
			"        Total                             : 95830 MiB\n" +
			"        Reserved                          : 594 MiB\n" +
			"        Used                              : 20000 MiB\n" +
			"        Free                              : 75235 MiB\n" +
			"    Compute Mode                          : Default\n" + procs
	}
	proc := func(pid, mem string) string {
		return "        GPU instance ID                   : N/A\n" +
			"        Compute instance ID               : N/A\n" +
			"        Process ID                        : " + pid + "\n" +
			"            Type                          : C\n" +
			"            Name                          : python\n" +
			mem
	}
	used := func(v string) string { return "            Used GPU Memory               : " + v + "\n" }
	for _, c := range []struct {
		name, in string
		listed   int
		// procs: pid -> used MiB, -1 for null (unknown).
		procs map[int64]int64
	}{
		{"none", q("    Processes                             : None\n"), 1, map[int64]int64{}},
		{"one", q("    Processes\n" + proc("4242", used("19990 MiB"))), 1, map[int64]int64{4242: 19990}},
		{"N/A", q("    Processes\n" + proc("4242", used("N/A"))), 1, map[int64]int64{4242: -1}},
		// Followed by another GPU-level section: still whole.
		{"then capabilities", q("    Processes\n" + proc("4242", used("19990 MiB")) + "    Capabilities\n        EGM                               : disabled\n"), 1, map[int64]int64{4242: 19990}},
		// The first process has no memory line: the list is not whole.
		{"cut", q("    Processes\n" + proc("4242", "") + proc("4243", used("10 MiB"))), 0, map[int64]int64{4243: 10}},
		// Ends inside the last process: not whole.
		{"cut at end", q("    Processes\n" + proc("4242", "")), 0, map[int64]int64{}},
		{"no section", q(""), 0, map[int64]int64{}},
	} {
		rows, meta, err := readRows(t, "q.txt", c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(meta.ProcessesListedUs) != c.listed {
			t.Errorf("%s: ProcessesListedUs = %v, want %d", c.name, meta.ProcessesListedUs, c.listed)
		}
		got := map[int64]int64{}
		for _, r := range rows {
			if r.PID == nil {
				continue
			}
			got[*r.PID] = -1
			if r.Used != nil {
				got[*r.PID] = *r.Used / MiB
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.procs) {
			t.Errorf("%s: processes %v, want %v", c.name, got, c.procs)
		}
	}
}
