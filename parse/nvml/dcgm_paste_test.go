package nvml

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// A DCGM exporter scrape as people paste it (written from the exposition
// format dcgm-exporter prints; labels as in its documentation): indented
// by a Markdown list, "..." for lines left out, HELP and TYPE of a metric
// with no samples, two MIG instances of GPU 0 (GPU_I_ID), and one field
// holding DCGM's int64 blank (9223372036854775792: not supported), which
// is no figure.
const dcgmPaste = `  # HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
  # TYPE DCGM_FI_DEV_SM_CLOCK gauge
  ...
  # HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
  # TYPE DCGM_FI_DEV_FB_FREE gauge
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="1",Hostname="node1"} 9216
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="2",Hostname="node1"} 9223372036854775792
  # HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
  # TYPE DCGM_FI_DEV_FB_USED gauge
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="1",Hostname="node1"} 10752
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="2",Hostname="node1"} 13
  ...
`

func TestDCGMPaste(t *testing.T) {
	rows, meta, err := readRows(t, "paste.txt", dcgmPaste)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || meta.Skipped != 2 {
		t.Fatalf("%d rows, %d skipped: %+v", len(rows), meta.Skipped, rows)
	}
	a, b := rows[0], rows[1]
	if a.UUID != "GPU-a810a1fc/1" || *a.Used != 10752*MiB || a.Free == nil || *a.Free != 9216*MiB {
		t.Errorf("instance 1: %+v", a)
	}
	if b.UUID != "GPU-a810a1fc/2" || *b.Used != 13*MiB || b.Free != nil {
		t.Errorf("instance 2 (free is DCGM's blank): %+v", b)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "blank") || !strings.Contains(w, "left out") {
		t.Errorf("warnings %q", w)
	}
}

// dcgm_date_curl_loop_5min.txt (testdata/README.md): four scrapes of a
// "date; curl .../metrics | grep FB_" loop, 5 min apart from Thu May 2
// 10:00:00 UTC 2024, FB_USED 12000 MiB + 60 per scrape, FB_FREE 10515 - 60.
// Each date line times the scrape after it; read with and without the
// prompt lines.
func TestDCGMDateLines(t *testing.T) {
	b, err := os.ReadFile(tdata + "dcgm_date_curl_loop_5min.txt")
	if err != nil {
		t.Fatal(err)
	}
	var noPrompts []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "$ ") {
			noPrompts = append(noPrompts, l)
		}
	}
	for name, in := range map[string]string{"with prompts": string(b), "without prompts": strings.Join(noPrompts, "")} {
		rows, meta, err := readRows(t, "loop.txt", in)
		if err != nil || len(rows) != 4 || meta.Format != FormatDCGMPrometheus || meta.Clock != ClockAbsolute {
			t.Fatalf("%s: %v, %s, clock %s, %d rows", name, err, meta.Format, meta.Clock, len(rows))
		}
		for i, r := range rows {
			at := utc(2024, 5, 2, 10, 5*i, 0, 0)
			if r.TimeUs != at || *r.Used != int64(12000+60*i)*MiB || *r.Free != int64(10515-60*i)*MiB || r.Host != "ip-10-0-1-17" {
				t.Errorf("%s: scrape %d: %+v", name, i, r)
			}
		}
		if meta.Warnings.Len() != 0 {
			t.Errorf("%s: warnings %q", name, meta.Warnings.Strings())
		}
	}
}

// A date line's zone abbreviation picks the pass of a repeated hour:
// 02:30 CEST is 00:30 UTC, 02:30 CET 01:30 UTC (Europe/Berlin,
// 2024-10-27). A numeric zone is its offset; a zone --tz does not use
// there is read in --tz, with a warning.
func TestDateLineZones(t *testing.T) {
	scrape := func(v int) string { return fmt.Sprintf("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} %d\n", v) }
	in := "Sun Oct 27 02:30:00 CEST 2024\n" + scrape(1) + "Sun Oct 27 02:30:00 CET 2024\n" + scrape(2) + "Sun 27 Oct 2024 03:30:00 AM +0100\n" + scrape(3)
	rows, meta, err := readRows(t, "z.txt", in, WithLocation(berlin(t)))
	if err != nil || len(rows) != 3 {
		t.Fatalf("%v, %d rows", err, len(rows))
	}
	for i, want := range []int64{utc(2024, 10, 27, 0, 30, 0, 0), utc(2024, 10, 27, 1, 30, 0, 0), utc(2024, 10, 27, 2, 30, 0, 0)} {
		if rows[i].TimeUs != want {
			t.Errorf("scrape %d at %s, want %s", i, time.UnixMicro(rows[i].TimeUs).UTC(), time.UnixMicro(want).UTC())
		}
	}
	if meta.Warnings.Len() != 0 {
		t.Errorf("warnings %q", meta.Warnings.Strings())
	}
	// CEST under --tz UTC: read as UTC, and said.
	rows, meta, err = readRows(t, "u.txt", "Thu May  2 10:00:00 CEST 2024\n"+scrape(1))
	if err != nil || len(rows) != 1 || rows[0].TimeUs != utc(2024, 5, 2, 10, 0, 0, 0) {
		t.Fatalf("%v, %+v", err, rows)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 1: date printed the zone CEST, which is not --tz's (UTC") {
		t.Errorf("warnings %q", w)
	}
	// Before a CSV whose rows carry their own times, date's lines are
	// skipped with a warning.
	rows, meta, err = readRows(t, "c.txt", "Thu May  2 10:00:00 UTC 2024\ntimestamp, index, memory.used [MiB]\n2024/05/02 10:00:00.000, 0, 5 MiB\nThu May  2 10:00:01 UTC 2024\n2024/05/02 10:00:01.000, 0, 6 MiB\n")
	if err != nil || len(rows) != 2 || meta.Skipped != 2 {
		t.Fatalf("CSV: %v, %d rows, %d skipped", err, len(rows), meta.Skipped)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 1: date's output") {
		t.Errorf("CSV: warnings %q", w)
	}
}
