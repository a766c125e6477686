package pytorchtext

import (
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// An error report's exception, on the line before its message: ComfyUI's
// "Error Report" (its frontend's "Show Report", pasted into issues as
// markdown) gives the exception's type and text on two lines,
//
//	- **Exception Type:** torch.OutOfMemoryError
//	- **Exception Message:** Allocation on device
//
// so the message line does not name its exception, and the text after
// "Allocation on device " (cudaMallocAsync's message cut at device 0's
// NUL byte, see AsyncDeviceZeroCut) is an OOM only through the line
// before.

// reportTypeRe matches a report's exception type line; its group is the
// exception's qualified name.
var reportTypeRe = lazyre.New(`^\s*(?:[-*+]\s+)?\*\*Exception Type:\*\*\s*([A-Za-z_][\w.]*)\s*$`)

// reportMessageLabel ends the label of a report's message line, before
// the exception's text.
const reportMessageLabel = "**Exception Message:**"

// seeReportException remembers the exception a report's type line names
// (reportTypeRe).
func (r *Reader) seeReportException(line string) {
	if !strings.Contains(line, "**Exception Type:**") {
		return
	}
	if m := reportTypeRe.FindStringSubmatch(line); m != nil {
		r.reportExc, r.reportExcLine = m[1], r.line
	}
}

// reportException returns the exception of the message at line[at] when
// line is a report's message line ("- **Exception Message:** " and the
// message) right after its type line; "" otherwise.
func (r *Reader) reportException(line string, at int) string {
	if r.reportExc == "" || r.reportExcLine != r.line-1 {
		return ""
	}
	before := strings.TrimRight(line[:at], " \t")
	if !strings.HasSuffix(before, reportMessageLabel) || strings.Trim(before[:len(before)-len(reportMessageLabel)], " \t-*+") != "" {
		return ""
	}
	return r.reportExc
}

// holdReport holds m, the message of an error report's message line, at
// the current line. A ComfyUI report pasted whole goes on with the log
// of its session ("## Logs"), which prints the same failure again where
// it happened, with the prompts that ran before it: the report is a
// summary of its log's last failure, written before it. So the report's
// message is held until the next message: one with the same words
// (reportPrinted) is that failure as the log prints it, and the report's
// is dropped for it; another is written after the report's. At the
// text's end (a report without its log) it is written.
func (r *Reader) holdReport(m Message, frames []tbFrame) {
	if h := r.report; h != nil {
		r.report = nil
		r.addMessage(h.msg, h.frames, h.line)
	}
	r.report = &heldMessage{msg: m, frames: frames, line: r.line}
}

// reportPrinted reports whether m, the next message after report (held
// by holdReport), prints the report's failure: the same form and words.
func reportPrinted(report, m Message) bool {
	return m.Generation == report.Generation && m.Text == report.Text
}
