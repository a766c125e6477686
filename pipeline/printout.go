package pipeline

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// What people paste when they ask where their GPU memory went is often
// not a record gpuleak reads but a printout of one: a profiler's table
// of per-operator totals, memory_allocated() printed each step, a
// framework's memory line (DeepSpeed's see_memory_usage, torchtune's
// peak_memory_alloc), another tool's report, Kineto events cut from a
// trace. "unrecognised input format" says neither what the input is nor
// what to record instead: printoutError names the kind, why memory cannot
// be judged from it, and the call that records what can; where the lines
// print one figure over and over, it describes the series they make. (A
// snapshot saved with json.dump is no printout: parse.Open reads it.)

// printout is one kind of such text. Re finds it in a line (a
// prefix before it, such as Ray's "(Actor pid=N) " or a log's stamp, is
// allowed); What names it, Why says what it lacks, Record what to
// record instead.
type printout struct {
	Re     *lazyre.Regexp
	What   string
	Why    string
	Record string
	// Reading, when set, finds the figures in a line (FindAll), each a
	// reading of one series: named groups key... (the series' name as
	// printed), v... (its value) and unit... (its unit where printed;
	// Unit otherwise), the first of each that took part in the match.
	Reading *lazyre.Regexp
	Unit    string
}

// What to record instead, each the call with its arguments.
const (
	recordSnapshot = "a snapshot: torch.cuda.memory._record_memory_history(max_entries=100_000) before the steps, " +
		`torch.cuda.memory._dump_snapshot("snapshot.pickle") after them, then gpuleak analyze snapshot.pickle`
	recordTrace = "a profiler trace with memory events: with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], " +
		`profile_memory=True, with_stack=True) as prof: ..., then prof.export_chrome_trace("trace.json") and gpuleak analyze trace.json; or ` + recordSnapshot
	recordNVML = "or, for memory over time as the driver sees it, nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 1 > gpu.csv " +
		"while it runs, then gpuleak trend gpu.csv"
	whyTotals = "it gives the caching allocator's totals at the moments they were printed: they may show memory growing, " +
		"but not which allocations grow, where they were made or whether they were freed, so no leak site or cause can be named from them"
)

// printouts are the kinds recognised line by line, most specific first;
// the first line (of the input's first bytes) that any of them finds
// names the input.
var printouts = []printout{
	// torch/autograd/profiler_util.py _build_table: a header of "Name",
	// "Self CPU %" ("Self CPU total %" before 1.8), ..., "CPU Mem", "Self
	// CPU Mem", "CUDA Mem", "Self CUDA Mem" (with profile_memory=True),
	// "# of Calls" ("Number of Calls"); a footer "Self CPU time total:".
	{lazyre.New(`\bName\s+Self CPU (total )?%\s+Self CPU\b|\bCUDA Mem\s+Self CUDA Mem\b|^Self CPU time total: [0-9.]+(us|ms|s)\s*$`),
		"a PyTorch profiler table (prof.key_averages().table()), not a trace",
		"it gives each operator's totals over the whole profile (times; with profile_memory=True, CPU Mem and CUDA Mem: bytes the operator allocated less those it freed, summed over all its calls, in Kb/Mb/Gb of 1024), " +
			"with no order in time and no allocation's life, so growth across steps, leaks and what was live at a peak cannot be judged from it",
		recordTrace, nil, ""},
	// The same table's rows pasted without its header: a name, then
	// "Self CPU %", "Self CPU", "CPU total %", "CPU total" (format_time:
	// us, ms or s).
	{lazyre.New(`^\s*\S.*\s-?[0-9]+\.[0-9]{2}%\s+-?[0-9]+\.[0-9]{3}(us|ms|s)\s+-?[0-9]+\.[0-9]{2}%\s+-?[0-9]+\.[0-9]{3}(us|ms|s)\s`),
		"rows of a PyTorch profiler table (prof.key_averages().table()), not a trace",
		"they give each operator's totals over the whole profile (times; memory columns: bytes allocated less bytes freed, summed over all its calls), " +
			"with no order in time and no allocation's life, so growth across steps, leaks and what was live at a peak cannot be judged from them",
		recordTrace, nil, ""},
	// A snapshot's segments printed (print, pprint): Python's repr, its
	// blocks often elided as {...}.
	{lazyre.New(`\{'device': [0-9]+, 'address': [0-9]+, 'total_size': [0-9]+`),
		"a snapshot's segments printed with print() or pprint (Python's repr), not the snapshot",
		"printed, the segments lose the trace of allocations and, where the blocks are shown as {...}, the blocks and their stacks: what is left cannot be read as a snapshot",
		`the snapshot itself: torch.cuda.memory._dump_snapshot("snapshot.pickle") (after torch.cuda.memory._record_memory_history(max_entries=100_000) before the steps), then gpuleak analyze snapshot.pickle`, nil, ""},
	// pytorch_memlab's LineProfiler display: "active_bytes reserved_bytes
	// line code", then peaks per source line ("5.71G").
	{lazyre.New(`^\s*active_bytes\s+reserved_bytes\s+line\s+code\b`),
		"pytorch_memlab's line profiler report",
		"it gives, per source line of the profiled functions, the peak active and reserved bytes seen while the line ran, rounded (5.71G): " +
			"no allocation, no stack beyond the line and no order across steps, so a leak cannot be told from a peak",
		recordSnapshot, nil, ""},
	// memory_profiler's line-by-line report (@profile).
	{lazyre.New(`^\s*Line #\s+Mem usage\s+Increment\b`),
		"memory_profiler's line-by-line report",
		"it measures the process's resident host memory (RSS, MiB), not GPU memory: a GPU's allocations are not in it",
		"for GPU memory, " + recordSnapshot, nil, ""},
	// gpu_mem_track (gpu_memory_log, MemTracker): a header "GPU Memory
	// Track | date | Total Used Memory:...", then "+ | N * Size:(...) |
	// Memory: X M | <class 'torch.Tensor'>".
	{lazyre.New(`GPU Memory Track \||^[+-] \| [0-9]+ \* Size:\(.*\) \| Memory: [0-9.]+ M \| <class '`),
		"gpu_mem_track's listing of live tensors",
		"it lists the tensors Python's garbage collector finds, by shape and size, and memory_allocated(): no allocation site, " +
			"none of the caching allocator's segments, and tensors outside Python's objects (autograd's saved tensors, C++) are not in it",
		recordSnapshot, nil, ""},
	// torch.cuda.list_gpu_processes(): "GPU:N", then "process PID uses
	// X MB GPU memory" per process, or "no processes are running".
	{lazyre.New(`^\s*process\s+[0-9]+\s+uses\s+[0-9.]+\s+MB GPU memory\s*$`),
		"torch.cuda.list_gpu_processes() output",
		"it is one reading of each process's GPU memory as NVML sees it, at one moment: no allocation inside the process, no change over time",
		"memory over time per process: nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv -l 1 > apps.csv " +
			"while it runs, then gpuleak trend apps.csv; for the allocations inside one process, " + recordSnapshot, nil, ""},
	// DeepSpeed's see_memory_usage (deepspeed/runtime/utils.py): "MA
	// {memory_allocated/1024**3:.2f} GB Max_MA ... CA {memory_reserved}
	// GB Max_CA {max_memory_reserved, whole} GB": GiB, though printed GB.
	{lazyre.New(`\bMA [0-9.]+ [KMG]?B\s+Max_MA [0-9.]+ [KMG]?B\s+CA [0-9.]+ [KMG]?B`),
		"DeepSpeed's see_memory_usage lines (MA, Max_MA, CA, Max_CA: memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved, in GiB though printed GB)",
		whyTotals, recordSnapshot,
		lazyre.New(`\b(?P<key>Max_MA|MA|Max_CA|CA) (?P<v>[0-9]+(\.[0-9]+)?) (?P<unit>[KMG]?B)\b`), ""},
	// torchtune's get_memory_stats, logged per step:
	// peak_memory_active/alloc/reserved (GiB; GB before 0.2).
	{lazyre.New(`\bpeak_memory_(active|alloc|reserved)\s*:\s*[0-9.]+`),
		"torchtune's memory stats (peak_memory_active, peak_memory_alloc, peak_memory_reserved: the peaks since the last reset, in GiB, or GB in its first releases)",
		whyTotals, recordSnapshot,
		lazyre.New(`\b(?P<key>peak_memory_(active|alloc|reserved))\s*:\s*(?P<v>[0-9]+(\.[0-9]+)?)`), ""},
	// torchtitan's step line: "memory: {max_reserved_gib:5.2f}GiB({pct:.2f}%)".
	{lazyre.New(`\bmemory:\s+[0-9.]+GiB\(\s*[0-9.]+%\)`),
		"torchtitan's step lines (memory: the peak reserved memory since the last line, GiB, and its share of the device)",
		whyTotals, recordSnapshot,
		lazyre.New(`\b(?P<key>memory):\s+(?P<v>[0-9]+(\.[0-9]+)?)(?P<unit>GiB)\(`), ""},
	// Megatron's report_memory: "memory (MB) | allocated: ... | max
	// allocated: ... | reserved: ... | max reserved: ..." (MB of 1024²).
	{lazyre.New(`memory \(MB\) \| allocated: [0-9.]+ \| max allocated: [0-9.]+`),
		"Megatron's report_memory lines (memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved, or cached and max cached in its first versions, in MiB though printed MB)",
		whyTotals, recordSnapshot,
		lazyre.New(`\| (?P<key>allocated|max allocated|reserved|max reserved|cached|max cached): (?P<v>[0-9]+(\.[0-9]+)?)`), "MB"},
	// MMCV/MMEngine's text logger: "Epoch [e][i/n] ... memory: N," (the
	// peak max_memory_allocated, MiB).
	{lazyre.New(`\b(Epoch|Iter)\(?\w*\)? ?\[[0-9]+\].*\bmemory: [0-9]+\b`),
		"MMCV/MMEngine log lines (memory: max_memory_allocated in MiB, the peak since the start, or since the last line where the logger resets it)",
		whyTotals, recordSnapshot,
		lazyre.New(`\b(?P<key>memory): (?P<v>[0-9]+)\b`), "MiB"},
	// detectron2's CommonMetricPrinter: "max_mem: {:.0f}M" (MiB).
	{lazyre.New(`\bmax_mem: [0-9]+M\b`),
		"detectron2's metric lines (max_mem: max_memory_allocated in MiB, the peak since the start, or since the last line where the printer resets it)",
		whyTotals, recordSnapshot,
		lazyre.New(`\b(?P<key>max_mem): (?P<v>[0-9]+)(?P<unit>M)\b`), ""},
	// A trainer's logged metrics dict (optimum-habana's
	// 'memory_allocated (GB)': 3.82, 'max_memory_allocated (GB)': ...).
	{lazyre.New(`'(max_)?memory_allocated \(GB\)': [0-9.]+`),
		"a trainer's logged metrics (memory_allocated (GB), max_memory_allocated (GB))",
		whyTotals, recordSnapshot,
		lazyre.New(`'(?P<key>(max_)?memory_allocated) \((?P<unit>GB)\)': (?P<v>[0-9]+(\.[0-9]+)?)`), ""},
	// The PEFT examples' TorchTracemalloc prints (MB of 1024²).
	{lazyre.New(`^\s*GPU (Peak )?Memory (before entering|consumed)\b.*:\s*-?[0-9]+\s*$`),
		"the PEFT examples' TorchTracemalloc prints (memory_allocated before, at the end less the start, the peak less the start, in MiB)",
		whyTotals, recordSnapshot, nil, ""},
	// memory_allocated()/memory_reserved() (or max_, or memory_cached)
	// printed by hand, with or without torch.cuda. and a device
	// argument: "torch.cuda.memory_allocated(0) 318986240",
	// "memory_allocated : 10.0 MiB", "Max Memory Allocated: 0.0 MegaBytes",
	// "GPU: 2798.0/11011.5 MiB".
	{lazyre.New(`(?i)\b(max_)?memory_(allocated|reserved|cached)\b(\([^)]*\))?\s*[:=]?\s*[0-9]|\b(max )?memory (allocated|reserved|cached)\s*[:=]\s*[0-9]`),
		"prints of torch.cuda.memory_allocated(), memory_reserved() or their max_ forms",
		whyTotals, recordSnapshot,
		lazyre.New(`(?i)\b(?P<key>(torch\.cuda\.)?(max_)?memory_(allocated|reserved|cached)(\([^)]*\))?)\s*[:=]?\s*(?P<v>[0-9]+(\.[0-9]+)?)( ?(?P<unit>[KMGT]i?B|MegaBytes|bytes|M|G)\b)?|(?i)\b(?P<key2>(max )?memory (allocated|reserved|cached))\s*[:=]\s*(?P<v2>[0-9]+(\.[0-9]+)?)( ?(?P<unit2>[KMGT]i?B|MegaBytes|bytes)\b)?`), ""},
	// torch.cuda.mem_get_info() printed: its (free, total) tuple of bytes.
	{lazyre.New(`\bmem_get_info\b.*\(\s*[0-9]+\s*,\s*[0-9]+\s*\)`),
		"prints of torch.cuda.mem_get_info() (the device's free and total bytes, as the driver sees them)",
		"it gives the device's free memory at the moments it was printed, all processes' and the caching allocator's cache counted alike: " +
			"it may show memory going, but not which allocations hold it, where they were made or whether they were freed",
		recordSnapshot + "; " + recordNVML, nil, ""},
	// A training loop's "GPU: used/total MiB" per epoch (DeepLabCut's):
	// which reading "used" is, the line does not say.
	{lazyre.New(`\bGPU: [0-9.]+ ?/ ?[0-9.]+ ?(MiB|MB|GiB|GB)\b`),
		"a training log's GPU memory figures (used/total per epoch)",
		"it gives memory in use at the moments it was printed, by a reading the line does not name (the allocator's or the driver's): it may show memory growing, " +
			"but not which allocations grow, where they were made or whether they were freed",
		recordSnapshot + "; " + recordNVML,
		lazyre.New(`\b(?P<key>GPU): (?P<v>[0-9]+(\.[0-9]+)?) ?/ ?[0-9.]+ ?(?P<unit>MiB|MB|GiB|GB)\b`), ""},
}

// Kinds recognised only where no kind above is: a looser test.
var (
	// memoryViz is one frame as memory_viz shows a stack ("file.py:LINE:
	// name", "??:0:PyMethod_New" for a C frame without symbols).
	memoryVizFrame = lazyre.New(`^\s*(\S+\.py|\?\?):[0-9]+:[A-Za-z_<][\w<>.]*\s*$`)
	// bareNumbers is a line of numbers only.
	bareNumbers = lazyre.New(`^\s*-?[0-9]+(\.[0-9]+)?([\s,;]+-?[0-9]+(\.[0-9]+)?)*\s*$`)
	// memoryProse is a sentence about memory listing three figures or
	// more in a row ("2934M -- 4413M -- 4433M", "2.1G, 2.9G, 3.7G"), or
	// a Markdown table row whose label names memory and whose next cells
	// are figures ("| allocated (MiB) | 66 | 106 |"): a series copied by
	// hand. A log's line with a figure or two ("peak memory 1.9 GiB",
	// Ray's "59.49GB / 62.58GB"), or a table that merely names a file
	// memory.pickle, is not.
	memoryProse = lazyre.New(`(?i)\b(memory|allocated|reserved|cached|vram)\b.*([0-9][0-9.]*\s*([KMGT]i?B|[KMG])\b[*\s]*(--|->|→|,|;)?[*\s]*){2,}[0-9][0-9.]*\s*([KMGT]i?B|[KMG])\b|(?i)^\s*\|[^|]*\b(allocated|reserved|cached|memory|vram)\b[^|]*\|(\s*[0-9][0-9,.]*\s*([KMGT]i?B|[KMG])?\s*\|){2,}`)
)

// maxPrintoutLine bounds the length of a line searched for a printout:
// longer lines (a JSON document on one line) are searched only for the
// JSON kinds.
const maxPrintoutLine = 4096

// printoutError returns the error for text no family reads that is one
// of the printouts above, or Kineto events cut from a trace: it names the
// line that tells the kind (Line; Offset 0 for JSON), what the input is,
// why gpuleak cannot judge memory from it, what to record instead, and
// the series its figures make (readSeries). nil when head (the input's
// first bytes) is none of them.
func printoutError(path string, head []byte) error {
	if msg, ok := jsonPrintout(head); ok {
		return &parse.Error{File: path, Offset: 0, Err: parse.ErrPrintout, Msg: msg}
	}
	n, line, p := findPrintout(head)
	if p == nil {
		return nil
	}
	figures := ""
	if ss := readSeries(head, p); len(ss) > 0 {
		within := ""
		if len(head) >= parse.SniffLen {
			within = fmt.Sprintf(" in its first %d KiB (the rest was not read)", parse.SniffLen>>10)
		}
		figures = "; its figures" + within + ", as printed: " + strings.Join(ss, "; ")
	}
	return &parse.Error{File: path, Offset: -1, Line: n, Err: parse.ErrPrintout,
		Msg: fmt.Sprintf("%s (line %d: %q), not a record gpuleak reads%s: %s; record instead %s", p.What, n, excerpt(line), figures, p.Why, p.Record)}
}

// A series is the readings of one figure (DeepSpeed's MA, torchtune's
// peak_memory_alloc, memory_allocated(1)) on one rank, in line order.
type series struct {
	key      string
	unit     string
	readings []reading
}

// reading is one figure: its value as printed, the line it is on, and
// the step the input had reached there (the last step number at or
// before the line; -1 when none was).
type reading struct {
	text string
	v    float64
	line int
	step int
	per  string // what step counts: "step", "iteration", "epoch"
}

// maxSeries bounds the series the error describes.
const maxSeries = 4

// Lines that give a step (step: 14, Step 3 |, iter: 79, Iter 8, Epoch
// 2/100) or a rank ([Rank 5], [rank0]:).
var (
	stepRE = lazyre.New(`(?i)\b(step|iter|iteration|epoch)\b\s*[:=]?\s*([0-9]+)\b`)
	rankRE = lazyre.New(`(?i)\[rank ?([0-9]+)\]`)
)

// readSeries describes the series of p's figures in head (each line
// p.Reading finds figures in): maxSeries of those with two readings or
// more, those whose value changed first, each with its name, first and
// last value and their lines, how many readings, how often it went up and
// down, its change in all and, where the lines number steps, per step.
// Readings are prints, not steps: two may fall in one step (DeepSpeed's
// "before forward", "before backward").
func readSeries(head []byte, p *printout) []string {
	if p.Reading == nil {
		return nil
	}
	re := p.Reading.Re()
	names := re.SubexpNames()
	var all []*series
	by := map[string]*series{}
	step, per, n := -1, "", 0
	for l := range bytes.Lines(head) {
		n++
		if len(l) > maxPrintoutLine {
			continue
		}
		if m := stepRE.Re().FindSubmatch(l); m != nil {
			if v, err := strconv.Atoi(string(m[2])); err == nil {
				step, per = v, stepWord(string(m[1]))
			}
		}
		rank := ""
		if m := rankRE.Re().FindSubmatch(l); m != nil {
			rank = "rank " + string(m[1]) + " "
		}
		for _, m := range re.FindAllSubmatch(l, -1) {
			var key, val, unit string
			for i, name := range names {
				switch {
				case m[i] == nil:
				case strings.HasPrefix(name, "key") && key == "":
					key = string(m[i])
				case strings.HasPrefix(name, "v") && val == "":
					val = string(m[i])
				case strings.HasPrefix(name, "unit") && unit == "":
					unit = string(m[i])
				}
			}
			v, err := strconv.ParseFloat(val, 64)
			if key == "" || err != nil {
				continue
			}
			if unit == "" {
				unit = p.Unit
			}
			k := rank + key
			s := by[k]
			if s == nil {
				s = &series{key: k, unit: unit}
				by[k] = s
				all = append(all, s)
			}
			s.readings = append(s.readings, reading{text: val, v: v, line: n, step: step, per: per})
		}
	}
	// The series that changed first (what a leak question is about),
	// each group in the order its first reading came.
	sort.SliceStable(all, func(i, j int) bool { return all[i].changed() && !all[j].changed() })
	var out []string
	for _, s := range all {
		if len(s.readings) >= 2 && len(out) < maxSeries {
			out = append(out, s.describe())
		}
	}
	if more := countSeries(all) - len(out); more > 0 {
		out = append(out, fmt.Sprintf("and %d more series", more))
	}
	return out
}

// changed reports whether a series' readings are not all one value.
func (s *series) changed() bool {
	for _, r := range s.readings[1:] {
		if r.v != s.readings[0].v {
			return true
		}
	}
	return false
}

// countSeries counts the series of two readings or more.
func countSeries(all []*series) int {
	n := 0
	for _, s := range all {
		if len(s.readings) >= 2 {
			n++
		}
	}
	return n
}

// describe words a series: "MA 4.96 GB (line 1) to 5.19 GB (line 14), 4
// readings, up 1 time and down 1, +0.23 GB in all", with "(steps 1 to 6:
// +0.985 a step)" where its first and last readings have step numbers.
func (s *series) describe() string {
	first, last := s.readings[0], s.readings[len(s.readings)-1]
	rose, fell := 0, 0
	for i := 1; i < len(s.readings); i++ {
		switch d := s.readings[i].v - s.readings[i-1].v; {
		case d > 0:
			rose++
		case d < 0:
			fell++
		}
	}
	unit := ""
	if s.unit != "" {
		unit = " " + s.unit
	}
	decimals := max(decimalsOf(first.text), decimalsOf(last.text))
	d := last.v - first.v
	out := fmt.Sprintf("%s %s%s (line %d) to %s%s (line %d), %d readings, up %d time%s and down %d, %s%s in all",
		s.key, first.text, unit, first.line, last.text, unit, last.line, len(s.readings), rose, plural(rose), fell, signed(d, decimals), unit)
	if first.step >= 0 && last.step > first.step && first.per == last.per {
		out += fmt.Sprintf(" (%ss %d to %d: %s%s a%s %s)", first.per, first.step, last.step,
			signed(d/float64(last.step-first.step), decimals+1), unit, an(first.per), first.per)
	}
	return out
}

// decimalsOf counts the digits after a number's point.
func decimalsOf(text string) int {
	if i := strings.IndexByte(text, '.'); i >= 0 {
		return len(text) - i - 1
	}
	return 0
}

// signed formats v with its sign and at most decimals digits after the
// point (at most 3).
func signed(v float64, decimals int) string {
	t := strconv.FormatFloat(v, 'f', min(decimals, 3), 64)
	if v >= 0 {
		return "+" + t
	}
	return t
}

// stepWord names what a step number counts, from the word before it.
func stepWord(w string) string {
	switch strings.ToLower(w) {
	case "iter", "iteration":
		return "iteration"
	case "epoch":
		return "epoch"
	}
	return "step"
}

// an is "n" before a word that starts with a vowel, for "a"/"an".
func an(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "n"
	}
	return ""
}

// findPrintout returns the first line of head (1-based) that one of the
// printouts finds, its text and which; 0 when none does. Where none
// does, the looser kinds are tried: a stack copied from memory_viz (most
// lines frames), columns of bare numbers (every line), prose or a
// Markdown table of memory figures (any line).
func findPrintout(head []byte) (int, []byte, *printout) {
	var ls [][]byte
	for l := range bytes.Lines(head) {
		ls = append(ls, bytes.TrimRight(l, "\r\n"))
	}
	for n, line := range ls {
		if len(line) > maxPrintoutLine {
			continue
		}
		for i := range printouts {
			if printouts[i].Re.Re().Match(line) {
				return n + 1, line, &printouts[i]
			}
		}
	}
	frames, numbers, text, first := 0, 0, 0, 0
	for n, line := range ls {
		if len(bytes.TrimSpace(line)) == 0 || len(line) > maxPrintoutLine {
			continue
		}
		if text++; first == 0 {
			first = n + 1
		}
		if memoryVizFrame.Re().Match(line) {
			frames++
		}
		if bareNumbers.Re().Match(line) {
			numbers++
		}
	}
	switch {
	case frames >= 3 && frames*5 >= text*4:
		return first, ls[first-1], &memoryVizStack
	case numbers >= 2 && numbers == text:
		return first, ls[first-1], &numberColumns
	}
	for n, line := range ls {
		if len(line) <= maxPrintoutLine && memoryProse.Re().Match(line) {
			return n + 1, line, &memoryProseKind
		}
	}
	return 0, nil, nil
}

var (
	memoryVizStack = printout{
		What:   "a stack copied from memory_viz (one allocation's frames, file:line:function)",
		Why:    "it is one allocation's call stack, without its size, address, time or the other allocations: nothing to total or compare",
		Record: "the snapshot the page was drawn from (the .pickle, or the saved page: gpuleak reads the snapshot it embeds), then gpuleak analyze on it; to record one, " + recordSnapshot,
	}
	numberColumns = printout{
		What:   "columns of numbers without labels",
		Why:    "nothing in it says what the numbers measure (bytes, MiB or GB; allocated, reserved or nvidia-smi's used) nor when each was taken",
		Record: recordSnapshot + "; " + recordNVML,
	}
	memoryProseKind = printout{
		What:   "memory figures in prose or a Markdown table, in no layout gpuleak reads",
		Why:    "figures copied out of a run are not the records they came from: no allocation, no stack, no time gpuleak could read",
		Record: recordSnapshot + "; " + recordNVML,
	}
)

// excerpt is line trimmed to at most 120 bytes, for quoting.
func excerpt(line []byte) string {
	line = bytes.TrimSpace(line)
	if len(line) > 120 {
		return string(line[:117]) + "..."
	}
	return string(line)
}

// JSON kinds: Kineto's [memory] events without the trace around them. (A
// snapshot saved with json.dump is read: parse.Open transcodes it.)
var (
	kinetoMemory   = lazyre.New(`"name"\s*:\s*"\[memory\]"`)
	kinetoCPUEvent = lazyre.New(`"Device Type"\s*:\s*0\b`)
)

// jsonPrintout returns the message for a JSON input that is Kineto
// [memory] events cut from a trace; ok false when head is not. The families have already looked: a whole
// Kineto trace (its "traceEvents") and memory_stats() JSON are theirs.
func jsonPrintout(head []byte) (string, bool) {
	h := bytes.TrimLeft(head, " \t\r\n")
	if len(h) == 0 || (h[0] != '{' && h[0] != '[') {
		return "", false
	}
	switch {
	case kinetoMemory.Re().Match(h) && !bytes.Contains(h, []byte(`"traceEvents"`)):
		n := len(kinetoMemory.Re().FindAllIndex(h, -1))
		dev := ""
		if cpu := len(kinetoCPUEvent.Re().FindAllIndex(h, -1)); cpu == n {
			dev = ", each the CPU allocator's (\"Device Type\": 0), not a GPU's"
		}
		return fmt.Sprintf("%d [memory] event%s cut from a PyTorch profiler trace%s, not the trace (no {\"traceEvents\": [...]} around them): "+
			"a few events without the others before and after them cannot show growth or what was live; give the whole file "+
			"prof.export_chrome_trace(\"trace.json\") wrote (from torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True, with_stack=True)), "+
			"then gpuleak analyze trace.json", n, plural(n), dev), true
	}
	return "", false
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
