package cmd

import (
	"fmt"
	"strings"
)

// exitHelp is what one exit code means in a command's --help.
type exitHelp struct {
	Code  int
	Means string
}

// The meanings README's table ("Exit codes") gives the codes, said alike
// by every command they fit; a command whose codes mean more or other
// says so with an exitHelp of its own.
var (
	exitHelpDone     = exitHelp{ExitOK, "done"}
	exitHelpInput    = exitHelp{ExitInput, "bad usage or input"}
	exitHelpInternal = exitHelp{ExitInternal, "internal error"}
	// exitHelpSamples is capture's and watch's 3: the samples are incomplete.
	exitHelpSamples = exitHelp{ExitInternal, "samples could not be written, ten in a row could not be taken, or an internal error"}
)

// helpUnreadCostsItself is how analyze and trend treat an input they
// cannot read (README, Exit codes: the others' report is written first).
const helpUnreadCostsItself = "An input that cannot be read costs only itself: the others are reported, it is listed with its error, and the exit code is 2."

// exitCodesHelp is the paragraph that ends a command's --help: lead (a
// sentence or "") followed by "Exit codes: 0 done; ...", wrapped as the
// rest of the help is. Every command says its codes this way (README's
// table, and TestHelpNamesExitCodes, hold them to it).
func exitCodesHelp(lead string, codes ...exitHelp) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d %s", c.Code, c.Means)
	}
	s := "Exit codes: " + strings.Join(parts, "; ") + "."
	if lead != "" {
		s = lead + " " + s
	}
	return wrapHelp(s, 76)
}

// wrapHelp breaks s into lines of at most width bytes at spaces (a word
// longer than width has a line of its own).
func wrapHelp(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
