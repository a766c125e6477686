package cmd

import "os"

// checkDistinct refuses a command line that names one input twice:
// standard input ("-") twice, or one file by two paths (the same path, a
// symbolic or hard link, a path through another directory). Read twice,
// its findings would count twice, silently; rather than drop one and go
// on, the command stops with a usage error naming both, since a
// duplicate is a mistake in the script that builds the command line (a
// glob that also matches a file named on its own), which the user should
// see. Paths that cannot be opened are left for reading to report.
func checkDistinct(paths []string) error {
	stdin := 0
	bySize := map[int64][]int{} // indexes into paths, of regular files by size
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		if p == "-" {
			if stdin++; stdin > 1 {
				return usageErrorf("\"-\" (standard input) can be given only once")
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		infos[i] = st
		for _, j := range bySize[st.Size()] {
			if os.SameFile(infos[j], st) {
				if paths[j] == p {
					return usageErrorf("%s is given twice: give each input once", p)
				}
				return usageErrorf("%s and %s are the same file: give each input once", paths[j], p)
			}
		}
		bySize[st.Size()] = append(bySize[st.Size()], i)
	}
	return nil
}
