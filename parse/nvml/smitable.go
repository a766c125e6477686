package nvml

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// The text nvidia-smi prints for people, the most pasted of its outputs:
//
//   - the default table (plain "nvidia-smi", "nvidia-smi -l N", "watch
//     nvidia-smi" saved): an optional ctime line ("Tue Dec  1 02:00:58
//     2026"), a box with one GPU per two rows, the second holding
//     "3693MiB / 143771MiB" (used / total), and a Processes box with one
//     row per process ending in "3684MiB";
//   - "nvidia-smi -q" (or -q -d MEMORY): "Timestamp : <ctime>", one "GPU
//     <bus id>" section per GPU, in index order, whose "FB Memory Usage"
//     has Total, Reserved (recent drivers), Used and Free in MiB, and
//     whose "Processes" list "Process ID", "Name" and "Used GPU Memory",
//     or say "Processes : None" (no process seen on that GPU; -q -d
//     MEMORY has no Processes section: whether a process was seen is not
//     known).
//
// A process whose memory nvidia-smi shows as "N/A" (Windows' WDDM, some
// vGPU and container setups) is a process row with used_bytes null:
// listed, its memory unknown, never 0.
//
//   - gpustat's text (plain "gpustat", "watch gpustat" saved): a header
//     "host  Mon Aug 22 15:23:57 2022  515.65.01", then one line per GPU
//     "[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |
//     python/52046(11821M)" (gpustat's MB are MiB; its used memory is
//     NVML's v1 figure, which counts the driver's reservation on recent
//     drivers: IncludesReservedUnknown). Its samples carry the header's
//     host name, so that they form series apart from nvidia-smi's in a
//     file holding both.
//
// Each output is one snapshot: its samples are at its timestamp, or, with
// none, at tick k of WithStart and WithInterval. Shell prompts and other
// lines between outputs are skipped. Since R510 the table's total counts
// the driver's reservation and its used memory leaves it out
// (ExcludesReserved); before, the reservation was left out of both (an
// idle 2 GiB GT 640 under driver 415 reads "0MiB / 1999MiB"), so no
// reservation is in the figures (IncludesReservedUnknown's "none", by
// the banner's driver version). Either way the table does not print the
// reservation, and the GPU's capacity is its total.
// The Processes box pasted alone is read (its process rows). MIG device
// rows are not read (their memory is the GPU's): the MIG devices box
// alone is an error.

var (
	// "|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |";
	// on Windows the first cell ends in the driver model instead of the
	// persistence mode (its header says "TCC/WDDM"):
	// "|   0  NVIDIA GeForce RTX 3060 Ti   WDDM  | 00000000:01:00.0  On |".
	// The name stays within the first cell.
	smiTableGPURe = lazyre.New(`^\|\s*(\d{1,3})\s+(\S[^|]*?)\s+(On|Off|N/A|TCC|WDDM|MCDM)\s*\|`)
	// A GPU row whose first cell lost the persistence mode to a cut, by
	// nvidia-smi ("|   0  NVIDIA H2...  | 00000000:00:06.0 Off |") or by
	// the paste ("|   0  NVIDIA H2"): the index (right-aligned: at most
	// three spaces after the border, where a process row has four) and
	// the name, from its first letter, as far as it goes. Tried after
	// smiTableGPURe, outside the MIG and Processes boxes, on a line
	// without "MiB" that is no process row.
	smiTableGPUAnyRe = lazyre.New(`^\| {1,3}(\d{1,3}) {1,4}([A-Za-z][^|]*?)\s*(\||$)`)
	// "3693MiB / 143771MiB"; old drivers (325.15) wrote the same MiB
	// figures as "MB": "14MB /  6143MB" (a GTX TITAN of 6 GiB, driver
	// 325.15).
	smiTableMemRe = lazyre.New(`(\d{1,12})\s*Mi?B\s*/\s*(\d{1,12})\s*Mi?B`)
	// One side of a memory cell whose figure is whole: "134473MiB", or
	// its unit cut ("81920Mi", "143771M..."): the digits end where the
	// unit starts. "1437..." or "1437" at a cut is not whole.
	smiMemFigureRe = lazyre.New(`^(\d{1,12})\s*M(?:iB?|B)?(?:\.\.\.|…)?$`)
	// "|    0   N/A  N/A             878      C   python3        3684MiB |",
	// older drivers without the GI and CI columns; "N/A" for the memory
	// where the driver cannot tell a process's (Windows' WDDM).
	// The start of a process row: "|    0 ".
	smiTableRowStartRe = lazyre.New(`^\|\s*\d{1,3}\s`)
	// nvidia-smi cuts a cell too long for its column with "...": a long
	// process name ("...conda/bin/python"), and, in some releases, the
	// memory itself when a long name pushes it ("12339..."): group 6.
	// A Processes box row's GPU and MIG GPU instance: "|    1    3    0      34965      C ...".
	smiTableProcGIRe = lazyre.New(`^\|\s*(\d{1,3})\s+(\d{1,3})\s+(N/A|\d{1,3})\s+(\d{1,10})\s`)
	smiTableProcRe   = lazyre.New(`^\|\s*(\d{1,3})\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d{1,10})\s+(C\+G|G\+C|M\+C|C|G|M)\s+(.*?)\s+(?:(\d{1,12})\s*MiB|N/A|(\d{0,12}\s*M?i?B?(?:\.\.\.|…)))\s*\|\s*$`)
)

var (
	// "[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB | python/52046(11821M)";
	// "[0] ... | [||||    ] 10000 / 12212 MB |" with a memory bar.
	gpustatGPURe = lazyre.New(`^\[(\d{1,3})\]\s+(.*?)\s*\|[^|]*\|\s*(?:\[[^\]]*\]\s*)?(\d{1,12}|\?\?)\s*/\s*(\d{1,12}|\?\?)\s*MB\s*\|(.*)$`)
	// A gpustat GPU row's start, its index and name cell: "[4] GeForce GTX 1080 Ti |".
	gpustatCutRe  = lazyre.New(`^\[(\d{1,3})\]\s+[^|\s][^|]*\|`)
	gpustatProcRe = lazyre.New(`(?:\S+?:)?([^\s/(]+)/(\d{1,10})\((\d{1,12})M\)`)
	// Any process entry of a gpustat row, with its pid or without
	// ("user1(4000M)", gpustat's default).
	gpustatEntryRe = lazyre.New(`\S+\(\d{1,12}M\)`)
	// "gpu-a-11.extreme         Mon Aug 22 15:23:57 2022  515.65.01"; gpustat
	// 0.4 printed no driver version ("feline  Sun Aug 13 15:45:59 2017").
	gpustatHeadRe = lazyre.New(`^(\S+)\s+(\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4})(?:\s+\d+\.\d+(?:\.\d+)?)?\s*$`)
	gpustatLineRe = lazyre.New(`(?m)^\s*\[\d{1,3}\]\s.*\|.*\|\s*(?:\[[^\]]*\]\s*)?(?:\d+|\?\?)\s*/\s*(?:\d+|\?\?)\s*MB\s*\|`)
)

type smiTextDecoder struct {
	r *Reader
	// snapshot is the index of the output being read, from 0; snapTime
	// its time when it has one.
	snapshot    int64
	started     bool
	snapTime    int64
	hasSnapTime bool
	seenTime    bool
	// Table state.
	gpuRow    bool // the last line was a GPU row: the memory row follows
	gpu       int32
	gpuName   []byte
	processes bool // inside the Processes box
	sawMIG    bool // a MIG devices box was seen (its rows are not read)
	// migGIs names the MIG GPU instances of Processes box rows ("GPU 1
	// GI 3"), the first at line migLine.
	migGIs  []string
	migLine int
	mig     bool // inside the MIG devices box
	// -q state.
	qGPU int32 // index of the current "GPU <bus id>" section, -1 before the first
	// qSections counts the GPU sections of the current -q report; qBus
	// holds the index each bus id (of a host) was first given (its
	// section's place in its report), plus 1: a GPU keeps it in later reports, where one before
	// it may be missing (lost: "Unable to determine the device handle
	// for GPU <bus id>" printed in its place), which would otherwise
	// move it to the lost GPU's index and join their series.
	qSections int
	// qAttached is the current report's "Attached GPUs" count, read at
	// line qAttachedLine; qFewer counts reports with fewer GPU sections
	// than it, the first at qFewerLine with qFewerWhy.
	qAttached, qAttachedLine int
	qFewer, qFewerLine       int
	qFewerWhy                string
	qBus                     map[string]int32
	qSection                 string
	qIndent                  int
	qMem                     fbMem
	qUUID                    []byte
	qName                    []byte
	qPID                     int64
	qHasPID                  bool
	qProcName                []byte
	// qGI and qCI: the -q process entry's "GPU instance ID" and "Compute
	// instance ID" (before its Process ID), -1 for N/A or none.
	qGI, qCI int32
	// qProcLists counts the GPU sections of the current -q report whose
	// Processes were read ("Processes : None", or a list whose every
	// process has its "Used GPU Memory" line, N/A included); qProcOpen:
	// the current GPU section's Processes list is being read, its last
	// process not finished (qHasPID).
	qProcLists int
	qProcOpen  bool
	qProcCut   bool // a process of the list had no memory line
	// qFB: the current GPU section's FB Memory Usage was read; qFBAny,
	// an FB Memory Usage of the current report was; qFrom, the line the
	// section starts at.
	qFB, qFBAny bool
	qFrom       int
	samples     int64
	samplesAt   int64  // samples when the current snapshot started
	host        []byte // gpustat's host name, from its header
	// naProcs counts the Processes box's rows whose memory is "N/A" (their
	// samples have no used memory), from line naLine; wddm: a GPU row said its
	// driver model is WDDM.
	naProcs int
	naLine  int
	// acct*: -q's "Accounted Processes" (-d ACCOUNTING, a Slurm epilog's
	// GPU report): each process's largest memory use over its life, a
	// peak and not a sample, counted for a warning: acctProcs processes
	// from line acctLine, the largest acctMax, of pid acctPID on GPU
	// acctGPU.
	// qBase is the indentation of the -q report's "NVSMI LOG" line (or
	// of its first GPU section title when the excerpt starts there): a
	// report pasted indented (a Markdown block, a CI log's prefix) keeps
	// its sections' depths relative to it.
	qBase               int
	qBaseSet            bool
	acctProcs, acctLine int
	acctMax, acctPID    int64
	acctGPU             int32
	acctCurPID          int64
	wddm                bool
	// bannerSMI and bannerDriver are the versions the last banner gives
	// ("NVIDIA-SMI 512.15       Driver Version: 460.89"), at bannerLine.
	bannerSMI, bannerDriver []byte
	bannerLine              int
	// oldDriver: the output's banner names a driver before R510, whose
	// table left the driver's reservation out of used and total alike
	// (see tableConv).
	oldDriver bool
	// procRule: the Processes box's "|===|" rule was read (its rows
	// follow); procBad: a row of the box was cut or was not read, so the
	// box may not list every process.
	procRule, procBad bool
	// The excerpt's cut (Metadata.Cut): tableGPU, the output held a
	// table's GPU row; procFrom, the line its Processes box started at
	// (0: none seen); procClosed, the box's bottom border was read;
	// lastLine, the output's last table line. cutOutputs counts the
	// outputs cut before their box's end, cutWhy says the first.
	tableGPU   bool
	procFrom   int
	procClosed bool
	lastLine   int
	cutOutputs int
	cutWhy     string
	// headFrom is the line the current output's head starts at (its
	// ctime line, watch's header, or the table's "| NVIDIA-SMI" banner;
	// 0: none seen): an output with a head and no GPU or process row
	// after it was cut before them (see endTable). migOut: the output
	// has a MIG devices box.
	headFrom int
	migOut   bool
	// watchLine is the line of the last watch header ("Every 1.0s:
	// nvidia-smi ..."), prevLine the last non-blank line read.
	watchLine, prevLine int
}

func newSmiTextDecoder(r *Reader) *smiTextDecoder {
	return &smiTextDecoder{r: r, qGPU: -1, qGI: -1, qCI: -1}
}

// parseCtime reads nvidia-smi's ctime stamp "Tue Dec  1 02:00:58 2026" in
// the WithLocation zone.
func (d *smiTextDecoder) parseCtime(b []byte) (int64, bool) { return d.r.parseCtime(b) }

// parseCtime reads nvidia-smi's ctime stamp "Tue Dec  1 02:00:58 2026" (the
// table's first line, -q's Timestamp, -q -x's <timestamp>) in the
// WithLocation zone, as µs since the Unix epoch.
func (r *Reader) parseCtime(b []byte) (int64, bool) {
	f := strings.Fields(string(b))
	if len(f) != 5 || len(f[0]) != 3 || len(f[1]) != 3 {
		return 0, false
	}
	t, err := time.Parse("Mon Jan 2 15:04:05 2006", strings.Join(f, " "))
	if err != nil || !validCivil(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second()) {
		return 0, false
	}
	// The civil time, placed in the zone as every local time is (around
	// a change of offset too).
	return r.civil.us(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), 0), true
}

// newSnapshot starts output k+1, at time t when ok.
func (d *smiTextDecoder) newSnapshot(t int64, ok bool) {
	d.flushQ()
	d.endQReport()
	d.cutGPURow(d.r.line)
	d.endTable()
	if d.started {
		d.snapshot++
	}
	d.started = true
	d.samplesAt = d.samples
	d.host = d.host[:0]
	d.snapTime, d.hasSnapTime = t, ok
	d.seenTime = d.seenTime || ok
	d.gpuRow, d.processes, d.mig = false, false, false
	d.oldDriver = false
	d.qGPU, d.qSection = -1, ""
	d.qProcLists, d.qProcOpen, d.qSections = 0, false, 0
	d.r.newInstant = true // one output, one sampling instant
}

// endTable ends the current output's table: nvidia-smi prints the
// Processes box after the GPU rows of every table, so a table with GPU
// rows whose box is missing, or whose box has no bottom border, was cut
// (by the paste, a log's limit, head -n): the processes it listed after
// the cut are not in the excerpt. The first such output is named in a
// warning and in Metadata.Cut; the others are counted.
func (d *smiTextDecoder) endTable() {
	var why string
	switch {
	case d.procFrom > 0 && !d.procClosed && d.lastLine == d.procFrom:
		why = fmt.Sprintf("the nvidia-smi table stops at line %d, at its Processes box's title: the excerpt is cut there, so the processes the box listed are not in it", d.lastLine)
	case d.procFrom > 0 && !d.procClosed:
		why = fmt.Sprintf("the nvidia-smi table's Processes box (from line %d) stops at line %d without its bottom border: the excerpt is cut there, so processes the box listed after it may be missing", d.procFrom, d.lastLine)
	case d.procFrom == 0 && d.tableGPU:
		why = fmt.Sprintf("the nvidia-smi table ends at line %d before its Processes box: the excerpt is cut, so which processes held the GPUs' memory is not known", d.lastLine)
	}
	if d.tableGPU && (why != "" || d.procBad) {
		d.r.meta.ProcessesPartialUs = append(d.r.meta.ProcessesPartialUs, d.now())
	}
	if why == "" && d.headFrom > 0 && !d.tableGPU && d.procFrom == 0 && !d.migOut && d.samples == d.samplesAt {
		// The output's head and nothing after it: a paste or a log
		// that stops inside the table's header ("nvidia-smi" run again
		// and copied before its GPU rows; a "nvidia-smi -l" log killed
		// mid-table). No GPU of it was read: nothing of it is a sample.
		why = fmt.Sprintf("the nvidia-smi output from line %d stops at line %d, before its GPU rows: the excerpt is cut there, so that output holds no sample (the GPUs' memory at its time is not known)", d.headFrom, max(d.lastLine, d.headFrom))
	}
	d.tableGPU, d.procFrom, d.procClosed = false, 0, false
	d.headFrom, d.migOut = 0, false
	if why == "" {
		return
	}
	d.cutOutputs++
	if d.cutOutputs == 1 {
		d.cutWhy = why
		d.r.meta.Warnings.Linef(d.lastLine, "%s", why)
	}
}

// cutQReport notes, at the end of the input (line n), a -q report cut
// short: its last GPU section stops before its FB Memory Usage while an
// earlier GPU's was read (a report without any is an error of its own),
// or inside a process's entry, before its Used GPU Memory. What is missing
// is said in a warning and in Metadata.Cut (the excerpt is read in part).
func (d *smiTextDecoder) cutQReport(n int) {
	var why string
	switch {
	case d.qGPU < 0:
		return
	case !d.qFB && (d.qFBAny || len(d.qName) > 0):
		// (A report without any, -q -d PIDS, shows no memory at all; a
		// section with its Product Name is of the whole report, whose
		// FB Memory Usage comes after it.)
		why = fmt.Sprintf("the nvidia-smi -q report stops at line %d inside GPU %d's section (from line %d), before its FB Memory Usage: the excerpt is cut there, so GPU %d and what follows are missing", n, d.qGPU, d.qFrom, d.qGPU)
	case d.qProcOpen && d.qHasPID:
		why = fmt.Sprintf("the nvidia-smi -q report stops at line %d inside pid %d's entry of GPU %d's Processes, before its Used GPU Memory: the excerpt is cut there, so that process's memory and any process after it are missing", n, d.qPID, d.qGPU)
	default:
		return
	}
	d.r.meta.Warnings.Linef(n, "%s", why)
	d.r.meta.ProcessesPartialUs = append(d.r.meta.ProcessesPartialUs, d.now())
	if d.cutOutputs == 0 {
		d.cutOutputs, d.cutWhy = 1, why
	} else {
		d.cutOutputs++
	}
}

// endQReport ends the current -q report: when each of its GPU sections
// had its Processes read, the report lists every process nvidia-smi saw,
// as a table's whole Processes box does (Metadata.ProcessesListedUs); a
// report without them (-q -d MEMORY, or one cut short) says nothing of
// the processes.
//
// A report with fewer GPU sections than its "Attached GPUs" lacks the
// others' memory: an excerpt cut after a whole section, or a report run
// with -i, which the text cannot tell apart. The first such report is
// named in a warning (unless a GPU NVML could not reach, printed in place
// of its section, says why one is missing).
func (d *smiTextDecoder) endQReport() {
	d.closeQProcs()
	if d.qGPU >= 0 && d.qProcLists == d.qSections {
		d.r.meta.ProcessesListedUs = append(d.r.meta.ProcessesListedUs, d.now())
	}
	if d.qSections > 0 && d.qAttached > d.qSections {
		if d.qFewer == 0 {
			held, missing := "1 GPU's section", fmt.Sprintf("the other %d GPUs are not in it", d.qAttached-d.qSections)
			if d.qSections > 1 {
				held = fmt.Sprintf("%d GPUs' sections", d.qSections)
			}
			if d.qAttached-d.qSections == 1 {
				missing = "the other GPU is not in it"
			}
			d.qFewerLine = d.qAttachedLine
			d.qFewerWhy = fmt.Sprintf("the nvidia-smi -q report says %d GPUs are attached but holds %s: %s (the excerpt cut after the last section, or nvidia-smi run with -i), so their memory is not known", d.qAttached, held, missing)
		}
		d.qFewer++
	}
	d.qAttached = 0
	d.qGPU, d.qProcLists, d.qSections = -1, 0, 0
	d.qFBAny = false
}

// closeQProcs ends the current GPU section's Processes list: read whole
// when its last process had its memory line.
func (d *smiTextDecoder) closeQProcs() {
	if d.qProcOpen && !d.qHasPID && !d.qProcCut {
		d.qProcLists++
	}
	d.qProcOpen, d.qHasPID, d.qProcCut = false, false, false
}

// atDate starts an output at t, the time of a line of date(1)'s output
// before it.
func (d *smiTextDecoder) atDate(t int64, _ int) { d.newSnapshot(t, true) }

// now is the time of the current snapshot.
func (d *smiTextDecoder) now() int64 {
	if d.hasSnapTime {
		return d.snapTime
	}
	return d.r.tickTime(d.snapshot)
}

func (d *smiTextDecoder) line(b []byte, n int) error {
	b = stripLogStamp(b)
	t := trimSpace(b)
	if len(t) == 0 {
		return nil
	}
	prev := d.prevLine
	d.prevLine = n
	// A ctime line alone starts a table (nvidia-smi prints it first); so
	// does watch's header, "Every 2.0s: nvidia-smi   host: <ctime>".
	if ts, ok := d.parseCtime(t); ok {
		if d.watchLine > 0 && d.watchLine == prev {
			// nvidia-smi's own ctime line under watch's header: the
			// same output, at the time nvidia-smi printed (watch's may
			// be a second before).
			d.snapTime = ts
			return nil
		}
		d.newSnapshot(ts, true)
		d.headFrom = n
		return nil
	}
	if bytes.HasPrefix(t, []byte("Every ")) {
		if f := bytes.Fields(t); len(f) >= 7 {
			if ts, ok := d.parseCtime(bytes.Join(f[len(f)-5:], []byte(" "))); ok {
				d.newSnapshot(ts, true)
				d.headFrom, d.watchLine = n, n
				return nil
			}
		}
	}
	if m := gpustatHeadRe.FindSubmatch(t); m != nil {
		if ts, ok := d.parseCtime(m[2]); ok {
			d.newSnapshot(ts, true)
			d.host = append(d.host[:0], m[1]...)
			d.r.hosts.nameHost(m[1], n)
			return nil
		}
	}
	if t[0] == '[' {
		return d.gpustatLine(t, n)
	}
	if t[0] >= 'a' && t[0] <= 'z' && bytes.IndexByte(t, ',') > 0 {
		if _, _, ok := headerFields(t, false); ok {
			// A --query-gpu or --query-compute-apps CSV printed after the
			// table without a prompt before it (a job's script running
			// both): its rows have no times to place them among the
			// tables' and are not read; said, not dropped unseen.
			d.r.meta.Warnings.Once("csv in text", parse.LineNote(n, "a --query-gpu/--query-compute-apps CSV output starts here (%q) after nvidia-smi's text, without a shell prompt before it: its rows are not read; give it as a file of its own", snippet(t)))
			return nil
		}
	}
	switch {
	case bytes.Contains(t, []byte("NVSMI LOG")):
		d.newSnapshot(0, false)
		d.qBase, d.qBaseSet = leadingSpace(b), true
		return nil
	case bytes.HasPrefix(t, []byte("| NVIDIA-SMI ")):
		// The banner of a table not preceded by its ctime line.
		if !d.started || d.samples > 0 && !d.justStamped() {
			d.newSnapshot(0, false)
		}
		if d.headFrom == 0 {
			d.headFrom = n
		}
		d.lastLine = n
		d.oldDriver = preR510(t)
		if m := smiBannerRe.FindSubmatch(t); m != nil {
			d.bannerSMI, d.bannerDriver, d.bannerLine = append(d.bannerSMI[:0], m[1]...), append(d.bannerDriver[:0], m[2]...), n
		} else {
			d.bannerLine = 0
		}
		return nil
	case bytes.HasPrefix(t, []byte("No devices were found")):
		d.r.meta.Skipped++
		return nil
	case d.r.lostHandle(t, n):
		// A GPU NVML cannot reach: printed before the table (or -q
		// report) of the others, in place of its rows.
		d.r.meta.Skipped++
		return nil
	}
	if t[0] == '|' || t[0] == '+' {
		return d.tableLine(t, n)
	}
	return d.qLine(b, t)
}

// justStamped: the snapshot has its ctime line and no sample yet (the
// banner that follows belongs to it).
func (d *smiTextDecoder) justStamped() bool { return d.hasSnapTime && d.samplesAt == d.samples }

// gpustatLine reads one GPU of gpustat's text (line n) and its processes.
// A row that starts as one ("[4] GeForce GTX 1080 Ti |") but stops before
// its "used / total MB" cell is cut (a paste, a log's limit): that GPU's
// memory is missing, said in a warning and in Metadata.Cut.
func (d *smiTextDecoder) gpustatLine(t []byte, n int) error {
	m := gpustatGPURe.FindSubmatch(t)
	if m == nil {
		if c := gpustatCutRe.FindSubmatch(t); c != nil {
			why := fmt.Sprintf("gpustat's row for GPU %s stops before its memory (%q): the excerpt is cut there, so GPU %s's memory is not known", c[1], snippet(t), c[1])
			d.r.meta.Warnings.Linef(n, "%s", why)
			d.cutOutputs++
			if d.cutOutputs == 1 {
				d.cutWhy = why
			}
		}
		return nil
	}
	if !d.started {
		d.newSnapshot(0, false)
	}
	g, _ := parseInt(m[1])
	// "??" is gpustat's None: NVML gave no memory figure (a GPU with
	// unified memory): no figure, not 0.
	used, hasUsed := parseInt(m[3])
	total, hasTotal := parseInt(m[4])
	if !hasTotal {
		d.r.totalPlaceholders++ // see unifiedNoMemory
	}
	if !hasUsed && d.r.usedPlaceholder == "" {
		d.r.usedPlaceholder, d.r.usedField = "??", "gpustat's used memory"
	}
	d.emit(&sample{timeUs: d.now(), host: d.host, gpu: int32(g), hasGPU: true, gpuName: trimSpace(m[2]),
		used: used * MiB, hasUsed: hasUsed, total: total * MiB, hasTotal: hasTotal, conv: IncludesReservedUnknown})
	procs := gpustatProcRe.FindAllSubmatch(m[5], -1)
	for _, p := range procs {
		pid, _ := parseInt(p[2])
		pu, _ := parseInt(p[3])
		d.emit(&sample{timeUs: d.now(), host: d.host, gpu: int32(g), hasGPU: true, pid: pid, hasPID: true,
			process: p[1], used: pu * MiB, hasUsed: true})
	}
	if all := gpustatEntryRe.FindAllSubmatch(m[5], -1); len(all) > len(procs) {
		// gpustat's default lists each process by its user alone
		// ("user1(4000M)"): no pid to make a series of.
		d.r.meta.Warnings.Once("gpustat without pids", parse.LineNote(n, "gpustat lists processes without their pids (%q: gpustat without -p): their memory is not read as processes, only the GPU's; run gpustat -p (or -cpu) to name them", string(all[0][0])))
	}
	return nil
}

// maxGraphicsPIDs bounds Metadata.GraphicsPIDs (and the time to look a
// pid up in it) on untrusted input.
const maxGraphicsPIDs = 256

// isRule reports whether t is a border line of a table, whole or cut:
// '+' then only '-', '=' and '+'.
func isRule(t []byte) bool {
	if len(t) < 2 || t[0] != '+' {
		return false
	}
	for _, c := range t[1:] {
		if c != '-' && c != '=' && c != '+' {
			return false
		}
	}
	return true
}

// tableLine reads line n of the default table. A row cut short (a paste
// that stops mid-line: it does not end in the box's "|") is named in a
// warning rather than dropped in silence: the GPU or process it held is
// missing from the samples.
func (d *smiTextDecoder) tableLine(t []byte, n int) error {
	if !d.started {
		d.newSnapshot(0, false)
	}
	d.lastLine = n
	if bytes.Contains(t, []byte("MIG devices:")) {
		d.cutGPURow(n)
		d.sawMIG, d.mig, d.migOut = true, true, true
		return nil
	}
	if bytes.Contains(t, []byte("Processes:")) || bytes.Contains(t, []byte("Compute processes:")) {
		d.cutGPURow(n)
		d.processes, d.mig = true, false
		d.procRule, d.procBad = false, false
		d.procFrom, d.procClosed = n, false
		return nil
	}
	cut := t[len(t)-1] != '|' && t[len(t)-1] != '+'
	if d.processes {
		switch {
		case bytes.HasPrefix(t, []byte("|=")):
			d.procRule = true
			return nil
		case t[0] == '+' && d.procRule && (!cut || isRule(t)):
			// The box's closing border: read whole, it listed every
			// process nvidia-smi saw (none, maybe). A border the paste
			// cut ("+------" and no more) closes it too: nothing of the
			// box comes after its bottom border, all of its rows before.
			d.procRule, d.procClosed = false, true
			if !d.procBad {
				d.r.meta.ProcessesListedUs = append(d.r.meta.ProcessesListedUs, d.now())
			}
			return nil
		case d.procClosed && isRule(t):
			return nil // the bottom border after "No running processes found", whole or cut
		case d.procRule && !d.procBad && bytes.Contains(t, []byte("No running processes found")):
			// The box's one row when there is no process: whole, though
			// a paste ends before its bottom border.
			d.procRule, d.procClosed = false, true
			d.r.meta.ProcessesListedUs = append(d.r.meta.ProcessesListedUs, d.now())
			return nil
		}
		if m := smiTableProcRe.FindSubmatch(t); m != nil {
			gpu, _ := parseInt(m[1])
			pid, _ := parseInt(m[2])
			if string(m[3]) == "G" && !slices.Contains(d.r.meta.GraphicsPIDs, pid) && len(d.r.meta.GraphicsPIDs) < maxGraphicsPIDs {
				d.r.meta.GraphicsPIDs = append(d.r.meta.GraphicsPIDs, pid)
			}
			if gi := smiTableProcGIRe.FindSubmatch(t); gi != nil {
				d.migInstance(string(gi[1]), string(gi[2]), n)
				ci, _ := parseInt(gi[3])
				if bytes.Equal(gi[3], []byte("N/A")) {
					ci = -1
				}
				giN, _ := parseInt(gi[2])
				d.r.migProcess(MIGProcess{GPU: int32(gpu), PID: pid, GI: int32(giN), CI: int32(ci)})
			}
			if len(m[6]) > 0 {
				// The memory cut by nvidia-smi: the process is there,
				// its memory unknown (not 0).
				d.r.meta.Warnings.Linef(n, "pid %d's memory %q is cut by nvidia-smi; record with --query-compute-apps=pid,used_memory --format=csv for exact figures", pid, m[6])
				d.emit(&sample{timeUs: d.now(), gpu: int32(gpu), hasGPU: true, pid: pid, hasPID: true,
					process: trimSpace(m[4])})
				return nil
			}
			if len(m[5]) == 0 {
				// "N/A": the driver gives no memory for this process
				// (WDDM, vGPU, some containers). The process is there,
				// its memory unknown (not 0); the box still lists every
				// process nvidia-smi saw, so it does not make the box
				// partial (procBad): a GPU without a row has none listed.
				if d.naProcs == 0 {
					d.naLine = n
				}
				d.naProcs++
				d.emit(&sample{timeUs: d.now(), gpu: int32(gpu), hasGPU: true, pid: pid, hasPID: true,
					process: trimSpace(m[4])})
				return nil
			}
			used, _ := parseInt(m[5])
			d.emit(&sample{timeUs: d.now(), gpu: int32(gpu), hasGPU: true, pid: pid, hasPID: true,
				process: trimSpace(m[4]), used: used * MiB, hasUsed: true})
		} else if cut && smiTableRowStartRe.Match(t) {
			d.procBad = true
			d.r.meta.Warnings.Linef(n, "a row of the Processes box is cut short (%q): that process's memory is missing", snippet(t))
		} else if cut {
			d.procBad = true
			d.r.meta.Warnings.Linef(n, "the Processes box is cut short before its rows: the processes are not read")
		} else if d.procRule && !bytes.Contains(t, []byte("No running processes found")) {
			d.procBad = true // a row not read: a process may be missing
		}
		return nil
	}
	if d.mig {
		return nil // a MIG device's memory is its GPU's
	}
	if d.gpuRow {
		if m := smiTableMemRe.FindSubmatch(t); m != nil {
			d.gpuRow = false
			used, _ := parseInt(m[1])
			total, _ := parseInt(m[2])
			d.emit(&sample{timeUs: d.now(), gpu: d.gpu, hasGPU: true, gpuName: d.gpuName,
				used: used * MiB, hasUsed: true, total: total * MiB, hasTotal: true, conv: d.tableConv()})
			return nil
		}
		if !isGPURow(t) && d.gpuMemRow(t, n, cut) {
			return nil
		}
		d.cutGPURow(n)
	}
	if hasMemUnit(t) {
		if smiTableMemRe.Match(t) {
			d.r.meta.Warnings.Linef(n, "a GPU's memory row (%q) without the GPU's first row (index, name) before it: that GPU is not read", snippet(t))
		}
		return nil
	}
	if m := smiTableGPURe.FindSubmatch(t); m != nil {
		g, _ := parseInt(m[1])
		d.gpu, d.gpuRow, d.tableGPU = int32(g), true, true
		d.gpuName = append(d.gpuName[:0], m[2]...)
		if string(m[3]) == "WDDM" {
			d.wddm = true
		}
		switch string(m[3]) {
		case "WDDM", "TCC", "MCDM":
			if d.bannerLine > 0 && !bytes.Equal(d.bannerSMI, d.bannerDriver) && d.r.driverMismatch == "" {
				// On Windows nvidia-smi and NVML come with the driver:
				// their version is the driver's. (Under WSL the two
				// differ by design, and the GPU row gives no driver model.)
				d.r.driverMismatch = fmt.Sprintf("nvidia-smi's banner (line %d) gives NVIDIA-SMI %s but Driver Version %s on Windows, where nvidia-smi and its NVML library come with the driver and bear its version: they are of another driver than the one running (an update or rollback not finished, two installs), and across such a mismatch NVML may give no memory figure", d.bannerLine, d.bannerSMI, d.bannerDriver)
			}
		}
		return nil
	}
	if m := smiTableGPUAnyRe.FindSubmatch(t); m != nil && !smiTableProcRe.Match(t) {
		// A first cell without its persistence mode: the name cut by
		// nvidia-smi, or the row cut inside the cell by the paste (the
		// index and the name as far as it goes). Its memory is on the
		// next row.
		g, _ := parseInt(m[1])
		d.gpu, d.gpuRow, d.tableGPU = int32(g), true, true
		d.gpuName = append(d.gpuName[:0], m[2]...)
		if len(m[3]) == 0 && cut {
			d.r.meta.Warnings.Linef(n, "GPU %d's first row is cut short (%q): its name is read as %q", g, snippet(t), m[2])
		}
	}
	return nil
}

// isGPURow: line t is a GPU's first row (index, name), not the second row
// of the GPU before it.
func isGPURow(t []byte) bool {
	return !hasMemUnit(t) && (smiTableGPURe.Match(t) || isCutGPURow(t))
}

// hasMemUnit reports whether a table line holds a memory figure: "MiB",
// or the "MB" of drivers before R331 in a "used / total" cell.
func hasMemUnit(t []byte) bool {
	return bytes.Contains(t, []byte("MiB")) || bytes.Contains(t, []byte("MB")) && smiTableMemRe.Match(t)
}

// isCutGPURow: t is a GPU's first row that smiTableGPURe does not read
// (see smiTableGPUAnyRe).
func isCutGPURow(t []byte) bool {
	return smiTableGPUAnyRe.Match(t) && !smiTableProcRe.Match(t)
}

// isBorder: a line of the box's borders alone ("+---+", "|===|", "|---+").
func isBorder(t []byte) bool {
	for _, c := range t {
		if c != '|' && c != '+' && c != '-' && c != '=' && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// gpuMemRow reads line n, cut short when cut, as the second row of the
// GPU whose first row came before it, when its memory cell (the second
// cell: "134473MiB / 143771MiB") is not whole, and reports whether the
// line is that row. A cell cut by nvidia-smi or by the paste ("134473MiB
// / 1437...", "1344...   / 143771MiB", a line that stops inside it or
// before it), or one without figures (GB10's "Not Supported"), keeps the
// GPU in the samples with what is whole and the rest unknown (null, not
// 0), and a warning names the line and what is cut.
func (d *smiTextDecoder) gpuMemRow(t []byte, n int, cut bool) bool {
	if t[0] != '|' || isBorder(t) {
		return false
	}
	// The row's cells: a whole second row has three (fan to power,
	// memory, utilisation), the last closed by '|'.
	cells := bytes.Split(t, []byte{'|'})[1:]
	if !cut {
		cells = cells[:len(cells)-1]
	}
	const record = "; record with --query-gpu=timestamp,index,memory.used,memory.total --format=csv for exact figures"
	s := sample{timeUs: d.now(), gpu: d.gpu, hasGPU: true, gpuName: d.gpuName, conv: d.tableConv()}
	var cell []byte
	if len(cells) >= 2 {
		cell = trimSpace(cells[1])
	}
	pasteCut := cut && len(cells) == 2 // the line stops inside the memory cell
	switch {
	case len(cells) < 2 || pasteCut && len(cell) == 0:
		if !cut && len(cells) == 0 {
			return false
		}
		d.r.meta.Warnings.Linef(n, "GPU %d's second row is cut short before its memory cell (%q): its used and total memory are unknown in this output%s", d.gpu, snippet(t), record)
		d.gpuRow = false
		d.emit(&s)
		return true
	case len(cell) == 0:
		return false // a whole row with an empty memory cell: not the GPU's second row
	}
	d.gpuRow = false
	usedB, totalB, _ := bytes.Cut(cell, []byte{'/'})
	if v, ok := memFigure(trimSpace(usedB)); ok {
		s.used, s.hasUsed = v, true
	}
	if v, ok := memFigure(trimSpace(totalB)); ok {
		s.total, s.hasTotal = v, true
	}
	var what string
	switch {
	case s.hasUsed && s.hasTotal:
		what = fmt.Sprintf("its figures are whole: %d MiB used of %d MiB", s.used/MiB, s.total/MiB)
	case s.hasUsed:
		what = fmt.Sprintf("its used memory, %d MiB, is read; its total is unknown", s.used/MiB)
	case s.hasTotal:
		what = fmt.Sprintf("its used memory is unknown (not 0) in this output; its total is %d MiB", s.total/MiB)
	default:
		what = "its used and total memory are unknown in this output"
	}
	if pasteCut || bytes.Contains(cell, []byte("...")) || bytes.Contains(cell, []byte("…")) {
		if !(s.hasUsed && s.hasTotal) {
			what += record
		}
		d.r.meta.Warnings.Linef(n, "GPU %d's memory cell is cut (%q): %s", d.gpu, snippet(cell), what)
	} else {
		// Not cut: no figure there ("Not Supported": GB10's unified
		// memory), or not nvidia-smi's "used MiB / total MiB".
		if !s.hasTotal {
			d.r.totalPlaceholders++ // see unifiedNoMemory
		}
		if !s.hasUsed && d.r.usedPlaceholder == "" {
			d.r.usedPlaceholder, d.r.usedField = strings.Trim(string(trimSpace(cell)), "*_` "), "the memory cell" // "**Not Supported**": a paste's bold
		}
		d.r.meta.Warnings.Linef(n, "GPU %d's memory cell reads %q, not \"used MiB / total MiB\": %s", d.gpu, snippet(cell), what)
	}
	d.emit(&s)
	return true
}

// tableConv is the convention of the table's GPU rows: drivers since
// R510 leave the driver's reservation out of the used memory and count it
// in the total (ExcludesReserved, the default); older ones left it out of
// both, so the figures hold none (IncludesReservedUnknown: used is the
// logged value, with no reservation to take out). A table without its
// banner is taken as a recent driver's.
func (d *smiTextDecoder) tableConv() Convention {
	if d.oldDriver {
		return IncludesReservedUnknown
	}
	return ""
}

// preR510 reports whether a table's banner ("| NVIDIA-SMI 375.39
// Driver Version: 375.39 |") names a driver older than R510. Under WSL the
// banner gives nvidia-smi's version and the Windows driver's ("NVIDIA-SMI
// 470.57.02    Driver Version: 510.06"): the driver's is the one read.
// smiBannerRe matches the versions in the table's banner: nvidia-smi's
// and the driver's.
var smiBannerRe = lazyre.New(`NVIDIA-SMI\s+(\S+)\s+Driver Version:\s+(\S+)`)

func preR510(banner []byte) bool {
	_, v, ok := bytes.Cut(banner, []byte("Driver Version:"))
	if !ok {
		return false
	}
	v = trimSpace(v)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	major, ok := parseInt(v[:i])
	return ok && i < len(v) && v[i] == '.' && major < 510
}

// memFigure reads one side of a GPU's memory cell when its figure is
// whole (see smiMemFigureRe), in bytes.
func memFigure(b []byte) (int64, bool) {
	m := smiMemFigureRe.FindSubmatch(b)
	if m == nil {
		return 0, false
	}
	v, ok := parseInt(m[1])
	return v * MiB, ok
}

// cutGPURow warns, at line n, when the GPU row just read has no memory
// row after it: the table was cut (or edited) between the two, and that
// GPU is missing from this output's samples.
func (d *smiTextDecoder) cutGPURow(n int) {
	if !d.gpuRow {
		return
	}
	d.gpuRow = false
	d.r.meta.Warnings.Linef(n, "the table is cut after GPU %d's first row: its used / total MiB row is missing, so GPU %d is not read in this output", d.gpu, d.gpu)
}

// leadingSpace counts b's leading spaces and tabs.
func leadingSpace(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// qLine reads a line of "nvidia-smi -q": "Key : value" under indented
// section titles.
func (d *smiTextDecoder) qLine(b, t []byte) error {
	indent := leadingSpace(b)
	if !d.qBaseSet && bytes.HasPrefix(t, []byte("GPU ")) && bytes.IndexByte(t, ':') > 0 {
		d.qBase, d.qBaseSet = indent, true // "GPU 00000000:61:00.0", the excerpt's first section
	}
	indent = max(indent-d.qBase, 0)
	key, val, isKV := bytes.Cut(t, []byte(" : "))
	if !isKV {
		key, val, isKV = bytes.Cut(t, []byte(":"))
		if isKV && len(trimSpace(val)) > 0 {
			isKV = false // "$ nvidia-smi -q" or other text: not a key
		}
	}
	key, val = trimSpace(key), trimSpace(val)
	if !isKV {
		// A section title: "GPU 00000000:00:06.0", "FB Memory Usage", "Processes".
		if indent == 0 && bytes.HasPrefix(t, []byte("GPU ")) {
			if !d.started {
				d.newSnapshot(0, false)
			}
			d.flushQ()
			d.closeQProcs()
			d.qGPU++
			d.qSections++
			// By host too: a fleet's reports share bus ids. A known index
			// behind the section's place (the bus id twice in one report)
			// is not taken back.
			if bus := string(d.host) + "\x00" + string(trimSpace(t[len("GPU "):])); d.qBus[bus] > 0 {
				d.qGPU = max(d.qGPU, d.qBus[bus]-1)
			} else {
				if d.qBus == nil {
					d.qBus = map[string]int32{}
				}
				d.qBus[bus] = d.qGPU + 1 // 0: not seen
			}
			d.qUUID, d.qName = d.qUUID[:0], d.qName[:0]
			d.qFB, d.qFrom = false, d.r.line
			d.qSection = ""
			return nil
		}
		if d.qGPU >= 0 && indent > 0 {
			if d.qSection == "fb" && indent <= d.qIndent {
				d.flushQ()
			}
			switch string(t) {
			case "FB Memory Usage":
				if indent > 4 {
					// A MIG device's, nested deeper: its memory is the GPU's.
					return nil
				}
				d.qSection, d.qIndent = "fb", indent
				d.qMem = fbMem{}
			case "Processes":
				d.closeQProcs()
				d.qSection, d.qIndent = "processes", indent
				d.qProcOpen = true
			case "Accounted Processes":
				d.closeQProcs()
				d.qSection, d.qIndent = "accounted", indent
				d.acctCurPID = -1
			default:
				if indent <= d.qIndent {
					if d.qSection == "processes" {
						d.closeQProcs()
					}
					d.qSection = ""
				}
			}
		}
		return nil
	}
	if string(key) == "Timestamp" {
		if ts, ok := d.parseCtime(val); ok {
			if d.started && !d.hasSnapTime && d.qGPU < 0 {
				d.snapTime, d.hasSnapTime, d.seenTime = ts, true, true // "==== NVSMI LOG ====" came first
			} else {
				d.newSnapshot(ts, true)
			}
		}
		return nil
	}
	if d.qGPU < 0 {
		if string(key) == "Attached GPUs" {
			if v, ok := parseInt(val); ok {
				d.qAttached, d.qAttachedLine = int(v), d.r.line
			}
		}
		return nil
	}
	if string(key) == "Processes" && indent > 0 && indent <= 4 {
		// "    Processes                             : None": nvidia-smi
		// saw no process on this GPU.
		d.flushQ()
		d.closeQProcs()
		d.qSection = ""
		if string(val) == "None" {
			d.qProcLists++
		}
		return nil
	}
	if d.qSection == "processes" && indent <= d.qIndent {
		d.closeQProcs() // a key of the GPU section after its Processes
		d.qSection = ""
	}
	if d.qSection == "accounted" && indent <= d.qIndent {
		d.qSection = ""
	}
	switch d.qSection {
	case "fb":
		d.qMem.set(string(key), val)
	case "accounted":
		switch string(key) {
		case "Process ID":
			if v, ok := parseInt(val); ok {
				d.acctCurPID = v
			}
		case "Max memory usage":
			if v, ok := parseSize(val, MiB); ok {
				if d.acctProcs == 0 {
					d.acctLine = d.r.line
				}
				d.acctProcs++
				if v > d.acctMax || d.acctProcs == 1 {
					d.acctMax, d.acctPID, d.acctGPU = v, d.acctCurPID, d.qGPU
				}
			}
		}
	case "processes":
		switch string(key) {
		case "GPU instance ID", "Compute instance ID":
			v, ok := parseInt(val)
			if !ok || v < 0 || v > 1<<20 {
				v = -1
			}
			if string(key) == "GPU instance ID" {
				d.qGI, d.qCI = int32(v), -1
			} else {
				d.qCI = int32(v)
			}
		case "Process ID":
			d.qProcCut = d.qProcCut || d.qHasPID // the last one had no memory line
			d.qPID, d.qHasPID = parseInt(val)
			d.qProcName = d.qProcName[:0]
		case "Name", "Process Name":
			d.qProcName = append(d.qProcName[:0], val...)
		case "Used GPU Memory":
			if d.qHasPID {
				s := sample{timeUs: d.now(), gpu: d.qGPU, hasGPU: true, uuid: d.qUUID,
					pid: d.qPID, hasPID: true, process: d.qProcName}
				if v, ok := parseSize(val, MiB); ok {
					s.used, s.hasUsed = v, true
				} else {
					// "N/A" (WDDM, vGPU): the process is listed, its
					// memory unknown, not 0.
					if d.naProcs == 0 {
						d.naLine = d.r.line
					}
					d.naProcs++
				}
				d.emit(&s)
				if d.qGI >= 0 {
					d.migInstance(strconv.Itoa(int(d.qGPU)), strconv.Itoa(int(d.qGI)), d.r.line)
					d.r.migProcess(MIGProcess{GPU: d.qGPU, PID: d.qPID, GI: d.qGI, CI: d.qCI})
				}
			}
			d.qHasPID = false
			d.qGI, d.qCI = -1, -1
		}
	default:
		switch string(key) {
		case "Product Name":
			d.qName = append(d.qName[:0], val...)
		case "GPU UUID":
			d.qUUID = append(d.qUUID[:0], val...)
		}
	}
	return nil
}

// flushQ emits the FB memory of the current -q GPU section, once.
func (d *smiTextDecoder) flushQ() {
	if d.qSection != "fb" || !d.qMem.gpu() {
		if d.qSection == "fb" {
			d.qSection = ""
		}
		return
	}
	d.qMem.note(d.r, "FB Memory Usage's Used")
	s := d.qMem.s
	s.timeUs, s.gpu, s.hasGPU, s.uuid, s.gpuName = d.now(), d.qGPU, true, d.qUUID, d.qName
	d.emit(&s)
	d.qFB, d.qFBAny = true, true
	d.qMem.s = sample{}
	d.qSection = ""
}

func (d *smiTextDecoder) emit(s *sample) {
	d.r.emit(s)
	d.samples++
}

// migInstance notes a Processes box row of GPU gpu's MIG GPU instance gi
// (line n): the samples name the GPU, not the instance, which end's
// warning says.
func (d *smiTextDecoder) migInstance(gpu, gi string, n int) {
	if d.migLine == 0 {
		d.migLine = n
	}
	k := "GPU " + gpu + " GI " + gi
	if !slices.Contains(d.migGIs, k) && len(d.migGIs) < 16 {
		d.migGIs = append(d.migGIs, k)
	}
}

func (d *smiTextDecoder) end(n int) error {
	if len(d.migGIs) > 0 {
		d.r.meta.Warnings.Linef(d.migLine, "nvidia-smi's Processes list processes of MIG GPU instances (%s): each process is reported with its instance (GPU instance and compute instance: mig_gi and mig_ci in JSON); the instances' own size and use (the table's MIG devices box, -q's MIG Devices) are not read, and the GPU's used and total memory are the whole GPU's, not any instance's", strings.Join(d.migGIs, ", "))
	}
	d.flushQ()
	d.cutQReport(n)
	d.endQReport()
	if d.qFewer > 0 && d.r.lostHandles == 0 {
		more := ""
		switch {
		case d.qFewer == 2:
			more = " (and 1 more report so)"
		case d.qFewer > 2:
			more = fmt.Sprintf(" (and %d more reports so)", d.qFewer-1)
		}
		d.r.meta.Warnings.Linef(d.qFewerLine, "%s%s", d.qFewerWhy, more)
	}
	d.cutGPURow(n)
	d.endTable()
	var cutWhy string
	switch {
	case d.cutOutputs == 1:
		cutWhy = d.cutWhy
	case d.cutOutputs > 1:
		more := "1 more output"
		if d.cutOutputs > 2 {
			more = fmt.Sprintf("%d more outputs", d.cutOutputs-1)
		}
		cutWhy = fmt.Sprintf("%s (and %s cut)", d.cutWhy, more)
	}
	if cutWhy != "" && d.samples > 0 {
		// (An earlier output of the paste, after its own prompt, may
		// have been cut too: both are said.)
		d.r.addCut(cutWhy)
	}
	if d.naProcs > 0 {
		why := "the driver does not report per-process memory here (as under Windows' WDDM driver model)"
		if d.wddm {
			why = "the GPU runs under Windows' WDDM driver model, which does not report per-process memory"
		}
		what := fmt.Sprintf("%d processes listed (the first at line %d) show their", d.naProcs, d.naLine)
		if d.naProcs == 1 {
			what = fmt.Sprintf("1 process listed (at line %d) shows its", d.naLine)
		}
		d.r.meta.Warnings.Add(parse.InlineNote(d.naLine, -1, "%s GPU memory as N/A (%s): %s; those processes are kept with their memory unknown, not 0, and count in no sum of process memory", what, pidList(d.r.unknownPIDs, d.naProcs), why))
	}
	if d.acctProcs > 0 {
		what := fmt.Sprintf("%d processes' largest memory use over their lives", d.acctProcs)
		if d.acctProcs == 1 {
			what = "1 process's largest memory use over its life"
		}
		d.r.meta.Warnings.Linef(d.acctLine, "nvidia-smi -q's Accounted Processes list %s (at most %d MiB, pid %d on GPU %d): peaks, not samples at the report's time, so they are not read as samples; the job's processes held that much at some time", what, d.acctMax/MiB, d.acctPID, d.acctGPU)
	}
	if d.samples == 0 && d.sawMIG {
		return d.r.errorf(n, "only nvidia-smi's MIG devices box, whose rows are not read (an instance's memory is part of its GPU's): give the whole table, with its GPU rows and Processes box")
	}
	if d.samples == 0 && cutWhy != "" {
		if d.r.meta.Rows > 0 {
			// An output of a paste after others that were read
			// (after a shell prompt): what was whole is read, and
			// the input is read in part.
			d.r.addCut(cutWhy)
			return nil
		}
		return d.r.errorf(n, "no GPU memory in this nvidia-smi output: %s", cutWhy)
	}
	if d.samples == 0 {
		return d.r.errorf(n, "no GPU memory in this nvidia-smi output (no \"used MiB / total MiB\" row, no \"FB Memory Usage\" section)")
	}
	if d.seenTime {
		d.r.meta.Clock = ClockAbsolute
	} else {
		d.r.meta.Clock = ClockRowOrder
	}
	return nil
}

// stripLogStamp returns b without its Markdown quote marks and one log
// stamp after them (stripQuote, stripStamp), so that an output pasted
// from a CI or job log or quoted in Markdown reads as flush left. No line
// of nvidia-smi's or gpustat's text starts so (gpustat's GPU rows start
// "[0]").
func stripLogStamp(b []byte) []byte {
	if len(b) == 0 || b[0] != '>' && b[0] != '[' && (b[0] < '0' || b[0] > '9') {
		return b
	}
	return stripStamp(stripQuote(b))
}
