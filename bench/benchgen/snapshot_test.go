package benchgen

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The scaled snapshot is the object scale_snapshot.py builds: every trace
// holds exactly N entries; entry i is source entry i%L of copy i/L, its
// time_us shifted by copy*span and its addr by copy<<40 (an "oom"'s addr
// not shifted); every other value, frames lists included, is the very
// object of the source's entry (one object, written once, then got from
// the memo); the other keys are the source's.
func TestScaleSnapshotObject(t *testing.T) {
	src, err := os.ReadFile("../../testdata/pytorch/leak_train_loop.pickle")
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeBytes(t, src)
	trace := orig.get("device_traces").(*pyList).items[0].(*pyList).items
	L := int64(len(trace))
	if L < 100 {
		t.Fatalf("source trace of %d entries: too short to test copies", L)
	}
	t0 := trace[0].(*pyDict).get("time_us").(int64)
	span := trace[L-1].(*pyDict).get("time_us").(int64) - t0 + 1
	for _, n := range []int64{1, L - 1, L, 2*L + L/2} {
		var out bytes.Buffer
		if _, err := ScaleSnapshot(bytes.NewReader(src), &out, n); err != nil {
			t.Fatal(err)
		}
		got := decodeBytes(t, out.Bytes())
		if len(got.items) != len(orig.items) {
			t.Fatalf("n=%d: %d top-level items, want %d", n, len(got.items)/2, len(orig.items)/2)
		}
		scaled := got.get("device_traces").(*pyList).items[0].(*pyList).items
		if int64(len(scaled)) != n {
			t.Fatalf("n=%d: %d entries", n, len(scaled))
		}
		frames := map[int64]any{}
		for i, x := range scaled {
			k, j := int64(i)/L, int64(i)%L
			e, want := x.(*pyDict), trace[j].(*pyDict)
			if len(e.items) != len(want.items) {
				t.Fatalf("n=%d entry %d: %d items, want %d", n, i, len(e.items), len(want.items))
			}
			if got, w := e.get("time_us").(int64), want.get("time_us").(int64)+k*span; got != w {
				t.Fatalf("n=%d entry %d: time_us %d, want %d", n, i, got, w)
			}
			wa := want.get("addr").(int64)
			if want.get("action").(*pyStr).s != "oom" {
				wa += k << 40
			}
			if got := e.get("addr").(int64); got != wa {
				t.Fatalf("n=%d entry %d: addr %#x, want %#x", n, i, got, wa)
			}
			if e.get("action").(*pyStr).s != want.get("action").(*pyStr).s || e.get("size") != want.get("size") {
				t.Fatalf("n=%d entry %d: action or size differs", n, i)
			}
			f := e.get("frames")
			if k == 0 {
				frames[j] = f
			} else if frames[j] != f {
				t.Fatalf("n=%d entry %d: its frames list is not copy 0's object", n, i)
			}
		}
	}
}

// For small N, the bytes are those of bench/scale_snapshot.py (CPython's
// pickler), when python3 is here.
func TestScaleSnapshotAsPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	src := "../../testdata/pytorch/leak_train_loop.pickle"
	dir := t.TempDir()
	for _, n := range []string{"1", "999", "1000", "1001", "3000", "4567"} {
		want := filepath.Join(dir, "py"+n)
		if out, err := exec.Command(py, "../scale_snapshot.py", src, want, "--entries", n).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		w, _ := os.ReadFile(want)
		var got bytes.Buffer
		in, _ := os.Open(src)
		var entries int64
		for _, c := range n {
			entries = entries*10 + int64(c-'0')
		}
		if _, err := ScaleSnapshot(in, &got, entries); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if !bytes.Equal(got.Bytes(), w) {
			i := 0
			for i < len(w) && i < got.Len() && w[i] == got.Bytes()[i] {
				i++
			}
			t.Errorf("N=%s: %d bytes, Python's %d; first difference at offset %d", n, got.Len(), len(w), i)
		}
	}
}

// Bad sources give an error with an offset, never a panic.
func TestScaleSnapshotBadSource(t *testing.T) {
	src, err := os.ReadFile("../../testdata/pytorch/leak_train_loop.pickle")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":                 nil,
		"truncated":             src[:len(src)/2],
		"not a dict":            {0x80, 4, 'K', 1, '.'},
		"bad get":               {0x80, 4, 'h', 9, '.'},
		"setitems without mark": {0x80, 4, '}', 'u', '.'},
		"reduce":                {0x80, 4, 'R', '.'},
		"no traces":             {0x80, 4, '}', '.'},
	}
	for name, b := range cases {
		_, err := ScaleSnapshot(bytes.NewReader(b), &bytes.Buffer{}, 10)
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if name != "not a dict" && name != "no traces" && !strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: %v: no offset", name, err)
		}
	}
}

func decodeBytes(t *testing.T, b []byte) *pyDict {
	t.Helper()
	v, err := decodePickle(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(*pyDict)
	if !ok {
		t.Fatalf("root is a %T", v)
	}
	return d
}

// A key set again keeps its first place and takes the new value, in a
// small dict (scanned) as in a big one (indexed), as in a Python dict.
func TestDecodeDictKeys(t *testing.T) {
	for _, n := range []int{10, 200} {
		b := []byte{0x80, 4, '}', '('}
		for i := 0; i < n; i++ {
			b = append(b, 'K', byte(i), 'K', byte(i))
		}
		b = append(b, 'u', '(', 'K', 5, 'K', 99, 'K', 255, 'K', 1, 'u', '.')
		v, err := decodePickle(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		d := v.(*pyDict)
		if len(d.items) != 2*(n+1) {
			t.Fatalf("n=%d: %d keys, want %d", n, len(d.items)/2, n+1)
		}
		if d.items[10] != int64(5) || d.items[11] != int64(99) {
			t.Errorf("n=%d: key 5 at %v -> %v, want in place 5 -> 99", n, d.items[10], d.items[11])
		}
		if d.items[2*n] != int64(255) || d.items[2*n+1] != int64(1) {
			t.Errorf("n=%d: the new key is not last", n)
		}
	}
}
