// Package kineto decodes PyTorch profiler traces, the Chrome trace JSON
// written by torch.profiler's export_chrome_trace (Kineto, PyTorch 1.8 and
// later; plain or gzip-compressed), into Apache Arrow record batches.
//
// # Format
//
// A trace is a JSON object {"traceEvents": [event, ...], ...} (or the bare
// array of events, Chrome's other form). Keys beside traceEvents, in any
// order, are kept as Metadata: schemaVersion, profile_memory, with_stack,
// record_shapes, baseTimeNanoseconds, deviceProperties, traceName. An
// event has ph (phase: "X" a complete span, "i" an instant, "M" metadata,
// ...), cat, name, pid, tid, ts and dur (microseconds, possibly with a
// fraction: nanoseconds) and args. The events read are:
//
//   - "[memory]" instants (profile_memory=True): args Addr, Bytes (negative
//     for a free), Total Allocated, Total Reserved, Device Type (0 CPU,
//     1 CUDA), Device Id (-1 for the CPU);
//   - "[OutOfMemory]" instants: args Bytes (the request), Total Allocated,
//     Total Reserved, Device Type, Device Id;
//   - spans of categories cpu_op (an ATen or autograd op), python_function
//     (with_stack=True: "file.py(LINE): function", "<built-in method ...>",
//     "nn.Module: Name") and user_annotation (record_function ranges,
//     "ProfilerStep#N" among them). PyTorch 1.8 and 1.9 wrote "Operator"
//     for ops and ranges alike: a span of that category is read as a
//     cpu_op when its name is namespaced ("aten::clone"), else as a
//     user_annotation ("ProfilerStep#N"); their tids are strings of
//     digits, read as numbers, and their [memory] events have no Total
//     Allocated or Total Reserved.
//
// Other events (kernels, runtime calls, flows) are counted, not kept. A
// ts in a trace with baseTimeNanoseconds is relative to it (PyTorch 2.1
// and later); times here are nanoseconds since the Unix epoch.
//
// # Tables
//
// memory (MemorySchema): one row per [memory] or [OutOfMemory] event, in
// file order.
//
//	time_ns          int64   nanoseconds since the Unix epoch
//	pid, tid         int64   process and thread as the trace gives them
//	kind             dictionary<int16, utf8>: "memory" or "oom"
//	addr             uint64  the block's address; 0 for an oom
//	bytes            int64   allocated (>0) or freed (<0); an oom's request
//	total_allocated  int64   the device's allocated bytes after the event; null when absent
//	total_reserved   int64   the device's reserved bytes after the event; null when absent
//	device_type      int32   0 CPU, 1 CUDA, 12 XPU, 13 MPS, ... (c10::DeviceType, DeviceTypeName)
//	device_id        int32   -1 for the CPU
//
// spans (SpansSchema): one row per cpu_op, python_function or
// user_annotation span, in file order (not time order).
//
//	start_ns          int64  nanoseconds since the Unix epoch
//	dur_ns            int64  nanoseconds
//	pid, tid          int64
//	category          dictionary<int16, utf8>: cpu_op, python_function, user_annotation
//	name              utf8
//	python_id         int64  args "Python id"; null when absent
//	python_parent_id  int64  args "Python parent id"; null when absent
package kineto

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
)

// Table identifies which table a record batch belongs to.
type Table int

// The tables of a trace.
const (
	TableMemory Table = iota
	TableSpans
	numTables
)

var (
	tableNames   = [...]string{"memory", "spans"}
	tableSchemas = [...]*arrow.Schema{MemorySchema, SpansSchema}
)

// String is the table's name ("memory", "spans").
func (t Table) String() string { return parse.TableName(tableNames[:], t) }

// Schema returns the table's schema, nil for an unknown table.
func (t Table) Schema() *arrow.Schema { return parse.TableSchema(tableSchemas[:], t) }

// Schemas of the tables; see the package documentation.
var (
	MemorySchema = arrow.NewSchema([]arrow.Field{
		{Name: "time_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "pid", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tid", Type: arrow.PrimitiveTypes.Int64},
		{Name: "kind", Type: parse.DictString},
		{Name: "addr", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "bytes", Type: arrow.PrimitiveTypes.Int64},
		{Name: "total_allocated", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "total_reserved", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "device_type", Type: arrow.PrimitiveTypes.Int32},
		{Name: "device_id", Type: arrow.PrimitiveTypes.Int32},
	}, nil)

	SpansSchema = arrow.NewSchema([]arrow.Field{
		{Name: "start_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dur_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "pid", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tid", Type: arrow.PrimitiveTypes.Int64},
		{Name: "category", Type: parse.DictString},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "python_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "python_parent_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
)

// Column indices of the memory table.
const (
	MemTimeNs = iota
	MemPid
	MemTid
	MemKind
	MemAddr
	MemBytes
	MemTotalAllocated
	MemTotalReserved
	MemDeviceType
	MemDeviceID
)

// Column indices of the spans table.
const (
	SpStartNs = iota
	SpDurNs
	SpPid
	SpTid
	SpCategory
	SpName
	SpPythonID
	SpPythonParentID
)

// Kinds of memory rows, and span categories.
const (
	KindMemory = "memory"
	KindOOM    = "oom"

	CategoryCPUOp          = "cpu_op"
	CategoryPythonFunction = "python_function"
	CategoryUserAnnotation = "user_annotation"
	// CategoryOperator is PyTorch 1.8 and 1.9's category of ops and
	// record_function ranges alike; the reader files such a span under
	// cpu_op or user_annotation by its name.
	CategoryOperator = "Operator"
)

// Device types of [memory] events (c10::DeviceType).
const (
	DeviceCPU  = 0
	DeviceCUDA = 1
	DeviceMeta = 14 // tensors with no data: no memory
)

// DeviceTypeName names a c10::DeviceType (c10/core/DeviceType.h): CUDA
// (ROCm's HIP builds record theirs as CUDA too), XPU (Intel GPUs), MPS
// (Apple GPUs) and the other accelerators; "device type N" for a number
// it does not know. 19 is MTIA since PyTorch 2.1 (PrivateUse1 before,
// now 20).
func DeviceTypeName(t int) string {
	switch t {
	case DeviceCPU:
		return "CPU"
	case DeviceCUDA:
		return "CUDA"
	case 6:
		return "HIP"
	case 9:
		return "XLA"
	case 12:
		return "XPU"
	case 13:
		return "MPS"
	case 15:
		return "HPU"
	case 18:
		return "IPU"
	case 19:
		return "MTIA"
	case 20:
		return "PrivateUse1"
	}
	return "device type " + strconv.Itoa(t)
}

// DeviceString names a c10::DeviceType as PyTorch names devices, in lower
// case ("cuda", "xpu", "mps": torch.device("xpu:0")); "type N" for a number
// it does not know.
func DeviceString(t int) string {
	switch t {
	case 2:
		return "mkldnn"
	case 20:
		return "privateuseone" // unless the backend renamed itself
	}
	if n := DeviceTypeName(t); !strings.HasPrefix(n, "device type ") {
		return strings.ToLower(n)
	}
	return "type " + strconv.Itoa(t)
}
