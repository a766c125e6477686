package report

import (
	"strings"
	"testing"
)

// A count agrees with its noun wherever a report prints one: the gates'
// lines (standard error, Markdown, JUnit) count findings as the summary
// does, and a count of one is never followed by a plural ("1 more
// findings", "1 OOMs", "1 allocations").

// findingsOf makes n findings of kind k holding b bytes each.
func findingsOf(k Kind, n int, b int64) []Finding {
	var fs []Finding
	for range n {
		fs = append(fs, Finding{Kind: k, Bytes: b, Path: "a"})
	}
	return fs
}

// oomsOf makes n OOM findings, each requesting req bytes with alloc
// bytes allocated at it.
func oomsOf(n int, req, alloc int64) []Finding {
	fs := findingsOf(KindOOM, n, alloc)
	for i := range fs {
		fs[i].OOMDetail = &OOMDetail{RequestedBytes: &req}
	}
	return fs
}

func TestGateWhyCountsAsTheSummary(t *testing.T) {
	for _, c := range []struct {
		gate string
		fs   []Finding
		errs []ToolError
		want string
	}{
		// One leak of 80 MiB: "1 leak", as mdSummary writes it.
		{"leak", findingsOf(KindLeak, 1, 80<<20), nil, "1 leak holding 80 MiB"},
		// Four leaks of 1 MiB: 4 MiB together.
		{"leak", findingsOf(KindLeak, 4, 1<<20), nil, "4 leaks holding 4.0 MiB"},
		// An OOM's size is its request (2 GiB), not the 1 GiB allocated at it.
		{"oom", oomsOf(1, 2<<30, 1<<30), nil, "1 OOM requesting 2.0 GiB"},
		{"retained", findingsOf(KindRetained, 2, 1<<20), nil, "2 retained findings holding 2.0 MiB"},
		{"retained", findingsOf(KindRetained, 1, 1<<20), nil, "1 retained finding holding 1.0 MiB"},
		// One error record (Count 0 is counted as one record).
		{"sanitizer-errors", nil, []ToolError{{Kind: "api"}}, "1 compute-sanitizer error record (not leaks)"},
		// Records of 2 and 3: 5.
		{"sanitizer-errors", nil, []ToolError{{Kind: "api", Count: 2}, {Kind: "api", Count: 3}}, "5 compute-sanitizer error records (not leaks)"},
	} {
		gs, err := ParseGates([]string{c.gate})
		if err != nil {
			t.Fatal(err)
		}
		res := Evaluate(gs, GateInput{Findings: c.fs, Errors: c.errs})
		if len(res) != 1 || !res[0].Tripped || !strings.HasPrefix(res[0].Why, c.want) {
			t.Errorf("--fail-on %s: %+v, want a tripped gate saying %q", c.gate, res, c.want)
		}
		// The Markdown summary counts the same findings in the same words.
		if len(c.fs) > 0 {
			word, _, _ := strings.Cut(strings.Replace(c.want, " requesting", " holding", 1), " holding")
			sep := " ("
			if c.fs[0].Kind == KindOOM {
				sep = ";" // OOMs are counted, not summed (mdSummary)
			}
			if s := mdSummary(&Report{Findings: c.fs, Inputs: []Input{{Path: "a"}}}); !strings.Contains(s, word+sep) {
				t.Errorf("summary %q, want %q as the gate says it", s, word)
			}
		}
	}
}

// markdownRows+1 findings leave one out of the Markdown table: "1 more
// finding"; a baseline that leaves one finding out says "1 finding".
func TestMarkdownCountsOfOne(t *testing.T) {
	r := &Report{Inputs: []Input{{Path: "a", Format: "pytorch-snapshot"}}, Findings: findingsOf(KindLeak, markdownRows+1, 1<<20)}
	r.FindingsTotal = len(r.Findings)
	r.Baseline = &BaselineComparison{Path: "base.json", LeftOut: 1}
	var b strings.Builder
	if err := writeMarkdown(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n1 more finding in the details", "; 1 finding left out as in the baseline"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown:\n%s\nwant %q", b.String(), want)
		}
	}
	r.Findings = findingsOf(KindLeak, markdownRows+3, 1<<20)
	r.FindingsTotal = len(r.Findings)
	r.Baseline.LeftOut = 2
	b.Reset()
	if err := writeMarkdown(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n3 more findings in the details", "; 2 findings left out as in the baseline"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown:\n%s\nwant %q", b.String(), want)
		}
	}
}

// memory_stats() of a process that hit one OOM and one cudaMalloc retry.
func TestAllocatorStatsCountsOfOne(t *testing.T) {
	one, two := int64(1), int64(2)
	for _, c := range []struct {
		ooms, retries *int64
		want          []string
	}{
		{&one, &one, []string{"1 OOM", "1 cudaMalloc retry"}},
		{&two, &two, []string{"2 OOMs", "2 cudaMalloc retries"}},
	} {
		s := AllocatorStats{NumOOMs: c.ooms, NumAllocRetries: c.retries}
		in := strings.Join(describeAllocatorStats(Input{AllocatorStats: []AllocatorStats{s}}), "\n")
		line := statsLine(s)
		for _, w := range c.want {
			for _, got := range []string{in, line} {
				if !strings.Contains(got, w) || *c.ooms == 1 && strings.Contains(got, w+"s") || *c.retries == 1 && strings.Contains(got, "retries") {
					t.Errorf("%q: want %q", got, w)
				}
			}
		}
	}
	a := int64(1 << 20)
	if got := summaryBytes(&LeakSummary{Bytes: &a, Allocations: &one}); got != "1.0 MiB in 1 allocation" {
		t.Errorf("summary %q", got)
	}
}
