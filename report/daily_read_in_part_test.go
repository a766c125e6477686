package report

import (
	"strings"
	"testing"
)

// "Nothing leaked, ran out of memory or grew" over files read in part
// says so: lines of them were not read, and nothing is known of those.
func TestNothingSentenceSaysReadInPart(t *testing.T) {
	for _, c := range []struct {
		s    DailySummary
		want string
	}{
		{DailySummary{Files: 3, Read: 3, ReadInPart: 1}, "Nothing leaked, ran out of memory or grew in the 3 files read, 1 of them in part (lines that could not be read were skipped, and nothing is known of them)."},
		{DailySummary{Files: 1, Read: 1, ReadInPart: 1}, "Nothing leaked, ran out of memory or grew in the 1 file read, which was read in part ("},
		{DailySummary{Files: 2, Read: 2, ReadInPart: 2}, "in the 2 files read, all of them in part ("},
		{DailySummary{Files: 3, Read: 2, Unreadable: 1, ReadInPart: 1}, "in the 2 files read, 1 of them in part (lines that could not be read were skipped, and nothing is known of them); 1 could not be read"},
		{DailySummary{Files: 2, Read: 2}, "Nothing leaked, ran out of memory or grew."},
	} {
		if got := nothingSentence(c.s); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
	// ReadInPart: what was skipped, in English.
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{}, ""},
		{Input{SkippedLines: 1, SkippedAt: []int{7}}, "1 line could not be read and was skipped (line 7)"},
		{Input{SkippedLines: 3, SkippedAt: []int{7, 9}}, "3 lines could not be read and were skipped (lines 7, 9)"},
		{Input{SkippedLines: 12, SkippedAt: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, "12 lines could not be read and were skipped (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...)"},
	} {
		if got := ReadInPart(c.in); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
}
