package pytorchtext

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// A file of memory_stats() dumps one per line (JSON lines; synthetic,
// testdata/README.md): ten sets, dump n on line n+1, its allocated bytes
// 2 GiB + n*500 MiB (the generator's step), with a warning that says they
// are read one by one. Before, the reader stopped at line 2 with "text
// after the JSON value".
func TestStatsJSONLines(t *testing.T) {
	rs := readFile(t, "synthetic/memory_stats_series.jsonl", true)
	if rs.meta.Sets != 10 || !strings.Contains(fmt.Sprint(rs.meta.Warnings.Strings()), "10 dumps one after another") {
		t.Fatalf("%d sets, warnings %.200q", rs.meta.Sets, fmt.Sprint(rs.meta.Warnings.Strings()))
	}
	for n := int32(0); n < 10; n++ {
		s, ok := rs.stat(n, "allocated_bytes.all.current")
		if want := 2*GiB + int64(n)*500*MiB; !ok || s.value != want || s.line != int64(n)+1 || s.setLine != int64(n)+1 {
			t.Errorf("set %d: %+v, want %d on line %d", n, s, want, n+1)
		}
	}
	// Text after the dumps that is not one is an error at its line.
	_, err := readText(t, "in", "{\"num_ooms\": 0}\n{\"num_ooms\": 1}\n[1, 2]\n", true)
	if err == nil || !strings.Contains(err.Error(), "in:3:") {
		t.Errorf("a list after two dumps: %v", err)
	}
}

// memory_stats() printed as Python's OrderedDict repr in two real pastes
// (testdata/README.md): ROCm/pytorch 703's pprint, cut after its sixth
// line, is one set of the six keys shown (active.all.*, then
// active.large_pool.allocated and .current, all 0), each on its line,
// marked partial at line 6; MinkowskiEngine 359's, on line 9 after a 1.x
// OOM message, is one set of its 20 pairs (active.all.allocated 21008,
// active_bytes.large_pool.peak 15715351552: the first and last pairs as
// printed), not partial, with a warning that it lacks the allocated and
// reserved keys (the paster kept only the active ones), and the OOM is
// still read. Before, both were a warning "is not read" and no stats.
func TestStatsOrderedDictPastes(t *testing.T) {
	rs := readFile(t, "pastes/stats_ordereddict_rocm703.txt", false)
	p, partial := rs.stat(0, PartialKey)
	s, ok := rs.stat(0, "active.large_pool.current")
	if rs.meta.Sets != 1 || len(rs.stats) != 7 || !partial || p.value != 6 || !ok || s.value != 0 || s.line != 6 || s.setLine != 1 || s.source != SourceMemoryStats {
		t.Errorf("rocm703: %d sets, %d stats, partial %+v, last key %+v", rs.meta.Sets, len(rs.stats), p, s)
	}
	rs = readFile(t, "pastes/oom_then_ordereddict_minkowski359.txt", false)
	a, ok1 := rs.stat(0, "active.all.allocated")
	b, ok2 := rs.stat(0, "active_bytes.large_pool.peak")
	_, partial = rs.stat(0, PartialKey)
	warn := fmt.Sprint(rs.meta.Warnings.Strings())
	if len(rs.msgs) != 1 || rs.meta.Sets != 1 || len(rs.stats) != 20 || partial || !ok1 || !ok2 || a.value != 21008 || b.value != 15715351552 || a.line != 9 || !strings.Contains(warn, "without allocated_bytes.all.current") {
		t.Errorf("minkowski359: %d messages, %d sets, %d stats, partial %v, %+v %+v, warnings %.200q", len(rs.msgs), rs.meta.Sets, len(rs.stats), partial, a, b, warn)
	}
}

// memory_stats() dumped as JSON into a log (the session-43 tester's
// files, synthetic; testdata/README.md): pretty-printed after an OOM
// traceback (num_ooms 3, allocated 10.5 GiB as the message says "10.50
// GiB already allocated"), on one line after "step 0: " (2 GiB, 0 OOMs),
// pretty-printed between "epoch 3 done" and "next" (6 GiB, 3 OOMs). Each
// is one whole set at the line of its "{", and the OOM message is still
// read. Before, the first gave no stats and the others no rows at all.
func TestStatsJSONInLog(t *testing.T) {
	for _, c := range []struct {
		file        string
		msgs        int
		line        int64
		alloc, ooms int64
	}{
		{"synthetic/oom_then_memory_stats_json.log", 1, 5, 10*GiB + GiB/2, 3},
		{"synthetic/memory_stats_step_line.log", 0, 1, 2 * GiB, 0},
		{"synthetic/memory_stats_json_in_log.log", 0, 2, 6 * GiB, 3},
	} {
		rs := readFile(t, c.file, false)
		a, ok1 := rs.stat(0, "allocated_bytes.all.current")
		o, ok2 := rs.stat(0, "num_ooms")
		_, partial := rs.stat(0, PartialKey)
		if len(rs.msgs) != c.msgs || rs.meta.Sets != 1 || !ok1 || !ok2 || partial || a.value != c.alloc || o.value != c.ooms || a.setLine != c.line || rs.meta.Warnings.Len() != 0 {
			t.Errorf("%s: %d messages, %d sets, %+v, %+v, partial %v, warnings %.200q", c.file, len(rs.msgs), rs.meta.Sets, a, o, partial, fmt.Sprint(rs.meta.Warnings.Strings()))
		}
	}
}

// A recorded memory_stats() (memory_stats.json) printed the ways a program
// prints it in a log: Python's dict repr on one line, OrderedDict's repr
// before Python 3.12 ("OrderedDict([(k, v), ...])") behind "step 3: " and
// since ("OrderedDict({k: v, ...})"), pprint's OrderedDict a pair per
// line behind torchrun's "[rank0]: " on every line, and json.dumps(indent=2)
// behind a logger's prefix on its first line only. Each is one set with
// the very keys and values of the JSON file, not partial, no warning, and
// the OOM message on the line after it is read. Cut after its 20th line,
// the pprint form is a set of the 20 pairs before, partial at the line
// that cut it, and that line's OOM message is read.
func TestStatsReprForms(t *testing.T) {
	js := readFile(t, "memory_stats.json", true)
	want := statValues(js, 0)
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := func(f string, sep string) string {
		var b []string
		for _, k := range keys {
			b = append(b, fmt.Sprintf(f, k, want[k]))
		}
		return strings.Join(b, sep)
	}
	const oom = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total capacity; 10.50 GiB already allocated; 1.20 GiB free; 12.30 GiB reserved in total by PyTorch)"
	var pprint []string
	for i, k := range keys {
		lead := "             ("
		if i == 0 {
			lead = "OrderedDict([("
		}
		end := "),"
		if i == len(keys)-1 {
			end = ")])"
		}
		pprint = append(pprint, fmt.Sprintf("[rank0]: %s'%s', %d%s", lead, k, want[k], end))
	}
	for _, c := range []struct{ name, text string }{
		{"dict repr", "{" + pairs("'%s': %d", ", ") + "}"},
		{"OrderedDict list", "step 3: OrderedDict([" + pairs("('%s', %d)", ", ") + "])"},
		{"OrderedDict 3.12", "OrderedDict({" + pairs("'%s': %d", ", ") + "})"},
		{"pprint, prefixed", strings.Join(pprint, "\n")},
		{"json indent", "2024-05-01 12:00:00,123 INFO stats: {\n" + pairs(`  "%s": %d`, ",\n") + "\n}"},
	} {
		rs, err := readText(t, c.name, c.text+"\n"+oom+"\n", false)
		if err != nil || rs.meta.Sets != 1 || len(rs.msgs) != 1 || rs.meta.Warnings.Len() != 0 {
			t.Errorf("%s: err %v, %d sets, %d messages, warnings %.200q", c.name, err, rs.meta.Sets, len(rs.msgs), fmt.Sprint(rs.meta.Warnings.Strings()))
			continue
		}
		if got := statValues(rs, 0); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %.200q", c.name, fmt.Sprint(got))
		}
	}
	rs, err := readText(t, "cut", strings.Join(pprint[:20], "\n")+"\n"+oom+"\n", false)
	p, partial := rs.stat(0, PartialKey)
	if err != nil || rs.meta.Sets != 1 || len(rs.msgs) != 1 || len(rs.stats) != 21 || !partial || p.value != 21 {
		t.Errorf("cut: err %v, %d sets, %d messages, %d stats, partial %+v", err, rs.meta.Sets, len(rs.msgs), len(rs.stats), p)
	}
}

// A dump whose keys are not in order (json.dump of a dict built by hand):
// every row of the set carries the line of its first key (2), not that of
// the first key in sorted order. Before, rows read before the smallest
// line was met carried a later one (the tester's stats_ooms.json: 76).
func TestStatsSetLineUnsorted(t *testing.T) {
	rs, err := readText(t, "in.json", "{\n \"num_ooms\": 1,\n \"allocated_bytes.all.current\": 5\n}\n", true)
	if err != nil || len(rs.stats) != 2 {
		t.Fatalf("%v, %d stats", err, len(rs.stats))
	}
	for _, s := range rs.stats {
		if s.setLine != 2 {
			t.Errorf("%s: set line %d, want 2", s.key, s.setLine)
		}
	}
}

// A program's own dicts in a log are not memory_stats(): a config whose
// first key has memory_stats()'s "num_" form, and one that starts with
// num_ooms but holds none of its statistics, give no set and no warning.
func TestStatsNotProgramDicts(t *testing.T) {
	for _, text := range []string{
		"config: {'num_workers': 4, 'batch_size': 32}\n",
		"{\"num_epochs\": 3,\n \"lr\": 0.1}\n",
		"{'num_ooms': 0, 'lr': 0.1}\n",
	} {
		rs, err := readText(t, "x.log", text, false)
		if err != nil || rs.meta.Sets != 0 || len(rs.stats) != 0 || rs.meta.Warnings.Len() != 0 {
			t.Errorf("%q: err %v, %d sets, warnings %.200q", text, err, rs.meta.Sets, fmt.Sprint(rs.meta.Warnings.Strings()))
		}
	}
}

// A memory_stats() JSON dump followed by text that is not JSON (a log
// that starts with json.dumps(stats, indent=1), then an OOM traceback):
// the dump is read (allocated 5 on line 2, the set at line 2), and the
// text after it as a log from its own line (the OOM message on line 7),
// with a warning naming line 5 where the text starts. Before, the file
// was an error, "text after the JSON value" (as `{"num_ooms": 0} x` was:
// its dump is now read, the "x" read as a line of log).
func TestStatsJSONThenLog(t *testing.T) {
	text := "{\n \"allocated_bytes.all.current\": 5,\n \"num_ooms\": 1\n}\nTraceback (most recent call last):\n  File \"a.py\", line 3, in f\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total capacity; 10.50 GiB already allocated; 1.20 GiB free; 12.30 GiB reserved in total by PyTorch)\n"
	rs, err := readText(t, "in.log", text, true)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := rs.stat(0, "allocated_bytes.all.current")
	ds := rs.meta.Warnings.Diagnostics()
	if !ok || a.value != 5 || a.setLine != 2 || len(rs.msgs) != 1 || rs.msgs[0].line != 7 || len(ds) != 1 || ds[0].Line != 5 || len(rs.frames[0]) != 1 {
		t.Errorf("%+v, %d messages %+v, warnings %.200q", a, len(rs.msgs), rs.msgs, fmt.Sprint(rs.meta.Warnings.Strings()))
	}
	rs, err = readText(t, "in", `{"num_ooms": 0} x`, true)
	if o, ok := rs.stat(0, "num_ooms"); err != nil || !ok || o.value != 0 || rs.meta.Warnings.Len() != 1 {
		t.Errorf("trailing x: %v, %+v", err, rs.stats)
	}
}
