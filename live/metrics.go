package live

import (
	"math"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
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
//	gpuleak_samples                        samples in the trend's window
type Metrics struct {
	mu   sync.Mutex
	rows []Row

	used, capacity, slope, growing, tto, samples *prometheus.Desc
}

var labels = []string{"gpu", "uuid", "host", "pid", "process"}

// NewMetrics makes the collector; register it in a prometheus.Registry.
func NewMetrics() *Metrics {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, labels, nil) }
	return &Metrics{
		used:     d("gpuleak_memory_used_bytes", "GPU memory used by a GPU (pid=\"\") or a process, the last sample."),
		capacity: d("gpuleak_memory_capacity_bytes", "A GPU's usable memory: total less the driver's reservation."),
		slope:    d("gpuleak_memory_slope_bytes_per_second", "Theil-Sen slope of used memory over the trend window."),
		growing:  d("gpuleak_memory_growing", "1 when used memory is still growing (a leak suspect), else 0."),
		tto:      d("gpuleak_time_to_oom_seconds", "Seconds until the GPU runs out of memory at this rate; absent when not credible."),
		samples:  d("gpuleak_samples", "Samples in the trend window."),
	}
}

// Update replaces the rows the gauges show.
func (m *Metrics) Update(rows []Row) {
	m.mu.Lock()
	m.rows = append(m.rows[:0], rows...)
	m.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.used, m.capacity, m.slope, m.growing, m.tto, m.samples} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.rows {
		r := &m.rows[i]
		lv := []string{strconv.Itoa(int(r.GPU)), r.UUID, r.Host, "", ""}
		if r.HasPID {
			lv[3], lv[4] = strconv.FormatInt(r.PID, 10), r.Process
		}
		g := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
		}
		g(m.used, float64(r.UsedBytes))
		if !r.HasPID && r.CapacityBytes > 0 {
			g(m.capacity, float64(r.CapacityBytes))
		}
		g(m.slope, r.Rate)
		grow := 0.0
		if r.Suspect() {
			grow = 1
		}
		g(m.growing, grow)
		if !math.IsNaN(r.OOMSeconds) {
			g(m.tto, r.OOMSeconds)
		}
		g(m.samples, float64(r.Samples))
	}
}
