package nvml

import (
	"bytes"
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
		hd := plainRowHeaders[h]
		r := NewReader(bytes.NewReader(nil), "fuzz")
		defer r.Release()
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
