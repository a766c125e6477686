package sanitizer

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The regular expressions matchLeak and matchSaved stand for: the hand
// parsers must split every line as they do.
var (
	leakLineRe  = regexp.MustCompile(`^Leaked ([\d,]+) bytes? at (0x[0-9a-fA-F]+)(.*)$`)
	savedLineRe = regexp.MustCompile(`^Saved host backtrace up to driver entry point(?: at (.+?))?\.?$`)
	otherSumRe  = regexp.MustCompile(`^[A-Z][A-Z ]* SUMMARY:`)
	apiLineRe   = regexp.MustCompile(`^Program hit (\w+) \(error (\d+)\) due to "(.*)" on CUDA API call to (\w+)`)
	accessRe    = regexp.MustCompile(`^Invalid (?:__\w+__ )?(?:\w+ )?of size ([\d,]+)`)
	uninitRe    = regexp.MustCompile(`^Uninitialized __\w+__ memory (?:\w+ )?of size ([\d,]+)`)
)

var matchLines = []string{
	"Leaked 1,048,576 bytes at 0x7f1cac800000",
	"Leaked 1 byte at 0x7f1cac800000",
	"Leaked 4,194,304 bytes at 0x7fb262800000 on the device heap",
	"Leaked 4,194,304 bytes at 0x7fB2G",
	"Leaked 4,194,304 bytes at 0x",
	"Leaked 4,194,304 bytes at ",
	"Leaked 262,144 bytes at",
	"Leaked  bytes at 0x1",
	"Leaked ,, bytes at 0x1 x",
	"Leaked 12 bytess at 0x1",
	"Leaked 12 bytes at 0x1\n2",
	"Leaked 12 bytes at 0x1 \xff\xfe",
	"Leaked 12 bytes",
	"Leaked",
	"Saved host backtrace up to driver entry point at allocation time",
	"Saved host backtrace up to driver entry point at allocation time.",
	"Saved host backtrace up to driver entry point at error",
	"Saved host backtrace up to driver entry point",
	"Saved host backtrace up to driver entry point.",
	"Saved host backtrace up to driver entry point..",
	"Saved host backtrace up to driver entry point at ",
	"Saved host backtrace up to driver entry point at .",
	"Saved host backtrace up to driver entry point at ..",
	"Saved host backtrace up to driver entry point at x\ny",
	"Saved host backtrace up to driver entry pointer",
	"Saved host backtrace",
	"RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
	"A SUMMARY:", " SUMMARY:", "X SUMMARY", "X SUMMARY: ", "XSUMMARY:", "X  SUMMARY:", "Xy SUMMARY:", "X SUMMARY::",
	"LEAK SUMMARY: 0 bytes", "x SUMMARY:", "X SUMMARY SUMMARY:", "X SUMMARYY:", "",
	`Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaFree.`,
	`Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call to cudaMemcpy`,
	`Program hit e (error 1) due to "a" on CUDA API call to f" on CUDA API call to g`,
	`Program hit e (error 1) due to "a" on CUDA API call to f" on CUDA API call to .`,
	`Program hit e (error 1) due to "a` + "\n" + `" on CUDA API call to f`,
	`Program hit e (error 1) due to "a" on CUDA API call to f` + "\n" + `" on CUDA API call to g`,
	`Program hit e (error 1) due to "" on CUDA API call to `, `Program hit e (error ) due to "" on CUDA API call to f`,
	`Program hit  (error 1) due to "" on CUDA API call to f`, `Program hit e (error 1) due to "x" on CUDA API call to to f`,
	"Invalid __global__ write of size 4 bytes", "Invalid __shared__ read of size 16 bytes", "Invalid write of size 8",
	"Invalid __global__ of size 4", "Invalid of size 4", "Invalid of of size 4", "Invalid __x__ of of size 1,2",
	"Invalid ____ write of size 4", "Invalid __a__b__ w of size 4", "Invalid __global__  of size 4", "Invalid x y of size 4",
	"Invalid __global__ write of size ", "Invalid __global__ write of size ,", "Invalid __global__ write of size 4\n5",
	"Uninitialized __global__ memory read of size 4 bytes", "Uninitialized __global__ memory of size 4",
	"Uninitialized __global__ memory of of size 4", "Uninitialized ___ memory read of size 4", "Uninitialized __g__ memory  of size 4",
}

func TestMatchErrorsAsRegexp(t *testing.T) {
	for _, l := range matchLines {
		checkErrorMatchers(t, l)
	}
}

// checkErrorMatchers checks matchAPI, matchAccess and matchUninit on l
// against the regular expressions they stand for.
func checkErrorMatchers(t *testing.T, l string) {
	t.Helper()
	want := apiLineRe.FindStringSubmatch(l)
	got, ok := matchAPI(l)
	if ok != (want != nil) || ok && (got[1] != want[1] || got[2] != want[2] || got[3] != want[3] || got[4] != want[4]) {
		t.Errorf("matchAPI(%q) = %q, %v; the regexp: %q", l, got, ok, want)
	}
	for _, c := range []struct {
		name  string
		match func(string) (string, bool)
		re    *regexp.Regexp
	}{{"matchAccess", matchAccess, accessRe}, {"matchUninit", matchUninit, uninitRe}} {
		want := c.re.FindStringSubmatch(l)
		got, ok := c.match(l)
		if ok != (want != nil) || ok && got != want[1] {
			t.Errorf("%s(%q) = %q, %v; the regexp: %q", c.name, l, got, ok, want)
		}
	}
}

func TestIsOtherSummaryAsRegexp(t *testing.T) {
	for _, l := range matchLines {
		if got, want := isOtherSummary(l), otherSumRe.MatchString(l); got != want {
			t.Errorf("isOtherSummary(%q) = %v; the regexp: %v", l, got, want)
		}
	}
}

func TestMatchLeakAsRegexp(t *testing.T) {
	for _, l := range matchLines {
		want := leakLineRe.FindStringSubmatch(l)
		got, ok := matchLeak(l)
		if ok != (want != nil) || ok && (got[1] != want[1] || got[2] != want[2] || got[3] != want[3]) {
			t.Errorf("matchLeak(%q) = %q, %v; the regexp: %q", l, got, ok, want)
		}
	}
}

func TestMatchSavedAsRegexp(t *testing.T) {
	for _, l := range matchLines {
		want := savedLineRe.FindStringSubmatch(l)
		got, ok := matchSaved(l)
		if ok != (want != nil) || ok && got != want[1] {
			t.Errorf("matchSaved(%q) = %q, %v; the regexp: %q", l, got, ok, want)
		}
	}
}

// FuzzMatchAsRegexp checks the hand parsers against the regular
// expressions on any line.
func FuzzMatchAsRegexp(f *testing.F) {
	for _, l := range matchLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		for _, p := range []string{"", "Leaked ", "Saved host backtrace up to driver entry point", "X SUMMARY",
			`Program hit e (error 1) due to "`, "Invalid __global__ ", "Uninitialized __global__ memory "} {
			l := p + l
			want := leakLineRe.FindStringSubmatch(l)
			got, ok := matchLeak(l)
			if ok != (want != nil) || ok && (got[1] != want[1] || got[2] != want[2] || got[3] != want[3]) {
				t.Fatalf("matchLeak(%q) = %q, %v; the regexp: %q", l, got, ok, want)
			}
			if got, want := isOtherSummary(l), otherSumRe.MatchString(l); got != want {
				t.Fatalf("isOtherSummary(%q) = %v; the regexp: %v", l, got, want)
			}
			checkErrorMatchers(t, l)
			wantS := savedLineRe.FindStringSubmatch(l)
			gotS, okS := matchSaved(l)
			if okS != (wantS != nil) || okS && gotS != wantS[1] {
				t.Fatalf("matchSaved(%q) = %q, %v; the regexp: %q", l, gotS, okS, wantS)
			}
		}
	})
}

// The tables of recent lines and host frames are bounded: in entries,
// and no long line or frame is kept (a log of long demangled frames must
// not hold megabytes per entry).
func TestInternTablesBounded(t *testing.T) {
	long := "f" + strings.Repeat("x", 2*maxInternedLine) + "(int) in a.cu:1 [0x10] in prog"
	var b strings.Builder
	b.WriteString("========= COMPUTE-SANITIZER\n")
	for i := 0; i < 3*maxInterned; i++ {
		fmt.Fprintf(&b, "========= Leaked 8 bytes at 0x%x\n", 0x1000+16*i)
		b.WriteString("=========     Saved host backtrace up to driver entry point at allocation time\n")
		fmt.Fprintf(&b, "=========         Host Frame: g%d(int) in a.cu:%d [0x%x] in prog\n", i, i+1, 0x100+i)
		b.WriteString("=========         Host Frame: " + long + "\n")
		b.WriteString("========= \n")
	}
	r := NewReader(strings.NewReader(b.String()), "long.txt")
	defer r.Release()
	frames := 0
	for r.Next() {
		if r.Table() == TableFrames {
			frames += int(r.RecordBatch().NumRows())
		}
	}
	if err := r.Err(); err != nil || frames != 2*3*maxInterned {
		t.Fatalf("%d frames: %v", frames, err)
	}
	s := r.src.(*textSource)
	if len(s.lines) > maxInterned || len(s.hostFrames) > maxInterned {
		t.Errorf("%d lines, %d frames kept: want at most %d", len(s.lines), len(s.hostFrames), maxInterned)
	}
	for k := range s.hostFrames {
		if len(k) > maxInternedLine {
			t.Errorf("a frame of %d bytes kept", len(k))
		}
	}
	for k := range s.lines {
		if len(k) > maxInternedLine {
			t.Errorf("a line of %d bytes kept", len(k))
		}
	}
}
