package report

import (
	"strings"
	"testing"
)

// The Markdown summary's totals by kind read as English counts: the s37
// tester found "2 leak (848 MiB)". A kind that is a noun counts as one
// ("1 leak", "2 leaks"; "OOM" as PyTorch's users write it); trend
// findings are NVML series ("series" is its own plural, as the gates say);
// a kind that is an adjective counts findings ("2 retained findings").
func TestMarkdownSummaryCountsKinds(t *testing.T) {
	finds := func(k Kind, n int, bytes int64) []Finding {
		var fs []Finding
		for range n {
			fs = append(fs, Finding{Kind: k, Bytes: bytes})
		}
		return fs
	}
	for _, c := range []struct {
		fs   []Finding
		want string
	}{
		// 2 leaks of 424 MiB each: 848 MiB.
		{finds(KindLeak, 2, 424<<20), "2 leaks (848 MiB)"},
		{finds(KindLeak, 1, 80<<20), "1 leak (80 MiB)"},
		// An OOM's bytes are what was allocated then, not its request:
		// the headline counts OOMs only.
		{finds(KindOOM, 2, 64<<20), "2 OOMs;"},
		{finds(KindOOM, 1, 64<<20), "1 OOM;"},
		{finds(KindTrend, 5, 1<<30), "5 NVML series (5.0 GiB)"},
		{finds(KindTrend, 1, 1<<30), "1 NVML series (1.0 GiB)"},
		{finds(KindRetained, 3, 64<<20), "3 retained findings (192 MiB)"},
		{finds(KindLive, 1, 1<<20), "1 live finding (1.0 MiB)"},
		{finds(KindPendingFree, 2, 1<<20), "2 pending-free findings (2.0 MiB)"},
		{finds(KindFragmentation, 2, 512<<20), "2 fragmentation findings (1.0 GiB)"},
		{finds(KindNonPyTorch, 1, 1<<30), "1 non-pytorch finding (1.0 GiB)"},
	} {
		got := mdSummary(&Report{Findings: c.fs, Inputs: []Input{{Path: "a"}}})
		if !strings.Contains(got, c.want) {
			t.Errorf("summary %q, want %q in it", got, c.want)
		}
	}
}

// The table's line for the findings --top cut counts in English: it said
// "... 1 more finding(s) not shown".
func TestTableMoreFindingsCount(t *testing.T) {
	for _, c := range []struct {
		total int
		want  string
	}{{2, "... 1 more finding not shown (--top 0 shows all)"}, {6, "... 5 more findings not shown (--top 0 shows all)"}} {
		r := &Report{Inputs: []Input{{Path: "a", Format: "pytorch-snapshot", Warnings: []string{}}},
			Findings: []Finding{{Kind: KindLeak, Path: "a", Bytes: 1 << 20}}, FindingsTotal: c.total}
		var b strings.Builder
		if err := writeTable(&b, r, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want+"\n") {
			t.Errorf("table:\n%s\nwant %q", b.String(), c.want)
		}
	}
}
