package cmd

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// Every regular expression the program's packages declare compiles: they
// compile on first use (internal/lazyre), so a bad one would otherwise
// panic only on the input that reaches it. The count guards against the
// check passing because no package registered its expressions.
func TestAllRegexpsCompile(t *testing.T) {
	if n := lazyre.Count(); n < 50 {
		t.Fatalf("only %d expressions registered; the packages declare about 75", n)
	}
	if err := lazyre.CheckAll(); err != nil {
		t.Fatal(err)
	}
}

// No expression's literal filter (internal/lazyre) turns away a match in
// any text this repository's tests read: the first 400 lines of each of
// testdata's text files and each such file of up to 64 KiB whole (the
// multi-line expressions run on whole inputs), each expression asked where
// its filter says no.
func TestRegexpFiltersOnTestdata(t *testing.T) {
	seen := map[string]bool{}
	checked := 0
	check := func(s string) {
		if seen[s] {
			return
		}
		seen[s] = true
		checked++
		if err := lazyre.CheckFilter(s); err != nil {
			t.Error(err)
		}
	}
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 || bytes.HasPrefix(b, []byte{0x1f, 0x8b}) || bytes.HasPrefix(b, []byte{0x80}) {
			return nil // binary: pickles, gzip, Parquet
		}
		if len(b) <= 64<<10 {
			check(string(b))
		}
		n := 0 // the first 400 lines of a file: a long log's lines repeat their shapes
		for line := range strings.SplitSeq(string(b), "\n") {
			if n++; n > 400 {
				break
			}
			if len(line) <= 4096 {
				check(line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10000 {
		t.Errorf("only %d texts checked", checked)
	}
}
