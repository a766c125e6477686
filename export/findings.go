package export

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/daily"
	"github.com/gpuleak/gpuleak/report"
)

// FindingsSchema is the findings table: one row per finding of the
// gpuleak.report/v1 document (README.md documents its members).
//
//	time             timestamp[us, UTC]  when it happened: an OOM's time, a trend's
//	                                     last sample, a leak's last kept allocation,
//	                                     else its input's; null when unknown
//	job, path        utf8     its group and input
//	source           utf8     the input's format
//	kind             utf8     oom, leak, pending-free, trend, non-pytorch, fragmentation, live, retained
//	device           int32    CUDA device; null when the input does not say
//	site             utf8     the innermost user frame, "function (file:line)"
//	site_function, site_file utf8; site_line int64
//	stack            utf8     the visible stack, innermost first, joined with " < "
//	bytes            int64    held at the end (a trend: its last sample's used memory)
//	count            int64    allocations holding them
//	bytes_per_s      float64  a leak's growth, a trend's slope; null when none
//	gpu              int32    NVML index (trends); gpu_uuid, process utf8; pid int64
//	classification   utf8     a trend's: growing, sawtooth, step, flat
//	time_to_oom_s    float64  a trend's; null when not credible
//	cause            utf8     an OOM's causes joined with "+"
//	requested_bytes  int64    an OOM's request
//	message          utf8     the finding's sentence
var FindingsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "time", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "job", Type: arrow.BinaryTypes.String},
	{Name: "path", Type: arrow.BinaryTypes.String},
	{Name: "source", Type: arrow.BinaryTypes.String},
	{Name: "kind", Type: arrow.BinaryTypes.String},
	{Name: "device", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "site", Type: arrow.BinaryTypes.String},
	{Name: "site_function", Type: arrow.BinaryTypes.String},
	{Name: "site_file", Type: arrow.BinaryTypes.String},
	{Name: "site_line", Type: arrow.PrimitiveTypes.Int64},
	{Name: "stack", Type: arrow.BinaryTypes.String},
	{Name: "bytes", Type: arrow.PrimitiveTypes.Int64},
	{Name: "count", Type: arrow.PrimitiveTypes.Int64},
	{Name: "bytes_per_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "gpu", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "gpu_uuid", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "pid", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "process", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "classification", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "time_to_oom_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "cause", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "requested_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "message", Type: arrow.BinaryTypes.String},
}, nil)

// findings writes a group's findings, one part per date and host: the
// date of the finding's own time, or of its input (dates) when it has
// none or its input's times are not dates (undated: daily.ContentDated).
// uuidOf (daily.GPUUUIDs) names a trend's GPU by its UUID where its log
// gives only the index; notes mark the parts holding findings of an
// input read in part (ReadInPartKey) or whose times are not dates
// (UndatedKey).
func (e *exporter) findings(g daily.Group, fs []report.Finding, dates map[string]string, undated map[string]bool, uuidOf map[string]string, notes partNotes, rows map[string]int64) error {
	type key struct{ date, host string }
	builders := map[key]*array.RecordBuilder{}
	paths := map[key][]string{} // the inputs of each part's findings
	var order []key
	defer func() {
		for _, b := range builders {
			b.Release()
		}
	}()
	for i := range fs {
		f := &fs[i]
		d, ok := dates[f.Path]
		if !ok {
			continue
		}
		us, timed := daily.FindingTime(f)
		timed = timed && !undated[f.Path] // times from the epoch: no time, not 1970's
		if timed {
			d = daily.Date(us)
		}
		host := g.Host
		if host == "" {
			host = f.Host
		}
		k := key{d, host}
		b := builders[k]
		if b == nil {
			b = array.NewRecordBuilder(memory.DefaultAllocator, FindingsSchema)
			builders[k] = b
			order = append(order, k)
		}
		if ps := paths[k]; len(ps) == 0 || ps[len(ps)-1] != f.Path {
			paths[k] = append(ps, f.Path)
		}
		if f.GPUUUID == "" && f.GPU != nil {
			if u, ok := uuidOf[f.Host+"|"+fmt.Sprint(*f.GPU)]; ok {
				c := *f
				c.GPUUUID = u
				f = &c
			}
		}
		appendFinding(b, f, g.Job, us, timed)
	}
	for _, k := range order {
		rec := builders[k].NewRecordBatch()
		w, err := e.newPart("findings", k.date, k.host, notes.mark(FindingsSchema, paths[k]))
		if err == nil {
			err = w.write(rec)
			if err == nil {
				err = w.close()
			} else {
				w.abort()
			}
		}
		rows["findings"] += rec.NumRows()
		rec.Release()
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.sum.Parts++
		e.mu.Unlock()
	}
	return nil
}

func appendFinding(b *array.RecordBuilder, f *report.Finding, job string, us int64, timed bool) {
	i := 0
	next := func() array.Builder { c := b.Field(i); i++; return c }
	str := func(s string) { next().(*array.StringBuilder).Append(s) }
	optStr := func(s string) {
		c := next().(*array.StringBuilder)
		if s == "" {
			c.AppendNull()
		} else {
			c.Append(s)
		}
	}
	i64 := func(p *int64) {
		c := next().(*array.Int64Builder)
		if p == nil {
			c.AppendNull()
		} else {
			c.Append(*p)
		}
	}
	i32 := func(p *int) {
		c := next().(*array.Int32Builder)
		if p == nil {
			c.AppendNull()
		} else {
			c.Append(int32(*p))
		}
	}
	f64 := func(p *float64) {
		c := next().(*array.Float64Builder)
		if p == nil {
			c.AppendNull()
		} else {
			c.Append(*p)
		}
	}
	tc := next().(*array.TimestampBuilder)
	if timed {
		tc.Append(arrow.Timestamp(us))
	} else {
		tc.AppendNull()
	}
	str(job)
	str(f.Path)
	str(f.Source)
	str(string(f.Kind))
	i32(f.Device)
	str(f.Site.String())
	str(f.Site.Function)
	str(f.Site.File)
	line := f.Site.Line
	i64(&line)
	var st []string
	for _, fr := range f.Stack {
		st = append(st, fr.String())
	}
	str(strings.Join(st, " < "))
	bytes, count := f.Bytes, int64(f.Count)
	i64(&bytes)
	i64(&count)
	switch {
	case f.Growth != nil && f.Growth.BytesPerSecond != nil:
		f64(f.Growth.BytesPerSecond)
	default:
		f64(f.SlopeBytesPerS)
	}
	i32(f.GPU)
	optStr(f.GPUUUID)
	i64(f.PID)
	optStr(f.Process)
	optStr(f.Classification)
	f64(f.TimeToOOMS)
	var cause string
	var req *int64
	if f.OOMDetail != nil {
		cause = strings.Join(f.Cause, "+")
		req = f.RequestedBytes
	}
	optStr(cause)
	i64(req)
	str(f.Message)
}
