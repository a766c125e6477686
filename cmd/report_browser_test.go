package cmd

import (
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless-capable Chromium, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where browser screenshots are kept: $GPULEAK_TEST_ARTIFACTS
// when set (CI keeps them), else a folder under the system's temporary
// directory that outlives the test, so that a person can look.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("GPULEAK_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "gpuleak-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReportHTMLInChromium renders the daily report of a small fleet in
// headless Chromium, at a laptop's width and a phone's, and checks that the
// screenshots are not blank and show the charts' lines and bars (pixels of
// the charts' first colour, #0072B2, which nothing else on the page uses).
func TestReportHTMLInChromium(t *testing.T) {
	browser := chromium()
	if browser == "" {
		t.Skip("Chromium is not installed (Debian: apt-get install chromium): the page is not rendered in a browser")
	}
	root := fleet(t)
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, errs := run(t, nil, "report", root, "--group-by", "{host}/{job}/...", "-o", page); code != 0 {
		t.Fatal(errs)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: nothing fetched at view time.
	for _, re := range []string{`(?i)<script`, `(?i)<link`, `(?i)\ssrc=`, `(?i)url\(`, `(?i)@import`, `https?://(?:[^w]|w[^w]|ww[^w]|www[^.]|www\.[^w]|www\.w[^3])`} {
		if m := regexp.MustCompile(re).Find(html); m != nil {
			t.Errorf("the page refers to something outside itself: %q", m)
		}
	}
	if !strings.Contains(string(html), `name="viewport"`) {
		t.Error("no viewport meta: unreadable on a phone")
	}
	dir := artifactDir(t)
	for _, v := range []struct {
		name          string
		width, height int
	}{{"laptop", 1200, 5000}, {"phone", 390, 6000}} {
		shot := filepath.Join(dir, "report_"+v.name+".png")
		os.Remove(shot)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
			"--user-data-dir="+t.TempDir(), "--no-first-run", "--disable-extensions",
			"--window-size="+strconv.Itoa(v.width)+","+strconv.Itoa(v.height), "--screenshot="+shot, "file://"+page)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, out)
		}
		t.Logf("screenshot (%s): %s", v.name, shot)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatalf("no screenshot: %v\n%s", err, out)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		variance, chartPixels := pixelStats(img)
		// A blank page has no variance; text alone has some, but no
		// pixels of the charts' blue.
		if variance < 100 {
			t.Errorf("%s: screenshot nearly blank (luminance variance %.1f)", v.name, variance)
		}
		if chartPixels < 2000 {
			t.Errorf("%s: %d pixels of the charts' colour: the charts did not render", v.name, chartPixels)
		}
		if b := img.Bounds(); b.Dx() != v.width {
			t.Errorf("%s: screenshot %d pixels wide, want %d", v.name, b.Dx(), v.width)
		}
	}
}

// pixelStats: the variance of the luminance (0-255) and the count of
// pixels near the charts' first colour, #0072B2.
func pixelStats(img image.Image) (variance float64, chart int) {
	b := img.Bounds()
	var sum, sq, n float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r8, g8, b8 := float64(r>>8), float64(g>>8), float64(bl>>8)
			l := 0.299*r8 + 0.587*g8 + 0.114*b8
			sum += l
			sq += l * l
			n++
			if math.Abs(r8-0) < 40 && math.Abs(g8-114) < 40 && math.Abs(b8-178) < 40 {
				chart++
			}
		}
	}
	mean := sum / n
	return sq/n - mean*mean, chart
}
