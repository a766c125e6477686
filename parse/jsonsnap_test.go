package parse

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

// transcode returns the pickle jsonSnapshot makes of doc.
func transcode(t *testing.T, doc string) []byte {
	t.Helper()
	r, ok := jsonSnapshot(bufio.NewReader(strings.NewReader(doc)))
	if !ok {
		t.Fatalf("%.60q: not recognised as a snapshot's JSON", doc)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The pickle of a snapshot's JSON, opcode by opcode: integers as BININT
// or LONG1's fewest two's complement bytes (Python's encode_long), floats
// as BINFLOAT, strings as UTF-8 BINUNICODE. Python's pickle.loads of the
// transcoder's output equalled json.loads of its input for these values,
// 2**70 and -2**63, -0.0, and lists and dicts of 2,500 items (checked
// when this was written).
func TestJSONSnapshotPickle(t *testing.T) {
	doc := `{"segments": [], "device_traces": [[]], "n": [-1, 2147483648, -1099511627776, 1.5, "é", true, false, null]}`
	str := func(s string) []byte { return append([]byte{'X', byte(len(s)), 0, 0, 0}, s...) }
	var want []byte
	for _, b := range [][]byte{
		{0x80, 2, '}', '('},
		str("segments"), {']', '(', 'e'},
		str("device_traces"), {']', '(', ']', '(', 'e', 'e'},
		str("n"), {']', '('},
		{'J', 0xff, 0xff, 0xff, 0xff},
		{0x8a, 5, 0, 0, 0, 0x80, 0},
		{0x8a, 6, 0, 0, 0, 0, 0, 0xff},
		{'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0},
		str("é"),
		{0x88, 0x89, 'N', 'e', 'u', '.'},
	} {
		want = append(want, b...)
	}
	if got := transcode(t, doc); !bytes.Equal(got, want) {
		t.Errorf("pickle\n% x\nwant\n% x", got, want)
	}
}

// A list is written in batches of a thousand items, as Python's pickler
// writes them: MARK ... APPENDS per batch.
func TestJSONSnapshotBatches(t *testing.T) {
	doc := `{"device_traces": [[]], "segments": [` + strings.TrimSuffix(strings.Repeat("null, ", 2001), ", ") + `]}`
	got := transcode(t, doc)
	// Each batch of nulls ends with APPENDS: N e, three times.
	if n := bytes.Count(got, []byte{'N', 'e'}); n != 3 {
		t.Errorf("%d batches, want 3", n)
	}
	if !bytes.HasSuffix(got, []byte{'(', 'N', 'e', 'u', '.'}) {
		t.Errorf("ends % x, want the last batch of one item, SETITEMS, STOP", got[len(got)-8:])
	}
}

// JSON that is not a snapshot's is left alone: memory_stats() JSON, a
// Kineto trace, a list.
func TestJSONSnapshotNotOthers(t *testing.T) {
	for _, doc := range []string{
		`{"active.all.allocated": 10, "segment.all.current": 2}`,
		`{"schemaVersion": 1, "traceEvents": [{"name": "[memory]"}]}`,
		`[[1, 2], [3, 4]]`,
		`{"segments": "a word"}`,
		`[{"device": 0, "name": "cuda:0"}]`,
	} {
		if _, ok := jsonSnapshot(bufio.NewReader(strings.NewReader(doc))); ok {
			t.Errorf("%q read as a snapshot", doc)
		}
	}
}
