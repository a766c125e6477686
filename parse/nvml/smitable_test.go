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
// A100's memory cell stops at "0MiB / 81920Mi") reads the GPU before it
// and names the one it cannot read, rather than show one GPU as the whole
// table; a Processes box cut before its rows (pytorch#910) says its
// processes are not read.
func TestSmiTextCutRowsWarn(t *testing.T) {
	rows, meta := readFile(t, tdata+"pub_gpuoperator348_cut_gpu_row.txt")
	at := time.Date(2022, 4, 26, 15, 29, 49, 0, time.UTC).UnixMicro()
	if len(rows) != 1 || rows[0].TimeUs != at || *rows[0].GPU != 0 || *rows[0].Used != 0 || *rows[0].Total != 81920*MiB {
		t.Fatalf("gpu-operator#348: %+v", rows)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 16:") || !strings.Contains(w, "GPU 1 is not read") {
		t.Errorf("gpu-operator#348 warnings %q: want line 16 and GPU 1 named", meta.Warnings.Strings())
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
// 19-24) whose memory is N/A: no sample, but a warning that counts them.
func TestSmiTextWindowsWDDM(t *testing.T) {
	rows, meta := readFile(t, tdata+"field/mineru_win_wddm_537_table.txt")
	if len(rows) != 1 || rows[0].GPUName != "NVIDIA GeForce RTX 3060 Ti" || *rows[0].Used != 1489*MiB || *rows[0].Total != 8192*MiB {
		t.Errorf("537: %+v", rows)
	}
	if meta.Warnings.Len() != 0 {
		t.Errorf("537: warnings %q", meta.Warnings.Strings())
	}
	rows, meta = readFile(t, tdata+"field/cadesign_win_wddm_512_table_indented.txt")
	if len(rows) != 1 || rows[0].GPUName != "NVIDIA GeForce ..." || *rows[0].Used != 3320*MiB || *rows[0].Total != 8192*MiB ||
		rows[0].TimeUs != utc(2023, 1, 11, 17, 54, 4, 0) {
		t.Errorf("512: %+v", rows)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "6 process rows of the Processes box (the first at line 19) show their GPU memory as N/A") || !strings.Contains(w, "WDDM") {
		t.Errorf("512: warnings %q", w)
	}
}

// A TCC GPU's row, and an N/A process row where no GPU row says WDDM: the
// warning gives WDDM only as an example of why.
func TestSmiTextTCCAndNAProcess(t *testing.T) {
	in := "+------+\n| NVIDIA-SMI 472.12  Driver Version: 472.12  CUDA Version: 11.4 |\n+------+\n" +
		"|   0  Tesla T4            TCC  | 00000000:01:00.0 Off |                    0 |\n" +
		"| N/A   40C    P8    10W /  70W |    100MiB / 15360MiB |      0%      Default |\n" +
		"+------+\n| Processes: |\n|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n" +
		"|    0   N/A  N/A      4242      C   python.exe                    N/A      |\n" +
		"|    0   N/A  N/A      4243      C   train.exe                      90MiB   |\n+------+\n"
	rows, meta, err := readRows(t, "tcc.txt", in)
	if err != nil || len(rows) != 2 || rows[0].GPUName != "Tesla T4" || *rows[0].Used != 100*MiB || *rows[1].PID != 4243 || *rows[1].Used != 90*MiB {
		t.Fatalf("%v: %+v", err, rows)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "1 process rows of the Processes box (the first at line 9)") || !strings.Contains(w, "as under Windows' WDDM") {
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
	if w := meta.Warnings.Strings(); len(w) != 1 || !strings.Contains(w[0], `line 20: pid 571's memory "12339..." is cut by nvidia-smi`) {
		t.Errorf("warnings %q", w)
	}
	for _, cell := range []string{"...", "12339…"} {
		in := "+------+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n+------+\n" +
			"|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |\n" +
			"| N/A   42C    P0            127W /  700W |  134473MiB / 143771MiB |      5%      Default |\n" +
			"| Processes:                                                                              |\n" +
			"|    0   N/A  N/A             571      C   /opt/torch/.venv/bin/python3          " + cell + " |\n"
		rows, meta, err := readRows(t, "c.txt", in)
		if err != nil || len(rows) != 2 || *rows[1].PID != 571 || rows[1].Used != nil || len(meta.Warnings.Strings()) != 1 {
			t.Errorf("%q: %v %+v %q", cell, err, rows, meta.Warnings.Strings())
		}
	}
}
