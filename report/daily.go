package report

// DailySchema is the value of the "schema" member of the daily report's
// JSON (gpuleak report --format json). Members may be added within v1.
const DailySchema = "gpuleak.daily/v1"

// Daily is the daily memory report: what a directory of many jobs' and
// hosts' artifacts says, by section (package daily builds it; report/html.go,
// report/daily_markdown.go and DailyJSON render it). Sizes are bytes, times
// microseconds since the Unix epoch, dates YYYY-MM-DD in UTC.
type Daily struct {
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	// Roots are the directories and files given.
	Roots []string `json:"roots"`
	// FromUs and ToUs bound the artifacts kept (--since, --from, --to);
	// null: unbounded.
	FromUs *int64 `json:"from_us"`
	ToUs   *int64 `json:"to_us"`
	// Days are the dates the kept artifacts' own timestamps fall on, in order.
	Days []string `json:"days"`

	Summary DailySummary `json:"summary"`
	// Jobs, by host then job: those with the most leaks, OOMs and growing
	// series (at most DailyMaxItems; Summary.Jobs counts all).
	Jobs []DailyJob `json:"jobs"`
	// LeakSites: findings of kind leak grouped by site across jobs, the
	// most bytes first (at most DailyMaxItems; Summary.LeakSites counts all).
	LeakSites []DailyLeakSite `json:"leak_sites"`
	// OOMs: each out-of-memory error with its cause, in time order.
	OOMs []DailyFinding `json:"ooms"`
	// OOMsByDay counts OOMs per date and cause (the causes joined with "+").
	OOMsByDay []DailyCount `json:"ooms_by_day"`
	// UndescribedOOMs: per job, the out-of-memory errors its allocator
	// counted (num_ooms of a memory_stats() dict or memory_summary()
	// table) beyond those its inputs describe (AllocatorStats.
	// UndescribedOOMs): OOMs the program caught, or whose message was not
	// kept. They are not in OOMs, which lists described OOMs; by host and
	// job, at most DailyMaxItems; Summary.UndescribedOOMs counts all.
	UndescribedOOMs []DailyUndescribedOOMs `json:"undescribed_ooms"`
	// ToolErrors: what compute-sanitizer reported that is not a leak
	// (invalid accesses, API errors, races, ...), as gpuleak.report/v1's
	// errors, each with its job and its report's date; by input path,
	// each input's in the tool's order (the first reported first: later
	// errors are often its consequences). At most DailyMaxItems;
	// Summary.ToolErrors counts the records of all.
	ToolErrors []DailyToolError `json:"tool_errors"`
	// GPUs: each GPU's and its processes' NVML trends, the worst first.
	GPUs []DailyGPU `json:"gpus"`
	// Fragmentation findings, the most free bytes first.
	Fragmentation []DailyFinding `json:"fragmentation"`
	// Unreadable inputs with their positioned errors.
	Unreadable []DailyInput `json:"unreadable"`
	// ReadInPart: inputs read with lines skipped that could not be read
	// (an NVML log with a line pasted among its rows, a truncated last
	// row); Error says which lines. Their findings are on the page, from
	// the rest of each input. At most DailyMaxItems; Summary.ReadInPart
	// counts all.
	ReadInPart []DailyInput `json:"read_in_part"`
	// InputWarnings: each input read (in the window) whose reading or
	// analysis warned: a ring buffer that wrapped, growth that cannot be
	// judged, an input read in part. They are the evidence and the limits
	// of what the page says of it. Sorted by path, at most DailyMaxItems
	// inputs, each with at most DailyMaxInputWarnings warnings;
	// Summary.InputsWithWarnings counts all.
	InputWarnings []DailyInputWarnings `json:"input_warnings"`
	// Skipped names each file Summary.Skipped counts, with why: its
	// content is no format gpuleak reads, or it is a second name of a file
	// read under its first. Sorted by path, at most DailyMaxItems: a file
	// meant as an input never leaves the report without its name.
	Skipped []DailySkipped `json:"skipped"`
	// Baseline compares with --baseline; absent without one.
	Baseline *DailyBaseline `json:"baseline,omitempty"`
	// Warnings about the run as a whole (limits reached, dates taken from
	// file times).
	Warnings []string `json:"warnings"`
}

// DailyMaxItems bounds each listed section of a daily report; the summary
// counts every item.
const DailyMaxItems = 200

// DailyMaxInputWarnings bounds the warnings listed of one input; its
// WarningsTotal counts them all.
const DailyMaxInputWarnings = 6

// DailyMaxSiteJobs bounds the jobs a leak site lists.
const DailyMaxSiteJobs = 50

// DailySummary is the top of the page.
type DailySummary struct {
	// Files found under the roots; Read were analysed; Skipped hold no
	// format gpuleak reads (by content); Unreadable could not be read;
	// OutsideWindow were read but dated outside --since/--from/--to.
	Files         int `json:"files"`
	Read          int `json:"read"`
	Skipped       int `json:"skipped"`
	Unreadable    int `json:"unreadable"`
	OutsideWindow int `json:"outside_window"`
	// ReadInPart counts the inputs read (in Read) with unreadable lines
	// skipped.
	ReadInPart int `json:"read_in_part"`
	// InputsWithWarnings counts the inputs read (in Read) whose reading
	// or analysis warned (InputWarnings).
	InputsWithWarnings int `json:"inputs_with_warnings"`
	Jobs               int `json:"jobs"`
	Hosts              int `json:"hosts"`
	// GPUs counts the GPUs that NVML sample logs name (nvidia-smi,
	// pynvml, gpustat, DCGM, gpuleak capture), one per host, job and GPU
	// (DailyGPU): the GPUs listed in GPUs. The devices that snapshots and
	// OOM messages name are not counted: a CUDA device index counts from
	// the process's CUDA_VISIBLE_DEVICES and need not be NVML's index, so
	// it cannot be told whether it names a GPU already counted.
	GPUs int `json:"gpus"`
	// OtherDevices counts the GPUs that only other inputs name: per host
	// (the jobs whose host is not known taken as one host), the most distinct CUDA
	// devices that one job's snapshots, OOM messages, profiler traces and
	// compute-sanitizer reports name, less the host's GPUs in GPUs (a host
	// has at least as many GPUs as either names; which GPU a CUDA index,
	// relative to CUDA_VISIBLE_DEVICES, names is not known). OtherDeviceKinds says
	// which kinds of input named them ("snapshots", "OOM messages",
	// "profiler traces", "memory summaries", "compute-sanitizer
	// reports"), sorted; empty when OtherDevices is 0. GPUs +
	// OtherDevices is the least number of GPUs the inputs name.
	OtherDevices     int      `json:"other_devices"`
	OtherDeviceKinds []string `json:"other_device_kinds,omitempty"`
	// Leaks counts leak findings, LeakSites the distinct sites among them.
	Leaks     int   `json:"leaks"`
	LeakSites int   `json:"leak_sites"`
	LeakBytes int64 `json:"leak_bytes"`
	// OOMs counts the out-of-memory errors an input describes (a
	// message, a snapshot's OOM); UndescribedOOMs those more that
	// allocators counted (num_ooms) without a message in the inputs: per
	// job the largest count of any one stats set (the counter is a
	// process's, cumulative), added up over jobs, as --fail-on oom
	// counts them.
	OOMs            int `json:"ooms"`
	UndescribedOOMs int `json:"undescribed_ooms"`
	// Growing counts NVML series (GPUs and processes) classified growing,
	// GrowingProcesses those of a process.
	Growing          int `json:"growing"`
	GrowingProcesses int `json:"growing_processes"`
	Fragmentation    int `json:"fragmentation"`
	// SanitizerReports counts the compute-sanitizer reports read (in
	// Read); ToolErrors the records of their errors that are not leaks
	// (alike records each counted).
	SanitizerReports int `json:"sanitizer_reports"`
	ToolErrors       int `json:"tool_errors"`
	// Worst: one line per most important finding, worst first (at most 10).
	Worst []DailyFinding `json:"worst"`
}

// DailyJob is one job's (group's) artifacts.
type DailyJob struct {
	Host  string `json:"host"`
	Job   string `json:"job"`
	Files int    `json:"files"`
	Leaks int    `json:"leaks"`
	OOMs  int    `json:"ooms"`
	// UndescribedOOMs: the OOMs its allocator counted beyond those its
	// inputs describe (DailySummary.UndescribedOOMs).
	UndescribedOOMs int `json:"undescribed_ooms,omitempty"`
	Growing         int `json:"growing"`
	Findings        int `json:"findings"`
	// ToolErrors counts the records of its compute-sanitizer errors that
	// are not leaks.
	ToolErrors int `json:"tool_errors"`
}

// DailyUndescribedOOMs is the out-of-memory errors one job's allocator
// counted that none of its inputs describes: the stats set with the most
// (AllocatorStats.UndescribedOOMs), where it is (Path, Line: the line of
// the memory_summary() table or memory_stats() dict), and its input's
// date. They have no size, cause or time.
type DailyUndescribedOOMs struct {
	Host  string `json:"host"`
	Job   string `json:"job"`
	Date  string `json:"date"`
	Path  string `json:"path"`
	Line  int64  `json:"line"`
	Count int64  `json:"count"`
}

// DailyToolError is one group of alike compute-sanitizer error records of
// one job: the gpuleak.report/v1 error with where it came from and its
// report's date.
type DailyToolError struct {
	Host string `json:"host"`
	Job  string `json:"job"`
	Date string `json:"date"`
	// Index is its place among its input's errors, 0 first, in the
	// order the tool reported them.
	Index int `json:"index"`
	ToolError
}

// DailyFinding is one finding of one job: the gpuleak.report/v1 finding
// with where it came from and the date it happened.
type DailyFinding struct {
	Host string `json:"host"`
	Job  string `json:"job"`
	Date string `json:"date"`
	// AssumedIntervalS: for a trend of a log without times whose period
	// was not given (Input.AssumedIntervalS), the seconds between samples
	// that were assumed. Its rates (slope_bytes_per_s, ...), times to OOM
	// and sample times rest on it; what the log shows is per sample (the
	// slope times this). Absent when the log has times or its period was
	// given.
	AssumedIntervalS *float64 `json:"assumed_interval_s,omitempty"`
	Finding
}

// DailyLeakSite is one leaking call site across jobs.
type DailyLeakSite struct {
	// Key identifies the site across runs (SiteKey).
	Key   string  `json:"key"`
	Site  Frame   `json:"site"`
	Stack []Frame `json:"stack"`
	// SiteUnknown says why no site is given (Finding.SiteUnknown of its
	// first finding: its records counted only by a LEAK SUMMARY, a
	// backtrace of runtime frames only, cut or whole); absent when the
	// site is known, or its findings carry no stack at all.
	SiteUnknown string `json:"site_unknown,omitempty"`
	// Jobs that leaked here, "host/job" (or "job"), sorted: the first
	// DailyMaxSiteJobs; JobCount counts them all.
	Jobs     []string `json:"jobs"`
	JobCount int      `json:"job_count"`
	// Devices: where the findings name their CUDA device, "JOB device N"
	// for each (a device index is its job's own: the same site on device
	// 1 of one job and 0 of another is one site), sorted, at most
	// DailyMaxSiteJobs.
	Devices []string `json:"devices,omitempty"`
	// Days the site leaked on, in order; CameBack is set when they have a
	// gap (it leaked, stopped, and leaked again), Persisted when it leaked
	// on every day of the report's Days from its first.
	Days      []string `json:"days"`
	Persisted bool     `json:"persisted"`
	CameBack  bool     `json:"came_back"`
	Findings  int      `json:"findings"`
	// Bytes adds up the findings' bytes held at the end; MaxBytesPerS is
	// the fastest growth among them.
	Bytes        int64   `json:"bytes"`
	Count        int     `json:"count"`
	MaxBytesPerS float64 `json:"max_bytes_per_s"`
	// Curves: the site's live bytes over each trace (at most 8).
	Curves []DailyCurve `json:"curves"`
	// Message of its largest finding.
	Message string `json:"message"`
}

// DailyCurve is one series for a chart: bytes at times (µs since the epoch).
type DailyCurve struct {
	Label string  `json:"label"`
	AtUs  []int64 `json:"at_us"`
	Bytes []int64 `json:"bytes"`
}

// DailyGPU is one GPU of one host (or job, when no host is known): its
// trend and its processes'.
type DailyGPU struct {
	Host string `json:"host"`
	Job  string `json:"job"`
	// GPU names it: its UUID, else "gpu N" (NVML index), with its name
	// after it, "gpu 0 (NVIDIA H100 80GB HBM3)", where logs of one host
	// give GPUs of different names at that index (kept apart, a warning
	// says so).
	GPU string `json:"gpu"`
	// Class is the worst classification among its series (growing first).
	Class string `json:"class"`
	// BaselineCreepBytesPerDay: how much its lowest used memory rose per
	// day across the report's days (null: seen on fewer than two days).
	BaselineCreepBytesPerDay *float64 `json:"baseline_creep_bytes_per_day"`
	// Series: the GPU's own trend findings and its processes', the worst first.
	Series []DailyFinding `json:"series"`
	// Curves: used memory over time (up to 48 points per series).
	Curves []DailyCurve `json:"curves"`
}

// DailyInput is an input that could not be read.
type DailyInput struct {
	Host string `json:"host"`
	Job  string `json:"job"`
	Path string `json:"path"`
	// Error is the read's positioned error (byte offset or line), the
	// path, which Path gives, left out.
	Error string `json:"error"`
}

// DailyInputWarnings is an input read and what its reading and analysis
// warned of, in the order gpuleak analyze lists them.
type DailyInputWarnings struct {
	Host   string `json:"host"`
	Job    string `json:"job"`
	Path   string `json:"path"`
	Format string `json:"format"`
	// Date is the input's: of its own latest timestamp, else of its
	// file's modification time.
	Date string `json:"date"`
	// Warnings: the first DailyMaxInputWarnings; WarningsTotal counts all.
	Warnings      []string `json:"warnings"`
	WarningsTotal int      `json:"warnings_total"`
}

// DailySkipped is a file the report did not read as an input, and why.
type DailySkipped struct {
	Host   string `json:"host"`
	Job    string `json:"job"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// DailyCount is a count for one date and key.
type DailyCount struct {
	Date  string `json:"date"`
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// DailyBaseline compares the report with an earlier one (--baseline).
type DailyBaseline struct {
	Path string `json:"path"`
	// Leaks: leak sites new, grown, fixed or shrunk since the baseline
	// (same ones left out), as "gpuleak diff" compares them.
	Leaks []DiffEntry `json:"leaks"`
	// NewOOMCauses: OOM causes seen now and not in the baseline.
	NewOOMCauses []string `json:"new_oom_causes"`
}
