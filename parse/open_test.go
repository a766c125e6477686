package parse

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestTruncatedGzipHead: a gzip file cut inside its compressed stream (the
// first 3000 bytes of a larger one) fails with the byte offset where its
// content stopped, not only "gzip: unexpected EOF".
func TestTruncatedGzipHead(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 200<<10) // random bytes: the compressed stream is as long
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	zw.Write(b)
	zw.Close()
	p := filepath.Join(t.TempDir(), "cut.gz")
	if err := os.WriteFile(p, z.Bytes()[:3000], 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	_, err = in.Head()
	if err == nil || !regexp.MustCompile(`^byte offset \d+ of the decompressed content \(compressed bytes read: 3000\): gzip: unexpected EOF$`).MatchString(err.Error()) {
		t.Errorf("Head: %v", err)
	}
}

// A file that cannot be opened is named first, as every other input error
// is ("gpuleak: missing.pickle: no such file or directory"), not with Go's
// "open missing.pickle: ..."; the system's error stays underneath.
func TestOpenMissingNamesFileFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.pickle")
	_, err := Open(path, nil)
	if err == nil || err.Error() != path+": no such file or directory" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v: want %q, wrapping fs.ErrNotExist", err, path+": no such file or directory")
	}
}
