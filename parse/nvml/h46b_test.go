package nvml

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// nvidia-smi prints "Unable to determine the device handle for GPU <bus
// id>: <reason>" for a GPU NVML cannot reach, in place of its rows, in
// every layout (real pastes: JosephKJ/OWOD#81, "...: GPU is lost.  Reboot
// the system to recover this GPU" above a table; NVIDIA/nvidia-docker#1553
// and NVIDIA/open-gpu-kernel-modules#387, "...: Unknown Error"). The
// warning that a GPU's rows stop because NVML lost it covered only
// --query-gpu rows reading "[GPU is lost]".
//
// testdata/nvml/h46b_lost_gpu_table.txt (synthetic, testdata/README.md):
// 12 nvidia-smi tables 5 s apart of two H200s; from the 7th on, the line
// for bus 00000000:07:00.0 (GPU 1) comes first (line 151) and GPU 1 has no
// row. Before: no warning at all. Now one warning quoting the line, at
// line 151, with the 5 more such lines counted; GPU 1 has 6 rows, GPU 0 12.
//
// testdata/nvml/h46b_lost_gpu_q.txt: 8 nvidia-smi -q -d MEMORY reports of
// bus 06 and 07; from the 5th on, bus 06 (GPU 0) is lost ("Unknown
// Error") and its section missing. Before: no warning, and bus 07, the
// reports' first section then, was read as GPU 0: the two GPUs' samples
// joined in one series (3.6 GiB, then 54 GiB). Now bus 07 keeps GPU 1 in
// every report (8 rows), GPU 0 has 4, and the warning is given.
func TestH46bLostGPUAllLayouts(t *testing.T) {
	for _, tc := range []struct {
		file, line, quote string
		more              int
		rows              map[int32]int
	}{
		{"h46b_lost_gpu_table.txt", "line 151", "Unable to determine the device handle for GPU 00000000:07:00.0: GPU is lost", 5, map[int32]int{0: 12, 1: 6}},
		{"h46b_lost_gpu_q.txt", "line 89", "Unable to determine the device handle for GPU 00000000:06:00.0: Unknown Error", 3, map[int32]int{0: 4, 1: 8}},
	} {
		b, err := os.ReadFile(fixtures + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		rows, meta, err := readRows(t, tc.file, string(b))
		if err != nil {
			t.Fatal(err)
		}
		got := map[int32]int{}
		for _, r := range rows {
			if r.GPU != nil {
				got[*r.GPU]++
			}
		}
		if len(got) != len(tc.rows) || got[0] != tc.rows[0] || got[1] != tc.rows[1] {
			t.Errorf("%s: rows by GPU %v, want %v", tc.file, got, tc.rows)
		}
		warned := false
		want := fmt.Sprintf("%q (%s, and %d more such lines): NVML could not reach that GPU", tc.quote, tc.line, tc.more)
		for _, w := range meta.Warnings.Strings() {
			warned = warned || strings.Contains(w, want)
		}
		if !warned {
			t.Errorf("%s: no warning quoting %q at %s with %d more: %q", tc.file, tc.quote, tc.line, tc.more, meta.Warnings.Strings())
		}
	}
}

// The same line in a --query-gpu CSV log (nvidia-smi -l prints it in place
// of the lost GPU's row, as in NVIDIA/dcgm-exporter#604's "Unable to
// determine the device handle for GPU 000:BA:80.0: Unknown Error"): the
// warning names the GPU's bus id and that its rows stop, not only
// "skipped lines nvidia-smi printed instead of samples"; two bus ids are
// both named.
func TestH46bLostGPUQueryCSV(t *testing.T) {
	in := "timestamp, index, memory.used [MiB], memory.total [MiB]\n" +
		"2024/05/01 10:00:00.000, 0, 1000 MiB, 40960 MiB\n" +
		"2024/05/01 10:00:00.000, 1, 2000 MiB, 40960 MiB\n" +
		"Unable to determine the device handle for GPU 00000000:07:00.0: GPU is lost.  Reboot the system to recover this GPU\n" +
		"2024/05/01 10:00:05.000, 0, 1000 MiB, 40960 MiB\n" +
		"Unable to determine the device handle for GPU0000:BA:80.0: Unknown Error\n" +
		"2024/05/01 10:00:10.000, 0, 1000 MiB, 40960 MiB\n"
	rows, meta, err := readRows(t, "gpu.csv", in)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%v, %d rows", err, len(rows))
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, `"Unable to determine the device handle for GPU 00000000:07:00.0: GPU is lost" (line 4, and 1 more such line (GPUs at bus ids 00000000:07:00.0, 0000:BA:80.0))`) {
		t.Errorf("warnings %q", ws)
	}
}

// testdata/nvml/h46b_fleet_prefix_and_column.txt (synthetic,
// testdata/README.md): pdsh to a gateway (gw01) that prints a fleet CSV
// merged with a hostname column: 20 ticks 10 s apart of node01 (at .101
// s) and node02 (at .250 s), two GPUs each, every line prefixed "gw01: ".
// The column names the machine each sample was taken on, the prefix only
// the one the line was read from; so the column is each row's host, as it
// already was for the series. But the time state (the instants a series
// may hold, the steps back in time) was the prefix's: one sequence of 40
// instants for the two machines' interleaved ticks, where each has 20.
// Now the column keys the time too: 20 instants, as for the same CSV
// without the prefix; rows of node01 and node02, none of gw01.
func TestH46bFleetPrefixAndHostColumn(t *testing.T) {
	b, err := os.ReadFile(fixtures + "h46b_fleet_prefix_and_column.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{string(b), strings.ReplaceAll(string(b), "gw01: ", "")} {
		rows, meta, err := readRows(t, "fleet.txt", in)
		if err != nil {
			t.Fatal(err)
		}
		hosts := map[string]int{}
		for _, r := range rows {
			hosts[r.Host]++
		}
		if meta.Instants != 20 || len(hosts) != 2 || hosts["node01"] != 40 || hosts["node02"] != 40 {
			t.Errorf("prefixed %v: %d instants, rows by host %v; want 20, 40 of node01 and of node02",
				strings.HasPrefix(in, "gw01"), meta.Instants, hosts)
		}
	}
}
