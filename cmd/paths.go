package cmd

import (
	"io"
	"os"
)

// checkDistinct refuses a command line that names one input twice:
// standard input ("-") twice, or one file by two paths (the same path, a
// symbolic or hard link, a path through another directory, /dev/stdin
// beside "-"). Read twice, its findings would count twice, silently (and
// a pipe or FIFO read twice gives its second reader nothing, or, for a
// FIFO, waits forever for a writer); rather than drop one and go on, the
// command stops with a usage error naming both, since a duplicate is a
// mistake in the script that builds the command line (a glob that also
// matches a file named on its own), which the user should see. Paths that
// cannot be opened are left for reading to report. stdin is the
// command's standard input: "-" is the file it is, when it is one.
func checkDistinct(paths []string, stdin io.Reader) error {
	seenStdin := false
	infos := make([]os.FileInfo, len(paths))
	// Candidates by size, so that thousands of artifacts are not compared
	// pairwise; a pipe's size is what it holds now, so pipes and FIFOs
	// share one bucket.
	bySize := map[int64][]int{}
	for i, p := range paths {
		var st os.FileInfo
		var err error
		if p == "-" {
			if seenStdin {
				return usageErrorf("\"-\" (standard input) can be given only once")
			}
			seenStdin = true
			f, ok := stdin.(*os.File)
			if !ok {
				continue
			}
			st, err = f.Stat()
		} else {
			st, err = os.Stat(p)
		}
		if err != nil || st.IsDir() {
			continue
		}
		// A terminal is no input read twice: two names for it are odd
		// but harmless, and every terminal device stats alike.
		if st.Mode()&os.ModeCharDevice != 0 {
			continue
		}
		size := int64(-1)
		if st.Mode().IsRegular() {
			size = st.Size()
		}
		for _, j := range bySize[size] {
			if !os.SameFile(infos[j], st) {
				continue
			}
			if paths[j] == p {
				return usageErrorf("%s is given twice: give each input once", p)
			}
			return usageErrorf("%s and %s are the same file: give each input once", paths[j], p)
		}
		infos[i] = st
		bySize[size] = append(bySize[size], i)
	}
	return nil
}
