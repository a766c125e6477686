package parse

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
)

// A snapshot saved with json.dump (json.dump(torch.cuda.memory._snapshot(),
// f), or a pickle loaded and dumped again) holds what the pickle holds:
// the snapshot is dicts, lists, strings, integers, floats, booleans and
// None, which JSON keeps exactly (Python's json writes integers in full
// and floats by repr, which round-trips). Open hands on its pickle,
// transcoded token by token as it is read (jsonPickler), so that the
// snapshot's reader reads it as it reads the one _dump_snapshot writes.

// jsonSnapshotStart is the start of a snapshot as json.dump writes it: its
// first key "segments" (then "device_traces"), or "device_traces" first
// (a dict reordered, jq -S); or the list of segments alone that
// torch.cuda.memory_snapshot() returns.
var jsonSnapshotStart = regexp.MustCompile(`^\s*(\{\s*"(segments|device_traces)"\s*:\s*\[|\[\s*\{\s*"device"\s*:)`)

// jsonSnapshotLook bounds how far into the input its first segment's or
// trace entry's telling key is looked for.
const jsonSnapshotLook = 64 << 10

// jsonSnapshotKey is a key that only a snapshot's segment or trace entry
// has, among the first bytes.
var jsonSnapshotKey = regexp.MustCompile(`"(total_size|allocated_size|active_size|segment_type)"\s*:|"device_traces"\s*:\s*\[\s*(\[\s*(\{\s*"action"\s*:|\])|\])`)

// jsonSnapshot returns a reader of the pickle of the snapshot br holds as
// JSON, and true; br unchanged and false when br's content is not one.
func jsonSnapshot(br *bufio.Reader) (*bufio.Reader, bool) {
	head, _ := br.Peek(jsonSnapshotLook)
	if !jsonSnapshotStart.Match(head) || !jsonSnapshotKey.Match(head) {
		return br, false
	}
	dec := json.NewDecoder(br)
	dec.UseNumber()
	return bufio.NewReaderSize(&jsonPickler{dec: dec}, 256<<10), true
}

// Pickle opcodes (protocol 2), as Python's pickle module names them.
const (
	opProto     = 0x80
	opStop      = '.'
	opMark      = '('
	opEmptyDict = '}'
	opSetItems  = 'u'
	opEmptyList = ']'
	opAppends   = 'e'
	opBinUni    = 'X'
	opBinInt    = 'J'
	opLong1     = 0x8a
	opBinFloat  = 'G'
	opNone      = 'N'
	opTrue      = 0x88
	opFalse     = 0x89
)

// pickleBatch is how many items one MARK ... APPENDS or SETITEMS holds, as
// Python's pickler batches them (a list of a million trace entries is a
// thousand batches, not one mark a million items deep).
const pickleBatch = 1000

// jsonPickler reads JSON tokens from dec and writes the pickle of the
// value they make: a dict as EMPTY_DICT then batches of MARK, key, value,
// ..., SETITEMS; a list as EMPTY_LIST then batches of MARK, items,
// APPENDS; a string as BINUNICODE; an integer as BININT or LONG1; a float
// as BINFLOAT; true, false and null as NEWTRUE, NEWFALSE and NONE.
type jsonPickler struct {
	dec     *json.Decoder
	buf     bytes.Buffer
	started bool
	done    bool
	err     error
	// open is the containers being written: a dict's count is of its
	// keys and values, a list's of its items, in the current batch.
	open []container
}

type container struct {
	dict bool
	n    int
}

func (j *jsonPickler) Read(p []byte) (int, error) {
	for j.buf.Len() < len(p) && !j.done && j.err == nil {
		j.step()
	}
	if j.buf.Len() > 0 {
		return j.buf.Read(p)
	}
	if j.err != nil {
		return 0, j.err
	}
	return 0, io.EOF
}

// step writes one token's opcodes.
func (j *jsonPickler) step() {
	if !j.started {
		j.buf.Write([]byte{opProto, 2})
		j.started = true
	}
	tok, err := j.dec.Token()
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		j.err = fmt.Errorf("the snapshot's JSON ends at byte offset %d of it, inside its value (cut short, or not written whole): %w", j.dec.InputOffset(), io.ErrUnexpectedEOF)
		return
	case err != nil:
		// Python's json writes NaN and Infinity, which JSON has not.
		j.err = fmt.Errorf("the snapshot's JSON is not JSON at byte offset %d of it: %w", j.dec.InputOffset(), err)
		return
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{', '[':
			if t == '{' {
				j.buf.WriteByte(opEmptyDict)
			} else {
				j.buf.WriteByte(opEmptyList)
			}
			j.buf.WriteByte(opMark)
			j.open = append(j.open, container{dict: t == '{'})
			return
		default: // '}' or ']': the decoder has checked they match
			c := j.open[len(j.open)-1]
			j.open = j.open[:len(j.open)-1]
			if c.dict {
				j.buf.WriteByte(opSetItems)
			} else {
				j.buf.WriteByte(opAppends)
			}
		}
	case string:
		j.buf.WriteByte(opBinUni)
		j.buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(t))))
		j.buf.WriteString(t)
	case json.Number:
		if err := j.number(t); err != nil {
			j.err = fmt.Errorf("at byte offset %d of the snapshot's JSON: %w", j.dec.InputOffset(), err)
			return
		}
	case bool:
		if t {
			j.buf.WriteByte(opTrue)
		} else {
			j.buf.WriteByte(opFalse)
		}
	case nil:
		j.buf.WriteByte(opNone)
	}
	j.item()
}

// item counts a value written into the innermost container (a key counts
// too), closing its batch at pickleBatch items and opening the next; at
// the top level, the value is the whole snapshot: STOP.
func (j *jsonPickler) item() {
	if len(j.open) == 0 {
		j.buf.WriteByte(opStop)
		j.done = true
		return
	}
	c := &j.open[len(j.open)-1]
	c.n++
	limit := pickleBatch
	if c.dict {
		limit *= 2 // a key and its value
	}
	if c.n == limit {
		if c.dict {
			j.buf.WriteByte(opSetItems)
		} else {
			j.buf.WriteByte(opAppends)
		}
		j.buf.WriteByte(opMark)
		c.n = 0
	}
}

// number writes an integer (BININT where it fits 32 bits, else LONG1's
// two's complement, little-endian) or a float (BINFLOAT, big-endian).
func (j *jsonPickler) number(n json.Number) error {
	s := string(n)
	if !bytes.ContainsAny([]byte(s), ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return fmt.Errorf("number %q", s)
		}
		if i.IsInt64() && i.Int64() >= math.MinInt32 && i.Int64() <= math.MaxInt32 {
			j.buf.WriteByte(opBinInt)
			j.buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(i.Int64()))))
			return nil
		}
		b := twosComplementLE(i)
		if len(b) > 255 {
			return fmt.Errorf("integer %q has more than 255 bytes", s)
		}
		j.buf.WriteByte(opLong1)
		j.buf.WriteByte(byte(len(b)))
		j.buf.Write(b)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return err // out of range is ±Inf or 0, as Python reads it
	}
	j.buf.WriteByte(opBinFloat)
	j.buf.Write(binary.BigEndian.AppendUint64(nil, math.Float64bits(f)))
	return nil
}

// twosComplementLE is i in the fewest little-endian bytes of two's
// complement, as pickle's LONG1 holds it.
func twosComplementLE(i *big.Int) []byte {
	n := i.BitLen()/8 + 1
	b := make([]byte, n)
	v := new(big.Int).Set(i)
	if v.Sign() < 0 {
		v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	be := v.Bytes()
	for k := range be {
		b[k] = be[len(be)-1-k]
	}
	return b
}
