package nvml

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// omniopt_gpu_usage_a100_noheader_busid.csv (testdata/README.md): three
// A100s logged without index or uuid, each row with its pci.bus_id, the
// rows of each tick in another order (3B, 8B, 0B; then 8B, 0B, 3B; then
// 8B, 3B). The old code numbered the GPUs by their row's place in the
// tick, so "GPU 0" read 4 MiB of bus 3B, then 38803 MiB of 8B, then
// 39671 MiB of 8B. A bus id names a GPU: each keeps its number.
func TestF48n1BusIDNamesTheGPU(t *testing.T) {
	fields := WithFields(strings.Split("timestamp,name,pci.bus_id,driver_version,pstate,pcie.link.gen.max,pcie.link.gen.current,temperature.gpu,utilization.gpu,utilization.memory,memory.total,memory.free,memory.used", ","))
	rows, meta := readFile(t, fixtures+"omniopt_gpu_usage_a100_noheader_busid.csv", fields)
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8", len(rows))
	}
	used := map[int32][]int64{}
	for _, r := range rows {
		if r.GPU == nil || r.Used == nil {
			t.Fatalf("row without GPU or used memory: %+v", r)
		}
		used[*r.GPU] = append(used[*r.GPU], *r.Used>>20)
	}
	// In the order the bus ids first appear: 3B, 8B, 0B.
	want := map[int32][]int64{0: {4, 38803, 39427}, 1: {4, 38803, 39671}, 2: {4, 38803}}
	for g, w := range want {
		if got := used[g]; fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("GPU %d: %v MiB, want %v", g, got, w)
		}
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "pci.bus_id") || !strings.Contains(ws, "GPU 0 is 00000000:3B:00.0") || !strings.Contains(ws, "GPU 2 is 00000000:0B:00.0") {
		t.Errorf("warnings %q; want one naming each number's bus id", ws)
	}
	if strings.Contains(ws, "place of their row") || strings.Contains(ws, "last tick") {
		t.Errorf("warnings %q: GPUs told apart by bus id are not told apart by place", ws)
	}
}

// cnnotes_lms_query_gpu_nospace_prompt_a10.txt (testdata/README.md): one
// A10 logged with nvidia-smi -lms, five rows a few ms apart, read as a
// tick of 4 GPUs then one row. The README promises a warning naming the
// line where ticks stop having the same number of rows; the old code
// said it only when a tick of another size had ended, never for the last
// one. (The paste's prompt, "$nvidia-smi", without a space, is left out:
// its recognition is another matter.)
func TestF48n1LastTickShort(t *testing.T) {
	b, err := os.ReadFile(fixtures + "cnnotes_lms_query_gpu_nospace_prompt_a10.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	in := strings.Join(lines[2:8], "\n") + "\n" // the header and its 5 rows
	rows, meta, err := readRows(t, "cn.csv", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "line 6: ") || !strings.Contains(ws, "last tick, from this line, has 1 row where the first had 4") {
		t.Errorf("warnings %q; want one naming line 6, where the last tick (1 row) starts", ws)
	}
}

// vllm_notes_watch_i2_a100_595.txt and pytorch_notes_watch_titanxp_455_xorg.md
// (testdata/README.md): whole tables saved from watch nvidia-smi, whose
// header ("Every 1.0s: nvidia-smi -i 2   dg05: Tue Oct  6 17:07:38 2026")
// comes before nvidia-smi's own ctime line. The old code started an output
// at each, so the first had no rows and every such paste was read in part
// ("the nvidia-smi output from line 7 stops at line 7, before its GPU
// rows").
func TestF48n1WatchHeaderThenCtimeIsOneOutput(t *testing.T) {
	for _, tt := range []struct {
		file      string
		rows      int
		gpu, proc int64 // used MiB of the GPU row and of the first process
	}{
		{"vllm_notes_watch_i2_a100_595.txt", 2, 74143, 74134},
		{"pytorch_notes_watch_titanxp_455_xorg.md", 4, 204, 45},
	} {
		rows, meta := readFile(t, fixtures+tt.file)
		if meta.Cut != "" || meta.Instants != 1 || len(rows) != tt.rows {
			t.Errorf("%s: %d rows, %d instants, cut %q; want %d rows of 1 output, not cut", tt.file, len(rows), meta.Instants, meta.Cut, tt.rows)
			continue
		}
		ws := strings.Join(meta.Warnings.Strings(), "\n")
		if strings.Contains(ws, "before its GPU rows") {
			t.Errorf("%s: warnings %q", tt.file, ws)
		}
		if rows[0].PID != nil || rows[0].Used == nil || *rows[0].Used>>20 != tt.gpu {
			t.Errorf("%s: first row %+v; want the GPU's, %d MiB", tt.file, rows[0], tt.gpu)
		}
		if rows[1].PID == nil || rows[1].Used == nil || *rows[1].Used>>20 != tt.proc {
			t.Errorf("%s: second row %+v; want a process of %d MiB", tt.file, rows[1], tt.proc)
		}
	}
}

// cnnotes_dmon_TD_blank_line_fb_churn.txt (testdata/README.md): the command
// "nvidia-smi dmon -i 0 -s mutc -d 1 -o TD", then its rows, each with its
// date and time. The old code warned that "rows without times are placed
// 1s apart" from the command on: no row was.
func TestF48n1PeriodNoteOnlyForRowsWithoutTimes(t *testing.T) {
	rows, meta := readFile(t, fixtures+"cnnotes_dmon_TD_blank_line_fb_churn.txt")
	if len(rows) != 6 || meta.Clock != ClockAbsolute {
		t.Fatalf("%d rows, clock %v; want 6 with their times", len(rows), meta.Clock)
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); strings.Contains(ws, "rows without times") {
		t.Errorf("warnings %q: every row has its time", ws)
	}
	// The same rows without their Date and Time columns are placed by the
	// command's period, and said to be.
	in := "$ nvidia-smi dmon -s m -d 5\n# gpu    fb   bar1\n# Idx    MB     MB\n    0   239      3\n    0    74     10\n"
	_, meta, err := readRows(t, "dmon.txt", in)
	if err != nil {
		t.Fatal(err)
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(ws, "placed 5s apart") {
		t.Errorf("warnings %q; want the command's period said", ws)
	}
}

// openmm2386_k80_410_lspci_before.txt (testdata/README.md): a Tesla K80
// table whose Processes box says "No running processes found", the paste
// ending inside the box's bottom border ("+-----------------------------");
// vgpusched7_v100_440_box_unclosed_then_prose.txt: a V100's box saying the
// same, then a blank line and prose, no border at all. Either box listed
// every process (none: nvidia-smi's one row then); the old code warned
// that they were cut and read the tables in part.
func TestF48n1ProcessesBoxBorderCut(t *testing.T) {
	for _, tt := range []struct {
		file        string
		used, total int64
	}{
		{"openmm2386_k80_410_lspci_before.txt", 0, 11441},
		{"vgpusched7_v100_440_box_unclosed_then_prose.txt", 112, 16160},
	} {
		rows, meta := readFile(t, fixtures+tt.file)
		if len(rows) != 1 || rows[0].Used == nil || *rows[0].Used != tt.used*MiB || rows[0].Total == nil || *rows[0].Total != tt.total*MiB {
			t.Errorf("%s: rows %+v; want GPU 0 at %d of %d MiB", tt.file, rows, tt.used, tt.total)
			continue
		}
		if meta.Cut != "" || len(meta.ProcessesPartialUs) != 0 || len(meta.ProcessesListedUs) != 1 {
			t.Errorf("%s: cut %q, processes partial %v, listed %v; want whole, its box listing every process", tt.file, meta.Cut, meta.ProcessesPartialUs, meta.ProcessesListedUs)
		}
		if ws := strings.Join(meta.Warnings.Strings(), "\n"); strings.Contains(ws, "Processes box") {
			t.Errorf("%s: warnings %q", tt.file, ws)
		}
	}
}

// oe4t17_orin_540_driver_na.txt (testdata/README.md, OE4T/linux-tegra-5.10#17):
// a Jetson Orin's nvidia-smi table, "Orin (nvgpu)", its memory cell Not
// Supported. The old error advised --query-compute-apps, which GB10's
// driver answers and the Orin's (nvgpu) does not: its own tools
// (tegrastats, jtop) tell. The error counted its one GPU row as "1
// samples read".
func TestF48n1OrinAdvice(t *testing.T) {
	b, err := os.ReadFile(fixtures + "oe4t17_orin_540_driver_na.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readRows(t, "orin.txt", string(b))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"(1 row read)", "the Orin (nvgpu) has unified memory", "tegrastats"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "--query-compute-apps") {
		t.Errorf("error advises --query-compute-apps: %s", msg)
	}
}

// gpustat18_v04_no_driver_prompt_percent.txt (testdata/README.md,
// wookayin/gpustat#18): gpustat 0.4's header, "feline  Sun Aug 13 15:45:59
// 2017", has no driver version after the time. The old code knew the
// header by the version alone, so the GPU lost its host and its time.
func TestF48n1GpustatHeaderWithoutDriver(t *testing.T) {
	rows, meta := readFile(t, fixtures+"gpustat18_v04_no_driver_prompt_percent.txt")
	want := time.Date(2017, 8, 13, 15, 45, 59, 0, time.UTC).UnixMicro()
	if len(rows) != 1 || rows[0].Host != "feline" || rows[0].TimeUs != want || meta.Clock != ClockAbsolute {
		t.Fatalf("rows %+v, clock %v; want GPU 0 of feline at 2017-08-13 15:45:59", rows, meta.Clock)
	}
	if rows[0].Used == nil || *rows[0].Used != 213*MiB {
		t.Errorf("used %v; want 213 MiB", rows[0].Used)
	}
}

// gpustat_test_default_user_only.txt (testdata/README.md, gpustat's own
// test of its default output): each GPU's processes by user alone,
// "user1(4000M) user2(4000M)", without pids, so no process series can be
// made of them. The old code dropped them without a word.
func TestF48n1GpustatUsersWithoutPIDs(t *testing.T) {
	rows, meta := readFile(t, fixtures+"gpustat_test_default_user_only.txt")
	if len(rows) != 3 {
		t.Fatalf("%d rows, want the 3 GPUs", len(rows))
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, `line 1: gpustat lists processes without their pids ("user1(4000M)"`) || !strings.Contains(ws, "gpustat -p") {
		t.Errorf("warnings %q; want one naming line 1, the entry and gpustat -p", ws)
	}
	// With pids, no such warning.
	_, meta, err := readRows(t, "p.txt", "[0] GeForce GTX TITAN 0 | 80'C,  76 % |  8000 / 12287 MB | user1:python/48448(4000M)\n")
	if err != nil {
		t.Fatal(err)
	}
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); strings.Contains(ws, "without their pids") {
		t.Errorf("warnings %q", ws)
	}
}
