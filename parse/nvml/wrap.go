package nvml

import (
	"bytes"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A log is often read as someone pasted or stored it: in a Markdown code
// fence ("```", "```text", "~~~"), quoted ("> " before every line), or
// behind the stamp a CI runner or a job logger puts before each line
// (GitHub Actions' "2024-05-01T10:00:01.1234567Z ", Metaflow's
// "2021-03-12 05:02:18.125 [129/start/1341 (pid 5161)] [<uuid>] "), or
// behind the tag a cluster's job runner puts before each line of a
// worker's output (Ray's "(RayTrainWorker pid=1234, ip=10.0.0.5) ",
// SkyPilot's "(task, pid=4150) ", "(head, rank=0, pid=2481) "). A
// wrap says which of these a log's lines carry, learnt from its first
// line of text, and takes them off every line before the layout's
// decoder sees it, whatever the layout: the CSV, dmon, pmon, pynvml, DCGM
// and gpustat decoders read the lines as the tool printed them. A fence
// line is never a line of any layout: it is skipped wherever it is
// (isFence).

// wrap is what is taken off the front of each line: Markdown quote marks
// and, when stamp, one log stamp after them (stampRe), and when pidTag, a
// worker's tag after those (pidTagRe).
type wrap struct {
	quote, stamp, pidTag bool
	// hash: a "#" and the blank after it are taken off every line that
	// starts with one (after blanks): an output pasted as a script's
	// comment (hashWrap).
	hash bool
}

// pidTagRe matches the tag Ray and SkyPilot put before each line a worker
// printed, with the blanks before it and the one after it: in
// parentheses, the worker's name and its "pid=N", and whatever else the
// runner adds ("ip=10.0.0.5", "rank=0"), separated by commas or blanks:
// "(RayTrainWorker pid=1234, ip=10.0.0.5) ", "(simple-workload,
// pid=4150) ", "(pid=1234) ".
var pidTagRe = lazyre.New(`^[ \t]*\((?:[\w.:=-]+(?:,[ \t]*|[ \t]+))*pid=\d+(?:,[ \t]*[\w.:-]+=[\w.:-]+)*\)(?:[ \t]|$)`)

// stripPIDTag returns b without a worker's tag (pidTagRe) at its start.
func stripPIDTag(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if i == len(b) || b[i] != '(' {
		return b
	}
	if loc := pidTagRe.Re().FindIndex(b); loc != nil {
		return b[loc[1]:]
	}
	return b
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
	if w.pidTag {
		b = stripPIDTag(b)
	}
	if w.hash {
		b = stripHash(b)
	}
	return b
}

// stripHash returns b without the "#" that starts it (after blanks) and
// the one blank after it.
func stripHash(b []byte) []byte {
	t := bytes.TrimLeft(b, " \t")
	if len(t) == 0 || t[0] != '#' {
		return b
	}
	t = t[1:]
	if len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
		t = t[1:]
	}
	return t
}

// hashOutput reports whether every line of text of seg, one output
// without its prompt lines, starts with "#" (after blanks): an output
// pasted as a comment ("# NVIDIA GeForce RTX 4070 Ti SUPER, 16376,
// 14360" under the nvidia-smi command that printed it), where a log's
// own comments ("# GPU memory log") come before its rows.
func hashOutput(seg []byte) bool {
	n := 0
	for l := range bytes.Lines(seg) {
		t := bytes.TrimSpace(l)
		if len(t) == 0 {
			continue
		}
		if t[0] != '#' {
			return false
		}
		n++
	}
	return n > 0
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
// quote marks there are taken off every line, and so is a stamp, or a
// worker's tag, when that line carries one after them.
func wrapOf(head []byte) wrap {
	for rest := head; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		if len(trimSpace(line)) == 0 || isFence(line) {
			continue
		}
		line = bytes.TrimRight(line, "\r")
		q := stripQuote(line)
		s := stripStamp(q)
		return wrap{quote: len(q) < len(line), stamp: len(s) < len(q), pidTag: len(stripPIDTag(s)) < len(s)}
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
