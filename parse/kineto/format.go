package kineto

import "github.com/gpuleak/gpuleak/parse"

// The PyTorch profiler outputs this package reads. The string values
// appear in reports (each input's "format") and are stable.
const (
	// FormatTrace is a Kineto trace: torch.profiler's export_chrome_trace
	// JSON.
	FormatTrace parse.Format = "pytorch-profiler-trace"
	// FormatMemoryTimeline is export_memory_timeline's .json: [times_us,
	// sizes by category].
	FormatMemoryTimeline parse.Format = "pytorch-memory-timeline"
	// FormatMemoryTimelineRaw is export_memory_timeline's .raw.json.gz:
	// [[ts_ns, action, bytes, category], ...].
	FormatMemoryTimelineRaw parse.Format = "pytorch-memory-timeline-raw"
	// FormatMemoryTimelineHTML is export_memory_timeline's .html: a
	// picture only, no data to read.
	FormatMemoryTimelineHTML parse.Format = "pytorch-memory-timeline-html"
)
