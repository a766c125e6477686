package pytorchtext

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// Rich's tracebacks (rich.traceback, Traceback._render_stack; installed
// by many CLIs: Typer, sd-webui forks, ZenML) are a panel: a top border
// holding the title, "╭──── Traceback (most recent call last) ────╮"
// ("┌ ┐ └ ┘" where the console cannot show the rounded corners, "+--+" in
// ASCII, a bare "────" rule and two-space margins in Streamlit's boxless
// panel), then for each frame, most recent call last and separated by a
// blank line, its header "PATH:LINE in NAME" ("in NAME:LINE" where the
// file does not exist: no path), a blank line, and numbered source lines
// ("❱ 105 │ ..." marks the line; "> 105" in old releases and on legacy
// Windows consoles); each line between vertical borders "│ ... │". The
// bottom border closes the panel and the exception line follows. A
// header longer than the panel is wrapped: at the space before "in" or
// the name, or folded inside a path with no spaces (so a path that holds
// spaces and is wrapped at one is read without it).

// richVertical are the vertical borders of Rich's boxes.
const richVertical = "│┃║|"

// richBoxRunes are the runes of Rich's borders and rules.
const richBoxRunes = "─━═╭╮╰╯┌┐└┘┏┓┗┛╔╗╚╝├┤┬┴┼╞╡╟╢│┃║+-=|"

// richTitle is the title in a Rich traceback's top border.
const richTitle = "Traceback (most recent call last)"

// richHeaderRe matches a frame's header, "PATH:LINE in NAME", whole; the
// path has a directory separator or a Python file's extension.
var richHeaderRe = lazyre.New(`^(\S.*?(?:[/\\].*?|\.pyx?|\.pyw)):(\d+) in (\S+)$`)

// richSourceRe matches the first line of a frame's source block: an
// optional marker of the frame's line, then a line number.
var richSourceRe = lazyre.New(`^(?:[❱>]\s*)?\d+(?:\s|$)`)

// maxRichHeader bounds the text a wrapped header is joined from.
const maxRichHeader = 2048

// onlyBox reports whether s holds nothing but Rich's border runes and
// spaces.
func onlyBox(s string) bool {
	for _, c := range s {
		if c != ' ' && c != '\t' && !strings.ContainsRune(richBoxRunes, c) {
			return false
		}
	}
	return true
}

// richTitleAt returns the prefix before a Rich traceback's top border on
// line, and whether line is one: the title between border runes and
// spaces only ("╭───── Traceback (most recent call last) ─────╮").
func richTitleAt(line string) (prefix string, ok bool) {
	i := strings.Index(line, richTitle)
	if i < 0 || !onlyBox(line[i+len(richTitle):]) {
		return "", false
	}
	j := i
	for j > 0 {
		c, n := utf8.DecodeLastRuneInString(line[:j])
		if c != ' ' && !strings.ContainsRune(richBoxRunes, c) {
			break
		}
		j -= n
	}
	if strings.TrimSpace(line[j:i]) == "" {
		return "", false // no border before the title: prose naming it
	}
	return line[:j], true
}

// richBordered returns the text between a Rich panel's vertical borders
// at the start of s (after spaces), trimmed; ok is false when s does not
// start with a vertical border.
func richBordered(s string) (text string, ok bool) {
	t := strings.TrimLeft(s, " \t")
	c, n := utf8.DecodeRuneInString(t)
	if n == 0 || !strings.ContainsRune(richVertical, c) {
		return "", false
	}
	t = strings.TrimRight(t[n:], " \t")
	if c, n := utf8.DecodeLastRuneInString(t); n > 0 && strings.ContainsRune(richVertical, c) {
		t = t[:len(t)-n]
	}
	return strings.TrimSpace(t), true
}

// richFrameStart returns the prefix and the frame of a line that is a
// bordered Rich frame header ("SUBPROCESS: │ C:\x\m.py:105 in f │"): a
// traceback pasted from the middle of its panel.
func richFrameStart(line string) (prefix string, f tbFrame, ok bool) {
	i := richVerticalAt(line)
	if i < 0 {
		return "", tbFrame{}, false
	}
	text, _ := richBordered(line[i:])
	if f, ok := richHeader(text); ok {
		return line[:i], f, true
	}
	return "", tbFrame{}, false
}

// richVerticalAt returns the index of the first of richVertical's runes
// in line, -1 when none is: "|", or a rune whose UTF-8 starts with 0xE2
// (│, ┃ and ║ do), a byte no other rune's encoding holds but as its
// first.
func richVerticalAt(line string) int {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '|':
			return i
		case 0xE2:
			if c, _ := utf8.DecodeRuneInString(line[i:]); c != '|' && strings.ContainsRune(richVertical, c) {
				return i
			}
		}
	}
	return -1
}

// richHeader reads a frame header's text (see richHeaderRe).
func richHeader(text string) (tbFrame, bool) {
	if !strings.Contains(text, " in ") {
		// The expression, which has no literal prefix, holds " in ":
		// it is not run on the bordered lines of a log's tables and
		// bars (tqdm's "| 12/500 [", Megatron's "| lm loss: ... |").
		return tbFrame{}, false
	}
	m := richHeaderRe.FindStringSubmatch(text)
	if m == nil {
		return tbFrame{}, false
	}
	n, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return tbFrame{}, false
	}
	return tbFrame{file: m[1], line: n, name: m[3]}, true
}

// addRich reads line rest (after the traceback's prefix) of a Rich
// traceback's panel, and reports whether the panel goes on: a bordered
// line, a border, a blank line, or (boxless panels) a line indented by
// two spaces. A frame header is read from the lines since the last blank
// one (a paragraph); source lines, hidden-frame notes and nested panels
// (locals) are not headers.
func (tb *traceback) addRich(rest string) bool {
	text, ok := richBordered(rest)
	switch {
	case ok:
	case strings.TrimSpace(rest) == "" || onlyBox(rest):
		text = "" // a border or a blank line
	case strings.HasPrefix(rest, "  "):
		text = strings.TrimSpace(rest) // a boxless panel's line
	default:
		return false // the exception line after the panel
	}
	if text == "" || onlyBox(text) {
		tb.para, tb.paraDone = "", false
		return true
	}
	if tb.paraDone {
		return true
	}
	switch {
	case tb.para == "":
		tb.para = text
	case len(tb.para)+len(text) > maxRichHeader:
		tb.paraDone = true
		return true
	case strings.HasSuffix(tb.para, " in") || strings.HasPrefix(text, "in ") || richLineNoEnd(tb.para):
		tb.para += " " + text // wrapped at a space
	default:
		tb.para += text // a path folded at the panel's width
	}
	first, _, _ := strings.Cut(tb.para, " ")
	if c, _ := utf8.DecodeRuneInString(first); strings.ContainsRune(richBoxRunes, c) || richSourceRe.MatchString(tb.para) || strings.HasPrefix(tb.para, "...") {
		tb.paraDone = true // a nested panel, source lines, "... N frames hidden ..."
		return true
	}
	if f, ok := richHeader(tb.para); ok {
		tb.addFrame(f)
		tb.paraDone = true
	}
	return true
}

// richLineNoEnd reports whether s ends with ":LINE" (a header wrapped
// before " in").
func richLineNoEnd(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || i == len(s)-1 {
		return false
	}
	for _, c := range s[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
