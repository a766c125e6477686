package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// writeDailyMarkdown writes the daily report's sections as Markdown (the
// page's, without charts), for a chat message or a wiki.
func writeDailyMarkdown(w io.Writer, d *Daily, _ Options) error {
	v := newDailyView(d)
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	// barsSection is an OOM's or a fragmented snapshot's section: its
	// title, its lines, then its chart's bars as a list.
	barsSection := func(title string, lines []string, bars []barValue) {
		p("### %s\n\n", mdText(title))
		for _, s := range lines {
			p("- %s\n", mdText(s))
		}
		for _, bar := range bars {
			p("- %s: %s\n", mdText(bar.Label), IBytes(bar.Bytes))
		}
		p("\n")
	}
	p("# %s\n\n%s\n\n## Summary\n\n", mdText(v.Title), mdText(v.Window))
	for _, c := range v.Cards {
		p("- **%s** %s\n", mdText(c.Value), mdText(c.Label))
	}
	p("\n")
	if len(v.Worst) == 0 {
		p("%s\n", mdText(v.Nothing))
	}
	for i, s := range v.Worst {
		p("%d. %s\n", i+1, mdText(s))
	}
	if len(v.Baseline) > 0 {
		p("\n## Since %s\n\n", mdText(d.Baseline.Path))
		for _, s := range v.Baseline {
			p("- %s\n", mdText(s))
		}
	}
	p("\n## Leaks by site across jobs\n\n")
	if len(v.Leaks) == 0 {
		p("%s\n", mdText(v.NoLeak))
	}
	// item writes one site or error group: its title, lines and stack.
	item := func(title string, lines []string, stack string) {
		p("### %s\n\n", mdText(title))
		for _, s := range lines {
			p("- %s\n", mdText(s))
		}
		if stack != "" {
			p("- stack: `%s`\n", mdCode(stack))
		}
		p("\n")
	}
	for _, l := range v.Leaks {
		item(l.Title, l.Lines, l.Stack)
	}
	p("\n## compute-sanitizer errors (not leaks)\n\n")
	if len(v.Errors) == 0 {
		p("%s\n", mdText(v.NoErrors))
	}
	for _, e := range v.Errors {
		item(e.Title, e.Lines, e.Stack)
	}
	p("\n## Out-of-memory errors\n\n")
	if len(v.OOMs) == 0 {
		p("%s\n", mdText(v.NoOOM))
	}
	for _, o := range v.OOMs {
		barsSection(o.Title, o.Lines, o.Bars)
	}
	if len(v.Undescribed) > 0 {
		p("\n")
	}
	for _, u := range v.Undescribed {
		p("- %s\n", mdText(u))
	}
	if len(v.Undescribed) > 0 {
		p("\n")
	}
	if len(v.OOMDays) > 0 {
		p("| date | cause | OOMs |\n|---|---|---|\n")
		for _, r := range v.OOMDays {
			p("| %s | %s | %s |\n", mdCell(r[0]), mdCell(r[1]), mdCell(r[2]))
		}
	}
	p("\n## GPU and process memory (NVML)\n\n")
	if len(v.GPUs) == 0 {
		p("%s\n", mdText(v.NoGPU))
	}
	for _, g := range v.GPUs {
		p("### %s\n\n", mdText(g.Title))
		for _, s := range g.Lines {
			p("- %s\n", mdText(s))
		}
		p("\n| series | trend | last | peak | slope | time to OOM | log |\n|---|---|---|---|---|---|---|\n")
		for _, r := range g.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = mdCell(c)
			}
			p("| %s |\n", strings.Join(cells, " | "))
		}
		p("\n")
	}
	p("\n## Fragmentation\n\n")
	if len(v.Frag) == 0 {
		p("%s\n", mdText(v.NoFrag))
	}
	for _, f := range v.Frag {
		barsSection(f.Title, f.Lines, f.Bars)
	}
	p("\n## Unreadable inputs\n\n")
	if len(d.Unreadable) == 0 {
		p("None.\n")
	}
	for _, u := range d.Unreadable {
		p("- `%s`: %s\n", mdCode(u.Path), mdText(u.Error))
	}
	if len(d.ReadInPart) > 0 {
		p("\n## Inputs read in part\n\nLines of these inputs could not be read and were skipped; what is shown of them comes from the rest.\n\n")
		for _, u := range d.ReadInPart {
			p("- `%s`: read in part: %s\n", mdCode(u.Path), mdText(u.Error))
		}
	}
	if len(v.InputWarnings) > 0 {
		p("\n## Inputs' warnings\n\nWhat reading and analysing these inputs warned of: the evidence and the limits of what this page says of them.\n\n")
		for _, w := range v.InputWarnings {
			p("- `%s` (%s)\n", mdCode(w.Path), mdText(w.Title))
			for _, l := range w.Lines {
				p("  - %s\n", mdText(l))
			}
		}
	}
	p("\n## Skipped files\n\n")
	if len(d.Skipped) == 0 {
		p("None.\n")
	}
	for _, sk := range d.Skipped {
		p("- `%s`: %s\n", mdCode(sk.Path), mdText(sk.Reason))
	}
	if len(d.Warnings) > 0 {
		p("\n## Warnings\n\n")
		for _, s := range d.Warnings {
			p("- %s\n", mdText(s))
		}
	}
	return b.Flush()
}
