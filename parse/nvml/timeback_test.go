package nvml

import (
	"strconv"
	"strings"
	"testing"
)

// A log whose time goes back by more than a second - a clock stepped back
// (the fixture's daylight saving time change read without --tz), or a
// second log appended to the first (two hosts' --query-gpu logs
// concatenated: the second's header, then its own times from the same
// start) - is read all the same, rows placed by their times, but a
// warning names the line where it happens, how far it goes back and how
// many rows fall behind, and says why the trends then mix: before, the
// two hosts' GPU 0 became one series, a "sawtooth" with no note. Rows a
// few ms out of order (one tick's GPUs) are no step back; with --tz the
// repeated hour of the fixture is resolved, and no such warning is given.
func TestTimeGoesBack(t *testing.T) {
	const hdr = "timestamp, index, name, memory.total [MiB], memory.used [MiB]\n"
	log := func(used int) string {
		var b strings.Builder
		b.WriteString(hdr)
		for i := range 10 {
			b.WriteString("2024/05/02 10:00:0" + strconv.Itoa(i) + ".000, 0, NVIDIA A100-SXM4-80GB, 81920 MiB, " + strconv.Itoa(used+10*i) + " MiB\n")
		}
		return b.String()
	}
	_, meta, err := readRows(t, "two.csv", log(1000)+log(50000))
	if err != nil {
		t.Fatal(err)
	}
	// The second log's rows at 10:00:00 to 10:00:07 are more than 1 s
	// behind 10:00:09: 8 rows, the first at line 13 (its header is 12).
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 13: the log's time goes back here by 9s, from 2024-05-02 10:00:09.000 to 2024-05-02 10:00:00.000 (8 rows fall behind an earlier time, this the first)") ||
		!strings.Contains(w, "another log appended to this one") {
		t.Errorf("warnings %q", w)
	}
	// Rows of one tick 40 ms out of order: no step back.
	_, meta, err = readRows(t, "ms.csv", hdr+
		"2024/05/02 10:00:00.040, 0, NVIDIA A100-SXM4-80GB, 81920 MiB, 1000 MiB\n"+
		"2024/05/02 10:00:00.000, 1, NVIDIA A100-SXM4-80GB, 81920 MiB, 1000 MiB\n"+
		"2024/05/02 10:00:01.040, 0, NVIDIA A100-SXM4-80GB, 81920 MiB, 1000 MiB\n"+
		"2024/05/02 10:00:01.000, 1, NVIDIA A100-SXM4-80GB, 81920 MiB, 1000 MiB\n")
	if err != nil || strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "goes back") {
		t.Errorf("%v %q", err, meta.Warnings.Strings())
	}
	// The fixture's fall-back hour, read as UTC: the step is said, with --tz.
	_, meta = readFile(t, fixtures+"dst_fallback_berlin_query_gpu.csv")
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 42: the log's time goes back here by 56m59.963s") || !strings.Contains(w, "give --tz") {
		t.Errorf("UTC: warnings %q", w)
	}
	_, meta = readFile(t, fixtures+"dst_fallback_berlin_query_gpu.csv", WithLocation(berlin(t)))
	if w := strings.Join(meta.Warnings.Strings(), "\n"); strings.Contains(w, "goes back here") {
		t.Errorf("Europe/Berlin: warnings %q", w)
	}
}
