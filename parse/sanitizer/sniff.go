package sanitizer

import (
	"bytes"
	"regexp"

	"github.com/gpuleak/gpuleak/parse"
)

// sniffLineRe matches a tool line that only compute-sanitizer or
// cuda-memcheck writes, after any prefix of punctuation.
var sniffLineRe = regexp.MustCompile(`(?m)^.{0,200}?[^\sA-Za-z0-9] +(COMPUTE-SANITIZER|CUDA-MEMCHECK)\s*$|^.{0,200}?[^\sA-Za-z0-9] +(Leaked [\d,]+ bytes at 0x[0-9a-fA-F]+|LEAK SUMMARY: [\d,]+ bytes leaked|ERROR SUMMARY: [\d,]+ error|Program hit \w+ .*on CUDA API call to )`)

// Sniff reports whether head, the first bytes of an input, look like a
// compute-sanitizer report, and which form: FormatXML for
// the XML of --xml --save, FormatText for a text log (a banner
// or a record line after a prefix, anywhere in head).
func Sniff(head []byte) (parse.Format, bool) {
	t := bytes.TrimLeft(head, " \t\r\n")
	if bytes.HasPrefix(t, []byte("<")) {
		// The root element, after the XML declaration and comments.
		i := bytes.Index(t, []byte("<"+xmlRoot))
		if i >= 0 && i < 4096 {
			return FormatXML, true
		}
	}
	if sniffLineRe.Match(head) {
		return FormatText, true
	}
	return parse.FormatUnknown, false
}
