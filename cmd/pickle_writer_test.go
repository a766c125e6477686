package cmd

import (
	"bytes"
	"encoding/binary"
)

// pickleWriter writes a protocol-2 pickle from Go, so that tests can make
// large snapshots without python. Only the opcodes a snapshot needs:
// dicts, lists, str, int (BININT, LONG1), memo PUT/GET.
type pickleWriter struct{ bytes.Buffer }

func newPickleWriter() *pickleWriter {
	w := &pickleWriter{}
	w.Write([]byte{0x80, 2}) // PROTO 2
	return w
}

func (w *pickleWriter) str(s string) {
	w.WriteByte('X') // BINUNICODE
	w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
	w.WriteString(s)
}

func (w *pickleWriter) int(n int64) {
	if n >= -1<<31 && n < 1<<31 {
		w.WriteByte('J') // BININT
		w.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(n))))
		return
	}
	w.Write([]byte{0x8a, 8}) // LONG1, 8 bytes little-endian two's complement
	w.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)))
}

// dict writes a dict of the pairs kv: keys are strings, values string,
// int, int64 or func() writing the value.
func (w *pickleWriter) dict(kv ...any) {
	w.WriteString("}(") // EMPTY_DICT, MARK
	for i := 0; i < len(kv); i += 2 {
		w.str(kv[i].(string))
		switch v := kv[i+1].(type) {
		case string:
			w.str(v)
		case int:
			w.int(int64(v))
		case int64:
			w.int(v)
		case func():
			v()
		default:
			panic("pickleWriter: unsupported value")
		}
	}
	w.WriteByte('u') // SETITEMS
}

// list writes a list of n items, each written by item(i).
func (w *pickleWriter) list(n int, item func(i int)) {
	w.WriteByte(']') // EMPTY_LIST
	for i := 0; i < n; i++ {
		item(i)
		w.WriteByte('a') // APPEND
	}
}

// batchList writes a list of n items, each written by item(i), appended
// together (MARK, items, APPENDS): the compact form CPython writes.
func (w *pickleWriter) batchList(n int, item func(i int)) {
	w.WriteString("](") // EMPTY_LIST, MARK
	for i := 0; i < n; i++ {
		item(i)
	}
	w.WriteByte('e') // APPENDS
}

// put stores the top of the stack in memo slot i (LONG_BINPUT).
func (w *pickleWriter) put(i uint32) {
	w.WriteByte('r')
	w.Write(binary.LittleEndian.AppendUint32(nil, i))
}

// get pushes memo slot i (BINGET, or LONG_BINGET past 255).
func (w *pickleWriter) get(i uint32) {
	if i < 256 {
		w.Write([]byte{'h', byte(i)})
		return
	}
	w.WriteByte('j')
	w.Write(binary.LittleEndian.AppendUint32(nil, i))
}

func (w *pickleWriter) stop() []byte {
	w.WriteByte('.')
	return w.Bytes()
}
