// Package pytorch decodes PyTorch CUDA memory snapshots, the pickles written
// by torch.cuda.memory._dump_snapshot() (and pickle.dump of
// torch.cuda.memory._snapshot() or torch.cuda.memory_snapshot()), into
// Apache Arrow record batches.
//
// # Format
//
// A snapshot is a pickled dict (PyTorch 2.0 and later):
//
//	{"segments": [segment, ...],            # the caching allocator's state at the end
//	 "device_traces": [[entry, ...], ...],  # one list per device, oldest entry first
//	 "allocator_settings": {...},           # PyTorch 2.5+, optional
//	 "external_annotations": [...]}         # optional, ignored
//
// PyTorch 1.13 pickled the list of segments alone; it is read with no trace.
// A segment has device, address, total_size, allocated_size, active_size,
// requested_size, stream, segment_type ("large"/"small"), segment_pool_id
// (a pair of ints), is_expandable, frames and blocks; a block has address,
// size, requested_size, state ("active_allocated", "active_pending_free",
// "inactive") and frames, or, before PyTorch 2.1, history
// ([{addr, real_size, frames}]; the first entry describes the allocation,
// as torch.cuda._memory_viz reads it). A trace entry has action, addr,
// size, stream, time_us (PyTorch 2.1+), frames, and device_free for "oom"
// entries (which have no addr). A frame is {filename, line, name},
// innermost first. Missing keys are tolerated and unknown keys ignored.
// Pickle protocols 0 to 5 are read, gzip-compressed or not; opcodes that
// would run code are refused (package parse/pickle).
//
// # Tables
//
// The Reader emits record batches of five tables; each batch belongs to
// one table (Reader.Table). Sizes and addresses are bytes, times are
// microseconds since the Unix epoch as PyTorch records them.
//
// segments (SegmentsSchema): one row per segment, the allocator's state at
// the end of the snapshot.
//
//	device           int32
//	address          uint64
//	total_size       int64    bytes reserved from CUDA
//	allocated_size   int64    bytes in allocated blocks
//	active_size      int64    bytes in active blocks (allocated or pending free)
//	requested_size   int64    bytes the program asked for; null before PyTorch 2.1
//	stream           int64    the cudaStream_t the segment serves
//	segment_type     dictionary<int16, utf8>: "large" or "small" pool
//	segment_pool_id  fixed_size_list<int64>[2], null when absent; (0, 0) is the default pool
//	is_expandable    bool     expandable segments (PYTORCH_CUDA_ALLOC_CONF)
//	stack_id         int32    stack of the segment's allocation, null when none
//
// blocks (BlocksSchema): one row per block of every segment, in address order.
//
//	device            int32
//	segment_address   uint64
//	address           uint64
//	size              int64
//	requested_size    int64   null when the snapshot does not say
//	state             dictionary<int16, utf8>: "active_allocated", "active_pending_free", "inactive"
//	stack_id          int32   null when no frames were recorded
//
// events (EventsSchema): one row per trace entry, per device in order.
//
//	device       int32
//	seq          int64   position in the device's trace, from 0
//	time_us      int64   null when the snapshot has no timestamps (PyTorch < 2.1)
//	action       dictionary<int16, utf8>: alloc, free_requested, free_completed,
//	             segment_alloc, segment_free, segment_map, segment_unmap,
//	             snapshot, oom, or any other string PyTorch writes
//	addr         uint64  null when absent (oom entries)
//	size         int64
//	stream       int64
//	stack_id     int32   null when no frames were recorded
//	device_free  int64   bytes free on the device, oom entries only, else null
//
// frames (FramesSchema): each distinct frame once.
//
//	frame_id  int32
//	filename  utf8
//	line      int64
//	name      utf8
//
// stacks (StacksSchema): each distinct stack once, as one row per frame.
//
//	stack_id  int32
//	depth     int32   0 is the innermost frame
//	frame_id  int32
//
// Frames and stacks are interned: a million trace entries that share a few
// hundred stacks cost a few hundred stack rows. A frames or stacks row may
// arrive after a batch that refers to its id; every id is defined by the
// time Next returns false.
package pytorch

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
)

// Table identifies which table a record batch belongs to.
type Table int

// The tables of a snapshot.
const (
	TableSegments Table = iota
	TableBlocks
	TableEvents
	TableFrames
	TableStacks
	numTables
)

var (
	tableNames   = [...]string{"segments", "blocks", "events", "frames", "stacks"}
	tableSchemas = [...]*arrow.Schema{SegmentsSchema, BlocksSchema, EventsSchema, FramesSchema, StacksSchema}
)

// String is the table's name ("segments", ...).
func (t Table) String() string { return parse.TableName(tableNames[:], t) }

// Schema returns the table's schema, nil for an unknown table.
func (t Table) Schema() *arrow.Schema { return parse.TableSchema(tableSchemas[:], t) }

// Schemas of the tables; see the package documentation.
var (
	SegmentsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "device", Type: arrow.PrimitiveTypes.Int32},
		{Name: "address", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "total_size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "allocated_size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "active_size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "requested_size", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "stream", Type: arrow.PrimitiveTypes.Int64},
		{Name: "segment_type", Type: parse.DictString},
		{Name: "segment_pool_id", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "is_expandable", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "stack_id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)

	BlocksSchema = arrow.NewSchema([]arrow.Field{
		{Name: "device", Type: arrow.PrimitiveTypes.Int32},
		{Name: "segment_address", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "address", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "requested_size", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "state", Type: parse.DictString},
		{Name: "stack_id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)

	EventsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "device", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "time_us", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "action", Type: parse.DictString},
		{Name: "addr", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "stream", Type: arrow.PrimitiveTypes.Int64},
		{Name: "stack_id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "device_free", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)

	FramesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "frame_id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "filename", Type: arrow.BinaryTypes.String},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)

	StacksSchema = arrow.NewSchema([]arrow.Field{
		{Name: "stack_id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "depth", Type: arrow.PrimitiveTypes.Int32},
		{Name: "frame_id", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
)

// Column indices, in schema order, for readers of the batches.
const (
	SegDevice = iota
	SegAddress
	SegTotalSize
	SegAllocatedSize
	SegActiveSize
	SegRequestedSize
	SegStream
	SegType
	SegPoolID
	SegExpandable
	SegStackID
)

const (
	BlkDevice = iota
	BlkSegmentAddress
	BlkAddress
	BlkSize
	BlkRequestedSize
	BlkState
	BlkStackID
)

const (
	EvDevice = iota
	EvSeq
	EvTimeUs
	EvAction
	EvAddr
	EvSize
	EvStream
	EvStackID
	EvDeviceFree
)

const (
	FrID = iota
	FrFilename
	FrLine
	FrName
)

const (
	StID = iota
	StDepth
	StFrameID
)

// Trace entry actions PyTorch writes (c10/cuda/CUDACachingAllocator.h, TraceEntry::Action).
const (
	ActionAlloc         = "alloc"          // a block was handed to the program
	ActionFreeRequested = "free_requested" // the program released it; the block waits for its streams
	ActionFreeCompleted = "free_completed" // the block is free for reuse
	ActionSegmentAlloc  = "segment_alloc"  // cudaMalloc of a new segment
	ActionSegmentFree   = "segment_free"   // cudaFree of a segment
	ActionSegmentMap    = "segment_map"    // expandable segment grew (pages mapped)
	ActionSegmentUnmap  = "segment_unmap"  // expandable segment shrank
	ActionSnapshot      = "snapshot"       // a snapshot was taken here
	ActionOOM           = "oom"            // an allocation failed; size is the request
)

// Block states.
const (
	StateActiveAllocated   = "active_allocated"
	StateActivePendingFree = "active_pending_free"
	StateInactive          = "inactive"
)
