// Package report turns analysis results into gpuleak's report: the
// gpuleak.report/v1 document (see README.md, "JSON report") and its
// renderings. One file per output format; each writer takes a *Report and
// an io.Writer and never re-reads inputs.
package report

import (
	"fmt"
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
	// KindOOM: an out-of-memory error, with its postmortem (report/oom.go).
	KindOOM Kind = "oom"
	// KindLeak: memory from one call site still live at the end and growing
	// through the run.
	KindLeak Kind = "leak"
	// KindLive: live at the end, but the input cannot tell whether it grew
	// (allocated before the trace began, or no trace at all).
	KindLive Kind = "live"
	// KindRetained: live at the end, allocated once and held without
	// growing (weights, optimizer state, workspaces, allocator pools).
	KindRetained Kind = "retained"
	// KindFragmentation: memory PyTorch's segments hold free but split
	// around live blocks, large at the end of a run (report/oom.go).
	KindFragmentation Kind = "fragmentation"
)

// rank orders kinds in a report: lower first.
func (k Kind) rank() int {
	switch k {
	case KindOOM:
		return 0
	case KindLeak:
		return 1
	case KindFragmentation:
		return 2
	case KindLive:
		return 3
	case KindRetained:
		return 4
	}
	return 5
}

// Report is the whole gpuleak.report/v1 document.
type Report struct {
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	// Inputs in command-line order.
	Inputs []Input `json:"inputs"`
	// Findings ranked, the most important first (see Rank).
	Findings []Finding `json:"findings"`
	// FindingsTotal counts findings before --top and --min-bytes cut the
	// list; it equals len(Findings) when nothing was left out.
	FindingsTotal int `json:"findings_total"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Input describes one input file and what was read from it.
type Input struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Warnings about the input or its analysis (never null).
	Warnings []string `json:"warnings"`
	// Devices summarises each CUDA device a snapshot describes.
	Devices []DeviceSummary `json:"devices,omitempty"`

	// --- OOM postmortem (report/oom.go) ---

	// AllocatorStats are the torch.cuda.memory_stats() dicts and
	// memory_summary() tables the input holds.
	AllocatorStats []AllocatorStats `json:"allocator_stats,omitempty"`
	// EndPools is a snapshot's memory by pool at its end ("gpuleak oom" only).
	EndPools []PoolMemory `json:"end_pools,omitempty"`
}

// DeviceSummary is the state of one device at the end of a snapshot.
// Sizes are in bytes, times in microseconds since the Unix epoch.
type DeviceSummary struct {
	Device           int    `json:"device"`
	Segments         int    `json:"segments"`
	ReservedBytes    int64  `json:"reserved_bytes"`
	ActiveBytes      int64  `json:"active_bytes"`
	ActiveBlocks     int    `json:"active_blocks"`
	TraceEntries     int64  `json:"trace_entries"`
	TraceStartUs     *int64 `json:"trace_start_us"`
	TraceEndUs       *int64 `json:"trace_end_us"`
	UnmatchedFrees   int64  `json:"unmatched_frees"`
	LiveAtTraceEnd   int    `json:"live_allocations"`
	BlocksNotInTrace int    `json:"blocks_not_in_trace"`
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
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
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

// shortFunc drops a C++ signature's parameters and return type:
// "void at::cuda::blas::gemm<float>(char, long)" -> "at::cuda::blas::gemm<float>".
func shortFunc(name string) string {
	if !strings.Contains(name, "::") {
		return name
	}
	name = strings.ReplaceAll(name, "(anonymous namespace)", "{anonymous}")
	depth := 0
	for i, c := range name {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case '(':
			if depth == 0 && i > 0 {
				name = name[:i]
			}
		}
		if c == '(' && depth == 0 {
			break
		}
	}
	depth = 0
	last := -1
	for i, c := range name {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case ' ':
			if depth == 0 {
				last = i
			}
		}
	}
	return name[last+1:]
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

	// --- OOM postmortem and fragmentation (kinds "oom" and "fragmentation"; report/oom.go) ---
	// Their members are the finding's own members in JSON; nil for other kinds.

	// AllocatorMemory is PyTorch's memory at the OOM, or where it is
	// fragmented (both kinds).
	*AllocatorMemory
	// OOMDetail is the postmortem of an "oom" finding.
	*OOMDetail
	// FragmentationDetail is the measure of a "fragmentation" finding.
	*FragmentationDetail
}

// Growth is the evidence from an allocation trace about how a call site's
// live memory built up.
type Growth struct {
	// BytesPerSecond is the least-squares slope of the site's cumulative
	// kept bytes against time; null when the trace has no timestamps.
	BytesPerSecond *float64 `json:"bytes_per_second"`
	// R2 is the coefficient of determination of that fit (1 = perfectly steady).
	R2 float64 `json:"r2"`
	// Kept counts the site's allocations made during the trace and still
	// live at its end; Allocations counts all the site's allocations made
	// during the trace.
	Kept        int `json:"kept"`
	Allocations int `json:"allocations"`
	// FirstKeptUs and LastKeptUs bound the times of the kept allocations;
	// null without timestamps.
	FirstKeptUs *int64 `json:"first_kept_us"`
	LastKeptUs  *int64 `json:"last_kept_us"`
	// ActiveTenths counts the tenths of the time from the first kept
	// allocation to the end of the trace in which an allocation was kept.
	ActiveTenths int `json:"active_tenths"`
}
