package nvml

import (
	"bytes"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// pynvmlTextDecoder reads the lines a program prints with
// print(pynvml.nvmlDeviceGetMemoryInfo(handle)): pynvml's (nvidia-ml-py's)
// _PrintableStructure.__str__ of c_nvmlMemory_t, every field "%d B",
//
//	c_nvmlMemory_t(total: 85899345920 B, free: 84987412480 B, used: 911933440 B)
//
// and of c_nvmlMemory_v2_t (nvmlDeviceGetMemoryInfo(h, version=nvmlMemory_v2)),
//
//	c_nvmlMemory_v2_t(version: 33554472 B, total: ... B, reserved: ... B, free: ... B, used: ... B)
//
// anywhere in a line of a program's log, behind a logger's date and time
// or none; the log's other lines are not read. v1's used counts the
// driver's reservation (used + free = total); v2's does not, and gives it
// (reserved). The printout names no GPU: a printout is GPU k where it is
// the k-th at one time (a loop over the GPUs at one logging instant) or
// on one line (several printed together), else GPU 0, as a warning says. A line with a date and time
// (ISO 8601, "2024-05-01 10:00:00,123", in brackets or not) is at that
// time; without, lines are placed by order, one interval apart.
type pynvmlTextDecoder struct {
	r *Reader

	// dated: the first printout had a date and time; all must then.
	dated, started bool
	lastUs         int64
	place          int32 // the printout's place at its time
	ticks          int64 // row-order instants
	maxPlace       int32
	undated        int // printouts without a time in a dated log
	undatedFirst   int
	nvmlErrors     int // pynvml's exception lines seen
}

func newPynvmlTextDecoder(r *Reader) *pynvmlTextDecoder { return &pynvmlTextDecoder{r: r} }

// pynvmlStructRe matches one printout of c_nvmlMemory_t or
// c_nvmlMemory_v2_t; its group is the fields between the parentheses.
var pynvmlStructRe = lazyre.New(`c_nvmlMemory(?:_v2)?_t\(((?:[a-z_]+: -?\d+ B(?:, )?)+)\)`)

// pynvmlErrorRe matches pynvml's exception line (the last line of its
// traceback): pynvml.NVMLError_NotSupported: Not Supported.
var pynvmlErrorRe = lazyre.New(`^([\w.]+\.)?NVMLError_\w+: .+`)

// pynvmlErrorMark is what a line must hold to be pynvmlErrorRe's.
var pynvmlErrorMark = []byte("NVMLError_")

// pynvmlStructMark is what a line must hold to be a printout.
var pynvmlStructMark = []byte("c_nvmlMemory")

// isPynvmlText reports whether head holds a printout of c_nvmlMemory_t
// or c_nvmlMemory_v2_t (pynvmlStructRe).
func isPynvmlText(head []byte) bool {
	return bytes.Contains(head, pynvmlStructMark) && pynvmlStructRe.Re().Match(head)
}

// leadingTime reads a log stamp with a date at the start of b
// ("2024-05-01 10:00:00,123 ", "[2024-05-01T10:00:00.123Z] ").
func (d *pynvmlTextDecoder) leadingTime(b []byte) (int64, bool) {
	loc := stampRe.Re().FindIndex(b)
	if loc == nil {
		return 0, false
	}
	s := bytes.TrimLeft(b[:loc[1]], "[")
	if i := bytes.IndexAny(s, "] \t"); i >= 0 && i >= 19 {
		s = s[:i]
	} else if i := bytes.IndexAny(s, "]\t"); i >= 0 {
		s = s[:i]
	}
	s = bytes.TrimSpace(s)
	if len(s) < 19 {
		return 0, false // a time of day alone
	}
	return parseTimestamp(s, &d.r.civil)
}

// maxPrintoutsPerLine bounds the printouts read from one line.
const maxPrintoutsPerLine = 64

// printout reads the fields of one printout (pynvmlStructRe's group:
// "total: N B, free: N B, used: N B") of line n.
func (d *pynvmlTextDecoder) printout(fields []byte, n int) (sample, error) {
	s := sample{conv: IncludesReserved, hasGPU: true}
	for _, f := range bytes.Split(fields, []byte(", ")) {
		i := bytes.Index(f, []byte(": "))
		if i < 0 {
			continue
		}
		v, ok := parseInt(bytes.TrimSuffix(f[i+2:], []byte(" B")))
		if !ok || v < 0 {
			return s, d.r.rowErrorf(n, "%q is not a size in bytes", f)
		}
		switch string(f[:i]) {
		case "total":
			s.total, s.hasTotal = v, true
		case "free":
			s.free, s.hasFree = v, true
		case "used":
			s.used, s.hasUsed = v, true
		case "reserved":
			s.reserved, s.hasReserved = v, true
		}
	}
	if !s.hasUsed {
		return s, d.r.rowErrorf(n, "a printout of c_nvmlMemory_t without used")
	}
	return s, nil
}

func (d *pynvmlTextDecoder) line(b []byte, n int) error {
	if !bytes.Contains(b, pynvmlStructMark) {
		if bytes.Contains(b, pynvmlErrorMark) {
			if m := pynvmlErrorRe.Re().Find(bytes.TrimSpace(b)); m != nil && d.nvmlErrors == 0 {
				d.nvmlErrors++
				d.r.meta.Warnings.Linef(n, "pynvml's error %q: an NVML call of the program's failed there (this one query, or NVML as a whole: the error's name says which), so the program may have stopped sampling; the printouts of c_nvmlMemory_t before it are read", string(m))
			}
		}
		return nil // the program's other output
	}
	ms := pynvmlStructRe.Re().FindAllSubmatch(b, maxPrintoutsPerLine)
	if ms == nil {
		return d.r.rowErrorf(n, "%q is not a whole printout of pynvml's c_nvmlMemory_t (\"c_nvmlMemory_t(total: N B, free: N B, used: N B)\"): cut or damaged", snippet(bytes.TrimSpace(b)))
	}
	samples := make([]sample, 0, len(ms))
	for _, m := range ms {
		s, err := d.printout(m[1], n)
		if err != nil {
			return err
		}
		samples = append(samples, s)
	}
	t, dated := d.leadingTime(b)
	if !d.started {
		d.started, d.dated = true, dated
		if !dated {
			d.r.meta.Clock = ClockRowOrder
			d.r.rowOrderWarn("the printouts of pynvml's c_nvmlMemory_t carry no time: they are placed by order, each line an interval after the one before")
		}
	}
	switch {
	case d.dated && !dated:
		if d.undated == 0 {
			d.undatedFirst = n
		}
		d.undated++
		return nil
	case d.dated:
		if d.r.meta.Ticks > 0 && t == d.lastUs {
			d.place++
		} else {
			d.place = 0
		}
		d.lastUs = t
	default:
		// A line is one instant: its printouts are GPUs 0, 1, ...
		t = d.r.tickTime(d.ticks)
		d.ticks++
		d.place = 0
	}
	for i := range samples {
		if i > 0 {
			d.place++
		}
		s := &samples[i]
		s.gpu = d.place
		d.maxPlace = max(d.maxPlace, d.place)
		s.timeUs = t
		d.r.emit(s)
	}
	return nil
}

func (d *pynvmlTextDecoder) end(n int) error {
	if d.r.meta.Ticks == 0 {
		return d.r.errorf(n, "no whole printout of pynvml's c_nvmlMemory_t")
	}
	gpus := "a printout is read as GPU k where it is the k-th on its line, else as GPU 0, one GPU's series (a loop that prints several GPUs' on lines of their own, without a time on each, would mix them: print the index beside it, or log pynvml samples as JSON lines)"
	if d.dated {
		gpus = "a printout is read as GPU k where it is the k-th at one time (a loop over the GPUs at one logging instant), else as GPU 0"
	}
	d.r.meta.Warnings.Addf("pynvml's printout of nvmlDeviceGetMemoryInfo names no GPU: %s", gpus)
	if d.undated > 0 {
		d.r.meta.Warnings.Linef(d.undatedFirst, "%d printouts of c_nvmlMemory_t without a date and time, in a log whose first has one, are not read (this the first)", d.undated)
	}
	return nil
}
