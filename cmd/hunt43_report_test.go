package cmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/export"
)

// Session 43's tester on the daily report and the diff of NVML series
// (testdata/README.md, "The daily report and diff, from the session-43
// tester").

// reportMarkdown runs gpuleak report over root and returns its Markdown.
func reportMarkdown(t *testing.T, root string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.md")
	if code, _, errs := run(t, nil, append([]string{"report", root, "-o", out}, args...)...); code != 0 {
		t.Fatalf("report: exit %d: %.200q", code, errs)
	}
	return string(mustRead(t, out))
}

// rowOf is the Markdown table row that starts with prefix, "" if none.
func rowOf(md, prefix string) string {
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// A GPU that grew from 1000 to 3900 MiB (100 MiB a minute, 30 samples)
// and then came back to 1000 MiB for its last 30 samples: the row's last
// column is its last sample, 1000 MiB, and its peak 3900 MiB (3.8 GiB),
// as trend's END says. It showed the peak in both (the released run's
// peak is the finding's bytes; its last sample is last_bytes).
func TestHunt43DailyLastIsTheLastSample(t *testing.T) {
	root := t.TempDir()
	linkJob(t, root, "j", "nvml/s43_grow_then_release.csv")
	md := reportMarkdown(t, root)
	want := "| whole GPU | growing | 1000 MiB | 3.8 GiB |"
	if row := rowOf(md, "| whole GPU |"); !strings.HasPrefix(row, want) {
		t.Errorf("row %.200q; want it to start %q", row, want)
	}
	d := dailyOf(t, root)
	if len(d.GPUs) != 1 || len(d.GPUs[0].Series) != 1 {
		t.Fatalf("%d GPUs; want 1 with 1 series", len(d.GPUs))
	}
	if s := d.GPUs[0].Series[0]; s.LastBytes == nil || *s.LastBytes != 1000<<20 {
		t.Errorf("series last_bytes %v; want %d", s.LastBytes, 1000<<20)
	}
}

// An allocator that counted OOMs no input describes: a memory_stats()
// dump whose num_ooms is 2 (the recorded memory_stats.json with num_ooms
// set to 2), no OOM message beside it. The process had 2 out-of-memory
// errors, as --fail-on oom counts them; the daily report said "0" OOMs
// and "No OOM.", its JSON summary.ooms 0, and only an input's warning
// told. Now summary.undescribed_ooms is 2 and its card and OOM section
// say so, while ooms (the described OOMs) stays 0. A dump whose num_ooms
// is 0 still reads "No OOM.".
func TestHunt43DailyCountsAllocatorCountedOOMs(t *testing.T) {
	root := t.TempDir()
	linkJob(t, root, "host-a/job2", "pytorch/synthetic/memory_stats_num_ooms2.json")
	d := dailyOf(t, root, "--group-by", "{host}/{job}/...")
	if d.Summary.OOMs != 0 || d.Summary.UndescribedOOMs != 2 || len(d.UndescribedOOMs) != 1 || d.UndescribedOOMs[0].Count != 2 || d.UndescribedOOMs[0].Job != "job2" {
		t.Errorf("ooms %d, undescribed %d, listed %+v; want 0, 2, one of 2 in job2", d.Summary.OOMs, d.Summary.UndescribedOOMs, d.UndescribedOOMs)
	}
	md := reportMarkdown(t, root, "--group-by", "{host}/{job}/...")
	for _, want := range []string{"- **0** OOMs\n- **2** OOMs counted by the allocator without a message\n", "the allocator counted 2 out-of-memory errors (num\\_ooms"} {
		if !strings.Contains(md, want) {
			t.Errorf("page lacks %q:\n%.200q", want, md)
		}
	}
	if strings.Contains(md, "No OOM.") {
		t.Errorf("page says No OOM.")
	}
	// The memory_summary() pasted in pytorch/pytorch#35901 (real, cut
	// where the paste was) reads "CUDA OOMs: 1" and holds no message.
	pasted := t.TempDir()
	linkJob(t, pasted, "j", "pytorch/pastes/summary_cuda_ooms1_pt35901_cut.txt")
	if d := dailyOf(t, pasted); d.Summary.OOMs != 0 || d.Summary.UndescribedOOMs != 1 {
		t.Errorf("pytorch#35901's summary: ooms %d, undescribed %d; want 0 and 1", d.Summary.OOMs, d.Summary.UndescribedOOMs)
	}
	clean := t.TempDir()
	linkJob(t, clean, "j", "pytorch/memory_stats.json")
	if md := reportMarkdown(t, clean); !strings.Contains(md, "No OOM.") || strings.Contains(md, "without a message") {
		t.Errorf("num_ooms 0: page %.200q; want No OOM. and no allocator-counted OOMs", md)
	}
}

// Logs without times whose period was not given (dcgmi dmon and pmon
// without -o; DCGM exporter text without timestamps): the samples are
// placed an assumed period apart, so per sample is what the log shows
// and every rate per hour and time to OOM rests on the assumption. The
// daily report turned them into "+176 GiB/h" (dcgmi dmon, 1 s assumed:
// 50 MiB a scrape is 50 MiB/s) and "+105 GiB/h" (pmon, 30 MiB a sample),
// the rows unmarked and the JSON without the assumption. Now the rows
// read per scrape or sample, as trend does (GPU 0 of the dmon log rises
// 2000, 2050, 2100 MiB ...: +50 MiB/scrape; pid 1234 of the pmon log
// 2000, 2030, 2060 MiB ...: +30 MiB/sample), the log cell says the
// period was assumed, a time to OOM is counted in scrapes with the time
// it would be at the assumed period, and each series carries
// assumed_interval_s (1 s for dmon and pmon, 30 s for DCGM exporter text,
// whose DCGM log here rises 60 MiB a scrape).
func TestHunt43DailyAssumedPeriodIsPerSample(t *testing.T) {
	root := t.TempDir()
	linkJob(t, root, "j", "nvml/s43_dcgmi_leak.txt")
	linkJob(t, root, "j", "nvml/s43_pmon_reuse.txt")
	linkJob(t, root, "k", "nvml/hunt_dcgm_no_times_5min.txt")
	md := reportMarkdown(t, root)
	for _, c := range []struct{ prefix, want string }{
		{"| whole GPU | growing | 3.9 GiB |", "| +50 MiB/scrape |"},
		{"| pid 1234 trainer | growing |", "| +30 MiB/sample |"},
		{"| whole GPU | growing | 12 GiB |", "| +60 MiB/scrape | "},
	} {
		row := rowOf(md, c.prefix)
		if !strings.Contains(row, c.want) || !strings.Contains(row, " apart assumed) |") || strings.Contains(row, "/h |") {
			t.Errorf("row %.200q; want %q, per sample, marked assumed", row, c.want)
		}
	}
	if row := rowOf(md, "| whole GPU | growing | 12 GiB |"); !strings.Contains(row, " scrapes (") || !strings.Contains(row, "if the scrapes are 30 s apart, as assumed") {
		t.Errorf("row %.200q; want a time to OOM in scrapes, at 30 s assumed", row)
	}
	// A real dcgmi dmon paste without times (ahb-sjsu/agi-hpc, an idle
	// RTX 2080 Ti: flat at 0 B): its row is marked too.
	real := t.TempDir()
	linkJob(t, real, "j", "nvml/field/agihpc_dcgmi_dmon_rtx2080ti.txt")
	if row := rowOf(reportMarkdown(t, real), "| whole GPU |"); !strings.HasSuffix(row, "(no times: 1 s apart assumed) |") {
		t.Errorf("agi-hpc's dcgmi dmon row %.200q; want its log marked as placed 1 s apart, assumed", row)
	}
	d := dailyOf(t, root)
	n := 0
	for _, g := range d.GPUs {
		for _, s := range g.Series {
			want := 1.0
			if strings.HasSuffix(s.Path, "hunt_dcgm_no_times_5min.txt") {
				want = 30
			}
			if s.AssumedIntervalS == nil || *s.AssumedIntervalS != want {
				t.Errorf("%s %s: assumed_interval_s %v; want %g", s.Path, g.GPU, s.AssumedIntervalS, want)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("no series")
	}
}

// gpuleak diff of two NVML logs: GPU 0 was a step in BASE (5000 MiB
// rising to 10800 MiB, then level for 30 minutes) and grows in NEW (1000
// to 3900 MiB, 100 MiB a minute, then back to 1000 MiB): a leak suspect
// in NEW, though its bytes (the released run's peak, 3.8 GiB) are below
// BASE's 11 GiB. The diff said only "shrunk trend GPU 0, 11 GiB in 1
// allocation -> 3.8 GiB in 1 allocation": no word of the class, and
// allocations an NVML series does not have. Now the line counts series
// and names each side's class, the entry's note says it grows in NEW, and
// the JSON carries before_class and after_class; the other way round, it
// no longer grows; a log against itself is the same, with no note.
func TestHunt43DiffOfNVMLSeriesNotesItsClass(t *testing.T) {
	base, grew := td+"nvml/s43_t6_plateau.csv", td+"nvml/s43_grow_then_release.csv"
	_, out, _ := run(t, nil, "diff", base, grew)
	for _, want := range []string{"used 11 GiB (1 series, step) -> used 3.8 GiB (1 series, growing)", "growing in NEW", "a leak suspect"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%.200q", want, out)
		}
	}
	if strings.Contains(out, "allocation") {
		t.Errorf("diff of NVML series counts allocations:\n%.200q", out)
	}
	_, out, _ = run(t, nil, "diff", "--format", "json", base, grew)
	var d struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 1 || d.Entries[0]["before_class"] != "step" || d.Entries[0]["after_class"] != "growing" || !strings.Contains(fmt.Sprint(d.Entries[0]["note"]), "growing in NEW") {
		t.Errorf("entries %.200v; want one, step -> growing, with a note", d.Entries)
	}
	if _, out, _ = run(t, nil, "diff", grew, base); !strings.Contains(out, "it no longer grows") {
		t.Errorf("NEW step after BASE growing: %.200q; want it no longer grows", out)
	}
	if _, out, _ = run(t, nil, "diff", "--all", base, base); strings.Contains(out, "note:") || !strings.Contains(out, "1 same") {
		t.Errorf("a log against itself: %.200q; want same, no note", out)
	}
}

// analyze --baseline of the same two logs: the series that grows now was
// left out as "shrunk", and --fail-on growing passed (exit 0) though the
// run's GPU grows. A series that grows now and did not in the baseline
// is kept, with the note, and the gate trips.
func TestHunt43BaselineKeepsANewlyGrowingSeries(t *testing.T) {
	b := filepath.Join(t.TempDir(), "b.json")
	if code, _, errs := run(t, nil, "analyze", "-q", "--write-baseline", b, td+"nvml/s43_t6_plateau.csv"); code != 0 {
		t.Fatalf("--write-baseline: exit %d: %.200q", code, errs)
	}
	code, out, errs := run(t, nil, "analyze", "--baseline", b, "--fail-on", "growing", td+"nvml/s43_grow_then_release.csv")
	if code != 1 || !strings.Contains(out, "growing in this run") || !strings.Contains(out+errs, "--fail-on growing tripped") {
		t.Errorf("exit %d, output %.200q; want 1, the series kept with its note", code, out+errs)
	}
}

// gpuleak export of logs without times: their samples' time_us count
// from the Unix epoch (1970-01-01, 1 s a sample: dcgmi dmon and pmon
// without -o, their period assumed) inside the partition of the file's
// modification date, and nothing said so. Every samples and findings
// part that holds such a log's rows now says it under
// export.UndatedKey: the log's path, "no times", the assumed period. A
// log whose times are dates (the query-gpu CSV) has no such entry.
func TestHunt43ExportSaysSamplesHaveNoTimes(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	linkJob(t, root, "j", "nvml/s43_pmon_reuse.txt")
	linkJob(t, root, "j", "nvml/s43_grow_then_release.csv")
	if code, _, errs := run(t, nil, "export", root, "-o", dir); code != ExitOK {
		t.Fatalf("export: exit %d: %.200q", code, errs)
	}
	pmon := filepath.Join(root, "j", "s43_pmon_reuse.txt")
	n := 0
	for _, table := range []string{"samples", "findings"} {
		for _, p := range parts(t, dir, table) {
			var m map[string]string
			note := partMetadata(t, p, export.UndatedKey)
			if note == "" {
				continue
			}
			n++
			if err := json.Unmarshal([]byte(note), &m); err != nil || !strings.Contains(m[pmon], "no times") || !strings.Contains(m[pmon], "1 s, assumed") {
				t.Errorf("%s: %s = %.200q; want the pmon log, no times, 1 s assumed", p, export.UndatedKey, note)
			}
			for path := range m {
				if strings.HasSuffix(path, ".csv") {
					t.Errorf("%s: the CSV, whose times are dates, is marked undated", p)
				}
			}
		}
	}
	if n < 2 {
		t.Errorf("%d parts marked; want the pmon log's samples and findings", n)
	}
}
