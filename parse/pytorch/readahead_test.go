package pytorch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// The decoder reading through the read-ahead's lent chunks
// (WithReadAhead, parse.ReadAhead's NextChunk) gets what it gets reading
// the input itself: the same tables and metadata from every snapshot in
// testdata, and the same error, at the same offset, from each cut short
// (the cuts fall inside and across the read-ahead's 256 KiB chunks).
func TestReadAheadSameAsDirect(t *testing.T) {
	paths, err := filepath.Glob(dir + "*.pickle*")
	if err != nil || len(paths) < 10 {
		t.Fatalf("%d snapshots in testdata, %v; want 10 or more", len(paths), err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ahead, errAhead := readBoth(t, path, WithReadAhead())
			direct, errDirect := readBoth(t, path)
			sameRead(t, ahead, errAhead, direct, errDirect)
		})
	}
	data, err := os.ReadFile(dir + "leak_train_loop.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 100, readAheadChunk - 1, readAheadChunk + 7, len(data) / 2, len(data) - 1} {
		if cut >= len(data) {
			continue
		}
		read := func(opts ...Option) (*Snapshot, error) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			return ReadAll(bytes.NewReader(data[:cut]), "cut", append(opts, WithAllocator(mem), WithBatchSize(4096))...)
		}
		ahead, errAhead := read(WithReadAhead())
		direct, errDirect := read()
		if errDirect == nil {
			t.Fatalf("cut at %d of %d bytes: no error", cut, len(data))
		}
		sameRead(t, ahead, errAhead, direct, errDirect)
	}
}

// sameRead fails t unless the two reads gave the same error, or the same
// tables and metadata; it releases both.
func sameRead(t *testing.T, a *Snapshot, errA error, b *Snapshot, errB error) {
	t.Helper()
	if a != nil {
		defer a.Release()
	}
	if b != nil {
		defer b.Release()
	}
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("read ahead: %v; read directly: %v", errA, errB)
	}
	if errA != nil {
		var pe *parse.Error
		if !errors.As(errA, &pe) {
			t.Errorf("error %v is not a *parse.Error", errA)
		}
		return
	}
	for tb := Table(0); tb < numTables; tb++ {
		if !array.TableEqual(a.Table(tb), b.Table(tb)) {
			t.Errorf("table %v differs between reading ahead and reading directly", tb)
		}
	}
	if a.Metadata.TimedEntries != b.Metadata.TimedEntries || !equalInts(a.Metadata.TraceEntries, b.Metadata.TraceEntries) ||
		a.Metadata.Protocol != b.Metadata.Protocol {
		t.Errorf("metadata differs: read ahead %+v, directly %+v", a.Metadata, b.Metadata)
	}
}
