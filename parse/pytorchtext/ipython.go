package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// IPython's and Jupyter's tracebacks (ultratb): a title line with the
// exception's name and "Traceback (most recent call last)" (no colon),
// then for each frame a header and numbered source lines, the current one
// marked with an arrow. The headers, by IPython release:
//
//	8.x:   File ~/lib/torch/nn/modules/module.py:1501, in Module._call_impl(self, *args, **kwargs)
//	       Cell In[12], line 3          (a cell; "..., in f(x)" for a function defined in one)
//	7.3x:  Input In [5], in <cell line: 3>()
//	older: /usr/lib/python3/site-packages/fastai/learner.py in fit(self, n_epoch)
//	       <ipython-input-5-abc> in <module>()
//	       /tmp/ipykernel_56/2211991504.py in <cell line: 0>()
//
// and the arrow "---> 43 code" ("-> 1750 ..." for wider numbers). Where a
// header gives no line (older releases), the arrow's is the frame's.
var (
	ipythonTitleRe = lazyre.New(`^(\s*)[A-Za-z_][\w.]*\s{2,}Traceback \(most recent call last\)\s*$`)
	ipyFileRe      = lazyre.New(`^File (.+):(\d+), in ([^(]+)`)
	ipyCellRe      = lazyre.New(`^(Cell In ?\[\d*\]), line (\d+)(?:, in ([^(]+))?`)
	ipyInputRe     = lazyre.New(`^(Input In \[\d*\]), in ([^(]+)`)
	ipyOldRe       = lazyre.New(`^(\S.*?) in (<[^>]*>|[^\s(]+)\(.*\)\s*$`)
	ipyArrowRe     = lazyre.New(`^-*> ?(\d+)(?:\s|$)`)
	ipySourceRe    = lazyre.New(`^\s*\d+(?:\s|$)`)
)

// ipythonTitleAt reports whether line is an IPython traceback's title, and
// the prefix its frame lines start with.
func ipythonTitleAt(line string) (prefix string, ok bool) {
	if !strings.Contains(line, "Traceback (most recent call last)") {
		return "", false // the expression's words, tested first on every line
	}
	m := ipythonTitleRe.Re().FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ipythonFrameStart returns the prefix of a line that is an IPython frame
// header without the title before it: a traceback pasted from the middle
// (its first frames and title left out). Only headers no prose reads as:
// 8.x's "File PATH.py:N, in F(" and "Cell In[N], line N", 7.3x's "Input
// In [N], in F(", and the older "PATH in F(ARGS)" where PATH is one word
// naming a .py file or an <ipython-input-...> cell. The prefix is what
// comes before the header of spaces and markdown quote marks.
func ipythonFrameStart(line string) (prefix string, ok bool) {
	prefix = line[:len(line)-len(strings.TrimLeft(line, " \t>"))]
	s := strings.TrimRight(line[len(prefix):], " \t\r\n")
	// Each header's words, tested before its expression: this runs on
	// every line outside a traceback, and the four expressions doubled
	// the CPU time of a plain log (the review of session 42).
	switch {
	case strings.HasPrefix(s, "File "), strings.HasPrefix(s, "Cell In"), strings.HasPrefix(s, "Input In ["):
	case strings.HasSuffix(s, ")") && (strings.Contains(s, ".py in ") || strings.HasPrefix(s, "<ipython-input-")):
	default:
		return "", false
	}
	if m := ipyFileRe.Re().FindStringSubmatch(s); m != nil && !strings.HasPrefix(m[1], `"`) && strings.Contains(m[1], ".py") {
		return prefix, true
	}
	if ipyCellRe.Re().MatchString(s) || ipyInputRe.Re().MatchString(s) {
		return prefix, true
	}
	if m := ipyOldRe.Re().FindStringSubmatch(s); m != nil && !strings.ContainsAny(m[1], " \t") &&
		(strings.HasSuffix(m[1], ".py") || strings.HasPrefix(m[1], "<ipython-input-")) {
		return prefix, true
	}
	return "", false
}

// addIPython reads one line of an IPython traceback (after its prefix):
// false when the line is none of its (the exception's line ends it).
func (tb *traceback) addIPython(line string) bool {
	s := strings.TrimRight(line, " \t\r\n")
	switch {
	case s == "", strings.HasPrefix(s, "[... skipping"), strings.HasPrefix(s, "..."), ipySourceRe.MatchString(s):
		return true
	case strings.HasPrefix(s, "-"):
		if m := ipyArrowRe.Re().FindStringSubmatch(s); m != nil {
			if tb.ipyPending != nil {
				f := *tb.ipyPending
				f.line, _ = strconv.ParseInt(m[1], 10, 64)
				tb.addFrame(f)
				tb.ipyPending = nil
			}
			return true
		}
		return strings.Trim(s, "-") == "" // a rule of dashes
	}
	if m := ipyFileRe.Re().FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		tb.addFrame(tbFrame{file: m[1], line: n, name: strings.TrimSpace(m[3])})
		tb.ipyPending = nil
		return true
	}
	if m := ipyCellRe.Re().FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		name := strings.TrimSpace(m[3])
		if name == "" {
			name = "<module>"
		}
		tb.addFrame(tbFrame{file: m[1], line: n, name: name})
		tb.ipyPending = nil
		return true
	}
	if m := ipyInputRe.Re().FindStringSubmatch(s); m != nil {
		name := strings.TrimSpace(m[2])
		if strings.HasPrefix(name, "<cell line:") {
			name = "<module>"
		}
		tb.ipyPending = &tbFrame{file: m[1], name: name}
		return true
	}
	if m := ipyOldRe.Re().FindStringSubmatch(s); m != nil && !strings.Contains(m[1], ": ") {
		name := m[2]
		if strings.HasPrefix(name, "<cell") {
			name = "<module>"
		}
		tb.ipyPending = &tbFrame{file: m[1], name: name}
		return true
	}
	return false
}
