package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/internal/sizes"
)

// writeTrendTable renders the trend document for people: one line per
// input, a compact table with a row per GPU and per process in the order
// of the findings, on a terminal a sparkline of each GPU's used memory,
// then the line to act on of each finding and the warnings.
func writeTrendTable(w io.Writer, r *Report, opt Options) error {
	r = cleaned(r)
	ew := &errWriter{w: w}
	writeInputs(ew, r)
	if len(r.Findings) == 0 {
		fmt.Fprintln(ew, "\nNo memory samples.")
	} else {
		fmt.Fprintln(ew)
		if err := trendTable(ew, r, opt); err != nil {
			return err
		}
		if opt.Terminal {
			sparklines(ew, r)
		}
		fmt.Fprintln(ew)
		for i, f := range r.Findings {
			fmt.Fprintf(ew, "%d. %s\n", i+1, clean(f.Message))
		}
	}
	writeWarnings(ew, r)
	return ew.err
}

func trendTable(w io.Writer, r *Report, opt Options) error {
	multi := len(r.Inputs) > 1
	header := []string{"#", "GPU", "PID", "PROCESS", "CLASS", "SAMPLES", "END", "PEAK", "SLOPE", "R²", "TIME TO OOM"}
	if multi {
		header = append(header, "INPUT")
	}
	l, rt := tw.AlignLeft, tw.AlignRight
	aligns := []tw.Align{rt, rt, rt, l, l, rt, rt, rt, rt, rt, l, l}[:len(header)]
	// A HOST column where the findings name several hosts (a fleet's log
	// collected with pdsh or clush, DCGM scrapes of several nodes): GPU 0
	// of one host is not GPU 0 of another.
	byHost := severalHosts(r)
	if byHost {
		header = append(header[:1], append([]string{"HOST"}, header[1:]...)...)
		aligns = append(aligns[:1], append([]tw.Align{l}, aligns[1:]...)...)
	}
	var rows [][]string
	assumed := assumedPeriods(r)
	// One time unit for the SLOPE column: that of its fastest rate (rate's
	// choice for it), so that rates compare down the column ("12 MiB/min"
	// beside "60 MiB/min", not beside "1.0 GiB/h"; per-sample cells, of
	// logs without times, keep their own unit).
	var fastest float64
	for _, f := range r.Findings {
		if s, ok := trendSlope(&f); ok && f.Kind == KindTrend {
			if _, guessed := assumed[f.Path]; !guessed {
				fastest = max(fastest, math.Abs(s))
			}
		}
	}
	unit := rateUnit(fastest)
	for i, f := range r.Findings {
		if f.Kind != KindTrend {
			continue
		}
		gpu, _, _ := trendCells(f)
		in, guessed := assumed[f.Path]
		gpu = strings.TrimPrefix(gpu, "gpu ")
		pid, proc := "-", "-"
		if f.PID != nil {
			pid = fmt.Sprint(*f.PID)
			if f.Process != "" {
				proc = f.Process
			}
		}
		slope, r2 := "-", "-"
		if s, ok := trendSlope(&f); ok {
			slope = rate(s)
			if slope != "0" {
				slope = rateIn(s, unit)
			}
			if guessed {
				slope = perSampleCell(s, *in.AssumedIntervalS, in.Format)
			}
			if s > 0 {
				slope = "+" + slope
			}
		}
		if f.Classification == string(trend.Growing) && f.R2 != nil {
			r2 = fmt.Sprintf("%.2f", *f.R2)
		}
		oom := "-"
		if f.TimeToOOMS != nil && len(f.TimeToOOMRangeS) == 2 {
			oom = oomRange(*f.TimeToOOMS, f.TimeToOOMRangeS[0], f.TimeToOOMRangeS[1])
			if guessed {
				oom = samplesCell(*f.TimeToOOMS, *in.AssumedIntervalS, in.Format)
			}
		}
		peak := "-"
		if f.PeakBytes != nil {
			peak = IBytes(*f.PeakBytes)
		}
		end := f.Bytes
		if f.LastBytes != nil {
			end = *f.LastBytes
		}
		row := []string{fmt.Sprint(i + 1), gpu, pid, proc, f.Classification, fmt.Sprint(f.Samples), IBytes(end), peak, slope, r2, oom}
		if byHost {
			host := f.Host
			if host == "" {
				host = "-"
			}
			row = append(row[:1], append([]string{host}, row[1:]...)...)
		}
		if multi {
			row = append(row, f.Path)
		}
		rows = append(rows, row)
	}
	return renderTable(w, header, aligns, rows, opt.Terminal)
}

// sparkBlocks are the eight heights of a sparkline.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws values scaled to top.
func sparkline(values []int64, top int64) string {
	var b strings.Builder
	for _, v := range values {
		i := 0
		if top > 0 && v > 0 {
			i = int(int64(len(sparkBlocks)-1) * v / top)
			i = max(0, min(i, len(sparkBlocks)-1))
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}

// severalHosts reports whether r's trend findings name more than one
// host (a fleet's log, DCGM scrapes of several nodes): the tables then
// name the host of each GPU, GPU 0 of one host not being GPU 0 of
// another.
func severalHosts(r *Report) bool {
	first, seen := "", false
	for _, f := range r.Findings {
		if f.Kind != KindTrend {
			continue
		}
		if seen && f.Host != first {
			return true
		}
		first, seen = f.Host, true
	}
	return false
}

// sparklines draws each GPU's used memory over its log.
func sparklines(w io.Writer, r *Report) {
	first := true
	byHost := severalHosts(r)
	for _, f := range r.Findings {
		if f.Kind != KindTrend || f.PID != nil || len(f.ProfileBytes) == 0 || f.PeakBytes == nil {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		gpu, _, _ := trendCells(f)
		if byHost && f.Host != "" {
			gpu = f.Host + " " + gpu
		}
		peak, of := IBytes(*f.PeakBytes), ""
		if f.CapacityBytes != nil {
			var capacity string
			peak, capacity = sizes.Of(*f.PeakBytes, *f.CapacityBytes, IBytes)
			of = " of " + capacity
		}
		fmt.Fprintf(w, "%-8s %s  peak %s%s  (%s)\n", clean(gpu), sparkline(f.ProfileBytes, *f.PeakBytes), peak, of, clean(f.Path))
	}
}

// oomRange renders a time to OOM and its range: "17 min (15 min to 19
// min)", or "3.6 h" when the range rounds to the estimate.
func oomRange(sec, low, high float64) string {
	est, lo, hi := trend.Duration(sec), trend.Duration(low), trend.Duration(high)
	if lo == est && hi == est {
		return est
	}
	return fmt.Sprintf("%s (%s to %s)", est, lo, hi)
}

// trendSlope is the slope of an NVML series' finding, in bytes per second,
// when it describes a trend: only a growing series has one. Beside
// "flat", "step" or "sawtooth" the least-squares slope over a one-time
// step or over runs that come and go would read as growth (a step from
// 32 MiB to 1.5 GiB in 9 s is "+197 GiB/h").
func trendSlope(f *Finding) (float64, bool) {
	if f.Classification != string(trend.Growing) || f.SlopeBytesPerS == nil {
		return 0, false
	}
	return *f.SlopeBytesPerS, true
}

// assumedPeriods are the inputs of r whose samples carry no time and
// whose period was assumed (Input.AssumedIntervalS), by path: their
// trends' rates and times to OOM are shown per sample, as the log shows
// them.
func assumedPeriods(r *Report) map[string]Input {
	m := map[string]Input{}
	for _, in := range r.Inputs {
		if in.AssumedIntervalS != nil && *in.AssumedIntervalS > 0 {
			m[in.Path] = in
		}
	}
	return m
}

// perSampleCell renders a slope (bytes per second) of a log whose
// samples were placed period seconds apart, by assumption (a log of format
// with no times), per sample: "50 MiB/scrape".
func perSampleCell(bps, period float64, format string) string {
	return IBytes(int64(math.Round(bps*period))) + "/" + sampleUnit(format)
}

// samplesCell renders a time (seconds) of such a log as the samples it
// spans: "164 scrapes".
func samplesCell(seconds, period float64, format string) string {
	return fmt.Sprintf("%.0f %ss", seconds/period, sampleUnit(format))
}
