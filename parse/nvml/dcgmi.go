package nvml

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// dcgmiDecoder reads dcgmi dmon text (DCGM's command-line monitor):
//
//	#Entity   GPUTL             FBUSD             FBFRE
//	ID
//	GPU 0     0                 1024              80000
//
// The "#Entity" line names the columns by DCGM's short field names, the
// line after it (starting with "ID") gives their units, and each row
// starts with its entity: a group ("GPU", "GPU-I", "GPU-CI", "vGPU",
// "Switch", ...) and DCGM's id within it. dcgmi repeats both header lines
// every 14 rows. A value DCGM cannot give is "N/A". Rows carry no time:
// they are placed by order, a tick ending where a GPU id does not
// increase, as for nvidia-smi dmon without -o.
type dcgmiDecoder struct {
	r *Reader

	names  []string // the column names after "#Entity"
	iUsed  int      // indices into names; -1 when absent
	iTotal int
	iFree  int
	iResv  int

	ticks ticker
	spans [][2]int

	// otherEntities counts the rows of entities other than a whole GPU
	// (MIG instances, NVSwitches), by group, in order of first sight.
	otherEntities map[string]int
	otherOrder    []string
	otherFirst    int
}

func newDcgmiDecoder(r *Reader) *dcgmiDecoder {
	return &dcgmiDecoder{r: r}
}

// dcgmiStopped is the line dcgmi dmon prints when Ctrl-C stops it ("dmon
// was stopped do to receiving a signal", sic).
var dcgmiStopped = []byte("dmon was stopped")

func (d *dcgmiDecoder) line(b []byte, n int) error {
	b = trimSpace(b)
	if len(b) == 0 {
		return nil
	}
	if bytes.HasPrefix(b, []byte("#Entity")) {
		return d.header(words(b[len("#Entity"):]), n)
	}
	if d.r.skipTagged(b, n, "dcgmi") {
		return nil
	}
	if d.names == nil {
		return d.r.errorf(n, "a row before the \"#Entity\" header line that names the columns")
	}
	if bytes.HasPrefix(b, []byte("ID")) && (len(b) == 2 || isSpace(b[2])) {
		return nil // the units line under the header: DCGM gives none for the FB fields (MiB)
	}
	if bytes.Contains(b, dcgmiStopped) {
		return nil
	}
	d.spans = wordSpans(b, d.spans[:0])
	word := func(i int) []byte { return b[d.spans[i][0]:d.spans[i][1]] }
	if len(d.spans) < 2 {
		return d.r.rowErrorf(n, "%q is not a dcgmi dmon row (an entity, such as \"GPU 0\", then the values)", snippet(b))
	}
	group := string(word(0))
	id, ok := parseInt(word(1))
	if !ok || id < 0 || id > 1<<31-1 {
		return d.r.rowErrorf(n, "%q is not a dcgmi dmon row: %q is not an entity id", snippet(b), word(1))
	}
	if got := len(d.spans) - 2; got != len(d.names) {
		return d.r.rowErrorf(n, "%d values, but the header names %d (%s): truncated or damaged row", got, len(d.names), strings.Join(d.names, " "))
	}
	if group != "GPU" {
		// DCGM names a MIG instance (GPU-I, GPU-CI) by its own entity id,
		// which does not say which GPU holds it; an NVSwitch has no
		// frame buffer.
		if d.otherEntities == nil {
			d.otherEntities = map[string]int{}
			d.otherFirst = n
		}
		if d.otherEntities[group] == 0 {
			d.otherOrder = append(d.otherOrder, group)
		}
		d.otherEntities[group]++
		return nil
	}
	s := sample{conv: ExcludesReserved, gpu: int32(id), hasGPU: true}
	if d.r.noEOL {
		if err := d.cutLast(&s, word(len(d.spans)-1), n); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		i   int
		v   *int64
		has *bool
	}{{d.iUsed, &s.used, &s.hasUsed}, {d.iTotal, &s.total, &s.hasTotal}, {d.iFree, &s.free, &s.hasFree}, {d.iResv, &s.reserved, &s.hasReserved}} {
		if c.i < 0 {
			continue
		}
		v := word(c.i + 2)
		if isPlaceholder(v) {
			switch {
			case c.i == d.iTotal:
				d.r.totalPlaceholders++ // see unifiedNoMemory
			case c.i == d.iUsed && d.r.usedPlaceholder == "":
				d.r.usedPlaceholder, d.r.usedField = string(v), "FBUSD"
			}
			continue
		}
		x, ok := parseSize(v, MiB)
		if !ok {
			return d.r.rowErrorf(n, "%s: %q is not a size in MiB", d.names[c.i], v)
		}
		*c.v, *c.has = x, true
	}
	s.timeUs = d.r.tickTime(d.ticks.next(s.gpu, true, nil, -1))
	d.r.emit(&s)
	return nil
}

// cutLast returns the row error of the input's last line, which has no
// line ending, when its last value v, one gpuleak reads (FBUSD, FBTTL,
// FBFRE, FBRSV), has fewer digits than the same GPU's value in the row
// before ("40" after "40000"). dcgmi aligns its columns to the left and
// pads none after the last, so a cut there leaves a number as whole as
// any, and no width to tell it by: the digits are the evidence, as for
// the DCGM exporter's text (dcgmDecoder.cutLast). A whole last row without
// a line ending (a paste) has as many digits as the value before it, or
// no value of its GPU before it, and is read; a GPU that really gave
// back all but a few digits' worth in its last row is dropped, with the
// note (one sample, said, rather than a "release" that may be a cut). A
// last column gpuleak does not read (GPUTL, ...) is whole where it
// matters: the row is read.
func (d *dcgmiDecoder) cutLast(s *sample, v []byte, n int) error {
	last := len(d.names) - 1
	var role smiRole
	switch last {
	case d.iUsed:
		role = roleUsed
	case d.iTotal:
		role = roleTotal
	case d.iFree:
		role = roleFree
	case d.iResv:
		role = roleReserved
	default:
		return nil
	}
	if isPlaceholder(v) {
		return nil
	}
	prev, ok := d.r.prevValue(s, role)
	if !ok || prev < MiB {
		return nil
	}
	if p := digitsOf(float64(prev / MiB)); intDigits(v) < p {
		return d.r.rowErrorf(n, "%s", cutNote(d.names[last], v, fmt.Sprintf("has fewer digits than the same GPU's value before it (%d)", prev/MiB)))
	}
	return nil
}

// header reads the "#Entity" line's column names (DCGM's short names:
// FBUSD used, FBTTL total, FBFRE free, FBRSV reserved, in MiB).
func (d *dcgmiDecoder) header(w []string, n int) error {
	if slices.Equal(w, d.names) {
		return nil // repeated every 14 rows
	}
	if d.names != nil {
		return d.r.errorf(n, "another \"#Entity\" header with other columns (%s, was %s): two dcgmi dmon runs in one log", strings.Join(w, " "), strings.Join(d.names, " "))
	}
	d.names = w
	d.iUsed, d.iTotal, d.iFree, d.iResv = -1, -1, -1, -1
	for i, x := range w {
		switch strings.ToUpper(x) {
		case "FBUSD":
			d.iUsed = i
		case "FBTTL":
			d.iTotal = i
		case "FBFRE":
			d.iFree = i
		case "FBRSV":
			d.iResv = i
		}
	}
	if d.iUsed < 0 {
		return d.r.noMemoryf(n, "the dcgmi dmon log has no FBUSD column (columns: %s); record used memory with dcgmi dmon -e 252 (DCGM_FI_DEV_FB_USED; 250 total, 251 free)", strings.Join(w, " "))
	}
	d.r.meta.Fields = append([]string(nil), w...)
	d.r.meta.Header = true
	d.r.meta.Clock = ClockRowOrder
	d.r.meta.Warnings.Addf("the log has no times (dcgmi dmon prints none): samples are placed %v apart by row order%s%s", d.r.opt.interval, d.r.rowOrderStart(), dcgmiPeriodAdvice(d.r.intervalGiven))
	return nil
}

func (d *dcgmiDecoder) end(n int) error {
	if d.names == nil {
		return d.r.errorf(n, "no \"#Entity\" header line naming the columns")
	}
	if len(d.otherEntities) > 0 {
		var parts []string
		for _, g := range d.otherOrder {
			parts = append(parts, rowsOf(d.otherEntities[g], g))
		}
		d.r.meta.Warnings.Linef(d.otherFirst, "%s not read: dcgmi names a MIG instance by DCGM's entity id, which does not say which GPU holds it (an NVSwitch has no memory); the GPU rows are read", strings.Join(parts, ", "))
	}
	if d.r.meta.Ticks == 0 {
		if len(d.otherEntities) > 0 {
			return d.r.errorf(n, "no row of a whole GPU (\"GPU 0\"): only %s rows, which gpuleak does not read", strings.Join(d.otherOrder, ", "))
		}
		return d.r.errorf(n, "a header without rows")
	}
	return nil
}

// rowsOf is "1 GPU-I row", "3 GPU-I rows".
func rowsOf(k int, group string) string {
	if k == 1 {
		return "1 " + group + " row"
	}
	return strconv.Itoa(k) + " " + group + " rows"
}

// dcgmiPeriodAdvice asks for dcgmi's -d period unless --interval gave it.
func dcgmiPeriodAdvice(given bool) string {
	if given {
		return ""
	}
	return "; give dcgmi's -d period with gpuleak trend --interval"
}
