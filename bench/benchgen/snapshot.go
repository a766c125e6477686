package benchgen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"unicode/utf8"
)

// ScaleSnapshot writes to w a PyTorch memory snapshot pickle whose every
// device trace holds entries trace entries, made from the snapshot read
// from r (a pickle, gzip or not) the way bench/scale_snapshot.py makes it:
// the trace repeated, copy k shifted in time by k times the original's
// span (last time_us - first time_us + 1, microseconds) and in address by
// k<<40 (except the addr of "oom" entries); frames lists, strings and
// every other object shared between copies, as PyTorch shares them;
// segments and the other keys kept. The output is the pickle CPython's
// pickle.dump(..., protocol=4) writes for the same object (one memo, each
// entry dict memoized, MEMOIZE / BINGET / LONG_BINGET, APPENDS batches of
// 1,000, FRAME opcodes of 64 KiB), byte for byte.
//
// It streams: after the first copy of a trace, an entry is written from a
// template of a few dozen bytes, so memory is bounded by the source's
// size, whatever entries is. It returns the bytes written. Errors: a
// source that is not a protocol 2-5 pickle of dicts, lists, tuples,
// strings, bytes, numbers, booleans and None (with its offset), a time or
// address that leaves int64 when shifted, or w's write error.
func ScaleSnapshot(r io.Reader, w io.Writer, entries int64) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, err
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	root, err := decodePickle(br)
	if err != nil {
		return 0, err
	}
	snap, ok := root.(*pyDict)
	if !ok {
		return 0, errors.New("snapshot: the pickle's root is not a dict")
	}
	traces, ok := snap.get("device_traces").(*pyList)
	if !ok {
		return 0, errors.New("snapshot: no device_traces list")
	}
	// snap["device_traces"] = out: a new list of new lists.
	out := &pyList{}
	e := &encoder{w: bufio.NewWriterSize(w, 1<<20), scaled: map[*pyList]bool{}, entries: entries, ints: make([]byte, 0, 32)}
	for _, t := range traces.items {
		tl, ok := t.(*pyList)
		if !ok {
			return 0, errors.New("snapshot: a device trace is not a list")
		}
		// A fresh list, even for a trace seen twice, as out.append makes.
		c := &pyList{items: tl.items}
		e.scaled[c] = true
		out.items = append(out.items, c)
	}
	snap.set("device_traces", out)
	if err := e.dump(snap); err != nil {
		return e.n, err
	}
	return e.n, nil
}

// The source's objects. Identity is the pointer: an object the source
// reaches twice (a memo get) is one object, written once and then got.
type (
	pyStr struct {
		s    string
		memo int64 // memo index + 1; 0 when not memoized yet
	}
	pyBytes struct {
		b    []byte
		memo int64
	}
	pyDict struct {
		items []any // key, value, key, value...
		memo  int64
		index map[any]int // key (string or int64) -> position in items, once big
	}
	pyList struct {
		items []any
		memo  int64
	}
	pyTuple struct {
		items []any
		memo  int64
	}
	pyMark struct{}
)

func (d *pyDict) get(k string) any {
	for i := 0; i+1 < len(d.items); i += 2 {
		if s, ok := d.items[i].(*pyStr); ok && s.s == k {
			return d.items[i+1]
		}
	}
	return nil
}

func (d *pyDict) set(k string, v any) {
	for i := 0; i+1 < len(d.items); i += 2 {
		if s, ok := d.items[i].(*pyStr); ok && s.s == k {
			d.items[i+1] = v
			return
		}
	}
	d.items = append(d.items, &pyStr{s: k}, v)
}

// decodePickle reads one pickle of plain data into pyX objects (ints as
// int64 or *big.Int, floats as float64, None as nil). Strings of one
// code point below 256 and the empty string are one object per value,
// as CPython caches them.
func decodePickle(r *bufio.Reader) (any, error) {
	var (
		stack []any
		marks []int
		memo  = map[int64]any{}
		off   int64
		buf   []byte
		small = map[string]*pyStr{}
	)
	read := func(n int) ([]byte, error) {
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("pickle: offset %d: truncated: %w", off, err)
		}
		off += int64(n)
		return b, nil
	}
	readUint := func(n int) (uint64, error) { // little-endian, n bytes
		b, err := read(n)
		if err != nil {
			return 0, err
		}
		var x uint64
		for i := n - 1; i >= 0; i-- {
			x = x<<8 | uint64(b[i])
		}
		return x, nil
	}
	pop := func() any {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v
	}
	popMark := func() ([]any, error) {
		if len(marks) == 0 {
			return nil, fmt.Errorf("pickle: offset %d: no mark", off)
		}
		m := marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		items := append([]any(nil), stack[m:]...)
		stack = stack[:m]
		return items, nil
	}
	str := func(b []byte) *pyStr {
		if len(b) == 0 || utf8.RuneCount(b) == 1 {
			if c, _ := utf8.DecodeRune(b); len(b) == 0 || c < 256 {
				if s, ok := small[string(b)]; ok {
					return s
				}
				s := &pyStr{s: string(b)}
				small[s.s] = s
				return s
			}
		}
		return &pyStr{s: string(b)}
	}
	for {
		at := off
		op, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("pickle: offset %d: truncated before STOP", off)
		}
		off++
		need := func(n int) error {
			if len(stack) < n || (len(marks) > 0 && len(stack)-marks[len(marks)-1] < n) {
				return fmt.Errorf("pickle: offset %d: opcode 0x%02x on a short stack", at, op)
			}
			return nil
		}
		switch op {
		case 0x80: // PROTO
			if _, err := read(1); err != nil {
				return nil, err
			}
		case 0x95: // FRAME
			if _, err := readUint(8); err != nil {
				return nil, err
			}
		case '.': // STOP
			if len(stack) != 1 {
				return nil, fmt.Errorf("pickle: offset %d: STOP with %d objects on the stack", at, len(stack))
			}
			return stack[0], nil
		case '(':
			marks = append(marks, len(stack))
		case '0': // POP
			if err := need(1); err != nil {
				return nil, err
			}
			pop()
		case '1': // POP_MARK
			if _, err := popMark(); err != nil {
				return nil, err
			}
		case '}':
			stack = append(stack, &pyDict{})
		case ']':
			stack = append(stack, &pyList{})
		case ')':
			stack = append(stack, &pyTuple{})
		case 'd', 'l', 't': // DICT, LIST, TUPLE
			items, err := popMark()
			if err != nil {
				return nil, err
			}
			switch op {
			case 'd':
				if len(items)%2 != 0 {
					return nil, fmt.Errorf("pickle: offset %d: DICT with an odd number of items", at)
				}
				stack = append(stack, &pyDict{items: items})
			case 'l':
				stack = append(stack, &pyList{items: items})
			default:
				stack = append(stack, &pyTuple{items: items})
			}
		case 0x85, 0x86, 0x87: // TUPLE1-3
			n := int(op-0x85) + 1
			if err := need(n); err != nil {
				return nil, err
			}
			t := &pyTuple{items: append([]any(nil), stack[len(stack)-n:]...)}
			stack = append(stack[:len(stack)-n], t)
		case 'a', 's': // APPEND, SETITEM
			n := 2
			if op == 's' {
				n = 3
			}
			if err := need(n); err != nil {
				return nil, err
			}
			items := stack[len(stack)-n+1:]
			if err := addTo(stack[len(stack)-n], items); err != nil {
				return nil, fmt.Errorf("pickle: offset %d: %w", at, err)
			}
			stack = stack[:len(stack)-n+1]
		case 'e', 'u': // APPENDS, SETITEMS
			items, err := popMark()
			if err != nil {
				return nil, err
			}
			if len(stack) == 0 {
				return nil, fmt.Errorf("pickle: offset %d: nothing to add to", at)
			}
			if err := addTo(stack[len(stack)-1], items); err != nil {
				return nil, fmt.Errorf("pickle: offset %d: %w", at, err)
			}
		case 'K', 'M', 'J': // BININT1, BININT2, BININT
			n := argWidth(op)
			x, err := readUint(n)
			if err != nil {
				return nil, err
			}
			if op == 'J' {
				stack = append(stack, int64(int32(x)))
			} else {
				stack = append(stack, int64(x))
			}
		case 0x8a, 0x8b: // LONG1, LONG4
			n, err := readUint(argWidth(op))
			if err != nil {
				return nil, err
			}
			if n > 1<<20 {
				return nil, fmt.Errorf("pickle: offset %d: a %d-byte long", at, n)
			}
			b, err := read(int(n))
			if err != nil {
				return nil, err
			}
			stack = append(stack, decodeLong(b))
		case 'G': // BINFLOAT
			b, err := read(8)
			if err != nil {
				return nil, err
			}
			stack = append(stack, math.Float64frombits(binary.BigEndian.Uint64(b)))
		case 'N':
			stack = append(stack, nil)
		case 0x88:
			stack = append(stack, true)
		case 0x89:
			stack = append(stack, false)
		case 0x8c, 'X', 0x8d, 'C', 'B', 0x8e: // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINBYTES, BINBYTES, BINBYTES8
			n, err := readUint(argWidth(op))
			if err != nil {
				return nil, err
			}
			if n > 1<<30 {
				return nil, fmt.Errorf("pickle: offset %d: a %d-byte string", at, n)
			}
			b, err := read(int(n))
			if err != nil {
				return nil, err
			}
			if op == 'C' || op == 'B' || op == 0x8e {
				stack = append(stack, &pyBytes{b: append([]byte(nil), b...)})
			} else {
				stack = append(stack, str(b))
			}
		case 'q', 'r', 0x94: // BINPUT, LONG_BINPUT, MEMOIZE
			i := int64(len(memo))
			if op != 0x94 {
				x, err := readUint(argWidth(op))
				if err != nil {
					return nil, err
				}
				i = int64(x)
			}
			if err := need(1); err != nil {
				return nil, err
			}
			memo[i] = stack[len(stack)-1]
		case 'h', 'j': // BINGET, LONG_BINGET
			x, err := readUint(argWidth(op))
			if err != nil {
				return nil, err
			}
			v, ok := memo[int64(x)]
			if !ok {
				return nil, fmt.Errorf("pickle: offset %d: memo %d never put", at, x)
			}
			stack = append(stack, v)
		default:
			return nil, fmt.Errorf("pickle: offset %d: opcode 0x%02x not read here (plain data only)", at, op)
		}
	}
}

func addTo(c any, items []any) error {
	switch c := c.(type) {
	case *pyList:
		c.items = append(c.items, items...)
	case *pyDict:
		if len(items)%2 != 0 {
			return errors.New("SETITEMS with an odd number of items")
		}
		// A key set twice keeps its first place, as in a Python dict.
		for i := 0; i < len(items); i += 2 {
			if j, ok := c.find(items[i]); ok {
				c.items[j+1] = items[i+1]
				continue
			}
			if c.index != nil {
				if k, ok := hashKey(items[i]); ok {
					c.index[k] = len(c.items)
				}
			}
			c.items = append(c.items, items[i], items[i+1])
		}
	default:
		return fmt.Errorf("add to a %T", c)
	}
	return nil
}

// find returns the position in d.items of key k: by scanning while d is
// small, by an index of its string and int keys once it is not, so that
// building a big dict stays linear.
func (d *pyDict) find(k any) (int, bool) {
	if d.index == nil && len(d.items) >= 64 {
		d.index = map[any]int{}
		for j := 0; j < len(d.items); j += 2 {
			if h, ok := hashKey(d.items[j]); ok {
				if _, dup := d.index[h]; !dup {
					d.index[h] = j
				}
			}
		}
	}
	if h, ok := hashKey(k); ok && d.index != nil {
		j, ok := d.index[h]
		return j, ok
	}
	for j := 0; j < len(d.items); j += 2 {
		if sameKey(d.items[j], k) {
			return j, true
		}
	}
	return 0, false
}

// hashKey is k as a Go map key when it is a string or an int.
func hashKey(k any) (any, bool) {
	switch k := k.(type) {
	case *pyStr:
		return k.s, true
	case int64:
		return k, true
	}
	return nil, false
}

// sameKey reports whether two keys are equal in Python, for the key
// kinds a snapshot uses (strings and ints); other keys by identity.
func sameKey(a, b any) bool {
	switch a := a.(type) {
	case *pyStr:
		b, ok := b.(*pyStr)
		return ok && a.s == b.s
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	}
	return a == b
}

// argWidth is the byte width of opcode op's length or index argument
// (BININT1/2/4, LONG1/4, the str and bytes opcodes, PUTs and GETs).
func argWidth(op byte) int {
	switch op {
	case 'K', 0x8a, 0x8c, 'C', 'q', 'h':
		return 1
	case 'M':
		return 2
	case 'J', 0x8b, 'X', 'B', 'r', 'j':
		return 4
	case 0x8d, 0x8e:
		return 8
	}
	return 0
}

func decodeLong(b []byte) any {
	if len(b) == 0 {
		return int64(0)
	}
	if len(b) <= 8 {
		var x uint64
		for i := len(b) - 1; i >= 0; i-- {
			x = x<<8 | uint64(b[i])
		}
		sh := uint(64 - 8*len(b))
		return int64(x<<sh) >> sh
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	x := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

const (
	frameTarget = 64 << 10 // CPython's _FRAME_SIZE_TARGET
	frameMin    = 4        // and _FRAME_SIZE_MIN
	batchSize   = 1000
)

// encoder is CPython's C pickler at protocol 4, for plain data.
type encoder struct {
	w       *bufio.Writer
	n       int64 // bytes written
	frame   []byte
	memo    int64 // objects memoized so far
	err     error
	scaled  map[*pyList]bool // the traces to scale
	entries int64
	saves   [][]byte // fromTemplate's, reused
	ints    []byte
}

func (e *encoder) dump(v any) error {
	e.out([]byte{0x80, 4})
	e.save(v)
	e.frame = append(e.frame, '.')
	e.commit()
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.err
}

func (e *encoder) out(b []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(b)
	e.n += int64(len(b))
}

// commit writes the frame in progress: framed when it holds at least
// frameMin bytes, bare otherwise.
func (e *encoder) commit() {
	if len(e.frame) >= frameMin {
		var h [9]byte
		h[0] = 0x95
		binary.LittleEndian.PutUint64(h[1:], uint64(len(e.frame)))
		e.out(h[:])
	}
	e.out(e.frame)
	e.frame = e.frame[:0]
}

// boundary is CPython's opcode boundary, at the start of every save.
func (e *encoder) boundary() {
	if len(e.frame) >= frameTarget {
		e.commit()
	}
}

func (e *encoder) memoize() {
	e.frame = append(e.frame, 0x94)
	e.memo++
}

func appendGet(b []byte, memo int64) []byte {
	i := memo - 1
	if i < 256 {
		return append(b, 'h', byte(i))
	}
	return binary.LittleEndian.AppendUint32(append(b, 'j'), uint32(i))
}

func (e *encoder) save(v any) {
	e.boundary()
	e.saveBody(v)
}

func (e *encoder) saveBody(v any) {
	switch v := v.(type) {
	case nil:
		e.frame = append(e.frame, 'N')
	case bool:
		if v {
			e.frame = append(e.frame, 0x88)
		} else {
			e.frame = append(e.frame, 0x89)
		}
	case int64:
		e.frame = appendInt(e.frame, v)
	case *big.Int:
		e.frame = appendLong(e.frame, v)
	case float64:
		e.frame = binary.BigEndian.AppendUint64(append(e.frame, 'G'), math.Float64bits(v))
	case *pyStr:
		if v.memo > 0 {
			e.frame = appendGet(e.frame, v.memo)
			return
		}
		e.bytes(0x8c, 'X', 0x8d, []byte(v.s))
		v.memo = e.memo + 1
		e.memoize()
	case *pyBytes:
		if v.memo > 0 {
			e.frame = appendGet(e.frame, v.memo)
			return
		}
		e.bytes('C', 'B', 0x8e, v.b)
		v.memo = e.memo + 1
		e.memoize()
	case *pyDict:
		if v.memo > 0 {
			e.frame = appendGet(e.frame, v.memo)
			return
		}
		e.frame = append(e.frame, '}')
		v.memo = e.memo + 1
		e.memoize()
		e.setItems(v.items, e.save)
	case *pyList:
		if v.memo > 0 {
			e.frame = appendGet(e.frame, v.memo)
			return
		}
		e.frame = append(e.frame, ']')
		v.memo = e.memo + 1
		e.memoize()
		if e.scaled[v] {
			e.scaleTrace(v.items)
			return
		}
		e.appends(int64(len(v.items)), func(i int64) { e.save(v.items[i]) })
	case *pyTuple:
		if v.memo > 0 {
			e.frame = appendGet(e.frame, v.memo)
			return
		}
		n := len(v.items)
		if n == 0 {
			e.frame = append(e.frame, ')')
			return
		}
		if n > 3 {
			e.frame = append(e.frame, '(')
		}
		for _, x := range v.items {
			e.save(x)
		}
		if v.memo > 0 { // reached through its own items
			if n > 3 {
				e.frame = append(e.frame, '1')
			} else {
				e.frame = append(e.frame, bytes.Repeat([]byte{'0'}, n)...)
			}
			e.frame = appendGet(e.frame, v.memo)
			return
		}
		if n > 3 {
			e.frame = append(e.frame, 't')
		} else {
			e.frame = append(e.frame, 0x85+byte(n-1))
		}
		v.memo = e.memo + 1
		e.memoize()
	default:
		e.err = fmt.Errorf("snapshot: cannot write a %T", v)
	}
}

// bytes writes a string or bytes opcode with its length: a payload of
// frameTarget bytes or more goes outside any frame, as CPython writes it.
func (e *encoder) bytes(op1, op4, op8 byte, b []byte) {
	var h []byte
	switch n := uint64(len(b)); {
	case n < 256:
		h = []byte{op1, byte(n)}
	case n <= math.MaxUint32:
		h = binary.LittleEndian.AppendUint32([]byte{op4}, uint32(n))
	default:
		h = binary.LittleEndian.AppendUint64([]byte{op8}, n)
	}
	if len(b) >= frameTarget {
		e.commit()
		e.out(h)
		e.out(b)
		return
	}
	e.frame = append(append(e.frame, h...), b...)
}

// setItems is CPython's batch_dict_exact: one item as SETITEM, else
// batches of batchSize in MARK ... SETITEMS (with an empty last batch
// when the count is a multiple of batchSize).
func (e *encoder) setItems(items []any, save func(any)) {
	n := len(items) / 2
	if n == 0 {
		return
	}
	if n == 1 {
		save(items[0])
		save(items[1])
		e.frame = append(e.frame, 's')
		return
	}
	for i := 0; ; {
		e.frame = append(e.frame, '(')
		b := 0
		for ; i < n && b < batchSize; i, b = i+1, b+1 {
			save(items[2*i])
			save(items[2*i+1])
		}
		e.frame = append(e.frame, 'u')
		if b < batchSize {
			return
		}
	}
}

// appends is CPython's batch_list_exact: one item as APPEND, else batches
// of batchSize in MARK ... APPENDS.
func (e *encoder) appends(n int64, save func(int64)) {
	if n == 0 {
		return
	}
	if n == 1 {
		save(0)
		e.frame = append(e.frame, 'a')
		return
	}
	for i := int64(0); i < n; {
		e.frame = append(e.frame, '(')
		for b := 0; i < n && b < batchSize; i, b = i+1, b+1 {
			save(i)
		}
		e.frame = append(e.frame, 'e')
		if e.err != nil {
			return
		}
	}
}

func appendInt(b []byte, x int64) []byte {
	switch {
	case x >= 0 && x <= 0xff:
		return append(b, 'K', byte(x))
	case x >= 0 && x <= 0xffff:
		return append(b, 'M', byte(x), byte(x>>8))
	case x >= math.MinInt32 && x <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, 'J'), uint32(x))
	}
	// LONG1 of the fewest bytes that hold x in two's complement.
	n := 1
	for ; n < 8 && (x >= 1<<(8*n-1) || x < -1<<(8*n-1)); n++ {
	}
	b = append(b, 0x8a, byte(n))
	for i := 0; i < n; i++ {
		b = append(b, byte(x>>(8*i)))
	}
	return b
}

// appendLong is LONG1 / LONG4 with pickle's encode_long: the fewest
// little-endian two's complement bytes.
func appendLong(b []byte, x *big.Int) []byte {
	if x.IsInt64() {
		if v := x.Int64(); v >= math.MinInt32 && v <= math.MaxInt32 {
			return appendInt(b, v)
		}
	}
	nb := x.BitLen()>>3 + 1
	enc := make([]byte, nb)
	t := new(big.Int).Set(x)
	if x.Sign() < 0 {
		t.Add(t, new(big.Int).Lsh(big.NewInt(1), uint(8*nb)))
	}
	be := t.FillBytes(make([]byte, nb))
	for i := range be {
		enc[nb-1-i] = be[i]
	}
	if x.Sign() < 0 && nb > 1 && enc[nb-1] == 0xff && enc[nb-2]&0x80 != 0 {
		enc = enc[:nb-1]
	}
	if len(enc) < 256 {
		b = append(b, 0x8a, byte(len(enc)))
	} else {
		b = binary.LittleEndian.AppendUint32(append(b, 0x8b), uint32(len(enc)))
	}
	return append(b, enc...)
}

// Template ops: an entry of a later copy is its saves in order, each one
// of these then its operand.
const (
	tplRaw  = iota // uvarint length, then the bytes of one save
	tplTime        // varint time_us; written shifted by k*span
	tplAddr        // varint addr; written shifted by k<<40
)

// scaleTrace writes the items of a scaled trace (its EMPTY_LIST and
// MEMOIZE are written): entries copies of trace's entries, the first copy
// by the generic save (which memoizes every object it meets), each later
// one from a template made right after the first copy's entry, when all
// its objects are memoized, so that its saves are memo gets or scalars.
func (e *encoder) scaleTrace(trace []any) {
	L := int64(len(trace))
	if L == 0 {
		return
	}
	entry := func(j int64) (*pyDict, error) {
		d, ok := trace[j].(*pyDict)
		if !ok {
			return nil, fmt.Errorf("snapshot: trace entry %d is a %T, not a dict", j, trace[j])
		}
		return d, nil
	}
	first, err := entry(0)
	if err != nil {
		e.err = err
		return
	}
	last, err := entry(L - 1)
	if err != nil {
		e.err = err
		return
	}
	t0, _ := first.get("time_us").(int64)
	t1, _ := last.get("time_us").(int64)
	span := t1 - t0 + 1
	tpl := make([][]byte, min(L, e.entries))
	var scratch []byte
	e.appends(e.entries, func(i int64) {
		k, j := i/L, i%L
		if k == 0 {
			d, err := entry(j)
			if err != nil {
				e.err = err
				return
			}
			// e2 = dict(e): a new dict of the same items.
			e.boundary()
			e.frame = append(e.frame, '}')
			e.memoize()
			e.setItems(d.items, e.save)
			tpl[j], scratch = e.template(d, scratch)
			return
		}
		e.fromTemplate(tpl[j], k, span)
	})
}

// template returns the saves of entry d once all its objects are
// memoized, with time_us and addr (but the addr of an "oom") marked for
// shifting.
func (e *encoder) template(d *pyDict, scratch []byte) ([]byte, []byte) {
	var t []byte
	oom := false
	if a, ok := d.get("action").(*pyStr); ok && a.s == "oom" {
		oom = true
	}
	saved := e.frame
	for i, x := range d.items {
		if i%2 == 1 {
			if k, ok := d.items[i-1].(*pyStr); ok {
				if v, ok := x.(int64); ok && (k.s == "time_us" || k.s == "addr" && !oom) {
					op := byte(tplTime)
					if k.s == "addr" {
						op = tplAddr
					}
					t = binary.AppendVarint(append(t, op), v)
					continue
				}
			}
		}
		memo := e.memo
		e.frame = scratch[:0]
		e.saveBody(x)
		scratch = e.frame
		if e.memo != memo {
			e.err = errors.New("snapshot: an entry's object was not memoized by its first copy")
		}
		t = append(binary.AppendUvarint(append(t, tplRaw), uint64(len(scratch))), scratch...)
	}
	e.frame = saved
	return t, scratch
}

func (e *encoder) fromTemplate(t []byte, k, span int64) {
	// The saves, their bytes in t or (a shifted int) in e.ints, which
	// holds at most two ints of 9 bytes: a dict has one time_us and one addr.
	saves, ints := e.saves[:0], e.ints[:0]
	for p := 0; p < len(t); {
		op := t[p]
		p++
		if op == tplRaw {
			n, w := binary.Uvarint(t[p:])
			p += w
			saves = append(saves, t[p:p+int(n)])
			p += int(n)
			continue
		}
		v, w := binary.Varint(t[p:])
		p += w
		x, ok := shift(v, k, span, op)
		if !ok {
			e.err = fmt.Errorf("snapshot: copy %d shifts %d out of int64", k, v)
			return
		}
		at := len(ints)
		ints = appendInt(ints, x)
		saves = append(saves, ints[at:])
	}
	e.saves, e.ints = saves, ints
	e.boundary()
	e.frame = append(e.frame, '}')
	e.memoize()
	n := len(saves) / 2
	if n == 1 {
		e.put(saves[0])
		e.put(saves[1])
		e.frame = append(e.frame, 's')
		return
	}
	for i := 0; ; {
		e.frame = append(e.frame, '(')
		b := 0
		for ; i < n && b < batchSize; i, b = i+1, b+1 {
			e.put(saves[2*i])
			e.put(saves[2*i+1])
		}
		e.frame = append(e.frame, 'u')
		if b < batchSize {
			return
		}
	}
}

// put writes the bytes of one save.
func (e *encoder) put(b []byte) {
	e.boundary()
	e.frame = append(e.frame, b...)
}

// shift returns v shifted for copy k: by k*span for a time (op tplTime),
// by k<<40 for an address; false when that leaves int64.
func shift(v, k, span int64, op byte) (int64, bool) {
	var d int64
	if op == tplTime {
		if span < 0 || (span > 0 && k > math.MaxInt64/span) {
			return 0, false
		}
		d = k * span
	} else {
		if k > math.MaxInt64>>40 {
			return 0, false
		}
		d = k << 40
	}
	x := v + d
	return x, x >= v
}
