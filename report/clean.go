package report

import (
	"fmt"
	"strings"
)

// clean makes text from an input safe to print on a terminal: control
// characters (a newline or an escape sequence inside a function name or a
// path) are shown as \n, \x1b and the like, so an input cannot forge rows
// of a table or drive the terminal. JSON needs no cleaning: encoding/json
// escapes control characters itself.
func clean(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// Clean is clean for callers outside the package (error messages).
func Clean(s string) string { return clean(s) }
