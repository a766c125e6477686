package nvml

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A CSV without timestamps pasted under the command that made it
// (hand-made: no such real paste was found): its "-l 5" is the period,
// so the rows are 5 s apart, not the assumed 1 s, and the log's period is
// not an assumption. Before, the rows were placed 1 s apart and
// IntervalAssumed was set, whatever the command said.
func TestIntervalFromCommand(t *testing.T) {
	const body = "memory.used [MiB], memory.total [MiB]\n1000 MiB, 24564 MiB\n1100 MiB, 24564 MiB\n1200 MiB, 24564 MiB\n"
	for _, c := range []struct {
		cmd  string
		want time.Duration
	}{
		{"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n", 5 * time.Second},
		{"user@host:~$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv --loop=10\n", 10 * time.Second},
		{"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -lms 250\n", 250 * time.Millisecond},
		{"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv --loop-ms=500 > gpu.csv\n", 500 * time.Millisecond},
	} {
		rows, meta, err := readRows(t, "l.csv", c.cmd+body)
		if err != nil {
			t.Fatalf("%q: %v", c.cmd, err)
		}
		if len(rows) != 3 || rows[1].TimeUs-rows[0].TimeUs != c.want.Microseconds() || meta.IntervalAssumed || meta.Interval != c.want {
			t.Errorf("%q: %d rows, step %d µs, assumed %v, interval %v", c.cmd, len(rows), rows[1].TimeUs-rows[0].TimeUs, meta.IntervalAssumed, meta.Interval)
		}
		if w := strings.Join(meta.Warnings.Strings(), " "); !strings.Contains(w, "the period of the command in the input") {
			t.Errorf("%q: warnings %q", c.cmd, w)
		}
	}
	// --interval wins over the command.
	_, meta, err := readRows(t, "l.csv", "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n"+body, WithInterval(2*time.Second))
	if err != nil || meta.Interval != 2*time.Second {
		t.Errorf("%v %v", err, meta.Interval)
	}
	// Without a command: 1 s, assumed, and the warning says the rates
	// rest on it and are only relative.
	_, meta, err = readRows(t, "l.csv", body)
	if err != nil || !meta.IntervalAssumed || meta.Interval != time.Second {
		t.Fatalf("%v %+v", err, meta)
	}
	if w := strings.Join(meta.Warnings.Strings(), " "); !strings.Contains(w, "every rate (bytes/s) and time to OOM rests on it and is only relative") {
		t.Errorf("warnings %q", w)
	}
	// A command continued over lines, as a shell prints it.
	if d, cmd := commandInterval([]byte("$ nvidia-smi \\\n  --query-gpu=index,memory.used \\\n  --format=csv -l 5\nindex, memory.used [MiB]\n")); d != 5*time.Second || !strings.HasSuffix(cmd, "-l 5") {
		t.Errorf("continued: %v %q", d, cmd)
	}
	// dmon's -d is dmon's period; in a --query-gpu command it is nothing.
	if d, _ := commandInterval([]byte("$ nvidia-smi dmon -s m -d 2\n")); d != 2*time.Second {
		t.Errorf("dmon -d: %v", d)
	}
	if d, _ := commandInterval([]byte("$ nvidia-smi -i 0 -d MEMORY -q\n")); d != 0 {
		t.Errorf("-q -d: %v", d)
	}
}

// A command line further on in a paste gives the period of the output
// after it, not the whole log's (a logger restarted with "-l 1" where it
// had "-l 5"), and the ticks of an output without times continue where
// the output before it ended (one period, the new output's, on: the time
// between the two commands is not in the log). Before, the first command
// in the first 64 KiB placed every row, and each output's ticks started
// again at 0, so two outputs overlapped in time (a steady rise read as a
// sawtooth).
func TestIntervalPerStretch(t *testing.T) {
	const hdr = "memory.used [MiB], memory.total [MiB]\n"
	rows := func(from int) string {
		var b strings.Builder
		for i := range 3 {
			b.WriteString(strconv.Itoa(from+100*i) + " MiB, 24564 MiB\n")
		}
		return b.String()
	}
	const s, ms = int64(time.Second / time.Microsecond), int64(time.Millisecond / time.Microsecond)
	for _, c := range []struct {
		name, log string
		opts      []Option
		times     []int64 // µs from the start
		assumed   bool
		note      string // in the warnings ("" : no period note)
	}{
		{"prompts, -l 5 then -l 1",
			"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n" + hdr + rows(1000) + "^C\n" +
				"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 1\n" + hdr + rows(1300),
			nil, []int64{0, 5 * s, 10 * s, 11 * s, 12 * s, 13 * s}, false,
			`line 7: the command "nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 1" gives the period of the output after it: rows without times are placed 1s apart from here on (before: 5s, the period of`},
		// A script's echo of the command, or the shell's trace of it (set -x).
		{"commands without prompts, -lms 500 then -l 2",
			"nvidia-smi --query-gpu=memory.used,memory.total --format=csv -lms 500\n" + hdr + rows(1000) +
				"+ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 2\n" + hdr + rows(1300),
			nil, []int64{0, 500 * ms, 1000 * ms, 3 * s, 5 * s, 7 * s}, false, "line 6: the command"},
		// The first output's period assumed; the second's given by its command.
		{"no command, then -l 5",
			hdr + rows(1000) + "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n" + hdr + rows(1300),
			nil, []int64{0, s, 2 * s, 7 * s, 12 * s, 17 * s}, true, "(before: 1s, assumed)"},
		// --interval places every row; commands do not override it.
		{"--interval", "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n" + hdr + rows(1000) +
			"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 1\n" + hdr + rows(1300),
			[]Option{WithInterval(2 * time.Second)}, []int64{0, 2 * s, 4 * s, 6 * s, 8 * s, 10 * s}, false, ""},
		// Two outputs of one command: the second goes on after the first.
		{"same command twice", "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n" + hdr + rows(1000) +
			"$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5\n" + hdr + rows(1300),
			nil, []int64{0, 5 * s, 10 * s, 15 * s, 20 * s, 25 * s}, false, ""},
	} {
		got, meta, err := readRows(t, "l.txt", c.log, c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var times []int64
		for _, r := range got {
			times = append(times, r.TimeUs)
		}
		if !slices.Equal(times, c.times) || meta.IntervalAssumed != c.assumed {
			t.Errorf("%s: times %v, assumed %v; want %v, %v", c.name, times, meta.IntervalAssumed, c.times, c.assumed)
		}
		w := strings.Join(meta.Warnings.Strings(), "\n")
		if c.note == "" && strings.Contains(w, "gives the period of the output after it") || c.note != "" && !strings.Contains(w, c.note) {
			t.Errorf("%s: warnings %q, want %q", c.name, w, c.note)
		}
	}
}
