package parse

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"
)

// UTF-16 with a byte order mark (PowerShell 5's ">"), little- and
// big-endian, is read as UTF-8; a character outside the BMP (a surrogate
// pair) and an unpaired surrogate (U+FFFD) survive the decoding.
func TestOpenUTF16(t *testing.T) {
	const text = "CUDA out of memory. Tried to allocate 2.00 MiB\r\n显存 \U0001F600\n"
	for _, be := range []bool{false, true} {
		units := append(utf16.Encode([]rune(text)), 0xd800) // unpaired at the end
		b := []byte{0xff, 0xfe}
		if be {
			b = []byte{0xfe, 0xff}
		}
		for _, u := range units {
			if be {
				b = append(b, byte(u>>8), byte(u))
			} else {
				b = append(b, byte(u), byte(u>>8))
			}
		}
		path := filepath.Join(t.TempDir(), "log.txt")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		in, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(in.Reader())
		in.Close()
		if err != nil || string(got) != text+"\uFFFD" {
			t.Errorf("big-endian %v: %q, %v", be, got, err)
		}
		if want := map[bool]string{false: "UTF-16LE", true: "UTF-16BE"}[be]; in.UTF16 != want {
			t.Errorf("UTF16 %q, want %q", in.UTF16, want)
		}
	}
}
