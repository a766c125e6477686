package nvml

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Clock says how a log's samples were placed in time.
type Clock int

// Clocks.
const (
	// ClockAbsolute: every sample carries a date and time (or a Unix time).
	ClockAbsolute Clock = iota
	// ClockTimeOfDay: samples carry a time of day only; the date came from
	// WithDate, or is 1970-01-01 when DateGiven is false.
	ClockTimeOfDay
	// ClockRowOrder: samples carry no time; tick k is at WithStart plus k
	// times the interval.
	ClockRowOrder
)

func (c Clock) String() string {
	switch c {
	case ClockAbsolute:
		return "absolute"
	case ClockTimeOfDay:
		return "time-of-day"
	case ClockRowOrder:
		return "row-order"
	}
	return "clock?"
}

// Metadata is what a log says besides its samples. It is complete once
// Reader.Next has returned false without error.
type Metadata struct {
	// Format is the layout read.
	Format parse.Format
	// Rows counts the samples emitted.
	Rows int64
	// FirstUs and LastUs bound the times the log covers (µs since the Unix
	// epoch, UTC), including ticks that yielded no sample (pmon rows
	// without a process); valid when Rows > 0 or Ticks > 0.
	FirstUs, LastUs int64
	// Ticks counts the lines or records that carried a time.
	Ticks int64
	// Clock says how samples were placed in time; DateGiven, whether a
	// date was supplied (WithDate or WithStart) for ClockTimeOfDay or
	// ClockRowOrder; Interval, the tick period of ClockRowOrder.
	Clock     Clock
	DateGiven bool
	Interval  time.Duration
	// Fields are a CSV log's columns as read (from its header, WithFields
	// or the default order), or a dmon/pmon log's column names.
	Fields []string
	// Header is false for a header-less CSV log.
	Header bool
	// Skipped counts lines that were neither samples nor headers but
	// messages a tool prints in their place ("No devices were found").
	Skipped int
	// Warnings about the input, in the order found.
	Warnings []string
}

// Option configures a Reader.
type Option func(*options)

type options struct {
	mem       memory.Allocator
	batchSize int
	format    parse.Format
	fields    []string
	loc       *time.Location
	date      time.Time
	hasDate   bool
	start     time.Time
	hasStart  bool
	interval  time.Duration
}

// WithAllocator sets the Arrow allocator of the record batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(o *options) { o.mem = mem } }

// WithBatchSize sets about how many rows one record batch holds (default
// 65536); a DCGM scrape is never split.
func WithBatchSize(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.batchSize = n
		}
	}
}

// WithFormat skips detection and reads the input as format f, which must
// be one of the parse.Format values this package reads.
func WithFormat(f parse.Format) Option { return func(o *options) { o.format = f } }

// WithFields names the columns of a header-less nvidia-smi CSV log, as
// given to --query-gpu or --query-compute-apps ("timestamp", "index",
// "memory.used", ...). It is ignored when the log has a header.
func WithFields(fields []string) Option { return func(o *options) { o.fields = fields } }

// WithLocation sets the time zone of local timestamps (default UTC).
func WithLocation(loc *time.Location) Option { return func(o *options) { o.loc = loc } }

// WithDate sets the date of logs that carry a time of day only (pmon -o
// T); only t's year, month and day are used, in the WithLocation zone.
func WithDate(t time.Time) Option { return func(o *options) { o.date, o.hasDate = t, true } }

// WithStart sets the time of the first tick of logs that carry no time at
// all (default the Unix epoch); it also supplies the date of time-of-day
// logs when WithDate is not given.
func WithStart(t time.Time) Option { return func(o *options) { o.start, o.hasStart = t, true } }

// WithInterval sets the period between ticks of logs that carry no time
// (default 1 s; 30 s for DCGM text).
func WithInterval(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.interval = d
		}
	}
}

// decoder turns lines of one layout into samples.
type decoder interface {
	// line handles line number n (1-based) without its line ending.
	line(b []byte, n int) error
	// end is called once at the end of the input, after the last line.
	end(n int) error
}

// maxLine bounds one line; a longer one is an error, not a memory blow-up.
const maxLine = 16 << 20

// Reader streams the samples of one log as Arrow record batches:
//
//	r := nvml.NewReader(f, "query_gpu.csv", nvml.WithLocation(loc))
//	defer r.Release()
//	for r.Next() {
//		use(r.RecordBatch())
//	}
//	if err := r.Err(); err != nil { ... }
//	meta := r.Metadata()
//
// Errors are *parse.Error values with the 1-based line at fault. An input
// in none of the layouts fails on its first batch with an error that wraps
// parse.ErrNotMine; empty input, a truncated last line or record, and a
// line that fits no row of the layout end the stream with an error, and
// batches already returned must then be treated as incomplete.
type Reader struct {
	name string
	opt  options
	src  *bufio.Reader
	dec  decoder

	b    *array.RecordBuilder
	col  builders
	cur  arrow.RecordBatch
	err  error
	done bool

	line     int
	long     []byte
	meta     Metadata
	civil    civilCache
	source   []byte
	nonEmpty bool
}

// NewReader returns a Reader of the log in r (already decompressed;
// parse.Open removes gzip). name names the input in errors.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	o := options{mem: memory.DefaultAllocator, batchSize: 1 << 16, loc: time.UTC}
	for _, f := range opts {
		f(&o)
	}
	if o.loc == nil {
		o.loc = time.UTC
	}
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < parse.SniffLen {
		br = bufio.NewReaderSize(r, parse.SniffLen)
	}
	rd := &Reader{name: name, opt: o, src: br}
	rd.civil.loc = o.loc
	rd.b = array.NewRecordBuilder(o.mem, Schema)
	rd.col.init(rd.b)
	return rd
}

// Next advances to the next record batch, releasing the previous one. It
// returns false at the end of the log or on error (see Err).
func (r *Reader) Next() bool {
	r.releaseCur()
	if r.err != nil || r.done {
		return false
	}
	if r.dec == nil {
		if err := r.start(); err != nil {
			r.err = err
			return false
		}
	}
	for r.b.Field(0).Len() < r.opt.batchSize && !r.done {
		if err := r.step(); err != nil {
			r.err = err
			return false
		}
	}
	if r.b.Field(0).Len() == 0 {
		return false
	}
	r.cur = r.b.NewRecordBatch()
	return true
}

// step reads and decodes one line, or ends the input.
func (r *Reader) step() error {
	line, err := r.readLine()
	if err != nil && !errors.Is(err, io.EOF) {
		return &parse.Error{File: r.name, Offset: -1, Line: r.line + 1, Msg: "reading", Err: err}
	}
	if line != nil {
		r.line++
		if len(trimSpace(line)) > 0 {
			r.nonEmpty = true
		}
		if derr := r.dec.line(line, r.line); derr != nil {
			return derr
		}
	}
	if errors.Is(err, io.EOF) {
		r.done = true
		if !r.nonEmpty {
			return parse.LineErrorf(r.name, max(r.line, 1), "no samples: the input has only blank lines")
		}
		return r.dec.end(r.line)
	}
	return nil
}

// start recognises the layout (unless WithFormat gave it) and picks its
// decoder.
func (r *Reader) start() error {
	head, err := r.src.Peek(parse.SniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return &parse.Error{File: r.name, Offset: 0, Msg: "reading", Err: err}
	}
	if len(head) == 0 {
		return parse.LineErrorf(r.name, 1, "empty input")
	}
	if len(bytes.TrimSpace(head)) == 0 && len(head) < parse.SniffLen {
		return parse.LineErrorf(r.name, max(bytes.Count(head, []byte("\n")), 1), "no samples: the input has only blank lines")
	}
	f := r.opt.format
	if f == parse.FormatUnknown {
		f = Sniff(head)
	}
	if f == parse.FormatUnknown && len(r.opt.fields) > 0 && looksLikeCSV(head) {
		f = FormatForFields(r.opt.fields)
	}
	switch f {
	case parse.FormatNvidiaSmiQueryGPU, parse.FormatNvidiaSmiQueryApps:
		r.dec = newSmiDecoder(r, f == parse.FormatNvidiaSmiQueryApps)
	case parse.FormatNvidiaSmiDmon, parse.FormatNvidiaSmiPmon:
		r.dec = newMonDecoder(r, f == parse.FormatNvidiaSmiPmon)
	case parse.FormatPynvmlJSONL:
		r.dec = newJSONDecoder(r, r.pynvmlDoc)
	case parse.FormatGpustatJSON:
		r.dec = newJSONDecoder(r, r.gpustatDoc)
	case parse.FormatDCGMPrometheus:
		r.dec = newDCGMDecoder(r)
	default:
		return &parse.Error{File: r.name, Offset: -1, Line: 1, Err: parse.ErrNotMine,
			Msg: "not an NVML sample log (nvidia-smi --query-gpu/--query-compute-apps CSV, dmon/pmon text, pynvml JSON lines, gpustat --json, DCGM exporter metrics)"}
	}
	r.meta.Format = f
	r.source = []byte(f)
	if r.opt.interval == 0 {
		r.opt.interval = time.Second
		if f == parse.FormatDCGMPrometheus {
			r.opt.interval = 30 * time.Second
		}
	}
	return nil
}

// readLine returns the next line without its line ending, nil at the end.
// The slice is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	b, err := r.src.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.long) > maxLine {
				return nil, fmt.Errorf("line longer than %d MiB", maxLine>>20)
			}
			b, err = r.src.ReadSlice('\n')
			r.long = append(r.long, b...)
		}
		b = r.long
	}
	if len(b) == 0 {
		if err == nil {
			err = io.EOF
		}
		return nil, err
	}
	if b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if r.line == 0 && len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		b = b[3:] // UTF-8 byte order mark
	}
	return b, err
}

// RecordBatch is the current record batch, valid until the next call of
// Next or Release; Retain it to keep it longer.
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Err is the error that ended the stream, or nil at a clean end.
func (r *Reader) Err() error { return r.err }

// Format is the layout being read; parse.FormatUnknown before the first
// call of Next.
func (r *Reader) Format() parse.Format { return r.meta.Format }

// Metadata describes the log; it is complete after the last batch.
func (r *Reader) Metadata() *Metadata {
	r.meta.Interval = r.opt.interval
	return &r.meta
}

// Release frees the current batch and the builders.
func (r *Reader) Release() {
	r.releaseCur()
	if r.b != nil {
		r.b.Release()
		r.b = nil
	}
}

func (r *Reader) releaseCur() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

// errorf returns a *parse.Error at line n.
func (r *Reader) errorf(n int, format string, args ...any) error {
	return parse.LineErrorf(r.name, n, format, args...)
}

// warn records a warning once.
func (r *Reader) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, w := range r.meta.Warnings {
		if w == msg {
			return
		}
	}
	r.meta.Warnings = append(r.meta.Warnings, msg)
}

// tick records that the log covers time t (µs) even when no sample
// comes of it.
func (r *Reader) tick(t int64) {
	if r.meta.Ticks == 0 || t < r.meta.FirstUs {
		r.meta.FirstUs = t
	}
	if r.meta.Ticks == 0 || t > r.meta.LastUs {
		r.meta.LastUs = t
	}
	r.meta.Ticks++
}

// sample is one row being assembled. Byte slices may point into the
// current line; nil or empty means null.
type sample struct {
	timeUs                                  int64
	host, uuid, gpuName, process            []byte
	pod, namespace, container               []byte
	gpu                                     int32
	pid                                     int64
	used, total, free, reserved             int64
	hasGPU, hasPID                          bool
	hasUsed, hasTotal, hasFree, hasReserved bool
	conv                                    Convention // the layout's behaviour when arithmetic cannot tell
}

// reservationTolerance absorbs MiB rounding in total = used + free (+ reserved).
const reservationTolerance = 2 << 20

// normalise makes used exclude the driver's reservation where the row
// allows, fills reserved from total - used - free when the log leaves it
// out, and returns the row's convention (see the package documentation).
func (s *sample) normalise() Convention {
	if s.hasPID {
		return Process
	}
	if s.hasTotal && s.hasUsed && s.hasFree {
		gap := s.total - s.used - s.free
		switch {
		case gap >= -reservationTolerance && gap <= reservationTolerance:
			// used + free = total: used counts the reservation, or there is none.
			if s.hasReserved && s.reserved > reservationTolerance {
				s.used -= s.reserved
				return IncludesReserved
			}
			if s.hasReserved {
				return ExcludesReserved
			}
			return IncludesReservedUnknown
		case gap > reservationTolerance:
			// Something besides used and free: the reservation.
			if !s.hasReserved {
				s.reserved, s.hasReserved = gap, true
			}
			return ExcludesReserved
		}
		// used + free > total: read at different instants; the layout decides.
	}
	switch s.conv {
	case IncludesReserved:
		if s.hasUsed && s.hasReserved {
			s.used -= s.reserved
			return IncludesReserved
		}
		return IncludesReservedUnknown
	case "":
		return ExcludesReserved
	}
	return s.conv
}

// emit appends s as a row.
func (r *Reader) emit(s *sample) {
	conv := s.normalise()
	c := &r.col
	c.time.Append(arrow.Timestamp(s.timeUs))
	appendText(c.host, s.host)
	appendInt32(c.gpu, s.gpu, s.hasGPU)
	appendText(c.uuid, s.uuid)
	appendText(c.gpuName, s.gpuName)
	appendInt64(c.pid, s.pid, s.hasPID)
	appendText(c.process, s.process)
	appendInt64(c.used, s.used, s.hasUsed)
	appendInt64(c.total, s.total, s.hasTotal)
	appendInt64(c.free, s.free, s.hasFree)
	appendInt64(c.reserved, s.reserved, s.hasReserved)
	appendText(c.pod, s.pod)
	appendText(c.namespace, s.namespace)
	appendText(c.container, s.container)
	c.source.Append(r.source)
	c.conv.AppendString(string(conv))
	r.meta.Rows++
	r.tick(s.timeUs)
}

func appendText(b *array.BinaryDictionaryBuilder, v []byte) {
	if len(v) == 0 {
		b.AppendNull()
		return
	}
	b.Append(v)
}

func appendInt64(b *array.Int64Builder, v int64, ok bool) {
	if !ok {
		b.AppendNull()
		return
	}
	b.Append(v)
}

func appendInt32(b *array.Int32Builder, v int32, ok bool) {
	if !ok {
		b.AppendNull()
		return
	}
	b.Append(v)
}

// builders are typed views of the RecordBuilder's fields.
type builders struct {
	time                             *array.TimestampBuilder
	host, uuid, gpuName, process     *array.BinaryDictionaryBuilder
	pod, namespace, container        *array.BinaryDictionaryBuilder
	source, conv                     *array.BinaryDictionaryBuilder
	gpu                              *array.Int32Builder
	pid, used, total, free, reserved *array.Int64Builder
}

func (c *builders) init(b *array.RecordBuilder) {
	c.time = b.Field(ColTime).(*array.TimestampBuilder)
	c.host = b.Field(ColHost).(*array.BinaryDictionaryBuilder)
	c.gpu = b.Field(ColGPU).(*array.Int32Builder)
	c.uuid = b.Field(ColUUID).(*array.BinaryDictionaryBuilder)
	c.gpuName = b.Field(ColGPUName).(*array.BinaryDictionaryBuilder)
	c.pid = b.Field(ColPID).(*array.Int64Builder)
	c.process = b.Field(ColProcess).(*array.BinaryDictionaryBuilder)
	c.used = b.Field(ColUsed).(*array.Int64Builder)
	c.total = b.Field(ColTotal).(*array.Int64Builder)
	c.free = b.Field(ColFree).(*array.Int64Builder)
	c.reserved = b.Field(ColReserved).(*array.Int64Builder)
	c.pod = b.Field(ColPod).(*array.BinaryDictionaryBuilder)
	c.namespace = b.Field(ColNamespace).(*array.BinaryDictionaryBuilder)
	c.container = b.Field(ColContainer).(*array.BinaryDictionaryBuilder)
	c.source = b.Field(ColSource).(*array.BinaryDictionaryBuilder)
	c.conv = b.Field(ColConvention).(*array.BinaryDictionaryBuilder)
}
