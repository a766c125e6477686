package sanitizer

import (
	"io"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Metadata is what a report says besides its tables, complete once
// Reader.Next has returned false without error.
type Metadata struct {
	// ProgramLines counts lines of the program's own output (text only).
	ProgramLines int64
	// Warnings about the input, in the order found, with their positions.
	Warnings parse.Warnings
}

// record is one report while it is read.
type record struct {
	run, process int32
	kind         string
	size         int64
	hasSize      bool
	address      uint64
	hasAddress   bool
	memoryType   string
	message      string
	api, err     string
	result       int64
	hasResult    bool
	errMessage   string
	kernel       string
	thread       string
	block        string
	saveLocation string
	details      []string
	line         int64  // text, 0 when none
	offset       int64  // XML, -1 when none
	cut          bool   // the input ends inside its last frame or line, left out
	name         string // the allocation's NVTX name ("called NAME"); "" when none
	frames       []frame
}

// frame is one stack frame while it is read.
type frame struct {
	kind      string
	function  string
	file      string
	line      int64
	pc        uint64
	hasPC     bool
	offset    uint64
	hasOffset bool
	module    string
	// tentative: a "X [0x..]" host frame whose X may be a function (when a
	// continuation line "in MODULE" follows) or a module (legacy layout).
	tentative bool
}

// run is one sanitizer run while it is read.
type run struct {
	tool          string
	prefix        string
	line          int64
	from          int64 // the run's first line of the tool's (text); 0 for XML
	processes     int32
	records       int64
	leakBytes     int64
	leakAllocs    int64
	hasLeak       bool
	errors        int64
	hasErrors     bool
	races         int64 // racecheck's RACECHECK SUMMARY: records it displayed
	hasRaces      bool
	notPrinted    int64
	hasNotPrinted bool
	targetError   bool
	leaked        addrSet // addresses leaked by the current process (its first maxLeakedAddrs)
}

// source produces the records of one input format.
type source interface {
	// next returns the next record, or nil at the end of the input.
	next() (*record, error)
	// runs returns the runs, complete after next returned nil.
	runs() []*run
}

// Reader streams the tables of one compute-sanitizer report as Arrow
// record batches:
//
//	r := sanitizer.NewReader(f, "log.txt") // or NewXMLReader
//	defer r.Release()
//	for r.Next() {
//		switch r.Table() { case sanitizer.TableRecords: use(r.RecordBatch()) ... }
//	}
//	if err := r.Err(); err != nil { ... }
//
// Errors are *parse.Error values: with a 1-based line for text, a byte
// offset for XML. An input with nothing of the format in it ends with an
// error wrapping parse.ErrNotMine; batches already returned must then be
// treated as incomplete.
//
// Next, Table, RecordBatch, Err and Release are parse.TableReader's.
type Reader struct {
	tableReader // Next, Table, RecordBatch, Err, Release

	name string
	src  source
	xml  bool

	out  *parse.TableBuilder[Table]
	rec  recordBuilders
	fr   frameBuilders
	ru   runBuilders
	nrec int32
	meta Metadata

	programOutput io.Writer // WithProgramOutput's; nil without
}

// Option configures a Reader.
type Option func(*options)

type options struct {
	parse.ReaderOptions
	programOutput io.Writer
}

// WithAllocator sets the Arrow allocator of the record batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return parse.WithAllocator[options](mem) }

// WithBatchSize sets the most rows in one record batch (default 65536).
func WithBatchSize(n int) Option { return parse.WithBatchSize[options](n) }

// WithProgramOutput has a text log's reader write the program's own
// output, the lines without the tool's prefix, to w as it reads them, each
// with a line feed; every line of the tool's is written as an empty line,
// so that line N of w is line N of the log. A program's messages printed
// amid the tool's (a PyTorch out-of-memory error, a traceback) can be read
// from w by another parser. Write errors stop the Reader with an error. The
// XML reader ignores it.
func WithProgramOutput(w io.Writer) Option { return func(o *options) { o.programOutput = w } }

// NewReader returns a Reader of the text log in r (already decompressed;
// parse.Open removes gzip). name names the input in errors.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	rd := newReader(name, opts)
	rd.src = newTextSource(r, name, rd)
	return rd
}

// NewXMLReader returns a Reader of the XML file written by
// compute-sanitizer --xml --save, in r. name names the input in errors.
func NewXMLReader(r io.Reader, name string, opts ...Option) *Reader {
	rd := newReader(name, opts)
	src := newXMLSource(r, name)
	src.warnings = &rd.meta.Warnings
	rd.src = src
	rd.xml = true
	return rd
}

// tableReader is the reader shell every family shares.
type tableReader = parse.TableReader[Table]

func newReader(name string, opts []Option) *Reader {
	o := options{ReaderOptions: parse.DefaultReaderOptions(1 << 16)}
	for _, f := range opts {
		f(&o)
	}
	rd := &Reader{name: name, meta: Metadata{Warnings: parse.NewWarnings(name)}, programOutput: o.programOutput}
	rd.out = parse.StartTables(&rd.tableReader, o.ReaderOptions, numTables, rd.step)
	rd.rec.init(rd.out.Builder(TableRecords))
	rd.fr.init(rd.out.Builder(TableFrames))
	rd.ru.init(rd.out.Builder(TableRuns))
	return rd
}

// step reads one record; at the end of the report it adds the runs.
func (r *Reader) step() error {
	rec, err := r.src.next()
	if err != nil {
		return err
	}
	if rec == nil {
		for i, ru := range r.src.runs() {
			r.appendRun(int32(i), ru)
		}
		r.out.End()
		return nil
	}
	r.appendRecord(rec)
	if r.out.Full(TableRecords) || r.out.Full(TableFrames) {
		r.out.Flush(TableRecords)
		r.out.Flush(TableFrames)
	}
	return nil
}

// Metadata describes the report; it is complete after the last batch.
func (r *Reader) Metadata() *Metadata { return &r.meta }

func (r *Reader) appendRecord(rec *record) {
	id := r.nrec
	r.nrec++
	b := &r.rec
	b.run.Append(rec.run)
	b.process.Append(rec.process)
	b.record.Append(id)
	appendDictString(b.kind, rec.kind)
	if rec.hasSize {
		b.size.Append(rec.size)
	} else {
		b.size.AppendNull()
	}
	if rec.hasAddress {
		b.address.Append(rec.address)
	} else {
		b.address.AppendNull()
	}
	appendOptString(b.memoryType, rec.memoryType)
	b.message.Append(rec.message)
	appendOptString(b.api, rec.api)
	appendOptString(b.err, rec.err)
	if rec.hasResult {
		b.result.Append(rec.result)
	} else {
		b.result.AppendNull()
	}
	appendOptString(b.errMessage, rec.errMessage)
	appendOptString(b.kernel, rec.kernel)
	appendOptString(b.thread, rec.thread)
	appendOptString(b.block, rec.block)
	appendOptString(b.saveLocation, rec.saveLocation)
	appendOptString(b.details, strings.Join(rec.details, "\n"))
	if rec.line > 0 {
		b.line.Append(rec.line)
	} else {
		b.line.AppendNull()
	}
	if rec.offset >= 0 {
		b.offset.Append(rec.offset)
	} else {
		b.offset.AppendNull()
	}
	b.cut.Append(rec.cut)
	appendOptString(b.name, rec.name)
	var depth [3]int32
	for i := range rec.frames {
		f := &rec.frames[i]
		k := 0
		switch f.kind {
		case FrameDevice:
			k = 1
		case FramePython:
			// Python frames continue the host numbering: they are the
			// outer part of the same call stack.
			k = 0
		}
		fb := &r.fr
		fb.record.Append(id)
		appendDictString(fb.kind, f.kind)
		fb.depth.Append(depth[k])
		depth[k]++
		appendOptString(fb.function, f.function)
		appendOptString(fb.file, f.file)
		if f.line > 0 {
			fb.line.Append(f.line)
		} else {
			fb.line.AppendNull()
		}
		if f.hasPC {
			fb.pc.Append(f.pc)
		} else {
			fb.pc.AppendNull()
		}
		if f.hasOffset {
			fb.offset.Append(f.offset)
		} else {
			fb.offset.AppendNull()
		}
		appendOptString(fb.module, f.module)
	}
}

func (r *Reader) appendRun(id int32, ru *run) {
	b := &r.ru
	b.run.Append(id)
	b.tool.Append(ru.tool)
	b.prefix.Append(ru.prefix)
	if ru.line > 0 {
		b.line.Append(ru.line)
	} else {
		b.line.AppendNull()
	}
	b.processes.Append(max(ru.processes, 1))
	b.records.Append(ru.records)
	appendOptInt(b.leakBytes, ru.leakBytes, ru.hasLeak)
	appendOptInt(b.leakAllocs, ru.leakAllocs, ru.hasLeak)
	if ru.hasErrors {
		b.errors.Append(ru.errors)
	} else {
		// racecheck ends a run with its RACECHECK SUMMARY instead of an
		// ERROR SUMMARY: its count of records is the run's total.
		appendOptInt(b.errors, ru.races, ru.hasRaces)
	}
	appendOptInt(b.notPrinted, ru.notPrinted, ru.hasNotPrinted)
	b.targetError.Append(ru.targetError)
	appendOptInt(b.startLine, ru.from, ru.from > 0)
	b.fromRace.Append(!ru.hasErrors && ru.hasRaces)
}

// appendDictString appends s to a dictionary column without the copy
// AppendString makes of it ([]byte(s), one allocation a row): the
// builder only looks s up in its dictionary, and copies it there when
// new.
func appendDictString(b *array.BinaryDictionaryBuilder, s string) {
	if s == "" {
		_ = b.AppendString(s) // an empty value, where Append(nil) would be null
		return
	}
	_ = b.Append(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func appendOptString(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(s)
}

func appendOptInt(b *array.Int64Builder, v int64, ok bool) {
	if !ok {
		b.AppendNull()
		return
	}
	b.Append(v)
}

type recordBuilders struct {
	run, process, record                              *array.Int32Builder
	kind                                              *array.BinaryDictionaryBuilder
	size, result, line, offset                        *array.Int64Builder
	address                                           *array.Uint64Builder
	memoryType, message, api, err, errMessage, kernel *array.StringBuilder
	thread, block, saveLocation, details              *array.StringBuilder
	cut                                               *array.BooleanBuilder
	name                                              *array.StringBuilder
}

func (s *recordBuilders) init(b *array.RecordBuilder) {
	s.run = b.Field(RecRun).(*array.Int32Builder)
	s.process = b.Field(RecProcess).(*array.Int32Builder)
	s.record = b.Field(RecRecord).(*array.Int32Builder)
	s.kind = b.Field(RecKind).(*array.BinaryDictionaryBuilder)
	s.size = b.Field(RecSize).(*array.Int64Builder)
	s.address = b.Field(RecAddress).(*array.Uint64Builder)
	s.memoryType = b.Field(RecMemoryType).(*array.StringBuilder)
	s.message = b.Field(RecMessage).(*array.StringBuilder)
	s.api = b.Field(RecAPI).(*array.StringBuilder)
	s.err = b.Field(RecError).(*array.StringBuilder)
	s.result = b.Field(RecResult).(*array.Int64Builder)
	s.errMessage = b.Field(RecErrorMessage).(*array.StringBuilder)
	s.kernel = b.Field(RecKernel).(*array.StringBuilder)
	s.thread = b.Field(RecThread).(*array.StringBuilder)
	s.block = b.Field(RecBlock).(*array.StringBuilder)
	s.saveLocation = b.Field(RecSaveLocation).(*array.StringBuilder)
	s.details = b.Field(RecDetails).(*array.StringBuilder)
	s.line = b.Field(RecLine).(*array.Int64Builder)
	s.offset = b.Field(RecOffset).(*array.Int64Builder)
	s.cut = b.Field(RecCut).(*array.BooleanBuilder)
	s.name = b.Field(RecName).(*array.StringBuilder)
}

type frameBuilders struct {
	record, depth          *array.Int32Builder
	kind                   *array.BinaryDictionaryBuilder
	function, file, module *array.StringBuilder
	line                   *array.Int64Builder
	pc, offset             *array.Uint64Builder
}

func (s *frameBuilders) init(b *array.RecordBuilder) {
	s.record = b.Field(FrRecord).(*array.Int32Builder)
	s.kind = b.Field(FrKind).(*array.BinaryDictionaryBuilder)
	s.depth = b.Field(FrDepth).(*array.Int32Builder)
	s.function = b.Field(FrFunction).(*array.StringBuilder)
	s.file = b.Field(FrFile).(*array.StringBuilder)
	s.line = b.Field(FrLine).(*array.Int64Builder)
	s.pc = b.Field(FrPC).(*array.Uint64Builder)
	s.offset = b.Field(FrFuncOffset).(*array.Uint64Builder)
	s.module = b.Field(FrModule).(*array.StringBuilder)
}

type runBuilders struct {
	run, processes                                           *array.Int32Builder
	tool, prefix                                             *array.StringBuilder
	line, records, leakBytes, leakAllocs, errors, notPrinted *array.Int64Builder
	targetError                                              *array.BooleanBuilder
	startLine                                                *array.Int64Builder
	fromRace                                                 *array.BooleanBuilder
}

func (s *runBuilders) init(b *array.RecordBuilder) {
	s.run = b.Field(RunRun).(*array.Int32Builder)
	s.tool = b.Field(RunTool).(*array.StringBuilder)
	s.prefix = b.Field(RunPrefix).(*array.StringBuilder)
	s.line = b.Field(RunLine).(*array.Int64Builder)
	s.processes = b.Field(RunProcesses).(*array.Int32Builder)
	s.records = b.Field(RunRecords).(*array.Int64Builder)
	s.leakBytes = b.Field(RunLeakBytes).(*array.Int64Builder)
	s.leakAllocs = b.Field(RunLeakAllocations).(*array.Int64Builder)
	s.errors = b.Field(RunErrors).(*array.Int64Builder)
	s.notPrinted = b.Field(RunErrorsNotPrinted).(*array.Int64Builder)
	s.targetError = b.Field(RunTargetError).(*array.BooleanBuilder)
	s.startLine = b.Field(RunStartLine).(*array.Int64Builder)
	s.fromRace = b.Field(RunErrorsFromRacecheck).(*array.BooleanBuilder)
}
