package pipeline

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// The read-ahead returns the source's bytes in order, then its error,
// whatever the sizes of the reads (iotest.TestReader tries several), and
// several chunks' worth (readAheadChunk*readAheadChunks is 2 MiB).
func TestByteReadAhead(t *testing.T) {
	want := make([]byte, 3*readAheadChunk*readAheadChunks+12345)
	for i := range want {
		want[i] = byte(i*7 + i>>9)
	}
	ra := newByteReadAhead(iotest.HalfReader(bytes.NewReader(want)))
	defer ra.Close()
	if err := iotest.TestReader(ra, want); err != nil {
		t.Fatal(err)
	}

	// An error after some bytes comes after them, and again on the next read.
	boom := errors.New("boom")
	src := io.MultiReader(bytes.NewReader(want[:1000]), iotest.ErrReader(boom))
	ra2 := newByteReadAhead(src)
	defer ra2.Close()
	got, err := io.ReadAll(ra2)
	if !bytes.Equal(got, want[:1000]) || !errors.Is(err, boom) {
		t.Fatalf("got %d bytes, %v; want 1000 bytes, then boom", len(got), err)
	}
	if n, err := ra2.Read(make([]byte, 10)); n != 0 || !errors.Is(err, boom) {
		t.Fatalf("read after the error: %d, %v", n, err)
	}
}

// Close stops a read-ahead whose reader stopped reading (every chunk
// full), without waiting for the rest of the source.
func TestByteReadAheadClose(t *testing.T) {
	ra := newByteReadAhead(zeros{})
	if _, err := io.ReadFull(ra, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	ra.Close()
	ra.Close() // twice is fine
	if _, err := ra.Read(make([]byte, 1<<20)); err == nil {
		// What was left of the chunk being read may still come; then the end.
		for err == nil {
			_, err = ra.Read(make([]byte, 1<<20))
		}
	}
}

// zeros is an endless source.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
