//go:build unix

package daily

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

type devIno struct{ dev, ino uint64 }

// fileID names the file info describes (links followed) by its device and
// inode, so that a file or directory reached by two paths is read once.
func fileID(path string, info fs.FileInfo) any {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return devIno{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert // widths differ by OS
	}
	return pathID(path)
}

// pathID: the absolute path with links resolved, where no inode is known.
func pathID(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}
