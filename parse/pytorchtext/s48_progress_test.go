package pytorchtext

import (
	"bufio"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// progressCounters's scan finds what progressRe.FindAllString finds: on
// generated lines built from the expression's own pieces and their near
// misses, and on every line of the repository's text inputs.
func TestProgressCountersLikeExpression(t *testing.T) {
	check := func(l string) {
		t.Helper()
		want := progressRe.Re().FindAllString(l, 8)
		if got := progressCounters(l, 8); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, the expression finds %q", l, got, want)
		}
	}
	pieces := []string{
		"step", "Step", "STEP", "steps", "iter", "Iter", "iteration", "Iteration", "iterations",
		"epoch", "Epoch", "EPOCH", "batch", "Batch", "global_step", "substep", "_step", "xepoch",
		"'epoch'", "\"step\"", "'global_step'", "'epoch\"", "'Epoch'", "'loss'", "'", "\"",
		" ", "  ", "\t", ":", "=", "#", "[", "]", " [", "|", "/", ".", ",", "0", "7", "12", "3.5",
		"1.", ".5", "100/200", "12/500 [", "abc", "é", "ſ", "ſtep", "K", "\r", "\f", "-", "_",
	}
	genLines(pieces, 200000, 12, check)
	walkTextLines(t, check)
}

// FuzzProgressCounters checks the scan against the expression on any
// line.
func FuzzProgressCounters(f *testing.F) {
	for _, s := range []string{"step 12 loss 0.3", "Epoch: [3]  [ 40/500]", "{'loss': 0.5, 'epoch': 0.12}", " 12/500 [00:01<", "| 12/500 [", "iteration: [ 7", "ſtep 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, l string) {
		want := progressRe.Re().FindAllString(l, 8)
		if got := progressCounters(l, 8); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, the expression finds %q", l, got, want)
		}
	})
}

// Every out-of-memory phrase makes phraseHeads say a line may hold one,
// wherever the phrase sits at or after from; and findOOM finds on every
// line of the repository's text inputs what its search phrase by phrase
// finds without the set (findOOMEveryPhrase).
func TestPhraseHeadsHoldEveryPhrase(t *testing.T) {
	r := rand.New(rand.NewSource(48))
	for _, p := range oomPhrases {
		for n := 0; n < 20; n++ {
			pre := strings.Repeat("x", r.Intn(40))
			line := pre + p + strings.Repeat(" y", r.Intn(20))
			if !phraseHeads().mayHold(line, len(pre)) {
				t.Fatalf("phrase %q at %d of %q: the set says no phrase starts there", p, len(pre), line)
			}
		}
		if phraseHeads().mayHold(p[:3], 0) {
			t.Errorf("%q, three bytes: the set says a phrase may start there", p[:3])
		}
	}
	for _, l := range []string{
		"step 12 loss 0.31 lr 3.0e-04",
		"tests/test_model.py::test_forward[bf16-cuda:0] PASSED                   [ 42%]",
		"[rank0]: Epoch 3 step 7 | loss 0.4312 | lr 3.0e-04 | 812.5 samples/s",
		"WARNING: Leaked semaphore objects to clean up at shutdown (3)",
	} {
		if phraseHeads().mayHold(l, 0) {
			t.Errorf("%q: the set says a phrase may start on it", l)
		}
	}
	walkTextLines(t, func(l string) {
		for _, from := range []int{0, len(l) / 2} {
			if got, want := findOOM(l, from), findOOMEveryPhrase(l, from); got != want {
				t.Fatalf("%q from %d: findOOM %d, the search of every phrase %d", l, from, got, want)
			}
		}
	})
}

// findOOMEveryPhrase is findOOM without phraseHeads: every phrase
// searched for on every line.
func findOOMEveryPhrase(line string, from int) int {
	return findOOMFrom(line, from, phraseStart(line, from))
}

// richVerticalAt finds the first rune of richVertical as a range over
// the line's runes does, invalid UTF-8 included; richHeader's test for
// " in " changes no answer of its expression.
func TestRichVerticalAtLikeRuneRange(t *testing.T) {
	byRange := func(line string) int {
		for i, c := range line {
			if strings.ContainsRune(richVertical, c) {
				return i
			}
		}
		return -1
	}
	pieces := []string{"a", " ", "|", "│", "┃", "║", "─", "╭", "\xe2", "\xe2\x94", "\x94\x82", "é", "€", "x.py:3 in f", "\xff"}
	genLines(pieces, 100000, 8, func(l string) {
		if got, want := richVerticalAt(l), byRange(l); got != want {
			t.Fatalf("%q: %d, a range over its runes %d", l, got, want)
		}
	})
	walkTextLines(t, func(l string) {
		if got, want := richVerticalAt(l), byRange(l); got != want {
			t.Fatalf("%q: %d, a range over its runes %d", l, got, want)
		}
		text, _ := richBordered(l)
		_, ok := richHeader(text)
		if want := richHeaderRe.Re().MatchString(text); ok != want {
			t.Fatalf("%q: richHeader %v, its expression %v", text, ok, want)
		}
	})
}

// walkTextLines calls f on every line of the repository's text inputs
// (testdata's .txt and .log files), and fails when they are fewer than
// ten thousand lines (the walk went wrong).
func walkTextLines(t *testing.T, f func(string)) {
	t.Helper()
	lines := 0
	err := filepath.WalkDir("../../testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".txt") || strings.HasSuffix(path, ".log")) {
			return err
		}
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f(sc.Text())
			lines++
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines < 10000 {
		t.Fatalf("read %d lines of testdata's text inputs; want the repository's thousands", lines)
	}
}

// The tests before expressions change no answer: mayHoldTag holds
// wherever htmlTagRe or htmlLinkRe matches, unifiedHeads on every
// marker, ipythonTitleAt's words wherever its expression matches.
func TestWordTestsBeforeExpressions(t *testing.T) {
	tagOrLink := func(l string) bool { return htmlTagRe.Re().MatchString(l) || htmlLinkRe.Re().MatchString(l) }
	pieces := []string{"<", "</", "<br>", "<BR/>", "<ſpan>", "<Kbd>", "<a href=x>t</a>", "<01:23", "<module>", "a", " ", "/", ">", "p", "x"}
	genLines(pieces, 100000, 6, func(l string) {
		if tagOrLink(l) && !mayHoldTag(l) {
			t.Fatalf("%q: an HTML tag the expressions match, mayHoldTag says none", l)
		}
	})
	for _, m := range unifiedMarkers {
		if l := "device: " + m.word + " x"; !unifiedHeads().mayHold(l, 0) {
			t.Errorf("%q: the set says no marker starts on it", l)
		}
	}
	walkTextLines(t, func(l string) {
		if tagOrLink(l) && !mayHoldTag(l) {
			t.Fatalf("%q: an HTML tag the expressions match, mayHoldTag says none", l)
		}
		_, ok := ipythonTitleAt(l)
		if want := ipythonTitleRe.Re().MatchString(l); ok != want {
			t.Fatalf("%q: ipythonTitleAt %v, its expression %v", l, ok, want)
		}
	})
}

// sameWords answers as strings.Join(strings.Fields(s), " ") == want does,
// Unicode spaces included.
func TestSameWordsLikeJoinedFields(t *testing.T) {
	pieces := []string{"Metric", "Cur", " ", "  ", "\t", "\u00a0", "\u3000", "Usage", "Peak", "Tot", "Alloc", "Freed", "x", ""}
	genLines(pieces, 100000, 6, func(s string) {
		for _, want := range append(slices.Clone(summaryHeader[:]), "Cur Usage", "Metric", "") {
			if got := sameWords(s, want); got != (strings.Join(strings.Fields(s), " ") == want) {
				t.Fatalf("sameWords(%q, %q) = %v", s, want, got)
			}
		}
	})
}

// srunLabel reads what srunLabelRe matches, and frameLine what frameRe
// does, on generated lines and every line of the repository's inputs.
func TestSrunLabelAndFrameLineLikeExpressions(t *testing.T) {
	check := func(l string) {
		t.Helper()
		task, ok := srunLabel(l)
		if m := srunLabelRe.Re().FindStringSubmatch(l); ok != (m != nil) || (ok && task != m[1]) {
			t.Fatalf("%q: srunLabel %q %v, the expression %q", l, task, ok, m)
		}
		if got, want := frameLine(l), frameRe.Re().FindStringSubmatch(l); !slices.Equal(got, want) {
			t.Fatalf("%q: frameLine %q, the expression %q", l, got, want)
		}
	}
	pieces := []string{" ", "0", "12", "1234567", ":", ": ", "x", "\t", `File "`, `", line `, "3", ", in ", "f", "a.py", "\n"}
	genLines(pieces, 100000, 8, check)
	walkTextLines(t, check)
}

// mayHold's written-out hashes are hash's: a set of one word holds it at
// every place in a line, for both widths.
func TestHeadSetWidths(t *testing.T) {
	for _, w := range []string{"Orin", "CUDA out of memory"} {
		s := newHeadSet([]string{w})
		if want := min(8, len(w)/4*4); s.width != want {
			t.Fatalf("%q: width %d, want %d", w, s.width, want)
		}
		for pre := 0; pre < 12; pre++ {
			l := strings.Repeat("-", pre) + w + "."
			if !s.mayHold(l, 0) || !s.mayHold(l, pre) {
				t.Fatalf("%q: the set of %q says no word starts on it", l, w)
			}
		}
	}
	if s := newHeadSet([]string{"abc", "CUDA out of memory"}); s.width != 0 || !s.mayHold("", 0) {
		t.Fatalf("a word of 3 bytes: width %d; want 0, every line may hold one", s.width)
	}
}

// FuzzFrameLine checks frameLine's scan against frameRe on any line.
func FuzzFrameLine(f *testing.F) {
	for _, s := range []string{`  File "a.py", line 3, in f`, `File "a", line 1, in x", line 2, in y  `, `File "", line 12, in  `, "File \"x\", line 1, in \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if got, want := frameLine(l), frameRe.Re().FindStringSubmatch(l); !slices.Equal(got, want) && strings.Contains(l, `File "`) && strings.Contains(l, `", line `) {
			t.Fatalf("%q: frameLine %q, the expression %q", l, got, want)
		}
	})
}

// genLines calls f on n lines, each of one to most pieces drawn from
// pieces at random (a fixed seed: the same lines in every run).
func genLines(pieces []string, n, most int, f func(string)) {
	r := rand.New(rand.NewSource(48))
	for ; n > 0; n-- {
		var b strings.Builder
		for k := r.Intn(most); k >= 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		f(b.String())
	}
}
