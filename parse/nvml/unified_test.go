package nvml

import (
	"strconv"
	"strings"
	"testing"
)

// A GPU with unified memory (DGX Spark's GB10) reports no device memory
// through NVML, whatever layout logs it: each gives the explanation the
// nvidia-smi CSV gives (TestFieldUnreadable), never a flat line at 0 B or
// the generic "no used-memory value". The inputs are hand-made in each
// tool's documented output for NVML's NOT_SUPPORTED (no real log of these
// layouts from a GB10 was found): pynvml samplers write null (None) or 0
// for what nvmlDeviceGetMemoryInfo did not give; gpustat --json writes
// null and its text "??" (gpustat's _repr of None); nvidia-smi -q prints
// N/A; dcgmi dmon prints N/A; dcgm-exporter exports no DCGM_FI_DEV_FB_*
// metric for the GPU (its fields are not registered there), only others
// such as SM_CLOCK with modelName. With the processes' memory logged
// beside (which GB10 reports), the processes are read and a warning gives
// the same explanation for the GPU's own memory.
func TestUnifiedMemoryAcrossLayouts(t *testing.T) {
	const (
		uuid = "GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5"
		proc = `, "processes": [{"pid": 114687, "used": 20064501760}]`
		q    = "==============NVSMI LOG==============\n\nTimestamp                                 : Thu Oct 16 19:48:43 2025\nDriver Version                            : 580.95.05\n\n" +
			"Attached GPUs                             : 1\nGPU 0000000F:01:00.0\n    Product Name                          : NVIDIA GB10\n" +
			"    GPU UUID                              : " + uuid + "\n    Minor Number                          : 0\n    FB Memory Usage\n" +
			"        Total                             : N/A\n        Reserved                          : N/A\n        Used                              : N/A\n        Free                              : N/A\n"
		qProc = "    Processes\n        GPU instance ID                   : N/A\n        Compute instance ID               : N/A\n        Process ID                        : 114687\n" +
			"            Type                          : C\n            Name                          : /usr/local/bin/python\n            Used GPU Memory               : 19135 MiB\n"
		gpustatHead = "spark-397a  Thu Oct 16 19:48:43 2025  580.95.05\n"
	)
	pynvml := func(fields, procs string) string {
		var b strings.Builder
		for ts := 1764669600; ts < 1764669603; ts++ {
			b.WriteString(`{"ts": ` + strconv.Itoa(ts) + `, "gpu": 0, "uuid": "` + uuid + `", "name": "NVIDIA GB10", ` + fields + procs + "}\n")
		}
		return b.String()
	}
	for _, c := range []struct {
		name, in string
		want     string // in the error; "" : read, with want in a warning
		warn     string
	}{
		{"pynvml null", pynvml(`"total": null, "used": null, "free": null`, ""), "the NVIDIA GB10 has unified memory", ""},
		// 0 for what NVML did not give: not a GPU using 0 B.
		{"pynvml zeros", pynvml(`"total": 0, "used": 0, "free": 0`, ""), "every sample gives its memory as 0, the figure a sampler writes where NVML reports none", ""},
		{"pynvml null, processes", pynvml(`"total": null, "used": null, "free": null`, proc), "", "the NVIDIA GB10 has unified memory"},
		{"gpustat --json null", `{"hostname": "spark-397a", "query_time": "2025-10-16T19:48:43.123456", "gpus": [{"index": 0, "uuid": "` + uuid +
			`", "name": "NVIDIA GB10", "memory.used": null, "memory.total": null, "processes": []}]}` + "\n", "(memory.used is null in every sample)", ""},
		{"gpustat text ??", gpustatHead + "[0] NVIDIA GB10 | 41°C,   0 % |    ?? /    ?? MB |\n", "(gpustat's used memory is ?? in every sample)", ""},
		{"gpustat text ??, process", gpustatHead + "[0] NVIDIA GB10 | 41°C,   0 % |    ?? /    ?? MB | python/114687(19135M)\n", "", "the NVIDIA GB10 has unified memory"},
		{"nvidia-smi -q N/A", q, "(FB Memory Usage's Used is N/A in every sample)", ""},
		{"nvidia-smi -q N/A, process", q + qProc, "", "the NVIDIA GB10 has unified memory"},
		// No name in dcgmi's rows: its total N/A beside used tells.
		{"dcgmi dmon N/A", "#Entity   FBUSD        FBTTL        FBFRE\nID\nGPU 0     N/A          N/A          N/A\nGPU 0     N/A          N/A          N/A\n",
			"FBUSD is N/A in every sample and so is its total memory, as on a GPU with unified memory", ""},
		{"dcgm-exporter without FB metrics", "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n" +
			`DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="` + uuid + `",device="nvidia0",modelName="NVIDIA GB10",Hostname="spark-397a"} 208` + "\n" +
			`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="` + uuid + `",device="nvidia0",modelName="NVIDIA GB10",Hostname="spark-397a"} 36` + "\n",
			"the NVIDIA GB10 has unified memory (the system's RAM, shared with the CPU), for which DCGM, as NVML, reports no device memory", ""},
	} {
		rows, meta, err := readRows(t, "gb10.log", c.in)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--query-compute-apps=") {
				t.Errorf("%s: error %v, want %q and what to record instead", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		procs := 0
		for _, r := range rows {
			switch {
			case r.PID != nil:
				procs++
			case r.Used != nil:
				t.Errorf("%s: the GPU's row has used memory %d: NVML gave none", c.name, *r.Used)
			}
		}
		if w := strings.Join(meta.Warnings.Strings(), "\n"); procs == 0 || !strings.Contains(w, c.warn) || !strings.Contains(w, "its processes' memory is read") {
			t.Errorf("%s: %d process rows, warnings %q", c.name, procs, w)
		}
	}
	// A GPU of another kind whose log gives 0 for its total: no figure
	// too (no GPU has no memory), but nothing says unified memory.
	_, _, err := readRows(t, "zero.jsonl", `{"ts": 1764669600, "gpu": 0, "name": "NVIDIA A100", "total": 0, "used": 0, "free": 0}`+"\n")
	if err == nil || !strings.Contains(err.Error(), "no sample holds a used-memory value") || strings.Contains(err.Error(), "A100 has unified") {
		t.Errorf("A100 with 0 total: %v", err)
	}
	// A real 0 B used beside a real total stays 0 B.
	rows, _, err := readRows(t, "idle.jsonl", `{"ts": 1764669600, "gpu": 0, "name": "NVIDIA GB10", "total": 128501256192, "used": 0, "free": 128501256192}`+"\n")
	if err != nil || len(rows) != 1 || rows[0].Used == nil || *rows[0].Used != 0 {
		t.Errorf("used 0 of a given total: %v %+v", err, rows)
	}
}
