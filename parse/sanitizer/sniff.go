package sanitizer

import (
	"bytes"
	"github.com/gpuleak/gpuleak/internal/lazyre"

	"github.com/gpuleak/gpuleak/parse"
)

// sniffLineRe matches a tool line that only compute-sanitizer or
// cuda-memcheck writes, after any prefix of punctuation: the banner, a
// summary, or the first line of a record of any of the tools (memcheck's
// leaks, API errors and invalid accesses, initcheck's uninitialized reads
// and host API access errors, racecheck's races and hazards (compute-
// sanitizer's "Warning: (Warp Level Programming) Potential RAW hazard
// detected at", cuda-memcheck's "WARN:(Warp Level Programming) ..."), synccheck's barrier errors), so that records quoted without
// the banner (a bug report, a CI excerpt) are read.
var sniffLineRe = lazyre.New(`(?m)^.{0,200}?[^\sA-Za-z0-9] +(COMPUTE-SANITIZER|CUDA-MEMCHECK)\s*$|^.{0,200}?[^\sA-Za-z0-9] +(Leaked [\d,]+ bytes at 0x[0-9a-fA-F]+|LEAK SUMMARY: [\d,]+ bytes leaked|ERROR SUMMARY: [\d,]+ error|RACECHECK SUMMARY: [\d,]+ hazards? displayed|Program hit \w+ .*on CUDA API call to |Invalid (__\w+__|global|shared|local) (read|write|atomic) of size |Uninitialized (__\w+__|global) memory read of size |Host API memory access error at |Unused memory in allocation 0x|(Error|Warning|ERROR|WARN|INFO): Race reported between |(Error|Warning|ERROR|WARN|INFO): ?(\([^)]*\) ?)?Potential \w+ hazard detected at |Barrier error detected)`)

// sniffWords are words one of which every match of sniffLineRe holds:
// each alternative of the expression spells one of them out (the banner's
// tool names, "Leaked ", the summaries' "SUMMARY: ", ...). An input with
// none of them cannot match, and is told so without running the
// expression, which costs about 1,500 instructions a byte (100 M on the
// 64 KiB head of every input, of any family, that reaches this sniffer).
var sniffWords = [][]byte{
	[]byte("COMPUTE-SANITIZER"), []byte("CUDA-MEMCHECK"), []byte("Leaked "), []byte("SUMMARY: "),
	[]byte("Program hit "), []byte("Invalid __"), []byte("Uninitialized __"), []byte("Invalid global "), []byte("Invalid shared "),
	[]byte("Invalid local "), []byte("Uninitialized global "), []byte("Host API memory access error at "), []byte("Unused memory in allocation "),
	[]byte("Race reported between "), []byte("hazard detected at "), []byte("Barrier error detected"),
}

// mayMatchSniffLine reports whether head holds one of sniffWords: false
// means sniffLineRe cannot match it.
func mayMatchSniffLine(head []byte) bool {
	for _, w := range sniffWords {
		if bytes.Contains(head, w) {
			return true
		}
	}
	return false
}

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
	if mayMatchSniffLine(head) && sniffLineRe.Match(head) {
		return FormatText, true
	}
	return parse.FormatUnknown, false
}
