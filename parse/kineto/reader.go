package kineto

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Metadata is what a trace says about itself, complete once Next has
// returned false.
type Metadata struct {
	// ProfileMemory and WithStack are the trace's profile_memory and
	// with_stack keys; nil when the trace does not have them (then
	// [memory] events and python_function spans are the only evidence).
	ProfileMemory, WithStack *bool
	// BaseTimeNs is baseTimeNanoseconds, 0 when absent.
	BaseTimeNs int64
	// Devices are the GPUs of deviceProperties.
	Devices []Device
	// Events counts every event of the trace; MemoryEvents, OOMEvents and
	// Spans count the rows of the tables; Steps counts ProfilerStep#N spans.
	Events, MemoryEvents, OOMEvents, Spans, Steps int64
	// NoTraceEvents: the document is an object without a traceEvents
	// member (a trace's header alone); HeaderKeys are its top-level keys
	// that only a PyTorch profiler trace has (TraceOnlyKeys), in file
	// order. An object without traceEvents and without such a key is not
	// a trace (an error wrapping parse.ErrNotMine).
	NoTraceEvents bool
	HeaderKeys    []string
	// ByCategory counts events by cat (the empty string for none).
	ByCategory map[string]int64
	// Warnings are things the reader tolerated, with their positions.
	Warnings parse.Warnings
}

// Device is one entry of deviceProperties.
type Device struct {
	ID          int
	Name        string
	TotalMemory int64 // bytes (totalGlobalMem)
}

// Option configures a Reader.
type Option func(*options)

type options struct {
	parse.ReaderOptions
	maxEvents int64
}

// WithAllocator sets the Arrow allocator of the batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return parse.WithAllocator[options](mem) }

// WithBatchSize sets the most rows of a batch (default 64Ki).
func WithBatchSize(n int) Option { return parse.WithBatchSize[options](n) }

// WithMaxEvents bounds the events read (default 1<<31); more is an error.
func WithMaxEvents(n int64) Option { return func(o *options) { o.maxEvents = n } }

// maxEventBytes bounds one event's JSON text.
const maxEventBytes = 64 << 20

// Reader streams a trace's tables. Use Next, Table and RecordBatch, then
// Err; Release frees what is left.
//
// Next, Table, RecordBatch, Err and Release are parse.TableReader's.
type Reader struct {
	tableReader // Next, Table, RecordBatch, Err, Release

	name      string
	cr        *countReader
	raw       *rawStrings
	dec       *json.Decoder
	batch     int
	maxEvents int64
	meta      Metadata
	state     int // 0 start, 1 in events, 2 in object after events, 3 done
	inObject  bool
	out       *parse.TableBuilder[Table]

	memB     *array.RecordBuilder
	spanB    *array.RecordBuilder
	kindDict *array.BinaryDictionaryBuilder
	catDict  *array.BinaryDictionaryBuilder

	// key is the top-level key whose value is being read ("" between
	// keys), for the message of a trace cut there.
	key string
}

// NewReader returns a Reader of the trace in r; name is used in errors.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	o := options{ReaderOptions: parse.DefaultReaderOptions(64 << 10), maxEvents: 1 << 31}
	for _, f := range opts {
		f(&o)
	}
	cr := &countReader{r: r}
	raw := newRawStrings(cr)
	k := &Reader{name: name, cr: cr, raw: raw, dec: json.NewDecoder(raw), batch: o.BatchSize, maxEvents: o.maxEvents}
	k.meta.ByCategory = map[string]int64{}
	k.meta.Warnings = parse.NewWarnings(name)
	k.dec.UseNumber()
	k.out = parse.StartTables(&k.tableReader, o.ReaderOptions, numTables, k.step)
	k.memB = k.out.Builder(TableMemory)
	k.spanB = k.out.Builder(TableSpans)
	k.kindDict = k.memB.Field(MemKind).(*array.BinaryDictionaryBuilder)
	k.catDict = k.spanB.Field(SpCategory).(*array.BinaryDictionaryBuilder)
	return k
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// tableReader is the reader shell every family shares.
type tableReader = parse.TableReader[Table]

// Metadata returns what the trace said about itself so far.
func (r *Reader) Metadata() *Metadata { return &r.meta }

func (r *Reader) errorf(format string, args ...any) *parse.Error {
	return parse.Errorf(r.name, r.dec.InputOffset(), format, args...)
}

func (r *Reader) wrap(err error) error {
	var pe *parse.Error
	if errors.As(err, &pe) {
		return err
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &parse.Error{File: r.name, Offset: se.Offset, Msg: "invalid JSON", Err: err}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &parse.Error{File: r.name, Offset: r.cr.n, Msg: "the trace ends early (truncated?)" + r.where(), Err: io.ErrUnexpectedEOF}
	}
	return &parse.Error{File: r.name, Offset: r.dec.InputOffset(), Err: err}
}

// where says where in the document a cut fell: in the header before
// traceEvents (which key's value), or after the events; "" within them
// (the offset says where).
func (r *Reader) where() string {
	in := ""
	if r.key != "" {
		in = ", in " + strconv.Quote(r.key)
	}
	switch {
	case r.state == 0 && r.inObject:
		return ", inside its header" + in + ", before traceEvents"
	case r.state == 2:
		return ", after traceEvents" + in
	}
	return ""
}

// step reads up to one batch of events, or the keys around traceEvents.
func (r *Reader) step() error {
	switch r.state {
	case 0:
		tok, err := r.dec.Token()
		if err != nil {
			return &parse.Error{File: r.name, Offset: 0, Msg: "not a Chrome trace (JSON)", Err: parse.ErrNotMine}
		}
		switch tok {
		case json.Delim('['):
			r.state = 1
			return nil
		case json.Delim('{'):
			r.inObject = true
			return r.objectKeys()
		}
		return &parse.Error{File: r.name, Offset: 0, Msg: "not a Chrome trace: want a JSON object or array", Err: parse.ErrNotMine}
	case 1:
		for n := 0; n < r.batch && r.dec.More(); n++ {
			if err := r.event(); err != nil {
				return err
			}
		}
		if r.out.Full(TableMemory) {
			r.out.Flush(TableMemory)
		}
		if r.out.Full(TableSpans) {
			r.out.Flush(TableSpans)
		}
		if r.dec.More() {
			return nil
		}
		if _, err := r.dec.Token(); err != nil { // ']'
			return r.wrap(err)
		}
		if r.inObject {
			r.state = 2
			return r.objectKeys()
		}
		return r.finish()
	}
	return nil
}

// objectKeys reads the top-level keys until traceEvents' array opens, or
// the object ends. An object that ends without traceEvents is a trace's
// header alone when it has a key only a trace has (NoTraceEvents), else
// not a trace; one whose traceEvents is empty is a trace of no events.
func (r *Reader) objectKeys() error {
	for r.dec.More() {
		tok, err := r.dec.Token()
		if err != nil {
			return r.wrap(err)
		}
		key, _ := tok.(string)
		r.key = key
		if key == "traceEvents" {
			tok, err := r.dec.Token()
			if err != nil {
				return r.wrap(err)
			}
			if tok != json.Delim('[') {
				return r.errorf("traceEvents is not an array")
			}
			r.state, r.key = 1, ""
			return nil
		}
		var v json.RawMessage
		if err := r.dec.Decode(&v); err != nil {
			return r.wrap(err)
		}
		r.key = ""
		r.metaKey(key, v)
	}
	if _, err := r.dec.Token(); err != nil { // '}'
		return r.wrap(err)
	}
	if r.state == 0 {
		r.meta.NoTraceEvents = true
		if len(r.meta.HeaderKeys) == 0 {
			return &parse.Error{File: r.name, Offset: 0, Msg: "not a Chrome trace: no traceEvents", Err: parse.ErrNotMine}
		}
	}
	return r.finish()
}

// TraceOnlyKeys are the top-level keys that Kineto and torch.profiler
// write in a trace and no other JSON this tool reads has: a document with
// one of them but no traceEvents is a trace's header without its events
// (Metadata.NoTraceEvents). schemaVersion and displayTimeUnit are not
// among them: other formats (Chrome's own traces) have them too.
var TraceOnlyKeys = map[string]bool{
	"deviceProperties": true, "distributedInfo": true, "baseTimeNanoseconds": true, "traceName": true, "trace_id": true,
	"record_shapes": true, "profile_memory": true, "with_stack": true, "with_flops": true, "with_modules": true,
	"cuda_driver_version": true, "cuda_runtime_version": true, "cupti_version": true,
	"hip_runtime_version": true, "roctracer_version": true,
}

func (r *Reader) metaKey(key string, v json.RawMessage) {
	flag := func() *bool {
		s := string(bytes.TrimSpace(v))
		b := s == "1" || s == "true"
		return &b
	}
	if TraceOnlyKeys[key] && !slices.Contains(r.meta.HeaderKeys, key) && len(r.meta.HeaderKeys) < 16 {
		r.meta.HeaderKeys = append(r.meta.HeaderKeys, key)
	}
	switch key {
	case "profile_memory":
		r.meta.ProfileMemory = flag()
	case "with_stack":
		r.meta.WithStack = flag()
	case "baseTimeNanoseconds":
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err == nil {
			if r.meta.Events > 0 && n != 0 {
				r.meta.Warnings.Addf("baseTimeNanoseconds comes after traceEvents: times are relative to the trace's own clock")
			} else {
				r.meta.BaseTimeNs = n
			}
		}
	case "deviceProperties":
		var ds []struct {
			ID             int    `json:"id"`
			Name           string `json:"name"`
			TotalGlobalMem int64  `json:"totalGlobalMem"`
		}
		if json.Unmarshal(v, &ds) == nil && len(ds) <= 1024 {
			for _, d := range ds {
				r.meta.Devices = append(r.meta.Devices, Device{ID: d.ID, Name: d.Name, TotalMemory: d.TotalGlobalMem})
			}
		}
	}
}

// rawEvent is the part of an event the reader uses.
type rawEvent struct {
	Ph   string          `json:"ph"`
	Cat  string          `json:"cat"`
	Name string          `json:"name"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Ts   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	Args struct {
		Addr           json.Number `json:"Addr"`
		Bytes          json.Number `json:"Bytes"`
		TotalAllocated json.Number `json:"Total Allocated"`
		TotalReserved  json.Number `json:"Total Reserved"`
		DeviceType     json.Number `json:"Device Type"`
		DeviceID       json.Number `json:"Device Id"`
		PythonID       json.Number `json:"Python id"`
		PythonParentID json.Number `json:"Python parent id"`
	} `json:"args"`
}

func (r *Reader) event() error {
	start := r.dec.InputOffset()
	var e rawEvent
	err := r.dec.Decode(&e)
	var te *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &te) {
		return r.wrap(err)
	}
	if n := r.dec.InputOffset() - start; n > maxEventBytes {
		return parse.Errorf(r.name, start, "one trace event is %d bytes (more than %d)", n, maxEventBytes)
	}
	r.meta.Events++
	if r.meta.Events > r.maxEvents {
		return parse.Errorf(r.name, start, "more than %d trace events", r.maxEvents)
	}
	if te != nil {
		// A field of an unexpected type (a string pid on metadata events
		// is normal): skip the event unless it is one that is read.
		if e.Name == "[memory]" || e.Name == "[OutOfMemory]" || (e.Ph == "X" && (e.Cat == CategoryCPUOp || e.Cat == CategoryPythonFunction || e.Cat == CategoryUserAnnotation || e.Cat == CategoryOperator)) {
			return parse.Errorf(r.name, start, "bad %s event: %v", e.Name, err)
		}
		return nil
	}
	r.meta.ByCategory[e.Cat]++
	if e.Cat == CategoryOperator {
		e.Cat = legacyCategory(e.Name)
	}
	switch {
	case e.Ph == "i" && (e.Name == "[memory]" || e.Name == "[OutOfMemory]"):
		return r.memoryRow(&e, start)
	case e.Ph == "X" && (e.Cat == CategoryCPUOp || e.Cat == CategoryPythonFunction || e.Cat == CategoryUserAnnotation):
		return r.spanRow(&e, start)
	}
	return nil
}

// timeNs converts a ts (µs, maybe with a fraction) to ns since the epoch.
func (r *Reader) timeNs(n json.Number) (int64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || f < -1e15 || f > 1e16 {
		return 0, false
	}
	return int64(math.Round(f*1000)) + r.meta.BaseTimeNs, true
}

// legacyCategory is the category of a span PyTorch 1.8 and 1.9 wrote as
// "Operator", which they used for ops and record_function ranges alike:
// an op's name is namespaced (aten::clone, autograd::engine::...), a
// range's is not (ProfilerStep#N, enumerate(DataLoader)#...).
func legacyCategory(name string) string {
	if strings.Contains(name, "::") && !isStep(name) {
		return CategoryCPUOp
	}
	return CategoryUserAnnotation
}

// idOf reads a pid or tid: a number, or a number in a string (PyTorch 1.8
// and 1.9 wrote tids as strings); -1 for anything else ("stream 7").
func idOf(v json.RawMessage) int64 {
	v = bytes.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func intOf(n json.Number) (int64, bool) {
	if n == "" {
		return 0, false
	}
	if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return v, true
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil && f >= math.MinInt64 && f <= math.MaxInt64 {
		return int64(f), true
	}
	return 0, false
}

func (r *Reader) memoryRow(e *rawEvent, start int64) error {
	t, ok := r.timeNs(e.Ts)
	if !ok {
		return parse.Errorf(r.name, start, "%s event without a valid ts (%q)", e.Name, e.Ts)
	}
	b, ok := intOf(e.Args.Bytes)
	if !ok {
		return parse.Errorf(r.name, start, "%s event without Bytes", e.Name)
	}
	kind := KindMemory
	var addr uint64
	if e.Name == "[OutOfMemory]" {
		kind = KindOOM
		r.meta.OOMEvents++
	} else {
		a, err := strconv.ParseUint(string(e.Args.Addr), 10, 64)
		if err != nil {
			if v, ok := intOf(e.Args.Addr); ok { // a negative address: a signed 64-bit print
				a = uint64(v)
			} else {
				return parse.Errorf(r.name, start, "[memory] event without a valid Addr (%q)", e.Args.Addr)
			}
		}
		addr = a
		r.meta.MemoryEvents++
	}
	dt, _ := intOf(e.Args.DeviceType)
	did, ok := intOf(e.Args.DeviceID)
	if !ok {
		did = -1
	}
	if dt < math.MinInt32 || dt > math.MaxInt32 || did < math.MinInt32 || did > math.MaxInt32 {
		return parse.Errorf(r.name, start, "%s event with device %d:%d out of range", e.Name, dt, did)
	}
	f := r.memB
	f.Field(MemTimeNs).(*array.Int64Builder).Append(t)
	f.Field(MemPid).(*array.Int64Builder).Append(idOf(e.Pid))
	f.Field(MemTid).(*array.Int64Builder).Append(idOf(e.Tid))
	if err := r.kindDict.AppendString(kind); err != nil {
		return err
	}
	f.Field(MemAddr).(*array.Uint64Builder).Append(addr)
	f.Field(MemBytes).(*array.Int64Builder).Append(b)
	for i, n := range []json.Number{e.Args.TotalAllocated, e.Args.TotalReserved} {
		bld := f.Field(MemTotalAllocated + i).(*array.Int64Builder)
		if v, ok := intOf(n); ok {
			bld.Append(v)
		} else {
			bld.AppendNull()
		}
	}
	f.Field(MemDeviceType).(*array.Int32Builder).Append(int32(dt))
	f.Field(MemDeviceID).(*array.Int32Builder).Append(int32(did))
	return nil
}

func (r *Reader) spanRow(e *rawEvent, start int64) error {
	t, ok := r.timeNs(e.Ts)
	if !ok {
		return parse.Errorf(r.name, start, "%s span %q without a valid ts (%q)", e.Cat, e.Name, e.Ts)
	}
	var d int64
	if e.Dur != "" {
		f, err := strconv.ParseFloat(string(e.Dur), 64)
		if err != nil || f < 0 || f > 1e13 {
			return parse.Errorf(r.name, start, "%s span %q with a bad dur (%q)", e.Cat, e.Name, e.Dur)
		}
		d = int64(math.Round(f * 1000))
	}
	if e.Cat == CategoryUserAnnotation && isStep(e.Name) {
		r.meta.Steps++
	}
	r.meta.Spans++
	f := r.spanB
	f.Field(SpStartNs).(*array.Int64Builder).Append(t)
	f.Field(SpDurNs).(*array.Int64Builder).Append(d)
	f.Field(SpPid).(*array.Int64Builder).Append(idOf(e.Pid))
	f.Field(SpTid).(*array.Int64Builder).Append(idOf(e.Tid))
	if err := r.catDict.AppendString(e.Cat); err != nil {
		return err
	}
	f.Field(SpName).(*array.StringBuilder).Append(e.Name)
	for i, n := range []json.Number{e.Args.PythonID, e.Args.PythonParentID} {
		bld := f.Field(SpPythonID + i).(*array.Int64Builder)
		if v, ok := intOf(n); ok {
			bld.Append(v)
		} else {
			bld.AppendNull()
		}
	}
	return nil
}

// StepPrefix starts the name of the user_annotation span that
// torch.profiler's schedule and prof.step() make for each step.
const StepPrefix = "ProfilerStep#"

func isStep(name string) bool {
	if len(name) <= len(StepPrefix) || name[:len(StepPrefix)] != StepPrefix {
		return false
	}
	_, err := strconv.Atoi(name[len(StepPrefix):])
	return err == nil
}

// IsStep reports whether a user_annotation span's name is ProfilerStep#N.
func IsStep(name string) bool { return isStep(name) }

func (r *Reader) finish() error {
	r.out.End()
	r.state = 3
	if n := r.raw.Repaired; n > 0 {
		r.meta.Warnings.Addf("%s held backslashes written without JSON escaping (Windows paths, as Kineto wrote event names before mid-2023: pytorch/kineto#617): each is read as '/', as later Kineto writes it", plural(n, "string", "strings"))
	}
	if n := r.raw.Controls; n > 0 {
		r.meta.Warnings.Addf("%s inside strings (written without JSON escaping) read as spaces", plural(n, "control character", "control characters"))
	}
	// Anything after the document is not ours to judge, but a second
	// document means a damaged or concatenated file.
	if _, err := r.dec.Token(); err == nil {
		r.meta.Warnings.Add(parse.InlineNote(0, r.dec.InputOffset(), "text after the trace's JSON document at byte offset %d ignored", r.dec.InputOffset()))
	}
	return nil
}
