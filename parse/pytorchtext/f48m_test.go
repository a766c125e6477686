package pytorchtext

import (
	"strings"
	"testing"
)

// A summary pasted into a Python docstring from inside its first row's
// left border (pastes/lumina_mgpt_docstring_summary_headcut.py: line 3
// is " Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |
// 5646 GiB |"): the row is whole from its name on, so the table starts
// there and its allocated memory, 17287 MiB current and 17324 MiB peak,
// is read (it started at line 7's Active memory, no allocated figure).
// A row that lost its border and has a word before its name, or other
// cells, is not one.
func TestSummaryRowWithoutLeftBorder(t *testing.T) {
	rs := readFile(t, "pastes/lumina_mgpt_docstring_summary_headcut.py", false)
	for key, want := range map[string]int64{
		"allocated_bytes.all.current": 17287 << 20,
		"allocated_bytes.all.peak":    17324 << 20,
		"active_bytes.all.current":    17287 << 20,
		"requested_bytes.all.current": 17264 << 20,
	} {
		if s, ok := rs.stat(0, key); !ok || s.value != want || s.device != -1 || s.line < 3 {
			t.Errorf("%s: %+v (found %v), want %d on no device", key, s, ok, want)
		}
	}
	ws := strings.Join(rs.meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "line 3: a memory summary without its title") || !strings.Contains(ws, "Allocated memory row without its left border") {
		t.Errorf("warnings %q", ws)
	}
	for _, line := range []string{
		"note: Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |   5646 GiB |",
		" Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |",
		" Allocated memory      |  big |  17324 MiB |   5663 GiB |   5646 GiB |",
	} {
		if _, ok := leadlessRow(line); ok {
			t.Errorf("%q read as a row", line)
		}
	}
}
