package pytorchtext

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Option configures a Reader.
type Option func(*options)

type options = parse.ReaderOptions

// WithAllocator sets the Arrow allocator of the record batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return parse.WithAllocator[options](mem) }

// WithBatchSize sets the most rows in one record batch (default 4096).
func WithBatchSize(n int) Option { return parse.WithBatchSize[options](n) }

// Metadata is what an input says besides its tables, complete once
// Reader.Next has returned false without error.
type Metadata struct {
	// Lines counts the lines read (JSON: the lines of the file).
	Lines int64
	// Messages counts out-of-memory messages, unparsed ones included.
	Messages int
	// Sets counts memory_stats() dicts and memory_summary() tables.
	Sets int
	// Warnings about the input, in the order found, with their positions.
	Warnings parse.Warnings
	// NotOOMs holds, among Warnings, those of out-of-memory errors that
	// are not counted as GPU OOMs: a framework's log record at INFO or
	// WARNING level (it went on), and a failure in host memory
	// (TensorFlow's on /device:CPU:0). A reader of a program's output
	// shown amid another tool's lines (a compute-sanitizer log) reports
	// these alone when there is no OOM.
	NotOOMs parse.Warnings
	// UnifiedMemory is the first unified-memory device the text names
	// (see UnifiedMemory), nil when none.
	UnifiedMemory *UnifiedMemory
}

// maxLine is the longest line read whole; a longer line (a log written
// without line ends, a progress bar's carriage returns cut off) is read in
// pieces of at most maxLine bytes, each read as a line of the same number
// (see readLine).
const maxLine = 1 << 20

// pieceWindow is the end of a piece of a long line searched for the start
// of an out-of-memory message, and pieceLead the bytes kept before that
// start (an exception's name, a log record's prefix): a message that
// starts within pieceWindow of the cut begins the next piece instead, so
// that it is read whole (a message is a few hundred bytes; with the
// processes it lists, a few KiB).
const (
	pieceWindow = 64 << 10
	pieceLead   = 512
)

// maxTracebacks bounds the tracebacks followed at once (one per line
// prefix, e.g. per rank of a launcher's log).
const maxTracebacks = 64

// maxFrames bounds the frames kept per traceback (a deep recursion prints
// thousands); the innermost are kept.
const maxFrames = 256

// frameRe matches a Python traceback's frame line after its prefix.
var frameRe = lazyre.New(`^\s*File "(.*)", line (\d+), in (.+?)\s*$`)

// frameLine returns frameRe's submatches of line, nil when it is no
// frame line: the expression's words are tested first, as it runs on
// each line of a traceback (and, in a log where a frame line came
// without its traceback's first line, on every line after it).
func frameLine(line string) []string {
	if !strings.Contains(line, `File "`) || !strings.Contains(line, `", line `) {
		return nil
	}
	if strings.IndexByte(line, '\n') >= 0 {
		return frameRe.FindStringSubmatch(line) // "." stops at a line end
	}
	// As the expression reads it, without its backtracking: spaces, then
	// `File "`; the path runs to the last `", line ` that digits, ", in "
	// and one character at least follow (the greedy "(.*)"); the name is
	// the rest without its trailing spaces, one character at least (the
	// lazy "(.+?)" before "\s*$").
	i := skipSpace(line, 0)
	if !strings.HasPrefix(line[i:], `File "`) {
		return nil
	}
	from := i + len(`File "`)
	for end := len(line); ; {
		p := strings.LastIndex(line[from:end], `", line `)
		if p < 0 {
			return nil
		}
		p += from
		end = p + len(`", line `) - 1 // the next search ends inside this one
		d := p + len(`", line `)
		k := skipDigits(line, d, 1)
		if k < 0 || !strings.HasPrefix(line[k:], ", in ") || k+len(", in ") >= len(line) {
			continue
		}
		rest := line[k+len(", in "):]
		name := strings.TrimRight(rest, " \t\n\f\r")
		if name == "" {
			name = rest[:1]
		}
		return []string{line, line[from:p], line[d:k], name}
	}
}

// traceback is a Python traceback being read: the frames after
// "Traceback (most recent call last):" on lines starting with prefix, or
// in a Rich traceback's panel (rich; see rich.go).
type traceback struct {
	prefix string
	frames []tbFrame
	rich   bool
	// para is the text of a Rich panel's lines since its last blank
	// line (a frame's header, maybe wrapped); paraDone says it was read.
	para     string
	paraDone bool
	// ipython says the traceback is IPython's (see ipython.go);
	// ipyPending is a frame whose header gave no line, waiting for its
	// arrow.
	ipython    bool
	ipyPending *tbFrame
	// src says the innermost frame's source line was read, and raises
	// that it builds a new exception from a value (raiseNewRe).
	src, raises bool
}

// raiseNewRe matches a source line that raises a new exception whose
// one argument is a value received, a name, an attribute or an item
// ("raise RuntimeError(resp['error'])", "raise
// RuntimeError(response.error_msg)", "raise Exception(str(e)) from e"):
// its words were passed on there, not raised by the call that failed. A
// library's check that builds its error from a status ("raise
// CudaAPIError(retcode, msg)", numba) or words of its own (vLLM's "raise
// ValueError(\"No available memory ...\")") is not one.
var raiseNewRe = lazyre.New(`^raise\s+[A-Za-z_][\w.]*\(\s*(?:str\(\s*)?[A-Za-z_][\w.]*(?:\[[^\]]*\])*\s*\)?\s*\)(?:\s+from\s+[\w.]+)?\s*$`)

// addFrame appends a frame, keeping the innermost maxFrames.
func (tb *traceback) addFrame(f tbFrame) {
	if len(tb.frames) == maxFrames {
		copy(tb.frames, tb.frames[1:])
		tb.frames = tb.frames[:maxFrames-1]
	}
	tb.frames = append(tb.frames, f)
	tb.src, tb.raises = false, false
}

type tbFrame struct {
	file string
	line int64
	name string
}

// Reader streams the tables of a log, a traceback or a memory_summary()
// text as Arrow record batches:
//
//	r := pytorchtext.NewReader(f, "train.log")
//	defer r.Release()
//	for r.Next() {
//		switch r.Table() { case pytorchtext.TableMessages: use(r.RecordBatch()) ... }
//	}
//	if err := r.Err(); err != nil { ... }
//
// Errors are *parse.Error values with the line at fault: a memory summary
// table that stops or breaks in the middle, or a read error. A log without
// any out-of-memory message is not an error: it gives no rows.
//
// Next, Table, RecordBatch, Err and Release are parse.TableReader's.
type Reader struct {
	tableReader // Next, Table, RecordBatch, Err, Release

	name string
	br   *bufio.Reader // text
	src  io.Reader     // memory_stats() JSON
	out  *parse.TableBuilder[Table]

	line  int64
	nline int64    // lines read by addLine
	tail  *excTail // the traceback ended by the exception on the line before, its OOM not found
	nmsg  int32
	// nb holds the lines a Jupyter notebook showed, not yet read (see
	// notebook.go); notebook says the input is one.
	nb       []nbLine
	notebook bool
	tbs      []*traceback
	// sums are the memory_summary() tables being read, one per line
	// prefix (see summaryOf).
	sums []*summary
	// stats is a memory_stats() dict printed in the text, being read;
	// statsOpen one whose opening ended the line before (see
	// statstext.go).
	stats, statsOpen *statsText
	pending          *pendingMessage // a message that may go on on the next line
	// parked are messages that may go on whose process's lines gave way
	// to another process's (see switchPending), oldest first.
	parked []*pendingMessage
	// behind are messages read while one of an earlier line was parked
	// or pending after it, held so that messages are written in the order
	// of their lines (see holdBehind); draining while they are written.
	behind   []heldMessage
	draining bool
	// atEnd says the input has ended and the messages still held are
	// being written: each waits in behind, drained in line order once
	// all are in.
	atEnd bool
	// split is the line before when it ended inside an out-of-memory
	// phrase's words ("Resource exhausted: Out", then "of memory while
	// trying to allocate ..."): a paste or a terminal wrapped there.
	split *splitPhrase
	// splitFrames are split's traceback frames, for the joined line.
	splitFrames []tbFrame
	trt         *trtBuild  // TensorRT allocator failures held until the lines after them tell (trtbuild.go)
	ggml        *ggmlRetry // llama.cpp allocation failures held until the lines after them tell (ggmlretry.go)
	vkSize      *vkSize    // llama.cpp's Vulkan size line, for the status on the next line (ggmlretry.go)
	// java is a message on a Java exception's line held for its stack's
	// frames, javaFrames those read (javastack.go).
	java       *heldMessage
	javaFrames []tbFrame
	// xlaAsync is XLA's cudaMallocAsync failure held for the line after
	// it, which gives the GPU's free and total memory (see
	// xlaAsyncFreeTotalRe).
	xlaAsync *heldMessage
	// xlaStats is an XLA message held for the "BufferAssignment stats"
	// XLA prints after it (see bufferAssignmentLine).
	xlaStats *heldMessage
	// bfc is TensorFlow's BFC allocator's failure, held until the next
	// message: TensorFlow's own OOM for the same allocation, which it
	// then is (see bfcFailure).
	bfc *heldMessage
	// bfcStats is the BFC allocator's statistics last seen, for
	// TensorFlow's OOM after them (see seeBFCStats).
	bfcStats *bfcStats
	// tfOp is TensorFlow's op_kernel.cc record of an op that failed for
	// want of memory, logged at WARNING level, held for the exception
	// TensorFlow raises from it, which is then the OOM; tfOpMore counts
	// the records of other ops' failures read while it is held, read as
	// the same failure (see holdTFOp).
	tfOp     *heldMessage
	tfOpMore int
	// nccl is NCCL's "Cuda failure 'out of memory'" held for its next
	// line, which may give the bytes (see ncclCallocRe); ncclWho is its
	// lines' "host:pid:tid [cudaDev]".
	nccl    *heldMessage
	ncclWho string
	// ncclFailed holds the "host:pid:tid [cudaDev]" of NCCL's "Cuda
	// failure" lines whose "Failed to CUDA calloc" line has not come yet
	// (see ncclAlone).
	ncclFailed map[string]bool
	meta       Metadata
	// long is the rest of a line longer than maxLine, read but not yet
	// returned (see readLine).
	long longRest
	// folds are the lines Ray's deduplication folded others into
	// (lineprefix.go), by line, while a message may still be added from
	// them (see keepFolds; foldsCap is the size that prunes them next);
	// rayKeys the lines of out-of-memory messages read, by rayKey, each
	// the first of its kind.
	folds    map[int64]rayFold
	foldsCap int
	rayKeys  map[string]int64
	// setProcess is the process label (prefixLabel of its lines' prefix)
	// of each memory_summary() set that has one, by set. A memory_stats()
	// dict's text before it is often a program's own words ("step 3: "),
	// no process's mark: a dict is labelled only by a launcher's mark
	// there (processMark: "[rank1]:", a worker's "(pid=N)").
	setProcess map[int32]string
	// reportExc is the exception an error report's "Exception Type"
	// line named, and reportExcLine that line (see reportException).
	reportExc     string
	reportExcLine int64
	// thrown is the C++ exception's type a terminate handler's line
	// named, and thrownLine that line (terminate.go).
	thrown     string
	thrownLine int64
	// ray is what was seen of Ray's OutOfMemoryError (rayoom.go).
	ray rayOOM
	// report is an error report's message, held until the next message
	// or the text's end (see holdReport).
	report *heldMessage
	// progress is the last progress line (progress.go) of each process
	// mark, "" for lines without one.
	progress map[string]progressMark
	// progressAt holds, by line, the progress line of a message held
	// for the lines after it (ggmlretry.go), taken when it was read:
	// the lines read since may hold later ones.
	progressAt map[int64]int64
	// srunTasks are the task numbers of srun --label's marks at lines'
	// starts, up to two (see seeSrunLabel).
	srunTasks map[string]bool
	// theano is the GPU Theano's last start-up line named (theanodev.go).
	theano theanoDevice
	// what is a what() line cut after its place, its error maybe on the
	// next line (cudacheck.go).
	what *whatCut
	// xgb is XGBoost's allocation error held for its figure lines
	// (cudacheck.go).
	xgb *heldMessage
	// lastLine is the line read before this one (as addLine had it): a
	// message's words wrapped onto it are read with it (rmmWrappedBytes).
	lastLine string
	// nvhpc is NVHPC's OpenACC error held for its place's lines, and
	// nvhpcPlace the place read so far (cudacheck.go).
	nvhpc      *heldMessage
	nvhpcPlace tbFrame
	// tfNode is TensorFlow's op error held for its node line, which names
	// its device (tfnode.go).
	tfNode *heldMessage
	// darknet is "CUDA Error: out of memory" alone held for the line
	// after it, which may name darknet its printer, and darknetSeen the
	// last line of darknet's read (cudacheck.go).
	darknet     *heldMessage
	darknetSeen int64
	// ggmlStatus is a runtime's status line held for ggml's device line
	// after it (ggmldevice.go).
	ggmlStatus *heldMessage
}

// rayFold is a line that ended with Ray's "[repeated Nx across cluster]":
// n is N, first the line of the first line of its kind (0 when not in
// the input).
type rayFold struct {
	first int64
	n     int
}

// longRest is the part of a long line past the piece readLine returned:
// its bytes, whether the line's end (ended, with endErr) is among them,
// and that the next piece continues a line already counted.
type longRest struct {
	rest   []byte
	ended  bool
	endErr error
	cont   bool
}

// NewReader returns a Reader of the text in r (already decompressed;
// parse.Open removes gzip). name names the input in errors.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	rd := newReader(name, opts)
	rd.br = bufio.NewReaderSize(r, 64<<10)
	if head, _ := rd.br.Peek(4096); SniffNotebook(head) {
		rd.notebook = true
	}
	return rd
}

// tableReader is the reader shell every family shares.
type tableReader = parse.TableReader[Table]

func newReader(name string, opts []Option) *Reader {
	o := parse.DefaultReaderOptions(4096)
	for _, f := range opts {
		f(&o)
	}
	rd := &Reader{name: name, meta: Metadata{Warnings: parse.NewWarnings(name)}}
	rd.out = parse.StartTables(&rd.tableReader, o, numTables, rd.step)
	return rd
}

// step reads the memory_stats() JSON whole, or one line of text.
func (r *Reader) step() error {
	if r.src != nil {
		if err := r.readStats(); err != nil {
			return err
		}
		if r.src != nil {
			r.out.End()
		}
		return nil // else the input is read as text from the next step (readAsText)
	}
	var line string
	var err error
	if r.notebook {
		line, err = r.notebookLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	} else {
		line, err = r.readLine()
	}
	if line == "" && err == nil && r.pending == nil && len(r.sums) == 0 && r.stats == nil && len(r.tbs) == 0 {
		// An empty line with nothing open (a message that may go on, a
		// summary, a traceback) changes nothing: counted only. Logs hold
		// many (compute-sanitizer's lines come blanked: see
		// sanitizer.WithProgramOutput).
		return nil
	}
	if line != "" || err == nil {
		if perr := r.addText(line); perr != nil {
			return perr
		}
	}
	if err != nil {
		if !errors.Is(err, io.EOF) {
			return &parse.Error{File: r.name, Offset: -1, Line: int(r.line), Msg: "read error", Err: err}
		}
		for _, s := range r.sums {
			s.end(r)
		}
		r.sums = nil
		if r.stats != nil {
			r.endStatsText("")
		}
		// Every message still held is written now, in the order of its
		// line (held ones wait in behind until all are in).
		r.atEnd = true
		r.flushPending()
		for _, p := range r.parked {
			r.pending = p
			r.flushPending()
		}
		r.parked = nil
		r.flushNVHPC()
		r.flushDarknet()
		for _, h := range []**heldMessage{&r.report, &r.xlaAsync, &r.xlaStats, &r.nccl, &r.xgb, &r.tfNode, &r.bfc, &r.ggmlStatus} {
			if held := *h; held != nil {
				*h = nil // before addMessage, which reads r.bfc
				r.addMessage(held.msg, held.frames, held.line)
			}
		}
		r.finishTRT()
		r.finishGGML()
		r.flushJava()
		r.endTFOp() // after the held messages: TensorFlow's exception may be among them
		r.atEnd = false
		r.drainBehind()
		r.endRayOOM()
		r.out.End()
	}
	return nil
}

// Metadata describes the input; it is complete after the last batch.
func (r *Reader) Metadata() *Metadata { return &r.meta }

func (r *Reader) maybeFlush(t Table) {
	if r.out.Full(t) {
		r.out.Flush(t)
	}
}

// readLine returns the next line without its end of line. A line longer
// than maxLine comes in pieces, each returned as a line of the same
// number: the first maxLine bytes, cut earlier where an out-of-memory
// message starts within pieceWindow of the cut (see pieceCut), then the
// rest the same way. Every byte is read; text that spans a cut (other than
// a message's start) is read as two lines.
func (r *Reader) readLine() (string, error) {
	buf, ended, endErr, cont := r.long.rest, r.long.ended, r.long.endErr, r.long.cont
	r.long = longRest{}
	for {
		if !ended {
			chunk, err := r.br.ReadSlice('\n')
			if buf == nil && !cont && err == nil {
				if l := bytes.TrimRight(chunk, "\r\n"); len(l) <= maxLine {
					// A whole line, the usual case: one copy, the string.
					r.line++
					r.meta.Lines = r.line
					return string(l), nil
				}
			}
			buf = append(buf, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				ended, endErr = true, err
			}
		}
		if len(bytes.TrimRight(buf, "\r\n")) > maxLine {
			cut := pieceCut(buf[:maxLine])
			r.long = longRest{rest: append([]byte(nil), buf[cut:]...), ended: ended, endErr: endErr, cont: true}
			if !cont {
				r.line++
				r.meta.Lines = r.line
			}
			r.meta.Warnings.Once("long", parse.InlineNote(int(r.line), -1, "line %d is longer than %d bytes; it was read in pieces of at most that size, so text that spans a cut between them (other than an out-of-memory message's start) is read as two lines", r.line, maxLine))
			return string(buf[:cut]), nil
		}
		if !ended {
			continue
		}
		if !cont && (len(buf) > 0 || endErr == nil) {
			r.line++
			r.meta.Lines = r.line
		}
		return strings.TrimRight(string(buf), "\r\n"), endErr
	}
}

// pieceCut is where the piece of a long line that starts with piece
// (maxLine bytes) ends: before an out-of-memory message that starts in its
// last pieceWindow bytes, with pieceLead bytes of what precedes it, so
// that the message begins the next piece whole; else at its end.
func pieceCut(piece []byte) int {
	from := len(piece) - pieceWindow
	if j := findOOM(string(piece[from:]), 0); j >= 0 {
		return from + max(j-pieceLead, 0)
	}
	return len(piece)
}

// ansiRe matches terminal escape sequences (colours, cursor moves) that
// logs captured from a terminal keep.
var ansiRe = lazyre.New(`\x1b\[[0-9;?]*[A-Za-z]`)

// addText reads one line of the input. A carriage return inside it (a
// progress bar redrawing itself) starts a new line of text as the terminal
// showed it; terminal escape sequences are removed.
func (r *Reader) addText(line string) error {
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansiRe.ReplaceAllString(line, "")
	}
	line, ls := webLines(line)
	if ls != nil {
		for _, l := range ls {
			if err := r.addText(l); err != nil {
				return err
			}
		}
		return nil
	}
	if escapedText(line) {
		// A traceback or log inside a JSON string (an HTTP error body, a
		// JSON log record): its lines are "\n"-separated on one line.
		for _, l := range strings.Split(unescapeJSON(line), "\n") {
			if err := r.addText(l); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		i := strings.IndexByte(line, '\r')
		if i < 0 {
			return r.addLine(line)
		}
		if err := r.addLine(line[:i]); err != nil {
			return err
		}
		line = line[i+1:]
	}
}

// escapedText reports whether line holds JSON-escaped text worth
// splitting: an escaped line end next to an OOM message, a traceback or a
// memory summary.
func escapedText(line string) bool {
	if !strings.Contains(line, `\n`) {
		return false
	}
	return findOOM(line, 0) >= 0 || strings.Contains(line, "Traceback (most recent call last):") || strings.Contains(line, summaryBanner)
}

// unescapeJSON undoes a JSON string's escapes (\n, \t, \", \\, \/,
// \uXXXX); an escape it does not know is kept as written.
func unescapeJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch n := s[i+1]; n {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\', '/':
			b.WriteByte(n)
		case 'u':
			if i+6 <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += 5
					continue
				}
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte(c)
			b.WriteByte(n)
		}
		i++
	}
	return b.String()
}

// addLine reads one line: memory summary tables, tracebacks and
// out-of-memory messages.
func (r *Reader) addLine(line string) error {
	err := r.addLineRead(line)
	r.lastLine = line
	return err
}

// addLineRead reads one line of the text (see addLine).
func (r *Reader) addLineRead(line string) error {
	if l, n := rayFolded(line); n > 0 {
		line = l
		r.keepFolds()
		r.folds[r.line] = rayFold{n: n, first: r.rayKeys[rayKey(line)]}
	}
	if h := r.xlaAsync; h != nil {
		r.xlaAsync = nil
		if x := xlaAsyncFreeTotalRe.FindStringSubmatch(contLine(h.lead, line)); x != nil {
			h.msg.Free, _ = strconv.ParseInt(x[1], 10, 64)
			h.msg.Total, _ = strconv.ParseInt(x[2], 10, 64)
			r.addMessage(h.msg, h.frames, h.line)
			return nil
		}
		r.addMessage(h.msg, h.frames, h.line)
	}
	if h := r.nccl; h != nil && strings.TrimSpace(line) != "" {
		r.nccl = nil
		if x := ncclCallocRe.FindStringSubmatch(line); x != nil && strings.Contains(line, r.ncclWho+" ") {
			delete(r.ncclFailed, r.ncclWho)
			h.msg.Requested, _ = strconv.ParseInt(x[1], 10, 64)
			r.addMessage(h.msg, h.frames, h.line)
			return nil
		}
		r.addMessage(h.msg, h.frames, h.line)
	}
	if r.ncclAlone(line) {
		return nil
	}
	if r.darknet != nil || strings.Contains(line, "cuda.c") {
		r.seeDarknet(line)
	}
	if r.ggmlStatus != nil && r.ggmlDeviceLine(line) {
		return nil
	}
	if r.xgb != nil && r.xgboostLine(line) {
		return nil
	}
	if r.nvhpc != nil && r.nvhpcLine(line) {
		return nil
	}
	if r.tfNode != nil && r.tfNodeLine(line) {
		return nil
	}
	if h := r.xlaStats; h != nil {
		used, done := bufferAssignmentLine(&h.msg, contLine(h.lead, line))
		if !used || done || h.lines == maxBufferAssignmentLines {
			r.xlaStats = nil
			r.addMessage(h.msg, h.frames, h.line)
		}
		if used {
			h.lines++
			return nil
		}
	}
	r.seeSrunLabel(line)
	if r.meta.UnifiedMemory == nil {
		if u, ok := findUnifiedMemory(line); ok {
			found := u // only a device found is kept on the heap
			found.Line = r.line
			r.meta.UnifiedMemory = &found
		}
	}
	if r.seeJava(line) {
		return nil
	}
	r.seeTRT(line)
	r.seeGGML(line)
	r.seeVulkanSize(line)
	r.switchPending(line)
	if r.pending != nil && r.continuePending(line) {
		return nil
	}
	if joined, at, ok := r.joinWhat(line); ok {
		// The error of a what() line on the line after it: read as
		// one line, the what() line's.
		cur := r.line
		r.line = at
		err := r.addBody(joined)
		r.line = cur
		return err
	}
	if p := r.split; p != nil {
		r.split = nil
		if cont := contLine(p.text[:p.at], line); p.goesOn(cont) {
			joined := p.text + p.sep + cont
			if i := findOOM(joined, p.at); i >= 0 && i < len(p.text) {
				// The phrase goes on on this line: the message is read
				// from the line before, joined with this one.
				at := r.line
				r.line, r.splitFrames = p.line, p.frames
				err := r.addBody(joined)
				r.line = at
				return err
			}
		}
	}
	return r.addBody(line)
}

// addBody reads a line once addLine has given it to what watches every
// line (unified memory, TensorRT's held failures, a message going on):
// memory summary tables and stats, tracebacks and out-of-memory messages.
func (r *Reader) addBody(line string) error {
	if r.addSummaryLine(line) {
		return nil
	}
	if r.stats != nil && r.addStatsText(line) {
		return nil
	}
	if r.startStatsText(line) {
		return nil
	}
	if i := strings.Index(line, summaryBanner); i >= 0 {
		return r.startSummary(line, i)
	}
	if row, ok := headlessRow(line); ok {
		r.startHeadlessSummary(row, line)
		return nil
	}
	if row, ok := leadlessRow(line); ok {
		// Cut inside the first row's left border: the row is whole
		// from its name on.
		r.startHeadlessSummary(row, line)
		r.meta.Warnings.Linef(int(r.line), "line %d is a memory summary's %s row without its left border (the paste was cut inside it): read from its name on", r.line, strings.Join(strings.Fields(row.cells[0]), " "))
		return nil
	}
	if i := strings.Index(line, summaryTitle); i >= 0 && strings.Contains(line[:i], "|") {
		// The title without ", device ID N |" after it: a table wrapped
		// at a terminal's width (the title goes on on the next line).
		r.meta.Warnings.Linef(int(r.line), "a memory summary whose title is split over lines (%q): the table was wrapped at a width (a terminal, a log viewer) and is not read; print it again unwrapped (or save torch.cuda.memory_stats() as JSON)", clip(line))
		return nil
	}
	// A traceback's lines.
	if i := strings.Index(line, "Traceback (most recent call last):"); i >= 0 {
		prefix := line[:i]
		if findOOM(prefix, 0) >= 0 {
			// Lines glued into one (a paste that lost its line ends):
			// the message before the traceback's first line is read as a
			// line of its own, and the traceback's prefix is what follows
			// the last run of spaces that stood for a line end.
			if err := r.addLine(strings.TrimRight(prefix, " \t")); err != nil {
				return err
			}
			if k := strings.LastIndex(prefix, "  "); k >= 0 {
				prefix = strings.TrimLeft(prefix[k:], " ")
			}
		}
		if tb := r.raisedTraceback(prefix); tb != nil {
			// An exception whose text is another traceback (a worker's or
			// a server's, passed on as the error's string: "RuntimeError:
			// Traceback (most recent call last):"): the traceback open on
			// these lines ends with it, and the frames that follow are the
			// other process's, not called from this one's.
			prefix = tb.prefix
		}
		r.startTraceback(prefix)
		return nil
	}
	if prefix, ok := richTitleAt(line); ok {
		r.startTraceback(prefix).rich = true
		return nil
	}
	if prefix, ok := ipythonTitleAt(line); ok {
		r.startTraceback(prefix).ipython = true
		return nil
	}
	var frames []tbFrame
	raised := false // the innermost frame raises a new exception (raiseNewRe)
	k, rest := r.tracebackOf(line)
	if k < 0 {
		// Frames without a "Traceback" line before them: a traceback
		// pasted from the middle.
		if i := strings.Index(line, `File "`); i >= 0 {
			j := len(strings.TrimRight(line[:i], " \t"))
			// Not where an out-of-memory message comes before them: a
			// log record whose traceback was pasted flat onto its line
			// (the spill manager's "... to spill: <...> traceback: File
			// ..."), whose message is read.
			if frameRe.MatchString(line[j:]) && findOOM(line[:j], 0) < 0 {
				r.startTraceback(line[:j])
				k, rest = len(r.tbs)-1, line[j:]
			}
		} else if prefix, f, ok := richFrameStart(line); ok {
			tb := r.startTraceback(prefix)
			tb.rich, tb.paraDone = true, true
			tb.addFrame(f)
			return nil
		} else if prefix, ok := ipythonFrameStart(line); ok {
			// An IPython traceback pasted from the middle: its frame
			// headers without the title line.
			tb := r.startTraceback(prefix)
			tb.ipython = true
			tb.addIPython(line[len(prefix):])
			return nil
		}
	}
	if k >= 0 {
		tb := r.tbs[k]
		if tb.rich {
			if tb.addRich(rest) {
				return nil
			}
		} else if tb.ipython {
			if tb.addIPython(rest) {
				return nil
			}
		} else if m := frameLine(rest); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			tb.addFrame(tbFrame{file: m[1], line: n, name: m[3]})
			return nil
		} else if strings.HasPrefix(rest, "  ") || strings.TrimSpace(rest) == "" {
			// Source lines, carets, "[Previous line repeated N more
			// times]": the traceback goes on. A source line may quote
			// "CUDA out of memory" without being the error.
			if src := strings.TrimSpace(rest); src != "" && !tb.src && len(tb.frames) > 0 {
				tb.src, tb.raises = true, raiseNewRe.MatchString(src)
			}
			return nil
		}
		// The exception line ends the traceback (and the run, for a
		// TensorRT build: see trtbuild.go).
		r.endTRT(rest)
		frames = tb.frames
		raised = tb.raises
		r.tbs = append(r.tbs[:k], r.tbs[k+1:]...)
		defer func() {
			if frames != nil {
				// No OOM on the exception's line took them: its text may
				// go on on the next (see excTail).
				r.tail = &excTail{frames: frames, prefix: tb.prefix, at: r.nline, line: r.line}
			}
		}()
	}
	r.seeReportException(line)
	r.seeTerminate(line)
	r.seeRayOOM(line)
	first := findOOM(line, 0) // the loop below's first look
	if first < 0 {
		r.seeProgress(line)
		r.seeTheanoDevice(line)
		r.seeBFCStats(line, r.line)
	}
	if m, ok := bfcFailure(line); ok {
		// Logged at WARNING level, yet the allocation failed (see
		// bfcFailure): held for TensorFlow's own OOM message after it.
		if r.bfc != nil {
			h := r.bfc
			r.bfc = nil
			r.addMessage(h.msg, h.frames, h.line)
		}
		r.bfc = &heldMessage{msg: m, frames: frames, line: r.line}
		r.nline++
		r.noteKind(line) // for Ray's folds
		return nil
	}
	if frames == nil && r.splitFrames != nil {
		frames = r.splitFrames // the line before's, joined to this one
	}
	r.splitFrames = nil
	tail := r.tail
	r.tail = nil
	r.nline++
	n0 := r.nmsg
	defer func() {
		if r.nmsg > n0 || r.holdsLine(r.line) {
			r.noteKind(line) // for Ray's folds, held or not
		}
	}()
	// The text before the line's first message and after its last: a
	// progress bar the terminal drew on the message's line (see
	// seeProgress).
	firstAt, lastEnd := -1, 0
	for from := 0; ; {
		i := first
		if from > 0 {
			i = findOOM(line, from)
		}
		if i < 0 {
			if from == 0 && len(line) <= maxLine {
				// An exception's line keeps its traceback's frames for
				// the message its next line completes.
				if r.split = phraseCut(line, r.line); r.split != nil {
					r.split.frames = frames
				}
			}
			if firstAt >= 0 {
				r.seeProgress(line[:firstAt] + " " + line[lastEnd:])
			}
			break
		}
		if frames == nil && tail != nil && tail.at == r.nline-1 && r.line <= tail.line+1 && strings.HasPrefix(line, tail.prefix) && strings.TrimSpace(line[len(tail.prefix):i]) == "" {
			// The exception's message goes on on this line, and the
			// OOM starts it (tensorview's "RuntimeError: .../tensor.h
			// 168" then "cuda failed with error 2 out of memory").
			frames, tail = tail.frames, nil
		}
		kind := classify(line, i)
		reported := r.reportException(line, i)
		if kind == notMessage && reported != "" && asyncZeroCutAt(line, i) && torchOOMException(reported+": ") {
			// An error report's message line, its exception on the line
			// before (see reportException).
			kind = message
		}
		if kind == notMessage {
			from = i + 1
			if codeStringAt(line, i) {
				// Code's string literal: none of it is a message (its
				// "Tried to allocate" neither).
				end := strings.IndexByte(line[i:], line[i-1])
				if end < 0 {
					break
				}
				from = i + end + 1
			}
			continue
		}
		if loggedOnly(line, i) {
			if !r.holdTFOp(line, i) {
				r.noteLogged(line, i)
			}
			break
		}
		m, end := ParseMessage(line, i)
		if firstAt < 0 {
			firstAt = i
		}
		lastEnd = max(lastEnd, min(end, len(line)))
		if reported != "" && m.Exception == "" {
			m.Exception = reported
		}
		if t := r.thrownException(line, i); t != "" && m.Exception == "" {
			m.Exception = t // the C++ exception whose what() it is
		}
		if raised && frames != nil {
			m.Reraised = true
		}
		if m.Generation == GenCUDAError && m.Requested < 0 {
			m.Requested = driverBytes(line[:i])
			if m.Requested < 0 && strings.HasPrefix(m.Text, "cudaErrorMemoryAllocation") {
				// RMM's words before it, wrapped onto the line before.
				m.Requested = rmmWrappedBytes(r.lastLine, line[:i])
			}
			if n, d := ggmlAlloc(line[:i]); n >= 0 {
				// llama.cpp's words are part of its message (Library
				// tells it from another program's cudaMalloc failure).
				m.Requested, m.Device = n, d
				m.Text = line[strings.LastIndex(line[:i], "allocating "):i] + m.Text
			}
		}
		r.takeVulkanSize(&m, line, i)
		if m.Generation == GenCUDAError && !m.Host && (m.Backend == "CUDA" || m.Backend == "HIP") {
			if lib, _ := libraryAt(m.Text); lib == "the CUDA runtime" || lib == "the CUDA driver" || lib == "the HIP runtime" {
				if call := pinnedFrameCall(frames); call != "" {
					// The traceback shows the status came from a pinned
					// host allocation (CuPy's alloc_pinned_memory): the
					// machine's memory, as for cudaMallocHost named on
					// the line.
					m.Host, m.Backend, m.hostCall = true, "", call
				}
			}
		}
		if m.Host {
			if kind != weakMessage || m.Generation != GenCUDAError {
				// A runtime's status alone (an issue title) is no
				// evidence, as a GPU status alone is none.
				r.noteHost(m, line, r.line)
			}
			from = max(end, i+1)
			continue
		}
		if kind == message && m.Generation == GenUnparsed && proseQuote(line, i) {
			// A sentence that quotes the error ("your terminal vomits
			// RuntimeError: CUDA out of memory. Tried to allocate 2.50
			// GiB . Cool."): no figures read, no run's output.
			_, exc := splitPrefix(line[:i])
			r.meta.Warnings.Linef(int(r.line), "a CUDA out-of-memory message quoted in a sentence (%q) that does not parse (%s): read as prose that names the error, not as an OOM of this input; nothing was read from it", clip(strings.TrimSpace(line[max(strings.LastIndex(line[:i], exc), 0):])), m.Reason)
			from = max(end, i+1)
			continue
		}
		// A message in a string that closes on this line (a JSON value
		// followed by `",`) cannot go on on the next.
		// A message in a markdown table's cell ends at the cell's end
		// (cellEnd): the next line is the table's next row.
		open := literalEnd(line, i) >= len(strings.TrimRight(line, " \r\n\"'`")) && cellEnd(line, i) == len(line)
		formCut := frameworkFormCut(line, i)
		if (endsCut(m) && !shortened(m) || formCut) && open && findOOM(line, max(end, i+1)) < 0 {
			// It may go on on the next line (a paste wrapped at a
			// width, a logger's multi-line record).
			r.pending = &pendingMessage{text: line, at: i, msg: m, frames: frames, line: r.line, weak: kind == weakMessage, formCut: formCut}
			return nil
		}
		if formCut {
			from = max(end, i+1) // a form cut off, not followed: no message
			continue
		}
		if kind == message && trtFailure(m) && frames == nil {
			// (An exception's text that ends a traceback was raised:
			// the run ended there, the builder did not go on.)
			r.holdTRT(m, frames, r.line)
			frames = nil
		} else if kind == message && m.Generation == GenCUDAError && frames == nil && javaLine(line[:i]) {
			// Its Java stack's frames may follow.
			r.holdJava(m, frames, r.line)
			frames = nil
		} else if kind == message && ggmlFailure(m) {
			// Its chain's lines, and llama.cpp's retry, may follow.
			r.holdGGML(m, frames, r.line)
			frames = nil
		} else if kind == message && m.Generation == GenXLA && m.Reason == "" {
			// XLA's BufferAssignment stats may follow.
			r.xlaStats = &heldMessage{msg: m, frames: frames, line: r.line, lead: line[:i]}
			frames = nil
		} else if d, who := ncclDevice(line[:i]); kind == message && m.Generation == GenCUDAError && who != "" && Library(m.Text) == "NCCL" {
			// The device in NCCL's prefix; the bytes may come on its
			// next line.
			if m.Device < 0 {
				m.Device = d
			}
			r.nccl, r.ncclWho = &heldMessage{msg: m, frames: frames, line: r.line}, who
			r.ncclFailure(who)
			frames = nil
		} else if kind == message && tfNodeHeld(m) {
			// Its device may come on the next line, in the op's node.
			r.tfNode = &heldMessage{msg: m, frames: frames, line: r.line, lead: line[:i]}
			frames = nil
		} else if kind == message && m.Generation == GenCUDAError && m.Requested < 0 && xgboostHeld(line[:i]) && !xgboostInline(&m, line[i:]) {
			// Its free memory and request come on the next lines.
			r.xgb = &heldMessage{msg: m, frames: frames, line: r.line, lead: line[:i]}
			frames = nil
		} else if kind == message && m.Generation == GenCUDAError && nvhpcHeld(line[:i], m.Text) {
			// Its place (" File: ", " Function: ", " Line: ") comes on
			// the next lines.
			r.flushNVHPC()
			r.nvhpc, r.nvhpcPlace = &heldMessage{msg: m, frames: frames, line: r.line, lead: line[:i]}, tbFrame{}
			frames = nil
		} else if kind == message && m.Generation == GenCUDAError && XLAAsyncFailure(line[:i]) {
			// Its free and total memory come on the next line.
			r.xlaAsync = &heldMessage{msg: m, frames: frames, line: r.line, lead: line[:i]}
			frames = nil
		} else if kind == message && frames == nil && ggmlStatusHeld(m, line[:i]) {
			// ggml's device line may follow (ggmldevice.go).
			if h := r.ggmlStatus; h != nil {
				r.ggmlStatus = nil
				r.addMessage(h.msg, h.frames, h.line)
			}
			r.ggmlStatus = &heldMessage{msg: m, frames: frames, line: r.line, lead: line[:i]}
			frames = nil
		} else if kind == message && darknetHeld(m) {
			// After darknet's layer number, darknet's; else its printer
			// may be named by the lines around it.
			r.holdDarknet(m, frames, line[:i])
			frames = nil
		} else if kind == message && reported != "" {
			// An error report's: its log may follow (see holdReport).
			r.holdReport(m, frames)
			frames = nil
		} else if kind == message || weakKept(m) {
			r.addMessage(m, frames, r.line)
			frames = nil
		}
		from = max(end, i+1)
	}
	return nil
}

// keepFolds forgets the folds of lines no message can be added from any
// more (see holdsLine): all but this line's, the line before's (a phrase
// split there, joined with this one) and those of the messages held. A
// held message is added lines after its own (NCCL's after its calloc
// line, the BFC allocator's at TensorFlow's OOM, a wrapped message at
// its last line), and Ray folds each of those lines too: the fold of the
// last line alone would not be the held message's. It prunes when the
// folds reach foldsCap, then doubles what remains, so that the work is
// constant per fold however many messages are held.
func (r *Reader) keepFolds() {
	if r.folds == nil {
		r.folds = map[int64]rayFold{}
	}
	if len(r.folds) < r.foldsCap {
		return
	}
	for k := range r.folds {
		if k < r.line-1 && !r.holdsLine(k) {
			delete(r.folds, k)
		}
	}
	r.foldsCap = 2*len(r.folds) + 16
}

// holdsLine reports whether a message read from line n is held, not yet
// added: a message that may go on (pending), one held for the lines
// after it (heldMessage), a TensorRT failure (trtBuild).
func (r *Reader) holdsLine(n int64) bool {
	if p := r.pending; p != nil && p.line == n {
		return true
	}
	for _, h := range []*heldMessage{r.xlaAsync, r.xlaStats, r.bfc, r.nccl, r.java, r.tfOp, r.xgb, r.tfNode, r.nvhpc, r.report, r.darknet, r.ggmlStatus} {
		if h != nil && h.line == n {
			return true
		}
	}
	if b := r.trt; b != nil {
		for _, h := range b.held {
			if h.line == n {
				return true
			}
		}
	}
	if g := r.ggml; g != nil {
		for _, h := range g.held {
			if h.line == n {
				return true
			}
		}
	}
	for _, h := range r.behind {
		if h.line == n {
			return true
		}
	}
	return false
}

// noteKind remembers the line of an out-of-memory message as the first
// of its kind for Ray's folds (rayKey), unless one came before it.
func (r *Reader) noteKind(line string) {
	if r.rayKeys == nil {
		r.rayKeys = map[string]int64{}
	}
	k := rayKey(line)
	if _, ok := r.rayKeys[k]; !ok && len(r.rayKeys) < maxRayKeys {
		r.rayKeys[k] = r.line
	}
}

// takeBFCSize gives m, TensorFlow's OOM, the request and device of the
// BFC allocator's failure (or of an op's record that took them from one)
// it stands for, where its own words give none: TensorFlow's message
// names a shape, the allocator's record the bytes it could not allocate
// (rounded, see bfcFailure).
func takeBFCSize(m *Message, from Message) {
	if m.Requested < 0 {
		m.Requested = from.Requested
	}
	if m.Device < 0 && from.Device >= 0 {
		m.Device, m.Backend = from.Device, from.Backend
	}
}

// holdTFOp holds TensorFlow's op_kernel.cc record of an op that failed
// for want of GPU memory at line[at] ("W .../op_kernel.cc:1318]
// OP_REQUIRES failed at assign_op.h:117 : Resource exhausted: OOM when
// allocating tensor ...", OpKernelContext::CtxFailureWithWarning, TF 1.5
// and later), and reports whether it took the line. The record is logged
// at WARNING level, yet the op failed: op_kernel.cc sets the op's status,
// and TensorFlow returns it to the caller, which raises it
// (ResourceExhaustedError) unless the program catches it. The exception,
// where the text has it, is the OOM (addMessage drops the record then);
// at the end of the text, a record no exception followed is counted (see
// endTFOp): the log was cut after it, or the program caught the error.
// The BFC allocator's failure held before it (the allocation the op could
// not make) is the same failure: the record takes its size. Records of
// other ops read while one is held (ops running in parallel fail
// together) are read as the same failure.
func (r *Reader) holdTFOp(line string, at int) bool {
	if !strings.Contains(line[:at], "op_kernel.cc:") {
		return false
	}
	m, _ := ParseMessage(line, at)
	if m.Host {
		r.noteHost(m, line, r.line) // an op's failure in host memory (/device:CPU:0): no GPU OOM
		return true
	}
	if m.Generation != GenTF && m.Generation != GenXLA {
		return false // not an allocator's words: noteLogged says so
	}
	m.Prefix, m.Exception = splitPrefix(line[:at])
	if r.tfOp != nil {
		r.tfOpMore++
	} else {
		r.tfOp = &heldMessage{msg: m, line: r.line}
	}
	if h := r.bfc; h != nil && (m.Device < 0 || h.msg.Device < 0 || m.Device == h.msg.Device) {
		r.bfc = nil
		if r.tfOpMore == 0 {
			takeBFCSize(&r.tfOp.msg, h.msg)
		}
	}
	r.noteKind(line) // for Ray's folds
	return true
}

// endTFOp counts the op failure held at the end of the text (see
// holdTFOp) as an OOM, with a warning that no exception followed it.
func (r *Reader) endTFOp() {
	h := r.tfOp
	if h == nil {
		return
	}
	more := ""
	if r.tfOpMore > 0 {
		more = fmt.Sprintf("; %d more ops' failures logged after it, with no exception between, are read as the same failure", r.tfOpMore)
	}
	r.tfOp, r.tfOpMore = nil, 0
	r.meta.Warnings.Linef(int(h.line), "a TensorFlow op's failure logged at WARNING level by op_kernel.cc (%s) with no TensorFlow exception after it in the text: TensorFlow returns the op's failed status to the caller, which raises it (ResourceExhaustedError) unless the program catches it, so the text was cut after it or the program caught the error; counted as an OOM%s", clip(h.msg.Text), more)
	r.addMessage(h.msg, h.frames, h.line)
}

// noteLogged warns of an out-of-memory error that a framework logged at
// INFO or WARNING level (see loggedOnly): it is not counted as an OOM.
func (r *Reader) noteLogged(line string, at int) {
	level := "INFO"
	if logLevel(line[:at]) == 'W' {
		level = "WARNING"
	}
	size := ""
	if n := driverBytes(line[:at]); n >= 0 {
		size = fmt.Sprintf(" of %d bytes", n)
	}
	// Why a program logs an OOM and goes on: TensorFlow probes how much
	// GPU memory it can take; a PyTorch program catches the exception
	// (an evaluation loop that skips the batch, a runner that retries)
	// and logs its text, which may repeat an exception printed above.
	why := "TensorFlow probes how much GPU memory it can take and retries smaller"
	if pytorchAllocatorAt(line, at) {
		why = "a PyTorch allocator's message, caught and logged by the program: the same OOM may be printed as an exception nearby"
	}
	const format = "a log record at %s level reports an allocation%s that ran out of memory (%s): the program logged it and went on (%s), so it is not counted as an OOM; an ERROR record or an exception that ends the run would be"
	text := clip(strings.TrimRight(line[at:], " \r\n"))
	if strings.Contains(line[:at], "op_kernel.cc:") {
		// OpKernelContext::CtxFailureWithWarning: the op failed; the
		// status goes back to the caller, which raises it. Nothing was
		// retried, and nothing says the run went on.
		const opFormat = "a TensorFlow op's failure logged at %s level by op_kernel.cc (%s), in words not read as an allocator's out-of-memory message: not counted; TensorFlow logs an op's failed status so (\"OP_REQUIRES failed at\" in 1.5 and later) and returns it to the caller, which raises it"
		r.meta.Warnings.Linef(int(r.line), opFormat, level, text)
		r.meta.NotOOMs.Linef(int(r.line), opFormat, level, text)
		return
	}
	r.meta.Warnings.Linef(int(r.line), format, level, size, text, why)
	r.meta.NotOOMs.Linef(int(r.line), format, level, size, text, why)
}

// pytorchAllocatorAt reports whether the out-of-memory message at line[at]
// is a PyTorch caching allocator's ("CUDA out of memory. Tried to
// allocate", the HIP, XPU and MPS forms, or one cut before its first
// words), not a framework's or a library's.
func pytorchAllocatorAt(line string, at int) bool {
	rest := line[at:]
	for _, p := range []string{"CUDA out of memory", "HIP out of memory", "XPU out of memory", "MPS backend out of memory", "Tried to allocate ", "(GPU ", "GPU "} {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

// noteHost warns of an out-of-memory error in host memory (see
// Message.Host), found on line (its text) and warned of at input line n:
// the machine's RAM, not a GPU's, so it is not counted as an OOM.
func (r *Reader) noteHost(m Message, line string, n int64) {
	note := hostNote(m, line)
	r.meta.Warnings.Linef(int(n), "%s", note)
	r.meta.NotOOMs.Linef(int(n), "%s", note)
}

// complete reports whether a message was read whole.
func complete(m Message) bool {
	return m.Generation == Gen1 || m.Generation == Gen2 || (m.Generation == GenMPS || m.Generation == GenAsync) && m.Reason == ""
}

// weakKept reports whether a weak mention (see classify) is a message
// after all: read whole, or cut after it named the GPU ("Tried to allocate
// 20.00 MiB (GPU 0; 1.96 GiB total capa").
func weakKept(m Message) bool {
	if m.Generation == GenCut && shortenedReason(m.Reason) {
		// Shortened with "..." where no exception type or "CUDA out of
		// memory" leads into it: prose or docs quoting the form
		// ("`Tried to allocate 20.00 MiB. GPU 0 has ... ...`").
		return false
	}
	if Framework(m.Generation) != "" && m.Reason == "" && m.Requested > 0 {
		// Another framework's message read whole with its size, after
		// its status in the same code span ("I receive `
		// RESOURCE_EXHAUSTED: Out of memory while trying to allocate
		// 285212672 bytes.` errors"): the error quoted, as a PyTorch
		// message read whole is.
		return true
	}
	return complete(m) || (m.Generation == GenCut && (strings.Contains(m.Text, "(GPU ") || strings.Contains(m.Text, ". GPU ") || strings.HasPrefix(m.Text, "GPU ")))
}

// heldMessage is a message read whole, kept until the line after it has
// been seen (see Reader.xlaAsync).
type heldMessage struct {
	msg    Message
	frames []tbFrame
	line   int64
	lines  int // lines taken after it
	// lead is the text before the message on its line: the lines after
	// it that are read for it repeat its prefix (a launcher's, a
	// collector's timestamp, Ray's worker label), which contLine removes.
	lead string
}

// maxWrapLines bounds the lines a wrapped message is joined from.
const maxWrapLines = 8

// pendingMessage is a message that ended with its line, maybe wrapped.
type pendingMessage struct {
	text   string // the lines joined so far
	at     int    // where the message starts in text
	msg    Message
	frames []tbFrame
	line   int64 // the message's first line
	joined int
	weak   bool // dropped unless weakKept (see classify)
	// formCut says the line ended inside a framework's form
	// (frameworkFormCut): dropped unless a next line completes it.
	formCut bool
	blank   int   // blank lines skipped since the last part
	parked  int64 // the line where switchPending last set it aside
}

// endsCut reports whether a message stopped at the end of its text (not
// at a departure from the form): PyTorch's forms, and any framework's
// (frameworkOOMs) whose figure the line's end cut off ("available memory
// is only" then the size on the next line).
func endsCut(m Message) bool {
	return (m.Generation == GenCut || m.Generation == GenUnparsed || m.Generation == GenAsync || m.Generation == GenMPS || Framework(m.Generation) != "") && strings.HasPrefix(m.Reason, "the message ends at column")
}

// wholeFramework reports whether a framework's message (frameworkOOMs)
// was read to the end of its form.
func wholeFramework(m Message) bool {
	return Framework(m.Generation) != "" && m.Reason == ""
}

// shortened reports a message cut where an ellipsis stands for the rest:
// it was shortened there on purpose and does not go on on the next line
// (taking the lines after it in, a full traceback among them, as its
// continuation: each "progressed", the text longer and still cut).
func shortened(m Message) bool { return shortenedReason(m.Reason) }

// continuePending tries line as the continuation of a message that ended
// with the previous line; it reports whether the line was used.
func (r *Reader) continuePending(line string) bool {
	p := r.pending
	// The prefix the message's line had (a launcher's, a collector's
	// timestamp, a quote), comment marks and quotes before a
	// continuation, a closing quote after it (a message split across
	// Python string literals).
	cont := contLine(p.text[:p.at], line)
	if cont == "" && p.blank < 2 && p.joined < maxWrapLines {
		// Parts of a message separated by blank lines (a paste whose
		// line ends were doubled).
		p.blank++
		return true
	}
	if cont == "" || p.joined == maxWrapLines || len(p.text) > maxLine {
		r.flushPending()
		return false
	}
	base := strings.TrimRight(p.text, " \"'")
	// Wrapped at a space (the usual case), or inside a word.
	for _, sep := range []string{" ", ""} {
		text := base + sep + cont
		m, _ := ParseMessage(text, p.at)
		progressed := complete(m) || wholeFramework(m) || (endsCut(m) && len(text) > len(p.text))
		if !progressed {
			continue
		}
		p.text, p.msg, p.joined, p.blank = text, m, p.joined+1, 0
		p.formCut = p.formCut && frameworkFormCut(text, p.at)
		if !endsCut(m) || shortened(m) {
			r.flushPending()
		}
		return true
	}
	r.flushPending()
	return false
}

// maxParked bounds the messages of other processes set aside while they
// may go on (switchPending); maxParkedLines the lines one stays aside
// without a line of its process (a prefix that only looked like another
// process's: "step 1: " after "step 0: "), and maxBehind the messages
// held behind them (holdBehind).
const (
	maxParked      = 16
	maxParkedLines = 64
	maxBehind      = 256
)

// switchPending makes the message that may go on on line the pending one
// when processes' lines interleave (torchrun's "[rank0]: " and "[rank1]: ",
// srun -l's "0: " and "1: ", Ray's workers): each process's wrapped
// message goes on on its own lines. A line whose prefix has the shape of
// the pending message's prefix but other digits than those of its dates
// and times (samePrefix fails) is another process's: the pending message
// is set aside (parked), and one parked whose prefix the line has takes
// its place. A line without such a prefix changes nothing: it goes on,
// or ends, the pending message as before.
func (r *Reader) switchPending(line string) {
	if len(r.parked) > 0 && (r.parked[0].parked+maxParkedLines < r.line || len(r.behind) >= maxBehind) {
		r.flushParked(len(r.behind) >= maxBehind)
	}
	if p := r.pending; p != nil {
		pfx, _ := splitPrefix(p.text[:p.at])
		if !otherProcess(line, pfx) {
			return
		}
		r.pending = nil
		if len(r.parked) == maxParked {
			r.pending = r.parked[0]
			r.parked = r.parked[1:]
			r.flushPending()
		}
		p.parked = r.line
		r.parked = append(r.parked, p)
	}
	for k, p := range r.parked {
		if pfx, _ := splitPrefix(p.text[:p.at]); pfx != "" && samePrefix(line, pfx) >= 0 {
			r.parked = append(r.parked[:k], r.parked[k+1:]...)
			r.pending = p
			return
		}
	}
}

// flushParked ends the parked messages set aside more than
// maxParkedLines ago (all of them when all is set), as read so far.
func (r *Reader) flushParked(all bool) {
	pending := r.pending
	var kept []*pendingMessage
	for _, p := range r.parked {
		if all || p.parked+maxParkedLines < r.line {
			r.pending = p
			r.flushPending()
			continue
		}
		kept = append(kept, p)
	}
	r.parked, r.pending = kept, pending
	r.drainBehind()
}

// otherProcess reports whether line starts with a prefix of the shape of
// pfx (the same text, digits aside) that is not pfx but for its dates and
// times of day (samePrefix): "[rank1]: " for "[rank0]:", "1: " for "0:".
func otherProcess(line, pfx string) bool {
	if pfx == "" || strings.IndexAny(pfx, "0123456789") < 0 || samePrefix(line, pfx) >= 0 {
		return false
	}
	if _, ok := gutter(pfx); ok {
		return false // a line number, not a process
	}
	return strings.HasPrefix(digitShape(line[:min(len(line), 2*len(pfx)+16)]), digitShape(pfx))
}

// digitShape is s with each run of digits replaced by "#".
func digitShape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			if i == 0 || !isDigit(s[i-1]) {
				b.WriteByte('#')
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// holdBehind holds m, of line, while a message of an earlier line may
// still go on (parked by switchPending, or pending after it) or one held
// before it waits: the messages table is in the order of lines. It
// reports whether m was held.
func (r *Reader) holdBehind(m Message, frames []tbFrame, line int64) bool {
	if r.atEnd && !r.draining {
		r.behind = append(r.behind, heldMessage{msg: m, frames: frames, line: line})
		return true
	}
	if r.draining || len(r.behind) == 0 && r.earliestOpen() >= line {
		return false
	}
	if len(r.behind) >= maxBehind && r.trt != nil {
		r.drainBehind() // no longer behind TensorRT's failures (earliestOpen)
		if len(r.behind) == 0 && r.earliestOpen() >= line {
			return false
		}
	}
	r.behind = append(r.behind, heldMessage{msg: m, frames: frames, line: line})
	return true
}

// earliestOpen is the first line of the earliest message parked, or
// pending while others are parked or held, or of TensorRT's failures
// held; math.MaxInt64 when none.
func (r *Reader) earliestOpen() int64 {
	open := int64(math.MaxInt64)
	for _, p := range r.parked {
		open = min(open, p.line)
	}
	if r.pending != nil && (len(r.parked) > 0 || len(r.behind) > 0) {
		open = min(open, r.pending.line)
	}
	if b := r.trt; b != nil && len(b.held) > 0 && len(r.behind) < maxBehind {
		// TensorRT's failures wait for a line that tells what became of
		// them (trtbuild.go); a message after them waits with them, up
		// to maxBehind messages (then they are written ahead).
		open = min(open, b.held[0].line)
	}
	return open
}

// drainBehind writes the held messages (holdBehind) of lines before any
// message still open, in the order of their lines.
func (r *Reader) drainBehind() {
	if len(r.behind) == 0 || r.draining || r.atEnd {
		return
	}
	slices.SortStableFunc(r.behind, func(a, b heldMessage) int { return cmp.Compare(a.line, b.line) })
	open := r.earliestOpen()
	r.draining = true
	k := 0
	for ; k < len(r.behind) && r.behind[k].line < open; k++ {
		h := r.behind[k]
		r.addMessage(h.msg, h.frames, h.line)
	}
	r.draining = false
	r.behind = r.behind[k:]
}

func (r *Reader) flushPending() {
	defer r.drainBehind()
	if p := r.pending; p != nil {
		r.pending = nil
		if p.formCut {
			r.meta.Warnings.Linef(int(p.line), "the text ends inside the form of %s's out-of-memory message (%q) and no next line completes it: not read as one", Framework(p.msg.Generation), clip(strings.TrimRight(p.text[p.at:], " \r\n")))
			return
		}
		if !p.weak || weakKept(p.msg) {
			r.addMessage(p.msg, p.frames, p.line)
		}
	}
}

// tracebackOf finds the traceback a line continues: the one whose prefix
// the line starts with, or else one whose prefix it matches but for its
// dates and times of day (samePrefix: a timestamp that moved on). A
// prefix that differs in another number is another process's
// ("[rank1]: " is not "[rank0]: "): its frames are not this traceback's.
// It returns -1 when none.
func (r *Reader) tracebackOf(line string) (int, string) {
	for k, tb := range r.tbs {
		if strings.HasPrefix(line, tb.prefix) {
			return k, line[len(tb.prefix):]
		}
	}
	for k, tb := range r.tbs {
		if tb.prefix == "" {
			continue
		}
		if n := samePrefix(line, tb.prefix); n >= 0 {
			return k, line[n:]
		}
	}
	return -1, ""
}

// excTail is a traceback whose exception line held no OOM message: an
// exception's text may go on over lines, the status on the next
// ("RuntimeError: /io/include/tensorview/tensor.h 168" then "cuda failed
// with error 2 out of memory"). An OOM that starts the very next line
// (after the traceback's prefix) is that exception's, with its frames.
type excTail struct {
	frames []tbFrame
	prefix string
	at     int64 // Reader.nline of the exception's line (a blank line skipped between is not counted there)
	line   int64 // and its line in the input (a notebook's lines of one string share it)
}

// exceptionLeadRe matches an exception's name and colon alone
// ("RuntimeError: ", "ray.exceptions.RayTaskError: ").
var exceptionLeadRe = lazyre.New(`^[A-Za-z_][\w.]*(?:\([\w.]*\))?:\s*$`)

// raisedTraceback returns the traceback open whose exception line is
// before, the text before a "Traceback (most recent call last):" on its
// line: the traceback's prefix, then an exception's name and colon
// (exceptionLeadRe), after at least one frame; nil when there is none.
func (r *Reader) raisedTraceback(before string) *traceback {
	for _, tb := range r.tbs {
		if len(tb.frames) > 0 && !tb.rich && !tb.ipython && strings.HasPrefix(before, tb.prefix) && exceptionLeadRe.MatchString(before[len(tb.prefix):]) {
			return tb
		}
	}
	return nil
}

// startTraceback opens a traceback on the lines that start with prefix
// (closing the one open there) and returns it.
func (r *Reader) startTraceback(prefix string) *traceback {
	for k, tb := range r.tbs {
		if tb.prefix == prefix {
			r.tbs = append(r.tbs[:k], r.tbs[k+1:]...)
			break
		}
	}
	if len(r.tbs) == maxTracebacks {
		r.tbs = r.tbs[1:]
	}
	tb := &traceback{prefix: prefix}
	r.tbs = append(r.tbs, tb)
	return tb
}

func (r *Reader) addMessage(m Message, frames []tbFrame, line int64) {
	if h := r.report; h != nil {
		r.report = nil
		if !reportPrinted(h.msg, m) {
			r.addMessage(h.msg, h.frames, h.line)
		}
	}
	if h := r.tfOp; h != nil && (m.Generation == GenTF || m.Generation == GenXLA) && !m.Host && !BFCFailure(m.Text) && (m.Device < 0 || h.msg.Device < 0 || m.Device == h.msg.Device) {
		// The exception TensorFlow raised from the op's failure it
		// logged (see holdTFOp): one OOM, read from the exception,
		// with the size the op's record took from the BFC allocator.
		// (Before holdBehind: the exception stands for the record
		// whenever it is written.)
		r.tfOp, r.tfOpMore = nil, 0
		takeBFCSize(&m, h.msg)
		completeCutTF(&m, h.msg)
	}
	r.takeBFCStats(&m, line)
	if h := r.bfc; h != nil {
		r.bfc = nil
		if m.Generation == GenTF && !m.Host && (m.Device < 0 || h.msg.Device < 0 || m.Device == h.msg.Device) {
			// TensorFlow's OOM for the allocation the BFC allocator
			// logged: one OOM, read from TensorFlow's words, with the
			// allocator's size where TensorFlow's give none (a shape).
			// (One on another GPU, "by allocator GPU_0_bfc" after
			// GPU_1_bfc's failure, is another allocator's OOM: both are
			// counted.) Before holdBehind, as tfOp's: at the text's end
			// every message waits in behind, and the pair is one OOM
			// whenever it is written.
			takeBFCSize(&m, h.msg)
		} else {
			r.addMessage(h.msg, h.frames, h.line)
		}
	}
	if r.holdBehind(m, frames, line) {
		return
	}
	r.theanoMessageDevice(&m, line)
	id := r.nmsg
	r.nmsg++
	r.meta.Messages++
	backend := "a " + m.Backend
	switch m.Backend {
	case "":
		backend = "a CUDA" // "Tried to allocate" without the words before
	case "XPU", "MPS":
		backend = "an " + m.Backend
	}
	if m.Generation == GenCut {
		r.meta.Warnings.Linef(int(line), "%s out-of-memory message cut short (%s); only the figures before the cut were read", backend, m.Reason)
	}
	if m.Generation == GenUnparsed {
		r.meta.Warnings.Linef(int(line), "%s out-of-memory message that does not parse (%s); nothing was read from it", backend, m.Reason)
	}
	if m.Generation == GenMPS && m.Reason != "" {
		r.meta.Warnings.Linef(int(line), "an MPS out-of-memory message cut short (%s); the figures before the cut were read", m.Reason)
	}
	if m.Generation == GenAsync && m.Reason == AsyncDeviceZeroCut {
		r.meta.Warnings.Linef(int(line), "a cudaMallocAsync out-of-memory message without its figures (\"Allocation on device \" alone: device 0's index, written as a NUL byte, ended it): counted as an OOM on device 0, with no sizes")
	} else if m.Generation == GenAsync && m.Reason != "" {
		r.meta.Warnings.Linef(int(line), "a cudaMallocAsync out-of-memory message cut short (%s); the figures before the cut were read", m.Reason)
	}
	for _, w := range m.Warnings {
		r.meta.Warnings.Linef(int(line), "%s", w)
	}
	b := r.out.Builder(TableMessages)
	b.Field(MsgID).(*array.Int32Builder).Append(id)
	b.Field(MsgLine).(*array.Int64Builder).Append(line)
	b.Field(MsgGeneration).(*array.BinaryDictionaryBuilder).AppendString(string(m.Generation))
	b.Field(MsgTypo).(*array.BooleanBuilder).Append(m.Typo)
	b.Field(MsgBackend).(*array.StringBuilder).Append(m.Backend)
	if m.Exception != "" {
		b.Field(MsgException).(*array.StringBuilder).Append(m.Exception)
	} else {
		b.Field(MsgException).AppendNull()
	}
	b.Field(MsgPrefix).(*array.StringBuilder).Append(m.Prefix)
	if m.Device >= 0 {
		b.Field(MsgDevice).(*array.Int32Builder).Append(int32(m.Device))
	} else {
		b.Field(MsgDevice).AppendNull()
	}
	for col, v := range map[int]int64{
		MsgRequested: m.Requested, MsgTotal: m.Total, MsgFree: m.Free, MsgProcessInUse: m.ProcessInUse,
		MsgAllowed: m.Allowed, MsgAllocated: m.Allocated, MsgPrivatePools: m.PrivatePools,
		MsgReservedUnallocated: m.ReservedUnallocated, MsgReserved: m.Reserved,
	} {
		if v >= 0 {
			b.Field(col).(*array.Int64Builder).Append(v)
		} else {
			b.Field(col).AppendNull()
		}
	}
	if m.Reason != "" {
		b.Field(MsgReason).(*array.StringBuilder).Append(m.Reason)
	} else {
		b.Field(MsgReason).AppendNull()
	}
	b.Field(MsgText).(*array.StringBuilder).Append(m.Text)
	b.Field(MsgCached).(*array.BooleanBuilder).Append(m.Cached)
	if len(m.Coarse) > 0 {
		b.Field(MsgCoarse).(*array.StringBuilder).Append(FormatCoarse(m.Coarse))
	} else {
		b.Field(MsgCoarse).AppendNull()
	}
	if f, ok := r.folds[line]; ok {
		b.Field(MsgFolded).(*array.Int32Builder).Append(int32(min(f.n, 1<<30)))
		if f.first > 0 {
			b.Field(MsgFoldedFirst).(*array.Int64Builder).Append(f.first)
		} else {
			b.Field(MsgFoldedFirst).AppendNull()
		}
	} else {
		b.Field(MsgFolded).AppendNull()
		b.Field(MsgFoldedFirst).AppendNull()
	}
	p := r.progressBefore(m.Prefix, line)
	if q, ok := r.progressAt[line]; ok {
		p = q
		delete(r.progressAt, line)
	}
	if p > 0 {
		b.Field(MsgProgressLine).(*array.Int64Builder).Append(p)
	} else {
		b.Field(MsgProgressLine).AppendNull()
	}
	if m.Printer != "" {
		b.Field(MsgPrinter).(*array.StringBuilder).Append(m.Printer)
	} else {
		b.Field(MsgPrinter).AppendNull()
	}
	b.Field(MsgReraised).(*array.BooleanBuilder).Append(m.Reraised)
	if m.Call != "" {
		b.Field(MsgCall).(*array.StringBuilder).Append(m.Call)
	} else {
		b.Field(MsgCall).AppendNull()
	}
	r.maybeFlush(TableMessages)

	pb := r.out.Builder(TableProcesses)
	for _, p := range m.Processes {
		pb.Field(ProcMessage).(*array.Int32Builder).Append(id)
		pb.Field(ProcPID).(*array.Int64Builder).Append(p.PID)
		pb.Field(ProcBytes).(*array.Int64Builder).Append(p.Bytes)
	}
	r.maybeFlush(TableProcesses)

	fb := r.out.Builder(TableFrames)
	for d := range frames {
		f := frames[len(frames)-1-d] // innermost first
		fb.Field(FrMessage).(*array.Int32Builder).Append(id)
		fb.Field(FrDepth).(*array.Int32Builder).Append(int32(d))
		fb.Field(FrFilename).(*array.StringBuilder).Append(f.file)
		fb.Field(FrLine).(*array.Int64Builder).Append(f.line)
		fb.Field(FrName).(*array.StringBuilder).Append(f.name)
	}
	r.maybeFlush(TableFrames)
}

// addStat appends one stats row.
func (r *Reader) addStat(set int32, setLine int64, source string, device int, key string, value, resolution, line int64) {
	b := r.out.Builder(TableStats)
	b.Field(StSet).(*array.Int32Builder).Append(set)
	b.Field(StSetLine).(*array.Int64Builder).Append(setLine)
	b.Field(StSource).(*array.BinaryDictionaryBuilder).AppendString(source)
	if device >= 0 {
		b.Field(StDevice).(*array.Int32Builder).Append(int32(device))
	} else {
		b.Field(StDevice).AppendNull()
	}
	b.Field(StKey).(*array.StringBuilder).Append(key)
	b.Field(StValue).(*array.Int64Builder).Append(value)
	b.Field(StResolution).(*array.Int64Builder).Append(resolution)
	b.Field(StLine).(*array.Int64Builder).Append(line)
	if p := r.setProcess[set]; p != "" {
		b.Field(StProcess).(*array.BinaryDictionaryBuilder).AppendString(p)
	} else {
		b.Field(StProcess).AppendNull()
	}
	r.maybeFlush(TableStats)
}

// splitPhrase is a line that ends inside an out-of-memory phrase's words:
// at is where the phrase would start, sep what joins the next line to it
// (" " after a whole word, "" inside one).
type splitPhrase struct {
	text, sep string
	at        int
	line      int64
	// rests are the words each phrase it may be of would go on with.
	rests []string
	// frames are the traceback's whose exception line it is, if any.
	frames []tbFrame
}

// goesOn reports whether cont, the next line, starts as the rest of one
// of the phrases the line may end in (or is all of what it holds).
func (p *splitPhrase) goesOn(cont string) bool {
	for _, r := range p.rests {
		n := min(len(r), len(cont))
		if n > 0 && cont[:n] == r[:n] {
			return true
		}
	}
	return false
}

// phraseWords indexes the words of oomPhrases by their first three bytes:
// each entry a phrase and where in it the word starts. Built on first use
// (a text log's line without an OOM), not at every start.
var phraseWords = sync.OnceValue(func() map[string][][2]int {
	m := map[string][][2]int{}
	for k, p := range oomPhrases {
		for j := 0; j+3 <= len(p); j++ {
			if j == 0 || p[j-1] == ' ' {
				m[p[j:j+3]] = append(m[p[j:j+3]], [2]int{k, j})
			}
		}
	}
	return m
})

// phraseCut returns line as a splitPhrase when its last word (three bytes
// at least) ends it inside an out-of-memory phrase with the phrase's
// words before it on the line, as far as the phrase goes: "Resource
// exhausted: Out" of "Out of memory while trying to allocate ", "...
// CUDA out of mem" of "CUDA out of memory". Nil otherwise.
func phraseCut(line string, n int64) *splitPhrase {
	t := strings.TrimRight(line, " \t")
	w := t[strings.LastIndexAny(t, " \t")+1:]
	if len(w) < 3 {
		return nil
	}
	var sp *splitPhrase
	for _, e := range phraseWords()[w[:3]] {
		p, j := oomPhrases[e[0]], e[1]
		end := j + len(w)
		if end >= len(p) || !strings.HasPrefix(p[j:], w) || !strings.HasSuffix(t, p[:end]) {
			continue
		}
		sep := ""
		if p[end] == ' ' {
			sep = " "
		}
		if sp == nil {
			sp = &splitPhrase{text: t, sep: sep, at: len(t) - end, line: n}
		} else if sep != sp.sep || len(t)-end != sp.at {
			continue // the first phrase's reading of the cut stands
		}
		sp.rests = append(sp.rests, p[end+len(sep):])
	}
	return sp
}

// maxNCCLFailed bounds the NCCL threads whose failure lines wait for
// their calloc line (Reader.ncclFailed).
const maxNCCLFailed = 256

// ncclFailure notes a "Cuda failure" line of NCCL's thread who: its
// "Failed to CUDA calloc" line, when it comes, is that failure's.
func (r *Reader) ncclFailure(who string) {
	if r.ncclFailed == nil {
		r.ncclFailed = map[string]bool{}
	}
	if len(r.ncclFailed) < maxNCCLFailed {
		r.ncclFailed[who] = true
	}
}

// ncclAlone reads NCCL's "Failed to CUDA calloc N bytes" when no "Cuda
// failure" line of its thread (the same "host:pid:tid [cudaDev]") came
// before it (an out-of-memory one just before is held and takes the
// bytes: see Reader.nccl), and reports whether it took the line. NCCL's alloc.h prints the line only when the
// allocation call itself failed (cudaMalloc, or cuMem's allocation,
// leaving the pointer null; a failure after it, in the memset, leaves
// it set and prints nothing), and its CUDACHECK or CUCHECK always logs
// the CUDA error on the line before ("Cuda failure '%s'"). Seen after a
// failure line of its thread, the line is that failure's: an OOM already
// read, or another error (invalid argument, a sticky error of an earlier
// fault), no OOM. Seen alone, its
// failure line was cut from the text: it is read as NCCL's out-of-memory
// message of N bytes on its line prefix's device, the error most often
// behind a failed allocation, with a warning that the text does not say
// which error it was.
func (r *Reader) ncclAlone(line string) bool {
	if !strings.Contains(line, "NCCL WARN ") {
		return false
	}
	if ncclFailureRe.MatchString(line) {
		if findOOM(line, 0) < 0 {
			i := strings.Index(line, "NCCL WARN Cuda failure ")
			if _, who := ncclDevice(line[:i+len("NCCL WARN ")]); who != "" {
				r.ncclFailure(who)
			}
		}
		return false
	}
	x := ncclCallocRe.FindStringSubmatch(line)
	if x == nil || findOOM(line, 0) >= 0 {
		return false
	}
	at := strings.Index(line, ncclCallocWords)
	d, who := ncclDevice(line[:at])
	if who == "" {
		return false
	}
	if r.ncclFailed[who] {
		// Its failure line came before it: an out-of-memory message
		// already read, or another error's.
		delete(r.ncclFailed, who)
		return true
	}
	n, _ := strconv.ParseInt(x[1], 10, 64)
	m := Message{Generation: GenCUDAError, Backend: "CUDA", Device: d, Requested: n, Total: -1, Free: -1, ProcessInUse: -1, Allowed: -1,
		Allocated: -1, PrivatePools: -1, ReservedUnallocated: -1, Reserved: -1, Inactive: -1}
	m.Text = strings.TrimRight(line[at:], " ")
	m.Prefix, _ = splitPrefix(line[:at])
	r.meta.Warnings.Linef(int(r.line), "NCCL's %q without the line before it that names the CUDA error (\"Cuda failure '...'\", cut from the text): NCCL prints it only after the allocation call failed, and out of memory is the error most often behind that; read as an out-of-memory error, which the text does not say it was", m.Text)
	r.addMessage(m, nil, r.line)
	return true
}
