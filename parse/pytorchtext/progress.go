package pytorchtext

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A run's progress lines: what a training or inference loop prints as it
// goes ("step 12 loss 0.31", "Epoch: [3]  [ 40/500]", the Hugging Face
// Trainer's "{'loss': 0.5, ..., 'epoch': 0.12}", a tqdm bar's "| 12/500
// ["). The same out-of-memory message printed twice with such a line of
// its process between the two was printed by a run that went on after
// the first (an OOM caught and the batch skipped, a retry, the next
// step): two failures, not one reported twice (see the messages table's
// progress_line).

// progressRe matches a progress line's counters: a step, iteration,
// epoch or batch word and its number, a dict's "'epoch': N", a tqdm
// bar's "| n/total [".
var progressRe = lazyre.New(`(?i)\b(?:step|iter|iteration|epoch|batch)(?:\s*[:=#]\s*\[?\s*|\s+)\d+(?:\.\d+)?|['"](?:epoch|step|global_step)['"]\s*:\s*\d+(?:\.\d+)?|\|\s*\d+/\d+ \[`)

// comfyPromptRe matches ComfyUI's records of a prompt's run: "got
// prompt" (its server queued a prompt: server.py) and "Prompt executed in
// 41.11 seconds" (one ended: main.py), alone after a log prefix. ComfyUI
// runs one prompt at a time, catches the exception a prompt's node
// raised, logs it ("!!! Exception during processing !!! ...", its
// traceback, "Got an OOM, unloading all loaded models." for an OOM) and
// waits for the next prompt: the same message printed again after such a
// line is the next prompt's failure.
var comfyPromptRe = lazyre.New(`(?:^|[\s:\]-])(?:got prompt|Prompt executed in [0-9.]+ seconds)\s*$`)

// processMarkRe matches the mark a launcher puts on a process's lines:
// torchrun's "[rank1]:", its --tee's "[default1]:", a Ray or vLLM
// worker's "(VllmWorker rank=7 pid=10948)", "(pid=45601, ip=10.0.0.2)".
var processMarkRe = lazyre.New(`\[rank\d+\]:|\[default\d+\]:|\((?:[\w.-]+ )?(?:rank=\d+ )?pid=\d+(?:, ip=[^)]*)?\)`)

// srunLabelRe matches srun --label's mark at a line's start: the task's
// number and a colon ("0: ", " 3: "; Slurm pads the number to the width of
// the largest). Bare, it is also a program's own numbering ("1: loss
// 0.3"): it is a process's mark only in a text whose lines carry it with
// two task numbers at least (see Reader.srunTasks).
var srunLabelRe = lazyre.New(`^ *(\d{1,6}):(?: |$)`)

// seeSrunLabel notes the task number of a line's srun label, if any, until
// two are known.
func (r *Reader) seeSrunLabel(line string) {
	if len(r.srunTasks) >= 2 {
		return
	}
	if s := strings.TrimLeft(line, " "); s == "" || !isDigit(s[0]) {
		return // an indented line (a traceback's) is no label: no expression run on it
	}
	if task, ok := srunLabel(line); ok {
		if r.srunTasks == nil {
			r.srunTasks = map[string]bool{}
		}
		r.srunTasks[task] = true
	}
}

// srunLabel returns the task number of srunLabelRe's match at line's
// start, read as the expression reads it: spaces, one to six digits, a
// colon, then a space or the line's end.
func srunLabel(line string) (task string, ok bool) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := skipDigits(line, i, 1)
	if j < 0 || j-i > 6 || j >= len(line) || line[j] != ':' || (j+1 < len(line) && line[j+1] != ' ') {
		return "", false
	}
	return line[i:j], true
}

// srunMark returns the srun label that starts prefix, the text before a
// memory_stats() dict ("0:"), when the text's lines carry srun labels of
// two tasks at least; "" otherwise.
func (r *Reader) srunMark(prefix string) string {
	if len(r.srunTasks) < 2 {
		return ""
	}
	if m := srunLabelRe.FindStringSubmatch(prefix); m != nil {
		return m[1] + ":"
	}
	return ""
}

// maxProgressMarks bounds the processes whose progress is remembered.
const maxProgressMarks = 1024

// processMark returns the launcher's mark in a line's first maxPrefix
// bytes (processMarkRe), "" when none.
func processMark(line string) string {
	p := line[:min(len(line), maxPrefix)]
	if !strings.Contains(p, "[rank") && !strings.Contains(p, "[default") && !strings.Contains(p, "pid=") {
		// Each of processMarkRe's forms holds one of these words: the
		// expression, which has no literal prefix, is not run on the
		// lines of a log without marks (every progress line).
		return ""
	}
	return processMarkRe.Re().FindString(p)
}

// progressCounters returns the first n matches of progressRe in line,
// as progressRe.FindAllString(line, n) does (nil when none), without
// running the expression on a line of ASCII letters: a scan of its three
// forms, as the expression tries them at each byte, leftmost first. The
// expression runs on a line holding "ſ" (U+017F), which (?i) folds to
// "s".
func progressCounters(line string, n int) []string {
	if strings.Contains(line, "ſ") {
		return progressRe.Re().FindAllString(line, n)
	}
	var cs []string
	for i := 0; i < len(line) && len(cs) < n; {
		if !progressFirst[line[i]] {
			i++
			continue
		}
		end := progressAt(line, i)
		if end < 0 {
			i++
			continue
		}
		cs = append(cs, line[i:end])
		i = end
	}
	return cs
}

// progressFirst marks the bytes a progressRe match can start with: a
// word's first letter (s, i, e, b, either case), a quote, a bar.
var progressFirst = [256]bool{'s': true, 'S': true, 'i': true, 'I': true, 'e': true, 'E': true, 'b': true, 'B': true, '\'': true, '"': true, '|': true}

// progressAt returns the end of progressRe's match starting at line[i],
// -1 when none starts there.
func progressAt(line string, i int) int {
	switch c := line[i]; {
	case c == '|':
		// \|\s*\d+/\d+ \[
		j := skipSpace(line, i+1)
		j = skipDigits(line, j, 1)
		if j < 0 || j >= len(line) || line[j] != '/' {
			return -1
		}
		j = skipDigits(line, j+1, 1)
		if j < 0 || j+1 >= len(line) || line[j] != ' ' || line[j+1] != '[' {
			return -1
		}
		return j + 2
	case c == '\'' || c == '"':
		// ['"](?:epoch|step|global_step)['"]\s*:\s*\d+(?:\.\d+)?
		for _, w := range [...]string{"epoch", "step", "global_step"} {
			j := i + 1 + len(w)
			if j >= len(line) || !strings.EqualFold(line[i+1:j], w) || (line[j] != '\'' && line[j] != '"') {
				continue
			}
			j = skipSpace(line, j+1)
			if j >= len(line) || line[j] != ':' {
				return -1
			}
			return number(line, skipSpace(line, j+1))
		}
		return -1
	case c|0x20 != 's' && c|0x20 != 'i' && c|0x20 != 'e' && c|0x20 != 'b':
		return -1 // no word's first letter
	case i > 0 && isWordByte(line[i-1]):
		return -1 // \b
	}
	// \b(?:step|iter|iteration|epoch|batch)(?:\s*[:=#]\s*\[?\s*|\s+)\d+(?:\.\d+)?
	for _, w := range [...]string{"step", "iter", "iteration", "epoch", "batch"} {
		j := i + len(w)
		if j > len(line) || !strings.EqualFold(line[i:j], w) {
			continue
		}
		if k := skipSpace(line, j); k < len(line) && (line[k] == ':' || line[k] == '=' || line[k] == '#') {
			k = skipSpace(line, k+1)
			if k < len(line) && line[k] == '[' {
				k++
			}
			if end := number(line, skipSpace(line, k)); end >= 0 {
				return end
			}
		}
		if k := skipSpace(line, j); k > j {
			if end := number(line, k); end >= 0 {
				return end
			}
		}
	}
	return -1
}

// skipSpace returns the index of the first byte at or after i that is
// not \s (RE2's: tab, newline, form feed, carriage return, space).
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
}

// skipDigits returns the index after the run of ASCII digits at s[i], -1
// when the run is shorter than least.
func skipDigits(s string, i, least int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j-i < least {
		return -1
	}
	return j
}

// number returns the end of \d+(?:\.\d+)? at s[i], -1 when no digit is
// there.
func number(s string, i int) int {
	j := skipDigits(s, i, 1)
	if j < 0 {
		return -1
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j = skipDigits(s, j+1, 1)
	}
	return j
}

// progressMark is a process's last progress line: its counters as
// printed, and the line where they first read so.
type progressMark struct {
	counters string
	line     int64
}

// seeProgress remembers line, a line that holds no out-of-memory message
// and is no traceback's, as its process's last progress line when it
// counts the run's progress with counters other than its last one's: a
// bar drawn again with the same count (tqdm closing its bar as the
// exception unwinds) is not progress. For a line that holds messages,
// line is its text outside them: a tqdm bar on a logger's line ("WARNING:
// root:CUDA out of memory. ... cached)   | 2/2538 [00:01<53:05") was
// drawn with it, so a later line's message comes after that count.
func (r *Reader) seeProgress(line string) {
	var counters string
	if (strings.Contains(line, "got prompt") || strings.Contains(line, "Prompt executed in ")) && comfyPromptRe.MatchString(line) {
		// Each is a prompt of its own: no counter to compare.
		counters = fmt.Sprintf("ComfyUI prompt, line %d", r.line)
	} else {
		cs := progressCounters(line, 8) // each of its forms holds a digit

		if cs == nil {
			return
		}
		counters = strings.Join(cs, " ")
	}
	mark := processMark(line)
	if r.progress == nil {
		r.progress = map[string]progressMark{}
	}
	last, ok := r.progress[mark]
	if ok && last.counters == counters {
		return
	}
	if ok || len(r.progress) < maxProgressMarks {
		r.progress[mark] = progressMark{counters, r.line}
	}
}

// progressBefore returns the last progress line before line of the
// process a message's prefix marks (its own lines', or unmarked lines',
// whichever came later); 0 when none.
func (r *Reader) progressBefore(prefix string, line int64) int64 {
	p := r.progress[""].line
	if mark := processMark(strings.TrimSpace(prefix)); mark != "" {
		p = max(p, r.progress[mark].line)
	}
	if p >= line {
		return 0
	}
	return p
}
