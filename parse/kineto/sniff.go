package kineto

import (
	"bytes"
	"encoding/json"

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
			// A large job's header (distributedInfo's process groups
			// with every rank, deviceProperties of many GPUs) may push
			// traceEvents past the head: Kineto's own first keys say
			// it then.
			return kinetoHeader(h)
		}
		// The key must be followed by a colon and an array.
		rest := bytes.TrimLeft(h[i+len(traceKey):], " \t\r\n")
		return len(rest) > 0 && rest[0] == ':'
	case '[':
		return arrayOfEvts.Match(h) && bytes.Contains(h, []byte(`"ph"`))
	}
	return false
}

// kinetoKeys are the top-level keys Kineto and torch.profiler write
// before traceEvents: Kineto's schemaVersion, deviceProperties and
// distributedInfo (torch.distributed's process groups), then the
// profiler's metadata (PyTorch 1.8 to 2.x traces).
var kinetoKeys = map[string]bool{
	"schemaVersion": true, "deviceProperties": true, "distributedInfo": true,
	"record_shapes": true, "profile_memory": true, "with_stack": true, "with_flops": true,
	"with_modules": true, "trace_id": true, "displayTimeUnit": true, "baseTimeNanoseconds": true,
	"cuda_driver_version": true, "cuda_runtime_version": true, "cupti_version": true,
	"hip_runtime_version": true, "roctracer_version": true, "traceName": true,
}

// kinetoHeader reports whether h, an object's start without traceEvents
// in it, opens as Kineto writes a trace: its first key deviceProperties
// or distributedInfo (names no other format uses at the top), or
// schemaVersion followed by another of Kineto's keys (schemaVersion
// alone is common to many formats). A value cut by the head's end is
// enough when its key is one of those two.
func kinetoHeader(h []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(h))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	first, ok := nextKey(dec)
	switch {
	case !ok:
		return false
	case first == "deviceProperties" || first == "distributedInfo":
		return true
	case first != "schemaVersion":
		return false
	}
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return false
	}
	second, ok := nextKey(dec)
	return ok && kinetoKeys[second]
}

// nextKey reads an object's next key.
func nextKey(dec *json.Decoder) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	k, ok := tok.(string)
	return k, ok
}

// timelineHead matches export_memory_timeline's .json ([[t, t, ...],
// [[n, n, ...], ...]]) and .raw.json ([[t, action, bytes, category], ...]).
// timelineShort matches a .json whose times close within the head: one
// point ([[t], [[0, n, ...]]], a profiled region with one allocation),
// two, or none ([[], []]: nothing of the device was seen); its sizes
// array must follow, empty or of arrays, which a .raw.json's second
// event (a flat array) never is.
var (
	timelineHead  = lazyre.New(`^\[\s*\[\s*-?\d+\s*,\s*-?\d+\s*,`)
	timelineShort = lazyre.New(`^\[\s*\[\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\]\s*,\s*\[\s*(?:\[\s*-?\d|\])`)
	rawHead       = lazyre.New(`^\[\s*\[\s*-?\d+\s*,\s*[1-4]\s*,\s*-?\d+\s*,\s*-?\d+\s*\]\s*(,|\])`)
	// rawEmpty is a whole input that is an empty JSON array: the
	// .raw.json of a timeline that saw no event (its list of events
	// empty). The head must hold all of it: nothing may follow.
	rawEmpty  = lazyre.New(`^\[\s*\]\s*$`)
	htmlTitle = []byte("<title>GPU Memory Timeline HTML</title>")
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
	case rawHead.Match(h), rawEmpty.Match(h):
		return FormatMemoryTimelineRaw
	case timelineHead.Match(h), timelineShort.Match(h):
		return FormatMemoryTimeline
	case bytes.Contains(h[:min(len(h), 4096)], htmlTitle):
		return FormatMemoryTimelineHTML
	}
	return parse.FormatUnknown
}
