package pytorchtext

import (
	"bytes"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"strings"
	"unicode/utf8"
)

// SniffSummary reports whether head, the first bytes of an input, is a
// torch.cuda.memory_summary() table: its title within the first lines.
func SniffSummary(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) > 1024 {
		t = t[:1024]
	}
	if bytes.HasPrefix(t, []byte("|==")) && bytes.Contains(t, []byte(summaryBanner)) {
		return true
	}
	// A table behind a log prefix, or wrapped at a width: its title
	// between borders within the first lines (the reader says what it
	// could not read); a log that holds an OOM message too stays one.
	i := bytes.Index(t, []byte(summaryTitle))
	if i >= 0 && bytes.Contains(t[:i], []byte("|===")) && !SniffOOM(head) {
		return true
	}
	// A table copied from a rendered page: the title alone on its line,
	// no borders, its header row a few lines below; or one whose ruler
	// lines were removed: the title in its cell, the header row's cells a
	// few lines below.
	if i < 0 && summaryHeadlessSniffRe.Match(t) && !SniffOOM(head) {
		// A table pasted without its title: a metric's row and its
		// "from large pool" row under it.
		return true
	}
	return i >= 0 && (summaryBareSniffRe.Match(t) || summaryNoRulersSniffRe.Match(t)) && !SniffOOM(head)
}

// summaryHeadlessSniffRe matches a row of one of memory_summary()'s pooled
// metrics and the "from large pool" row under it, between borders: a table
// whose title and header were cut off.
var summaryHeadlessSniffRe = lazyre.New(`(?m)^[^|\n]*\|[ \t]*(?:Allocated memory|Active memory|Requested memory|GPU reserved memory|Non-releasable memory|Allocations|Active allocs|GPU reserved segments|Non-releasable allocs)[ \t]*\|[^\n]*\|[ \t\r]*\n[^|\n]*\|[ \t]*from large pool[ \t]*\|`)

// summaryNoRulersSniffRe matches the title and header of a table without
// its "|===|" and "|---|" lines (see summary), after any log prefix.
var summaryNoRulersSniffRe = lazyre.New(`(?m)\|[ \t]*PyTorch CUDA memory summary, device ID \d+[ \t]*\|[ \t\r]*\n(?:[^\n]*\n){0,3}?[^\n]*\|[ \t]*Metric[ \t]*\|[ \t]*Cur Usage[ \t]*\|[ \t]*Peak Usage[ \t]*\|[ \t]*Tot Alloc[ \t]*\|[ \t]*Tot Freed[ \t]*\|`)

// summaryBareSniffRe matches the title and header of a table without
// borders (see summary).
var summaryBareSniffRe = lazyre.New(`(?m)^[ \t]*PyTorch CUDA memory summary, device ID \d+[ \t\r]*\n(?:[^\n]*\n){0,3}?[ \t]*Metric[ \t]+Cur Usage[ \t]+Peak Usage[ \t]+Tot Alloc[ \t]+Tot Freed[ \t\r]*$`)

// SniffStats reports whether head is the start of torch.cuda.memory_stats()
// saved as JSON: an object or list whose text names memory_stats() keys.
func SniffStats(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	if SniffNotebook(head) {
		// A notebook that printed memory_stats() in an output: its
		// outputs are read as text (see notebook.go).
		return false
	}
	// "active.all." and "active_bytes.all." come first in the sorted
	// keys: a file cut before "allocated_bytes" is still known by them.
	for _, k := range [][]byte{[]byte(`"allocated_bytes.all.`), []byte(`"reserved_bytes.all.`), []byte(`"num_alloc_retries"`), []byte(`"inactive_split_bytes`),
		[]byte(`"active.all.`), []byte(`"active_bytes.all.`)} {
		if bytes.Contains(head, k) {
			return true
		}
	}
	// memory_stats_as_nested_dict()
	return bytes.Contains(head, []byte(`"allocated_bytes"`)) && bytes.Contains(head, []byte(`"large_pool"`))
}

// SniffOOM reports whether head is text that holds a CUDA out-of-memory
// message (a log or a traceback), or a record of host memory running
// out that ended a task (the OOM killer's, hostKillRe; Ray's memory
// monitor's), which the reader warns of. An out-of-memory message further into a
// long log than head reaches is found only by reading it with NewReader;
// LooksLikeText tells whether that is worth trying.
func SniffOOM(head []byte) bool {
	if !LooksLikeText(head) {
		return false
	}
	// A bare "OutOfMemoryError" may be Java's: a message has one of
	// oomPhrases, and reads as one (classify), not as prose naming it.
	text := string(head)
	if hostKillRe.Re().MatchString(text) || strings.Contains(text, rayHostOOMPhrases[1]) {
		// The host's OOM killer (see seeHostKill), Ray's memory monitor
		// (seeRayOOM): no GPU OOM, but the reader's warning says what
		// ended the task.
		return true
	}
	for from := 0; ; {
		i := findOOM(text, from)
		if i < 0 {
			return false
		}
		start := strings.LastIndexByte(text[:i], '\n') + 1
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		line := text[start:end]
		switch classify(line, i-start) {
		case message:
			// A record logged at INFO or WARNING level too: the reader
			// says it is not an OOM.
			return true
		case weakMessage:
			if m, _ := ParseMessage(line, i-start); weakKept(m) {
				return true
			}
		}
		from = i + 1
	}
}

// LooksLikeText reports whether head is text: but for a character cut at
// its end, valid UTF-8 without control characters other than text's own
// (Latin-1 bytes and stray controls are tolerated in small numbers); NUL
// bytes are padding and do not count, but head must hold something else.
func LooksLikeText(head []byte) bool {
	// NUL bytes are padding (logrotate's copytruncate hole, a file
	// preallocated then written): skipped. Other control characters than
	// text's own (tab, line endings, backspace, escape) count as bad.
	bad, nul := 0, 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		switch {
		case r == 0:
			nul++
		case r == utf8.RuneError && n <= 1:
			if len(head)-i < utf8.UTFMax {
				i = len(head)
				continue
			}
			bad++
		case r < 0x20 && !strings.ContainsRune("\t\n\v\f\r\b\x1b", r):
			bad++
		}
		i += max(n, 1)
	}
	return nul < len(head) && bad*100 <= len(head)-nul
}
