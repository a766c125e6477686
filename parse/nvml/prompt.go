package nvml

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// Pasted logs often hold the commands that made them: "$ nvidia-smi dmon",
// "user@host:~$ gpustat", "PS C:\> nvidia-smi", and several outputs one
// after the other. A shell prompt line running a command ends the output
// before it and starts a segment whose layout is recognised afresh; a
// segment in no layout gpuleak reads (ls, a pip install) is skipped with a
// warning. Lines a terminal leaves when a command is stopped ("^C") are
// skipped.

// promptRe matches a prompt and the command after it: "$ ", "# ", "% ",
// "> " (alone, or after user@host:dir, "(venv)", "PS C:\dir"), then a
// command name, after sudo, time or nohup if any ("date" and "while" for
// the loops that print a time before each output; pdsh, clush, pssh and
// ansible, which run nvidia-smi on many hosts: see fleetDecoder).
var promptRe = lazyre.New(`^\s*(?:\([\w.-]+\)\s*)?(?:[\w.@:~/\\\-\[\] ]*?)[$#%>]\s*(?:(?:sudo|time|nohup|exec)\s+)*(?:nvidia-smi|gpustat|nvitop|dcgmi|curl|wget|watch|cat|zcat|tail|head|less|more|python3?|py|ls|pip3?|conda|docker|kubectl|compute-sanitizer|cuda-memcheck|julia|date|while|pdsh|clush|pssh|parallel-ssh|ansible)\b`)

// isPromptLine reports whether b is a shell prompt running a command, or
// an nvidia-smi command line without a prompt (isCommandLine).
func isPromptLine(b []byte) bool {
	// promptChar first: it rules out a data row at its first comma,
	// where looking for '|' reads the whole row.
	if len(b) > 512 || !promptChar(b) {
		return len(b) <= 512 && isCommandLine(b)
	}
	if i := bytes.IndexByte(b, '|'); i >= 0 && !bytes.Contains(b, []byte("$ ")) {
		// A command piped on ("$nvidia-smi --query-gpu=... | tee
		// gpu.csv"): the prompt and command before the first '|'.
		// (promptChar found the prompt character before it.)
		return promptRe.Match(b[:i]) || isCommandLine(b)
	}
	return promptRe.Match(b)
}

// commandRe matches an nvidia-smi command line without a prompt: as a
// shell traces it ("+ nvidia-smi ..." under set -x, in a CI or Slurm job
// log) or as a script writes it above the output it starts
// (echo "nvidia-smi --query-gpu=... -l 5" >> gpu.log): nvidia-smi (on
// Windows nvidia-smi.exe, as a pasted cmd.exe transcript gives it), after
// sudo, time or nohup if any, then an option, a subcommand or nothing.
var commandRe = lazyre.New(`^\s*(?:\++\s+)?(?:(?:sudo|time|nohup|exec)\s+)*nvidia-smi(?:\.exe)?(?:\s+(?:-|dmon\b|pmon\b|mig\b|topo\b|nvlink\b|clocks\b)|\s*$)`)

// isCommandLine reports whether b is an nvidia-smi command line without
// a prompt (commandRe). No row starts so: a row's first byte is a digit,
// a space, '{', '[', '|' or a name's letter; "nvidia-smi has failed ..."
// has no option after the name.
func isCommandLine(b []byte) bool {
	t := trimSpace(b)
	if len(t) < 10 || t[0] != '+' && t[0] != 'n' && t[0] != 's' && t[0] != 't' && t[0] != 'e' {
		return false
	}
	// The first word after any "+" must be one commandRe starts with: a
	// fleet log's "node01: ..." lines are told without the expression.
	w := bytes.TrimLeft(t, "+ \t")
	if i := bytes.IndexAny(w, " \t"); i >= 0 {
		w = w[:i]
	}
	switch string(w) {
	case "nvidia-smi", "nvidia-smi.exe", "sudo", "time", "nohup", "exec":
	default:
		return false
	}
	return commandRe.Match(b)
}

// promptChar reports whether the first byte of b that promptRe's text
// before the prompt cannot hold (white space, word characters, ".@:~/\-[]"
// and the parentheses of "(venv)") is a prompt character: promptRe cannot
// match otherwise, and a data row ("2026/11/30 08:06:12.696, 0, ...") is
// told so at its first comma without running the regular expression.
func promptChar(b []byte) bool {
	for _, c := range b {
		switch promptClass[c] {
		case promptText:
		case promptMark:
			return true
		default:
			return false
		}
	}
	return false
}

// Classes of bytes for promptChar.
const (
	promptOther = iota // ends the text before a prompt: no prompt
	promptText         // may be in the text before a prompt
	promptMark         // '$', '#', '%' or '>': a prompt
)

// promptClass is promptChar's class of every byte (a table: the switch
// cost a branch per byte of the timestamp every row starts with).
var promptClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			t[c] = promptText
		case c == '_', c == '.', c == '@', c == ':', c == '~', c == '/', c == '\\', c == '-', c == '[', c == ']', c == '(', c == ')':
			t[c] = promptText
		case c == ' ', c == '\t', c == '\n', c == '\f', c == '\r':
			t[c] = promptText
		case c == '$', c == '#', c == '%', c == '>':
			t[c] = promptMark
		}
	}
	return t
}()

// isTerminalNoise reports whether b is what a terminal prints when a
// command is interrupted or suspended.
func isTerminalNoise(b []byte) bool {
	t := trimSpace(b)
	if len(t) == 0 || t[0] != '^' && t[0] != 'r' && t[0] != 'u' && t[0] != 's' {
		return false // what follows starts with one of these
	}
	return bytes.Equal(t, []byte("^C")) || bytes.Equal(t, []byte("^Z")) || bytes.Equal(t, []byte("^\\")) ||
		(bytes.HasPrefix(t, []byte("real")) || bytes.HasPrefix(t, []byte("user")) || bytes.HasPrefix(t, []byte("sys"))) && shellTimeRe.Match(t)
}

// shellTimeRe matches the report of the shell's "time" after a command
// ("real\t0m0,022s", "user 0m0.001s"; the decimal comma of some locales).
var shellTimeRe = lazyre.New(`^(?:real|user|sys)\s+\d+m\d+(?:[.,]\d+)?s$`)

// skipPrompts drops leading blank, prompt and elision ("...") lines from
// head, for sniffing, and the lines a prompt's command continues on (after
// a line ending in "\\").
func skipPrompts(head []byte) []byte { return skipCommand(head, false) }

// skipCommand is skipPrompts of the text after a prompt line, whose
// command continues in head's first line when cont.
func skipCommand(head []byte, cont bool) []byte {
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return head
		}
		line := head[:i]
		switch {
		case cont:
			cont = continues(line)
		case isPromptLine(line):
			cont = continues(line)
		default:
			if t := trimSpace(line); len(t) > 0 && !isTerminalNoise(line) && !isElision(t) && !isOutputLabel(t) {
				return head
			}
		}
		head = head[i+1:]
	}
	return head
}

// continues reports whether a command line goes on in the next line: it
// ends in the shell's line continuation, a backslash (PowerShell's: a
// backtick).
func continues(line []byte) bool {
	t := trimSpace(line)
	return len(t) > 0 && (t[len(t)-1] == '\\' || t[len(t)-1] == '`')
}

// untilPrompt cuts head before its first prompt line: one output.
func untilPrompt(head []byte) []byte {
	for off := 0; off < len(head); {
		i := bytes.IndexByte(head[off:], '\n')
		end := len(head)
		if i >= 0 {
			end = off + i
		}
		if isPromptLine(head[off:end]) {
			return head[:off]
		}
		if i < 0 {
			break
		}
		off = end + 1
	}
	return head
}

// isOutputLabel reports whether t (a trimmed line) is a label a paste
// puts between a command and its output: a few words ending in a colon,
// in Markdown's emphasis or heading marks or not ("Output:", "**输出**:",
// "### Result：", "**Output:**"): up to three words of letters and
// digits. No output line of a layout gpuleak reads
// is one: their rows hold figures, a comma or a "|", and a -q report's
// keys have their value after the colon.
func isOutputLabel(t []byte) bool {
	if len(t) < 2 || len(t) > 64 || bytes.ContainsAny(t, ",|=") {
		return false
	}
	s := strings.TrimRight(string(t), "*_` ")
	switch {
	case strings.HasSuffix(s, ":"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "："):
		s = s[:len(s)-len("：")]
	default:
		return false
	}
	s = strings.Trim(s, "*_#>` ")
	if s == "" || len(strings.Fields(s)) > 3 {
		return false
	}
	// Words only: "Traceback (most recent call last):" is a traceback's.
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ' ' && r != '-' {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// skipDecoder reads a segment in no layout: it ignores its lines.
type skipDecoder struct{ r *Reader }

func (d skipDecoder) line([]byte, int) error { return nil }
func (d skipDecoder) end(n int) error {
	if d.r.meta.Rows == 0 && d.r.skipped != nil {
		return d.r.skipped // the reason the last output in a layout gave no samples
	}
	if d.r.meta.Rows == 0 {
		return d.r.errorf(n, "no samples: the outputs after the shell prompts are in no layout gpuleak reads")
	}
	return nil
}

// newSegment handles a prompt line n: it ends the output being read and
// picks the decoder of what follows.
func (r *Reader) newSegment(prompt []byte, n int) error {
	prompt = append([]byte(nil), trimSpace(prompt)...) // the line's buffer is reused by Peek
	r.paste = true
	r.hosts.atPrompt(prompt, n)
	if _, skip := r.dec.(skipDecoder); r.dec != nil && !skip && r.segLines > 0 {
		if err := r.dec.end(n - 1); err != nil {
			r.meta.Warnings.Add(parse.InlineNote(n, -1, "the output before line %d was not read whole: %v", n, err))
			if !errors.Is(err, errNoMemoryFigure) {
				// Not an output without a memory figure (skipped for
				// what it is) but one that could not be read: the
				// paste is read in part.
				msg := err.Error()
				var pe *parse.Error
				if errors.As(err, &pe) {
					msg = fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
				}
				r.addCut(fmt.Sprintf("the output before line %d was not read (%s)", n, msg))
			}
		}
	}
	r.segLines, r.segText = 0, false
	r.segLine, r.segRowsAt = n, r.meta.Rows
	head, err := r.src.Peek(parse.SniffLen)
	if len(head) > 0 && (r.wrap != (wrap{}) || bytes.Contains(head, []byte("```")) || bytes.Contains(head, []byte("~~~"))) {
		// As the lines will be read: without the log's quote marks or
		// stamps, and without fences ("$ nvidia-smi dmon" then "```").
		// (A copy of head: only where there is something to take off.)
		head, _ = unwrapHead(head, r.wrap)
	}
	r.segmentPeriod(prompt, head, n)
	if len(head) == 0 && err != nil {
		r.dec = skipDecoder{r}
		return nil
	}
	seg := untilPrompt(skipCommand(head, continues(prompt)))
	f := sniffOne(seg)
	var fields []string
	if f == parse.FormatUnknown && looksLikeCSV(seg) {
		// Header-less CSV: the query in the command names its columns.
		if fields = commandFields(commandText(prompt, head)); len(fields) > 0 {
			f = FormatForFields(fields)
		}
	}
	if f == parse.FormatUnknown {
		r.dec = skipDecoder{r}
		r.meta.Warnings.Linef(n, "the output of %q is in no layout gpuleak reads: skipped", snippet(prompt))
		return nil
	}
	r.segNote = nil
	defer r.useFleet(f, untilPrompt(skipCommand(head, continues(prompt))))
	if r.meta.Format != parse.FormatUnknown && r.meta.Format != f {
		// Said once the output is read: an output without a memory
		// figure is skipped instead (skipOutput).
		note := parse.LineNote(n, "another output (%s) after the prompt %q: read too", f, snippet(prompt))
		r.segNote = &note
	}
	if err := r.useFormat(f); err != nil {
		return err
	}
	if d, ok := r.dec.(*smiDecoder); ok {
		d.cmdFields = fields
	}
	return nil
}

// commandText is the command of a prompt line and the lines of head it
// continues on (after a line ending in a line continuation).
func commandText(prompt, head []byte) []byte {
	cmd := prompt
	for cont := continues(prompt); cont && len(head) > 0; {
		line, rest, _ := bytes.Cut(head, []byte("\n"))
		cmd = append(append(cmd, '\n'), line...)
		cont, head = continues(line), rest
	}
	return cmd
}

// segmentPeriod starts the ticks of the output after the command line
// prompt (line n; head, the text after it) where those of the output
// before it ended, and takes the command's period, when it gives one (a
// logger restarted with "-l 1" where it had "-l 5"), for the rows of a
// log without times from here on; --interval (WithInterval) stays. A
// command without a period leaves the one in force.
func (r *Reader) segmentPeriod(prompt, head []byte, n int) {
	d, c := commandInterval(commandText(prompt, head))
	if r.intervalGiven || d == 0 {
		d = r.opt.interval
	}
	if r.ticked {
		// The time between the two commands is not known: the next tick
		// is one period on, as within an output.
		r.tickBase = r.tickLast + d.Microseconds()
	}
	if r.intervalGiven || c == "" || d == r.opt.interval && !r.periodAssumed {
		return
	}
	was := fmt.Sprintf("%v, the period of %s", r.opt.interval, r.intervalCmd)
	if r.periodAssumed {
		was = fmt.Sprintf("%v, assumed", r.opt.interval)
	}
	if len(c) > 200 {
		c = c[:200] + "..."
	}
	// Said where a row is placed by it (usePeriod): rows with their own
	// times (dmon -o TD, --query-gpu=timestamp,...) are not.
	note := parse.LineNote(n, "the command %q gives the period of the output after it: rows without times are placed %v apart from here on (before: %s)", c, d, was)
	r.periodNote = &note
	r.opt.interval, r.intervalCmd, r.periodAssumed = d, c, false
}

// useFormat picks the decoder of layout f.
func (r *Reader) useFormat(f parse.Format) error {
	switch f {
	case FormatQueryGPU, FormatQueryApps:
		r.dec = newSmiDecoder(r, f == FormatQueryApps)
	case FormatDmon, FormatPmon:
		r.dec = newMonDecoder(r, f == FormatPmon)
	case FormatDcgmiDmon:
		r.dec = newDcgmiDecoder(r)
	case FormatPynvmlJSONL:
		r.dec = newJSONDecoder(r, r.pynvmlDoc)
	case FormatGpustatJSON:
		r.dec = newJSONDecoder(r, r.gpustatDoc)
	case FormatDCGMPrometheus:
		r.dec = newDCGMDecoder(r)
	case FormatNvidiaSmiText, FormatGpustatText:
		r.dec = newSmiTextDecoder(r)
	case FormatNvidiaSmiXML:
		r.dec = newSmiXMLDecoder(r)
	case FormatPynvmlText:
		r.dec = newPynvmlTextDecoder(r)
	default:
		return fmt.Errorf("nvml: no decoder for %q", f)
	}
	if r.meta.Format == parse.FormatUnknown {
		r.meta.Format = f
	}
	r.source = []byte(f)
	return nil
}
