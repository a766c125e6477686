package nvml

import (
	"strings"
	"testing"
)

// Terminal escape sequences in a paste - "gpustat --force-color"'s
// colours, the screen codes a "script" capture of watch nvidia-smi leaves
// before its "Every 1.0s:" header - are removed before the text is
// recognised and read: the coloured gpustat lines are gpustat's (were: no
// layout), and watch's header dates the table (was: "no time in the
// log"). The sequences are those of gpustat's blessed terminal and of
// xterm's alternate screen (hand-made: a real capture keeps them in bytes
// an issue's text does not show).
func TestANSIEscapesRemoved(t *testing.T) {
	const esc = "\x1b"
	gpustat := esc + "[1m" + esc + "[37mnode01" + esc + "[m  Thu Oct 16 19:48:43 2025  535.104.05\n" +
		esc + "[36m[0]" + esc + "[m " + esc + "[34mNVIDIA A100-SXM4-80GB" + esc + "[m |" + esc + "[31m 41°C" + esc + "[m, " + esc + "[32m  0 %" + esc + "[m | " +
		esc + "[36m" + esc + "[1m" + esc + "[33m 1000" + esc + "[m / " + esc + "[33m81920" + esc + "[m MB | " + esc + "[1m" + esc + "[30muser" + esc + "[m/4242(" + esc + "[33m990M" + esc + "[m)\n"
	if f := Sniff([]byte(gpustat)); f != FormatGpustatText {
		t.Fatalf("coloured gpustat sniffed as %q", f)
	}
	rows, meta, err := readRows(t, "gpustat.txt", gpustat)
	if err != nil || len(rows) != 2 || rows[0].Used == nil || *rows[0].Used != 1000*MiB || rows[0].Host != "node01" || rows[1].PID == nil || *rows[1].PID != 4242 {
		t.Fatalf("%v %+v", err, rows)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 1: terminal escape sequences") {
		t.Errorf("warnings %q", w)
	}
	watch := esc + "[?1049h" + esc + "[22;0;0t" + esc + "[1;24r" + esc + "(B" + esc + "[m" + esc + "[4l" + esc + "[?7h" + esc + "[H" + esc + "[2J" +
		"Every 1.0s: nvidia-smi                                  host: Thu May  2 10:00:00 2024\n\n" +
		"+-----------------------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05     CUDA Version: 12.2     |\n" +
		"|-----------------------------------------+----------------------+----------------------+\n" +
		"| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n" +
		"| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n" +
		"|=========================================+======================+======================|\n" +
		"|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |\n" +
		"| N/A   33C    P0              61W / 400W |   1000MiB / 81920MiB |      0%      Default |\n" +
		"+-----------------------------------------+----------------------+----------------------+\n"
	rows, meta, err = readRows(t, "watch.txt", watch)
	if err != nil || len(rows) != 1 || meta.Clock == ClockRowOrder || rows[0].TimeUs != 1714644000000000 {
		t.Fatalf("%v clock %v %+v", err, meta.Clock, rows)
	}
	for in, want := range map[string]string{
		esc + "]0;user@host: ~" + "\x07$ nvidia-smi": "$ nvidia-smi", // a window title (OSC)
		"a" + esc + "[1;3":                           "a",            // cut inside a sequence
		"plain":                                      "plain",
	} {
		if got := string(stripANSI(nil, []byte(in))); got != want {
			t.Errorf("stripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}
