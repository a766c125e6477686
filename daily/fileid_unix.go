//go:build unix

package daily

import (
	"io/fs"
	"syscall"
)

type devIno struct{ dev, ino uint64 }

// fileID names the file info describes (links followed) by its device and
// inode, so that a directory reached by two paths is walked once.
func fileID(path string, info fs.FileInfo) any {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return devIno{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert // widths differ by OS
	}
	return pathID(path)
}

// pathID: the absolute path with links resolved, where no inode is known.
func pathID(path string) string { return realPath(path) }
