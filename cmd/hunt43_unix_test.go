//go:build unix

package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// A fleet log of more hosts than an export keeps part files open for
// (1,400 hosts, three samples each, the last ticks in a second batch of
// rows) exports every row to its own host's partition: the oldest parts
// are closed as new hosts come, and a host seen again starts a new part.
// An export kept one writer open per host until the input ended, so 3,000
// hosts under `ulimit -n 1024` failed with "too many open files" (the
// session-43 reviewer's find).
func TestHunt43ExportManyHostsBoundsOpenParts(t *testing.T) {
	const hosts = 1400
	var b strings.Builder
	for h := 0; h < hosts; h++ {
		fmt.Fprintf(&b, "node%04d: timestamp, index, name, memory.total [MiB], memory.used [MiB]\n", h)
	}
	for tick := 0; tick < 3; tick++ {
		for h := 0; h < hosts; h++ {
			fmt.Fprintf(&b, "node%04d: 2024/05/01 10:00:%02d.100, 0, NVIDIA A100-SXM4-80GB, 81920 MiB, %d MiB\n", h, tick, 1000+h)
		}
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "fleet.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// 256 open files at most while it runs, as a small ulimit -n would.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = min(lim.Cur, 256)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, nil, "export", root, "-o", out, "--to", "arrow")
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("exit %d: %.200q", code, errs)
	}
	rowsIn := map[string]int{}
	for _, p := range parts(t, out, "samples") {
		part := strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "host=")
		for _, rec := range readPart(t, p) {
			hs := rec.Column(rec.Schema().FieldIndices("host")[0]).(*array.Dictionary)
			for i := 0; i < int(rec.NumRows()); i++ {
				if h := hs.Dictionary().(*array.String).Value(hs.GetValueIndex(i)); h != part {
					t.Fatalf("a row of %s in host=%s", h, part)
				}
				rowsIn[part]++
			}
			rec.Release()
		}
	}
	if len(rowsIn) != hosts || rowsIn["node0000"] != 3 || rowsIn[fmt.Sprintf("node%04d", hosts-1)] != 3 {
		t.Errorf("%d host partitions, node0000 %d rows, the last %d; want %d, 3 and 3", len(rowsIn), rowsIn["node0000"], rowsIn[fmt.Sprintf("node%04d", hosts-1)], hosts)
	}
}
