package pytorchtext

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// summaryBanner is the title line of torch.cuda.memory_summary().
const summaryBanner = "PyTorch CUDA memory summary, device ID "

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
	summaryBannerRe = regexp.MustCompile(`PyTorch CUDA memory summary, device ID (\d+)\s*\|\s*$`)
	summaryOOMsRe   = regexp.MustCompile(`^\|\s*CUDA OOMs: (\d+)\s*\|\s*cudaMalloc retries: (\d+)\s*\|$`)
	summaryHeaderRe = regexp.MustCompile(`^\|\s*Metric\s*\|\s*Cur Usage\s*\|\s*Peak Usage\s*\|\s*Tot Alloc\s*\|\s*Tot Freed\s*\|$`)
	summaryBorderRe = regexp.MustCompile(`^\|(=+|-+)\|$`)
	summarySizeRe   = regexp.MustCompile(`^\s*(\d{1,15}) (B|KiB|MiB|GiB|TiB|PiB)\s*$`)
	summaryCountRe  = regexp.MustCompile(`^\s*(\d{1,15}) ?([KM]?)\s*$`)
)

// summary is a memory_summary() table being read.
type summary struct {
	prefix  string
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
	m := summaryBannerRe.FindStringSubmatch(line[at:])
	bar := strings.LastIndexByte(line[:at], '|')
	if m == nil || bar < 0 {
		return parse.LineErrorf(r.name, int(r.line), "memory summary title not understood: %q", clip(line))
	}
	dev, err := strconv.Atoi(m[1])
	if err != nil || dev > 1<<20 {
		return parse.LineErrorf(r.name, int(r.line), "memory summary: device ID %s out of range", m[1])
	}
	r.summary = &summary{prefix: line[:bar], device: dev, start: r.line, set: int32(r.meta.Sets)}
	r.meta.Sets++
	return nil
}

// add reads one line of the table; done is true after its closing border.
func (s *summary) add(r *Reader, line string) (done bool, err error) {
	bad := func(what string) error {
		return parse.LineErrorf(r.name, int(r.line), "memory summary (from line %d): %s: %q", s.start, what, clip(line))
	}
	if !strings.HasPrefix(line, s.prefix) {
		return false, bad("a line of the table is missing its prefix or the table was cut")
	}
	row := strings.TrimRight(line[len(s.prefix):], " ")
	switch {
	case summaryBorderRe.MatchString(row):
		if row[1] == '=' && s.header && s.rows > 0 {
			return true, nil
		}
		return false, nil
	case summaryHeaderRe.MatchString(row):
		if s.header {
			return false, bad("a second header row")
		}
		s.header = true
		return false, nil
	}
	if m := summaryOOMsRe.FindStringSubmatch(row); m != nil {
		if s.header || s.sawOOMs {
			return false, bad("the CUDA OOMs row is out of place")
		}
		s.sawOOMs = true
		for i, key := range []string{"num_ooms", "num_alloc_retries"} {
			v, err := strconv.ParseInt(m[i+1], 10, 64)
			if err != nil {
				return false, bad("number out of range")
			}
			r.addStat(s.set, s.start, SourceMemorySummary, s.device, key, v, 0, r.line)
		}
		return false, nil
	}
	cells := strings.Split(row, "|")
	if len(cells) != 7 || cells[0] != "" || cells[6] != "" || !s.header {
		return false, bad("row not understood")
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
			r.warn("line %d: memory summary row %q is not known; skipped", r.line, name)
			s.metric = ""
			return false, nil
		}
		s.metric, s.pool = mt.key, mt.pool
	}
	if s.metric == "" {
		return false, nil // a pool row of a skipped metric
	}
	if level != "all" && !s.pool {
		return false, bad("a pool row under a metric without pools")
	}
	isSize := summaryMetrics[metricName(s.metric)].size
	for i, col := range summaryColumns {
		v, res, ok := summaryValue(cells[2+i], isSize)
		if !ok {
			return false, bad("value " + strconv.Quote(strings.TrimSpace(cells[2+i])) + " not understood")
		}
		key := s.metric + "." + level + "." + col
		if !s.pool {
			key = s.metric + "." + col
		}
		r.addStat(s.set, s.start, SourceMemorySummary, s.device, key, v, res, r.line)
	}
	s.rows++
	return false, nil
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
		unit = map[string]int64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}[m[2]]
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
