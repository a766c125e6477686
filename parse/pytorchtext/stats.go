package pytorchtext

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// maxStatsSize bounds a memory_stats() JSON file (one is about 5 KB).
const maxStatsSize = 16 << 20

// statsKeyRe matches the keys memory_stats() writes.
var statsKeyRe = lazyre.New(`^(num_[a-z_]+|max_split_size|[a-z_]+\.(all|large_pool|small_pool)\.(current|peak|allocated|freed)|oversize_(allocations|segments)\.(current|peak|allocated|freed))$`)

// NewStatsReader returns a Reader of torch.cuda.memory_stats() saved as
// JSON, in r; it emits stats batches only. name names the input in
// errors. Errors are *parse.Error values with the line at fault; JSON
// that holds no memory_stats() key wraps parse.ErrNotMine.
func NewStatsReader(r io.Reader, name string, opts ...Option) *Reader {
	rd := newReader(name, opts)
	rd.src = r
	return rd
}

// readStats reads the whole JSON document into stats rows.
func (r *Reader) readStats() error {
	data, err := io.ReadAll(io.LimitReader(r.src, maxStatsSize+1))
	if err != nil {
		return &parse.Error{File: r.name, Offset: -1, Msg: "read error", Err: err}
	}
	if len(data) > maxStatsSize {
		return parse.Errorf(r.name, maxStatsSize, "larger than %d MiB: not a memory_stats() file", maxStatsSize>>20)
	}
	lines := newLineIndex(data)
	r.meta.Lines = int64(lines.line(int64(len(data))))
	if bytes.Count(data, []byte("\n")) > 0 && data[len(data)-1] == '\n' {
		r.meta.Lines--
	}
	// One dump, or several one after another (JSON lines: a dump per
	// line, as a loop that appends json.dumps(torch.cuda.memory_stats())
	// writes): each is read, in order.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var sets []statsSet
	kl := map[string]int{}
	docs := 0
	for doc := 0; ; doc++ {
		start := dec.InputOffset()
		var root any
		if err := dec.Decode(&root); err != nil {
			if doc > 0 && errors.Is(err, io.EOF) {
				break
			}
			var se *json.SyntaxError
			if doc > 0 && errors.As(err, &se) {
				// Text that is not JSON after the dumps: a log that
				// starts with one (json.dumps(stats, indent=1), then a
				// traceback). The dumps are read, and the rest as a log.
				rest := data[start:]
				if _, err := r.addStatsSets(sets, kl, 0, true); err != nil {
					return err
				}
				r.readAsText(rest, lines.line(start+int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n")))), lines.line(start))
				return nil
			}
			if doc > 0 {
				return r.jsonError(fmt.Errorf("text after the JSON value that is not another memory_stats() dump (several are read one after another, JSON lines): %w", err), lines, dec)
			}
			return r.jsonError(err, lines, dec)
		}
		ds := splitSets(root)
		if ds == nil {
			if doc > 0 {
				seg := data[start:dec.InputOffset()]
				at := start + int64(len(seg)-len(bytes.TrimLeft(seg, " \t\r\n")))
				return parse.LineErrorf(r.name, lines.line(at), "value %d after the first memory_stats() dump is not one (a file of several holds one dump per line, JSON lines)", doc+1)
			}
			return &parse.Error{File: r.name, Offset: 0, Msg: "not a torch.cuda.memory_stats() dict", Err: parse.ErrNotMine}
		}
		// The keys' lines: memory_stats() writes each key once per dict,
		// so the n-th occurrence of a key's text is the n-th dict's.
		kls, dup := keyLines(data[start:dec.InputOffset()], start, lines)
		if dup.key != "" {
			// Python's json.load keeps the later value without a word;
			// memory_stats() writes each key once, so which one is the
			// dump's cannot be told.
			where := fmt.Sprintf("lines %d and %d", dup.first, dup.line)
			if dup.first == dup.line {
				where = fmt.Sprintf("both on line %d", dup.line)
			}
			return parse.LineErrorf(r.name, dup.line, "memory_stats: the key %q appears twice in one dict (%s): torch.cuda.memory_stats() writes each key once, so which value is the dump's cannot be told", dup.key, where)
		}
		for k, v := range kls {
			kl[fmt.Sprintf("#%d.", doc)+k] = v
		}
		docs++
		for _, st := range ds {
			st.path = fmt.Sprintf("#%d.", doc) + st.path
			sets = append(sets, st)
		}
	}
	if docs > 1 {
		r.meta.Warnings.Addf("memory_stats: %d dumps one after another (JSON lines): each is read as a set of its own, in order; they are not compared with one another (a series over time is no trend gpuleak fits: NVML samples are)", docs)
	}
	known, err := r.addStatsSets(sets, kl, 0, true)
	if err != nil {
		return err
	}
	if known == 0 {
		return &parse.Error{File: r.name, Offset: 0, Msg: "JSON without any torch.cuda.memory_stats() key", Err: parse.ErrNotMine}
	}
	return nil
}

// addStatsSets emits the stats rows of sets, each key on its line in kl
// (by the set's path and the key), the set's line at (0: its first
// key's), and returns how many of their keys are memory_stats() keys.
// A memory_stats() key whose value PyTorch never writes (statRange) is,
// when strict (a memory_stats() JSON file), an error at its line before
// any row is emitted; otherwise (a dict printed in a log) a warning, and
// the value is skipped.
func (r *Reader) addStatsSets(sets []statsSet, kl map[string]int, at int, strict bool) (known int, err error) {
	type flatSet struct {
		flat map[string]any
		keys []string
	}
	flats := make([]flatSet, len(sets))
	for i, st := range sets {
		flat := map[string]any{}
		flatten("", st.v, flat, 0)
		keys := make([]string, 0, len(flat))
		for k := range flat {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		flats[i] = flatSet{flat, keys}
		if !strict {
			continue
		}
		for _, k := range keys {
			if why := statRange(k, flat[k]); why != "" {
				return 0, parse.LineErrorf(r.name, kl[st.path+k], "memory_stats: %q is %v: %s", k, flat[k], why)
			}
		}
	}
	for i, st := range sets {
		flat, keys := flats[i].flat, flats[i].keys
		set := int32(r.meta.Sets)
		r.meta.Sets++
		// The set's line is its first key's (all rows carry it), or at
		// when given (a dict printed in a log: where it starts).
		setLine := at
		for _, k := range keys {
			if line := kl[st.path+k]; at == 0 && line > 0 && (setLine == 0 || line < setLine) {
				setLine = line
			}
		}
		for _, k := range keys {
			if statsKeyRe.MatchString(k) {
				known++
			}
		}
		var skipped []string
		for _, k := range keys {
			line := kl[st.path+k]
			if why := statRange(k, flat[k]); why != "" {
				r.meta.Warnings.Linef(line, "memory_stats: %q is %v: %s; the value is skipped", k, flat[k], why)
				continue
			}
			v, ok := intValue(flat[k])
			if !ok {
				skipped = append(skipped, k)
				continue
			}
			r.addStat(set, int64(setLine), SourceMemoryStats, st.device, k, v, 0, int64(line))
		}
		if len(skipped) > 0 {
			what := "values that are not whole numbers"
			if len(skipped) == 1 {
				what = "value that is not a whole number"
			}
			r.meta.Warnings.Addf("memory_stats: %d %s skipped (first: %q)", len(skipped), what, skipped[0])
		}
	}
	return known, nil
}

// maxStatBytes bounds the byte figures of the moment (current, peak) and
// max_split_size: 1 PiB, far above any device's memory (as the figures of
// an OOM message, maxSize). The cumulative allocated and freed bytes are
// not bounded so: a long run adds up to more.
const maxStatBytes = 1 << 50

// statRange says why v, the value of the memory_stats() key k, is one
// PyTorch never writes ("" when it is one it may, or k is no
// memory_stats() key, or v no whole number: those are skipped as such).
// PyTorch's statistics are int64 counters that only count up from 0
// (c10::CachingAllocator::Stat); max_split_size is -1 when unset
// (CUDAAllocatorConfig's SIZE_MAX, cast).
func statRange(k string, v any) string {
	if !statsKeyRe.MatchString(k) {
		return ""
	}
	n, ok := v.(json.Number)
	if !ok {
		return ""
	}
	f, _, err := big.ParseFloat(string(n), 10, 64, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return "" // a fraction: skipped as not a whole number
	}
	i, acc := f.Int64()
	if acc != big.Exact {
		return "beyond the 64-bit counters PyTorch keeps"
	}
	bytesOfMoment := k == "max_split_size" || (strings.Contains(k, "_bytes.") && (strings.HasSuffix(k, ".current") || strings.HasSuffix(k, ".peak")))
	switch {
	case k == "max_split_size" && i == -1:
		return ""
	case i < 0:
		return "negative, which PyTorch's counters never are (a dump edited or corrupted?)"
	case bytesOfMoment && i >= maxStatBytes:
		return fmt.Sprintf("%d TiB or more, beyond any device's memory (a dump edited or corrupted?)", maxStatBytes>>40)
	}
	return ""
}

// readAsText makes the reader read rest, the input from line first on,
// as a log (NewReader), with a warning that the memory_stats() JSON before
// it is followed by other text at line.
func (r *Reader) readAsText(rest []byte, line, first int) {
	r.src = nil
	r.br = bufio.NewReaderSize(bytes.NewReader(rest), 64<<10)
	r.line = int64(first) - 1
	r.meta.Lines = r.line
	r.meta.Warnings.Linef(line, "memory_stats() JSON followed by other text (line %d): the dump is read, and the text after it as a log", line)
}

func (r *Reader) jsonError(err error, lines lineIndex, dec *json.Decoder) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &parse.Error{File: r.name, Offset: -1, Line: lines.line(se.Offset), Msg: "JSON syntax error", Err: err}
	case errors.As(err, &te):
		return &parse.Error{File: r.name, Offset: -1, Line: lines.line(te.Offset), Msg: "malformed JSON", Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &parse.Error{File: r.name, Offset: -1, Line: len(lines) + 1, Msg: "the JSON ends early", Err: io.ErrUnexpectedEOF}
	}
	return &parse.Error{File: r.name, Offset: -1, Line: lines.line(dec.InputOffset()), Msg: "malformed JSON", Err: err}
}

type statsSet struct {
	device int
	path   string // the set's place in the document, for keyLines
	v      map[string]any
}

// splitSets recognises one memory_stats() dict, a list of them (by
// device), or a dict of them keyed by device index; nil otherwise.
func splitSets(root any) []statsSet {
	switch v := root.(type) {
	case map[string]any:
		if len(v) == 0 {
			return nil
		}
		type dev struct {
			d   int
			key string
		}
		devs := make([]dev, 0, len(v))
		for k, sub := range v {
			d, err := strconv.Atoi(k)
			if _, isMap := sub.(map[string]any); err != nil || !isMap || d < 0 || d > 1<<20 {
				return []statsSet{{device: -1, v: v}}
			}
			devs = append(devs, dev{d, k})
		}
		sort.Slice(devs, func(i, j int) bool {
			if devs[i].d != devs[j].d {
				return devs[i].d < devs[j].d
			}
			return devs[i].key < devs[j].key
		})
		var out []statsSet
		for _, d := range devs {
			out = append(out, statsSet{device: d.d, path: d.key + ".", v: v[d.key].(map[string]any)})
		}
		return out
	case []any:
		var out []statsSet
		for i, it := range v {
			m, ok := it.(map[string]any)
			if !ok {
				return nil
			}
			out = append(out, statsSet{device: i, path: fmt.Sprintf("[%d].", i), v: m})
		}
		return out
	}
	return nil
}

// flatten joins nested keys with "." (memory_stats_as_nested_dict()).
func flatten(prefix string, v any, out map[string]any, depth int) {
	m, ok := v.(map[string]any)
	if !ok || depth > 8 {
		if prefix != "" {
			out[prefix] = v
		}
		return
	}
	for k, sub := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		flatten(key, sub, out, depth+1)
	}
}

// intValue returns a JSON number that is a whole number within int64.
func intValue(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<62 {
		return 0, false
	}
	return int64(f), true
}

// dupKey is a key found twice in one JSON object (keyLines).
type dupKey struct {
	key         string
	first, line int
}

// lineIndex maps byte offsets to 1-based lines.
type lineIndex []int64 // offsets of '\n'

func newLineIndex(data []byte) lineIndex {
	var idx lineIndex
	for i, c := range data {
		if c == '\n' {
			idx = append(idx, int64(i))
		}
	}
	return idx
}

func (l lineIndex) line(off int64) int {
	return sort.Search(len(l), func(i int) bool { return l[i] >= off }) + 1
}

// keyLines finds the line of each object key in the JSON text, by its
// path: the keys (and list indices, as "[i]") from the root, joined by ".".
//
// dup is the first key found twice in one object: its path, the line of
// its first and of its second occurrence (key "" when none).
func keyLines(data []byte, base int64, lines lineIndex) (out map[string]int, dup dupKey) {
	out = map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number beyond float64 (1e400) is a token still
	// One entry per open container: for an object, whether a key is next
	// and the last key; for a list, the next index.
	type level struct {
		object, wantKey bool
		key             string
		index           int
	}
	var stack []level
	path := func(leaf string) string {
		var b strings.Builder
		for _, l := range stack[:len(stack)-1] {
			if l.object {
				b.WriteString(l.key)
			} else {
				fmt.Fprintf(&b, "[%d]", l.index)
			}
			b.WriteByte('.')
		}
		b.WriteString(leaf)
		return b.String()
	}
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return out, dup
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, level{object: d == '{', wantKey: d == '{'})
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				valueDone()
			}
			continue
		}
		n := len(stack)
		if n > 0 && stack[n-1].wantKey {
			k, _ := tok.(string)
			stack[n-1].wantKey, stack[n-1].key = false, k
			// The offset before the token is the end of the previous one;
			// the key's line is that of its own text.
			if at := bytes.Index(data[off:], []byte(strconv.Quote(k))); at >= 0 {
				p, line := path(k), lines.line(base+off+int64(at))
				if first, seen := out[p]; seen && dup.key == "" {
					dup = dupKey{key: p, first: first, line: line}
				}
				out[p] = line
			}
			continue
		}
		valueDone()
	}
}
