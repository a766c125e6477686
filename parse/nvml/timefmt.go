package nvml

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// civilCache turns local civil times into µs since the epoch, calling
// time.Date once per hour of the log rather than once per row.
//
// A wall time near a change of the zone's offset (daylight saving time)
// is read row by row (resolve): a time the clocks skipped when they went
// forward is read on the offset before the change; a time the clocks
// showed twice when they went back is read on the earlier offset (the
// first pass) until the log's wall clock goes back across the change,
// and on the later offset from there on (a monotone log).
type civilCache struct {
	loc  *time.Location
	key  int64
	base int64
	ok   bool
	// plain: no change of offset skips or repeats a wall time of the hour
	// of key, so base plus the minutes and seconds is exact.
	plain bool
	// prevUs is the instant us returned last, when hasPrev; foldAt the
	// change of offset (µs) the log's wall clock went back across, whose
	// repeated wall times are read on the later offset; 0 when none.
	prevUs  int64
	hasPrev bool
	foldAt  int64
	// warn and line, when set, say where the notes on skipped and
	// repeated wall times go, and the line being read.
	warn *parse.Warnings
	line *int
	// prefixLo and prefixHi are the "YYYY/MM/DD HH" of the last timestamp
	// parseTimestamp read (its bytes 0-7 and 5-12, compared as two words),
	// and py to ph its fields, when prefixOK.
	prefixLo, prefixHi uint64
	py, pmo, pd, ph    int
	prefixOK           bool
	// lastLen (0: none), lastW and lastUs are the last timestamp of 19 to
	// 24 bytes parseTimestamp read well, as three words (bytes 0-7, 8-15
	// and its last 8, which together cover it), and its instant: the rows
	// of one tick (a row per GPU) carry the same timestamp.
	lastLen int
	lastW   [3]uint64
	lastUs  int64
}

// us returns the instant of a civil time in c.loc; the fields must be in
// range (see validCivil).
func (c *civilCache) us(y, mo, d, h, mi, s int, frac int64) int64 {
	key := ((int64(y)*100+int64(mo))*100+int64(d))*100 + int64(h)
	if !c.ok || key != c.key {
		t := time.Date(y, time.Month(mo), d, h, 0, 0, 0, c.loc)
		c.base = t.UnixMicro()
		c.key, c.ok = key, true
		// The changes next to the hour's offset period are those that
		// could skip or repeat its wall times.
		hour := time.Date(y, time.Month(mo), d, h, 0, 0, 0, time.UTC).Unix()
		start, end := t.ZoneBounds()
		c.plain = !touches(c.loc, start, hour) && !touches(c.loc, end, hour)
	}
	var t int64
	if c.plain {
		t = c.base + int64(mi)*60e6 + int64(s)*1e6 + frac
	} else {
		t = c.resolve(y, mo, d, h, mi, s) + frac
	}
	c.prevUs, c.hasPrev = t, true
	return t
}

// touches reports whether the change of offset at ch (none when zero)
// skips or repeats a wall time of the hour that starts at wall time hour
// (seconds of the civil time read as UTC): the wall times from ch on the
// lesser of the two offsets to ch on the greater.
func touches(loc *time.Location, ch time.Time, hour int64) bool {
	if ch.IsZero() {
		return false
	}
	_, before := ch.Add(-time.Second).In(loc).Zone()
	_, after := ch.In(loc).Zone()
	lo, hi := ch.Unix()+int64(min(before, after)), ch.Unix()+int64(max(before, after))
	return lo < hour+3600 && hi > hour
}

// instants returns the instants (µs, earliest first) at which a clock in
// loc shows the wall time wall (seconds of the civil time read as UTC):
// none when the clocks skipped it, two when they showed it twice.
func instants(loc *time.Location, wall int64) []int64 {
	var offs []int
	t := time.Unix(wall-2*86400, 0).In(loc)
	for {
		_, off := t.Zone()
		if !slices.Contains(offs, off) {
			offs = append(offs, off)
		}
		_, end := t.ZoneBounds()
		if end.IsZero() || end.Unix() > wall+2*86400 || len(offs) > 8 {
			break
		}
		t = end.In(loc)
	}
	var out []int64
	for _, off := range offs {
		at := wall - int64(off)
		if _, o := time.Unix(at, 0).In(loc).Zone(); o == off && !slices.Contains(out, at*1e6) {
			out = append(out, at*1e6)
		}
	}
	slices.Sort(out)
	return out
}

// resolve is us near a change of offset: the instant of the civil time
// (whole seconds).
func (c *civilCache) resolve(y, mo, d, h, mi, s int) int64 {
	wall := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).Unix()
	at := instants(c.loc, wall)
	civil := time.Unix(wall, 0).UTC().Format("2006-01-02 15:04:05") // for notes
	switch len(at) {
	case 1:
		return at[0]
	case 0:
		// Skipped when the clocks went forward: read on the offset before
		// the change, as a clock not yet moved forward would show it.
		var maxOff int
		for _, off := range zoneOffsets(c.loc, wall) {
			maxOff = max(maxOff, off)
		}
		_, before := time.Unix(wall-int64(maxOff), 0).In(c.loc).Zone()
		t := (wall - int64(before)) * 1e6
		c.note("skipped", "%s does not exist in %s (the clocks went forward over it): read on the offset before the change (%s), as %s UTC; a clock in that zone does not show it: is --tz the zone of the host that wrote the log?",
			civil, c.loc, formatOffset(before), time.UnixMicro(t).UTC().Format("2006-01-02 15:04:05"))
		return t
	}
	first, second := at[0], at[len(at)-1]
	change, _ := time.UnixMicro(second).In(c.loc).ZoneBounds()
	changeUs := change.UnixMicro()
	if c.foldAt == changeUs {
		return second // the log is past the change: the second pass
	}
	if c.hasPrev && first < c.prevUs-rolloverSlack*1e6 && second >= c.prevUs-rolloverSlack*1e6 {
		// The wall clock went back across the change: the second pass.
		c.foldAt = changeUs
		before, _ := time.UnixMicro(first).In(c.loc).Zone()
		after, _ := time.UnixMicro(second).In(c.loc).Zone()
		c.note("fold "+civil[:13], "the wall clock goes back to %s at %s's change from %s to %s (%s UTC): this time and those after it in the repeated hour are read on %s, the second pass",
			civil, c.loc, before, after, change.UTC().Format("2006-01-02 15:04"), after)
		return second
	}
	if !c.hasPrev {
		before, _ := time.UnixMicro(first).In(c.loc).Zone()
		after, _ := time.UnixMicro(second).In(c.loc).Zone()
		c.note("ambiguous start", "the log starts at %s, a wall time %s shows twice (%s, then %s, when the clocks go back): read as the first (%s); if the log started after the change, its times are %s early",
			civil, c.loc, before, after, before, time.Duration(second-first)*time.Microsecond)
	}
	return first
}

// zoneOffsets are the offsets (seconds east of UTC) loc uses within two
// days of wall.
func zoneOffsets(loc *time.Location, wall int64) []int {
	var offs []int
	for _, d := range []int64{-2 * 86400, 0, 2 * 86400} {
		_, off := time.Unix(wall+d, 0).In(loc).Zone()
		offs = append(offs, off)
	}
	return offs
}

// note records a remark about the line being read, once per key.
func (c *civilCache) note(key, format string, args ...any) {
	if c.warn == nil {
		return
	}
	line := 0
	if c.line != nil {
		line = *c.line
	}
	c.warn.Once("civil "+key, parse.LineNote(line, format, args...))
}

// formatOffset writes seconds east of UTC as "+01:00".
func formatOffset(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60)
}

func validCivil(y, mo, d, h, mi, s int) bool {
	return y >= 1970 && y <= 9999 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(mo, y) &&
		h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 60
}

func daysIn(mo, y int) int {
	switch mo {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// digits reads n decimal digits of b at i.
func digits(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseTimestamp reads nvidia-smi's "YYYY/MM/DD HH:MM:SS[.fff]" and ISO
// 8601 "YYYY-MM-DD[T ]HH:MM:SS[.ffffff][Z|±HH:MM|±HHMM]". A time without
// a zone is local to loc (through c). It returns µs since the epoch.
func parseTimestamp(b []byte, c *civilCache) (int64, bool) {
	n := len(b)
	if n < 19 || n > 24 {
		return readTimestamp(b, c)
	}
	w := [3]uint64{binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16]), binary.LittleEndian.Uint64(b[n-8 : n])}
	if n == c.lastLen && w == c.lastW {
		return c.lastUs, true // the same bytes as the last: the same instant (the zone is the Reader's)
	}
	t, ok := readTimestamp(b, c)
	if ok {
		c.lastLen, c.lastW, c.lastUs = n, w, t
	}
	return t, ok
}

// readTimestamp is parseTimestamp without its cache of the last timestamp.
func readTimestamp(b []byte, c *civilCache) (int64, bool) {
	if len(b) < 19 {
		return 0, false
	}
	var y, mo, d, h int
	if c.prefixOK && binary.LittleEndian.Uint64(b[0:8]) == c.prefixLo && binary.LittleEndian.Uint64(b[5:13]) == c.prefixHi {
		// The date and hour of the row before (a log has thousands of
		// rows an hour): already read and checked.
		y, mo, d, h = c.py, c.pmo, c.pd, c.ph
	} else {
		var ok1, ok2, ok3, ok4 bool
		y, ok1 = digits(b, 0, 4)
		mo, ok2 = digits(b, 5, 2)
		d, ok3 = digits(b, 8, 2)
		h, ok4 = digits(b, 11, 2)
		sep := b[4]
		if !(ok1 && ok2 && ok3 && ok4) || (sep != '/' && sep != '-') || b[7] != sep ||
			(b[10] != ' ' && b[10] != 'T') || !validCivil(y, mo, d, h, 0, 0) {
			return 0, false
		}
		c.prefixLo, c.prefixHi = binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[5:13])
		c.py, c.pmo, c.pd, c.ph, c.prefixOK = y, mo, d, h, true
	}
	mi, ok5 := digits(b, 14, 2)
	s, ok6 := digits(b, 17, 2)
	if !(ok5 && ok6) || b[13] != ':' || b[16] != ':' || mi > 59 || s > 60 {
		return 0, false
	}
	if len(b) == 23 && (b[19] == '.' || b[19] == ',') {
		// nvidia-smi's milliseconds, as the loop below reads them.
		if ms, ok := digits(b, 20, 3); ok {
			return c.us(y, mo, d, h, mi, s, int64(ms)*1000), true
		}
	}
	i := 19
	var frac int64
	if i < len(b) && (b[i] == '.' || b[i] == ',') {
		i++
		scale := int64(100000)
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			frac += int64(b[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == start {
			return 0, false
		}
	}
	if i == len(b) {
		return c.us(y, mo, d, h, mi, s, frac), true
	}
	// A zone: Z, +HH:MM, +HHMM, +HH.
	off := 0
	switch b[i] {
	case 'Z', 'z':
		if i+1 != len(b) {
			return 0, false
		}
	case '+', '-':
		var ok bool
		if off, ok = zoneOffset(b[i:]); !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).UnixMicro() + frac
	return t - int64(off)*1e6, true
}

// parseClock reads "HH:MM:SS" into seconds of the day.
func parseClock(b []byte) (int, bool) {
	if len(b) != 8 || b[2] != ':' || b[5] != ':' {
		return 0, false
	}
	h, ok1 := digits(b, 0, 2)
	m, ok2 := digits(b, 3, 2)
	s, ok3 := digits(b, 6, 2)
	if !(ok1 && ok2 && ok3) || h > 23 || m > 59 || s > 60 {
		return 0, false
	}
	return h*3600 + m*60 + s, true
}

// parseDate8 reads dmon's "YYYYMMDD".
func parseDate8(b []byte) (y, mo, d int, ok bool) {
	if len(b) != 8 {
		return 0, 0, 0, false
	}
	y, ok1 := digits(b, 0, 4)
	mo, ok2 := digits(b, 4, 2)
	d, ok3 := digits(b, 6, 2)
	if !(ok1 && ok2 && ok3) || !validCivil(y, mo, d, 0, 0, 0) {
		return 0, 0, 0, false
	}
	return y, mo, d, true
}

// dayClock places samples that carry a time of day, or no time, on the
// time line: the date comes from the options (or 1970-01-01), and a time
// of day that goes back by more than a minute starts the next day, unless
// it is the hour the zone repeats when its clocks go back.
type dayClock struct {
	dayUs int64 // midnight of the current day, µs since the epoch (no date given)
	// civil, when a date was given: times of day are that date's civil
	// times in the zone (y, mo, d), read through the Reader's civilCache.
	civil    *civilCache
	y, mo, d int
	prevSec  int
	started  bool
}

// rolloverSlack is how far a time of day may go back (clock adjustments,
// rows printed out of order) before it is taken for the next day.
const rolloverSlack = 60

func (r *Reader) newDayClock() dayClock {
	var dc dayClock
	var y int
	var m time.Month
	var d int
	switch {
	case r.opt.hasDate:
		y, m, d = r.opt.date.Date()
		r.meta.DateGiven = true
	case r.opt.hasStart:
		y, m, d = r.opt.start.In(r.opt.loc).Date()
		r.meta.DateGiven = true
	default:
		return dc
	}
	if validCivil(y, int(m), d, 0, 0, 0) {
		dc.civil, dc.y, dc.mo, dc.d = &r.civil, y, int(m), d
	} else {
		dc.dayUs = time.Date(y, m, d, 0, 0, 0, 0, r.opt.loc).UnixMicro()
	}
	return dc
}

// at returns the instant of second sec of the day, advancing the day when
// the time of day goes back.
func (dc *dayClock) at(sec int) int64 {
	if dc.started && sec < dc.prevSec-rolloverSlack && !dc.foldsBack(sec) {
		dc.dayUs += 86400e6
		if dc.civil != nil {
			next := time.Date(dc.y, time.Month(dc.mo), dc.d+1, 0, 0, 0, 0, time.UTC)
			dc.y, dc.mo, dc.d = next.Year(), int(next.Month()), next.Day()
		}
	}
	dc.started = true
	dc.prevSec = sec
	if dc.civil != nil && validCivil(dc.y, dc.mo, dc.d, 0, 0, 0) {
		h := min(sec/3600, 23) // 23:59:60, a leap second, is second 86400
		mi := min((sec-h*3600)/60, 59)
		return dc.civil.us(dc.y, dc.mo, dc.d, h, mi, sec-h*3600-mi*60, 0)
	}
	return dc.dayUs + int64(sec)*1e6
}

// foldsBack reports whether a time of day sec that went back is the
// zone's repeated hour of this day (its clocks went back): the same day,
// later.
func (dc *dayClock) foldsBack(sec int) bool {
	if dc.civil == nil || !dc.civil.hasPrev {
		return false
	}
	wall := time.Date(dc.y, time.Month(dc.mo), dc.d, 0, 0, 0, 0, time.UTC).Unix() + int64(sec)
	at := instants(dc.civil.loc, wall)
	return len(at) == 2 && at[0] < dc.civil.prevUs && at[1] >= dc.civil.prevUs-rolloverSlack*1e6
}

// tickTime is the time of tick k of the current output of a log without
// times: k periods after the output's first tick, which is one period
// (the output's) after the last tick of the output before it.
func (r *Reader) tickTime(k int64) int64 {
	r.usePeriod()
	var start int64
	if r.opt.hasStart {
		start = r.opt.start.UnixMicro()
		r.meta.DateGiven = true
	}
	if r.periodAssumed {
		r.meta.IntervalAssumed = true
		r.assumedInterval = r.opt.interval
	}
	t := r.tickBase + k*r.opt.interval.Microseconds()
	r.tickLast, r.ticked = max(r.tickLast, t), true
	return start + t
}

// usePeriod records that a row is placed by the period: the pending note
// that a command set it is said.
func (r *Reader) usePeriod() {
	if r.periodNote != nil {
		r.meta.Warnings.Add(*r.periodNote)
		r.periodNote = nil
	}
}

// unixNumber turns a Unix time of unknown unit into µs: seconds below
// 1e11, milliseconds below 1e14, microseconds below 1e17, else nanoseconds.
func unixNumber(v float64) int64 {
	switch {
	case v < 1e11:
		return int64(v*1e6 + 0.5)
	case v < 1e14:
		return int64(v*1e3 + 0.5)
	case v < 1e17:
		return int64(v + 0.5)
	}
	return int64(v/1e3 + 0.5)
}

// weekdays and months are the names date(1) and ctime print.
var (
	weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	months   = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// isoDateRe matches a line of date -Iseconds (-Ins) or --rfc-3339=seconds
// (ns): "2026-09-17T00:00:00+08:00", "2026-09-17 00:00:00.123456789Z",
// with its zone: a loop of "date -Iseconds; nvidia-smi --query-gpu=...
// --format=csv,noheader" prints one before each output. date prints no
// fraction or nine digits; a CI log's stamp alone on a line (GitHub's
// "2024-01-01T00:00:00.0000000Z", seven) is not one.
var isoDateRe = lazyre.New(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{9})?(?:Z|[+-]\d{2}:?\d{2})$`)

// isoDate reads a line of isoDateRe as µs since the Unix epoch.
func isoDate(b []byte) (int64, bool) {
	t := trimSpace(b)
	if len(t) < 20 || len(t) > 38 || t[4] != '-' || !isoDateRe.Match(t) {
		return 0, false
	}
	v := strings.Replace(strings.Replace(string(t), " ", "T", 1), ",", ".", 1)
	if n := len(v); v[n-1] != 'Z' && v[n-3] != ':' {
		v = v[:n-2] + ":" + v[n-2:] // "+0800"
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, false
	}
	return at.UnixMicro(), true
}

// maybeDateLine is a quick test for dateFields: a line that starts with a
// weekday name and a space, of a date line's length; or one of isoDateRe's
// length that starts with a year.
func maybeDateLine(b []byte) bool {
	t := trimSpace(b)
	if len(t) >= 20 && len(t) <= 38 && t[4] == '-' && t[0] >= '0' && t[0] <= '9' {
		return true
	}
	if len(t) < 24 || len(t) > 48 || t[3] != ' ' {
		return false
	}
	switch t[0] {
	case 'M', 'T', 'W', 'F', 'S':
		return slices.Contains(weekdays, string(t[:3]))
	}
	return false
}

// dateFields reads a line of date(1)'s default output, "Thu May  2
// 10:00:00 UTC 2024" (the C locale), "Thu May  2 10:00:00 AM UTC 2024" or
// "Thu 02 May 2024 10:00:00 AM UTC" (en_US locales of coreutils): the
// civil time and the zone as printed (an abbreviation such as "CEST", or
// an offset such as "+03" or "+0530", which date prints for a zone
// without an abbreviation). A line without a zone (ctime's, nvidia-smi's
// "Thu May  2 10:00:00 2024") is not one.
func dateFields(b []byte) (y, mo, d, h, mi, s int, zone string, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 6 || len(f) > 7 || !slices.Contains(weekdays, f[0]) {
		return
	}
	ampm := ""
	var clock, day, month, year string
	if slices.Contains(months, f[1]) { // Thu May  2 10:00:00 [AM] UTC 2024
		month, day, clock = f[1], f[2], f[3]
		rest := f[4:]
		if len(rest) == 3 {
			ampm, rest = rest[0], rest[1:]
		}
		if len(rest) != 2 {
			return
		}
		zone, year = rest[0], rest[1]
	} else { // Thu 02 May 2024 10:00:00 [AM] UTC
		day, month, year, clock = f[1], f[2], f[3], f[4]
		rest := f[5:]
		if len(rest) == 2 {
			ampm, rest = rest[0], rest[1:]
		}
		zone = rest[0]
	}
	mo = slices.Index(months, month) + 1
	dd, ok1 := digits([]byte(day), 0, len(day))
	yy, ok2 := digits([]byte(year), 0, 4)
	sec, ok3 := parseClock([]byte(clock))
	if mo == 0 || !ok1 || len(day) > 2 || !ok2 || len(year) != 4 || !ok3 || !isZoneName(zone) {
		return
	}
	h, mi, s = min(sec/3600, 23), sec/60%60, sec%60
	if sec == 86400 {
		mi, s = 59, 60
	}
	switch ampm {
	case "":
	case "AM", "PM":
		if h < 1 || h > 12 {
			return
		}
		h %= 12
		if ampm == "PM" {
			h += 12
		}
	default:
		return
	}
	if !validCivil(yy, mo, dd, h, mi, s) {
		return
	}
	return yy, mo, dd, h, mi, s, zone, true
}

// isZoneName: a zone abbreviation (2 to 6 letters) or a numeric offset
// ("+03", "-0330").
func isZoneName(z string) bool {
	if len(z) >= 3 && (z[0] == '+' || z[0] == '-') {
		_, ok := zoneOffset([]byte(z))
		return ok
	}
	if len(z) < 2 || len(z) > 6 {
		return false
	}
	for _, c := range z {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// zoneOffset reads a numeric zone, "+HH", "+HHMM" or "+HH:MM" (or with
// '-'; HH at most 23, MM at most 59), into seconds east of UTC: the
// zones of ISO timestamps and of date(1)'s %z.
func zoneOffset(z []byte) (int, bool) {
	if len(z) < 3 || z[0] != '+' && z[0] != '-' {
		return 0, false
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	rest := z[1:]
	oh, ok := digits(rest, 0, 2)
	if !ok {
		return 0, false
	}
	om := 0
	switch len(rest) {
	case 2:
	case 4:
		if om, ok = digits(rest, 2, 2); !ok {
			return 0, false
		}
	case 5:
		if rest[2] != ':' {
			return 0, false
		}
		if om, ok = digits(rest, 3, 2); !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	if oh > 23 || om > 59 {
		return 0, false
	}
	return sign * (oh*3600 + om*60), true
}

// dateLine returns the instant of a line of date(1)'s output (see
// dateFields): in UTC for "UTC" or "GMT", at its offset for a numeric
// one, and otherwise in the WithLocation zone, on the offset whose
// abbreviation it prints (which tells the two passes of a repeated hour
// apart); an abbreviation the zone does not use there is noted once.
func (r *Reader) dateLine(b []byte) (int64, bool) {
	if t, ok := isoDate(b); ok {
		return t, true
	}
	y, mo, d, h, mi, s, zone, ok := dateFields(b)
	if !ok {
		return 0, false
	}
	wall := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).Unix()
	switch {
	case zone == "UTC" || zone == "GMT" || zone == "UT" || zone == "Z":
		return wall * 1e6, true
	case zone[0] == '+' || zone[0] == '-':
		off, _ := zoneOffset([]byte(zone))
		return (wall - int64(off)) * 1e6, true
	}
	for _, at := range instants(r.opt.loc, wall) {
		if name, _ := time.UnixMicro(at).In(r.opt.loc).Zone(); name == zone {
			r.civil.prevUs, r.civil.hasPrev = at, true
			return at, true
		}
	}
	t := r.civil.us(y, mo, d, h, mi, s, 0)
	name, _ := time.UnixMicro(t).In(r.opt.loc).Zone()
	r.meta.Warnings.Once("date zone", parse.LineNote(r.line, "date printed the zone %s, which is not --tz's (%s, %s there): its times are read in %s; give --tz the zone of the host that ran date", zone, r.opt.loc, name, r.opt.loc))
	return t, true
}
