package sanitizer

import (
	"os"
	"strings"
	"testing"
)

// xmrig-nvidia#199: "Before fix" and "After fix", each a fenced pair of
// cuda-memcheck summaries without a banner (lines 3-4: 1006959488 bytes
// in 10 allocations, 10 errors; lines 9-10: 0 bytes in 0 allocations, 0
// errors). The LEAK SUMMARY at line 9 follows run 1's ERROR SUMMARY: the
// tool prints nothing of a run after its ERROR SUMMARY but "N errors were
// not printed", so it starts run 2, from line 9. Before, both pairs were
// one run whose summaries were added up (1006959488 bytes, 10 errors),
// the clean second run nowhere.
func TestH46fBannerlessRunsSplitAtSummaries(t *testing.T) {
	data, err := os.ReadFile("../../testdata/sanitizer/field/xmrig199_before_after_summaries_fenced.txt")
	if err != nil {
		t.Fatal(err)
	}
	tb, _, err := read(t, "xmrig.txt", data, false)
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ bytes, allocs, errors, line, start string }
	exp := []want{{"1006959488", "10", "10", "(null)", "3"}, {"0", "0", "0", "(null)", "9"}}
	if len(tb.runs) != len(exp) {
		t.Fatalf("%d runs, want 2: %v", len(tb.runs), tb.runs)
	}
	for i, w := range exp {
		r := tb.runs[i]
		if got := (want{r["leak_bytes"], r["leak_allocations"], r["errors"], r["line"], r["start_line"]}); got != w {
			t.Errorf("run %d: %+v, want %+v", i, got, w)
		}
	}
}

// Two runs quoted without banners, each with its leak records and
// summaries (synthetic, in the layout of compute-sanitizer 2023+): the
// second run's record (line 5) follows the first's ERROR SUMMARY, so it
// is run 1's, not run 0's; the "were not printed" line after an ERROR
// SUMMARY stays in its run; a LEAK SUMMARY right after another (an
// ERROR SUMMARY cut from the paste) starts a run too.
func TestH46fBannerlessRunsRecords(t *testing.T) {
	const in = "========= Leaked 1,024 bytes at 0x7f0000000000\n" +
		"=========     Saved host backtrace up to driver entry point at allocation time\n" +
		"========= LEAK SUMMARY: 1024 bytes leaked in 1 allocations\n" +
		"========= ERROR SUMMARY: 1 error\n" +
		"========= Leaked 2,048 bytes at 0x7f0000100000\n" + // line 5
		"=========     Saved host backtrace up to driver entry point at allocation time\n" +
		"========= LEAK SUMMARY: 2048 bytes leaked in 1 allocations\n" +
		"========= ERROR SUMMARY: 3 errors\n" +
		"========= ERROR SUMMARY: 2 errors were not printed. Use --print-limit option to adjust the number of printed errors\n" +
		"========= LEAK SUMMARY: 0 bytes leaked in 0 allocations\n" + // line 10
		"========= LEAK SUMMARY: 512 bytes leaked in 1 allocations\n" // line 11
	tb, _, err := read(t, "two.txt", []byte(in), false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tb.runs {
		got = append(got, r["start_line"]+":"+r["leak_bytes"]+"/"+r["errors"]+"/"+r["errors_not_printed"])
	}
	if s := strings.Join(got, " "); s != "1:1024/1/(null) 5:2048/3/2 10:0/(null)/(null) 11:512/(null)/(null)" {
		t.Errorf("runs %s", s)
	}
	if len(tb.records) != 2 || tb.records[0]["run"] != "0" || tb.records[1]["run"] != "1" {
		t.Errorf("records %v: want one in run 0, one in run 1", tb.records)
	}
}
