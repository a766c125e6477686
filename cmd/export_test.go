package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/gpuleak/gpuleak/export"
)

// parts lists an export's part files of one table.
func parts(t *testing.T, out, table string) []string {
	t.Helper()
	var ps []string
	err := filepath.WalkDir(filepath.Join(out, "table="+table), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			ps = append(ps, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestExportArrowIPC(t *testing.T) {
	root := fleet(t)
	out := t.TempDir()
	code, _, errs := run(t, nil, "export", root, "-o", out, "--to", "arrow", "--group-by", "{host}/{job}/...")
	if code != 0 {
		t.Fatal(errs)
	}
	// The fixtures' README: query_gpu.csv holds 459 samples; its
	// --query-compute-apps log 295 process rows (gpuleak analyze counts them).
	var rows int64
	for _, p := range parts(t, out, "samples") {
		if !strings.Contains(p, "/date=2026-11-30/host=host-b/") || !strings.HasSuffix(p, ".arrow") {
			t.Errorf("samples part at %s; want date=2026-11-30/host=host-b, .arrow", p)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			t.Fatal(err)
		}
		if r.Schema().Field(r.Schema().NumFields()-1).Name != "path" {
			t.Errorf("last column %s, want path", r.Schema().Field(r.Schema().NumFields()-1).Name)
		}
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rows += rec.NumRows()
		}
		r.Close()
		f.Close()
	}
	if rows != 459+295 {
		t.Errorf("%d sample rows; want 754", rows)
	}
	if !strings.Contains(errs, "1 skipped") || !strings.Contains(errs, "1 unreadable") {
		t.Errorf("summary: %s", errs)
	}
}

func TestExportParquetFindings(t *testing.T) {
	root := fleet(t)
	out := t.TempDir()
	if code, _, errs := run(t, nil, "export", root, "-o", out, "--group-by", "{host}/{job}/..."); code != 0 {
		t.Fatal(errs)
	}
	found := false
	for _, p := range parts(t, out, "findings") {
		if !strings.Contains(p, "/host=host-a/") {
			continue
		}
		pf, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(tbl, 1024)
		for tr.Next() {
			rec := tr.RecordBatch()
			col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
			kinds, sites, bytes := col("kind").(*array.String), col("site").(*array.String), col("bytes").(*array.Int64)
			tcol := col("time").(*array.Timestamp)
			for i := 0; i < int(rec.NumRows()); i++ {
				if kinds.Value(i) == "leak" && sites.Value(i) == "forward (leak_train_loop.py:11)" {
					found = true
					if bytes.Value(i) != 80<<20 {
						t.Errorf("leak bytes %d, want 80 MiB", bytes.Value(i))
					}
					if d := tcol.Value(i).ToTime(arrow.Microsecond).UTC().Format("2006-01-02"); d != "2026-11-30" || !strings.Contains(p, "date=2026-11-30") {
						t.Errorf("leak dated %s in %s", d, p)
					}
				}
			}
		}
		tr.Release()
		tbl.Release()
		pf.Close()
	}
	if !found {
		t.Error("no findings row for the leak at forward (leak_train_loop.py:11)")
	}
	if code, _, errs := run(t, nil, "export", root, "-o", out, "--to", "csv"); code != ExitInput || !strings.Contains(errs, "unknown --to") {
		t.Errorf("--to csv: exit %d %s", code, errs)
	}
}

func TestHiveEscape(t *testing.T) {
	for in, want := range map[string]string{"node-7": "node-7", "a/b": "a%2Fb", "k=v": "k%3Dv", "50%": "50%25", "": "unknown", "..": "%2E%2E", "GPU-f7fe": "GPU-f7fe"} {
		if got := export.Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 15, defects 4 and 5: a second export into the same directory adds
// its parts beside the first's (--help: "parts are added beside what it
// holds") and replaces none; parts are 0644 as report -o's files are.
func TestExportAddsPartsBesideEarlierOnes(t *testing.T) {
	root := fleet(t)
	out := t.TempDir()
	mtimes := map[string]int64{}
	for i := range 2 {
		code, _, errs := run(t, nil, "export", root, "-o", out, "--to", "arrow", "--group-by", "{host}/{job}/...")
		if code != 0 {
			t.Fatal(errs)
		}
		ps := parts(t, out, "samples")
		if i == 0 {
			for _, p := range ps {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != 0o644 {
					t.Errorf("%s: mode %v; want 0644", p, st.Mode().Perm())
				}
				mtimes[p] = st.ModTime().UnixNano()
			}
			continue
		}
		if len(ps) != 2*len(mtimes) {
			t.Errorf("after two exports %d samples parts; want %d (the first's kept)", len(ps), 2*len(mtimes))
		}
		for p, m := range mtimes {
			st, err := os.Stat(p)
			if err != nil || st.ModTime().UnixNano() != m {
				t.Errorf("%s of the first export replaced or lost (%v)", p, err)
			}
		}
	}
}

// Issue 15, defect 8: a dmon log gives a GPU's index only; the
// --query-gpu log of the same job gives its UUID (its first row's uuid
// column). The samples table names the dmon rows' GPU by that UUID, as
// the daily report does.
func TestExportSamplesNameDmonGPUByUUID(t *testing.T) {
	q, err := os.ReadFile(td + "nvml/leak_exit_query_gpu.csv")
	if err != nil {
		t.Fatal(err)
	}
	uuid := strings.TrimSpace(strings.Split(strings.Split(string(q), "\n")[1], ",")[2])
	root := t.TempDir()
	job := filepath.Join(root, "job")
	if err := os.MkdirAll(job, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"leak_exit_dmon_mu_TD.txt", "leak_exit_query_gpu.csv"} {
		abs, err := filepath.Abs(td + "nvml/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(job, f)); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	if code, _, errs := run(t, nil, "export", root, "-o", out, "--to", "arrow"); code != 0 {
		t.Fatal(errs)
	}
	dmonRows, named := 0, 0
	for _, p := range parts(t, out, "samples") {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
			paths, uuids := col("path").(*array.String), col("gpu_uuid").(*array.Dictionary)
			dict := uuids.Dictionary().(*array.String)
			for j := 0; j < int(rec.NumRows()); j++ {
				if !strings.HasSuffix(paths.Value(j), "dmon_mu_TD.txt") {
					continue
				}
				dmonRows++
				if !uuids.IsNull(j) && dict.Value(uuids.GetValueIndex(j)) == uuid {
					named++
				}
			}
		}
		r.Close()
		f.Close()
	}
	if dmonRows == 0 || named != dmonRows {
		t.Errorf("%d of %d dmon sample rows name GPU %s; want all", named, dmonRows, uuid)
	}
}
