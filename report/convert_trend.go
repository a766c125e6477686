package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/internal/sizes"
)

// TrendInput describes one NVML sample log for the report.
type TrendInput struct {
	Path, Format string
	// Samples: the sampling instants read (one nvidia-smi table, one
	// --query-gpu tick of every GPU, one DCGM scrape: nvml.Metadata's
	// Instants); Rows, the readings in them (one per GPU or process per
	// instant); the time the log covers (µs since the epoch).
	Samples, Rows  int64
	StartUs, EndUs int64
	// Clock: "absolute", "time-of-day" or "row-order" (nvml.Clock).
	Clock    string
	Warnings []string
	// StartGiven: a "row-order" log placed from --start (nvml.Metadata's
	// DateGiven).
	StartGiven bool
	// Interval: the period of a "row-order" log; IntervalAssumed, when it
	// is the default rather than given (--interval).
	Interval        time.Duration
	IntervalAssumed bool
	// SkippedLines: the lines of rows or records that could not be read
	// and were skipped (nvml.Metadata's): the log was read in part;
	// SkippedAt, the first line of each of the first of them.
	SkippedLines int
	SkippedAt    []int
	// Cut says where a compressed log's stream was cut short, or where a
	// pasted nvidia-smi table stops before its Processes box ends
	// (nvml.Metadata's Cut): it was read up to there, in part; "" when it
	// was not.
	Cut string
	// MIG: the processes the log places in MIG instances (nvml.Metadata's
	// MIGProcesses), by GPU index and pid.
	MIG map[MIGKey]MIGPlace
}

// MIGKey is a process of a GPU, by NVML index and pid.
type MIGKey struct {
	GPU int
	PID int64
}

// MIGPlace is the MIG GPU instance and compute instance a process runs
// in (CI -1: not given).
type MIGPlace struct{ GI, CI int }

// logClock is how an input's samples were placed in time, as its trend
// messages need it.
type logClock struct {
	clock string
	// assumed is the period of a log without times when it was assumed
	// (0: given, or the log has times); unit names its samples.
	assumed time.Duration
	unit    string
}

// Unattributed memory worth a sentence: at least this much, and this
// share of the GPU's peak.
const (
	unattributedMinBytes = 256 << 20
	unattributedMinShare = 0.05
)

// FromTrends turns a trend analysis of NVML logs into the report's input
// entries (in the order given) and one finding of kind trend per series.
func FromTrends(inputs []TrendInput, res *trend.Result) ([]Input, []Finding) {
	clocks := map[string]logClock{}
	var ins []Input
	for _, ti := range inputs {
		in := Input{Path: ti.Path, Format: ti.Format, Warnings: ti.Warnings, Clock: ti.Clock,
			StartGiven:   ti.Clock == "row-order" && ti.StartGiven,
			SkippedLines: ti.SkippedLines, SkippedAt: ti.SkippedAt, Cut: ti.Cut}
		n, rows, start, end := ti.Samples, ti.Rows, ti.StartUs, ti.EndUs
		in.Samples, in.Rows = &n, &rows
		if n > 0 {
			in.StartUs, in.EndUs = &start, &end
		}
		c := logClock{clock: ti.Clock}
		if ti.Clock == "row-order" && ti.IntervalAssumed && ti.Interval > 0 && ti.EndUs > ti.StartUs {
			// (One tick, a pasted table, has no times to assume.)
			c.assumed, c.unit = ti.Interval, sampleUnit(ti.Format)
			sec := ti.Interval.Seconds()
			in.AssumedIntervalS = &sec
		}
		clocks[ti.Path] = c
		ins = append(ins, in)
	}
	if len(ins) > 0 {
		ins[0].Warnings = append(ins[0].Warnings, res.Warnings...)
	}
	for i := range ins {
		ins[i].Warnings = append(ins[i].Warnings, res.InputWarnings[ins[i].Path]...)
		ins[i].SamplesAboveTotal = res.AboveTotal[ins[i].Path]
	}
	migs := map[string]map[MIGKey]MIGPlace{}
	for _, ti := range inputs {
		if len(ti.MIG) > 0 {
			migs[ti.Path] = ti.MIG
		}
	}
	var out []Finding
	for _, s := range res.Series {
		var mig *MIGPlace
		if m := migs[s.Input]; m != nil && s.HasGPU {
			switch p, ok := m[MIGKey{int(s.GPU), s.PID}]; {
			case s.HasPID && ok:
				mig = &p
				if s.TimeToOOM != nil {
					// Memory runs out in the instance, whose size is not
					// read: the GPU's free memory is not the instance's.
					s.TimeToOOM = nil
					s.NoOOMReason = fmt.Sprintf("the process runs in %s, whose size gpuleak does not read (the table's MIG devices box), and the GPU's free memory is not the instance's", migName(p))
				}
			case !s.HasPID && s.TimeToOOM != nil && migGPU(m, int(s.GPU)):
				s.TimeToOOM = nil
				s.NoOOMReason = "MIG is on (the Processes box names its GPU instances): memory runs out in an instance, whose size gpuleak does not read, not when the whole GPU's is used"
			}
		}
		f := trendFinding(s, clocks[s.Input])
		if mig != nil {
			gi, ci := mig.GI, mig.CI
			f.MIGGI = &gi
			if ci >= 0 {
				f.MIGCI = &ci
			}
			f.Message = strings.Replace(f.Message, fmt.Sprintf("on GPU %d", s.GPU), fmt.Sprintf("on GPU %d %s", s.GPU, migName(*mig)), 1)
		}
		out = append(out, f)
	}
	return ins, out
}

// sampleUnit names one sample of a log of format f in a rate: "scrape"
// for DCGM exporter metrics, else "sample".
func sampleUnit(f string) string {
	if strings.HasPrefix(f, "dcgm") {
		return "scrape"
	}
	return "sample"
}

func trendFinding(s trend.SeriesTrend, lc logClock) Finding {
	f := Finding{
		Kind: KindTrend, Path: s.Input, Source: s.Source, Bytes: s.LastBytes,
		GPUUUID: s.UUID, GPUName: s.GPUName, Host: s.Host, Process: s.Process,
		Pod: s.Pod, Namespace: s.Namespace, Container: s.Container,
		Classification: string(s.Class), Samples: s.Samples, SamplesAboveTotal: s.AboveTotal, UsedConvention: s.Convention,
		SetAsideSamples: s.SetAside, SetAsideUs: s.SetAsideUs,
		FullSamples:     s.FullSamples,
		TimeToOOMReason: s.NoOOMReason,
	}
	for _, x := range s.FullSampleAt {
		f.FullSampleAt = append(f.FullSampleAt, TrendSample{Us: x.Us, Bytes: x.Bytes})
	}
	if s.HasGPU {
		g := int(s.GPU)
		f.GPU = &g
	}
	if s.HasPID {
		pid, held := s.PID, s.HeldToEnd
		f.PID, f.HeldToEnd, f.EndUnknown = &pid, &held, s.EndUnknown
	}
	f.StoppedBeforeEnd = s.StoppedBeforeEnd
	f.ReplacedByGPUUUID = s.ReplacedBy
	slope, ols, r2 := round(s.Slope, 1), round(s.OLSSlope, 1), round(s.R2, 4)
	f.SlopeBytesPerS, f.OLSSlopeBytesPerS, f.R2 = &slope, &ols, &r2
	f.SlopeRangeBytesPerS = []float64{round(s.SlopeLow, 1), round(s.SlopeHigh, 1)}
	ws, we, ss, se, peak := s.WindowStartUs, s.WindowEndUs, s.StartUs, s.EndUs, s.PeakBytes
	f.WindowStartUs, f.WindowEndUs, f.SeriesStartUs, f.SeriesEndUs, f.PeakBytes = &ws, &we, &ss, &se, &peak
	if s.WarmUpEndUs != 0 {
		wu, wb := s.WarmUpEndUs, s.WarmUpToBytes
		f.WarmUpEndUs, f.WarmUpToBytes = &wu, &wb
	}
	if j := s.EndJump; j != nil {
		f.EndJump = &TrendChange{StartUs: j.StartUs, EndUs: j.EndUs, FromBytes: j.FromBytes, ToBytes: j.ToBytes}
	}
	if s.CapacityBytes > 0 {
		c := s.CapacityBytes
		f.CapacityBytes = &c
	}
	if o := s.TimeToOOM; o != nil {
		sec := round(o.Seconds, 1)
		f.TimeToOOMS = &sec
		f.TimeToOOMRangeS = []float64{round(o.LowSeconds, 1), round(o.HighSeconds, 1)}
	}
	for _, c := range s.ChangePoints {
		f.ChangePoints = append(f.ChangePoints, TrendChange{StartUs: c.StartUs, EndUs: c.EndUs, FromBytes: c.FromBytes, ToBytes: c.ToBytes, Transient: c.Transient})
	}
	if u := s.Unattributed; u != nil {
		m, e := u.MedianBytes, u.EndBytes
		f.UnattributedBytes, f.UnattributedEndBytes = &m, &e
		f.UnattributedUnknownPIDs = u.UnknownPIDs
		f.UnattributedNoneListed = u.NoneListed
		f.UnattributedProcessesOverBytes = u.ProcessesOverBytes
	}
	if !s.HasPID {
		f.ProfileBytes = s.Profile
	}
	f.SeriesProfile = s.Profile
	if len(s.Runs) > 0 {
		b := s.BaselineBytes
		f.BaselineBytes = &b
		for _, r := range s.Runs {
			tr := TrendRun{StartUs: r.StartUs, EndUs: r.EndUs, Samples: r.Samples, FirstBytes: r.FirstBytes,
				PeakBytes: r.PeakBytes, LastBytes: r.LastBytes, Classification: string(r.Class), SlopeBytesPerS: round(r.Slope, 1)}
			if r.ReleasedUs != 0 {
				rel := r.ReleasedUs
				tr.ReleasedUs = &rel
			}
			tr.OOMExit = r.OOMExit
			f.Runs = append(f.Runs, tr)
		}
		f.OOMExits = s.OOMExits
	}
	if s.TailSlope > 0 {
		ts := round(s.TailSlope, 1)
		f.TailSlopeBytesPerS = &ts
	}
	if s.ReleasedUs != 0 {
		rel := s.ReleasedUs
		last := s.LastBytes
		f.ReleasedUs, f.LastBytes = &rel, &last
		f.Bytes = s.RunPeakBytes
	}
	if len(s.Pods) > 1 || s.PodsLeftOut > 0 {
		for _, p := range s.Pods {
			f.Pods = append(f.Pods, TrendPod{Pod: p.Pod, Namespace: p.Namespace, Container: p.Container, FirstUs: p.FirstUs, LastUs: p.LastUs, Samples: p.Samples})
		}
		f.PodsLeftOut = s.PodsLeftOut
	}
	f.Message = trendMessage(s, lc) + gpuStoppedNote(s, lc) + oomExitsNote(s) + podsHeld(s, lc.clock) + fullSampleNote(s, lc.clock) + setAsideNote(s, lc.clock)
	return f
}

// gpuStoppedNote says where a GPU's samples stop before the end of its log
// (SeriesTrend.StoppedBeforeEnd): "; its samples stop at 10:59:50 UTC, 60
// min before the end of the log (11:59:50 UTC): ...".
func gpuStoppedNote(s trend.SeriesTrend, lc logClock) string {
	if !s.StoppedBeforeEnd {
		return ""
	}
	if s.ReplacedBy != "" {
		// The log shows the GPU that took its place: say so rather
		// than list what might have happened.
		why := "the GPU replaced"
		if s.Host == "" {
			why = "the GPU replaced, or another host's log appended to this one: the log names no host"
		}
		return fmt.Sprintf("; its samples stop at %s, %s before the end of the log (%s): another GPU, %s, is logged at its index from %s (%s), a series of its own, not added to this one; this GPU's memory since is not known",
			timeOf(s.EndUs, lc.clock, s.StartUs), trend.Duration(float64(s.LogEndUs-s.EndUs)/1e6), timeOf(s.LogEndUs, lc.clock, s.StartUs),
			s.ReplacedBy, timeOf(s.ReplacedAtUs, lc.clock, s.StartUs), why)
	}
	return fmt.Sprintf("; its samples stop at %s, %s before the end of the log (%s): its later rows carry no memory figure (nvidia-smi's [GPU is lost] after an Xid 79 \"fallen off the bus\", [Unknown Error]) or it left the log (replaced, another UUID at its index; its host's logging stopped), so its memory since is not known",
		timeOf(s.EndUs, lc.clock, s.StartUs), trend.Duration(float64(s.LogEndUs-s.EndUs)/1e6), timeOf(s.LogEndUs, lc.clock, s.StartUs))
}

// fullSampleNote names a GPU's samples near its capacity that stand alone
// between two that agree far below it (SeriesTrend.FullSamples): "; one
// sample, at 10:58:20 UTC, read 79 GiB of 80 GiB (98%) ...: what a process
// leaves that filled the GPU and died of out-of-memory within one
// sampling interval, or a misreading: one sample cannot tell". Where the
// message already lists that sample as a run of one (oneSampleRun), its
// time is not said again. "" when none.
func fullSampleNote(s trend.SeriesTrend, clock string) string {
	if s.FullSamples == 0 || len(s.FullSampleAt) == 0 || s.CapacityBytes <= 0 {
		return ""
	}
	why := "what a process leaves that filled the GPU and died (of out-of-memory, or was killed) within one sampling interval, or a misreading at the capacity: one sample cannot tell (the job's log, CUDA out of memory, tells); it is kept in the fit and the class"
	x := s.FullSampleAt[0]
	used, capacity := sizes.Of(x.Bytes, s.CapacityBytes, IBytes)
	pct := sizes.Percent(x.Bytes, s.CapacityBytes)
	if s.FullSamples == 1 {
		if listsRunOf(s, x.Us) {
			return fmt.Sprintf("; that sample read %s of %s (%s), the GPU full, alone between two samples that agree: %s", used, capacity, pct, why)
		}
		return fmt.Sprintf("; one sample, at %s, read %s of %s (%s), the GPU full, alone between two samples that agree far below it: %s",
			timeOf(x.Us, clock, s.StartUs), used, capacity, pct, why)
	}
	return fmt.Sprintf("; %d samples read the GPU full, each alone between two samples that agree far below it (the first at %s, %s of %s, %s): each is %s",
		s.FullSamples, timeOf(x.Us, clock, s.StartUs), used, capacity, pct, why)
}

// listsRunOf says whether trendMessage lists a run of one sample at t
// (a sawtooth of one or two runs; see oneSampleRun).
func listsRunOf(s trend.SeriesTrend, t int64) bool {
	if s.Class != trend.Sawtooth || len(s.Runs) == 0 || len(s.Runs) > 2 {
		return false
	}
	for _, r := range s.Runs {
		if r.Samples == 1 && r.StartUs == t {
			return true
		}
	}
	return false
}

// setAsideNote says which one-sample glitches the fit left out
// (SeriesTrend.SetAside): "; 12 samples set aside as one-sample glitches
// (each far from both neighbours, which agree; the first at 10:09:55 UTC):
// the trend and its class are judged without them". "" when none.
func setAsideNote(s trend.SeriesTrend, clock string) string {
	if s.SetAside == 0 {
		return ""
	}
	first := ""
	if len(s.SetAsideUs) > 0 {
		first = "; the first at " + timeOf(s.SetAsideUs[0], clock, s.StartUs)
		if s.SetAside == 1 {
			first = "; at " + timeOf(s.SetAsideUs[0], clock, s.StartUs)
		}
	}
	return fmt.Sprintf("; %s of %d set aside as one-sample glitches (each far from both neighbours, which agree with each other%s): the class and the trend are judged without them",
		plural(s.SetAside, "sample", "samples"), s.Samples, first)
}

// podsHeld says which pods held a GPU when, where DCGM exporter's pod
// labels changed over its series: "; held in turn by pods (DCGM
// exporter's labels) ml/job-1 from 08:00:00 UTC to 08:09:30 UTC, ...".
// "" when they did not.
func podsHeld(s trend.SeriesTrend, clock string) string {
	if len(s.Pods) < 2 && s.PodsLeftOut == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; held in turn by pods (DCGM exporter's labels) ")
	for i, p := range s.Pods {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s from %s to %s", podNames(p.Namespace, p.Pod), timeOf(p.FirstUs, clock, s.StartUs), timeOf(p.LastUs, clock, s.StartUs))
	}
	if s.PodsLeftOut > 0 {
		fmt.Fprintf(&b, " and %d more spans not listed", s.PodsLeftOut)
	}
	b.WriteString(": one GPU's memory, so what a pod leaves behind is in the next one's samples")
	return b.String()
}

// trendSubject names a series: "GPU 0 (NVIDIA H200)", "pid 538 (python3)
// on GPU 0", with the host and pod when the log gives them.
func trendSubject(s trend.SeriesTrend) string {
	gpu := "GPU " + shortUUID(s.UUID)
	if s.UUID == "" {
		// An excerpt that names its GPU by neither (a -q -x excerpt cut
		// after its uuid line).
		gpu = "a GPU named by neither index nor UUID"
	}
	if s.HasGPU {
		gpu = fmt.Sprintf("GPU %d", s.GPU)
		if _, inst, ok := strings.Cut(s.UUID, "/"); ok && strings.HasPrefix(s.UUID, "GPU-") {
			gpu += " MIG instance " + inst // DCGM's GPU_I_ID
		}
	}
	if s.Host != "" {
		gpu += " of " + s.Host
	}
	if s.Pod != "" {
		what := "pod"
		if strings.Contains(s.Pod, ",") {
			what = "shared by pods"
		}
		gpu += fmt.Sprintf(" (%s %s)", what, podNames(s.Namespace, s.Pod))
	}
	if !s.HasPID {
		if s.GPUName != "" {
			return fmt.Sprintf("%s (%s)", gpu, s.GPUName)
		}
		return gpu
	}
	name := s.Process
	if name == "" {
		name = "name not logged"
	}
	return fmt.Sprintf("pid %d (%s) on %s", s.PID, name, gpu)
}

// podNames renders DCGM pod labels as "namespace/pod"; a GPU's pods
// (comma-separated, the namespaces in the same order) as "ns/a + ns/b".
func podNames(namespace, pod string) string {
	pods, nss := strings.Split(pod, ","), strings.Split(namespace, ",")
	for i, p := range pods {
		if len(nss) == len(pods) && nss[i] != "" {
			pods[i] = nss[i] + "/" + p
		}
	}
	return strings.Join(pods, " + ")
}

// shortUUID keeps "GPU-3719ad94" of a UUID.
func shortUUID(u string) string {
	if i := strings.IndexByte(u, '-'); i >= 0 && len(u) > i+9 {
		return u[:i+9]
	}
	return u
}

// timeOf renders an instant for a message: the UTC time of day for logs
// with times, or the offset from the log's start.
func timeOf(us int64, clock string, startUs int64) string {
	if clock == "row-order" {
		return fmt.Sprintf("%.1f s into the log", float64(us-startUs)/1e6)
	}
	return time.UnixMicro(us).UTC().Format("15:04:05") + " UTC"
}

// rate renders bytes per second in the unit a person reads best.
func rate(bps float64) string {
	if math.Abs(bps) < 1 {
		return "0"
	}
	return rateIn(bps, rateUnit(bps))
}

// rateUnit is the time unit rate renders bytes per second in: seconds
// from 1 MiB/s, minutes from 1 MiB/min, hours below.
func rateUnit(bps float64) time.Duration {
	a := math.Abs(bps)
	switch {
	case a >= 1<<20:
		return time.Second
	case a*60 >= 1<<20:
		return time.Minute
	}
	return time.Hour
}

// rateIn renders bytes per second per unit (time.Second, time.Minute or
// time.Hour), the bytes as IBytes does: "12 MiB/min", "900 KiB/min".
func rateIn(bps float64, unit time.Duration) string {
	return IBytes(int64(bps*unit.Seconds())) + perUnit(unit)
}

// perUnit is the suffix of a rate per unit (time.Second, time.Minute or
// time.Hour): "/s", "/min", "/h".
func perUnit(unit time.Duration) string {
	switch unit {
	case time.Second:
		return "/s"
	case time.Minute:
		return "/min"
	}
	return "/h"
}

// rateLike renders bytes per second in the time and byte units rate
// gives like (a slope's interval and least-squares slope beside it), so
// that figures compared side by side share them: "1.0 MiB/s to 1.0
// MiB/s", not "60 MiB/min to 1.0 MiB/s".
func rateLike(bps, like float64) string {
	l := math.Abs(like)
	if l < 1 {
		return rate(bps)
	}
	in := rateUnit(like)
	mult, per := in.Seconds(), perUnit(in)
	unit, name := 1.0, "B"
	for _, u := range []struct {
		size float64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if l*mult >= u.size*0.9995 {
			unit, name = u.size, u.name
			break
		}
	}
	v := bps * mult / unit
	if math.Abs(v) < 9.95 && name != "B" {
		return fmt.Sprintf("%.1f %s%s", v, name, per)
	}
	return fmt.Sprintf("%.0f %s%s", v, name, per)
}

// perSample renders bytes per second at an assumed period as bytes per
// sample: "60 MiB per scrape".
func perSample(bps float64, lc logClock) string {
	return IBytes(int64(math.Round(bps*lc.assumed.Seconds()))) + " per " + lc.unit
}

// trendMessage is the one line a person acts on.
func trendMessage(s trend.SeriesTrend, lc logClock) string {
	clock := lc.clock
	who := trendSubject(s)
	span := trend.Duration(float64(s.EndUs-s.StartUs) / 1e6)
	switch s.Class {
	case trend.Growing:
		what := "used memory grows"
		if s.RisingFloor {
			what = "memory is given back each cycle, but to a floor that rises"
		}
		fitted := fmt.Sprintf("%s (Theil–Sen, 95%% %s to %s; least squares %s, R² %.2f) from %s to %s",
			rate(s.Slope), rateLike(s.SlopeLow, s.Slope), rateLike(s.SlopeHigh, s.Slope), rateLike(s.OLSSlope, s.Slope), s.R2,
			timeOf(s.WindowStartUs, clock, s.StartUs), timeOf(s.WindowEndUs, clock, s.StartUs))
		if s.WarmUpEndUs != 0 {
			// The rise before the window is a warm-up, not the leak's.
			from, to := FromTo(s.FirstBytes, s.WarmUpToBytes)
			fitted += fmt.Sprintf(", after a warm-up that rose from %s to %s by %s (not in the rate)",
				from, to, timeOf(s.WarmUpEndUs, clock, s.StartUs))
		}
		if j := s.EndJump; j != nil {
			// The jump is too near the end for a trend of its own: the
			// rate is the growth before it.
			from, to := FromTo(j.FromBytes, j.ToBytes)
			fitted += fmt.Sprintf(", then jumped from %s to %s at %s (%s from it to the end: too short a stretch for a trend of its own; not in the rate)",
				from, to, timeOf(j.EndUs, clock, s.StartUs), plural(s.EndJumpSamples, "sample", "samples"))
		}
		oom := "no time to OOM: " + s.NoOOMReason
		ended := ""
		switch {
		case s.ReleasedUs != 0:
			ended = fmt.Sprintf(" to a peak of %s, then came back to %s at %s (the process exited or freed it)",
				IBytes(s.RunPeakBytes), IBytes(s.BaselineBytes), timeOf(s.ReleasedUs, clock, s.StartUs))
			oom = "no time to OOM: the run ended"
		case s.HasPID && !s.HeldToEnd:
			ended = fmt.Sprintf(" to %s, then exited at %s (its last sample)", IBytes(s.LastBytes), timeOf(s.EndUs, clock, s.StartUs))
			oom = "no time to OOM: the process exited"
		}
		if o := s.TimeToOOM; o != nil {
			gpu := "the GPU"
			if s.HasPID {
				gpu = "its GPU"
			}
			oom = fmt.Sprintf("at this rate %s runs out of memory in about %s", gpu, oomRange(o.Seconds, o.LowSeconds, o.HighSeconds))
			if s.EndJump != nil {
				oom += " from the level after the jump"
			}
			if w := gpuRateWords(o, s.Slope); w != "" {
				oom = fmt.Sprintf("at %s, its GPU runs out of memory in about %s", w, oomRange(o.Seconds, o.LowSeconds, o.HighSeconds))
			}
		}
		if lc.assumed > 0 {
			// The log has no times and its period was not given: the rate
			// per sample is what the log shows; per second, and the time
			// to OOM, hold only if the assumed period is right.
			p := lc.assumed.Seconds()
			fitted = fmt.Sprintf("%s (Theil–Sen, 95%% %s to %s; least squares %s, R² %.2f) over %s %d to %d",
				perSample(s.Slope, lc), perSample(s.SlopeLow, lc), perSample(s.SlopeHigh, lc), perSample(s.OLSSlope, lc), s.R2,
				lc.unit, sampleIndex(s.WindowStartUs, s.StartUs, p), sampleIndex(s.WindowEndUs, s.StartUs, p))
			assumed := fmt.Sprintf("the log has no times, so %s apart is assumed, not known; give the period with gpuleak trend --interval", trend.Duration(p))
			if o := s.TimeToOOM; o != nil {
				oom = fmt.Sprintf("at this rate the GPU runs out of memory in about %.0f %ss (%s only if they are %s apart: %s)",
					o.Seconds/p, lc.unit, oomRange(o.Seconds, o.LowSeconds, o.HighSeconds), trend.Duration(p), assumed)
				if s.HasPID {
					oom = strings.Replace(oom, "the GPU", "its GPU", 1)
				}
			} else {
				oom += " (" + assumed + ")"
			}
		}
		if s.EndUnknown {
			oom += "; this --query-compute-apps log ends with its last row (the tool prints nothing once no process runs), so whether it exited then is not known: log --query-gpu beside it"
		}
		next := "find the process that grows (log nvidia-smi --query-compute-apps or pmon beside it) and take a PyTorch memory snapshot of it"
		if s.HasPID {
			next = "record torch.cuda.memory._record_memory_history() in this process and dump a snapshot (gpuleak analyze) to find the call site that keeps memory"
		} else if n := len(s.GrowingPIDs); n > 0 {
			// The processes' log was given, and names who grows.
			pids := make([]string, n)
			for i, p := range s.GrowingPIDs {
				pids[i] = strconv.FormatInt(p, 10)
			}
			next = fmt.Sprintf("the processes logged on it name who grows: pid %s (see its finding): take a PyTorch memory snapshot of it", pids[0])
			if n > 1 {
				next = fmt.Sprintf("the processes logged on it name who grows: pids %s (see their findings): take a PyTorch memory snapshot of each", strings.Join(pids, ", "))
			}
		}
		if s.OOMExits > 0 {
			if ended != "" {
				oom = "no time to OOM: " + s.NoOOMReason
			}
			return crashLoopMessage(s, who, fitted, ended, oom, next)
		}
		if ended != "" {
			what = "used memory grew"
			if s.RisingFloor {
				what = "memory was given back each cycle, but to a floor that rose"
			}
			return fmt.Sprintf("growing until it ended: %s: %s %s%s: a leak suspect in that run%s; %s; %s%s",
				who, what, fitted, ended, runsNote(s), oom, next, unattributedNote(s))
		}
		now := "now " + IBytes(s.LastBytes)
		if s.StoppedBeforeEnd {
			now = IBytes(s.LastBytes) + " at its last sample"
		}
		if s.RisingFloor && s.CyclePeakBytes > s.LastBytes {
			// The peaks, not the floor, run the GPU out of memory.
			now += fmt.Sprintf(", the last cycles' peak %s (the time to OOM is measured from it)", IBytes(s.CyclePeakBytes))
		}
		return fmt.Sprintf("growing: %s: %s %s, %s; %s; %s%s", who, what, fitted, now, oom, next, unattributedNote(s))
	case trend.Step:
		change := ""
		// The size at the end, in the decimals the change's ends needed
		// to differ (FromTo), so that "to 20.5 GiB" is not followed by
		// "20 GiB at the end".
		last := IBytes(s.LastBytes)
		// A spike's rise and fall (trend.ChangePoint.Transient) are no
		// steps.
		steps := trend.Steps(s.ChangePoints)
		if n := len(steps); n == 1 {
			c := steps[0]
			in := fmt.Sprintf("%.1f s", float64(c.EndUs-c.StartUs)/1e6)
			if c.EndUs-c.StartUs >= 60e6 {
				in = trend.Duration(float64(c.EndUs-c.StartUs) / 1e6)
			}
			from, to := FromTo(c.FromBytes, c.ToBytes)
			last = LikeSize(s.LastBytes, to, c.ToBytes)
			change = fmt.Sprintf(" from %s to %s in %s at %s", from, to,
				in, timeOf(c.StartUs, clock, s.StartUs))
		} else if n > 1 {
			first, final := steps[0], steps[n-1]
			from, to := FromTo(first.FromBytes, final.ToBytes)
			last = LikeSize(s.LastBytes, to, final.ToBytes)
			change = fmt.Sprintf(" from %s to %s in %d steps between %s and %s", from, to, n,
				timeOf(first.StartUs, clock, s.StartUs), timeOf(final.EndUs, clock, s.StartUs))
			if mixed := slices.ContainsFunc(steps, func(c trend.ChangePoint) bool {
				return (c.ToBytes > c.FromBytes) != (final.ToBytes > first.FromBytes)
			}); mixed && n <= maxStepsNamed {
				// Steps both ways: the net change alone would hide one
				// (999 MiB down to 100 MiB, then up to 200 MiB). Each is
				// placed by its EndUs, the first sample at its new level:
				// at its StartUs the series still held the old one.
				var each []string
				for _, c := range steps {
					dir := "up"
					if c.ToBytes < c.FromBytes {
						dir = "down"
					}
					each = append(each, fmt.Sprintf("%s to %s by %s", dir, IBytes(c.ToBytes), timeOf(c.EndUs, clock, s.StartUs)))
				}
				change = fmt.Sprintf(" from %s to %s in %d steps (%s)", from, to, n, strings.Join(each, ", then "))
			}
		}
		dir := "growth"
		if s.LastBytes < s.FirstBytes {
			dir = "a release"
		}
		if s.StepAtEnd {
			// Nothing after the change: neither "then flat" nor "still
			// rising" is in the data.
			more := ""
			if !s.HasPID || s.HeldToEnd {
				more = " (log for longer: growth that has just started looks the same)"
				if dir != "growth" {
					more = " (log for longer)"
				}
			}
			return fmt.Sprintf("step: %s: %s%s, up to its last samples: too few after the change to tell whether memory stays there or keeps changing%s; %s%s",
				who, dir, change, more, heldNote(s, clock, last), unattributedNote(s))
		}
		if s.TailSlope > 0 {
			return fmt.Sprintf("step: %s: %s%s, then still rising by %s (not flat: watch it, a slow leak may follow the step); %s%s",
				who, dir, change, rate(s.TailSlope), heldNote(s, clock, last), unattributedNote(s))
		}
		// Flat after the step is what a one-time allocation leaves, but
		// also a leak that stopped (at a cap, at an OOM): samples of the
		// total cannot tell the two apart, so the message does not say
		// which.
		after := "then flat: as after memory allocated once (a model, a cache, a workspace); the samples cannot tell that from growth that stopped (at a cap or an OOM)"
		if dir != "growth" {
			after = "then flat"
		}
		if s.StepTailUs > 0 && dir == "growth" {
			// The log stopped before the next step was due.
			after = fmt.Sprintf("then level for %s, no longer than the %s between its steps: too short to show that the steps stopped (log for longer: steps that go on are a leak)",
				trend.Duration(float64(s.StepTailUs)/1e6), trend.Duration(float64(s.StepSpacingUs)/1e6))
		}
		if s.StepsAtPodChanges {
			// Growth only where the pod holding the GPU changed.
			after = "each where a new pod took the GPU, and flat while one held it: the next job's own memory, or memory the one before left behind, which the GPU's samples cannot tell apart (a per-process log, --query-compute-apps, tells)"
		}
		return fmt.Sprintf("step: %s: %s%s, %s; %s%s",
			who, dir, change, after, heldNote(s, clock, last), unattributedNote(s))
	case trend.Sawtooth:
		drops := 0
		for _, c := range s.ChangePoints {
			if c.ToBytes < c.FromBytes {
				drops++
			}
		}
		if n := len(s.Runs); n > 0 && n <= 2 {
			var parts []string
			for _, r := range s.Runs {
				p := fmt.Sprintf("%s to %s (%s, peak %s)", timeOf(r.StartUs, clock, s.StartUs), timeOf(r.EndUs, clock, s.StartUs), r.Class, IBytes(r.PeakBytes))
				if r.Samples == 1 {
					// oneSampleRun: a rise and fall within one sample has
					// no span and no trend of its own.
					p = fmt.Sprintf("one sample at %s (%s)", timeOf(r.StartUs, clock, s.StartUs), IBytes(r.PeakBytes))
				}
				if r.ReleasedUs != 0 {
					p += ", given back by " + timeOf(r.ReleasedUs, clock, s.StartUs)
				}
				parts = append(parts, p)
			}
			return fmt.Sprintf("sawtooth: %s: memory was held above %s in %s: %s; none grew until it ended: not a leak%s",
				who, IBytes(s.BaselineBytes), plural(n, "run", "runs"), strings.Join(parts, "; "), unattributedNote(s))
		}
		return fmt.Sprintf("sawtooth: %s: memory rises and is given back (%s, peak %s, %s at the end) over %s: allocation churn, not a leak%s",
			who, plural(drops, "release", "releases"), IBytes(s.PeakBytes), IBytes(s.LastBytes), span, unattributedNote(s))
	}
	if s.Class == trend.Undetermined {
		what := "one sample"
		if s.Samples > 1 {
			what = fmt.Sprintf("%d samples, all at one time", s.Samples)
		}
		used, of := IBytes(s.LastBytes), ""
		if s.HasPID {
			used = tenthBytes(s.LastBytes)
		}
		if s.CapacityBytes > 0 {
			var capacity string
			used, capacity = sizes.Of(s.LastBytes, s.CapacityBytes, IBytes)
			of = " of " + capacity
		}
		// A process is logged over time by --query-compute-apps; the
		// GPU's query logs no process.
		log := "nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -lms 1000"
		if s.HasPID {
			log = "nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv -lms 1000"
		}
		_, inst, mig := strings.Cut(s.UUID, "/")
		mig = mig && strings.HasPrefix(s.UUID, "GPU-")
		switch {
		case s.Graphics:
			// --query-compute-apps lists compute processes alone.
			log = "nvidia-smi pmon -s m -o DT -d 1: a graphics process (type G), which --query-compute-apps does not list"
		case !s.HasPID && s.Source == "dcgm-prometheus":
			// The exporter's own series, over time: --query-gpu gives
			// no MIG instance's memory (a GPU's is its instances' sum).
			log = "keep the exporter's metrics over time: Prometheus's DCGM_FI_DEV_FB_USED series, or its /metrics fetched every 30 s with date before each"
			if mig {
				log += "; nvidia-smi --query-gpu gives the whole GPU, not MIG instance " + inst
			}
		}
		return fmt.Sprintf("undetermined: %s: %s%s used; %s: no trend can be judged; log for longer (%s)%s",
			who, used, of, what, log, unattributedNote(s))
	}
	if lo, hi := s.MinBytes, s.PeakBytes; s.SetAside == 0 && s.FullSamples == 0 && float64(hi-lo) > max(flatAbs, flatRel*float64(hi)) {
		// Samples that swing more than a flat band without a level
		// change beyond their own noise: one figure would claim a level
		// the samples did not hold.
		return fmt.Sprintf("flat: %s: between %s and %s for %s (%s), %s at the end: no level change beyond the swings from sample to sample (noise %s), no growth%s",
			who, IBytes(lo), IBytes(hi), span, plural(s.Samples, "sample", "samples"), IBytes(s.LastBytes), IBytes(int64(s.Noise)), unattributedNote(s))
	}
	return fmt.Sprintf("flat: %s: %s for %s (%s): no growth%s", who, IBytes(s.LastBytes), span, plural(s.Samples, "sample", "samples"), unattributedNote(s))
}

// maxStepsNamed is the most steps a step finding names one by one, where
// they go both ways.
const maxStepsNamed = 4

// flatAbs and flatRel are the band within which a flat series' samples
// are one level (trend's flat band: 16 MiB, or 2% of the level); beyond it
// the finding gives their range, not one figure.
const (
	flatAbs = 16 << 20
	flatRel = 0.02
)

// tenthBytes renders n bytes as IBytes does, with a tenth of the unit
// where IBytes rounds to two whole digits (10 to 99 units, up to 5% off:
// 11821 MiB is "11.5 GiB", not "12 GiB"): a process's memory beside its GPU's, which is rendered
// with the decimals that tell it from the GPU's total (sizes.Of), would
// otherwise round above the GPU's own figure.
func tenthBytes(n int64) string {
	s := IBytes(n)
	num, unit, ok := strings.Cut(s, " ")
	if !ok || len(num) != 2 || unit == "B" {
		return s // "1.5 GiB", "202 MiB": within a few tenths of a percent
	}
	return sizes.Like(n, num+".0 "+unit, IBytes)
}

// oomExitsNote says which runs ended full (trend.Run.OOMExit) where they
// are too few to make the series a crash loop (SeriesTrend.OOMExits 0):
// the runs' oom_exit in JSON and the message then agree; "" when no run
// ended full, or when the crash loop's message already tells them.
func oomExitsNote(s trend.SeriesTrend) string {
	if s.OOMExits > 0 {
		return ""
	}
	full, ended := 0, 0
	var peak int64 = -1
	for _, r := range s.Runs {
		if r.ReleasedUs != 0 {
			ended++
		}
		if r.OOMExit {
			full++
			if peak < 0 || r.PeakBytes < peak {
				peak = r.PeakBytes
			}
		}
	}
	if full == 0 {
		return ""
	}
	p, c := sizes.Of(peak, s.CapacityBytes, IBytes)
	who, why := "one run", "one is no crash loop (that takes two or more, two thirds of the runs that ended)"
	if full > 1 {
		who = fmt.Sprintf("%d of the %d runs that ended", full, ended)
		why = "too few for a crash loop (two thirds of those that ended)"
	}
	// (A run ended full only where it came back to the baseline: full <=
	// ended.)
	return fmt.Sprintf("; %s grew until the GPU was full (a peak of at least %s of %s, %s) and then fell to %s, as when a process dies of out-of-memory (or is killed, or frees all it held: the samples cannot tell; the job's log tells): %s",
		who, p, c, sizes.Percent(peak, s.CapacityBytes), IBytes(s.BaselineBytes), why)
}

// gpuRateWords says which growth a process's time to OOM was taken at
// when other processes grow on its GPU too (OOMEstimate.GPUSlope): "the
// GPU's rate, 4.0 MiB/s (its log; 2 logged processes grow on it)"; "" when
// the process's own rate was used. own is the process's own slope (bytes
// per second): where no other logged process is classed growing
// (Growers 1), the words say the GPU outgrows it, not who else grows.
func gpuRateWords(o *trend.OOMEstimate, own float64) string {
	if o.GPUSlope <= 0 {
		return ""
	}
	if o.GPULogged {
		if o.Growers < 2 {
			return fmt.Sprintf("the GPU's rate, %s (its log: faster than this process's own %s, though no other logged process is classed growing)",
				rate(o.GPUSlope), rateLike(own, o.GPUSlope))
		}
		return fmt.Sprintf("the GPU's rate, %s (its log; %d logged processes grow on it)", rate(o.GPUSlope), o.Growers)
	}
	return fmt.Sprintf("the GPU's rate, %s (the %d processes that grow on it, added up)", rate(o.GPUSlope), o.Growers)
}

// crashLoopMessage describes a series whose runs grew until the GPU was
// full and then fell to near nothing (SeriesTrend.OOMExits): the evidence
// (how many, how fast they rose, how full, what memory fell to), the last
// growing run's fit, and what the samples cannot tell.
func crashLoopMessage(s trend.SeriesTrend, who, fitted, ended, oom, next string) string {
	restarts, peak := 0, int64(-1)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range s.Runs {
		if !r.OOMExit {
			continue
		}
		if i < len(s.Runs)-1 {
			restarts++ // memory rose again after it
		}
		if peak < 0 || r.PeakBytes < peak {
			peak = r.PeakBytes
		}
		lo, hi = min(lo, r.Slope), max(hi, r.Slope)
	}
	rates := rate(lo)
	if rate(hi) != rates {
		rates += " to " + rate(hi)
	}
	p, c := sizes.Of(peak, s.CapacityBytes, IBytes)
	last := fmt.Sprintf("the last growing run: used memory grows %s, now %s", fitted, IBytes(s.LastBytes))
	if ended != "" {
		last = fmt.Sprintf("the last growing run: used memory grew %s%s", fitted, ended)
	}
	return fmt.Sprintf("growing, restarted %s: %s: %d runs rose steadily (%s) until the GPU was full (a peak of at least %s of %s, %s) and then fell to %s, as when a process dies of out-of-memory (or is killed) and is restarted: a crash loop, not allocation churn: a leak that runs the GPU out of memory, or a load (a model, its shards) larger than the GPU, which a run's samples cannot tell apart; %s; the samples cannot tell an OOM from a process that freed all it held at its peak: the job's log (CUDA out of memory) or a --query-compute-apps log (a new pid each run) tells; %s; %s%s",
		plural(restarts, "time", "times"), who, s.OOMExits, rates, p, c, sizes.Percent(peak, s.CapacityBytes), IBytes(s.BaselineBytes),
		last, oom, next, unattributedNote(s))
}

// sampleIndex is the 1-based number of the sample at us in a log whose
// samples were placed period seconds apart from startUs.
func sampleIndex(us, startUs int64, period float64) int {
	return int(math.Round(float64(us-startUs)/1e6/period)) + 1
}

// runsNote counts the series' runs when there are others than the one
// described.
func runsNote(s trend.SeriesTrend) string {
	if len(s.Runs) < 2 {
		return ""
	}
	return fmt.Sprintf(" (one of %d runs between returns to %s)", len(s.Runs), IBytes(s.BaselineBytes))
}

// heldNote says whether a process held its memory to the end of the log;
// last is its used memory at the end as the message renders it.
func heldNote(s trend.SeriesTrend, clock, last string) string {
	switch {
	case !s.HasPID:
		return fmt.Sprintf("%s at the end", last)
	case s.EndUnknown:
		return fmt.Sprintf("held %s until the log's last row at %s (a --query-compute-apps log alone cannot tell whether it exited then)", last, timeOf(s.EndUs, clock, s.StartUs))
	case s.HeldToEnd:
		return fmt.Sprintf("held %s until the end of the log", last)
	}
	return fmt.Sprintf("held %s until its last sample at %s", last, timeOf(s.EndUs, clock, s.StartUs))
}

// LikeSize renders n bytes as like (the rendering of likeBytes) was: in
// its unit with its decimals where FromTo gave it more than IBytes
// would (sizes.Like); as IBytes does otherwise. A size named after a
// change's end ("then 20.3 GiB at the end") reads as that end did.
func LikeSize(n int64, like string, likeBytes int64) string {
	if like == IBytes(likeBytes) {
		return IBytes(n)
	}
	return sizes.Like(n, like, IBytes)
}

// unattributedNote mentions GPU memory no listed process accounts for,
// when it matters.
func unattributedNote(s trend.SeriesTrend) string {
	u := s.Unattributed
	if u != nil && u.ProcessesOverBytes >= unattributedMinBytes {
		return fmt.Sprintf("; its processes' logged memory adds up to %s more than the GPU's used memory (median of %s): the logs disagree (sampled at other instants, or one counts what the other does not), so none of it is called unattributed",
			IBytes(u.ProcessesOverBytes), samplesNote(u.Samples))
	}
	if u == nil || u.MedianBytes < unattributedMinBytes || float64(u.MedianBytes) < unattributedMinShare*float64(s.PeakBytes) {
		return ""
	}
	if len(u.UnknownPIDs) > 0 {
		pids := make([]string, len(u.UnknownPIDs))
		for i, p := range u.UnknownPIDs {
			pids[i] = strconv.FormatInt(p, 10)
		}
		return fmt.Sprintf("; %s of it is used by no process whose memory is known (%s): pid %s, listed with its memory unknown (cut or N/A in nvidia-smi's output, a placeholder or null in a log), may hold it: that memory is counted for no process, not as 0",
			IBytes(u.MedianBytes), samplesNote(u.Samples), strings.Join(pids, ", "))
	}
	if u.NoneListed {
		return fmt.Sprintf("; nvidia-smi listed no process on this GPU, so no listed process accounts for %s of it (%s): this does not show that another process holds it: nvidia-smi lists only the processes it can see (in a container, not those of other containers or PID namespaces, and it prints \"No running processes found\" then), some drivers and virtualised setups list none or no per-process memory, and the driver itself holds some; run nvidia-smi on the host to see who holds it",
			IBytes(u.MedianBytes), samplesNote(u.Samples))
	}
	return fmt.Sprintf("; %s of it is used by no listed process (%s): a process NVML cannot see (another container or PID namespace) or memory the driver holds",
		IBytes(u.MedianBytes), samplesNote(u.Samples))
}

// samplesNote says over how many samples an unattributed figure was taken.
func samplesNote(n int) string {
	if n == 1 {
		return "one sample"
	}
	return fmt.Sprintf("median of %d samples", n)
}

// trendRank orders trend findings: leak suspects first.
func trendRank(f *Finding) int {
	switch trend.Class(f.Classification) {
	case trend.Growing:
		return 0
	case trend.Step:
		return 1
	case trend.Sawtooth:
		return 2
	}
	return 3
}

// migName names a MIG instance: "MIG GI 3 CI 0" (GPU instance, compute
// instance), without CI where the table gave none.
func migName(p MIGPlace) string {
	if p.CI < 0 {
		return fmt.Sprintf("MIG GI %d", p.GI)
	}
	return fmt.Sprintf("MIG GI %d CI %d", p.GI, p.CI)
}

// migGPU reports whether m places a process of GPU gpu in a MIG instance.
func migGPU(m map[MIGKey]MIGPlace, gpu int) bool {
	for k := range m {
		if k.GPU == gpu {
			return true
		}
	}
	return false
}
