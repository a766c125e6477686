package live

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/internal/sizes"
)

// Row is one GPU or process of the live view. Sizes are bytes, Rate bytes
// per second.
type Row struct {
	GPU     int32
	UUID    string
	GPUName string
	Host    string
	PID     int64
	HasPID  bool
	Process string

	UsedBytes     int64 // the last sample
	CapacityBytes int64 // the GPU's usable memory; 0 when unknown
	Profile       []int64
	Samples       int
	Class         trend.Class
	Rate          float64 // Theil-Sen slope over the trend's window
	// OOMSeconds is the time to out-of-memory at this rate; NaN when not
	// credible (see trend.SeriesTrend.NoOOMReason).
	OOMSeconds float64
}

// Suspect says whether the row is a leak suspect: still growing.
func (r *Row) Suspect() bool { return r.Class == trend.Growing }

// Rows turns a trend result into rows: each GPU, then its processes.
func Rows(res *trend.Result) []Row {
	rows := make([]Row, 0, len(res.Series))
	for i := range res.Series {
		s := &res.Series[i]
		r := Row{GPU: s.GPU, UUID: s.UUID, GPUName: s.GPUName, Host: s.Host, PID: s.PID, HasPID: s.HasPID,
			Process: s.Process, UsedBytes: s.LastBytes, CapacityBytes: s.CapacityBytes, Profile: s.Profile,
			Samples: s.Samples, Class: s.Class, Rate: s.Slope, OOMSeconds: math.NaN()}
		if s.TimeToOOM != nil {
			r.OOMSeconds = s.TimeToOOM.Seconds
		}
		rows = append(rows, r)
	}
	return rows
}

// SortKey orders the rows of the view: processes are sorted within their GPU.
type SortKey int

// Sort keys, cycled by the keys of the view.
const (
	ByGPU  SortKey = iota // GPU index, then pid
	ByUsed                // most memory first
	ByRate                // fastest growth first
	ByOOM                 // soonest out of memory first
)

func (k SortKey) String() string {
	return [...]string{"gpu", "used", "rate", "time to OOM"}[k]
}

// Sort orders rows by key, keeping each GPU's row before its processes.
func Sort(rows []Row, key SortKey) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(a.GPU, b.GPU); c != 0 {
			return c
		}
		if a.HasPID != b.HasPID {
			if a.HasPID {
				return 1
			}
			return -1
		}
		switch key {
		case ByUsed:
			if c := cmp.Compare(b.UsedBytes, a.UsedBytes); c != 0 {
				return c
			}
		case ByRate:
			if c := cmp.Compare(b.Rate, a.Rate); c != 0 {
				return c
			}
		case ByOOM:
			if c := cmpOOM(a.OOMSeconds, b.OOMSeconds); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.PID, b.PID)
	})
}

// cmpOOM puts known times first, soonest first.
func cmpOOM(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values from their least (lowest block) to their most.
func Sparkline(values []int64) string {
	if len(values) == 0 {
		return ""
	}
	lo, hi := slices.Min(values), slices.Max(values)
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int(int64(len(sparkBlocks)-1) * (v - lo) / (hi - lo))
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}

func ibytes(n int64) string {
	if n < 0 {
		return "-" + humanize.IBytes(uint64(-n))
	}
	return humanize.IBytes(uint64(n))
}

func rate(r float64) string {
	if r == 0 || math.IsNaN(r) {
		return "0/s"
	}
	s := "+"
	if r < 0 {
		s = "-"
	}
	return s + humanize.IBytes(uint64(math.Abs(r))) + "/s"
}

func oom(sec float64) string {
	if math.IsNaN(sec) {
		return "-"
	}
	return trend.Duration(sec)
}

func label(r *Row) string {
	if r.HasPID {
		return fmt.Sprintf("  %d %s", r.PID, procName(r))
	}
	return fmt.Sprintf("GPU %d %s", r.GPU, clean(r.GPUName))
}

// procName is the process's executable name without its directory.
func procName(r *Row) string {
	name := r.Process
	if name == "" {
		return "?"
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	return clean(name)
}

// clean keeps names printable: a process name comes from another user.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// Screen draws the whole view (for a terminal that has been cleared):
// a header, a row per GPU and process, and the keys.
func Screen(w io.Writer, rows []Row, key SortKey, now time.Time, interval time.Duration, ticks int, status string) {
	fmt.Fprintf(w, "gpuleak watch  %s  every %v, trend over the last %d samples  (sorted by %s)\r\n\r\n",
		now.UTC().Format("2006-01-02 15:04:05Z"), interval, ticks, key)
	fmt.Fprintf(w, "%-28s %10s %10s  %-24s %-9s %12s %10s\r\n", "GPU / PROCESS", "USED", "OF", "TREND", "CLASS", "RATE", "OOM IN")
	for i := range rows {
		r := &rows[i]
		used, of := ibytes(r.UsedBytes), ""
		if !r.HasPID && r.CapacityBytes > 0 {
			used, of = sizes.Of(r.UsedBytes, r.CapacityBytes, ibytes)
		}
		mark := ""
		if r.Suspect() {
			mark = "  <- leak suspect"
		}
		fmt.Fprintf(w, "%-28.28s %10s %10s  %-24s %-9s %12s %10s%s\r\n", label(r), used, of,
			Sparkline(shrink(r.Profile, 24)), r.Class, rate(r.Rate), oom(r.OOMSeconds), mark)
	}
	if status != "" {
		fmt.Fprintf(w, "\r\n%s\r\n", status)
	}
	fmt.Fprint(w, "\r\nq quit   g sort by GPU   u by used   r by rate   o by time to OOM\r\n")
}

// shrink keeps at most n values, each the highest of its share of v.
func shrink(v []int64, n int) []int64 {
	if len(v) <= n {
		return v
	}
	out := make([]int64, n)
	for i := range out {
		lo, hi := i*len(v)/n, (i+1)*len(v)/n
		out[i] = slices.Max(v[lo:max(hi, lo+1)])
	}
	return out
}

// Line is the view in one line, for a log (standard output not a
// terminal): the time, and per GPU its used memory, class, rate and time
// to OOM, with its growing processes.
func Line(rows []Row, now time.Time) string {
	var b strings.Builder
	b.WriteString(now.UTC().Format("2006-01-02T15:04:05Z"))
	for i := range rows {
		r := &rows[i]
		if r.HasPID && !r.Suspect() {
			continue
		}
		if r.HasPID {
			fmt.Fprintf(&b, " | pid %d %s", r.PID, procName(r))
		} else {
			fmt.Fprintf(&b, " | GPU %d", r.GPU)
		}
		fmt.Fprintf(&b, " %s %s %s", ibytes(r.UsedBytes), r.Class, rate(r.Rate))
		if !math.IsNaN(r.OOMSeconds) {
			fmt.Fprintf(&b, " OOM in %s", oom(r.OOMSeconds))
		}
	}
	return b.String()
}
