package kineto

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// winTrace is a trace as Kineto wrote it on Windows before mid-2023
// (pytorch/kineto#617, pytorch/pytorch#98432): python_function names
// hold Windows paths with their backslashes unescaped. "\U", "\w" and
// "\p" are no JSON escapes; "torch\nn\functional.py" is made only of
// valid ones (a newline, a form feed), which would misname the frame.
// The cpu_op's name holds a real escape, and the user_annotation a raw
// tab (a control character, no JSON either).
const winTrace = `{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "python_function", "name": "C:\Users\me\work\train.py(12): step", "pid": 1, "tid": 1, "ts": 10, "dur": 100, "args": {"Python id": 1, "Python parent id": null}},
{"ph": "X", "cat": "python_function", "name": "torch\nn\functional.py(2233): linear", "pid": 1, "tid": 1, "ts": 11, "dur": 50, "args": {"Python id": 2, "Python parent id": 1}},
{"ph": "X", "cat": "cpu_op", "name": "caf\u00e9\n", "pid": 1, "tid": 1, "ts": 12, "dur": 10, "args": {}},
{"ph": "X", "cat": "user_annotation", "name": "step	one", "pid": 1, "tid": 1, "ts": 12, "dur": 10, "args": {}},
{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 13, "args": {"Addr": 4096, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2097152, "Device Type": 1, "Device Id": 0}}
]}`

// TestWindowsUnescapedNames: the trace is read whole, each raw string's
// backslashes read as '/' (as later Kineto writes them), the escapes of
// a valid string kept, the tab read as a space, and warnings count the
// two strings repaired and the control character. Read a byte at a time
// too, so that no string's decision depends on where a Read ends.
func TestWindowsUnescapedNames(t *testing.T) {
	for _, one := range []bool{false, true} {
		var r io.Reader = strings.NewReader(winTrace)
		if one {
			r = iotest.OneByteReader(r)
		}
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		k := NewReader(r, "win.json", WithAllocator(alloc))
		var names []string
		var mem int64
		for k.Next() {
			rec := k.RecordBatch()
			switch k.Table() {
			case TableSpans:
				col := rec.Column(SpName).(*array.String)
				for i := 0; i < col.Len(); i++ {
					names = append(names, col.Value(i))
				}
			case TableMemory:
				mem += rec.NumRows()
			}
		}
		if err := k.Err(); err != nil {
			t.Fatalf("one byte at a time %v: %v", one, err)
		}
		want := []string{"C:/Users/me/work/train.py(12): step", "torch/nn/functional.py(2233): linear", "café\n", "step one"}
		if strings.Join(names, "|") != strings.Join(want, "|") || mem != 1 {
			t.Errorf("one byte at a time %v: names %q, %d memory events; want %q, 1", one, names, mem, want)
		}
		ws := strings.Join(k.Metadata().Warnings.Strings(), "\n")
		if !strings.Contains(ws, "2 strings held backslashes") || !strings.Contains(ws, "1 control character") {
			t.Errorf("warnings %q: want the 2 strings and the control character counted", ws)
		}
		k.Release()
		alloc.AssertSize(t, 0)
	}
}

// TestRawStringsKeepOffsets: a repair never changes the length, so an
// error after a repaired string names the same byte offset as in the
// trace written with '/' (as later Kineto writes it).
func TestRawStringsKeepOffsets(t *testing.T) {
	errAt := func(name string) string {
		trace := `{"traceEvents": [{"ph": "X", "cat": "x", "name": "` + name + `", "ts": 1},` + "\n" +
			`{"ph": "i", "name": "[memory]", "ts": 5, "args": {"Addr": 1}}]}`
		k := NewReader(strings.NewReader(trace), "t.json")
		defer k.Release()
		for k.Next() {
		}
		if k.Err() == nil {
			t.Fatalf("%s: no error", name)
		}
		return k.Err().Error()
	}
	raw, slash := errAt(`C:\a\b\nn(1): f`), errAt(`C:/a/b/nn(1): f`)
	if raw != slash || !strings.Contains(raw, "without Bytes") {
		t.Errorf("raw %q, written with '/' %q: want the same error", raw, slash)
	}
}

// A Windows trace saved again by a JSON writer (Python's json.dump) has
// its backslashes escaped, each a pair: each is one backslash, read as
// '/' like the raw ones, not as two; and no string counts as repaired.
func TestWindowsEscapedNames(t *testing.T) {
	trace := `{"traceEvents": [
{"ph": "X", "cat": "python_function", "name": "C:\\Users\\me\\train.py(12): step", "pid": 1, "tid": 1, "ts": 10, "dur": 100, "args": {}},
{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 13, "args": {"Addr": 4096, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2097152, "Device Type": 1, "Device Id": 0}}
]}`
	k := NewReader(strings.NewReader(trace), "resaved.json")
	var names []string
	for k.Next() {
		if k.Table() == TableSpans {
			col := k.RecordBatch().Column(SpName).(*array.String)
			for i := 0; i < col.Len(); i++ {
				names = append(names, col.Value(i))
			}
		}
	}
	if err := k.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "C:/Users/me/train.py(12): step"; len(names) != 1 || names[0] != want {
		t.Errorf("names %q, want [%q]", names, want)
	}
	if k.raw.Repaired != 0 {
		t.Errorf("%d strings counted as written raw, want 0", k.raw.Repaired)
	}
}
