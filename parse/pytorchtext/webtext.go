package pytorchtext

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// Text copied from a web page rather than a terminal: a saved HTML page
// or a forum's post source ("2.42 GiB free;<br>", "&gt;&gt;", a link
// around a title), or text typed or rendered with other spaces and
// digits (a no-break space between a number and its unit, CJK full-width
// digits). webText turns such a line into what the terminal printed, so
// that a message in it reads as the same message.

// htmlTagRe matches the HTML tags a rendered or saved page wraps text in.
// Only these names: a traceback's "<module>", "<lambda>" or "<string>" is
// no tag.
var htmlTagRe = lazyre.New(`(?i)</?(?:p|br|code|pre|span|div|b|i|em|strong|tt|kbd|samp|li|ul|ol|blockquote|details|summary|h[1-6]|sup|sub|font|table|thead|tbody|tr|td|th|img|hr|small|mark|del|ins|s|u)(?:\s[^<>]*)?/?>`)

// htmlBrRe matches a line break tag.
var htmlBrRe = lazyre.New(`(?i)<br\s*/?>`)

// htmlLinkRe matches a link and its text: the text is a title or an
// address the page points to, not what a program printed ("(<a ...>Monai
// label. CUDA out of memory</a>)" names another post).
var htmlLinkRe = lazyre.New(`(?i)<a\s[^<>]*>([^<]*)</a>`)

// htmlEntityRe matches a character reference ("&gt;", "&#39;", "&#x27;").
var htmlEntityRe = lazyre.New(`&(?:[a-zA-Z][a-zA-Z0-9]{1,7}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});`)

// webLines returns line as the terminal showed it: HTML tags removed (a
// <br> inside the line breaks it), a link's text dropped where it holds
// an out-of-memory phrase, character references unescaped, and
// webSpaces applied: one line, or the lines a <br> broke it into (lines
// non-nil). A line without any of them is returned as it is.
func webLines(line string) (one string, lines []string) {
	if mayHoldTag(line) && (htmlTagRe.Re().MatchString(line) || htmlLinkRe.Re().MatchString(line)) {
		line = htmlLinkRe.Re().ReplaceAllStringFunc(line, func(a string) string {
			text := htmlLinkRe.Re().FindStringSubmatch(a)[1]
			if findOOM(html.UnescapeString(text), 0) >= 0 {
				return "" // a title linked to, not a message
			}
			return text
		})
		line = strings.TrimRight(line, " \t")
		line = htmlBrRe.Re().ReplaceAllString(line, "\n")
		line = strings.TrimSuffix(line, "\n") // a <br> that ends the line breaks nothing more
		line = htmlTagRe.Re().ReplaceAllString(line, "")
	}
	if strings.IndexByte(line, '&') >= 0 && htmlEntityRe.Re().MatchString(line) {
		line = html.UnescapeString(line)
	}
	line = webSpaces(line)
	if strings.IndexByte(line, '\n') < 0 {
		return line, nil
	}
	return "", strings.Split(line, "\n")
}

// mayHoldTag reports whether line has a "<" followed by a letter, or by
// "/" and a letter: what htmlTagRe's and htmlLinkRe's matches start with,
// tested before them on every line (a tqdm bar's "[00:12<01:23" has a
// "<" too).
func mayHoldTag(line string) bool {
	for i := strings.IndexByte(line, '<'); i >= 0; {
		j := i + 1
		if j < len(line) && line[j] == '/' {
			j++
		}
		if j < len(line) && ('a' <= line[j]|0x20 && line[j]|0x20 <= 'z' || line[j] == 0xC5 || line[j] == 0xE2) {
			return true // a letter, or the first byte of "ſ" or "K" (U+212A), which (?i) folds to s and k
		}
		k := strings.IndexByte(line[i+1:], '<')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// webSpaces replaces the spaces other than ASCII's that pages and input
// methods put between a number and its unit (U+00A0 no-break space,
// U+2007 figure space, U+2009 thin space, U+202F narrow no-break space,
// U+3000 ideographic space) with a space, and full-width digits
// (U+FF10-U+FF19) with ASCII ones, a full-width full stop between two
// digits with ".".
func webSpaces(line string) string {
	ascii := true
	for i := 0; i < len(line); i++ {
		if line[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return line
	}
	var b strings.Builder
	changed := false
	prevDigit := false
	for i, r := range line {
		switch {
		case r == '\u00a0' || r == '\u2007' || r == '\u2009' || r == '\u202f' || r == '\u3000':
			b.WriteByte(' ')
			changed = true
		case r >= '０' && r <= '９':
			b.WriteByte(byte('0' + r - '０'))
			changed = true
			prevDigit = true
			continue
		case r == '．' && prevDigit:
			next, _ := utf8.DecodeRuneInString(line[i+len("．"):])
			if next >= '０' && next <= '９' || next >= '0' && next <= '9' {
				b.WriteByte('.')
				changed = true
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
		prevDigit = r >= '0' && r <= '9'
	}
	if !changed {
		return line
	}
	return b.String()
}
