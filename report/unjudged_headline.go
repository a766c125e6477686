package report

import (
	"fmt"
	"strings"
)

// unjudgedOn lists the inputs read that could not be judged whole, each
// as "path: what was not judged: why", and counts the inputs read: those
// whose leaks could not be judged (Input.LeaksUnjudged: a memory
// timeline or profiler trace whose steps cannot be found or are too few,
// a snapshot without a trace, a compute-sanitizer log without the leak
// check), those that hold nothing to judge (Input.Empty), and NVML logs
// all of whose samples were left out (used memory above the GPU's total
// in every one: Input.SamplesAboveTotal). A headline of no findings names
// them: no finding from such an input does not say it holds none.
func unjudgedOn(r *Report) (lines []string, read int) {
	for _, in := range r.Inputs {
		if in.Error != "" {
			continue
		}
		read++
		switch {
		case in.LeaksUnjudged != "":
			lines = append(lines, in.Path+": leaks not judged: "+in.LeaksUnjudged)
		case in.Empty != "":
			lines = append(lines, in.Path+": nothing judged: "+in.Empty)
		case in.SamplesAboveTotal > 0 && in.Rows != nil && int64(in.SamplesAboveTotal) >= *in.Rows:
			lines = append(lines, fmt.Sprintf("%s: no sample judged: all %s have used memory above the GPU's total, and were left out", in.Path,
				plural(in.SamplesAboveTotal, "sample", "samples")))
		}
	}
	return lines, read
}

// noFindingsHeadline is the analysis table's line for a report with no
// findings: "No findings." when every input read was judged; otherwise
// it says that the findings cover what could be judged, and which inputs
// were not judged whole, what and why, one indented line each (a
// timeline whose steps cannot be found was headed "No findings." above a
// warning that its growth could not be judged).
func noFindingsHeadline(r *Report) string {
	head := "No findings"
	if r.BelowMinBytes > 0 {
		head = fmt.Sprintf("No findings as large as --min-bytes asks (%d smaller left out)", r.BelowMinBytes)
	}
	lines, read := unjudgedOn(r)
	if len(lines) == 0 {
		return head + "."
	}
	return fmt.Sprintf("%s in what could be judged; not judged on %d of %s, so nothing is ruled out there:\n  %s",
		head, len(lines), plural(read, "input", "inputs"), strings.Join(lines, "\n  "))
}
