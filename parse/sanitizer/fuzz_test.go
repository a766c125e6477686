package sanitizer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// fuzzRead reads data to the end and checks what must hold for any input:
// no panic, errors are *parse.Error, every frame names a record, and no
// Arrow memory is left allocated.
func fuzzRead(t *testing.T, data []byte, xml bool) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var r *Reader
	if xml {
		r = NewXMLReader(bytes.NewReader(data), "fuzz", WithAllocator(mem), WithBatchSize(7))
	} else {
		r = NewReader(bytes.NewReader(data), "fuzz", WithAllocator(mem), WithBatchSize(7))
	}
	defer r.Release()
	records := map[int32]bool{}
	var frameIDs []int32
	for r.Next() {
		rec := r.RecordBatch()
		switch r.Table() {
		case TableRecords:
			for i := 0; i < int(rec.NumRows()); i++ {
				records[rec.Column(RecRecord).(interface{ Value(int) int32 }).Value(i)] = true
			}
		case TableFrames:
			for i := 0; i < int(rec.NumRows()); i++ {
				frameIDs = append(frameIDs, rec.Column(FrRecord).(interface{ Value(int) int32 }).Value(i))
			}
		}
	}
	if err := r.Err(); err != nil {
		var pe *parse.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v (%T) is not a *parse.Error", err, err)
		}
		return
	}
	for _, id := range frameIDs {
		if !records[id] {
			t.Fatalf("frame of record %d, which does not exist", id)
		}
	}
}

func addSeeds(f *testing.F, pattern string) {
	paths, _ := filepath.Glob(pattern)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 8<<10 {
			data = data[:8<<10]
		}
		f.Add(data)
	}
}

func FuzzText(f *testing.F) {
	addSeeds(f, "../../testdata/sanitizer/*.txt")
	addSeeds(f, "../../testdata/sanitizer/field/*.txt")
	addSeeds(f, "testdata/*.txt")
	f.Add([]byte("========= Leaked 1 bytes at 0x1\n=========     Host Frame:x (y + 0x1) [0x2]\n"))
	f.Add([]byte("### COMPUTE-SANITIZER\n### Program hit error 1 on CUDA API call to f\n###     at 0x1 in a:1:b\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, false) })
}

func FuzzXML(f *testing.F) {
	addSeeds(f, "../../testdata/sanitizer/*.xml")
	f.Add([]byte("<ComputeSanitizerOutput><record><kind>Api</kind><what><result>" + strconv.Itoa(719) + "</result></what></record></ComputeSanitizerOutput>"))
	f.Add([]byte("<?xml version=\"1.0\"?>\n<ComputeSanitizerOutput>\n<record><where><func>k</func><pc>0x10</pc></where></record>\n</ComputeSanitizerOutput>\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, true) })
}
