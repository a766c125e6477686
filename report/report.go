// Package report turns analysis results into gpuleak's documents and
// renders them. The document model is the gpuleak.report/v1 document (see
// README.md, "JSON report": report.go, model_*.go) and gpuleak.diff/v1
// (diff.go); the converters from analysis results are convert_*.go; the
// writers are one file per output format (table.go, json.go, sarif.go,
// ...), each registering in format.go's registry the kinds of document it
// renders. A writer takes a Document and an io.Writer and never re-reads
// inputs.
package report

import (
	"fmt"
	"github.com/gpuleak/gpuleak/analyze/callsite"
	"strings"
)

// Schema is the value of the "schema" member of every JSON report. It
// changes only when a member is removed or changes meaning; members may be
// added within v1.
const Schema = "gpuleak.report/v1"

// Kind classifies a finding. The string values are part of the JSON schema.
type Kind string

// Finding kinds, in the order reports rank them.
const (
	// KindOOM: an out-of-memory error, with its postmortem (report/model_oom.go).
	KindOOM Kind = "oom"
	// KindLeak: memory from one call site still live at the end and growing
	// through the run.
	KindLeak Kind = "leak"
	// KindPendingFree: blocks the program freed that the caching allocator
	// cannot reuse yet: a side stream they were used on (record_stream) has
	// not reached the free (state active_pending_free).
	KindPendingFree Kind = "pending-free"
	// KindLive: live at the end, but the input cannot tell whether it grew
	// (allocated before the trace began, or no trace at all).
	KindLive Kind = "live"
	// KindRetained: live at the end, allocated once and held without
	// growing (weights, optimizer state, workspaces, allocator pools).
	KindRetained Kind = "retained"
	// KindTrend: how one GPU's or one process's used memory moved through
	// an NVML sample log (classification growing, sawtooth, step or flat).
	KindTrend Kind = "trend"
	// KindFragmentation: memory PyTorch's segments hold free but split
	// around live blocks, large at the end of a run (report/model_oom.go).
	KindFragmentation Kind = "fragmentation"
	// KindNonPyTorch: memory a process holds outside PyTorch's caching
	// allocator (NVML's used memory less the snapshot's reserved memory),
	// from a snapshot and an NVML log of the same run given together.
	KindNonPyTorch Kind = "non-pytorch"
)

// rank orders kinds in a report: lower first.
func (k Kind) rank() int {
	switch k {
	case KindOOM:
		return 0
	case KindLeak:
		return 1
	case KindPendingFree:
		return 2
	case KindTrend, KindNonPyTorch:
		return 3
	case KindFragmentation:
		return 4
	case KindLive:
		return 5
	case KindRetained:
		return 6
	}
	return 7
}

// Report is the whole gpuleak.report/v1 document.
type Report struct {
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	// Inputs in command-line order.
	Inputs []Input `json:"inputs"`
	// Findings ranked, the most important first (see Rank).
	Findings []Finding `json:"findings"`
	// FindingsTotal counts findings before --top cut the list (those
	// --min-bytes left out not included); it equals len(Findings) when
	// --top left nothing out.
	FindingsTotal int `json:"findings_total"`
	// BelowMinBytes counts findings --min-bytes left out.
	BelowMinBytes int `json:"findings_below_min_bytes"`
	// Ranked holds the findings before --top cut the list, for the
	// writers that judge or total the whole run (JUnit's failing inputs,
	// Markdown's totals by kind), as the gates do; nil when --top cut
	// nothing. It is never written: Findings is the list shown.
	Ranked []Finding `json:"-"`
	// Errors are the errors a checking tool reported besides leaks
	// (compute-sanitizer: invalid accesses, API errors, races, ...), in
	// input order; absent when there are none.
	Errors []ToolError `json:"errors,omitempty"`
	// Baseline: how this run compares with --baseline; absent without one.
	Baseline *BaselineComparison `json:"baseline,omitempty"`
	// Gates are the --fail-on gates, each with what it measured and
	// whether it tripped; absent without --fail-on.
	Gates []GateResult `json:"gates,omitempty"`
	// Suppressed counts the findings each --suppressions rule left out
	// (and lists rules that expired); absent when none did.
	Suppressed []SuppressedFindings `json:"suppressed,omitempty"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Input describes one input file and what was read from it.
type Input struct {
	Path string `json:"path"`
	// Format is what the content was recognised as (pytorch-snapshot,
	// nvidia-smi-query-gpu, ...), also for an input that could not be
	// read (a snapshot cut short); "" when it was not recognised.
	Format string `json:"format"`
	// Error is why the input could not be read (file and byte offset or
	// line); the report then holds the other inputs, and the run exits
	// with code 2. Absent for an input that was read.
	Error string `json:"error,omitempty"`
	// Warnings about the input or its analysis (never null).
	Warnings []string `json:"warnings"`
	// Devices summarises each CUDA device a snapshot describes.
	Devices []DeviceSummary `json:"devices,omitempty"`
	// LeaksUnjudged says why this input, of a kind that can show leaks (a
	// snapshot, a profiler trace or memory timeline, a compute-sanitizer
	// log), could not judge them: a snapshot without a trace, or whose
	// trace's allocations carry no stacks; a profiler trace with nothing
	// that marks its steps; a snapshot or profiler trace whose trace shows
	// too few steps, or none that repeats, to judge growth; a memory
	// timeline too short to cut into windows; a compute-sanitizer log of a
	// run without the leak check. No finding of it can be a leak, so the leak gate is not
	// judged on it (see GateResult). Absent when it could judge leaks, and
	// for inputs of other kinds.
	LeaksUnjudged string `json:"leaks_unjudged,omitempty"`
	// Empty says why nothing can be judged from this input although it
	// was read: it holds no event (a profiler trace whose traceEvents is
	// [], a memory timeline with no point). No gate is judged on it (see
	// GateResult), and gpuleak oom lists it among the inputs that cannot
	// show an OOM. Absent for an input that holds something.
	Empty string `json:"empty,omitempty"`
	// OOMPrinters: for a log read for out-of-memory messages (format
	// pytorch-oom-message or oom-log), who printed the messages it holds,
	// each once in the order of its first message: "PyTorch",
	// "TensorFlow", "XLA", "CuPy", "PaddlePaddle", "ONNX Runtime",
	// "Theano", "TensorRT", "llama.cpp", "vLLM", "SGLang", "TGI",
	// "HAMi-core", "Accelerate", a CUDA library ("cuBLAS", "NCCL", "CUDA
	// driver", "CUDA runtime"), "CUDA" or "HIP" for a CUDA error whose
	// words name no program, "unparsed" (pytorchtext.Printer). Absent when
	// it holds none.
	OOMPrinters []string `json:"oom_printers,omitempty"`
	// NotOOMs are the input's warnings of out-of-memory errors not
	// counted as GPU OOMs (oom.TextResult.NotOOMs: host memory, the host's
	// OOM killer, a recovered allocation, a record at INFO level): the
	// headline says they are there. Already among Warnings, so not in
	// the JSON again.
	NotOOMs []string `json:"-"`

	// ---- NVML sample logs (findings of kind "trend") ----

	// Samples counts the sampling instants read: the times the log was
	// taken (one nvidia-smi table, one --query-gpu, dmon or pynvml tick
	// of every GPU, one DCGM scrape), as a finding's samples count its
	// series' (a series has at most this many).
	Samples *int64 `json:"samples,omitempty"`
	// Rows counts the readings in them: one per GPU or process per
	// instant (the rows of the exported samples table).
	Rows *int64 `json:"rows,omitempty"`
	// StartUs and EndUs bound the time the log covers.
	StartUs *int64 `json:"start_us,omitempty"`
	EndUs   *int64 `json:"end_us,omitempty"`
	// Clock says how samples were placed in time: "absolute",
	// "time-of-day" (no dates in the log) or "row-order" (no times).
	Clock string `json:"clock,omitempty"`
	// StartGiven: for a "row-order" log, its first sample was placed at
	// the time given with --start, so StartUs and EndUs are times of day
	// (resting on the period); without it they count from the Unix epoch.
	StartGiven bool `json:"start_given,omitempty"`
	// AssumedIntervalS: for a log without times ("row-order") whose period
	// was not given (--interval), the seconds between its samples that
	// were assumed; every time and rate of its trends rests on it.
	AssumedIntervalS *float64 `json:"assumed_interval_s,omitempty"`
	// SkippedLines counts the lines of rows or records the log held that
	// could not be read (a line pasted among the rows, a truncated last
	// row, a value that is no size): they were skipped and the rest read,
	// so the input was read in part (a warning names them). Absent when
	// none was skipped. SkippedAt: the first line of each skipped row or
	// record, the first 10 of them.
	SkippedLines int   `json:"skipped_lines,omitempty"`
	SkippedAt    []int `json:"skipped_at_lines,omitempty"`
	// Cut says where a compressed input's gzip stream was cut short ("the
	// gzip stream is cut short at byte offset N of the decompressed
	// content ..."), or where a pasted nvidia-smi table stops before its
	// Processes box ends ("the nvidia-smi table ends at line 14 before its
	// Processes box ..."): it was read up to there, so in part. Both,
	// joined by "; ", when both. Absent when not.
	Cut string `json:"cut,omitempty"`
	// SamplesAboveTotal counts the NVML log's samples whose used memory
	// exceeded their GPU's total memory (damaged or mis-parsed rows): left
	// out of their series, with a warning. Absent when none.
	SamplesAboveTotal int `json:"samples_above_total,omitempty"`

	// --- OOM postmortem (report/model_oom.go) ---

	// AllocatorStats are the torch.cuda.memory_stats() dicts and
	// memory_summary() tables the input holds.
	AllocatorStats []AllocatorStats `json:"allocator_stats,omitempty"`
	// EndPools is a snapshot's memory by pool at its end ("gpuleak oom" only).
	EndPools []PoolMemory `json:"end_pools,omitempty"`

	// LeakSummary: what the LEAK SUMMARY and ERROR SUMMARY lines of a
	// compute-sanitizer report say, added up over its runs; absent when it
	// has neither.
	LeakSummary *LeakSummary `json:"leak_summary,omitempty"`
}

// DeviceSummary is the state of one device at the end of a snapshot.
// Sizes are in bytes, times in microseconds since the Unix epoch.
type DeviceSummary struct {
	Device   int `json:"device"`
	Segments int `json:"segments"`
	// ReservedBytes and ActiveBytes are null when the input does not
	// say (a profiler trace of PyTorch 1.8 or 1.9 has no totals).
	ReservedBytes  *int64 `json:"reserved_bytes"`
	ActiveBytes    *int64 `json:"active_bytes"`
	ActiveBlocks   int    `json:"active_blocks"`
	TraceEntries   int64  `json:"trace_entries"`
	TraceStartUs   *int64 `json:"trace_start_us"`
	TraceEndUs     *int64 `json:"trace_end_us"`
	UnmatchedFrees int64  `json:"unmatched_frees"`
	LiveAtTraceEnd int    `json:"live_allocations"`
	// LiveBytes: for a profiler trace, the bytes of the allocations it
	// leaves live (active_bytes, the allocator's Total Allocated, also
	// counts memory allocated before profiling); absent for a snapshot.
	LiveBytes        *int64 `json:"live_bytes,omitempty"`
	BlocksNotInTrace int    `json:"blocks_not_in_trace"`
	// PendingFreeBytes and PendingFreeBlocks: blocks in state
	// active_pending_free, freed by the program but not yet reusable.
	PendingFreeBytes  int64 `json:"pending_free_bytes"`
	PendingFreeBlocks int   `json:"pending_free_blocks"`
	// Iterations counts the starts of the step the trace repeats, the
	// iterations growth is judged across (0: no repeating step found).
	Iterations int `json:"iterations"`
	// IterationSite is the frame whose allocations mark the iterations;
	// absent when none.
	IterationSite *Frame `json:"iteration_site,omitempty"`
	// IterationMarker names the steps the tracer recorded when they mark
	// the iterations ("ProfilerStep#N spans" or "prof.step() calls" of a
	// profiler trace); absent otherwise.
	IterationMarker string `json:"iteration_marker,omitempty"`
	// GrowthUnjudged says why growth across iterations could not be
	// judged on the device (no trace, a trace whose allocations carry no
	// stacks, too few steps): its memory could only be retained or live,
	// never a leak. Absent when it could be (and in reports written
	// before this member).
	GrowthUnjudged string `json:"growth_unjudged,omitempty"`
	// DeviceType names the device's type as PyTorch names devices ("xpu",
	// "mps": a profiler trace of another accelerator than CUDA); absent
	// for a CUDA device.
	DeviceType string `json:"device_type,omitempty"`
	// PID is the process whose memory this is, in a profiler trace merged
	// from several processes' (each analysed on its own); absent otherwise.
	PID *int64 `json:"pid,omitempty"`
	// PeakActiveBytes is the most memory the trace shows allocated at
	// once on the device (active_bytes plus what the trace allocated after
	// that moment, less what it freed), when it is more than at the end;
	// absent otherwise, and a peak before the trace's oldest entry is not
	// seen. PeakSeq is the trace entry that reached it (from 0; -1: the
	// trace's start, its entries only freed), PeakUs its time (absent
	// untimed). PeakTraceBytes is what the trace's own
	// allocations held then (the rest was allocated before the trace),
	// PeakSites the largest of their call sites (at most 3).
	// PeakReservedBytes is what PyTorch had reserved then (bytes): the
	// snapshot's segments less those the trace's segment entries reserved
	// after the peak, plus those they released; absent where that is not
	// known (no peak above the end, a snapshot without segments, a trace
	// that records no segment entry and so cannot tell none from
	// unrecorded). It less PeakActiveBytes is the reserve not in use at
	// the peak (the fragmentation finding's message gives both).
	PeakActiveBytes   *int64     `json:"peak_active_bytes,omitempty"`
	PeakSeq           *int64     `json:"peak_seq,omitempty"`
	PeakUs            *int64     `json:"peak_us,omitempty"`
	PeakTraceBytes    int64      `json:"peak_trace_bytes,omitempty"`
	PeakReservedBytes *int64     `json:"peak_reserved_bytes,omitempty"`
	PeakSites         []PeakSite `json:"peak_sites,omitempty"`
}

// PeakSite is the memory one call site's allocations held at a device's
// peak (DeviceSummary.PeakActiveBytes), in block bytes.
type PeakSite struct {
	// Site is absent when the allocations had no stack.
	Site  *Frame `json:"site,omitempty"`
	Bytes int64  `json:"bytes"`
	Count int    `json:"count"`
}

// Frame is one stack frame.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int64  `json:"line"`
}

// String renders "function (file:line)" with the file's base name; a C++
// function is shown without its return type and parameters.
func (f Frame) String() string {
	if f.File == "" && f.Function == "" {
		return "(no stack)"
	}
	fn := shortFunc(f.Function)
	file := f.File
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	switch {
	case f.Line > 0:
		return fmt.Sprintf("%s (%s:%d)", fn, file, f.Line)
	case file != "" && file != "??":
		return fmt.Sprintf("%s (%s)", fn, file)
	}
	return fn
}

// shortFunc is callsite.ShortName for C++ names: it drops a signature's
// parameters, return type and clone suffix
// ("void at::cuda::blas::gemm<float>(char, long)" -> "at::cuda::blas::gemm<float>").
// A name without "::" is not C++ and is shown whole ("autograd backward").
func shortFunc(name string) string {
	if !strings.Contains(name, "::") {
		return name
	}
	return callsite.ShortName(name)
}

// Finding is one ranked result. Sizes are bytes; times are microseconds
// since the Unix epoch.
type Finding struct {
	Kind Kind `json:"kind"`
	// Path of the input the finding came from, as given on the command line.
	Path string `json:"path"`
	// Source is the format of that input (parse.Format).
	Source string `json:"source"`
	// Device is the CUDA device index, null when the input does not say.
	Device *int `json:"device"`
	// DeviceType names Device's type as PyTorch names devices when it is
	// not CUDA: "xpu", "mps" (a profiler trace of another accelerator),
	// "cpu" (an [OutOfMemory] event of host memory: Device is then null);
	// absent for CUDA.
	DeviceType string `json:"device_type,omitempty"`
	// Bytes live at the end, Count allocations holding them.
	Bytes int64 `json:"bytes"`
	Count int   `json:"count"`
	// Site is the innermost user frame of Stack.
	Site Frame `json:"site"`
	// Stack is the call stack with framework frames hidden, innermost
	// first; empty when the allocations were recorded without a stack.
	Stack []Frame `json:"stack"`
	// Message is one line a person can act on.
	Message string `json:"message"`
	// Growth is the evidence for a leak (and the lack of it for retained
	// memory) when the input has an allocation trace.
	Growth *Growth `json:"growth,omitempty"`
	// Sizes lists the distinct allocation sizes (bytes) of the finding's
	// allocations, largest first, at most 8.
	Sizes []int64 `json:"sizes,omitempty"`
	// Stream is the CUDA stream of a pending-free finding's segments
	// (kind "pending-free" only); FreedAt the user frames that freed its
	// blocks, most frequent first.
	Stream  *int64  `json:"stream,omitempty"`
	FreedAt []Frame `json:"freed_at,omitempty"`
	// PrivatePools are the private pools (segment_pool_id other than
	// [0, 0]: a CUDA graph's, a torch.cuda.MemPool) that hold some of a
	// snapshot finding's blocks, most bytes first; absent when all are in
	// the default pool.
	PrivatePools []PrivatePoolBytes `json:"private_pools,omitempty"`
	// Baseline: the finding's site in --baseline; absent without one.
	Baseline *FindingBaseline `json:"baseline,omitempty"`

	// compute-sanitizer (findings from leak-check reports; Device is null)

	// Allocator is the kind of memory leaked, from the allocation API in
	// the backtrace: "device" (cudaMalloc), "async" (cudaMallocAsync,
	// stream-ordered), "pinned" (cudaMallocHost, cudaHostAlloc: page-locked
	// host memory), "managed" (cudaMallocManaged) or "device-heap" (malloc
	// in a kernel); empty when the report has no backtrace.
	Allocator string `json:"allocator,omitempty"`
	// SiteUnknown says why a leak has no site: its records are missing
	// (only the LEAK SUMMARY counts them) or its backtrace was cut after
	// the runtime's frames; absent when the site is known.
	SiteUnknown string `json:"site_unknown,omitempty"`

	// ---- kind "trend": one GPU's or one process's memory in an NVML
	// sample log. Bytes is the used memory of its last sample; Device is
	// null (NVML's GPU index need not be the CUDA device index). Members
	// below are absent from other kinds. ----

	// GPU is the NVML index, absent when the log names the GPU by UUID only.
	GPU     *int   `json:"gpu,omitempty"`
	GPUUUID string `json:"gpu_uuid,omitempty"`
	GPUName string `json:"gpu_name,omitempty"`
	Host    string `json:"host,omitempty"`
	// PID and Process: the process; absent for the whole GPU. PID is
	// also set on a profiler trace's findings when the trace was merged
	// from several processes' (each analysed on its own). On an OOM,
	// Process is the worker its message's line names ("rank3" of
	// torchrun's "[rank3]: ", "VllmWorker rank=7 pid=10948").
	PID     *int64 `json:"pid,omitempty"`
	Process string `json:"process,omitempty"`
	// MIGGI and MIGCI: the MIG GPU instance and compute instance the
	// process runs in, as nvidia-smi's Processes box gives them (its GI
	// and CI columns); absent for a process of a GPU without MIG, for the
	// whole GPU, and for logs that do not say. Bytes and the rest are
	// the process's own; the GPU's used and total memory are the whole
	// GPU's, not the instance's.
	MIGGI *int `json:"mig_gi,omitempty"`
	MIGCI *int `json:"mig_ci,omitempty"`
	// Pod, Namespace, Container: DCGM exporter's Kubernetes labels, when
	// one pod held the GPU throughout. Pods: who held it when, where the
	// labels changed over the series (the GPU's memory is one series
	// whoever holds it); PodsLeftOut counts the spans not listed.
	Pod         string     `json:"pod,omitempty"`
	Namespace   string     `json:"namespace,omitempty"`
	Container   string     `json:"container,omitempty"`
	Pods        []TrendPod `json:"pods,omitempty"`
	PodsLeftOut int        `json:"pods_left_out,omitempty"`
	// Classification: growing, sawtooth, step, flat, or undetermined (one
	// sample).
	Classification string `json:"classification,omitempty"`
	// SlopeBytesPerS is the Theil–Sen slope of used memory over the
	// window; SlopeRangeBytesPerS its 95% interval [low, high];
	// OLSSlopeBytesPerS and R2 the least-squares line beside it. For a
	// sawtooth with a rising floor they describe the floor.
	SlopeBytesPerS      *float64  `json:"slope_bytes_per_s,omitempty"`
	SlopeRangeBytesPerS []float64 `json:"slope_range_bytes_per_s,omitempty"`
	OLSSlopeBytesPerS   *float64  `json:"ols_slope_bytes_per_s,omitempty"`
	R2                  *float64  `json:"r2,omitempty"`
	// TimeToOOMS: seconds from the end of the window until the GPU runs
	// out at this rate, within TimeToOOMRangeS [low, high]; absent (null)
	// when not credible, and TimeToOOMReason says why.
	TimeToOOMS      *float64  `json:"time_to_oom_s,omitempty"`
	TimeToOOMRangeS []float64 `json:"time_to_oom_range_s,omitempty"`
	TimeToOOMReason string    `json:"time_to_oom_reason,omitempty"`
	// WindowStartUs and WindowEndUs bound the samples the trend is fitted
	// to: the whole series, or what follows its last abrupt step.
	WindowStartUs *int64 `json:"window_start_us,omitempty"`
	WindowEndUs   *int64 `json:"window_end_us,omitempty"`
	// WarmUpEndUs and WarmUpToBytes: for a growing series whose window
	// starts after a gradual warm-up (caches filling, cuDNN autotuning;
	// trend.SeriesTrend.WarmUpEndUs), when it ended and the used memory it
	// had reached; absent otherwise.
	WarmUpEndUs   *int64 `json:"warm_up_end_us,omitempty"`
	WarmUpToBytes *int64 `json:"warm_up_to_bytes,omitempty"`
	// EndJump: for a growing series whose trend is fitted before an
	// abrupt step up at its end, too near the end for a trend after it
	// (trend.SeriesTrend.EndJump): the samples either side of it; the
	// time to OOM is measured from the level after it. Absent otherwise.
	EndJump *TrendChange `json:"end_jump,omitempty"`
	// Samples in the series; its first and last time; its peak.
	Samples int `json:"samples,omitempty"`
	// SamplesAboveTotal: samples of the series whose used memory exceeded
	// their GPU's total (damaged or mis-parsed rows), left out of it (not
	// in Samples); absent when none.
	SamplesAboveTotal int    `json:"samples_above_total,omitempty"`
	SeriesStartUs     *int64 `json:"series_start_us,omitempty"`
	SeriesEndUs       *int64 `json:"series_end_us,omitempty"`
	PeakBytes         *int64 `json:"peak_bytes,omitempty"`
	// CapacityBytes: what the GPU's used memory can reach (total less the
	// driver's reservation), when known.
	CapacityBytes *int64 `json:"capacity_bytes,omitempty"`
	// UsedConvention: how the log counted the driver's reservation
	// (nvml.Convention); bytes here always leave it out where the log allows.
	UsedConvention string `json:"used_convention,omitempty"`

	// SetAsideSamples: samples of the series (counted in Samples) that the
	// fit, the class and the runs left out as one-sample glitches, each
	// replaced by the mean of its neighbours (trend.SeriesTrend.SetAside);
	// SetAsideUs: the times of the first 8 of them. Absent when none: a
	// verdict that rests on fewer samples than were read says so here as
	// in its message.
	SetAsideSamples int     `json:"set_aside_samples,omitempty"`
	SetAsideUs      []int64 `json:"set_aside_us,omitempty"`
	// FullSamples: a GPU's samples within a tenth of its capacity, each
	// alone between two that agree far below it: what a process that
	// filled the GPU and died of out-of-memory within one sampling
	// interval leaves, or a misreading (trend.SeriesTrend.FullSamples).
	// Kept in the fit, the class and the runs; FullSampleAt: the first 8,
	// with their times and bytes. Absent when none.
	FullSamples  int           `json:"full_samples,omitempty"`
	FullSampleAt []TrendSample `json:"full_sample_at,omitempty"`

	// ChangePoints: the significant level shifts, in time order.
	ChangePoints []TrendChange `json:"change_points,omitempty"`
	// HeldToEnd: the process still held memory in the last sample of the log.
	HeldToEnd *bool `json:"held_to_end,omitempty"`
	// EndUnknown: held_to_end, but from a --query-compute-apps log alone,
	// which ends with the last process's last row: whether the process
	// exited then is not known.
	EndUnknown bool `json:"end_unknown,omitempty"`
	// StoppedBeforeEnd: a GPU whose samples stop before the end of its log
	// (at series_end_us): its later rows carry no memory figure (nvidia-smi's
	// [GPU is lost]) or it left the log; it has no time to OOM.
	StoppedBeforeEnd bool `json:"stopped_before_end,omitempty"`
	// ReplacedByGPUUUID: for a GPU that StoppedBeforeEnd, the UUID of the
	// GPU its log shows next at its host and index (the GPU replaced
	// during the log), a series of its own; absent otherwise.
	ReplacedByGPUUUID string `json:"replaced_by_gpu_uuid,omitempty"`
	// UnattributedBytes: GPU memory used by no listed process (median over
	// the GPU's samples while processes were logged); UnattributedEndBytes
	// at the end.
	UnattributedBytes    *int64 `json:"unattributed_bytes,omitempty"`
	UnattributedEndBytes *int64 `json:"unattributed_end_bytes,omitempty"`
	// UnattributedUnknownPIDs: processes listed on the GPU in those
	// samples with their memory unknown (nvidia-smi cut it or showed N/A,
	// a CSV or JSON log has a placeholder or null), which may hold the
	// unattributed memory; their memory is in no sum.
	UnattributedUnknownPIDs []int64 `json:"unattributed_unknown_pids,omitempty"`
	// UnattributedNoneListed: the GPU's nvidia-smi outputs listed no
	// process on it (an empty Processes box, -q's "Processes : None"), not
	// even one with its memory unknown, so UnattributedBytes is all its
	// used memory; nvidia-smi lists only the processes it can see.
	UnattributedNoneListed bool `json:"unattributed_none_listed,omitempty"`
	// UnattributedProcessesOverBytes: the processes' logged memory added
	// up to this much more than the GPU's used memory (median), so the
	// logs disagree and UnattributedBytes is 0, not negative; absent
	// when they did not.
	UnattributedProcessesOverBytes int64 `json:"unattributed_processes_over_bytes,omitempty"`
	// Runs: the series' stretches between returns to its baseline
	// (BaselineBytes), when memory came back to it at least once (a process
	// exited, a job freed what it built up). ReleasedUs: the growing run
	// this finding describes came back to the baseline then (its memory was
	// released: no time to OOM); the finding's bytes are then the run's peak.
	Runs          []TrendRun `json:"runs,omitempty"`
	BaselineBytes *int64     `json:"baseline_bytes,omitempty"`
	ReleasedUs    *int64     `json:"released_us,omitempty"`
	// OOMExits: the runs that grew until the GPU was full and then fell
	// to near nothing (TrendRun.OOMExit), when they make the series a
	// crash loop (two or more, two thirds of the runs that ended): growing,
	// not churn; absent otherwise, though runs[].oom_exit may still mark
	// runs that ended full (too few for a crash loop: the message says
	// so).
	OOMExits int `json:"oom_exits,omitempty"`
	// TailSlopeBytesPerS: for a step, the slope of the samples after its
	// last change when they still rise; absent when flat.
	TailSlopeBytesPerS *float64 `json:"tail_slope_bytes_per_s,omitempty"`
	// LastBytes: the used memory of the series' last sample, when Bytes is
	// a released run's peak.
	LastBytes *int64 `json:"last_bytes,omitempty"`
	// ProfileBytes: a GPU's used memory in up to 48 equal parts of the
	// series' time (the highest sample of each), for sparklines.
	ProfileBytes []int64 `json:"profile_bytes,omitempty"`
	// SeriesProfile is the same profile for every series, a process's
	// too; not in the gpuleak.report/v1 document (the daily report charts it).
	SeriesProfile []int64 `json:"-"`

	// --- OOM postmortem and fragmentation (kinds "oom" and "fragmentation"; report/model_oom.go) ---
	// Their members are the finding's own members in JSON; nil for other kinds.

	// AllocatorMemory is PyTorch's memory at the OOM, or where it is
	// fragmented (both kinds).
	*AllocatorMemory
	// OOMDetail is the postmortem of an "oom" finding.
	*OOMDetail
	// FragmentationDetail is the measure of a "fragmentation" finding.
	*FragmentationDetail
}

// whole is every finding of the run, --top's cut or not: Ranked when
// --top cut the list, else Findings.
func (r *Report) whole() []Finding {
	if r.Ranked != nil {
		return r.Ranked
	}
	return r.Findings
}

// PrivatePoolBytes is how many bytes of a finding's blocks lie in one
// private pool: PoolID is the segments' segment_pool_id ([N, 0] a CUDA
// graph capture's own pool, [0, N] torch.cuda.graph_pool_handle()'s or a
// torch.cuda.MemPool's).
type PrivatePoolBytes struct {
	PoolID [2]int64 `json:"pool_id"`
	Bytes  int64    `json:"bytes"`
}
