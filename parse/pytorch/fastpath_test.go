package pytorch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// fieldSnapshots is where the snapshots collected from public repositories
// are kept, outside the repository (not copied in: see testdata/README.md).
const fieldSnapshots = "../../../shared/field/snapshots"

// TestFastPathsDifferential reads every snapshot of testdata/pytorch (and
// of the field collection when it is here) with the fast paths and
// without them (withGeneralPath): the tables, row for row, the metadata
// and the error must be the same. A fast path that changed anything a
// real snapshot holds fails here.
func TestFastPathsDifferential(t *testing.T) {
	var paths []string
	for _, pat := range []string{dir + "*.pickle", dir + "*.pickle.gz", dir + "repickled/*", dir + "h200/*.pickle"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 20 {
		t.Fatalf("%d snapshots in testdata, want the 20 or more it holds", len(paths))
	}
	if m, _ := filepath.Glob(fieldSnapshots + "/*"); len(m) > 0 {
		paths = append(paths, m...)
	} else {
		t.Logf("%s is absent: the field snapshots are not compared", fieldSnapshots)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			fast, errFast := readBoth(t, path)
			general, errGeneral := readBoth(t, path, withGeneralPath())
			if fast != nil {
				defer fast.Release()
			}
			if general != nil {
				defer general.Release()
			}
			if (errFast == nil) != (errGeneral == nil) || errFast != nil && errFast.Error() != errGeneral.Error() {
				t.Fatalf("fast path: %v; general path: %v", errFast, errGeneral)
			}
			if errFast != nil {
				var pe *parse.Error
				if !errors.As(errFast, &pe) {
					t.Errorf("error %v is not a *parse.Error", errFast)
				}
				return
			}
			for tb := Table(0); tb < numTables; tb++ {
				if !array.TableEqual(fast.Table(tb), general.Table(tb)) {
					t.Errorf("table %v differs between the fast and the general path", tb)
				}
			}
			if fast.Metadata.TimedEntries != general.Metadata.TimedEntries || !equalInts(fast.Metadata.TraceEntries, general.Metadata.TraceEntries) ||
				fast.Metadata.Protocol != general.Metadata.Protocol || fast.Metadata.Legacy != general.Metadata.Legacy {
				t.Errorf("metadata differs: fast %+v, general %+v", fast.Metadata, general.Metadata)
			}
		})
	}
}

func readBoth(t *testing.T, path string, opts ...Option) (*Snapshot, error) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	in := openFile(t, path)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return ReadAll(in.Reader(), filepath.Base(path), append(opts, WithAllocator(mem), WithBatchSize(4096))...)
}
