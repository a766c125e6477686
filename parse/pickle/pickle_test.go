package pickle

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gpuleak/gpuleak/parse"
)

type vector struct {
	Name     string `json:"name"`
	Protocol int    `json:"protocol"`
	Pickle   string `json:"pickle"`
	Expect   any    `json:"expect"`
	Refused  string `json:"refused"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("../../testdata/pickle/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors []vector }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Vectors
}

// canon renders a Value in the canonical form gen_vectors.py writes.
func canon(v Value) any {
	switch v.Kind() {
	case None:
		return nil
	case Bool:
		b, _ := v.Bool()
		return b
	case Int, Uint, BigInt:
		return map[string]any{"int": v.String()}
	case Float:
		f, _ := v.Float64()
		return map[string]any{"float": pyRepr(f)}
	case Str:
		s, _ := v.Str()
		return map[string]any{"str": s}
	case Bytes:
		return map[string]any{"bytes": hex.EncodeToString([]byte(v.str()))}
	case List, Tuple, Set, FrozenSet:
		items := []any{}
		for _, it := range v.Container().Items {
			items = append(items, canon(it))
		}
		return map[string]any{v.Kind().String(): items}
	case Dict:
		pairs := []any{}
		it := v.Container().Items
		for i := 0; i < len(it); i += 2 {
			pairs = append(pairs, []any{canon(it[i]), canon(it[i+1])})
		}
		return map[string]any{"dict": pairs}
	}
	return "?" + v.Kind().String()
}

// pyRepr formats a float as Python's repr does, for the values in the vectors.
func pyRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if i := strings.Index(s, "e"); i >= 0 && !strings.Contains(s[:i], ".") && false {
		return s
	}
	// Python writes 1e+308 and 5e-324.
	return s
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name+"/p"+strconv.Itoa(v.Protocol), func(t *testing.T) {
			data, err := base64.StdEncoding.DecodeString(v.Pickle)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(bytes.NewReader(data), "vec", nil, Limits{})
			if v.Refused != "" {
				if !errors.Is(err, ErrCodeOpcode) || !strings.Contains(err.Error(), v.Refused) {
					t.Fatalf("want refusal of %s, got %v", v.Refused, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Round-trip the expectation through JSON so both sides hold the same types.
			want := v.Expect
			gotJSON, _ := json.Marshal(canon(got))
			var gotAny any
			json.Unmarshal(gotJSON, &gotAny)
			if !reflect.DeepEqual(gotAny, want) {
				wantJSON, _ := json.Marshal(want)
				t.Fatalf("got  %.300s\nwant %.300s", gotJSON, wantJSON)
			}
		})
	}
}

func TestSharedReferencesAlias(t *testing.T) {
	for _, v := range loadVectors(t) {
		if v.Name != "shared" || v.Protocol < 1 {
			continue
		}
		data, _ := base64.StdEncoding.DecodeString(v.Pickle)
		got, err := Decode(bytes.NewReader(data), "vec", nil, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		items := got.Container().Items
		if items[0].Container() != items[1].Container() {
			t.Errorf("protocol %d: memo reference did not alias the shared list", v.Protocol)
		}
	}
}

func TestRefusedOpcodesNameOpcodeAndOffset(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		op   string
		off  int64
	}{
		{"GLOBAL", []byte("\x80\x02cos\nsystem\n."), "GLOBAL", 2},
		{"STACK_GLOBAL", []byte("\x80\x04\x8c\x02os\x8c\x06system\x93."), "STACK_GLOBAL", 14},
		{"REDUCE", []byte("\x80\x02N)R."), "REDUCE", 4},
		{"BUILD", []byte("\x80\x02}}b."), "BUILD", 4},
		{"INST", []byte("(ios\nsystem\n."), "INST", 1},
		{"OBJ", []byte("(N)o."), "OBJ", 3},
		{"NEWOBJ", []byte("\x80\x02N)\x81."), "NEWOBJ", 4},
		{"NEWOBJ_EX", []byte("\x80\x04N)}\x92."), "NEWOBJ_EX", 5},
		{"PERSID", []byte("Pid\n."), "PERSID", 0},
		{"BINPERSID", []byte("\x80\x02NQ."), "BINPERSID", 3},
		{"EXT1", []byte("\x80\x02\x82\x01."), "EXT1", 2},
		{"after data", []byte("\x80\x04]\x94(K\x01K\x02e\x8c\x01x\x93."), "STACK_GLOBAL", 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(c.data), "evil.pickle", nil, Limits{})
			var pe *parse.Error
			if !errors.As(err, &pe) || !errors.Is(err, ErrCodeOpcode) {
				t.Fatalf("want a refusal, got %v", err)
			}
			if pe.Offset != c.off || !strings.Contains(err.Error(), c.op) || !strings.HasPrefix(err.Error(), "evil.pickle: byte offset") {
				t.Fatalf("error %q: want opcode %s at offset %d", err, c.op, c.off)
			}
		})
	}
}

func TestTruncatedAtEveryOffset(t *testing.T) {
	var data []byte
	for _, v := range loadVectors(t) {
		if v.Name == "snapshot_like" && v.Protocol == 4 {
			data, _ = base64.StdEncoding.DecodeString(v.Pickle)
		}
	}
	if len(data) == 0 {
		t.Fatal("vector missing")
	}
	for n := 0; n < len(data); n++ {
		_, err := Decode(bytes.NewReader(data[:n]), "cut", nil, Limits{})
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: want ErrTruncated, got %v", n, err)
		}
		var pe *parse.Error
		if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > int64(n) {
			t.Fatalf("cut at %d: bad position in %v", n, err)
		}
	}
}

func TestLyingLengthDoesNotAllocate(t *testing.T) {
	// BINUNICODE8 claiming 200 MiB, followed by 10 bytes.
	data := []byte{0x80, 4, 0x8d}
	data = binary.LittleEndian.AppendUint64(data, 200<<20)
	data = append(data, "0123456789"...)
	var before, after runtimeMem
	before.read()
	_, err := Decode(bytes.NewReader(data), "lie", nil, Limits{})
	after.read()
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("want truncation, got %v", err)
	}
	if grew := after.totalAlloc - before.totalAlloc; grew > 16<<20 {
		t.Fatalf("a lying length made the decoder allocate %d bytes", grew)
	}
	// Beyond the limit: refused before reading.
	data = []byte{0x80, 4, 0x8d}
	data = binary.LittleEndian.AppendUint64(data, 1<<62)
	if _, err := Decode(bytes.NewReader(data), "lie", nil, Limits{}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("want a limit error, got %v", err)
	}
}

func TestLongStringAcrossBuffer(t *testing.T) {
	s := strings.Repeat("abcdefgh", 100000) // 800 KB, larger than the read window
	data := []byte{0x80, 4, 'X'}
	data = binary.LittleEndian.AppendUint32(data, uint32(len(s)))
	data = append(data, s...)
	data = append(data, 'K', 7, 0x86, '.') // then a tuple (s, 7)
	got, err := Decode(bytes.NewReader(data), "long", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	items := got.Container().Items
	if str, _ := items[0].Str(); str != s {
		t.Fatal("long string mangled")
	}
	if n, _ := items[1].Int64(); n != 7 {
		t.Fatalf("value after the long string: %v", items[1])
	}
}

func TestIntegersBeyond64Bits(t *testing.T) {
	// LONG1 with 9 bytes: 2^64 (does not fit uint64) and 2^63 (fits uint64).
	two64 := []byte{0x80, 2, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, '.'}
	v, err := Decode(bytes.NewReader(two64), "big", nil, Limits{})
	if err != nil || v.Kind() != BigInt || v.String() != "18446744073709551616" {
		t.Fatalf("2^64: %v %v", v, err)
	}
	two63 := []byte{0x80, 2, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, '.'}
	v, err = Decode(bytes.NewReader(two63), "big", nil, Limits{})
	if u, ok := v.Uint64(); err != nil || !ok || u != 1<<63 {
		t.Fatalf("2^63: %v %v", v, err)
	}
	if _, ok := v.Int64(); ok {
		t.Fatal("2^63 must not read as an int64")
	}
	// LONG4 longer than the limit is refused without reading it.
	huge := []byte{0x80, 2, 0x8b}
	huge = binary.LittleEndian.AppendUint32(huge, 1<<30)
	if _, err := Decode(bytes.NewReader(huge), "big", nil, Limits{}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("want limit error, got %v", err)
	}
}

func TestGarbage(t *testing.T) {
	cases := map[string]string{
		"empty":           "",
		"text":            "hello world\n",
		"bad opcode":      "\x80\x04\xff",
		"bad protocol":    "\x80\x09N.",
		"unset memo":      "\x80\x02h\x05.",
		"append non-list": "\x80\x02}K\x01a.",
		"setitem on list": "\x80\x02]K\x01K\x02s.",
		"odd setitems":    "\x80\x02}(K\x01u.",
		"appends no mark": "\x80\x02]K\x01e.",
		"pop empty":       "\x80\x020.",
		"tuple2 short":    "\x80\x02K\x01\x86.",
		"stop empty":      "\x80\x02.",
		"mark then tuple": "\x80\x02K\x01(\x85.",
		"json":            `{"segments": []}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(in), "g", nil, Limits{})
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *parse.Error, got %v", err)
			}
		})
	}
}

// consumer consumes every element of lists tagged 1 and tags lists that are
// elements of the root list.
type consumer struct {
	d    *Decoder
	seen []int64
}

func (c *consumer) Tag(ct, parent *Container, key Value, index int64) {
	if parent == nil && ct.Kind == List {
		ct.Tag = 1
	}
}

func (c *consumer) Append(l *Container, index int64, item Value) (bool, error) {
	if l.Tag != 1 || item.Kind() != Dict {
		return false, nil
	}
	n, _ := item.Container().Get("n")
	v, _ := n.Int64()
	c.seen = append(c.seen, v)
	return true, nil
}

func TestHandlerConsumesAndMemoForgets(t *testing.T) {
	// [{"n": 0}, {"n": 1}, ...] then a reference to the first dict.
	var b bytes.Buffer
	b.WriteString("\x80\x04]\x94(")
	for i := 0; i < 2000; i++ {
		if i == 0 {
			b.WriteString("}\x94\x8c\x01n\x94M") // the key "n" is memo 2
		} else {
			b.WriteString("}\x94h\x02M")
		}
		b.Write(binary.LittleEndian.AppendUint16(nil, uint16(i)))
		b.WriteString("s")
		if i%1000 == 999 {
			b.WriteString("e(")
		}
	}
	b.WriteString("e")
	b.WriteString("j\x01\x00\x00\x00") // LONG_BINGET 1: the first dict
	b.WriteString("\x86.")
	c := &consumer{}
	d := NewDecoder(&b, "h", c, Limits{})
	c.d = d
	for {
		done, err := d.Run()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	if len(c.seen) != 2000 || c.seen[1999] != 1999 {
		t.Fatalf("handler saw %d elements", len(c.seen))
	}
	res := d.Result().Container().Items
	if l := res[0].Container(); len(l.Items) != 0 || l.Len() != 2000 {
		t.Fatalf("consumed list holds %d items, Len %d", len(l.Items), l.Len())
	}
	if res[1].Kind() != Ref {
		t.Fatalf("memo reference to a consumed dict gave %v, want a Ref", res[1])
	}
	// At most one APPENDS batch (1000 dicts) is held at once; without
	// releasing consumed dicts the memo would hold all 2000.
	if n := len(d.vals); n > 1100 {
		t.Fatalf("memo holds %d slots: consumed dicts were not released", n)
	}
}

// Long strings are read into buffers that grow (1 MiB, fourfold, then the
// exact size once a 64th has arrived): each size below takes a different
// path through that growth, from a reader that returns short reads, and
// must come back byte for byte, with the opcode after it intact.
func TestLongStringGrowth(t *testing.T) {
	for _, n := range []int{1<<20 + 1, 5<<20 + 3, 65<<20 + 7} {
		s := make([]byte, n)
		for i := range s {
			s[i] = byte('a' + i%23)
		}
		data := []byte{0x80, 4, 0x8d}
		data = binary.LittleEndian.AppendUint64(data, uint64(n))
		data = append(data, s...)
		data = append(data, 'K', 7, 0x86, '.')
		got, err := Decode(iotest.HalfReader(bytes.NewReader(data)), "long", nil, Limits{})
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		items := got.Container().Items
		if str, _ := items[0].Str(); str != string(s) {
			t.Fatalf("%d bytes: string mangled", n)
		}
		if k, _ := items[1].Int64(); k != 7 {
			t.Fatalf("%d bytes: value after the string: %v", n, items[1])
		}
		// Cut one byte short: a truncation error, not a partial string.
		if _, err := Decode(bytes.NewReader(data[:11+n-1]), "cut", nil, Limits{}); !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes cut short: %v", n, err)
		}
	}
}

// Equal memoized scalars share one memo slot (PyTorch memoizes a "N/A"
// str in every trace entry), and a PUT again at an index whose slot is
// shared changes that index alone.
func TestMemoSharesEqualScalars(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x04](")
	for i := 0; i < 1000; i++ { // "N/A" memoized 1000 times, as a trace does
		b.WriteString("\x8c\x03N/A\x94")
	}
	// memo 1 and memo 2 hold "N/A" in one slot; PUT "x" at memo 1 again.
	b.WriteString("\x8c\x01xq\x01")
	b.WriteString("h\x01h\x02h\x03e.")
	d := NewDecoder(&b, "same", nil, Limits{})
	for {
		done, err := d.Run()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	items := d.Result().Container().Items
	var got []string
	for _, v := range items[len(items)-3:] {
		s, _ := v.Str()
		got = append(got, s)
	}
	if want := []string{"x", "N/A", "N/A"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("memo 1, 2, 3 gave %q, want %q", got, want)
	}
	// Without sharing, the memo would hold a slot per "N/A" (1000).
	if n := len(d.vals); n > 10 {
		t.Fatalf("memo holds %d slots for 2 distinct strs", n)
	}
}

// A container a Handler replaced with a Ref equal to an earlier one (a
// frames list interned as a known stack) gives its memo slot back.
func TestReplaceSharesEqualRefs(t *testing.T) {
	// [[1], [1], [1], ...] where each inner list is memoized, then a GET of
	// the first inner list.
	var b bytes.Buffer
	b.WriteString("\x80\x04]\x94")
	for i := 0; i < 500; i++ {
		b.WriteString("]\x94K\x01aa")
	}
	b.WriteString("h\x01a.")
	c := &replacer{}
	d := NewDecoder(&b, "refs", c, Limits{})
	c.d = d
	v, err := decodeAll(d)
	if err != nil {
		t.Fatal(err)
	}
	items := v.Container().Items
	if len(items) != 501 {
		t.Fatalf("%d items, want 501", len(items))
	}
	if tag, id, ok := items[500].Ref(); !ok || tag != 7 || id != 1 {
		t.Fatalf("GET of a replaced list gave %v, want <ref 7:1>", items[500])
	}
	if n := len(d.vals); n > 10 {
		t.Fatalf("memo holds %d slots for 500 lists replaced by one Ref", n)
	}
}

// replacer replaces each list of the root list, as it is appended, with
// the Ref 7:1, and releases its items.
type replacer struct{ d *Decoder }

func (*replacer) Tag(c, parent *Container, key Value, index int64) {
	if c.Kind == List {
		c.Tag = 1 // Append is called for tagged lists
	}
}
func (r *replacer) Append(l *Container, index int64, item Value) (bool, error) {
	if c := item.Container(); c != nil && c.Kind == List && l != c {
		r.d.Release(c)
		r.d.Replace(c, RefValue(7, 1))
	}
	return false, nil
}

func decodeAll(d *Decoder) (Value, error) {
	for {
		done, err := d.Run()
		if err != nil {
			return Value{}, err
		}
		if done {
			return d.Result(), nil
		}
	}
}

// The memo index is kept in chunks: indices on both sides of a chunk's
// boundary, set by MEMOIZE, BINPUT and LONG_BINPUT, come back from GET.
func TestMemoAcrossChunks(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x04](")
	const n = 2*memoChunk + 10
	for i := 0; i < n; i++ {
		b.WriteString("J")
		b.Write(binary.LittleEndian.AppendUint32(nil, uint32(i)))
		b.WriteString("\x94") // MEMOIZE: memo i holds i
	}
	for _, i := range []uint32{0, memoChunk - 1, memoChunk, 2 * memoChunk, n - 1} {
		b.WriteString("j")
		b.Write(binary.LittleEndian.AppendUint32(nil, i))
	}
	b.WriteString("e.")
	v, err := Decode(&b, "chunks", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	items := v.Container().Items
	for k, want := range []int64{0, memoChunk - 1, memoChunk, 2 * memoChunk, n - 1} {
		if got, _ := items[n+k].Int64(); got != want {
			t.Errorf("GET %d gave %d", want, got)
		}
	}
}

// Refs with equal ids but different tags, or ids beyond the packed range,
// share a slot only with equal Refs.
func TestSameSlotTellsRefsApart(t *testing.T) {
	d := NewDecoder(bytes.NewReader(nil), "refs", nil, Limits{})
	refs := []Value{RefValue(1, 5), RefValue(2, 5), RefValue(1, 1<<47), RefValue(1, -1), RefValue(1, 1<<47|5)}
	slots := map[uint32]Value{}
	for round := 0; round < 2; round++ {
		for _, v := range refs {
			s, ok := d.sameSlot(v)
			if !ok {
				t.Fatalf("%v: no slot", v)
			}
			if w, seen := slots[s]; seen && w != v {
				t.Fatalf("%v and %v share slot %d", v, w, s)
			}
			slots[s] = v
			if !d.isShared(s) {
				t.Fatalf("%v: slot %d not known as shared", v, s)
			}
		}
	}
	if len(slots) != len(refs) {
		t.Fatalf("%d slots for %d distinct Refs", len(slots), len(refs))
	}
}

// TestLONG1Widths decodes LONG1 ints of every width from 1 to 8 bytes, in
// a list so that more bytes follow each (the 8-byte load) and as the last
// before STOP (the byte loop): each is the two's-complement int written.
func TestLONG1Widths(t *testing.T) {
	var want []int64
	for n := 1; n <= 8; n++ {
		top := int64(1) << (8*n - 1) // 2^(8n-1), wraps to MinInt64 for n = 8
		for _, v := range []int64{0, 1, -1, top - 1, -top, 0x0102030405060708 >> (64 - 8*n), -0x0102030405060708 >> (64 - 8*n)} {
			want = append(want, v)
		}
	}
	enc := func(b *bytes.Buffer, v int64, n int) {
		b.WriteByte(opLONG1)
		b.WriteByte(byte(n))
		for i := 0; i < n; i++ {
			b.WriteByte(byte(uint64(v) >> (8 * i)))
		}
	}
	var b bytes.Buffer
	b.WriteString("\x80\x02](")
	for i, v := range want {
		enc(&b, v, i/7+1)
	}
	b.WriteString("e.")
	got, err := Decode(bytes.NewReader(b.Bytes()), "long1", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	items := got.Container().Items
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, v := range want {
		if n, ok := items[i].Int64(); !ok || n != v {
			t.Errorf("LONG1 of %d bytes: got %v, want %d", i/7+1, items[i], v)
		}
	}
	// The last opcode before STOP: fewer than 10 bytes remain.
	for n := 1; n <= 8; n++ {
		v := int64(-3) >> 0
		var b bytes.Buffer
		b.WriteString("\x80\x02")
		enc(&b, v, n)
		b.WriteString(".")
		got, err := Decode(bytes.NewReader(b.Bytes()), "long1", nil, Limits{})
		if x, ok := got.Int64(); err != nil || !ok || x != v {
			t.Errorf("LONG1 of %d bytes at the end: %v, %v; want %d", n, got, err, v)
		}
	}
}

// TestRecycle: a container is taken back only when nothing else can reach
// it, and only once: a container pooled twice would be handed out to two
// later containers at the same time.
func TestRecycle(t *testing.T) {
	d := NewDecoder(bytes.NewReader(nil), "t", nil, Limits{})
	shared := &Container{Kind: List, shared: true}
	held := &Container{Kind: List, Items: make([]Value, 0, 4)}
	d.Recycle(shared)
	d.Recycle(held)
	if len(d.pool) != 0 {
		t.Fatalf("a shared container or one not released was recycled: pool %d", len(d.pool))
	}
	// One the memo still yields is left alone.
	memoized := &Container{Kind: List}
	if err := d.put(0, containerValue(List, memoized)); err != nil {
		t.Fatal(err)
	}
	d.Recycle(memoized)
	if len(d.pool) != 0 {
		t.Fatalf("a container the memo yields was recycled")
	}
	free := &Container{Kind: List}
	d.Recycle(free)
	d.Recycle(free)
	if len(d.pool) != 1 || d.pool[0] != free {
		t.Fatalf("pool %v after recycling one container twice, want it once", d.pool)
	}
	// Reused, then given item storage a released container left behind
	// when its first items come.
	d.spare.put(make([]Value, 0, 8))
	if err := d.pushContainer(List, nil); err != nil {
		t.Fatal(err)
	}
	c := d.stack[len(d.stack)-1].cont()
	if c != free || c.consumed {
		t.Fatalf("reused container %p (consumed %v), want %p", c, c.consumed, free)
	}
	d.room(c, 5)
	if cap(c.Items) != 8 || d.spare.held() != 0 {
		t.Errorf("room for 5 items: cap %d, %d spare storages left; want the spare storage of 8", cap(c.Items), d.spare.held())
	}
}

// TestSpareStore checks that released item storage is handed to a
// container that it can hold, whatever the order of release: a frames
// list of 46 items gets a released list's 64, not a dict's 20.
func TestSpareStore(t *testing.T) {
	var p spareStore
	for _, c := range []int{64, 20, 3, 1, 256, 257, 0} {
		p.put(make([]Value, min(2, c), c))
	}
	if p.held() != 5 {
		t.Fatalf("%d storages kept, want 5 (none empty or above %d)", p.held(), maxPooledItems)
	}
	for _, tc := range []struct{ need, want int }{{46, 64}, {17, 20}, {2, 3}, {1, 1}, {100, 256}, {1, 0}} {
		s := p.take(tc.need)
		if cap(s) != tc.want || len(s) != 0 {
			t.Errorf("take(%d): len %d cap %d, want an empty storage of cap %d", tc.need, len(s), cap(s), tc.want)
		}
	}
	// Bounded: past maxSpareClass storages of a class nothing more of
	// it is kept, while other classes still are.
	for range maxSpareClass + 10 {
		p.put(make([]Value, 0, 4))
	}
	p.put(make([]Value, 0, 64))
	if p.held() != maxSpareClass+1 || len(p.by[2]) != maxSpareClass || len(p.by[6]) != 1 {
		t.Errorf("%d storages kept (%d of cap 4, %d of 64), want the bound %d and one", p.held(), len(p.by[2]), len(p.by[6]), maxSpareClass)
	}
	p = spareStore{}
	// Every storage taken holds what was asked, for every need.
	for need := 1; need <= maxPooledItems; need++ {
		p.put(make([]Value, 0, need))
	}
	for need := maxPooledItems; need >= 1; need-- {
		if s := p.take(need); s != nil && cap(s) < need {
			t.Fatalf("take(%d) gave cap %d", need, cap(s))
		}
	}
	var d Decoder
	c := &Container{Kind: List, Items: []Value{IntValue(1)}}
	d.room(c, 45)
	if cap(c.Items) != 64 || len(c.Items) != 1 || c.Items[0] != IntValue(1) {
		t.Errorf("room(45) on one item: len %d cap %d, want the item kept and a new storage of 64", len(c.Items), cap(c.Items))
	}
}

// held counts the storages p keeps.
func (p *spareStore) held() int {
	n := 0
	for _, b := range p.by {
		n += len(b)
	}
	return n
}

// earlyHandler tags the root list (Early as set) and the dicts the stack
// shows are its elements, and records where the decoder was at each Append.
type earlyHandler struct {
	d     *Decoder
	early bool
	at    []int64 // the decoder's offset at each Append
	kinds []Kind
}

func (h *earlyHandler) Tag(c, parent *Container, key Value, index int64) {
	switch {
	case parent == nil && c.Kind == List:
		c.Tag, c.Early = 1, h.early
	case parent != nil && parent.Tag == 1 && c.Kind == Dict:
		c.Tag = 2
	}
}

func (h *earlyHandler) Append(l *Container, index int64, item Value) (bool, error) {
	if l.Tag != 1 {
		return false, nil
	}
	if int64(len(h.at)) != index {
		return false, fmt.Errorf("element %d appended as %d", len(h.at), index)
	}
	h.at = append(h.at, h.d.Offset())
	h.kinds = append(h.kinds, item.Kind())
	return true, nil
}

// A list marked Early gets each dict element when the next begins, before
// the APPENDS that closes the batch; the last at the APPENDS. Unmarked, all
// come at the APPENDS. A MARK that the list shares with a tuple's ("list
// MARK MARK dict dict dict dict TUPLE APPENDS") is no batch of the list's:
// the tuple is its one element. A MARK whose first elements were handed
// on may be closed only by APPENDS: hand-made pickles that drop them
// (POP_MARK) or build a tuple of them are refused, not misread.
func TestAppendEarly(t *testing.T) {
	dicts := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString("}\x94")
			if i == 0 {
				b.WriteString("\x8c\x01n\x94") // the key "n" is memo 2
			} else {
				b.WriteString("h\x02")
			}
			b.WriteString("K" + string(rune(i)) + "s")
		}
		return b.String()
	}
	batch := "\x80\x04]\x94(" + dicts(4) + "e."
	tuple := "\x80\x04]\x94((" + dicts(4) + "te."
	// Hand-made: Python reads a list of one dict (POP_MARK drops three),
	// and a list of one tuple (APPEND, no batch MARK).
	popMark := "\x80\x04]\x94(" + dicts(3) + "1(" + dicts(1) + "e."
	tupleAppend := "\x80\x04]\x94(" + dicts(2) + "ta."
	appendsAt := int64(strings.LastIndexByte(batch, 'e'))
	for _, tc := range []struct {
		name, in string
		early    bool
		kinds    []Kind
		beforeAt int // how many Appends come before the APPENDS opcode
		wantErr  string
	}{
		{"early", batch, true, []Kind{Dict, Dict, Dict, Dict}, 3, ""},
		{"not early", batch, false, []Kind{Dict, Dict, Dict, Dict}, 0, ""},
		{"tuple", tuple, true, []Kind{Tuple}, 0, ""},
		{"pop mark", popMark, true, nil, 0, "POP_MARK closes a MARK whose first elements were already stored"},
		{"pop mark, not early", popMark, false, []Kind{Dict}, 0, ""},
		{"tuple appended", tupleAppend, true, nil, 0, "TUPLE closes a MARK whose first elements were already stored"},
		{"tuple appended, not early", tupleAppend, false, []Kind{Tuple}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &earlyHandler{early: tc.early}
			h.d = NewDecoder(strings.NewReader(tc.in), "e", h, Limits{})
			for {
				done, err := h.d.Run()
				if tc.wantErr != "" {
					if err == nil && done {
						t.Fatalf("read, want an error %q", tc.wantErr)
					}
					if err != nil {
						if !strings.Contains(err.Error(), tc.wantErr) {
							t.Fatalf("error %v, want %q", err, tc.wantErr)
						}
						return
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
			}
			if !slices.Equal(h.kinds, tc.kinds) {
				t.Fatalf("appended %v, want %v", h.kinds, tc.kinds)
			}
			before := 0
			for _, off := range h.at {
				if off < appendsAt {
					before++
				}
			}
			if tc.in == batch && before != tc.beforeAt {
				t.Errorf("%d of %d appended before the APPENDS (offsets %v, APPENDS at %d), want %d", before, len(h.at), h.at, appendsAt, tc.beforeAt)
			}
			if l := h.d.Result().Container(); l.Len() != int64(len(tc.kinds)) || len(l.Items) != 0 {
				t.Errorf("list Len %d, %d items kept", l.Len(), len(l.Items))
			}
		})
	}
}

// A list a record scan read has no container (Record.List): its String,
// which error messages print, names its kind and does not panic.
func TestStringOfScannedList(t *testing.T) {
	if got := (Value{kind: List}).String(); got != "<list>" {
		t.Errorf("got %q", got)
	}
}
