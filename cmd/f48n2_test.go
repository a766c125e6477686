package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OmniOpt's GPU log is header-less CSV in its own order (timestamp, name,
// pci.bus_id, ... memory.used). analyze reads it with --fields; report
// said "name them with --fields" and refused that flag. Now report takes
// --fields for the header-less CSV logs of the run.
func TestReportFields(t *testing.T) {
	root := t.TempDir()
	linkJob(t, root, "om", "nvml/pub_omniopt_gpu_usage_a100_noheader_busid.csv")
	if code, _, errs := run(t, nil, "report", root, "-o", "-", "--format", "json"); code == 0 || !strings.Contains(errs, "name them with --fields") {
		t.Fatalf("without --fields: exit %d: %s; want the log unreadable, naming --fields", code, errs)
	}
	fields := "timestamp,name,pci.bus_id,driver_version,pstate,pcie.link.gen.max,pcie.link.gen.current,temperature.gpu,utilization.gpu,utilization.memory,memory.total,memory.free,memory.used"
	d := dailyOf(t, root, "--fields", fields)
	if d.Summary.Unreadable != 0 || len(d.GPUs) == 0 {
		t.Fatalf("with --fields: %d unreadable %+v, %d GPUs", d.Summary.Unreadable, d.Unreadable, len(d.GPUs))
	}
	// The largest used, 39671 MiB (11:27:25.361), is read.
	var peak int64
	for _, g := range d.GPUs {
		for _, s := range g.Series {
			if s.PeakBytes != nil && *s.PeakBytes > peak {
				peak = *s.PeakBytes
			}
		}
	}
	if peak != 39671<<20 {
		t.Errorf("peak %d, want %d (39671 MiB)", peak, int64(39671)<<20)
	}
}

// A fleet script's header-less CSV whose first field is the host
// ("gpu07, 0, NVIDIA A100-SXM4-80GB, 97, 71234, 81920, 64"): --fields
// host,... named it, and the log was still "unrecognised input format",
// the header-less claim wanting a number or date first. Now a first field
// --fields names as text (host, hostname, name, uuid) is taken as such.
func TestAnalyzeFieldsHostFirst(t *testing.T) {
	in := td + "nvml/pub_slurmtool_srun_noheader_host_first_field.txt"
	for _, first := range []string{"host", "hostname"} {
		code, out, errs := run(t, nil, "analyze", "--fields", first+",index,name,utilization.gpu,memory.used,memory.total,temperature.gpu", in)
		if code != 0 || !strings.Contains(out, "GPU 0 of gpu07 (NVIDIA A100-SXM4-80GB): 70 GiB of 80 GiB used") || !strings.Contains(out, "GPU 1 of gpu07") {
			t.Errorf("--fields %s,...: exit %d\n%s%s", first, code, out, errs)
		}
	}
	// Without a text field first, a word there is no row.
	if code, _, errs := run(t, nil, "analyze", "--fields", "index,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw", in); code == 0 || !strings.Contains(errs, "unrecognised input format") {
		t.Errorf("--fields index,...: exit %d: %s", code, errs)
	}
}

// ngi644/datadog_nvml#12, a Datadog agent's nvml check: pynvml.nvmlInit() raised
// NVMLError_NoPermission (the agent's user may not open the GPU), so NVML
// never started. Pasted indented in backticks the line was not found
// (generic "unrecognised"); dedented it was called "one query failed, not
// NVML: NVML itself worked". The traceback's frames name nvmlInit: now it
// is said that NVML did not start.
func TestPynvmlInitNoPermission(t *testing.T) {
	path := td + "toolerror/pynvml_nvmlinit_nopermission_datadog.txt"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The same text flush left, without the backticks (a DERIVED copy).
	var flat []string
	for _, l := range strings.Split(strings.Trim(string(b), "`\n"), "\n") {
		flat = append(flat, strings.TrimLeft(l, " "))
	}
	dedented := filepath.Join(t.TempDir(), "dedented.txt")
	if err := os.WriteFile(dedented, []byte(strings.Join(flat, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{path, dedented} {
		code, _, errs := run(t, nil, "analyze", in)
		if code != ExitInput || !strings.Contains(errs, `line 22 is pynvml's error "NVMLError_NoPermission: Insufficient Permissions": nvmlInit raised it`) ||
			!strings.Contains(errs, "NVML did not start, so nothing was sampled") || strings.Contains(errs, "NVML itself worked") {
			t.Errorf("%s: exit %d: %s", in, code, errs)
		}
	}
}

// Under one host directory, logs of a GTX 1070, three GTX TITANs and an
// H100, each with its GPU 0: the daily report joined them as one "gpu 0"
// and said its lowest used memory moved per day across them. Now GPUs of
// different names under one index are kept apart, labelled with their
// names, with a warning; logs of one GPU whose names agree still join.
func TestDailyGPUIndexOfDifferentModels(t *testing.T) {
	root := t.TempDir()
	linkJob(t, root, "hostA/j1", "nvml/field/cbio39_table_325_mb_three_titans.txt")
	linkJob(t, root, "hostA/j2", "nvml/field/arborx565_table_450_mig_col.txt")
	linkJob(t, root, "hostA/j3", "nvml/pub_skypilot_pool_job_log_prefix_h100.txt")
	d := dailyOf(t, root, "--group-by", "{host}/{job}/...")
	gpu0 := map[string]bool{}
	for _, g := range d.GPUs {
		if strings.HasPrefix(g.GPU, "gpu 0") {
			gpu0[g.GPU] = true
			if g.BaselineCreepBytesPerDay != nil {
				t.Errorf("%s: lowest memory moved %v per day, across GPUs of other models", g.GPU, *g.BaselineCreepBytesPerDay)
			}
		}
	}
	for _, w := range []string{"gpu 0 (GeForce GTX 1070)", "gpu 0 (GeForce GTX TITAN)", "gpu 0 (NVIDIA H100 80GB HBM3)"} {
		if !gpu0[w] {
			t.Errorf("GPUs %v: want %q", gpu0, w)
		}
	}
	if !strings.Contains(strings.Join(d.Warnings, "\n"), `hostA: gpu 0 is named "GeForce GTX 1070", "GeForce GTX TITAN" and "NVIDIA H100 80GB HBM3" in different logs`) {
		t.Errorf("warnings %q", d.Warnings)
	}
	// Two days' tables of one GPU, the second's name cut by nvidia-smi
	// ("NVIDIA H100 80GB ..."): one GPU, whose lowest memory rose 1 GiB
	// in a day.
	root = t.TempDir()
	h100 := string(mustRead(t, td+"nvml/pub_skypilot_pool_job_log_prefix_h100.txt"))
	next := strings.NewReplacer("Thu Aug 14", "Fri Aug 15", "NVIDIA H100 80GB HBM3 ", "NVIDIA H100 80GB ...  ", "      0MiB /", "   1024MiB /").Replace(h100)
	for dir, text := range map[string]string{"hostB/j1": h100, "hostB/j2": next} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "smi.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d = dailyOf(t, root, "--group-by", "{host}/{job}/...")
	if len(d.GPUs) != 1 || d.GPUs[0].GPU != "gpu 0" || len(d.GPUs[0].Series) != 2 {
		t.Fatalf("one H100 on two days: %d GPUs", len(d.GPUs))
	}
	if c := d.GPUs[0].BaselineCreepBytesPerDay; c == nil || *c != 1<<30 {
		t.Errorf("one H100 on two days: lowest memory moved %v per day, want 1 GiB", c)
	}
}

// Excerpts of nvidia-smi's reports that lack their GPU (a -q -x excerpt of
// process entries, telegraf#12996; a -q excerpt without its GPU line,
// libc6-shim#14) were skipped by the daily report as "no format gpuleak
// reads", while analyze says what they are and lack: the report now says
// what analyze says.
func TestDailyNamesNVMLExcerpts(t *testing.T) {
	root := t.TempDir()
	linkJob(t, root, "a", "nvml/pub_telegraf12996_windows_xml_procs_na_excerpt.txt")
	linkJob(t, root, "b", "nvml/pub_libc6shim14_q_excerpt_no_gpu_line.txt")
	linkJob(t, root, "c", "nvml/pub_skypilot_pool_job_log_prefix_h100.txt")
	d := dailyOf(t, root)
	want := map[string]string{
		"pub_telegraf12996_windows_xml_procs_na_excerpt.txt": "line 3: part of nvidia-smi -q -x's XML without the <gpu> element",
		"pub_libc6shim14_q_excerpt_no_gpu_line.txt":          "part of an nvidia-smi -q report",
	}
	for _, s := range d.Skipped {
		if w, ok := want[filepath.Base(s.Path)]; ok {
			if !strings.Contains(s.Reason, w) {
				t.Errorf("%s: %q, want %q", s.Path, s.Reason, w)
			}
			delete(want, filepath.Base(s.Path))
		}
	}
	if len(want) > 0 {
		t.Errorf("not skipped with a reason: %v (skipped %+v)", want, d.Skipped)
	}
}
