package nvml

import (
	"testing"
)

// nvidia-smi dmon prints "-" for a reading NVML could not give
// (nvidia-smi(1), Device Monitoring: "any other error in fetching the
// metric is reported as -"); a GPU fallen off the bus fails every reading.
// The other layouts warn of a lost GPU (a CSV's "[GPU is lost]",
// unreachableNote; nvidia-smi's "Unable to determine the device handle"
// line, lostHandleNote); dmon did not.
//
// testdata/nvml/dmon_gpu_lost_dashes.txt (synthetic, testdata/README.md):
// dmon -o DT -s mu of two GPUs over 40 s; GPU 1 reads 8000 MB for 30 s,
// then "-" in every column from 08:06:42 (line 66: 2 header lines, 20
// ticks of 2 rows, the repeated header pair, 10 more ticks, then GPU 0's
// row at 65), 10 rows. Before: no warning, the 10 rows read as rows
// without used memory, silently. Now one warning at line 66 counting 10
// rows (still rows without used memory); GPU 0 keeps 40 samples, GPU 1
// its 30.
//
// testdata/nvml/dmon_lost_handle_first.txt: the same log of GPU 0 alone,
// after nvidia-smi's "Unable to determine the device handle for GPU
// 00000000:3B:00.0: GPU is lost" on line 1 (a dmon started after GPU 1
// was lost, its standard error in the log). Before: not read at all
// ("not an NVML sample log", line 1 being nvidia-smi's error), though
// GPU 0's 40 rows follow. Now read as dmon, 40 samples, with the lost
// handle warning quoting line 1.
func TestU47bDmonLostGPU(t *testing.T) {
	rows, meta := readFile(t, fixtures+"dmon_gpu_lost_dashes.txt")
	got := map[int32]int{}
	for _, r := range rows {
		if r.GPU != nil && r.Used != nil {
			got[*r.GPU]++
		}
	}
	if got[0] != 40 || got[1] != 30 || len(rows) != 80 {
		t.Errorf("samples by GPU %v of %d rows, want GPU 0 40, GPU 1 30 of 80 (GPU 1's last 10 without used memory)", got, len(rows))
	}
	want := `10 rows (the first at line 66) give "-" in fb and in every other column of readings: NVML could not reach the GPU`
	if !hasWarning(meta, want) {
		t.Errorf("no warning %q: %q", want, meta.Warnings.Strings())
	}

	b := []byte("Unable to determine the device handle for GPU 00000000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU\n#Date Time gpu fb\n")
	if f := Sniff(b); f != FormatDmon {
		t.Errorf("Sniff after a lost handle line: %v, want %v", f, FormatDmon)
	}
	rows, meta = readFile(t, fixtures+"dmon_lost_handle_first.txt")
	if len(rows) != 40 {
		t.Errorf("%d rows, want 40", len(rows))
	}
	want = `"Unable to determine the device handle for GPU 00000000:3B:00.0: GPU is lost" (line 1): NVML could not reach that GPU`
	if !hasWarning(meta, want) {
		t.Errorf("no warning %q: %q", want, meta.Warnings.Strings())
	}

	// A GPU that lacks one reading is not lost: fb "-" beside sm and mem
	// values gives no sample and no such warning; pmon's "-" rows are a
	// GPU without a process.
	in := "#Date        Time         gpu     fb   bar1     sm    mem\n" +
		"#YYYYMMDD    HH:MM:SS     Idx     MB     MB      %      %\n" +
		" 20261130    08:06:12       0      -      -     40     20\n" +
		" 20261130    08:06:12       1   8000      5     40     20\n"
	_, meta, err := readRows(t, "partial.txt", in)
	if err != nil {
		t.Fatal(err)
	}
	if hasWarning(meta, "NVML could not reach") {
		t.Errorf("a row with readings warned as lost: %q", meta.Warnings.Strings())
	}
}
