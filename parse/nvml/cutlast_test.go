package nvml

import (
	"slices"
	"strings"
	"testing"
)

// The input's last line, without a line ending, whose last value reads as
// cut short is skipped and the log read in part, as any cut row: a number
// cut there is as whole as any ("4" of "4898 MiB", "40" of "40000"), and
// read as a sample it made a process "give back" its memory at the end
// (the session-42 tester's apps_cut_num.csv, dcgm_cut.txt). Told by the
// unit the rows before it end in, where the log gives one; else by fewer
// digits than the same series' value before it. A whole last line
// without a line ending (a paste) is read.
func TestCutLastLine(t *testing.T) {
	const apps = "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n" +
		"2026/11/30 08:07:19.635, GPU-f7fe, 538, python3, 4898 MiB\n" +
		"2026/11/30 08:07:19.885, GPU-f7fe, 538, python3, 4898 MiB\n"
	const nounits = "timestamp, index, memory.used [MiB]\n" +
		"2026/11/30 08:07:19.635, 0, 40000\n" +
		"2026/11/30 08:07:19.635, 1, 3\n" +
		"2026/11/30 08:07:19.885, 0, 40000\n"
	const dcgm = "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\"} 40000\n" +
		"DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-2\"} 3\n" +
		"DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\"} 40000\n"
	const dcgmTS = "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 40000 1764489600000\n" +
		"DCGM_FI_DEV_FB_USED{gpu=\"0\"} 40000 1764489630000\n"
	for _, c := range []struct {
		name, in string
		rows     int
		why      string // "": read whole, nothing skipped
	}{
		{"csv unit missing", apps + "2026/11/30 08:07:20.136, GPU-f7fe, 538, [No data], 4", 2, `used_gpu_memory "4" lacks the unit`},
		{"csv unit present", apps + "2026/11/30 08:07:20.136, GPU-f7fe, 538, python3, 4898 MiB", 3, ""},
		// A real release at the end, the whole row: its unit is there.
		{"csv whole release", apps + "2026/11/30 08:07:20.136, GPU-f7fe, 538, python3, 4 MiB", 3, ""},
		{"csv placeholder", apps + "2026/11/30 08:07:20.136, GPU-f7fe, 538, python3, [N/A]", 3, ""},
		{"nounits fewer digits", nounits + "2026/11/30 08:07:19.885, 1, 3\n2026/11/30 08:07:20.136, 0, 40", 4, `memory.used "40" has fewer digits than the same series' value before it (40000)`},
		// GPU 1's 3 MiB after GPU 0's 40000: another series, read.
		{"nounits other series", nounits + "2026/11/30 08:07:19.885, 1, 3", 4, ""},
		{"nounits as many digits", nounits + "2026/11/30 08:07:19.885, 1, 3\n2026/11/30 08:07:20.136, 0, 39999", 5, ""},
		{"nounits first of its series", nounits + "2026/11/30 08:07:19.885, 2, 4", 4, ""},
		// GPUs named by UUID alone (no index): GPU-b's whole 300 after
		// GPU-a's 40000 is another series, read (the review of session
		// 42: the series was told by index and pid only, and it was
		// dropped as cut).
		{"nounits by uuid other series", "timestamp, uuid, memory.used [MiB]\n2026/11/30 08:07:19.635, GPU-a, 40000\n2026/11/30 08:07:19.635, GPU-b, 300\n2026/11/30 08:07:19.885, GPU-a, 40000\n2026/11/30 08:07:19.885, GPU-b, 300", 4, ""},
		// A fleet log's hosts are series of their own; a host's last
		// line cut inside its number is skipped as in a plain log (its
		// rows took the fast path, which did not check).
		{"fleet cut", "node01: timestamp, index, memory.used [MiB]\nnode02: timestamp, index, memory.used [MiB]\nnode01: 2024/05/01 10:00:00.101, 0, 40000\nnode02: 2024/05/01 10:00:00.250, 0, 300\nnode01: 2024/05/01 10:00:01.101, 0, 40", 2, `memory.used "40" has fewer digits than the same series' value before it (40000)`},
		{"fleet other host", "node01: timestamp, index, memory.used [MiB]\nnode02: timestamp, index, memory.used [MiB]\nnode01: 2024/05/01 10:00:00.101, 0, 40000\nnode02: 2024/05/01 10:00:00.250, 0, 300\nnode01: 2024/05/01 10:00:01.101, 0, 40000\nnode02: 2024/05/01 10:00:01.250, 0, 300", 4, ""},
		{"nounits by uuid cut", "timestamp, uuid, memory.used [MiB]\n2026/11/30 08:07:19.635, GPU-a, 40000\n2026/11/30 08:07:19.635, GPU-b, 300\n2026/11/30 08:07:19.885, GPU-a, 400", 2, `memory.used "400" has fewer digits than the same series' value before it (40000)`},
		{"nounits line ending", nounits + "2026/11/30 08:07:19.885, 1, 3\n2026/11/30 08:07:20.136, 0, 40\n", 5, ""},
		{"dcgm fewer digits", dcgm + "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-2\"} 3\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\"} 40", 4, `value "40" has fewer digits than the same series' value before it (40000)`},
		{"dcgm whole", dcgm + "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-2\"} 3", 4, ""},
		{"dcgm line ending", dcgm + "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-2\"} 3\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\"} 40\n", 5, ""},
		{"dcgm timestamp cut", dcgmTS + "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 40000 17644", 2, `timestamp "17644" has fewer digits than the one before it (13)`},
		{"dcgm timestamp whole", dcgmTS + "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 40 1764489660000", 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, meta, err := readRows(t, "in", c.in)
			if err != nil {
				t.Fatal(err)
			}
			ws := strings.Join(meta.Warnings.Strings(), "\n")
			if len(rows) != c.rows {
				t.Errorf("%d rows, want %d; warnings %q", len(rows), c.rows, ws)
			}
			lines := strings.Count(c.in, "\n") + 1
			if c.why == "" {
				if meta.SkippedLines != 0 || strings.Contains(ws, "read in part") {
					t.Errorf("%d lines skipped, warnings %q: want the log read whole", meta.SkippedLines, ws)
				}
				return
			}
			if meta.SkippedLines != 1 || !slices.Equal(meta.SkippedAt, []int{lines}) || !strings.Contains(ws, "read in part") || !strings.Contains(ws, c.why) {
				t.Errorf("%d lines skipped at %v, warnings %q: want line %d read in part: %q", meta.SkippedLines, meta.SkippedAt, ws, lines, c.why)
			}
		})
	}
}

// The session-42 tester's cut logs (testdata/README.md): query_apps.csv
// cut in its last value ("4" of "4898 MiB") and a DCGM scrape cut in its
// last ("40" of "40000"), neither with a line ending.
func TestSession42CutLast(t *testing.T) {
	for _, c := range []struct {
		file       string
		rows, line int
	}{
		{"s42_apps_cut_num.csv", 185, 187},
		{"s42_dcgm_cut.txt", 39, 159},
	} {
		rows, meta := readFile(t, fixtures+c.file)
		if len(rows) != c.rows || meta.SkippedLines != 1 || !slices.Equal(meta.SkippedAt, []int{c.line}) {
			t.Errorf("%s: %d rows, %d lines skipped at %v; want %d rows, line %d skipped", c.file, len(rows), meta.SkippedLines, meta.SkippedAt, c.rows, c.line)
		}
		for _, r := range rows {
			if r.Used != nil && *r.Used < 100*MiB && (r.PID == nil || *r.PID == 538) {
				t.Errorf("%s: a sample of %d bytes at %d: the cut value read", c.file, *r.Used, r.TimeUs)
			}
		}
	}
}

// The cut-last-line rule for nvidia-smi dmon and pmon and dcgmi dmon. dmon
// and pmon print fixed columns: every whole row ends at one place, so a
// last row that ends before it stopped inside its last column, and one
// that ends there is whole whatever its value. dcgmi aligns to the left
// and pads nothing after its last column: the digits are the evidence,
// as for the DCGM exporter. The headers and rows are those of the real
// logs in testdata (leak_exit_pmon_m_TD.txt, field/agihpc_dcgmi_dmon_
// rtx2080ti.txt, dmon_mu.txt); the values and cuts are made up. Was: every
// cut last row read, its prefix a sample ("40" MiB, a process "pyt").
func TestCutLastLineMon(t *testing.T) {
	const pmon = "#Date        Time         gpu         pid   type     fb   ccpm    command \n" +
		"#YYYYMMDD    HH:MM:SS     Idx           #    C/G     MB     MB    name \n" +
		" 20261201    02:00:47       0        878     C    868      0    python3        \n" +
		" 20261201    02:00:48       0        878     C   1124      0    python3        \n"
	const pmonLast = " 20261201    02:00:49       0        878     C   1380      0    python3        "
	// dmon -s m pads after ccpm with one space; fb is never last in
	// nvidia-smi's own columns. A header with fb last (a log cut to its
	// columns with awk or cut -c) is synthetic.
	const dmonM = "# gpu     fb   bar1   ccpm \n# Idx     MB     MB     MB \n    0  40000      1     10 \n    0  40000      1     10 \n"
	const dmonFB = "# gpu     fb \n# Idx     MB \n    0  40000 \n    0  40000 \n"
	const collapsed = "# gpu fb\n# Idx MB\n0 40000\n0 400\n"
	const dcgmi = "#Entity   GPUTL             FBUSD\nID\nGPU 0     0                 40000\nGPU 1     0                 3\nGPU 0     0                 40000\n"
	for _, c := range []struct {
		name, in string
		rows     int
		why      string // "": read whole, nothing skipped
	}{
		{"pmon whole", pmon + pmonLast, 3, ""},
		// Cut inside the command: its name would read "pyt".
		{"pmon cut in command", pmon + pmonLast[:len(pmonLast)-13], 2, "ends at byte 66 of the line, before byte 79"},
		// ccpm "1" of "10": a column gpuleak does not read; fb is whole.
		{"dmon -s m cut in ccpm", dmonM + "    0  40000      1     1", 3, ""},
		{"dmon fb last cut", dmonFB + "    0  40", 2, `fb "40" ends at byte 9 of the line, before byte 12`},
		// A release to 3 MiB, right-aligned: whole, though of fewer digits.
		{"dmon fb last release", dmonFB + "    0      3", 3, ""},
		{"dmon fb last no pad", dmonFB + "    0  39999", 3, ""},
		{"dmon collapsed fewer digits", collapsed + "0 40", 2, `fb "40" has fewer digits than the same series' value before it (400)`},
		{"dmon collapsed as many", collapsed + "0 399", 3, ""},
		{"dcgmi fewer digits", dcgmi + "GPU 1     0                 3\nGPU 0     0                 40", 4, `FBUSD "40" has fewer digits than the same GPU's value before it (40000)`},
		{"dcgmi other GPU", dcgmi + "GPU 1     0                 3", 4, ""},
		{"dcgmi as many", dcgmi + "GPU 1     0                 3\nGPU 0     0                 39999", 5, ""},
		{"dcgmi line ending", dcgmi + "GPU 1     0                 3\nGPU 0     0                 40\n", 5, ""},
		{"dcgmi last column not read", "#Entity   FBUSD             GPUTL\nID\nGPU 0     40000             100\nGPU 0     40000             1", 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, meta, err := readRows(t, "in", c.in)
			if err != nil {
				t.Fatal(err)
			}
			ws := strings.Join(meta.Warnings.Strings(), "\n")
			if len(rows) != c.rows {
				t.Errorf("%d rows, want %d; warnings %.200q", len(rows), c.rows, ws)
			}
			if c.why != "" && len(rows) > 0 {
				if r := rows[len(rows)-1]; r.Process == "pyt" || r.Used != nil && *r.Used == 40*MiB {
					t.Errorf("last sample %d bytes, process %q: the cut value read", *r.Used, r.Process)
				}
			}
			lines := strings.Count(c.in, "\n") + 1
			if c.why == "" {
				if meta.SkippedLines != 0 || strings.Contains(ws, "read in part") {
					t.Errorf("%d lines skipped, warnings %.200q: want the log read whole", meta.SkippedLines, ws)
				}
				return
			}
			if meta.SkippedLines != 1 || !slices.Equal(meta.SkippedAt, []int{lines}) || !strings.Contains(ws, "read in part") || !strings.Contains(ws, c.why) {
				t.Errorf("%d lines skipped at %v, warnings %.200q: want line %d read in part: %q", meta.SkippedLines, meta.SkippedAt, ws, lines, c.why)
			}
		})
	}
}
