package nvml

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// Session 44, helper h44f (testdata/README.md, "Session 44, helper h44f").

// wrapLines puts prefix before every line of text that is not empty.
func wrapLines(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i := range lines {
		if lines[i] != "" {
			lines[i] = prefix + lines[i]
		}
	}
	return strings.Join(lines, "")
}

// Every NVML layout reads the same behind the wrappers a paste or a log
// puts around it: a Markdown fence (opening and closing), "> " quote
// marks, a GitHub Actions stamp, a Metaflow job log's stamp and tags.
// Before, all of these but nvidia-smi's text were refused (exit 2, "not
// an NVML sample log ... needs --fields") and a closing fence after rows
// was a skipped row ("READ IN PART"). The samples must be those read flush
// left, with no line skipped: dmon and pmon logged with -o T start their
// rows with a time of day, which a quote must not take for a log stamp.
func TestHunt44fEveryLayoutBehindWrappers(t *testing.T) {
	wrappers := map[string]func(string) string{
		"fence":      func(s string) string { return "```\n" + s + "```\n" },
		"fence text": func(s string) string { return "```text\n" + s + "```\n\n" },
		"quote":      func(s string) string { return wrapLines(s, "> ") },
		"gha":        func(s string) string { return wrapLines(s, "2024-05-01T10:00:01.1234567Z ") },
		"metaflow": func(s string) string {
			return wrapLines(s, "2021-03-12 05:02:18.125 [129/start/1341 (pid 5161)] [931bbcf6-5fa2-4661-83df-1d82d52b6226] ")
		},
		"quoted gha": func(s string) string { return wrapLines(s, "> 2024-05-01T10:00:01Z ") },
	}
	for _, name := range []string{
		"query_gpu.csv", "query_apps.csv", "dmon.txt", "pmon_mu_T.txt", "dmon_mu.txt",
		"pynvml_2.jsonl", "dcgm_date_curl_loop_5min.txt", "pub_gpustat97_line.txt",
	} {
		path := "../../testdata/nvml/" + name
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wmeta := readFile(t, path)
		if len(want) == 0 {
			t.Fatalf("%s: no samples flush left", name)
		}
		for wname, w := range wrappers {
			got, meta, err := readRows(t, name, w(string(b)))
			switch {
			case err != nil:
				t.Errorf("%s in %s: %.200v", name, wname, err)
			case meta.Format != wmeta.Format || !reflect.DeepEqual(got, want):
				t.Errorf("%s in %s: %s, %d samples; want %s, %d as flush left", name, wname, meta.Format, len(got), wmeta.Format, len(want))
			case meta.SkippedLines != 0:
				t.Errorf("%s in %s: %d lines skipped; want none (a fence is no row)", name, wname, meta.SkippedLines)
			}
			if f := Sniff([]byte(w(string(b)))); f != wmeta.Format {
				t.Errorf("Sniff of %s in %s = %s; want %s", name, wname, f, wmeta.Format)
			}
		}
	}
}

// The real pastes: a dmon excerpt in a project report's fence, read
// before only because a comment line came first, and then with its closing
// fence as a damaged row; a Metaflow job log, refused before (its lines'
// "[129/start/1341 (pid 5161)] [uuid]" tags were not taken for a stamp).
func TestHunt44fRealWrappedPastes(t *testing.T) {
	rows, meta := readFile(t, "../../testdata/nvml/pub_nsa_fsdp_dmon_fenced.txt")
	if meta.SkippedLines != 0 || len(rows) != 2 || val(rows[0].Used) != mib(1031) || val(rows[1].Used) != mib(1031) {
		t.Errorf("fenced dmon: %d rows, %d lines skipped; want GPUs 0 and 1 at 1031 MiB, none skipped", len(rows), meta.SkippedLines)
	}
	rows, _ = readFile(t, "../../testdata/nvml/pub_metaflow_gpu_job_log.txt")
	// "|      0MiB / 16160MiB |" under "Fri Mar 12 05:02:15 2021".
	if len(rows) != 1 || val(rows[0].Used) != 0 || val(rows[0].Total) != mib(16160) || rows[0].TimeUs != utc(2021, 3, 12, 5, 2, 15, 0) {
		t.Errorf("Metaflow log: %d rows %+v; want one at 05:02:15, 0 of 16160 MiB", len(rows), rows)
	}
}

// A tag is not a stamp: gpustat's "[0]" row behind a stamp keeps its
// index, and a stamp's time alone in a dmon -o T row is kept when the
// log's first line carries no stamp.
func TestHunt44fWrapKeepsRows(t *testing.T) {
	if got := string(stripStamp([]byte("2024-01-01T00:00:00Z [0] NVIDIA H200 | 30°C"))); got != "[0] NVIDIA H200 | 30°C" {
		t.Errorf("stripStamp kept %q; want gpustat's [0] kept", got)
	}
	if w := wrapOf([]byte("```\n> #Time gpu fb\n> 10:00:01 0 1031\n")); w != (wrap{quote: true}) {
		t.Errorf("wrapOf(quoted dmon -o T) = %+v; want quote marks only", w)
	}
	for _, s := range []string{"```", "```json", "~~~", "> ```", "  ```text  "} {
		if !isFence([]byte(s)) {
			t.Errorf("isFence(%q) = false", s)
		}
	}
	for _, s := range []string{"``", "```a b", "`x`"} {
		if isFence([]byte(s)) {
			t.Errorf("isFence(%q) = true", s)
		}
	}
}
