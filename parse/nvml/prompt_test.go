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
	return t == "" && (len(b) >= 2 || string(b) == ".")
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

// A user's paste (testdata/README.md: a10g_query_continued_then_pmon_no_fb.txt):
// "nvidia smi -L" (a typo), "nvidia-smi -L", a --query-gpu command split
// over three lines with "\", its CSV (GPU 0, A10G: 22403 of 23028 MiB
// used, 215 free), then "nvidia-smi pmon -c 1", whose columns have no fb
// (its mem is a percentage). The CSV is one sample; the pmon output, with
// no memory figure, is skipped with a warning, not the end of the input.
func TestPasteContinuedCommandThenPmonWithoutFB(t *testing.T) {
	rows, meta := readFile(t, tdata+"field/a10g_query_continued_then_pmon_no_fb.txt")
	if meta.Format != FormatQueryGPU || len(rows) != 1 {
		t.Fatalf("%s, %d rows", meta.Format, len(rows))
	}
	r := rows[0]
	if *r.GPU != 0 || r.GPUName != "NVIDIA A10G" || *r.Used != 22403*MiB || *r.Total != 23028*MiB || *r.Free != 215*MiB {
		t.Errorf("row %+v", r)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "line 11: the pmon log has no fb column") || !strings.Contains(w, "skipped") || strings.Contains(w, "read too") {
		t.Errorf("warnings %q", w)
	}
}

func TestPasteOutputsWithoutMemory(t *testing.T) {
	// The continuation lines of a command are not its output.
	rows, _, err := readRows(t, "cont.txt", "$ nvidia-smi \\\n  --query-gpu=index,memory.used \\\n  --format=csv\nindex, memory.used [MiB]\n0, 5 MiB\n")
	if err != nil || len(rows) != 1 || *rows[0].Used != 5*MiB {
		t.Errorf("continued command: %v, %+v", err, rows)
	}
	// A --query-gpu CSV without memory.used first, then one with it.
	rows, meta, err := readRows(t, "q.txt", "$ nvidia-smi --query-gpu=index,name --format=csv\nindex, name\n0, A10G\n"+
		"$ nvidia-smi --query-gpu=index,memory.used --format=csv\nindex, memory.used [MiB]\n0, 7 MiB\n")
	if err != nil || len(rows) != 1 || *rows[0].Used != 7*MiB || meta.Format != FormatQueryGPU {
		t.Errorf("CSV without memory.used first: %v, %s, %+v", err, meta.Format, rows)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 2: the log has no memory.used column") {
		t.Errorf("warnings %q", w)
	}
	// A pmon output without fb first, then dmon with it: the input is the dmon log.
	rows, meta, err = readRows(t, "p.txt", "$ nvidia-smi pmon -c 1\n# gpu pid type sm mem command\n# Idx # C/G % % name\n 0 7 C - - python\n"+
		"$ nvidia-smi dmon -s m -c 1\n# gpu fb bar1\n# Idx MB MB\n 0 300 2\n")
	if err != nil || len(rows) != 1 || *rows[0].Used != 300*MiB || meta.Format != FormatDmon {
		t.Errorf("pmon without fb first: %v, %s, %+v", err, meta.Format, rows)
	}
	// Only outputs without a memory figure: the input's error says why.
	_, _, err = readRows(t, "only.txt", "$ nvidia-smi pmon -c 1\n# gpu pid type sm mem command\n# Idx # C/G % % name\n 0 7 C - - python\n")
	if err == nil || !strings.Contains(err.Error(), "only.txt:2: the pmon log has no fb column") {
		t.Errorf("only pmon without fb: %v", err)
	}
	// Not a paste: the same output alone is an error, as before.
	_, _, err = readRows(t, "alone.txt", "# gpu pid type sm mem command\n# Idx # C/G % % name\n 0 7 C - - python\n")
	if err == nil || !strings.Contains(err.Error(), "alone.txt:1: the pmon log has no fb column") {
		t.Errorf("pmon without fb alone: %v", err)
	}
}
