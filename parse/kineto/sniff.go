package kineto

import (
	"bytes"
	"github.com/gpuleak/gpuleak/internal/lazyre"

	"github.com/gpuleak/gpuleak/parse"
)

// traceHead matches the start of a Chrome trace as PyTorch writes it: an
// object with a "traceEvents" key (checked within the head), or an array
// whose first element is an event with a "ph" phase.
var (
	traceKey    = []byte(`"traceEvents"`)
	arrayOfEvts = lazyre.New(`^\[\s*\{[^{}]*"(ph|cat|ts|pid)"\s*:`)
)

// Sniff reports whether head, the first bytes of an input, is a Chrome
// trace (torch.profiler's export_chrome_trace).
func Sniff(head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n")
	if len(h) == 0 {
		return false
	}
	switch h[0] {
	case '{':
		i := bytes.Index(h, traceKey)
		if i < 0 {
			return false
		}
		// The key must be followed by a colon and an array.
		rest := bytes.TrimLeft(h[i+len(traceKey):], " \t\r\n")
		return len(rest) > 0 && rest[0] == ':'
	case '[':
		return arrayOfEvts.Match(h) && bytes.Contains(h, []byte(`"ph"`))
	}
	return false
}

// timelineHead matches export_memory_timeline's .json ([[t, t, ...],
// [[n, n, ...], ...]]) and .raw.json ([[t, action, bytes, category], ...]).
var (
	timelineHead = lazyre.New(`^\[\s*\[\s*-?\d+\s*,\s*-?\d+\s*,`)
	rawHead      = lazyre.New(`^\[\s*\[\s*-?\d+\s*,\s*[1-4]\s*,\s*-?\d+\s*,\s*-?\d+\s*\]\s*(,|\])`)
	htmlTitle    = []byte("<title>GPU Memory Timeline HTML</title>")
)

// SniffFormat returns the format of a PyTorch profiler output whose
// content starts with head, or parse.FormatUnknown: a Chrome trace (Sniff)
// or a memory timeline (SniffTimeline).
func SniffFormat(head []byte) parse.Format {
	if Sniff(bytes.TrimLeft(head, " \t\r\n")) {
		return FormatTrace
	}
	return SniffTimeline(head)
}

// SniffTimeline returns the format of an export_memory_timeline output
// whose content starts with head (FormatMemoryTimelineRaw,
// FormatMemoryTimeline or FormatMemoryTimelineHTML), or
// parse.FormatUnknown. A Chrome trace never matches it (its array holds
// objects, not arrays).
func SniffTimeline(head []byte) parse.Format {
	h := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case rawHead.Match(h):
		return FormatMemoryTimelineRaw
	case timelineHead.Match(h):
		return FormatMemoryTimeline
	case bytes.Contains(h[:min(len(h), 4096)], htmlTitle):
		return FormatMemoryTimelineHTML
	}
	return parse.FormatUnknown
}
