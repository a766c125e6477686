package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// TestExportParquetMatchesArrowIPC: the Parquet writer (parquet-go) and
// the Arrow IPC writer (arrow-go) are handed the same record batches, so
// an export of the fleet in either format holds the same tables: the same
// columns in the same order, of the same types, and the same rows in each
// partition, nulls where the other has nulls. The Parquet parts are read
// with arrow-go's reader (pqarrow), independent of the writer. The fleet's
// inputs give every kind of column a parser makes: dictionaries of int8
// (NVML's host), int16 (a snapshot's actions) and int32 indices (NVML's
// gpu_uuid), timestamp[us, UTC], uint64 addresses, a fixed-size list (a
// segment's pool id), nullable columns with nulls.
func TestExportParquetMatchesArrowIPC(t *testing.T) {
	root := fleet(t)
	tables := map[string]map[string]string{} // format -> table -> canonical text
	var nulls int
	kinds := map[arrow.Type]bool{}
	for _, format := range []string{"parquet", "arrow"} {
		out := t.TempDir()
		if code, _, errs := run(t, nil, "export", root, "-o", out, "--to", format, "--group-by", "{host}/{job}/..."); code != 0 {
			t.Fatal(errs)
		}
		tables[format] = map[string]string{}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			table := strings.TrimPrefix(e.Name(), "table=")
			var rows []string
			var schema string
			for _, p := range parts(t, out, table) {
				part, _ := filepath.Rel(out, filepath.Dir(p))
				for _, rec := range readPart(t, p) {
					var cols []string
					for _, f := range rec.Schema().Fields() {
						cols = append(cols, f.Name+" "+canonicalType(f.Type)+fmt.Sprintf(" nullable=%v", f.Nullable))
						kinds[f.Type.ID()] = true
					}
					schema = strings.Join(cols, ", ")
					for i := 0; i < int(rec.NumRows()); i++ {
						var cells []string
						for _, c := range rec.Columns() {
							if c.IsNull(i) {
								nulls++
							}
							cells = append(cells, exportCell(c, i))
						}
						rows = append(rows, part+": "+strings.Join(cells, " | "))
					}
					rec.Release()
				}
			}
			slices.Sort(rows)
			tables[format][table] = schema + "\n" + strings.Join(rows, "\n")
		}
	}
	if len(tables["parquet"]) != len(tables["arrow"]) || len(tables["parquet"]) < 5 {
		t.Errorf("tables: parquet %d, arrow %d; want the same, at least 5", len(tables["parquet"]), len(tables["arrow"]))
	}
	for table, want := range tables["arrow"] {
		if got := tables["parquet"][table]; got != want {
			t.Errorf("table %s differs between Parquet and Arrow IPC:\nparquet %.2000s\narrow   %.2000s", table, got, want)
		}
	}
	for _, k := range []arrow.Type{arrow.DICTIONARY, arrow.TIMESTAMP, arrow.UINT64, arrow.FIXED_SIZE_LIST, arrow.STRING, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL} {
		if !kinds[k] {
			t.Errorf("no column of type %s in the export: the comparison does not cover it", k)
		}
	}
	if nulls == 0 {
		t.Error("no null in the export: the comparison does not cover nulls")
	}
}

// readPart reads every record batch of a part, Parquet (with pqarrow) or
// Arrow IPC; the caller releases them.
func readPart(t *testing.T, p string) []arrow.RecordBatch {
	t.Helper()
	var recs []arrow.RecordBatch
	if strings.HasSuffix(p, ".arrow") {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rec.Retain()
			recs = append(recs, rec)
		}
		return recs
	}
	pf, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1<<16)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	return recs
}

// canonicalType: a type as both readers must give it, but for a list's
// element name (Parquet's "element", Arrow's "item").
func canonicalType(t arrow.DataType) string {
	if l, ok := t.(*arrow.FixedSizeListType); ok {
		return fmt.Sprintf("fixed_size_list<%s nullable=%v>[%d]", l.Elem(), l.ElemField().Nullable, l.Len())
	}
	return t.String()
}

// exportCell renders row i of a column: dictionaries resolved, lists
// listed, nulls as "null", strings quoted (so "" and null differ).
func exportCell(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "null"
	}
	switch a := a.(type) {
	case *array.Dictionary:
		return strconv.Quote(a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
	case *array.String:
		return strconv.Quote(a.Value(i))
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		var es []string
		for j := lo; j < hi; j++ {
			es = append(es, exportCell(a.ListValues(), int(j)))
		}
		return "[" + strings.Join(es, " ") + "]"
	case *array.Timestamp:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	}
	return a.ValueStr(i)
}

// TestExportNothingExported: an export that exported no file (an empty
// or unmounted root, only files of no format gpuleak reads, only files it
// cannot read) exits 2 and says where it looked, as report does; one
// readable file beside an unreadable one is an export (exit 0, the
// unreadable one counted, as --help says).
func TestExportNothingExported(t *testing.T) {
	empty, skipped, unreadable := nothingReadRoots(t) // report_test.go
	mixed := t.TempDir()
	if err := os.WriteFile(filepath.Join(mixed, "empty.pickle"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mixed, "oom_error.txt"), mustRead(t, td+"pytorch/oom_error.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root  string
		code  int
		wants []string
	}{
		{empty, 2, []string{"gpuleak export: 0 files: 0 exported", "gpuleak: export: no input found under " + empty + ":", "NVML sample logs"}},
		{skipped, 2, []string{"gpuleak export: 1 file: 0 exported, 1 skipped", "gpuleak: export: nothing exported under " + skipped + ": of the 1 file found, 1 without a format gpuleak reads, 0 unreadable"}},
		{unreadable, 2, []string{"gpuleak: export: nothing exported under " + unreadable + ": of the 1 file found, 0 without a format gpuleak reads, 1 unreadable"}},
		{mixed, 0, []string{"gpuleak export: 2 files: 1 exported, 0 skipped (no artifact), 1 unreadable"}},
	} {
		code, _, errs := run(t, nil, "export", "-o", t.TempDir(), c.root)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.root, code, c.code, errs)
		}
		for _, w := range c.wants {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: standard error %q, want %q in it", c.root, errs, w)
			}
		}
	}
}

// The findings of a log without times go to its file's date, not to
// 1970-01-01 by their times counted from the Unix epoch (report_test.go,
// undatedJob), and their time column is null: unknown.
func TestExportDatesLogsWithoutTimesByFile(t *testing.T) {
	root := undatedJob(t)
	out := t.TempDir()
	if code, _, errs := run(t, nil, "export", root, "-o", out, "--to", "arrow"); code != 0 {
		t.Fatal(errs)
	}
	ps := parts(t, out, "findings")
	if len(ps) == 0 {
		t.Fatal("no findings part")
	}
	for _, p := range ps {
		if !strings.Contains(p, "date=2026-12-05") {
			t.Errorf("%s: want the files' date, 2026-12-05", p)
		}
		for _, rec := range readPart(t, p) {
			col := rec.Column(rec.Schema().FieldIndices("time")[0])
			if col.NullN() != col.Len() {
				t.Errorf("%s: %d of %d findings with a time; want none (unknown)", p, col.Len()-col.NullN(), col.Len())
			}
			rec.Release()
		}
	}
}

// An export that writes nothing (no input read, or an error) takes away
// the directories it made for -o, parents included, and keeps one that
// was there before, as it was (empty).
func TestExportWritingNothingLeavesNoDirectory(t *testing.T) {
	empty, skipped, unreadable := nothingReadRoots(t) // report_test.go
	missing := filepath.Join(t.TempDir(), "no-such-root")
	for _, root := range []string{empty, skipped, unreadable, missing} {
		base := t.TempDir()
		out := filepath.Join(base, "fleet", "day", "out")
		code, _, errs := run(t, nil, "export", "-o", out, root)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", root, code, errs)
		}
		// base existed before: it stays; fleet/day/out were made by the
		// export: none of them stays.
		if _, err := os.Stat(base); err != nil {
			t.Errorf("%s: %v: the directory that held -o was removed", root, err)
		}
		if _, err := os.Stat(filepath.Join(base, "fleet")); !os.IsNotExist(err) {
			t.Errorf("%s: %s left behind (%v)", root, filepath.Join(base, "fleet"), err)
		}
		// An -o that existed before stays, empty as it was.
		pre := t.TempDir()
		code, _, _ = run(t, nil, "export", "-o", pre, root)
		if ents, err := os.ReadDir(pre); code != 2 || err != nil || len(ents) != 0 {
			t.Errorf("%s: exit %d, -o that existed before: %v %v, want it there and empty", root, code, ents, err)
		}
	}
}

// A fleet log (pdsh's `host: ` before every line) names a host per row:
// with no --group-by, its samples go to each row's own host's partition,
// as its findings do. fleet_pdsh_query_gpu.txt (testdata/README.md)
// interleaves node01's and node02's lines, 8 rows each (2 GPUs x 4
// ticks), node02's GPU 0 at 5000 MiB in every tick and node01's at 1000
// to 4000 MiB. Was: all 16 rows in host=node01, the first host the
// findings name. h45v_fleet_hostname_column.csv holds the same rows as a
// CSV with a hostname column (a collection script's merge): was all 16
// rows in host=unknown, the column not read.
func TestExportFleetLogPartitionsByRowHost(t *testing.T) {
	for _, name := range []string{"fleet_pdsh_query_gpu.txt", "h45v_fleet_hostname_column.csv"} {
		exportFleetLogByRowHost(t, name)
	}
}

func exportFleetLogByRowHost(t *testing.T, name string) {
	root := t.TempDir()
	abs, err := filepath.Abs(td + "nvml/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(root, name)); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{name + ": arrow", name + ": parquet"} {
		out := t.TempDir()
		if code, _, errs := run(t, nil, "export", root, "-o", out, "--to", format[len(name)+2:]); code != 0 {
			t.Fatalf("%s: %.200q", format, errs)
		}
		rowsIn := map[string]int{}   // partition host -> rows
		gpu0 := map[string][]int64{} // partition host -> GPU 0's used MiB
		for _, p := range parts(t, out, "samples") {
			part := strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "host=")
			for _, rec := range readPart(t, p) {
				col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
				hosts, gpus, used := col("host").(*array.Dictionary), col("gpu").(*array.Int32), col("used_bytes").(*array.Int64)
				for i := 0; i < int(rec.NumRows()); i++ {
					h := hosts.Dictionary().(*array.String).Value(hosts.GetValueIndex(i))
					if h != part {
						t.Errorf("%s: a row of %s in host=%s", format, h, part)
					}
					rowsIn[part]++
					if gpus.Value(i) == 0 {
						gpu0[part] = append(gpu0[part], used.Value(i)>>20)
					}
				}
				rec.Release()
			}
		}
		if rowsIn["node01"] != 8 || rowsIn["node02"] != 8 || len(rowsIn) != 2 {
			t.Errorf("%s: rows by partition %v; want node01 and node02 8 each", format, rowsIn)
		}
		if want := []int64{5000, 5000, 5000, 5000}; !slices.Equal(gpu0["node02"], want) {
			t.Errorf("%s: node02's GPU 0 %v MiB; want %v", format, gpu0["node02"], want)
		}
		if want := []int64{1000, 2000, 3000, 4000}; !slices.Equal(gpu0["node01"], want) {
			t.Errorf("%s: node01's GPU 0 %v MiB; want %v", format, gpu0["node01"], want)
		}
	}
}
