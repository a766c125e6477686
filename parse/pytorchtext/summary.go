package pytorchtext

import (
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// summaryBanner is the title line of torch.cuda.memory_summary();
// summaryTitle its first words.
const (
	summaryBanner = "PyTorch CUDA memory summary, device ID "
	summaryTitle  = "PyTorch CUDA memory summary"
)

// summaryMetrics maps memory_summary()'s row names to memory_stats() key
// families, and says whether the row holds sizes (else counts).
var summaryMetrics = map[string]struct {
	key  string
	size bool
	pool bool // the family has all/large_pool/small_pool levels
}{
	"Allocated memory":      {"allocated_bytes", true, true},
	"Active memory":         {"active_bytes", true, true},
	"Requested memory":      {"requested_bytes", true, true},
	"GPU reserved memory":   {"reserved_bytes", true, true},
	"Non-releasable memory": {"inactive_split_bytes", true, true},
	"Allocations":           {"allocation", false, true},
	"Active allocs":         {"active", false, true},
	"GPU reserved segments": {"segment", false, true},
	"Non-releasable allocs": {"inactive_split", false, true},
	"Oversize allocations":  {"oversize_allocations", false, false},
	"Oversize GPU segments": {"oversize_segments", false, false},
}

// summaryColumns are the value columns, in order, as memory_stats() names them.
var summaryColumns = [4]string{"current", "peak", "allocated", "freed"}

var (
	summaryBannerRe     = lazyre.New(`PyTorch CUDA memory summary, device ID (\d+)\s*\|`)
	summaryBannerOpenRe = lazyre.New(`^PyTorch CUDA memory summary, device ID \d+\s*$`)
	// A title alone on its line, no border anywhere on it: a table copied
	// from a rendered page (cells between tabs, no borders).
	summaryBannerBareRe = lazyre.New(`^\s*PyTorch CUDA memory summary, device ID (\d+)\s*$`)
	summaryOOMsCellRe   = lazyre.New(`^\s*CUDA OOMs:\s*(\d+)\s*$`)
	summaryRetryCellRe  = lazyre.New(`^\s*cudaMalloc retries:\s*(\d+)\s*$`)
	summaryOOMsBareRe   = lazyre.New(`^\s*CUDA OOMs:\s*(\d+)\s+cudaMalloc retries:\s*(\d+)\s*$`)
	summaryHeaderBareRe = lazyre.New(`^\s*Metric\s+Cur Usage\s+Peak Usage\s+Tot Alloc\s+Tot Freed\s*$`)
	// A value of a row without borders: a size ("1062 MiB") or a count
	// ("37", "12 K").
	summaryBareValueRe = lazyre.New(`^\s*(\d{1,15}(?: ?(?:B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB|K|M))?)(?:\s|$)`)
	// Sizes: "B/KiB/MiB/GiB/TiB/PiB" (1.6 and later) or "B/KB/MB/GB/TB/PB"
	// (before): _format_size() divides by 1024 in both, so "MB" is MiB.
	// The space before the unit may be gone (a reflowed copy).
	summarySizeRe  = lazyre.New(`^\s*(\d{1,15}) ?(B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB)\s*$`)
	summaryCountRe = lazyre.New(`^\s*(\d{1,15}) ?([KM]?)\s*$`)
)

// summaryHeader is the header row's cells.
var summaryHeader = [5]string{"Metric", "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"}

// summaryUnits are the size units of memory_summary(): powers of 1024,
// whichever way a release labels them.
var summaryUnits = map[string]int64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
	"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}

// PartialKey is the stats key that marks a memory_summary() table cut
// short or with rows that could not be read: its value is the line where
// reading stopped. The set holds the rows read before it.
const PartialKey = "gpuleak.partial_at_line"

// PartialBoundKey marks, beside PartialKey, a memory_stats() dict printed
// in a log that was not cut but went on past the most text gpuleak reads
// of one (maxStatsTextBytes bytes or maxStatsTextLines lines): its value
// is that bound, in bytes (positive) or lines (negative). The keys read
// before it are whole; the rest was not read.
const PartialBoundKey = "gpuleak.partial_bound"

// summary is a memory_summary() table being read. Its rows are read by
// their cells, between the '|' of its borders, from the end of each line:
// whatever a logger wrote before each row (a timestamp, a process tag) is
// skipped, rows glued together ("|====||  PyTorch CUDA memory summary...")
// are split where two borders meet, and neither the widths of the columns
// nor the runs of spaces in the cells matter (a copy whose spaces were
// collapsed, or whose columns were re-indented, reads as the table).
// A table copied from a rendered page has no borders: its title is alone
// on its line and its cells are split by tabs or spaces (bare).
type summary struct {
	// label is the label of the prefix of its title's line (see
	// prefixLabel): a rank's ("[rank1]: ") when a launcher interleaves
	// the tables of its processes line by line.
	label   string
	device  int
	start   int64 // the banner's line
	set     int32
	bare    bool
	header  bool
	metric  string // key family of the current metric
	last    string // name of the last metric row read
	pool    bool
	rows    int
	sawOOMs bool
	// rulers counts the "|===|" and "|---|" lines read: a table that has
	// none had them removed (a copy that kept only the rows with text),
	// and is whole after its last metric, as a table without borders is.
	rulers int
}

// whole says whether a table without a closing border is complete where
// it stops: one without borders or rulers, after its last metric.
func (s *summary) whole() bool {
	return (s.bare || s.rulers == 0) && s.header && s.rows > 0 && lastSummaryRows[s.last]
}

// rowKind says what a row of the table is.
type rowKind int

const (
	rowNone   rowKind = iota
	rowRuler          // "|=====|" or "|-----|"
	rowOOMs           // "| CUDA OOMs: 1 | cudaMalloc retries: 3 |"
	rowHeader         // "| Metric | Cur Usage | ... |"
	rowData           // "| Allocated memory | 1062 MiB | ... |"
)

// summaryRow is one row of the table: its kind and its cells, without
// the borders (a ruler's one cell is its '=' or '-').
type summaryRow struct {
	kind  rowKind
	cells []string
}

func (r *Reader) startSummary(line string, at int) error {
	m := summaryBannerRe.FindStringSubmatchIndex(line[at:])
	bar := strings.LastIndexByte(line[:at], '|')
	if m == nil && bar < 0 && strings.IndexByte(line, '|') < 0 {
		if mb := summaryBannerBareRe.FindStringSubmatch(line[at:]); mb != nil {
			return r.startBareSummary(line, mb[1])
		}
	}
	if m == nil || bar < 0 {
		if bar >= 0 && summaryBannerOpenRe.MatchString(line[at:]) {
			// The title is whole but its right border is gone: the
			// table was cut or wrapped at a width.
			r.meta.Warnings.Linef(int(r.line), "a memory summary without its right border (%q): the table was cut or wrapped at a width (a log viewer, a terminal, a line limit), so its rows are not whole lines, and it is not read; print it again whole (or save torch.cuda.memory_stats() as JSON)", clip(line))
			return nil
		}
		r.meta.Warnings.Linef(int(r.line), "a memory summary title that is not understood (%q); the table is skipped", clip(line))
		return nil
	}
	dev, err := strconv.Atoi(line[at+m[2] : at+m[3]])
	if err != nil || dev > 1<<20 {
		r.meta.Warnings.Linef(int(r.line), "memory summary device ID %s out of range; the table is skipped", line[at+m[2]:at+m[3]])
		return nil
	}
	s := &summary{device: dev, start: r.line, set: int32(r.meta.Sets), label: prefixLabel(linePrefix(line))}
	r.openSummary(s)
	// Rows glued after the title on its line ("...device ID 0 ||----|").
	if rest := strings.TrimRight(line[at+m[1]:], " \t"); rest != "" {
		if rows, before := barRows(rest); before == "" {
			for _, row := range rows {
				if done, _ := s.addRow(r, row, line); done {
					r.closeSummary(s)
					break
				}
			}
		}
	}
	return nil
}

// maxSummaries bounds the tables read at once (one per line prefix: a
// launcher's ranks).
const maxSummaries = 64

// openSummary adds s to the tables being read; past maxSummaries the
// oldest is cut there.
func (r *Reader) openSummary(s *summary) {
	if len(r.sums) == maxSummaries {
		r.sums[0].stop(r, "is left unread beside more tables than gpuleak follows at once", "")
		r.sums = r.sums[1:]
	}
	r.sums = append(r.sums, s)
	r.labelSet(s.set, s.label)
	r.meta.Sets++
}

// labelSet records the process label of a stats set ("" records none).
func (r *Reader) labelSet(set int32, label string) {
	if label == "" {
		return
	}
	if r.setProcess == nil {
		r.setProcess = map[int32]string{}
	}
	r.setProcess[set] = label
}

// closeSummary removes s from the tables being read.
func (r *Reader) closeSummary(s *summary) {
	for k, o := range r.sums {
		if o == s {
			r.sums = append(r.sums[:k], r.sums[k+1:]...)
			return
		}
	}
}

// linePrefix returns what stands before a table's line's first '|': a
// logger's or a launcher's prefix ("[rank1]: ", "0: ", a timestamp), or
// "" for a line without one.
func linePrefix(line string) string {
	if i := strings.IndexByte(line, '|'); i >= 0 {
		return line[:i]
	}
	return ""
}

// prefixLabel returns what of a line's prefix stays the same over the
// lines of one process's output: the prefix without the spaces around it,
// its dates and times of day (clockLen: "2024-05-01T12:00:00.123Z",
// "12:00:00,123", "2024/05/01"; a rank's label has none: "[rank1]",
// "[default1]", "1: ", OpenMPI's "[1,0]") each replaced by "#". It tells
// lines apart as samePrefix does for messages and tracebacks.
func prefixLabel(prefix string) string {
	prefix = strings.TrimSpace(prefix)
	if strings.IndexAny(prefix, "0123456789") < 0 {
		return prefix
	}
	var b strings.Builder
	for i := 0; i < len(prefix); {
		if isDigit(prefix[i]) && (i == 0 || !isDigit(prefix[i-1])) {
			if n := clockLen(prefix[i:]); n > 0 {
				b.WriteByte('#')
				i += n
				continue
			}
		}
		b.WriteByte(prefix[i])
		i++
	}
	return b.String()
}

// addSummaryLine gives line to the table it belongs to (see summaryOf)
// and reports whether that table took it: false when no table is open
// for it, or when the table broke off there (the line is read again as
// text).
func (r *Reader) addSummaryLine(line string) bool {
	s := r.summaryOf(line)
	if s == nil {
		return false
	}
	done, reread := s.add(r, line)
	if done {
		r.closeSummary(s)
	}
	return !done || !reread
}

// summaryOf returns the open table that line belongs to, nil when none.
// Tables of several processes interleaved line by line (torchrun's
// "[rank0]: " and "[rank1]: ", srun -l's "0: ") are told apart by the
// label of their lines' prefix (prefixLabel: the prefix less its
// timestamps). A title opens a table beside those of other labels, and
// cuts the one open with its own. While tables of two labels or more are
// open, a line goes to the table of its label, and a line of no open
// table's label is read as text (another process's output). One table
// open takes every line, whatever its prefix, as a single table always
// did (a line that is not its row cuts it), but for a ruler alone of
// another label: the top border of another process's table, whose
// title comes on a later line, does not close this one.
func (r *Reader) summaryOf(line string) *summary {
	if len(r.sums) == 0 {
		return nil
	}
	label := prefixLabel(linePrefix(line))
	if strings.Contains(line, summaryBanner) {
		for _, s := range r.sums {
			if s.label == label {
				return s
			}
		}
		return nil
	}
	if len(r.sums) == 1 {
		if label != r.sums[0].label {
			if rows, _ := barRows(line); len(rows) == 1 && rows[0].kind == rowRuler {
				return nil
			}
		}
		return r.sums[0]
	}
	for _, s := range r.sums {
		if s.label == label {
			return s
		}
	}
	return nil
}

// startBareSummary starts a table whose title is alone on its line (see
// summary).
func (r *Reader) startBareSummary(line, id string) error {
	dev, err := strconv.Atoi(id)
	if err != nil || dev > 1<<20 {
		r.meta.Warnings.Linef(int(r.line), "memory summary device ID %s out of range; the table is skipped", id)
		return nil
	}
	r.openSummary(&summary{device: dev, start: r.line, set: int32(r.meta.Sets), bare: true})
	return nil
}

// maxGluedRows bounds the rows read from one line.
const maxGluedRows = 64

// barRows returns the table rows at the end of line, left to right (one
// row, or several glued together when a logger lost the line ends between
// them), and the text before them: a log prefix, or the whole line when
// it does not end with a row.
func barRows(line string) (rows []summaryRow, before string) {
	t := strings.TrimRight(line, " \t")
	for len(rows) < maxGluedRows && strings.HasSuffix(t, "|") {
		row, n := lastBarRow(t)
		if n == 0 {
			break
		}
		rows = append(rows, row)
		t = t[:len(t)-n]
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows, t
}

// lastBarRow returns the row that ends t (t ends with '|') and its length
// in bytes, or 0 when t does not end with one. Cells are taken from the
// right, at most five (a row has one, two or five); an empty cell ("||")
// is where two glued rows meet, never a cell.
func lastBarRow(t string) (summaryRow, int) {
	cells := make([]string, 0, len(summaryHeader))
	end := len(t) - 1 // the right border of the cell being taken
	for len(cells) < len(summaryHeader) {
		j := strings.LastIndexByte(t[:end], '|')
		if j < 0 || j == end-1 {
			break
		}
		cells = append(cells, t[j+1:end])
		end = j
		switch {
		case len(cells) == 1 && isRuler(cells[0]):
			return summaryRow{rowRuler, cells}, len(t) - j
		case len(cells) == 2 && summaryRetryCellRe.MatchString(cells[0]) && summaryOOMsCellRe.MatchString(cells[1]):
			return summaryRow{rowOOMs, []string{cells[1], cells[0]}}, len(t) - j
		}
	}
	if len(cells) != len(summaryHeader) {
		return summaryRow{}, 0
	}
	for i, j := 0, len(cells)-1; i < j; i, j = i+1, j-1 {
		cells[i], cells[j] = cells[j], cells[i]
	}
	kind := rowHeader
	for i, c := range cells {
		if !sameWords(c, summaryHeader[i]) {
			kind = rowData
			break
		}
	}
	return summaryRow{kind, cells}, len(t) - end
}

// sameWords reports whether s's words, separated by any run of spaces,
// are want's, separated by one space each: strings.Join(strings.Fields(s),
// " ") == want without making either (want has no space at its ends nor
// two together).
func sameWords(s, want string) bool {
	i := 0
	for w := range strings.FieldsSeq(s) {
		if i > 0 {
			if i >= len(want) || want[i] != ' ' {
				return false
			}
			i++
		}
		if !strings.HasPrefix(want[i:], w) {
			return false
		}
		i += len(w)
	}
	return i == len(want)
}

// isRuler reports whether cell is a ruler's: all '=' or all '-'.
func isRuler(cell string) bool {
	return cell != "" && (strings.Trim(cell, "=") == "" || strings.Trim(cell, "-") == "")
}

// bareRow reads a row of a table without borders (see summary): the OOMs
// row, the header, or a row whose name is one memory_summary() prints
// followed by four values, however its cells are split (tabs, spaces).
func bareRow(line string) (summaryRow, bool) {
	t := strings.TrimSpace(line)
	if m := summaryOOMsBareRe.FindStringSubmatch(t); m != nil {
		return summaryRow{rowOOMs, []string{"CUDA OOMs: " + m[1], "cudaMalloc retries: " + m[2]}}, true
	}
	if summaryHeaderBareRe.MatchString(t) {
		return summaryRow{rowHeader, summaryHeader[:]}, true
	}
	name := ""
	for _, n := range summaryRowNames() {
		if strings.HasPrefix(t, n) && len(n) > len(name) && (len(t) == len(n) || t[len(n)] == ' ' || t[len(n)] == '\t') {
			name = n
		}
	}
	if name == "" {
		return summaryRow{}, false
	}
	cells := []string{name}
	rest := t[len(name):]
	for len(cells) < 5 {
		m := summaryBareValueRe.FindStringSubmatchIndex(rest)
		if m == nil {
			return summaryRow{}, false
		}
		cells = append(cells, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	if strings.TrimSpace(rest) != "" {
		return summaryRow{}, false
	}
	return summaryRow{rowData, cells}, true
}

// summaryRowNames are the names a row of memory_summary() may have.
func summaryRowNames() []string {
	names := []string{"from large pool", "from small pool"}
	for n := range summaryMetrics {
		names = append(names, n)
	}
	return names
}

// lastSummaryRows are the names of the last metric of a table: without
// borders, the table ends after its rows (Oversize rows came in later
// releases).
var lastSummaryRows = map[string]bool{"Non-releasable allocs": true, "Oversize GPU segments": true}

// stop ends a table that broke off at the current line: the rows read are
// kept, marked partial, and the line is read again as text (an OOM message
// printed right after a cut table is not lost). line is the line at fault.
func (s *summary) stop(r *Reader, why, line string) {
	if s.rows == 0 && !s.sawOOMs {
		r.meta.Warnings.Add(parse.InlineNote(int(r.line), -1, "memory summary (from line %d) %s at line %d (%q), before any row of it: the table is not read", s.start, why, r.line, clip(strings.TrimSpace(line))))
	} else {
		r.meta.Warnings.Add(parse.InlineNote(int(r.line), -1, "memory summary (from line %d) %s at line %d; the %d rows before are kept, marked partial", s.start, why, r.line, s.rows))
	}
	r.addStat(s.set, s.start, SourceMemorySummary, s.device, PartialKey, r.line, 0, r.line)
}

// add reads one line of the table; done is true after its closing border
// or when the table broke off (then reread is true: the line is not the
// table's).
func (s *summary) add(r *Reader, line string) (done, reread bool) {
	if s.bare {
		return s.addBare(r, line)
	}
	rows, _ := barRows(line)
	trail := ""
	if len(rows) == 0 {
		// Text after the right border (a comment someone wrote beside a
		// row: "|  # bytes handed out") is not the table's: the row is
		// read up to its last '|'.
		if k := strings.LastIndexByte(line, '|'); k >= 0 {
			rows, _ = barRows(line[:k+1])
			trail = line[k+1:]
		}
	}
	// A tail that holds an OOM message or another table is no comment
	// but the next line, its line end lost: unless the table ends on this
	// line, it broke off here. A table without rulers is whole after its
	// last metric row.
	foreign := findOOM(trail, 0) >= 0 || strings.Contains(trail, summaryTitle)
	if len(rows) == 0 || foreign && !closes(rows[len(rows)-1]) {
		if !s.whole() {
			s.stop(r, "is cut", line)
		}
		return true, true
	}
	for _, row := range rows {
		if done, reread := s.addRow(r, row, line); done {
			// The table's last border: what follows it on the line is
			// read as text.
			return true, reread || strings.TrimSpace(trail) != ""
		}
	}
	if foreign {
		if !s.whole() {
			s.stop(r, "is cut", line)
		}
		return true, true
	}
	return false, false
}

// closes reports whether row is a ruler of '=', the border that closes a
// table (or the one under its OOMs row).
func closes(row summaryRow) bool {
	return row.kind == rowRuler && row.cells[0][0] == '='
}

// addBare reads one line of a table without borders. Its end is the
// first line that is not a row: after its last metric the table is
// whole, before it cut.
func (s *summary) addBare(r *Reader, line string) (done, reread bool) {
	if strings.TrimSpace(line) == "" && !s.header && !s.sawOOMs {
		return false, false // blank lines under the title
	}
	row, ok := bareRow(line)
	if !ok {
		switch {
		case s.header && s.rows > 0 && lastSummaryRows[s.last]:
		case s.header && s.rows > 0:
			s.stop(r, "ends before its last row", line)
		default:
			s.stop(r, "has no borders and its line is not a row of it", line)
		}
		return true, true
	}
	return s.addRow(r, row, line)
}

// end ends the table at the end of the input.
func (s *summary) end(r *Reader) {
	if s.whole() {
		return
	}
	s.stop(r, "ends early (no closing border)", "")
}

// addRow reads one row of the table, found on line (see add).
func (s *summary) addRow(r *Reader, row summaryRow, line string) (done, reread bool) {
	switch row.kind {
	case rowRuler:
		s.rulers++
		if row.cells[0][0] == '=' && s.header && s.rows > 0 {
			return true, false
		}
		return false, false
	case rowHeader:
		if s.header {
			s.stop(r, "repeats its header", line)
			return true, true
		}
		s.header = true
		return false, false
	case rowOOMs:
		if s.header || s.sawOOMs {
			r.meta.Warnings.Linef(int(r.line), "the memory summary's CUDA OOMs row is out of place; skipped")
			return false, false
		}
		s.sawOOMs = true
		for i, re := range []*lazyre.Regexp{summaryOOMsCellRe, summaryRetryCellRe} {
			key := []string{"num_ooms", "num_alloc_retries"}[i]
			v, err := strconv.ParseInt(re.FindStringSubmatch(row.cells[i])[1], 10, 64)
			if err != nil {
				r.meta.Warnings.Linef(int(r.line), "memory summary: number out of range; skipped")
				continue
			}
			r.addStat(s.set, s.start, SourceMemorySummary, s.device, key, v, 0, r.line)
		}
		return false, false
	}
	if row.kind != rowData || !s.header {
		s.stop(r, "has a row it does not understand", line)
		return true, true
	}
	cells := row.cells
	name := strings.Join(strings.Fields(cells[0]), " ")
	level := "all"
	switch name {
	case "from large pool":
		level = "large_pool"
	case "from small pool":
		level = "small_pool"
	default:
		mt, ok := summaryMetrics[name]
		if !ok {
			r.meta.Warnings.Linef(int(r.line), "memory summary row %q is not known; skipped", name)
			s.metric = ""
			return false, false
		}
		s.metric, s.pool, s.last = mt.key, mt.pool, name
	}
	if s.metric == "" {
		return false, false // a pool row of a skipped metric
	}
	if level != "all" && !s.pool {
		r.meta.Warnings.Linef(int(r.line), "memory summary: a pool row under a metric without pools; skipped")
		return false, false
	}
	isSize := summaryMetrics[metricName(s.metric)].size
	type val struct{ v, res int64 }
	var vals [4]val
	for i := range summaryColumns {
		v, res, ok := summaryValue(cells[1+i], isSize)
		if !ok {
			r.meta.Warnings.Linef(int(r.line), "memory summary value %q not understood; the row is skipped", strings.TrimSpace(cells[1+i]))
			return false, false
		}
		vals[i] = val{v, res}
	}
	for i, col := range summaryColumns {
		key := s.metric + "." + level + "." + col
		if !s.pool {
			key = s.metric + "." + col
		}
		r.addStat(s.set, s.start, SourceMemorySummary, s.device, key, vals[i].v, vals[i].res, r.line)
	}
	s.rows++
	return false, false
}

// metricName returns the row name of a key family.
func metricName(key string) string {
	for name, m := range summaryMetrics {
		if m.key == key {
			return name
		}
	}
	return ""
}

// summaryValue reads one cell: "148480 KiB" or "  43   ", "12 K ". The
// summary truncates (floor division) to the unit it prints, so the true
// value is in [v, v+res).
func summaryValue(cell string, size bool) (v, res int64, ok bool) {
	var unit int64 = 1
	var digits string
	if size {
		m := summarySizeRe.FindStringSubmatch(cell)
		if m == nil {
			return 0, 0, false
		}
		digits = m[1]
		unit = summaryUnits[m[2]]
	} else {
		m := summaryCountRe.FindStringSubmatch(cell)
		if m == nil {
			return 0, 0, false
		}
		digits = m[1]
		unit = map[string]int64{"": 1, "K": 1000, "M": 1000000}[m[2]]
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > (1<<62)/unit {
		return 0, 0, false
	}
	if unit == 1 {
		return n, 0, true
	}
	return n * unit, unit, true
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// headlessRow reports whether line starts a memory_summary() table pasted
// without its title (cut at its start): its CUDA OOMs row, its header row,
// or a row of one of its metrics whose four values all read as the table
// prints them.
func headlessRow(line string) (summaryRow, bool) {
	rows, _ := barRows(line)
	if len(rows) != 1 {
		return summaryRow{}, false
	}
	row := rows[0]
	switch row.kind {
	case rowHeader, rowOOMs:
		// The OOMs row comes right after the title: a paste cut at the
		// title keeps it, and its counts.
		return row, true
	case rowData:
		mt, ok := summaryMetrics[strings.Join(strings.Fields(row.cells[0]), " ")]
		if !ok {
			return summaryRow{}, false
		}
		for _, c := range row.cells[1:] {
			if _, _, ok := summaryValue(c, mt.size); !ok {
				return summaryRow{}, false
			}
		}
		return row, true
	}
	return summaryRow{}, false
}

// leadlessRow reports whether line is a metric's row that lost its left
// border: the first line of a table cut at its head inside that border
// (" Allocated memory      |  17287 MiB | ... |"), its name and its four
// values read as the table prints them, nothing before the name.
func leadlessRow(line string) (summaryRow, bool) {
	t := strings.TrimRight(line, " \t")
	if !strings.HasSuffix(t, "|") || strings.Count(t, "|") != len(summaryHeader) {
		return summaryRow{}, false
	}
	cells := strings.Split(t[:len(t)-1], "|")
	name := strings.Join(strings.Fields(cells[0]), " ")
	mt, ok := summaryMetrics[name]
	if !ok || !strings.HasPrefix(strings.TrimLeft(cells[0], " \t"), name) {
		return summaryRow{}, false
	}
	for _, c := range cells[1:] {
		if _, _, ok := summaryValue(c, mt.size); !ok {
			return summaryRow{}, false
		}
	}
	return summaryRow{rowData, cells}, true
}

// startHeadlessSummary starts a table from its first row read, the title
// (and with it the device) cut off: the device is unknown, and rows that
// came before are missing.
func (r *Reader) startHeadlessSummary(row summaryRow, line string) {
	s := &summary{device: -1, start: r.line, set: int32(r.meta.Sets), header: row.kind == rowData, label: prefixLabel(linePrefix(line))}
	r.openSummary(s)
	r.meta.Warnings.Linef(int(r.line), "a memory summary without its title (the table starts at line %d, cut before it: %q): its device is not given, and the rows above are missing; the rows from here are read", r.line, clip(strings.TrimSpace(line)))
	if done, _ := s.addRow(r, row, line); done {
		r.closeSummary(s)
	}
}
