package pytorch

import (
	"bytes"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestListCacheRebind: the record scan keys a frames list by its bytes
// (pickle.Record.ListKey) and the Reader takes the stack it made of the
// first list for every later list with the key. The key must change when
// what the bytes name changes: here a PUT between two trace entries whose
// frames lists are byte for byte the same sets the memo index of the
// list's second frame to its first frame, so the later list is
// [f2, f2], not [f2, f1]. The scan must read what the general path
// reads, and the two entries' stacks must differ.
func TestListCacheRebind(t *testing.T) {
	b, err := os.ReadFile(dir + "scanseeds/entries_p4.pickle")
	if err != nil {
		t.Fatal(err)
	}
	// Frames lists of two BINGETs (EMPTY_LIST MEMOIZE MARK gets APPENDS):
	// Python's pickler writes the seed's [f2, f1] lists so after the first.
	type list struct{ at, f2, f1 int }
	var lists []list
	for i := 0; ; i++ {
		j := bytes.Index(b[i:], []byte("]\x94(h"))
		if j < 0 {
			break
		}
		i += j
		if i+9 <= len(b) && b[i+5] == 'h' && b[i+7] == 'e' {
			lists = append(lists, list{i, int(b[i+4]), int(b[i+6])})
		}
	}
	if len(lists) < 3 {
		t.Fatalf("%d two-frame lists in the seed, want 3", len(lists))
	}
	last, prev := lists[len(lists)-1], lists[len(lists)-2]
	f2, f1 := byte(last.f2), byte(last.f1)
	if prev.f2 != last.f2 || prev.f1 != last.f1 || f1 == f2 {
		t.Fatalf("the seed's last lists differ: %v %v", prev, last)
	}
	// The last list's trace entry starts at the last "}\x94(" before it.
	at := bytes.LastIndex(b[:last.at], []byte("}\x94("))
	if at < prev.at {
		t.Fatal("no trace entry between the lists")
	}
	// BINGET f2, BINPUT f1, POP: the memo index f1 now yields f2.
	m := append(append(append([]byte{}, b[:at]...), 'h', f2, 'q', f1, '0'), b[at:]...)

	fast, errFast, general, errGeneral := readBothWays(m)
	if errFast != nil || errGeneral != nil {
		t.Fatalf("record scan: %v; general path: %v", errFast, errGeneral)
	}
	defer fast.Release()
	defer general.Release()
	for tb := Table(0); tb < numTables; tb++ {
		if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
			t.Errorf("table %v differs", tb)
		}
	}
	// The entries of the two lists: the last one's and the one before,
	// by their stacks (entries 8 and 11 of the seed's 12).
	ev := fast.Events
	stacks := ev.Column(EvStackID).Data().Chunks()
	var ids []int32
	for _, c := range stacks {
		a := c.(*array.Int32)
		for i := range a.Len() {
			if a.IsValid(i) {
				ids = append(ids, a.Value(i))
			}
		}
	}
	// Non-empty stacks in order: [f1] [f2 f1] [f1] [f2 f1] [f1] [f2 f1]
	// [f1] [f2 f2]: the last must be a stack of its own.
	if len(ids) < 2 || ids[len(ids)-1] == ids[len(ids)-3] {
		t.Errorf("the rebound list took the earlier list's stack: stacks %v", ids)
	}
}
