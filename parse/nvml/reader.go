package nvml

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/internal/lazyre"
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
	// Rows counts the samples emitted: one per GPU or process per
	// instant (the rows of the samples table).
	Rows int64
	// Instants counts the sampling instants: the times the log was taken,
	// each a run of rows (or pmon's lines without a process) carrying one
	// time. One nvidia-smi table or gpustat output, one DCGM scrape, one
	// --query-gpu or dmon tick of every GPU is one instant, whatever its
	// GPUs and processes; a series has at most this many samples.
	Instants int64
	// FirstUs and LastUs bound the times the log covers (µs since the Unix
	// epoch, UTC), including ticks that yielded no sample (pmon rows
	// without a process); valid when Rows > 0 or Ticks > 0.
	FirstUs, LastUs int64
	// Ticks counts the lines or records that carried a time.
	Ticks int64
	// Clock says how samples were placed in time; DateGiven, whether a
	// date was supplied (WithDate or WithStart) for ClockTimeOfDay or
	// ClockRowOrder; Interval, the tick period of ClockRowOrder (of its
	// last output: a command line before an output gives that output's
	// period, see Reader; the assumed one when IntervalAssumed).
	Clock     Clock
	DateGiven bool
	Interval  time.Duration
	// IntervalAssumed: rows were placed by the default period (1 s; 30 s
	// for DCGM text), given neither with WithInterval nor by a command
	// line before their output: under ClockRowOrder the log's times, and
	// every rate and duration from them, rest on a guess.
	IntervalAssumed bool
	// Fields are a CSV log's columns as read (from its header, WithFields
	// or the default order), or a dmon/pmon log's column names.
	Fields []string
	// Header is false for a header-less CSV log.
	Header bool
	// Skipped counts lines that were neither samples nor headers but
	// messages a tool prints in their place ("No devices were found").
	Skipped int
	// SkippedLines counts the lines of rows or records that could not be
	// read and were skipped (a line pasted among the rows, a truncated
	// last row or record, a value that is no size): the log was read in
	// part. SkippedAt holds the first line of each skipped row or record
	// (at most MaxSkippedAt of them), in order; a warning names them.
	SkippedLines int
	SkippedAt    []int
	// Warnings about the input, in the order found, with their positions.
	Warnings parse.Warnings
	// ProcessesListedUs are the times of nvidia-smi outputs that list
	// every process nvidia-smi saw on their GPUs: tables whose Processes
	// box was read whole (its closing border reached, no row cut, none
	// not read), and -q reports in which every GPU section has its
	// Processes section ("Processes : None" for none). At those times a
	// GPU without a process has none listed; a process listed with its
	// memory N/A is listed, its memory unknown. In order of the outputs.
	ProcessesListedUs []int64
	// MIGProcesses: the processes an nvidia-smi table's Processes box
	// lists in MIG GPU instances (its GI and CI columns), each (GPU, pid)
	// once, in order of first sight; at most maxMIGProcesses.
	MIGProcesses []MIGProcess
	// ProcessesPartialUs are the times of nvidia-smi outputs whose GPUs
	// were read but whose process list was not read whole (a table's
	// Processes box cut, missing, a row not read; a -q report or -q -x
	// document cut short): their processes' memory is a lower bound, so
	// what no listed process accounts for then is not known. In order.
	ProcessesPartialUs []int64
	// GraphicsPIDs are the pids a table's Processes box listed as
	// graphics processes alone (type G: Xorg, a desktop shell, a
	// browser), each once, in the order first listed: NVML's compute
	// process list, --query-compute-apps, never names them (pmon does).
	GraphicsPIDs []int64
	// Cut says where a pasted nvidia-smi output stops short, read in
	// part: a table before its Processes box or inside it, before its
	// bottom border ("the nvidia-smi table ends at line 14 before its
	// Processes box ..."); a -q report inside its last GPU's section or a
	// process's entry; a -q -x document before </nvidia_smi_log>. What was
	// whole is read; the GPUs or processes after the cut are missing. The
	// first such output, and how many more; "" when none was cut. The same
	// words are a warning at that line.
	Cut string
}

// Option configures a Reader.
type Option func(*options)

type options struct {
	parse.ReaderOptions
	format   parse.Format
	fields   []string
	loc      *time.Location
	date     time.Time
	hasDate  bool
	start    time.Time
	hasStart bool
	interval time.Duration
	// general reads every line the general way, without smiDecoder's
	// fastRow and plainRow's cache of repeated columns: tests hold the
	// fast path to it.
	general bool
}

// WithAllocator sets the Arrow allocator of the record batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return parse.WithAllocator[options](mem) }

// WithBatchSize sets about how many rows one record batch holds (default
// 65536); a DCGM scrape is never split.
func WithBatchSize(n int) Option { return parse.WithBatchSize[options](n) }

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
// parse.ErrNotMine; empty input ends the stream with an error, and
// batches already returned must then be treated as incomplete. A row or
// record that cannot be read (a line that fits no row of the layout, a
// truncated last line or record) is skipped and the rest read: Metadata's
// SkippedLines and SkippedAt count and place them, and a warning says the
// log was read in part; only a log none of whose rows can be read fails,
// with the first one's error.
//
// Next, Table, RecordBatch, Err and Release are parse.TableReader's.
type Reader struct {
	tableReader // Next, Table, RecordBatch, Err, Release

	name string
	opt  options
	src  lineSource
	dec  decoder
	out  *parse.TableBuilder[Table]

	col  columns
	done bool // the input's end was read

	line     int
	segLines int // lines the current decoder has read
	// segText: a line not blank went to the current decoder (a label
	// before it, "Output:", is not the output's).
	segText bool
	long    []byte
	// ansi holds the last line without its terminal escape sequences;
	// ansiLines counts the lines that had some.
	ansi      []byte
	ansiLines int
	meta      Metadata
	civil     civilCache
	source    []byte
	nonEmpty  bool
	usedRows  int64 // rows with a used-memory value
	// usedLost counts the rows skipped as unreadable that named a
	// used-memory figure (a DCGM_FI_DEV_FB_USED line cut inside its
	// labels), the first at line usedLostLine with usedLostWhy.
	usedLost, usedLostLine int
	usedLostWhy            string
	// rowOrder holds what the row-order warnings say before their period
	// ("the log has no timestamp column: rows are placed 1s apart by
	// their order"), when the period is assumed: said at the end, when
	// the instants are counted (one computes no rate).
	rowOrder []string
	// usedPlaceholder is the first placeholder an nvidia-smi CSV gave for
	// memory.used ("[N/A]"); totalPlaceholders counts the rows whose
	// total memory is a placeholder (CSV, dcgmi dmon), null (JSON), 0
	// (noFigures) or "Not Supported" (the table); gpuName is the first GPU's name a GPU row gave. They
	// tell a unified-memory GPU (see unifiedNoMemory).
	usedPlaceholder string
	usedField       string // the field usedPlaceholder is of ("" : memory.used)
	// driverMismatch says where a Windows table's banner gives
	// nvidia-smi's version other than the driver's ("" when none does):
	// a cause of a discrete GPU's memory read as no figure.
	driverMismatch    string
	totalPlaceholders int64
	gpuName           string
	// gpuRows counts the GPU rows (no pid), gpuUsedRows those with a
	// used-memory value; zeroMemory the rows whose 0 figures were read as
	// no figure (noFigures). totalPlaceholders counts the GPU rows whose
	// total memory the log gives as no figure, in any layout.
	gpuRows, gpuUsedRows, zeroMemory int64
	// gpuIndices has bit i set when a GPU row of index i (0-63) was read.
	gpuIndices uint64
	// intervalCmd is the command in the input whose period places the
	// rows of a log without times (commandInterval) from here on; "" when
	// none does. intervalGiven: the period is WithInterval's, which no
	// command overrides; periodAssumed: the period in force is the 1 s (30
	// s) assumed, no command having given one; assumedInterval is that
	// period once a row was placed by it.
	intervalCmd string
	// periodNote says that a command in the input set the period, once a
	// row is placed by it (usePeriod); nil when none is pending.
	periodNote      *parse.Diagnostic
	intervalGiven   bool
	periodAssumed   bool
	assumedInterval time.Duration
	// Ticks of a log without times continue across its outputs: an
	// output's tick k is at tickBase + k periods; tickLast is the last
	// tick's time (both from the start), ticked whether there was one.
	tickBase, tickLast int64
	ticked             bool
	// unknownProcs counts process rows without a used-memory value (a
	// placeholder: "[N/A]", "[Not Supported]", null, "-"), the first at
	// line unknownProcLine: kept with their memory unknown, said once.
	unknownProcs, unknownProcLine int
	unknownPIDs                   []int64 // the first few of them, each once
	// unreachable counts the rows whose used memory is an NVML error
	// state rather than a figure ("[GPU is lost]", "[Unknown Error]",
	// "[GPU requires reset]"; dmon's "-" in every reading), the first at
	// line unreachableLine, giving unreachableWhat (what that row gave:
	// "memory.used as [GPU is lost]").
	unreachable, unreachableLine int
	unreachableWhat              string
	// lostHandles counts nvidia-smi's "Unable to determine the device
	// handle for GPU <bus id>: <reason>" lines (lostHandle), the first at
	// line lostLine, reading lostWhat (up to its reason); lostBuses are
	// the bus ids named, each once (the first few).
	lostHandles, lostLine int
	lostWhat              string
	lostBuses             []string
	// lastTickUs is the time tick was last given; newInstant, that the
	// decoder started an output (a table) whose rows are another instant
	// even at the same time as the last; instantGPUs, the GPUs (0 to 63)
	// with a row in the current instant, a bit each.
	lastTickUs  int64
	newInstant  bool
	instantGPUs uint64
	// latestUs is the latest time a row gave; backs counts the rows more
	// than backStep behind it, the first at line backLine (timeBack).
	latestUs, backFrom, backTo int64
	backs, backLine            int
	// paste: the input holds shell prompt lines (several outputs); cmdCont:
	// the last line was a command line ending in a line continuation, so
	// the next one is the command's too; skipped holds the first output
	// of the paste skipped for want of a memory figure (errNoMemoryFigure).
	paste   bool
	cmdCont bool
	skipped error
	// segLine is the line of the prompt the output being read follows
	// (0: none), segRowsAt the rows read before that output.
	segLine   int
	segRowsAt int64
	// hosts: the hosts a paste's outputs name, to say which GPUs of an
	// output without one are those of a named host (pastehost.go).
	hosts pasteHosts
	// segNote is the warning that the output after a prompt is in
	// another layout, said once its decoder takes a line.
	segNote *parse.Diagnostic
	// firstBad is the first row skipped as unreadable (rowError), the
	// error of a log none of whose rows could be read; skippedRows counts
	// the rows and records skipped.
	firstBad    *rowError
	skippedRows int
	// noEOL: the line being decoded is the input's last and has no line
	// ending, so it may be cut short (see cutNote).
	noEOL bool
	// wrap is taken off every line before it is decoded: the quote marks
	// or log stamps the layout was recognised behind (sniffWrapped).
	wrap wrap
	// fenced: the input's first line of text is a Markdown fence, so
	// lines outside its code blocks (fenceOpen false) are prose, not
	// rows.
	fenced, fenceOpen bool
	// lead: the first lead lines are text before the first output
	// (sniffLed), skipped.
	lead int
	// dateText is the line of date(1)'s output a dater is told of, for
	// its warnings.
	dateText string
}

// dater is a decoder that takes the time of the samples after it from a
// line of date(1)'s output (a loop of "date; curl .../metrics").
type dater interface {
	// atDate is told of a date line n at t (µs since the epoch).
	atDate(t int64, n int)
}

// date handles a line of date(1)'s output and reports whether it was one:
// the decoder that can takes its time; another skips it, with a warning.
func (r *Reader) date(line []byte) bool {
	t, ok := r.dateLine(line)
	if !ok {
		return false
	}
	switch d := r.dec.(type) {
	case dater:
		r.dateText = snippet(trimSpace(line))
		d.atDate(t, r.line)
	case skipDecoder:
	default:
		r.meta.Skipped++
		r.meta.Warnings.Once("date skipped", parse.LineNote(r.line, "date's output (%q) among the samples is skipped: the %s layout takes no time from it", snippet(trimSpace(line)), r.meta.Format))
	}
	return true
}

// rowError is the error of one row or record that cannot be read (a line
// pasted among the rows, a truncated last row, a value that is not one):
// the Reader skips the row, counts its lines (Metadata.SkippedLines) and
// reads on, block by block; only a log none of whose rows could be read
// fails, with the first such error. Lines are the row's or record's
// first and last lines.
type rowError struct {
	err         *parse.Error
	first, last int
}

func (e *rowError) Error() string { return e.err.Error() }
func (e *rowError) Unwrap() error { return e.err }

// rowErrorf returns the rowError of the row at line n.
func (r *Reader) rowErrorf(n int, format string, args ...any) error {
	return &rowError{err: parse.LineErrorf(r.name, n, format, args...), first: n, last: n}
}

// asRowError makes err, a *parse.Error about the record on lines first
// to last, a rowError; other errors are returned as they are.
func asRowError(err error, first, last int) error {
	var pe *parse.Error
	if errors.As(err, &pe) {
		var re *rowError
		if errors.As(err, &re) {
			return err
		}
		return &rowError{err: pe, first: first, last: last}
	}
	return err
}

// MaxSkippedAt bounds the line numbers of skipped rows Metadata keeps.
const MaxSkippedAt = 10

// skipRow skips the row or record of e: counted, its first line kept.
func (r *Reader) skipRow(e *rowError) {
	if r.firstBad == nil {
		r.firstBad = e
	}
	r.meta.SkippedLines += max(e.last-e.first+1, 1)
	r.skippedRows++
	if len(r.meta.SkippedAt) < MaxSkippedAt {
		r.meta.SkippedAt = append(r.meta.SkippedAt, e.first)
	}
}

// skippedNote says which rows were skipped, once the input is read.
func (r *Reader) skippedNote() {
	if r.firstBad == nil {
		return
	}
	at := make([]string, len(r.meta.SkippedAt))
	for i, n := range r.meta.SkippedAt {
		at[i] = fmt.Sprint(n)
	}
	where := "line " + at[0]
	if len(at) > 1 {
		where = "lines " + strings.Join(at, ", ")
		if len(r.meta.SkippedAt) == MaxSkippedAt && r.skippedRows > MaxSkippedAt {
			where += ", ..."
		}
	}
	lines := "1 line that could not be read as samples was"
	if r.meta.SkippedLines != 1 {
		lines = fmt.Sprintf("%d lines that could not be read as samples were", r.meta.SkippedLines)
	}
	r.meta.Warnings.Add(parse.InlineNote(r.meta.SkippedAt[0], -1, "read in part: %s skipped (%s; the first: %s); the samples are those of the rest of the log",
		lines, where, r.firstBad.err.Msg))
}

// errNoMemoryFigure classifies the error of an output that carries no
// memory figure at all (dmon or pmon without fb, a --query CSV without
// memory.used): alone it ends the input, but in a paste of several
// outputs it is skipped with a warning.
var errNoMemoryFigure = parse.NewKind("no memory figure")

// noMemoryf returns the *parse.Error, at line n, of an output without a
// memory figure.
func (r *Reader) noMemoryf(n int, format string, args ...any) error {
	e := parse.LineErrorf(r.name, n, format, args...)
	e.Err = errNoMemoryFigure
	return e
}

// lastOutputNotRead says, as a warning and in Metadata.Cut, that the
// last output of a paste, after the prompt at line segLine, gave no
// sample (err, its decoder's error: an -q report or -q -x document cut
// before any GPU's memory, a header without rows), while the outputs
// before it were read (said: its decoder said where it was cut, in a
// warning and in Metadata.Cut, and nothing more is). An output without
// any memory figure (errNoMemoryFigure: dmon without fb) is skipped as
// one, not a cut.
func (r *Reader) lastOutputNotRead(err error, said bool) {
	msg, line := err.Error(), r.line
	var pe *parse.Error
	if errors.As(err, &pe) {
		msg, line = pe.Msg, max(pe.Line, 1)
	}
	if errors.Is(err, errNoMemoryFigure) {
		r.meta.Warnings.Linef(line, "%s: an output without a memory figure, skipped", msg)
		return
	}
	if said {
		return // the decoder's warning and Metadata.Cut say where it stops
	}
	why := fmt.Sprintf("the last output (after the prompt at line %d) gave no sample (%s)", r.segLine, msg)
	r.meta.Warnings.Linef(line, "%s; the samples are those of the outputs before it", why)
	r.addCut(fmt.Sprintf("%s, at line %d", why, line))
}

// addCut adds why, what cut one output of the input short, to
// Metadata.Cut: a paste of several outputs after shell prompts may hold
// more than one cut, each said.
func (r *Reader) addCut(why string) {
	if r.meta.Cut == "" {
		r.meta.Cut = why
		return
	}
	r.meta.Cut += "; " + why
}

// skipOutput skips the rest of the output being read, whose decoder
// failed with err (errNoMemoryFigure) at line n of a paste.
func (r *Reader) skipOutput(err error, n int) {
	msg := err.Error()
	var pe *parse.Error
	if errors.As(err, &pe) {
		msg = pe.Msg
		if pe.Line > 0 {
			n = pe.Line // a header's fault, found at its first row
		}
	}
	r.meta.Warnings.Linef(n, "%s: an output without a memory figure, skipped", msg)
	r.segNote = nil
	if r.skipped == nil {
		r.skipped = err
	}
	if r.meta.Rows == 0 {
		r.meta.Format = parse.FormatUnknown // the next output's layout names the input
	}
	r.dec = skipDecoder{r}
}

// NewReader returns a Reader of the log in r (already decompressed;
// parse.Open removes gzip). name names the input in errors. When r has
// bufio.Reader's Peek and ReadSlice (see lineSource), lines are read
// through them.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	o := options{ReaderOptions: parse.DefaultReaderOptions(1 << 16), loc: time.UTC}
	for _, f := range opts {
		f(&o)
	}
	if o.loc == nil {
		o.loc = time.UTC
	}
	var src lineSource
	switch lr := r.(type) {
	case *bufio.Reader:
		if lr.Size() >= parse.SniffLen {
			src = lr
		}
	case lineSource:
		src = lr
	}
	if src == nil {
		src = bufio.NewReaderSize(r, parse.SniffLen)
	}
	rd := &Reader{name: name, opt: o, src: src, meta: Metadata{Warnings: parse.NewWarnings(name)}}
	rd.civil.loc = o.loc
	rd.civil.warn, rd.civil.line = &rd.meta.Warnings, &rd.line
	// The samples are gathered in Go slices and made a batch at once (see
	// columns), not appended to a RecordBuilder: no table builders.
	rd.out = parse.StartTables(&rd.tableReader, o.ReaderOptions, 0, rd.fill)
	return rd
}

// lineSource is what a Reader reads lines from: bufio.Reader's Peek and
// ReadSlice, with Peek of at least parse.SniffLen bytes. A reader given
// to NewReader that has them (a bufio.Reader that large, or a read-ahead
// that serves lines from its own buffers) is read through them, without
// a buffer of the Reader's own to copy its bytes into.
type lineSource interface {
	Peek(n int) ([]byte, error)
	ReadSlice(delim byte) ([]byte, error)
}

// tableReader is the reader shell every family shares.
type tableReader = parse.TableReader[Table]

// fill reads lines until a batch's worth of samples, or the end of the
// input, and queues them as a batch.
func (r *Reader) fill() error {
	if r.dec == nil {
		if err := r.start(); err != nil {
			return err
		}
	}
	for r.col.len() < r.opt.BatchSize && !r.done {
		if err := r.step(); err != nil {
			return err
		}
	}
	if r.col.len() > 0 {
		r.out.Push(TableSamples, r.batch())
	}
	if r.done {
		r.out.End()
	}
	return nil
}

// step reads and decodes one line, or ends the input.
func (r *Reader) step() error {
	line, err := r.readLine()
	if err != nil && !errors.Is(err, io.EOF) {
		return &parse.Error{File: r.name, Offset: -1, Line: r.line + 1, Msg: "reading", Err: err}
	}
	if line != nil {
		r.line++
		r.noEOL = errors.Is(err, io.EOF)
		if r.cmdCont {
			// "  --format=csv" after "$ nvidia-smi \": the command's, not output.
			r.cmdCont = continues(line)
			r.nonEmpty = true
			return r.endAt(err)
		}
		if r.line <= r.lead {
			// Text before the first output (sniffLed): a line of prose,
			// neither a row nor a cut.
			if isFence(line) {
				// A fence before the text opens the code block the
				// output is in: as in the switch below.
				r.fenced = r.fenced || !r.nonEmpty
				r.fenceOpen = !r.fenceOpen
			} else if t := trimSpace(line); len(t) > 0 {
				r.meta.Warnings.Once("lead", parse.LineNote(r.line, "the text before the first output (%q) is not read", snippet(t)))
			}
			return r.endAt(err)
		}
		if d, ok := r.dec.(*smiDecoder); ok && !r.opt.general {
			if done, derr := d.fastRow(line, r.line); done || derr != nil {
				r.nonEmpty = true
				r.segLines++
				r.segText = true
				return derr
			}
		}
		nonEmptyBefore := r.nonEmpty
		if len(trimSpace(line)) > 0 {
			r.nonEmpty = true
		}
		switch {
		case isPromptLine(line):
			cont := continues(line) // before newSegment's Peek, which may reuse line's buffer
			if serr := r.newSegment(line, r.line); serr != nil {
				return serr
			}
			r.cmdCont = cont
		case isTerminalNoise(line):
		case isFence(line):
			// A Markdown fence around a paste: neither a row nor a cut.
			// An input that opens with one is Markdown (an issue's text):
			// what lies between its code blocks is prose.
			r.fenced = r.fenced || !nonEmptyBefore
			r.fenceOpen = !r.fenceOpen
		case r.fenced && !r.fenceOpen && len(trimSpace(line)) > 0:
			r.meta.Skipped++
			r.meta.Warnings.Once("outside fences", parse.LineNote(r.line, "text outside the Markdown code blocks (%q) is not read", snippet(trimSpace(line))))
		case !r.segText && isOutputLabel(trimSpace(line)):
			// "Output:" between a command and its output's first line.
		case isElision(trimSpace(line)):
			// "..." for lines left out of a paste: what they held is missing.
			r.meta.Skipped++
			r.meta.Warnings.Linef(r.line, "%q stands for lines left out of the paste: their samples are missing", snippet(trimSpace(line)))
		case maybeDateLine(line) && r.date(line):
			// "Thu May  2 10:00:00 UTC 2024": date's, between outputs.
		default:
			r.segLines++
			r.segText = r.segText || len(trimSpace(line)) > 0
			if derr := r.dec.line(line, r.line); derr != nil {
				var bad *rowError
				switch {
				case errors.As(derr, &bad):
					r.skipRow(bad)
				case r.paste && errors.Is(derr, errNoMemoryFigure):
					r.skipOutput(derr, r.line)
				default:
					return derr
				}
			} else if r.segNote != nil && !headerPending(r.dec) {
				r.meta.Warnings.Add(*r.segNote)
				r.segNote = nil
			}
		}
	}
	return r.endAt(err)
}

// maxNamedPIDs bounds the pids a warning about processes names.
const maxNamedPIDs = 8

// pidList names pids, "pid 12345" or "pids 12345, 12346", with "..."
// when n rows had more.
func pidList(pids []int64, n int) string {
	var b strings.Builder
	b.WriteString("pid")
	if len(pids) > 1 {
		b.WriteByte('s')
	}
	for i, p := range pids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %d", p)
	}
	if len(pids) == maxNamedPIDs && n > len(pids) {
		b.WriteString(", ...")
	}
	return b.String()
}

// endAt ends the input when err, the error of reading the last line, is
// io.EOF.
func (r *Reader) endAt(err error) error {
	if errors.Is(err, io.EOF) {
		r.done = true
		if !r.nonEmpty {
			return parse.LineErrorf(r.name, max(r.line, 1), "no samples: the input has only blank lines")
		}
		cutBefore := r.meta.Cut
		if err := r.dec.end(r.line); err != nil {
			var bad *rowError
			switch {
			case errors.As(err, &bad):
				r.skipRow(bad) // a truncated last record
			case r.firstBad != nil && r.meta.Rows == 0 && !r.paste && errors.Is(err, errNoMemoryFigure):
				// No memory figure in the whole log (dmon without fb, DCGM
				// without its framebuffer metrics): that is why there is
				// no sample, not the damaged line.
				return err
			case r.firstBad != nil && r.meta.Rows == 0:
				// "a header without rows": none could be read.
				return r.firstBad.err
			case r.paste && r.segRowsAt > 0 && r.meta.Rows == r.segRowsAt:
				// The last output of a paste gave nothing, those
				// before it did: they are read, and it is said.
				r.lastOutputNotRead(err, r.meta.Cut != cutBefore)
			default:
				return err
			}
		}
		if r.firstBad != nil && r.meta.Rows == 0 && r.meta.Ticks == 0 {
			return r.firstBad.err // nothing could be read: the first row's error
		}
		r.rowOrderNote()
		r.skippedNote()
		r.backNote()
		r.unreachableNote()
		r.lostHandleNote()
		if _, table := r.dec.(*smiTextDecoder); r.unknownProcs > 0 && !table { // nvidia-smi's text says why, row by row
			pids := pidList(r.unknownPIDs, r.unknownProcs)
			what := fmt.Sprintf("%d process rows (the first at line %d; %s) give no memory for their process", r.unknownProcs, r.unknownProcLine, pids)
			if r.unknownProcs == 1 {
				what = fmt.Sprintf("1 process row (line %d; %s) gives no memory for its process", r.unknownProcLine, pids)
			}
			r.meta.Warnings.Add(parse.InlineNote(r.unknownProcLine, -1, "%s (a placeholder such as [N/A] or [Not Supported], or null): the driver does not report per-process memory there (Windows' WDDM driver model, some vGPU and container setups); those processes are kept with their memory unknown, not 0, and count in no sum of process memory", what))
		}
		if r.meta.Rows > 0 && r.usedRows == 0 {
			// Samples were read, but none says how much memory is used
			// (DCGM's FB_FREE alone, memory.used "[N/A]" in every row):
			// nothing to judge, which must not read as "no findings".
			if who := r.unifiedNoMemory(); who != "" {
				return r.errorf(r.line, "no sample holds a used-memory value (%s): %s, so no GPU memory trend can be read from this log: %s", r.samplesRead(), who, r.unifiedWhatNext())
			}
			if r.usedLost > 0 {
				// The figure was logged, and its line cut: say so, not
				// "log it".
				what := fmt.Sprintf("the %d lines that held one (the first at line %d) could not be read (%s)", r.usedLost, r.usedLostLine, r.usedLostWhy)
				if r.usedLost == 1 {
					what = fmt.Sprintf("the line that held one could not be read (%s)", r.usedLostWhy)
				}
				return r.errorf(r.usedLostLine, "no sample holds a used-memory value (%s read): %s: the line is cut or damaged; give it whole", rowsCount(r.meta.Rows), what)
			}
			return r.errorf(r.line, "no sample holds a used-memory value (%s read, their used memory missing or a placeholder): log memory.used, dmon's fb or DCGM_FI_DEV_FB_USED", rowsCount(r.meta.Rows))
		}
		if r.gpuRows > 0 && r.gpuUsedRows == 0 {
			// The processes' memory was read, the GPU's own was not (a
			// GB10's table: "Not Supported", its processes in MiB).
			if who := r.unifiedNoMemory(); who != "" {
				r.meta.Warnings.Addf("no GPU sample holds the GPU's used memory: %s: its processes' memory is read (a trend of each), but not the GPU's own, its free memory or what no process accounts for", who)
			}
		}
		return nil
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
	plainHead := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(plainHead, 0x1b) >= 0 {
		plainHead = stripANSI(nil, plainHead)
	}
	sniffed, w, unwrapped, lead := sniffLed(plainHead)
	if f == parse.FormatUnknown || f == sniffed {
		// The lines are read without the fence, quote marks or stamps
		// the layout was recognised behind (wrap), and without the lines
		// of text before its first output (lead).
		f, r.wrap, r.lead = sniffed, w, lead
		if unwrapped != nil {
			head = unwrapped
		} else if lead > 0 {
			head = afterLines(head, lead)
		}
	}
	if f == parse.FormatUnknown && len(r.opt.fields) > 0 && looksLikeCSV(skipDateLines(skipPrompts(head))) {
		f = FormatForFields(r.opt.fields)
	}
	r.paste = len(untilPrompt(head)) < len(head)
	if r.paste {
		r.hosts.scanHosts(head)
	}
	if err := r.useFormat(f); err != nil {
		return &parse.Error{File: r.name, Offset: -1, Line: 1, Err: parse.ErrNotMine,
			Msg: "not an NVML sample log (nvidia-smi --query-gpu/--query-compute-apps CSV, dmon/pmon text, pynvml JSON lines, gpustat --json or text, DCGM exporter metrics, nvidia-smi's table or -q report)" + notMineHint(plainHead, len(r.opt.fields) > 0)}
	}
	r.useFleet(f, untilPrompt(skipPrompts(head)))
	if body := skipPrompts(head); len(untilPrompt(body)) < len(body) && sniffOne(untilPrompt(body)) == parse.FormatUnknown {
		// A paste whose first output, before another prompt, is in no
		// layout: skip it; the outputs after the prompts are read.
		r.dec = skipDecoder{r}
		if !isPromptLine(firstLine(head)) { // else the prompt's segment says so
			r.meta.Warnings.Addf("the text before the first output in a layout gpuleak reads (%s) was skipped", f)
		}
	}
	r.intervalGiven = r.opt.interval > 0
	if !r.intervalGiven {
		// The command lines before the first output (a shell prompt's, one
		// written above it) give its period; a command further on gives
		// the period of the output after it (newSegment).
		if d, cmd := commandInterval(head[:len(head)-len(skipPrompts(head))]); d > 0 {
			r.opt.interval, r.intervalCmd = d, cmd
		}
	}
	if r.opt.interval == 0 {
		r.periodAssumed = true
		r.opt.interval = time.Second
		if f == FormatDCGMPrometheus {
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
	if bytes.IndexByte(b, 0x1b) >= 0 {
		// A terminal's escape sequences (colours; the screen codes of a
		// "script" capture of watch nvidia-smi): the text without them.
		r.ansi = stripANSI(r.ansi[:0], b)
		b = r.ansi
		if r.ansiLines == 0 {
			r.meta.Warnings.Linef(r.line+1, "terminal escape sequences (colours, or the screen codes of a terminal capture) were removed from the text before reading it")
		}
		r.ansiLines++
	}
	if r.wrap != (wrap{}) {
		// After the escape sequences: Ray colours its workers' tags.
		b = r.wrap.strip(b)
	}
	return b, err
}

// Format is the layout being read; parse.FormatUnknown before the first
// call of Next.
func (r *Reader) Format() parse.Format { return r.meta.Format }

// Metadata describes the log; it is complete after the last batch.
func (r *Reader) Metadata() *Metadata {
	r.meta.Interval = r.opt.interval
	if r.meta.IntervalAssumed {
		// Rows placed by an assumed period: rates per sample are given
		// in it.
		r.meta.Interval = r.assumedInterval
	}
	if r.done && r.Err() == nil && r.meta.Rows > 0 && (r.opt.hasDate || r.opt.hasStart) && r.meta.Clock == ClockAbsolute {
		// WithDate and WithStart serve logs without dates or times: say
		// so when the log's own timestamps made them unused.
		r.meta.Warnings.Addf("the given date or start time was not used: the log's timestamps carry their own date")
	}
	return &r.meta
}

// errorf returns a *parse.Error at line n.
func (r *Reader) errorf(n int, format string, args ...any) error {
	return parse.LineErrorf(r.name, n, format, args...)
}

// tick records that the log covers time t (µs) even when no sample
// comes of it: a row of GPU gpu's own memory when gpuRow, else a process
// row or a line without a sample.
//
// It also counts the sampling instants (Metadata.Instants): rows at the
// time of the row before are of its instant; so is a GPU's row at
// another time when that GPU has none in the instant yet (a tool that
// stamps each GPU's row as it reads it, a few ms apart; GPUs 0 to 63);
// any other row starts an instant, as does an output the decoder starts
// (newInstant).
func (r *Reader) tick(t int64, gpu int32, gpuRow bool) {
	if r.meta.Ticks > 0 && t < r.latestUs-backStep && r.meta.Clock != ClockRowOrder {
		r.timeBack(t)
	}
	if r.meta.Ticks == 0 || t > r.latestUs {
		r.latestUs = t
	}
	if r.meta.Ticks == 0 || t < r.meta.FirstUs {
		r.meta.FirstUs = t
	}
	if r.meta.Ticks == 0 || t > r.meta.LastUs {
		r.meta.LastUs = t
	}
	var bit uint64 // the GPU's bit in instantGPUs; 0: none
	if gpuRow && uint32(gpu) < 64 {
		bit = 1 << uint32(gpu)
	}
	switch {
	case r.meta.Ticks == 0 || r.newInstant:
		r.startInstant(t, bit)
	case t == r.lastTickUs:
		r.instantGPUs |= bit
	case bit != 0 && r.instantGPUs != 0 && r.instantGPUs&bit == 0:
		r.instantGPUs |= bit
		r.lastTickUs = t
	default:
		r.startInstant(t, bit)
	}
	r.meta.Ticks++
}

// backStep is how far a row's time may fall behind the latest time read
// before the log's time is said to go back: rows of one tick carry times a
// few ms apart, not always in order.
const backStep = int64(time.Second / time.Microsecond)

// timeBack notes a row whose time t falls behind the latest time read:
// the log's time went back (a clock stepped back: NTP, a daylight saving
// time change in a log of local times; or another log appended to this
// one, another host's or an earlier run's). Its rows are placed by their
// times all the same, so samples before and after the step interleave;
// the warning (at the first such row, with the count) says so.
func (r *Reader) timeBack(t int64) {
	if r.backs == 0 {
		r.backLine, r.backFrom, r.backTo = max(r.line, 1), r.latestUs, t
	}
	r.backs++
}

// backNote is timeBack's warning, once the log is read.
func (r *Reader) backNote() {
	if r.backs == 0 {
		return
	}
	f := func(us int64) string { return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.000") }
	more := ""
	if r.backs > 1 {
		more = fmt.Sprintf(" (%d rows fall behind an earlier time, this the first)", r.backs)
	}
	r.meta.Warnings.Add(parse.LineNote(r.backLine, "the log's time goes back here by %v, from %s to %s%s: a clock stepped back (NTP, a daylight saving time change in local times: give --tz), or another log appended to this one (another host's, an earlier run's: nvidia-smi's CSV names no host); rows are placed by their times, so those before and after the step interleave and the trends mix them: give each log as a file of its own",
		time.Duration(r.backFrom-r.backTo)*time.Microsecond, f(r.backFrom), f(r.backTo), more))
}

// startInstant counts a sampling instant starting at time t, with a row
// of the GPU of bit (0: none) in it.
func (r *Reader) startInstant(t int64, bit uint64) {
	r.meta.Instants++
	r.lastTickUs, r.newInstant, r.instantGPUs = t, false, bit
}

// sample is one row being assembled. Byte slices may point into the
// current line; nil or empty means null.
type sample struct {
	timeUs                                  int64
	host, uuid, gpuName, process            []byte
	bus                                     []byte // pci.bus_id, of a --query-gpu CSV
	pod, namespace, container               []byte
	gpu                                     int32
	pid                                     int64
	used, total, free, reserved             int64
	hasGPU, hasPID                          bool
	hasUsed, hasTotal, hasFree, hasReserved bool
	conv                                    Convention // the layout's behaviour when arithmetic cannot tell
	// uuidIdx and nameIdx are uuid's and gpuName's index + 1 in the
	// Reader's dictionaries where plainRow's cache knows it, else 0.
	uuidIdx, nameIdx int32
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

// noFigures reads as no figure the 0s a sampler writes for GPU memory
// that NVML did not report (nvmlDeviceGetMemoryInfo's NOT_SUPPORTED on a
// GPU with unified memory, caught and logged as 0): a total of 0 (no GPU
// has no memory), with a used memory of 0 beside it; and a used memory of
// 0 without a total on a GPU that has unified memory by its name. A 0
// read as a figure would make a flat line at 0 B, "no growth", of a GPU
// whose memory no sample saw.
func (r *Reader) noFigures(s *sample) {
	zero := false
	if s.hasTotal && s.total == 0 {
		s.hasTotal, zero = false, true
		r.totalPlaceholders++
		if s.hasUsed && s.used == 0 {
			s.hasUsed = false
			s.hasFree = s.hasFree && s.free != 0
		}
	}
	if s.hasUsed && s.used == 0 && !s.hasTotal && len(s.gpuName) > 0 && unifiedName(string(s.gpuName)) {
		s.hasUsed, zero = false, true
	}
	if zero {
		r.zeroMemory++
	}
}

// emit appends s as a row.
func (r *Reader) emit(s *sample) {
	if !s.hasPID {
		if s.hasTotal && s.total == 0 || s.hasUsed && s.used == 0 && !s.hasTotal {
			r.noFigures(s)
		}
		r.gpuRows++
		if s.hasUsed {
			r.gpuUsedRows++
		}
		if s.hasGPU && s.gpu >= 0 && s.gpu < 64 {
			r.gpuIndices |= 1 << uint(s.gpu)
		}
	}
	conv := s.normalise()
	if len(r.hosts.named) > 0 {
		r.sameGPUNote(s, conv)
	}
	c := &r.col
	c.time = append(c.time, arrow.Timestamp(s.timeUs))
	c.gpu.add(s.gpu, s.hasGPU)
	if !s.hasPID && len(c.pid.v) == 0 { // addNull's first case, inlined: a GPU log has no pid
		c.pid.lead++
		c.pid.nulls++
	} else {
		c.pid.add(s.pid, s.hasPID)
	}
	if !s.hasPID && r.gpuName == "" && len(s.gpuName) > 0 {
		r.gpuName = string(s.gpuName)
	}
	c.used.add(s.used, s.hasUsed)
	if s.hasUsed {
		r.usedRows++
	} else if s.hasPID {
		if r.unknownProcs == 0 {
			r.unknownProcLine = max(r.line, 1)
		}
		r.unknownProcs++
		if len(r.unknownPIDs) < maxNamedPIDs && !slices.Contains(r.unknownPIDs, s.pid) {
			r.unknownPIDs = append(r.unknownPIDs, s.pid)
		}
	}
	c.total.add(s.total, s.hasTotal)
	c.free.add(s.free, s.hasFree)
	c.reserved.add(s.reserved, s.hasReserved)
	c.text[ColHost].addOrNull(s.host)
	if s.uuidIdx > 0 {
		c.text[ColUUID].addKnown(s.uuidIdx - 1)
	} else {
		c.text[ColUUID].addOrNull(s.uuid)
	}
	if s.nameIdx > 0 {
		c.text[ColGPUName].addKnown(s.nameIdx - 1)
	} else {
		c.text[ColGPUName].addOrNull(s.gpuName)
	}
	c.text[ColProcess].addOrNull(s.process)
	c.text[ColPod].addOrNull(s.pod)
	c.text[ColNamespace].addOrNull(s.namespace)
	c.text[ColContainer].addOrNull(s.container)
	c.text[ColSource].addFixed(r.source)
	c.text[ColConvention].addFixed(conventionBytes(conv))
	r.meta.Rows++
	r.tick(s.timeUs, s.gpu, s.hasGPU && !s.hasPID)
}

// conventionBytes is c as bytes, without a conversion per row.
func conventionBytes(c Convention) []byte {
	switch c {
	case ExcludesReserved:
		return excludesReserved
	case IncludesReserved:
		return includesReserved
	case IncludesReservedUnknown:
		return includesReservedUnknown
	case Process:
		return convProcess
	}
	return nil
}

var (
	excludesReserved, includesReserved   = []byte(ExcludesReserved), []byte(IncludesReserved)
	includesReservedUnknown, convProcess = []byte(IncludesReservedUnknown), []byte(Process)
)

// columns accumulate a batch's rows as Go slices; batch turns them into
// Arrow arrays in one pass per column, which costs far less per row than
// appending to Arrow builders value by value.
type columns struct {
	time                             []arrow.Timestamp
	gpu                              nullable[int32]
	pid, used, total, free, reserved nullable[int64]
	text                             [ColConvention + 1]dictColumn // by column index; only text columns are used
}

func (c *columns) len() int { return len(c.time) }

// nullable is a column of values and their validity. A column null in
// every row so far (most of the 16 in a --query-gpu log: no pid, host,
// process or Kubernetes labels) only counts its rows, in lead; a column
// without a null keeps no validity (valid is empty while nulls is 0, and
// as long as v once nulls > 0).
type nullable[T int32 | int64] struct {
	v     []T
	valid []bool
	nulls int
	lead  int // rows, all null, not yet in v and valid (v is empty while lead > 0)
}

func (n *nullable[T]) add(v T, ok bool) {
	if ok && n.nulls == 0 { // small enough to be inlined: most adds
		n.v = append(n.v, v)
		return
	}
	n.addNull(v, ok)
}

// addNull is add where a null is added or was.
func (n *nullable[T]) addNull(v T, ok bool) {
	if !ok && len(n.v) == 0 {
		n.lead++
		n.nulls++
		return
	}
	for ; n.lead > 0; n.lead-- {
		n.v = append(n.v, 0)
		n.valid = append(n.valid, false)
	}
	if !ok && n.nulls == 0 {
		// The first null after values: they were all valid.
		for range n.v {
			n.valid = append(n.valid, true)
		}
	}
	n.v = append(n.v, v)
	if !ok {
		n.nulls++
	}
	if n.nulls > 0 {
		n.valid = append(n.valid, ok)
	}
}

// at is row i's value and whether it is valid.
func (n *nullable[T]) at(i int) (T, bool) {
	if n.lead > 0 {
		var zero T
		return zero, false // every row so far is null
	}
	return n.v[i], n.isValid(i)
}

// isValid reports whether value i of v is valid.
func (n *nullable[T]) isValid(i int) bool { return n.nulls == 0 || n.valid[i] }

func (n *nullable[T]) reset() { n.v, n.valid, n.nulls, n.lead = n.v[:0], n.valid[:0], 0, 0 }

// valuesBuilder is an Arrow builder of T values.
type valuesBuilder[T int32 | int64] interface {
	AppendValues([]T, []bool)
	AppendNulls(int)
}

// appendNullable appends column n to b.
func appendNullable[T int32 | int64](n *nullable[T], b valuesBuilder[T]) {
	if n.lead > 0 {
		b.AppendNulls(n.lead)
		return
	}
	b.AppendValues(n.v, n.validity())
}

// validity returns the validity slice for AppendValues: nil when all are valid.
func (n *nullable[T]) validity() []bool {
	if n.nulls == 0 {
		return nil
	}
	return n.valid
}

// dictColumn interns a text column: indices per row into values, the
// dictionary, which grows over the whole log (every batch carries all of
// it, so indices mean the same in every batch).
type dictColumn struct {
	index   map[string]int32
	values  []string
	idx     nullable[int32]
	last    string
	lastIdx int32
	hasLast bool
	// lastFixed is the last value addFixed added, nil after add.
	lastFixed []byte
}

// addOrNull is add, its common null case (most text columns of a log
// are null in every row) inlined; for columns addFixed never serves (whose
// lastFixed add need not clear).
func (d *dictColumn) addOrNull(v []byte) {
	if len(v)|len(d.idx.v) == 0 { // (one test: within the inlining budget)
		d.idx.lead++
		d.idx.nulls++
	} else {
		d.add(v)
	}
}

func (d *dictColumn) add(v []byte) {
	if d.lastFixed != nil { // (a test, not a store: a store of a pointer costs a write barrier check)
		d.lastFixed = nil
	}
	if len(v) == 0 {
		d.idx.add(0, false)
		return
	}
	if d.hasLast && sameText(v, d.last) {
		d.idx.add(d.lastIdx, true)
		return
	}
	// Rows of a few GPUs (or processes) take turns: the value after the
	// last one, or the first, saves hashing the value.
	if n := d.lastIdx + 1; d.hasLast && int(n) < len(d.values) && sameText(v, d.values[n]) {
		d.last, d.lastIdx = d.values[n], n
		d.idx.add(n, true)
		return
	}
	if len(d.values) > 0 && string(v) == d.values[0] {
		d.last, d.lastIdx, d.hasLast = d.values[0], 0, true
		d.idx.add(0, true)
		return
	}
	i, ok := d.index[string(v)]
	if !ok {
		if d.index == nil {
			d.index = map[string]int32{}
		}
		i = int32(len(d.values))
		d.values = append(d.values, string(v))
		d.index[d.values[i]] = i
	}
	d.last, d.lastIdx, d.hasLast = d.values[i], i, true
	d.idx.add(i, true)
}

// addKnown is add of the value at index i of the dictionary, known
// without looking it up: indices never change once given.
func (d *dictColumn) addKnown(i int32) {
	if d.lastFixed != nil {
		d.lastFixed = nil
	}
	if !d.hasLast || d.lastIdx != i {
		d.last, d.lastIdx, d.hasLast = d.values[i], i, true
	}
	d.idx.add(i, true)
}

// lastKnown is the index + 1 of the value the last add added, when
// added is true (it was not a null), else 0: addKnown's argument + 1.
func (d *dictColumn) lastKnown(added bool) int32 {
	if !added {
		return 0
	}
	return d.lastIdx + 1
}

// addFixed is add for values whose bytes never change once added (the
// format's name, the conventions' constants): the same slice as the last
// value is that value, known without comparing its bytes.
func (d *dictColumn) addFixed(v []byte) {
	if len(v) > 0 && d.hasLast && len(v) == len(d.lastFixed) && &v[0] == &d.lastFixed[0] {
		d.idx.add(d.lastIdx, true)
		return
	}
	d.add(v)
	d.lastFixed = v
}

// sameText is string(v) == s, its last bytes compared first: values that
// take turns (GPU UUIDs "GPU-...-f58c08f17770", "...71") often differ only
// there.
func sameText(v []byte, s string) bool {
	return len(v) == len(s) && (len(v) == 0 || v[len(v)-1] == s[len(s)-1]) && string(v) == s
}

// batch builds a record batch of the accumulated rows and resets the
// columns.
func (r *Reader) batch() arrow.RecordBatch {
	c := &r.col
	mem := r.opt.Allocator
	n := c.len()
	cols := make([]arrow.Array, len(Schema.Fields()))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	tb := array.NewTimestampBuilder(mem, timestampUTC)
	tb.AppendValues(c.time, nil)
	cols[ColTime] = tb.NewArray()
	tb.Release()
	gb := array.NewInt32Builder(mem)
	appendNullable(&c.gpu, gb)
	cols[ColGPU] = gb.NewArray()
	gb.Release()
	for _, x := range []struct {
		col int
		n   *nullable[int64]
	}{{ColPID, &c.pid}, {ColUsed, &c.used}, {ColTotal, &c.total}, {ColFree, &c.free}, {ColReserved, &c.reserved}} {
		b := array.NewInt64Builder(mem)
		appendNullable(x.n, b)
		cols[x.col] = b.NewArray()
		b.Release()
		x.n.reset()
	}
	for _, col := range []int{ColHost, ColUUID, ColGPUName, ColProcess, ColPod, ColNamespace, ColContainer, ColSource, ColConvention} {
		cols[col] = c.text[col].array(mem, Schema.Field(col).Type.(*arrow.DictionaryType))
	}
	c.time = c.time[:0]
	c.gpu.reset()
	return array.NewRecordBatch(Schema, cols, int64(n))
}

// array builds the column's dictionary array and resets its indices.
func (d *dictColumn) array(mem memory.Allocator, typ *arrow.DictionaryType) arrow.Array {
	var indices arrow.Array
	switch typ.IndexType.ID() {
	case arrow.INT8:
		b := array.NewInt8Builder(mem)
		b.Reserve(len(d.idx.v) + d.idx.lead)
		b.AppendNulls(d.idx.lead)
		for i, v := range d.idx.v {
			if d.idx.isValid(i) {
				b.UnsafeAppend(int8(v))
			} else {
				b.UnsafeAppendBoolToBitmap(false)
			}
		}
		indices = b.NewArray()
		b.Release()
	default:
		b := array.NewInt32Builder(mem)
		appendNullable(&d.idx, b)
		indices = b.NewArray()
		b.Release()
	}
	defer indices.Release()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues(d.values, nil)
	dict := sb.NewArray()
	sb.Release()
	defer dict.Release()
	d.idx.reset()
	return array.NewDictionaryArray(typ, indices, dict)
}

// unifiedNames are words in the names of NVIDIA GPUs with unified memory
// (the system's memory, shared with the CPU), for which NVML reports no
// device memory: DGX Spark's "NVIDIA GB10", Jetson modules (Orin,
// Xavier, Thor; Tegra).
var unifiedNames = []string{"GB10", "Jetson", "Orin", "Xavier", "Thor", "Tegra"}

// unifiedName reports whether a GPU's name is one of unifiedNames'.
func unifiedName(name string) bool {
	low := strings.ToLower(name)
	for _, w := range unifiedNames {
		if strings.Contains(low, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// unreachableState reports whether a used-memory placeholder is one of
// the error states nvidia-smi prints where NVML cannot reach the GPU: a
// GPU fallen off the bus (Xid 79) reads "[GPU is lost]" in every field of
// its row while the logger goes on.
func unreachableState(v []byte) bool {
	for _, s := range []string{"[GPU is lost]", "[Unknown Error]", "[GPU requires reset]"} {
		if bytes.EqualFold(v, []byte(s)) {
			return true
		}
	}
	return false
}

// unreachableWhy is what leaves a GPU out of NVML's reach, as the
// warnings of its rows (unreachableNote) and of the lines printed in
// their place (lostHandleNote) say it.
const unreachableWhy = `(after an Xid 79, "GPU has fallen off the bus", or an error that needs a GPU reset; the kernel log's NVRM: Xid lines say which)`

// unreachableNote warns of the rows whose used memory was an error state
// (unreachableState): no samples, so the GPU's series ends at its last
// reading, and the log says why.
func (r *Reader) unreachableNote() {
	if r.unreachable == 0 {
		return
	}
	what := fmt.Sprintf("%d rows (the first at line %d) give", r.unreachable, r.unreachableLine)
	if r.unreachable == 1 {
		what = fmt.Sprintf("1 row (line %d) gives", r.unreachableLine)
	}
	r.meta.Warnings.Add(parse.InlineNote(r.unreachableLine, -1, "%s %s: NVML could not reach the GPU "+unreachableWhy+"; those rows are no samples, so the GPU's series ends at its last reading", what, r.unreachableWhat))
}

// lostHandleRe matches the line nvidia-smi prints, in every layout (its
// table, -q, --query-gpu), for a GPU that NVML cannot reach, in place of
// its rows: "Unable to determine the device handle for GPU
// 0000:02:00.0: GPU is lost.  Reboot the system to recover this GPU"
// (JosephKJ/OWOD#81), "... for GPU0000:07:00.0: Unknown Error"
// (pdbear/syno_nvidia_gpu_driver#22). Its groups: the bus id, the reason.
var lostHandleRe = lazyre.New(`Unable to determine the device handle for GPU ?([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+)\s*:\s*([^.]*[^.\s])`)

// maxLostBuses bounds the bus ids lostHandleNote names.
const maxLostBuses = 4

// lostHandle counts line b (number n) when it is nvidia-smi's "Unable to
// determine the device handle" line (lostHandleRe), and reports whether
// it was.
func (r *Reader) lostHandle(b []byte, n int) bool {
	if !bytes.Contains(b, []byte("device handle")) {
		return false
	}
	m := lostHandleRe.FindSubmatch(b)
	if m == nil {
		return false
	}
	if r.lostHandles == 0 {
		r.lostLine, r.lostWhat = n, string(m[0])
	}
	r.lostHandles++
	if bus := string(m[1]); len(r.lostBuses) < maxLostBuses && !slices.Contains(r.lostBuses, bus) {
		r.lostBuses = append(r.lostBuses, bus)
	}
	return true
}

// lostHandleNote warns of nvidia-smi's lines for a GPU it could not reach
// (lostHandle): that GPU has no row in those outputs, so its series ends
// at its last reading, and the log says why.
func (r *Reader) lostHandleNote() {
	if r.lostHandles == 0 {
		return
	}
	more := ""
	switch {
	case r.lostHandles == 2:
		more = ", and 1 more such line"
	case r.lostHandles > 2:
		more = fmt.Sprintf(", and %d more such lines", r.lostHandles-1)
	}
	if len(r.lostBuses) > 1 {
		more += " (GPUs at bus ids " + strings.Join(r.lostBuses, ", ") + ")"
	}
	r.meta.Warnings.Add(parse.InlineNote(r.lostLine, -1, "nvidia-smi printed %q (line %d%s): NVML could not reach that GPU "+unreachableWhy+"; it has no rows in those outputs, so its series ends at its last reading",
		r.lostWhat, r.lostLine, more))
}

// unifiedNoMemory explains a log whose GPU rows give no used memory (an
// nvidia-smi CSV's memory.used "[N/A]" in every row, a table's "Not
// Supported", null in JSON, N/A in dcgmi dmon, the 0s noFigures drops;
// "[Insufficient Permissions]" is another story) when the GPU is one with
// unified memory by its name, or no row gives its total memory either (a
// GPU without memory of its own): what the device is and what to record
// instead; "" otherwise. NVIDIA's DGX Spark known issues list nvidia-smi's
// memory fields as not available on GB10; the per-process used_memory of
// --query-compute-apps is reported there (unsloth PR 10283, a GB10
// owner's test), not on every such device.
func (r *Reader) unifiedNoMemory() string {
	ph := r.usedPlaceholder
	switch strings.ToLower(strings.Trim(ph, "[]*_` ")) { // "**Not Supported**": a paste's Markdown bold
	case "", "n/a", "not supported", "null", "??":
	default:
		return "" // permissions, a lost GPU: not the device's kind
	}
	named := ""
	if unifiedName(r.gpuName) {
		named = r.gpuName
	}
	noTotal := r.gpuRows > 0 && r.totalPlaceholders >= r.gpuRows
	field := r.usedField
	if field == "" {
		field = "memory.used"
	}
	var what string
	switch {
	case ph != "":
		what = field + " is " + ph + " in every sample"
	case r.zeroMemory > 0:
		what = "every sample gives its memory as 0, the figure a sampler writes where NVML reports none"
	default:
		what = "no sample gives its used memory"
	}
	if named == "" && r.gpuName != "" && (noTotal || ph != "") {
		// A GPU by name, not one of unified memory: it has memory of its
		// own, which NVML did not give.
		total := ""
		if noTotal {
			total = ", and so is its total memory"
		}
		why := "NVML gave no figure for it (a driver that cannot see the GPU's memory, some vGPU setups)"
		if r.driverMismatch != "" {
			why = "NVML gave no figure for it: " + r.driverMismatch
		}
		return fmt.Sprintf("%s%s, on the %s, a GPU with memory of its own (not one of the unified-memory GPUs, GB10 or Jetson, for which NVML reports none): %s", what, total, r.gpuName, why)
	}
	switch {
	case named == "" && !noTotal && ph != "":
		// Nothing tells the device: say what would.
		return fmt.Sprintf("%s, NVML gave no figure; a GPU with unified memory (NVIDIA GB10 in a DGX Spark, Jetson) reports none, and so does a driver that cannot see the GPU's memory", what)
	case named == "" && !noTotal:
		return ""
	case named != "":
		return "the " + named + " has unified memory (the system's RAM, shared with the CPU), for which NVML reports no device memory (" + what + ")"
	}
	total := ", nor its total memory"
	switch {
	case field == "memory.used" && ph != "":
		total = " and memory.total is " + ph + " too"
	case ph != "":
		total = " and so is its total memory"
	}
	return what + total + ", as on a GPU with unified memory (NVIDIA GB10 in a DGX Spark, Jetson): it has no memory of its own, it shares the system's RAM with the CPU, and NVML reports no device memory for it"
}

// samplesRead says how many rows were read, and when they are of
// several GPUs, of how many: "4 rows read, of 2 GPUs" (two outputs of a
// 2-GPU machine), not four readings of one.
func (r *Reader) samplesRead() string {
	gpus := bits.OnesCount64(r.gpuIndices)
	if gpus < 2 || r.meta.Rows != r.gpuRows {
		return rowsCount(r.meta.Rows) + " read"
	}
	return fmt.Sprintf("%s read, of %d GPUs", rowsCount(r.meta.Rows), gpus)
}

// unifiedWhatNext says what to record instead of a log unifiedNoMemory
// explains: the unified-memory advice, or, when nothing in the log tells
// the device, the fields that would tell.
func (r *Reader) unifiedWhatNext() string {
	if r.gpuName != "" && !unifiedName(r.gpuName) {
		if r.driverMismatch != "" {
			return "make the driver and nvidia-smi one release (reinstall the driver, reboot), check that nvidia-smi shows the memory (\"used MiB / total MiB\"), then log it (nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 1)"
		}
		return "check that nvidia-smi -q -d MEMORY shows the GPU's FB Memory Usage; where the driver gives none, only PyTorch's own figures tell (a memory snapshot, torch.cuda.memory_stats())"
	}
	if !unifiedName(r.gpuName) && !(r.gpuRows > 0 && r.totalPlaceholders >= r.gpuRows) {
		return "log name and memory.total with it (--query-gpu=timestamp,index,name,memory.total,memory.used) to tell, or give memory.used from a GPU that reports it"
	}
	return unifiedAdviceFor(r.gpuName)
}

// unifiedAdvice says what to record from a GPU that reports no device
// memory through NVML.
const unifiedAdvice = "record the processes' GPU memory instead: nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv -l 1 " +
	"(GB10 reports it; where it is [N/A] too, the driver gives no GPU memory figure at all, and only the system's memory tells: free -m, /proc/meminfo, which gpuleak does not read), " +
	"or PyTorch's own figures (a memory snapshot, torch.cuda.memory_stats())"

// rowsCount says n rows: "1 row", "5 rows" (a row: one GPU's or one
// process's line, metric or entry at one time; not an instant, which
// the report calls a sample).
func rowsCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// nvgpuAdvice says what to record from a Jetson of the nvgpu driver
// (Orin, Xavier: "Orin (nvgpu)"), whose nvidia-smi reports neither the
// GPU's memory nor its processes': the system's tools do (tegrastats,
// jtop; /proc/meminfo's NvMapMemUsed on that driver).
const nvgpuAdvice = "record it with the Jetson's own tools instead: tegrastats or jtop (the RAM the GPU shares; NvMapMemUsed in /proc/meminfo), which gpuleak does not read " +
	"(NVML's memory figures are not supported on this driver, nvgpu), or PyTorch's own figures (a memory snapshot, torch.cuda.memory_stats())"

// unifiedAdviceFor is the advice for a unified-memory GPU of the given
// name: nvgpuAdvice for a Jetson of the nvgpu driver (Orin, Xavier, a
// Tegra or Jetson name), unifiedAdvice for the others (GB10, Thor, whose
// driver lists the processes' memory).
func unifiedAdviceFor(name string) string {
	low := strings.ToLower(name)
	if strings.Contains(low, "gb10") || strings.Contains(low, "thor") {
		return unifiedAdvice
	}
	for _, w := range []string{"nvgpu", "orin", "xavier", "tegra", "jetson"} {
		if strings.Contains(low, w) {
			return nvgpuAdvice
		}
	}
	return unifiedAdvice
}

// unifiedNextRow returns the name of a unified-memory GPU (unifiedNames)
// that the next line of the input names as a whole field ("0, NVIDIA
// GB10, [N/A], [N/A]"), "" when it names none. It looks ahead without
// reading.
func (r *Reader) unifiedNextRow() string {
	b, _ := r.src.Peek(512) // a row; in the error path only, so waiting on a stream costs nothing
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	for _, f := range strings.Split(string(b), ",") {
		f = strings.TrimSpace(f)
		for _, w := range unifiedNames {
			for _, word := range strings.Fields(f) {
				if strings.EqualFold(word, w) {
					return f
				}
			}
		}
	}
	return ""
}

// intervalRe matches a sampling command's period in a paste: nvidia-smi's
// "-l N" / "--loop=N" (seconds), "-lms N" / "--loop-ms=N" (milliseconds),
// dmon's and pmon's "-d N" (seconds).
var intervalRe = lazyre.New(`(?m)\bnvidia-smi\b[^\n]*?\s(?:(-l|--loop)(?:\s+|=)([0-9]{1,6})|(-lms|--loop-ms)(?:\s+|=)([0-9]{1,9})|(-d)\s+([0-9]{1,6}))(?:\s|$)`)

// loopSleepRe matches a shell loop that runs nvidia-smi and sleeps
// between runs, on one line: "while true; do nvidia-smi ...; sleep 60;
// done", "for i in $(seq 100); do sleep 5; nvidia-smi ...; done"; the
// sleep's seconds (a fraction, or an "s" or "m" suffix, allowed).
var loopSleepRe = lazyre.New(`(?m)^[^\n]*\b(?:while|for|until)\b[^\n]*\bdo\b[^\n]*$`)

var sleepRe = lazyre.New(`\bsleep\s+([0-9]{1,6}(?:\.[0-9]{1,3})?)([sm]?)(?:\s|;|$)`)

// loopInterval is commandInterval of a shell loop (loopSleepRe) whose
// body runs nvidia-smi once and sleeps: a sample each sleep, plus the
// time nvidia-smi takes (ms), so the sleep is the period.
func loopInterval(head []byte) (time.Duration, string) {
	for _, line := range loopSleepRe.Re().FindAll(head, -1) {
		if !bytes.Contains(line, []byte("nvidia-smi")) {
			continue
		}
		m := sleepRe.Re().FindSubmatch(line)
		if m == nil {
			continue
		}
		f, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil || f <= 0 {
			continue
		}
		d := time.Duration(f * float64(time.Second))
		if string(m[2]) == "m" {
			d *= 60
		}
		return d, strings.TrimSpace(string(line))
	}
	return 0, ""
}

// commandInterval returns the sampling period that a command line in head
// (the input's start, a shell prompt's command or the command written
// above the output) gives, and that command; 0 when none does. dmon's and
// pmon's -d counts only in a dmon or pmon command.
func commandInterval(head []byte) (time.Duration, string) {
	if bytes.Contains(head, []byte("\\\n")) || bytes.Contains(head, []byte("\\\r\n")) {
		// A command continued over lines ("nvidia-smi \" then
		// "  --format=csv -l 5"): one line.
		head = bytes.ReplaceAll(bytes.ReplaceAll(head, []byte("\\\r\n"), []byte(" ")), []byte("\\\n"), []byte(" "))
	}
	m := intervalRe.Re().FindSubmatchIndex(head)
	if m == nil {
		return loopInterval(head)
	}
	line := head[m[0]:m[1]]
	var d time.Duration
	switch {
	case m[4] >= 0:
		n, _ := strconv.Atoi(string(head[m[4]:m[5]]))
		d = time.Duration(n) * time.Second
	case m[8] >= 0:
		n, _ := strconv.Atoi(string(head[m[8]:m[9]]))
		d = time.Duration(n) * time.Millisecond
	case m[12] >= 0:
		if !bytes.Contains(line, []byte(" dmon")) && !bytes.Contains(line, []byte(" pmon")) {
			return 0, ""
		}
		n, _ := strconv.Atoi(string(head[m[12]:m[13]]))
		d = time.Duration(n) * time.Second
	}
	return d, strings.TrimSpace(string(line))
}

// rowOrderStart says where the first row of a log without times is
// placed: from the --start given (WithStart), or, without one, at the
// Unix epoch, with a request for it.
func (r *Reader) rowOrderStart() string {
	if r.opt.hasStart {
		return fmt.Sprintf(", from the start given, %s", r.opt.start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return "; give the first sample's time with gpuleak trend --start"
}

// rowOrderWarn warns that samples are placed by row order: what says
// how ("the log has no timestamp column: rows are placed 1s apart by
// their order"). An assumed period is said once the log is read
// (rowOrderNote); one from a command or --interval, now.
func (r *Reader) rowOrderWarn(what string) {
	if !r.periodAssumed {
		r.meta.Warnings.Addf("%s (%s)%s", what, r.rowOrderPeriod(), r.rowOrderStart())
		return
	}
	if !slices.Contains(r.rowOrder, what) {
		r.rowOrder = append(r.rowOrder, what)
	}
}

// rowOrderNote says rowOrderWarn's warnings with an assumed period: a
// log of one sampling instant computes no rate from it, so none rests
// on it.
func (r *Reader) rowOrderNote() {
	for _, what := range r.rowOrder {
		if r.meta.Instants <= 1 {
			r.meta.Warnings.Addf("%s (one sampling instant: no rate or time to OOM is computed, so none rests on the period)%s", what, r.rowOrderStart())
			continue
		}
		r.meta.Warnings.Addf("%s (%s)%s", what, r.rowOrderPeriod(), r.rowOrderStart())
	}
	r.rowOrder = nil
}

// rowOrderPeriod says where the period that places a log's rows without
// times came from: "the period of the command in the input (...)", or, assumed,
// that every rate rests on it.
func (r *Reader) rowOrderPeriod() string {
	if r.intervalCmd != "" {
		return fmt.Sprintf("the period of the command in the input, %s; --interval overrides it", r.intervalCmd)
	}
	if r.periodAssumed {
		return "an assumption: no command in the input gives the period, so every rate (bytes/s) and time to OOM rests on it and is only relative, per sample, until the period is given with gpuleak trend --interval"
	}
	return "the period given with --interval"
}

// cutMaxLookBack bounds the rows prevValue looks back over.
const cutMaxLookBack = 4096

// prevValue is the value of size column role (used, total, free or
// reserved, as stored: bytes) in the latest row of the current batch of
// the series of s (its host, GPU index, UUID and pid), when there is one.
func (r *Reader) prevValue(s *sample, role smiRole) (int64, bool) {
	c := &r.col
	var col *nullable[int64]
	switch role {
	case roleUsed:
		col = &c.used
	case roleTotal:
		col = &c.total
	case roleFree:
		col = &c.free
	case roleReserved:
		col = &c.reserved
	default:
		return 0, false
	}
	uuid := s.uuid
	if s.uuidIdx > 0 {
		uuid = []byte(c.text[ColUUID].values[s.uuidIdx-1])
	}
	for i := c.len() - 1; i >= max(0, c.len()-cutMaxLookBack); i-- {
		g, hasGPU := c.gpu.at(i)
		p, hasPID := c.pid.at(i)
		if hasGPU != s.hasGPU || hasGPU && g != s.gpu || hasPID != s.hasPID || hasPID && p != s.pid ||
			!c.text[ColUUID].textIs(i, uuid) || !c.text[ColHost].textIs(i, s.host) {
			continue
		}
		return col.at(i)
	}
	return 0, false
}

// textIs reports whether row i of the column holds v (null for an empty
// v).
func (d *dictColumn) textIs(i int, v []byte) bool {
	k, ok := d.idx.at(i)
	if !ok {
		return len(v) == 0
	}
	return sameText(v, d.values[k])
}

// intDigits is the number of digits before the point (or exponent) of a
// decimal number's text, after its sign.
func intDigits(b []byte) int {
	_, n := leadDigits(bytes.TrimLeft(b, "+-"))
	return n
}

// digitsOf is the number of digits of the whole part of v >= 0.
func digitsOf(v float64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// cutNote is the message of a last line without a line ending whose last
// value reads as cut short: what the value is, and the evidence.
func cutNote(what string, v []byte, evidence string) string {
	return fmt.Sprintf("the last line has no line ending and its %s %q %s: cut short (the log stopped inside it), so it is no sample", what, v, evidence)
}

// MIGProcess is a process of a MIG GPU instance: its GPU (the NVML index
// of the table's row), pid, GPU instance (GI) and compute instance (CI;
// -1 when the table prints N/A).
type MIGProcess struct {
	GPU    int32
	PID    int64
	GI, CI int32
}

// maxMIGProcesses bounds Metadata.MIGProcesses: a long nvidia-smi -l log
// lists the same processes in every table.
const maxMIGProcesses = 4096

// migProcess notes p, once per (GPU, pid).
func (r *Reader) migProcess(p MIGProcess) {
	if len(r.meta.MIGProcesses) >= maxMIGProcesses {
		return
	}
	for _, q := range r.meta.MIGProcesses {
		if q.GPU == p.GPU && q.PID == p.PID {
			return
		}
	}
	r.meta.MIGProcesses = append(r.meta.MIGProcesses, p)
}
