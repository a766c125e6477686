package pytorchtext

import (
	"fmt"
	"strings"
	"testing"
)

// A file of memory_stats() dumps one per line (JSON lines; synthetic,
// testdata/README.md): ten sets, dump n on line n+1, its allocated bytes
// 2 GiB + n*500 MiB (the generator's step), with a warning that says they
// are read one by one. Before, the reader stopped at line 2 with "text
// after the JSON value".
func TestStatsJSONLines(t *testing.T) {
	rs := readFile(t, "synthetic/memory_stats_series.jsonl", true)
	if rs.meta.Sets != 10 || !strings.Contains(fmt.Sprint(rs.meta.Warnings.Strings()), "10 dumps one after another") {
		t.Fatalf("%d sets, warnings %.200q", rs.meta.Sets, fmt.Sprint(rs.meta.Warnings.Strings()))
	}
	for n := int32(0); n < 10; n++ {
		s, ok := rs.stat(n, "allocated_bytes.all.current")
		if want := 2*GiB + int64(n)*500*MiB; !ok || s.value != want || s.line != int64(n)+1 || s.setLine != int64(n)+1 {
			t.Errorf("set %d: %+v, want %d on line %d", n, s, want, n+1)
		}
	}
	// Text after the dumps that is not one is an error at its line.
	_, err := readText(t, "in", "{\"num_ooms\": 0}\n{\"num_ooms\": 1}\n[1, 2]\n", true)
	if err == nil || !strings.Contains(err.Error(), "in:3:") {
		t.Errorf("a list after two dumps: %v", err)
	}
}
