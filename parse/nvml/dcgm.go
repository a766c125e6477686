package nvml

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// The DCGM exporter metrics read (MiB), and their slot in a pending row.
var dcgmMetrics = map[string]int{
	"DCGM_FI_DEV_FB_USED":     0,
	"DCGM_FI_DEV_FB_FREE":     1,
	"DCGM_FI_DEV_FB_TOTAL":    2,
	"DCGM_FI_DEV_FB_RESERVED": 3,
}

// dcgmDecoder reads the Prometheus text exposition format of DCGM
// exporter. The framebuffer metrics of one GPU at one time make a sample;
// they arrive in separate lines (all FB_USED lines, then all FB_FREE
// lines, ...), so rows wait in pending until their scrape is complete.
type dcgmDecoder struct {
	r *Reader
	// sawFB: a line named a framebuffer metric (DCGM_FI_DEV_FB_*), its
	// value read or not; others counts the sample lines of other metrics,
	// firstOther names the first.
	sawFB      bool
	others     int
	firstOther string

	pending map[dcgmKey]*dcgmRow
	order   []*dcgmRow
	// last is each line series' (lineKey) latest value of each metric
	// read, and the scrape it was read in: a line series read again in
	// its scrape starts the next, and its value is what a last line
	// without a line ending is told whole by (cutLast), with tsDigits,
	// the digits of the latest timestamp. inScrape: a series was read in
	// the current scrape.
	last     map[dcgmSeen]dcgmLast
	scrape   int64
	inScrape bool
	tsDigits int
	// gpuLast is each GPU's (gpuKey) latest value of each metric, its
	// scrape and the run of one metric's lines (block) it was read in:
	// the framebuffer is the whole GPU's, so the GPU's metric read again
	// in its scrape is a copy for another pod sharing the GPU only in
	// the same run and with the same value; else the next scrape begins
	// (the pod labels changed between scrapes). block counts the runs of
	// lines of one metric name; prevName is the last sample line's name.
	gpuLast  map[dcgmSeen]dcgmLast
	block    int64
	prevName []byte
	stamped  bool // some sample had a timestamp: hold rows to the end
	labels   []dcgmLabel
	// dateUs is the time of the scrapes after a line of date(1)'s output
	// ("date; curl .../metrics" in a loop), when dated.
	dateUs int64
	dated  bool
	// model is the first modelName label of a metric the decoder does
	// not read: the GPU a scrape without framebuffer metrics is of.
	model string
}

// dcgmLast is a series' latest value, the scrape it was read in and
// the run of its metric's lines (dcgmDecoder.block).
type dcgmLast struct {
	value         float64
	scrape, block int64
}

// atDate starts a scrape at t: samples without a timestamp of their own
// take it.
func (d *dcgmDecoder) atDate(t int64, n int) {
	if !d.stamped {
		d.flush()
	}
	if d.inScrape {
		d.scrape, d.inScrape = d.scrape+1, false
	}
	d.dateUs, d.dated = t, true
}

type dcgmKey struct {
	gpu  string // gpuKey
	time int64
}

type dcgmSeen struct {
	metric int
	series string
}

type dcgmRow struct {
	s   sample
	val [4]float64
	has [4]bool
	// pods: the Kubernetes pods the exporter labelled the GPU's lines
	// with at this time, in order, no repeats: more than one where pods
	// share the GPU (time-slicing, MPS), each line a copy of the reading.
	pods []dcgmPod
}

type dcgmLabel struct{ name, value string }

// dcgmPod is one pod's labels: pod, namespace and container.
type dcgmPod struct{ pod, namespace, container string }

// maxRowPods bounds the pods one sample names; more are counted.
const maxRowPods = 16

func newDCGMDecoder(r *Reader) *dcgmDecoder {
	return &dcgmDecoder{r: r, pending: map[dcgmKey]*dcgmRow{}, last: map[dcgmSeen]dcgmLast{}, gpuLast: map[dcgmSeen]dcgmLast{}}
}

func (d *dcgmDecoder) line(b []byte, n int) error {
	b = trimSpace(b)
	if len(b) == 0 || b[0] == '#' {
		if len(b) > 0 && !d.sawFB && bytes.Contains(b, []byte("DCGM_FI_DEV_FB_")) {
			d.sawFB = true // "# TYPE DCGM_FI_DEV_FB_USED gauge"
		}
		return nil
	}
	if isElision(b) {
		// A pasted scrape with lines left out: what they held is missing.
		d.r.meta.Skipped++
		d.r.meta.Warnings.Linef(n, "%q stands for lines left out of the paste: their samples are missing", snippet(b))
		return nil
	}
	name, rest, ok := metricName(b)
	if !ok {
		return d.r.rowErrorf(n, "not a Prometheus sample line: %q", snippet(b))
	}
	if !d.sawFB {
		if bytes.HasPrefix(name, []byte("DCGM_FI_DEV_FB_")) {
			d.sawFB = true
		} else {
			if d.others == 0 {
				d.firstOther = string(name)
			}
			d.others++
		}
	}
	d.labels = d.labels[:0]
	if len(rest) > 0 && rest[0] == '{' {
		var err error
		if d.labels, rest, err = parseLabels(rest[1:], d.labels); err != nil {
			d.lostUsed(name, n, fmt.Sprintf("%s: %v", name, err))
			return d.r.rowErrorf(n, "%s: %v", name, err)
		}
	}
	f := bytes.Fields(rest)
	if len(f) < 1 || len(f) > 2 {
		d.lostUsed(name, n, fmt.Sprintf("%s without its value", name))
		return d.r.rowErrorf(n, "%s: expected a value and an optional timestamp after the name, found %q", name, snippet(rest))
	}
	v, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return d.r.rowErrorf(n, "%s: %q is not a number", name, f[0])
	}
	var ts int64
	hasTS := len(f) == 2
	if hasTS {
		ms, ok := parseInt(f[1])
		if !ok || ms < 0 {
			return d.r.rowErrorf(n, "%s: %q is not a timestamp in milliseconds", name, f[1])
		}
		ts = ms * 1000
	}
	if !bytes.Equal(name, d.prevName) {
		d.block++
		d.prevName = append(d.prevName[:0], name...)
	}
	slot, ok := dcgmMetrics[string(name)]
	if !ok {
		if d.model == "" {
			d.model = d.label("modelName")
		}
		return nil
	}
	gpu := d.gpuKey()
	sk, gk := dcgmSeen{slot, d.lineKey()}, dcgmSeen{slot, gpu}
	prev, known := d.last[sk]
	prevGPU, knownGPU := d.gpuLast[gk]
	if d.r.noEOL {
		if err := d.cutLast(f, prev.value, known, n); err != nil {
			return err
		}
	}
	if hasTS {
		d.tsDigits = len(f[1])
	}
	// A line series seen again starts the next scrape; so does the GPU's
	// metric seen again under other pod labels, but for a copy for a pod
	// sharing the GPU (in the same run of lines, with the same value).
	if known && prev.scrape == d.scrape ||
		knownGPU && prevGPU.scrape == d.scrape && (prevGPU.block != d.block || prevGPU.value != v && !math.IsNaN(v)) {
		d.scrape++
		if !d.stamped {
			d.flush()
		}
	}
	d.last[sk] = dcgmLast{v, d.scrape, d.block}
	d.gpuLast[gk] = dcgmLast{v, d.scrape, d.block}
	d.inScrape = true
	if hasTS {
		d.stamped = true
	} else if d.dated {
		ts = d.dateUs
	} else {
		ts = d.r.tickTime(d.scrape)
		if d.r.meta.Clock != ClockRowOrder {
			d.r.meta.Clock = ClockRowOrder
			d.r.meta.Warnings.Addf("the metrics have no timestamps: scrapes are placed %v apart%s", d.r.opt.interval, d.r.scrapeAdvice())
		}
	}
	key := dcgmKey{gpu, ts}
	row := d.pending[key]
	if row == nil {
		row = d.newRow(ts, n)
		if row == nil {
			return d.r.errorf(n, "%s: gpu label %q is not a GPU index", name, d.label("gpu"))
		}
		d.pending[key] = row
		d.order = append(d.order, row)
	}
	d.addPod(row, n)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
	case v >= dcgmBlank:
		// DCGM's "blank" sentinels: the field is not supported or has no
		// value there, not a size.
		d.r.meta.Warnings.Linef(n, "%s is %s, one of DCGM's blank values (not supported or not available): no figure, skipped", name, f[0])
	case row.has[slot] && row.val[slot] != v:
		// One GPU, one time, two readings (two exporters' lines merged?):
		// the first is kept, and the other said.
		d.r.meta.Warnings.Linef(n, "%s of the same GPU at the same time again, %s where an earlier line gave %s: the earlier value is kept", name, f[0], strconv.FormatFloat(row.val[slot], 'f', -1, 64))
	default:
		row.val[slot], row.has[slot] = v, true
	}
	return nil
}

// addPod notes the line's pod labels in row: exported_pod,
// exported_namespace and exported_container where Prometheus renamed
// the exporter's labels (its scrape target's own pod, namespace and
// container, the exporter's, then take those names), else pod,
// namespace and container. A line with no pod (or pod="": no pod holds
// the GPU) adds none.
func (d *dcgmDecoder) addPod(row *dcgmRow, n int) {
	p := dcgmPod{d.label("pod"), d.label("namespace"), d.label("container")}
	if e := d.label("exported_pod"); e != "" {
		p = dcgmPod{e, d.label("exported_namespace"), d.label("exported_container")}
	}
	if p.pod == "" || slices.Contains(row.pods, p) {
		return
	}
	if len(row.pods) == maxRowPods {
		d.r.meta.Warnings.Once("dcgm pods", parse.LineNote(n, "more than %d pods share one GPU at one time: its samples name the first %d (here and after)", maxRowPods, maxRowPods))
		return
	}
	row.pods = append(row.pods, p)
}

// dcgmBlank is the least of DCGM's blank sentinels (dcgm_structs.h):
// DCGM_INT32_BLANK 0x7ffffff0; DCGM_INT64_BLANK 0x7ffffffffffffff0 and
// DCGM_FP64_BLANK 140737488355328.0 are larger. No framebuffer holds that
// many MiB (2 PiB).
const dcgmBlank = 0x7ffffff0

// isElision reports whether a line stands for lines left out of a paste:
// "...", "…", "[...]", "<snip>", "." (one of a vertical ellipsis's).
func isElision(b []byte) bool {
	// First, without copying the line: after the brackets, an elision
	// starts with "snip" (any case; 'ſ' folds to s) or with a dot or '…'.
	i := 0
	for i < len(b) && strings.IndexByte("[]()<> ", b[i]) >= 0 {
		i++
	}
	if i < len(b) {
		switch b[i] {
		case 's', 'S', 0xC5, '.', 0xE2: // 0xC5 starts 'ſ', 0xE2 '…'
		default:
			return false
		}
	}
	t := strings.Trim(string(b), "[]()<> ")
	if strings.EqualFold(t, "snip") || strings.EqualFold(t, "snipped") {
		return true
	}
	t = strings.Trim(t, ".…")
	// A dot alone is a vertical ellipsis's line ("." on lines of
	// their own, between rows of a pasted log).
	return t == "" && (len(b) >= 2 || len(b) == 1 && b[0] == '.')
}

// metricName splits a sample line into its metric name and the rest.
func metricName(b []byte) (name, rest []byte, ok bool) {
	i := 0
	for i < len(b) {
		c := b[i]
		if c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			i++
			continue
		}
		break
	}
	if i == 0 || i < len(b) && b[i] != '{' && !isSpace(b[i]) {
		return nil, nil, false
	}
	return b[:i], trimSpace(b[i:]), true
}

// parseLabels reads `name="value",...}` and returns the rest of the line.
func parseLabels(b []byte, out []dcgmLabel) ([]dcgmLabel, []byte, error) {
	i := 0
	for {
		for i < len(b) && (isSpace(b[i]) || b[i] == ',') {
			i++
		}
		if i < len(b) && b[i] == '}' {
			return out, b[i+1:], nil
		}
		j := i
		for j < len(b) && b[j] != '=' && b[j] != '}' && !isSpace(b[j]) {
			j++
		}
		if j == i || j >= len(b) || b[j] != '=' || j+1 >= len(b) || b[j+1] != '"' {
			return out, nil, errors.New("malformed labels (truncated line?)")
		}
		name := string(b[i:j])
		j += 2
		var v strings.Builder
		closed := false
		for j < len(b) {
			c := b[j]
			if c == '\\' && j+1 < len(b) {
				switch b[j+1] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(b[j+1])
				}
				j += 2
				continue
			}
			j++
			if c == '"' {
				closed = true
				break
			}
			v.WriteByte(c)
		}
		if !closed {
			return out, nil, errors.New("unterminated label value (truncated line?)")
		}
		out = append(out, dcgmLabel{name, v.String()})
		i = j
	}
}

// cutLast returns the row error of the input's last line, which has no
// line ending, when its last field (f: the value, and the timestamp when
// there is one) reads as cut short: a timestamp with fewer digits than
// the one before, or a value with fewer digits than the same series'
// value of the metric before it ("40" after "40000"). The exporter's text
// gives no unit to tell a whole value by; a cut there leaves a number as
// whole as any, that is not the value (a GPU "giving back" its memory at
// the end). A whole last line without a line ending (a paste) has as
// many digits as the value before it, or no value before it, and is read.
func (d *dcgmDecoder) cutLast(f [][]byte, prev float64, ok bool, n int) error {
	if len(f) == 2 {
		if d.tsDigits > 0 && len(f[1]) < d.tsDigits {
			return d.r.rowErrorf(n, "%s", cutNote("timestamp", f[1], fmt.Sprintf("has fewer digits than the one before it (%d)", d.tsDigits)))
		}
		return nil
	}
	if ok && prev >= 1 && intDigits(f[0]) < digitsOf(prev) {
		return d.r.rowErrorf(n, "%s", cutNote("value", f[0], fmt.Sprintf("has fewer digits than the same series' value before it (%s)", strconv.FormatFloat(prev, 'f', -1, 64))))
	}
	return nil
}

func (d *dcgmDecoder) label(names ...string) string {
	for _, n := range names {
		for _, l := range d.labels {
			if l.name == n {
				return l.value
			}
		}
	}
	return ""
}

// gpuKey identifies the GPU (or MIG instance) a line is of: its host,
// index, UUID and GPU instance. The framebuffer metrics are the whole
// GPU's (or instance's): the pod labels name who held it then, not
// another series.
func (d *dcgmDecoder) gpuKey() string {
	return d.joinLabels("Hostname", "hostname", "gpu", "UUID", "GPU_I_ID")
}

// lostUsed counts line n, of metric name, skipped as unreadable (why),
// when it is the used-memory metric: a scrape whose every FB_USED line is
// cut has its figure logged and lost, which the error says.
func (d *dcgmDecoder) lostUsed(name []byte, n int, why string) {
	if string(name) != "DCGM_FI_DEV_FB_USED" {
		return
	}
	if d.r.usedLost == 0 {
		d.r.usedLostLine, d.r.usedLostWhy = n, why
	}
	d.r.usedLost++
}

// lineKey identifies one line series of the exporter: the GPU and the
// labels of the pod (and shared-GPU replica, vgpu) it copies the reading
// for.
func (d *dcgmDecoder) lineKey() string {
	return d.joinLabels("Hostname", "hostname", "gpu", "UUID", "GPU_I_ID", "pod", "namespace", "container", "exported_pod", "exported_namespace", "exported_container", "vgpu")
}

func (d *dcgmDecoder) joinLabels(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(d.label(n))
		b.WriteByte(0)
	}
	return b.String()
}

func (d *dcgmDecoder) newRow(t int64, n int) *dcgmRow {
	row := &dcgmRow{}
	s := &row.s
	s.timeUs, s.conv = t, ExcludesReserved
	if g := d.label("gpu"); g != "" {
		x, ok := parseInt([]byte(g))
		if !ok || x < 0 || x > 1<<31-1 {
			return nil
		}
		s.gpu, s.hasGPU = int32(x), true
	}
	uuid := d.label("UUID")
	if mig := d.label("GPU_I_ID"); mig != "" && uuid != "" {
		uuid += "/" + mig
	}
	s.host, s.uuid, s.gpuName = []byte(d.label("Hostname", "hostname")), []byte(uuid), []byte(d.label("modelName"))
	return row
}

// setPods fills the sample's pod, namespace and container from the
// row's pods: one pod's labels, or, for a GPU shared by several, each
// label's values joined by commas in the same order (Kubernetes names
// hold no comma), the pods sorted so that a scrape listing them in
// another order names the same set.
func (row *dcgmRow) setPods() {
	s := &row.s
	switch len(row.pods) {
	case 0:
		return
	case 1:
		p := row.pods[0]
		s.pod, s.namespace, s.container = []byte(p.pod), []byte(p.namespace), []byte(p.container)
		return
	}
	slices.SortFunc(row.pods, func(a, b dcgmPod) int {
		return strings.Compare(a.namespace+"/"+a.pod+"/"+a.container, b.namespace+"/"+b.pod+"/"+b.container)
	})
	var pod, ns, ctr []byte
	for i, p := range row.pods {
		if i > 0 {
			pod, ns, ctr = append(pod, ','), append(ns, ','), append(ctr, ',')
		}
		pod, ns, ctr = append(pod, p.pod...), append(ns, p.namespace...), append(ctr, p.container...)
	}
	s.pod, s.namespace, s.container = pod, ns, ctr
}

// flush emits the pending rows in the order they began.
func (d *dcgmDecoder) flush() {
	for _, row := range d.order {
		row.setPods()
		s := &row.s
		for i, dst := range []struct {
			v  *int64
			ok *bool
		}{{&s.used, &s.hasUsed}, {&s.free, &s.hasFree}, {&s.total, &s.hasTotal}, {&s.reserved, &s.hasReserved}} {
			if row.has[i] && row.val[i]*MiB < math.MaxInt64 {
				*dst.v, *dst.ok = int64(math.Round(row.val[i]*MiB)), true
			}
		}
		d.r.emit(s)
	}
	d.order = d.order[:0]
	clear(d.pending)
}

func (d *dcgmDecoder) end(n int) error {
	d.flush()
	if d.r.meta.Rows == 0 && unifiedName(d.model) {
		// DCGM registers no framebuffer field for such a GPU: the
		// exporter exports its other metrics alone.
		return d.r.errorf(n, "no DCGM_FI_DEV_FB_USED, _FREE or _TOTAL samples: the %s has unified memory (the system's RAM, shared with the CPU), for which DCGM, as NVML, reports no device memory (its framebuffer fields are not there), so no GPU memory trend can be read from these metrics: %s", d.model, unifiedAdviceFor(d.model))
	}
	if d.r.meta.Rows == 0 && !d.sawFB && d.others > 0 {
		// No line names a framebuffer metric: that, not a damaged line
		// of another metric, is why there is no sample.
		cut := ""
		if fb := d.r.firstBad; fb != nil {
			cut = fmt.Sprintf("; line %d, which could not be read, is not one either (%s)", fb.first, fb.err.Msg)
		}
		return d.r.noMemoryf(n, "no DCGM_FI_DEV_FB_USED, _FREE or _TOTAL in these metrics: their %d sample lines are of other DCGM fields (the first, %s), none of the framebuffer's%s: the exporter's counters file (its -f CSV) does not list them, or the excerpt leaves them out; export DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE, and give the whole scrape", d.others, d.firstOther, cut)
	}
	if d.r.meta.Rows == 0 {
		return d.r.errorf(n, "no DCGM_FI_DEV_FB_USED, _FREE or _TOTAL samples (DCGM exporter's framebuffer metrics)")
	}
	return nil
}

// scrapeAdvice asks for what places DCGM scrapes without timestamps in
// time and was not given: the first scrape's time (--start) and the
// period (--interval); with both given it names the start.
func (r *Reader) scrapeAdvice() string {
	var want []string
	if !r.opt.hasStart {
		want = append(want, "the first scrape's time with gpuleak trend --start")
	}
	if !r.intervalGiven {
		want = append(want, "the period with gpuleak trend --interval")
	}
	if len(want) == 0 {
		return ", from the start given, " + r.opt.start.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return " (give " + strings.Join(want, " and ") + ")"
}
