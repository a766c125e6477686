package nvml

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin on hosts without a zone database
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// dst_fallback_berlin_query_gpu.csv (testdata/README.md): --query-gpu every
// 3 min on a Europe/Berlin host from 2024-10-26 23:00 UTC (01:00 CEST) for
// 80 rows, across the change of 2024-10-27 01:00 UTC, when the clocks go
// back from 03:00 CEST to 02:00 CET. Row i was written at 23:00 UTC + 3i
// min, with (37i mod 1000) ms, as Berlin wall time: 02:00-02:59 appears
// twice. Read in Europe/Berlin, every row must come back to its instant:
// rows 20-39 (00:00-00:57 UTC) are the first pass of 02:xx (CEST, +02:00),
// rows 40-59 (01:00-01:57 UTC) the second (CET, +01:00). The wall clock
// goes back at row 40, line 42 (the header is line 1).
func TestDSTFallBackQueryGPU(t *testing.T) {
	rows, meta := readFile(t, fixtures+"dst_fallback_berlin_query_gpu.csv", WithLocation(berlin(t)))
	if len(rows) != 80 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		want := utc(2024, 10, 26, 23, 0, 0, 0) + int64(i)*180e6 + int64(37*i%1000)*1000
		if r.TimeUs != want {
			t.Errorf("row %d at %s, want %s", i, time.UnixMicro(r.TimeUs).UTC(), time.UnixMicro(want).UTC())
		}
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "line 42: the wall clock goes back to 2024-10-27 02:00:00") || !strings.Contains(w, "from CEST to CET") {
		t.Errorf("warnings %q", w)
	}
}

// queryGPU is a --query-gpu log of one GPU at the given wall times.
func queryGPU(times ...string) string {
	var b strings.Builder
	b.WriteString("timestamp, index, memory.used [MiB]\n")
	for i, tm := range times {
		fmt.Fprintf(&b, "%s, 0, %d MiB\n", tm, 100+i)
	}
	return b.String()
}

func TestDSTEdges(t *testing.T) {
	loc := berlin(t)
	check := func(name, in string, want []int64, warn string) {
		t.Helper()
		rows, meta, err := readRows(t, name, in, WithLocation(loc))
		if err != nil || len(rows) != len(want) {
			t.Fatalf("%s: %v, %d rows", name, err, len(rows))
		}
		for i := range want {
			if rows[i].TimeUs != want[i] {
				t.Errorf("%s: row %d at %s, want %s", name, i, time.UnixMicro(rows[i].TimeUs).UTC(), time.UnixMicro(want[i]).UTC())
			}
		}
		w := strings.Join(meta.Warnings.Strings(), "\n")
		if warn == "" && w != "" || warn != "" && !strings.Contains(w, warn) {
			t.Errorf("%s: warnings %q, want %q", name, w, warn)
		}
	}
	// Rows a fraction of a second out of order in the first pass of the
	// repeated hour (after 01:59 CEST) are no change of offset: CEST (+02:00).
	check("jitter.csv", queryGPU("2024/10/27 01:59:00.000", "2024/10/27 02:10:00.500", "2024/10/27 02:10:00.200"),
		[]int64{utc(2024, 10, 26, 23, 59, 0, 0), utc(2024, 10, 27, 0, 10, 0, 500), utc(2024, 10, 27, 0, 10, 0, 200)}, "")
	// A log that starts in the repeated hour cannot tell the pass: the
	// first (CEST), and a warning says it may be an hour early.
	check("start.csv", queryGPU("2024/10/27 02:30:00.000", "2024/10/27 03:00:00.000"),
		[]int64{utc(2024, 10, 27, 0, 30, 0, 0), utc(2024, 10, 27, 2, 0, 0, 0)}, "the log starts at 2024-10-27 02:30:00")
	// A sample interval longer than the fold: 02:30 CEST, then 02:15 CET
	// 45 minutes later (00:30 and 01:15 UTC): still read as the second pass.
	check("slow.csv", queryGPU("2024/10/27 02:30:00.000", "2024/10/27 02:15:00.000"),
		[]int64{utc(2024, 10, 27, 0, 30, 0, 0), utc(2024, 10, 27, 1, 15, 0, 0)}, "goes back")
	// Spring forward, 2024-03-31 01:00 UTC: 02:00 CET becomes 03:00 CEST.
	// 01:58 CET is 00:58 UTC, 03:00 CEST 01:00 UTC: two minutes apart.
	check("spring.csv", queryGPU("2024/03/31 01:58:00.000", "2024/03/31 03:00:00.000"),
		[]int64{utc(2024, 3, 31, 0, 58, 0, 0), utc(2024, 3, 31, 1, 0, 0, 0)}, "")
	// 02:30 does not exist that day: read on CET (+01:00), as a clock not
	// moved forward shows 01:30 UTC, with a warning that --tz may be wrong.
	check("gap.csv", queryGPU("2024/03/31 01:58:00.000", "2024/03/31 02:30:00.000"),
		[]int64{utc(2024, 3, 31, 0, 58, 0, 0), utc(2024, 3, 31, 1, 30, 0, 0)}, "line 3: 2024-03-31 02:30:00 does not exist in Europe/Berlin")
}

// The other local-time layouts go through the same reading: pmon -o DT,
// pmon -o T with --date (where a time of day that goes back an hour in the
// repeated hour is not the next day), and nvidia-smi's ctime line. 02:50
// and 02:55 CEST, then 02:00 and 02:05 CET: 00:50, 00:55, 01:00, 01:05 UTC.
func TestDSTFallBackOtherLayouts(t *testing.T) {
	loc := berlin(t)
	want := []int64{utc(2024, 10, 27, 0, 50, 0, 0), utc(2024, 10, 27, 0, 55, 0, 0), utc(2024, 10, 27, 1, 0, 0, 0), utc(2024, 10, 27, 1, 5, 0, 0)}
	clocks := []string{"02:50:00", "02:55:00", "02:00:00", "02:05:00"}
	var dt, tod strings.Builder
	dt.WriteString("#Date       Time        gpu         pid   type     fb   command\n#YYYYMMDD   HH:MM:SS    Idx           #    C/G     MB   name\n")
	tod.WriteString("#Time        gpu         pid   type     fb   command\n#HH:MM:SS    Idx           #    C/G     MB   name\n")
	for i, c := range clocks {
		fmt.Fprintf(&dt, " 20241027   %s      0        878     C   %d   python3\n", c, 100+i)
		fmt.Fprintf(&tod, " %s      0        878     C   %d   python3\n", c, 100+i)
	}
	for _, tc := range []struct {
		name, in string
		opts     []Option
	}{
		{"pmon_DT.txt", dt.String(), []Option{WithLocation(loc)}},
		{"pmon_T.txt", tod.String(), []Option{WithLocation(loc), WithDate(time.Date(2024, 10, 27, 0, 0, 0, 0, loc))}},
	} {
		rows, _, err := readRows(t, tc.name, tc.in, tc.opts...)
		if err != nil || len(rows) != 4 {
			t.Fatalf("%s: %v, %d rows", tc.name, err, len(rows))
		}
		for i := range want {
			if rows[i].TimeUs != want[i] {
				t.Errorf("%s: row %d at %s, want %s", tc.name, i, time.UnixMicro(rows[i].TimeUs).UTC(), time.UnixMicro(want[i]).UTC())
			}
		}
	}
	var tables strings.Builder
	for i, c := range clocks {
		fmt.Fprintf(&tables, "Sun Oct 27 %s 2024\n+------+\n| NVIDIA-SMI 580.1  Driver Version: 580.1 |\n+------+\n|   0  NVIDIA H200   On  |   00000000:00:06.0 Off |\n| N/A 30C P0 75W / 700W |   %dMiB / 143771MiB |\n+------+\n", c, 100+i)
	}
	rows, _, err := readRows(t, "tables.txt", tables.String(), WithLocation(loc))
	if err != nil || len(rows) != 4 {
		t.Fatalf("tables: %v, %d rows", err, len(rows))
	}
	for i := range want {
		if rows[i].TimeUs != want[i] || *rows[i].Used != int64(100+i)*MiB {
			t.Errorf("table %d: %+v, want at %s", i, rows[i], time.UnixMicro(want[i]).UTC())
		}
	}
}

// date(1)'s default output in the C locale and coreutils' en_US ones; a
// ctime without a zone (nvidia-smi's) is not one.
func TestDateFields(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // "2006-01-02 15:04:05 ZONE", or "" when not a date line
	}{
		{"Thu May  2 10:00:00 UTC 2024", "2024-05-02 10:00:00 UTC"},
		{"Sun Oct 27 02:30:00 CET 2024", "2024-10-27 02:30:00 CET"},
		{"Thu May  2 01:05:09 PM CEST 2024", "2024-05-02 13:05:09 CEST"},
		{"Thu May  2 12:05:09 AM +0530 2024", "2024-05-02 00:05:09 +0530"},
		{"Thu 02 May 2024 10:00:00 AM UTC", "2024-05-02 10:00:00 UTC"},
		{"Thu 02 May 2024 10:00:00 -03", "2024-05-02 10:00:00 -03"},
		{"Thu May  2 10:00:00 2024", ""},        // ctime: no zone
		{"Thu May 32 10:00:00 UTC 2024", ""},    // no such day
		{"Thu May  2 13:00:00 PM UTC 2024", ""}, // 13 PM
		{"Thu May  2 10:00:00 UTC+1 2024", ""},
		{"Thursday, May 2, 2024 10:00:00 UTC", ""},
	} {
		y, mo, d, h, mi, s, zone, ok := dateFields([]byte(tc.line))
		got := ""
		if ok {
			got = fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d %s", y, mo, d, h, mi, s, zone)
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.line, got, tc.want)
		}
		if tc.want != "" && !maybeDateLine([]byte(tc.line)) {
			t.Errorf("%q: not taken for a date line", tc.line)
		}
	}
}
