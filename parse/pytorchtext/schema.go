// Package pytorchtext decodes the text PyTorch prints about GPU memory
// into Apache Arrow record batches: CUDA out-of-memory messages anywhere in
// a log or traceback, torch.cuda.memory_summary() tables, and
// torch.cuda.memory_stats() saved as JSON.
//
// # Logs and tracebacks (NewReader)
//
// Every line is searched for "CUDA out of memory" (or "HIP out of memory",
// ROCm builds) and "CUDA error: out of memory". PyTorch's caching
// allocator has printed its message in these forms (package documentation
// of Generation; ParseMessage reads one):
//
//	CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB
//	of which 135.01 GiB is free. [Process 609 has 127.79 GiB memory in use. ]...[Including
//	non-PyTorch memory, this process has 4.78 GiB memory in use. ][4.19 GiB allowed; ]Of the
//	allocated memory 4.19 GiB is allocated by PyTorch, [with 1.00 GiB allocated in private
//	pools (e.g., CUDA Graphs), ]and 0 bytes is reserved by PyTorch but unallocated. ...
//	                                                  (2.1 and later; 2.1: "capacty"; ROCm: "HIP Graphs")
//
//	CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 6.84 GiB
//	already allocated; 15.69 MiB free; [N allowed; ]6.89 GiB reserved in total by PyTorch) ...
//	                                                  (1.4 to 2.0)
//
//	CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 6.84 GiB
//	already allocated; 15.69 MiB free; 50.00 MiB cached)
//	                                                  (1.0 to 1.3: "cached" is reserved - allocated)
//
// each after any prefix: an exception type ("RuntimeError:",
// "torch.cuda.OutOfMemoryError:", "torch.OutOfMemoryError:"), a launcher's
// "[rank1]:", a logger's tag or timestamp. A carriage return, as a progress
// bar writes, starts a new line; terminal colour codes are removed; a line
// holding JSON-escaped text ("\n" between lines) next to an OOM message or a
// traceback is unescaped and split. A message whose line ends before its
// form does is joined with the next lines (a wrapped paste) while that
// reads further; where processes' lines interleave (torchrun's
// "[rank0]: " and "[rank1]: "), each message is joined from its own
// process's lines. Sizes are format_size()'s: "N bytes" up to 1024 bytes,
// else two decimals of KiB, MiB or GiB. A message cut short after its
// request is kept as "cut" with the request only; a line that mentions a
// CUDA out-of-memory error in no known form is kept as "unparsed", with
// the reason; nothing is guessed from either.
//
// The frames of the Python traceback that ends with the message ("File
// "x.py", line 12, in grow" lines after "Traceback (most recent call
// last):", with the same line prefix, or one that differs from it only in
// digits, such as a timestamp) are kept with it; frames without a
// "Traceback" line before them start a traceback.
//
// A memory_summary() table in the log (or a file holding only one) is
// read into the stats table under the keys memory_stats() uses; its sizes
// were truncated to the unit shown (B/KiB/MiB/GiB, or B/KB/MB/GB before
// PyTorch 1.6: powers of 1024 in both), which the resolution column gives.
// Rows are found by the table's width, so a prefix before each row and a
// title glued to its border are read. A table that stops or breaks in the
// middle is never an error: the rows read are kept, the set gets a
// PartialKey row with the line where reading stopped, and the lines after
// it are read as text.
//
// # memory_stats() JSON (NewStatsReader)
//
// The dict torch.cuda.memory_stats() returns, saved with json.dump: flat
// keys ("allocated_bytes.all.current": 152043520, "num_ooms": 0) or nested
// (memory_stats_as_nested_dict()). A list of such dicts, or a dict of them
// keyed by device index, gives one per device.
//
// # Tables
//
// Each record batch belongs to one table (Reader.Table). Sizes are bytes;
// lines are 1-based.
//
// messages (MessagesSchema): one row per out-of-memory message, in input order.
//
//	message        int32   index of the message in the input, from 0
//	line           int64   line of the message
//	generation     dictionary<int16, utf8>: "2.x", "1.x", "async" (cudaMallocAsync),
//	               "mps" (Apple Metal), "0.x" (THC), "cuda-error", "1eb", "cut", "unparsed";
//	               other frameworks': "cupy", "xla" (JAX), "tensorflow", "paddle",
//	               "onnxruntime" (ONNX Runtime's BFC arena: requested only), "theano"
//	               (requested, and free and total where the driver's figures are printed),
//	               "directml" (torch-directml: requested only)
//	typo           bool    PyTorch 2.1's "capacty"
//	backend        utf8    "CUDA", "HIP", "XPU" or "MPS"
//	exception      utf8    exception type before the message; null when none
//	prefix         utf8    the line's text before that (a "[rank1]:" tag); "" when none
//	device         int32   GPU index; null when not said
//	requested      int64   the allocation that failed, as the allocator rounded it
//	total          int64   the GPU's memory
//	free           int64   free on the GPU, as CUDA reported
//	process_in_use int64   this process, PyTorch's memory and not (2.x with NVML)
//	allowed        int64   the per-process limit (set_per_process_memory_fraction)
//	allocated      int64   allocated by PyTorch (2.x: private pools included)
//	private_pools  int64   allocated in private pools (CUDA graphs), 2.2+
//	reserved_unallocated int64  reserved by PyTorch but unallocated (2.x; 1.0-1.3 "cached")
//	reserved       int64   reserved by PyTorch in all (1.x; 1.0-1.3: allocated + cached)
//	reason         utf8    why an unparsed, cut or async message was not read whole; else null
//	text           utf8    the message, from "CUDA" to the end of the line
//	cached         bool    a 1.0-1.3 message ("C cached)": reserved_unallocated printed, not derived)
//	coarse         utf8    the figures typed with fewer decimals than PyTorch prints ("2 GiB"),
//	               "field=allowance=typed" in bytes joined by ";" ("requested=536870912=1 GiB;process 0=53687091=3.5 GiB",
//	               "=typed" absent for a figure summed, not typed; see Message.Coarse and ParseCoarse);
//	               null when every figure has two decimals
//	folded         int32   N of Ray's "[repeated Nx across cluster]" at the line's end: lines of
//	               other workers (or again) that Ray's log deduplication folded into this one, this
//	               one the last of them; they match it but for words holding a digit (another GPU,
//	               size, pid), so their figures may differ; null when the line has no such mark
//	folded_first   int64   the line of the first line of that kind in the input, which Ray prints
//	               on its own before folding the rest; null when it is not in the input (or no fold)
//	progress_line  int64   the last line before the message that counts the run's progress (a step,
//	               iteration, epoch or batch number: "step 12", "Epoch: [3]", "'epoch': 0.12",
//	               tqdm's "| 12/500 [") among its process's lines (those with the same launcher's
//	               mark, "[rank1]:" or a worker's "(pid=N)", or with none) whose counters differ
//	               from those of the progress line before it (a bar drawn again with the same count
//	               is not progress); lines inside a traceback are not counted; null when none. Two
//	               copies of one message with such a line between them were printed by a run that
//	               went on: two failures. In llama.cpp's log, its lines that show it went on after an
//	               allocation failure count too: the failure's caller's ("llama_kv_cache_update_impl:
//	               failed to allocate compute buffers": llama.cpp logs each failure's chain once)
//	               and llama-server's lines of a request ("slot update_slots: id 0 | task 12")
//	printer        utf8    of a "cuda-error" message in words several programs' own CUDA checks
//	               print alike ("CUDA Error: out of memory"), the program the lines next to it
//	               name as its printer (darknet: its check_error's assertion "darknet:
//	               ./src/cuda.c:36: check_error", its perror line "CUDA Error: out of memory:
//	               No error", its dark_cuda.c); null when they name none
//	reraised       bool    the innermost frame of the message's traceback raises a new exception built
//	               from a value ("raise RuntimeError(resp['error'])"): the words were passed on there,
//	               not raised where the allocation failed
//	call           utf8    the runtime call whose status a program's check printed, where the lines give
//	               it (llama.cpp's ggml_cuda_error: the line after its device line, "cudaGraphLaunch",
//	               "cuMemCreate", "hipMalloc"); null when none
//
// Every size column is null when the message does not carry it, and all
// are null for "cuda-error", "0.x" and "unparsed" messages; a "cut"
// message has requested and the figures printed whole before the cut; an
// "async" message has requested, total, free, allocated (reserved is
// null: the pool's cached memory is not printed) and
// allowed when a cap was set, and a reason when its lines were cut off;
// a "cupy" message has requested, reserved (the pool's bytes from CUDA,
// "allocated so far") and allowed (its limit) as printed; an "xla"
// message has requested; a "tensorflow" message no size, only the device;
// an "mps" message has requested, reserved (PyTorch's MPS heaps),
// process_in_use (reserved + other allocations) and allowed (the high
// watermark limit) when one was set.
// A figure of 1 PiB or more (NVML's 2^64-byte overflow) is null, with a
// warning. Printed sizes are
// within SizeTolerance of the true ones.
//
// processes (ProcessesSchema): the other processes a 2.x message names.
//
//	message  int32   the message's "message"
//	pid      int64
//	bytes    int64   its memory in use on the GPU
//
// frames (FramesSchema): the traceback frames that led to a message.
//
//	message   int32
//	depth     int32   0 is the innermost frame (the traceback's last)
//	filename  utf8
//	line      int64
//	name      utf8    function name ("<module>" at top level)
//
// stats (StatsSchema): allocator statistics, one row per value.
//
//	set         int32   which memory_stats() dict or memory_summary() table, from 0
//	set_line    int64   line where it starts
//	source      dictionary<int16, utf8>: "memory_stats" or "memory_summary"
//	device      int32   GPU index; null when not said
//	key         utf8    memory_stats() key: "allocated_bytes.all.current", "num_ooms", ...;
//	                    PartialKey ("gpuleak.partial_at_line") marks a cut table, value the line;
//	                    PartialBoundKey ("gpuleak.partial_bound") a dict read only up to a bound
//	                    (value: the bound, bytes if positive, lines if negative)
//	value       int64   bytes or a count
//	resolution  int64   0 when exact; else the true value is in [value, value+resolution)
//	line        int64   line of the value
//	process     dictionary<int16, utf8>: of a memory_summary() table, what begins its lines in
//	            a log, the same over one process's output (a launcher's "[rank1]:", a logger's
//	            prefix with its date and time as "#"): tables of one device with different ones
//	            are different processes'; of a memory_stats() dict printed in a log, a launcher's
//	            mark before it ("[rank1]:", a Ray or vLLM worker's "(pid=N)"; the program's own
//	            words there, "step 3: ", are none); null when there is none, and for JSON files
//
// Batches of different tables may come in any order; a message's frames
// and processes are defined by the time Next returns false.
package pytorchtext

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
)

// Table identifies which table a record batch belongs to.
type Table int

// The tables.
const (
	TableMessages Table = iota
	TableProcesses
	TableFrames
	TableStats
	numTables
)

var (
	tableNames   = [...]string{"messages", "processes", "frames", "stats"}
	tableSchemas = [...]*arrow.Schema{MessagesSchema, ProcessesSchema, FramesSchema, StatsSchema}
)

// String is the table's name ("messages", ...).
func (t Table) String() string { return parse.TableName(tableNames[:], t) }

// Schema returns the table's schema, nil for an unknown table.
func (t Table) Schema() *arrow.Schema { return parse.TableSchema(tableSchemas[:], t) }

func nullableInt64(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
}

// Schemas of the tables; see the package documentation.
var (
	MessagesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "message", Type: arrow.PrimitiveTypes.Int32},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64},
		{Name: "generation", Type: parse.DictString},
		{Name: "typo", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "backend", Type: arrow.BinaryTypes.String},
		{Name: "exception", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "prefix", Type: arrow.BinaryTypes.String},
		{Name: "device", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		nullableInt64("requested"),
		nullableInt64("total"),
		nullableInt64("free"),
		nullableInt64("process_in_use"),
		nullableInt64("allowed"),
		nullableInt64("allocated"),
		nullableInt64("private_pools"),
		nullableInt64("reserved_unallocated"),
		nullableInt64("reserved"),
		{Name: "reason", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "cached", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "coarse", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "folded", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		nullableInt64("folded_first"),
		nullableInt64("progress_line"),
		{Name: "printer", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "reraised", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "call", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)

	ProcessesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "message", Type: arrow.PrimitiveTypes.Int32},
		{Name: "pid", Type: arrow.PrimitiveTypes.Int64},
		{Name: "bytes", Type: arrow.PrimitiveTypes.Int64},
	}, nil)

	FramesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "message", Type: arrow.PrimitiveTypes.Int32},
		{Name: "depth", Type: arrow.PrimitiveTypes.Int32},
		{Name: "filename", Type: arrow.BinaryTypes.String},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)

	StatsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "set", Type: arrow.PrimitiveTypes.Int32},
		{Name: "set_line", Type: arrow.PrimitiveTypes.Int64},
		{Name: "source", Type: parse.DictString},
		{Name: "device", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "key", Type: arrow.BinaryTypes.String},
		{Name: "value", Type: arrow.PrimitiveTypes.Int64},
		{Name: "resolution", Type: arrow.PrimitiveTypes.Int64},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64},
		{Name: "process", Type: parse.DictString, Nullable: true},
	}, nil)
)

// Column indices, in schema order, for readers of the batches: the
// messages table.
const (
	MsgID = iota
	MsgLine
	MsgGeneration
	MsgTypo
	MsgBackend
	MsgException
	MsgPrefix
	MsgDevice
	MsgRequested
	MsgTotal
	MsgFree
	MsgProcessInUse
	MsgAllowed
	MsgAllocated
	MsgPrivatePools
	MsgReservedUnallocated
	MsgReserved
	MsgReason
	MsgText
	MsgCached
	MsgCoarse
	MsgFolded
	MsgFoldedFirst
	MsgProgressLine
	MsgPrinter
	MsgReraised
	MsgCall
)

// Columns of the processes table.
const (
	ProcMessage = iota
	ProcPID
	ProcBytes
)

// Columns of the frames table.
const (
	FrMessage = iota
	FrDepth
	FrFilename
	FrLine
	FrName
)

// Columns of the stats table.
const (
	StSet = iota
	StSetLine
	StSource
	StDevice
	StKey
	StValue
	StResolution
	StLine
	StProcess
)

// Sources of stats rows.
const (
	SourceMemoryStats   = "memory_stats"
	SourceMemorySummary = "memory_summary"
)
