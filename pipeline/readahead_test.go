package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
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

// readLines reads src as nvml.Reader does: lines by ReadSlice, joined
// across bufio.ErrBufferFull, with a Peek of peek bytes before the first
// and after every every-th line; it returns what it read, one entry per
// line or peek, and the error that ended it.
func readLines(src interface {
	Peek(int) ([]byte, error)
	ReadSlice(byte) ([]byte, error)
}, peek, every int) (out []string, err error) {
	for n := 0; ; n++ {
		if n%every == 0 {
			b, perr := src.Peek(peek)
			out = append(out, "peek "+string(b)+" "+fmt.Sprint(perr))
		}
		b, err := src.ReadSlice('\n')
		line := string(b)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = src.ReadSlice('\n')
			line += string(b)
		}
		out = append(out, line)
		if err != nil {
			return out, err
		}
	}
}

// FuzzReadAheadLines: the read-ahead's ReadSlice and Peek, serving lines
// from its chunks (joined where a line or a peek spans several), read as
// a bufio.Reader over the same bytes does, whatever the chunk size.
func FuzzReadAheadLines(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n\n3,4"), uint16(3), uint8(2), uint8(1))
	f.Add([]byte("timestamp, index\n2026/11/30 08:06:12.696, 0\n2026/11/30 08:06:12.696, 1\n"), uint16(16), uint8(40), uint8(2))
	f.Add([]byte("no line end at all, longer than a chunk"), uint16(5), uint8(5), uint8(3))
	f.Add([]byte("\n\n\n"), uint16(1), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, peek, every uint8) {
		chunk := 1 + int(size)%512
		p := min(int(peek), chunk) // Peek serves at most a chunk
		e := 1 + int(every)%8
		ra := newByteReadAheadSize(bytes.NewReader(data), chunk)
		defer ra.Close()
		got, gerr := readLines(ra, p, e)
		want, werr := readLines(bufio.NewReaderSize(bytes.NewReader(data), 4096), p, e)
		if !errors.Is(gerr, werr) || !slices.Equal(got, want) {
			t.Fatalf("chunks of %d, peeks of %d every %d lines:\n%q, %v\nbufio:\n%q, %v", chunk, p, e, got, gerr, want, werr)
		}
	})
}
