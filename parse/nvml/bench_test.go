package nvml

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchRows is the size of the benchmark's --query-gpu log.
const benchRows = 1_000_000

// queryGPULog returns a 1,000,000-row --query-gpu CSV log in the layout
// of testdata/nvml/query_gpu.csv (11 fields, units, 8 GPUs interleaved,
// 250 ms apart), made once and kept under os.TempDir(); it is never
// committed.
func queryGPULog(b *testing.B) []byte {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("gpuleak-bench-query-gpu-%d.csv", benchRows))
	if data, err := os.ReadFile(path); err == nil && bytes.Count(data, []byte("\n")) == benchRows+1 {
		return data
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	fmt.Fprintln(w, "timestamp, index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], utilization.gpu [%], utilization.memory [%]")
	t0 := time.Date(2026, 11, 30, 8, 6, 12, 696e6, time.UTC)
	for i := 0; i < benchRows; i++ {
		gpu := i % 8
		tick := time.Duration(i/8) * 250 * time.Millisecond
		used := (i/8)%4096 + gpu*1000
		fmt.Fprintf(w, "%s, %d, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f1777%d, NVIDIA H200, 00000000:%02X:00.0, 143771 MiB, %d MiB, %d MiB, 616 MiB, %d %%, %d %%\n",
			t0.Add(tick).Format("2006/01/02 15:04:05.000"), gpu, gpu, 0x18+gpu, used, 143771-616-used, i%100, i%37)
	}
	w.Flush()
	data := buf.Bytes()
	_ = os.WriteFile(path, data, 0o644) // a cache: failing to write it only costs time
	return data
}

// BenchmarkQueryGPU reads a 1,000,000-row --query-gpu log; MB/s is the
// parser's throughput (aim: at least 100 MB/s).
func BenchmarkQueryGPU(b *testing.B) {
	data := queryGPULog(b)
	benchReadRows(b, data, "bench.csv")
}

// formatLog generates about size bytes of a log in one of the other
// layouts, 8 GPUs sampled once a second, modelled on the fixtures
// (testdata/nvml/dmon.txt, leak_exit_pmon_m_TD.txt, pynvml.jsonl, the
// gpustat and DCGM documents of reader_test.go): the layout's header,
// then one tick after another.
func formatLog(f string, size int) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	t0 := time.Date(2026, 11, 30, 8, 6, 12, 0, time.UTC)
	switch f {
	case "dmon":
		fmt.Fprintln(w, "#Date        Time         gpu     fb   bar1   ccpm     sm    mem    enc    dec    jpg    ofa ")
		fmt.Fprintln(w, "#YYYYMMDD    HH:MM:SS     Idx     MB     MB     MB      %      %      %      %      %      % ")
	case "pmon":
		fmt.Fprintln(w, "#Date        Time         gpu         pid   type     fb   ccpm    command ")
		fmt.Fprintln(w, "#YYYYMMDD    HH:MM:SS     Idx           #    C/G     MB     MB    name ")
	}
	for k := 0; buf.Len()+w.Buffered() < size; k++ {
		t := t0.Add(time.Duration(k) * time.Second)
		for g := 0; g < 8; g++ {
			used := 1000*g + k%4096
			switch f {
			case "dmon":
				fmt.Fprintf(w, " %s    %s %7d %6d %6d %6d %6d %6d %6d %6d %6d %6d \n", t.Format("20060102"), t.Format("15:04:05"), g, used, 1, 0, k%100, k%37, 0, 0, 0, 0)
			case "pmon":
				fmt.Fprintf(w, " %s    %s %7d %11d %6s %6d %6d    %-14s \n", t.Format("20060102"), t.Format("15:04:05"), g, 4000+g, "C", used, 0, "python3")
			case "pynvml":
				fmt.Fprintf(w, `{"ts": %.3f, "gpu": %d, "uuid": "GPU-f7fe13ab-e2ff-251e-34e3-f58c08f1777%d", "total": 150754820096, "used": %d, "free": %d, "reserved": 644939776, "processes": []}`+"\n",
					float64(t.UnixMilli())/1e3, g, g, used<<20, 150754820096-644939776-int64(used)<<20)
			case "gpustat":
				if g == 0 {
					fmt.Fprintf(w, `{"hostname": "node-7", "driver_version": "580.159.04", "query_time": "%s", "gpus": [`, t.Format("2006-01-02T15:04:05.000000"))
				} else {
					fmt.Fprint(w, ", ")
				}
				fmt.Fprintf(w, `{"index": %d, "uuid": "GPU-9f2%d", "name": "NVIDIA A100-SXM4-80GB", "temperature.gpu": 31, "fan.speed": null, "utilization.gpu": 0, "power.draw": 61, "enforced.power.limit": 400, "memory.used": %d, "memory.total": 81920, "processes": [{"username": "u", "command": "python", "full_command": ["python", "train.py"], "gpu_memory_usage": %d, "cpu_percent": 0.0, "cpu_memory_usage": 1, "pid": %d}]}`,
					g, g, used, used/2, 4000+g)
				if g == 7 {
					fmt.Fprintln(w, "]}")
				}
			case "dcgm":
				ts := t.UnixMilli()
				labels := fmt.Sprintf(`gpu="%d",UUID="GPU-aaa%d",pci_bus_id="00000000:01:00.0",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"`, g, g, g)
				if g == 0 {
					fmt.Fprintln(w, "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge")
				}
				fmt.Fprintf(w, "DCGM_FI_DEV_FB_USED{%s} %d %d\n", labels, used, ts)
				fmt.Fprintf(w, "DCGM_FI_DEV_FB_FREE{%s} %d %d\n", labels, 80000-used, ts)
			}
		}
	}
	w.Flush()
	return buf.Bytes()
}

// BenchmarkFormats reads 16 MiB of each other NVML layout (made in
// memory, never written); MB/s is the parser's throughput.
func BenchmarkFormats(b *testing.B) {
	for _, f := range []string{"dmon", "pmon", "pynvml", "gpustat", "dcgm"} {
		b.Run(f, func(b *testing.B) {
			data := formatLog(f, 16<<20)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rd := NewReader(bytes.NewReader(data), f)
				var rows int64
				for rd.Next() {
					rows += rd.RecordBatch().NumRows()
				}
				if err := rd.Err(); err != nil || rows == 0 {
					b.Fatalf("%d rows: %v", rows, err)
				}
				if i == 0 {
					b.ReportMetric(float64(rows), "rows")
				}
				rd.Release()
			}
		})
	}
}

// BenchmarkQueryGPUFleet reads BenchmarkQueryGPU's log as pdsh would
// print it from four hosts: each line behind "nodeNN: ", a tick's eight
// rows from one host, the hosts taking turns (fleetDecoder's path).
func BenchmarkQueryGPUFleet(b *testing.B) {
	data := queryGPULog(b)
	var buf bytes.Buffer
	lines := bytes.SplitAfter(data, []byte("\n"))
	for h := range 4 {
		fmt.Fprintf(&buf, "node%02d: %s", h+1, lines[0])
	}
	for i, l := range lines[1:] {
		if len(l) > 0 {
			fmt.Fprintf(&buf, "node%02d: %s", (i/8)%4+1, l)
		}
	}
	fleet := buf.Bytes()
	benchReadRows(b, fleet, "fleet.txt")
}

// benchReadRows reads data, named name, b.N times, each a log of benchRows
// rows; MB/s is of data's bytes.
func benchReadRows(b *testing.B, data []byte, name string) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := NewReader(bytes.NewReader(data), name)
		var rows int64
		for rd.Next() {
			rows += rd.RecordBatch().NumRows()
		}
		if err := rd.Err(); err != nil || rows != benchRows {
			b.Fatalf("%d rows: %v", rows, err)
		}
		rd.Release()
	}
}
