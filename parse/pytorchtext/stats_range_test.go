package pytorchtext

import (
	"strings"
	"testing"
)

// Values torch.cuda.memory_stats() never writes (crafted inputs, after
// t48c's): a memory_stats() JSON file holding one is refused at its line,
// as the README's Safety promises, rather than read as "-5 B allocated";
// a dict printed in a log keeps the rest of the log, the value skipped
// with a warning.
func TestStatsImpossibleValues(t *testing.T) {
	bad := []struct{ name, json, want string }{
		{"negative", "{\"reserved_bytes.all.current\": 4096,\n \"allocated_bytes.all.current\": -5}",
			`n.json:2: memory_stats: "allocated_bytes.all.current" is -5: negative`},
		{"negative count", `{"allocation.all.current": -1, "reserved_bytes.all.current": 4096}`,
			`"allocation.all.current" is -1: negative`},
		{"exabytes", `{"allocated_bytes.all.current": 5000000000000000000, "reserved_bytes.all.current": 4096}`,
			`"allocated_bytes.all.current" is 5000000000000000000: 1024 TiB or more`},
		{"beyond int64", `{"allocated_bytes.all.current": 1024, "reserved_bytes.all.current": 99999999999999999999999999999}`,
			`"reserved_bytes.all.current" is 99999999999999999999999999999: beyond the 64-bit counters`},
		{"beyond float64", `{"allocated_bytes.all.current": 1e400, "reserved_bytes.all.current": 4096}`,
			`"allocated_bytes.all.current" is 1e400: beyond the 64-bit counters`},
		{"repeated key", "{\"allocated_bytes.all.current\": 1024,\n \"reserved_bytes.all.current\": 4096,\n \"allocated_bytes.all.current\": 2048}",
			`n.json:3: memory_stats: the key "allocated_bytes.all.current" appears twice in one dict (lines 1 and 3)`},
		{"repeated nested key", `{"allocated_bytes": {"all": {"current": 1, "current": 2}}}`,
			`the key "allocated_bytes.all.current" appears twice in one dict (both on line 1)`},
	}
	for _, c := range bad {
		_, err := readText(t, "n.json", c.json, true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	// What PyTorch does write: max_split_size -1 (unset), cumulative
	// bytes past 1 PiB (a long run), the same key in two devices' dicts.
	good := `{"0": {"max_split_size": -1, "allocated_bytes.all.allocated": 4503599627370496, "allocated_bytes.all.current": 1024},` +
		` "1": {"allocated_bytes.all.current": 2048}}`
	rs, err := readText(t, "g.json", good, true)
	if err != nil || len(rs.stats) != 4 || len(rs.meta.Warnings.Strings()) != 0 {
		t.Fatalf("good: %v %+v %q", err, rs, rs.meta.Warnings.Strings())
	}
	if s, ok := rs.stat(0, "max_split_size"); !ok || s.value != -1 {
		t.Errorf("max_split_size: %+v", s)
	}
	// In a log: the dict's other values are read, the impossible one
	// skipped with a warning at its line.
	log := "step 3\n{'allocated_bytes.all.current': -5, 'reserved_bytes.all.current': 4096, 'num_ooms': 0}\n"
	rs, err = readText(t, "l.log", log, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rs.stat(0, "allocated_bytes.all.current"); ok {
		t.Errorf("log: the negative value was read: %+v", rs.stats)
	}
	if s, ok := rs.stat(0, "reserved_bytes.all.current"); !ok || s.value != 4096 {
		t.Errorf("log: reserved not read: %+v", rs.stats)
	}
	if ws := strings.Join(rs.meta.Warnings.Strings(), "\n"); !strings.Contains(ws, `line 2: memory_stats: "allocated_bytes.all.current" is -5: negative`) {
		t.Errorf("log: warnings %q", ws)
	}
}
