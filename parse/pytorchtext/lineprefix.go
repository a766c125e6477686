package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// Line prefixes: what a launcher, a collector or a quote puts before every
// line of a program's output. GitHub Actions' and kubectl --timestamps'
// "2024-06-22T15:13:25.0790000Z ", torchrun's "[rank0]: " (its --tee and
// local ranks' filter), Ray's "(RayWorkerWrapper pid=206994,
// ip=192.168.10.25) " on a worker's lines, a logger's header that vLLM's
// formatter repeats on every line of a record, srun -l's "0: ", a
// Markdown quote's "> ". The reader does not keep a list of them: a line
// goes on a message or a traceback when it starts with the same prefix as
// the line that opened it, its dates and times of day aside (clockLen).

// clockLen returns the length of the date or time of day that s starts
// with ("2024-06-22T15:13:25.0790000Z", "10:29:13", "03-27",
// "15:13:25,079", "192.168.10.25"): digits joined by '-', ':', '/', '.' or
// 'T', at least two runs, then maybe ",digits" and a 'Z'; 0 when s does
// not start with one. A lone number (a rank, a pid) is not a clock.
// samePrefix and prefixLabel (a table's lines) both read clocks so.
func clockLen(s string) int {
	digits := func(i int) int {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	i := digits(0)
	if i == 0 {
		return 0
	}
	runs := 1
	for i+1 < len(s) && strings.IndexByte("-:/.T", s[i]) >= 0 && s[i+1] >= '0' && s[i+1] <= '9' {
		i = digits(i + 1)
		runs++
	}
	if runs < 2 {
		return 0
	}
	if i+1 < len(s) && s[i] == ',' && s[i+1] >= '0' && s[i+1] <= '9' {
		i = digits(i + 1)
	}
	if i < len(s) && s[i] == 'Z' {
		i++
	}
	return i
}

// samePrefix returns the length of the start of line that is prefix, but
// for the dates and times of day in both (a timestamp that moved on, and
// may be printed with fewer digits: RFC 3339's trailing zeros dropped);
// -1 when line does not start so. Other digits must be equal: "[rank1]:"
// is not "[rank0]:", nor is one pid another's; but a prefix that is a
// line number alone (" 10 ", a paste's gutter) matches any other.
func samePrefix(line, prefix string) int {
	if trail, ok := gutter(prefix); ok {
		// Line numbers before each line (an editor's or cat -n's, in a
		// paste): a counter that moves on, not a process's label.
		i := len(line) - len(strings.TrimLeft(line, " \t"))
		j := i
		for j < len(line) && isDigit(line[j]) {
			j++
		}
		if j == i || !strings.HasPrefix(line[j:], trail) {
			return -1
		}
		return j + len(trail)
	}
	i, j := 0, 0
	for j < len(prefix) {
		if i >= len(line) {
			return -1
		}
		if isDigit(prefix[j]) && isDigit(line[i]) && (j == 0 || !isDigit(prefix[j-1])) {
			if a, b := clockLen(prefix[j:]), clockLen(line[i:]); a > 0 && b > 0 {
				i, j = i+b, j+a
				continue
			}
		}
		if line[i] != prefix[j] {
			return -1
		}
		i, j = i+1, j+1
	}
	return i
}

// gutter reports whether prefix is a line number alone, with spaces or
// tabs around it (" 10 ", "    10\t"), and returns what follows the
// number.
func gutter(prefix string) (trail string, ok bool) {
	t := strings.TrimLeft(prefix, " \t")
	d := 0
	for d < len(t) && isDigit(t[d]) {
		d++
	}
	trail = t[d:]
	return trail, d > 0 && strings.Trim(trail, " \t") == ""
}

// maxPrefix bounds the prefix looked for on a continuation line.
const maxPrefix = 512

// contLine returns the text of line, a line that may go on a message
// whose first line held lead before the message (a prefix and the
// exception's name: "[rank0]: torch.OutOfMemoryError: "), without the
// prefix that line repeats: the longest start of lead that ends after a
// space, before the exception's name, and that line starts with
// (samePrefix), less the spaces after it.
// Quote and comment marks before the text, and a closing quote after it
// (a message split across Python string literals), are removed as well.
// A line that repeats no start of lead is returned less those marks: a
// logger's record that goes on on lines of their own.
func contLine(lead, line string) string {
	if pfx, exc := splitPrefix(lead); exc != "" {
		// The exception's name is the message's, not the line's prefix.
		n := len(pfx)
		for n < len(lead) && (lead[n] == ' ' || lead[n] == '\t') {
			n++
		}
		lead = lead[:n]
	}
	lead = lead[:min(len(lead), maxPrefix)]
	best := 0
	for j := len(lead); j > 0; j-- {
		if lead[j-1] != ' ' && lead[j-1] != '\t' {
			continue
		}
		if n := samePrefix(line, lead[:j]); n > 0 {
			best = n
			break
		}
	}
	return strings.TrimRight(strings.TrimLeft(line[best:], " \t#>|\"'"), " \"'")
}

// Ray's log deduplication (ray/_private/ray_logging: LogDeduplicator)
// prints the first line of a kind from a worker as it comes, then folds
// the lines of that kind from other workers over a window
// (RAY_DEDUP_LOGS_AGG_WINDOW_S, 5 s) and prints the last of them with "
// [repeated Nx across cluster]" after it, N the lines folded (that one
// among them), the first time with " (Ray deduplicates logs by default.
// Set RAY_DEDUP_LOGS=0 ...)" after that. Lines are of one kind when they
// match but for their words that hold a digit or a hex number
// (_canonicalise_log_line): another GPU, another size, another pid.

// rayRepeatedRe matches Ray's fold mark at a line's end (its colour codes
// already removed), with the once-printed notice after it.
var rayRepeatedRe = lazyre.New(` ?\[repeated (\d+)x across cluster\](?: \(Ray deduplicates logs by default\.[^)]*\))?\s*$`)

// rayFolded returns line without Ray's fold mark, and N of its "[repeated
// Nx across cluster]" (0 when the line has none).
func rayFolded(line string) (string, int) {
	if !strings.Contains(line, "x across cluster]") {
		return line, 0
	}
	loc := rayRepeatedRe.Re().FindStringSubmatchIndex(line)
	if loc == nil {
		return line, 0
	}
	n, err := strconv.Atoi(line[loc[2]:loc[3]])
	if err != nil || n <= 0 {
		return line, 0
	}
	return line[:loc[0]], n
}

// rayWorkerRe matches the label Ray puts before a worker's line:
// "(RayWorkerWrapper pid=206994, ip=192.168.10.25) ", "(pid=45601) ".
var rayWorkerRe = lazyre.New(`^\((?:[\w.-]+ )?pid=\d+(?:, ip=[^)]*)?\) `)

// rayKey is what Ray's deduplication compares lines by: the line without
// Ray's worker label, less its words that hold a digit or "0x" (see
// _canonicalise_log_line).
func rayKey(line string) string {
	if loc := rayWorkerRe.Re().FindStringIndex(line); loc != nil {
		line = line[loc[1]:]
	}
	var b strings.Builder
	for _, w := range strings.Fields(line) {
		if strings.ContainsAny(w, "0123456789") {
			continue // Ray's \d+ and 0x[0-9a-fA-F]+ both hold a digit
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// maxRayKeys bounds the kinds of out-of-memory lines remembered for
// Ray's folds.
const maxRayKeys = 4096
