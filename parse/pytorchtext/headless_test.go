package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// facebookresearch/vissl issue 514: a memory_summary() pasted from its
// "GPU reserved memory" row on, title and header cut off. Before, the file
// was an unrecognised input (exit 2); now it is a memory summary whose
// rows are read: reserved 8184 MB (MB is MiB before 1.6) current and 9330
// MB peak, non-releasable 202300 KB, 545 allocations; the device is not
// given (null), a warning says the table starts cut, and it is partial
// (no closing border).
func TestSummaryWithoutTitle(t *testing.T) {
	b, err := os.ReadFile(dir + "pastes/summary_headless_vissl514.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !SniffSummary(b) {
		t.Error("not sniffed as a memory summary")
	}
	rs := readFile(t, "pastes/summary_headless_vissl514.txt", false)
	for key, want := range map[string]int64{
		"reserved_bytes.all.current":       8184 << 20,
		"reserved_bytes.all.peak":          9330 << 20,
		"inactive_split_bytes.all.current": 202300 << 10,
		"allocation.all.current":           545,
		"segment.all.peak":                 33,
	} {
		if s, ok := rs.stat(0, key); !ok || s.value != want || s.device != -1 {
			t.Errorf("%s: %+v (found %v), want %d on no device", key, s, ok, want)
		}
	}
	if _, ok := rs.stat(0, PartialKey); !ok {
		t.Error("not marked partial")
	}
	ws := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "without its title") || !strings.Contains(ws, "device is not given") {
		t.Errorf("warnings %q", ws)
	}
	// A markdown table with the same words but other cells is no summary.
	md := "| Allocations | before | after | peak | freed |\n|       from large pool | a | b | c | d |\n"
	if SniffSummary([]byte(md)) {
		rs, _ := readText(t, "md", md, false)
		if len(rs.stats) != 0 {
			t.Errorf("markdown read as a summary: %+v", rs.stats)
		}
	}
}

// A summary pasted from its "CUDA OOMs" row on (the title and the rulers
// around it cut; pastes/summary_from_ooms_row_evofill.txt): the table
// starts there, and the row's counts (1 OOM, 1 retry) are read. The row
// used to be passed over, the table started at its header, the counts lost.
func TestSummaryFromOOMsRow(t *testing.T) {
	rs := readFile(t, "pastes/summary_from_ooms_row_evofill.txt", false)
	for key, want := range map[string]int64{"num_ooms": 1, "num_alloc_retries": 1} {
		if s, ok := rs.stat(0, key); !ok || s.value != want || s.device != -1 {
			t.Errorf("%s: %+v (found %v), want %d on no device", key, s, ok, want)
		}
	}
	if _, ok := rs.stat(0, PartialKey); ok {
		t.Error("marked partial: the table is whole from its OOMs row to its closing border")
	}
	if ws := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(ws, "without its title (the table starts at line 1") {
		t.Errorf("warnings %q", ws)
	}
}
