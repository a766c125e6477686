package live

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Metrics exposes the rows of the live view as Prometheus gauges. Every
// series carries the labels gpu (NVML index), uuid, host and, for a
// process, pid and process; a GPU's own series have pid="" and process="".
//
//	gpuleak_memory_used_bytes              used memory, the last sample
//	gpuleak_memory_capacity_bytes          a GPU's usable memory (total less the driver's reservation)
//	gpuleak_memory_slope_bytes_per_second  the trend's Theil-Sen slope over the window
//	gpuleak_memory_growing                 1 when the trend class is growing (a leak suspect), else 0
//	gpuleak_time_to_oom_seconds            time to out-of-memory at this rate; absent when not credible
//	gpuleak_samples                        samples in the trend window
//
// The families are encoded by Prometheus' own encoder
// (github.com/prometheus/common/expfmt): the text exposition format 0.0.4
// by default, or what a scraper's Accept header asks (OpenMetrics,
// protobuf). The client library (client_golang) is not linked: its
// package initialisation (a default registry, process and Go collectors)
// cost about a tenth of the instructions of every short gpuleak run.
type Metrics struct {
	mu   sync.Mutex
	rows []Row
}

var labels = []string{"gpu", "uuid", "host", "pid", "process"}

// metricDefs lists the families in the order written: by name, as
// Prometheus' registry gathers them.
var metricDefs = []struct {
	name, help string
	value      func(r *Row) (float64, bool) // false: no sample for this row
}{
	{"gpuleak_memory_capacity_bytes", "A GPU's usable memory: total less the driver's reservation.",
		func(r *Row) (float64, bool) { return float64(r.CapacityBytes), !r.HasPID && r.CapacityBytes > 0 }},
	{"gpuleak_memory_growing", "1 when used memory is still growing (a leak suspect), else 0.",
		func(r *Row) (float64, bool) {
			if r.Suspect() {
				return 1, true
			}
			return 0, true
		}},
	{"gpuleak_memory_slope_bytes_per_second", "Theil-Sen slope of used memory over the trend window.",
		func(r *Row) (float64, bool) { return r.Rate, true }},
	{"gpuleak_memory_used_bytes", "GPU memory used by a GPU (pid=\"\") or a process, the last sample.",
		func(r *Row) (float64, bool) { return float64(r.UsedBytes), true }},
	{"gpuleak_samples", "Samples in the trend window.",
		func(r *Row) (float64, bool) { return float64(r.Samples), true }},
	{"gpuleak_time_to_oom_seconds", "Seconds until the GPU runs out of memory at this rate; absent when not credible.",
		func(r *Row) (float64, bool) { return r.OOMSeconds, !math.IsNaN(r.OOMSeconds) }},
}

// NewMetrics makes the gauges, with no rows until Update.
func NewMetrics() *Metrics { return &Metrics{} }

// Update replaces the rows the gauges show.
func (m *Metrics) Update(rows []Row) {
	m.mu.Lock()
	m.rows = append(m.rows[:0], rows...)
	m.mu.Unlock()
}

// Families returns the gauges of the rows given last as metric families,
// sorted by name, each family's series sorted by their label values (as
// client_golang's registry sorts them); a family with no series is left
// out.
func (m *Metrics) Families() []*dto.MetricFamily {
	m.mu.Lock()
	rows := slices.Clone(m.rows)
	m.mu.Unlock()
	pairs := make([][]*dto.LabelPair, len(rows))
	for i := range rows {
		r := &rows[i]
		lv := []string{strconv.Itoa(int(r.GPU)), r.UUID, r.Host, "", ""}
		if r.HasPID {
			lv[3], lv[4] = strconv.FormatInt(r.PID, 10), r.Process
		}
		// Label pairs sorted by name, as the text format writes them.
		order := []int{0, 2, 3, 4, 1} // gpu, host, pid, process, uuid
		for _, j := range order {
			pairs[i] = append(pairs[i], &dto.LabelPair{Name: &labels[j], Value: &lv[j]})
		}
	}
	gauge := dto.MetricType_GAUGE
	var fams []*dto.MetricFamily
	for d := range metricDefs {
		def := &metricDefs[d]
		f := &dto.MetricFamily{Name: &def.name, Help: &def.help, Type: &gauge}
		for i := range rows {
			if v, ok := def.value(&rows[i]); ok {
				f.Metric = append(f.Metric, &dto.Metric{Label: pairs[i], Gauge: &dto.Gauge{Value: &v}})
			}
		}
		slices.SortStableFunc(f.Metric, func(a, b *dto.Metric) int {
			for k := range a.Label {
				if c := strings.Compare(a.Label[k].GetValue(), b.Label[k].GetValue()); c != 0 {
					return c
				}
			}
			return 0
		})
		if len(f.Metric) > 0 {
			fams = append(fams, f)
		}
	}
	return fams
}

// WriteText writes the gauges in the text exposition format (0.0.4).
func (m *Metrics) WriteText(w io.Writer) error {
	for _, f := range m.Families() {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return err
		}
	}
	return nil
}

// ServeHTTP serves the gauges in the format the request's Accept header
// negotiates (expfmt.Negotiate: the text format unless a scraper asks for
// OpenMetrics or protobuf).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	format := expfmt.Negotiate(r.Header)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, format)
	for _, f := range m.Families() {
		if err := enc.Encode(f); err != nil {
			http.Error(w, "encoding the gauges: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			http.Error(w, "encoding the gauges: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", string(format))
	w.Write(buf.Bytes())
}

// WriteTextfile writes the gauges in the text format to path for
// node_exporter's textfile collector, atomically: to a temporary file in
// the same directory, then renamed over path, so that the collector never
// reads half a file. Errors are the file system's, with the path.
func (m *Metrics) WriteTextfile(path string) error {
	var buf bytes.Buffer
	if err := m.WriteText(&buf); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// CreateTemp makes the file 0600; node_exporter may run as another user.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
