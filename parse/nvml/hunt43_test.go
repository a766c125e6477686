package nvml

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// Session 43 (testdata/README.md, "Found by the session-43 tester").

// nvidia-smi's text output behind a log's stamps (a CI runner's timestamp
// on every line, a logger's, a Markdown quote's "> ") reads as the same
// output flush left: the same samples, in the same layout. Before, a -q
// report behind GitHub Actions' stamps failed ("no FB Memory Usage
// section", exit 2) and a table was "unrecognised input format".
func TestHunt43SmiTextBehindLogStamps(t *testing.T) {
	stamps := []string{
		"2024-01-01T00:00:00.0000000Z ", // GitHub Actions
		"2024-01-01T00:00:00.123Z ",
		"[2024-01-01 12:00:00,123] ",
		"00:00:01 ",
		"> ",
		"> 2024-01-01T00:00:00.0000000Z ",
	}
	for _, path := range []string{
		"../../testdata/nvml/leak_exit_nvidia_smi_q_memory.txt",
		"../../testdata/nvml/leak_exit_nvidia_smi_default.txt",
		"../../testdata/nvml/h200_q_process.txt",
		"../../testdata/nvml/pub_pytorch910_nvidia_smi.txt",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wmeta := readFile(t, path)
		if len(want) == 0 {
			t.Fatalf("%s: no samples read flush left", path)
		}
		for _, st := range stamps {
			lines := strings.SplitAfter(string(b), "\n")
			for i := range lines {
				if lines[i] != "" {
					lines[i] = st + lines[i]
				}
			}
			got, meta, err := readRows(t, path, strings.Join(lines, ""))
			if err != nil {
				t.Errorf("%s behind %q: %.200v", path, st, err)
				continue
			}
			if meta.Format != wmeta.Format || !reflect.DeepEqual(got, want) {
				t.Errorf("%s behind %q: %s, %d samples; want %s, %d samples as flush left", path, st, meta.Format, len(got), wmeta.Format, len(want))
			}
		}
	}
	// pytorch/pytorch#4031's table as the issue quotes it ("> " lines).
	quoted := "../../testdata/nvml/pub_pytorch4031_quoted_table.txt"
	b, err := os.ReadFile(quoted)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readFile(t, quoted)
	want, _, err := readRows(t, quoted, strings.ReplaceAll(string(b), "> ", ""))
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got, want) || got[0].Used == nil || *got[0].Used != 7829<<20 {
		t.Errorf("quoted table: %d samples %+v; want the one flush left reads, 7829 MiB used (err %v)", len(got), got, err)
	}
}

// A line that only looks like a stamp is not cut: gpustat's GPU rows
// start "[0]", and nothing else is a stamp without its date or time.
func TestHunt43LogStampLeavesOtherLines(t *testing.T) {
	for _, line := range []string{"[0] NVIDIA H200 | 30°C,   0 % |  3693 / 143771 MB |", "10-0-0-1  Tue Dec  1 02:00:58 2026", "|   0  NVIDIA H200   On  |", "2024-01-01,x"} {
		if got := string(stripLogStamp([]byte(line))); got != line {
			t.Errorf("stripLogStamp(%q) = %q", line, got)
		}
	}
}
