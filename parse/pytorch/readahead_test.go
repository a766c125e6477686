package pytorch

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// The read-ahead delivers the source's bytes in order, across chunk
// boundaries and from sources that return short reads, then the source's
// own error after the last byte read before it.
func TestReadAheadKeepsBytesAndError(t *testing.T) {
	data := make([]byte, 3*readAheadChunk+12345) // more chunks than buffers
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	boom := errors.New("boom")
	for name, src := range map[string]io.Reader{
		"whole":    bytes.NewReader(data),
		"halves":   iotest.HalfReader(bytes.NewReader(data)),
		"then err": io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom)),
	} {
		ra := newReadAhead(src)
		got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(ra, 1000)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rest, err := io.ReadAll(ra)
		got = append(got, rest...)
		ra.Close()
		if !bytes.Equal(got, data) {
			t.Fatalf("%s: read %d bytes differing from the %d written", name, len(got), len(data))
		}
		if name == "then err" && !errors.Is(err, boom) {
			t.Fatalf("%s: error %v, want boom after every byte", name, err)
		}
		if name != "then err" && err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// Close in the middle of a stream ends the goroutine (the test would hang
// otherwise), and Close without any read returns at once.
func TestReadAheadCloseMidStream(t *testing.T) {
	ra := newReadAhead(bytes.NewReader(make([]byte, 10*readAheadChunk)))
	if _, err := ra.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	ra.Close()
	ra.Close()
	newReadAhead(bytes.NewReader(nil)).Close()
}
