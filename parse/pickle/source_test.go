package pickle

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunked lends its input the way parse/pytorch's read-ahead does (a
// ChunkReader), in chunks of the sizes given in turn (0 included), each
// after ChunkHeadroom bytes of headroom. A chunk taken back is
// overwritten, so that a decoder still reading it sees other bytes.
// (Only the headroom's last 64 bytes are set, to keep 1-byte chunks of
// long inputs cheap.)
type chunked struct {
	t       testing.TB
	data    []byte
	sizes   []int
	i       int
	buf     []byte
	spare   [2][]byte
	errLast bool // the last bytes come with io.EOF, not before it
	fail    error
}

func (c *chunked) NextChunk() ([]byte, int, error) {
	if len(c.buf) > 0 {
		for i := range c.buf[ChunkHeadroom-64:] {
			c.buf[ChunkHeadroom-64+i] = 0xAA
		}
	}
	c.buf = nil
	if len(c.data) == 0 {
		if c.fail != nil {
			return nil, 0, c.fail
		}
		return nil, 0, io.EOF
	}
	n := min(c.sizes[c.i%len(c.sizes)], len(c.data))
	c.i++
	// Two buffers in turn (the one taken back was overwritten above).
	if cap(c.spare[c.i%2]) < ChunkHeadroom+n {
		c.spare[c.i%2] = make([]byte, ChunkHeadroom+n)
	}
	b := c.spare[c.i%2][:ChunkHeadroom+n]
	for i := ChunkHeadroom - 64; i < ChunkHeadroom; i++ {
		b[i] = 0xEE // (the rest of the headroom holds old bytes)
	}
	copy(b[ChunkHeadroom:], c.data[:n])
	c.data = c.data[n:]
	c.buf = b
	var err error
	if len(c.data) == 0 && c.errLast {
		err = io.EOF
		if c.fail != nil {
			err = c.fail
		}
	}
	return b, ChunkHeadroom, err
}

func (c *chunked) Read([]byte) (int, error) {
	c.t.Fatal("the decoder called Read on a ChunkReader")
	return 0, nil
}

// chunkings are the ways the tests below lend an input: single bytes,
// empty chunks between others, chunks that cut most opcodes, one larger
// than the decoder's own buffer, the last bytes with io.EOF.
var chunkings = []struct {
	sizes   []int
	errLast bool
}{
	{[]int{1}, false},
	{[]int{3, 0, 7}, true},
	{[]int{5, 11, 2, 64}, false},
	{[]int{ChunkHeadroom + 1, 1}, true},
	{[]int{ensureMax + 4097}, false},
	{[]int{256 << 10}, true},
}

// decodeBoth decodes data from a bytes.Reader and from every chunking and
// fails unless all give the same value or the same error.
func decodeBoth(t testing.TB, data []byte, lim Limits, h func() Handler) {
	want, wantErr := Decode(bytes.NewReader(data), "in", h(), lim)
	for _, ch := range chunkings {
		got, err := Decode(&chunked{t: t, data: data, sizes: ch.sizes, errLast: ch.errLast}, "in", h(), lim)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("chunks of %v: error %v, want %v", ch.sizes, err, wantErr)
		}
		if err == nil && got.String() != want.String() {
			t.Fatalf("chunks of %v: %s, want %s", ch.sizes, got, want)
		}
	}
}

// Every vector, and every cut of the snapshot-like one, decodes from lent
// chunks as from a reader: the same values, the same errors at the same
// offsets.
func TestChunkReaderSameAsReader(t *testing.T) {
	for _, v := range loadVectors(t) {
		data, err := base64.StdEncoding.DecodeString(v.Pickle)
		if err != nil {
			t.Fatal(err)
		}
		decodeBoth(t, data, Limits{}, func() Handler { return nil })
		decodeBoth(t, data, Limits{}, func() Handler { return &consumer{} })
		if v.Name == "snapshot_like" && v.Protocol == 4 {
			// Cut at every offset near the start, then every 7th.
			for n := 0; n < len(data); n += 1 + n/64*6 {
				decodeBoth(t, data[:n], Limits{}, func() Handler { return nil })
			}
		}
	}
	// A long string (past the own buffer) between short opcodes, and a
	// protocol 0 line cut by chunks.
	s := strings.Repeat("abcdefgh", 100000)
	data := []byte{0x80, 4, 'K', 1, 'X'}
	data = binary.LittleEndian.AppendUint32(data, uint32(len(s)))
	data = append(data, s...)
	data = append(data, 'K', 7, 0x87, '.')
	decodeBoth(t, data, Limits{}, func() Handler { return nil })
	decodeBoth(t, []byte("(I12345678901\nI-2\nVab\\u00e9c\nt."), Limits{}, func() Handler { return nil })
}

// A source error after the last bytes is reported, not taken for the end.
func TestChunkReaderError(t *testing.T) {
	boom := errors.New("boom")
	data := []byte{0x80, 4, 'K', 1, 'K', 2}
	for _, errLast := range []bool{false, true} {
		_, err := Decode(&chunked{t: t, data: data, sizes: []int{3}, errLast: errLast, fail: boom}, "in", nil, Limits{})
		if !errors.Is(err, boom) {
			t.Fatalf("errLast %v: %v, want boom", errLast, err)
		}
	}
}
