package nvml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gpuleak/gpuleak/parse"
)

// maxDoc bounds one JSON document.
const maxDoc = 64 << 20

// jsonDecoder cuts a stream of JSON documents - one per line, or
// pretty-printed over many lines, or concatenated - into documents and
// hands each to handle with the line it starts on.
type jsonDecoder struct {
	r      *Reader
	handle func(doc []byte, line int) error

	doc   []byte
	depth int
	inStr bool
	esc   bool
	start int
	// last is the last byte of the document so far outside its strings
	// and white space: what may follow it.
	last byte
	// indented: a line of the document so far (after its first) starts
	// with white space: it is pretty-printed with indentation.
	indented bool
}

func newJSONDecoder(r *Reader, handle func([]byte, int) error) *jsonDecoder {
	return &jsonDecoder{r: r, handle: handle}
}

func (d *jsonDecoder) line(b []byte, n int) error {
	i := 0
	if d.depth > 0 && d.cutBefore(b) {
		// The document that started at d.start was cut at the end of
		// the line before (a truncated record among whole ones, a line
		// another program printed): it is skipped, and this line is
		// read afresh, rather than taken into it - which would take
		// every record after it too, since the cut document never closes.
		err := asRowError(d.r.errorf(d.start, "truncated: the JSON document that starts at line %d is cut at the end of line %d (%q follows it)", d.start, n-1, snippet(trimSpace(b))), d.start, n-1)
		if bad := (*rowError)(nil); errors.As(err, &bad) {
			d.r.skipRow(bad)
		}
		d.depth, d.inStr, d.esc = 0, false, false
	}
	for i < len(b) {
		if d.depth == 0 {
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i == len(b) {
				return nil
			}
			if b[i] != '{' && b[i] != '[' {
				return d.r.rowErrorf(n, "expected a JSON object, found %q", snippet(b[i:]))
			}
			d.start = n
			d.doc = d.doc[:0]
			d.indented = false
		}
		j, done, err := d.scan(b[i:])
		if err != nil {
			// The record is skipped; the next starts afresh.
			d.depth, d.inStr, d.esc = 0, false, false
			return asRowError(d.r.errorf(n, "%v", err), d.start, n)
		}
		d.doc = append(d.doc, b[i:i+j]...)
		if len(d.doc) > maxDoc {
			return d.r.errorf(d.start, "a JSON document longer than %d MiB", maxDoc>>20)
		}
		if !done {
			if d.inStr {
				// A JSON string cannot hold a line end: the line was cut
				// inside one (a record truncated among whole ones).
				d.depth, d.inStr, d.esc = 0, false, false
				return asRowError(d.r.errorf(n, "truncated: the JSON document that starts at line %d is cut inside a string", d.start), d.start, n)
			}
			d.doc = append(d.doc, '\n')
			return nil
		}
		if err := d.handle(d.doc, d.start); err != nil {
			var bad *rowError
			if errors.As(err, &bad) {
				bad.first, bad.last = d.start, n // the record's lines
			}
			return err
		}
		i += j
	}
	return nil
}

// cutBefore reports whether line b, which comes while a document is open,
// cannot continue it: an opening bracket at the start of the line after
// indented lines, or the document so far ends with a whole value or a
// key's ':' (a pretty-printer breaks lines after ',' and opening brackets
// only, never between a key and its value) and b starts with anything but
// the ',' or closing bracket that must follow a value inside a document.
func (d *jsonDecoder) cutBefore(b []byte) bool {
	if d.inStr {
		return false
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') && d.indented {
		// An indenting printer puts only a document's own brackets at
		// the start of a line: this one starts the next document.
		return true
	}
	if len(b) > 0 && isSpace(b[0]) {
		d.indented = true
	}
	b = trimSpace(b)
	if len(b) == 0 {
		return false
	}
	switch d.last {
	case ',', '{', '[':
		return false
	}
	if d.last == ':' {
		return true
	}
	switch b[0] {
	case ',', '}', ']':
		return false
	}
	return true
}

// scan follows the nesting of b; it returns where the current document
// ends (just past its closing bracket) and whether it did end in b.
func (d *jsonDecoder) scan(b []byte) (int, bool, error) {
	for j, c := range b {
		if d.inStr {
			switch {
			case d.esc:
				d.esc = false
			case c == '\\':
				d.esc = true
			case c == '"':
				d.inStr = false
				d.last = c
			}
			continue
		}
		if !isSpace(c) {
			d.last = c
		}
		switch c {
		case '"':
			d.inStr = true
		case '{', '[':
			d.depth++
		case '}', ']':
			d.depth--
			if d.depth < 0 {
				return 0, false, errors.New("unbalanced closing bracket")
			}
			if d.depth == 0 {
				return j + 1, true, nil
			}
		}
	}
	return len(b), false, nil
}

func (d *jsonDecoder) end(n int) error {
	if d.depth > 0 {
		d.depth = 0
		return asRowError(d.r.errorf(n, "truncated: the JSON document that starts at line %d does not end", d.start), d.start, n)
	}
	if d.r.meta.Rows == 0 && d.r.meta.Ticks == 0 {
		return d.r.errorf(n, "no samples")
	}
	return nil
}

func snippet(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// unmarshal decodes doc into v; a JSON error names the line it is on.
func (r *Reader) unmarshal(doc []byte, start int, v any, what string) error {
	err := json.Unmarshal(doc, v)
	if err == nil {
		return nil
	}
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	line := start
	if off > 0 {
		line += bytes.Count(doc[:min(int(off), len(doc))], []byte("\n"))
	}
	return &parse.Error{File: r.name, Offset: -1, Line: line, Msg: "not a " + what, Err: err}
}

// elements returns the documents of doc: itself, or the elements of a
// top-level array.
func (r *Reader) elements(doc []byte, start int) ([]json.RawMessage, error) {
	if doc[0] != '[' {
		return []json.RawMessage{doc}, nil
	}
	var els []json.RawMessage
	if err := r.unmarshal(doc, start, &els, "JSON array of samples"); err != nil {
		return nil, err
	}
	return els, nil
}

// jsonSize turns a JSON number of units of unit bytes into bytes; null
// (nil) is no value. Sizes are float64 in the records so that a value of
// the wrong type fails with the offset of the error (json.UnmarshalTypeError),
// hence its line; float64 holds sizes below 8 PiB exactly.
// jsonNum is a JSON number that tells null (the member given, with no
// figure: a sampler's None where NVML reported none) from absent.
type jsonNum struct {
	v    *float64
	null bool
}

// UnmarshalJSON reads a number or null.
func (n *jsonNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		n.null = true
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", snippet(b))
	}
	n.v = &f
	return nil
}

func jsonSize(n *float64, unit int64) (int64, bool, error) {
	if n == nil {
		return 0, false, nil
	}
	f := *n * float64(unit)
	if f < 0 || f >= math.MaxInt64 {
		return 0, false, fmt.Errorf("%v is not a size", *n)
	}
	return int64(math.Round(f)), true, nil
}

// jsonTime reads a time: a number (Unix time, unit by magnitude) or a
// string (ISO 8601; local to the reader's zone unless it has one).
func (r *Reader) jsonTime(raw json.RawMessage) (int64, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, err
		}
		t, ok := parseTimestamp([]byte(s), &r.civil)
		if !ok {
			return 0, false, fmt.Errorf("%q is not an ISO 8601 time", s)
		}
		return t, true, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 0 || f > 1e19 || math.IsNaN(f) {
		return 0, false, fmt.Errorf("%s is not a Unix time", raw)
	}
	return unixNumber(f), true, nil
}

func text(p *string) []byte {
	if p == nil {
		return nil
	}
	return []byte(*p)
}

// pynvmlRecord is one line of a pynvml sampler (see the package
// documentation); sizes are bytes.
type pynvmlRecord struct {
	TS        json.RawMessage `json:"ts"`
	Timestamp json.RawMessage `json:"timestamp"`
	Time      json.RawMessage `json:"time"`
	GPU       *int32          `json:"gpu"`
	Index     *int32          `json:"index"`
	UUID      *string         `json:"uuid"`
	Name      *string         `json:"name"`
	Host      *string         `json:"host"`
	Hostname  *string         `json:"hostname"`
	Total     jsonNum         `json:"total"`
	Used      *float64        `json:"used"`
	Free      *float64        `json:"free"`
	Reserved  *float64        `json:"reserved"`
	Processes []struct {
		PID           *int64   `json:"pid"`
		Used          *float64 `json:"used"`
		UsedGpuMemory *float64 `json:"usedGpuMemory"`
		UsedMemory    *float64 `json:"used_memory"`
		Name          *string  `json:"name"`
	} `json:"processes"`
}

func (r *Reader) pynvmlDoc(doc []byte, start int) error {
	return eachElement(r, doc, start, "pynvml sample record", r.pynvmlRecord)
}

// eachElement decodes each element of a JSON document (the document
// itself, or each member of an array) as a T and hands it to handle.
func eachElement[T any](r *Reader, doc []byte, start int, what string, handle func(*T, int) error) error {
	els, err := r.elements(doc, start)
	if err != nil {
		return asRowError(err, start, start)
	}
	for _, el := range els {
		var v T
		if err := r.unmarshal(el, start, &v, what); err != nil {
			return asRowError(err, start, start)
		}
		if err := handle(&v, start); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) pynvmlRecord(rec *pynvmlRecord, n int) error {
	raw := rec.TS
	if raw == nil {
		raw = rec.Timestamp
	}
	if raw == nil {
		raw = rec.Time
	}
	t, ok, err := r.jsonTime(raw)
	if err != nil {
		return r.rowErrorf(n, "ts: %v", err)
	}
	if !ok {
		return r.rowErrorf(n, "a record without a time (ts)")
	}
	s := sample{timeUs: t, conv: IncludesReserved, uuid: text(rec.UUID), gpuName: text(rec.Name), host: text(rec.Host)}
	if s.host == nil {
		s.host = text(rec.Hostname)
	}
	if g := rec.GPU; g != nil || rec.Index != nil {
		if g == nil {
			g = rec.Index
		}
		if *g < 0 {
			return r.rowErrorf(n, "gpu: %d is not a GPU index", *g)
		}
		s.gpu, s.hasGPU = *g, true
	}
	if !s.hasGPU && len(s.uuid) == 0 {
		return r.rowErrorf(n, "a record without gpu or uuid")
	}
	for _, f := range []struct {
		name string
		n    *float64
		v    *int64
		ok   *bool
	}{{"total", rec.Total.v, &s.total, &s.hasTotal}, {"used", rec.Used, &s.used, &s.hasUsed},
		{"free", rec.Free, &s.free, &s.hasFree}, {"reserved", rec.Reserved, &s.reserved, &s.hasReserved}} {
		if *f.v, *f.ok, err = jsonSize(f.n, 1); err != nil {
			return r.rowErrorf(n, "%s: %v", f.name, err)
		}
	}
	if rec.Total.null {
		r.totalPlaceholders++ // given, but no figure: see unifiedNoMemory
	}
	if rec.Used == nil && r.usedPlaceholder == "" {
		r.usedPlaceholder, r.usedField = "null", "used"
	}
	// Up to here a record that cannot be read is skipped whole (a
	// rowError); after, part of it is emitted, and an error ends the log.
	dev := s
	r.emit(&dev)
	for _, p := range rec.Processes {
		if p.PID == nil || *p.PID < 0 {
			return r.errorf(n, "a process without a pid")
		}
		ps := sample{timeUs: t, host: s.host, gpu: s.gpu, hasGPU: s.hasGPU, uuid: s.uuid, gpuName: s.gpuName,
			pid: *p.PID, hasPID: true, process: text(p.Name), conv: Process}
		used := p.Used
		if used == nil {
			used = p.UsedGpuMemory
		}
		if used == nil {
			used = p.UsedMemory
		}
		if ps.used, ps.hasUsed, err = jsonSize(used, 1); err != nil {
			return r.errorf(n, "process %d: used: %v", *p.PID, err)
		}
		r.emit(&ps)
	}
	return nil
}

// gpustatDoc is one gpustat --json document; sizes are MiB.
type gpustatDoc struct {
	Hostname  *string `json:"hostname"`
	QueryTime *string `json:"query_time"`
	GPUs      []struct {
		Index       *int32   `json:"index"`
		UUID        *string  `json:"uuid"`
		Name        *string  `json:"name"`
		MemoryUsed  *float64 `json:"memory.used"`
		MemoryTotal jsonNum  `json:"memory.total"`
		Processes   []struct {
			PID            *int64   `json:"pid"`
			Command        *string  `json:"command"`
			GPUMemoryUsage *float64 `json:"gpu_memory_usage"`
		} `json:"processes"`
	} `json:"gpus"`
}

func (r *Reader) gpustatDoc(doc []byte, start int) error {
	return eachElement(r, doc, start, "gpustat --json document", r.gpustatSample)
}

func (r *Reader) gpustatSample(g *gpustatDoc, n int) error {
	if g.QueryTime == nil {
		return r.rowErrorf(n, "a gpustat document without query_time")
	}
	t, ok := parseTimestamp([]byte(*g.QueryTime), &r.civil)
	if !ok {
		return r.rowErrorf(n, "query_time: %q is not an ISO 8601 time", *g.QueryTime)
	}
	// Up to here a document that cannot be read is skipped whole (a
	// rowError); after, part of it is emitted, and an error ends the log.
	r.tick(t, 0, false)
	host := text(g.Hostname)
	for _, gpu := range g.GPUs {
		s := sample{timeUs: t, host: host, uuid: text(gpu.UUID), gpuName: text(gpu.Name), conv: IncludesReservedUnknown}
		if gpu.Index != nil {
			if *gpu.Index < 0 {
				return r.errorf(n, "index: %d is not a GPU index", *gpu.Index)
			}
			s.gpu, s.hasGPU = *gpu.Index, true
		}
		var err error
		if s.used, s.hasUsed, err = jsonSize(gpu.MemoryUsed, MiB); err != nil {
			return r.errorf(n, "memory.used: %v", err)
		}
		if s.total, s.hasTotal, err = jsonSize(gpu.MemoryTotal.v, MiB); err != nil {
			return r.errorf(n, "memory.total: %v", err)
		}
		if gpu.MemoryTotal.null {
			r.totalPlaceholders++ // given, but no figure: see unifiedNoMemory
		}
		if gpu.MemoryUsed == nil && r.usedPlaceholder == "" {
			r.usedPlaceholder, r.usedField = "null", "memory.used"
		}
		dev := s
		r.emit(&dev)
		for _, p := range gpu.Processes {
			if p.PID == nil || *p.PID < 0 {
				return r.errorf(n, "a process without a pid")
			}
			ps := sample{timeUs: t, host: host, gpu: s.gpu, hasGPU: s.hasGPU, uuid: s.uuid, gpuName: s.gpuName,
				pid: *p.PID, hasPID: true, process: text(p.Command), conv: Process}
			if ps.used, ps.hasUsed, err = jsonSize(p.GPUMemoryUsage, MiB); err != nil {
				return r.errorf(n, "process %d: gpu_memory_usage: %v", *p.PID, err)
			}
			r.emit(&ps)
		}
	}
	return nil
}
