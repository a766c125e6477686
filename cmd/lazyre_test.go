package cmd

import (
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
