// Package live keeps the recent samples of a live capture and turns them
// into what "gpuleak watch" shows: per GPU and process, the used memory, a
// sparkline, the trend class and rate, and the time to OOM, as a terminal
// screen, one line per tick, or Prometheus gauges. The trends are those of
// "gpuleak trend" (trend.Analyzer), computed over the window.
package live

import (
	"bytes"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/capture"
	"github.com/gpuleak/gpuleak/parse/nvml"
)

const nvmlFormat = nvml.FormatPynvmlJSONL

// Window holds the last ticks of a capture, encoded as the capture's JSON
// lines, so that the trend is computed exactly as "gpuleak trend" computes
// it from a capture file. Memory is bounded by the number of ticks kept.
type Window struct {
	max   int
	ticks [][]byte // a ring: ticks[next] is the oldest once full
	next  int
	full  bool
	buf   bytes.Buffer
}

// NewWindow keeps the last n ticks (at least 2).
func NewWindow(n int) *Window {
	return &Window{max: max(n, 2)}
}

// Add keeps one tick's samples, dropping the oldest tick when full.
func (w *Window) Add(samples []capture.GPUSample) {
	var b []byte
	if w.full {
		b = w.ticks[w.next][:0] // reuse the oldest tick's buffer
	}
	for i := range samples {
		b = capture.AppendJSON(b, &samples[i])
	}
	if w.full {
		w.ticks[w.next] = b
	} else {
		w.ticks = append(w.ticks, b)
	}
	w.next++
	if w.next == w.max {
		w.next, w.full = 0, true
	}
}

// Len is the number of ticks kept.
func (w *Window) Len() int { return len(w.ticks) }

// Trends analyses the ticks kept, oldest first, as one input named name.
func (w *Window) Trends(name string, opt trend.Options) (*trend.Result, error) {
	w.buf.Reset()
	if w.full {
		for _, t := range w.ticks[w.next:] {
			w.buf.Write(t)
		}
		for _, t := range w.ticks[:w.next] {
			w.buf.Write(t)
		}
	} else {
		for _, t := range w.ticks {
			w.buf.Write(t)
		}
	}
	a := trend.NewAnalyzer(opt)
	r := nvml.NewReader(bytes.NewReader(w.buf.Bytes()), name, nvml.WithFormat(nvmlFormat))
	defer r.Release()
	for r.Next() {
		if err := a.Add(name, r.RecordBatch()); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	m := r.Metadata()
	a.Input(name, m.FirstUs, m.LastUs)
	a.ProcessesListed(name, m.ProcessesListedUs)
	a.ProcessesPartial(name, m.ProcessesPartialUs)
	a.Graphics(name, m.GraphicsPIDs)
	return a.Finalize(), nil
}
