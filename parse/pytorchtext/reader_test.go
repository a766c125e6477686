package pytorchtext

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

const dir = "../../testdata/pytorch/"

// rows is everything a Reader emitted, as Go values.
type rows struct {
	msgs   []msgRow
	procs  map[int32][]Process
	frames map[int32][]tbFrame
	stats  []statRow
	meta   Metadata
}

type msgRow struct {
	id                int32
	line              int64
	gen               string
	exception, prefix string
	backend           string
	device            int32 // -1 null
	sizes             map[string]int64
	reason, text      string
	progress          int64  // progress_line, 0 null
	printer           string // "" null
	reraised          bool
	call              string // "" null
}

type statRow struct {
	set        int32
	setLine    int64
	source     string
	device     int32
	key        string
	value, res int64
	line       int64
}

func (rs *rows) stat(set int32, key string) (statRow, bool) {
	for _, s := range rs.stats {
		if s.set == set && s.key == key {
			return s, true
		}
	}
	return statRow{}, false
}

func collect(t *testing.T, r *Reader) (*rows, error) {
	t.Helper()
	out := &rows{procs: map[int32][]Process{}, frames: map[int32][]tbFrame{}}
	for r.Next() {
		rec := r.RecordBatch()
		if !rec.Schema().Equal(r.Table().Schema()) {
			t.Fatalf("%s batch with schema %s", r.Table(), rec.Schema())
		}
		n := int(rec.NumRows())
		switch r.Table() {
		case TableMessages:
			gen := rec.Column(MsgGeneration).(*array.Dictionary)
			for i := 0; i < n; i++ {
				m := msgRow{
					id:      rec.Column(MsgID).(*array.Int32).Value(i),
					line:    rec.Column(MsgLine).(*array.Int64).Value(i),
					gen:     strings.Clone(gen.Dictionary().(*array.String).Value(gen.GetValueIndex(i))),
					prefix:  strings.Clone(rec.Column(MsgPrefix).(*array.String).Value(i)),
					backend: strings.Clone(rec.Column(MsgBackend).(*array.String).Value(i)),
					text:    strings.Clone(rec.Column(MsgText).(*array.String).Value(i)),
					device:  -1,
					sizes:   map[string]int64{},
				}
				if c := rec.Column(MsgException); c.IsValid(i) {
					m.exception = strings.Clone(c.(*array.String).Value(i))
				}
				if c := rec.Column(MsgReason); c.IsValid(i) {
					m.reason = strings.Clone(c.(*array.String).Value(i))
				}
				if c := rec.Column(MsgDevice); c.IsValid(i) {
					m.device = c.(*array.Int32).Value(i)
				}
				if c := rec.Column(MsgProgressLine); c.IsValid(i) {
					m.progress = c.(*array.Int64).Value(i)
				}
				m.reraised = rec.Column(MsgReraised).(*array.Boolean).Value(i)
				if c := rec.Column(MsgCall); c.IsValid(i) {
					m.call = strings.Clone(c.(*array.String).Value(i))
				}
				if c := rec.Column(MsgPrinter); c.IsValid(i) {
					m.printer = strings.Clone(c.(*array.String).Value(i))
				}
				for col := MsgRequested; col <= MsgReserved; col++ {
					if c := rec.Column(col); c.IsValid(i) {
						m.sizes[rec.Schema().Field(col).Name] = c.(*array.Int64).Value(i)
					}
				}
				out.msgs = append(out.msgs, m)
			}
		case TableProcesses:
			for i := 0; i < n; i++ {
				id := rec.Column(ProcMessage).(*array.Int32).Value(i)
				out.procs[id] = append(out.procs[id], Process{rec.Column(ProcPID).(*array.Int64).Value(i), rec.Column(ProcBytes).(*array.Int64).Value(i)})
			}
		case TableFrames:
			for i := 0; i < n; i++ {
				id := rec.Column(FrMessage).(*array.Int32).Value(i)
				if d := rec.Column(FrDepth).(*array.Int32).Value(i); int(d) != len(out.frames[id]) {
					t.Fatalf("frame depth %d out of order", d)
				}
				out.frames[id] = append(out.frames[id], tbFrame{strings.Clone(rec.Column(FrFilename).(*array.String).Value(i)), rec.Column(FrLine).(*array.Int64).Value(i), strings.Clone(rec.Column(FrName).(*array.String).Value(i))})
			}
		case TableStats:
			src := rec.Column(StSource).(*array.Dictionary)
			for i := 0; i < n; i++ {
				s := statRow{
					set:     rec.Column(StSet).(*array.Int32).Value(i),
					setLine: rec.Column(StSetLine).(*array.Int64).Value(i),
					source:  strings.Clone(src.Dictionary().(*array.String).Value(src.GetValueIndex(i))),
					device:  -1,
					key:     strings.Clone(rec.Column(StKey).(*array.String).Value(i)),
					value:   rec.Column(StValue).(*array.Int64).Value(i),
					res:     rec.Column(StResolution).(*array.Int64).Value(i),
					line:    rec.Column(StLine).(*array.Int64).Value(i),
				}
				if c := rec.Column(StDevice); c.IsValid(i) {
					s.device = c.(*array.Int32).Value(i)
				}
				out.stats = append(out.stats, s)
			}
		}
	}
	out.meta = *r.Metadata()
	return out, r.Err()
}

// readText reads text through NewReader (or NewStatsReader) with a
// checked allocator and a tiny batch size.
func readText(t *testing.T, name, text string, stats bool) (*rows, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	var r *Reader
	if stats {
		r = NewStatsReader(strings.NewReader(text), name, WithAllocator(mem), WithBatchSize(3))
	} else {
		r = NewReader(strings.NewReader(text), name, WithAllocator(mem), WithBatchSize(3))
	}
	defer r.Release()
	return collect(t, r)
}

func readFile(t *testing.T, name string, stats bool) *rows {
	t.Helper()
	b, err := os.ReadFile(dir + name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := readText(t, name, string(b), stats)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The real messages: oom_error.txt (str(e)) and oom_traceback.txt
// (traceback.print_exc) of one OOM give the same fields; the traceback's
// innermost frame is the line that asked (oom.py:12 in grow).
func TestRealMessages(t *testing.T) {
	a := readFile(t, "oom_error.txt", false)
	b := readFile(t, "oom_traceback.txt", false)
	if len(a.msgs) != 1 || len(b.msgs) != 1 {
		t.Fatalf("%d and %d messages", len(a.msgs), len(b.msgs))
	}
	ma, mb := a.msgs[0], b.msgs[0]
	// fixtures README: 64.00 MiB requested; 139.80 GiB total, 135.01 GiB
	// free; this process 4.78 GiB; 4.19 GiB allowed; 4.19 GiB allocated; 0 bytes reserved but unallocated.
	want := map[string]int64{"requested": 64 * MiB, "total": gib(13980), "free": gib(13501), "process_in_use": gib(478),
		"allowed": gib(419), "allocated": gib(419), "reserved_unallocated": 0}
	for k, v := range want {
		if ma.sizes[k] != v || mb.sizes[k] != v {
			t.Errorf("%s: %d and %d, want %d", k, ma.sizes[k], mb.sizes[k], v)
		}
	}
	if len(ma.sizes) != len(want) || ma.gen != "2.x" || ma.device != 0 || ma.line != 1 || ma.exception != "" {
		t.Errorf("oom_error.txt: %+v", ma)
	}
	if mb.exception != "torch.OutOfMemoryError" || mb.line != 7 || mb.text != ma.text {
		t.Errorf("oom_traceback.txt: %+v", mb)
	}
	fr := b.frames[mb.id]
	if len(fr) != 2 || fr[0] != (tbFrame{"/home/user/train/oom.py", 12, "grow"}) || fr[1].name != "<module>" {
		t.Errorf("frames %+v", fr)
	}
	if len(a.frames) != 0 {
		t.Errorf("frames without a traceback: %+v", a.frames)
	}

	c := readFile(t, "oom_other_process_traceback.txt", false)
	if len(c.msgs) != 1 || c.procs[c.msgs[0].id][0] != (Process{609, gib(12779)}) || c.frames[c.msgs[0].id][0].name != "load_shards" {
		t.Errorf("oom_other_process_traceback.txt: %+v %+v %+v", c.msgs, c.procs, c.frames)
	}
	f := readFile(t, "fragmentation_oom_error.txt", false)
	// 1.25 GiB allocated by PyTorch, 1.53 GiB reserved but unallocated, 2.80 GiB allowed.
	if m := f.msgs[0]; m.sizes["allocated"] != gib(125) || m.sizes["reserved_unallocated"] != gib(153) || m.sizes["allowed"] != gib(280) || m.sizes["requested"] != 512*MiB {
		t.Errorf("fragmentation_oom_error.txt: %+v", m)
	}
}

// A launcher's log: two ranks' tracebacks interleaved under "[rankN]:"
// prefixes, a chained exception, an unrelated traceback, the message
// repeated by the agent, a damaged copy and a memory summary printed in
// the except block.
func TestLog(t *testing.T) {
	msg := func(dev int) string {
		return "CUDA out of memory. Tried to allocate 20.00 MiB. GPU " + string(rune('0'+dev)) + " has a total capacity of 79.15 GiB of which 10.81 MiB is free. Including non-PyTorch memory, this process has 79.13 GiB memory in use. Of the allocated memory 77.01 GiB is allocated by PyTorch, and 1.62 GiB is reserved by PyTorch but unallocated."
	}
	summary, _ := os.ReadFile(dir + "memory_summary.txt")
	var sb strings.Builder
	for _, l := range []string{
		"2026-01-01 10:00:00 INFO step 10 loss 2.31",
		"Traceback (most recent call last):",
		`  File "/opt/venv/lib/python3.12/site-packages/requests/api.py", line 5, in get`,
		"ValueError: unrelated",
		"[rank0]: Traceback (most recent call last):",
		"[rank1]: Traceback (most recent call last):",
		`[rank0]:   File "/home/user/train/train.py", line 80, in <module>`,
		`[rank1]:   File "/home/user/train/train.py", line 80, in <module>`,
		`[rank0]:     main()`,
		`[rank0]:   File "/home/user/train/train.py", line 61, in main`,
		`[rank0]:     raise RuntimeError("CUDA out of memory")  # a source line quoting it`,
		`[rank1]:   File "/home/user/train/model.py", line 12, in forward`,
		`[rank1]:     h = self.proj(x)`,
		`[rank1]:         ^^^^^^^^^^^^`,
		`[rank0]:   File "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", line 125, in forward`,
		"[rank1]: torch.OutOfMemoryError: " + msg(1),
		"[rank0]: torch.OutOfMemoryError: " + msg(0),
		"The above exception was the direct cause of the following exception:",
		"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: rank 0 failed: torch.OutOfMemoryError: " + msg(0),
		"torch.OutOfMemoryError: " + msg(0)[:90],
	} {
		sb.WriteString(l + "\n")
	}
	sb.Write(summary)
	sb.WriteString("done\n")
	rs, err := readText(t, "train.log", sb.String(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 4 {
		t.Fatalf("%d messages: %+v", len(rs.msgs), rs.msgs)
	}
	r1, r0, agent, cut := rs.msgs[0], rs.msgs[1], rs.msgs[2], rs.msgs[3]
	if r1.device != 1 || r1.prefix != "[rank1]:" || r1.line != 16 || r0.device != 0 || r0.prefix != "[rank0]:" {
		t.Errorf("rank messages %+v %+v", r1, r0)
	}
	if f := rs.frames[r1.id]; len(f) != 2 || f[0] != (tbFrame{"/home/user/train/model.py", 12, "forward"}) {
		t.Errorf("rank 1 frames %+v", f)
	}
	if f := rs.frames[r0.id]; len(f) != 3 || f[0].name != "forward" || f[1] != (tbFrame{"/home/user/train/train.py", 61, "main"}) {
		t.Errorf("rank 0 frames %+v", f)
	}
	if agent.gen != "2.x" || agent.exception != "torch.OutOfMemoryError" || len(rs.frames[agent.id]) != 0 {
		t.Errorf("agent %+v", agent)
	}
	// Cut after "79.15 GiB o": the request and the total, printed whole.
	if cut.gen != "cut" || cut.line != 20 || len(cut.sizes) != 2 || cut.sizes["requested"] != 20*MiB || cut.sizes["total"] != gib(7915) || !strings.Contains(cut.reason, "ends at column") {
		t.Errorf("cut %+v", cut)
	}
	if len(rs.meta.Warnings.Strings()) != 1 || !strings.Contains(rs.meta.Warnings.Strings()[0], "line 20:") {
		t.Errorf("warnings %q", rs.meta.Warnings.Strings())
	}
	// The position is data as well as text, for reports that place it.
	if ds := rs.meta.Warnings.Diagnostics(); len(ds) != 1 || ds[0].Line != 20 || ds[0].File == "" || strings.HasPrefix(ds[0].Msg, "line") {
		t.Errorf("diagnostics %+v", ds)
	}
	// The summary in the log: same numbers as the file alone.
	if s, ok := rs.stat(0, "allocated_bytes.all.current"); !ok || s.value != 148480*KiB || s.setLine != 22 || s.device != 0 {
		t.Errorf("summary in log: %+v", s)
	}
}

// memory_summary.txt and memory_stats.json of one moment parse into the
// same numbers: every value the summary shows is the stats value
// truncated to the summary's unit.
func TestSummaryMatchesStats(t *testing.T) {
	for _, pair := range [][2]string{{"memory_summary.txt", "memory_stats.json"}, {"memory_summary_2.txt", "memory_stats_2.json"}} {
		sum := readFile(t, pair[0], false)
		st := readFile(t, pair[1], true)
		stats := map[string]int64{}
		for _, s := range st.stats {
			if s.source != SourceMemoryStats || s.res != 0 || s.device != -1 || s.set != 0 {
				t.Fatalf("%s: %+v", pair[1], s)
			}
			stats[s.key] = s.value
		}
		if len(stats) != 122 {
			t.Errorf("%s: %d keys, want 122", pair[1], len(stats))
		}
		// 11 metrics: 9 with all/large/small rows, 2 oversize rows; 4
		// columns each, and the OOMs/retries header.
		if len(sum.stats) != (9*3+2)*4+2 {
			t.Errorf("%s: %d values", pair[0], len(sum.stats))
		}
		for _, s := range sum.stats {
			v, ok := stats[s.key]
			if !ok {
				t.Errorf("%s: key %q is not a memory_stats key", pair[0], s.key)
				continue
			}
			if v < s.value || v >= s.value+max(s.res, 1) {
				t.Errorf("%s: %s = %d (+%d), stats say %d", pair[0], s.key, s.value, s.res, v)
			}
		}
	}
	// fixtures README: current allocated 148480 KiB, 810 MiB reserved, 43 allocations, 0 OOMs.
	sum := readFile(t, "memory_summary.txt", false)
	st := readFile(t, "memory_stats.json", true)
	for key, want := range map[string]int64{"allocated_bytes.all.current": 148480 * KiB, "reserved_bytes.all.current": 810 * MiB,
		"allocation.all.current": 43, "num_ooms": 0} {
		a, _ := sum.stat(0, key)
		b, _ := st.stat(0, key)
		if a.value != want || b.value != want {
			t.Errorf("%s: summary %d, stats %d, want %d", key, a.value, b.value, want)
		}
	}
	if a, _ := sum.stat(0, "allocated_bytes.all.current"); a.line != 8 || a.res != KiB || a.device != 0 {
		t.Errorf("summary row %+v", a)
	}
	if b, _ := st.stat(0, "allocated_bytes.all.current"); b.line != 27 || b.setLine != 2 {
		t.Errorf("stats row %+v", b)
	}
}

func TestStatsShapes(t *testing.T) {
	nested := `{"allocated_bytes": {"all": {"current": 1024, "peak": 2048}, "large_pool": {"current": 0}}, "num_ooms": 2}`
	rs, err := readText(t, "n.json", nested, true)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := rs.stat(0, "allocated_bytes.all.current"); !ok || s.value != 1024 {
		t.Errorf("nested: %+v", rs.stats)
	}
	perDev := "{\"1\": {\"num_ooms\": 3},\n \"0\": {\"num_ooms\": 1}}"
	rs, err = readText(t, "d.json", perDev, true)
	if err != nil || len(rs.stats) != 2 || rs.stats[0].device != 0 || rs.stats[0].value != 1 || rs.stats[1].device != 1 || rs.stats[1].line != 1 || rs.stats[0].line != 2 {
		t.Errorf("per device: %+v %v", rs.stats, err)
	}
	list := `[{"num_ooms": 1}, {"num_ooms": 0, "reserved_bytes.all.current": 2.0, "note": "x"}]`
	rs, err = readText(t, "l.json", list, true)
	if err != nil || len(rs.stats) != 3 || rs.stats[2].device != 1 || len(rs.meta.Warnings.Strings()) != 1 {
		t.Errorf("list: %+v %v %q", rs.stats, err, rs.meta.Warnings.Strings())
	}
	// The skipped values are counted in English: "note" is one.
	if ws := rs.meta.Warnings.Strings(); len(ws) == 1 && !strings.Contains(ws[0], `1 value that is not a whole number skipped (first: "note")`) {
		t.Errorf("list: warning %q", ws[0])
	}
	two := `{"num_ooms": 1, "note": "x", "when": "today"}`
	rs, err = readText(t, "two.json", two, true)
	if ws := rs.meta.Warnings.Strings(); err != nil || len(ws) != 1 || !strings.Contains(ws[0], "2 values that are not whole numbers skipped") {
		t.Errorf("two skipped: %v %q", err, ws)
	}
}

func TestBadInputs(t *testing.T) {
	stats, _ := os.ReadFile(dir + "memory_stats.json")
	for _, c := range []struct {
		name, text string
		stats      bool
		line       int
		notMine    bool
		msg        string
	}{
		{"stats cut", string(stats[:len(stats)/2]), true, 63, false, "ends early"},
		{"stats syntax", strings.Replace(string(stats), ": 4615,", ": 4615,,", 1), true, 2, false, "syntax"},
		{"stats other JSON", `{"traceEvents": []}`, true, 0, true, ""},
		{"stats scalar", `17`, true, 0, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readText(t, "in", c.text, c.stats)
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *parse.Error", err)
			}
			if errors.Is(err, parse.ErrNotMine) != c.notMine || pe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%v (line %d)", err, pe.Line)
			}
		})
	}
	// A log without any OOM is not an error: no rows.
	rs, err := readText(t, "clean.log", "step 1\nstep 2\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'\n", false)
	if err != nil || len(rs.msgs) != 0 || rs.meta.Lines != 5 {
		t.Errorf("clean log: %+v %v", rs, err)
	}
}

// A memory summary that cannot be read whole is never an error: the rows
// read are kept, the set is marked partial at the line where reading
// stopped, and the lines after it are read as text (an OOM message there
// is kept).
func TestSummaryDamaged(t *testing.T) {
	summary, _ := os.ReadFile(dir + "memory_summary.txt")
	lines := strings.SplitAfter(string(summary), "\n")
	const oom = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 6.84 GiB already allocated; 15.69 MiB free; 6.89 GiB reserved in total by PyTorch)\n"
	for _, c := range []struct {
		name, text string
		partialAt  int64 // 0: whole
		keys       int   // values read (partial marker excluded)
		msgs       int
	}{
		// Lines 1-12: title, OOMs row (2 values), header, and the
		// Allocated memory rows (3 x 4 values) and the first Active row.
		{"cut mid-table, then an OOM", strings.Join(lines[:12], "") + oom, 13, 2 + 4*4, 1},
		{"cut inside a row", strings.Join(lines[:11], "") + lines[11][:30] + "\n" + oom, 12, 2 + 3*4, 1},
		{"cut at the end of the input", strings.Join(lines[:20], ""), 20, -1, 0},
		// A value no release prints: the row is skipped, the table goes on.
		{"bad value", strings.Replace(string(summary), "148480 KiB", "148480 XB ", 1), 0, -1, 0},
		{"bad title", "|==|\n| PyTorch CUDA memory summary, device ID x |\n" + oom, 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := readText(t, "in", c.text, false)
			if err != nil {
				t.Fatalf("error %v: a damaged table is a partial result", err)
			}
			if len(rs.msgs) != c.msgs {
				t.Errorf("%d OOM messages, want %d", len(rs.msgs), c.msgs)
			}
			p, ok := rs.stat(0, PartialKey)
			if ok != (c.partialAt > 0) || (ok && p.value != c.partialAt) {
				t.Errorf("partial marker %+v %v, want line %d", p, ok, c.partialAt)
			}
			n := 0
			for _, st := range rs.stats {
				if st.key != PartialKey {
					n++
				}
			}
			if c.keys >= 0 && n != c.keys {
				t.Errorf("%d values, want %d", n, c.keys)
			}
			if c.keys < 0 && n == 0 {
				t.Error("no values kept")
			}
			if len(rs.meta.Warnings.Strings()) == 0 {
				t.Error("no warning says what was not read")
			}
		})
	}
}

// A memory summary logged through a logger: a prefix before every row,
// not the same length on every row (a rank tag, then timestamps), reads
// as the file alone does.
func TestSummaryPrefixed(t *testing.T) {
	summary, _ := os.ReadFile(dir + "memory_summary.txt")
	lines := strings.SplitAfter(strings.TrimRight(string(summary), "\n"), "\n")
	var b strings.Builder
	b.WriteString("epoch 3 done\n")
	for i, l := range lines {
		fmt.Fprintf(&b, "[rank0]:%s INFO train.py:%d] %s", strings.Repeat(" ", i%3), 100+i*7, l)
	}
	b.WriteString("\n[rank0]: step 1201\n")
	rs, err := readText(t, "log", b.String(), false)
	if err != nil {
		t.Fatal(err)
	}
	alone := readFile(t, "memory_summary.txt", false)
	if len(rs.stats) != len(alone.stats) || len(rs.meta.Warnings.Strings()) != 0 {
		t.Fatalf("%d values (alone %d), warnings %q", len(rs.stats), len(alone.stats), rs.meta.Warnings.Strings())
	}
	for i := range rs.stats {
		if rs.stats[i].key != alone.stats[i].key || rs.stats[i].value != alone.stats[i].value {
			t.Errorf("%+v, alone %+v", rs.stats[i], alone.stats[i])
		}
	}
}

// Header lines and rows glued together (a logger that lost the line ends
// between them): the whole table on one line, and the title glued to the
// border before it and to the OOMs row after it, read as the file does.
func TestSummaryGlued(t *testing.T) {
	summary, _ := os.ReadFile(dir + "memory_summary.txt")
	alone := readFile(t, "memory_summary.txt", false)
	lines := strings.Split(strings.TrimRight(string(summary), "\n"), "\n")
	for name, text := range map[string]string{
		"one line":       "[rank0]: " + strings.Join(lines, "") + "\n",
		"title glued":    lines[0] + lines[1] + lines[2] + "\n" + strings.Join(lines[3:], "\n") + "\n",
		"pairs of lines": strings.Join(lines[:2], "") + "\n" + lines[2] + lines[3] + "\n" + strings.Join(lines[4:], "\n") + "\n",
	} {
		rs, err := readText(t, "log", text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.stats) != len(alone.stats) || len(rs.meta.Warnings.Strings()) != 0 {
			t.Errorf("%s: %d values (alone %d), warnings %q", name, len(rs.stats), len(alone.stats), rs.meta.Warnings.Strings())
		}
	}
}

func TestSniff(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name                   string
		summary, stats, oomTxt bool
	}{
		{"memory_summary.txt", true, false, false},
		{"memory_summary_2.txt", true, false, false},
		{"memory_stats.json", false, true, false},
		{"memory_stats_2.json", false, true, false},
		{"oom_error.txt", false, false, true},
		{"oom_traceback.txt", false, false, true},
		{"oom_other_process_traceback.txt", false, false, true},
		{"kineto_trace.json", false, false, false},
		{"memory_timeline.json", false, false, false},
		{"leak_train_loop.pickle", false, false, false},
	} {
		b := read(c.name)
		if len(b) > parse.SniffLen {
			b = b[:parse.SniffLen]
		}
		if SniffSummary(b) != c.summary || SniffStats(b) != c.stats || SniffOOM(b) != c.oomTxt {
			t.Errorf("%s: summary %v stats %v oom %v", c.name, SniffSummary(b), SniffStats(b), SniffOOM(b))
		}
	}
	// memory_stats() JSON cut before its "allocated_bytes" keys (its
	// first 300 bytes hold only "active.*" ones): still known as one, so
	// that the error says it ends early rather than "unrecognised".
	if b := read("memory_stats.json")[:300]; !SniffStats(b) {
		t.Error("memory_stats.json's first 300 bytes not sniffed as memory_stats()")
	}
	if SniffOOM([]byte("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n")) {
		t.Error("a Java OutOfMemoryError taken for a CUDA one")
	}
	if !LooksLikeText([]byte("héllo\n")) || LooksLikeText([]byte{0x80, 4, 0, 1}) || LooksLikeText(nil) {
		t.Error("LooksLikeText")
	}
}

// A log captured from a terminal: a progress bar redrawn with carriage
// returns, the traceback after it on the same line, and colours.
func TestTerminalLog(t *testing.T) {
	msg, _ := os.ReadFile(dir + "oom_traceback.txt")
	lines := strings.SplitAfter(string(msg), "\n")
	text := "epoch 0:  10%|#         | 1/10\repoch 0:  20%|##        | 2/10\r" + lines[0] +
		"  File \"\x1b[35m/home/user/train/oom.py\x1b[0m\", line \x1b[35m23\x1b[0m, in \x1b[35m<module>\x1b[0m\n" +
		strings.Join(lines[2:6], "") + "\x1b[1;35mtorch.OutOfMemoryError\x1b[0m: \x1b[35m" + strings.TrimPrefix(lines[6], "torch.OutOfMemoryError: ")
	rs, err := readText(t, "tty.log", text, false)
	if err != nil || len(rs.msgs) != 1 {
		t.Fatalf("%v %+v", err, rs)
	}
	m := rs.msgs[0]
	f := rs.frames[m.id]
	if m.exception != "torch.OutOfMemoryError" || m.line != 7 || m.sizes["requested"] != 64*MiB || len(f) != 2 || f[0].name != "grow" || f[1] != (tbFrame{"/home/user/train/oom.py", 23, "<module>"}) {
		t.Errorf("%+v %+v", m, f)
	}
}

// Wrappers around a real message (pastes/pt2.x_pytorch16417.txt's): a
// JSON string (an HTTP error body, a JSON log record) holding a whole
// traceback; per-line ISO timestamps that move on while a traceback is
// printed; a traceback pasted from its middle (pastes/hip_apu_strixhalo3.txt).
func TestWrappedTracebacks(t *testing.T) {
	msg, err := os.ReadFile(dir + "pastes/pt2.x_pytorch16417.txt")
	if err != nil {
		t.Fatal(err)
	}
	oom := strings.TrimSpace(string(msg))
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	json := `{"error": "Traceback (most recent call last):\n  File \"/app/serve.py\", line 40, in predict\n    out = model(x)\n  File \"/app/model.py\", line 12, in forward\n    return self.net(x)\n` + esc(oom) + `", "status": 500}` + "\n"
	iso := "2025-11-14T09:33:56.2332545Z Traceback (most recent call last):\n" +
		"2025-11-14T09:33:56.2332601Z   File \"/home/user/train/train.py\", line 61, in main\n" +
		"2025-11-14T09:33:56.2332688Z     loss = step(batch)\n" +
		"2025-11-14T09:33:56.2332745Z   File \"/home/user/train/train.py\", line 30, in step\n" +
		"2025-11-14T09:33:56.2332801Z     y = model(x)\n" +
		"2025-11-14T09:33:56.2332911Z " + oom + "\n"
	compose := "trainer-1  | Traceback (most recent call last):\n" +
		"worker-1   | step 10\n" +
		"trainer-1  |   File \"/app/train.py\", line 88, in <module>\n" +
		"trainer-1  |     main()\n" +
		"trainer-1  |   File \"/app/train.py\", line 71, in main\n" +
		"trainer-1  |     out = model(batch)\n" +
		"trainer-1  | " + oom + "\n"
	apu, err := os.ReadFile(dir + "pastes/hip_apu_strixhalo3.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, text string
		frames     []tbFrame // innermost first
		exception  string
	}{
		{"json", json, []tbFrame{{"/app/model.py", 12, "forward"}, {"/app/serve.py", 40, "predict"}}, "torch.cuda.OutOfMemoryError"},
		{"iso timestamps", iso, []tbFrame{{"/home/user/train/train.py", 30, "step"}, {"/home/user/train/train.py", 61, "main"}}, "torch.cuda.OutOfMemoryError"},
		{"docker-compose, another service between", compose, []tbFrame{{"/app/train.py", 71, "main"}, {"/app/train.py", 88, "<module>"}}, "torch.cuda.OutOfMemoryError"},
		{"mid-stack", string(apu), []tbFrame{{"/opt/venv/lib64/python3.13/site-packages/torch/utils/_device.py", 104, "__torch_function__"}}, "torch.OutOfMemoryError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := readText(t, "in", c.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs.msgs) != 1 || rs.msgs[0].gen != "2.x" || rs.msgs[0].exception != c.exception {
				t.Fatalf("%+v", rs.msgs)
			}
			if f := rs.frames[rs.msgs[0].id]; !reflect.DeepEqual(f, c.frames) {
				t.Errorf("frames %+v, want %+v", f, c.frames)
			}
		})
	}
}
