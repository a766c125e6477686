package nvml

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// countingAllocator counts the bytes Arrow holds. The fuzz targets use it
// instead of memory.CheckedAllocator, which records a stack per
// allocation and made each run of a 4 KiB input take a millisecond (and
// minimizing a new input take the whole minute); the unit tests keep the
// checked allocator.
type countingAllocator struct {
	memory.Allocator
	held int
}

func (c *countingAllocator) Allocate(n int) []byte {
	c.held += n
	return c.Allocator.Allocate(n)
}

func (c *countingAllocator) Reallocate(n int, b []byte) []byte {
	c.held += n - len(b)
	return c.Allocator.Reallocate(n, b)
}

func (c *countingAllocator) Free(b []byte) {
	c.held -= len(b)
	c.Allocator.Free(b)
}

// fuzzRead reads data as format f (detected when f is unknown) and checks
// what must hold for any input: no panic, no leaked Arrow memory, batches
// of the samples schema whose row count Metadata agrees with, and errors
// that are *parse.Error values with a line.
func fuzzRead(t *testing.T, data []byte, f parse.Format, more ...Option) {
	mem := &countingAllocator{Allocator: parse.NewRecyclingAllocator(1 << 20)}
	defer func() {
		if mem.held != 0 {
			t.Fatalf("%d bytes of Arrow memory left allocated", mem.held)
		}
	}()
	opts := append([]Option{WithAllocator(mem), WithBatchSize(16)}, more...)
	if f != parse.FormatUnknown {
		opts = append(opts, WithFormat(f))
	}
	rd := NewReader(bytes.NewReader(data), "fuzz", opts...)
	defer rd.Release()
	var rows int64
	for rd.Next() {
		rec := rd.RecordBatch()
		if !rec.Schema().Equal(Schema) {
			t.Fatalf("batch schema %s", rec.Schema())
		}
		rows += rec.NumRows()
	}
	if err := rd.Err(); err != nil {
		var pe *parse.Error
		if !errors.As(err, &pe) || pe.Line < 1 || pe.File != "fuzz" {
			t.Fatalf("error %v (%T) has no line", err, err)
		}
		return
	}
	m := rd.Metadata()
	if rows != m.Rows || rows == 0 && m.Ticks == 0 && rd.Format() != FormatQueryApps {
		t.Fatalf("%d rows, metadata says %d (%d ticks), and no error", rows, m.Rows, m.Ticks)
	}
	// A sampling instant holds a row or a tick; every row is in one.
	if m.Instants > m.Ticks || (m.Ticks > 0) != (m.Instants > 0) {
		t.Fatalf("%d instants of %d ticks (%d rows)", m.Instants, m.Ticks, m.Rows)
	}
}

// addFixtures seeds f with the real logs (cut short) of the given names.
func addFixtures(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(fixtures + n)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 1024 {
			b = b[:1024]
		}
		f.Add(b)
	}
}

func FuzzQueryGPU(f *testing.F) {
	addFixtures(f, "query_gpu.csv", "query_gpu_noheader_nounits.csv", "query_gpu_reordered.csv", "pub_bpytop26_query_gpu_no_index.txt",
		"dst_fallback_berlin_query_gpu.csv", "fleet_ansible_o_query_gpu.txt", "fleet_pssh_i_stderr_lines.txt")
	f.Add([]byte("timestamp, index, name, memory.used [MiB]\n2026/01/02 03:04:05.000, 0, A, B, 1 MiB\n"))
	f.Add([]byte("timestamp,index,name,memory.used [MiB]\n\"2026/01/02 03:04:05.000\",0,\"A, \"\"B\"\"\",7\n"))
	f.Add([]byte("index, memory.used [MiB]\n0, [N/A]\n1, 2 GiB\nNo devices were found\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatQueryGPU) })
}

func FuzzQueryApps(f *testing.F) {
	addFixtures(f, "query_apps.csv", "query_apps_noheader.csv")
	f.Add([]byte("pid, used_memory [MiB]\n1, 2\n1, 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatQueryApps) })
}

func FuzzDmon(f *testing.F) {
	addFixtures(f, "dmon.txt", "dmon_mu.txt")
	f.Add([]byte("# gpu fb\n# Idx MB\n 0 1\n 1 -\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatDmon) })
}

func FuzzPmon(f *testing.F) {
	addFixtures(f, "pmon.txt", "pmon_mu_T.txt")
	f.Add([]byte("#Time gpu pid type fb command\n#HH:MM:SS Idx # C/G MB name\n 23:59:58 0 7 C 100 python3\n 00:00:01 0 - - - -\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatPmon) })
}

func FuzzPynvml(f *testing.F) {
	addFixtures(f, "pynvml.jsonl", "pynvml_2.jsonl")
	f.Add([]byte(`[{"timestamp": "2026-01-02T03:04:05Z", "index": 1, "uuid": "GPU-x", "used": 6e7, "processes": [{"pid": 5, "usedGpuMemory": null}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatPynvmlJSONL) })
}

func FuzzGpustat(f *testing.F) {
	f.Add([]byte(`{"hostname": "h", "query_time": "2026-11-30T08:06:12.500000", "gpus": [{"index": 0, "uuid": "GPU-9", "name": "A100",
 "memory.used": 1000, "memory.total": 81920, "processes": [{"pid": 1, "command": "python", "gpu_memory_usage": 990}]}]}
{"hostname": "h", "query_time": "2026-11-30T08:06:13.500000", "gpus": []}`))
	f.Add([]byte("{\n \"query_time\": \"2026-01-01T00:00:00+01:00\",\n \"gpus\": [\n  {\"index\": 0, \"memory.used\": 1}\n ]\n}\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatGpustatJSON) })
}

func FuzzDCGM(f *testing.F) {
	f.Add([]byte("# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n" +
		"DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"h\",pod=\"p\",namespace=\"n\",container=\"c\"} 38214\n" +
		"DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"h\",pod=\"p\",namespace=\"n\",container=\"c\"} 2136\n"))
	f.Add([]byte("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"3\"} 1 1000\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"3\"} 2 2000\n" +
		"DCGM_FI_DEV_FB_TOTAL{gpu=\"0\",label=\"a\\\"b\\\\c\\n\"} NaN\n"))
	addFixtures(f, "field/dcgmexporter317_a30_mig_used.txt", "field/dcgmexporter736_hostname_lower_mig.txt", "dcgm_date_curl_loop_5min.txt")
	f.Add([]byte("Sun Oct 27 02:30:00 CEST 2024\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\nThu 02 May 2024 10:00:00 AM +0530\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatDCGMPrometheus) })
}

// FuzzLocalTimes reads local times in a zone with changes of offset
// (Europe/Berlin), across the hour its clocks repeat and the hour they
// skip: no panic, and the properties fuzzRead checks.
func FuzzLocalTimes(f *testing.F) {
	addFixtures(f, "dst_fallback_berlin_query_gpu.csv", "pmon.txt")
	f.Add([]byte("timestamp, index, memory.used [MiB]\n2024/10/27 02:50:00.000, 0, 1 MiB\n2024/10/27 02:00:00.000, 0, 2 MiB\n2024/03/31 02:30:00.000, 0, 3 MiB\n"))
	f.Add([]byte("#Date Time gpu pid type fb command\n#YYYYMMDD HH:MM:SS Idx # C/G MB name\n 20241027 02:55:00 0 7 C 1 p\n 20241027 02:05:00 0 7 C 2 p\n"))
	f.Add([]byte("Sun Oct 27 02:55:00 2024\n|   0  A  On  | x |\n| 1MiB / 2MiB |\nSun Oct 27 02:05:00 CET 2024\n"))
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, parse.FormatUnknown, WithLocation(loc)) })
}

// FuzzDetect reads inputs of any layout, detected by content.
func FuzzDetect(f *testing.F) {
	addFixtures(f, "query_gpu.csv", "query_apps.csv", "dmon.txt", "pmon.txt", "pynvml.jsonl",
		"field/a10g_query_continued_then_pmon_no_fb.txt", "dcgm_date_curl_loop_5min.txt", "fleet_pdsh_query_gpu.txt", "fleet_pssh_i_query_gpu.txt",
		"fleet_ansible_o_query_gpu.txt", "fleet_pssh_i_stderr_lines.txt", "h200_q_x_idle.xml")
	f.Add([]byte("$ nvidia-smi pmon -c 1\n# gpu pid type sm mem command\n# Idx # C/G % % name\n 0 7 C - - python\n$ nvidia-smi \\\n  --query-gpu=index,memory.used \\\n  --format=csv\nindex, memory.used [MiB]\n0, 5 MiB\n"))
	f.Add([]byte("DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n"))
	f.Add([]byte(`{"query_time": "2026-11-30T08:06:12", "gpus": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if Sniff(data) == parse.FormatUnknown && len(bytes.TrimSpace(data)) > 0 {
			// Not ours: the reader must say so, wrapping ErrNotMine.
			rd := NewReader(bytes.NewReader(data), "fuzz")
			defer rd.Release()
			if rd.Next() || !errors.Is(rd.Err(), parse.ErrNotMine) {
				t.Fatalf("unrecognised input read without ErrNotMine: %v", rd.Err())
			}
			return
		}
		fuzzRead(t, data, parse.FormatUnknown)
	})
}

// FuzzFleet reads fleet logs: pdsh and clush prefixes, clush -b,
// parallel-ssh -i and ansible block headers (fleetDecoder).
func FuzzFleet(f *testing.F) {
	addFixtures(f, "fleet_pdsh_query_gpu.txt", "fleet_clush_b_query_gpu.txt", "fleet_pssh_i_query_gpu.txt")
	f.Add([]byte("node[01-02]: 2024/05/01 10:00:00.000, GPU-a, 42, python, 100 MiB\npdsh@login: node03: ssh exited with exit code 255\nstray\n"))
	f.Add([]byte("node05: ssh: connect\n---------------\nnode01\n---------------\n2024/05/01 10:00:00.000, 0, GPU-1, A, 1 MiB, 1 MiB, 1 MiB\nclush: node[05-06] (2): exited with exit code 255\n"))
	f.Add([]byte("node01 | CHANGED | rc=0 >>\n2024/05/01 10:00:00.000, 0, 1 MiB\nnode02 | UNREACHABLE! => {\n}\n"))
	f.Add([]byte("---------------\nn[1-3]x[1-2] (6)\n---------------\ntimestamp, memory.used [MiB]\n2024/05/01 10:00:00.000, 1 MiB\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, parse.FormatUnknown) })
}

func FuzzSmiText(f *testing.F) {
	addFixtures(f, "leak_exit_nvidia_smi_default.txt", "leak_exit_nvidia_smi_q_memory.txt", "pub_pytorch910_nvidia_smi.txt", "pub_gpuoperator348_cut_gpu_row.txt",
		"field/nvitop8_mig_processes.txt", "field/nvitop8_mig_devices_cut.txt", "field/mineru_win_wddm_537_table.txt", "field/cadesign_win_wddm_512_table_indented.txt")
	f.Add([]byte("| NVIDIA-SMI 1 Driver Version: 1 |\n+--+\n|   0  A  On  | x |\n| 1MiB / 2MiB |\n| Processes: |\n|  0  7  C  p  3MiB |\n"))
	// GPU rows cut in their cells (s32): "1344... / 2MiB", a line cut in the name.
	f.Add([]byte("| NVIDIA-SMI 1 Driver Version: 1 |\n|   0  A  On  | x |\n| N/A | 1344... / 2MiB | 5% |\n|   1  NVIDIA H2\n| N/A | 1MiB / 14\n"))
	f.Add([]byte("==NVSMI LOG==\nTimestamp : Tue Dec  1 02:00:58 2026\nAttached GPUs : 1\nGPU 0:1\n    FB Memory Usage\n        Used : 1 MiB\n    Processes\n        Process ID : 5\n        Used GPU Memory : 2 MiB\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatNvidiaSmiText) })
}

func FuzzSmiXML(f *testing.F) {
	addFixtures(f, "h200_q_x_process.xml", "h200_q_x_idle.xml", "field/cpux115_q_x_cut.txt")
	f.Add([]byte("<nvidia_smi_log>\n<gpu>\n<fb_memory_usage><used>N/A</used></fb_memory_usage>\n<processes><process_info><pid>1</pid><used_memory>N/A</used_memory></process_info></processes>\n</gpu>\n</nvidia_smi_log>\n"))
	// Excerpts: no root; cut at the start inside a GPU's frame buffer.
	f.Add([]byte("<gpu id=\"0\">\n<uuid>GPU-1</uuid>\n<fb_memory_usage><used>5 MiB</used></fb_memory_usage>\n</gpu>\n"))
	f.Add([]byte("<used>5 MiB</used>\n</fb_memory_usage>\n</gpu>\n<gpu id=\"1\">\n<fb_memory_usage><used>6 MiB</used></fb_memory_usage>\n</gpu>\n</nvidia_smi_log>\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatNvidiaSmiXML) })
}
