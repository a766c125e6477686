package live

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/capture"
)

const mib = 1 << 20

// tick is one GPU sample at second i: the GPU flat for 20 s, then pid 7
// leaking 128 MiB/s.
func tick(i int) []capture.GPUSample {
	const total, reserved = 150754820096, 644939776
	proc := int64(512 * mib)
	if i > 20 {
		proc += int64(min(i-20, 1000)) * 128 * mib // full after 1,000 s
	}
	return []capture.GPUSample{{TimeUs: 1796025972_000000 + int64(i)*1_000_000, Host: "vm", UUID: "GPU-a", Name: "NVIDIA H200",
		MemoryInfo: 2, TotalBytes: total, ReservedBytes: reserved, UsedBytes: proc, FreeBytes: total - reserved - proc,
		Processes: []capture.Process{
			{PID: 7, Name: "/usr/bin/python3", UsedBytes: proc, HasUsed: true, Type: "compute"},
			{PID: 3, Name: "idle", UsedBytes: 100 * mib, HasUsed: true, Type: "compute"},
		}}}
}

// The window keeps only its last ticks: the trend over 60 s ending with 40
// s of leak sees 40 s of it in a 30-tick window, so the whole window grows.
func TestWindowKeepsLastTicks(t *testing.T) {
	w := NewWindow(30)
	for i := range 61 {
		w.Add(tick(i))
	}
	if w.Len() != 30 {
		t.Fatalf("%d ticks kept, want 30", w.Len())
	}
	res, err := w.Trends("live", trend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := Rows(res)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want the GPU and 2 processes", len(rows))
	}
	for _, r := range rows {
		if r.Samples != 30 {
			t.Errorf("row %d: %d samples, want the window's 30", r.PID, r.Samples)
		}
		if r.HasPID && r.PID == 3 && (r.Suspect() || r.Rate != 0) {
			t.Errorf("the idle process is a suspect: %+v", r)
		}
		if (!r.HasPID || r.PID == 7) && (!r.Suspect() || math.Abs(r.Rate/mib-128) > 1) {
			t.Errorf("row %d: %s %.1f MiB/s, want growing 128", r.PID, r.Class, r.Rate/mib)
		}
		if r.HasPID && r.PID == 7 && r.UsedBytes != (512+40*128)*mib {
			t.Errorf("pid 7 uses %d, want the last sample's", r.UsedBytes)
		}
	}
}

func TestSortAndRender(t *testing.T) {
	nan := math.NaN()
	rows := []Row{
		{GPU: 1, HasPID: true, PID: 9, UsedBytes: 10, Rate: 5, OOMSeconds: nan},
		{GPU: 0, HasPID: true, PID: 5, UsedBytes: 30, Rate: 1, OOMSeconds: 100},
		{GPU: 0, HasPID: true, PID: 4, UsedBytes: 20, Rate: 9, OOMSeconds: nan},
		{GPU: 1, OOMSeconds: nan},
		{GPU: 0, OOMSeconds: 50},
	}
	order := func() string {
		var s []string
		for _, r := range rows {
			if r.HasPID {
				s = append(s, strings.Repeat(" ", 1)+string(rune('0'+r.PID)))
			} else {
				s = append(s, "G"+string(rune('0'+r.GPU)))
			}
		}
		return strings.Join(s, "")
	}
	for _, tc := range []struct {
		key  SortKey
		want string
	}{
		{ByGPU, "G0 4 5G1 9"}, {ByUsed, "G0 5 4G1 9"}, {ByRate, "G0 4 5G1 9"}, {ByOOM, "G0 5 4G1 9"},
	} {
		Sort(rows, tc.key)
		if got := order(); got != tc.want {
			t.Errorf("by %s: %q, want %q (each GPU first, then its processes)", tc.key, got, tc.want)
		}
	}
	if s := Sparkline([]int64{1, 1, 5, 9}); s != "▁▁▄█" {
		t.Errorf("sparkline %q", s)
	}
	if s := Sparkline([]int64{3, 3}); s != "▁▁" {
		t.Errorf("flat sparkline %q", s)
	}
	// A hostile process name cannot move the cursor or clear the screen.
	var b strings.Builder
	Screen(&b, []Row{{HasPID: true, PID: 1, Process: "x\x1b[2J", OOMSeconds: nan}}, ByGPU, time.Unix(0, 0), time.Second, 1, "")
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("escape in screen %q", b.String())
	}
}

func TestLine(t *testing.T) {
	w := NewWindow(100)
	for i := range 61 {
		w.Add(tick(i))
	}
	res, _ := w.Trends("live", trend.Options{})
	line := Line(Rows(res), time.Unix(1796026032, 0))
	want := "2026-11-30T08:07:12Z | GPU 0 "
	if !strings.HasPrefix(line, want) || !strings.Contains(line, "| pid 7 python3 ") || strings.Contains(line, "pid 3") {
		t.Errorf("line %q: want the time, the GPU and the growing pid 7 only", line)
	}
}

// BenchmarkWindowTrends: one refresh of a full window (3,600 ticks of a
// GPU and 2 processes).
func BenchmarkWindowTrends(b *testing.B) {
	w := NewWindow(3600)
	for i := range 3600 {
		w.Add(tick(i))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := w.Trends("live", trend.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The gauges as Prometheus scrapes them over HTTP: the growing process and
// the GPU with their labels, no time to OOM where none is credible.
func TestMetricsScrape(t *testing.T) {
	w := NewWindow(100)
	for i := range 61 {
		w.Add(tick(i))
	}
	res, err := w.Trends("live", trend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	m.Update(Rows(res))
	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`gpuleak_memory_growing{gpu="0",host="vm",pid="7",process="/usr/bin/python3",uuid="GPU-a"} 1`,
		`gpuleak_memory_growing{gpu="0",host="vm",pid="3",process="idle",uuid="GPU-a"} 0`,
		`gpuleak_memory_used_bytes{gpu="0",host="vm",pid="",process="",uuid="GPU-a"} 5.905580032e+09`,
		`gpuleak_samples{gpu="0",host="vm",pid="7",process="/usr/bin/python3",uuid="GPU-a"} 61`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %s:\n%s", want, body)
		}
	}
	for _, r := range Rows(res) {
		if math.IsNaN(r.OOMSeconds) == strings.Contains(string(body), fmt.Sprintf(`gpuleak_time_to_oom_seconds{gpu="0",host="vm",pid="%s"`, pidLabel(r))) {
			t.Errorf("pid %d: time to OOM %v, but the gauge's presence disagrees", r.PID, r.OOMSeconds)
		}
	}
}

// The textfile node_exporter reads holds what a scrape serves, replaced
// whole (no temporary file left beside it), readable by another user, and
// parsed by Prometheus' own text parser into the six families, label
// values with quotes, backslashes and newlines intact.
func TestMetricsTextfile(t *testing.T) {
	w := NewWindow(100)
	for i := range 61 {
		w.Add(tick(i))
	}
	res, err := w.Trends("live", trend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := append(Rows(res), Row{GPU: 10, UUID: `GPU-"q"\x`, Host: "h\nl", HasPID: true, PID: 12,
		Process: `a"b`, UsedBytes: 5, Samples: 3, OOMSeconds: math.NaN()})
	m := NewMetrics()
	m.Update(rows)
	dir := t.TempDir()
	path := dir + "/gpuleak.prom"
	if err := os.WriteFile(path, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteTextfile(path); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the directory holds %d files, want the textfile alone", len(ents))
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode %v (%v), want 0644", st.Mode().Perm(), err)
	}
	b, _ := os.ReadFile(path)
	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != string(scraped) {
		t.Errorf("textfile and scrape differ:\n%s\n---\n%s", b, scraped)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("Prometheus' parser: %v\n%s", err, b)
	}
	want := 5 // every family but the time to OOM, present where a row has one
	for _, r := range rows {
		if !math.IsNaN(r.OOMSeconds) {
			want = 6
			break
		}
	}
	if len(fams) != want {
		t.Errorf("%d families, want %d", len(fams), want)
	}
	found := false
	for _, mt := range fams["gpuleak_memory_used_bytes"].GetMetric() {
		l := map[string]string{}
		for _, lp := range mt.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["gpu"] == "10" {
			found = true
			if l["uuid"] != `GPU-"q"\x` || l["host"] != "h\nl" || l["process"] != `a"b` || mt.GetGauge().GetValue() != 5 {
				t.Errorf("labels or value lost in the text: %v %v", l, mt.GetGauge().GetValue())
			}
		}
	}
	if !found {
		t.Error("GPU 10's process series is missing")
	}
}

// A scraper asking for protobuf (Prometheus' delimited MetricFamily
// messages) gets it, decodable by Prometheus' own decoder.
func TestMetricsProtobuf(t *testing.T) {
	m := NewMetrics()
	m.Update([]Row{{GPU: 0, UUID: "GPU-a", Host: "vm", UsedBytes: 1 << 30, Samples: 2, OOMSeconds: math.NaN()}})
	srv := httptest.NewServer(m)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google.protobuf") {
		t.Fatalf("content type %q", ct)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	got := map[string]float64{}
	for {
		var f dto.MetricFamily
		if err := dec.Decode(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
	}
	if len(got) != 4 || got["gpuleak_memory_used_bytes"] != 1<<30 || got["gpuleak_samples"] != 2 {
		t.Errorf("decoded %v, want used, samples, slope and growing", got)
	}
}

func pidLabel(r Row) string {
	if !r.HasPID {
		return ""
	}
	return strconv.FormatInt(r.PID, 10)
}

// The watch's USED and OF columns tell a nearly full GPU from a full one:
// 1934 of 1995 MiB prints "1.9 GiB" twice in humanize's one decimal, and
// "1.89 GiB" and "1.95 GiB" with two (1934/1024 = 1.889, 1995/1024 =
// 1.948); a process row has no OF and keeps humanize's form.
func TestScreenUsedOfCapacity(t *testing.T) {
	nan := math.NaN()
	var b strings.Builder
	Screen(&b, []Row{{GPU: 0, UsedBytes: 1934 << 20, CapacityBytes: 1995 << 20, OOMSeconds: nan},
		{GPU: 0, HasPID: true, PID: 7, UsedBytes: 1934 << 20, OOMSeconds: nan}}, ByGPU, time.Unix(0, 0), time.Second, 1, "")
	out := b.String()
	if !strings.Contains(out, "1.89 GiB   1.95 GiB") || !strings.Contains(out, "   1.9 GiB") {
		t.Errorf("screen:\n%s", out)
	}
}
