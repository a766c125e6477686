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

// moveFirstColumnLast moves each line's first CSV field to its end.
func moveFirstColumnLast(in string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
		first, rest, _ := strings.Cut(l, ", ")
		b.WriteString(rest + ", " + first + "\n")
	}
	return b.String()
}
