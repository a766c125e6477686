package nvml

import (
	"os"
	"strings"
	"testing"
)

// Pastes with the commands that made them, built from the H200
// recording's outputs (testdata/README.md): a prompt before dmon; dmon
// stopped with ^C, then nvidia-smi's table after its own prompt; an
// output in no layout first.
func TestPrompts(t *testing.T) {
	dmon, _ := os.ReadFile(tdata + "leak_exit_dmon_mu_TD.txt")
	table, _ := os.ReadFile(tdata + "leak_exit_nvidia_smi_default.txt")
	dmonHead := strings.Join(strings.SplitAfter(string(dmon), "\n")[:7], "") // the header pair and 5 rows

	rows, meta, err := readRows(t, "p.txt", "user@gpu01:~/train$ nvidia-smi dmon -s mu -o TD\n"+string(dmon))
	if err != nil || meta.Format != FormatDmon || len(rows) != 43 {
		t.Errorf("prompt then dmon: %v, %s, %d rows", err, meta.Format, len(rows))
	}

	rows, meta, err = readRows(t, "mix.txt", "$ nvidia-smi dmon -s mu -o TD\n"+dmonHead+"^C\n$ nvidia-smi\n"+string(table))
	if err != nil || meta.Format != FormatDmon || len(rows) != 5+2 {
		t.Fatalf("dmon then table: %v, %s, %d rows", err, meta.Format, len(rows))
	}
	if rows[0].Source != string(FormatDmon) || rows[5].Source != string(FormatNvidiaSmiText) || *rows[5].Used != 3693*MiB {
		t.Errorf("rows %+v", rows)
	}

	rows, meta, err = readRows(t, "ls.txt", "$ ls\nrun.sh  train.py\n(venv) $ nvidia-smi\n"+string(table))
	if err != nil || meta.Format != FormatNvidiaSmiText || len(rows) != 2 {
		t.Fatalf("ls then table: %v, %s, %d rows", err, meta.Format, len(rows))
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, `"$ ls" is in no layout`) {
		t.Errorf("warnings %q", w)
	}

	// Only outputs in no layout: an error, not an empty log.
	if _, _, err = readRows(t, "none.txt", "$ ls\nrun.sh\n$ cat notes\nhello\n", WithFormat(FormatNvidiaSmiText)); err == nil {
		t.Error("no layout: no error")
	}
}

// Lines of the layouts are never taken for prompts.
func TestNotPrompts(t *testing.T) {
	for _, l := range []string{
		"#Date        Time         gpu     fb   bar1   ccpm     sm    mem    enc    dec    jpg    ofa ",
		"# gpu        pid  type    fb   ccpm  command",
		"#YYYYMMDD    HH:MM:SS     Idx           #    C/G     MB     MB    name ",
		" 20261201    02:01:16       0        878     C   8292      0    python3        ",
		"|    0   N/A  N/A             878      C   python3                                3684MiB |",
		"[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB | python/52046(11821M)",
		"# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).",
		"2026/12/01 02:00:46.802, GPU-ec9f5ca2, 878, python3, 740 MiB",
	} {
		if isPromptLine([]byte(l)) {
			t.Errorf("taken for a prompt: %q", l)
		}
	}
	for _, l := range []string{"$ nvidia-smi", "user@host:~$ gpustat", "(base) lilo@bokeh:~$ nvidia-smi dmon", "PS C:\\Users\\me> nvidia-smi", "# nvidia-smi -q -d MEMORY", "$ sudo nvidia-smi"} {
		if !isPromptLine([]byte(l)) {
			t.Errorf("not taken for a prompt: %q", l)
		}
	}
}

// "..." standing for lines left out of a pasted log is skipped in any
// layout, with a warning that samples are missing: the recorded
// --query-gpu log's first 19 rows, "...", its last 20.
func TestElisionInCSV(t *testing.T) {
	data, _ := os.ReadFile(tdata + "leak_exit_query_gpu.csv")
	lines := strings.SplitAfter(string(data), "\n")
	in := strings.Join(lines[:20], "") + "...\n" + strings.Join(lines[len(lines)-21:], "")
	rows, meta, err := readRows(t, "e.csv", in)
	if err != nil || len(rows) != 39 || meta.Skipped != 1 || !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "left out") {
		t.Errorf("%v: %d rows, %d skipped, %q", err, len(rows), meta.Skipped, meta.Warnings.Strings())
	}
}

// dmon -o TD as pasted: the recorded log (trailing spaces on every line)
// with a blank line after every fifth: all 43 rows, dated.
func TestDmonTDBlankLines(t *testing.T) {
	data, _ := os.ReadFile(tdata + "leak_exit_dmon_mu_TD.txt")
	var b strings.Builder
	for i, l := range strings.SplitAfter(string(data), "\n") {
		b.WriteString(l)
		if i%5 == 4 {
			b.WriteString("\n")
		}
	}
	rows, meta, err := readRows(t, "d.txt", b.String())
	if err != nil || meta.Format != FormatDmon || meta.Clock != ClockAbsolute || len(rows) != 43 {
		t.Errorf("%v: %s %s, %d rows", err, meta.Format, meta.Clock, len(rows))
	}
}

// promptChar is a necessary condition of promptRe: no line promptRe
// matches may fail it.
var promptSamples = []string{
	"$ nvidia-smi", "user@gpu01:~/train$ nvidia-smi dmon -s mu -o TD", "(venv) $ nvidia-smi", "PS C:\\> nvidia-smi",
	"  # sudo time nvidia-smi -l 1", "[user@host dir]$ gpustat", "% python3 train.py", "(base) user@h:/x$ ls",
	"2026/11/30 08:06:12.696, 0, GPU-f7fe, NVIDIA H200, 143771 MiB, 42 %", "timestamp, index", "a,b$ nvidia-smi",
	"\t> watch -n1 nvidia-smi", "x\xff$ ls", "",
}

func TestPromptCharNecessary(t *testing.T) {
	for _, l := range promptSamples {
		if promptRe.MatchString(l) && !promptChar([]byte(l)) {
			t.Errorf("promptRe matches %q, promptChar says no", l)
		}
	}
	if !isPromptLine([]byte("(venv) $ nvidia-smi")) || isPromptLine([]byte("2026/11/30 08:06:12.696, 0, NVIDIA H200, 42 %")) {
		t.Error("isPromptLine")
	}
}

func FuzzPromptCharNecessary(f *testing.F) {
	for _, l := range promptSamples {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if promptRe.MatchString(l) && !promptChar([]byte(l)) {
			t.Fatalf("promptRe matches %q, promptChar says no", l)
		}
	})
}

// isElisionSlow is isElision without its first test.
func isElisionSlow(b []byte) bool {
	t := strings.Trim(string(b), "[]()<> ")
	if strings.EqualFold(t, "snip") || strings.EqualFold(t, "snipped") {
		return true
	}
	t = strings.Trim(t, ".…")
	return t == "" && len(b) >= 2
}

func FuzzElision(f *testing.F) {
	for _, l := range []string{"...", "…", "[...]", "<snip>", "(SNIPPED)", "[ſnip]", "..x", "2026/11/30 08:06:12.696, 0", "", ".", " ", "[]"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if got, want := isElision([]byte(l)), isElisionSlow([]byte(l)); got != want {
			t.Fatalf("isElision(%q) = %v, want %v", l, got, want)
		}
	})
}
