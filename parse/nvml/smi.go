package nvml

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// smiRole is what a CSV column feeds in a sample.
type smiRole int

const (
	roleIgnore smiRole = iota
	roleTime
	roleIndex
	roleUUID
	roleGPUName
	rolePID
	roleProcess
	roleTotal
	roleUsed
	roleFree
	roleReserved
	// roleHost: a column no nvidia-smi query has, that a fleet's
	// collection script adds before merging its hosts' logs into one CSV
	// ("hostname, timestamp, index, memory.used [MiB], ..."): the row's
	// host, as a fleet log's prefix gives it.
	roleHost
	// roleBusID: the GPU's PCI bus id ("00000000:3B:00.0"), which names
	// a GPU of its host as its index and UUID do.
	roleBusID
)

// smiRoleOf maps a --query-gpu or --query-compute-apps field name to its
// role; apps says which query ("name" is the process there).
func smiRoleOf(name string, apps bool) smiRole {
	switch name {
	case "timestamp":
		return roleTime
	case "index", "gpu_index":
		return roleIndex
	case "uuid", "gpu_uuid":
		return roleUUID
	case "gpu_name":
		return roleGPUName
	case "name":
		if apps {
			return roleProcess
		}
		return roleGPUName
	case "pid":
		return rolePID
	case "process_name":
		return roleProcess
	case "memory.total":
		return roleTotal
	case "memory.used", "used_memory", "used_gpu_memory":
		return roleUsed
	case "memory.free":
		return roleFree
	case "memory.reserved":
		return roleReserved
	case "pci.bus_id":
		return roleBusID
	case "hostname", "host", "nodename":
		// ("node" alone is as often a NUMA node's number.)
		return roleHost
	}
	return roleIgnore
}

func isText(r smiRole) bool { return r == roleGPUName || r == roleProcess }

func isSize(r smiRole) bool { return r >= roleTotal && r <= roleReserved }

type smiCol struct {
	name string
	role smiRole
	unit int64 // bytes per unit of values without one
}

// smiDecoder reads nvidia-smi --query-gpu and --query-compute-apps CSV.
type smiDecoder struct {
	r    *Reader
	apps bool
	// rowsAt is the rows read before this output (a paste's earlier
	// outputs): a header after them without rows of its own is an
	// output without rows.
	rowsAt int64
	// cmdFields are the fields of the query command that made the output
	// (commandFields), for a header-less one: after WithFields, before
	// the defaults.
	cmdFields []string
	// firstSkip and firstSkipLine are the first line skipped as a
	// message or a comment (said in an output that has no rows), and
	// comments whether it was a comment.
	firstSkip     string
	firstSkipLine int
	comment       bool
	// assumed: the columns are the default fields, nothing having named
	// them (no header, WithFields or query command).
	assumed bool
	cols    []smiCol
	header  bool
	text    []int // columns that may hold commas (names)
	hasTS   bool
	spans   [][2]int
	fields  [][]byte
	quoted  []byte
	ticks   ticker
	// noGPUID: a --query-gpu log with neither index nor uuid: its GPUs
	// are told apart by their pci.bus_id where the log has it (busCol,
	// buses), else by their row's place in each tick (pos; tickLine the
	// line of the current tick's first row).
	noGPUID  bool
	pos      positioner
	tickLine int
	busCol   bool
	buses    busNumbers
	mid      midCache
	// unitEnd: the last row read ends in a unit ("4898 MiB"): a last
	// line whose last size has none is cut (cutLast).
	unitEnd bool
	// host is the host of every row, from a fleet log's prefix or block
	// header (fleetDecoder); nil when the log names none.
	host []byte
	// hostTimes: in a log with a host column (roleHost) and no fleet
	// prefix, the Reader's time state of each host, by name (see
	// colHost), activeHost the one the Reader holds.
	hostTimes  map[string]*hostTime
	activeHost *hostTime
	// dated: a line of date(1)'s output came before the rows, in a log
	// without a timestamp column (a loop of "date; nvidia-smi
	// --query-gpu=... --format=csv,noheader"); the ticks from dateTick on
	// are at dateUs, one interval apart (see atDate).
	dated    bool
	dateUs   int64
	dateTick int64
	// dateLine and dateText are the first date line's number and text,
	// for the warning when the header then shows a timestamp column.
	dateLine int
	dateText string
	// undatedRows: rows were placed by order before the first date line.
	undatedRows bool
}

// skipDate skips a line of date(1)'s output (line n, text) before rows
// that take no time from it, with a warning.
func (d *smiDecoder) skipDate(n int, text string) {
	d.r.meta.Skipped++
	d.r.meta.Warnings.Once("date skipped", parse.LineNote(n, "date's output (%q) among the samples is skipped: the rows have their own timestamps, or rows before it were already placed by their order", text))
}

// atDate starts a tick at t, the time of a line of date(1)'s output, for
// the rows after it when the log has no timestamp column: a loop of
// "date; nvidia-smi --query-gpu=... --format=csv,noheader; sleep N" times
// each output by its date line, not by the row order. A log whose rows
// have their own timestamps, or whose rows before the first date line
// were already placed by order, takes no time from it (the Reader's
// warning says so).
func (d *smiDecoder) atDate(t int64, n int) {
	if d.cols != nil && d.hasTS || d.undatedRows {
		d.skipDate(n, d.r.dateText)
		return
	}
	if !d.dated {
		d.dateLine, d.dateText = n, d.r.dateText
	}
	if d.ticks.started {
		d.ticks.k++
		clear(d.ticks.seen)
		d.ticks.started = false
	}
	d.dated, d.dateUs, d.dateTick = true, t, d.ticks.k
	d.r.newInstant = true
}

// hostTime is the Reader's time state of one host (see Reader.tick),
// kept while other hosts' rows are read: of a CSV with a host column
// (colHost), or of a fleet log (fleetHost). Each host's rows are one
// sequence of instants, and one host's rows coming after another's
// earlier ones (hosts' logs concatenated) are no step back of the log's
// time.
type hostTime struct {
	lastTickUs, latestUs int64
	newInstant           bool
	instantGPUs          uint64
	instants             int64
}

// save keeps the Reader's time state in h.
func (h *hostTime) save(r *Reader) {
	h.lastTickUs, h.latestUs, h.newInstant, h.instantGPUs, h.instants = r.lastTickUs, r.latestUs, r.newInstant, r.instantGPUs, r.meta.Instants
}

// load makes h's time state the Reader's.
func (h *hostTime) load(r *Reader) {
	r.lastTickUs, r.latestUs, r.newInstant, r.instantGPUs, r.meta.Instants = h.lastTickUs, h.latestUs, h.newInstant, h.instantGPUs, h.instants
}

// colHost makes the time state of host (a row's host column) the
// Reader's.
func (d *smiDecoder) colHost(host []byte) {
	if a := d.activeHost; a != nil && d.hostTimes[string(host)] == a {
		return
	}
	r := d.r
	if a := d.activeHost; a != nil {
		a.save(r)
	} else {
		d.hostTimes = map[string]*hostTime{}
	}
	h := d.hostTimes[string(host)]
	if h == nil {
		h = &hostTime{newInstant: true}
		if d.activeHost == nil {
			// The first host takes the state as it is (no row yet).
			h.save(r)
		}
		d.hostTimes[string(host)] = h
	}
	h.load(r)
	d.activeHost = h
}

func newSmiDecoder(r *Reader, apps bool) *smiDecoder {
	return &smiDecoder{r: r, apps: apps, rowsAt: r.meta.Rows}
}

// Lines nvidia-smi prints in place of rows; skipped, with a warning.
var smiMessages = []string{
	"no devices were found", "unable to determine the device handle", "failed to initialize nvml",
	"nvidia-smi has failed", "no running processes found", "gpu is lost", "driver/library version mismatch",
	"insufficient permissions", "unknown error",
}

func isSmiMessage(b []byte) bool {
	if bytes.IndexByte(b, ',') >= 0 {
		return false
	}
	low := strings.ToLower(string(b))
	for _, m := range smiMessages {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// isTaggedMessage reports a line that starts with a bracketed tag
// followed by text ("[HAMI-core Msg(62:...)]: Cleanup on exit for PID
// 62", "[rank0]: ..."): a log line of another program, never a row, whose
// first field, even a placeholder ("[N/A]"), ends at a comma.
func isTaggedMessage(b []byte) bool {
	if len(b) == 0 || b[0] != '[' {
		return false
	}
	i := bytes.IndexByte(b, ']')
	if i < 0 {
		return false
	}
	rest := trimSpace(b[i+1:])
	return len(rest) > 0 && rest[0] != ','
}

// skipTagged skips line b (number n) of a log written by tool when it is
// another program's tagged message (isTaggedMessage): it is counted in
// Metadata.Skipped, the first named in a warning. HAMi-core, preloaded
// into every process of a HAMi pod, prints such lines into the output of
// nvidia-smi and dcgmi alike, before it (when it loads) and after it (when
// the process exits).
func (r *Reader) skipTagged(b []byte, n int, tool string) bool {
	if !isTaggedMessage(b) {
		return false
	}
	r.meta.Skipped++
	r.meta.Warnings.Once("tagged message", parse.LineNote(n, "%q is not %s's: another program printed it among the rows (a library preloaded into %s, such as HAMi-core, or the job's own log); lines like it are skipped", snippet(b), tool, tool))
	return true
}

// headerFields splits a CSV header line into field names and their
// bracketed units, or reports that the line is not a header: every field
// must look like a field name ("memory.used [MiB]"), and one must be a
// field gpuleak reads.
func headerFields(b []byte, apps bool) (names, units []string, ok bool) {
	known := false
	for _, f := range bytes.Split(b, []byte(",")) {
		f = trimSpace(f)
		unit := ""
		if i := bytes.IndexByte(f, '['); i >= 0 {
			if f[len(f)-1] != ']' {
				return nil, nil, false
			}
			unit = string(f[i+1 : len(f)-1])
			f = trimSpace(f[:i])
		}
		if !isFieldName(f) {
			return nil, nil, false
		}
		name := string(f)
		known = known || smiRoleOf(name, apps) != roleIgnore
		names = append(names, name)
		units = append(units, unit)
	}
	return names, units, known
}

// isFieldName: lower-case letters, digits, '_' and '.', starting with a letter.
func isFieldName(b []byte) bool {
	if len(b) == 0 || b[0] < 'a' || b[0] > 'z' {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func (d *smiDecoder) setColumns(names, units []string, header bool, n int) error {
	if before := d.r.meta.Fields; header && d.header && len(d.cols) > 0 && !slices.Equal(before, names) {
		// Once for each change: two loggers appending to one file
		// alternate their headers.
		d.r.meta.Warnings.Once("layout "+strings.Join(before, ",")+" > "+strings.Join(names, ","),
			parse.LineNote(n, "%s", layoutChange(before, names, d.apps)))
	}
	d.mid.reset(0)
	d.cols = d.cols[:0]
	d.text = d.text[:0]
	d.hasTS = false
	d.header = header
	d.assumed = false
	for i, name := range names {
		c := smiCol{name: name, role: smiRoleOf(name, d.apps), unit: MiB}
		if units != nil && units[i] != "" && isSize(c.role) {
			u, ok := unitBytes([]byte(units[i]))
			if !ok {
				return d.r.errorf(n, "%s: unknown unit [%s]", name, units[i])
			}
			c.unit = u
		}
		if isText(c.role) {
			d.text = append(d.text, i)
		}
		d.hasTS = d.hasTS || c.role == roleTime
		d.cols = append(d.cols, c)
	}
	used := false
	for _, c := range d.cols {
		used = used || c.role == roleUsed
	}
	if !used {
		what := "memory.used"
		if d.apps {
			what = "used_memory"
		}
		msg := fmt.Sprintf("the log has no %s column (fields: %s); log it with --query-%s=...,%s",
			what, strings.Join(names, ","), map[bool]string{false: "gpu", true: "compute-apps"}[d.apps], what)
		if name := d.r.unifiedNextRow(); !d.apps && name != "" {
			msg = fmt.Sprintf("the log has no memory.used column (fields: %s), and it would not help: the %s has unified memory (the system's RAM, shared with the CPU), for which NVML reports no device memory (memory.used is [N/A] there, as its other memory fields are); %s",
				strings.Join(names, ","), name, unifiedAdviceFor(name))
		}
		return d.r.noMemoryf(n, "%s", msg)
	}
	d.r.meta.Fields = append([]string(nil), names...)
	d.r.meta.Header = header
	d.lastTick()
	d.noGPUID, d.busCol = !d.apps, false
	for _, c := range d.cols {
		switch c.role {
		case roleIndex, roleUUID:
			d.noGPUID = false
		case roleBusID:
			d.busCol = true
		}
	}
	d.pos, d.tickLine = positioner{}, 0
	if !d.r.opt.general {
		d.mid.reset(midColumns(d.cols))
	}
	switch {
	case d.hasTS && d.dated:
		// The date line came before the header: the rows' own times rule.
		d.dated = false
		d.skipDate(d.dateLine, d.dateText)
	case !d.hasTS && d.dated:
		assumed := ""
		if d.r.periodAssumed {
			assumed = ", assumed: give the period with --interval"
		}
		d.r.meta.Warnings.Addf("the log has no timestamp column: the rows after each line of date's output are at its time (one tick, a row per GPU; any further ticks before the next date line %v apart%s)", d.r.opt.interval, assumed)
	case !d.hasTS:
		d.r.meta.Clock = ClockRowOrder
		d.r.rowOrderWarn(fmt.Sprintf("the log has no timestamp column: rows are placed %v apart by their order", d.r.opt.interval))
	}
	return nil
}

// layoutChange says what a header with other fields than the one before
// it (a logger restarted with another --query-gpu list, its output
// appended to the same file) changes: the rows after it are read in its
// layout, and a GPU (a process) is one series across the change when both
// layouts identify it the same way - by UUID, or by index and name (by
// pid) - as the trend analysis matches them (analyze/trend).
func layoutChange(before, after []string, apps bool) string {
	has := func(fields []string, role smiRole) bool {
		for _, f := range fields {
			if smiRoleOf(f, apps) == role {
				return true
			}
		}
		return false
	}
	ids := func(fields []string) string {
		var id []string
		if has(fields, roleUUID) {
			id = append(id, "UUID")
		}
		if has(fields, roleIndex) {
			id = append(id, "index")
		}
		if has(fields, roleGPUName) {
			id = append(id, "name")
		}
		if len(id) == 0 {
			return "nothing (the place of their row)"
		}
		return strings.Join(id, ", ")
	}
	query := func(fields []string) string {
		if apps || has(fields, rolePID) {
			return "--query-compute-apps"
		}
		return "--query-gpu"
	}
	if query(before) != query(after) {
		// A GPU's rows and its processes' in one file: two loggers
		// appending to it, or one restarted with the other query.
		return fmt.Sprintf("a header of %s fields (%s) after %s rows (fields: %s): another nvidia-smi appends to this file, or the logger was restarted with the other query; the rows from here on are read in the new layout, until the next header",
			query(after), strings.Join(after, ","), query(before), strings.Join(before, ","))
	}
	msg := fmt.Sprintf("a header with other fields (%s; before: %s): the log was restarted with another %s list and appended to; the rows from here on are read in the new layout",
		strings.Join(after, ","), strings.Join(before, ","), query(after))
	switch {
	case has(before, rolePID) && has(after, rolePID):
		return msg + "; a process is one series across the change by its pid (and name)"
	case query(after) == "--query-compute-apps":
		return msg + "; processes cannot be matched across the change (a pid is missing on one side): those before and after it are separate series"
	case has(before, roleUUID) && has(after, roleUUID):
		return msg + "; a GPU is one series across the change by its UUID"
	case has(before, roleIndex) && has(before, roleGPUName) && has(after, roleIndex) && has(after, roleGPUName):
		return msg + "; a GPU is one series across the change by its index and name"
	}
	return fmt.Sprintf("%s; GPUs cannot be matched across the change (named by %s before it, by %s after it: neither UUID nor index and name on both sides): those before and after it are separate series, though they may be the same GPUs", msg, ids(before), ids(after))
}

func (d *smiDecoder) line(b []byte, n int) error {
	b = trimSpace(b)
	if len(b) == 0 {
		return nil
	}
	if isSmiMessage(b) {
		d.r.meta.Skipped++
		if d.r.lostHandle(b, n) {
			return nil // said by lostHandleNote
		}
		d.r.meta.Warnings.Add(parse.InlineNote(n, -1, "skipped lines nvidia-smi printed instead of samples, such as %q (line %d)", string(b), n))
		if d.firstSkipLine == 0 {
			d.firstSkip, d.firstSkipLine = snippet(b), n
		}
		return nil
	}
	if b[0] == '#' {
		// A comment a script wrote among the rows ("# GPU memory log"
		// before the output of nvidia-smi --query-gpu ... >> gpu.log):
		// neither a header (field names) nor a row (a timestamp or value).
		d.r.meta.Skipped++
		d.r.meta.Warnings.Once("comment line", parse.LineNote(n, "%q is a comment, not nvidia-smi's: lines starting with \"#\" are skipped", snippet(b)))
		if d.firstSkipLine == 0 {
			d.firstSkip, d.firstSkipLine, d.comment = snippet(b), n, true
		}
		return nil
	}
	if d.r.skipTagged(b, n, "nvidia-smi") {
		return nil
	}
	if b[0] >= 'a' && b[0] <= 'z' { // a header starts with a field name; rows rarely do
		if names, units, ok := headerFields(b, d.apps); ok {
			return d.setColumns(names, units, true, n)
		}
	}
	if d.cols == nil {
		fields := d.r.opt.fields
		if len(fields) == 0 {
			fields = d.cmdFields
		}
		assumed := len(fields) == 0
		if assumed {
			fields = DefaultQueryGPUFields
			if d.apps {
				fields = DefaultQueryAppsFields
			}
		}
		if err := d.setColumns(fields, nil, false, n); err != nil {
			return err
		}
		if d.assumed = assumed; assumed {
			// Nothing names the columns: say which order was assumed, so
			// that a log of other fields is not read wrong unseen.
			d.r.meta.Warnings.Once("assumed fields", parse.LineNote(n, "the log has no header, and neither --fields nor a query command in it names its columns: they are read in the default order %s; a log of other fields or another order (memory.free before memory.used reads a leak as a release) is read wrong: give its fields with --fields", strings.Join(fields, ",")))
		}
	}
	var s sample
	if d.plainRow(b, &s) {
		if d.r.noEOL {
			if err := d.cutLast(&s, b, n); err != nil {
				d.mid.filled = nil // not emitted
				return err
			}
		}
		return d.emitRow(&s, b, n)
	}
	if err := d.split(b, n); err != nil {
		return err
	}
	s, err := d.fieldsSample(n)
	if err != nil {
		return err
	}
	if d.r.noEOL {
		if err := d.cutLast(&s, b, n); err != nil {
			return err
		}
	}
	return d.emitRow(&s, b, n)
}

// emitRow emits row b's sample s, noting whether the row ended in a unit
// (what cutLast judges a last line by).
func (d *smiDecoder) emitRow(s *sample, b []byte, n int) error {
	d.unitEnd = endsInUnit(b)
	if d.assumed && s.hasTotal && (s.hasUsed && s.used > s.total || s.hasFree && s.free > s.total) {
		// No GPU uses or has free more than its total: the columns are
		// not in the order assumed.
		return d.r.errorf(n, "the header-less log's columns are not in the default order %s: the column read as memory.total (%d MiB) is less than memory.used (%d MiB) or memory.free (%d MiB); give its fields with --fields", strings.Join(d.r.meta.Fields, ","), s.total/MiB, s.used/MiB, s.free/MiB)
	}
	return d.finish(s, n)
}

// endsInUnit reports whether a row (trimmed) ends in a unit ("4898 MiB",
// "0 %"): a letter or a percent sign.
func endsInUnit(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c := b[len(b)-1] | 0x20
	return c >= 'a' && c <= 'z' || b[len(b)-1] == '%'
}

// cutLast returns the row error of the input's last line, b (trimmed),
// which has no line ending, when its last field, a size, reads as cut
// short: without the unit the row before it ends in ("4" where the rows
// give "4898 MiB"), or, in a log without units (--format=csv,nounits),
// with fewer digits than the same series' value in the row before ("40"
// after "40000"). A cut there leaves a number, as whole as any, that is
// not the value: a process "giving back" its memory at the end. A whole
// last row without a line ending (a paste) has its unit, or as many
// digits as the value before it, and is read.
func (d *smiDecoder) cutLast(s *sample, b []byte, n int) error {
	c := d.cols[len(d.cols)-1]
	if !isSize(c.role) {
		return nil
	}
	v := b
	if i := bytes.LastIndexByte(b, ','); i >= 0 {
		v = trimSpace(b[i+1:])
	}
	if len(v) == 0 || isPlaceholder(v) || endsInUnit(v) {
		return nil
	}
	if d.unitEnd {
		return d.r.rowErrorf(n, "%s", cutNote(c.name, v, "lacks the unit the row before it ends in"))
	}
	if len(s.host) == 0 {
		s.host = d.host // as finish will set it: the series is the host's
	}
	prev, ok := d.r.prevValue(s, c.role)
	if !ok || prev <= 0 {
		return nil
	}
	if p := digitsOf(float64(prev / c.unit)); intDigits(v) < p {
		return d.r.rowErrorf(n, "%s", cutNote(c.name, v, fmt.Sprintf("has fewer digits than the same series' value before it (%d)", prev/c.unit)))
	}
	return nil
}

// fastRow reads line as step and line would, when it is a plain row of a
// log whose first column is the timestamp, and reports whether it did;
// step then skips its tests for a prompt, terminal noise or an elision,
// none of which such a row can be: its first field is a timestamp (digits
// and "/-:. T+Z", never a prompt's '$', '#', '%' or '>' before the
// comma promptChar stops at), it starts with a digit (not "^C" or
// "real"), and it holds a comma (an elision is brackets and dots alone).
// Nor is it a header or a message (which start with a letter or hold no
// comma).
func (d *smiDecoder) fastRow(line []byte, n int) (bool, error) {
	// The input's last line without a line ending may be cut: the
	// general path judges it (cutLast), for every caller (a fleet log's
	// hosts too).
	if d.r.noEOL || len(d.cols) < 2 || d.cols[0].role != roleTime {
		return false, nil
	}
	b := trimSpace(line)
	if len(b) == 0 || b[0]-'0' > 9 {
		return false, nil
	}
	var s sample
	if !d.plainRow(b, &s) {
		return false, nil
	}
	return true, d.emitRow(&s, b, n)
}

// plainRow reads the common row in one pass (nvidia-smi's own output: no
// quotes, as many fields as columns, every value well formed) straight
// into s, which must be zero, and reports whether it could (s is then
// partly filled); split and row then read any
// other row, and say what is wrong with it. Where plainRow reads a row,
// split and row read the same sample (FuzzPlainRow checks it).
//
// Fields are found by their offsets in b, sizes and indexes read as they
// are scanned, the rest cut at their comma (bytes.IndexByte): a row costs
// a few instructions a byte.
func (d *smiDecoder) plainRow(b []byte, s *sample) bool {
	if bytes.IndexByte(b, '"') >= 0 {
		return false
	}
	s.conv = ExcludesReserved // s is zero: both callers' fresh sample
	if d.apps {
		s.conv = Process
	}
	m := &d.mid
	if m.to == 0 {
		_, ok := d.plainCols(b, s, 0, 0, len(d.cols))
		return ok && (!d.apps || s.hasPID)
	}
	// Column 0 is the timestamp; columns 1 to m.to-1 are read from the
	// cache when their bytes are those of the row at the same place in the
	// last tick (see midCache).
	pos, ok := d.plainCols(b, s, 0, 0, 1)
	if !ok {
		return false
	}
	e := m.entry(s.timeUs)
	if e != nil && len(e.b) > 0 && len(b)-pos >= len(e.b) && string(b[pos:pos+len(e.b)]) == string(e.b) {
		e.apply(s)
		m.hits++
		pos += len(e.b)
	} else {
		from := pos
		if pos, ok = d.plainCols(b, s, pos, 1, m.to); !ok {
			return false
		}
		m.miss(e, b[from:pos], s)
	}
	_, ok = d.plainCols(b, s, pos, m.to, len(d.cols))
	if ok = ok && (!d.apps || s.hasPID); !ok {
		m.filled = nil // not emitted: no dictionary index to learn
	}
	return ok
}

// plainCols reads columns [from, to) of a plain row, the first at offset
// pos of b, into s, and returns the offset after the comma that ends
// column to-1 (past the end of b when to-1 is the last column). ok is
// false where a field is not plain (see plainRow).
func (d *smiDecoder) plainCols(b []byte, s *sample, pos, from, to int) (next int, ok bool) {
	cols := d.cols // a local: kept in a register across the calls below
	last := len(cols) - 1
	for i := from; i < to; i++ {
		c := &cols[i]
		switch {
		case isSize(c.role):
			// The common size ("4907 MiB", "4907") read as the field is cut.
			if x, next, ok := scanSize(b, pos, c.unit, i == last); ok {
				pos = next
				s.setSize(c.role, x)
				continue
			}
		case c.role == roleIndex:
			if x, next, ok := scanIndex(b, pos, i == last); ok {
				pos = next
				s.gpu, s.hasGPU = x, true
				continue
			}
		}
		end := len(b)
		if i < last {
			j := bytes.IndexByte(b[pos:], ',')
			if j < 0 {
				return 0, false
			}
			end = pos + j
		} else if bytes.IndexByte(b[pos:], ',') >= 0 {
			return 0, false
		}
		if c.role == roleIgnore {
			pos = end + 1
			continue
		}
		v := b[pos:end]
		pos = end + 1
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:] // the space after the comma: trimSpace then has nothing to do
		}
		if _, ok := d.setField(s, c, trimSpace(v)); !ok {
			return 0, false
		}
	}
	return pos, true
}

// midColumns is where a plain row's cached columns end (see midCache):
// after column 0, a timestamp, the columns before the first of used or
// free memory (or another timestamp); 0 when fewer than two such columns.
func midColumns(cols []smiCol) int {
	if len(cols) < 3 || cols[0].role != roleTime {
		return 0
	}
	k := 1
	for k < len(cols) && cols[k].role != roleUsed && cols[k].role != roleFree && cols[k].role != roleTime && cols[k].role != roleHost {
		k++
	}
	if k < 3 || k == len(cols) {
		return 0
	}
	return k
}

// midCache spares plainRow most of a row of a GPU log: nvidia-smi prints
// one row per GPU each tick, in the same order, and the fields between the
// timestamp and the memory used (index, UUID, name, bus id, total memory:
// the GPU's identity) repeat from tick to tick. The cache keeps, for each
// place in a tick (the rows of one timestamp), the bytes of those columns
// in the last row read there and what they set in the sample; a row whose
// bytes there are the same takes that, as reading them again would (the
// same bytes, cut at the same commas, under the same columns, read the
// same: FuzzPlainRowCache holds plainRow to split and row on sequences of
// rows). A row that differs reads its columns and takes the place. Rows
// that seldom repeat (a volatile column among those) turn the cache off.
type midCache struct {
	to     int // the first column not cached; 0: no cache
	place  int // the place in the tick of the row being read
	lastT  int64
	rows   int
	hits   int
	misses int
	ents   []midEntry
	// filled is the entry the row being read filled, until finish gives
	// it the row's dictionary indices; nil when none.
	filled *midEntry
}

// midPlaces bounds the places cached: GPUs of a host (or processes of a
// tick, in a --query-compute-apps log); midBytes the columns' bytes kept
// at a place (nvidia-smi's are about 100: a long row is read, not kept,
// so that the cache holds at most 64 KiB whatever the input).
const (
	midPlaces = 64
	midBytes  = 1024
)

type midEntry struct {
	b []byte // the columns' bytes, each ending with its comma; empty: none yet
	s sample // what they set, its text pointing into b, with its dictionary indices once emitted
}

func (m *midCache) reset(to int) {
	*m = midCache{to: to, ents: m.ents[:0]}
}

// entry is the cache entry of a row at time t (µs), nil when its place is
// past midPlaces.
func (m *midCache) entry(t int64) *midEntry {
	if m.rows > 0 && t == m.lastT {
		m.place++
	} else {
		m.place = 0
	}
	m.rows++
	m.lastT = t
	if m.place >= midPlaces {
		return nil
	}
	for m.place >= len(m.ents) {
		m.ents = append(m.ents, midEntry{})
	}
	return &m.ents[m.place]
}

// miss records that the row's cached columns held b (their bytes) and
// set s, at entry e (when not nil).
func (m *midCache) miss(e *midEntry, b []byte, s *sample) {
	m.misses++
	if m.misses > 1024 && m.misses > m.hits {
		m.to = 0 // more misses than hits: a column there changes from tick to tick
		return
	}
	if e == nil || len(b) > midBytes {
		return
	}
	e.b = append(e.b[:0], b...)
	e.s = *s
	var ok [4]bool
	e.s.uuid, ok[0] = within(s.uuid, b, e.b)
	e.s.gpuName, ok[1] = within(s.gpuName, b, e.b)
	e.s.process, ok[2] = within(s.process, b, e.b)
	e.s.bus, ok[3] = within(s.bus, b, e.b)
	if ok != [4]bool{true, true, true, true} {
		e.b = e.b[:0] // a text not in these columns' bytes: not kept
		return
	}
	m.filled = e
}

// within is v, a slice of from (or empty), as the same bytes of to, a
// copy of from; ok is false when v is not within from.
func within(v, from, to []byte) (_ []byte, ok bool) {
	if len(v) == 0 {
		return nil, true
	}
	off := cap(from) - cap(v) // v starts at from[off] when both are slices of one row
	if off < 0 || off+len(v) > len(from) || &from[off] != &v[0] {
		return nil, false
	}
	return to[off : off+len(v)], true
}

// apply sets in s what the cached columns set (nothing else: s holds the
// timestamp).
func (e *midEntry) apply(s *sample) {
	c := &e.s
	s.gpu, s.hasGPU = c.gpu, c.hasGPU
	s.pid, s.hasPID = c.pid, c.hasPID
	s.total, s.hasTotal = c.total, c.hasTotal
	s.reserved, s.hasReserved = c.reserved, c.hasReserved
	s.uuid, s.gpuName, s.process, s.bus = c.uuid, c.gpuName, c.process, c.bus
	s.uuidIdx, s.nameIdx = c.uuidIdx, c.nameIdx
}

// split cuts a row into d.fields, one per column, joining back names
// that contained commas.
func (d *smiDecoder) split(b []byte, n int) error {
	if bytes.IndexByte(b, '"') >= 0 {
		return d.splitQuoted(b, n)
	}
	// The common case in one pass: as many fields as columns.
	d.fields = d.fields[:0]
	start := 0
	for i, c := range b {
		if c == ',' {
			d.fields = append(d.fields, trimSpace(b[start:i]))
			start = i + 1
		}
	}
	d.fields = append(d.fields, trimSpace(b[start:]))
	extra := len(d.fields) - len(d.cols)
	if extra == 0 {
		return nil
	}
	if extra < 0 {
		return d.fieldCountError(len(d.fields), n)
	}
	// More fields than columns: a name with commas.
	d.spans = d.spans[:0]
	start = 0
	for i, c := range b {
		if c == ',' {
			d.spans = append(d.spans, [2]int{start, i})
			start = i + 1
		}
	}
	d.spans = append(d.spans, [2]int{start, len(b)})
	c, ok := d.spill(b, extra)
	if !ok {
		return d.fieldCountError(len(d.spans), n)
	}
	d.spans[c][1] = d.spans[c+extra][1]
	d.spans = append(d.spans[:c+1], d.spans[c+1+extra:]...)
	d.fields = d.fields[:0]
	for _, s := range d.spans {
		d.fields = append(d.fields, trimSpace(b[s[0]:s[1]]))
	}
	return nil
}

// spill picks the name column that absorbs extra fields: the only one,
// or the first for which every size and number column then parses.
func (d *smiDecoder) spill(b []byte, extra int) (int, bool) {
	switch len(d.text) {
	case 0:
		return 0, false
	case 1:
		return d.text[0], true
	}
	for _, c := range d.text {
		if d.fits(b, c, extra) {
			return c, true
		}
	}
	return 0, false
}

func (d *smiDecoder) fits(b []byte, c, extra int) bool {
	for i, col := range d.cols {
		j := i
		if i > c {
			j = i + extra
		}
		v := trimSpace(b[d.spans[j][0]:d.spans[j][1]])
		if isPlaceholder(v) {
			continue
		}
		switch {
		case isSize(col.role):
			if _, ok := parseSize(v, col.unit); !ok {
				return false
			}
		case col.role == roleIndex || col.role == rolePID:
			if _, ok := parseInt(v); !ok {
				return false
			}
		}
	}
	return true
}

// splitQuoted handles rows some tools re-export with quoted fields.
func (d *smiDecoder) splitQuoted(b []byte, n int) error {
	d.quoted = d.quoted[:0]
	var bounds [][2]int
	i := 0
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		start := len(d.quoted)
		if i < len(b) && b[i] == '"' {
			i++
			closed := false
			for i < len(b) {
				if b[i] == '"' {
					if i+1 < len(b) && b[i+1] == '"' {
						d.quoted = append(d.quoted, '"')
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				d.quoted = append(d.quoted, b[i])
				i++
			}
			if !closed {
				return d.r.rowErrorf(n, "unterminated quoted field")
			}
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i < len(b) && b[i] != ',' {
				return d.r.rowErrorf(n, "text after a quoted field")
			}
		} else {
			j := bytes.IndexByte(b[i:], ',')
			if j < 0 {
				j = len(b) - i
			}
			d.quoted = append(d.quoted, trimSpace(b[i:i+j])...)
			i += j
		}
		bounds = append(bounds, [2]int{start, len(d.quoted)})
		if i >= len(b) {
			break
		}
		i++ // the comma
	}
	if len(bounds) != len(d.cols) {
		return d.fieldCountError(len(bounds), n)
	}
	d.fields = d.fields[:0]
	for _, s := range bounds {
		d.fields = append(d.fields, d.quoted[s[0]:s[1]])
	}
	return nil
}

func (d *smiDecoder) fieldCountError(got, n int) error {
	names := make([]string, len(d.cols))
	for i, c := range d.cols {
		names[i] = c.name
	}
	if d.header {
		return d.r.rowErrorf(n, "%d fields, but the header names %d (%s): truncated or damaged row", got, len(d.cols), strings.Join(names, ", "))
	}
	return d.r.rowErrorf(n, "%d fields, but the header-less log is read as %d (%s): a truncated row, or name the fields with --fields", got, len(d.cols), strings.Join(names, ","))
}

// setField reads field v (trimmed) of column c into s; when it cannot,
// want says what the field should hold, for the row's error. plainRow and
// fieldsSample share it, so that both read a field alike.
func (d *smiDecoder) setField(s *sample, c *smiCol, v []byte) (want string, ok bool) {
	switch c.role {
	case roleIgnore:
		return "", true
	case roleTime:
		t, ok := parseTimestamp(v, &d.r.civil)
		if !ok {
			return `a time "YYYY/MM/DD HH:MM:SS.mmm"`, false
		}
		s.timeUs = t
		return "", true
	}
	if isPlaceholder(v) {
		switch {
		case c.role == roleUsed:
			if d.r.usedPlaceholder == "" {
				d.r.usedPlaceholder = string(v)
			}
			if unreachableState(v) {
				if d.r.unreachable == 0 {
					d.r.unreachableLine, d.r.unreachableWhat = d.r.line, "memory.used as "+string(v)
				}
				d.r.unreachable++
			}
		case c.role == roleTotal:
			d.r.totalPlaceholders++
		}
		return "", true
	}
	switch c.role {
	case roleIndex:
		x, ok := parseInt(v)
		if !ok || x < 0 || x > 1<<31-1 {
			return "a GPU index", false
		}
		s.gpu, s.hasGPU = int32(x), true
	case rolePID:
		x, ok := parseInt(v)
		if !ok || x < 0 {
			return "a process id", false
		}
		s.pid, s.hasPID = x, true
	case roleUUID:
		s.uuid = v
	case roleGPUName:
		s.gpuName = v
	case roleProcess:
		s.process = v
	case roleHost:
		s.host = v
	case roleBusID:
		if d.noGPUID {
			s.bus = v // read where it names the GPU (finish)
		}
	default:
		x, ok := parseSize(v, c.unit)
		if !ok {
			return "a size", false
		}
		s.setSize(c.role, x)
	}
	return "", true
}

// setSize stores size x, of a column of size role r, in s.
func (s *sample) setSize(r smiRole, x int64) {
	switch r {
	case roleTotal:
		s.total, s.hasTotal = x, true
	case roleUsed:
		s.used, s.hasUsed = x, true
	case roleFree:
		s.free, s.hasFree = x, true
	case roleReserved:
		s.reserved, s.hasReserved = x, true
	}
}

// fieldsSample reads d.fields into a sample.
func (d *smiDecoder) fieldsSample(n int) (sample, error) {
	s := sample{conv: ExcludesReserved}
	if d.apps {
		s.conv = Process
	}
	for i, c := range d.cols {
		v := d.fields[i]
		if want, ok := d.setField(&s, &d.cols[i], v); !ok {
			return s, d.valueError(n, c, v, want)
		}
	}
	if d.apps && !s.hasPID {
		return s, d.r.rowErrorf(n, "a process row without a pid")
	}
	return s, nil
}

// scanSize reads the field at b[pos:] when it holds a size of at most
// 12 digits, in MiB ("4907 MiB") or, when unit is at most MiB, in unit
// ("4907"), with white space around, up to the comma that ends it (or
// the end of the row when last); next is the offset after the comma. ok
// is false for any other field, which parseSize then reads: where
// scanSize reads a field, parseSize reads the same bytes.
func scanSize(b []byte, pos int, unit int64, last bool) (x int64, next int, ok bool) {
	i := skipSpace(b, pos)
	v, n := leadDigits(b[i:min(i+12, len(b))])
	i += n
	if n > 0 && !last && len(b)-i >= 5 && string(b[i:i+5]) == " MiB," {
		return v * MiB, i + 5, true // nvidia-smi's own: what follows reads it the same
	}
	if n == 0 || i < len(b) && (b[i]-'0' <= 9 || b[i] == '.') {
		return 0, 0, false
	}
	i = skipSpace(b, i)
	switch {
	case len(b)-i >= 3 && string(b[i:i+3]) == "MiB":
		unit = MiB
		i = skipSpace(b, i+3)
	case unit > MiB: // 12 digits of a larger unit may overflow: parseSize checks
		return 0, 0, false
	}
	return v * unit, i + 1, fieldEnd(b, i, last)
}

// scanIndex reads the field at b[pos:] when it holds a GPU index of at
// most 9 digits with white space around, as scanSize does; parseInt and
// setField read any other (a sign, a placeholder, more digits).
func scanIndex(b []byte, pos int, last bool) (x int32, next int, ok bool) {
	i := skipSpace(b, pos)
	v, n := leadDigits(b[i:min(i+9, len(b))])
	i += n
	if n == 0 || i < len(b) && b[i]-'0' <= 9 {
		return 0, 0, false
	}
	i = skipSpace(b, i)
	return int32(v), i + 1, fieldEnd(b, i, last)
}

// leadDigits reads the decimal digits b starts with: their value and
// how many (at most 18 in b, so that the value cannot overflow). A byte
// loop, inlined: reading eight bytes at a time (the digits found by bit
// tricks, joined by multiplication, not inlined) took as many
// instructions here and 7% more of the parser's time, its multiplications
// in one chain (BenchmarkQueryGPU, 2026-12-01).
func leadDigits(b []byte) (v int64, n int) {
	for n < len(b) {
		c := b[n] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int64(c)
		n++
	}
	return v, n
}

// skipSpace is the offset of the first byte at or after i in b that is
// not white space (len(b) when none).
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// fieldEnd reports whether a field's value ends at offset i of the row:
// at the end when last, else at a comma.
func fieldEnd(b []byte, i int, last bool) bool {
	if last {
		return i == len(b)
	}
	return i < len(b) && b[i] == ','
}

// finish places a row's sample (its GPU's number, its tick) and emits it.
func (d *smiDecoder) finish(s *sample, n int) error {
	if len(s.host) == 0 && len(d.hostTimes) == 1 {
		// An empty field of a host column that has named one host so
		// far is that host's row (a collector that failed to read the
		// name once), not a host of its own.
		for h := range d.hostTimes {
			s.host = []byte(h)
		}
	}
	// A row's own host column comes first, before a fleet log's prefix
	// (d.host), for its series and its time alike: the column names the
	// machine the sample was taken on, the prefix the one its line was
	// read from (pdsh to a gateway that prints a merged fleet CSV names
	// the gateway on every line).
	if len(s.host) == 0 {
		s.host = d.host
	} else {
		d.colHost(s.host)
	}
	if d.noGPUID && d.busCol && len(s.bus) > 0 {
		s.gpu, s.hasGPU = d.buses.number(s.host, s.bus), true
	} else if d.noGPUID {
		uneven := d.pos.uneven
		s.gpu, s.hasGPU = d.pos.next(d.hasTS, s.timeUs, s.gpuName, s.total, s.hasTotal), true
		if s.gpu == 0 {
			d.tickLine = n
		}
		if s.gpu > 0 {
			d.r.meta.Warnings.Addf("the log has no index or uuid column: its GPUs are numbered by the place of their row in each tick (nvidia-smi lists them in index order; with -i or CUDA_VISIBLE_DEVICES the numbers are not the GPUs' indexes); log index or uuid to name them")
		}
		if d.pos.uneven && !uneven {
			d.r.meta.Warnings.Linef(n, "the log has no index or uuid column and its ticks do not all have the same number of rows (%d rows in the first tick, %d in the tick before this line): rows are told apart by their place in a tick of rows close in time, so a GPU's series may hold rows of another GPU there; log index or uuid to tell the GPUs apart", d.pos.size, d.pos.otherSize)
		}
	}
	if !d.hasTS {
		pid := int64(-1)
		if s.hasPID {
			pid = s.pid
		}
		k := d.ticks.next(s.gpu, s.hasGPU, s.uuid, pid)
		if d.dated {
			s.timeUs = d.dateUs + (k-d.dateTick)*d.r.opt.interval.Microseconds()
		} else {
			d.undatedRows = true
			s.timeUs = d.r.tickTime(k)
		}
	}
	d.r.emit(s)
	if e := d.mid.filled; e != nil {
		// The values' indices, for the rows that take the entry.
		d.mid.filled = nil
		e.s.uuidIdx = d.r.col.text[ColUUID].lastKnown(len(s.uuid) > 0)
		e.s.nameIdx = d.r.col.text[ColGPUName].lastKnown(len(s.gpuName) > 0)
	}
	return nil
}

func (d *smiDecoder) valueError(n int, c smiCol, v []byte, want string) error {
	msg := fmt.Sprintf("%s: %q is not %s", c.name, v, want)
	if !d.header {
		msg += fmt.Sprintf(" (the header-less log is read with the fields %s; name them with --fields)", strings.Join(d.r.meta.Fields, ","))
	}
	return d.r.rowErrorf(n, "%s", msg)
}

func (d *smiDecoder) end(n int) error {
	d.lastTick()
	if note := d.buses.note(); note != "" {
		d.r.meta.Warnings.Addf("%s", note)
	}
	if a := d.activeHost; a != nil {
		// A series has at most as many samples as its host's instants.
		a.instants = d.r.meta.Instants
		for _, h := range d.hostTimes {
			d.r.meta.Instants = max(d.r.meta.Instants, h.instants)
		}
	}
	switch {
	case d.r.meta.Rows > d.rowsAt:
	case d.apps && d.cols != nil:
		d.r.meta.Warnings.Addf("no process rows: no compute process ran while the log was written")
	case d.firstSkipLine > 0 && d.comment:
		// The error is all that is shown: it says what the lines were.
		return d.r.errorf(n, "no samples: the output's lines are comments, skipped (line %d: %q): lines starting with \"#\" are not nvidia-smi's", d.firstSkipLine, d.firstSkip)
	case d.firstSkipLine > 0:
		return d.r.errorf(n, "no samples: nvidia-smi printed only messages (line %d: %q)", d.firstSkipLine, d.firstSkip)
	case d.r.meta.Skipped > 0:
		return d.r.errorf(n, "no samples: nvidia-smi printed only messages (see the warnings)")
	default:
		return d.r.errorf(n, "a header without rows")
	}
	return nil
}

// positioner numbers the GPUs of a --query-gpu log without an index or
// uuid column: nvidia-smi prints one row per GPU each tick, in index
// order, so a GPU is the place of its row in its tick. With timestamps, a
// tick is the rows that follow one another closely: nvidia-smi stamps each
// GPU's row as it queries it, the same time or a few ms apart, and the
// next tick comes a period (-l, -lms) later. A row starts a tick when it
// comes at least half the period after the row before (the period: the
// shortest time between the starts of the last tickGaps ticks; before the
// first tick has ended, firstTickGap), or when the tick has as many rows
// as the first had and the row comes later than rows within a tick do.
// A log whose period is below 200 ms from its start, or whose GPUs take
// longer to query than half the period, cannot be cut so; ticks of
// uneven sizes are then said (the warning at finish). Without timestamps, a tick ends
// where a row's name and total memory repeat one of the tick (GPUs of one
// model and size, with neither times nor an index, cannot be told apart,
// and read as one).
const maxTickGPUs = 1024

// firstTickGap is the time between two rows (µs) that starts a new tick
// while the log's period is not known yet: a GPU query takes a few ms,
// and nvidia-smi -lms is seldom given less than 100 ms.
const firstTickGap = 100_000

// tickGaps is how many of the last ticks give the period.
const tickGaps = 8

type positioner struct {
	started bool
	k       int32
	prevT   int64
	seen    map[string]struct{}
	// tickStart is the time of the current tick's first row; starts holds
	// the times between the starts of the last tickGaps ticks (nStarts
	// of them); size is the rows of the first whole tick, uneven that a
	// later whole tick had another number of rows (otherSize).
	tickStart int64
	starts    [tickGaps]int64
	nStarts   int
	halfGap   int64 // half the shortest of starts, once nStarts > 0
	size      int32
	maxIn     int64 // the longest time between two rows of one tick (µs)
	uneven    bool
	otherSize int32
}

// next returns the place of a row at time t (when hasTS) of a GPU of the
// given name and total memory.
func (p *positioner) next(hasTS bool, t int64, name []byte, total int64, hasTotal bool) int32 {
	if hasTS {
		if p.started && !p.newTick(t) {
			p.k++
			p.maxIn = max(p.maxIn, t-p.prevT, p.prevT-t)
		} else {
			if p.started {
				p.endTick(t)
			}
			p.k, p.tickStart = 0, t
		}
		p.started, p.prevT = true, t
		return p.k
	}
	if p.seen == nil {
		p.seen = map[string]struct{}{}
	}
	key := fmt.Sprintf("%s\x00%d\x00%t", name, total, hasTotal)
	// No host has more than maxTickGPUs GPUs: a longer tick is not one
	// (and the map stays bounded on untrusted input).
	if _, dup := p.seen[key]; !p.started || dup || len(p.seen) >= maxTickGPUs {
		p.k = 0
		clear(p.seen)
	} else {
		p.k++
	}
	p.started = true
	p.seen[key] = struct{}{}
	return p.k
}

// newTick reports whether a row at time t starts a tick: it comes half a
// period or more after the row before, or as long before it (another
// log appended, a clock stepped back), or the tick already has
// maxTickGPUs rows.
func (p *positioner) newTick(t int64) bool {
	gap := int64(firstTickGap)
	if p.nStarts > 0 {
		gap = p.halfGap
	}
	d := t - p.prevT
	if d >= max(gap, 1) || -d >= max(gap, 1) || p.k+1 >= maxTickGPUs {
		return true
	}
	// A tick that has its usual rows ends where the next row comes later
	// than rows within a tick do: the period got shorter (-l 5, then
	// -lms 500) than the half of the last ticks' that gap is.
	return p.size > 0 && p.k+1 >= p.size && d > 2*p.maxIn
}

// endTick ends the current tick, the next starting at t.
func (p *positioner) endTick(t int64) {
	copy(p.starts[1:], p.starts[:tickGaps-1])
	p.starts[0] = t - p.tickStart
	p.nStarts = min(p.nStarts+1, tickGaps)
	p.halfGap = slices.Min(p.starts[:p.nStarts]) / 2 // once a tick, not each row (newTick)
	rows := p.k + 1
	switch {
	case p.size == 0:
		p.size = rows
	case rows != p.size && !p.uneven:
		p.uneven, p.otherSize = true, rows
	}
}

// lastTick says, at the end of a log (or of its layout) whose GPUs are
// told apart by their row's place, where its last tick has another number
// of rows than its first whole tick: the log ends within a tick (cut), or
// a GPU was missing from it, or the rows the positioner took for one
// tick's GPUs were one GPU's samples a few ms apart (nvidia-smi -lms
// with a short period): the places may mix GPUs from there. Ticks of
// uneven sizes before it were said as they ended (finish).
func (d *smiDecoder) lastTick() {
	p := &d.pos
	if !d.noGPUID || !d.hasTS || !p.started || p.uneven || p.size == 0 || p.k+1 == p.size || d.tickLine == 0 {
		return
	}
	rows := "rows"
	if p.k == 0 {
		rows = "row"
	}
	d.r.meta.Warnings.Linef(d.tickLine, "the log has no index or uuid column and its last tick, from this line, has %d %s where the first had %d: the log ends within a tick, or a GPU is missing from it, or the rows a few ms apart taken for a tick's GPUs are one GPU's samples (nvidia-smi -lms with a short period); rows are told apart by their place in a tick of rows close in time, so a GPU's series may hold rows of another GPU there; log index or uuid to tell the GPUs apart", p.k+1, rows, p.size)
}

// busNumbers numbers the GPUs of a --query-gpu log that names them by
// pci.bus_id alone: each bus id (of a host) keeps the number it was first
// given, in the order bus ids first appear (nvidia-smi's rows of one tick
// need not come in one order: a script's own loop, or rows sorted by
// time). The numbers are not the GPUs' indexes; note says which bus id
// each names.
type busNumbers struct {
	ids   map[string]int32
	order []string // the first maxBusNamed, "host bus" (or "bus")
	n     int32
}

// maxBusNamed bounds the bus ids note names.
const maxBusNamed = 8

// number is the number of the GPU at bus id bus of host.
func (b *busNumbers) number(host, bus []byte) int32 {
	key := string(host) + "\x00" + string(bus)
	if k, ok := b.ids[key]; ok {
		return k
	}
	if b.ids == nil {
		b.ids = map[string]int32{}
	}
	if len(b.ids) >= maxTickGPUs*16 {
		return b.n - 1 // bounded on untrusted input: a log of that many GPUs is none
	}
	k := b.n
	b.ids[key], b.n = k, b.n+1
	if len(b.order) < maxBusNamed {
		name := string(bus)
		if len(host) > 0 {
			name = string(host) + " " + name
		}
		b.order = append(b.order, fmt.Sprintf("GPU %d is %s", k, name))
	}
	return k
}

// note says how the GPUs were numbered; "" when no bus id was read.
func (b *busNumbers) note() string {
	if b.n == 0 {
		return ""
	}
	more := ""
	if int(b.n) > len(b.order) {
		more = fmt.Sprintf(" and %d more", int(b.n)-len(b.order))
	}
	return fmt.Sprintf("the log has no index or uuid column: its GPUs are told apart by their pci.bus_id and numbered in the order their bus ids first appear, not by their indexes (%s%s); log index or uuid to name them", strings.Join(b.order, ", "), more)
}

// ticker numbers the ticks of a log without times. Each tick has one
// row per GPU (dmon, --query-gpu), or per GPU one row per process or one
// row without a process (pmon, pid -1): a tick ends where a GPU index goes
// down, a (GPU, pid) pair repeats, or a GPU's row without a process meets
// another row of that GPU.
type ticker struct {
	k       int64
	started bool
	prevGPU int32
	prevHas bool
	seen    map[tickKey]struct{}
}

type tickKey struct {
	gpu  int32
	uuid string
	pid  int64 // -1: no process; -2: any row of the GPU
}

// next returns the tick of a row of GPU gpu (when hasGPU) or uuid, and
// process pid (-1 for none).
func (t *ticker) next(gpu int32, hasGPU bool, uuid []byte, pid int64) int64 {
	if t.seen == nil {
		t.seen = map[tickKey]struct{}{}
	}
	key := tickKey{gpu: -1, uuid: string(uuid), pid: pid}
	if hasGPU {
		key.gpu, key.uuid = gpu, ""
	}
	anyRow, idle := key, key
	anyRow.pid, idle.pid = -2, -1
	_, dup := t.seen[key]
	_, gpuSeen := t.seen[anyRow]
	_, gpuIdle := t.seen[idle]
	if t.started && (dup || pid == -1 && gpuSeen || gpuIdle || hasGPU && t.prevHas && gpu < t.prevGPU) {
		t.k++
		clear(t.seen)
	}
	t.started = true
	t.seen[key] = struct{}{}
	t.seen[anyRow] = struct{}{}
	t.prevGPU, t.prevHas = gpu, hasGPU
	return t.k
}
