package pipeline

import (
	"io"
	"os"

	"github.com/gpuleak/gpuleak/internal/startgc"
	"github.com/gpuleak/gpuleak/parse"
)

// smallRunBytes is the most a run's inputs may hold in all for it to keep
// start-up's GC percentage (package startgc): a run that small is start-up
// bound. Larger inputs get the collector's default, so that their peak
// stays what the README gives.
const smallRunBytes = 4 << 20

// settleGC ends start-up's GC percentage (startgc.Settle) for a run over
// paths: kept when every path is a regular, uncompressed file and they hold
// smallRunBytes or less in all; not when a path is standard input, not a
// regular file, gzip-compressed (its unpacked size is not known) or cannot
// be read (the run reports it).
func settleGC(paths []string) {
	startgc.Settle(smallRun(paths))
}

// smallRun reports whether paths name regular, uncompressed files of
// smallRunBytes or less in all.
func smallRun(paths []string) bool {
	var total int64
	for _, p := range paths {
		if p == "-" {
			return false
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
		if total += fi.Size(); total > smallRunBytes || gzipped(p) {
			return false
		}
	}
	return len(paths) > 0
}

// gzipped reports whether the file at path starts with gzip's magic bytes
// (true when it cannot be read: its size then says nothing).
func gzipped(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil {
		return err != io.EOF && err != io.ErrUnexpectedEOF
	}
	return parse.IsGzip(head)
}
