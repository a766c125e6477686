package fleettest

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/gpuleak/gpuleak/cmd"
)

const fixtures = "../../shared/fixtures"

const mib = 1 << 20

// exportFixtures exports the shared fixtures as Parquet and opens DuckDB
// on views of the export's tables.
func exportFixtures(t *testing.T) *sql.DB {
	t.Helper()
	if _, err := os.Stat(fixtures); err != nil {
		t.Skipf("%s is absent: no fixtures to export (%v)", fixtures, err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	ios := &cmd.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}
	if code := cmd.Main([]string{"export", fixtures, "-o", out}, ios, "test"); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr.String())
	}
	t.Log(stderr.String())
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, table := range []string{"findings", "samples"} {
		q := `CREATE VIEW ` + table + ` AS SELECT * FROM read_parquet('` + filepath.ToSlash(out) + `/table=` + table + `/*/*/*.parquet', hive_partitioning = true)`
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db
}

// The README's queries, as run here (the README's use current_date - 1
// where these name the fixtures' day).
const (
	topLeakSites = `
SELECT site, count(DISTINCT job) AS jobs, sum(bytes) AS bytes, sum(count) AS blocks, max(bytes_per_s) AS fastest
FROM findings
WHERE kind = 'leak' AND date = DATE '2026-11-30'
GROUP BY site
ORDER BY bytes DESC, site`

	growingGPUs = `
SELECT host, coalesce(gpu_uuid, 'gpu ' || gpu) AS gpu, source,
       regr_slope(used_bytes, epoch(time_us)) * 3600 AS bytes_per_hour,
       count(*) AS samples
FROM samples
WHERE pid IS NULL
GROUP BY ALL
ORDER BY bytes_per_hour DESC`

	oomsByCause = `
SELECT date, cause, count(*) AS ooms, max(requested_bytes) AS largest_request
FROM findings
WHERE kind = 'oom'
GROUP BY date, cause
ORDER BY date, ooms DESC, cause`
)

func TestTopLeakSitesYesterday(t *testing.T) {
	db := exportFixtures(t)
	rows, err := db.Query(topLeakSites)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int64{}
	var order []string
	for rows.Next() {
		var site string
		var jobs, bytes, blocks int64
		var fastest sql.NullFloat64
		if err := rows.Scan(&site, &jobs, &bytes, &blocks, &fastest); err != nil {
			t.Fatal(err)
		}
		got[site] = bytes
		order = append(order, site)
		t.Logf("%-45s jobs %d  %d MiB in %d blocks", site, jobs, bytes/mib, blocks)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The fixtures' README: oom_observer's 66 blocks of 64 MiB (4224 MiB)
	// live from oom.py:13, the largest; model_reload's 6 extra copies (at
	// least 768 MiB) in build (model_reload.py:5); leak_train_loop's 40
	// blocks of 2 MiB at forward (leak_train_loop.py:11); multi_gpu_leak's
	// 60 MiB or more at multi_gpu_leak.py:12 (device 1).
	if len(order) == 0 || order[0] != "grow (oom.py:13)" || got["grow (oom.py:13)"] != 4224*mib {
		t.Errorf("top site %v, %d bytes; want grow (oom.py:13) with 4224 MiB", order, got["grow (oom.py:13)"])
	}
	if b := got["build (model_reload.py:5)"]; b < 768*mib {
		t.Errorf("build (model_reload.py:5): %d bytes; want at least 768 MiB", b)
	}
	if b := got["forward (leak_train_loop.py:11)"]; b != 80*mib {
		t.Errorf("forward (leak_train_loop.py:11): %d bytes; want 80 MiB", b)
	}
	if b := got["<module> (multi_gpu_leak.py:12)"]; b < 60*mib {
		t.Errorf("multi_gpu_leak.py:12: %d bytes; want at least 60 MiB", b)
	}
	if _, ok := got["forward (clean_train_loop.py:11)"]; ok {
		t.Error("the clean loop leaks")
	}
}

func TestGPUsGrowingPerHour(t *testing.T) {
	db := exportFixtures(t)
	// The expected slope is computed here from query_gpu.csv itself: the
	// least-squares line of memory.used (MiB) against its timestamps.
	want := slopeOfQueryGPU(t, filepath.Join(fixtures, "nvml/query_gpu.csv"))
	rows, err := db.Query(growingGPUs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var host, gpu sql.NullString
		var source string
		var perHour float64
		var n int64
		if err := rows.Scan(&host, &gpu, &source, &perHour, &n); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %s %s: %+.0f MiB/h over %d samples", host.String, gpu.String, source, perHour/mib, n)
		if source != "nvidia-smi-query-gpu" {
			continue
		}
		found = true
		if n != 459 {
			t.Errorf("query_gpu.csv: %d samples; want 459 (the README)", n)
		}
		if math.Abs(perHour-want) > 1e-6*math.Abs(want)+1 {
			t.Errorf("query_gpu.csv: %.0f bytes/h; the CSV's own least squares give %.0f", perHour, want)
		}
		if grew := perHour > 1<<30; grew != (want > 1<<30) {
			t.Errorf("grew more than 1 GiB/h: %v, want %v", grew, want > 1<<30)
		}
	}
	if !found {
		t.Error("no row for query_gpu.csv's GPU")
	}
}

// slopeOfQueryGPU: bytes per hour of memory.used in an nvidia-smi
// --query-gpu CSV with a header (timestamp "YYYY/MM/DD HH:MM:SS.mmm", UTC).
func slopeOfQueryGPU(t *testing.T, path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ti, ui := -1, -1
	for i, h := range recs[0] {
		switch {
		case h == "timestamp":
			ti = i
		case strings.HasPrefix(h, "memory.used"):
			ui = i
		}
	}
	var xs, ys []float64
	for _, rec := range recs[1:] {
		ts, err := time.Parse("2006/01/02 15:04:05.000", rec[ti])
		if err != nil {
			t.Fatal(err)
		}
		mibs, err := strconv.ParseFloat(strings.TrimSuffix(rec[ui], " MiB"), 64)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, float64(ts.UnixMicro())/1e6)
		ys = append(ys, mibs*mib)
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	return sxy / sxx * 3600
}

func TestOOMsByCausePerDay(t *testing.T) {
	db := exportFixtures(t)
	rows, err := db.Query(oomsByCause)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int64{}
	largest := map[string]int64{}
	for rows.Next() {
		var day time.Time
		var cause string
		var n, req int64
		if err := rows.Scan(&day, &cause, &n, &req); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %-30s %d (largest request %d MiB)", day.Format(time.DateOnly), cause, n, req/mib)
		if d := day.Format(time.DateOnly); d != "2026-11-30" {
			t.Errorf("an OOM on %s; the fixtures' OOMs are all of 2026-11-30", d)
		}
		got[cause] += n
		largest[cause] = req
	}
	// The fixtures' README: oom_observer's 64 MiB request failed at the
	// process's memory limit with the memory accumulated at oom.py:13;
	// fragmentation_oom's 512 MiB request failed from fragmentation (its
	// 3 MiB OOM while filling is a third). Three OOMs in all.
	var total int64
	for _, n := range got {
		total += n
	}
	if total != 3 {
		t.Errorf("%d OOMs; want 3", total)
	}
	acc, frag := false, false
	for cause, req := range largest {
		if req == 64*mib && strings.Contains(cause, "accumulation") {
			acc = true
		}
		if req == 512*mib && strings.Contains(cause, "fragmentation") {
			frag = true
		}
	}
	if !acc || !frag {
		t.Errorf("causes %v: want the 64 MiB OOM of accumulation and the 512 MiB one of fragmentation", largest)
	}
}
