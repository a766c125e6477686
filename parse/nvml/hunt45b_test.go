package nvml

import (
	"strings"
	"testing"
)

// t45b_gpu_lost_xid79.csv (testdata/README.md, synthetic): 80 readings of
// one RTX 3090, then from line 82 20 rows whose every figure is
// "[GPU is lost]", as nvidia-smi --query-gpu prints after an Xid 79. The
// rows are kept (100 rows, 80 with used memory), and a warning names the
// line and the state; before, they were read as nulls without a word, so
// a GPU gone for the log's last 10 min looked like one sampled to the end.
func TestHunt45bGPULostRowsWarned(t *testing.T) {
	rows, meta := readFile(t, "../../testdata/nvml/t45b_gpu_lost_xid79.csv")
	used := 0
	for _, r := range rows {
		if r.Used != nil {
			used++
		}
	}
	if len(rows) != 100 || used != 80 {
		t.Errorf("%d rows, %d with used memory; want 100, 80", len(rows), used)
	}
	found := false
	for _, w := range meta.Warnings.Strings() {
		if strings.Contains(w, "20 rows (the first at line 82) give memory.used as [GPU is lost]") && strings.Contains(w, "Xid 79") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning naming line 82's [GPU is lost]: %.300q", meta.Warnings.Strings())
	}
}

// Placeholders that say nothing of the GPU's state ([N/A], [Not
// Supported]) are not taken for a lost GPU.
func TestHunt45bNAIsNotLost(t *testing.T) {
	in := "timestamp, index, memory.total [MiB], memory.used [MiB]\n" +
		"2026/09/14 00:00:00.000, 0, 24576 MiB, 100 MiB\n" +
		"2026/09/14 00:00:01.000, 0, 24576 MiB, [N/A]\n" +
		"2026/09/14 00:00:02.000, 0, 24576 MiB, 101 MiB\n"
	_, meta, err := readRows(t, "na.csv", in)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range meta.Warnings.Strings() {
		if strings.Contains(w, "could not reach the GPU") {
			t.Errorf("[N/A] read as a lost GPU: %.200q", w)
		}
	}
}
