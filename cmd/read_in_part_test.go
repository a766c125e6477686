package cmd

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/gpuleak/gpuleak/export"
)

// An NVML log with a line pasted among its rows and its last row cut is
// read in part: exit 0, the two lines skipped and counted (skipped_lines,
// skipped_at_lines in JSON), a warning on standard error naming the file
// and the lines, and the same findings as the log without those two lines
// (they held no sample: nothing is lost but the lines). Before, the first
// bad line made the whole log unreadable (exit 2).
func TestReadInPart(t *testing.T) {
	gpu := string(mustRead(t, td+"nvml/query_gpu.csv"))
	lines := strings.SplitAfter(gpu, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines) // the header and its rows, each ending in "\n"
	// The whole log without its last row, as nvidia-smi would have left it
	// killed one row earlier: the reference.
	ref := strings.Join(lines[:n-1], "")
	// A line pasted as line 100 (the rows after it move down one), and
	// the last row cut to its first 40 bytes (no line feed): line n+1.
	var b strings.Builder
	b.WriteString(strings.Join(lines[:99], ""))
	b.WriteString("Traceback (most recent call last):\n")
	b.WriteString(strings.Join(lines[99:n-1], ""))
	b.WriteString(lines[n-1][:40])
	dir := t.TempDir()
	refPath, badPath := filepath.Join(dir, "ref.csv"), filepath.Join(dir, "bad.csv")
	for p, s := range map[string]string{refPath: ref, badPath: b.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type out struct {
		Inputs []struct {
			Error        *string `json:"error"`
			SkippedLines int     `json:"skipped_lines"`
			SkippedAt    []int   `json:"skipped_at_lines"`
			Samples      int     `json:"samples"`
		} `json:"inputs"`
		Findings []json.RawMessage `json:"findings"`
	}
	read := func(p string) (out, string) {
		code, stdout, stderr := run(t, nil, "analyze", "--format", "json", p)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, stderr)
		}
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatal(err)
		}
		return o, stderr
	}
	r, refErr := read(refPath)
	g, badErr := read(badPath)
	if refErr != "" || r.Inputs[0].SkippedLines != 0 {
		t.Errorf("the whole log: stderr %q, %d lines skipped", refErr, r.Inputs[0].SkippedLines)
	}
	in := g.Inputs[0]
	if in.Error != nil || in.SkippedLines != 2 || len(in.SkippedAt) != 2 || in.SkippedAt[0] != 100 || in.SkippedAt[1] != n+1 {
		t.Errorf("input %+v: want 2 lines skipped, at 100 and %d", in, n+1)
	}
	if in.Samples != r.Inputs[0].Samples {
		t.Errorf("%d samples, want the %d of the log without those lines", in.Samples, r.Inputs[0].Samples)
	}
	want := "gpuleak: warning: " + badPath + ": read in part: 2 lines could not be read and were skipped (lines 100, " + itoa(n+1) + ")"
	if !strings.Contains(badErr, want) {
		t.Errorf("stderr %q, want %q", badErr, want)
	}
	if len(g.Findings) != len(r.Findings) {
		t.Fatalf("%d findings, want the %d of the log without the two lines", len(g.Findings), len(r.Findings))
	}
	for i := range g.Findings {
		// The findings name their input: the same but for its name.
		if a, b := strings.ReplaceAll(string(g.Findings[i]), "bad.csv", "x"), strings.ReplaceAll(string(r.Findings[i]), "ref.csv", "x"); a != b {
			t.Errorf("finding %d:\n%s\nwant\n%s", i, a, b)
		}
	}
	// The table says it beside the input, not as a whole read.
	_, table, _ := run(t, nil, "analyze", badPath)
	if !strings.Contains(table, "; READ IN PART: 2 lines could not be read and were skipped") {
		t.Errorf("table lacks the partial read:\n%s", table)
	}
	// The daily page: a card, the input listed, its series marked, and
	// no "Nothing leaked ..." over a whole read.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "h1", "j1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "h1", "j1", "gpu.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, md, errs := run(t, nil, "report", "-o", "-", "--format", "markdown", root, "--group-by", "{host}/{job}/...")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	for _, w := range []string{"- **1** read in part (lines skipped)", "## Inputs read in part", "gpu.csv`: read in part: 2 lines could not be read and were skipped", "| gpu.csv (read in part) |"} {
		if !strings.Contains(md, w) {
			t.Errorf("daily page lacks %q:\n%s", w, md)
		}
	}
	if !strings.Contains(errs, "gpuleak report: warning: "+filepath.Join(root, "h1", "j1", "gpu.csv")+": read in part: 2 lines") {
		t.Errorf("report stderr %q", errs)
	}
	code, js, _ := run(t, nil, "report", "-o", "-", "--format", "json", root)
	var d struct {
		Summary struct {
			Read       int `json:"read"`
			ReadInPart int `json:"read_in_part"`
		} `json:"summary"`
		ReadInPart []struct {
			Path string `json:"path"`
		} `json:"read_in_part"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil || code != 0 {
		t.Fatal(code, err)
	}
	if d.Summary.Read != 1 || d.Summary.ReadInPart != 1 || len(d.ReadInPart) != 1 {
		t.Errorf("daily JSON: %+v", d)
	}
	// gpuleak oom reads a process log beside an OOM message in part too,
	// and says so as analyze does.
	apps := string(mustRead(t, td+"nvml/query_apps.csv"))
	al := strings.SplitAfter(apps, "\n")
	appsPath := filepath.Join(dir, "apps.csv")
	// A line pasted as line 5 of the log.
	if err := os.WriteFile(appsPath, []byte(strings.Join(al[:4], "")+"garbage here\n"+strings.Join(al[4:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, nil, "oom", td+"pytorch/oom_error.txt", appsPath)
	if want := "gpuleak: warning: " + appsPath + ": read in part: 1 line could not be read and was skipped (line 5)"; code != 0 || !strings.Contains(errs, want) {
		t.Errorf("oom: exit %d, stderr %q, want %q", code, errs, want)
	}
	// export writes the samples read, and names the input read in part.
	code, _, errs = run(t, nil, "export", "-o", t.TempDir(), root)
	if want := "  read in part: " + filepath.Join(root, "h1", "j1", "gpu.csv") + ": 2 lines could not be read and were skipped"; code != 0 || !strings.Contains(errs, want) {
		t.Errorf("export: exit %d, stderr %q, want %q", code, errs, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A gzipped NVML log cut short (an upload stopped) is read up to the cut,
// as the plain log cut short is: exit 0, its samples before the cut, and
// the input marked read in part with where the stream was cut (in the
// table's input line, the warning on standard error and JSON's "cut").
// Before, it was exit 2 with no report. Two cuts: inside the first 64 KiB
// (the bytes read to recognise the format) and after them.
func TestGzipCutNVMLReadInPart(t *testing.T) {
	_, late := gzipCut(t)
	for _, path := range []string{td + "nvml/hunt_eval_sawtooth_gzip_cut.csv.gz", late} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", path)
		if code != ExitOK {
			t.Fatalf("%s: exit %d, want 0; stderr %q", path, code, errOut)
		}
		if !strings.Contains(errOut, "read in part") || !strings.Contains(errOut, "the gzip stream is cut short at byte offset") {
			t.Errorf("%s: stderr %q does not say it was read in part where the stream was cut", path, errOut)
		}
		var doc struct {
			Inputs []struct {
				Cut     string `json:"cut"`
				Samples int64  `json:"samples"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Inputs) != 1 || !strings.HasPrefix(doc.Inputs[0].Cut, "the gzip stream is cut short") || doc.Inputs[0].Samples == 0 {
			t.Errorf("%s: inputs %+v, want the samples before the cut and where it came", path, doc.Inputs)
		}
	}
}

// What analyze reads in part, the other commands over NVML logs read in
// part too: export writes the samples before a gzip stream's cut (the same
// rows analyze counts), says on standard error that the input was read in
// part and where, exits 0 (as for analyze: what was read is written, and
// says what it lacks), and marks the parts that hold the input's rows in
// their metadata (export.ReadInPartKey: Parquet key-value metadata, Arrow
// schema metadata); oom reads the log's processes up to the cut. Before,
// export wrote the findings, counted the log unreadable, wrote no samples
// and exited 2 ("no file exported"), and oom refused the log (exit 2).
func TestGzipCutNVMLExportAndOOM(t *testing.T) {
	whole, late := gzipCut(t)
	for _, path := range []string{td + "nvml/hunt_eval_sawtooth_gzip_cut.csv.gz", late} {
		code, out, errOut := run(t, nil, "analyze", "--format", "json", path)
		var doc struct {
			Inputs []struct {
				Cut  string `json:"cut"`
				Rows int64  `json:"rows"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || len(doc.Inputs) != 1 || doc.Inputs[0].Rows == 0 {
			t.Fatalf("%s: analyze exit %d (%v): %s", path, code, err, errOut)
		}
		cut := doc.Inputs[0].Cut
		for _, to := range []string{"parquet", "arrow"} {
			root, dir := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "gpu.csv.gz"), mustRead(t, path), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := run(t, nil, "export", root, "-o", dir, "--to", to)
			if code != ExitOK {
				t.Fatalf("%s --to %s: exit %d, want 0: %s", path, to, code, errOut)
			}
			if !strings.Contains(errOut, "1 exported") || !strings.Contains(errOut, "read in part: ") || !strings.Contains(errOut, cut) {
				t.Errorf("%s --to %s: stderr %q does not say the input was read in part, cut where analyze says (%s)", path, to, errOut, cut)
			}
			var rows int64
			for _, table := range []string{"samples", "findings"} {
				ps := parts(t, dir, table)
				if len(ps) == 0 {
					t.Fatalf("%s --to %s: no %s part", path, to, table)
				}
				for _, p := range ps {
					note := partMetadata(t, p, export.ReadInPartKey)
					var m map[string]string
					if err := json.Unmarshal([]byte(note), &m); err != nil || !strings.Contains(m[filepath.Join(root, "gpu.csv.gz")], cut) {
						t.Errorf("%s: metadata %s = %q, want the input's path and %q", p, export.ReadInPartKey, note, cut)
					}
					if table == "samples" {
						for _, rec := range readPart(t, p) {
							rows += rec.NumRows()
							rec.Release()
						}
					}
				}
			}
			if rows != doc.Inputs[0].Rows {
				t.Errorf("%s --to %s: %d sample rows exported, analyze read %d", path, to, rows, doc.Inputs[0].Rows)
			}
		}
		code, _, errOut = run(t, nil, "oom", path)
		if code != ExitOK || !strings.Contains(errOut, "read in part") || !strings.Contains(errOut, cut) {
			t.Errorf("%s: oom exit %d, stderr %q; want 0 and the input read in part where it was cut", path, code, errOut)
		}
	}
	// A log read whole has no such key.
	root, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "gpu.csv.gz"), whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, nil, "export", root, "-o", dir); code != ExitOK || strings.Contains(errOut, "read in part") {
		t.Fatalf("whole log: exit %d: %s", code, errOut)
	}
	for _, p := range parts(t, dir, "samples") {
		if note := partMetadata(t, p, export.ReadInPartKey); note != "" {
			t.Errorf("%s: a log read whole has %s = %q", p, export.ReadInPartKey, note)
		}
	}
}

// partMetadata is the value of key in a part's metadata: a Parquet file's
// key-value metadata, an Arrow IPC file's schema metadata; "" when absent.
func partMetadata(t *testing.T, p, key string) string {
	t.Helper()
	if strings.HasSuffix(p, ".arrow") {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := ipc.NewFileReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		md := r.Schema().Metadata()
		if i := md.FindKey(key); i >= 0 {
			return md.Values()[i]
		}
		return ""
	}
	pf, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if v := pf.MetaData().KeyValueMetadata().FindValue(key); v != nil {
		return *v
	}
	return ""
}

// gzipCut returns the fixture query_gpu.csv gzipped (stored, not
// compressed), and a file of it cut at byte 68,000: past the 64 KiB read
// to recognise the format.
func gzipCut(t *testing.T) (whole []byte, late string) {
	t.Helper()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.NoCompression)
	zw.Write(mustRead(t, td+"nvml/query_gpu.csv"))
	zw.Close()
	late = filepath.Join(t.TempDir(), "late.csv.gz")
	if err := os.WriteFile(late, gz.Bytes()[:68000], 0o644); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes(), late
}
