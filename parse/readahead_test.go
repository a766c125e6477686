package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"testing/iotest"
)

// The chunk sizes the callers use: the pickle decoder's (256 KiB, eight,
// with the decoder's 4 KiB headroom) and the NVML Reader's (512 KiB, four,
// no headroom).
var readAheadShapes = []struct{ size, chunks, headroom int }{
	{256 << 10, 8, 4 << 10},
	{512 << 10, 4, 0},
}

// onlyReader hides a source's WriteTo, so that the read-ahead fills its
// chunks by Read (its filler's ReadFrom).
type onlyReader struct{ io.Reader }

// The read-ahead delivers the source's bytes in order, across chunk
// boundaries (more chunks than buffers) and from sources that return
// short reads, through WriteTo or Read, then the source's own
// error after the last byte read before it, and again on the next read.
func TestReadAheadKeepsBytesAndError(t *testing.T) {
	for _, sh := range readAheadShapes {
		data := make([]byte, 3*sh.size*sh.chunks+12345)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		boom := errors.New("boom")
		for name, src := range map[string]io.Reader{
			"whole (WriteTo)":     bytes.NewReader(data),
			"bufio (WriteTo)":     bufio.NewReaderSize(onlyReader{bytes.NewReader(data)}, 256<<10),
			"halves (ReadFrom)":   iotest.HalfReader(bytes.NewReader(data)),
			"then err (ReadFrom)": onlyReader{io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom))},
			"then err (WriteTo)":  io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom)),
		} {
			ra := NewReadAhead(src, sh.size, sh.chunks, sh.headroom)
			got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(ra, 1000)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rest, err := io.ReadAll(ra)
			got = append(got, rest...)
			if !bytes.Equal(got, data) {
				t.Fatalf("%s: read %d bytes differing from the %d written", name, len(got), len(data))
			}
			wantErr := error(nil)
			if bytes.HasPrefix([]byte(name), []byte("then err")) {
				wantErr = boom
			}
			if !errors.Is(err, wantErr) {
				t.Fatalf("%s: error %v, want %v after every byte", name, err, wantErr)
			}
			if wantErr == nil {
				wantErr = io.EOF
			}
			if n, err := ra.Read(make([]byte, 10)); n != 0 || !errors.Is(err, wantErr) {
				t.Fatalf("%s: read after the error: %d, %v; want %v again", name, n, err, wantErr)
			}
			ra.Close()
		}
	}
}

// iotest.TestReader's reads of several sizes see the source's bytes.
func TestReadAheadTestReader(t *testing.T) {
	want := make([]byte, 3*512<<10*4+12345)
	for i := range want {
		want[i] = byte(i*7 + i>>9)
	}
	ra := NewReadAhead(iotest.HalfReader(bytes.NewReader(want)), 512<<10, 4, 0)
	defer ra.Close()
	if err := iotest.TestReader(ra, want); err != nil {
		t.Fatal(err)
	}
}

// NextChunk lends each chunk with the headroom asked for, its bytes the
// source's in order, the error with the last one, then the error alone
// with no bytes.
func TestReadAheadNextChunk(t *testing.T) {
	data := make([]byte, 5*1000+17)
	for i := range data {
		data[i] = byte(i * 13)
	}
	ra := NewReadAhead(bytes.NewReader(data), 1000, 2, 64)
	defer ra.Close()
	var got []byte
	for {
		b, from, err := ra.NextChunk()
		if from != 64 || len(b) < from || len(b)-from > 1000 {
			t.Fatalf("chunk of %d bytes from %d; want from 64, at most 1000 bytes", len(b), from)
		}
		got = append(got, b[from:]...)
		b[0] = 0xff // the chunk is the caller's to write
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("lent %d bytes differing from the %d written", len(got), len(data))
	}
	if b, _, err := ra.NextChunk(); len(b) != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %d bytes, %v; want none, io.EOF", len(b), err)
	}
}

// Close in the middle of a stream stops a read-ahead whose reader stopped
// reading (every chunk full) without waiting for the rest of the source
// (the test would hang otherwise); twice is fine; a read after it ends
// with an error; Close without any read returns at once, and a read
// after that does not start the goroutine.
func TestReadAheadClose(t *testing.T) {
	for name, src := range map[string]io.Reader{"ReadFrom": zeros{}, "WriteTo": bufio.NewReader(zeros{})} {
		ra := NewReadAhead(src, 1000, 3, 16)
		if _, err := io.ReadFull(ra, make([]byte, 100)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ra.Close()
		ra.Close()
		var err error
		for n := 0; err == nil; n++ {
			// What was left of the chunk being read, and chunks queued
			// already, may still come; then the end.
			if n > 10 {
				t.Fatalf("%s: reads after Close go on", name)
			}
			_, err = ra.Read(make([]byte, 1<<20))
		}
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("%s: read after Close: %v, want io.ErrClosedPipe", name, err)
		}
	}
	NewReadAhead(bytes.NewReader(nil), 10, 1, 0).Close()
	ra := NewReadAhead(zeros{}, 10, 1, 0)
	ra.Close()
	if b, _, err := ra.NextChunk(); len(b) != 0 || !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("NextChunk after Close: %d bytes, %v", len(b), err)
	}
	ra.Close()
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
// a bufio.Reader over the same bytes does, whatever the chunk size, and
// whether the chunks are filled by WriteTo or Read.
func FuzzReadAheadLines(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n\n3,4"), uint16(3), uint8(2), uint8(1))
	f.Add([]byte("timestamp, index\n2026/11/30 08:06:12.696, 0\n2026/11/30 08:06:12.696, 1\n"), uint16(16), uint8(40), uint8(2))
	f.Add([]byte("no line end at all, longer than a chunk"), uint16(5), uint8(5), uint8(3))
	f.Add([]byte("\n\n\n"), uint16(1), uint8(1), uint8(1))
	f.Add([]byte("x\ny\n"), uint16(1025), uint8(2), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, peek, every uint8) {
		chunk := 1 + int(size)%512
		p := min(int(peek), chunk) // Peek serves at most a chunk
		e := 1 + int(every)%8
		var src io.Reader = bytes.NewReader(data) // filled by WriteTo
		if size&1024 != 0 {
			src = onlyReader{src} // by ReadFrom
		}
		ra := NewLineReadAhead(src, chunk, 4)
		defer ra.Close()
		got, gerr := readLines(ra, p, e)
		want, werr := readLines(bufio.NewReaderSize(bytes.NewReader(data), 4096), p, e)
		if !errors.Is(gerr, werr) || !slices.Equal(got, want) {
			t.Fatalf("chunks of %d, peeks of %d every %d lines:\n%q, %v\nbufio:\n%q, %v", chunk, p, e, got, gerr, want, werr)
		}
	})
}

// gatedSource returns n bytes a read, each read only once the test lets
// it through gate; closed gate: reads run free.
type gatedSource struct {
	gate chan struct{}
	left int
	n    int
}

func (g *gatedSource) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	<-g.gate
	m := min(len(p), g.n, g.left)
	g.left -= m
	return m, nil
}

// A reader the source keeps ahead of gets eagerChunks chunks made, not
// the read-ahead's most: each chunk more is memory touched for nothing.
// Once the reader has waited for a chunk, the source is the slower side
// and more chunks are made, up to the most.
func TestReadAheadMakesChunksWhenTheReaderWaits(t *testing.T) {
	const size, chunks = 1 << 10, 8
	// The source runs free; before each NextChunk the test waits until
	// a chunk is queued, so the reader never waits.
	gate := make(chan struct{})
	close(gate)
	src := &gatedSource{gate: gate, left: 40 * size, n: size}
	r := NewReadAhead(onlyReader{src}, size, chunks, 0)
	total := 0
	for {
		if r.taken {
			for len(r.full) == 0 && r.made.Load() < chunks {
				runtime.Gosched()
			}
		}
		b, from, err := r.NextChunk()
		total += len(b) - from
		if err != nil {
			break
		}
	}
	r.Close()
	if total != 40*size {
		t.Fatalf("read %d bytes, want %d", total, 40*size)
	}
	if got := r.made.Load(); got != eagerChunks {
		t.Errorf("a reader that never waited: %d chunks made, want %d", got, eagerChunks)
	}

	// The source gives a chunk only when let through: the reader asks
	// for its second chunk before it is there, so it waits.
	gate = make(chan struct{})
	src = &gatedSource{gate: gate, left: 40 * size, n: size}
	r = NewReadAhead(onlyReader{src}, size, chunks, 0)
	defer r.Close()
	go func() { gate <- struct{}{} }()
	if _, _, err := r.NextChunk(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.NextChunk() // waits: nothing is queued
	}()
	for !r.waited.Load() {
		runtime.Gosched()
	}
	close(gate) // the source runs free; the reader reads no more
	<-done
	for r.made.Load() < chunks {
		runtime.Gosched()
	}
	if got := r.made.Load(); got != chunks {
		t.Errorf("after the reader waited: %d chunks made, want %d", got, chunks)
	}
}
