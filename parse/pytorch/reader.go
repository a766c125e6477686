package pytorch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"io"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pickle"
)

// Metadata is what a snapshot says besides its tables. It is complete once
// Reader.Next has returned false without error.
type Metadata struct {
	// Protocol is the pickle protocol (0 to 5).
	Protocol int
	// Legacy is true for a PyTorch 1.13 snapshot: a bare list of segments,
	// without device traces.
	Legacy bool
	// TraceEntries counts the trace entries of each device trace; its
	// length is the number of device traces in the snapshot.
	TraceEntries []int64
	// TimedEntries counts trace entries that carry time_us.
	TimedEntries int64
	// AllocatorSettings is the "allocator_settings" dict (PyTorch 2.5+),
	// nil when absent: str keys, values as Go string, int64, uint64,
	// float64, bool, nil, []any or map[string]any.
	AllocatorSettings map[string]any
	// Warnings about the input, in the order found, with their positions.
	Warnings parse.Warnings
}

// Option configures a Reader.
type Option func(*options)

type options struct {
	parse.ReaderOptions
	limits    pickle.Limits
	readAhead bool
	// general turns the fast paths off (frames lists reused, ...): the
	// differential tests compare the tables both ways.
	general bool
}

// withGeneralPath reads without the fast paths, for the differential tests.
func withGeneralPath() Option { return func(o *options) { o.general = true } }

// WithReadAhead reads the input on a goroutine of its own, a few 256 KiB
// chunks ahead of the decoder, so that gzip inflation runs beside
// decoding. Release then waits for the read in progress to end: use it
// for regular files, whose reads always end, not for a pipe that may
// block.
func WithReadAhead() Option { return func(o *options) { o.readAhead = true } }

// Eight chunks (2 MiB) rather than three: with the analysis also busy, the
// inflating goroutine gets a core in bursts, and the deeper queue lets it
// fill more in each, so the decoder waits on it less. On big_real, 2 cores
// of the device host, 30 interleaved rounds: 0.425 s against 0.474 s for
// three chunks (and -10% and -16% in two shorter runs), for 2-4 MB more RSS.
// The chunks are lent to the decoder (pickle.ChunkReader) with the
// headroom it needs, rather than copied into its buffer: each copy cost
// 1.5-2.5% of analyze's CPU time on big_real.
const (
	readAheadChunk  = 256 << 10
	readAheadChunks = 8
)

// WithAllocator sets the Arrow allocator of the record batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return parse.WithAllocator[options](mem) }

// WithBatchSize sets the most rows in one record batch (default 4096).
func WithBatchSize(n int) Option { return parse.WithBatchSize[options](n) }

// WithLimits sets the pickle decoder's allocation limits.
func WithLimits(l pickle.Limits) Option { return func(o *options) { o.limits = l } }

// Reader streams the tables of one snapshot as Arrow record batches:
//
//	r := pytorch.NewReader(f, "snap.pickle")
//	defer r.Release()
//	for r.Next() {
//		switch r.Table() { case pytorch.TableEvents: use(r.RecordBatch()) ... }
//	}
//	if err := r.Err(); err != nil { ... }
//	meta := r.Metadata()
//
// Errors are *parse.Error values with the byte offset at fault (of the
// decompressed stream for gzip input). A pickle that would run code, a
// truncated or corrupt file, and a pickle that is not a snapshot all end
// the stream with an error; batches already returned must then be treated
// as incomplete.
//
// Next, Table, RecordBatch and Err are parse.TableReader's.
type Reader struct {
	tableReader // Next, Table, RecordBatch, Err; Release is the Reader's own

	name string
	src  io.Reader
	ra   *parse.ReadAhead
	dec  *pickle.Decoder

	out *parse.TableBuilder[Table]
	seg segmentBuilders
	blk blockBuilders
	ev  eventColumns
	fr  frameBuilders
	st  stackBuilders

	frames map[frameKey]int32
	stacks map[string]int32
	// listStacks holds the stacks of the frames lists the record scan
	// keyed (pickle.Record.ListKey), by key modulo its length. Keys are
	// given in turn and the decoder keeps at most 4,096 lists, so a key
	// is mostly still here when it recurs; when not, the list is
	// interned again.
	listStacks *[8192]listStack
	nstacks    int32
	// stackRefs counts the frames of the distinct stacks interned so far.
	stackRefs int64
	keybuf    []byte
	rootSeen  bool
	rootKeys  map[string]bool // snapshot keys whose lists stream
	dupKey    string          // such a key seen twice
	meta      Metadata
	// early holds trace entries converted as their dicts filled
	// (SetItems), until their lists take them; earlyFree, its free rows.
	early     []eventRow
	earlyFree []int32
	serial    int64              // scanned trace entries and blocks so far
	plan      *pickle.RecordPlan // trace entries' keys, by entryField - 1
	// blockRows holds the blocks the record scan read, until their
	// segment is appended (addSegment); blockFree, its free rows.
	blockRows []blockRow
	blockFree []int32
	blockPlan *pickle.RecordPlan // blocks' keys, field blockAddress and on
	framePlan *pickle.RecordPlan // frame dicts' keys (scannedFrame)
	// pendFrames and pendFrame are the distinct frames the record scan
	// read (scannedFrame): each is interned when a stack first takes it
	// (frameID), where the general path interns its dict, so that the
	// frames table's rows and order are the general path's.
	pendFrames    map[frameKey]int32
	pendFrame     []pendingFrame
	histories     bool        // a block with a "history" was seen (PyTorch 2.0)
	framesScanned int         // frame dicts scannedFrame read, for tests
	blocksScanned int64       // for tests
	keyAt         [16]keyMemo // the keys of the last trace entry, by position
	general       bool        // options.general
}

type frameKey struct {
	filename string
	line     int64
	name     string
}

type listStack struct {
	key   uint64
	stack int32
}

// Bounds on stacks, so that a small pickle of memoised frames cannot
// expand into billions of frame references (issue 8). Each distinct stack
// costs its frames again in the reader's intern key, the stacks table and
// the analyzer's per-site stack (about 100 bytes a frame in all). Real
// snapshots stay far below: across testdata/pytorch and 33 snapshots from
// public repositories (stacks="all" included) the deepest stack has 263
// frames and the distinct stacks of one snapshot hold 24,215 frame
// references at most.
const (
	// MaxStackFrames is the most frames one stack may have.
	MaxStackFrames = 4096
	// MaxStackFrameRefs is the most frames the distinct stacks of one
	// snapshot may hold together.
	MaxStackFrameRefs = 1 << 20
)

// Handler tags of containers.
const (
	tagRoot uint16 = iota + 1
	tagSegments
	tagTraces
	tagStack
	tagFrame
	tagDone
	tagAnnotations
	tagEntry      // a dict taken for a trace entry, converted early (ID: its eventRow + 1)
	tagScanned    // Ref to a trace entry read by a scan (pickle.RecordScanner): serial<<earlyBits | its eventRow
	tagSegment    // a segment's dict
	tagBlocks     // a segment's "blocks" list, whose flat block dicts the record scan reads
	tagBlock      // Ref to a block read by a scan: serial<<blockBits | its blockRow
	tagBlockDict  // a block dict the general path reads (PyTorch 2.0's, with a "history")
	tagHistory    // a block dict's "history" list
	tagHistEntry  // an entry of a tagHistory list
	tagFrameDicts // the frames list of a tagHistEntry or tagEntry dict, whose frame dicts the record scan reads (scannedFrame)
	tagPendFrame  // Ref to a frame a scan read, not yet interned: its index in Reader.pendFrame
	tagTraceBase  // + device index
)

const maxDevices = 1<<16 - 1 - int64(tagTraceBase)

// NewReader returns a Reader of the snapshot pickle in r (already
// decompressed; parse.Open removes gzip). name names the input in errors.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	// 4096 rows rather than 16384: the batches in flight (one being built,
	// two prefetched, one analysed) and the pooled buffers they recycle
	// hold 2-3 MiB less on big_real (peak RSS 49.4 -> 46.6 MB, page cache
	// dropped before each run).
	o := options{ReaderOptions: parse.DefaultReaderOptions(1 << 12)}
	for _, f := range opts {
		f(&o)
	}
	rd := &Reader{
		name:       name,
		frames:     make(map[frameKey]int32),
		stacks:     make(map[string]int32),
		listStacks: new([8192]listStack),
		meta:       Metadata{Warnings: parse.NewWarnings(name)},
		general:    o.general,
		plan:       pickle.NewRecordPlan("action", "addr", "size", "stream", "time_us", "device_free", "frames"),
		blockPlan:  pickle.NewRecordPlan("address", "size", "requested_size", "state", "frames", "history"),
		framePlan:  pickle.NewRecordPlan("filename", "name", "line"),
	}
	rd.out = parse.StartTables(&rd.tableReader, o.ReaderOptions, numTables, rd.step)
	rd.seg.init(rd.out.Builder(TableSegments), rd.out.Options().BatchSize)
	rd.blk.init(rd.out.Builder(TableBlocks), rd.out.Options().BatchSize)
	rd.ev.init(rd.out.Builder(TableEvents), o.Allocator, o.BatchSize)
	rd.fr.init(rd.out.Builder(TableFrames))
	rd.st.init(rd.out.Builder(TableStacks))
	rd.src = r
	if o.readAhead {
		rd.ra = parse.NewReadAhead(r, readAheadChunk, readAheadChunks, pickle.ChunkHeadroom)
		rd.src = rd.ra
	}
	rd.dec = pickle.NewDecoder(rd.src, name, rd, o.limits)
	rd.dec.SetListFill(!o.general)
	return rd
}

// tableReader is the reader shell every family shares.
type tableReader = parse.TableReader[Table]

// step decodes the pickle until a batch fills or the pickle ends.
func (r *Reader) step() error {
	done, err := r.dec.Run()
	if err != nil || !done {
		return err
	}
	if err := r.finish(); err != nil {
		return err
	}
	for t := range numTables { // in table order, as End would
		r.flush(t)
	}
	r.out.End()
	return nil
}

// Metadata describes the snapshot; it is complete after the last batch.
func (r *Reader) Metadata() *Metadata {
	if r.dec != nil {
		r.meta.Protocol = r.dec.Protocol()
	}
	return &r.meta
}

// Release frees the current batch, batches not yet read, and the builders,
// and stops reading ahead (WithReadAhead). It also drops what only decoding
// needs (the pickle memo index, the read-ahead chunks, the interned frames
// and stacks): a caller that analyses after the last batch releases first,
// so that the analysis's working memory reuses the decoder's rather than
// adding to it (on big_real, 949k trace entries: 6-8 MiB). Metadata stays
// readable. The input must not be closed before Release; a second Release
// does nothing.
func (r *Reader) Release() {
	if r.ra != nil {
		r.ra.Close()
	}
	r.tableReader.Release()
	r.ev.release()
	if r.dec != nil {
		r.meta.Protocol = r.dec.Protocol()
	}
	r.ra, r.src, r.dec = nil, nil, nil
	r.frames, r.stacks, r.listStacks, r.rootKeys = nil, nil, nil, nil
	r.early, r.earlyFree, r.keybuf = nil, nil, nil
	r.blockRows, r.blockFree = nil, nil
}

// full reports whether table t holds a batch's worth of rows.
func (r *Reader) full(t Table) bool {
	switch t {
	case TableEvents:
		return r.ev.n >= r.ev.rows
	case TableSegments:
		return r.seg.rows() >= r.out.Options().BatchSize
	case TableBlocks:
		return r.blk.rows() >= r.out.Options().BatchSize
	}
	return r.out.Full(t)
}

// flush makes table t's rows a batch, queued for Next.
func (r *Reader) flush(t Table) {
	if t == TableEvents {
		if rec := r.ev.batch(); rec != nil {
			r.out.Push(t, rec)
		}
		return
	}
	switch t { // their columns hold their rows until now
	case TableSegments:
		r.seg.flush()
	case TableBlocks:
		r.blk.flush()
	}
	r.out.Flush(t)
}

func (r *Reader) maybeFlush(t Table) {
	if r.full(t) {
		r.flush(t)
		r.dec.Pause()
	}
}

// errAt returns a positioned error about the container at off.
func (r *Reader) errAt(off int64, format string, args ...any) error {
	return parse.Errorf(r.name, off, format, args...)
}

// Tag implements pickle.Handler: it recognises the top-level dict, its
// "segments" and "device_traces" lists, and each device's trace.
func (r *Reader) Tag(c, parent *pickle.Container, key pickle.Value, index int64) {
	if !r.rootSeen {
		r.rootSeen = true
		switch c.Kind {
		case pickle.Dict:
			c.Tag = tagRoot
		case pickle.List:
			c.Tag, c.Early = tagSegments, true
			r.meta.Legacy = true
		}
		return
	}
	if parent != nil && parent.Tag >= tagTraceBase && c.Kind == pickle.Dict && c.Tag == 0 {
		// Most likely a trace entry: convert its pairs as they come.
		if id := r.newEarly(); id > 0 {
			r.early[id-1] = eventRow{stack: -1}
			c.Tag, c.ID = tagEntry, id
		}
		return
	}
	if parent != nil && parent.Tag == tagSegments && c.Kind == pickle.Dict && c.Tag == 0 {
		c.Tag = tagSegment
		return
	}
	if parent != nil && c.Kind == pickle.Dict && c.Tag == 0 && !r.general {
		switch parent.Tag {
		case tagBlocks:
			c.Tag = tagBlockDict
			return
		case tagHistory:
			c.Tag = tagHistEntry
			return
		}
	}
	if parent == nil || c.Kind != pickle.List {
		return
	}
	switch parent.Tag {
	case tagSegment:
		if k, _ := key.Str(); k == "blocks" {
			c.Tag = tagBlocks
		}
	case tagBlockDict:
		if k, _ := key.Str(); k == "history" {
			c.Tag = tagHistory
			r.histories = true
		}
	case tagHistEntry, tagEntry:
		// PyTorch 2.0's frames lists (its blocks have a history): later
		// versions name each frame dict once and then by memo gets, which
		// the list fill and list cache read faster (fillList).
		if parent.Tag == tagEntry && !r.histories {
			break
		}
		if k, _ := key.Str(); k == "frames" && !r.general {
			c.Tag = tagFrameDicts
		}
	case tagRoot:
		k, _ := key.Str()
		switch k {
		case "segments", "device_traces", "external_annotations":
			if r.rootKeys[k] {
				// CPython would keep the later value; the earlier one has
				// already streamed, so the file cannot be read faithfully.
				r.dupKey = k
				return
			}
			if r.rootKeys == nil {
				r.rootKeys = map[string]bool{}
			}
			r.rootKeys[k] = true
		}
		switch k {
		case "segments":
			// Each segment is read when the next begins, while its
			// blocks and their frames lists are in the CPU's cache.
			c.Tag, c.Early = tagSegments, true
		case "device_traces":
			c.Tag = tagTraces
		case "external_annotations":
			c.Tag = tagAnnotations
		}
	case tagTraces:
		if index < maxDevices {
			c.Tag = tagTraceBase + uint16(index)
		}
	}
}

// Append implements pickle.Handler: segments and trace entries become
// table rows as they arrive and are not kept.
func (r *Reader) Append(l *pickle.Container, index int64, item pickle.Value) (bool, error) {
	if l.Tag >= tagTraceBase { // first: trace entries are most of a snapshot
		dev := int32(l.Tag - tagTraceBase)
		for int(dev) >= len(r.meta.TraceEntries) {
			r.meta.TraceEntries = append(r.meta.TraceEntries, 0)
		}
		r.meta.TraceEntries[dev] = index + 1
		if tag, id, ok := item.Ref(); ok && tag == tagScanned {
			// A scanned entry (ScannedRecord), here rather than in
			// addEvent: no call for most entries, whatever the profile
			// the build is optimised by.
			i := id & (maxEarly - 1)
			if id < 0 || int(i) >= len(r.early) || r.early[i].serial != id>>earlyBits {
				return true, r.errAt(r.dec.Offset(), "device_traces[%d][%d] is a trace entry already stored before (a memo reference or DUP)", dev, index)
			}
			// Read in place: the row is freed, and its serial cleared so
			// that a second Append of the Ref fails the check above, but
			// nothing takes it before commitEvent returns.
			e := &r.early[i]
			e.serial = 0
			r.earlyFree = append(r.earlyFree, int32(i))
			r.dec.ReleaseRecord(int(e.pairs)) // consumed, as the general path's dict
			if e.err != nil {
				return true, e.err
			}
			return true, r.commitEvent(dev, index, e.off, e)
		}
		return true, r.addEvent(dev, index, item)
	}
	switch l.Tag {
	case tagSegments:
		return true, r.addSegment(index, item)
	case tagAnnotations:
		// Marks from the profiler (record_function): not used, and
		// long recordings hold millions of them.
		return true, nil
	}
	return false, nil
}

// finish checks, at the pickle's STOP, that what was streamed really was
// the snapshot's segments and traces, and reads the small parts.
func (r *Reader) finish() error {
	if err := r.drain(); err != nil {
		return err
	}
	root := r.dec.Result()
	c := root.Container()
	notSnapshot := func(format string, args ...any) error {
		return &parse.Error{File: r.name, Offset: 0, Msg: "not a PyTorch memory snapshot: " + fmt.Sprintf(format, args...), Err: parse.ErrNotMine}
	}
	switch {
	case c == nil:
		return notSnapshot("the pickle holds %s", article(root.Kind()))
	case c.Tag == tagSegments && root.Kind() == pickle.List:
		r.meta.Warnings.Once("legacy", parse.Note("a bare list of segments (torch.cuda.memory_snapshot(), or a PyTorch 1.13 dump): no allocation trace, so growth cannot be judged"))
		return nil
	case c.Tag != tagRoot || root.Kind() != pickle.Dict:
		return notSnapshot("the pickle holds %s", article(root.Kind()))
	}
	if r.dupKey != "" {
		return r.errAt(c.Offset, "malformed snapshot: the key %q appears twice", r.dupKey)
	}
	segs, hasSegs := c.Get("segments")
	traces, hasTraces := c.Get("device_traces")
	if !hasSegs && !hasTraces {
		return notSnapshot("top-level keys are %s, want segments and device_traces", keyList(c))
	}
	if hasSegs && (segs.Container() == nil || segs.Container().Tag != tagSegments) {
		return r.errAt(c.Offset, "malformed snapshot: \"segments\" is not the list it appeared to be")
	}
	if hasTraces {
		tc := traces.Container()
		if tc == nil || tc.Tag != tagTraces {
			return r.errAt(c.Offset, "malformed snapshot: \"device_traces\" is %s, want a list", article(traces.Kind()))
		}
		for i, t := range tc.Items {
			if int64(i) >= maxDevices {
				return r.errAt(tc.Offset, "malformed snapshot: more than %d device traces", maxDevices)
			}
			if t.Container() == nil || t.Kind() != pickle.List {
				return r.errAt(tc.Offset, "malformed snapshot: device_traces[%d] is %s, want a list", i, article(t.Kind()))
			}
			if t.Container().Tag != tagTraceBase+uint16(i) {
				// A list, but one read elsewhere: the pickle refers back to
				// an earlier object (its memo), which PyTorch never does.
				return r.errAt(tc.Offset, "malformed snapshot: device_traces[%d] is a list that is not its own (the pickle refers back to a list it made earlier), want each device's own trace", i)
			}
		}
		for len(r.meta.TraceEntries) < len(tc.Items) {
			r.meta.TraceEntries = append(r.meta.TraceEntries, 0)
		}
	} else {
		r.meta.Warnings.Once("notrace", parse.Note("snapshot has no device_traces (recorded without _record_memory_history): growth cannot be judged"))
	}
	if v, ok := c.Get("allocator_settings"); ok && v.Kind() == pickle.Dict {
		budget := maxSettingsValues
		if m, ok := toGo(v, 0, &budget).(map[string]any); ok {
			r.meta.AllocatorSettings = m
		}
		if budget < 0 {
			r.meta.Warnings.Once("settings", parse.Note("allocator_settings holds more than %d values; the rest were ignored", maxSettingsValues))
		}
	}
	return nil
}

// drain reads what follows the pickle to its end: a gzip stream's checksum
// is only checked there, and bytes after the STOP opcode (another pickle
// appended with cat, say) must not pass unnoticed.
func (r *Reader) drain() error {
	end := r.dec.Offset()
	n, err := io.Copy(io.Discard, r.src)
	if err != nil {
		msg := "after the snapshot's end"
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// The pickle ended (STOP read) but the gzip stream did not: its
			// checksum, which is what says its bytes are whole, is cut off.
			msg = "the snapshot's pickle ended, but its gzip stream is cut short after it (its checksum missing: the file was not written or copied whole, and what was read cannot be verified)"
		}
		return &parse.Error{File: r.name, Offset: end, Msg: msg, Err: err}
	}
	if trailing := n + int64(r.dec.Buffered()); trailing > 0 {
		r.meta.Warnings.Once("trailing", parse.InlineNote(0, end, "%s after the snapshot's end (byte offset %d) were ignored: only the first pickle in a file is read", humanize.Comma(trailing)+" bytes", end))
	}
	return nil
}

// article names a kind with its indefinite article: "an int", "a list".
func article(k pickle.Kind) string {
	switch s := k.String(); s {
	case "int":
		return "an int"
	case "None":
		return s
	default:
		return "a " + s
	}
}

// describe is article for v's kind, naming the Refs that stand for what
// was read before, as a memo get yields them: a frames list converted to
// its stack, a segment, block or trace entry consumed ("a ref" would mean
// nothing to a user).
func describe(v pickle.Value) string {
	if tag, _, ok := v.Ref(); ok {
		switch {
		case tag == tagStack:
			return "a frames list already read as a stack"
		case tag == tagSegment:
			return "a segment read before"
		case tag == tagBlock:
			return "a block read before"
		case tag == tagEntry || tag == tagScanned:
			return "a trace entry read before"
		case tag >= tagTraceBase:
			return "a device's trace read before"
		case tag == tagFrame || tag == tagPendFrame:
			return "a frame"
		case tag == tagDone:
			return "a reference to a list already read and released"
		case tag == 0:
			// A consumed dict: a segment read, or a record scanned.
			return "a reference to a dict already read and released (stored twice?)"
		}
	}
	return article(v.Kind())
}

// valueText is v for a message: its text, or what a Ref stands for.
func valueText(v pickle.Value) string {
	if _, _, ok := v.Ref(); ok {
		return describe(v)
	}
	return v.String()
}

func keyList(c *pickle.Container) string {
	var keys []string
	for i := 0; i+1 < len(c.Items) && len(keys) < 8; i += 2 {
		keys = append(keys, c.Items[i].String())
	}
	sort.Strings(keys)
	return "[" + strings.Join(keys, ", ") + "]"
}

// maxSettingsValues bounds the work of reading allocator_settings: a
// pickle can make a structure refer to itself, so that a walk of it would
// never end.
const maxSettingsValues = 10000

// toGo converts a small value (allocator settings) to Go values, at most
// 16 levels deep and *budget values in all.
func toGo(v pickle.Value, depth int, budget *int) any {
	*budget--
	if depth > 16 || *budget < 0 {
		return nil
	}
	switch v.Kind() {
	case pickle.None:
		return nil
	case pickle.Bool:
		b, _ := v.Bool()
		return b
	case pickle.Int:
		n, _ := v.Int64()
		return n
	case pickle.Uint:
		n, _ := v.Uint64()
		return n
	case pickle.Float:
		f, _ := v.Float64()
		return f
	case pickle.Str:
		s, _ := v.Str()
		return s
	case pickle.BigInt, pickle.Bytes:
		return v.String()
	case pickle.List, pickle.Tuple, pickle.Set, pickle.FrozenSet:
		var out []any
		for _, it := range v.Container().Items {
			out = append(out, toGo(it, depth+1, budget))
		}
		return out
	case pickle.Dict:
		out := map[string]any{}
		it := v.Container().Items
		for i := 0; i+1 < len(it); i += 2 {
			k, ok := it[i].Str()
			if !ok {
				k = it[i].String()
			}
			out[k] = toGo(it[i+1], depth+1, budget)
		}
		return out
	}
	return nil
}

// forget releases a converted container and makes memo references to it
// yield a small Ref.
func (r *Reader) forget(c *pickle.Container) {
	r.dec.Release(c)
	r.dec.Replace(c, pickle.RefValue(tagDone, -1))
}

// stackID interns the stack of a frames list; -1 means no stack.
func (r *Reader) stackID(v pickle.Value, off int64) (int32, error) {
	switch v.Kind() {
	case pickle.None:
		return -1, nil
	case pickle.Ref:
		if tag, id, _ := v.Ref(); tag == tagStack {
			return int32(id), nil
		}
		return -1, r.errAt(off, "frames refer to an object that is not a list of frames")
	case pickle.List, pickle.Tuple:
	default:
		return -1, r.errAt(off, "frames is %s, want a list", describe(v))
	}
	c := v.Container()
	if c.Tag == tagStack {
		return int32(c.ID), nil
	}
	// A list the decoder keyed by its elements (pickle.Container.ListKey):
	// the stack of one with the same elements, as blockStack takes it.
	key := c.ListKey()
	ls := &r.listStacks[key%uint64(len(r.listStacks))]
	if key != 0 && ls.key == key {
		r.convertedList(c, ls.stack)
		return ls.stack, nil
	}
	id, err := r.internStack(c.Items, off, c.Offset)
	if err != nil {
		return -1, err
	}
	if key != 0 {
		*ls = listStack{key, id}
	}
	if !r.general {
		r.recycleFrames(c.Items)
	}
	r.convertedList(c, id)
	return id, nil
}

// recycleFrames hands the frame dicts of a converted frames list back to
// the decoder for reuse, each replaced in the list by its Ref. PyTorch
// 2.0's blocks each make their own frame dicts (in their "history"), one
// allocation each otherwise: 60% of the decoder's allocations on such a
// snapshot. Recycle leaves alone a dict the pickle may refer to again.
func (r *Reader) recycleFrames(items []pickle.Value) {
	for i, f := range items {
		if fc := f.Container(); fc != nil && fc.Tag == tagFrame && f.Kind() == pickle.Dict {
			items[i] = pickle.RefValue(tagFrame, fc.ID)
			r.dec.Recycle(fc)
		}
	}
}

// convertedList marks frames list c as converted to stack id: later
// readings of it (its Tag, or the memo's Ref in its place) take the stack,
// and its items are released.
func (r *Reader) convertedList(c *pickle.Container, id int32) {
	c.Tag, c.ID = tagStack, int64(id)
	r.dec.Release(c)
	r.dec.Replace(c, pickle.RefValue(tagStack, int64(id)))
}

// internStack interns the stack of frames, the items of a frames list at
// listOff in a trace entry or block at off; -1 means no stack (no frames).
func (r *Reader) internStack(frames []pickle.Value, off, listOff int64) (int32, error) {
	if len(frames) > MaxStackFrames {
		return -1, r.errAt(listOff, "a stack of %s frames (more than %s, a limit that protects memory; real stacks have at most a few hundred)",
			humanize.Comma(int64(len(frames))), humanize.Comma(MaxStackFrames))
	}
	if len(frames) > 0 {
		key := r.keybuf[:0]
		for _, f := range frames {
			fid, err := r.frameID(f, off)
			if err != nil {
				return -1, err
			}
			key = binary.LittleEndian.AppendUint32(key, uint32(fid))
		}
		r.keybuf = key
		return r.internKey(key, listOff)
	}
	return -1, nil
}

// internKey interns the stack whose frame ids are key (4 bytes each, at
// least one), of the frames list at listOff.
func (r *Reader) internKey(key []byte, listOff int64) (int32, error) {
	if id, ok := r.stacks[string(key)]; ok {
		return id, nil
	}
	// Each distinct stack costs its frames again, in the reader's key, the
	// stacks table and the analyzer: bound their sum.
	if r.stackRefs += int64(len(key) / 4); r.stackRefs > MaxStackFrameRefs {
		return -1, r.errAt(listOff, "the snapshot's distinct stacks hold more than %s frame references (a limit that protects memory)",
			humanize.Comma(MaxStackFrameRefs))
	}
	id := r.nstacks
	r.nstacks++
	r.stacks[string(key)] = id
	for depth := 0; depth < len(key)/4; depth++ {
		r.st.id.Append(id)
		r.st.depth.Append(int32(depth))
		r.st.frame.Append(int32(binary.LittleEndian.Uint32(key[4*depth:])))
	}
	r.maybeFlush(TableStacks)
	return id, nil
}

func (r *Reader) frameID(v pickle.Value, off int64) (int32, error) {
	if tag, id, ok := v.Ref(); ok {
		if tag == tagFrame {
			return int32(id), nil
		}
		if tag == tagPendFrame && id >= 0 && id < int64(len(r.pendFrame)) {
			pf := &r.pendFrame[id]
			if pf.id < 0 {
				pf.id = r.internFrame(pf.k)
			}
			return pf.id, nil
		}
		return 0, r.errAt(off, "a frame refers to an object that is not a frame")
	}
	c := v.Container()
	if v.Kind() != pickle.Dict {
		return 0, r.errAt(off, "a frame is %s, want a dict", describe(v))
	}
	if c.Tag == tagFrame {
		return int32(c.ID), nil
	}
	var k frameKey
	for i := 0; i+1 < len(c.Items); i += 2 {
		name, _ := c.Items[i].Str()
		val := c.Items[i+1]
		switch name {
		case "filename":
			k.filename, _ = val.Str()
		case "name":
			k.name, _ = val.Str()
		case "line":
			k.line, _ = val.Int64()
		}
	}
	id := r.internFrame(k)
	c.Tag, c.ID = tagFrame, int64(id)
	r.dec.Release(c)
	r.dec.Replace(c, pickle.RefValue(tagFrame, int64(id)))
	return id, nil
}

// internFrame returns the id of frame k, adding it to the frames table
// when it is new.
func (r *Reader) internFrame(k frameKey) int32 {
	id, ok := r.frames[k]
	if !ok {
		id = int32(len(r.frames))
		r.frames[k] = id
		r.fr.id.Append(id)
		r.fr.filename.Append(k.filename)
		r.fr.line.Append(k.line)
		r.fr.name.Append(k.name)
		r.maybeFlush(TableFrames)
	}
	return id
}

// Fields of the frame plan (framePlan), by key.
const (
	frameFilename = iota
	frameName
	frameLine
)

// scannedOther is ScannedRecord for a list not a device's trace: out of
// line, as otherPlan.
//
//go:noinline
func (r *Reader) scannedOther(list *pickle.Container, rec *pickle.Record) (pickle.Value, error) {
	if list.Tag == tagFrameDicts {
		return r.scannedFrame(rec)
	}
	return r.scannedBlock(rec)
}

// pendingFrame is a frame the record scan read: k, and its id in the
// frames table once interned (-1 before).
type pendingFrame struct {
	k  frameKey
	id int32
}

// maxPendFrames bounds the distinct frames the record scan keeps
// (pendFrame, about 100 bytes each): past it frame dicts take the general
// path, whose dicts count against the decoder's limits.
const maxPendFrames = 1 << 20

// scannedFrame reads a frame dict the record scan read in a frames list
// whose frames PyTorch 2.0 writes as dicts of their own (a block history
// entry's, a trace entry's) and returns a Ref to its pending frame, which
// stands for the dict (pickle.Record.Converted): frameID interns it when
// a stack takes it, as it interns the dict on the general path. The frame
// is what frameID makes of the same pairs (a key not a str is no key;
// filename and name not strs are "", a line not an int 0), written out
// here rather than shared: a shared setter, not inlined, cost 1.3% of a
// PyTorch 2.0 snapshot's instructions; the differential tests hold the
// two to the same frames. A value the scan read as a list goes to the
// general path.
//
// Before, each of these dicts was a container of its own, most never
// converted (history entries after a block's first): 16,000 containers
// and their item storage on a 290 KB snapshot.
func (r *Reader) scannedFrame(rec *pickle.Record) (pickle.Value, error) {
	var k frameKey
	for f := frameFilename; f <= frameLine; f++ {
		bit := uint32(1) << f
		if rec.Set&bit == 0 {
			continue
		}
		if rec.IsInt&bit != 0 {
			if f == frameLine {
				k.line = rec.Int[f]
			}
			continue
		}
		v := rec.Val[f]
		if v.Kind() == pickle.List {
			return pickle.Value{}, pickle.ErrNotScanned
		}
		switch f {
		case frameFilename:
			k.filename, _ = v.Str()
		case frameName:
			k.name, _ = v.Str()
		case frameLine:
			k.line, _ = v.Int64()
		}
	}
	p, ok := r.pendFrames[k]
	if !ok {
		if r.pendFrames == nil {
			r.pendFrames = map[frameKey]int32{}
		}
		p = int32(len(r.pendFrame))
		r.pendFrames[k] = p
		r.pendFrame = append(r.pendFrame, pendingFrame{k, -1})
	}
	rec.Converted()
	r.framesScanned++
	return pickle.RefValue(tagPendFrame, int64(p)), nil
}

// field conversion helpers; each names the record and key in its error.

func (r *Reader) intField(v pickle.Value, off int64, what, key string) (int64, error) {
	if n, ok := v.Int64(); ok {
		return n, nil
	}
	if v.Kind() == pickle.Uint {
		u, _ := v.Uint64()
		return int64(u), nil // a cudaStream_t above 2^63 keeps its bits
	}
	return 0, r.errAt(off, "%s: %q is %s, want an int", what, key, valueText(v))
}

// maxSize bounds a size in bytes: 1 PiB, more than any GPU holds, so that
// sums of sizes cannot overflow in practice and a hostile value is caught.
const maxSize = 1 << 50

// sizeField reads a size in bytes: an int from 0 to maxSize.
func (r *Reader) sizeField(v pickle.Value, off int64, what, key string) (int64, error) {
	n, err := r.intField(v, off, what, key)
	if err == nil && (n < 0 || n > maxSize) {
		err = r.errAt(off, "%s: %q is %d bytes, want 0 to 1 PiB", what, key, n)
	}
	return n, err
}

func (r *Reader) addrField(v pickle.Value, off int64, what, key string) (uint64, error) {
	if u, ok := v.Uint64(); ok {
		return u, nil
	}
	return 0, r.errAt(off, "%s: %q is %s, want an address (an int from 0 to 2^64-1)", what, key, valueText(v))
}

// eventRow is a trace entry read from its dict's pairs, but for its
// device and sequence number, which its list gives.
type eventRow struct {
	action           string
	addr             uint64
	size, stream     int64
	timeUs, devFree  int64
	stack            int32
	hasAction        bool
	hasAddr          bool
	hasTime, hasFree bool
	// pairs counts the pairs applied (SetItems); failed is set when one
	// did not convert: the dict is then read again from its items in
	// Append, which reports the error.
	pairs  int32
	failed bool
	// serial is the Ref id's serial of a scanned entry (ScannedDict), 0
	// for one converted from its dict; off, its dict's offset.
	serial int64
	off    int64
	err    error
}

// maxEarly bounds the trace entries converted early, while their lists
// wait for them (Python's pickler appends 1000 at a time): a hand-made
// pickle whose dicts never reach their list cannot hold more.
const (
	earlyBits = 13
	maxEarly  = 1 << earlyBits
)

// Fields of a trace entry's dict, by key.
type entryField uint8

const (
	fieldOther entryField = iota // a key not read, or not a str
	fieldAction
	fieldAddr
	fieldSize
	fieldStream
	fieldTime
	fieldDeviceFree
	fieldFrames
)

func entryFieldOf(k pickle.Value) entryField {
	key, _ := k.Str()
	switch key {
	case "action":
		return fieldAction
	case "addr":
		return fieldAddr
	case "size":
		return fieldSize
	case "stream":
		return fieldStream
	case "time_us":
		return fieldTime
	case "device_free":
		return fieldDeviceFree
	case "frames":
		return fieldFrames
	}
	return fieldOther
}

// keyMemo remembers the key found at a pair's position in the last trace
// entry, and its field: PyTorch writes every entry's keys in one order
// from the same memo entries, so a key is mostly recognised by comparing
// it with the last one (equal Values hold the same bytes).
type keyMemo struct {
	k pickle.Value
	f entryField
}

// field returns the field of key k, the pos-th of its dict, and
// remembers it.
func (r *Reader) field(pos int, k pickle.Value) entryField {
	f := entryFieldOf(k)
	if pos < len(r.keyAt) {
		r.keyAt[pos] = keyMemo{k, f}
	}
	return f
}

// pairs applies pairs (key, value, ...), the pos-th and on of a trace
// entry's dict at off, to e; a later setting of a key wins, as in the
// dict.
func (r *Reader) pairs(e *eventRow, pos int, pairs []pickle.Value, off int64) error {
	const what = "trace entry"
	for i := 0; i+1 < len(pairs); i, pos = i+2, pos+1 {
		k, v := &pairs[i], &pairs[i+1]
		var f entryField
		if pos < len(r.keyAt) && r.keyAt[pos].k == *k {
			f = r.keyAt[pos].f
		} else {
			f = r.field(pos, *k)
		}
		var err error
		switch f {
		case fieldAction:
			e.action, e.hasAction = v.Str()
		// The usual values (ints in range) are taken here; the field
		// functions check the rest and say what is wrong.
		case fieldAddr:
			if n, ok := v.Int64(); ok && n >= 0 {
				e.addr = uint64(n)
			} else {
				e.addr, err = r.addrField(*v, off, what, "addr")
			}
			e.hasAddr = true
		case fieldSize:
			if n, ok := v.Int64(); ok && n >= 0 && n <= maxSize {
				e.size = n
			} else {
				e.size, err = r.sizeField(*v, off, what, "size")
			}
		case fieldStream:
			if n, ok := v.Int64(); ok {
				e.stream = n
			} else {
				e.stream, err = r.intField(*v, off, what, "stream")
			}
		case fieldTime:
			if n, ok := v.Int64(); ok {
				e.timeUs, e.hasTime = n, true
			} else if !v.IsNone() {
				e.timeUs, err = r.intField(*v, off, what, "time_us")
				e.hasTime = true
			}
		case fieldDeviceFree:
			e.devFree, err = r.sizeField(*v, off, what, "device_free")
			e.hasFree = true
		case fieldFrames:
			c := v.Container()
			e.stack, err = r.stackID(*v, off)
			if err == nil && c != nil && !r.general {
				// The dict now holds the stack's Ref, which a second
				// reading of its items (Append, when a pair failed)
				// takes as the list; nothing refers to the list then,
				// and a later one reuses it.
				*v = pickle.RefValue(tagStack, int64(e.stack))
				r.dec.Recycle(c)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SetItems implements pickle.PairHandler: the pairs of a dict that Tag
// took for a trace entry are converted as they are stored, while still in
// the CPU's cache; Append takes the result if it covers the whole dict.
func (r *Reader) SetItems(c *pickle.Container, pairs []pickle.Value) {
	if c.Tag != tagEntry || c.ID <= 0 {
		return
	}
	e := &r.early[c.ID-1]
	if e.failed || 2*int(e.pairs)+len(pairs) != len(c.Items) {
		e.failed = true
		return
	}
	if err := r.pairs(e, int(e.pairs), pairs, c.Offset); err != nil {
		e.failed = true
		return
	}
	e.pairs += int32(len(pairs) / 2)
}

// RecordPlan implements pickle.RecordScanner: the dicts of a device's
// trace, and the block dicts of a segment's blocks list, are read
// straight from the input when they are flat, as PyTorch writes them,
// while a row is free for them.
func (r *Reader) RecordPlan(list *pickle.Container) *pickle.RecordPlan {
	if r.general {
		return nil
	}
	if list.Tag < tagTraceBase {
		return r.otherPlan(list)
	}
	if len(r.earlyFree) == 0 && len(r.early) >= maxEarly {
		return nil
	}
	return r.plan
}

// otherPlan is RecordPlan for a list not a device's trace: out of line,
// so that a trace entry's call stays small.
//
//go:noinline
func (r *Reader) otherPlan(list *pickle.Container) *pickle.RecordPlan {
	if list.Tag == tagBlocks && (len(r.blockFree) > 0 || len(r.blockRows) < maxBlockRows) {
		return r.blockPlan
	}
	if list.Tag == tagFrameDicts && len(r.pendFrame) < maxPendFrames {
		return r.framePlan
	}
	return nil
}

// ScannedRecord implements pickle.RecordScanner: a trace entry becomes an
// early row, converted as pairs converts a dict's pairs, and the Ref
// pushed in the dict's place names it for Append (addEvent); a block
// becomes a blockRow (scannedBlock), whose Ref its blocks list keeps until
// its segment is appended.
func (r *Reader) ScannedRecord(list *pickle.Container, index int64, rec *pickle.Record) (pickle.Value, error) {
	if list.Tag < tagTraceBase {
		return r.scannedOther(list, rec)
	}
	id := r.newEarly()
	if id <= 0 {
		// RecordPlan said a row was free.
		return pickle.Value{}, r.errAt(rec.Offset, "internal error: no free row for a trace entry")
	}
	e := &r.early[id-1]
	// An error waits, as the general path's does, until Append takes the
	// entry: a dict that never reaches its list is no error there. Every
	// field of the row is set: a free row is left as it was.
	e.err = nil
	if r.cleanRecord(rec) {
		// What PyTorch writes: no field can be in error but the frames,
		// so the dict's order does not matter. Each field is set once
		// (here rather than in record: no call); a value whose has-flag
		// is false is never read.
		const action, addr, size, stream, timeUs, frames = fieldAction - 1, fieldAddr - 1, fieldSize - 1, fieldStream - 1, fieldTime - 1, fieldFrames - 1
		set := rec.Set
		e.action, e.hasAction = "", false
		if set&(1<<action) != 0 {
			e.action, e.hasAction = rec.Val[action].Str()
		}
		e.addr, e.hasAddr = uint64(rec.Int[addr]), set&(1<<addr) != 0
		e.size, e.stream = 0, 0
		if set&(1<<size) != 0 {
			e.size = rec.Int[size]
		}
		if set&(1<<stream) != 0 {
			e.stream = rec.Int[stream]
		}
		e.timeUs, e.hasTime = rec.Int[timeUs], set&(1<<timeUs) != 0
		e.hasFree, e.failed = false, false
		e.stack = -1
		if set&(1<<frames) != 0 {
			e.err = r.recordFrames(e, rec, rec.Offset)
		}
	} else {
		e.err = r.record(e, rec)
	}
	r.serial++
	e.serial, e.off, e.pairs = r.serial, rec.Offset, int32(rec.Pairs)
	return pickle.RefValue(tagScanned, r.serial<<earlyBits|(id-1)), nil
}

// cleanRecord reports whether a scanned trace entry has only the fields
// record reads, each of which but the frames in range: an action that
// is not an int, and ints for addr (not negative), size (0 to maxSize),
// stream and time_us.
func (r *Reader) cleanRecord(rec *pickle.Record) bool {
	const (
		action = 1 << (fieldAction - 1)
		addr   = 1 << (fieldAddr - 1)
		size   = 1 << (fieldSize - 1)
		ints   = addr | size | 1<<(fieldStream-1) | 1<<(fieldTime-1)
		frames = 1 << (fieldFrames - 1)
	)
	set := rec.Set
	// A size as a uint64 is in range when it is 0 to maxSize.
	return set&^(action|ints|frames) == 0 && rec.IsInt&(ints|action) == set&ints &&
		(set&addr == 0 || rec.Int[fieldAddr-1] >= 0) &&
		(set&size == 0 || uint64(rec.Int[fieldSize-1]) <= maxSize)
}

// recordFrames interns the stack of a scanned trace entry's frames,
// its field, as stackID does a dict's: a list the scan read is
// interned from its elements and, when that succeeds, replaced by the
// stack's Ref, which the memo then yields in its place.
//
// The usual cases come first, each as stackID or internStack would end
// it: a memo get of a list converted before (a Ref to its stack; a third
// of big_real's entries), a list with the elements of one converted
// before (ListKey: most trace entries repeat one of a few lists), an
// empty list (no stack).
func (r *Reader) recordFrames(e *eventRow, rec *pickle.Record, off int64) error {
	const f = int(fieldFrames - 1) // a constant: its shifts and indexing cost no checks
	if rec.IsInt&(1<<f) == 0 {
		if tag, id, ok := rec.Val[f].Ref(); ok && tag == tagStack {
			e.stack = int32(id)
			return nil
		}
	}
	key := rec.ListKey(f)
	ls := &r.listStacks[key%uint64(len(r.listStacks))]
	if ls.key == key && key != 0 {
		e.stack = ls.stack
		rec.Val[f] = pickle.RefValue(tagStack, int64(e.stack))
		return nil
	}
	var err error
	if items, listOff, ok := rec.List(f); ok {
		e.stack = -1
		if len(items) > 0 {
			if e.stack, err = r.internStack(items, off, listOff); err != nil {
				return err
			}
			if key != 0 {
				*ls = listStack{key, e.stack}
			}
		}
		rec.Val[f] = pickle.RefValue(tagStack, int64(e.stack))
		return nil
	}
	v := rec.Val[f]
	if rec.IsInt&(1<<f) != 0 {
		v = pickle.IntValue(rec.Int[f])
	}
	e.stack, err = r.stackID(v, off)
	return err
}

// record converts a scanned trace entry that cleanRecord refuses to e,
// as pairs converts its dict's pairs: the same values are taken and the
// same errors reported, the first in the dict's order.
func (r *Reader) record(e *eventRow, rec *pickle.Record) error {
	const what = "trace entry"
	off := rec.Offset
	*e = eventRow{stack: -1}
	for _, f := range rec.Order[:rec.NOrder] {
		n, isInt := rec.Int[f], rec.IsInt&(1<<f) != 0
		v := rec.Val[f]
		if isInt {
			v = pickle.IntValue(n)
		}
		var err error
		switch entryField(f + 1) {
		case fieldAction:
			e.action, e.hasAction = v.Str()
		case fieldAddr:
			if isInt && n >= 0 {
				e.addr = uint64(n)
			} else {
				e.addr, err = r.addrField(v, off, what, "addr")
			}
			e.hasAddr = true
		case fieldSize:
			if isInt && n >= 0 && n <= maxSize {
				e.size = n
			} else {
				e.size, err = r.sizeField(v, off, what, "size")
			}
		case fieldStream:
			if isInt {
				e.stream = n
			} else {
				e.stream, err = r.intField(v, off, what, "stream")
			}
		case fieldTime:
			if isInt {
				e.timeUs, e.hasTime = n, true
			} else if !v.IsNone() {
				e.timeUs, err = r.intField(v, off, what, "time_us")
				e.hasTime = true
			}
		case fieldDeviceFree:
			e.devFree, err = r.sizeField(v, off, what, "device_free")
			e.hasFree = true
		case fieldFrames:
			err = r.recordFrames(e, rec, off)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// newEarly returns the id (from 1) of a free early trace entry, 0 when
// there is none. The row is as it was left: its taker sets it.
func (r *Reader) newEarly() int64 {
	if n := len(r.earlyFree); n > 0 {
		id := r.earlyFree[n-1]
		r.earlyFree = r.earlyFree[:n-1]
		return int64(id) + 1
	}
	if len(r.early) >= maxEarly {
		return 0
	}
	r.early = append(r.early, eventRow{stack: -1})
	return int64(len(r.early))
}

// addEvent appends trace entry seq of device dev, item, but for a
// scanned one (Append takes those).
func (r *Reader) addEvent(dev int32, seq int64, item pickle.Value) error {
	c := item.Container()
	if item.Kind() != pickle.Dict {
		return r.errAt(r.dec.Offset(), "device_traces[%d][%d] is %s, want a dict", dev, seq, describe(item))
	}
	if c.Tag == tagEntry && c.ID > 0 {
		// Converted early (SetItems): taken when it covers the dict.
		i := c.ID - 1
		e := r.early[i]
		r.early[i] = eventRow{stack: -1}
		r.earlyFree = append(r.earlyFree, int32(i))
		c.Tag, c.ID = 0, 0
		if !e.failed && 2*int(e.pairs) == len(c.Items) {
			return r.commitEvent(dev, seq, c.Offset, &e)
		}
	}
	e := eventRow{stack: -1}
	if err := r.pairs(&e, 0, c.Items, c.Offset); err != nil {
		return err
	}
	return r.commitEvent(dev, seq, c.Offset, &e)
}

// commitEvent appends trace entry e, from the dict at off, to the events table.
func (r *Reader) commitEvent(dev int32, seq int64, off int64, e *eventRow) error {
	if !e.hasAction {
		return r.errAt(off, "trace entry %d of device %d has no str \"action\"", seq, dev)
	}
	c := &r.ev
	if c.device == nil {
		c.alloc()
	}
	i := c.n
	if i >= c.rows || i < 0 { // never: a full batch is flushed below
		return r.errAt(off, "internal error: trace entry %d of device %d past its batch's %d rows", seq, dev, c.rows)
	}
	set(c, EvDevice, i, dev)
	set(c, EvSeq, i, seq)
	if e.hasTime {
		set(c, EvTimeUs, i, e.timeUs)
		c.setValid(evNullTime, i)
		r.meta.TimedEntries++
	} else {
		c.setNull(evNullTime, i)
	}
	if k := c.action.recentAt(e.action); k < len(c.action.recent) {
		c.action.codes[i] = c.action.recent[k].i // no call (recentAt is inlined)
	} else if err := c.action.appendSlow(i, e.action); err != nil {
		return err
	}
	if e.hasAddr {
		set(c, EvAddr, i, e.addr)
		c.setValid(evNullAddr, i)
	} else {
		c.setNull(evNullAddr, i)
	}
	set(c, EvSize, i, e.size)
	set(c, EvStream, i, e.stream)
	if e.stack >= 0 {
		set(c, EvStackID, i, e.stack)
		c.setValid(evNullStack, i)
	} else {
		c.setNull(evNullStack, i)
	}
	if e.hasFree {
		set(c, EvDeviceFree, i, e.devFree)
		c.setValid(evNullFree, i)
	} else {
		c.setNull(evNullFree, i)
	}
	if c.n = i + 1; c.n >= c.rows { // maybeFlush, inlined: once an entry
		r.flush(TableEvents)
		r.dec.Pause()
	}
	return nil
}

func (r *Reader) addSegment(index int64, item pickle.Value) error {
	c := item.Container()
	if item.Kind() != pickle.Dict {
		return r.errAt(r.dec.Offset(), "segments[%d] is %s, want a dict", index, describe(item))
	}
	const what = "segment"
	var (
		device                        int64
		address                       uint64
		total, allocated, active, req int64
		hasReq, expandable            bool
		stream                        int64
		segType                       = "large"
		pool                          [2]int64
		hasPool                       bool
		stack                         int32 = -1
		blocks                        *pickle.Container
		blocksAt                      int  // its value's index in c.Items
		seen                          bool // one of a segment's own keys
		err                           error
	)
	for i := 0; i+1 < len(c.Items); i += 2 {
		key, ok := c.Items[i].Str()
		if !ok {
			continue
		}
		v := c.Items[i+1]
		switch key {
		case "device", "address", "total_size", "blocks":
			seen = true
		}
		switch key {
		case "device":
			device, err = r.intField(v, c.Offset, what, key)
		case "address":
			address, err = r.addrField(v, c.Offset, what, key)
		case "total_size":
			total, err = r.sizeField(v, c.Offset, what, key)
		case "allocated_size":
			allocated, err = r.sizeField(v, c.Offset, what, key)
		case "active_size":
			active, err = r.sizeField(v, c.Offset, what, key)
		case "requested_size":
			req, err = r.sizeField(v, c.Offset, what, key)
			hasReq = true
		case "stream":
			stream, err = r.intField(v, c.Offset, what, key)
		case "segment_type":
			if s, ok := v.Str(); ok {
				segType = s
			}
		case "segment_pool_id":
			if pc := v.Container(); pc != nil && len(pc.Items) == 2 {
				a, ok1 := pc.Items[0].Int64()
				b, ok2 := pc.Items[1].Int64()
				pool, hasPool = [2]int64{a, b}, ok1 && ok2
			}
		case "is_expandable":
			expandable, _ = v.Bool()
		case "frames":
			fc := v.Container()
			stack, err = r.stackID(v, c.Offset)
			if err == nil && fc != nil && !r.general {
				// Converted: the dict holds the stack's Ref instead, and
				// the list, which nothing else refers to unless it is
				// shared (Recycle checks), serves a later container.
				c.Items[i+1] = pickle.RefValue(tagStack, int64(stack))
				r.dec.Recycle(fc)
			}
		case "blocks":
			if v.Kind() != pickle.List {
				return r.errAt(c.Offset, "segment: \"blocks\" is %s, want a list", describe(v))
			}
			blocks, blocksAt = v.Container(), i+1
		}
		if err != nil {
			return err
		}
	}
	if !seen {
		// Every PyTorch version's memory_snapshot() writes
		// these four in each segment (segmentInfoToDict in
		// torch/csrc/cuda/Module.cpp; _snapshot() wraps the same): a dict
		// with none of them is another pickle's record, which must not
		// be read as an empty segment and judged.
		if r.meta.Legacy && index == 0 {
			return &parse.Error{File: r.name, Offset: c.Offset, Msg: fmt.Sprintf("not a PyTorch memory snapshot: the pickle holds a list whose first item is a dict with keys %s, not a segment (device, address, total_size, blocks)", keyList(c)), Err: parse.ErrNotMine}
		}
		return r.errAt(c.Offset, "malformed snapshot: segments[%d] is a dict with keys %s, none of a segment's (device, address, total_size, blocks)", index, keyList(c))
	}
	if device < 0 || device > maxDevices {
		return r.errAt(c.Offset, "segment: device %d out of range", device)
	}
	b := &r.seg
	if err := b.segType.appendRow(b.rows(), segType); err != nil {
		return err
	}
	b.device.append(int32(device))
	b.address.append(address)
	b.total.append(total)
	b.allocated.append(allocated)
	b.active.append(active)
	b.requested.appendIf(req, hasReq)
	b.stream.append(stream)
	if hasPool {
		b.pool.Append(true)
		b.poolValues.Append(pool[0])
		b.poolValues.Append(pool[1])
	} else {
		b.pool.AppendNull()
	}
	b.expandable.Append(expandable)
	b.stack.appendIf(stack, stack >= 0)
	r.maybeFlush(TableSegments)
	if blocks != nil {
		next := address
		for i, bv := range blocks.Items {
			if err := r.addBlock(int32(device), address, &next, i, bv); err != nil {
				return err
			}
		}
		r.forget(blocks)
		if !r.general {
			// As the frames list above: its blocks are read, and it
			// serves a later container.
			c.Items[blocksAt] = pickle.RefValue(tagDone, -1)
			r.dec.Recycle(blocks)
		}
	}
	return nil
}

func (r *Reader) addBlock(dev int32, segAddr uint64, next *uint64, index int, item pickle.Value) error {
	if tag, id, ok := item.Ref(); ok && tag == tagBlock {
		return r.addScannedBlock(dev, segAddr, next, index, id)
	}
	c := item.Container()
	if item.Kind() != pickle.Dict {
		return r.errAt(r.dec.Offset(), "block %d of segment 0x%x is %s, want a dict", index, segAddr, describe(item))
	}
	const what = "block"
	var (
		address   = *next
		size, req int64
		hasReq    bool
		state           = ""
		stack     int32 = -1
		history   *pickle.Container
		err       error
	)
	for i := 0; i+1 < len(c.Items); i += 2 {
		key, ok := c.Items[i].Str()
		if !ok {
			continue
		}
		v := c.Items[i+1]
		switch key {
		case "address":
			address, err = r.addrField(v, c.Offset, what, key)
		case "size":
			size, err = r.sizeField(v, c.Offset, what, key)
		case "requested_size":
			req, err = r.sizeField(v, c.Offset, what, key)
			hasReq = true
		case "state":
			state, _ = v.Str()
		case "frames":
			stack, err = r.stackID(v, c.Offset)
		case "history":
			if v.Kind() == pickle.List {
				history = v.Container()
			}
		}
		if err != nil {
			return err
		}
	}
	// Before PyTorch 2.1 a block's allocation is the first history entry.
	if history != nil && len(history.Items) > 0 && history.Items[0].Kind() == pickle.Dict {
		h := history.Items[0].Container()
		if v, ok := h.Get("real_size"); ok && !hasReq {
			if req, err = r.sizeField(v, h.Offset, "block history", "real_size"); err != nil {
				return err
			}
			hasReq = true
		}
		if v, ok := h.Get("frames"); ok && stack < 0 {
			if stack, err = r.stackID(v, h.Offset); err != nil {
				return err
			}
		}
	}
	*next = address + uint64(size)
	if err := r.appendBlock(dev, segAddr, address, size, req, hasReq, state, stack); err != nil {
		return err
	}
	r.forget(c)
	return nil
}

// appendBlock appends a block of segment segAddr to the blocks table.
func (r *Reader) appendBlock(dev int32, segAddr, address uint64, size, req int64, hasReq bool, state string, stack int32) error {
	b := &r.blk
	if err := b.state.appendRow(b.rows(), state); err != nil {
		return err
	}
	b.device.append(dev)
	b.segment.append(segAddr)
	b.address.append(address)
	b.size.append(size)
	b.requested.appendIf(req, hasReq)
	b.stack.appendIf(stack, stack >= 0)
	r.maybeFlush(TableBlocks)
	return nil
}

// blockRow is a block dict the record scan read (scannedBlock), kept
// until its segment's dict is appended: its row needs the segment's
// device and address, which come in pairs the segment's dict receives
// after its blocks list is made.
type blockRow struct {
	address   uint64
	size, req int64
	state     string
	// frames is the block's frames list, a container as the general
	// path's dict would hold it (pickle.Decoder.ListContainer), converted
	// when the block is appended, as there; else stack holds the stack.
	frames  pickle.Value
	listKey uint64 // frames' pickle.Record.ListKey, when the scan read the list
	off     int64  // the block dict's EMPTY_DICT
	stack   int32  // -1: none
	pairs   int32
	held    int32 // the elements of a frames list converted when scanned, still held (pickle.Record.KeepHeld)
	hasAddr bool
	hasReq  bool
	serial  int64 // its Ref id's serial; 0 when free
}

// maxBlockRows bounds the scanned blocks waiting for their segments (a
// segment is read when the next begins, the segments list being Early,
// so only the blocks of one segment wait, unless a hand-made pickle
// writes its segments otherwise); past it blocks take the general path.
const (
	blockBits    = 15
	maxBlockRows = 1 << blockBits
)

// Fields of the block plan (blockPlan), by key.
const (
	blockAddress = iota
	blockSize
	blockRequested
	blockState
	blockFrames
	blockHistory
)

// scannedBlock keeps a block dict the record scan read as a blockRow and
// returns the Ref that its blocks list then holds in its place. Only
// blocks as PyTorch writes them are taken: an address, sizes in range, a
// str state, and frames that are None, a stack already interned or a list
// (made as the container the general path makes, and converted, as there,
// when the block is appended: what the memo yields for the list until
// then, and the values held against the decoder's limits, are the general
// path's). Anything else, and a block with a history (PyTorch before
// 2.1), goes to the general path (pickle.ErrNotScanned), which reports
// what is wrong.
func (r *Reader) scannedBlock(rec *pickle.Record) (pickle.Value, error) {
	set, ints := rec.Set, rec.IsInt
	row := blockRow{stack: -1}
	if set&(1<<blockHistory) != 0 {
		return pickle.Value{}, pickle.ErrNotScanned
	}
	if set&(1<<blockAddress) != 0 {
		if ints&(1<<blockAddress) == 0 || rec.Int[blockAddress] < 0 {
			return pickle.Value{}, pickle.ErrNotScanned
		}
		row.address, row.hasAddr = uint64(rec.Int[blockAddress]), true
	}
	for _, f := range [2]int{blockSize, blockRequested} {
		if set&(1<<f) == 0 {
			continue
		}
		if n := rec.Int[f]; ints&(1<<f) == 0 || n < 0 || n > maxSize {
			return pickle.Value{}, pickle.ErrNotScanned
		}
	}
	if set&(1<<blockSize) != 0 {
		row.size = rec.Int[blockSize]
	}
	if set&(1<<blockRequested) != 0 {
		row.req, row.hasReq = rec.Int[blockRequested], true
	}
	if set&(1<<blockState) != 0 {
		st, ok := rec.Val[blockState].Str()
		if ints&(1<<blockState) != 0 || !ok {
			return pickle.Value{}, pickle.ErrNotScanned
		}
		row.state = st
	}
	if set&(1<<blockFrames) != 0 {
		if ints&(1<<blockFrames) != 0 {
			return pickle.Value{}, pickle.ErrNotScanned
		}
		v := rec.Val[blockFrames]
		_, isList := rec.ListLen(blockFrames)
		tag, id, isRef := v.Ref()
		switch {
		case v.IsNone():
		case isRef && tag == tagStack:
			row.stack = int32(id)
		case v.Kind() == pickle.List && v.Container() != nil:
			// A list made before, not yet converted (the segment's
			// frames, say).
			row.frames = v
		case isList:
			// The last step: nothing is declined after the list is made
			// or converted.
			key := rec.ListKey(blockFrames)
			if ls := &r.listStacks[key%uint64(len(r.listStacks))]; ls.key == key && key != 0 {
				// The elements of a list converted before: its stack,
				// interned already, so taken now (no container made)
				// rather than when the block is appended. The stacks
				// table is the same either way; the memo yields the
				// stack's Ref for the list meanwhile (where the general
				// path yields the list, which a later block or the
				// segment would convert to the same stack), and its
				// elements stay held until then, as there.
				n, _ := rec.ListLen(blockFrames)
				row.stack, row.held = ls.stack, int32(n)
				rec.Val[blockFrames] = pickle.RefValue(tagStack, int64(ls.stack))
				rec.KeepHeld(blockFrames)
				break
			}
			row.listKey = key
			row.frames, _ = r.dec.ListContainer(rec, blockFrames)
		default:
			return pickle.Value{}, pickle.ErrNotScanned
		}
	}
	var i int32
	if n := len(r.blockFree); n > 0 {
		i = r.blockFree[n-1]
		r.blockFree = r.blockFree[:n-1]
	} else {
		i = int32(len(r.blockRows))
		r.blockRows = append(r.blockRows, blockRow{})
	}
	r.serial++
	r.blocksScanned++
	row.serial, row.pairs, row.off = r.serial, int32(rec.Pairs), rec.Offset
	r.blockRows[i] = row
	return pickle.RefValue(tagBlock, r.serial<<blockBits|int64(i)), nil
}

// blockStack converts a scanned block's frames list, v, as stackID does.
// A list with the elements of one converted before (its ListKey, key, as
// the trace entries' lists are keyed: most blocks repeat a few lists)
// takes that list's stack without interning its frames again.
func (r *Reader) blockStack(v pickle.Value, key uint64, off int64) (int32, error) {
	c := v.Container()
	if key == 0 || c.Tag == tagStack {
		return r.stackID(v, off)
	}
	ls := &r.listStacks[key%uint64(len(r.listStacks))]
	if ls.key == key {
		// What stackID would do, the stack being interned already.
		r.convertedList(c, ls.stack)
		return ls.stack, nil
	}
	id, err := r.stackID(v, off)
	if err == nil {
		*ls = listStack{key, id}
	}
	return id, err
}

// addScannedBlock appends the block the record scan read (scannedBlock)
// whose Ref id is id, as addBlock appends a block's dict.
func (r *Reader) addScannedBlock(dev int32, segAddr uint64, next *uint64, index int, id int64) error {
	i := id & (maxBlockRows - 1)
	if id < 0 || int(i) >= len(r.blockRows) || r.blockRows[i].serial != id>>blockBits {
		return r.errAt(r.dec.Offset(), "block %d of segment 0x%x is a block already stored before (a memo reference or DUP)", index, segAddr)
	}
	b := r.blockRows[i]
	r.blockRows[i] = blockRow{}
	r.blockFree = append(r.blockFree, int32(i))
	r.dec.ReleaseRecord(int(b.pairs)) // consumed, as the general path's dict
	if b.held > 0 {
		r.dec.ReleaseItems(int(b.held)) // its frames list, converted when scanned
	}
	stack := b.stack
	if b.frames.Kind() == pickle.List {
		var err error
		if stack, err = r.blockStack(b.frames, b.listKey, b.off); err != nil {
			return err
		}
		// Converted, and held by nothing else unless shared (Recycle
		// checks): it serves a later container.
		r.dec.Recycle(b.frames.Container())
	}
	address := *next
	if b.hasAddr {
		address = b.address
	}
	*next = address + uint64(b.size)
	return r.appendBlock(dev, segAddr, address, b.size, b.req, b.hasReq, b.state, stack)
}

// protocol0Re is the start of a protocol-0 pickle of a dict or a list.
var protocol0Re = lazyre.New(`^\((?:dp|lp)\d+\r?\n`)

// Sniff reports whether head, the first bytes of an input, look like a
// pickle that may hold a snapshot: a protocol 2-5 pickle (PROTO opcode), or
// a protocol 0/1 pickle of a dict or list that mentions a snapshot key
// (protocol 0 only from its "(dp0"/"(lp0" start: text is never one).
func Sniff(head []byte) bool {
	if len(head) >= 3 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5 {
		return true
	}
	named := bytes.Contains(head, []byte("segments")) || bytes.Contains(head, []byte("device_traces"))
	switch {
	case len(head) < 2 || !named:
		return false
	case head[0] == '(':
		// Protocol 0 is text: only a dict or list pickle's own start,
		// "(dp0\n" or "(lp0\n", is taken for one. A log line starting with
		// "(" ("(VllmWorkerProcess pid=1) ...") is text.
		return protocol0Re.Match(head)
	case head[0] == '}' || head[0] == ']':
		// Protocol 1 is binary: its memo indexes hold NUL bytes.
		return bytes.IndexByte(head, 0) >= 0
	}
	return false
}
