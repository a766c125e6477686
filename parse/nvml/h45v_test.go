package nvml

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A fleet CSV merged by a collection script with a hostname column
// (testdata/README.md, h45v_fleet_hostname_column.csv): each row carries
// its host, so that GPU 0 of node01 (1000, 2000, 3000, 4000 MiB a minute
// apart) and GPU 0 of node02 (5000 MiB throughout) are two series. Before,
// the column was ignored: every row had no host, and both GPUs 0 were one
// series of 8 samples jumping between 1000-4000 and 5000 MiB. The same
// with the column last, where the plain-row cache reads the columns before
// it (midColumns).
func TestHostnameColumn(t *testing.T) {
	b, err := os.ReadFile("../../testdata/nvml/h45v_fleet_hostname_column.csv")
	if err != nil {
		t.Fatal(err)
	}
	in := string(b)
	last := moveFirstColumnLast(in)
	for _, c := range []struct{ name, text string }{{"first", in}, {"last", last}} {
		for _, general := range []bool{false, true} {
			var opts []Option
			if general {
				opts = append(opts, func(o *options) { o.general = true })
			}
			rows, meta, err := readRows(t, c.name+".csv", c.text, opts...)
			if err != nil || meta.Format != FormatQueryGPU || len(rows) != 16 {
				t.Fatalf("column %s, general %v: %v, %s, %d rows; want %s, 16", c.name, general, err, meta.Format, len(rows), FormatQueryGPU)
			}
			if got, want := usedOf(rows, "node01", 0), []string{"10:00:00.101 1000", "10:01:00.101 2000", "10:02:00.101 3000", "10:03:00.101 4000"}; !slices.Equal(got, want) {
				t.Errorf("column %s, general %v: node01 GPU 0: %q, want %q", c.name, general, got, want)
			}
			if got, want := usedOf(rows, "node02", 0), []string{"10:00:00.250 5000", "10:01:00.250 5000", "10:02:00.250 5000", "10:03:00.250 5000"}; !slices.Equal(got, want) {
				t.Errorf("column %s, general %v: node02 GPU 0: %q, want %q", c.name, general, got, want)
			}
		}
	}
}

// The hosts' rows of h45v_fleet_hostname_column.csv one host after the
// other (two logs concatenated, node01's 10:00-10:03 then node02's):
// node02's first row, at 10:00:00.250, is no step back of the log's time
// (it is another host's sequence), and each host has 4 instants. Before
// the hosts shared one time state: a warning that the time went back by
// 2m59.851s ("the trends mix them"), and 8 instants.
func TestHostnameColumnConcatenated(t *testing.T) {
	b, err := os.ReadFile("../../testdata/nvml/h45v_fleet_hostname_column.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var node01, node02 []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "node01") {
			node01 = append(node01, l)
		} else {
			node02 = append(node02, l)
		}
	}
	in := strings.Join(append(append([]string{lines[0]}, node01...), node02...), "\n") + "\n"
	rows, meta, err := readRows(t, "concat.csv", in)
	if err != nil || len(rows) != 16 || meta.Instants != 4 || hasWarning(meta, "goes back") {
		t.Fatalf("%v, %d rows, %d instants, warnings %q; want 16 rows, 4 instants, no step back", err, len(rows), meta.Instants, meta.Warnings.Strings())
	}
	if got, want := usedOf(rows, "node02", 0), []string{"10:00:00.250 5000", "10:01:00.250 5000", "10:02:00.250 5000", "10:03:00.250 5000"}; !slices.Equal(got, want) {
		t.Errorf("node02 GPU 0: %q, want %q", got, want)
	}
}

// moveFirstColumnLast moves each line's first CSV field to its end.
func moveFirstColumnLast(in string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
		first, rest, _ := strings.Cut(l, ", ")
		b.WriteString(rest + ", " + first + "\n")
	}
	return b.String()
}
