package nvml

import (
	"os"
	"strings"
	"testing"
	"time"
)

// gpuWant is what a correct reading of one GPU of a pasted table gives:
// used and total in MiB, total -1 where the paste cut it (null, not 0).
type gpuWant struct {
	gpu         int32
	name        string
	used, total int64
}

// checkGPUs asserts that rows are the GPUs of want, in any order, at time
// at (0: not checked), and no other row.
func checkGPUs(t *testing.T, file string, rows []row, at int64, want []gpuWant) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%s: %d rows, want %d: %+v", file, len(rows), len(want), rows)
	}
	for _, w := range want {
		found := false
		for _, r := range rows {
			if r.GPU == nil || *r.GPU != w.gpu || r.PID != nil {
				continue
			}
			found = true
			if r.GPUName != w.name || r.Used == nil || *r.Used != w.used*MiB {
				t.Errorf("%s GPU %d: %+v, want %q at %d MiB", file, w.gpu, r, w.name, w.used)
			}
			switch {
			case w.total < 0 && r.Total != nil:
				t.Errorf("%s GPU %d: total %d, want unknown (cut)", file, w.gpu, *r.Total)
			case w.total >= 0 && (r.Total == nil || *r.Total != w.total*MiB):
				t.Errorf("%s GPU %d: total %v, want %d MiB", file, w.gpu, r.Total, w.total)
			}
			if at != 0 && r.TimeUs != at {
				t.Errorf("%s GPU %d: time %d, want %d", file, w.gpu, r.TimeUs, at)
			}
		}
		if !found {
			t.Errorf("%s: no row of GPU %d", file, w.gpu)
		}
	}
}

// Driver 325.15 (2014) wrote the table's memory in "MB" ("14MB /
// 6143MB"), the same MiB figures later drivers label "MiB" (a GTX TITAN's
// 6 GiB less the driver's 1 MiB). Both pastes were read as GPUs without
// used memory ("no sample holds a used-memory value"). cBio/cbio-cluster
// #39: three TITANs at 14 of 6143; #24: three GTX 680s at 9 of 4095, the
// third's total cut at "40" (its used whole, its total unknown, a warning
// at line 18), after ssh's two X11 warnings.
func TestHunt41OldTableMB(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/cbio39_table_325_mb_three_titans.txt")
	at := time.Date(2014, 4, 19, 10, 8, 49, 0, time.UTC).UnixMicro()
	checkGPUs(t, "cbio39", rows, at, []gpuWant{
		{0, "GeForce GTX TITAN", 14, 6143}, {1, "GeForce GTX TITAN", 14, 6143}, {2, "GeForce GTX TITAN", 14, 6143}})
	// Cut at the Processes box's title (session 42): read in part.
	if w := meta.Warnings.Strings(); len(w) != 1 || !strings.HasPrefix(w[0], "line 20: the nvidia-smi table stops at line 20, at its Processes box's title") || meta.Cut == "" {
		t.Errorf("cbio39 warnings %q, cut %q", w, meta.Cut)
	}
	rows, meta = readFile(t, fixtures+"field/cbio24_ssh_x11_warnings_table_mb_cut.txt")
	checkGPUs(t, "cbio24", rows, time.Date(2014, 2, 28, 20, 48, 48, 0, time.UTC).UnixMicro(), []gpuWant{
		{0, "GeForce GTX 680", 9, 4095}, {1, "GeForce GTX 680", 9, 4095}, {2, "GeForce GTX 680", 9, -1}})
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, `line 18: GPU 2's memory cell is cut ("9MB /  40")`) {
		t.Errorf("cbio24 warnings %q: want line 18's cut cell named", w)
	}
	// "MB" alone is no memory cell: a GPU whose name says MB is still a
	// GPU row, and a used/total pair needs its units.
	in := "+------+\n| NVIDIA-SMI 5.325.15   Driver Version: 325.15 |\n+------+\n" +
		"|   0  Quadro 512MB GPU    Off  | 0000:03:00.0     N/A |                  N/A |\n" +
		"| 31%   44C  N/A     N/A /  N/A |      100MB /   511MB |     N/A      Default |\n"
	rows, _, err := readRows(t, "q.txt", in)
	if err != nil {
		t.Fatal(err)
	}
	checkGPUs(t, "q.txt", rows, 0, []gpuWant{{0, "Quadro 512MB GPU", 100, 511}})
}

// Tables pasted from WSL and Windows: nvitop#49 (WSL, 526.98, cut after
// the GPU's third row), Syllo/nvtop#124 (WSL, nvtop's "No GPU to
// monitor." and two prompts first, the Processes box cut), and
// microsoft/WSL#9134 (Windows 517.48, every line indented two spaces, no
// Processes box, cut after GPU 1's memory cell), which was refused:
// isSmiText looked for the banner's border at a line's start.
func TestHunt41WSLAndIndentedTables(t *testing.T) {
	rows, _ := readFile(t, fixtures+"field/nvitop49_wsl_table_526_cut.txt")
	checkGPUs(t, "nvitop49", rows, time.Date(2022, 12, 10, 20, 36, 9, 0, time.UTC).UnixMicro(),
		[]gpuWant{{0, "NVIDIA GeForce ...", 2880, 8192}})
	rows, _ = readFile(t, fixtures+"field/nvtop124_wsl_nvtop_then_table_cut.txt")
	checkGPUs(t, "nvtop124", rows, time.Date(2021, 10, 8, 22, 0, 6, 0, time.UTC).UnixMicro(),
		[]gpuWant{{0, "NVIDIA GeForce ...", 161, 8192}})
	b, err := os.ReadFile(fixtures + "field/wsl9134_win_wddm_517_two_gpus_indented_cut.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f := Sniff(b); f != FormatNvidiaSmiText {
		t.Fatalf("WSL#9134 sniffed as %q", f)
	}
	rows, _ = readFile(t, fixtures+"field/wsl9134_win_wddm_517_two_gpus_indented_cut.txt")
	checkGPUs(t, "wsl9134", rows, time.Date(2022, 11, 9, 21, 31, 58, 0, time.UTC).UnixMicro(),
		[]gpuWant{{0, "NVIDIA GeForce ...", 576, 11264}, {1, "NVIDIA GeForce ...", 2152, 11264}})
	rows, _ = readFile(t, fixtures+"field/nvdocker759_table_390_two_m40_cut.txt")
	checkGPUs(t, "nvdocker759", rows, time.Date(2018, 6, 8, 7, 42, 8, 0, time.UTC).UnixMicro(),
		[]gpuWant{{0, "Tesla M40 24GB", 814, 22945}, {1, "Tesla M40 24GB", 558, 22945}})
}

// gpustat's line as --debug prints it for a GPU without process queries
// ("(Not Supported)" where the processes go: none read), and as Python's
// REPL prints a GPUStat ("22°C"): one GPU each, in MB (MiB).
func TestHunt41Gpustat(t *testing.T) {
	rows, _ := readFile(t, fixtures+"field/gpustat122_debug_not_supported.txt")
	checkGPUs(t, "gpustat122", rows, time.Date(2022, 5, 24, 9, 21, 1, 0, time.UTC).UnixMicro(),
		[]gpuWant{{0, "GeForce GT 650M", 0, 1999}})
	rows, _ = readFile(t, fixtures+"field/gpustat132_python_repr.txt")
	checkGPUs(t, "gpustat132", rows, 0, []gpuWant{{0, "NVIDIA GeForce GTX TITAN X", 0, 12212}})
}

// A --query-gpu output of one field that is no memory (mig.mode.current,
// "[N/A]"; Syllo/nvtop#470) holds no sample: not sniffed as a sample log,
// so the run refuses it rather than reading it as clean.
func TestHunt41QueryWithoutMemory(t *testing.T) {
	b, err := os.ReadFile(fixtures + "field/nvtop470_query_mig_mode_na.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f := Sniff(b); f != "" {
		t.Errorf("nvtop#470 sniffed as %q", f)
	}
}

// A GPU's rows quoted without the banner (Azure/azhpc-diagnostics#77: GPU
// 1, a Tesla V100-PCIE with ERR! for its power draw, 593MiB / 16160MiB)
// are a table: one GPU, one sample, no time. Was refused as no known
// format.
func TestHunt41TableRowsWithoutBanner(t *testing.T) {
	b, err := os.ReadFile(fixtures + "field/azhpc77_table_rows_err_power_no_banner.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f := Sniff(b); f != FormatNvidiaSmiText {
		t.Fatalf("azhpc#77 sniffed as %q", f)
	}
	rows, meta := readFile(t, fixtures+"field/azhpc77_table_rows_err_power_no_banner.txt")
	checkGPUs(t, "azhpc77", rows, 0, []gpuWant{{1, "Tesla V100-PCIE...", 593, 16160}})
	if meta.Clock != ClockRowOrder {
		t.Errorf("clock %v, want row order (no time in the paste)", meta.Clock)
	}
	// DCGM's Go sample "dmon" (NVIDIA/gpu-monitoring-tools#12): its
	// columns have no frame buffer, and a comment and the host engine's
	// line come before them: not a sample log.
	b, err = os.ReadFile(fixtures + "field/gpumontools12_dcgm_go_dmon_no_fb.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f := Sniff(b); f != "" {
		t.Errorf("gpu-monitoring-tools#12 sniffed as %q", f)
	}
}

// Before R510 the table left the driver's reservation out of used and
// total alike (no reservation in its figures); since, the total counts it
// and used leaves it out: the banner's driver version says which, and a
// table of driver 325.15 (cBio #39) or 390.59 (nvidia-docker #759) was
// labelled excludes-reserved, a claim its data does not make. WSL's banner
// gives the Windows driver's version after nvidia-smi's own (Syllo/nvtop
// #124: 470.57.02, driver 510.06): the driver's decides.
func TestHunt41OldDriverTableConvention(t *testing.T) {
	for file, want := range map[string]string{
		"field/cbio39_table_325_mb_three_titans.txt":       "includes-reserved-unknown",
		"field/nvdocker759_table_390_two_m40_cut.txt":      "includes-reserved-unknown",
		"field/nvtop124_wsl_nvtop_then_table_cut.txt":      "excludes-reserved",
		"field/nvitop49_wsl_table_526_cut.txt":             "excludes-reserved",
		"field/azhpc77_table_rows_err_power_no_banner.txt": "excludes-reserved",
	} {
		rows, _ := readFile(t, fixtures+file)
		for _, r := range rows {
			if r.PID == nil && r.Convention != want {
				t.Errorf("%s GPU %d: convention %q, want %q", file, *r.GPU, r.Convention, want)
			}
		}
	}
	for banner, want := range map[string]bool{
		"| NVIDIA-SMI 5.325.15   Driver Version: 325.15         |":                                true,
		"| NVIDIA-SMI 470.57.02    Driver Version: 510.06       CUDA Version: 11.6     |":         false,
		"| NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0     |":         true,
		"| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0 |": false,
		"| NVIDIA-SMI 5.325.15   Driver Version: ":                                                false,
	} {
		if got := preR510([]byte(banner)); got != want {
			t.Errorf("preR510(%q) = %v, want %v", banner, got, want)
		}
	}
}

// A header-less CSV pasted under the command that made it: the command's
// --query-gpu or --query-compute-apps names the columns, as --fields
// would. Both were refused as no known format (the defaults' first column
// is a timestamp). enkore/i3pystatus #776: memory.total, memory.free,
// memory.used first: 2004, 2004, 0 (not the defaults' order, which would
// read 2004 used); mostlygeek/llama-swap #782: pid 114687 holds 19135 MiB.
func TestHunt41HeaderlessCSVFieldsFromCommand(t *testing.T) {
	rows, _ := readFile(t, fixtures+"field/i3pystatus776_query_noheader_nounits_na_fan.txt")
	if len(rows) != 1 || val(rows[0].Used) != 0 || val(rows[0].Total) != 2004*MiB || val(rows[0].Free) != 2004*MiB {
		t.Errorf("i3pystatus#776: %+v, want 0 of 2004 MiB used, 2004 free", rows)
	}
	rows, _ = readFile(t, fixtures+"field/llamaswap782_query_apps_noheader_uuid_elided.txt")
	if len(rows) != 1 || rows[0].PID == nil || *rows[0].PID != 114687 || val(rows[0].Used) != 19135*MiB || rows[0].Process != "/usr/local/bin/python" {
		t.Errorf("llama-swap#782: %+v, want pid 114687 at 19135 MiB", rows)
	}
	// WithFields is the user's word and wins over the command's; a
	// header in the output wins over both; each prompt's command names
	// its own output's columns.
	in := "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,nounits\n100, 1000\n"
	rows, _, err := readRows(t, "w.txt", in, WithFields([]string{"memory.total", "memory.used"}))
	if err != nil || len(rows) != 1 || val(rows[0].Used) != 1000*MiB {
		t.Errorf("WithFields: %v %+v, want 1000 MiB used", err, rows)
	}
	in = "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv,nounits\nmemory.total [MiB], memory.used [MiB]\n1000, 100\n"
	if rows, _, err = readRows(t, "h.txt", in); err != nil || len(rows) != 1 || val(rows[0].Used) != 100*MiB {
		t.Errorf("header: %v %+v, want 100 MiB used", err, rows)
	}
	in = "$ nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader\n0, 100 MiB, 1000 MiB\n" +
		"$ nvidia-smi --query-gpu=memory.total,memory.used,index --format=csv,noheader\n1000 MiB, 300 MiB, 0\n"
	rows, _, err = readRows(t, "two.txt", in)
	if err != nil || len(rows) != 2 || val(rows[0].Used) != 100*MiB || val(rows[1].Used) != 300*MiB {
		t.Errorf("two commands: %v %+v, want 100 then 300 MiB used", err, rows)
	}
	// A command whose query names no field gpuleak knows gives no columns.
	if f := commandFields([]byte("$ nvidia-smi --query-gpu=mig.mode.current")); f != nil {
		t.Errorf("commandFields of mig.mode.current = %q, want none", f)
	}
}

// Command lines without a prompt: "nvidia-smi dmon ..." (a script's
// echo, set -x's trace) was never one, since commandRe held backspace
// bytes where "\b" was meant (a dmon output under its command was
// refused); and Windows' "nvidia-smi.exe --query-gpu=..." (MindMiner
// #627, a cmd.exe transcript) was not one either, so its CSV, which logs
// no memory, was refused as no known format instead of being told what
// to log.
func TestHunt41CommandLines(t *testing.T) {
	for line, want := range map[string]bool{
		"nvidia-smi dmon -s m -c 2":                                 true,
		"+ nvidia-smi pmon -s m":                                    true,
		"nvidia-smi.exe  --query-gpu=gpu_name --format=csv,nounits": true,
		"nvidia-smi dmonitor":                                       false,
		"nvidia-smi has failed because it couldn't communicate with the NVIDIA driver": false,
	} {
		if got := isCommandLine([]byte(line)); got != want {
			t.Errorf("isCommandLine(%q) = %v, want %v", line, got, want)
		}
	}
	rows, _, err := readRows(t, "dmon.txt", "nvidia-smi dmon -s m -c 2\n# gpu    fb  bar1\n# Idx    MB    MB\n    0  1000     5\n    0  1100     5\n")
	if err != nil || len(rows) != 2 || val(rows[1].Used) != 1100*MiB {
		t.Errorf("dmon under its command: %v %+v, want 2 samples, 1100 MiB last", err, rows)
	}
	if f := Sniff([]byte("nvidia-smi dmon -s m -c 2\n# gpu    fb  bar1\n# Idx    MB    MB\n    0  1000     5\n")); f != FormatDmon {
		t.Errorf("dmon under its command sniffed as %q", f)
	}
	for file, want := range map[string]string{
		"mindminer627_win_query_no_memory_unknown_error.txt": ":2: the log has no memory.used column",
	} {
		b, err := os.ReadFile(fixtures + "field/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if f := Sniff(b); f != FormatQueryGPU {
			t.Errorf("%s: not sniffed", file)
		}
		_, _, err = readRows(t, file, string(b))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", file, err, want)
		}
	}
}
