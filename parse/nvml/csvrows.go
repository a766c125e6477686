package nvml

import (
	"bytes"
	"time"
)

// What a header-less CSV log really has. nvidia-smi --format=csv,noheader
// writes one row per GPU (or process) and sample: the same number of
// comma-separated fields in every row, each field a value (a number with
// or without its unit, a timestamp, a UUID, a name, a path, a bracketed
// placeholder such as "[N/A]"). A log line with commas has neither: a tqdm
// bar ("  1%|#  | 1/90 [16:59<25:12:38,  1.75it/s, loss=7.13]", how HF
// Trainer and accelerate logs start) holds '|', '<' and '='; Python
// logging's asctime ("2024-04-08 13:02:16,577 - INFO - epoch 1, step 2")
// puts its milliseconds and the message in the field after the date. So
// a header-less CSV is recognised by its rows, never by one comma.

// maxCSVSniffRows is how many rows of head csvRows looks at.
const maxCSVSniffRows = 16

// LooksLikeCSVRows reports whether the lines of head that hold a comma
// read as the rows of one header-less CSV table of nvidia-smi values:
// each has at least minFields fields, all have as many as the first, and
// every field is a value (csvValue). Lines without a comma (blank lines,
// another program's messages) are passed over; a last line not ended by
// a newline, which may be cut where head ends, is left out when rows came
// before it. At most maxCSVSniffRows rows are looked at. False when head
// has no such row.
func LooksLikeCSVRows(head []byte, minFields int) bool {
	n, rows := -1, 0
	for rest := head; len(rest) > 0 && rows < maxCSVSniffRows; {
		line, after, ended := bytes.Cut(rest, []byte("\n"))
		rest = after
		if bytes.IndexByte(line, ',') < 0 || isTaggedMessage(trimSpace(line)) {
			continue
		}
		if !ended && rows > 0 {
			break
		}
		fields := bytes.Split(line, []byte(","))
		if len(fields) < minFields || (n >= 0 && len(fields) != n) {
			return false
		}
		n = len(fields)
		for _, f := range fields {
			if !csvValue(f) {
				return false
			}
		}
		rows++
	}
	return rows > 0
}

// csvValue reports whether f (one field, spaces around it allowed) may be
// a value nvidia-smi or a sampling script writes in a CSV row: empty; a
// bracketed placeholder alone ("[N/A]", "[Not Supported]"); a field
// starting with a digit that is a timestamp, or a number (decimal, hex,
// a PCI bus id, a version, a date or clock time) with at most a unit
// after it ("1234 MiB", "45 %", "70.00 W"); or other text (a GPU name, a
// UUID, a process path) without the characters no value holds and logs
// and progress bars do: '|', '<', '>', '=', '{', '}', and brackets other
// than a placeholder's.
func csvValue(f []byte) bool {
	f = trimSpace(f)
	if len(f) == 0 {
		return true
	}
	if len(f) > 256 || bytes.ContainsAny(f, "|<>={}") {
		return false
	}
	if bytes.ContainsAny(f, "[]") {
		return f[0] == '[' && f[len(f)-1] == ']' && bytes.Count(f, []byte("[")) == 1 && bytes.Count(f, []byte("]")) == 1
	}
	if f[0] < '0' || f[0] > '9' {
		return true
	}
	if _, ok := parseTimestamp(f, &civilCache{loc: time.UTC}); ok {
		return true
	}
	i := 0
	for i < len(f) && isNumberByte(f[i]) {
		i++
	}
	unit := trimSpace(f[i:])
	if len(unit) == 0 {
		return true
	}
	switch string(unit) {
	case "B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "%", "W", "MHz", "C", "s", "ms", "us", "KB/s", "MB/s":
		return true
	}
	return false
}

// isNumberByte: a byte of a number as nvidia-smi writes one (decimal or
// hex digits, "0x", a sign, an exponent) or of a bus id, version, date or
// clock time built of numbers ("00000000:07:00.0", "535.104.05",
// "2024/04/08", "13:02:16.577").
func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' ||
		c == 'x' || c == 'X' || c == '.' || c == ':' || c == '-' || c == '+' || c == '/'
}
