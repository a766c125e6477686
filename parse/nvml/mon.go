package nvml

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// monDecoder reads nvidia-smi dmon and pmon text.
type monDecoder struct {
	r    *Reader
	pmon bool
	// ticksAt is the ticks read before this output (a paste's earlier
	// outputs): a header after them without rows of its own is an
	// output without rows.
	ticksAt int64

	names     []string
	wantUnits bool
	iDate     int
	iTime     int
	iGPU      int
	iFB       int
	iPID      int
	iCmd      int
	fbUnit    int64

	day   dayClock
	ticks ticker
	spans [][2]int

	// rowEnd: where the rows under the current header end (cutLast): 0
	// before the first, -1 once two differ (a paste that collapsed the
	// columns' spaces, a value wider than its column).
	rowEnd int

	// headerErr is what is wrong with the current header (no fb column,
	// no pid column in pmon): the error of its first row, or of the end
	// when no row follows. A header of other columns that comes before
	// any row replaces it: some drivers print pmon's header twice, first
	// without fb, then with it (NordicHPC/sonar's pmon -s mu text).
	headerErr error
}

// headerPending reports whether dec has read a header whose fault
// (headerErr) awaits a row: whether its output is read is not yet known.
func headerPending(dec decoder) bool {
	d, ok := dec.(*monDecoder)
	return ok && d.headerErr != nil
}

func newMonDecoder(r *Reader, pmon bool) *monDecoder {
	return &monDecoder{r: r, pmon: pmon, day: r.newDayClock(), ticksAt: r.meta.Ticks}
}

// wordSpans appends the spans of b's whitespace-separated words to s.
func wordSpans(b []byte, s [][2]int) [][2]int {
	i := 0
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return s
		}
		j := i
		for j < len(b) && !isSpace(b[j]) {
			j++
		}
		s = append(s, [2]int{i, j})
		i = j
	}
}

func words(b []byte) []string {
	var out []string
	for _, s := range wordSpans(b, nil) {
		out = append(out, string(b[s[0]:s[1]]))
	}
	return out
}

func (d *monDecoder) line(raw []byte, n int) error {
	b := trimSpace(raw)
	if len(b) == 0 {
		return nil
	}
	if b[0] == '#' {
		if w := words(b[1:]); d.commentedRow(w) {
			// A row behind "#", as a paste that put every line of the
			// output behind one gives it: read as the row it is.
			d.r.meta.Warnings.Once("commented rows", parse.LineNote(n, "rows behind \"#\" (%q) are read as rows: a paste that put the output's lines behind \"#\", its header's too", snippet(b)))
			return d.line(b[1:], n)
		}
		return d.header(words(b[1:]), n)
	}
	if d.r.skipTagged(b, n, "nvidia-smi") {
		return nil
	}
	if d.r.lostHandle(b, n) {
		// nvidia-smi's line for a GPU it cannot reach, in a log that
		// took its standard error too: said by lostHandleNote.
		return nil
	}
	if d.names == nil {
		return d.r.errorf(n, "a row before the \"#\" header line that names the columns")
	}
	if d.headerErr != nil {
		return d.headerErr
	}
	d.spans = wordSpans(b, d.spans[:0])
	if len(d.spans) < len(d.names) {
		return d.r.rowErrorf(n, "%d columns, but the header names %d (%s): truncated or damaged row", len(d.spans), len(d.names), strings.Join(d.names, " "))
	}
	if len(d.spans) > len(d.names) {
		if d.iCmd != len(d.names)-1 {
			return d.r.rowErrorf(n, "%d columns, but the header names %d (%s)", len(d.spans), len(d.names), strings.Join(d.names, " "))
		}
		// A command name with spaces: the last column takes the rest.
		d.spans[d.iCmd][1] = d.spans[len(d.spans)-1][1]
		d.spans = d.spans[:len(d.names)]
	}
	word := func(i int) []byte { return b[d.spans[i][0]:d.spans[i][1]] }

	s := sample{conv: ExcludesReserved}
	gpu, ok := parseInt(word(d.iGPU))
	if !ok || gpu < 0 || gpu > 1<<31-1 {
		return d.r.rowErrorf(n, "gpu: %q is not a GPU index", word(d.iGPU))
	}
	s.gpu, s.hasGPU = int32(gpu), true
	end := d.lastEnd(raw)
	if d.r.noEOL {
		if err := d.cutLast(&s, word, end, n); err != nil {
			return err
		}
	} else if d.rowEnd == 0 {
		d.rowEnd = end
	} else if d.rowEnd != end {
		d.rowEnd = -1
	}
	pid := int64(-1)
	if d.pmon {
		s.conv = Process
		if v := word(d.iPID); !dash(v) {
			if pid, ok = parseInt(v); !ok || pid < 0 {
				return d.r.rowErrorf(n, "pid: %q is not a process id", v)
			}
			s.pid, s.hasPID = pid, true
		}
		if d.iCmd >= 0 {
			if v := word(d.iCmd); !dash(v) {
				s.process = v
			}
		}
	}
	t, err := d.time(word, s.gpu, pid, n)
	if err != nil {
		return err
	}
	s.timeUs = t
	if d.pmon && !s.hasPID {
		d.r.tick(t, 0, false) // no process on this GPU now: no sample, but the log goes on
		return nil
	}
	if d.unreachable(word) {
		// Every reading failed: the row (its used memory null, as a
		// CSV's "[GPU is lost]") is no sample, and the log says why.
		if d.r.unreachable == 0 {
			d.r.unreachableLine, d.r.unreachableWhat = n, `"-" in fb and in every other column of readings`
		}
		d.r.unreachable++
	}
	if v := word(d.iFB); !dash(v) {
		x, ok := parseSize(v, d.fbUnit)
		if !ok {
			return d.r.rowErrorf(n, "fb: %q is not a size", v)
		}
		s.used, s.hasUsed = x, true
	}
	d.r.emit(&s)
	return nil
}

// unreachable reports whether a dmon row has "-" in fb and in every
// other column of readings (all but Date, Time and gpu), with at least
// one such other column: dmon prints "-" for a reading NVML could not
// give (nvidia-smi(1), "Device Monitoring": "any other error in fetching
// the metric is reported as -"), and a GPU NVML cannot reach at all
// (fallen off the bus, Xid 79) fails every one. A GPU that lacks one
// reading (fb "-" beside sm and mem values) is not unreachable. Never for
// pmon, whose "-" rows are a GPU with no process.
func (d *monDecoder) unreachable(word func(int) []byte) bool {
	if d.pmon {
		return false
	}
	others := 0
	for i := range d.names {
		if i == d.iDate || i == d.iTime || i == d.iGPU {
			continue
		}
		if !dash(word(i)) {
			return false
		}
		if i != d.iFB {
			others++
		}
	}
	return others > 0
}

// dash reports whether a column's value is "-": no process (pmon), or a
// reading NVML could not give.
func dash(v []byte) bool { return len(v) == 1 && v[0] == '-' }

// lastEnd is where row raw (as read, its leading spaces kept) ends, as
// cutLast measures it: after its last digit where the last column is fb
// (dmon pads its numbers on the left, and after the last column with one
// space, whose loss cuts nothing); after its padding where it is pmon's
// command (padded on the right: a cut anywhere in it may have cut the
// name).
func (d *monDecoder) lastEnd(raw []byte) int {
	raw = bytes.TrimRight(raw, "\r\n")
	if d.iFB == len(d.names)-1 {
		raw = bytes.TrimRight(raw, " \t")
	}
	return len(raw)
}

// cutLast returns the row error of the input's last line, which has no
// line ending, when its last column is one gpuleak reads (fb, or pmon's
// command) and reads as cut short. nvidia-smi dmon and pmon print fixed
// columns, so every whole row ends at the same place (rowEnd): a row
// that ends before it stopped inside its last column, even where what
// is left ("40" of "40000") reads as a value; a last row that ends there
// is whole, whatever its value (a release to 3 MiB is right-aligned in
// the same column). Where the rows before it do not all end at one place
// (a paste that collapsed the spaces), an fb with fewer digits than the
// same GPU's (or process's) value before it is taken as cut, as for
// nvidia-smi's CSV without units. A last column gpuleak does not read
// (bar1, ccpm, ...: dmon's fb is never last) is whole where it matters:
// the row is read. Limit: a cut that leaves a value wider than its
// column (an fb of 6 digits in a column of 5) still ending at rowEnd is
// not seen.
func (d *monDecoder) cutLast(s *sample, word func(int) []byte, end, n int) error {
	last := len(d.names) - 1
	if last != d.iFB && (!d.pmon || last != d.iCmd) {
		return nil
	}
	v := word(last)
	if d.rowEnd > 0 {
		if end < d.rowEnd {
			return d.r.rowErrorf(n, "%s", cutNote(d.names[last], v, fmt.Sprintf("ends at byte %d of the line, before byte %d, where every row before it ends", end, d.rowEnd)))
		}
		return nil
	}
	if last != d.iFB || d.rowEnd == 0 || v[0]-'0' > 9 {
		return nil
	}
	if d.pmon {
		pid, ok := parseInt(word(d.iPID))
		if !ok {
			return nil
		}
		s.pid, s.hasPID = pid, true
	}
	prev, ok := d.r.prevValue(s, roleUsed)
	if !ok || prev < d.fbUnit {
		return nil
	}
	if p := digitsOf(float64(prev / d.fbUnit)); intDigits(v) < p {
		return d.r.rowErrorf(n, "%s", cutNote(d.names[last], v, fmt.Sprintf("has fewer digits than the same series' value before it (%d)", prev/d.fbUnit)))
	}
	return nil
}

// time places a row in time from its Date and Time columns, its Time
// column, or its order.
func (d *monDecoder) time(word func(int) []byte, gpu int32, pid int64, n int) (int64, error) {
	var y, mo, dd, sec int
	var ok bool
	if d.iDate >= 0 {
		if y, mo, dd, ok = parseDate8(word(d.iDate)); !ok {
			return 0, d.r.rowErrorf(n, "Date: %q is not YYYYMMDD", word(d.iDate))
		}
	}
	if d.iTime >= 0 {
		if sec, ok = parseClock(word(d.iTime)); !ok {
			return 0, d.r.rowErrorf(n, "Time: %q is not HH:MM:SS", word(d.iTime))
		}
	}
	switch {
	case d.iDate >= 0 && d.iTime >= 0:
		return d.r.civil.us(y, mo, dd, sec/3600, sec/60%60, sec%60, 0), nil
	case d.iTime >= 0:
		return d.day.at(sec), nil
	}
	k := d.ticks.next(gpu, true, nil, pid)
	if d.iDate >= 0 {
		d.r.usePeriod()
		return d.r.civil.us(y, mo, dd, 0, 0, 0, 0) + k*d.r.opt.interval.Microseconds(), nil
	}
	return d.r.tickTime(k), nil
}

// header reads a "#" line: the column names, or the units line after them.
// commentedRow reports whether w, the words of a "#" line after the
// header and its units line, are a row: as many words as the header names
// (more for pmon's command), the gpu column an index and the fb column
// (when there is one) a number or "-".
func (d *monDecoder) commentedRow(w []string) bool {
	if d.names == nil || d.wantUnits || len(w) < len(d.names) || d.iGPU < 0 || d.iGPU >= len(w) {
		return false
	}
	if len(w) > len(d.names) && d.iCmd != len(d.names)-1 {
		return false
	}
	if _, ok := parseInt([]byte(w[d.iGPU])); !ok {
		return false
	}
	if d.iFB >= 0 && d.iFB < len(w) && w[d.iFB] != "-" {
		if _, ok := parseInt([]byte(w[d.iFB])); !ok {
			return false
		}
	}
	return true
}

func (d *monDecoder) header(w []string, n int) error {
	if len(w) == 0 {
		return nil
	}
	if d.wantUnits {
		d.wantUnits = false
		if len(w) == len(d.names) && d.iFB >= 0 {
			u := w[d.iFB]
			if x, ok := unitBytes([]byte(u)); ok {
				d.fbUnit = x
			} else {
				return d.r.errorf(n, "fb: unknown unit %q", u)
			}
		}
		return nil
	}
	isNames := false
	for _, x := range w {
		isNames = isNames || strings.EqualFold(x, "gpu")
	}
	if !isNames {
		return nil // another comment
	}
	d.wantUnits = true
	if slices.Equal(w, d.names) {
		return nil // the header dmon repeats every few dozen rows
	}
	d.names = w
	d.rowEnd = 0
	d.iDate, d.iTime, d.iGPU, d.iFB, d.iPID, d.iCmd = -1, -1, -1, -1, -1, -1
	d.fbUnit = MiB
	for i, x := range w {
		switch strings.ToLower(x) {
		case "date":
			d.iDate = i
		case "time":
			d.iTime = i
		case "gpu":
			d.iGPU = i
		case "fb":
			d.iFB = i
		case "pid":
			d.iPID = i
		case "command":
			d.iCmd = i
		}
	}
	tool, sel := "dmon", "-s m"
	if d.pmon {
		tool = "pmon"
	}
	d.headerErr = nil
	switch {
	case d.iFB < 0:
		d.headerErr = d.r.noMemoryf(n, "the %s log has no fb column (columns: %s); record memory with nvidia-smi %s %s", tool, strings.Join(w, " "), tool, sel)
	case d.pmon && d.iPID < 0:
		d.headerErr = d.r.errorf(n, "a pmon header without a pid column (columns: %s)", strings.Join(w, " "))
	case !d.pmon && d.iPID >= 0:
		d.headerErr = d.r.errorf(n, "a pmon header (with a pid column) in a dmon log")
	}
	if d.headerErr != nil {
		return nil
	}
	d.r.meta.Fields = append([]string(nil), w...)
	d.r.meta.Header = true
	switch {
	case d.iDate >= 0 && d.iTime >= 0:
		d.r.meta.Clock = ClockAbsolute
	case d.iTime >= 0:
		d.r.meta.Clock = ClockTimeOfDay
		if !d.r.opt.hasDate && !d.r.opt.hasStart {
			d.r.meta.Warnings.Addf("the log has times of day but no dates (%s -o T): dates are unknown and shown as 1970-01-01; give the day with gpuleak trend --date", tool)
		}
	default:
		d.r.meta.Clock = ClockRowOrder
		d.r.rowOrderWarn(fmt.Sprintf("the log has no times (%s without -o DT): samples are placed %v apart by row order", tool, d.r.opt.interval))
	}
	return nil
}

func (d *monDecoder) end(n int) error {
	if d.names == nil {
		return d.r.errorf(n, "no \"#\" header line naming the columns")
	}
	if d.headerErr != nil {
		return d.headerErr
	}
	if d.r.meta.Ticks == d.ticksAt {
		return d.r.errorf(n, "a header without rows")
	}
	return nil
}
