//go:build !unix

package daily

import (
	"io/fs"
	"path/filepath"
)

// fileID names a file by its absolute path with links resolved (no inode
// on this OS), so that a file reached by two paths is read once.
func fileID(path string, _ fs.FileInfo) any {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}
