package nvml

import (
	"encoding/binary"
	"time"
)

// civilCache turns local civil times into µs since the epoch, calling
// time.Date once per hour of the log rather than once per row.
type civilCache struct {
	loc  *time.Location
	key  int64
	base int64
	ok   bool
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
		c.base = time.Date(y, time.Month(mo), d, h, 0, 0, 0, c.loc).UnixMicro()
		c.key, c.ok = key, true
	}
	return c.base + int64(mi)*60e6 + int64(s)*1e6 + frac
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
		sign := 1
		if b[i] == '-' {
			sign = -1
		}
		rest := b[i+1:]
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
		off = sign * (oh*3600 + om*60)
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
// of day that goes back by more than a minute starts the next day.
type dayClock struct {
	dayUs   int64 // midnight of the current day, µs since the epoch
	prevSec int
	started bool
}

// rolloverSlack is how far a time of day may go back (clock adjustments,
// rows printed out of order) before it is taken for the next day.
const rolloverSlack = 60

func (r *Reader) newDayClock() dayClock {
	var dc dayClock
	switch {
	case r.opt.hasDate:
		y, m, d := r.opt.date.Date()
		dc.dayUs = time.Date(y, m, d, 0, 0, 0, 0, r.opt.loc).UnixMicro()
		r.meta.DateGiven = true
	case r.opt.hasStart:
		y, m, d := r.opt.start.In(r.opt.loc).Date()
		dc.dayUs = time.Date(y, m, d, 0, 0, 0, 0, r.opt.loc).UnixMicro()
		r.meta.DateGiven = true
	}
	return dc
}

// at returns the instant of second sec of the day, advancing the day when
// the time of day goes back.
func (dc *dayClock) at(sec int) int64 {
	if dc.started && sec < dc.prevSec-rolloverSlack {
		dc.dayUs += 86400e6
	}
	dc.started = true
	dc.prevSec = sec
	return dc.dayUs + int64(sec)*1e6
}

// tickTime is the time of tick k of a log without times.
func (r *Reader) tickTime(k int64) int64 {
	var start int64
	if r.opt.hasStart {
		start = r.opt.start.UnixMicro()
		r.meta.DateGiven = true
	}
	return start + k*r.opt.interval.Microseconds()
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
