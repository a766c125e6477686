package nvml

import (
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
