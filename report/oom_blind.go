package report

import (
	"slices"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
)

// OOMBlind says why an input of format f cannot show an out-of-memory
// error, whatever the run did: it holds no error message, no OOM trace
// entry and no [OutOfMemory] event, so "no out-of-memory error in it"
// would claim a search that could not find one. "" for the formats that
// can show one (snapshots, profiler traces, logs, memory_summary() text
// and the text tables of nvidia-smi and gpustat, which gpuleak oom reads
// as logs, compute-sanitizer's text log with the program's output).
func OOMBlind(format string) string {
	switch format {
	case "pytorch-memory-timeline", "pytorch-memory-timeline-raw":
		return "a memory timeline (export_memory_timeline) holds memory by category over time, not errors: it cannot show an out-of-memory error; the job's log with the OOM message, a snapshot written at the OOM or the profiler trace (its [OutOfMemory] events) can"
	case "compute-sanitizer-xml":
		return "compute-sanitizer's XML holds the tool's records, not the program's output: it cannot show an out-of-memory error; the tool's text log (where the program's output is) or the program's own log can"
	case "pytorch-memory-stats":
		return "torch.cuda.memory_stats() JSON holds the allocator's counters, not errors: it cannot show an out-of-memory error, only count them (num_ooms); the job's log with the OOM message, or a snapshot written at the OOM, can"
	case string(nvml.FormatNvidiaSmiText), string(nvml.FormatGpustatText), string(nvml.FormatPynvmlText):
		return "" // read as a log too: a job's log that printed the table, or pynvml's readings
	}
	if slices.Contains(nvml.Formats, parse.Format(format)) {
		return "an NVML log samples memory and processes, not errors: it cannot show an out-of-memory error; beside an OOM message it names the processes the message lists"
	}
	return ""
}
