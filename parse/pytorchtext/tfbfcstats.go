package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// TensorFlow's BFC allocator prints its statistics before the error of an
// allocation it could not make (bfc_allocator.cc, BFCAllocator::
// DumpMemoryLog, TF 1.x and 2.x):
//
//	2018-06-08 17:26:00.908082: I tensorflow/core/common_runtime/bfc_allocator.cc:680] Stats:
//	Limit:                 10625279591
//	InUse:                  7350513920
//	MaxInUse:               7464792320
//	...
//
// Limit is the bytes the allocator may take of the GPU (the memory TF's
// GPU device was given: per_process_gpu_memory_fraction, memory_limit,
// or what was free at start-up), InUse the bytes of its chunks in use,
// both exact.

// bfcStatsRe matches the statistics' first line; bfcStatRe one of its
// Limit and InUse lines (group 1 the name, group 2 the bytes).
var (
	bfcStatsRe = lazyre.New(`bfc_allocator\.cc:\d+\] Stats:\s*$`)
	bfcStatRe  = lazyre.New(`^\s*(Limit|InUse):\s+(\d{1,19})\s*$`)
)

// bfcStatsSpan is how many lines after "Stats:" its Limit and InUse lines
// are looked for, and bfcStatsReach how many lines after them the OOM
// they belong to may come (the allocator's map of chunks, one line, and
// the op's record or the exception's traceback come between).
const (
	bfcStatsSpan  = 4
	bfcStatsReach = 40
)

// bfcStats is the BFC allocator's statistics the reader saw last: at is
// the input line of "Stats:", limit and inUse -1 until read.
type bfcStats struct {
	at, last     int64
	limit, inUse int64
}

// seeBFCStats reads line, the input's line n, as part of the BFC
// allocator's statistics (see bfcStatsRe).
func (r *Reader) seeBFCStats(line string, n int64) {
	if bfcStatsRe.MatchString(line) {
		r.bfcStats = &bfcStats{at: n, last: n, limit: -1, inUse: -1}
		return
	}
	s := r.bfcStats
	if s == nil || n-s.at > bfcStatsSpan {
		return
	}
	m := bfcStatRe.FindStringSubmatch(line)
	if m == nil {
		return
	}
	v, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return
	}
	if m[1] == "Limit" {
		s.limit = v
	} else {
		s.inUse = v
	}
	s.last = n
}

// takeBFCStats gives m, TensorFlow's OOM of a tensor on a GPU at input
// line n, the BFC allocator's statistics printed just before it: Allowed
// its Limit, Allocated its InUse (bytes), where m has none. They are
// used once.
func (r *Reader) takeBFCStats(m *Message, n int64) {
	s := r.bfcStats
	if s == nil || m.Generation != GenTF || m.Host || s.limit < 0 || s.inUse < 0 || n < s.last || n-s.last > bfcStatsReach {
		return
	}
	r.bfcStats = nil
	if m.Allowed < 0 && m.Allocated < 0 {
		m.Allowed, m.Allocated = s.limit, s.inUse
	}
}

// tfShapeRe matches the tensor TensorFlow's OOM names: "OOM when
// allocating tensor with shape[16,1,892800] and type float on ...";
// group 1 the dimensions, group 2 the type.
var tfShapeRe = lazyre.New(`\bshape\[([0-9, ]*)\] and type ([a-z0-9_]+)\b`)

// tfTypeBytes are the bytes of one element of TensorFlow's types, by the
// names its messages print (DataTypeString).
var tfTypeBytes = map[string]int64{
	"float": 4, "double": 8, "half": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
	"int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1, "complex64": 8, "complex128": 16,
	"qint8": 1, "quint8": 1, "qint16": 2, "quint16": 2, "qint32": 4,
	"float8_e5m2": 1, "float8_e4m3fn": 1,
}

// TFTensorBytes returns the bytes of the tensor a TensorFlow OOM message
// names (text): its shape's elements times its type's size, with the
// shape and type as printed; bytes is -1 when the text names no shape
// and type gpuleak knows the size of (a string or resource tensor, a cut
// message) or the product passes 2^62. TensorFlow's BFC allocator rounds
// a request up to a multiple of 256 bytes.
func TFTensorBytes(text string) (bytes int64, shape, dtype string) {
	m := tfShapeRe.FindStringSubmatch(text)
	if m == nil {
		return -1, "", ""
	}
	size, ok := tfTypeBytes[m[2]]
	if !ok {
		return -1, "", ""
	}
	n := size
	if strings.TrimSpace(m[1]) == "" {
		return n, m[1], m[2] // a scalar
	}
	for _, d := range strings.Split(m[1], ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
		if err != nil || v < 0 {
			return -1, "", ""
		}
		if v != 0 && n > (1<<62)/v {
			return -1, "", ""
		}
		n *= v
	}
	return n, m[1], m[2]
}

// completeCutTF gives m, TensorFlow's exception for an op's failure,
// the op's record's words (from) where m's were cut inside them (the
// exception's line ends within the shape the record prints whole).
func completeCutTF(m *Message, from Message) {
	if len(m.Text) < len(from.Text) && strings.HasPrefix(from.Text, m.Text) && strings.HasPrefix(m.Text, "OOM when allocating tensor") {
		m.Text = from.Text
	}
}
