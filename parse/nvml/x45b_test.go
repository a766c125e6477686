package nvml

import (
	"slices"
	"testing"
)

// Found by session 45's regression tester (x45b), synthetic: a host
// column's empty field made a host of its own (a one-host log whose
// collector missed the name on every 50th row became two series, "GPU 0
// of node01" and a bare "GPU 0"), and a column named "node" (a NUMA
// node's number, 0 or 1) was read as the host ("GPU 2 of 1"). An empty
// field of a column that has named one host so far is that host's; with
// two hosts named it stays unknown (it could be either's); "node" is no
// host column.
func TestX45bHostColumnEmptyAndNode(t *testing.T) {
	const head = "hostname, timestamp, index, memory.used [MiB], memory.total [MiB]\n"
	one := head + "node01, 2026/03/02 09:00:00.000, 0, 1000 MiB, 81559 MiB\n" +
		", 2026/03/02 09:00:10.000, 0, 2000 MiB, 81559 MiB\n" +
		"node01, 2026/03/02 09:00:20.000, 0, 3000 MiB, 81559 MiB\n"
	rows, _, err := readRows(t, "one.csv", one)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := usedOf(rows, "node01", 0), []string{"09:00:00.000 1000", "09:00:10.000 2000", "09:00:20.000 3000"}; !slices.Equal(got, want) {
		t.Errorf("one host, an empty field: node01 %q, want %q", got, want)
	}
	two := head + "node01, 2026/03/02 09:00:00.000, 0, 1000 MiB, 81559 MiB\n" +
		"node02, 2026/03/02 09:00:00.100, 0, 5000 MiB, 81559 MiB\n" +
		", 2026/03/02 09:00:10.000, 0, 2000 MiB, 81559 MiB\n"
	rows, _, err = readRows(t, "two.csv", two)
	if err != nil {
		t.Fatal(err)
	}
	if got := usedOf(rows, "", 0); !slices.Equal(got, []string{"09:00:10.000 2000"}) {
		t.Errorf("two hosts, an empty field: unknown host's rows %q, want the one empty row", got)
	}
	numa := "node, timestamp, index, memory.used [MiB], memory.total [MiB]\n" +
		"0, 2026/03/02 09:00:00.000, 0, 1000 MiB, 81559 MiB\n" +
		"1, 2026/03/02 09:00:00.000, 2, 2000 MiB, 81559 MiB\n"
	rows, _, err = readRows(t, "numa.csv", numa)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("a NUMA node column: %d rows, want 2", len(rows))
	}
	for _, r := range rows {
		if r.Host != "" {
			t.Errorf("a NUMA node column read as the host: %q", r.Host)
		}
	}
}
