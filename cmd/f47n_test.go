package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pynvml names each NVML failure (NVMLError_<name>), and they mean
// different things: LibraryNotFound, DriverNotLoaded, Uninitialized mean
// NVML as a whole did not work, so a sampler read nothing; NotSupported or
// NoPermission mean one query failed on a working NVML (XuehaiPan/nvitop#5:
// the memory reading on line 5 came back, utilisation on a MIG-enabled
// A100 did not). Before, every NVMLError_* was "pynvml could not use NVML
// ... so it sampled nothing", false for nvitop#5.
func TestPynvmlErrorsToldApart(t *testing.T) {
	dir := td + "toolerror/"
	cases := []struct {
		file    string
		want    []string // each must be in stderr
		notWant []string // none may be
	}{
		// (pynvml_notsupported_mig.txt, a per-query failure after a
		// memory reading, is read since session 48: its line 5 is a
		// c_nvmlMemory_t printout, TestU48bPynvmlStructPrintouts.)
		// nvmlInit failed: nothing was sampled, and the reason is the
		// driver (gpustat#110).
		{"pynvml_driver_not_loaded.txt",
			[]string{`line 10 is pynvml's error "pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded"`, "could not start NVML", "sampled nothing"},
			[]string{"one query"}},
		// Alone in the file: the tool's error in place of its output
		// (NVlabs/imaginaire#56's line, pynvml 11's pynvml.nvml module).
		{"pynvml_library_not_found.txt",
			[]string{`:1: pynvml's error, not its output`, "could not start NVML", "sampled nothing"},
			[]string{"one query"}},
	}
	for _, c := range cases {
		code, _, errOut := run(t, nil, "analyze", dir+c.file)
		if code != ExitInput {
			t.Errorf("%s: exit %d, want %d", c.file, code, ExitInput)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q\nlacks %q", c.file, errOut, w)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q\nsays %q", c.file, errOut, w)
			}
		}
	}
}

// A gpu.csv written by a "date -Iseconds; nvidia-smi --query-gpu=...
// --format=csv,noheader" loop: the date line, then header-less rows.
// With --fields naming the columns the rows are read (GPU 0 at 12000 MiB,
// GPU 1 at 13000 of 40960), at the date line's time, 2026-09-16 16:00:00
// UTC (session 48: was skipped with a warning, the rows at the epoch by
// row order). Was "unrecognised input format" even with --fields.
func TestFieldsAfterDateLine(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "--format", "json", "--fields", "index,memory.used,memory.total,utilization.gpu", td+"nvml_fields/envfactory_date_noheader.csv")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, w := range []string{`"format": "nvidia-smi-query-gpu"`, `"rows": 2`, `"start_us": 1789574400000000`, `"clock": "absolute"`} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%.1500s", w, out)
		}
	}
}

// Excerpts of nvidia-smi -q's text cut before their "GPU 00000000:..."
// line: which GPU the figures are of is not in them (nor, for
// nvidia-docker#1547, which memory "Used : 19147 MiB" is: its FB Memory
// Usage title is cut off too). They stay unread, but the error says what
// they are and what to give, as for -q -x excerpts; was the generic
// "unrecognised input format".
func TestQTextExcerptSaysWhatItIs(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"nvidiadocker1547_q_cut_in_fb.txt", `:1: part of an nvidia-smi -q report ("Used : 19147 MiB") cut before its "GPU 00000000:..." line, which says which GPU its figures are of, and before the "FB Memory Usage" title`},
		{"gputil38_q_cut_in_processes.txt", `:13: part of an nvidia-smi -q report ("Process ID : 1628") cut before its "GPU 00000000:..." line`},
	} {
		for _, cmd := range []string{"analyze", "trend"} {
			code, _, errOut := run(t, nil, cmd, td+"nvml_excerpts/"+c.file)
			if code != ExitInput || !strings.Contains(errOut, c.file+c.want) || !strings.Contains(errOut, "GPU 00000000:") || !strings.Contains(errOut, "nvidia-smi -q") {
				t.Errorf("%s %s: exit %d, stderr %q\nwant %q", cmd, c.file, code, errOut, c.want)
			}
		}
	}
}

// A training log that prints its config as aligned "Key : value" lines
// is no -q excerpt: with --fail-on oom it is read as a log without an OOM
// (exit 0), as before -q excerpts were named, not refused as one.
func TestAlignedConfigIsNoQExcerpt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "train.log")
	log := "Training config\n    Batch size          : 32\n    Learning rate       : 0.001\n    Epochs              : 10\nepoch 1 loss 0.5\n"
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, nil, "analyze", "--fail-on", "oom", p)
	if code != ExitOK || strings.Contains(errOut, "nvidia-smi -q") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// A single process's finding from one sample (pmon's tick here) advises
// a log of processes over time, --query-compute-apps; --query-gpu, the
// advice before, logs no process. A GPU's finding keeps --query-gpu.
func TestUndeterminedProcessAdvice(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", td+"nvml/pub_sonar_pmon_two_headers.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "undetermined: pid ") {
			continue
		}
		if !strings.Contains(l, "--query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory") || strings.Contains(l, "--query-gpu") {
			t.Errorf("process finding: %q", l)
		}
	}
	code, out, _ = run(t, nil, "analyze", td+"nvml/pub_gpustat95_cut_row.txt")
	if code != ExitOK || !strings.Contains(out, "undetermined: GPU 1 of fishtank") || !strings.Contains(out, "--query-gpu=timestamp,index,memory.used,memory.total") {
		t.Errorf("GPU finding: exit %d, %s", code, out)
	}
}

// gpustat#97's one line: GPU 0 at 11848 of 12287 MiB, python (pid 52046)
// at 11821 MiB. The GPU reads "11.6 GiB of 12.0 GiB" (11848/1024 = 11.57);
// the process read "12 GiB", larger than its GPU's figure, by rounding
// 11821/1024 = 11.54 to two digits. Now with the decimal: "11.5 GiB".
func TestProcessBytesNotRoundedAboveGPU(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", td+"nvml/pub_gpustat97_line.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "GPU 0 (GeForce GTX Titan X): 11.6 GiB of 12.0 GiB used") || !strings.Contains(out, "pid 52046 (python) on GPU 0: 11.5 GiB used") {
		t.Errorf("output:\n%s", out)
	}
}
