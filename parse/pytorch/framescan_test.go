package pytorch

import (
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestFrameScanTaken checks that the record scan reads the frame dicts
// PyTorch 2.0 writes in every block history entry and trace entry
// (Reader.scannedFrame), so that TestFastPathsDifferential and
// FuzzRecordScanDifferential hold that path to the general one rather
// than the general path to itself. history_p4 (scanseeds/gen.py) writes
// 42 frame dicts (11 a segment, the shared one 3 times as a memo get, and
// one in the second trace entry); the first history entry's dicts define
// their keys inline, and protocol 2 writes strs the scan reads only in
// part, which it leaves to the general path: 30 (70%) or more. The field
// snapshot is PyTorch 2.0's own: 15,168 dicts, of which 12,800 or so are
// frames (1,248 history entries of about 10 frames).
func TestFrameScanTaken(t *testing.T) {
	for _, tc := range []struct {
		path string
		min  int
	}{
		{dir + "scanseeds/history_p4.pickle", 30},
		{dir + "scanseeds/history_p2.pickle", 30},
		{fieldSnapshots + "/Yiyi-philosophy__1.3b_snapshot.pickle", 12000},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if _, err := os.Stat(tc.path); err != nil {
				t.Skip(err)
			}
			in := openFile(t, tc.path)
			r := NewReader(in.Reader(), "h", WithAllocator(memory.NewGoAllocator()))
			defer r.Release()
			for r.Next() {
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if r.framesScanned < tc.min {
				t.Errorf("%d frame dicts scanned, want %d or more", r.framesScanned, tc.min)
			}
			t.Logf("%d frame dicts scanned, %d distinct", r.framesScanned, len(r.pendFrame))
		})
	}
}
