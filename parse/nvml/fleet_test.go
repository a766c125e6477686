package nvml

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// usedOf returns, in row order, host's rows of GPU gpu as "time used".
func usedOf(rows []row, host string, gpu int32) []string {
	var out []string
	for _, r := range rows {
		if r.Host == host && r.GPU != nil && *r.GPU == gpu && r.Used != nil {
			out = append(out, time.UnixMicro(r.TimeUs).UTC().Format("15:04:05.000")+" "+strconv.FormatInt(*r.Used/MiB, 10))
		}
	}
	return out
}

func hasWarning(meta *Metadata, parts ...string) bool {
	for _, w := range meta.Warnings.Strings() {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(w, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// pdsh prefixes every line with its host, the lines of several hosts
// interleaved as they arrive. Each host's rows carry its name, so that
// GPU 0 of node01 and GPU 0 of node02 are told apart; each host's rows are
// placed in its own sequence whatever lines of others fall between them;
// a host pdsh reports failed is named in a warning. The expected values
// are the file's own (testdata/README.md): node01's GPU 0 grows 1000 MiB a
// second from 1000 MiB, node02's stays at 5000 MiB; node03 never answers.
func TestFleetPdsh(t *testing.T) {
	path := "../../testdata/nvml/fleet_pdsh_query_gpu.txt"
	for _, general := range []bool{false, true} {
		var opts []Option
		if general {
			opts = append(opts, func(o *options) { o.general = true })
		}
		rows, meta := readFile(t, path, opts...)
		if meta.Format != FormatQueryGPU || len(rows) != 16 {
			t.Fatalf("general %v: %s, %d rows; want %s, 16", general, meta.Format, len(rows), FormatQueryGPU)
		}
		if got, want := usedOf(rows, "node01", 0), []string{"10:00:00.101 1000", "10:00:01.101 2000", "10:00:02.101 3000", "10:00:03.101 4000"}; !slices.Equal(got, want) {
			t.Errorf("general %v: node01 GPU 0: %q, want %q", general, got, want)
		}
		if got, want := usedOf(rows, "node02", 0), []string{"10:00:00.250 5000", "10:00:01.250 5000", "10:00:02.250 5000", "10:00:03.250 5000"}; !slices.Equal(got, want) {
			t.Errorf("general %v: node02 GPU 0: %q, want %q", general, got, want)
		}
		for _, r := range rows {
			if r.Host != "node01" && r.Host != "node02" {
				t.Fatalf("general %v: a row of host %q", general, r.Host)
			}
		}
		// Four ticks of each host: four instants, not one per change of host.
		if meta.Instants != 4 {
			t.Errorf("general %v: %d instants, want 4", general, meta.Instants)
		}
		// Line 6 (node03's ssh error) and line 8 (pdsh's report) skipped,
		// no row read in part.
		if meta.Skipped != 2 || meta.SkippedLines != 0 {
			t.Errorf("general %v: %d skipped, %d lines read in part; want 2, 0", general, meta.Skipped, meta.SkippedLines)
		}
		if !hasWarning(meta, "line 8:", "host node03 failed", "ssh exited with exit code 255", "no sample of node03") {
			t.Errorf("general %v: no warning names node03's failure: %q", general, meta.Warnings.Strings())
		}
		if !hasWarning(meta, "line 6:", "host node03 printed", "ssh: connect to host") {
			t.Errorf("general %v: no warning names node03's ssh error: %q", general, meta.Warnings.Strings())
		}
	}
}

// Hosts' clocks differ: node01's runs 5 s ahead of node02's, and their
// lines interleave. Each host's rows keep their own order, so no "time
// goes back" is said; the same rows in one host's log would say it.
func TestFleetClocksApart(t *testing.T) {
	in := "node01: 2024/05/01 10:00:05.000, 0, 100 MiB\n" +
		"node02: 2024/05/01 10:00:00.000, 0, 200 MiB\n" +
		"node01: 2024/05/01 10:00:06.000, 0, 110 MiB\n" +
		"node02: 2024/05/01 10:00:01.000, 0, 210 MiB\n"
	rows, meta, err := readRows(t, "fleet.txt", in, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := usedOf(rows, "node02", 0), []string{"10:00:00.000 200", "10:00:01.000 210"}; !slices.Equal(got, want) {
		t.Errorf("node02: %q, want %q", got, want)
	}
	if hasWarning(meta, "time goes back") || meta.Instants != 2 {
		t.Errorf("warnings %q, %d instants; want no time going back, 2", meta.Warnings.Strings(), meta.Instants)
	}
	// The same rows without their hosts: one log whose time goes back.
	plain := strings.NewReplacer("node01: ", "", "node02: ", "").Replace(in)
	_, meta, err = readRows(t, "plain.csv", plain, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil || !hasWarning(meta, "time goes back") {
		t.Errorf("plain: %v, %q; want a warning that time goes back", err, meta.Warnings.Strings())
	}
}

// A line without the prefix among prefixed ones is skipped with a
// warning: whose it is cannot be known.
func TestFleetStrayLine(t *testing.T) {
	in := "node01: 2024/05/01 10:00:00.000, 0, 100 MiB\n" +
		"Killed by signal 1.\n" +
		"node01: 2024/05/01 10:00:01.000, 0, 110 MiB\n"
	rows, meta, err := readRows(t, "fleet.txt", in, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || meta.Skipped != 1 || !hasWarning(meta, "line 2:", "1 lines without a host prefix", "Killed by signal 1.") {
		t.Errorf("%d rows, %d skipped, warnings %q; want 2, 1, one naming line 2", len(rows), meta.Skipped, meta.Warnings.Strings())
	}
}

// clush -b prints a host's standard error at once, its own report of a
// failed node set after the gathered output (ClusterShell's Clush.py).
func TestFleetClushStderr(t *testing.T) {
	in := "node05: ssh: connect to host node05 port 22: Connection timed out\n" +
		"---------------\nnode01\n---------------\n" +
		"2024/05/01 10:00:00.000, 0, 100 MiB\n" +
		"clush: node[05-06] (2): exited with exit code 255\n"
	rows, meta, err := readRows(t, "clush.txt", in, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !hasWarning(meta, "line 1:", "host node05 printed") || !hasWarning(meta, "line 6:", "host node[05-06] failed", "exit code 255") {
		t.Errorf("%d rows, warnings %q; want 1 row, node05's message and node[05-06]'s failure named", len(rows), meta.Warnings.Strings())
	}
}

// clush -b gathers each host's output under a header; a node set's
// header ("node[03-04] (2)") stands for hosts that printed the same.
func TestFleetClushGathered(t *testing.T) {
	rows, meta := readFile(t, "../../testdata/nvml/fleet_clush_b_query_gpu.txt", WithFields([]string{"timestamp", "index", "memory.total", "memory.used"}))
	if len(rows) != 12 {
		t.Fatalf("%d rows, want 12", len(rows))
	}
	if got, want := usedOf(rows, "node01", 0), []string{"10:00:00.101 1000", "10:00:01.101 2000", "10:00:02.101 3000"}; !slices.Equal(got, want) {
		t.Errorf("node01 GPU 0: %q, want %q", got, want)
	}
	if got, want := usedOf(rows, "node02", 0), []string{"10:00:00.250 5000", "10:00:01.250 5000", "10:00:02.250 5000"}; !slices.Equal(got, want) {
		t.Errorf("node02 GPU 0: %q, want %q", got, want)
	}
	for _, h := range []string{"node03", "node04"} {
		if !hasWarning(meta, "line 22:", "host "+h+" printed", "No devices were found") {
			t.Errorf("no warning names %s: %q", h, meta.Warnings.Strings())
		}
	}
}

// parallel-ssh -i prints a line before each host's output; a host that
// failed is named, its Stderr: lines skipped.
func TestFleetPsshInline(t *testing.T) {
	rows, meta := readFile(t, "../../testdata/nvml/fleet_pssh_i_query_gpu.txt")
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	if got, want := usedOf(rows, "node01", 0), []string{"10:00:00.101 1000", "10:00:01.101 2000", "10:00:02.101 3000"}; !slices.Equal(got, want) {
		t.Errorf("node01 GPU 0: %q, want %q", got, want)
	}
	if got := usedOf(rows, "node02", 0); len(got) != 3 {
		t.Errorf("node02 GPU 0: %q, want 3 rows", got)
	}
	if !hasWarning(meta, "line 11:", "host node03 failed", "parallel-ssh", "Exited with error code 255") || meta.Skipped != 2 {
		t.Errorf("%d skipped, warnings %q; want 2 (the FAILURE line and its Stderr: line), node03 named", meta.Skipped, meta.Warnings.Strings())
	}
}

// ansible -a: "host | CHANGED | rc=0 >>" before each host's output; an
// unreachable host's JSON report is skipped, the host named.
func TestFleetAnsible(t *testing.T) {
	in := "node01 | CHANGED | rc=0 >>\n" +
		"2024/05/01 10:00:00.000, 0, 100 MiB\n" +
		"2024/05/01 10:00:01.000, 0, 110 MiB\n" +
		"node02 | UNREACHABLE! => {\n" +
		"    \"changed\": false,\n" +
		"    \"msg\": \"Failed to connect to the host via ssh: ssh: connect to host node02 port 22: No route to host\",\n" +
		"    \"unreachable\": true\n" +
		"}\n" +
		"node03 | CHANGED | rc=0 >>\n" +
		"2024/05/01 10:00:00.500, 0, 300 MiB\n"
	rows, meta, err := readRows(t, "ansible.txt", in, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(usedOf(rows, "node01", 0)) != 2 || len(usedOf(rows, "node03", 0)) != 1 || len(rows) != 3 {
		t.Errorf("rows %+v; want 2 of node01, 1 of node03", rows)
	}
	if !hasWarning(meta, "line 4:", "host node02 failed", "unreachable") {
		t.Errorf("warnings %q; want node02 named", meta.Warnings.Strings())
	}
}

// clush -b -L puts a node set before lines several hosts printed alike:
// each host gets the row. --query-compute-apps rows keep their pid.
func TestFleetNodesetPrefixApps(t *testing.T) {
	in := "node[01-02]: 2024/05/01 10:00:00.000, GPU-aaaa, 4242, python, 100 MiB\n" +
		"node03: 2024/05/01 10:00:00.000, GPU-bbbb, 77, python, 300 MiB\n"
	rows, meta, err := readRows(t, "apps.txt", in)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Format != FormatQueryApps || len(rows) != 3 {
		t.Fatalf("%s, %d rows; want %s, 3", meta.Format, len(rows), FormatQueryApps)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Host+" "+strconv.FormatInt(*r.PID, 10))
	}
	if want := []string{"node01 4242", "node02 4242", "node03 77"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// Logs that are not a fleet's stay as they were read: a plain CSV, a
// line of dashes before it (no clush -b header without its node set), a
// CSV with a header.
func TestFleetNotAFleet(t *testing.T) {
	for _, in := range []string{
		"timestamp, index, memory.used [MiB]\n2024/05/01 10:00:00.000, 0, 100 MiB\n",
		"----------------------\ntimestamp, index, memory.used [MiB]\n2024/05/01 10:00:00.000, 0, 100 MiB\n",
		"2024/05/01 10:00:00.000, 0, GPU-1, NVIDIA H200, 143771 MiB, 100 MiB, 143000 MiB\n",
	} {
		if mode, _ := detectFleet([]byte(in), false); mode != fleetNone {
			t.Errorf("%q read as a fleet log (%d)", in, mode)
		}
	}
	if got := Sniff([]byte("node01: timestamp, index, memory.used [MiB]\n")); got != FormatQueryGPU {
		t.Errorf("Sniff of a pdsh log: %s", got)
	}
}

func TestPsshHost(t *testing.T) {
	for in, want := range map[string]string{"node01": "node01", "root@node01:2222": "node01", "10.0.0.1:22": "10.0.0.1", "u@h": "h"} {
		if got := psshHost(in); got != want {
			t.Errorf("psshHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandNodeset(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"node01", []string{"node01"}},
		{"node[01-03,07]", []string{"node01", "node02", "node03", "node07"}},
		{"gpu1,gpu3", []string{"gpu1", "gpu3"}},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"node[9-11]", []string{"node9", "node10", "node11"}},
		{"a[1-2],b", []string{"a1", "a2", "b"}},
		{"node[3-1]", []string{"node[3-1]"}},           // not a range: the name as written
		{"node[1-999999]", []string{"node[1-999999]"}}, // more than maxFleetHosts
		{"10.0.0.1", []string{"10.0.0.1"}},
	} {
		if got := expandNodeset(c.in); !slices.Equal(got, c.want) {
			t.Errorf("expandNodeset(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A prompt running pdsh before its output is a prompt line: the output
// after it is read as a fleet's.
func TestFleetAfterPrompt(t *testing.T) {
	in := "user@login:~$ pdsh -w node[01-02] nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader -l 1\n" +
		"node01: 2024/05/01 10:00:00.000, 0, 100 MiB\n" +
		"node02: 2024/05/01 10:00:00.000, 0, 900 MiB\n" +
		"node01: 2024/05/01 10:00:01.000, 0, 200 MiB\n"
	rows, meta, err := readRows(t, "paste.txt", in, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(usedOf(rows, "node01", 0)) != 2 || len(usedOf(rows, "node02", 0)) != 1 || meta.Skipped != 0 {
		t.Errorf("rows %+v, %d skipped; want 2 of node01, 1 of node02, none skipped", rows, meta.Skipped)
	}
}

// A paste of one host's output, then a fleet's: the instants of both
// count (the fleet's hosts go on from the first output's), not the
// fleet's alone.
func TestFleetAfterPlainOutput(t *testing.T) {
	in := "$ nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader\n" +
		"2024/05/01 09:00:00.000, 0, 10 MiB\n" +
		"2024/05/01 09:00:01.000, 0, 10 MiB\n" +
		"$ pdsh -w node[01-02] nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader\n" +
		"node01: 2024/05/01 10:00:00.000, 0, 100 MiB\n" +
		"node02: 2024/05/01 10:00:00.000, 0, 900 MiB\n"
	rows, meta, err := readRows(t, "paste.txt", in, WithFields([]string{"timestamp", "index", "memory.used"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Host != "" || rows[2].Host != "node01" || rows[3].Host != "node02" || meta.Instants != 3 {
		t.Errorf("rows %+v, %d instants; want 4 rows (2 without a host, node01, node02), 3 instants", rows, meta.Instants)
	}
}

func TestHostPrefix(t *testing.T) {
	for _, c := range []struct{ in, host, rest string }{
		{"node01: 2024/05/01 10:00:00.000, 0, 1 MiB", "node01", "2024/05/01 10:00:00.000, 0, 1 MiB"},
		{"node[01-02]: x", "node[01-02]", "x"},
		{"10.0.0.1: x", "10.0.0.1", "x"},
		{"gpu-a_1.example.org: x", "gpu-a_1.example.org", "x"},
		{"node01:", "node01", ""},
	} {
		host, rest, ok := hostPrefix([]byte(c.in))
		if !ok || string(host) != c.host || string(rest) != c.rest {
			t.Errorf("hostPrefix(%q) = %q, %q, %v; want %q, %q", c.in, host, rest, ok, c.host, c.rest)
		}
	}
	for _, in := range []string{"2024/05/01 10:00:00.000, 0, 1 MiB", "node01:x", "pdsh@login: node03: ssh exited with exit code 255",
		"-a: x", "timestamp, index, memory.used [MiB]", "2024-05-01T10:00:00.000, 0", "[1] 10:00:00 [SUCCESS] node01", ""} {
		if _, _, ok := hostPrefix([]byte(in)); ok {
			t.Errorf("hostPrefix(%q) found a host", in)
		}
	}
}

// A command stopped by a timeout fails, its samples until then printed
// all the same: parallel-ssh's [FAILURE] block and ansible's FAILED
// block with rc=124 (timeout's) are read, the host named as failed.
func TestFleetFailedWithOutput(t *testing.T) {
	fields := WithFields([]string{"timestamp", "index", "memory.used"})
	for name, in := range map[string]string{
		"pssh": "[1] 10:00:10 [FAILURE] node01 Timed out, Killed by signal 9\n" +
			"2024/05/01 10:00:00.000, 0, 100 MiB\n2024/05/01 10:00:01.000, 0, 200 MiB\n" +
			"Stderr: Killed by signal 9.\n",
		"ansible": "node01 | FAILED | rc=124 >>\n" +
			"2024/05/01 10:00:00.000, 0, 100 MiB\n2024/05/01 10:00:01.000, 0, 200 MiB\nnon-zero return code\n",
	} {
		rows, meta, err := readRows(t, name, in, fields)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := usedOf(rows, "node01", 0); len(got) != 2 || !hasWarning(meta, "line 1:", "host node01 failed", "its output after this line is read") {
			t.Errorf("%s: rows %q, warnings %q; want 2 rows, node01 named as failed", name, got, meta.Warnings.Strings())
		}
	}
}

// dshbak -c's header (16 dashes, the node set without a count) and a
// header on one line are read as clush -b's.
func TestFleetOtherHeaders(t *testing.T) {
	fields := WithFields([]string{"timestamp", "index", "memory.used"})
	for name, in := range map[string]string{
		"dshbak":   "----------------\nnode[01-02]\n----------------\n2024/05/01 10:00:00.000, 0, 100 MiB\n",
		"one line": "---------------- node[01-02] ----------------\n2024/05/01 10:00:00.000, 0, 100 MiB\n",
	} {
		rows, _, err := readRows(t, name, in, fields)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(usedOf(rows, "node01", 0)) != 1 || len(usedOf(rows, "node02", 0)) != 1 || len(rows) != 2 {
			t.Errorf("%s: rows %+v; want one of node01, one of node02", name, rows)
		}
	}
}
