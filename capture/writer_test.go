package capture

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
)

const mib = 1 << 20

// leakTicks simulates what NVML shows while a process leaks 64 MiB every
// 0.5 s (128 MiB/s) on an H200: a GPU sample per tick at period µs, the
// process's memory over a 512 MiB CUDA context.
func leakTicks(n int, periodUs int64) [][]GPUSample {
	const total, reserved = 150754820096, 644939776
	t0 := int64(1796025972_000000)
	var ticks [][]GPUSample
	for i := range n {
		t := t0 + int64(i)*periodUs
		steps := (t - t0) / 500_000
		proc := int64(512*mib) + steps*64*mib
		g := GPUSample{TimeUs: t, Host: "node1", Index: 0, UUID: "GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17771",
			Name: "NVIDIA H200", MemoryInfo: 2, TotalBytes: total, ReservedBytes: reserved,
			UsedBytes: proc + 4*mib, FreeBytes: total - reserved - proc - 4*mib,
			Processes: []Process{{PID: 4242, Name: "python3", UsedBytes: proc, HasUsed: true, Type: "compute"}}}
		ticks = append(ticks, []GPUSample{g})
	}
	return ticks
}

// The file a capture writes is an NVML log gpuleak reads: the pynvml
// layout, by content; one GPU row and one process row per tick; the
// reservation taken out of used (NVML v2); and the trend analysis finds
// the simulated leak's 128 MiB/s.
func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "samples.jsonl")
	w := NewWriter(path, Rotation{})
	ticks := leakTicks(41, 500_000) // 20 s at 0.5 s
	for _, tk := range ticks {
		if err := w.WriteTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f := nvml.Sniff(b); f != nvml.FormatPynvmlJSONL {
		t.Fatalf("sniffed as %v, want %v", f, nvml.FormatPynvmlJSONL)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := nvml.NewReader(bytes.NewReader(b), path, nvml.WithAllocator(mem))
	a := trend.NewAnalyzer(trend.Options{})
	for r.Next() {
		if err := a.Add(path, r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	m := r.Metadata()
	r.Release()
	if m.Rows != int64(2*len(ticks)) {
		t.Errorf("rows = %d, want %d (a GPU and a process row per tick)", m.Rows, 2*len(ticks))
	}
	a.Input(path, m.FirstUs, m.LastUs)
	res := a.Finalize()
	var proc, gpu *trend.SeriesTrend
	for i := range res.Series {
		s := &res.Series[i]
		if s.HasPID {
			proc = s
		} else {
			gpu = s
		}
	}
	if proc == nil || gpu == nil {
		t.Fatalf("series %+v: want a GPU and a process", res.Series)
	}
	if proc.PID != 4242 || proc.Process != "python3" || proc.Class != trend.Growing {
		t.Errorf("process series: pid %d %q %s, want 4242 python3 growing", proc.PID, proc.Process, proc.Class)
	}
	if got := proc.Slope / mib; math.Abs(got-128) > 128*0.1 {
		t.Errorf("process slope %.1f MiB/s, want 128 +- 10%%", got)
	}
	if gpu.Convention != string(nvml.ExcludesReserved) || gpu.FirstBytes != 516*mib {
		t.Errorf("GPU series: %s, first %d bytes; want excludes-reserved and 516 MiB (v2 used)", gpu.Convention, gpu.FirstBytes)
	}
}

// With a rotation period, each file holds the ticks of one period and is
// named after its first tick; every tick is in exactly one file.
func TestWriterRotation(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(filepath.Join(dir, "gpu.jsonl"), Rotation{Every: 5 * time.Second})
	ticks := leakTicks(25, 500_000) // 12 s at 0.5 s from 1796025972 (date -u -d @1796025972: 2026-11-30 08:06:12): files at 0, 5 and 10 s
	for _, tk := range ticks {
		if err := w.WriteTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	want := []string{"gpu-20261130T080612Z.jsonl", "gpu-20261130T080617Z.jsonl", "gpu-20261130T080622Z.jsonl"}
	if len(files) != len(want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	lines := 0
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Errorf("file %d: %s, want %s", i, filepath.Base(f), want[i])
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines != len(ticks) {
		t.Errorf("%d lines in all files, want %d", lines, len(ticks))
	}
	// By size: a new file once one holds 4 KiB.
	w = NewWriter(filepath.Join(dir, "s.jsonl"), Rotation{Bytes: 4096})
	for _, tk := range ticks {
		if err := w.WriteTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for _, f := range w.Files()[:len(w.Files())-1] {
		fi, _ := os.Stat(f)
		if fi.Size() < 4096 || fi.Size() > 4096+1024 {
			t.Errorf("%s: %d bytes, want just over 4 KiB", f, fi.Size())
		}
	}
	// Files started within one second are numbered, not overwritten.
	w = NewWriter(filepath.Join(dir, "fast.jsonl"), Rotation{Bytes: 4096})
	fast := leakTicks(40, 10_000) // 0.4 s at 10 ms
	for _, tk := range fast {
		if err := w.WriteTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	lines = 0
	for _, f := range w.Files() {
		b, _ := os.ReadFile(f)
		lines += bytes.Count(b, []byte("\n"))
	}
	if len(w.Files()) < 2 || lines != len(fast) || filepath.Base(w.Files()[1]) != "fast-20261130T080612Z-1.jsonl" {
		t.Errorf("files %v hold %d lines; want several numbered files holding all %d", w.Files(), lines, len(fast))
	}
	if _, err := ParseRotation("500ms", nil); err == nil {
		t.Error("a rotation period under 1 s accepted")
	}
}

// FuzzAppendJSON: whatever names NVML or /proc give (another user's
// process names, invalid UTF-8, quotes, newlines), each record is one line
// the NVML reader reads back with the same pid and sizes.
func FuzzAppendJSON(f *testing.F) {
	f.Add("vm", "NVIDIA H200", "python3", int64(450), int64(1<<30))
	f.Add("h\"o\\st", "GPU\n0", "\xff\xfe evil\x1b[2J", int64(1), int64(0))
	f.Fuzz(func(t *testing.T, host, gpuName, proc string, pid, used int64) {
		if pid < 0 || used < 0 || used >= 1<<53 {
			return
		}
		g := leakTicks(1, 1)[0][0]
		g.Host, g.Name = host, gpuName
		g.Processes = []Process{{PID: pid, Name: proc, UsedBytes: used, HasUsed: true, Type: "compute"}}
		line := AppendJSON(nil, &g)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		r := nvml.NewReader(bytes.NewReader(line), "f", nvml.WithFormat(nvml.FormatPynvmlJSONL))
		defer r.Release()
		rows := int64(0)
		for r.Next() {
			rows += r.RecordBatch().NumRows()
		}
		if err := r.Err(); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if rows != 2 {
			t.Fatalf("%d rows from %q, want 2", rows, line)
		}
	})
}

// -o FILE.csv: nvidia-smi --query-gpu CSV beside --query-compute-apps CSV,
// recognised by content as those layouts; read together by the trend
// analysis, the process grows at the same 128 MiB/s as from JSON lines, a
// name with a comma comes back whole, and the GPU's used memory is v2's.
func TestWriterCSV(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(filepath.Join(dir, "s.csv"), Rotation{})
	ticks := leakTicks(41, 500_000)
	for _, tk := range ticks {
		tk[0].Processes[0].Name = "python3, worker 0"
		tk[0].Processes = append(tk[0].Processes, Process{PID: 7, Type: "compute"}) // name and memory unknown
		if err := w.WriteTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 2 || filepath.Base(files[1]) != "s.apps.csv" {
		t.Fatalf("files %v", files)
	}
	a := trend.NewAnalyzer(trend.Options{})
	for i, want := range []parse.Format{nvml.FormatQueryGPU, nvml.FormatQueryApps} {
		b, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if f := nvml.Sniff(b); f != want {
			t.Fatalf("%s sniffed as %v, want %v", files[i], f, want)
		}
		r := nvml.NewReader(bytes.NewReader(b), files[i])
		for r.Next() {
			if err := a.Add(files[i], r.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		m := r.Metadata()
		a.Input(files[i], m.FirstUs, m.LastUs)
		r.Release()
	}
	var proc, gpu *trend.SeriesTrend
	res := a.Finalize()
	for i := range res.Series {
		s := &res.Series[i]
		switch {
		case !s.HasPID:
			gpu = s
		case s.PID == 4242:
			proc = s
		}
	}
	if proc == nil || gpu == nil {
		t.Fatalf("series %+v", res.Series)
	}
	if proc.Process != "python3, worker 0" || proc.Class != trend.Growing || math.Abs(proc.Slope/mib-128) > 12.8 {
		t.Errorf("process %q %s %.1f MiB/s, want the whole name, growing at 128", proc.Process, proc.Class, proc.Slope/mib)
	}
	if gpu.FirstBytes != 516*mib || gpu.Convention != string(nvml.ExcludesReserved) {
		t.Errorf("GPU first %d (%s), want 516 MiB excluding the reservation", gpu.FirstBytes, gpu.Convention)
	}
}
