package pytorchtext

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Two ranks' memory_summary() tables merged line by line, as torchrun
// merges its ranks' output behind "[rank0]: " and "[rank1]: "
// (synthetic/summary_interleaved_ranks.txt; testdata/README.md). Each
// table is read whole as its own set: rank 0 (device 0) 0 OOMs and 3072
// MiB non-releasable, rank 1 (device 1) 1 OOM and 100 MiB, no partial
// mark, no warning. Before, rank 1's title cut rank 0's table, rank 0's
// OOMs row was read as device 1's and rank 1's was skipped "out of
// place".
func TestSummaryInterleavedRanks(t *testing.T) {
	rs := readFile(t, "synthetic/summary_interleaved_ranks.txt", false)
	if rs.meta.Sets != 2 || rs.meta.Warnings.Len() != 0 {
		t.Fatalf("%d sets, warnings %.200q", rs.meta.Sets, fmt.Sprint(rs.meta.Warnings.Strings()))
	}
	for _, c := range []struct {
		set           int32
		device        int32
		ooms, nonrel  int64
		banner, oomAt int64
	}{
		{0, 0, 0, 3072 * MiB, 3, 7},
		{1, 1, 1, 100 * MiB, 4, 8},
	} {
		o, ok1 := rs.stat(c.set, "num_ooms")
		n, ok2 := rs.stat(c.set, "inactive_split_bytes.all.current")
		if _, partial := rs.stat(c.set, PartialKey); !ok1 || !ok2 || partial {
			t.Fatalf("set %d: num_ooms %v, inactive_split %v, partial %v", c.set, ok1, ok2, partial)
		}
		if o.device != c.device || o.value != c.ooms || o.line != c.oomAt || o.setLine != c.banner || n.value != c.nonrel {
			t.Errorf("set %d: device %d, num_ooms %d at line %d (set line %d), non-releasable %d; want %+v", c.set, o.device, o.value, o.line, o.setLine, n.value, c)
		}
	}
}

// Two real tables (memory_summary.txt, memory_summary_2.txt) merged line
// by line behind the prefixes launchers write: each set read from the
// merge holds the very keys and values of its table read alone, whatever
// the prefix (torchrun's "[rankN]: " and "[defaultN]:", srun -l's "N: ",
// OpenMPI --tag-output's "[1,N]<stdout>:", a timestamp that moves on
// before the rank), when one rank runs a few lines behind the other, and
// with a third rank's log lines among them (read as text, no cut).
func TestSummaryInterleavedPrefixes(t *testing.T) {
	var tables [2][]string
	var alone [2]map[string]int64
	for i, f := range []string{"memory_summary.txt", "memory_summary_2.txt"} {
		b, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		alone[i] = statValues(readFile(t, f, false), 0)
		if len(alone[i]) < 40 {
			t.Fatalf("%s alone: %d keys", f, len(alone[i]))
		}
	}
	for _, c := range []struct {
		name   string
		prefix func(rank, line int) string
		lag    int  // lines rank 1 starts after rank 0
		other  bool // a third rank's log lines among them
	}{
		{"torchrun", func(r, _ int) string { return fmt.Sprintf("[rank%d]: ", r) }, 0, false},
		{"torchrun lag 3", func(r, _ int) string { return fmt.Sprintf("[rank%d]: ", r) }, 3, false},
		{"torchrun lag 12", func(r, _ int) string { return fmt.Sprintf("[rank%d]: ", r) }, 12, false},
		{"torchrun lag 30", func(r, _ int) string { return fmt.Sprintf("[rank%d]: ", r) }, 30, false},
		{"torchrun role", func(r, _ int) string { return fmt.Sprintf("[default%d]:", r) }, 0, false},
		{"srun -l", func(r, _ int) string { return fmt.Sprintf("%d: ", r) }, 0, false},
		{"mpirun tag", func(r, _ int) string { return fmt.Sprintf("[1,%d]<stdout>:", r) }, 0, false},
		{"timestamp", func(r, l int) string { return fmt.Sprintf("12:00:%02d.%03d [rank%d]: ", l/10, l%10*97, r) }, 0, false},
		{"CI stamp, srun -l", func(r, l int) string {
			return fmt.Sprintf("2024-05-01T12:%02d:%02d.%07dZ %d: ", l/60, l%60, l*7919%10000000, r)
		}, 1, false},
		{"third rank's lines", func(r, _ int) string { return fmt.Sprintf("[rank%d]: ", r) }, 0, true},
	} {
		var b strings.Builder
		n := 0
		for i := 0; i < len(tables[0])+c.lag || i < len(tables[1])+c.lag; i++ {
			if i < len(tables[0]) {
				fmt.Fprintf(&b, "%s%s\n", c.prefix(0, n), tables[0][i])
				n++
			}
			if j := i - c.lag; j >= 0 && j < len(tables[1]) {
				fmt.Fprintf(&b, "%s%s\n", c.prefix(1, n), tables[1][j])
				n++
			}
			if c.other && i%5 == 0 {
				fmt.Fprintf(&b, "[rank2]: step %d loss 0.25\n", i)
				n++
			}
		}
		rs, err := readText(t, c.name, b.String(), false)
		if err != nil || rs.meta.Sets != 2 || rs.meta.Warnings.Len() != 0 {
			t.Errorf("%s: err %v, %d sets, warnings %.200q", c.name, err, rs.meta.Sets, fmt.Sprint(rs.meta.Warnings.Strings()))
			continue
		}
		for set := range 2 {
			got := statValues(rs, int32(set))
			if fmt.Sprint(got) != fmt.Sprint(alone[set]) {
				t.Errorf("%s: set %d differs from its table read alone: %.200q", c.name, set, fmt.Sprint(got))
			}
		}
	}
}

// statValues returns a set's keys and values.
func statValues(rs *rows, set int32) map[string]int64 {
	out := map[string]int64{}
	for _, s := range rs.stats {
		if s.set == set {
			out[s.key] = s.value
		}
	}
	return out
}
