package nvml

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// plainRowHeaders are the columns FuzzPlainRow reads rows under: the
// layout of --query-gpu with units (../shared/fixtures/nvml/query_gpu.csv),
// --query-compute-apps, and a header-less log's default fields.
var plainRowHeaders = []struct {
	header string
	apps   bool
}{
	{"timestamp, index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], utilization.gpu [%], utilization.memory [%]", false},
	{"timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]", true},
	{"", false},
}

// plainRowDecoder returns a decoder of r set to the columns of
// plainRowHeaders[h].
func plainRowDecoder(t *testing.T, r *Reader, h int) *smiDecoder {
	t.Helper()
	hd := plainRowHeaders[h]
	d := newSmiDecoder(r, hd.apps)
	var err error
	if hd.header == "" {
		err = d.setColumns(DefaultQueryGPUFields, nil, false, 1)
	} else {
		names, units, ok := headerFields([]byte(hd.header), hd.apps)
		if !ok {
			t.Fatalf("%q is not a header", hd.header)
		}
		err = d.setColumns(names, units, true, 1)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzPlainRow checks the one-pass reader of common --query-gpu and
// --query-compute-apps rows against split and row, which read every
// row: where plainRow takes a row, they must take it too, as the same
// sample.
func FuzzPlainRow(f *testing.F) {
	for _, row := range []string{
		"2026/11/30 08:06:12.696, 0, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17770, NVIDIA H200, 00000000:18:00.0, 143771 MiB, 0 MiB, 143155 MiB, 616 MiB, 0 %, 0 %",
		"2026/11/30 08:06:12.696, 3, GPU-x, NVIDIA A100-SXM4-80GB, 00000000:1B:00.0, 81920 MiB, [N/A], 1.5 GiB, N/A, 7 %, 9 %",
		"2026/11/30 08:06:12.696, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17770, 4242, python train.py, 5120 MiB",
		"2026-11-30T08:06:12.5+02:00, 1, GPU-a, Tesla, V100, x, 16 GiB, 1 MiB, 2 MiB, , 1, 2",
		`2026/11/30 08:06:12.696, 0, "GPU-a", name, b, 1 MiB, 2 MiB, 3 MiB, 4 MiB, 0 %, 0 %`,
		"2026/11/30 08:06:12, 0, GPU-a, n, b, 80 GB, 1024, 3 KiB, 0 MiB,,",
	} {
		for h := range plainRowHeaders {
			f.Add(h, row)
		}
	}
	f.Fuzz(func(t *testing.T, h int, row string) {
		if h < 0 || h >= len(plainRowHeaders) {
			return
		}
		r := NewReader(bytes.NewReader(nil), "fuzz")
		defer r.Release()
		d := plainRowDecoder(t, r, h)
		b := trimSpace([]byte(row))
		if len(b) == 0 {
			return
		}
		var fast sample
		if !d.plainRow(b, &fast) {
			return
		}
		if err := d.split(b, 2); err != nil {
			t.Fatalf("plainRow read %q, split says %v", row, err)
		}
		slow, err := d.fieldsSample(2)
		if err != nil {
			t.Fatalf("plainRow read %q, row says %v", row, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: plainRow read\n%+v\nrow read\n%+v", row, fast, slow)
		}
	})
}

// tick is the rows of one tick of a --query-gpu log at hh:mm:ss.mmm,
// each GPU's fields up to memory.total given, the rest the same.
func tick(clock string, gpus ...string) string {
	var b strings.Builder
	for i, g := range gpus {
		fmt.Fprintf(&b, "2026/11/30 %s, %s, %d MiB, %d MiB, 616 MiB, %d %%, 0 %%\n", clock, g, 4+i, 143151-i, 7*i)
	}
	return b.String()
}

// FuzzPlainRowCache: plainRow reads a sequence of rows, with its cache of
// the columns between the timestamp and memory.used (midCache), as split
// and row read each. The rows are row and row with edit put at at, in an
// order that meets the cache at the same place with the same bytes and
// with others, at the same timestamp and at another.
func FuzzPlainRowCache(f *testing.F) {
	rows := []string{
		"2026/11/30 08:06:12.696, 0, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17770, NVIDIA H200, 00000000:18:00.0, 143771 MiB, 0 MiB, 143155 MiB, 616 MiB, 0 %, 0 %",
		"2026/11/30 08:06:12.696, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17770, 4242, python train.py, 5120 MiB",
		"2026/11/30 08:06:12, 0, GPU-a, n, b, 80 GB, 1024, 3 KiB, 0 MiB,,",
	}
	for _, row := range rows {
		for h := range plainRowHeaders {
			f.Add(h, row, "3", 22)   // another timestamp
			f.Add(h, row, "9", 40)   // another field after it
			f.Add(h, row, "", 0)     // the same row
			f.Add(h, row, ",", 30)   // a field more
			f.Add(h, row, "N/A", 26) // a placeholder
		}
	}
	f.Fuzz(func(t *testing.T, h int, row, edit string, at int) {
		if h < 0 || h >= len(plainRowHeaders) || len(row) > 4096 || len(edit) > 64 {
			return
		}
		r := NewReader(bytes.NewReader(nil), "fuzz")
		defer r.Release()
		d := plainRowDecoder(t, r, h)
		at = min(max(at, 0), len(row))
		other := row[:at] + edit + row[min(at+len(edit), len(row)):]
		for k, x := range []string{row, other, row, other, other, row, row, other} {
			b := trimSpace([]byte(x))
			if len(b) == 0 {
				continue
			}
			var fast sample
			if !d.plainRow(b, &fast) {
				continue
			}
			if err := d.split(b, 2); err != nil {
				t.Fatalf("row %d: plainRow read %q, split says %v", k, x, err)
			}
			slow, err := d.fieldsSample(2)
			if err != nil {
				t.Fatalf("row %d: plainRow read %q, row says %v", k, x, err)
			}
			// The dictionary indices the cache knows are those of the
			// values (row leaves them 0).
			text := &r.col.text
			if i := fast.uuidIdx; i > 0 && text[ColUUID].values[i-1] != string(fast.uuid) ||
				fast.nameIdx > 0 && text[ColGPUName].values[fast.nameIdx-1] != string(fast.gpuName) {
				t.Fatalf("row %d: %q: indices %d, %d of %q, %q in %q, %q", k, x, fast.uuidIdx, fast.nameIdx, fast.uuid, fast.gpuName, text[ColUUID].values, text[ColGPUName].values)
			}
			fast.uuidIdx, fast.nameIdx = 0, 0
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("row %d: %q: plainRow read\n%+v\nrow read\n%+v", k, x, fast, slow)
			}
			if err := d.finish(&slow, 2); err != nil { // emitted: the cache learns the indices
				t.Fatal(err)
			}
		}
	})
}

// FuzzTimestampCache: parseTimestamp reads a timestamp after another the
// same with one cache (which keeps the last date and hour read, and the
// last timestamp) as with a fresh one.
func FuzzTimestampCache(f *testing.F) {
	f.Add("2026/11/30 08:06:12.696", "2026/11/30 08:59:60.5")
	f.Add("2026-11-30T08:06:12Z", "2026-11-30T08:61:12Z")
	f.Add("2026/02/29 08:06:12", "2026/02/29 08:06:12.1")
	f.Add("2024/02/29 23:06:12.000", "2024/02/29 23:06:12+05:30")
	f.Add("2026/11/30 08:06:12.696", "2026/11/30 08:06:12.696") // the same: from the last-timestamp cache
	f.Add("2026/11/30 08:06:12.69", "2026/11/30 08:06:12.690")
	f.Add("2026/11/30 08:06:12.696", "2026/11/30 08:06:13.696")
	f.Fuzz(func(t *testing.T, a, b string) {
		shared := civilCache{loc: time.UTC}
		parseTimestamp([]byte(a), &shared)
		got, gotOK := parseTimestamp([]byte(b), &shared)
		fresh := civilCache{loc: time.UTC}
		want, wantOK := parseTimestamp([]byte(b), &fresh)
		if got != want || gotOK != wantOK {
			t.Fatalf("%q after %q: %d %v, alone %d %v", b, a, got, gotOK, want, wantOK)
		}
		// Milliseconds (23 bytes) take a short path; a fourth digit 0
		// takes the general one, to the same instant.
		if _, ms := digits([]byte(b), 20, 3); len(b) == 23 && (b[19] == '.' || b[19] == ',') && ms {
			longer := civilCache{loc: time.UTC}
			if l, lOK := parseTimestamp([]byte(b+"0"), &longer); l != want || lOK != wantOK {
				t.Fatalf("%q: %d %v, with a digit 0 more %d %v", b, want, wantOK, l, lOK)
			}
		}
	})
}

// promptClass holds, for every byte, what promptChar's switch said of it
// before it became a table.
func TestPromptClass(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := uint8(promptOther)
		switch b := byte(c); {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
			want = promptText
		case b == '_', b == '.', b == '@', b == ':', b == '~', b == '/', b == '\\', b == '-', b == '[', b == ']', b == '(', b == ')':
			want = promptText
		case b == ' ', b == '\t', b == '\n', b == '\f', b == '\r':
			want = promptText
		case b == '$' || b == '#' || b == '%' || b == '>':
			want = promptMark
		}
		if promptClass[c] != want {
			t.Errorf("byte %q: class %d, want %d", rune(c), promptClass[c], want)
		}
	}
}

// TestNullableAdd: a column keeps each row's value and validity however
// its nulls fall (leading, after values, none, all).
func TestNullableAdd(t *testing.T) {
	for _, pattern := range []string{"", "v", "n", "nnn", "vvv", "nvv", "vnv", "vvn", "nnvnv", "vvvnnv", "vnnnnn"} {
		var c nullable[int64]
		for i, p := range pattern {
			c.add(int64(i+1), p == 'v')
		}
		nulls := strings.Count(pattern, "n")
		if c.nulls != nulls {
			t.Errorf("%q: %d nulls, want %d", pattern, c.nulls, nulls)
		}
		if c.lead > 0 {
			if c.lead != len(pattern) || nulls != len(pattern) || len(c.v) != 0 {
				t.Errorf("%q: lead %d with %d values", pattern, c.lead, len(c.v))
			}
			continue
		}
		if len(c.v) != len(pattern) || (c.validity() == nil) != (nulls == 0) {
			t.Fatalf("%q: %d values, validity %v", pattern, len(c.v), c.validity())
		}
		for i, p := range pattern {
			if c.isValid(i) != (p == 'v') || p == 'v' && c.v[i] != int64(i+1) {
				t.Errorf("%q: row %d: %d valid %v", pattern, i, c.v[i], c.isValid(i))
			}
		}
	}
}

// FuzzFastRow: a log read with smiDecoder's fastRow (which skips step's
// tests for prompts, terminal noise and elisions on plain rows of a log
// whose first column is the timestamp) gives the same samples, metadata
// and error as one read the general way, line by line.
func FuzzFastRow(f *testing.F) {
	row := "2026/11/30 08:06:12.696, 0, GPU-a, NVIDIA H200, 00000000:18:00.0, 143771 MiB, 4 MiB, 143151 MiB, 616 MiB, 0 %, 0 %\n"
	for _, body := range []string{
		row + row,
		row + "$ nvidia-smi --query-gpu=timestamp,index --format=csv\ntimestamp, index, memory.used [MiB]\n2026/11/30 08:06:13.000, 1, 7 MiB\n",
		row + "^C\n" + row + "...\n" + row,
		row + "2026/11/30 08:06:12.696 $ nvidia-smi\n" + row,
		row + "[...]\n\n   \n" + row + "No devices were found\n",
		row + `2026/11/30 08:06:12.696, 0, "GPU-a", n, b, 1 MiB, 2 MiB, 3 MiB, 4 MiB, 0 %, 0 %` + "\n",
		row + "2026/11/30 08:06:12.696, 0, GPU-a, n, b, 1 MiB, 2 MiB\n",
		row + "2026/11/30 08:06:12.7, 0, GPU-a, n, b, 1 MiB, 2 MiB, 3 MiB, 4 MiB, 0 %, 0 %", // no line end
		"2026/11/30 08:06:12.696, 0, GPU-a, NVIDIA H200, 00000000:18:00.0, 143771 MiB, 4 MiB, 143151 MiB, 616 MiB, 0 %, 0 %\r\n",
		// Ticks of two GPUs: rows read from plainRow's cache of the
		// columns between the timestamp and memory.used, a GPU missing
		// from a tick, a changed total, a placeholder, a header between.
		tick("08:06:12.696", "0, GPU-a, H200, 00:18, 143771 MiB", "1, GPU-b, H200, 00:19, 143771 MiB") +
			tick("08:06:12.946", "0, GPU-a, H200, 00:18, 143771 MiB", "1, GPU-b, H200, 00:19, 143771 MiB") +
			tick("08:06:13.196", "1, GPU-b, H200, 00:19, 143771 MiB") +
			tick("08:06:13.446", "0, GPU-a, H200, 00:18, 143770 MiB", "1, GPU-b, H200, 00:19, [N/A]") +
			tick("08:06:13.696", "0, GPU-a, H200, 00:18, 143770 MiB", "1, GPU-b, H200, 00:19, [N/A]") +
			"timestamp, index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]\n" +
			tick("08:06:13.946", "0, GPU-a, H200, 00:18, 143770 MiB", "1, GPU-b, H200, 00:19, 143771 MiB"),
	} {
		for h := range plainRowHeaders {
			f.Add(h, body)
		}
	}
	f.Fuzz(func(t *testing.T, h int, body string) {
		if h < 0 || h >= len(plainRowHeaders) {
			return
		}
		hd := plainRowHeaders[h]
		input := body
		if hd.header != "" {
			input = hd.header + "\n" + body
		}
		format := FormatQueryGPU
		if hd.apps {
			format = FormatQueryApps
		}
		fast, fm, ferr := readRows(t, "fuzz", input, WithFormat(format))
		slow, sm, serr := readRows(t, "fuzz", input, WithFormat(format), func(o *options) { o.general = true })
		if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
			t.Fatalf("errors: fast %v, general %v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("rows: fast\n%+v\ngeneral\n%+v", fast, slow)
		}
		if fm.Rows != sm.Rows || fm.FirstUs != sm.FirstUs || fm.LastUs != sm.LastUs || fm.Ticks != sm.Ticks ||
			fm.Skipped != sm.Skipped || !reflect.DeepEqual(fm.Warnings.Strings(), sm.Warnings.Strings()) {
			t.Fatalf("metadata: fast %+v\ngeneral %+v", fm, sm)
		}
	})
}

// TestMidCache counts the rows plainRow's cache serves in a log of ticks
// of two GPUs: each row whose columns from index to memory.total are
// those of the row at its place in the last tick. The rows read are those
// of the general way (FuzzFastRow compares them over many logs).
func TestMidCache(t *testing.T) {
	const header = "timestamp, index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], utilization.gpu [%], utilization.memory [%]\n"
	ticks := header +
		tick("08:06:12.696", "0, GPU-a, H200, 00:18, 143771 MiB", "1, GPU-b, H200, 00:19, 143771 MiB") + // 2 misses: nothing cached
		tick("08:06:12.946", "0, GPU-a, H200, 00:18, 143771 MiB", "1, GPU-b, H200, 00:19, 143771 MiB") + // 2 hits
		tick("08:06:13.196", "1, GPU-b, H200, 00:19, 143771 MiB") + // a miss: GPU-a's place
		tick("08:06:13.446", "0, GPU-a, H200, 00:18, 143770 MiB", "1, GPU-b, H200, 00:19, [N/A]") + // 2 misses: GPU-b's place, another total
		tick("08:06:13.696", "0, GPU-a, H200, 00:18, 143770 MiB", "1, GPU-b, H200, 00:19, [N/A]") // 2 hits
	relaid := ticks +
		"timestamp, index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]\n" + // other columns: the cache starts again
		"2026/11/30 08:06:14.000, 0, GPU-a, H200, 00:18, 4 MiB, 143770 MiB\n" + // a miss
		"2026/11/30 08:06:14.250, 0, GPU-a, H200, 00:18, 5 MiB, 143770 MiB\n" // a hit
	for _, c := range []struct {
		name, body           string
		hits, misses, cached int
	}{{"ticks", ticks, 4, 5, 6}, {"relaid", relaid, 1, 1, 5}} {
		rd := NewReader(strings.NewReader(c.body), c.name, WithBatchSize(100))
		defer rd.Release()
		var got []row
		for rd.Next() {
			got = append(got, toRows(rd.RecordBatch())...)
		}
		if rd.Err() != nil {
			t.Fatal(rd.Err())
		}
		if m := rd.dec.(*smiDecoder).mid; m.hits != c.hits || m.misses != c.misses || m.to != c.cached {
			t.Errorf("%s: hits %d, misses %d, cached columns end at %d; want %d, %d and %d", c.name, m.hits, m.misses, m.to, c.hits, c.misses, c.cached)
		}
		want, _, err := readRows(t, c.name, c.body, func(o *options) { o.general = true })
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v: rows\n%+v\nthe general way\n%+v", c.name, err, got, want)
		}
	}

	// Columns longer than midBytes are read, not kept: the cache stays
	// small whatever the rows.
	long := header
	for i := range 3 {
		long += tick(fmt.Sprintf("08:06:1%d.000", i), "0, GPU-a, "+strings.Repeat("H", midBytes)+", 00:18, 143771 MiB")
	}
	rd := NewReader(strings.NewReader(long), "long", WithBatchSize(100))
	defer rd.Release()
	var got []row
	for rd.Next() {
		got = append(got, toRows(rd.RecordBatch())...)
	}
	if m := rd.dec.(*smiDecoder).mid; m.hits != 0 || m.misses != 3 || len(m.ents) != 1 || len(m.ents[0].b) != 0 {
		t.Errorf("long columns: %d hits, %d misses, %d entries", m.hits, m.misses, len(m.ents))
	}
	want, _, err := readRows(t, "long", long, func(o *options) { o.general = true })
	if err != nil || rd.Err() != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, %v: the rows differ from the general way's", err, rd.Err())
	}

	// A column among them that changes every tick turns the cache off.
	var b strings.Builder
	b.WriteString(header)
	for i := range 1100 {
		fmt.Fprintf(&b, "2026/11/30 08:%02d:%02d.000, 0, GPU-a, H200, 00:18, 143771 MiB, 4 MiB, 143151 MiB, 616 MiB, 0 %%, 0 %%\n", i/60, i%60)
		fmt.Fprintf(&b, "2026/11/30 08:%02d:%02d.000, 1, GPU-b, H200, %d, 143771 MiB, 4 MiB, 143151 MiB, 616 MiB, 0 %%, 0 %%\n", i/60, i%60, i)
	}
	rd = NewReader(strings.NewReader(b.String()), "volatile", WithBatchSize(100))
	defer rd.Release()
	got = got[:0]
	for rd.Next() {
		got = append(got, toRows(rd.RecordBatch())...)
	}
	if m := rd.dec.(*smiDecoder).mid; m.to != 0 || m.misses != 1025 {
		t.Errorf("cache on after %d misses, %d hits (cached columns end at %d)", m.misses, m.hits, m.to)
	}
	want, _, err = readRows(t, "volatile", b.String(), func(o *options) { o.general = true })
	if err != nil || rd.Err() != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, %v: the rows differ from the general way's", err, rd.Err())
	}
}

// TestWithin: a text within the cached columns' bytes is found again in
// their copy; one that is not (another buffer, or the row past them) is
// refused, so that the cache never points outside its own bytes.
func TestWithin(t *testing.T) {
	row := []byte("0, GPU-1, NVIDIA H200, 143771 MiB")
	from := row[3:22] // "GPU-1, NVIDIA H200,"
	to := append([]byte(nil), from...)
	if v, ok := within(row[3:8], from, to); !ok || string(v) != "GPU-1" || &v[0] != &to[0] {
		t.Errorf("within(GPU-1) = %q, %v; want the copy's GPU-1", v, ok)
	}
	if v, ok := within(nil, from, to); !ok || v != nil {
		t.Errorf("within(nil) = %q, %v", v, ok)
	}
	for _, v := range [][]byte{[]byte("GPU-1"), row[23:29], row[0:5]} {
		if _, ok := within(v, from, to); ok {
			t.Errorf("within(%q) accepted a text outside the columns' bytes", v)
		}
	}
}
