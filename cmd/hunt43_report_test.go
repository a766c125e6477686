package cmd

import (
	"path/filepath"
	"strings"
	"testing"
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

