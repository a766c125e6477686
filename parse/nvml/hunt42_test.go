package nvml

import (
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
// cut; two tables cut the same way are counted in one note, the first
// named; a Processes box pasted alone and whole lists every process.
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
	if err != nil || meta.Cut != "the nvidia-smi table's Processes box (from line 8) stops at line 11 without its bottom border: the excerpt is cut there, so processes the box listed after it may be missing (and 1 more output cut the same way)" ||
		len(meta.ProcessesListedUs) != 1 || len(meta.ProcessesPartialUs) != 2 {
		t.Errorf("two cut, one whole: %v, cut %q, listed %v, partial %v", err, meta.Cut, meta.ProcessesListedUs, meta.ProcessesPartialUs)
	}
	_, meta, err = readRows(t, "box.txt", box+bottom)
	if err != nil || meta.Cut != "" || len(meta.ProcessesListedUs) != 1 {
		t.Errorf("box alone: %v, cut %q, listed %v", err, meta.Cut, meta.ProcessesListedUs)
	}
}
