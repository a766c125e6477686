package pytorchtext

import (
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A torch.cuda.memory_stats() dict printed in a log: print(stats) or
// logger.info(stats) writes Python's repr, an OrderedDict
// ("OrderedDict([('active.all.allocated', 0), ...])" before Python 3.12,
// "OrderedDict({'active.all.allocated': 0, ...})" since) or a plain dict
// ("{'active.all.allocated': 0, ...}"), on one line or pretty-printed
// (pprint: a pair per line); json.dumps writes JSON, one line or indented.
// Each is read as a set of stats (SourceMemoryStats) at its line, its keys
// on theirs; a dict cut before its end is a partial set (PartialKey).

// maxStatsTextLines and maxStatsTextBytes bound a dict read from text (a
// pretty-printed memory_stats() is about 120 lines, 5 KB).
const (
	maxStatsTextLines = 4096
	maxStatsTextBytes = 1 << 20
)

// statsText is a memory_stats() dict being read from a log.
type statsText struct {
	start  int64  // the line it starts on
	prefix string // the text before it on that line (a log prefix, "step 3: ")
	text   strings.Builder
	lines  []int64 // the input line of each line of text
	starts []int   // where each of them starts in text
	// wraps counts the lines joined to the one before with no line end:
	// a dict hard-wrapped at a width, broken inside a key or a number
	// (see wrapContinues).
	wraps  int
	depth  int  // brackets open, outside strings
	quote  byte // the quote of the string open, 0 outside one
	escape bool
	// bound is the bound the dict went on past, unread (see
	// PartialBoundKey): bytes if positive, lines if negative; 0 when it
	// ended or was cut within them.
	bound int
}

// statsOpenings are what a printed memory_stats() dict starts with.
var statsOpenings = []string{"OrderedDict(", "{"}

// statsDictAt returns where a memory_stats() dict printed on line starts:
// an opening (statsOpenings) followed by a quoted key memory_stats()
// writes; -1 when none. With the key not on the line (the opening ends
// it: pretty-printed), open says so and at is the opening's.
func statsDictAt(line string) (at int, open bool) {
	for _, o := range statsOpenings {
		for from := 0; from < len(line); {
			i := strings.Index(line[from:], o)
			if i < 0 {
				break
			}
			i += from
			rest := strings.TrimLeft(line[i+len(o):], " \t[({")
			if rest == "" {
				return i, true
			}
			if statsKeyFirst(rest) {
				return i, false
			}
			from = i + 1
		}
	}
	return -1, false
}

// statsKeyFirst reports whether s starts with a quoted key that only
// memory_stats() writes: a pool statistic ("active.all.allocated") or
// one of its counters (statsCounters). A program's own dict
// ({'num_workers': 4}) is not one.
func statsKeyFirst(s string) bool {
	if s == "" || s[0] != '"' && s[0] != '\'' {
		return false
	}
	j := strings.IndexByte(s[1:], s[0])
	return j > 0 && (statsPoolKeyRe.MatchString(s[1:1+j]) || statsCounters[s[1:1+j]])
}

// statsPoolKeyRe matches memory_stats()'s pool statistics.
var statsPoolKeyRe = lazyre.New(`^[a-z_]+\.(all|large_pool|small_pool)\.(current|peak|allocated|freed)$`)

// statsCounters are memory_stats()'s keys besides its pool statistics.
var statsCounters = map[string]bool{"num_alloc_retries": true, "num_ooms": true, "num_sync_all_streams": true,
	"num_device_alloc": true, "num_device_free": true, "max_split_size": true}

// isStatsDict reports whether a dict read from text is memory_stats()'s:
// it holds a pool statistic, or both of its OOM counters.
func isStatsDict(m map[string]any) bool {
	for k := range m {
		if statsPoolKeyRe.MatchString(k) {
			return true
		}
	}
	_, ooms := m["num_ooms"]
	_, retries := m["num_alloc_retries"]
	return ooms && retries
}

// startStatsText starts reading a dict on line, or on the line after an
// opening that ended the line before (r.statsOpen); it reports whether
// line is the dict's.
func (r *Reader) startStatsText(line string) bool {
	open := r.statsOpen
	r.statsOpen = nil
	if open != nil && r.line == open.start+1 {
		rest := line
		if open.prefix != "" && strings.HasPrefix(line, open.prefix) {
			rest = line[len(open.prefix):]
		}
		if statsKeyFirst(strings.TrimLeft(rest, " \t[({")) {
			st := open
			st.feed(rest, r.line)
			r.stats = st
			if st.depth <= 0 {
				r.endStatsText("")
			}
			return true
		}
	}
	if strings.IndexByte(line, '{') < 0 && strings.IndexByte(line, '(') < 0 {
		// (strings.ContainsAny makes its set at each call)
		return r.startStatsTail(line) // a dict's items, "'num_ooms': 0, ..."
	}
	at, opening := statsDictAt(line)
	if at < 0 {
		return r.startStatsTail(line)
	}
	st := &statsText{start: r.line, prefix: line[:at]}
	st.feed(line[at:], r.line)
	if opening {
		// The keys come on the next line: the line is read as text too.
		r.statsOpen = st
		return false
	}
	r.stats = st
	if st.depth <= 0 {
		r.endStatsText("")
	}
	return true
}

// statsTailPairRe matches an item of a memory_stats() dict as repr or
// json.dumps prints it, a tuple of an OrderedDict ("('num_ooms', 0)") or
// a key and its value ("'num_ooms': 0", "\"num_ooms\": 0"); group 1 is
// the tuple's opening parenthesis.
var statsTailPairRe = lazyre.New(`(\(\s*)?['"](?:[a-z_]+\.(?:all|large_pool|small_pool)\.(?:current|peak|allocated|freed)|num_alloc_retries|num_ooms|num_sync_all_streams|num_device_alloc|num_device_free|max_split_size)['"]\s*[,:]\s*-?\d+`)

// minStatsTailPairs is how many of memory_stats()'s items a line that
// starts inside a dict must hold to be read as its rest.
const minStatsTailPairs = 3

// startStatsTail starts reading a memory_stats() dict whose head was cut
// off (a paste that starts inside it, a log line hard-wrapped before
// it): a line with no opening that holds at least minStatsTailPairs of
// its items is read from its first whole item on, as if the dict opened
// there (OrderedDict([ before a tuple, { before a key), with a warning
// that the keys before it are missing. It reports whether line is read
// so.
func (r *Reader) startStatsTail(line string) bool {
	// Words every item has, before the expression: it runs on every
	// line of a log that holds them.
	if strings.IndexByte(line, '\'') < 0 && strings.IndexByte(line, '"') < 0 || !strings.Contains(line, ".all.") && !strings.Contains(line, "_pool.") && !strings.Contains(line, "num_ooms") && !strings.Contains(line, "num_alloc_retries") {
		return false
	}
	ms := statsTailPairRe.Re().FindAllStringSubmatchIndex(line, minStatsTailPairs)
	if len(ms) < minStatsTailPairs {
		return false
	}
	at, opening := ms[0][0], "{"
	if strings.ContainsAny(line[:at], "{[") {
		// An opening before the items that statsDictAt did not take
		// (a program's own dict, the items among its keys): not a
		// dict cut at its head.
		return false
	}
	if ms[0][2] >= 0 {
		opening = "OrderedDict(["
	}
	st := &statsText{start: r.line}
	st.feed(opening+line[at:], r.line)
	r.stats = st
	cut := strings.TrimSpace(line[:at])
	if cut == "" {
		cut = "(nothing)"
	}
	r.meta.Warnings.Linef(int(r.line), "line %d starts inside a torch.cuda.memory_stats() dict (its head was cut off; before its first whole item: %q): its keys from there on are read, those before are missing", r.line, clip(cut))
	if st.depth <= 0 {
		r.endStatsText("")
	}
	return true
}

// feed adds one line of the dict's text, counting its brackets; joined,
// it goes on the line before it with no line end between them (a hard
// wrap inside a key or a number).
func (st *statsText) feed(s string, line int64) { st.feedJoined(s, line, false) }

func (st *statsText) feedJoined(s string, line int64, joined bool) {
	if st.text.Len() > 0 && !joined {
		st.text.WriteByte('\n')
	}
	if joined {
		st.wraps++
	}
	st.lines = append(st.lines, line)
	st.starts = append(st.starts, st.text.Len())
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case st.quote != 0:
			switch {
			case st.escape:
				st.escape = false
			case c == '\\':
				st.escape = true
			case c == st.quote:
				st.quote = 0
			}
		case c == '"' || c == '\'':
			st.quote = c
		case c == '{' || c == '[' || c == '(':
			st.depth++
		case c == '}' || c == ']' || c == ')':
			st.depth--
			if st.depth == 0 {
				st.text.WriteString(s[:i+1])
				return
			}
		}
	}
	st.text.WriteString(s)
}

// addStatsText reads line as the next of the dict being read; it reports
// whether the line was the dict's (else the dict was cut before it, and
// the line is read as text).
func (r *Reader) addStatsText(line string) bool {
	st := r.stats
	rest := line
	if st.prefix != "" {
		if n := samePrefix(line, st.prefix); n >= 0 {
			rest = line[n:]
		}
	}
	joined := st.wrapContinues(line)
	if joined {
		rest = line
	}
	t := strings.TrimLeft(rest, " \t")
	if !joined && (t == "" || !strings.ContainsAny(t[:1], "\"'()[]{}-0123456789,:")) {
		r.endStatsText(strings.TrimSpace(line))
		return false
	}
	switch {
	case len(st.lines) >= maxStatsTextLines:
		st.bound = -maxStatsTextLines
	case st.text.Len()+len(rest) > maxStatsTextBytes:
		st.bound = maxStatsTextBytes
	}
	if st.bound != 0 {
		// The dict goes on past what is read of one: it is read as far
		// as the bound, and this line, the dict's, is not read as text.
		r.endStatsText("")
		return true
	}
	st.feedJoined(rest, r.line, joined)
	if st.depth <= 0 {
		r.endStatsText("")
	}
	return true
}

// wrapContinues reports whether line goes on from the dict's text with
// no line end between them: the text was hard-wrapped at a width (a
// terminal's, a log viewer's 1000 columns) inside a token, which a
// printed dict never breaks (repr writes one line, pprint and json.dumps
// break only after a comma or a bracket). So a line that ended inside a
// quoted key is wrapped when this one closes the key (the rest of a
// key's word and its quote: "d', 782952858624)"), and one that ended in
// a digit when this one starts with one: joined with a line end they
// would read as a key that stops at the wrap, or as two numbers.
func (st *statsText) wrapContinues(line string) bool {
	if st.text.Len() == 0 || line == "" {
		return false
	}
	if st.quote != 0 {
		if st.escape {
			return false
		}
		j := strings.IndexByte(line, st.quote)
		if j < 0 {
			return false
		}
		for i := 0; i < j; i++ {
			if c := line[i]; !(c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
		after := strings.TrimLeft(line[j+1:], " \t")
		return after == "" || strings.ContainsAny(after[:1], ",:)")
	}
	text := st.text.String()
	last := text[len(text)-1]
	return last >= '0' && last <= '9' && line[0] >= '0' && line[0] <= '9'
}

// endStatsText reads the dict whose text is whole, or was cut before
// the current line (cut is that line's text; at the end of the input,
// "").
func (r *Reader) endStatsText(cut string) {
	st := r.stats
	r.stats = nil
	whole := st.depth <= 0
	p := &pyParser{s: st.text.String(), lines: st.lines, starts: st.starts, keyLines: map[string]int{}}
	root, err := p.value("")
	if err == nil && !whole {
		err = errCutValue
	}
	sets := splitSets(root)
	for _, ss := range sets {
		if !isStatsDict(ss.v) {
			// A dict that starts with a key memory_stats() writes but
			// holds none of its statistics: a program's own.
			return
		}
	}
	if sets == nil {
		r.meta.Warnings.Linef(int(st.start), "a torch.cuda.memory_stats() dict that could not be read (%v); nothing was read from it", err)
		return
	}
	set := int32(r.meta.Sets)
	// A launcher's mark before the dict ("[rank1]: ", a Ray or vLLM
	// worker's label, srun --label's task number where the text's lines
	// carry it) names its process as a summary's prefix does; the
	// program's own words there ("step 3: ") name none.
	mark := processMark(st.prefix)
	if mark == "" {
		mark = r.srunMark(st.prefix) // srun --label's "0: "
	}
	for k := range sets {
		r.labelSet(set+int32(k), mark)
	}
	n, _ := r.addStatsSets(sets, p.keyLines, int(st.start), false)
	for k := int32(r.meta.Sets); k < set+int32(len(sets)); k++ {
		delete(r.setProcess, k) // numbers of sets not kept
	}
	if n == 0 {
		return
	}
	for _, ss := range sets {
		if _, ok := ss.v["allocated_bytes.all.current"]; ok {
			continue
		}
		if _, ok := ss.v["reserved_bytes.all.current"]; ok {
			continue
		}
		if _, nested := ss.v["allocated_bytes"]; nested {
			continue
		}
		r.meta.Warnings.Linef(int(st.start), "a torch.cuda.memory_stats() dict (from line %d) without allocated_bytes.all.current or reserved_bytes.all.current: only %d of its keys were printed (a paste shortened by hand?), so its memory figures are not known", st.start, len(ss.v))
		break
	}
	if st.wraps > 0 {
		r.meta.Warnings.Linef(int(st.start), "a torch.cuda.memory_stats() dict (from line %d) hard-wrapped at a width: %d of its lines broke inside a key or a number, each joined to the line after it", st.start, st.wraps)
	}
	if err != nil {
		where := r.line
		switch {
		case st.bound != 0:
			where = st.lines[len(st.lines)-1]
			r.meta.Warnings.Linef(int(st.start), "a torch.cuda.memory_stats() dict (from line %d) goes on past the %s gpuleak reads of one (a memory_stats() dict is about 5 KB): its keys up to line %d are kept, marked partial, and the rest of it was not read (it was not cut: the text goes on)", st.start, boundWords(st.bound), where)
			for s := set; s < int32(r.meta.Sets); s++ {
				r.addStat(s, st.start, SourceMemoryStats, sets[s-set].device, PartialKey, where, 0, where)
				r.addStat(s, st.start, SourceMemoryStats, sets[s-set].device, PartialBoundKey, int64(st.bound), 0, where)
			}
			return
		case errors.Is(err, errCutValue):
			r.meta.Warnings.Linef(int(st.start), "a torch.cuda.memory_stats() dict (from line %d) cut before its end, at line %d: the keys before are kept, marked partial", st.start, where)
		default:
			r.meta.Warnings.Linef(int(st.start), "a torch.cuda.memory_stats() dict (from line %d) that stops being one (%v): the keys before are kept, marked partial", st.start, err)
		}
		for s := set; s < int32(r.meta.Sets); s++ {
			r.addStat(s, st.start, SourceMemoryStats, sets[s-set].device, PartialKey, where, 0, where)
		}
	}
}

// boundWords renders a bound of statsText (bytes if positive, lines if
// negative): "1048576 bytes", "4096 lines".
func boundWords(b int) string {
	if b < 0 {
		return strconv.Itoa(-b) + " lines"
	}
	return strconv.Itoa(b) + " bytes"
}

// errCutValue says a printed value ends before it closes.
var errCutValue = errors.New("cut before its end")

// pyParser reads a Python repr of dicts, OrderedDicts, lists, tuples,
// strings and numbers, JSON among them; keyLines gets the line of each
// dict key by its path (keys from the root joined by ".", as keyLines
// of the JSON reader). A value cut short returns what was read before the
// cut with errCutValue.
type pyParser struct {
	s        string
	i        int
	depth    int // values open (maxPyDepth at most)
	lines    []int64
	starts   []int // where each of lines starts in s
	keyLines map[string]int
}

var errPySyntax = errors.New("not a Python or JSON value")

// maxPyDepth bounds the values nested in one another (memory_stats_as_nested_dict() has 3).
const maxPyDepth = 32

func (p *pyParser) skip() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// lineAt returns the input line of offset i.
func (p *pyParser) lineAt(i int) int {
	k := sort.SearchInts(p.starts, i+1) - 1
	return int(p.lines[max(k, 0)])
}

// value reads one value at p.i; path is its dict path ("" at the root,
// else the keys above it each followed by ".").
func (p *pyParser) value(path string) (any, error) {
	if p.depth++; p.depth > maxPyDepth {
		return nil, errPySyntax
	}
	defer func() { p.depth-- }()
	p.skip()
	if p.i >= len(p.s) {
		return nil, errCutValue
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		return p.dict(path, '}')
	case c == '[' || c == '(':
		p.i++
		return p.list(path, map[byte]byte{'[': ']', '(': ')'}[c])
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		j := p.i + 1
		for j < len(p.s) && strings.IndexByte("0123456789.eE+-", p.s[j]) >= 0 {
			j++
		}
		n := json.Number(p.s[p.i:j])
		p.i = j
		if _, err := n.Float64(); err != nil {
			return nil, errPySyntax
		}
		return n, nil
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		j := p.i
		for j < len(p.s) && (p.s[j] >= 'A' && p.s[j] <= 'Z' || p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] == '_' || p.s[j] == '.') {
			j++
		}
		name := p.s[p.i:j]
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == '(' {
			// OrderedDict([...]) or OrderedDict({...}): the dict.
			p.i++
			v, err := p.value(path)
			if err != nil {
				return pairsDict(v), err
			}
			p.skip()
			if p.i >= len(p.s) {
				return pairsDict(v), errCutValue
			}
			if p.s[p.i] != ')' {
				return pairsDict(v), errPySyntax
			}
			p.i++
			return pairsDict(v), nil
		}
		return name, nil // True, None, null...
	}
	return nil, errPySyntax
}

// pairsDict turns OrderedDict's list of (key, value) pairs into a dict.
func pairsDict(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	m := map[string]any{}
	for _, it := range l {
		if pair, ok := it.(pyPair); ok {
			m[pair.k] = pair.v
		}
	}
	if len(m) == 0 {
		return v
	}
	return m
}

// pyPair is a two-tuple whose first item is a string: an OrderedDict's item.
type pyPair struct {
	k string
	v any
}

func (p *pyParser) str() (string, error) {
	q := p.s[p.i]
	var b strings.Builder
	for j := p.i + 1; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '\\' && j+1 < len(p.s):
			j++
			b.WriteByte(p.s[j])
		case c == q:
			p.i = j + 1
			return b.String(), nil
		case c == '\n':
			return "", errPySyntax
		default:
			b.WriteByte(c)
		}
	}
	p.i = len(p.s)
	return "", errCutValue
}

func (p *pyParser) dict(path string, end byte) (any, error) {
	m := map[string]any{}
	for {
		p.skip()
		if p.i >= len(p.s) {
			return m, errCutValue
		}
		if p.s[p.i] == end {
			p.i++
			return m, nil
		}
		if c := p.s[p.i]; c != '"' && c != '\'' {
			return m, errPySyntax
		}
		at := p.i
		k, err := p.str()
		if err != nil {
			return m, err
		}
		p.skip()
		if p.i >= len(p.s) {
			return m, errCutValue
		}
		if p.s[p.i] != ':' {
			return m, errPySyntax
		}
		p.i++
		p.keyLines[path+k] = p.lineAt(at)
		v, err := p.value(path + k + ".")
		if err != nil {
			if v != nil && !errors.Is(err, errPySyntax) {
				m[k] = v
			}
			return m, err
		}
		m[k] = v
		p.skip()
		if p.i >= len(p.s) {
			if _, ok := v.(json.Number); ok {
				// Nothing after it: a number cut may have lost digits.
				delete(m, k)
			}
			return m, errCutValue
		}
		if p.s[p.i] == ',' {
			p.i++
		}
	}
}

// list reads a list or a tuple; a tuple of a string and a value is a
// pyPair (an OrderedDict's item), its key's line kept.
func (p *pyParser) list(path string, end byte) (any, error) {
	var l []any
	start := p.i
	for {
		p.skip()
		if p.i >= len(p.s) {
			return l, errCutValue
		}
		if p.s[p.i] == end {
			p.i++
			if end == ')' && len(l) == 2 {
				if k, ok := l[0].(string); ok {
					p.keyLines[path+k] = p.lineAt(start)
					return pyPair{k, l[1]}, nil
				}
			}
			return l, nil
		}
		v, err := p.value(path)
		if err != nil {
			return l, err
		}
		l = append(l, v)
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
}
