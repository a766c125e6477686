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
	summaryOOMsRe       = lazyre.New(`^\|\s*CUDA OOMs: (\d+)\s*\|\s*cudaMalloc retries: (\d+)\s*\|$`)
	summaryHeaderRe     = lazyre.New(`^\|\s*Metric\s*\|\s*Cur Usage\s*\|\s*Peak Usage\s*\|\s*Tot Alloc\s*\|\s*Tot Freed\s*\|$`)
	summaryBorderRe     = lazyre.New(`^\|(=+|-+)\|$`)
	// Sizes: "B/KiB/MiB/GiB/TiB/PiB" (1.6 and later) or "B/KB/MB/GB/TB/PB"
	// (before): _format_size() divides by 1024 in both, so "MB" is MiB.
	summarySizeRe  = lazyre.New(`^\s*(\d{1,15}) (B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB)\s*$`)
	summaryCountRe = lazyre.New(`^\s*(\d{1,15}) ?([KM]?)\s*$`)
)

// summaryUnits are the size units of memory_summary(): powers of 1024,
// whichever way a release labels them.
var summaryUnits = map[string]int64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
	"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}

// PartialKey is the stats key that marks a memory_summary() table cut
// short or with rows that could not be read: its value is the line where
// reading stopped. The set holds the rows read before it.
const PartialKey = "gpuleak.partial_at_line"

// summary is a memory_summary() table being read. Its rows are found by
// width: every row of the table is as wide as its title row, so whatever a
// logger wrote before each row (a timestamp, a process tag) is skipped,
// and a title glued to the border above it ("|====||  PyTorch CUDA memory
// summary...") is read as well.
type summary struct {
	width   int
	device  int
	start   int64 // the banner's line
	set     int32
	header  bool
	metric  string // key family of the current metric
	pool    bool
	rows    int
	sawOOMs bool
}

func (r *Reader) startSummary(line string, at int) error {
	m := summaryBannerRe.FindStringSubmatchIndex(line[at:])
	bar := strings.LastIndexByte(line[:at], '|')
	if m == nil || bar < 0 {
		if bar >= 0 && summaryBannerOpenRe.MatchString(line[at:]) {
			// The title is whole but its right border is gone: the
			// table was cut at a width.
			r.meta.Warnings.Linef(int(r.line), "a memory summary without its right border (%q): the table was cut at a width (a log viewer, a line limit) and is not read; print it again whole (or save torch.cuda.memory_stats() as JSON)", clip(line))
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
	s := &summary{width: at + m[1] - bar, device: dev, start: r.line, set: int32(r.meta.Sets)}
	r.summary = s
	r.meta.Sets++
	// Rows glued after the title on its line ("...device ID 0 ||----|").
	if rest := strings.TrimRight(line[at+m[1]:], " \t"); rest != "" {
		if rows := s.rowsOf(rest); len(rows)*s.width == len(rest) {
			for _, row := range rows {
				if done, _ := s.addRow(r, row); done {
					r.summary = nil
					break
				}
			}
		}
	}
	return nil
}

// maxGluedRows bounds the rows read from one line.
const maxGluedRows = 64

// rowsOf returns the table rows at the end of line, left to right: one
// row, or several glued together when a logger lost the line ends between
// them. It returns none when the line does not end with a row.
func (s *summary) rowsOf(line string) []string {
	t := strings.TrimRight(line, " \t")
	var rows []string
	for end := len(t); end >= s.width && len(rows) < maxGluedRows; end -= s.width {
		row := t[end-s.width : end]
		if row[0] != '|' || row[len(row)-1] != '|' {
			break
		}
		rows = append(rows, row)
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows
}

// stop ends a table that broke off at the current line: the rows read are
// kept, marked partial, and the line is read again as text (an OOM message
// printed right after a cut table is not lost).
func (s *summary) stop(r *Reader, why string) {
	r.meta.Warnings.Add(parse.InlineNote(int(r.line), -1, "memory summary (from line %d) %s at line %d; the %d rows before are kept, marked partial", s.start, why, r.line, s.rows))
	r.addStat(s.set, s.start, SourceMemorySummary, s.device, PartialKey, r.line, 0, r.line)
}

// add reads one line of the table; done is true after its closing border
// or when the table broke off (then reread is true: the line is not the
// table's).
func (s *summary) add(r *Reader, line string) (done, reread bool) {
	rows := s.rowsOf(line)
	if len(rows) == 0 {
		s.stop(r, "is cut")
		return true, true
	}
	for _, row := range rows {
		if done, reread := s.addRow(r, row); done {
			return true, reread
		}
	}
	return false, false
}

// addRow reads one row of the table (see add).
func (s *summary) addRow(r *Reader, row string) (done, reread bool) {
	switch {
	case summaryBorderRe.MatchString(row):
		if row[1] == '=' && s.header && s.rows > 0 {
			return true, false
		}
		return false, false
	case summaryHeaderRe.MatchString(row):
		if s.header {
			s.stop(r, "repeats its header")
			return true, true
		}
		s.header = true
		return false, false
	}
	if m := summaryOOMsRe.FindStringSubmatch(row); m != nil {
		if s.header || s.sawOOMs {
			r.meta.Warnings.Linef(int(r.line), "the memory summary's CUDA OOMs row is out of place; skipped")
			return false, false
		}
		s.sawOOMs = true
		for i, key := range []string{"num_ooms", "num_alloc_retries"} {
			v, err := strconv.ParseInt(m[i+1], 10, 64)
			if err != nil {
				r.meta.Warnings.Linef(int(r.line), "memory summary: number out of range; skipped")
				continue
			}
			r.addStat(s.set, s.start, SourceMemorySummary, s.device, key, v, 0, r.line)
		}
		return false, false
	}
	cells := strings.Split(row, "|")
	if len(cells) != 7 || cells[0] != "" || cells[6] != "" || !s.header {
		s.stop(r, "has a row it does not understand")
		return true, true
	}
	name := strings.TrimSpace(cells[1])
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
		s.metric, s.pool = mt.key, mt.pool
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
		v, res, ok := summaryValue(cells[2+i], isSize)
		if !ok {
			r.meta.Warnings.Linef(int(r.line), "memory summary value %q not understood; the row is skipped", strings.TrimSpace(cells[2+i]))
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
