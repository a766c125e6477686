package nvml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// Sniff returns the layout of a log whose (decompressed) content starts
// with head, or parse.FormatUnknown. It looks at the first non-blank line
// (a "#" header naming gpu and fb or pid columns, a CSV header of
// nvidia-smi field names or a row starting with a timestamp, a JSON object
// with the keys of a layout, DCGM metrics) after any shell prompt lines
// ("$ nvidia-smi dmon"), never at a file name. A
// header-less CSV log whose first field is not a timestamp is not
// recognised; FormatForFields names it when its fields are known. In a
// paste of several outputs, each after its prompt, the first in a layout
// gpuleak reads decides. A log in a Markdown fence, quoted, or behind a
// CI or job log's stamps is recognised by its lines without them (wrap).
func Sniff(head []byte) parse.Format {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(head, 0x1b) >= 0 {
		head = stripANSI(nil, head) // colours, a terminal capture's screen codes
	}
	f, _, _, _ := sniffLed(head)
	return f
}

// maxLead bounds the lines of text (non-blank) that may come before a
// log's first output without a prompt: a paste's "Here is my log:", a
// Markdown list item that introduces its fenced block ("- GPU utilization
// is recorded in logs/gpu.log, which looks like this:"), a docstring's
// "Layout (...):". More text than this is a document, not a paste of a
// log.
const maxLead = 3

// sniffLed is sniffWrapped of head, or else of head after its first one
// to maxLead lines of text (leadLine): an output in a layout whose first
// line says so (a --query CSV header, dmon's, pmon's or dcgmi dmon's "#"
// header, a row that starts with a timestamp, DCGM metrics) after a line
// of prose. lead is the number of lines (blank ones included) the Reader
// skips, with a warning; 0 when head is recognised as it is.
func sniffLed(head []byte) (f parse.Format, w wrap, plain []byte, lead int) {
	if f, w, plain = sniffWrapped(head); f != parse.FormatUnknown {
		return f, w, plain, 0
	}
	rest, text := head, 0
	for text < maxLead {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			break
		}
		lead++
		rest = after
		t := trimSpace(stripQuote(trimSpace(line)))
		if len(t) == 0 || isFence(t) {
			continue // a fence before the text ("```", "Here is my log:", the log)
		}
		if !leadLine(t) {
			break
		}
		text++
		switch f, w, plain = sniffWrapped(rest); f {
		case FormatDmon, FormatPmon:
			src := rest
			if plain != nil {
				src = plain
			}
			if monUnitsFollow(src) {
				return f, w, plain, lead
			}
		case FormatQueryGPU, FormatQueryApps, FormatDcgmiDmon, FormatDCGMPrometheus:
			return f, w, plain, lead
		}
	}
	return parse.FormatUnknown, wrap{}, nil, 0
}

// monUnitsFollow reports whether the first line of text of head (a "#"
// header, as dmon and pmon print theirs) has a "#" line after it, the
// units line both print under their header ("# Idx W C ..."): after text
// that is not an output, a comment such as "# gpu pid monitor" at the
// top of a pasted script is not a pmon header.
func monUnitsFollow(head []byte) bool {
	seen := 0
	for l := range bytes.Lines(head) {
		t := bytes.TrimSpace(l)
		if len(t) == 0 || isFence(t) {
			continue
		}
		if t[0] != '#' {
			return false
		}
		if seen++; seen == 2 {
			return true
		}
	}
	return false
}

// leadLine reports whether t, a trimmed line, is a line of prose that may
// come before an output: a word of three letters or more, and neither a
// Markdown fence, the border of a table, nor a line that starts with a
// shell's prompt or comment mark: a command gpuleak does not know ("$ go
// build && ./dmon") prints another program's output, whatever it looks
// like (DCGM's Go sample "dmon").
func leadLine(t []byte) bool {
	switch t[0] {
	case '$', '#', '%', '|', '+', '{', '[', '<':
		return false
	}
	if isFence(t) {
		return false
	}
	run := 0
	for _, c := range t {
		if isLetter(c) {
			if run++; run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// sniffWrapped is Sniff of head (without its byte order mark and escape
// sequences), with the wrap that must be taken off its lines for the
// layout's decoder to read them (none when head is recognised as it is)
// and, where there is one, head without it (unwrapHead); nil otherwise.
func sniffWrapped(head []byte) (parse.Format, wrap, []byte) {
	f := sniffPlain(head)
	switch f {
	case parse.FormatUnknown:
	case FormatDmon, FormatPmon, FormatDcgmiDmon, FormatDCGMPrometheus:
		return f, wrap{}, nil // their own lines start with "#"
	default:
		if !hashedOutput(head) {
			return f, wrap{}, nil
		}
		// An output pasted as comments: its lines are not read as
		// they are (a log's comments are skipped), but without "#".
		if hf, hw, plain := sniffHashed(head); hf != parse.FormatUnknown {
			return hf, hw, plain
		}
		return f, wrap{}, nil
	}
	w := wrapOf(head)
	if plain, changed := unwrapHead(head, w); changed {
		f := sniffPlain(plain)
		if w == (wrap{}) {
			plain = nil // fences only: the decoders skip them (isFence)
		}
		if f != parse.FormatUnknown {
			return f, w, plain
		}
	}
	return sniffHashed(head)
}

// hashedOutput reports whether the first output of head (after its
// prompt lines) is one pasted as comments: every line of it starts with
// "#" (hashOutput), and without them it is in a layout, or comma-separated
// values whose command names their fields ("# NVIDIA GeForce RTX 4070 Ti
// SUPER, 16376, 14360" under "nvidia-smi --query-gpu=name,memory.total,
// memory.used --format=csv,noheader"). A comment before a later output
// ("# my notes", then "$ nvidia-smi ...") is not.
func hashedOutput(head []byte) bool {
	body := skipPrompts(head)
	seg := untilPrompt(body)
	if !hashOutput(seg) {
		return false
	}
	plain, _ := unwrapHead(seg, wrap{hash: true})
	if sniffOne(plain) != parse.FormatUnknown {
		return true
	}
	return looksLikeCSV(plain) && len(commandFields(head[:len(head)-len(body)])) > 0
}

// sniffHashed is sniffPlain of head without the "#" that starts its
// lines (wrap.hash): nvidia-smi's output pasted into a script as comments
// ("# +-----...", "# | NVIDIA-SMI 552.22 ..." above a Python script's
// code), or under the command that printed it.
func sniffHashed(head []byte) (parse.Format, wrap, []byte) {
	if bytes.IndexByte(head, '#') < 0 {
		return parse.FormatUnknown, wrap{}, nil
	}
	w := wrap{hash: true}
	plain, changed := unwrapHead(head, w)
	if !changed {
		return parse.FormatUnknown, wrap{}, nil
	}
	if f := sniffPlain(plain); f != parse.FormatUnknown {
		return f, w, plain
	}
	return parse.FormatUnknown, wrap{}, nil
}

// sniffPlain is Sniff of head as it is.
func sniffPlain(head []byte) parse.Format {
	for range 8 {
		body := skipPrompts(head)
		seg := untilPrompt(body)
		f := sniffOne(seg)
		if f == parse.FormatUnknown && looksLikeCSV(seg) {
			if fields := commandFields(head[:len(head)-len(body)]); len(fields) > 0 {
				f = FormatForFields(fields)
			}
		}
		if f != parse.FormatUnknown || len(seg) == len(body) {
			return f
		}
		head = body[len(seg):]
	}
	return parse.FormatUnknown
}

// queryFieldsRe matches the fields of a query in an nvidia-smi command
// line: "--query-gpu=index,memory.used" or "--query-compute-apps=pid,...",
// with "=" or a space, quoted (then with spaces after the commas too) or
// not.
var queryFieldsRe = lazyre.New(`--query-(?:gpu|compute-apps)[= ](?:"([^"\n]{0,1000})"|'([^'\n]{0,1000})'|([a-z][a-z0-9_.,]*))`)

// commandFields returns the fields that the last nvidia-smi query command
// in cmds (the prompt and command lines before an output) asks for, nil
// when none does: a paste of "$ nvidia-smi --query-gpu=memory.total,
// memory.free,memory.used --format=csv,noheader,nounits" and its rows
// names the rows' columns in its command, as --fields would.
func commandFields(cmds []byte) []string {
	if !bytes.Contains(cmds, []byte("--query-")) {
		return nil
	}
	all := queryFieldsRe.FindAllSubmatch(cmds, -1)
	if len(all) == 0 {
		return nil
	}
	// Quoted, the list may hold spaces ("index, memory.used"): one of
	// the three groups matched.
	m := all[len(all)-1]
	list := m[3]
	if m[1] != nil {
		list = m[1]
	} else if m[2] != nil {
		list = m[2]
	}
	var fields []string
	for _, f := range bytes.Split(list, []byte(",")) {
		if f = trimSpace(f); len(f) > 0 {
			fields = append(fields, string(f))
		}
	}
	if _, _, ok := headerFields([]byte(strings.Join(fields, ",")), false); !ok {
		if _, _, ok := headerFields([]byte(strings.Join(fields, ",")), true); !ok {
			return nil
		}
	}
	return fields
}

// sniffOne is Sniff of one output (no prompt lines).
func sniffOne(head []byte) parse.Format {
	if f := sniffFleet(head); f != parse.FormatUnknown {
		return f // before skipTaggedLines: pssh -i's "[1] ... [SUCCESS] host" is a host's header
	}
	head = skipDateLines(skipLostHandles(skipTaggedLines(skipDateLines(head))))
	first := firstLine(head)
	if len(first) == 0 {
		return parse.FormatUnknown
	}
	if x := firstLine(skipFences(head)); len(x) > 0 && x[0] == '<' && isSmiXML(head) {
		return FormatNvidiaSmiXML // nvidia-smi -q -x, in a Markdown fence maybe
	}
	if isSmiText(head) {
		return FormatNvidiaSmiText
	}
	if gpustatLineRe.Match(head) {
		return FormatGpustatText
	}
	if isPynvmlText(head) {
		// A program's log printing nvmlDeviceGetMemoryInfo's struct,
		// among lines of its own.
		return FormatPynvmlText
	}
	switch {
	case first[0] == '#':
		if bytes.HasPrefix(first, []byte("# HELP DCGM_")) || bytes.HasPrefix(first, []byte("# TYPE DCGM_")) {
			return FormatDCGMPrometheus
		}
		if bytes.HasPrefix(first, []byte("#Entity")) {
			return FormatDcgmiDmon
		}
		w := words(first[1:])
		if containsFold(w, "gpu") && (containsFold(w, "fb") || containsFold(w, "sm") || containsFold(w, "pid")) {
			if containsFold(w, "pid") {
				return FormatPmon
			}
			return FormatDmon
		}
		if hasDCGMLine(head) {
			return FormatDCGMPrometheus
		}
		if f := sniffAfterComments(head); f != parse.FormatUnknown {
			return f
		}
	case first[0] == '{' || first[0] == '[':
		return sniffJSON(head)
	case bytes.HasPrefix(first, []byte("DCGM_FI_")):
		return FormatDCGMPrometheus
	case bytes.IndexByte(first, ',') >= 0:
		return sniffCSVRows(head, first)
	default:
		if _, rest, ok := metricName(first); ok && len(rest) > 0 && hasDCGMLine(head) {
			return FormatDCGMPrometheus
		}
	}
	return parse.FormatUnknown
}

// FormatForFields is the layout of a header-less nvidia-smi CSV log with
// the given fields: --query-compute-apps when a field is per process.
func FormatForFields(fields []string) parse.Format {
	for _, f := range fields {
		switch strings.TrimSpace(f) {
		case "pid", "process_name", "used_memory", "used_gpu_memory":
			return FormatQueryApps
		}
	}
	return FormatQueryGPU
}

// isSmiText recognises nvidia-smi's output for people anywhere in head
// (a shell prompt or other text may come first): the default table's
// banner box, its Processes box or MIG devices box pasted alone (the
// part of the table a report quotes), a GPU's rows without the banner,
// or the -q report's title, or its "Attached GPUs" line with the first
// GPU's section after it.
func isSmiText(head []byte) bool {
	if smiTextIn(head) {
		return true
	}
	// Behind a log's stamps (a CI log) or Markdown quote marks, after any
	// lines of text: as read, each line without them (stripLogStamp).
	var plain []byte
	stamped := false
	for rest := head; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		t := stripLogStamp(line)
		stamped = stamped || len(t) != len(line)
		plain = append(append(plain, t...), '\n')
		rest = after
	}
	return stamped && smiTextIn(plain)
}

// smiTextIn is isSmiText on head as it is.
func smiTextIn(head []byte) bool {
	if bytes.Contains(head, []byte("| NVIDIA-SMI ")) && bytes.Contains(head, []byte("Driver Version")) &&
		(bytes.Contains(head, []byte("\n+--")) || smiIndentedBorderRe.Match(head)) {
		return true
	}
	if bytes.Contains(head, []byte("+--")) && (smiProcBoxRe.Match(head) || smiMIGBoxRe.Match(head)) {
		return true
	}
	if (bytes.Contains(head, []byte("MiB /")) || bytes.Contains(head, []byte("MB /"))) && smiGPURowsRe.Match(head) {
		return true
	}
	if !bytes.Contains(head, []byte("Attached GPUs")) {
		return false
	}
	return bytes.Contains(head, []byte("NVSMI LOG")) || qAttachedRe.Match(head)
}

// qAttachedRe matches a -q report's "Attached GPUs : 4" line and the
// first GPU's section title after it, "GPU 0000:05:00.0": a report quoted
// from there on, without its "NVSMI LOG" title, timestamp and driver
// version (nvidia-docker#617).
var qAttachedRe = lazyre.New(`(?m)^[ \t]*Attached GPUs[ \t]*:[ \t]*\d+[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]`)

var (
	// The table's border indented, as a CI log, a notebook or a Markdown
	// list quotes it ("  +-----...").
	smiIndentedBorderRe = lazyre.New(`(?m)^[ \t]+\+--`)
	// A GPU's two rows quoted without the banner (a report quotes the
	// GPU it is about): the first cell's index, name and persistence
	// mode or driver model, then the next row's "used MiB / total MiB"
	// cell: "|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |" and
	// "| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |".
	smiGPURowsRe = lazyre.New(`(?m)^[ \t]*\|[ \t]*\d{1,3}[ \t]+\S[^|\n]*?[ \t](?:On|Off|N/A|TCC|WDDM|MCDM)[ \t]*\|[^\n]*\n[ \t]*\|[^|\n]*\|[ \t]*\d{1,12}[ \t]*Mi?B[ \t]*/[ \t]*\d{1,12}[ \t]*Mi?B[ \t]*\|`)
	// The Processes box's title and column header: "| Processes: |" then
	// "|  GPU   GI   CI        PID   Type   Process name   GPU Memory |"
	// (older drivers: "|  GPU       PID   Type   Process name   Usage |").
	smiProcBoxRe = lazyre.New(`(?m)^\s*\|\s*Processes:.*\|\s*\n\s*\|\s*GPU\s.*\bPID\s+Type\s+Process name\b`)
	// The MIG devices box's title and header: "| MIG devices: |", then
	// "| GPU  GI  CI  MIG |         Memory-Usage |".
	smiMIGBoxRe = lazyre.New(`(?m)^\s*\|\s*MIG devices:.*\|\s*\n(?:.*\n){0,2}\s*\|\s*GPU\s+GI\s+CI\s+MIG\s*\|\s*Memory-Usage`)
)

// skipDateLines drops the leading blank lines and lines of date(1)'s
// output ("Thu May  2 10:00:00 UTC 2024", date -Iseconds') of head: a loop of "date;
// curl .../metrics" prints one before each output.
func skipDateLines(head []byte) []byte {
	for {
		first := firstLine(head)
		if first == nil || !maybeDateLine(first) {
			return head
		}
		if _, _, _, _, _, _, _, ok := dateFields(first); !ok {
			if _, ok := isoDate(first); !ok {
				return head
			}
		}
		i := bytes.Index(head, first) + len(first)
		head = head[i:]
	}
}

// SkipDateLines returns head without its leading blank lines and lines
// of date(1)'s output, "Thu May  2 10:00:00 UTC 2024" or date -Iseconds'
// "2026-09-17T00:00:00+08:00": what a "date; nvidia-smi ..." loop prints
// before its first output.
func SkipDateLines(head []byte) []byte { return skipDateLines(head) }

// skipTaggedLines drops the leading lines of head that another program
// printed behind a bracketed tag: HAMi-core, preloaded into every process
// of a HAMi pod, nvidia-smi included, prints "[HAMI-core
// Msg(28:...:libvgpu.c:836)]: Initializing....." when it loads, before
// nvidia-smi's header. The CSV decoder skips such lines wherever they are
// (isTaggedMessage); the layout is the output's after them. A tag starts
// with a letter, so that a JSON array ("[{", "[1,", "[\"") is never one.
func skipTaggedLines(head []byte) []byte {
	for range 16 {
		first := firstLine(head)
		if len(first) < 2 || first[0] != '[' || !isLetter(first[1]) || !isTaggedMessage(first) {
			return head
		}
		head = head[bytes.Index(head, first)+len(first):]
	}
	return head
}

// skipLostHandles drops the leading lines of head that are nvidia-smi's
// "Unable to determine the device handle for GPU <bus id>: GPU is lost"
// (lostHandleRe): a logger started after a GPU fell off the bus, with its
// standard error in the log (2>&1), prints it once before the header and
// rows of the GPUs it still reaches. The decoders skip and warn of such
// lines wherever they are (lostHandle); the layout is the output's after
// them.
func skipLostHandles(head []byte) []byte {
	for range 16 {
		first := firstLine(head)
		if !bytes.Contains(first, []byte("device handle")) || !lostHandleRe.Re().Match(first) {
			return head
		}
		head = head[bytes.Index(head, first)+len(first):]
	}
	return head
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func firstLine(b []byte) []byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b
		if i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if line = trimSpace(line); len(line) > 0 {
			return line
		}
	}
	return nil
}

func looksLikeCSV(head []byte) bool {
	// A loop of "date; nvidia-smi --query-gpu=... --format=csv,noheader"
	// prints date's line before each output's rows.
	return bytes.IndexByte(firstLine(skipDateLines(head)), ',') >= 0
}

func containsFold(w []string, s string) bool {
	for _, x := range w {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func hasDCGMLine(head []byte) bool {
	return bytes.Contains(head, []byte("\nDCGM_FI_DEV_FB_")) || bytes.Contains(head, []byte("\n# TYPE DCGM_FI_DEV_FB_"))
}

func sniffCSV(first []byte) parse.Format {
	if first[0] >= 'a' && first[0] <= 'z' {
		names, _, ok := headerFields(first, false)
		if !ok {
			return parse.FormatUnknown
		}
		return FormatForFields(names)
	}
	f := bytes.Split(first, []byte(","))
	for i := range f {
		f[i] = trimSpace(f[i])
	}
	cache := civilCache{loc: time.UTC}
	if len(f) < 3 {
		return parse.FormatUnknown
	}
	if _, ok := parseTimestamp(f[0], &cache); !ok {
		return parse.FormatUnknown
	}
	for _, v := range f[1:] {
		if !csvValue(v) {
			return parse.FormatUnknown // a log line after its date: "2024-04-08 13:02:16,577 - INFO - ..."
		}
	}
	if (bytes.HasPrefix(f[1], []byte("GPU-")) || bytes.HasPrefix(f[1], []byte("MIG-"))) && len(f) <= 6 {
		if _, ok := parseInt(f[2]); ok {
			return FormatQueryApps
		}
	}
	return FormatQueryGPU
}

// sniffAfterComments recognises an nvidia-smi CSV log after "#" comment
// lines a script wrote before it (echo "# GPU memory log" > gpu.log, then
// nvidia-smi --query-gpu=... >> gpu.log): the CSV decoder skips them.
func sniffAfterComments(head []byte) parse.Format {
	for range 16 {
		first := firstLine(head)
		if len(first) == 0 || first[0] != '#' {
			break
		}
		head = head[bytes.Index(head, first)+len(first):]
	}
	first := firstLine(head)
	if len(first) == 0 || first[0] == '#' || bytes.IndexByte(first, ',') < 0 {
		return parse.FormatUnknown
	}
	return sniffCSVRows(head, first)
}

// sniffCSVRows is sniffCSV of head's first line, first: a header of
// nvidia-smi field names decides alone; a header-less row counts only
// when the rows of head after it agree (LooksLikeCSVRows), so that a log
// whose first line has a date and commas is not taken for samples.
func sniffCSVRows(head, first []byte) parse.Format {
	f := sniffCSV(first)
	if f == parse.FormatUnknown || (first[0] >= 'a' && first[0] <= 'z') {
		return f
	}
	if !LooksLikeCSVRows(head, 3) {
		return parse.FormatUnknown
	}
	return f
}

// sniffJSON looks at the keys of the first JSON document.
func sniffJSON(head []byte) parse.Format {
	var keys map[string]json.RawMessage
	if doc := firstDoc(head); doc != nil {
		if doc[0] == '[' {
			var els []json.RawMessage
			if json.Unmarshal(doc, &els) != nil || len(els) == 0 {
				return parse.FormatUnknown
			}
			doc = els[0]
		}
		if json.Unmarshal(doc, &keys) != nil {
			return parse.FormatUnknown
		}
	} else {
		// The first document is longer than head: go by the keys in sight.
		keys = map[string]json.RawMessage{}
		for _, k := range []string{"gpus", "query_time", "ts", "timestamp", "time", "used", "total", "free", "gpu", "index", "uuid"} {
			if bytes.Contains(head, []byte(`"`+k+`"`)) {
				keys[k] = nil
			}
		}
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := keys[n]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("gpus") && has("query_time"):
		return FormatGpustatJSON
	case has("ts", "timestamp", "time") && has("used", "total", "free") && has("gpu", "index", "uuid"):
		return FormatPynvmlJSONL
	}
	return parse.FormatUnknown
}

// firstDoc returns the first complete JSON document of head, or nil.
func firstDoc(head []byte) []byte {
	d := jsonDecoder{}
	i := 0
	for i < len(head) && (isSpace(head[i]) || head[i] == '\n') {
		i++
	}
	j, done, err := d.scan(head[i:])
	if err != nil || !done {
		return nil
	}
	return head[i : i+j]
}

// stripANSI appends b to dst without its terminal escape sequences: CSI
// ("\x1b[1;32m" colours, "\x1b[H\x1b[2J" a screen cleared by watch, as a
// "script" capture or "gpustat --force-color" leaves them), OSC (a window
// title, ended by BEL or ESC \\), character set selections ("\x1b(B") and
// other two-byte escapes. A sequence cut at the end of b is dropped.
func stripANSI(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c != 0x1b {
			j := bytes.IndexByte(b[i:], 0x1b)
			if j < 0 {
				return append(dst, b[i:]...)
			}
			dst = append(dst, b[i:i+j]...)
			i += j
			continue
		}
		i++
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '[': // CSI: parameters and intermediates, then a final byte
			i++
			for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
				i++
			}
			i++
		case ']': // OSC: to BEL or ST
			i++
			for i < len(b) && b[i] != 0x07 && !(b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\') {
				i++
			}
			if i < len(b) && b[i] == 0x1b {
				i++
			}
			i++
		case '(', ')', '*', '+': // character set: one more byte
			i += 2
		default:
			i++
		}
	}
	return dst
}

// skipFences drops the Markdown code fences ("```", "```xml", "~~~") that
// open head, as a paste in an issue keeps them.
func skipFences(head []byte) []byte {
	for {
		line, rest, _ := bytes.Cut(head, []byte("\n"))
		t := trimSpace(line)
		if !bytes.HasPrefix(t, []byte("```")) && !bytes.HasPrefix(t, []byte("~~~")) {
			return head
		}
		head = rest
	}
}

// smiXMLTags are element tags only nvidia-smi -q -x writes: its root, and
// for an excerpt without it (a paste of a <gpu> section, or one cut at
// its start) a GPU's section or its frame buffer's.
var smiXMLTags = [][]byte{[]byte("<nvidia_smi_log"), []byte("<gpu id=\""), []byte("<fb_memory_usage>"), []byte("</fb_memory_usage>")}

// isSmiXML reports whether head, a document starting with a tag, holds
// one of smiXMLTags.
func isSmiXML(head []byte) bool {
	for _, t := range smiXMLTags {
		if bytes.Contains(head, t) {
			return true
		}
	}
	return false
}

// qExcerptRe matches the frame buffer section of an nvidia-smi -q report:
// its title, then its Total (and Reserved, Used) lines, each "Name : N MiB".
var qExcerptRe = lazyre.New(`(?m)^[ \t]*FB Memory Usage[ \t]*\r?\n[ \t]*Total[ \t]*:[ \t]*\d+[ \t]*MiB`)

// qKVRe matches a line of nvidia-smi -q's text: indented, a key, the
// spaces that align the colons, ": " and the value ("        Used
// : 19147 MiB"; "            Name" ends a process's entry cut short).
var qKVRe = lazyre.New(`^[ \t]{4,}([A-Z][A-Za-z0-9 ./()_-]*?)[ \t]{2,}:(?:[ \t]+(\S.*?))?[ \t]*\r?$`)

// qGPULineRe matches -q's GPU line, "GPU 00000000:61:00.0".
var qGPULineRe = lazyre.New(`(?m)^[ \t]*GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]`)

// QTextExcerpt says what head (an input no layout claims) is when it is
// part of an nvidia-smi -q report cut before its "GPU 00000000:..." line:
// at least three of -q's "Key : value" lines, one of them a used-memory
// line ("Used : 19147 MiB", "Used GPU Memory : ...") or a "Process ID"
// line, and no GPU line. It quotes the first used-memory line, or else
// the first "Process ID" line; line is that line's (1-based). ok is false
// for other text: aligned "Key : value" lines alone are any program's (a
// training script's "    Batch size     : 32" config), not -q's. Such an
// excerpt is not read: which GPU its figures are of is not in it.
func QTextExcerpt(head []byte) (line int, msg string, ok bool) {
	if qGPULineRe.Match(head) {
		return 0, "", false
	}
	var kv, fbTitle, quoteLine, quoteRank, n int
	var quote string
	for l := range bytes.Lines(head) {
		n++
		if n > 2000 {
			break
		}
		t := bytes.TrimSpace(l)
		if string(t) == "FB Memory Usage" && quoteRank < 3 {
			fbTitle = n
		}
		m := qKVRe.FindSubmatch(bytes.TrimRight(l, "\r\n"))
		if m == nil {
			continue
		}
		kv++
		key, val := string(m[1]), string(m[2])
		rank := 1
		switch {
		case (key == "Used" || key == "Used GPU Memory") && strings.HasSuffix(val, "MiB"):
			rank = 3
		case key == "Process ID" && val != "":
			rank = 2
		}
		if rank > quoteRank {
			quoteRank, quoteLine, quote = rank, n, key+" : "+val
		}
	}
	if kv < 3 || quoteRank < 2 {
		return 0, "", false
	}
	noFB := ""
	if quoteRank == 3 && quote[:4] == "Used" && !strings.HasPrefix(quote, "Used GPU") && (fbTitle == 0 || fbTitle > quoteLine) {
		noFB = ", and before the \"FB Memory Usage\" title, which says which memory it is"
	}
	return quoteLine, fmt.Sprintf("part of an nvidia-smi -q report (%q) cut before its \"GPU 00000000:...\" line, which says which GPU its figures are of%s: not read; give the report from its GPU line on (nvidia-smi -q, or nvidia-smi -q -d MEMORY for the memory alone)", quote, noFB), true
}

// notMineHint says what a log that is in no layout (head, its first
// bytes) lacks, when it shows: an nvidia-smi -q excerpt without the
// report's header and GPU line ("GPU 00000000:01:00.0"), as an issue
// quotes the section it is about; a comma-separated log with neither a
// header nor a timestamp first, whose fields --fields names (unless
// given: fields). "" when it shows neither.
func notMineHint(head []byte, fields bool) string {
	plain, _ := unwrapHead(head, wrapOf(head))
	switch {
	case qExcerptRe.Match(plain):
		return ": it holds an nvidia-smi -q report's \"FB Memory Usage\" section without the report's header (\"Attached GPUs\") and the \"GPU 00000000:...\" line that says which GPU it is: give the report from its GPU line on (nvidia-smi -q -d MEMORY)"
	case !fields && looksLikeCSV(skipPrompts(plain)):
		return " (a header-less CSV log not starting with a timestamp needs --fields)"
	}
	return ""
}

// afterLines returns head after its first n lines.
func afterLines(head []byte, n int) []byte {
	for ; n > 0 && len(head) > 0; n-- {
		_, head, _ = bytes.Cut(head, []byte("\n"))
	}
	return head
}

// xmlElemRe matches a line of nvidia-smi -q -x's XML that is one element,
// or its start or end tag: "<pid>11844</pid>", "<process_info>",
// "</process_info>".
var xmlElemRe = lazyre.New(`^[ \t]*</?([a-z][a-z0-9_]*)>(?:[^<\n]*</([a-z][a-z0-9_]*)>)?[ \t]*\r?$`)

// XMLExcerpt says what head (an input no layout claims) is when it is
// part of nvidia-smi -q -x's XML without any element that says which GPU
// it is of or holds its memory (<nvidia_smi_log>, <gpu id=...>,
// <fb_memory_usage>: with one, it is read): an issue's excerpt of the
// <process_info> entries of a <processes> list. At least three of its
// first lines of text are elements, one of them an element only
// nvidia-smi's process entries and GPU sections have (<process_info>,
// <used_memory>, <product_name>, <gpu_instance_id>). line is the first
// such element's (1-based). ok is false for other text. Such an excerpt
// is not read: its GPU, and the GPU's memory, are not in it.
func XMLExcerpt(head []byte) (line int, msg string, ok bool) {
	if isSmiXML(head) {
		return 0, "", false
	}
	var elems, n, na, used int
	for l := range bytes.Lines(head) {
		n++
		if n > 2000 {
			break
		}
		t := bytes.TrimSpace(l)
		if len(t) == 0 || isFence(t) {
			continue
		}
		m := xmlElemRe.FindSubmatch(bytes.TrimRight(l, "\r\n"))
		if m == nil {
			if elems == 0 && t[0] != '<' {
				return 0, "", false // text first: not an excerpt of the XML
			}
			continue
		}
		elems++
		switch string(m[1]) {
		case "process_info", "used_memory", "product_name", "gpu_instance_id", "compute_instance_id":
			if line == 0 {
				line = n
			}
		}
		if string(m[1]) == "used_memory" && m[2] != nil {
			used++
			if bytes.Contains(t, []byte(">N/A<")) {
				na++
			}
		}
	}
	if elems < 3 || line == 0 {
		return 0, "", false
	}
	why := ""
	if used > 0 && na == used {
		why = "; and each of its processes' <used_memory> is N/A (Windows' WDDM driver model, some vGPU and container setups report no per-process memory)"
	}
	return line, "part of nvidia-smi -q -x's XML without the <gpu> element it is of or that GPU's <fb_memory_usage>: which GPU, and its memory, are not in it" + why + ": not read; give the whole document (nvidia-smi -q -x), or samples over time (nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 1)", true
}
