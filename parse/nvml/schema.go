// Package nvml reads GPU memory sample logs - the files NVML-based tools
// leave behind - into one Apache Arrow table of samples, whatever tool
// wrote them. The layout is recognised by content (Sniff), never by name.
//
// # Layouts
//
//   - nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]
//     (FormatQueryGPU): fields in any order. With a header
//     ("memory.used [MiB]") columns are found by name and the header's unit
//     applies to values that have none; a header may repeat mid-file (logs
//     appended with >>). Without a header the fields are those given with
//     WithFields, or DefaultQueryGPUFields. Values may carry units ("4907
//     MiB"); bracketed placeholders ("[N/A]", "[Not Supported]", "[No
//     data]", ...) and a bare "N/A" are nulls. nvidia-smi does not quote,
//     so a GPU or process name with a comma spills into the next field: the
//     surplus fields are joined back into the one name column. Rows of
//     several GPUs may interleave. A "hostname" (or "host", "node",
//     "nodename") column, which no nvidia-smi query has but a fleet's
//     collection script adds before merging its hosts' logs into one,
//     gives each row's host. Lines nvidia-smi prints instead of rows
//     ("No devices were found", "Unable to determine the device handle
//     ...") are skipped and counted in Metadata.Skipped, as are lines
//     another program printed among the rows behind a bracketed tag
//     ("[HAMI-core Msg(...)]: ...": HAMi-core is preloaded into nvidia-smi
//     in a HAMi pod).
//   - nvidia-smi --query-compute-apps=... --format=csv[,noheader][,nounits]
//     (FormatQueryApps): one row per process; without a
//     header DefaultQueryAppsFields. "name" is the process name here.
//   - nvidia-smi dmon and pmon text (FormatDmon,
//     FormatPmon), any -s selection that includes m: the
//     two "#" lines name and unit the columns (repeated every few dozen
//     rows; a changed header takes effect), "-" is no value. The fb column
//     says MB but holds MiB, like nvidia-smi's memory.used. pmon rows with
//     pid "-" mean no process on that GPU: they yield no sample but extend
//     the log's time span (Metadata.FirstUs, LastUs).
//   - DCGM's dcgmi dmon text (FormatDcgmiDmon): the "#Entity" line names
//     the columns by DCGM's short field names (FBUSD used, FBTTL total,
//     FBFRE free, FBRSV reserved, MiB), a units line starting "ID"
//     follows, and both repeat every 14 rows; each row starts with its
//     entity ("GPU 0"); "N/A" is no value. Rows of other entities (MIG
//     instances "GPU-I 3", "GPU-CI 5": DCGM's entity id does not name the
//     GPU; NVSwitches) are counted in a warning. No times: row order, a
//     tick ending where a GPU id does not increase.
//   - pynvml sampler JSON lines (FormatPynvmlJSONL): one object per
//     GPU per tick, {"ts": Unix seconds, "gpu": index, "uuid", "total",
//     "used", "free", "reserved" (bytes), "processes": [{"pid", "used"}]};
//     "timestamp" or "time" may stand for "ts" (a number of seconds, or
//     milliseconds, microseconds or nanoseconds by magnitude, or an ISO 8601
//     string), "index" for "gpu", and a process's "usedGpuMemory" or
//     "used_memory" for "used". A JSON array of such objects is read too.
//   - gpustat --json (FormatGpustatJSON): {"hostname", "query_time"
//     (local ISO 8601), "gpus": [{"index", "uuid", "name", "memory.used",
//     "memory.total" (MiB), "processes": [{"pid", "command",
//     "gpu_memory_usage" (MiB)}]}]}, one document per sample, pretty-printed
//     or one per line.
//   - nvidia-smi -q -x (FormatNvidiaSmiXML): the -q report as XML, one
//     <nvidia_smi_log> document per output, its <timestamp> the instant;
//     per <gpu> (index by order) product_name, uuid and fb_memory_usage's
//     total, reserved, used and free (MiB), and each process_info's pid,
//     process_name and used_memory. A document cut short is read up to
//     the cut (Metadata.Cut). See smixml.go.
//   - DCGM exporter Prometheus text (FormatDCGMPrometheus):
//     DCGM_FI_DEV_FB_USED, _FREE, _TOTAL and _RESERVED (MiB) with the
//     labels gpu, UUID, modelName, Hostname (hostname in newer exporters),
//     pod, namespace and container. A sample is one GPU (host, gpu, UUID)
//     at one time: the framebuffer is the whole GPU's, and the pod labels,
//     those of the pod the GPU is assigned to then, are its pod, namespace
//     and container, not another GPU; they change from scrape to scrape as
//     pods come and go. A GPU pods share (time-slicing, MPS) has a line a
//     pod, each a copy of the one reading: one sample whose pod, namespace
//     and container list each pod's labels, comma-separated, in the same
//     order. Where Prometheus renamed the exporter's labels (honorLabels
//     off: exported_pod, exported_namespace, exported_container) those are
//     the workload's, and pod is the exporter's own; a GPU no pod holds then
//     carries the exporter's pod as its pod. A MIG instance (GPU_I_ID label)
//     is a GPU of its own whose gpu_uuid is "UUID/GPU_I_ID". Other metrics
//     are skipped. One scrape or many: samples with timestamps
//     (milliseconds) are grouped by time; without timestamps a new scrape
//     begins where a series repeats, or where a GPU's metric comes again in
//     a later run of that metric's lines (or, in the same run, with another
//     value: no copy for another pod), or at a line of date(1)'s output
//     ("Thu May  2 10:00:00 UTC 2024"), which gives the scrapes after it
//     their time. Two values of one GPU's metric at one time: the first is
//     kept, with a warning.
//
// # Time
//
// Timestamps become microseconds since the Unix epoch, UTC. Local times
// (nvidia-smi's "YYYY/MM/DD HH:MM:SS.mmm", dmon's and pmon's Date and
// Time, gpustat's query_time) are read in the location WithLocation sets
// (UTC by default). Around a change of the zone's offset, a wall time the
// clocks skipped is read on the offset before the change (with a
// warning), and one they showed twice on the earlier offset until the
// log's wall clock goes back across the change, on the later one from
// there on (with a warning naming the line). Logs that lack the date
// (pmon -o T, dmon -o T) take it from WithDate, or else 1970-01-01, and a
// time of day that goes backwards by more than a minute starts the next
// day, unless it goes back into the hour the zone repeats. Logs without any time
// (dmon or pmon without -o, DCGM text without timestamps) are placed by
// row order: tick k is at WithStart (default the Unix epoch) plus k times
// WithInterval (default 1 s, the dmon/pmon default period; 30 s for DCGM,
// dcgm-exporter's default collection interval). A dmon tick ends where a
// GPU index does not increase; a pmon tick where a GPU index decreases or
// a (GPU, pid) pair repeats. Metadata.Clock says which of these applied.
//
// # Table
//
// The Reader emits record batches of one table, samples (Schema): one row
// per device (GPU) or per process per sample. Sizes are bytes, converted
// from the log's unit (MiB unless a header or value says otherwise).
//
//	time_us          timestamp[us, tz=UTC]  when the sample was taken
//	host             dictionary<int32, utf8>  null when the log does not say
//	gpu              int32    NVML index; null when the log names the GPU by UUID only
//	gpu_uuid         dictionary<int32, utf8>  null when not logged
//	gpu_name         dictionary<int32, utf8>  product name, null when not logged
//	pid              int64    null for a device-level sample (the whole GPU)
//	process          dictionary<int32, utf8>  process name, null when not logged
//	used_bytes       int64    framebuffer memory used, normalised: see below
//	total_bytes      int64    device total as the log gives it; null for process rows
//	free_bytes       int64    device free memory; null when not logged
//	reserved_bytes   int64    the driver's reservation: memory.reserved, NVML's
//	                          v2 reserved, FB_RESERVED, or total - used - free
//	                          when the log leaves it out; null when unknown
//	pod              dictionary<int32, utf8>  DCGM exporter's Kubernetes labels of
//	namespace        dictionary<int32, utf8>  the pod holding the GPU then (pods
//	container        dictionary<int32, utf8>  sharing it: comma-separated); null
//	                                          when none, and in other layouts
//	source           dictionary<int8, utf8>   the layout (a parse.Format string)
//	used_convention  dictionary<int8, utf8>   how the log counted used (Convention)
//
// Memory columns are null where the log has a placeholder or no column. A
// process row whose used_bytes is null is a process the log lists with its
// memory unknown (nvidia-smi's "N/A" or a cut cell, "[N/A]", "[Not
// Supported]", null): it is kept, never read as 0.
//
// # The driver's reservation
//
// The driver sets aside part of a GPU's memory (about 615 MiB of an H200's
// 143771 MiB). nvidia-smi's memory.used, dmon's fb, NVML's v2 memory info
// and DCGM's FB_USED leave it out; NVML's v1 memory info
// (nvmlDeviceGetMemoryInfo, what most pynvml samplers and gpustat call)
// counts it as used. used_bytes always leaves it out where the log allows:
// when total, used and free are all known, used + free = total means the
// reservation was counted in used, and it is subtracted when known; used +
// free < total means it was not, and the difference is the reservation.
// Otherwise the layout's documented behaviour applies. used_convention
// records the outcome per row.
package nvml

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
)

// Table identifies which table a record batch belongs to: a log has one,
// its samples (Schema).
type Table int

// The tables of a log.
const (
	TableSamples Table = iota
	numTables
)

// String is the table's name ("samples").
func (t Table) String() string { return parse.TableName([]string{"samples"}, t) }

// Schema returns the table's schema, nil for an unknown table.
func (t Table) Schema() *arrow.Schema { return parse.TableSchema([]*arrow.Schema{Schema}, t) }

// Convention says how a log counted the driver's reservation in "used".
// The string values appear in the used_convention column and are stable.
type Convention string

// Conventions.
const (
	// ExcludesReserved: the log's used leaves the reservation out
	// (nvidia-smi, dmon, NVML v2, DCGM); used_bytes is the logged value.
	ExcludesReserved Convention = "excludes-reserved"
	// IncludesReserved: the log's used counts the reservation (NVML v1)
	// and says how large it is; used_bytes is used minus reserved_bytes.
	IncludesReserved Convention = "includes-reserved"
	// IncludesReservedUnknown: the log's used counts the reservation (or
	// there is none) but the log does not say how large it is (gpustat, a
	// pynvml sampler without "reserved"); used_bytes is the logged value,
	// higher than the other conventions by the reservation - a constant,
	// so trends are unaffected.
	IncludesReservedUnknown Convention = "includes-reserved-unknown"
	// Process: a process's own used memory, where no reservation applies.
	Process Convention = "process"
)

// DefaultQueryGPUFields is the field order assumed for header-less
// --query-gpu CSV when WithFields is not given: the order of NVIDIA's
// documented examples and the most common logging command,
//
//	nvidia-smi --query-gpu=timestamp,index,uuid,name,memory.total,memory.used,memory.free --format=csv,noheader,nounits -l 1
var DefaultQueryGPUFields = []string{"timestamp", "index", "uuid", "name", "memory.total", "memory.used", "memory.free"}

// DefaultQueryAppsFields is the field order assumed for header-less
// --query-compute-apps CSV when WithFields is not given:
//
//	nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv,noheader
var DefaultQueryAppsFields = []string{"timestamp", "gpu_uuid", "pid", "process_name", "used_memory"}

var (
	dictString   = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	dictString8  = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	timestampUTC = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// Schema is the schema of the samples table; see the package
// documentation.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "time_us", Type: timestampUTC},
	{Name: "host", Type: dictString, Nullable: true},
	{Name: "gpu", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "gpu_uuid", Type: dictString, Nullable: true},
	{Name: "gpu_name", Type: dictString, Nullable: true},
	{Name: "pid", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "process", Type: dictString, Nullable: true},
	{Name: "used_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "total_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "free_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "reserved_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "pod", Type: dictString, Nullable: true},
	{Name: "namespace", Type: dictString, Nullable: true},
	{Name: "container", Type: dictString, Nullable: true},
	{Name: "source", Type: dictString8},
	{Name: "used_convention", Type: dictString8},
}, nil)

// Column indices of Schema, for readers of the batches.
const (
	ColTime = iota
	ColHost
	ColGPU
	ColUUID
	ColGPUName
	ColPID
	ColProcess
	ColUsed
	ColTotal
	ColFree
	ColReserved
	ColPod
	ColNamespace
	ColContainer
	ColSource
	ColConvention
)
