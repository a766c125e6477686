package pickle

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// Kind is the Python type of a Value.
type Kind uint8

// Kinds of values a data-only pickle can hold.
const (
	None      Kind = iota
	Bool           // True, False
	Int            // int that fits int64
	Uint           // int in [2^63, 2^64)
	BigInt         // int beyond 64 bits; its decimal text is in String()
	Float          // float (IEEE 754 double)
	Str            // str (UTF-8); also Python 2 str read as Latin-1
	Bytes          // bytes, bytearray
	List           // list
	Tuple          // tuple
	Dict           // dict
	Set            // set
	FrozenSet      // frozenset
	// Ref is a stand-in a Handler put in place of a container it consumed
	// or replaced (see Decoder.Replace); RefTag and RefID say what it stands for.
	Ref
	mark // internal: a MARK on the stack
)

var kindNames = [...]string{"None", "bool", "int", "int", "int", "float", "str", "bytes", "list", "tuple", "dict", "set", "frozenset", "ref", "mark"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one Python value. Scalars are held inline; containers point to
// a shared *Container, so that memo references alias as they do in Python.
// The zero Value is None. A Value is 24 bytes: the decoder moves millions.
type Value struct {
	kind Kind
	tag  uint16         // Ref tag
	n    int64          // Bool (0/1), Int, Uint (bits), Float (bits), Ref id; the length of Str, Bytes, BigInt
	p    unsafe.Pointer // the bytes of Str, Bytes, BigInt (decimal text); the *Container of a container
}

// strValue holds s's bytes without copying them.
func strValue(k Kind, s string) Value {
	if len(s) == 0 {
		return Value{kind: k}
	}
	return Value{kind: k, n: int64(len(s)), p: unsafe.Pointer(unsafe.StringData(s))}
}

// str returns the text of a Str, Bytes or BigInt value.
func (v Value) str() string {
	if v.p == nil || v.n == 0 {
		return ""
	}
	switch v.kind {
	case Str, Bytes, BigInt:
		return unsafe.String((*byte)(v.p), v.n)
	}
	return ""
}

func containerValue(k Kind, c *Container) Value { return Value{kind: k, p: unsafe.Pointer(c)} }

// cont returns the container of a container value, else nil.
func (v Value) cont() *Container {
	switch v.kind {
	case List, Tuple, Dict, Set, FrozenSet:
		return (*Container)(v.p)
	}
	return nil
}

// Container is a list, tuple, dict, set or frozenset. Dict Items hold keys
// and values alternately: key0, value0, key1, value1, ... in insertion
// order; a key set twice appears twice and the later value wins (use Get).
type Container struct {
	Kind  Kind
	Items []Value
	// Tag and ID are the Handler's to set: a label (0 when untagged) and,
	// say, the id of what the container was converted to.
	Tag uint16
	ID  int64
	// Offset is the byte offset of the opcode that created the container.
	Offset int64
	// Early, set by a Handler in Tag on a list it tagged, has the list's
	// dict elements handed to Append as soon as the next one begins,
	// rather than at the APPENDS that closes their batch (see
	// Decoder.appendEarly).
	Early bool

	n        int64  // elements added, consumed ones included
	memo     int64  // memo index + 1; 0 when not memoized
	key      uint64 // the list cache's key of its elements when it had keyN (fillList)
	keyN     int64
	consumed bool
	shared   bool // fetched from the memo or duplicated: may be referenced elsewhere
}

// Len is the number of elements added to a list, tuple or set, including
// those a Handler consumed, or the number of key/value pairs of a dict.
func (c *Container) Len() int64 {
	if c.Kind == Dict {
		return int64(len(c.Items) / 2)
	}
	return c.n
}

// ListKey identifies the elements of a list the decoder keyed as it read
// them (a list of memo gets of scalars and Refs, in the shape Python's
// picklers write): two lists of one Decoder with the same nonzero key hold
// the same elements, as Record.ListKey's do (the keys are one space), so
// what a Handler made of one it may take for the other. It is 0 for a
// list not keyed, and for one that has had elements added since.
func (c *Container) ListKey() uint64 {
	if c == nil || c.key == 0 || c.keyN != c.n || int64(len(c.Items)) != c.n {
		return 0
	}
	return c.key
}

// Consumed reports whether a Handler consumed this container (it was not
// stored in its parent, and its Items may have been released).
func (c *Container) Consumed() bool { return c.consumed }

// Get returns the value of a dict's str key and whether it is present.
// The last setting of a repeated key wins, as in Python.
func (c *Container) Get(key string) (Value, bool) {
	if c == nil {
		return Value{}, false
	}
	for i := len(c.Items) - 2; i >= 0; i -= 2 {
		if k := c.Items[i]; k.kind == Str && k.str() == key {
			return c.Items[i+1], true
		}
	}
	return Value{}, false
}

// Constructors for scalar values.
func IntValue(n int64) Value     { return Value{kind: Int, n: n} }
func StrValue(s string) Value    { return strValue(Str, s) }
func BoolValue(b bool) Value     { return Value{kind: Bool, n: b2i(b)} }
func FloatValue(f float64) Value { return Value{kind: Float, n: int64(math.Float64bits(f))} }

// RefValue returns a Ref standing for something a Handler keeps elsewhere.
func RefValue(tag uint16, id int64) Value { return Value{kind: Ref, tag: tag, n: id} }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.kind }

// IsNone reports whether v is None.
func (v Value) IsNone() bool { return v.kind == None }

// Int64 returns v as an int64 when it is a bool or an int that fits.
func (v Value) Int64() (int64, bool) {
	switch v.kind {
	case Int, Bool:
		return v.n, true
	}
	return 0, false
}

// Uint64 returns v as a uint64 when it is a non-negative int below 2^64.
func (v Value) Uint64() (uint64, bool) {
	switch v.kind {
	case Int, Bool:
		if v.n >= 0 {
			return uint64(v.n), true
		}
	case Uint:
		return uint64(v.n), true
	}
	return 0, false
}

// Float64 returns v as a float64 when it is a float, an int or a bool.
func (v Value) Float64() (float64, bool) {
	switch v.kind {
	case Float:
		return math.Float64frombits(uint64(v.n)), true
	case Int, Bool:
		return float64(v.n), true
	case Uint:
		return float64(uint64(v.n)), true
	}
	return 0, false
}

// Bool returns v as a bool when it is a bool.
func (v Value) Bool() (bool, bool) { return v.n != 0, v.kind == Bool }

// Str returns the text of a str value.
func (v Value) Str() (string, bool) {
	if v.kind != Str {
		return "", false
	}
	return v.str(), true
}

// Container returns the container of a list, tuple, dict, set or frozenset.
func (v Value) Container() *Container { return v.cont() }

// Ref returns the tag and id of a Ref value.
func (v Value) Ref() (tag uint16, id int64, ok bool) { return v.tag, v.n, v.kind == Ref }

// String renders v briefly, for error messages.
func (v Value) String() string {
	switch v.kind {
	case None:
		return "None"
	case Bool:
		if v.n != 0 {
			return "True"
		}
		return "False"
	case Int:
		return strconv.FormatInt(v.n, 10)
	case Uint:
		return strconv.FormatUint(uint64(v.n), 10)
	case BigInt:
		return v.str()
	case Float:
		return strconv.FormatFloat(math.Float64frombits(uint64(v.n)), 'g', -1, 64)
	case Str:
		if s := v.str(); len(s) > 40 {
			return strconv.Quote(s[:40] + "...")
		}
		return strconv.Quote(v.str())
	case Bytes:
		return fmt.Sprintf("b<%d bytes>", v.n)
	case List, Tuple, Dict, Set, FrozenSet:
		if v.cont() == nil { // a list a record scan read (Record.List)
			return fmt.Sprintf("<%s>", v.kind)
		}
		return fmt.Sprintf("<%s of %d>", v.kind, v.cont().Len())
	case Ref:
		return fmt.Sprintf("<ref %d:%d>", v.tag, v.n)
	}
	return v.kind.String()
}
