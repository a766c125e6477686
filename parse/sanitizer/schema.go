// Package sanitizer decodes the reports of NVIDIA's compute-sanitizer (and
// of its predecessor cuda-memcheck) into Apache Arrow record batches: the
// text log the tool prints (to the terminal, a CI log or --log-file) and
// the XML file written by --xml --save.
//
// # Text logs
//
// Every line the tool writes starts with a prefix, "=========" unless
// --prefix changed it, then a space; lines without the prefix are the
// program's own output, interleaved, and are skipped (a line the program
// left unterminated may carry a tool line after it: that part is read).
// The prefix is learnt from the banner ("COMPUTE-SANITIZER" or
// "CUDA-MEMCHECK", which starts a run) or, for a log cut before its banner,
// from the first line that looks like a record. Text before the prefix (CI
// timestamps, indentation) is accepted when the banner had some too.
//
// A record starts with a line one space after the prefix and continues
// with deeper-indented lines until an empty prefixed line or the next
// record. Records read:
//
//	Leaked 4,194,304 bytes at 0x7fb262800000 [on the device heap]   (kind "leak")
//	Invalid __global__ write of size 4 bytes                        ("memory-access")
//	Program hit cudaErrorX (error 719) due to "..." on CUDA API call to cudaFree.  ("api")
//	Program hit error 17 on CUDA API call to cudaFree              ("api", cuda-memcheck)
//	Malloc/Free error encountered : Double free                     ("malloc-free")
//	Error: Race reported between ... / Potential RAW hazard ...     ("race")
//	Uninitialized __global__ memory read of size 4 bytes            ("uninitialized")
//	Unused memory in allocation ...                                 ("unused-memory")
//	Barrier error detected. ...                                     ("sync")
//	Warp Illegal Address, Illegal Instruction, ...                  ("hardware-exception")
//	This tool is deprecated ..., Internal error (7),                 ("notice": the tool's own status,
//	No CUDA-MEMCHECK results found, Error: process didn't            not a finding; ERROR SUMMARY
//	terminate successfully, ...                                      does not count it)
//	anything else                                                   ("other", kept by its first line)
//
// with these detail lines:
//
//	at fill(float *, int, float)+0xc0 in leaky.cu:9   the faulting device function (a device frame)
//	by thread (0,0,0) in block (1,0,0)
//	Access to 0x7f4646cc0400 is out of bounds          (kept in details; the address is read)
//	Saved host backtrace up to driver entry point at allocation time
//	Host Frame: ... / Device Frame: ...
//
// Host frames come in three layouts:
//
//	Host Frame: make_workspace(unsigned long) in leaky.cu:14 [0x8cc5] in leaky   one line (2023+)
//	Host Frame: cuMemAlloc_v2 [0x32b91f]                                          two lines (2022-2023,
//	               in /usr/local/nvidia/lib64/libcuda.so.1                         and --backtrace-short no)
//	Host Frame:/usr/lib/libcuda.so (cuMemAlloc_v2 + 0x1b7) [0x26ec97]             legacy (cuda-memcheck)
//
// where the function, the "in file:line" part or the module may be missing,
// and C++ names are demangled or not (--demangle). Python frames, which
// recent versions append after the native frames of a Python program, have
// no address: "Host Frame: load_batch in cupy_leak.py:5".
//
// "LEAK SUMMARY: N bytes leaked in M allocations", "ERROR SUMMARY: N errors"
// and "ERROR SUMMARY: N errors were not printed" (--print-limit) end a run;
// they are kept in the runs table for the analysis to check. With
// --target-processes all, the leak reports of several processes share one
// run and one summary; a leak at an address already reported leaked in
// the run, or after program output that followed a leak report, starts a
// new leak report and is numbered so (the "process" column). A process
// that calls cudaDeviceReset prints a leak report at each reset too: the
// text names no process, so a new number is a new report, of another
// process or of the same one.
//
// # XML
//
// compute-sanitizer --xml --save FILE writes <ComputeSanitizerOutput> with
// one <record> per report: <kind> (Leak, Precise, Imprecise, Api, ...),
// <level>, <who> (<threadIdx>, <blockIdx>), <what> (<text>, <size>,
// <address>, <type>, <space>, <direction>, <error>, <api>, <message>,
// <result>), <where> (<func>, <path>, <line>, <pc>) and <hostStack>
// (<saveLocation>, <frame>s of <func>, <path>, <line>, <pc>, <module>).
// Leak becomes kind "leak", Precise and Imprecise "memory-access" and
// "hardware-exception", Api "api"; others are kept lower-cased. The XML has
// no summaries. Unknown elements are ignored.
//
// # Tables
//
// The Reader emits record batches of three tables; each batch belongs to
// one table (Reader.Table). Sizes are bytes; addresses and pcs are as
// printed.
//
// records (RecordsSchema): one row per record, in input order.
//
//	run            int32    sanitizer run, from 0 (a banner starts one; an XML file is one run)
//	process        int32    process within the run, from 0 (see above)
//	record         int32    record index in the input, from 0; frames refer to it
//	kind           dictionary<int16, utf8>  leak, memory-access, api, malloc-free, race,
//	               uninitialized, unused-memory, sync, hardware-exception, other, notice
//	size           int64    bytes leaked, or bytes accessed; null when not said
//	address        uint64   leaked or accessed address; null when not said
//	memory_type    utf8     leak: XML <type>, or "device heap" for "on the device heap"; else null
//	message        utf8     the record's first line (text) or <what><text> (XML)
//	api            utf8     the CUDA API call of an api error (cudaFree); else null
//	error          utf8     cudaErrorLaunchFailure, or XML <what><error> ("out of bounds"); else null
//	result         int64    the API's error number (719); else null
//	error_message  utf8     the error's text ("unspecified launch failure"); else null
//	kernel         utf8     the device function of a device-side report; else null
//	thread, block  utf8     "(x,y,z)" of the faulting thread and block; else null
//	save_location  utf8     when the host backtrace was saved: "allocation time",
//	               "kernel launch time", "error", "cudaMalloc time"; null without one
//	details        utf8     other detail lines, joined by "\n"; null when none
//	line           int64    text: 1-based line of the record's first line; XML: null
//	offset         int64    XML: byte offset of the <record>; text: null
//	cut            bool     text: the input ends inside the record's last frame or line, which
//	               was left out, so its backtrace is not whole; XML: false
//	name           utf8     the allocation's NVTX name (nvtxMemRegionsName, --nvtx yes): "My
//	               allocation" of "Leaked 1 bytes at 0x... called My allocation"; else null
//
// frames (FramesSchema): one row per frame of every record.
//
//	record       int32    the record's "record"
//	kind         dictionary<int16, utf8>  host, device, python (a host frame without address
//	             in a .py file or <...>: the Python frames of a Python program)
//	depth        int32    position among the record's frames of that kind, 0 = innermost
//	             (Python frames: numbered after the native host frames, innermost first)
//	function     utf8     as printed (demangled or not); null when absent
//	file         utf8     source file; null when absent
//	line         int64    source line; null when absent
//	pc           uint64   address as printed in [...]; null when absent
//	func_offset  uint64   offset into the function ("+0xc0", "(f + 0x1b7)"); null when absent
//	module       utf8     shared object or executable; null when absent
//
// runs (RunsSchema): one row per run, after all records and frames.
//
//	run                 int32
//	tool                utf8   "compute-sanitizer", "cuda-memcheck", or "" without a banner
//	prefix              utf8   the line prefix ("=========")
//	line                int64  the banner's line (text), null without a banner or for XML
//	processes           int32  processes seen (at least 1)
//	records             int64  records read in the run (notices not counted)
//	leak_bytes          int64  LEAK SUMMARY bytes; null without one
//	leak_allocations    int64  LEAK SUMMARY allocations; null without one
//	errors              int64  ERROR SUMMARY errors (leaks count as errors), or without one racecheck's
//	                           RACECHECK SUMMARY "N hazards displayed" (its records); null without either
//	errors_not_printed  int64  "N errors were not printed" (--print-limit); null without one
//	target_error        bool   "Target application returned an error"
//	start_line          int64  the run's first line of the tool's (its banner, or without one its first
//	                           record or summary: text); null for XML
//	errors_from_racecheck bool "errors" is racecheck's RACECHECK SUMMARY count (the run has no
//	                           ERROR SUMMARY)
//
// A frames batch may arrive before the records batch holding its record;
// every record id is defined by the time Next returns false.
package sanitizer

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
)

// Table identifies which table a record batch belongs to.
type Table int

// The tables of a report.
const (
	TableRecords Table = iota
	TableFrames
	TableRuns
	numTables
)

var (
	tableNames   = [...]string{"records", "frames", "runs"}
	tableSchemas = [...]*arrow.Schema{RecordsSchema, FramesSchema, RunsSchema}
)

// String is the table's name ("records", ...).
func (t Table) String() string { return parse.TableName(tableNames[:], t) }

// Schema returns the table's schema, nil for an unknown table.
func (t Table) Schema() *arrow.Schema { return parse.TableSchema(tableSchemas[:], t) }

// Schemas of the tables; see the package documentation.
var (
	RecordsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "run", Type: arrow.PrimitiveTypes.Int32},
		{Name: "process", Type: arrow.PrimitiveTypes.Int32},
		{Name: "record", Type: arrow.PrimitiveTypes.Int32},
		{Name: "kind", Type: parse.DictString},
		{Name: "size", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "address", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "memory_type", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "message", Type: arrow.BinaryTypes.String},
		{Name: "api", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "result", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "error_message", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "kernel", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "thread", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "block", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "save_location", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "details", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "offset", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "cut", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)

	FramesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "record", Type: arrow.PrimitiveTypes.Int32},
		{Name: "kind", Type: parse.DictString},
		{Name: "depth", Type: arrow.PrimitiveTypes.Int32},
		{Name: "function", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "file", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "pc", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "func_offset", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "module", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)

	RunsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "run", Type: arrow.PrimitiveTypes.Int32},
		{Name: "tool", Type: arrow.BinaryTypes.String},
		{Name: "prefix", Type: arrow.BinaryTypes.String},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "processes", Type: arrow.PrimitiveTypes.Int32},
		{Name: "records", Type: arrow.PrimitiveTypes.Int64},
		{Name: "leak_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "leak_allocations", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "errors", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "errors_not_printed", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "target_error", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "start_line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "errors_from_racecheck", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
)

// Column indices of RecordsSchema.
const (
	RecRun = iota
	RecProcess
	RecRecord
	RecKind
	RecSize
	RecAddress
	RecMemoryType
	RecMessage
	RecAPI
	RecError
	RecResult
	RecErrorMessage
	RecKernel
	RecThread
	RecBlock
	RecSaveLocation
	RecDetails
	RecLine
	RecOffset
	RecCut
	RecName
)

// Column indices of FramesSchema.
const (
	FrRecord = iota
	FrKind
	FrDepth
	FrFunction
	FrFile
	FrLine
	FrPC
	FrFuncOffset
	FrModule
)

// Column indices of RunsSchema.
const (
	RunRun = iota
	RunTool
	RunPrefix
	RunLine
	RunProcesses
	RunRecords
	RunLeakBytes
	RunLeakAllocations
	RunErrors
	RunErrorsNotPrinted
	RunTargetError
	RunStartLine
	RunErrorsFromRacecheck
)

// Record kinds (the records table's "kind").
const (
	KindLeak              = "leak"
	KindMemoryAccess      = "memory-access"
	KindAPI               = "api"
	KindMallocFree        = "malloc-free"
	KindRace              = "race"
	KindUninitialized     = "uninitialized"
	KindUnusedMemory      = "unused-memory"
	KindSync              = "sync"
	KindHardwareException = "hardware-exception"
	KindOther             = "other"
	// KindNotice is the tool's own status line, not a finding about the
	// program: its deprecation notice, a failure of its own ("Internal
	// error", "No CUDA-MEMCHECK results found"), the target's abnormal end
	// ("Error: process didn't terminate successfully"). ERROR SUMMARY
	// does not count them.
	KindNotice = "notice"
)

// Frame kinds (the frames table's "kind").
const (
	FrameHost   = "host"
	FrameDevice = "device"
	FramePython = "python"
)

// Tools named in the runs table.
const (
	ToolComputeSanitizer = "compute-sanitizer"
	ToolCudaMemcheck     = "cuda-memcheck"
)
