package gunzip

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// reference inflates gz with klauspost/compress's gzip reader (what
// gpuleak used before this package), multistream.
func reference(gz []byte) ([]byte, error) {
	br := bytes.NewReader(gz)
	zr, err := kgzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	// Member by member: zero bytes after a member are padding, skipped
	// before the next one or the end, as Python's gzip module reads them
	// (klauspost's reader, as compress/gzip, takes them for a header).
	var out []byte
	for {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		out = append(out, b...)
		if err != nil {
			return out, err
		}
		for {
			c, err := br.ReadByte()
			if err == io.EOF {
				return out, nil
			}
			if c != 0 {
				br.UnreadByte()
				break
			}
		}
		if err := zr.Reset(br); err != nil {
			return out, err
		}
	}
}

// inflate reads gz with Reader, bufSize bytes a Read.
func inflate(gz []byte, bufSize int, src io.Reader) ([]byte, error) {
	if src == nil {
		src = bytes.NewReader(gz)
	}
	zr, err := NewReader(src)
	if err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, bufSize)
	for {
		n, err := zr.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func gzipped(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	zw, err := stdgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// samples: data of the kinds gzip meets, from incompressible to runs.
func samples() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text := make([]byte, 0, 400<<10)
	words := []string{"segment", "block", "allocated", "free_requested", "0x7f3a", "torch/nn", " ", "\n", "frames", "42"}
	for len(text) < 400<<10 {
		text = append(text, words[r.IntN(len(words))]...)
	}
	runs := bytes.Repeat([]byte("a"), 100<<10)
	runs = append(runs, bytes.Repeat([]byte("abcdefg"), 20<<10)...)
	return map[string][]byte{"empty": nil, "one": {7}, "random": random, "text": text, "runs": runs}
}

// TestAgainstReference: every level (stored, Huffman-only, fixed and
// dynamic blocks) and many Read sizes give klauspost's bytes.
func TestAgainstReference(t *testing.T) {
	for name, data := range samples() {
		for _, level := range []int{stdgzip.NoCompression, stdgzip.HuffmanOnly, 1, 6, 9} {
			gz := gzipped(t, data, level)
			for _, size := range []int{1, 7, 258, 300, 4096, 1 << 20} {
				got, err := inflate(gz, size, nil)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s level %d read size %d: %d bytes, %v; want %d bytes", name, level, size, len(got), err, len(data))
				}
			}
			// A source that returns a byte a Read.
			got, err := inflate(gz, 64<<10, io.LimitReader(oneByteReader{bytes.NewReader(gz)}, int64(len(gz))))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s level %d, one byte a read: %v", name, level, err)
			}
		}
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }

// TestRealFiles: gpuleak's gzip test inputs and, when present, the shared
// real snapshot, against the reference.
func TestRealFiles(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/*/*.gz")
	files = append(files, "../../../shared/bench/big_real.pickle.gz")
	read := 0
	for _, f := range files {
		gz, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		want, werr := reference(gz)
		got, err := inflate(gz, 256<<10, nil)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; reference %d bytes, %v", f, len(got), err, len(want), werr)
		}
		read++
	}
	if read == 0 {
		t.Skip("no gzip files")
	}
}

func TestMultistream(t *testing.T) {
	a, b := []byte("first member\n"), bytes.Repeat([]byte("second "), 10000)
	gz := append(gzipped(t, a, 6), gzipped(t, b, 9)...)
	got, err := inflate(gz, 1000, nil)
	if err != nil || !bytes.Equal(got, append(a, b...)) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	// A later member cut inside its header is a truncated file (the
	// reader gpuleak used before took it as a clean end; compress/gzip
	// and gzip -t do not).
	cut := append(gzipped(t, a, 6), 0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3, 'n', 'a')
	if _, err := inflate(cut, 1000, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut second header: %v, want io.ErrUnexpectedEOF", err)
	}
	// A file name of any length is read (streamed, not kept): RFC 1952
	// sets no limit, and GNU gzip writes long ones.
	var long bytes.Buffer
	zw := stdgzip.NewWriter(&long)
	zw.Write(a)
	zw.Close()
	named := long.Bytes()
	named[3] |= 8 // FNAME
	named = append(named[:10:10], append(append(bytes.Repeat([]byte("n"), 4000), 0), named[10:]...)...)
	if got, err := inflate(named, 1000, nil); err != nil || !bytes.Equal(got, a) {
		t.Fatalf("4000-byte file name: %q, %v", got, err)
	}
	// Bytes after a member that are not a header.
	if _, err := inflate(append(gzipped(t, a, 6), "junk after the member"...), 1000, nil); !errors.Is(err, ErrHeader) {
		t.Fatalf("trailing junk: %v, want ErrHeader", err)
	}
	// Zero bytes after a member are padding (a file padded to a block
	// size): skipped before the end or the next member, as Python's gzip
	// module skips them; junk after them is still no header.
	zeros := make([]byte, 512)
	padded := append(gzipped(t, a, 6), zeros...)
	if got, err := inflate(padded, 1000, nil); err != nil || !bytes.Equal(got, a) {
		t.Fatalf("padded: %q, %v", got, err)
	}
	zr, err := NewReader(bytes.NewReader(append(append(padded, gzipped(t, b, 9)...), zeros[:7]...)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, append(a, b...)) || zr.ZeroPadding != 512+7 {
		t.Fatalf("padded between and after members: %d bytes, %v, %d zeros skipped", len(got), err, zr.ZeroPadding)
	}
	if _, err := inflate(append(padded, "junk"...), 1000, nil); !errors.Is(err, ErrHeader) {
		t.Fatalf("junk after padding: %v, want ErrHeader", err)
	}
}

// TestTruncated: every cut of a stream is an error, never a short result
// taken as whole; the reference agrees.
func TestTruncated(t *testing.T) {
	data := samples()["text"][:50000]
	gz := gzipped(t, data, 6)
	for cut := 0; cut < len(gz); cut += 1 + cut/50 {
		_, err := inflate(gz[:cut], 4096, nil)
		if err == nil {
			t.Fatalf("cut at %d of %d: no error", cut, len(gz))
		}
		if cut > 10 && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v, want io.ErrUnexpectedEOF", cut, err)
		}
	}
}

// TestCorrupted: a flipped byte anywhere gives an error, or the same bytes
// as the reference (a flip in the header's name or time changes nothing).
func TestCorrupted(t *testing.T) {
	data := samples()["text"][:20000]
	for _, level := range []int{1, 9, stdgzip.HuffmanOnly, stdgzip.NoCompression} {
		gz := gzipped(t, data, level)
		for i := 0; i < len(gz); i += 1 + i/100 {
			for _, mask := range []byte{0x01, 0x80, 0xff} {
				bad := bytes.Clone(gz)
				bad[i] ^= mask
				checkAgainstReference(t, bad)
			}
		}
	}
}

func checkAgainstReference(t *testing.T, gz []byte) {
	t.Helper()
	want, werr := reference(gz)
	got, err := inflate(gz, 1000, nil)
	if (err == nil) != (werr == nil) {
		t.Fatalf("error %v; reference error %v", err, werr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%d bytes differ from the reference's %d", len(got), len(want))
	}
}

// TestInvalidCodes: code lengths no decoder accepts.
func TestInvalidCodes(t *testing.T) {
	var table [litTableSize]uint32
	over := make([]uint8, 288)
	for i := range 3 {
		over[i] = 1 // three codes of length 1: over-subscribed
	}
	if buildTable(table[:], over, litBits, litEntry, false) {
		t.Error("over-subscribed code accepted")
	}
	incomplete := make([]uint8, 288)
	incomplete[0], incomplete[1] = 2, 2
	if buildTable(table[:], incomplete, litBits, litEntry, false) {
		t.Error("incomplete code accepted")
	}
	single := make([]uint8, 288)
	single[256] = 1
	if !buildTable(table[:], single, litBits, litEntry, false) {
		t.Error("a single code of length 1 refused")
	}
	if buildTable(table[:], make([]uint8, 288), litBits, litEntry, false) {
		t.Error("no literal/length code accepted")
	}
}

func FuzzInflate(f *testing.F) {
	for _, data := range samples() {
		if len(data) < 5000 {
			f.Add(gzipped(f, data, 6))
		}
	}
	f.Add(gzipped(f, []byte("segment block allocated"), stdgzip.HuffmanOnly))
	f.Add(gzipped(f, bytes.Repeat([]byte("ab"), 300), 1))
	f.Fuzz(func(t *testing.T, gz []byte) {
		checkAgainstReference(t, gz)
	})
}

// BenchmarkInflateBigReal inflates the shared real snapshot, with this
// package and with klauspost/compress (the b.N loop's MB/s are of the
// inflated bytes).
func BenchmarkInflateBigReal(b *testing.B) {
	gz, err := os.ReadFile("../../../shared/bench/big_real.pickle.gz")
	if err != nil {
		b.Skip(err)
	}
	zr, err := kgzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		b.Fatal(err)
	}
	size, err := io.Copy(io.Discard, zr)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	// drain reads r to its end and fails unless it gave every byte.
	drain := func(b *testing.B, r io.Reader) {
		var n int64
		for {
			m, err := r.Read(buf)
			n += int64(m)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != size {
			b.Fatalf("%d bytes, want %d", n, size)
		}
	}
	b.Run("gunzip", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			zr, err := NewReader(bytes.NewReader(gz))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, zr)
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			zr, err := kgzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, zr)
		}
	})
}
