package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// FormatMarkdown is a job summary or a pull-request comment of an
// analysis.
const FormatMarkdown Format = "markdown"

func init() {
	register(FormatMarkdown, Writer{
		Order:    30,
		Help:     "a job summary or PR comment",
		Analysis: writeMarkdown,
		Daily:    writeDailyMarkdown,
	})
}

// markdownLimit keeps a Markdown report under GitHub's 1 MiB limit for a
// step's job summary ($GITHUB_STEP_SUMMARY), with room for what else the
// job appends.
const markdownLimit = 900 << 10

// markdownRows is how many findings the summary table lists; the rest are
// in the details.
const markdownRows = 10

// writeMarkdown renders r for a job summary or a pull-request comment: a
// summary line (gates, totals), a short table of the top findings, then
// each finding's message and stack, the tool errors and the warnings in
// <details>. Text from inputs is escaped (a frame named <module> would
// otherwise be read as HTML), and the whole stays under markdownLimit.
func writeMarkdown(w io.Writer, r *Report, _ Options) error {
	r = cleaned(r)
	var b bytes.Buffer
	fmt.Fprintf(&b, "### gpuleak: %s\n\n", mdSummary(r))
	for _, g := range r.Gates {
		mark := "passed"
		switch {
		case g.Tripped:
			mark = "**tripped**"
		case g.Unjudged:
			mark = "**not judged**"
		case len(g.NotJudgedOn) > 0:
			mark = fmt.Sprintf("passed, **not judged on %s**", plural(len(g.NotJudgedOn), "input", "inputs"))
		}
		fmt.Fprintf(&b, "- gate `%s` %s: %s\n", mdCode(g.Gate), mark, mdText(g.Why))
	}
	if r.Baseline != nil {
		t := r.Baseline.Totals
		fmt.Fprintf(&b, "- against baseline `%s`: %d new, %d grown, %d shrunk, %d fixed, %d same%s; %s left out as in the baseline\n",
			mdCode(r.Baseline.Path), t[StatusNew].Sites, t[StatusGrown].Sites, t[StatusShrunk].Sites, t[StatusFixed].Sites, t[StatusSame].Sites, otherStatuses(t), plural(r.Baseline.LeftOut, "finding", "findings"))
	}
	for _, sup := range r.Suppressed {
		fmt.Fprintf(&b, "- %s\n", mdText(suppressedLine(sup)))
	}
	if len(r.Gates) > 0 || r.Baseline != nil || len(r.Suppressed) > 0 {
		b.WriteString("\n")
	}
	if len(r.Findings) > 0 {
		b.WriteString("| # | kind | bytes | blocks | site | input |\n|---:|---|---:|---:|---|---|\n")
		for i, f := range r.Findings {
			if i == markdownRows {
				break
			}
			site := f.Site.String()
			if f.Kind == KindTrend {
				site = trendName(&f)
			}
			// The text table's cells: an OOM's bytes are its request,
			// the allocation that failed, and "?" where unknown (a PR
			// comment read "1 OOM (4.2 GiB)" for a 64 MiB request).
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, mdCell(string(f.Kind)), bytesCell(f), blocksCell(f), mdCell(site), mdCell(f.Path))
		}
		if n := len(r.Findings) - min(len(r.Findings), markdownRows); n > 0 {
			fmt.Fprintf(&b, "\n%s in the details and the JSON report.\n", plural(n, "more finding", "more findings"))
		}
		if n := r.FindingsTotal - len(r.Findings); n > 0 {
			// Not in the details: --top left them out of this report.
			fmt.Fprintf(&b, "\n%s left out by --top (--top 0 lists them).\n", plural(n, "more finding", "more findings"))
		}
		b.WriteString("\n")
	}
	b.WriteString("<details><summary>Details</summary>\n\n")
	for _, in := range r.Inputs {
		fmt.Fprintf(&b, "- input %s: %s\n", mdText(in.Path), mdText(describeInput(in)))
	}
	if lines, _ := unjudgedOn(r); len(lines) > 0 && len(r.Findings) == 0 {
		b.WriteString("\nNot judged:\n\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", mdText(l))
		}
	}
	b.WriteString("\n")
	left := 0
	for i, f := range r.Findings {
		if b.Len() > markdownLimit {
			left = len(r.Findings) - i
			break
		}
		fmt.Fprintf(&b, "%d. %s\n", i+1, mdText(f.Message))
		if len(f.Stack) > 1 {
			fmt.Fprintf(&b, "   stack: %s\n", mdText(stackLine(f.Stack, 6)))
		}
		if f.Baseline != nil {
			fmt.Fprintf(&b, "   baseline: %s\n", mdText(findingBaselineLine(f)))
		}
	}
	for i, e := range r.Errors {
		if b.Len() > markdownLimit {
			left += len(r.Errors) - i
			break
		}
		if i == 0 {
			b.WriteString("\n**Errors reported by the tool (not leaks):**\n\n")
		}
		fmt.Fprintf(&b, "- [%s] %s\n", mdText(e.Kind), mdText(e.Message))
	}
	first := true
	for _, in := range r.Inputs {
		for _, msg := range in.Warnings {
			if b.Len() > markdownLimit {
				left++
				continue
			}
			if first {
				b.WriteString("\n**Warnings:**\n\n")
				first = false
			}
			fmt.Fprintf(&b, "- %s: %s\n", mdText(in.Path), mdText(msg))
		}
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n%s left out to stay under GitHub's 1 MiB job-summary limit: see the JSON report.\n", plural(left, "more item", "more items"))
	}
	b.WriteString("\n</details>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// partlyJudged counts the gates judged on some inputs only.
func partlyJudged(gs []GateResult) int {
	n := 0
	for _, g := range gs {
		if !g.Unjudged && len(g.NotJudgedOn) > 0 {
			n++
		}
	}
	return n
}

// mdSummary is the one summary line: the inputs not read, what tripped,
// then the totals by kind.
func mdSummary(r *Report) string {
	var parts []string
	tripped, unjudged := 0, 0
	for _, g := range r.Gates {
		switch {
		case g.Tripped:
			tripped++
		case g.Unjudged:
			unjudged++
		}
	}
	if len(r.Gates) > 0 {
		switch {
		case tripped > 0:
			parts = append(parts, fmt.Sprintf("**failed**: %d of %d gates tripped", tripped, len(r.Gates)))
		case unjudged > 0:
			parts = append(parts, fmt.Sprintf("**failed**: %d of %d gates not judged (the inputs could not answer them: why is beside each)", unjudged, len(r.Gates)))
		default:
			parts = append(parts, fmt.Sprintf("passed %s", plural(len(r.Gates), "gate", "gates")))
			if n := partlyJudged(r.Gates); n > 0 {
				parts[len(parts)-1] += fmt.Sprintf(" (%s not judged on every input)", plural(n, "gate", "gates"))
			}
		}
	}
	type tot struct {
		n     int
		bytes int64
	}
	byKind := map[Kind]*tot{}
	var order []Kind
	for _, f := range r.whole() { // the totals of the run, as the gates count them
		t := byKind[f.Kind]
		if t == nil {
			t = &tot{}
			byKind[f.Kind] = t
			order = append(order, f.Kind)
		}
		t.n++
		t.bytes += f.Bytes
	}
	var kinds []string
	for _, k := range order {
		if k == KindOOM {
			// An OOM's bytes are what was allocated then, not what it
			// asked for: the headline counts them only.
			kinds = append(kinds, kindCount(k, byKind[k].n))
			continue
		}
		kinds = append(kinds, fmt.Sprintf("%s (%s)", kindCount(k, byKind[k].n), IBytes(byKind[k].bytes)))
	}
	if len(kinds) == 0 {
		kinds = append(kinds, "no findings")
		if lines, read := unjudgedOn(r); len(lines) > 0 {
			// The details say what and why, under the inputs.
			kinds[0] = fmt.Sprintf("no findings in what could be judged, **not judged on %d of %s**", len(lines), plural(read, "input", "inputs"))
		}
	}
	if len(r.Errors) > 0 {
		kinds = append(kinds, plural(len(r.Errors), "tool error", "tool errors"))
	}
	parts = append(parts, strings.Join(kinds, ", "))
	parts = append(parts, "in "+plural(len(r.Inputs), "input", "inputs"))
	if n := notRead(r); n > 0 {
		// First, before the gates: the findings and gates cover only the
		// inputs read, and the run exits 2 whatever the gates say.
		parts = append([]string{fmt.Sprintf("**%d of %d inputs not read**", n, len(r.Inputs))}, parts...)
	}
	return strings.Join(parts, "; ")
}

// mdText escapes text from inputs for Markdown: HTML's specials, and the
// characters that start emphasis, code, links or headings.
func mdText(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '#', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// mdCell escapes text for a table cell.
func mdCell(s string) string { return mdText(s) }

// mdCode makes s safe inside a `code span`: no backticks, one line.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s)
}

// notRead counts the inputs that could not be read.
func notRead(r *Report) int {
	n := 0
	for _, in := range r.Inputs {
		if in.Error != "" {
			n++
		}
	}
	return n
}
