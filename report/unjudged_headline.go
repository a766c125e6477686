package report

import (
	"fmt"
	"strings"
)

// leaksUnjudgedOn lists the inputs read whose leaks could not be judged
// (Input.LeaksUnjudged: a memory timeline or profiler trace whose steps
// cannot be found or are too few, a snapshot without a trace, a
// compute-sanitizer log without the leak check), each as "path: why",
// and counts the inputs read. A headline of no findings names them: no
// finding from such an input does not say it holds no leak.
func leaksUnjudgedOn(r *Report) (lines []string, read int) {
	for _, in := range r.Inputs {
		if in.Error != "" {
			continue
		}
		read++
		if in.LeaksUnjudged != "" {
			lines = append(lines, in.Path+": "+in.LeaksUnjudged)
		}
	}
	return lines, read
}

// noFindingsHeadline is the analysis table's line for a report with no
// findings: "No findings." when every input read was judged; otherwise
// it says that the findings cover what was judged, and which inputs'
// leaks were not judged, and why, one indented line each (a timeline
// whose steps cannot be found was headed "No findings." above a warning
// that its growth could not be judged).
func noFindingsHeadline(r *Report) string {
	head := "No findings"
	if r.BelowMinBytes > 0 {
		head = fmt.Sprintf("No findings as large as --min-bytes asks (%d smaller left out)", r.BelowMinBytes)
	}
	lines, read := leaksUnjudgedOn(r)
	if len(lines) == 0 {
		return head + "."
	}
	return fmt.Sprintf("%s in what could be judged; leaks were not judged on %d of %s, so none is ruled out there:\n  %s",
		head, len(lines), plural(read, "input", "inputs"), strings.Join(lines, "\n  "))
}
