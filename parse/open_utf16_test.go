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

// UTF-16 without a byte order mark (every other byte NUL) is recognised
// and decoded as the marked form is; before, an nvidia-smi CSV so written
// was "not an NVML log ... needs --fields". NULs of a hole before text,
// UTF-8 text and binary data are left as they are.
func TestOpenUTF16NoBOM(t *testing.T) {
	const text = "timestamp, index, name, memory.used [MiB]\r\n2026/11/30 08:06:12.345, 0, NVIDIA H200, 0 MiB\n"
	for _, be := range []bool{false, true} {
		var b []byte
		for _, u := range utf16.Encode([]rune(text)) {
			if be {
				b = append(b, byte(u>>8), byte(u))
			} else {
				b = append(b, byte(u), byte(u>>8))
			}
		}
		got, enc := openBytes(t, b)
		if got != text || enc != map[bool]string{false: "UTF-16LE", true: "UTF-16BE"}[be] {
			t.Errorf("big-endian %v: %q as %q", be, got, enc)
		}
	}
	for name, b := range map[string][]byte{
		"hole then text": append(make([]byte, 600), text...),
		"utf-8":          []byte(text),
		"binary":         {0x80, 0x02, 0x7d, 0x00, 0x28, 0x00, 0x58, 0x00, 0x01, 0x00, 0xff, 0x00},
		"int32s":         {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0},
	} {
		if _, enc := openBytes(t, b); enc != "" {
			t.Errorf("%s: read as %s", name, enc)
		}
	}
}

func openBytes(t *testing.T, b []byte) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got, err := io.ReadAll(in.Reader())
	if err != nil {
		t.Fatal(err)
	}
	return string(got), in.UTF16
}

// A log PowerShell 5 began in UTF-16 (its byte order mark, a line) that
// another program went on in UTF-8 (cmd's ">>", Python's logging) is read
// in both: the UTF-16 lines decoded, the rest passed on as bytes. Before,
// the UTF-8 lines were decoded as UTF-16 (CJK garbage) and an OOM among
// them missed (tester t48c: `--fail-on oom` passed). A BOM followed at
// once by 8-bit text is dropped. UTF-16 lines of CJK text, whose units'
// bytes may both be printable ASCII, stay decoded.
func TestOpenUTF16ThenUTF8(t *testing.T) {
	enc := func(s string) []byte {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	const oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.21 GiB is free. 显存\n"
	cjk := "中文日志上下文中文日志上下文中文日志上下文中文日志上下文中文日志上下文\r\n" // U+4E2D is "-N", U+4E0A holds 0x0A
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"UTF-16 line then UTF-8", append(append([]byte{0xff, 0xfe}, enc("Starting training\r\n")...), oom...), "Starting training\r\n" + oom},
		{"BOM then UTF-8", append([]byte{0xff, 0xfe}, " junk line\n"+oom...), " junk line\n" + oom},
		{"UTF-16 CJK lines", append([]byte{0xff, 0xfe}, enc(cjk+cjk)...), cjk + cjk},
		{"UTF-16 CJK then UTF-8", append(append([]byte{0xff, 0xfe}, enc(cjk)...), oom...), cjk + oom},
	} {
		path := filepath.Join(t.TempDir(), "log.txt")
		if err := os.WriteFile(path, c.b, 0o600); err != nil {
			t.Fatal(err)
		}
		in, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(in.Reader())
		in.Close()
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
