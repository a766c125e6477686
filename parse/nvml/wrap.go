package nvml

import (
	"bytes"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A log is often read as someone pasted or stored it: in a Markdown code
// fence ("```", "```text", "~~~"), quoted ("> " before every line), or
// behind the stamp a CI runner or a job logger puts before each line
// (GitHub Actions' "2024-05-01T10:00:01.1234567Z ", Metaflow's
// "2021-03-12 05:02:18.125 [129/start/1341 (pid 5161)] [<uuid>] "). A
// wrap says which of these a log's lines carry, learnt from its first
// line of text, and takes them off every line before the layout's
// decoder sees it, whatever the layout: the CSV, dmon, pmon, pynvml, DCGM
// and gpustat decoders read the lines as the tool printed them. A fence
// line is never a line of any layout: it is skipped wherever it is
// (isFence).

// wrap is what is taken off the front of each line: Markdown quote marks
// and, when stamp, one log stamp after them (stampRe).
type wrap struct {
	quote, stamp bool
}

// stampRe matches one log stamp at the start of a line, with the blank
// after it: a date and time (ISO 8601 with "T" or a space, fractions with
// "." or ",", "Z" or an offset), or a time alone, in brackets or not;
// then any bracketed tags a job logger adds ("[129/start/1341 (pid
// 5161)]", "[INFO]"), each with the one blank after it (only one: the
// indentation of nvidia-smi -q's lines says which section they are
// in). A tag holds something other than digits, so that
// gpustat's GPU rows ("[0] NVIDIA H200 | ...") keep their index.
var stampRe = lazyre.New(`^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\]?|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\]?)(?:[ \t]|$)(?:\[[^\]\n]{0,200}[^\d\]\n][^\]\n]{0,200}\](?:[ \t]|$)){0,4}`)

// stripQuote returns b without its leading Markdown quote marks (">",
// "> ", "> > ").
func stripQuote(b []byte) []byte {
	for len(b) > 0 && b[0] == '>' {
		b = b[1:]
		if len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
			b = b[1:]
		}
	}
	return b
}

// stripStamp returns b without one log stamp (stampRe) at its start.
func stripStamp(b []byte) []byte {
	if len(b) == 0 || b[0] != '[' && (b[0] < '0' || b[0] > '9') {
		return b
	}
	if loc := stampRe.Re().FindIndex(b); loc != nil {
		return b[loc[1]:]
	}
	return b
}

// strip returns b without what w takes off.
func (w wrap) strip(b []byte) []byte {
	if w.quote {
		b = stripQuote(b)
	}
	if w.stamp {
		b = stripStamp(b)
	}
	return b
}

// isFence reports whether b is a Markdown code fence line: "```" or
// "~~~", with an info string ("```json") or not, quoted or not.
func isFence(b []byte) bool {
	t := trimSpace(stripQuote(trimSpace(b)))
	if len(t) < 3 || t[0] != '`' && t[0] != '~' {
		return false
	}
	if !bytes.HasPrefix(t, []byte("```")) && !bytes.HasPrefix(t, []byte("~~~")) {
		return false
	}
	// An info string is one word ("json", "text", "console", "bash").
	info := bytes.TrimLeft(t, "`~")
	return bytes.IndexAny(trimSpace(info), " \t`") < 0
}

// wrapOf is the wrap of a log whose first bytes are head, learnt from its
// first line that is neither blank nor a fence (zero when there is none):
// quote marks there are taken off every line, and so is a stamp when that
// line carries one after them.
func wrapOf(head []byte) wrap {
	for rest := head; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		if len(trimSpace(line)) == 0 || isFence(line) {
			continue
		}
		line = bytes.TrimRight(line, "\r")
		q := stripQuote(line)
		return wrap{quote: len(q) < len(line), stamp: len(stripStamp(q)) < len(q)}
	}
	return wrap{}
}

// unwrapHead returns head as the decoders see it under w: each line
// stripped, fence lines dropped; changed is whether anything was taken
// off.
func unwrapHead(head []byte, w wrap) (plain []byte, changed bool) {
	plain = make([]byte, 0, len(head))
	for rest := head; len(rest) > 0; {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		rest = after
		if isFence(line) {
			changed = true
			continue
		}
		t := w.strip(line)
		changed = changed || len(t) < len(line)
		plain = append(plain, t...)
		if found {
			plain = append(plain, '\n')
		}
	}
	return plain, changed
}
