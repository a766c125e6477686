package capture

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// RunOptions tune Run.
type RunOptions struct {
	// Interval between ticks (default 1s). Ticks that fall due while one
	// is still being taken are dropped, not queued (time.Ticker).
	Interval time.Duration
	// Duration stops sampling after this long; 0: until ctx ends.
	Duration time.Duration
	// Keep says which processes to record; nil keeps all. GPU rows are
	// always recorded.
	Keep func(pid int64) bool
	// OnTick sees each tick after it is written (the live view); nil: none.
	OnTick func([]GPUSample)
	// MaxErrors is how many ticks in a row may fail before Run gives up
	// (default 10); a failed tick is skipped and counted.
	MaxErrors int
}

// Stats describe a run of Run: what was sampled, how regularly, and what
// sampling cost.
type Stats struct {
	Ticks   int // ticks written
	Rows    int // GPU rows + process rows written
	Failed  int // ticks skipped because NVML failed
	LastErr error
	// FirstUs and LastUs: the first and last tick written (µs, UTC).
	FirstUs, LastUs int64
	// Intervals between consecutive ticks written: mean, median, 99th
	// percentile and largest (the median and percentile over the first
	// 65,536 intervals).
	MeanInterval, P50Interval, P99Interval, MaxInterval time.Duration
	// SampleWall is the wall time spent taking and writing ticks.
	SampleWall time.Duration
	// CPU is the user + system CPU time gpuleak itself used during the run
	// (getrusage RUSAGE_SELF: the sampled program is not counted); -1 where
	// the system cannot tell.
	CPU time.Duration
}

// PerTick is d divided over the ticks.
func (s *Stats) PerTick(d time.Duration) time.Duration {
	if s.Ticks == 0 {
		return 0
	}
	return d / time.Duration(s.Ticks)
}

const maxKeptIntervals = 1 << 16

// Run samples src every opt.Interval and writes each tick to w until ctx
// ends or opt.Duration has passed. The tick being taken when ctx ends is
// finished and written first, so a stop loses no sample. Run does not close
// w or src. It returns the stats, and an error when writing failed or
// opt.MaxErrors ticks in a row could not be taken.
func Run(ctx context.Context, src Source, w *Writer, opt RunOptions) (st Stats, err error) {
	if opt.Interval <= 0 {
		opt.Interval = time.Second
	}
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = 10
	}
	cpu0 := cpuTime()
	var deadline <-chan time.Time
	if opt.Duration > 0 {
		tm := time.NewTimer(opt.Duration)
		defer tm.Stop()
		deadline = tm.C
	}
	tick := time.NewTicker(opt.Interval)
	defer tick.Stop()
	var (
		buf       []GPUSample
		intervals []time.Duration
		sum       time.Duration
		inRow     int
	)
	defer func() {
		if c := cpuTime(); c >= 0 && cpu0 >= 0 {
			st.CPU = c - cpu0
		} else {
			st.CPU = -1
		}
		if n := st.Ticks - 1; n > 0 {
			st.MeanInterval = sum / time.Duration(n)
			slices.Sort(intervals)
			st.P50Interval = intervals[len(intervals)/2]
			st.P99Interval = intervals[min(len(intervals)-1, len(intervals)*99/100)]
		}
	}()
	for {
		t0 := time.Now()
		buf, err = src.Sample(buf[:0])
		if err != nil {
			st.Failed++
			st.LastErr = err
			if inRow++; inRow >= opt.MaxErrors {
				return st, fmt.Errorf("%d samples in a row failed: %w", inRow, err)
			}
		} else {
			err = nil
			inRow = 0
			rows := 0
			for i := range buf {
				if opt.Keep != nil {
					buf[i].Processes = slices.DeleteFunc(buf[i].Processes, func(p Process) bool { return !opt.Keep(p.PID) })
				}
				rows += 1 + len(buf[i].Processes)
			}
			if err := w.WriteTick(buf); err != nil {
				return st, fmt.Errorf("writing samples: %w", err)
			}
			if len(buf) > 0 {
				t := buf[0].TimeUs
				if st.Ticks > 0 {
					d := time.Duration(t-st.LastUs) * time.Microsecond
					sum += d
					st.MaxInterval = max(st.MaxInterval, d)
					if len(intervals) < maxKeptIntervals {
						intervals = append(intervals, d)
					}
				} else {
					st.FirstUs = t
				}
				st.LastUs = t
				st.Ticks++
				st.Rows += rows
			}
			st.SampleWall += time.Since(t0)
			if opt.OnTick != nil {
				opt.OnTick(buf)
			}
		}
		select {
		case <-ctx.Done():
			return st, nil
		case <-deadline:
			return st, nil
		case <-tick.C:
		}
	}
}
